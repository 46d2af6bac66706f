//! The one root of shutdown. SIGTERM drains (clustered, players are told to
//! move to other shards; standalone, where there is none, every socket is
//! closed with 1012 "service restart"; then the process exits; a second
//! SIGTERM stops at once); SIGINT stops at once, closing every socket with
//! "going away". SIGHUP is `systemctl reload`: the files a shard reads
//! again (admin tokens, identity keys: [`crate::reload`]) are reloaded by
//! their own watchers; here it is only said, and a shard with no such file
//! says it has nothing to reload. It never ends the process (SIGHUP's
//! default, which systemd takes for a clean exit and does not restart).

use crate::tick::Lifecycle;
use tokio::signal::unix::{signal, Signal, SignalKind};

/// SIGTERM's, SIGINT's and SIGHUP's handlers, installed: from [`Signals::install`] on,
/// those signals are the shard's to act on, not the default's (which ends
/// the process at once, with no drain). Installed before the shard says it
/// listens, so that a signal sent as soon as it does is acted on.
pub struct Signals {
    term: Signal,
    int: Signal,
    hup: Signal,
    /// What SIGHUP reloads (logged): "admin tokens", "identity keys".
    reloads: Vec<&'static str>,
}

impl Signals {
    /// Installs the handlers (inside a tokio runtime); `reloads` names what
    /// the shard reads again on SIGHUP (empty: nothing).
    ///
    /// Errors: the signal handlers could not be installed.
    pub fn install(reloads: Vec<&'static str>) -> std::io::Result<Signals> {
        Ok(Signals {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
            hup: signal(SignalKind::hangup())?,
            reloads,
        })
    }

    /// Turns SIGTERM and SIGINT into `life`'s drain and stop, and says what
    /// a SIGHUP reloads. Returns once stopping.
    pub async fn run(self, life: Lifecycle) {
        let Signals { mut term, mut int, mut hup, reloads } = self;
        // SIGTERMs this process took: the drain's own (the first) or, after
        // it, the operator's "stop now". A drain the admin API or console
        // ordered is not a SIGTERM: a `systemctl stop` during it carries
        // the paced drain on.
        let mut terms = 0u32;
        loop {
            tokio::select! {
                _ = hup.recv() => {
                    if reloads.is_empty() {
                        tracing::info!("SIGHUP: nothing to reload (no --admin-token-file, no identity key file)");
                    } else {
                        tracing::info!(what = reloads.join(", "), "SIGHUP: reloading");
                    }
                }
                _ = term.recv() => {
                    terms += 1;
                    if terms > 1 {
                        tracing::info!("second SIGTERM: stopping now");
                        life.stop.cancel();
                    } else if life.drain.is_cancelled() {
                        tracing::info!("SIGTERM: draining already (ordered by the admin API); a second SIGTERM stops now");
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
