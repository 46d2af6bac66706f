//! The accept loops: the players' listener (TCP with Nagle off, or a Unix
//! stream socket; a cap on open connections, an HTTP/1.1 header timeout) and
//! the admin listener (which answers even when every descriptor is in use,
//! from a [`Reserve`]), with graceful shutdown of every connection from one
//! token.
//!
//! A failing accept (descriptors exhausted, most often) backs off
//! [`ACCEPT_BACKOFF`], is counted in `mino_accept_errors_total{kind}`, and is
//! logged once a [`throttle::WINDOW`] with the count of failures the line
//! stands for.
//!
//! - [`bound`]: a bound listener, TCP or Unix, and what it accepts.
//! - [`socket_file`]: a Unix socket's file: stale ones removed, its mode,
//!   removed at exit.
//! - [`throttle`]: one log line a window for a repeating failure.
//! - [`reserve`]: the admin listener's reserved descriptor.

pub mod bound;
pub mod reserve;
pub mod socket_file;

pub use bound::{BindError, Listener, Peer};
pub use reserve::Reserve;

use crate::clock;
use crate::http::SlotHold;
use crate::metrics::{AcceptErrorKind, Metrics};
use crate::socket::Stream;
use crate::throttle::{self, LogThrottle};
use axum::Router;
use futures_util::FutureExt;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

/// Wait after a failed accept before the next attempt (the pending
/// connection stays in the backlog meanwhile).
pub const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Longest an admin connection answered from the reserve may take: the
/// reserve is back only once it is closed.
pub const RESERVE_CONNECTION_LIMIT: Duration = Duration::from_secs(5);

/// Accept settings.
#[derive(Clone, Debug)]
pub struct AcceptConfig {
    /// Most open connections; further ones are closed at once.
    pub max_connections: usize,
    /// Time allowed to send the request headers (slow-loris bound).
    pub header_timeout: Duration,
    /// Fixed SO_SNDBUF for accepted sockets (TCP and Unix), bytes; `None` =
    /// the kernel's default (autotuning for TCP).
    pub send_buffer: Option<usize>,
}

/// Which listener an accept failed on, for the log.
#[derive(Clone, Copy, Debug)]
enum Side {
    Players,
    Admin,
}

impl Side {
    fn label(self) -> &'static str {
        match self {
            Side::Players => "players",
            Side::Admin => "admin",
        }
    }
}

/// Counts a failed accept and logs it when the throttle says so.
fn accept_failed(side: Side, e: &std::io::Error, metrics: &Metrics, throttle: &mut LogThrottle) -> AcceptErrorKind {
    let kind = AcceptErrorKind::of(e);
    metrics.accept_failed(kind);
    if let Some(failures) = throttle.failed(clock::now()) {
        tracing::warn!(
            listener = side.label(),
            kind = kind.label(),
            error = %e,
            failures,
            "accept failing ({failures} failures since the last such line; at most one a {:?})",
            throttle::WINDOW
        );
    }
    kind
}

/// Notes an accept that worked, logging the end of a run of failures.
fn accepted(side: Side, throttle: &mut LogThrottle) {
    if let Some(unlogged) = throttle.recovered() {
        tracing::warn!(listener = side.label(), unlogged, "accepting again ({unlogged} failures not logged)");
    }
}

/// What a connection past the cap is sent before it is closed: a load
/// balancer takes a 503 for "ask another shard" (nginx:
/// `proxy_next_upstream http_503`), a bare close for a failed connection.
/// Best effort: closed with its request unread, the connection ends with a
/// reset, which may reach the peer before the 503 does (RFC 9112 section
/// 9.6); nginx retries on that error as on the 503.
const OVER_CAP_RESPONSE: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

/// Refuses a connection accepted while `--max-connections` (`cap`) are
/// open: a 503 written if the socket takes it at once (never waited for),
/// the connection closed, counted, and said at most once a
/// [`throttle::WINDOW`] with how many since the last line.
fn refuse_over_cap(stream: &Stream, peer: Peer, cap: usize, metrics: &Metrics, throttle: &mut LogThrottle) {
    let _ = match stream {
        Stream::Tcp(s) => s.try_write(OVER_CAP_RESPONSE),
        Stream::Unix(s) => s.try_write(OVER_CAP_RESPONSE),
    };
    metrics.connections_over_cap.inc();
    if let Some(refused) = throttle.failed(clock::now()) {
        tracing::warn!(
            %peer,
            cap,
            refused,
            "connection cap reached (--max-connections {cap}): {refused} connection(s) refused with 503 since the \
             last such line (at most one a {:?})",
            throttle::WINDOW
        );
    }
}

/// Accepts players' connections until `cancel` fires; every connection task
/// is spawned on `tracker`.
pub async fn accept_loop(
    listener: Listener,
    router: Router,
    config: AcceptConfig,
    metrics: Metrics,
    tracker: TaskTracker,
    cancel: CancellationToken,
) {
    let slots = Arc::new(Semaphore::new(config.max_connections));
    let mut throttle = LogThrottle::new(throttle::WINDOW);
    let mut over_cap = LogThrottle::new(throttle::WINDOW);
    loop {
        let over_cap_unsaid = over_cap.pending_until();
        let (stream, peer) = tokio::select! {
            () = cancel.cancelled() => break,
            () = clock::sleep_until_or_never(over_cap_unsaid) => {
                if let Some(refused) = over_cap.flush(clock::now()) {
                    let cap = config.max_connections;
                    tracing::warn!(
                        cap,
                        refused,
                        "connection cap reached (--max-connections {cap}): {refused} more connection(s) refused with \
                         503 since the last such line"
                    );
                }
                continue;
            }
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    accept_failed(Side::Players, &e, &metrics, &mut throttle);
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
        };
        accepted(Side::Players, &mut throttle);
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            refuse_over_cap(&stream, peer, config.max_connections, &metrics, &mut over_cap);
            continue;
        };
        tune(&stream, peer, &config);
        let slot = SlotHold::new(permit);
        let conn = Connection { stream, peer, header_timeout: config.header_timeout, keep_alive: true };
        tracker.spawn(conn.serve(router.clone(), Some(slot), cancel.clone()));
    }
}

/// Sets what the accept settings ask of a new connection: Nagle off (TCP) and
/// a fixed send buffer (both kinds). Failures are logged at debug: the
/// connection works without.
fn tune(stream: &Stream, peer: Peer, config: &AcceptConfig) {
    let sock = match stream {
        Stream::Tcp(tcp) => {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!(%peer, error = %e, "set_nodelay failed");
            }
            socket2::SockRef::from(tcp)
        }
        Stream::Unix(unix) => socket2::SockRef::from(unix),
    };
    if let Some(bytes) = config.send_buffer {
        if let Err(e) = sock.set_send_buffer_size(bytes) {
            tracing::debug!(%peer, error = %e, "SO_SNDBUF failed");
        }
    }
}

/// Accepts admin connections until `cancel` fires. When every descriptor is
/// in use, answers one connection at a time from the [`Reserve`].
pub async fn admin_loop(
    listener: Listener,
    router: Router,
    header_timeout: Duration,
    metrics: Metrics,
    tracker: TaskTracker,
    cancel: CancellationToken,
) {
    let mut reserve = Reserve::hold();
    if !reserve.is_held() {
        tracing::warn!("no descriptor for the admin listener's reserve");
    }
    let mut throttle = LogThrottle::new(throttle::WINDOW);
    loop {
        let accepted_now = tokio::select! {
            () = cancel.cancelled() => break,
            a = listener.accept() => a,
        };
        match accepted_now {
            Ok((stream, peer)) => {
                accepted(Side::Admin, &mut throttle);
                let conn = Connection { stream, peer, header_timeout, keep_alive: true };
                tracker.spawn(conn.serve(router.clone(), None, cancel.clone()));
            }
            Err(e) => {
                let kind = accept_failed(Side::Admin, &e, &metrics, &mut throttle);
                if kind == AcceptErrorKind::Descriptors && reserve.release() {
                    // The accept is polled once, with no await after the
                    // release: nothing else on this thread can take the
                    // freed descriptor. With no connection waiting (an accept
                    // fails with EMFILE whether one waits or not, and tokio
                    // tries one again after each success) the reserve is
                    // taken back at once; awaiting here would let the
                    // players' listener take it, and lose it for good.
                    if let Some(Ok((stream, peer))) = listener.accept().now_or_never() {
                        let conn = Connection { stream, peer, header_timeout, keep_alive: false };
                        let served = conn.serve(router.clone(), None, cancel.clone());
                        let _ = tokio::time::timeout(RESERVE_CONNECTION_LIMIT, served).await;
                    }
                } else {
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
                reserve.restore();
            }
        }
    }
}

/// One accepted HTTP/1.1 connection, to serve.
struct Connection {
    stream: Stream,
    peer: Peer,
    header_timeout: Duration,
    keep_alive: bool,
}

impl Connection {
    /// Serves the connection's requests with `router` (with upgrades), each
    /// request carrying `slot` when given; on `cancel`, finishes the request
    /// in progress (at most a second) and closes.
    async fn serve(self, router: Router, slot: Option<SlotHold>, cancel: CancellationToken) {
        let Connection { stream, peer, header_timeout, keep_alive } = self;
        let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
            if let Some(slot) = &slot {
                req.extensions_mut().insert(slot.clone());
            }
            req.extensions_mut().insert(peer);
            router.clone().oneshot(req)
        });
        let conn = http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(header_timeout)
            .keep_alive(keep_alive)
            .serve_connection(TokioIo::new(stream), service)
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
    }
}
