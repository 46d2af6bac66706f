//! The admin console's JSON API, under `/admin/api/` (every answer JSON;
//! errors are `{"error": TEXT, "kind": LABEL}`):
//!
//! | request | answer |
//! |---|---|
//! | `GET place` | `{place, served_by, clustered, players, shards: [ShardRow]}`: every live shard |
//! | `GET history` | `{interval_ms, samples: [{at_ms, shards: [{id, players, lateness_p99_ms}]}]}`: the last 5 minutes |
//! | `GET players?q=TEXT&limit=N` | `{query, players: [{id, name, shard, here, x, y}], truncated, partial}`: by id or part of the name (N: 1 to 200, 50) |
//! | `POST shards/ID/drain` (ID in hex, as the logs and the console show shards; the JSON's ids are the same numbers in decimal) | 202 `{shard, players, via}`; 404 no such live shard, 409 draining already |
//! | `POST players/ID/kick` with `{"reason": TEXT}` | 202 `{player, shard, via}` (`name` too when here); 400 bad reason, 404 not in the place |
//!
//! `via` says how the order went: `here` (this shard carried it out) or
//! `redis` (sent to the shard it concerns on the control channel). Actions
//! are logged at info with the operator and the peer.

use super::place::{History, ShardRow};
use super::token::Asker;
use super::AdminState;
use crate::order::{KickReason, Order, OrderOutcome};
use crate::session::Ask;
use crate::shard::find::PlayerQuery;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use mino_protocol::{PlayerId, ShardId};
use serde::{Deserialize, Serialize};
use std::sync::PoisonError;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// Most players one search answers.
pub const MAX_RESULTS: usize = 200;

/// Players a search answers when no limit is given.
pub const DEFAULT_RESULTS: usize = 50;

/// Longest wait for the tick loop's answer.
const ASK_TIMEOUT: Duration = Duration::from_secs(2);

/// Why an API request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    /// The request is malformed (400).
    BadRequest(String),
    /// No such shard or player (404).
    NotFound(String),
    /// It cannot be done in this state (409).
    Conflict(String),
    /// The shard is stopping or Redis is out of reach (503).
    Unavailable(String),
}

impl ApiError {
    /// The `kind` of the JSON answer.
    pub fn label(&self) -> &'static str {
        match self {
            ApiError::BadRequest(_) => "bad_request",
            ApiError::NotFound(_) => "not_found",
            ApiError::Conflict(_) => "conflict",
            ApiError::Unavailable(_) => "unavailable",
        }
    }

    fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let kind = self.label();
        let (ApiError::BadRequest(text)
        | ApiError::NotFound(text)
        | ApiError::Conflict(text)
        | ApiError::Unavailable(text)) = self;
        (status, Json(serde_json::json!({ "error": text, "kind": kind }))).into_response()
    }
}

/// Asks the tick loop and waits for its answer.
async fn ask<T>(state: &AdminState, make: impl FnOnce(oneshot::Sender<T>) -> Ask) -> Result<T, ApiError> {
    let stopping = || ApiError::Unavailable("the shard is stopping".into());
    let (tx, rx) = oneshot::channel();
    state.app.session.commands.send(make(tx).into()).await.map_err(|_| stopping())?;
    tokio::time::timeout(ASK_TIMEOUT, rx).await.map_err(|_| stopping())?.map_err(|_| stopping())
}

/// `GET /admin/api/place`.
#[derive(Debug, Serialize)]
pub struct PlaceView {
    /// The place's name.
    pub place: String,
    /// The shard answering.
    pub served_by: u32,
    /// Over Redis with other shards (false: standalone).
    pub clustered: bool,
    /// Players in the place.
    pub players: u64,
    /// Every live shard, by id.
    pub shards: Vec<ShardRow>,
}

/// `GET /admin/api/place`: every live shard of the place.
pub async fn place(State(state): State<AdminState>) -> Json<PlaceView> {
    let shards = state.rows();
    Json(PlaceView {
        place: state.config().place.clone(),
        served_by: state.config().shard_id.0,
        clustered: state.peers.is_some(),
        players: shards.iter().map(|r| u64::from(r.players)).sum(),
        shards,
    })
}

/// `GET /admin/api/history`: the last minutes of players and lateness.
pub async fn history(State(state): State<AdminState>) -> Json<History> {
    Json(state.history.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone())
}

/// The query of `GET /admin/api/players`.
#[derive(Debug, Deserialize)]
pub struct SearchParams {
    /// An id or a part of a name.
    pub q: Option<String>,
    /// Most players answered.
    pub limit: Option<usize>,
}

/// One player found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FoundPlayer {
    /// Its id.
    pub id: u32,
    /// Its name.
    pub name: String,
    /// Its shard.
    pub shard: u32,
    /// On the shard answering.
    pub here: bool,
    /// Where it stands, world units (`null`: its shard's last snapshot does
    /// not list it yet).
    pub x: Option<f32>,
    /// Where it stands, world units.
    pub y: Option<f32>,
}

/// `GET /admin/api/players`.
#[derive(Debug, Serialize)]
pub struct SearchResult {
    /// The query as understood (trimmed).
    pub query: String,
    /// The players found, by id.
    pub players: Vec<FoundPlayer>,
    /// More players matched than the limit.
    pub truncated: bool,
    /// Redis was out of reach: only this shard's players were searched.
    pub partial: bool,
}

/// `GET /admin/api/players?q=TEXT`: players of the place by id or name.
pub async fn players(
    State(state): State<AdminState>,
    query: Result<Query<SearchParams>, QueryRejection>,
) -> Result<Json<SearchResult>, ApiError> {
    let Query(params) = query.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    let text = params.q.unwrap_or_default();
    let query = PlayerQuery::parse(&text).ok_or_else(|| ApiError::BadRequest("q: 1 to 64 characters".into()))?;
    let limit = params.limit.unwrap_or(DEFAULT_RESULTS).clamp(1, MAX_RESULTS);
    let me = state.config().shard_id;
    let local = ask(&state, |reply| Ask::Find { query: query.clone(), limit: limit + 1, reply }).await?;
    let mut found: Vec<FoundPlayer> = local
        .into_iter()
        .map(|f| FoundPlayer {
            id: f.player.0,
            name: f.name.to_string(),
            shard: me.0,
            here: true,
            x: Some(f.position.0),
            y: Some(f.position.1),
        })
        .collect();
    let mut partial = false;
    if let Some(store) = &state.store {
        for shard in state.peer_ids() {
            match store.find(shard, &query).await {
                Ok(remote) => found.extend(remote.into_iter().map(|r| FoundPlayer {
                    id: r.player.0,
                    name: r.name,
                    shard: r.shard.0,
                    here: false,
                    x: r.position.map(|p| p.0),
                    y: r.position.map(|p| p.1),
                })),
                Err(e) => {
                    tracing::debug!(error = %e, "admin search: redis");
                    partial = true;
                }
            }
        }
    }
    found.sort_by_key(|p| (p.id, p.shard));
    let truncated = found.len() > limit;
    found.truncate(limit);
    Ok(Json(SearchResult { query: text.trim().to_owned(), players: found, truncated, partial }))
}

/// What an order became.
#[derive(Debug, Serialize)]
pub struct OrderAnswer {
    /// The shard it concerned.
    pub shard: u32,
    /// The player kicked, if it was a kick.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub player: Option<u32>,
    /// The kicked player's name, when it was here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Players the drained shard had, if it was a drain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub players: Option<usize>,
    /// How the order went.
    pub via: Via,
}

/// How an order went: carried out here, or sent through Redis to the shard
/// it concerns. Answered as its label.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// This shard carried it out.
    Here,
    /// Sent to the shard it concerns on the control channel.
    Redis,
}

impl Via {
    /// Its label in the answer and the log: `here` or `redis`.
    pub fn label(self) -> &'static str {
        match self {
            Via::Here => "here",
            Via::Redis => "redis",
        }
    }
}

impl Serialize for Via {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.label())
    }
}

/// Why the path's shard id `text` was refused: `e`, and when `text` can
/// only be decimal (9 or 10 digits, a u32: more than 8 hex digits) the
/// shard it names in hex, as the API's JSON gives ids as numbers.
fn shard_id_refusal(text: &str, e: mino_protocol::ShardIdError) -> String {
    match text.trim().parse::<u32>() {
        Ok(id) if id != 0 && text.trim().len() > 8 => {
            format!("shard id: {e}; the JSON's {id} is shard {} in hex: POST shards/{}/drain", ShardId(id), ShardId(id))
        }
        _ => format!("shard id: {e}"),
    }
}

/// `POST /admin/api/shards/ID/drain`: drains shard ID (here, or through
/// Redis), as SIGTERM would. ID is in the form shards are shown in (the
/// logs, `--shard-id`, the console): 1 to 8 hex digits (`b2` or
/// `000000b2`); the JSON's `id`, `shard` and `served_by` are the same
/// numbers in decimal (400 with the hex form when given one that can only
/// be decimal).
pub async fn drain(
    State(state): State<AdminState>,
    Extension(asker): Extension<Asker>,
    path: Result<Path<String>, PathRejection>,
) -> Result<(StatusCode, Json<OrderAnswer>), ApiError> {
    let Path(text) = path.map_err(|e| ApiError::BadRequest(e.body_text()))?;
    let shard: ShardId = text.parse().map_err(|e| ApiError::BadRequest(shard_id_refusal(&text, e)))?;
    let id = shard.0;
    let order = Order::Drain { shard, by: asker.operator.clone() };
    if shard == state.config().shard_id {
        tracing::info!(operator = %asker.operator, peer = %asker.peer, shard = %shard, "admin: drain of this shard asked by {} from {}", asker.operator, asker.peer);
        return match ask(&state, |reply| Ask::Order { order, reply }).await? {
            OrderOutcome::Draining { players } => {
                let answer =
                    OrderAnswer { shard: id, player: None, name: None, players: Some(players), via: Via::Here };
                Ok((StatusCode::ACCEPTED, Json(answer)))
            }
            OrderOutcome::AlreadyDraining => Err(ApiError::Conflict(format!("shard {shard} is draining already"))),
            OrderOutcome::NotHere | OrderOutcome::Kicked { .. } => Err(ApiError::NotFound(format!("no shard {shard}"))),
        };
    }
    let beat = state.peer(shard).ok_or_else(|| ApiError::NotFound(format!("no live shard {shard} in the place")))?;
    if beat.figures.drain_from.is_some() {
        return Err(ApiError::Conflict(format!("shard {shard} is draining already")));
    }
    let store = state.store.as_ref().ok_or_else(|| ApiError::NotFound(format!("no shard {shard}")))?;
    {
        // Sent a moment ago: its heartbeat may not say so yet (it is read
        // here every heartbeat; the shard's TTL bounds any shard's). A
        // refused ask does not move the first's time.
        let mut sent = state.drains_sent.lock().unwrap_or_else(PoisonError::into_inner);
        let window = state.config().shard_ttl.max(state.config().heartbeat * 2);
        sent.retain(|_, at| at.elapsed() < window);
        if let Some(at) = sent.get(&shard) {
            let ago = at.elapsed().as_secs_f64();
            return Err(ApiError::Conflict(format!("shard {shard} is draining already (ordered {ago:.1} s ago)")));
        }
        sent.insert(shard, Instant::now());
    }
    tracing::info!(operator = %asker.operator, peer = %asker.peer, shard = %shard, "admin: drain of shard {shard} asked by {} from {} (sent through redis)", asker.operator, asker.peer);
    if let Err(e) = store.publish(&order).await {
        state.drains_sent.lock().unwrap_or_else(PoisonError::into_inner).remove(&shard);
        return Err(ApiError::Unavailable(format!("redis: {e}")));
    }
    let answer = OrderAnswer { shard: id, player: None, name: None, players: Some(beat.players), via: Via::Redis };
    Ok((StatusCode::ACCEPTED, Json(answer)))
}

/// The body of a kick.
#[derive(Debug, Deserialize)]
pub struct KickBody {
    /// Shown to the player (1 to 120 characters, one line).
    pub reason: String,
}

/// `POST /admin/api/players/ID/kick`: closes the player's socket with 4040
/// and the reason, wherever it plays, and ends its session.
pub async fn kick(
    State(state): State<AdminState>,
    Extension(asker): Extension<Asker>,
    path: Result<Path<u32>, PathRejection>,
    body: Result<Json<KickBody>, axum::extract::rejection::JsonRejection>,
) -> Result<(StatusCode, Json<OrderAnswer>), ApiError> {
    let Path(id) = path.map_err(|e| ApiError::BadRequest(format!("player id, a number: {}", e.body_text())))?;
    let Json(body) = body.map_err(|e| ApiError::BadRequest(format!("a JSON body {{\"reason\": TEXT}}: {e}")))?;
    let reason = KickReason::new(&body.reason).map_err(|e| ApiError::BadRequest(e.to_string()))?;
    let player = PlayerId(id);
    let order = Order::Kick { player, by: asker.operator.clone(), reason: reason.clone() };
    let me = state.config().shard_id;
    // Logged once the player is found (here, or on the shard that holds it):
    // a kick of nobody is a 404, not an action.
    let asked = || tracing::info!(operator = %asker.operator, peer = %asker.peer, player = id, reason = reason.as_str(), "admin: kick of player {id} asked by {} from {}: {}", asker.operator, asker.peer, reason.as_str());
    if let OrderOutcome::Kicked { name } = ask(&state, |reply| Ask::Order { order: order.clone(), reply }).await? {
        asked();
        // Clustered, its session ends in Redis too, so the kicked client's
        // automatic resume finds nothing to resume.
        end_session(&state, player).await;
        let answer =
            OrderAnswer { shard: me.0, player: Some(id), name: Some(name.to_string()), players: None, via: Via::Here };
        return Ok((StatusCode::ACCEPTED, Json(answer)));
    }
    let not_found = || ApiError::NotFound(format!("no player {id} in the place"));
    let store = state.store.as_ref().ok_or_else(not_found)?;
    let mut holder = None;
    for shard in state.peer_ids() {
        if store.holds(shard, player).await.map_err(|e| ApiError::Unavailable(format!("redis: {e}")))? {
            holder = Some(shard);
            break;
        }
    }
    let shard = holder.ok_or_else(not_found)?;
    asked();
    // Before the order goes out: once kicked, the client may try to resume.
    end_session(&state, player).await;
    store.publish(&order).await.map_err(|e| ApiError::Unavailable(format!("redis: {e}")))?;
    let answer = OrderAnswer { shard: shard.0, player: Some(id), name: None, players: None, via: Via::Redis };
    Ok((StatusCode::ACCEPTED, Json(answer)))
}

/// Clustered: ends `player`'s session in Redis (a failure is logged: the
/// kick itself stands).
async fn end_session(state: &AdminState, player: PlayerId) {
    if let Some(store) = &state.store {
        if let Err(e) = store.end_session(player).await {
            tracing::warn!(error = %e, player = player.0, "admin: kick: the session could not be ended in redis");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_answer_with_their_status_and_kind() {
        for (e, status, kind) in [
            (ApiError::BadRequest("x".into()), 400, "bad_request"),
            (ApiError::NotFound("x".into()), 404, "not_found"),
            (ApiError::Conflict("x".into()), 409, "conflict"),
            (ApiError::Unavailable("x".into()), 503, "unavailable"),
        ] {
            assert_eq!(e.label(), kind);
            assert_eq!(e.into_response().status().as_u16(), status);
        }
    }

    #[test]
    fn via_is_answered_as_its_label() {
        let labels = [Via::Here, Via::Redis].map(|via| serde_json::to_value(via).expect("json"));
        assert_eq!(labels, [serde_json::Value::from("here"), serde_json::Value::from("redis")]);
    }
}
