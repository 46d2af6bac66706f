//! Publishes this shard's frames to its place, and owns its players hash.
//!
//! - Ticks: the newest; when Redis is slower than the tick, older ticks are
//!   skipped (oldest first) and counted (the other shards' views then send
//!   those cells whole, see `shard::streams`). A tick's cells go out as one
//!   bundle per region on the region's channel (a shard without area of
//!   interest is one region), and the whole-shard snapshot is kept in Redis
//!   in the same pipeline (for resumes), not published.
//! - Chat and presence: every frame, in order. A presence delta updates the
//!   players hash in the same MULTI as its PUBLISH, so a peer that reads the
//!   hash after seeing a delta never finds the hash behind it.
//! - Every heartbeat interval the hash is rewritten whole from the players this
//!   task has published (healing its expiry after a pause or a Redis restart).
//!
//! Every write goes out on its slot's lane ([`Lanes`]): on a Redis Cluster a
//! tick's frames to the healthy primaries never wait on a primary that is
//! down (its lanes hold their own newest frame and a bounded backlog of
//! events until it is back or replaced), and this task never waits on a
//! write at all: it hands each tick over and goes on.

use super::{ClusterStatus, OwnSnapshot};
use crate::backplane::lanes::{Backlog, Outcome, Write};
use crate::backplane::{Backplane, Keys, Lanes};
use crate::clock::{self, Instant};
use crate::metrics::{DropKind, Metrics};
use crate::resume::store::WRITE_IF_HELD;
use crate::shard::Outgoing;
use bytes::Bytes;
use mino_protocol::view::{encode_bundle, FrameStamp};
use mino_protocol::{PlayerId, ShardId, Tick};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

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
}

/// What a lane's write was, for what the publisher does once it ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Job {
    /// One slot's share of a tick: publishes frames (or only stores the
    /// shard's last snapshot), stamped with the tick's server time, ms.
    Tick { server_time_ms: u64, publishes: bool },
    /// A chat frame.
    Chat,
    /// A presence delta and the players hash's update.
    Presence,
    /// The players hash rewritten whole.
    Rewrite,
    /// A player's position parked in its session.
    Park,
}

impl Publisher {
    /// Runs until `cancel` fires or the tick loop is gone.
    pub async fn run(
        self,
        mut snapshots: watch::Receiver<Option<OwnSnapshot>>,
        mut outgoing: mpsc::Receiver<Outgoing>,
        cancel: CancellationToken,
    ) {
        let mut lanes: Lanes<Job> = Lanes::new(self.backplane.clone());
        let mut last_tick: Option<Tick> = None;
        let mut players: HashMap<PlayerId, Arc<str>> = HashMap::new();
        let mut seq = 0u64;
        let mut rewriting = false;
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
                (job, outcome) = lanes.next() => {
                    rewriting &= job != Job::Rewrite;
                    self.ended(job, outcome);
                }
                item = outgoing.recv() => match item {
                    Some(Outgoing::Chat(bytes)) => {
                        let channel = self.keys.chat();
                        let pipe = pipeline(self.backplane.publish(&channel, &bytes));
                        lanes.push(self.backplane.slot_of(&channel), event(pipe, Job::Chat));
                    }
                    Some(Outgoing::Park { player, x, y, generation }) => {
                        let key = self.keys.session(player);
                        let mut park = redis::cmd("EVAL");
                        // Only while the session is still this shard's (a park
                        // may land after another shard's claim).
                        park.arg(WRITE_IF_HELD).arg(1).arg(&key).arg(self.me.to_string()).arg(generation);
                        park.arg("x").arg(x).arg("y").arg(y);
                        lanes.push(self.backplane.slot_of(&key), event(pipeline(park), Job::Park));
                    }
                    Some(Outgoing::Presence { bytes, seq: s, joined, left }) => {
                        for id in &left {
                            players.remove(id);
                        }
                        players.extend(joined.iter().cloned());
                        seq = s;
                        let key = self.keys.players(self.me);
                        lanes.push(self.backplane.slot_of(&key), event(self.presence(&bytes, seq, &joined, &left), Job::Presence));
                    }
                    None => break,
                },
                changed = snapshots.changed() => {
                    if changed.is_err() {
                        break;
                    }
                    let Some(own) = snapshots.borrow_and_update().clone() else { continue };
                    // A process refused for a taken shard id writes nothing
                    // as that shard (its last snapshot is the other's).
                    if self.status.id_taken.load(Ordering::Relaxed) {
                        continue;
                    }
                    newest_tick = newest_tick.max(own.at);
                    if self.stale(own.at) {
                        self.metrics.dropped(DropKind::PublishSnapshot, 1);
                        continue;
                    }
                    if let Some(prev) = last_tick {
                        self.metrics.dropped(DropKind::PublishSnapshot, own.tick.0.saturating_sub(prev.0 + 1));
                    }
                    last_tick = Some(own.tick);
                    self.snapshot(own, &mut lanes);
                }
                _ = rewrite.tick() => {
                    let taken = self.status.id_taken.load(Ordering::Relaxed);
                    if rewriting || taken || self.status.fenced.load(Ordering::Relaxed) || self.stale(newest_tick) {
                        continue;
                    }
                    let key = self.keys.players(self.me);
                    lanes.push(self.backplane.slot_of(&key), event(self.rewrite(&players, seq), Job::Rewrite));
                    rewriting = true;
                }
            }
        }
    }

    /// What a write's end means: the newest published tick, or a failure or
    /// a drop counted.
    fn ended(&self, job: Job, outcome: Outcome) {
        match (job, outcome) {
            (Job::Tick { server_time_ms, publishes: true }, Outcome::Sent) => {
                self.status.published_ms.fetch_max(server_time_ms, Ordering::Relaxed);
            }
            (_, Outcome::Sent) => {}
            (Job::Park, Outcome::Failed(e)) => tracing::debug!(error = %e, "park failed"),
            (Job::Rewrite, Outcome::Failed(e)) => tracing::debug!(error = %e, "players hash rewrite failed"),
            (job, Outcome::Failed(e)) => {
                self.metrics.publish_failures.inc();
                tracing::debug!(error = %e, ?job, "publish failed");
                if matches!(job, Job::Chat | Job::Presence) {
                    self.metrics.dropped(DropKind::PublishEvent, 1);
                }
            }
            (Job::Tick { publishes: true, .. }, Outcome::Replaced | Outcome::Stale) => {
                self.metrics.dropped(DropKind::PublishSnapshot, 1);
            }
            (Job::Chat | Job::Presence, Outcome::Overflow) => self.metrics.dropped(DropKind::PublishEvent, 1),
            (_, Outcome::Replaced | Outcome::Stale | Outcome::Overflow) => {}
        }
    }

    /// True when a tick run at `at` is too old to speak for this shard now.
    fn stale(&self, at: Instant) -> bool {
        clock::now().saturating_duration_since(at) > self.ttl / 2
    }

    /// Publishes a tick (one bundle of cells per region; a shard without
    /// area of interest is one region) and keeps the snapshot as this
    /// shard's last (for the positions of players resumed elsewhere), for two
    /// shard TTLs: one pipeline on one Redis, one a slot on a cluster, each
    /// on its lane, not started once stale.
    fn snapshot(&self, own: OwnSnapshot, lanes: &mut Lanes<Job>) {
        let ttl = (self.ttl.as_millis() as u64) * 2;
        let bytes = own.bytes;
        let mut batch = self.backplane.batch();
        let stamp = FrameStamp { shard: self.me, tick: own.tick, server_time_ms: own.server_time_ms };
        for (region, items) in &own.cells {
            let bundle = encode_bundle(&stamp, own.step, region.0, items);
            let channel = self.keys.cells(region.0, self.me);
            batch.publish(&channel, self.backplane.publish(&channel, &bundle));
        }
        let key = self.keys.last_snapshot(self.me);
        let mut set = redis::cmd("SET");
        set.arg(&key).arg(&bytes[..]).arg("PX").arg(ttl);
        batch.add(&key, set);
        let deadline = Some(own.at + self.ttl / 2);
        for group in batch.into_groups() {
            let job = Job::Tick { server_time_ms: own.server_time_ms, publishes: group.publishes };
            lanes.push(group.slot, Write { pipe: group.pipe, backlog: Backlog::Newest, deadline, tag: job });
        }
    }

    /// One MULTI: apply the delta to the players hash, refresh its TTL, PUBLISH.
    fn presence(&self, bytes: &Bytes, seq: u64, joined: &[(PlayerId, Arc<str>)], left: &[PlayerId]) -> redis::Pipeline {
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
        pipe.add_command(self.backplane.publish(&self.keys.presence_channel(), bytes)).ignore();
        pipe
    }

    /// One MULTI: replace the players hash with `players` (current to `seq`) and
    /// refresh its TTL.
    fn rewrite(&self, players: &HashMap<PlayerId, Arc<str>>, seq: u64) -> redis::Pipeline {
        let key = self.keys.players(self.me);
        let mut pipe = redis::pipe();
        pipe.atomic().del(&key).ignore();
        if !players.is_empty() {
            let fields: Vec<(u32, &str)> = players.iter().map(|(id, n)| (id.0, &**n)).collect();
            pipe.hset_multiple(&key, &fields).ignore();
        }
        pipe.hset(&key, SEQ_FIELD, seq).ignore();
        pipe.pexpire(&key, self.ttl.as_millis() as i64).ignore();
        pipe
    }
}

/// One command as a pipeline, its reply ignored.
fn pipeline(cmd: redis::Cmd) -> redis::Pipeline {
    let mut pipe = redis::pipe();
    pipe.add_command(cmd).ignore();
    pipe
}

/// An event's write: in order on its lane, never stale.
fn event(pipe: redis::Pipeline, job: Job) -> Write<Job> {
    Write { pipe, backlog: Backlog::InOrder, deadline: None, tag: job }
}
