//! Clustering over Redis: shards of one place share it.
//!
//! ```text
//!            tick loop ──snapshot (latest only)──► publisher ──(S)PUBLISH─► Redis
//!              ▲  │ ──own chat/presence (bounded)─►                        │
//!              │  └──local players, load (watch)──► registry ◄─heartbeat,─┤
//!              │                                      │        ids, rosters │
//!              └──────── ClusterEvent (bounded) ◄─────┴── subscriber ◄──────┘
//!                                                      (dedicated pub/sub conn)
//! ```
//!
//! - The tick never awaits Redis: it hands its own frames to the publisher
//!   through a latest-only slot (snapshots: older ones are dropped, counted) and
//!   a bounded queue (chat and presence), and takes [`ClusterEvent`]s from a
//!   bounded queue in its select loop.
//! - Relayed frames are forwarded to sockets as the exact bytes published; the
//!   subscriber only verifies them and reads the shard id to route them.
//! - [`publisher`]: the only writer of this shard's players hash (with a TTL):
//!   each presence delta updates it in the same MULTI as its PUBLISH, and it is
//!   rewritten whole every heartbeat interval (healing expiry after a pause and
//!   Redis restarts).
//! - [`registry`]: heartbeats with a TTL, which shards are alive (and their
//!   players, read when a shard appears and twice more), cluster-unique player
//!   ids in blocks.
//! - [`subscriber`]: reconnects with capped backoff and resubscribes, rebuilds a
//!   subscription whose connection does not answer a ping, and runs every
//!   channel's command beside the reading ([`subscriptions`] keeps the books): on a
//!   cluster it follows slot moves, and a node down holds up only its own channels.
//!
//! None of them branches on the deployment (one node, Sentinel, Redis
//! Cluster): [`crate::backplane::Backplane`] does.

pub mod outage;
pub mod publisher;
pub mod registry;
pub mod subscriber;
pub mod subscriptions;

use crate::backplane::{Backplane, RedisError, RedisTarget};
use crate::clock::Instant;
use crate::config::Config;
use crate::figures::ShardFigures;
use crate::metrics::Metrics;
use crate::resume::store::SessionStore;
use crate::shard::grid::RegionId;
use crate::shard::{ClusterEvent, Outgoing};
use bytes::Bytes;
use mino_protocol::{ShardId, Tick};
use registry::Heartbeat;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use tokio::sync::{mpsc, watch, Notify};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Redis command connections per shard: resumes claim sessions concurrently
/// (each checkout also costs deadpool's recycle PING).
pub const POOL_SIZE: usize = 32;

/// Capacity of the queue of cluster events into the tick driver.
pub const EVENT_QUEUE: usize = 4096;

/// Capacity of the queue of own chat and presence frames to publish.
pub const PUBLISH_QUEUE: usize = 1024;

/// This shard's newest snapshot, for the publisher.
#[derive(Debug, Clone)]
pub struct OwnSnapshot {
    /// Its tick.
    pub tick: Tick,
    /// The shard's wall clock at that tick, ms since the epoch.
    pub server_time_ms: u64,
    /// When the tick ran, monotonic (how old the snapshot is).
    pub at: Instant,
    /// The shard's step at that tick.
    pub step: u64,
    /// The tick's cells' items (full forms and deltas) by region: one
    /// bundle a region goes out on the region's channel.
    pub cells: Vec<(RegionId, Bytes)>,
    /// The bytes sockets got.
    pub bytes: Bytes,
}

/// This shard's state the registry writes into its heartbeat.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LocalState {
    /// Players on this shard.
    pub players: usize,
    /// True while the busy rule refuses players.
    pub overloaded: bool,
    /// The highest player id this shard has held or may still hand out (the
    /// end of its id blocks): the id counter in Redis is kept above it, so
    /// ids stay unique even if Redis lost its data.
    pub highest_player: u32,
    /// The start of this shard's presence numbering (µs at its start).
    pub epoch: u64,
    /// What the admin console shows of this shard (updated once a second).
    pub figures: Arc<ShardFigures>,
}

/// The other live shards of the place and their heartbeats, as the registry
/// last read them.
pub type Peers = watch::Receiver<HashMap<ShardId, Heartbeat>>;

/// The tick loop's ends of the cluster's channels.
pub struct TickLink {
    /// Latest own snapshot for the publisher.
    pub snapshot: watch::Sender<Option<OwnSnapshot>>,
    /// Own chat and presence frames for the publisher.
    pub publish: mpsc::Sender<Outgoing>,
    /// Local players and load for the heartbeat.
    pub local: watch::Sender<LocalState>,
    /// Events from the cluster tasks (taken by the tick driver as it starts).
    pub events: Option<mpsc::Receiver<ClusterEvent>>,
    /// Wakes the registry to fetch player ids.
    pub need_ids: Arc<Notify>,
    /// With area of interest, the regions to hear from (for the subscriber).
    pub regions: watch::Sender<Vec<RegionId>>,
    /// For events the tick loop posts to itself (ownership checks).
    pub events_tx: mpsc::Sender<ClusterEvent>,
    /// Redis health and the fence flag.
    pub status: Arc<ClusterStatus>,
    /// Sessions in Redis.
    pub store: SessionStore,
    /// Cancelled on shutdown.
    pub stop: CancellationToken,
}

/// State shared with the HTTP routes.
#[derive(Debug, Default)]
pub struct ClusterStatus {
    /// True while the last heartbeat reached Redis.
    pub redis_up: AtomicBool,
    /// Publisher's clock of the newest snapshot published, ms.
    pub published_ms: AtomicU64,
    /// True while the shard holds back publishing (see [`crate::shard`]).
    pub fenced: AtomicBool,
    /// Set by the registry when Redis lost this shard's keys (restarted
    /// empty): the tick loop writes every player's session and ticket again,
    /// then clears it.
    pub sessions_lost: AtomicBool,
    /// True while another process holds this shard id's heartbeat (the same
    /// `--shard-id` started twice): this one takes no players.
    pub id_taken: AtomicBool,
}

/// The backplane of the cluster tasks: the place's Redis at `target`, with
/// [`POOL_SIZE`] command connections (nothing is connected yet).
///
/// Errors: an invalid Redis URL.
pub fn backplane(target: &RedisTarget, place: &str, metrics: &Metrics) -> Result<Backplane, RedisError> {
    Backplane::new(target, place, POOL_SIZE, metrics)
}

/// Starts the publisher, subscriber and registry tasks on `tracker`, over
/// `backplane` (see [`backplane`]), and returns the tick loop's link, the
/// shared status, the session store (for sessions) and the other shards'
/// heartbeats (for the admin console).
///
/// `epoch` is the shard's presence epoch (its heartbeat carries it from the
/// first one on).
pub fn start(
    backplane: Backplane,
    epoch: u64,
    config: &Arc<Config>,
    metrics: &Metrics,
    tracker: &TaskTracker,
    cancel: &CancellationToken,
) -> (TickLink, Arc<ClusterStatus>, SessionStore, Peers) {
    let target = config.redis.as_ref().map_or_else(String::new, |t| t.describe());
    let keys = backplane.keys().clone();
    let status = Arc::new(ClusterStatus::default());
    let (snapshot_tx, snapshot_rx) = watch::channel(None);
    let (publish_tx, publish_rx) = mpsc::channel(PUBLISH_QUEUE);
    let (local_tx, local_rx) = watch::channel(LocalState { epoch, ..LocalState::default() });
    let (events_tx, events_rx) = mpsc::channel(EVENT_QUEUE);
    let (peers_tx, peers_rx) = watch::channel(Default::default());
    let (regions_tx, regions_rx) = watch::channel(Vec::new());
    let need_ids = Arc::new(Notify::new());
    let store = SessionStore::new(backplane.clone(), config.ticket_ttl, config.shard_id);
    let resync = Arc::new(Notify::new());
    metrics.expect_cluster();

    tracker.spawn(
        publisher::Publisher {
            backplane: backplane.clone(),
            keys: keys.clone(),
            metrics: metrics.clone(),
            status: status.clone(),
            me: config.shard_id,
            ttl: config.shard_ttl,
            interval: config.heartbeat,
        }
        .run(snapshot_rx, publish_rx, cancel.clone()),
    );
    tracker.spawn(
        subscriber::Subscriber {
            backplane: backplane.clone(),
            keys: keys.clone(),
            me: config.shard_id,
            metrics: metrics.clone(),
            events: events_tx.clone(),
            peers: peers_rx.clone(),
            resync: resync.clone(),
            regions: regions_rx,
            invalid_log: std::sync::Mutex::new(crate::throttle::LogThrottle::new(crate::throttle::WINDOW)),
        }
        .run(cancel.clone()),
    );
    tracker.spawn(
        registry::Registry {
            backplane,
            keys,
            me: config.shard_id,
            ttl: config.shard_ttl,
            interval: config.heartbeat,
            metrics: metrics.clone(),
            status: status.clone(),
            events: events_tx.clone(),
            peers: peers_tx,
            need_ids: need_ids.clone(),
            resync,
        }
        .run(local_rx, cancel.clone()),
    );
    tracing::info!(redis = %target, place = %config.place, "clustered");
    let link = TickLink {
        snapshot: snapshot_tx,
        publish: publish_tx,
        local: local_tx,
        events: Some(events_rx),
        need_ids,
        regions: regions_tx,
        events_tx,
        status: status.clone(),
        store: store.clone(),
        stop: cancel.clone(),
    };
    (link, status, store, peers_rx)
}
