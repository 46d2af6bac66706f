//! mino's shard server.
//!
//! The modules form layers; a module imports only from its own layer or the
//! layers below it (`scripts/layers.py` checks this in CI, against
//! `layers.toml`, and writes this table from it). Bottom up:
//!
//! <!-- layers: server/src -->
//! | layer | modules | what |
//! |---|---|---|
//! | 0 leaves | `address`, `clock`, `config`, `ids`, `sim`, `admission`, `close`, `auth`, `metrics`, `websocket`, `socket`, `topology`, `backplane`, `figures`, `order`, `reload`, `guard`, `throttle` | listen addresses, time, flags, ids, the world, the busy rule, close reasons, metrics, identity tokens, the websocket protocol (the handshake, frames in and out, UTF-8, the closing rules; no I/O), a player's connection, where Redis is (one node, Sentinel, Redis Cluster), the Redis connections and key layout, a shard's own figures, operators' orders, files reloaded while running, a panic kept to one connection, a repeating warning said once a window |
//! | 1 resume | `resume` | resume tickets and sessions (in memory standalone, in Redis clustered) |
//! | 2 core | `shard` | the I/O-free shard core (world, links, presence, area of interest, fence, drain); returns effects |
//! | 3 hub | `hub` | every admitted socket, read when ready and written once a tick on the tick's thread (frames, the outbox, liveness, limits) |
//! | 4 session | `session` | one socket's handshake task, from the Hello to its admission |
//! | 5 cluster | `cluster` | the Redis tasks (publisher, subscriber, registry) |
//! | 6 driver | `tick` | the tick driver, running the core on the tick clock and carrying out its effects |
//! | 7 edge | `http`, `admin`, `listener`, `shutdown`, `webtransport` | routes, the admin listener (console, API, tokens), the accept loop (TCP or Unix sockets), signals, WebTransport sessions (QUIC, a task each) |
//! | 8 conformance | `echo` | the websocket layer with an echo in place of the game, for the conformance suite (scripts/autobahn.sh); not part of a shard |
//! <!-- end of layers -->
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
pub mod sim;
mod socket;
mod throttle;
mod topology;
mod websocket;

/// The server's websocket frames, as the shard core and the hub's batches
/// name them.
use websocket::frame as ws_frame;

mod resume;

pub mod shard;

mod hub;
mod session;

mod cluster;

pub mod tick;

mod admin;
mod http;
mod listener;
pub mod shutdown;
pub mod webtransport;

pub mod echo;

/// The Redis key and channel names of a place, as the shards use them (for
/// operators' tools, the tests and the benches, so none names them by hand).
pub use backplane::Keys;
pub use config::{Cli, Config, ConfigError};
pub use listener::{BindError, Listener};
pub use tick::Lifecycle;
/// The payload of a websocket frame the shard core encoded (its
/// [`shard::TickOutput`]'s frames are framed once for every socket): what a
/// caller driving [`shard::Shard`] without sockets reads.
pub use websocket::frame::payload as ws_payload;

use futures_util::FutureExt;
use prometheus_client::registry::Registry;
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Why a shard could not start: [`prepare`]'s configuration errors (found
/// before anything binds) and [`Prepared::run`]'s.
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
    /// The tick driver panicked: the shard stopped (every socket closed)
    /// rather than go on serving sockets that nothing ticks.
    #[error("the tick driver panicked; the shard stopped")]
    TickPanicked,
}

/// A shard whose configuration was checked and whose files were read (the
/// identity keys, the admin tokens), its Redis URLs parsed and its world
/// made, binding nothing and starting no task: made by [`prepare`] before
/// the listeners are bound, so a bad configuration ends the process before
/// it listens anywhere.
pub struct Prepared {
    config: Arc<Config>,
    verifier: auth::Verifier,
    tokens: Option<Arc<admin::token::TokenFile>>,
    registry: Registry,
    metrics: metrics::Metrics,
    /// Clustered: the cluster tasks' Redis.
    backplane: Option<backplane::Backplane>,
    /// Clustered, with an admin listener: the admin API's Redis.
    place_store: Option<admin::store::PlaceStore>,
    shard: shard::Shard,
    presence_epoch: u64,
    /// WebTransport, when bound ([`Prepared::with_webtransport`]).
    webtransport: Option<webtransport::Bound>,
}

/// Checks everything `config` names before anything binds: reads the
/// identity keys and the admin token file, parses the Redis URLs, makes the
/// area of interest's grid and the world. Connects to nothing (an unreachable
/// Redis is not an error).
///
/// Errors: [`RunError`] (every variant but `Poller`).
pub fn prepare(config: Config) -> Result<Prepared, RunError> {
    let verifier = auth::Verifier::load(config.auth.clone())?;
    let tokens = config.admin.token_file.as_deref().map(admin::token::TokenFile::load).transpose()?.map(Arc::new);
    let mut registry = Registry::default();
    let metrics = metrics::Metrics::register(&mut registry);
    let backplane =
        config.redis.as_ref().map(|target| cluster::backplane(target, &config.place, &metrics)).transpose()?;
    let place_store = match (&config.redis, &config.admin.listen) {
        (Some(target), Some(_)) => Some(admin::store::PlaceStore::new(target, &config.place, &metrics)?),
        _ => None,
    };
    // Presence numbers start at the start time in µs, so a restarted shard's
    // keep increasing; the heartbeat carries the start (another value is a
    // restart, whatever the clock said).
    // Microseconds, so that two processes started in the same millisecond
    // (a supervisor starting two units at once) still tell themselves apart
    // (the heartbeat takes the epoch for the process's own).
    let presence_epoch = u64::try_from(clock::since_epoch().as_micros()).unwrap_or(u64::MAX);
    let shard = shard::Shard::new(&config, StdRng::from_os_rng(), presence_epoch)?;
    let config = Arc::new(config);
    Ok(Prepared {
        config,
        verifier,
        tokens,
        registry,
        metrics,
        backplane,
        place_store,
        shard,
        presence_epoch,
        webtransport: None,
    })
}

impl Prepared {
    /// Serves WebTransport sessions on `bound` too (see [`webtransport`]).
    pub fn with_webtransport(mut self, bound: webtransport::Bound) -> Prepared {
        self.webtransport = Some(bound);
        self
    }

    /// Runs the shard on `listener` (players; TCP or a Unix socket) and
    /// `admin` (probes, metrics, the console and its API; optional) until
    /// `life.stop` fires. When `life.drain` fires first, the shard drains: it
    /// admits nobody, reports not ready, tells its players to move (paced by
    /// `config.drain_rate`; standalone, with no other shard to move them to,
    /// it closes every socket at once with 1012 "service restart"), and stops
    /// once they are all gone or after `config.drain_timeout`. Stopping
    /// closes every socket with "going away" (1001), stops the tick and joins
    /// every task, giving up after `config.shutdown_timeout`.
    ///
    /// Errors: [`RunError::Poller`]. An unreachable Redis is not an error:
    /// the shard serves its own players, reports not ready, and keeps
    /// retrying.
    pub async fn run(self, listener: Listener, admin: Option<Listener>, life: Lifecycle) -> Result<(), RunError> {
        let Prepared {
            config,
            verifier,
            tokens,
            registry,
            metrics,
            backplane,
            place_store,
            shard,
            presence_epoch,
            webtransport,
        } = self;
        let admin_at = admin.as_ref().and_then(|a| a.local_addr().ok()).map(|a| a.to_string());
        let tracker = TaskTracker::new();
        let (commands_tx, commands_rx) = mpsc::channel(session::COMMAND_QUEUE);
        let cancel = life.stop.clone();

        let (cluster_link, cluster_status, store, peers) = match backplane {
            Some(backplane) => {
                let (link, status, store, peers) =
                    cluster::start(backplane, presence_epoch, &config, &metrics, &tracker, &cancel);
                (Some(link), Some(status), Some(store), Some(peers))
            }
            None => (None, None, None, None),
        };
        let base = figures::ShardFigures {
            tick_hz: config.tick_hz,
            max_players: config.max_players,
            version: env!("CARGO_PKG_VERSION").to_owned(),
            admin: admin_at,
            ..Default::default()
        };
        let (vitals, figures) = tick::Vitals::new(base, clock::now());
        let mut driver = tick::TickDriver::new(
            shard,
            config.clone(),
            metrics.clone(),
            cluster_link,
            tracker.clone(),
            life.clone(),
            vitals,
        )?;
        let mut sessions = None;
        if webtransport.is_some() {
            let (to_driver, from_sessions) = mpsc::channel(hub::remote::FROM_SESSIONS_QUEUE);
            sessions = Some((to_driver, driver.session_queue()));
            driver = driver.with_sessions(from_sessions);
        }
        // The tick is the shard: a panic that ends it (outside the core's
        // requests and messages, which are caught one by one) stops the
        // process, with an error, instead of leaving it listening.
        let tick_panicked = CancellationToken::new();
        let (stop, panicked) = (life.stop.clone(), tick_panicked.clone());
        tracker.spawn(async move {
            if AssertUnwindSafe(driver.run(commands_rx)).catch_unwind().await.is_err() {
                tracing::error!("the tick driver panicked: stopping the shard");
                panicked.cancel();
                stop.cancel();
            }
        });

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
            webtransport: webtransport.as_ref().map(|w| w.offer().clone()),
        };
        if let (Some(bound), Some((to_driver, queue))) = (webtransport, sessions) {
            let serving = webtransport::Serving { ctx: state.session.clone(), to_driver, queue };
            tracker.spawn(webtransport::accept_loop(bound, serving, tracker.clone(), cancel.clone()));
        }
        let accept = listener::AcceptConfig {
            max_connections: config.listen.max_connections,
            header_timeout: config.listen.handshake_timeout,
            send_buffer: config.listen.send_buffer,
        };
        tracing::info!(shard = %config.shard_id, tick_hz = config.tick_hz, max_players = config.max_players, "shard running");
        if let Some(admin) = admin {
            let admin_state = admin::AdminState {
                app: state.clone(),
                figures,
                peers,
                store: place_store,
                history: Arc::new(std::sync::Mutex::new(admin::place::History::new())),
                drains_sent: Arc::default(),
            };
            tracker.spawn(admin::sample(admin_state.clone(), cancel.clone()));
            match &tokens {
                Some(t) => {
                    let count = t.tokens().count();
                    tracing::info!(tokens = count, "admin listener: every admin route but the probes (/healthz, /readyz) and the console's files needs a bearer token");
                    tracker.spawn(t.clone().watch(cancel.clone()));
                }
                None => tracing::info!("admin listener on loopback: no token asked"),
            }
            let router = admin::router(admin_state, tokens);
            let (metrics, header_timeout) = (state.session.metrics.clone(), config.listen.handshake_timeout);
            tracker.spawn(listener::admin_loop(
                admin,
                router,
                header_timeout,
                metrics,
                tracker.clone(),
                cancel.clone(),
            ));
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
        if tick_panicked.is_cancelled() {
            return Err(RunError::TickPanicked);
        }
        Ok(())
    }
}
