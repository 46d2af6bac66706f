//! HTTP routes of a shard: the websocket at `/ws`, `/healthz`, `/readyz`,
//! Prometheus `/metrics`, and the browser client's files at `/` when a static
//! folder is configured.

use crate::session::{self, SessionContext};
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Router};
use mino_protocol::limits::MAX_CLIENT_MESSAGE_BYTES;
use prometheus_client::registry::Registry;
use std::sync::Arc;
use tokio::sync::OwnedSemaphorePermit;
use tokio_util::task::TaskTracker;
use tower_http::services::ServeDir;

/// A websocket keeps this much read buffer (bytes): client messages are tiny.
pub const READ_BUFFER_BYTES: usize = 8 * 1024;

/// Writes are buffered up to this many bytes until the per-tick flush, so one
/// tick's frames leave in one write.
pub const WRITE_BUFFER_BYTES: usize = 4 * 1024 * 1024;

/// Hard cap on one socket's unsent bytes in user space.
pub const MAX_WRITE_BUFFER_BYTES: usize = 16 * 1024 * 1024;

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
}

/// A connection slot, held by the HTTP connection and by the websocket session
/// it upgrades to; released when both are gone.
#[derive(Clone)]
pub struct ConnectionSlot(pub Arc<OwnedSemaphorePermit>);

/// The router of every route.
pub fn router(state: AppState) -> Router {
    let static_dir = state.session.config.static_dir.clone();
    let router = Router::new()
        .route("/ws", get(websocket))
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(state);
    match static_dir {
        Some(dir) => router.fallback_service(ServeDir::new(dir).append_index_html_on_directories(true)),
        None => router,
    }
}

async fn websocket(
    ws: WebSocketUpgrade,
    State(state): State<AppState>,
    slot: Option<Extension<ConnectionSlot>>,
) -> Response {
    let ctx = state.session.clone();
    let tracker = state.tracker.clone();
    ws.read_buffer_size(READ_BUFFER_BYTES)
        .write_buffer_size(WRITE_BUFFER_BYTES)
        .max_write_buffer_size(MAX_WRITE_BUFFER_BYTES)
        .max_message_size(MAX_CLIENT_MESSAGE_BYTES)
        .max_frame_size(MAX_CLIENT_MESSAGE_BYTES)
        .on_upgrade(move |socket| {
            tracker.track_future(async move {
                let _slot = slot;
                session::serve(socket, ctx).await;
            })
        })
}

async fn readyz(State(state): State<AppState>) -> Response {
    let redis_down = state.cluster.as_ref().is_some_and(|c| !c.redis_up.load(std::sync::atomic::Ordering::Relaxed));
    if state.session.cancel.is_cancelled() {
        (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response()
    } else if redis_down {
        (StatusCode::SERVICE_UNAVAILABLE, "redis unreachable\n").into_response()
    } else {
        (StatusCode::OK, "ready\n").into_response()
    }
}

async fn metrics(State(state): State<AppState>) -> Response {
    let mut body = String::new();
    match prometheus_client::encoding::text::encode(&mut body, &state.registry) {
        Ok(()) => ([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], body)
            .into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}
