//! The subscription to the other shards' frames, on its own connection (never
//! the command connections). It verifies each frame, reads the shard id to
//! route it, and hands the exact bytes to the tick loop. It reconnects with
//! capped backoff and resubscribes when the connection ends (Redis
//! restarted, `CLIENT KILL`, idle timeout, network reset, a primary that
//! failed over), and rebuilds one whose connection does not answer a ping
//! (a half-open link; a Redis that dropped this subscriber for its output
//! buffer limit ends the connection).
//!
//! What it hears: the place's chat, presence and control channels, the
//! snapshots of every live peer (one channel on one Redis; on a cluster a
//! channel a peer, followed as peers come and go), and with area of interest
//! the regions the shard's players see: it subscribes to a region's channel
//! as soon as a view touches the region and unsubscribes when none has for a
//! while (the shard core decides; see [`crate::shard::aoi`]). A shard then
//! hears nothing from a peer whose players are all far away, so the watchdog
//! pings the connection instead of waiting for every peer.
//!
//! Subscribing and unsubscribing never stop the reading: each channel's
//! command runs beside it, on its own ([`super::subscriptions`] keeps the
//! books), and a channel whose command failed is tried again a second later
//! while the others are heard. On a Redis Cluster, a shard channel whose
//! slot migrates is unsubscribed by the server (`sunsubscribe`); it is
//! subscribed again at once (the cluster connection follows the `MOVED` to
//! the slot's new node). A lost node connection subscribes every channel
//! again on the same connection: the channels on the nodes that are up go
//! on being heard, and those on a dead primary come back as soon as a node
//! serves them (a replica serves its primary's sharded pub/sub). Every
//! renewal is counted in `mino_redis_resubscribes_total{reason}` once every
//! channel is held again.

use super::registry::Heartbeat;
use super::subscriptions::{Change, Renewal, Subscriptions, FAILURES_TO_WARN};
use crate::backplane::{Backplane, FeedEvent, Keys, RedisError};
use crate::clock;
use crate::metrics::{DropKind, Metrics, ResubscribeReason};
use crate::order::Order;
use crate::resume::store::parse_takeover;
use crate::shard::grid::RegionId;
use crate::shard::ClusterEvent;
use crate::shard::Relayed;
use crate::throttle::{self, LogThrottle};
use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::stream::{FuturesUnordered, StreamExt};
use mino_protocol::server::{decode, ServerMsg};
use mino_protocol::{PlayerId, ShardId};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch, Notify};
use tokio_util::sync::CancellationToken;

/// First wait before reconnecting; doubled up to [`BACKOFF_MAX`].
pub const BACKOFF_MIN: Duration = Duration::from_millis(50);

/// Longest wait between reconnection attempts (keeps recovery within 2 s of
/// Redis coming back).
pub const BACKOFF_MAX: Duration = Duration::from_millis(500);

/// With area of interest, and on a cluster, how often the subscription
/// connection is pinged.
const PING_INTERVAL: Duration = Duration::from_secs(1);

/// The subscriber task.
pub struct Subscriber {
    /// The place's Redis.
    pub backplane: Backplane,
    /// Channel names.
    pub keys: Keys,
    /// This shard (its own frames come back and are skipped).
    pub me: ShardId,
    /// Metrics.
    pub metrics: Metrics,
    /// Events to the tick loop.
    pub events: mpsc::Sender<ClusterEvent>,
    /// Heartbeats of the live peers (from the registry).
    pub peers: watch::Receiver<HashMap<ShardId, Heartbeat>>,
    /// Tells the registry to re-read rosters after each subscription.
    pub resync: Arc<Notify>,
    /// The regions to hear from (one, the whole world, without area of
    /// interest).
    pub regions: watch::Receiver<Vec<RegionId>>,
    /// The warnings of messages from Redis dropped as invalid: at most one
    /// line a window (during a rolling upgrade across protocol versions
    /// every bundle of a shard on the other version is one, 20 a second a
    /// region).
    pub invalid_log: std::sync::Mutex<LogThrottle>,
}

/// A subscription command or ping that ended, and how.
enum Ran {
    Change(Change, Result<(), RedisError>),
    Ping(Result<(), RedisError>),
}

/// Why one subscription ended.
enum End {
    Cancelled,
    Lost(ResubscribeReason),
}

impl Subscriber {
    /// Runs until `cancel` fires.
    pub async fn run(mut self, cancel: CancellationToken) {
        let mut backoff = BACKOFF_MIN;
        let mut subscriptions = 0u64;
        let mut generation = self.backplane.generation();
        let mut renewal: Option<ResubscribeReason> = None;
        loop {
            match self.subscribe_once(&cancel, &mut generation, &mut subscriptions, &mut renewal).await {
                Ok(End::Cancelled) => return,
                Ok(End::Lost(reason)) => {
                    backoff = BACKOFF_MIN;
                    renewal = Some(reason);
                }
                Err(e) => {
                    tracing::debug!(error = %e, "subscribe failed");
                    if subscriptions > 0 && renewal.is_none() {
                        renewal = Some(ResubscribeReason::ConnectionLost);
                    }
                }
            }
            let jitter = Duration::from_millis(rand::random_range(0..=backoff.as_millis() as u64 / 2));
            tokio::select! {
                () = cancel.cancelled() => return,
                () = tokio::time::sleep(backoff + jitter) => {}
            }
            backoff = (backoff * 2).min(BACKOFF_MAX);
        }
    }

    /// The channels to hear now.
    fn wanted(&self, regions: &[RegionId]) -> BTreeSet<String> {
        let mut channels: BTreeSet<String> =
            [self.keys.chat(), self.keys.presence_channel(), self.keys.control()].into_iter().collect();
        let regions: Vec<u32> = regions.iter().map(|r| r.0).collect();
        let peers: Vec<ShardId> = self.peers.borrow().keys().copied().filter(|p| *p != self.me).collect();
        channels.extend(self.keys.cell_channels(&regions, &peers));
        channels
    }

    /// One subscription, from connect to loss. `subscriptions` counts the
    /// connections whose channels were all held once; every one after the
    /// first is a reconnect, counted with the reason the last one ended
    /// (`renewal`).
    ///
    /// Messages are read and routed all along: every subscription command
    /// and the ping run beside the reading, a channel at a time, so a
    /// channel whose node is down (until its replica is promoted) holds up
    /// neither the messages nor the commands of the others.
    async fn subscribe_once(
        &mut self,
        cancel: &CancellationToken,
        generation: &mut watch::Receiver<u64>,
        subscriptions: &mut u64,
        renewal: &mut Option<ResubscribeReason>,
    ) -> Result<End, RedisError> {
        generation.borrow_and_update();
        let mut regions: Vec<RegionId> = self.regions.borrow_and_update().clone();
        self.peers.borrow_and_update();
        let mut feed = self.backplane.feed().await?;
        let mut channels = Subscriptions::new(self.wanted(&regions), Renewal::Connection(renewal.take()));
        let mut running: FuturesUnordered<BoxFuture<'static, Ran>> = FuturesUnordered::new();
        let mut pinging = false;
        let mut ping = tokio::time::interval(PING_INTERVAL);
        ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            for change in channels.changes() {
                let run = feed.change(change.channel.clone(), change.subscribe);
                running.push(Box::pin(async move { Ran::Change(change, run.await) }));
            }
            if let Some(done) = channels.renewed() {
                self.renewed(done, subscriptions, channels.held());
            }
            tokio::select! {
                () = cancel.cancelled() => return Ok(End::Cancelled),
                Some(ran) = running.next() => match ran {
                    Ran::Change(change, result) => {
                        let failures = channels.done(&change, result.is_ok());
                        if let Err(e) = &result {
                            let (channel, subscribe) = (&change.channel, change.subscribe);
                            if failures == FAILURES_TO_WARN {
                                tracing::warn!(channel, subscribe, failures, error = %e, "a subscription command keeps failing; trying again every second");
                            } else {
                                tracing::debug!(channel, subscribe, error = %e, "subscription command failed; trying again in a second");
                            }
                        }
                    }
                    Ran::Ping(result) => {
                        pinging = false;
                        if let Err(e) = result {
                            tracing::warn!(error = %e, "subscription connection does not answer; rebuilding");
                            return Ok(End::Lost(ResubscribeReason::Silent));
                        }
                    }
                },
                event = feed.next() => match event {
                    None => {
                        tracing::info!("redis subscription lost; resubscribing");
                        return Ok(End::Lost(ResubscribeReason::ConnectionLost));
                    }
                    Some(FeedEvent::Message { channel, payload }) => self.route(&channel, &payload).await,
                    Some(FeedEvent::Unsubscribed(channel)) => {
                        if channels.lost(&channel, ResubscribeReason::SlotMoved) {
                            tracing::info!(channel, "redis moved a channel's slot; subscribing on its new node");
                        }
                    }
                    Some(FeedEvent::NodeLost) => {
                        tracing::info!("a redis cluster node connection was lost; subscribing every channel again");
                        channels.lost_all(ResubscribeReason::NodeLost);
                    }
                },
                changed = self.regions.changed() => {
                    if changed.is_err() {
                        return Ok(End::Cancelled);
                    }
                    regions = self.regions.borrow_and_update().clone();
                    channels.want(self.wanted(&regions));
                    self.metrics.region_subscriptions.set(regions.len() as i64);
                }
                changed = self.peers.changed(), if self.keys.spreads() => {
                    if changed.is_err() {
                        return Ok(End::Cancelled);
                    }
                    self.peers.borrow_and_update();
                    channels.want(self.wanted(&regions));
                }
                changed = generation.changed() => {
                    if changed.is_ok() {
                        tracing::info!("redis primary changed; resubscribing");
                        return Ok(End::Lost(ResubscribeReason::PrimaryChanged));
                    }
                }
                _ = ping.tick() => {
                    channels.retry();
                    if !pinging {
                        pinging = true;
                        let run = feed.ping();
                        running.push(Box::pin(async move { Ran::Ping(run.await) }));
                    }
                }
            }
        }
    }

    /// Every wanted channel is held (again): counts it, and has the registry
    /// read the rosters again (what was said while not subscribed).
    fn renewed(&self, renewal: Renewal, subscriptions: &mut u64, channels: usize) {
        match renewal {
            Renewal::Connection(after) => {
                if *subscriptions > 0 {
                    self.metrics.redis_reconnects.inc();
                }
                if let Some(reason) = after {
                    self.metrics.resubscribed(reason);
                }
                *subscriptions += 1;
                tracing::debug!(channels, "subscribed");
            }
            Renewal::Again(reason) => {
                self.metrics.resubscribed(reason);
                tracing::debug!(channels, ?reason, "subscribed again");
            }
        }
        self.resync.notify_one();
    }

    async fn route(&self, channel: &str, payload: &[u8]) {
        if channel == self.keys.control() {
            let text = String::from_utf8_lossy(payload);
            // An operator's order, for whichever shard it concerns (the core decides).
            if let Some(order) = Order::parse(&text) {
                let _ = self.events.send(ClusterEvent::Order(order)).await;
                return;
            }
            match parse_takeover(&text) {
                Some((player, generation, owner)) if owner != self.me => {
                    let _ = self.events.send(ClusterEvent::Takeover { player, generation }).await;
                }
                Some(_) => {}
                None => tracing::warn!("ignoring an unknown control message"),
            }
            return;
        }
        if channel.starts_with(&self.keys.cells_prefix()) {
            return self.route_cells(payload);
        }
        let msg = match decode(payload) {
            Ok(m) => m,
            Err(e) => return self.invalid(channel, &e),
        };
        let bytes = || Bytes::copy_from_slice(payload);
        let event = match msg {
            ServerMsg::Chat(c) if ShardId(c.shard_id()) != self.me => ClusterEvent::Chat { bytes: bytes() },
            ServerMsg::Presence(p) if ShardId(p.shard_id()) != self.me => ClusterEvent::Presence {
                shard: ShardId(p.shard_id()),
                seq: p.seq(),
                bytes: bytes(),
                joined: p
                    .joined()
                    .map(|j| j.iter().map(|i| (PlayerId(i.id()), Arc::from(i.name().unwrap_or("")))).collect())
                    .unwrap_or_default(),
                left: p.left().map(|l| l.iter().map(PlayerId).collect()).unwrap_or_default(),
            },
            _ => return,
        };
        self.metrics.relay_frames.inc();
        // Chat and presence are never dropped: wait for room.
        let _ = self.events.send(event).await;
    }

    /// Counts a message from Redis dropped as invalid (on `channel`, for
    /// `why`), and warns of it at most once a window with the count since
    /// the last line (`why` is formatted only then).
    fn invalid(&self, channel: &str, why: &dyn std::fmt::Display) {
        self.metrics.dropped(DropKind::Invalid, 1);
        let due = self.invalid_log.lock().map_or(None, |mut t| t.failed(clock::now()));
        if let Some(dropped) = due {
            tracing::warn!(
                channel,
                error = %why,
                dropped,
                "dropping invalid messages from redis, or ones of another protocol version (during a rolling \
                 upgrade, until every shard runs the same): {dropped} since the last such line, at most one a {:?}",
                throttle::WINDOW
            );
        }
    }

    /// A region bundle of another shard, verified (every cell's items read
    /// end to end), handed on with one copy of its items that every cell's
    /// items are slices of.
    fn route_cells(&self, payload: &[u8]) {
        let bundle = match decode(payload) {
            Ok(ServerMsg::CellBundle(b)) => b,
            Ok(_) => return self.invalid(&self.keys.cells_prefix(), &"not a cell bundle"),
            Err(e) => return self.invalid(&self.keys.cells_prefix(), &e),
        };
        let stamp = bundle.stamp();
        if stamp.shard == self.me {
            return;
        }
        let (step, items) = (bundle.step(), Bytes::copy_from_slice(bundle.items()));
        let cells = bundle.into_cells();
        self.metrics.relay_frames.inc_by(cells.len() as u64);
        let event = ClusterEvent::Bundle(Relayed { stamp, step, items, cells });
        if self.events.try_send(event).is_err() {
            self.metrics.dropped(DropKind::RelaySnapshot, 1);
        }
    }
}
