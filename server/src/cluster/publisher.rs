//! Publishes this shard's frames to its place, and owns its players hash.
//!
//! - Snapshots: the newest of each tick; when Redis is slower than the tick,
//!   older snapshots are skipped (oldest first) and counted. With area of
//!   interest, a tick's cells go out as one bundle per region on the
//!   region's channel, in the same pipeline, and the whole-shard snapshot is
//!   only kept (for resumes), not published.
//! - Chat and presence: every frame, in order. A presence delta updates the
//!   players hash in the same MULTI as its PUBLISH, so a peer that reads the
//!   hash after seeing a delta never finds the hash behind it.
//! - Every heartbeat interval the hash is rewritten whole from the players this
//!   task has published (healing its expiry after a pause or a Redis restart).

use super::{ClusterStatus, OwnSnapshot};
use crate::backplane::{Backplane, Keys, RedisError};
use crate::clock::{self, Instant};
use crate::metrics::{DropKind, Metrics};
use crate::shard::Outgoing;
use bytes::Bytes;
use mino_protocol::cell::{FrameStamp, ViewEncoder};
use mino_protocol::{PlayerId, ShardId, Tick};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// Sets `x` and `y` of a session that still exists (never creates one).
const PARK: &str =
    "if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'x', ARGV[1], 'y', ARGV[2]) end";

/// Field of the players hash holding the presence sequence number it is current to.
pub const SEQ_FIELD: &str = "_seq";

/// The publishing task.
pub struct Publisher {
    /// The place's Redis.
    pub backplane: Backplane,
    /// Channel and key names.
    pub keys: Keys,
    /// Metrics.
    pub metrics: Metrics,
    /// Where the newest published snapshot time is recorded.
    pub status: Arc<ClusterStatus>,
    /// This shard.
    pub me: ShardId,
    /// TTL of the players hash.
    pub ttl: Duration,
    /// Interval of the full rewrite of the players hash.
    pub interval: Duration,
    /// Area of interest: cell bundles instead of whole-shard snapshots.
    pub aoi: bool,
}

impl Publisher {
    /// Runs until `cancel` fires or the tick loop is gone.
    pub async fn run(
        self,
        mut snapshots: watch::Receiver<Option<OwnSnapshot>>,
        mut outgoing: mpsc::Receiver<Outgoing>,
        cancel: CancellationToken,
    ) {
        let mut last_tick: Option<Tick> = None;
        let mut players: HashMap<PlayerId, Arc<str>> = HashMap::new();
        let mut seq = 0u64;
        // The tick's clock of the newest snapshot handed over: when it is old,
        // the process was frozen and the tick loop has yet to check what is
        // still ours, so nothing stale may be written.
        let mut newest_tick = clock::now();
        let mut rewrite = tokio::time::interval(self.interval);
        rewrite.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                biased;
                () = cancel.cancelled() => break,
                item = outgoing.recv() => match item {
                    Some(Outgoing::Chat(bytes)) => {
                        if self.publish(self.keys.chat(), bytes).await.is_err() {
                            self.metrics.dropped(DropKind::PublishEvent, 1);
                        }
                    }
                    Some(Outgoing::Park { player, x, y }) => {
                        if let Err(e) = self.park(player, x, y).await {
                            tracing::debug!(error = %e, "park failed");
                        }
                    }
                    Some(Outgoing::Presence { bytes, seq: s, joined, left }) => {
                        for id in &left {
                            players.remove(id);
                        }
                        players.extend(joined.iter().cloned());
                        seq = s;
                        if self.presence(bytes, seq, &joined, &left).await.is_err() {
                            self.metrics.dropped(DropKind::PublishEvent, 1);
                        }
                    }
                    None => break,
                },
                changed = snapshots.changed() => {
                    if changed.is_err() {
                        break;
                    }
                    let Some(own) = snapshots.borrow_and_update().clone() else { continue };
                    newest_tick = newest_tick.max(own.at);
                    if self.stale(own.at) {
                        self.metrics.dropped(DropKind::PublishSnapshot, 1);
                        continue;
                    }
                    if let Some(prev) = last_tick {
                        self.metrics.dropped(DropKind::PublishSnapshot, own.tick.0.saturating_sub(prev.0 + 1));
                    }
                    last_tick = Some(own.tick);
                    let published_ms = own.server_time_ms;
                    if self.snapshot(own).await.is_ok() {
                        self.status.published_ms.store(published_ms, Ordering::Relaxed);
                    }
                }
                _ = rewrite.tick() => {
                    if self.status.fenced.load(Ordering::Relaxed) || self.stale(newest_tick) {
                        continue;
                    }
                    if let Err(e) = self.rewrite(&players, seq).await {
                        tracing::debug!(error = %e, "players hash rewrite failed");
                    }
                }
            }
        }
    }

    /// Records where a player left in its session (if the session still exists).
    async fn park(&self, player: PlayerId, x: f32, y: f32) -> Result<(), RedisError> {
        let script = redis::Script::new(PARK);
        let mut inv = script.prepare_invoke();
        inv.key(self.keys.session(player)).arg(x).arg(y);
        self.backplane.script::<()>(&inv).await
    }

    /// True when a tick run at `at` is too old to speak for this shard now.
    fn stale(&self, at: Instant) -> bool {
        clock::now().saturating_duration_since(at) > self.ttl / 2
    }

    /// Publishes a tick (the whole-shard snapshot, or with area of interest
    /// one bundle of cells per region) and keeps the snapshot as this
    /// shard's last (for the positions of players resumed elsewhere), for two
    /// shard TTLs: one pipeline on one Redis, one a slot on a cluster.
    async fn snapshot(&self, own: OwnSnapshot) -> Result<(), RedisError> {
        let ttl = (self.ttl.as_millis() as u64) * 2;
        let bytes = own.bytes;
        let mut batch = self.backplane.batch();
        if self.aoi {
            let stamp = FrameStamp { shard: self.me, tick: own.tick, server_time_ms: own.server_time_ms };
            let mut encoder = ViewEncoder::new();
            for (region, cells) in &own.cells {
                let bundle = encoder.encode_bundle(&stamp, region.0, cells.iter().map(|(c, e)| (c.0, &e[..])));
                let channel = self.keys.cells(region.0);
                batch.add(&channel, self.backplane.publish(&channel, &bundle));
            }
        } else {
            let channel = self.keys.snapshots(self.me);
            batch.add(&channel, self.backplane.publish(&channel, &bytes));
        }
        let key = self.keys.last_snapshot(self.me);
        let mut set = redis::cmd("SET");
        set.arg(&key).arg(&bytes[..]).arg("PX").arg(ttl);
        batch.add(&key, set);
        let result = self.backplane.send(batch).await;
        self.count(&result);
        result
    }

    async fn publish(&self, channel: String, bytes: Bytes) -> Result<(), RedisError> {
        let cmd = self.backplane.publish(&channel, &bytes);
        let result = self.backplane.cmd::<i64>(&cmd).await;
        self.count(&result);
        result.map(|_| ())
    }

    /// One MULTI: apply the delta to the players hash, refresh its TTL, PUBLISH.
    async fn presence(
        &self,
        bytes: Bytes,
        seq: u64,
        joined: &[(PlayerId, Arc<str>)],
        left: &[PlayerId],
    ) -> Result<(), RedisError> {
        let key = self.keys.players(self.me);
        let mut pipe = redis::pipe();
        pipe.atomic();
        if !left.is_empty() {
            let ids: Vec<u32> = left.iter().map(|p| p.0).collect();
            pipe.hdel(&key, ids).ignore();
        }
        if !joined.is_empty() {
            let fields: Vec<(u32, &str)> = joined.iter().map(|(id, n)| (id.0, &**n)).collect();
            pipe.hset_multiple(&key, &fields).ignore();
        }
        pipe.hset(&key, SEQ_FIELD, seq).ignore();
        pipe.pexpire(&key, self.ttl.as_millis() as i64).ignore();
        pipe.add_command(self.backplane.publish(&self.keys.presence_channel(), &bytes)).ignore();
        let result = self.backplane.pipe::<()>(&pipe).await;
        self.count(&result);
        result
    }

    /// One MULTI: replace the players hash with `players` (current to `seq`) and
    /// refresh its TTL.
    async fn rewrite(&self, players: &HashMap<PlayerId, Arc<str>>, seq: u64) -> Result<(), RedisError> {
        let key = self.keys.players(self.me);
        let mut pipe = redis::pipe();
        pipe.atomic().del(&key).ignore();
        if !players.is_empty() {
            let fields: Vec<(u32, &str)> = players.iter().map(|(id, n)| (id.0, &**n)).collect();
            pipe.hset_multiple(&key, &fields).ignore();
        }
        pipe.hset(&key, SEQ_FIELD, seq).ignore();
        pipe.pexpire(&key, self.ttl.as_millis() as i64).ignore();
        self.backplane.pipe::<()>(&pipe).await
    }

    fn count<T>(&self, result: &Result<T, RedisError>) {
        if let Err(e) = result {
            self.metrics.publish_failures.inc();
            tracing::debug!(error = %e, "publish failed");
        }
    }
}
