//! mino's shard server.
//!
//! The modules form layers; a module imports only from its own layer or the
//! layers below it (`scripts/layers.py` checks this in CI, against
//! `layers.toml`). Bottom up:
//!
//! | layer | modules | what |
//! |---|---|---|
//! | 0 leaves | [`address`], [`clock`], [`config`], `ids`, `sim`, `admission`, `close`, `auth`, `metrics`, `upgrade`, `ws_frame`, `topology`, `backplane`, `figures`, `order`, `reload` | listen addresses, time, flags, player ids, the world, the busy rule, close reasons, identity tokens, Prometheus metrics, the websocket opening handshake, websocket frames encoded once, where Redis is (one node, Sentinel, Redis Cluster), the Redis connections and key layout, a shard's own figures, operators' orders, files reloaded while running |
//! | 1 resume | `resume` | resume tickets and sessions: in memory standalone, in Redis clustered |
//! | 2 core | [`shard`] | the I/O-free shard core: world, admission, links, presence, the cluster view, per-tick frames, fence, drain; returns effects |
//! | 3 session | `session` | a socket's handshake task, then the hub: every admitted socket read and written on the tick's thread (frames, the outbox, liveness, limits) |
//! | 4 cluster | `cluster` | the Redis tasks: publisher, subscriber, registry |
//! | 5 driver | [`tick`] | the tick driver: runs the core on the tick clock and carries out its effects |
//! | 6 edge | `http`, `admin`, `listener`, [`shutdown`] | routes, the admin listener (console, API, tokens), the accept loop (TCP or Unix sockets), signals |
//! | 7 conformance | [`echo`] | the websocket layer with an echo in place of the game, for a conformance suite (not part of a shard) |
//!
//! One tick's frame, from the clock to the sockets:
//!
//! ```text
//!  TickClock ─► TickDriver ─► Shard::tick ─► TickFrame (snapshot encoded once,
//!                  │                          chat, presence, roster)
//!                  │ frames each payload once as a websocket frame
//!                  ▼
//!               Hub ─► every socket's Outbox: one non-blocking writev each
//!                  │     (a socket that cannot take it all is watched for
//!                  │      EPOLLOUT; the hub finishes the write)
//!                  └─► publisher ─► Redis ─► other shards' subscribers, relayed
//!                                              unchanged in their next tick
//! ```

pub mod address;
pub mod clock;
pub mod config;

mod admission;
mod auth;
mod backplane;
mod close;
mod figures;
mod guard;
mod ids;
mod metrics;
mod order;
mod reload;
mod sim;
mod topology;
mod upgrade;
mod ws_frame;

mod resume;

pub mod shard;

mod session;

mod cluster;

pub mod tick;

mod admin;
mod http;
mod listener;
pub mod shutdown;

pub mod echo;

pub use config::{Cli, Config, ConfigError};
pub use listener::{BindError, Listener};
pub use tick::Lifecycle;

use prometheus_client::registry::Registry;
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;

/// Why [`run`] could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The Redis URL is not one (nothing was started).
    #[error(transparent)]
    Redis(#[from] backplane::RedisError),
    /// The area of interest's grid cannot be made.
    #[error(transparent)]
    Grid(#[from] shard::grid::GridError),
    /// The identity service's keys cannot be loaded.
    #[error("identity keys: {0}")]
    Keys(#[from] auth::KeyError),
    /// The admin tokens cannot be loaded.
    #[error("admin tokens: {0}")]
    AdminTokens(#[from] admin::token::TokenError),
    /// The poller of the players' sockets cannot be made (out of descriptors).
    #[error("socket poller: {0}")]
    Poller(#[from] std::io::Error),
}

/// Runs a shard on `listener` (players; TCP or a Unix socket) and `admin`
/// (probes, metrics, the console and its API; optional) until `life.stop` fires. When `life.drain` fires
/// first, the shard drains: it admits nobody, reports not ready, tells its
/// players to move (paced by `config.drain_rate`; standalone, with no other
/// shard to move them to, it closes every socket at once with 1012 "service
/// restart"), and stops once they are all gone or after `config.drain_timeout`. Stopping closes every socket with
/// "going away" (1001), stops the tick and joins every task, giving up after
/// `config.shutdown_timeout`.
///
/// Errors: [`RunError::Redis`] for an invalid Redis URL. An unreachable Redis
/// is not an error: the shard serves its own players, reports not ready, and
/// keeps retrying.
pub async fn run(listener: Listener, admin: Option<Listener>, config: Config, life: Lifecycle) -> Result<(), RunError> {
    let verifier = auth::Verifier::load(config.auth.clone())?;
    let tokens = config.admin.token_file.as_deref().map(admin::token::TokenFile::load).transpose()?.map(Arc::new);
    let admin_at = admin.as_ref().and_then(|a| a.local_addr().ok()).map(|a| a.to_string());
    let config = Arc::new(config);
    let mut registry = Registry::default();
    let metrics = metrics::Metrics::register(&mut registry);
    let tracker = TaskTracker::new();
    let (commands_tx, commands_rx) = mpsc::channel(session::COMMAND_QUEUE);
    let cancel = life.stop.clone();

    // Presence numbers start at the start time in µs, so a restarted shard's
    // keep increasing; the heartbeat carries the start (another value is a
    // restart, whatever the clock said).
    let presence_epoch = clock::wall_ms() * 1000;
    let (cluster_link, cluster_status, store, peers) = match &config.redis {
        Some(target) => {
            let (link, status, store, peers) =
                cluster::start(target, presence_epoch, &config, &metrics, &tracker, &cancel)?;
            (Some(link), Some(status), Some(store), Some(peers))
        }
        None => (None, None, None, None),
    };
    let shard = shard::Shard::new(&config, StdRng::from_os_rng(), presence_epoch)?;
    let base = figures::ShardFigures {
        tick_hz: config.tick_hz,
        max_players: config.max_players,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        admin: admin_at,
        ..Default::default()
    };
    let (vitals, figures) = tick::Vitals::new(base, clock::now());
    let driver = tick::TickDriver::new(
        shard,
        config.clone(),
        metrics.clone(),
        cluster_link,
        tracker.clone(),
        life.clone(),
        vitals,
    )?;
    tracker.spawn(driver.run(commands_rx));

    let state = http::AppState {
        session: session::SessionContext {
            config: config.clone(),
            metrics,
            commands: commands_tx,
            cancel: cancel.clone(),
            store,
            auth: verifier.clone(),
        },
        registry: Arc::new(registry),
        tracker: tracker.clone(),
        cluster: cluster_status,
        draining: life.drain.clone(),
    };
    let accept = listener::AcceptConfig {
        max_connections: config.max_connections,
        header_timeout: config.handshake_timeout,
        send_buffer: config.send_buffer,
    };
    tracing::info!(shard = %config.shard_id, tick_hz = config.tick_hz, max_players = config.max_players, "shard running");
    if let Some(admin) = admin {
        let place_store = match config.redis.as_ref() {
            Some(target) => Some(admin::store::PlaceStore::new(target, &config.place, &state.session.metrics)?),
            None => None,
        };
        let admin_state = admin::AdminState {
            app: state.clone(),
            figures,
            peers,
            store: place_store,
            history: Arc::new(std::sync::Mutex::new(admin::place::History::new())),
        };
        tracker.spawn(admin::sample(admin_state.clone(), cancel.clone()));
        match &tokens {
            Some(t) => {
                let count = t.tokens().count();
                tracing::info!(tokens = count, "admin listener: every admin route needs a bearer token");
                tracker.spawn(t.clone().watch(cancel.clone()));
            }
            None => tracing::info!("admin listener on loopback: no token asked"),
        }
        let router = admin::router(admin_state, tokens);
        let (metrics, header_timeout) = (state.session.metrics.clone(), config.handshake_timeout);
        tracker.spawn(listener::admin_loop(admin, router, header_timeout, metrics, tracker.clone(), cancel.clone()));
    }
    tracker.spawn(verifier.watch(cancel.clone()));
    let metrics = state.session.metrics.clone();
    tracker.spawn(listener::accept_loop(
        listener,
        http::router(state),
        accept,
        metrics,
        tracker.clone(),
        cancel.clone(),
    ));

    tokio::select! {
        () = cancel.cancelled() => {}
        () = life.drain.cancelled() => {
            tokio::select! {
                () = life.drained.cancelled() => match config.redis {
                    Some(_) => tracing::info!("drained: every player moved"),
                    None => tracing::info!("standalone restart: every player disconnected"),
                },
                () = tokio::time::sleep(config.drain_timeout) => tracing::warn!("drain timed out"),
                () = cancel.cancelled() => {}
            }
        }
    }
    cancel.cancel();
    tracker.close();
    if tokio::time::timeout(config.shutdown_timeout, tracker.wait()).await.is_err() {
        tracing::warn!(tasks = tracker.len(), "shutdown timed out; abandoning remaining tasks");
    }
    tracing::info!("shard stopped");
    Ok(())
}
