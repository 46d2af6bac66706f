//! The one root of shutdown: SIGINT or SIGTERM cancels the token every task holds.

use tokio_util::sync::CancellationToken;

/// Cancels `token` on the first SIGINT or SIGTERM. Returns when it did.
///
/// Errors: the signal handlers could not be installed.
pub async fn on_signal(token: CancellationToken) -> std::io::Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
        _ = int.recv() => tracing::info!("SIGINT: shutting down"),
        () = token.cancelled() => return Ok(()),
    }
    token.cancel();
    Ok(())
}
