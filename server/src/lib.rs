//! mino's shard server.
//!
//! ```text
//!  sockets ──► session tasks ──(bounded commands)──► tick loop (owns Shard: World,
//!     ▲             ▲ woken only when a socket's              Admission, SnapshotEncoder)
//!     │             │ buffer is full                             │ one TickFrame a tick
//!     └── one writev a socket ◄── Outbox ◄── Fanout ◄────────────┘ (same bytes for all)
//! ```
//!
//! - [`config`]: flags and the typed [`Config`].
//! - [`sim`]: the world and movement (no I/O).
//! - [`admission`]: the busy rule and the player cap (no I/O).
//! - [`shard`]: world + admission + per-tick frames (no I/O).
//! - [`tick`]: the tokio loop that owns the shard.
//! - [`session`]: one websocket.
//! - [`http`], [`listener`]: routes and the accept loop.
//! - [`metrics`]: Prometheus metrics. [`shutdown`]: signals.

pub mod admission;
pub mod cluster;
pub mod config;
pub mod http;
pub mod ids;
pub mod listener;
pub mod metrics;
pub mod resume;
pub mod session;
pub mod shard;
pub mod shutdown;
pub mod sim;
pub mod tick;

pub use config::{Cli, Config};

use prometheus_client::registry::Registry;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;

/// Runs a shard on `listener` (players) and `admin` (probes, metrics, drain;
/// optional) until `life.stop` fires. When `life.drain` fires
/// first, the shard drains: it admits nobody, reports not ready, tells its
/// players to move (paced by `config.drain_rate`), and stops once they are all
/// gone or after `config.drain_timeout`. Stopping closes every socket with
/// "going away" (1001), stops the tick and joins every task, giving up after
/// `config.shutdown_timeout`.
///
/// Errors: an invalid Redis URL. An unreachable Redis is not an error: the
/// shard serves its own players, reports not ready, and keeps retrying.
pub async fn run(
    listener: TcpListener,
    admin: Option<TcpListener>,
    config: Config,
    life: tick::Lifecycle,
) -> anyhow::Result<()> {
    let config = Arc::new(config);
    let mut registry = Registry::default();
    let metrics = metrics::Metrics::register(&mut registry);
    let tracker = TaskTracker::new();
    let (commands_tx, commands_rx) = mpsc::channel(tick::COMMAND_QUEUE);
    let cancel = life.stop.clone();

    let (cluster_link, cluster_status, store) = match config.redis {
        Some(_) => {
            let (link, status, store) = cluster::start(&config, &metrics, &tracker, &cancel)?;
            (Some(link), Some(status), Some(store))
        }
        None => (None, None, None),
    };
    let mut shard = shard::Shard::new(&config);
    shard.set_presence_epoch(tick::now_ms() * 1000);
    let tick_loop = tick::TickLoop::new(shard, config.clone(), metrics.clone(), cluster_link, tracker.clone());
    tracker.spawn(tick_loop.run(commands_rx, life.clone()));

    let state = http::AppState {
        session: session::SessionContext {
            config: config.clone(),
            metrics,
            commands: commands_tx,
            cancel: cancel.clone(),
            store,
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
        let router = http::admin_router(state.clone());
        let stop = cancel.clone();
        tracker.spawn(async move {
            if let Err(e) = axum::serve(admin, router).with_graceful_shutdown(stop.cancelled_owned()).await {
                tracing::warn!(error = %e, "admin listener failed");
            }
        });
    }
    tracker.spawn(listener::accept_loop(listener, http::router(state), accept, tracker.clone(), cancel.clone()));

    tokio::select! {
        () = cancel.cancelled() => {}
        () = life.drain.cancelled() => {
            tokio::select! {
                () = life.drained.cancelled() => tracing::info!("drained: every player moved"),
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
