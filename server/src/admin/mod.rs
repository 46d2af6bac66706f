//! The admin listener's routes (`--admin-listen`), apart from the players'
//! listener so they answer however many sockets players (or an attacker)
//! hold:
//!
//! - `/healthz`, `/readyz`, `/metrics`, and `POST /admin/drain` (drain this
//!   shard, as SIGTERM does);
//! - the admin console, a web page at `/admin/` ([`console`]), and its JSON
//!   API at `/admin/api/` ([`api`]): every live shard of the place with its
//!   figures ([`place`]), a drain of any shard, players found by name or id
//!   and kicked with a reason.
//!
//! Actions on another shard go through Redis, on the place's control
//! channel ([`crate::order`]): every shard hears them, the one concerned
//! carries them out and logs who asked; no shard needs to reach another's
//! admin listener. Reading the place needs no request to the others either:
//! their heartbeats in the registry carry their figures.
//!
//! Access ([`token`]): the listener is on loopback unless configured
//! otherwise; beyond loopback `--admin-token-file` is required, and then
//! every route but the probes and the console's own files needs a bearer
//! token. A POST from
//! a page of another origin is refused (403), and without tokens a request
//! but the probes' must name a loopback host (403 otherwise), so a web page
//! open in an operator's browser can neither act on a loopback listener nor
//! read it through DNS rebinding (the probes say only "ok" and whether the
//! shard takes players).

pub mod api;
pub mod console;
pub mod place;
pub mod store;
pub mod token;

use crate::clock;
use crate::cluster::registry::Heartbeat;
use crate::cluster::Peers;
use crate::config::Config;
use crate::figures::ShardFigures;
use crate::http::{self, AppState, NotReady};
use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use mino_protocol::ShardId;
use place::{History, OwnState, RedisState, ShardRow, ShardState};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use store::PlaceStore;
use token::{Asker, TokenFile};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// What the admin routes share.
#[derive(Clone)]
pub struct AdminState {
    /// The shard's routes' state (commands to the tick loop, metrics,
    /// readiness).
    pub app: AppState,
    /// This shard's newest figures.
    pub figures: watch::Receiver<Arc<ShardFigures>>,
    /// Clustered: the other live shards' heartbeats.
    pub peers: Option<Peers>,
    /// Clustered: the place's Redis, for searches and orders.
    pub store: Option<PlaceStore>,
    /// The last minutes, for the charts.
    pub history: Arc<Mutex<History>>,
    /// Drains this listener sent another shard through Redis, by shard, and
    /// when: asked again before that shard's heartbeat can show its drain
    /// (a shard TTL), the drain is refused as its heartbeat would have it
    /// (409), not ordered twice.
    pub drains_sent: Arc<Mutex<HashMap<ShardId, std::time::Instant>>>,
}

impl AdminState {
    /// The shard's settings.
    pub fn config(&self) -> &Config {
        &self.app.session.config
    }

    /// This shard's row, from its own state.
    pub fn own_row(&self) -> ShardRow {
        let m = &self.app.session.metrics;
        let redis = match &self.app.cluster {
            None => RedisState::Standalone,
            // Redis answered: the heartbeat there is another process's (the
            // state says so); not down (an outside trial read "down").
            Some(c) if c.id_taken.load(Ordering::Relaxed) => RedisState::Up,
            Some(c) if !c.redis_up.load(Ordering::Relaxed) => RedisState::Down,
            Some(c) if c.fenced.load(Ordering::Relaxed) => RedisState::Fenced,
            Some(_) => RedisState::Up,
        };
        let state = match http::not_ready(&self.app) {
            None => ShardState::Ready,
            Some(NotReady::Draining) => ShardState::Draining,
            Some(NotReady::ShuttingDown) => ShardState::Stopping,
            Some(NotReady::RedisDown) => ShardState::RedisDown,
            Some(NotReady::IdTaken) => ShardState::IdTaken,
        };
        let own = OwnState {
            id: self.config().shard_id,
            players: u32::try_from(m.players.get()).unwrap_or(0),
            overloaded: m.overloaded.get() != 0,
            redis,
            state,
        };
        place::own_row(own, &self.figures.borrow())
    }

    /// Every live shard's row, by id: this one and the others the registry
    /// last read.
    pub fn rows(&self) -> Vec<ShardRow> {
        let own = self.own_row();
        match &self.peers {
            Some(peers) => place::rows(own, peers.borrow().iter().map(|(id, beat)| (*id, beat))),
            None => vec![own],
        }
    }

    /// The other live shards' ids, in order.
    pub fn peer_ids(&self) -> Vec<ShardId> {
        let mut ids: Vec<ShardId> =
            self.peers.as_ref().map(|p| p.borrow().keys().copied().collect()).unwrap_or_default();
        ids.sort_unstable();
        ids
    }

    /// Another live shard's last heartbeat.
    pub fn peer(&self, id: ShardId) -> Option<Heartbeat> {
        self.peers.as_ref().and_then(|p| p.borrow().get(&id).cloned())
    }
}

/// The admin listener's router: with a token file, every route but the
/// probes (`/healthz`, `/readyz`: a load balancer's or an orchestrator's
/// health check often cannot send a header, and they tell only whether the
/// shard lives and takes players) and the console's files needs one of its
/// tokens.
pub fn router(state: AdminState, tokens: Option<Arc<TokenFile>>) -> Router {
    let console_dir = state.config().admin.console_dir.clone();
    let probes = Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .with_state(state.clone());
    let guarded = Router::new()
        .route("/metrics", get(metrics))
        .route("/admin/drain", post(drain_here))
        .route("/admin/api/place", get(api::place))
        .route("/admin/api/history", get(api::history))
        .route("/admin/api/players", get(api::players))
        .route("/admin/api/shards/{id}/drain", post(api::drain))
        .route("/admin/api/players/{id}/kick", post(api::kick))
        .route("/admin/api/{*rest}", get(unknown).post(unknown))
        .layer(middleware::from_fn(same_origin))
        .layer(middleware::from_fn_with_state(tokens, token::guard))
        .with_state(state);
    guarded.merge(probes).merge(console::routes(console_dir))
}

/// Samples the place into the history once a second until `cancel` fires.
pub async fn sample(state: AdminState, cancel: CancellationToken) {
    let mut every = tokio::time::interval(place::SAMPLE_INTERVAL);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            _ = every.tick() => {}
        }
        let rows = state.rows();
        state.history.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(clock::wall_ms(), &rows);
    }
}

async fn readyz(State(state): State<AdminState>) -> Response {
    http::readyz(State(state.app)).await
}

async fn metrics(State(state): State<AdminState>) -> Response {
    http::metrics(State(state.app)).await
}

async fn unknown() -> Response {
    api::ApiError::NotFound("no such admin API route".into()).into_response()
}

/// `POST /admin/drain`: drains this shard as SIGTERM does (202).
async fn drain_here(State(state): State<AdminState>, Extension(asker): Extension<Asker>) -> Response {
    tracing::info!(operator = %asker.operator, peer = %asker.peer, "admin: drain of this shard asked by {} from {}", asker.operator, asker.peer);
    state.app.draining.cancel();
    (StatusCode::ACCEPTED, "draining\n").into_response()
}

/// Refuses a POST whose `Origin` is not this listener (403): a page of
/// another site in an operator's browser must not act on the admin API. A
/// request without `Origin` (curl, scripts) passes.
async fn same_origin(req: Request, next: Next) -> Response {
    if req.method() == Method::POST {
        let host = req.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
        let origin = req.headers().get(header::ORIGIN).and_then(|o| o.to_str().ok());
        let same =
            |o: &str| o.strip_prefix("http://").or_else(|| o.strip_prefix("https://")).is_some_and(|rest| rest == host);
        if origin.is_some_and(|o| !same(o)) {
            let body = serde_json::json!({ "error": "a request from another origin", "kind": "forbidden" });
            return (StatusCode::FORBIDDEN, Json(body)).into_response();
        }
    }
    next.run(req).await
}
