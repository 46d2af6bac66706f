//! The one root of shutdown. SIGTERM drains (clustered, players are told to
//! move to other shards; standalone, where there is none, every socket is
//! closed with 1012 "service restart"; then the process exits; a second
//! SIGTERM stops at once); SIGINT stops at once, closing every socket with
//! "going away".

use crate::tick::Lifecycle;
use tokio::signal::unix::{signal, Signal, SignalKind};

/// SIGTERM's and SIGINT's handlers, installed: from [`Signals::install`] on,
/// those signals are the shard's to act on, not the default's (which ends
/// the process at once, with no drain). Installed before the shard says it
/// listens, so that a signal sent as soon as it does is acted on.
pub struct Signals {
    term: Signal,
    int: Signal,
}

impl Signals {
    /// Installs the handlers (inside a tokio runtime).
    ///
    /// Errors: the signal handlers could not be installed.
    pub fn install() -> std::io::Result<Signals> {
        Ok(Signals { term: signal(SignalKind::terminate())?, int: signal(SignalKind::interrupt())? })
    }

    /// Turns SIGTERM and SIGINT into `life`'s drain and stop. Returns once stopping.
    pub async fn run(self, life: Lifecycle) {
        let Signals { mut term, mut int } = self;
        loop {
            tokio::select! {
                _ = term.recv() => {
                    if life.drain.is_cancelled() {
                        tracing::info!("second SIGTERM: stopping now");
                        life.stop.cancel();
                    } else {
                        tracing::info!("SIGTERM: draining");
                        life.drain.cancel();
                    }
                }
                _ = int.recv() => {
                    tracing::info!("SIGINT: shutting down");
                    life.stop.cancel();
                }
                () = life.stop.cancelled() => return,
            }
        }
    }
}
