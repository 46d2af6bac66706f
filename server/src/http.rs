//! HTTP routes of a shard's players' listener: the websocket at `/ws`,
//! WebTransport's address and certificate hash at `/webtransport`, and the
//! browser client's files at `/` when a static folder is configured.
//!
//! The operator routes (the probes `/healthz` and `/readyz`, Prometheus
//! `/metrics`) are served here only when the shard has no admin listener
//! (`--admin-listen`): `ADMIN_PORT=off scripts/play.sh`, or a shard on a
//! private address that Prometheus scrapes directly. With an admin listener
//! they live only there ([`crate::admin`]), and the players' listener
//! answers them 404 (or with the static folder's file of that name, which
//! the client build has not): a shard reached directly, without the nginx
//! template's filter, shows players no operator data.

use crate::metrics::Metrics;
use crate::session::{self, SessionContext};
pub use crate::socket::SlotHold;
pub use crate::socket::Stream;
use crate::websocket::handshake::{self, UpgradeRefusal};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::{Extension, Router};
use bytes::Bytes;
use hyper_util::rt::TokioIo;
use prometheus_client::registry::Registry;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::task::TaskTracker;
use tower_http::services::ServeDir;

/// What the routes share.
#[derive(Clone)]
pub struct AppState {
    /// Handed to every session.
    pub session: SessionContext,
    /// The metrics registry rendered at `/metrics`.
    pub registry: Arc<Registry>,
    /// Tracks session tasks so shutdown can join them.
    pub tracker: TaskTracker,
    /// Clustered: Redis health for `/readyz`.
    pub cluster: Option<Arc<crate::cluster::ClusterStatus>>,
    /// Cancelled when the shard drains (`/readyz` turns 503).
    pub draining: tokio_util::sync::CancellationToken,
    /// WebTransport's address and certificate hash, served at
    /// `/webtransport` (`None`: off, 204 with no offer).
    pub webtransport: Option<crate::webtransport::LiveOffer>,
}

/// The router of the players' listener: `/ws` and the static files, and the
/// operator routes unless the admin listener serves them (see the module
/// docs).
pub fn router(state: AppState) -> Router {
    state.session.metrics.expect_unready(&NotReady::ALL.map(NotReady::label));
    let static_dir = state.session.config.listen.static_dir.clone();
    let mut router = Router::new().route("/ws", any(websocket)).route("/webtransport", get(webtransport));
    if state.session.config.admin.listen.is_none() {
        router = router
            .route("/healthz", get(|| async { "ok\n" }))
            .route("/readyz", get(readyz))
            .route("/metrics", get(metrics));
    }
    let router = router.with_state(state);
    match static_dir {
        Some(dir) => {
            let files = ServeDir::new(dir).append_index_html_on_directories(true);
            router.fallback(move |request: Request| static_file(files.clone(), request))
        }
        None => router,
    }
}

/// `/webtransport`: where the shard takes WebTransport sessions and the
/// hashes of its self-signed certificate, as JSON
/// ([`crate::webtransport::Offer`]); 204 (no offer) when it takes none; 503 while it
/// takes no players (draining, stopping, Redis unreachable), as `/ws`
/// answers then, so a load balancer asks another shard (nginx:
/// `proxy_next_upstream http_503`) instead of sending the page to one that
/// would refuse its Hello as busy.
async fn webtransport(State(state): State<AppState>) -> Response {
    if let (Some(_), Some(why)) = (&state.webtransport, not_ready(&state)) {
        return unready(&state, why);
    }
    match &state.webtransport {
        Some(offer) => {
            ([(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))], axum::Json(offer.get())).into_response()
        }
        // Nothing offered, which is no error: a 404 would be logged in the
        // browser's console at every connect of every page.
        // No-store as the offer: a cached "none" would hide WebTransport
        // once the shard takes it.
        None => {
            (StatusCode::NO_CONTENT, [(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))]).into_response()
        }
    }
}

/// Longest request path served from the static folder, bytes, and longest
/// path segment (Linux's NAME_MAX). Longer ones cannot name a file there.
const MAX_STATIC_PATH: usize = 1024;
const MAX_STATIC_SEGMENT: usize = 255;

/// Serves the browser client's files. A path no file can have (too long for
/// the file system) is 404, not the 500 the file system's error would give.
async fn static_file(files: ServeDir, request: Request) -> Response {
    let path = request.uri().path();
    if path.len() > MAX_STATIC_PATH || path.split('/').any(|segment| segment.len() > MAX_STATIC_SEGMENT) {
        return (StatusCode::NOT_FOUND, "not found\n").into_response();
    }
    match tower::ServiceExt::oneshot(files, request).await {
        Ok(response) => response.into_response(),
        Err(never) => match never {},
    }
}

/// Why a shard is not taking players.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotReady {
    /// It is stopping.
    ShuttingDown,
    /// It moves its players to other shards.
    Draining,
    /// Clustered, its last heartbeat did not reach Redis, or Redis refused
    /// it (out of memory).
    RedisDown,
    /// Clustered, another process holds its shard id's heartbeat (the same
    /// `--shard-id` started twice in one place).
    IdTaken,
}

impl NotReady {
    /// Every reason, in the metrics table's order (its series are made at
    /// 0 when the router is; the table's test reads it).
    pub const ALL: [NotReady; 4] = [NotReady::ShuttingDown, NotReady::Draining, NotReady::RedisDown, NotReady::IdTaken];

    /// The metric label.
    pub fn label(self) -> &'static str {
        match self {
            NotReady::ShuttingDown => "shutting_down",
            NotReady::Draining => "draining",
            NotReady::RedisDown => "redis_down",
            NotReady::IdTaken => "shard_id_taken",
        }
    }

    /// What `/readyz` answers.
    pub fn text(self) -> &'static str {
        match self {
            NotReady::ShuttingDown => "shutting down\n",
            NotReady::Draining => "draining\n",
            NotReady::RedisDown => "redis unavailable (unreachable, or refusing this shard's commands)\n",
            NotReady::IdTaken => "another process holds this shard id in the place\n",
        }
    }
}

/// A request that would begin a session (a websocket upgrade, a WebTransport
/// offer) refused because the shard takes no players: 503, counted.
fn unready(state: &AppState, why: NotReady) -> Response {
    state.session.metrics.refused_unready(why.label());
    (StatusCode::SERVICE_UNAVAILABLE, [(header::RETRY_AFTER, "1")], why.text()).into_response()
}

/// Why this shard is not taking players now (`None`: it is), as `/readyz` says.
pub fn not_ready(state: &AppState) -> Option<NotReady> {
    let redis_down = state.cluster.as_ref().is_some_and(|c| !c.redis_up.load(std::sync::atomic::Ordering::Relaxed));
    let id_taken = state.cluster.as_ref().is_some_and(|c| c.id_taken.load(std::sync::atomic::Ordering::Relaxed));
    if state.session.cancel.is_cancelled() {
        Some(NotReady::ShuttingDown)
    } else if state.draining.is_cancelled() {
        Some(NotReady::Draining)
    } else if id_taken {
        Some(NotReady::IdTaken)
    } else if redis_down {
        Some(NotReady::RedisDown)
    } else {
        None
    }
}

async fn websocket(State(state): State<AppState>, slot: Option<Extension<SlotHold>>, mut req: Request) -> Response {
    if let Some(why) = not_ready(&state) {
        // Refused before the upgrade, so a load balancer retries another shard
        // (nginx: proxy_next_upstream http_503) instead of a Busy after it.
        return unready(&state, why);
    }
    let ctx = state.session.clone();
    let (metrics, timeout) = (ctx.metrics.clone(), ctx.config.listen.handshake_timeout);
    upgrade(&mut req, &metrics, &state.tracker, timeout, move |stream, already_read| {
        // Taken once the upgrade is done: a refused one leaves it with the HTTP connection.
        let slot = slot.and_then(|Extension(hold)| hold.take());
        session::serve(stream, already_read, slot, ctx)
    })
}

/// Answers a websocket upgrade request (RFC 6455 section 4.2): a refusal
/// (counted in `metrics`, with the status the handshake asks for), or 101
/// and `then` run, in a task of `tracker`, on the upgraded connection and
/// the bytes the HTTP server read past the request, once hyper hands it
/// over (given up after `timeout`).
pub fn upgrade<F, Fut>(
    req: &mut Request,
    metrics: &Metrics,
    tracker: &TaskTracker,
    timeout: Duration,
    then: F,
) -> Response
where
    F: FnOnce(Stream, Bytes) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let accept = match handshake::accept(req.method(), req.version(), req.headers()) {
        Ok(a) => a,
        Err(why) => {
            metrics.refused_upgrade(why);
            tracing::debug!(reason = why.label(), "websocket upgrade refused");
            let mut refusal = (why.status(), format!("{why}\n")).into_response();
            if why == UpgradeRefusal::Version {
                let version = HeaderValue::from_static(handshake::WEBSOCKET_VERSION);
                refusal.headers_mut().insert(header::SEC_WEBSOCKET_VERSION, version);
            }
            return refusal;
        }
    };
    let on_upgrade = hyper::upgrade::on(req);
    tracker.spawn(async move {
        let upgraded = match tokio::time::timeout(timeout, on_upgrade).await {
            Ok(Ok(u)) => u,
            Ok(Err(e)) => return tracing::debug!(error = %e, "upgrade failed"),
            Err(_) => return tracing::debug!("upgrade timed out"),
        };
        let parts = match upgraded.downcast::<TokioIo<Stream>>() {
            Ok(p) => p,
            Err(_) => return tracing::error!("upgraded connection is not one the listener accepted"),
        };
        then(parts.io.into_inner(), parts.read_buf).await;
    });
    let mut response = StatusCode::SWITCHING_PROTOCOLS.into_response();
    let h = response.headers_mut();
    h.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    if let Ok(v) = HeaderValue::from_str(&accept) {
        h.insert(header::SEC_WEBSOCKET_ACCEPT, v);
    }
    response
}

/// `/readyz`: 200 "ready", or 503 with why not.
pub async fn readyz(State(state): State<AppState>) -> Response {
    match not_ready(&state) {
        Some(why) => (StatusCode::SERVICE_UNAVAILABLE, why.text()).into_response(),
        None => (StatusCode::OK, "ready\n").into_response(),
    }
}

/// `/metrics`: the Prometheus text of the shard's registry.
pub async fn metrics(State(state): State<AppState>) -> Response {
    let mut body = String::new();
    match prometheus_client::encoding::text::encode(&mut body, &state.registry) {
        Ok(()) => ([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], body)
            .into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}
