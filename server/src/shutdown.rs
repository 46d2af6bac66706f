//! The one root of shutdown. SIGTERM drains (clustered, players are told to
//! move to other shards; standalone, where there is none, every socket is
//! closed with 1012 "service restart"; then the process exits; a second
//! SIGTERM stops at once); SIGINT stops at once, closing every socket with
//! "going away".

use crate::tick::Lifecycle;

/// Turns SIGTERM and SIGINT into `life`'s drain and stop. Returns once stopping.
///
/// Errors: the signal handlers could not be installed.
pub async fn on_signal(life: Lifecycle) -> std::io::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
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
            () = life.stop.cancelled() => return Ok(()),
        }
    }
}
