//! The accept loop: TCP with Nagle off, a cap on open connections, an HTTP/1.1
//! header timeout, and graceful shutdown of every connection from one token.

use crate::http::ConnectionSlot;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

/// Accept settings.
#[derive(Clone, Debug)]
pub struct AcceptConfig {
    /// Most open connections; further ones are closed at once.
    pub max_connections: usize,
    /// Time allowed to send the request headers (slow-loris bound).
    pub header_timeout: Duration,
    /// Fixed SO_SNDBUF for accepted sockets, bytes; `None` = autotuning.
    pub send_buffer: Option<usize>,
}

/// Accepts connections until `cancel` fires; every connection task is spawned
/// on `tracker`.
pub async fn accept_loop(
    listener: TcpListener,
    router: Router,
    config: AcceptConfig,
    tracker: TaskTracker,
    cancel: CancellationToken,
) {
    let slots = Arc::new(Semaphore::new(config.max_connections));
    loop {
        let (tcp, peer) = tokio::select! {
            () = cancel.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // EMFILE and friends: back off instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            tracing::debug!(%peer, "connection cap reached; closing");
            continue;
        };
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(%peer, error = %e, "set_nodelay failed");
        }
        if let Some(bytes) = config.send_buffer {
            if let Err(e) = socket2::SockRef::from(&tcp).set_send_buffer_size(bytes) {
                tracing::debug!(%peer, error = %e, "SO_SNDBUF failed");
            }
        }
        let slot = ConnectionSlot::new(permit);
        let router = router.clone();
        let cancel = cancel.clone();
        let header_timeout = config.header_timeout;
        tracker.spawn(async move {
            let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
                req.extensions_mut().insert(axum::Extension(slot.clone()));
                req.extensions_mut().insert(slot.clone());
                router.clone().oneshot(req)
            });
            let conn = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(TokioIo::new(tcp), service)
                .with_upgrades();
            tokio::pin!(conn);
            tokio::select! {
                result = conn.as_mut() => {
                    if let Err(e) = result {
                        tracing::debug!(%peer, error = %e, "http connection ended with an error");
                    }
                }
                () = cancel.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(Duration::from_secs(1), conn).await;
                }
            }
        });
    }
}
