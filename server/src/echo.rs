//! The echo: mino's own websocket layer with an echo where the game would be,
//! for a websocket conformance suite to judge (Autobahn's fuzzing client,
//! `scripts/autobahn.sh`; `server/examples/ws_echo.rs` runs it).
//!
//! Everything a player's socket goes through is the shard's code: the
//! listener's HTTP server and its limits, the opening handshake
//! ([`crate::upgrade`], [`crate::http::upgrade`]), the handover of the raw
//! socket, then the hub ([`crate::hub::Hub::echo`]): its readiness-driven
//! reads, the frame reader and its RFC 6455 checks, the control-frame budget,
//! the outbox, the close codes, the close frames and the linger. Two things
//! differ, both at the application's seam: there is no Hello and no game (each
//! text or binary message comes back as it came, each ping is answered at
//! once), and text is taken (checked as UTF-8 fragment by fragment) where the
//! game refuses it. No Error message precedes a close frame: that message is
//! the game's.
//!
//! Not part of a shard, and not started by `mino-server`.

use crate::clock;
use crate::config::{Config, Writes};
use crate::http;
use crate::hub::conn::{control_budget, Handover};
use crate::hub::rate_limit::{Budget, TokenBucket};
use crate::hub::Hub;
use crate::listener::{self, AcceptConfig, Listener};
use crate::metrics::Metrics;
use crate::socket::{SlotHold, Upgraded};
use crate::websocket::closing::ReadEnd;
use crate::websocket::reader::{FrameReader, Messages};
use axum::extract::{Request, State};
use axum::response::Response;
use axum::routing::any;
use axum::{Extension, Router};
use prometheus_client::registry::Registry;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Longest message the echo takes by default, bytes: the conformance
/// suite's largest (its performance cases send 16 MiB).
pub const DEFAULT_MAX_MESSAGE: usize = 16 << 20;

/// Upgraded sockets waiting for the hub.
const ADOPT_QUEUE: usize = 64;

/// How often closing sockets' deadlines are checked (the shard does it
/// every tick).
const EXPIRE_EVERY: Duration = Duration::from_millis(50);

/// Why [`run`] could not start.
#[derive(Debug, thiserror::Error)]
pub enum EchoError {
    /// The hub's poller cannot be made (out of descriptors).
    #[error("socket poller: {0}")]
    Poller(#[from] std::io::Error),
}

/// What the echo's route shares.
#[derive(Clone)]
struct EchoState {
    /// Sockets for the hub.
    adopt: mpsc::Sender<Handover>,
    max_message: usize,
    controls: Budget,
    handshake_timeout: Duration,
    metrics: Metrics,
    tracker: TaskTracker,
}

/// Serves websockets at `/ws` on `listener` with the echo in place of the
/// game, messages of at most `max_message` bytes (larger ones close with
/// 1009), under `config`'s limits (connections, handshake timeout,
/// `--control-rate`), until `cancel` fires; then every socket is dropped and
/// every task joined.
///
/// Errors: [`EchoError::Poller`] when the hub cannot start.
pub async fn run(
    listener: Listener,
    config: &Config,
    max_message: usize,
    cancel: CancellationToken,
) -> Result<(), EchoError> {
    let metrics = Metrics::register(&mut Registry::default());
    let hub = Hub::echo(config, metrics.clone())?;
    let tracker = TaskTracker::new();
    let (adopt, adopted) = mpsc::channel(ADOPT_QUEUE);
    let state = EchoState {
        adopt,
        max_message,
        controls: control_budget(&config.socket),
        handshake_timeout: config.listen.handshake_timeout,
        metrics: metrics.clone(),
        tracker: tracker.clone(),
    };
    let router = Router::new().route("/ws", any(websocket)).with_state(state);
    let accept = AcceptConfig {
        max_connections: config.listen.max_connections,
        header_timeout: config.listen.handshake_timeout,
        send_buffer: config.listen.send_buffer,
    };
    tracker.spawn(listener::accept_loop(listener, router, accept, metrics, tracker.clone(), cancel.clone()));
    drive(hub, adopted, cancel).await;
    tracker.close();
    tracker.wait().await;
    Ok(())
}

/// The hub's loop: reads ready sockets, takes upgraded ones, expires closing
/// ones, until `cancel` fires.
async fn drive(mut hub: Hub, mut adopted: mpsc::Receiver<Handover>, cancel: CancellationToken) {
    let mut expire = tokio::time::interval(EXPIRE_EVERY);
    expire.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = cancel.cancelled() => break,
            ready = hub.ready() => hub.on_ready(&ready),
            Some(handed) = adopted.recv() => hub.adopt(handed),
            _ = expire.tick() => hub.expire(clock::now()),
        }
    }
}

/// `/ws`: the upgrade, then the socket to the hub.
async fn websocket(State(echo): State<EchoState>, slot: Option<Extension<SlotHold>>, mut req: Request) -> Response {
    let (metrics, tracker, timeout) = (echo.metrics.clone(), echo.tracker.clone(), echo.handshake_timeout);
    http::upgrade(&mut req, &metrics, &tracker, timeout, move |stream, already_read| async move {
        let socket = match stream.into_socket() {
            Ok(socket) => socket,
            Err(e) => return tracing::warn!(error = %e, "socket could not be handed to the hub"),
        };
        let mut reader = FrameReader::taking(echo.max_message, Messages::TextAndBinary);
        reader.unread(&already_read);
        let controls = TokenBucket::full(&echo.controls, clock::now());
        let slot = slot.and_then(|Extension(hold)| hold.take());
        let handed = Handover { socket, reader, controls, end: ReadEnd::Open, writes: Writes::Batched, slot };
        // The hub counts the socket out when it drops it.
        echo.metrics.connections.inc();
        if echo.adopt.send(handed).await.is_err() {
            echo.metrics.connections.dec();
        }
    })
}
