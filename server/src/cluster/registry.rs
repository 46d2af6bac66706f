//! The shard registry of a place, in Redis:
//!
//! - every [`Registry::interval`] this shard writes its heartbeat (a JSON
//!   [`Heartbeat`] with a TTL) and its entry in the sorted set of shards, in
//!   one script (its players hash is the publisher's);
//! - then it reads which other shards are alive and tells the tick loop, with
//!   the full player list of each shard that appeared, came back or
//!   restarted, read then and at the next [`RECHECKS`] intervals (the
//!   returning shard's publisher rewrites its hash within one interval of
//!   waking), and of every live shard every [`ROSTER_RESYNC`] (anti-entropy:
//!   a lost presence message is repaired by then);
//! - it hands out cluster-unique player ids in blocks (INCRBY) when the tick
//!   loop runs low;
//! - on shutdown it deletes its keys so the others see it gone at once.
//!
//! **Liveness uses Redis's clock only.** A shard is alive while its
//! heartbeat key exists: the key's TTL and the set's scores (expiry times)
//! are Redis's own (`TIME` inside the scripts), so the shards' wall clocks
//! may disagree by any amount. A shard that stops heartbeating (killed,
//! paused, cut off) is dead to the others within the TTL plus one interval;
//! its keys expire by themselves, and the others remove its entry from the
//! sorted set. What remains assumed of clocks: the Redis nodes' clocks agree
//! within a small part of the TTL (after a failover the new primary's clock
//! judges the TTLs), and every shard's monotonic clock runs at the rate of
//! real time (its heartbeat interval).

use super::outage::{Outage, Say};
use super::publisher::SEQ_FIELD;
use super::{ClusterStatus, LocalState};
use crate::backplane::{Backplane, Keys, RedisError};
use crate::clock::{self, Instant};
use crate::figures::ShardFigures;
use crate::ids::ID_FETCH;
use crate::metrics::Metrics;
use crate::shard::ClusterEvent;
use mino_protocol::{PlayerId, ShardId};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch, Notify};
use tokio_util::sync::CancellationToken;

/// Lua: `others(key, epoch)`, true when `key` holds a heartbeat of another
/// process than the one whose presence epoch is `epoch` (the same shard id
/// started twice; epochs are microseconds, exact in Lua's numbers). Part of
/// [`HEARTBEAT`] and [`DEREGISTER`].
macro_rules! others_heartbeat {
    () => {
        r"
local function others(key, epoch)
  local prev = redis.call('GET', key)
  if not prev then return false end
  local ok, beat = pcall(cjson.decode, prev)
  return ok and type(beat) == 'table' and beat['epoch'] ~= nil and tonumber(beat['epoch']) ~= tonumber(epoch)
end
"
    };
}

/// The heartbeat, on Redis's clock. KEYS: this shard's heartbeat key, the
/// sorted set of shards, the id counter; ARGV: the heartbeat (JSON), the TTL
/// (ms), this shard's id (decimal), the highest player id it holds or may
/// still hand out (the end of its id blocks). Writes the key with the TTL,
/// scores the shard by Redis's now plus the TTL, drops expired entries, and
/// raises the id counter to at least that id (never lowers it). Returns
/// Redis's now, ms, 1 when this shard's heartbeat key was there before (0:
/// the first beat, or Redis lost the key: restarted empty, or the shard was
/// away longer than the TTL), and 0 (ARGV[5], this process's epoch, is the
/// key's or there is none) or the key's remaining ms when another process
/// holds the key: a heartbeat of this shard id with another epoch, that is,
/// another process started with the same id (or one that died, whose key
/// lasts its TTL). Then nothing is written.
const HEARTBEAT: &str = concat!(
    others_heartbeat!(),
    r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
if others(KEYS[1], ARGV[5]) then
  return {now, 1, math.max(redis.call('PTTL', KEYS[1]), 1)}
end
local had = redis.call('EXISTS', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('PEXPIRE', KEYS[2], ttl * 10)
if tonumber(redis.call('GET', KEYS[3]) or '0') < tonumber(ARGV[4]) then
  redis.call('SET', KEYS[3], ARGV[4])
end
return {now, had, 0}
"
);

/// Removes a stopping shard's heartbeat, players hash and registry entry
/// (KEYS, in that order; ARGV: its id, this process's epoch), unless the
/// heartbeat is another process's (its epoch another): the same id started
/// twice, the other serving it.
const DEREGISTER: &str = concat!(
    others_heartbeat!(),
    r"
if others(KEYS[1], ARGV[2]) then
  return 0
end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[1])
return 1
"
);

/// What a heartbeat found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Beat {
    /// Written; `had`: this shard's key was still there.
    Written {
        /// The key was there before (see [`HEARTBEAT`]).
        had: bool,
    },
    /// Not written: the key is another process's (the same shard id started
    /// twice, or a predecessor that died), for at most `expires_in` more
    /// unless it beats again.
    Taken {
        /// The key's remaining time to live.
        expires_in: Duration,
    },
}

/// The live shards, on Redis's clock. KEYS: the sorted set of shards; ARGV:
/// the place's key prefix. Drops expired entries, and returns id, heartbeat,
/// id, heartbeat... of every entry whose heartbeat key exists.
const LIVE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local beat = redis.call('GET', ARGV[1] .. 'shard:' .. string.format('%08x', tonumber(id)))
  if beat then
    out[#out + 1] = id
    out[#out + 1] = beat
  end
end
return out
";

/// Extra reads of a shard's players after it appeared.
pub const RECHECKS: u8 = 2;

/// Anti-entropy: every live shard's players are read again this often, so
/// a lost presence message (a refused write, a dropped subscriber) is
/// repaired within this plus one heartbeat interval.
pub const ROSTER_RESYNC: std::time::Duration = std::time::Duration::from_secs(5);

/// What a shard's heartbeat key holds.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Heartbeat {
    /// Players on the shard.
    pub players: usize,
    /// True while its busy rule refuses players.
    pub overloaded: bool,
    /// Its clock at the newest snapshot it published, ms (0: none yet).
    /// Compared only with the times of its own snapshots, never with
    /// another clock.
    pub published_ms: u64,
    /// Its presence numbering's start (µs at its start): another value for
    /// the same shard id is a restarted shard, whose roster replaces what
    /// was known whatever the numbers.
    #[serde(default)]
    pub epoch: u64,
    /// What the admin console shows of it (tick rate and lateness, relay
    /// lag, version, uptime, drain progress...), in the same JSON object.
    #[serde(flatten)]
    pub figures: ShardFigures,
}

/// Splits a players hash into its sequence number and its players; fields that
/// are not player ids are skipped.
pub fn parse_players(fields: HashMap<String, String>) -> (u64, Vec<(PlayerId, Arc<str>)>) {
    let mut seq = 0;
    let mut players = Vec::with_capacity(fields.len());
    for (field, value) in fields {
        if field == SEQ_FIELD {
            seq = value.parse().unwrap_or(0);
        } else if let Ok(id) = field.parse::<u32>() {
            players.push((PlayerId(id), Arc::from(value)));
        }
    }
    (seq, players)
}

/// What the registry knows of the live shards between two reads.
#[derive(Debug, Default)]
struct Live {
    /// Each live shard's presence epoch.
    epochs: HashMap<ShardId, u64>,
    /// When this shard reached Redis again after losing it: for a TTL from
    /// then, a shard missing from the registry is kept (see [`Registry::refresh`]).
    back: Option<Instant>,
    /// Rosters still to read, per shard.
    recheck: HashMap<ShardId, u8>,
    /// When every roster was last read.
    resynced: Option<Instant>,
}

/// The registry task.
pub struct Registry {
    /// The place's Redis.
    pub backplane: Backplane,
    /// Key names.
    pub keys: Keys,
    /// This shard.
    pub me: ShardId,
    /// Heartbeat TTL.
    pub ttl: Duration,
    /// Heartbeat interval.
    pub interval: Duration,
    /// Metrics.
    pub metrics: Metrics,
    /// Redis health and newest publish time.
    pub status: Arc<ClusterStatus>,
    /// Events to the tick loop.
    pub events: mpsc::Sender<ClusterEvent>,
    /// The other live shards' heartbeats (on a cluster, the subscriber
    /// follows their channels).
    pub peers: watch::Sender<HashMap<ShardId, Heartbeat>>,
    /// Notified by the tick loop when it runs low on ids.
    pub need_ids: Arc<Notify>,
    /// Notified by the subscriber after each (re)subscription: re-read rosters.
    pub resync: Arc<Notify>,
}

impl Registry {
    /// Runs until `cancel` fires, then removes this shard's keys.
    pub async fn run(self, local: watch::Receiver<LocalState>, cancel: CancellationToken) {
        let mut tick = tokio::time::interval(self.interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut live = Live::default();
        let mut ids_wanted = true;
        let (mut up, mut ever_up) = (false, false);
        let mut outage = Outage::default();
        let start = Instant::now();
        loop {
            let mut resync_all = false;
            tokio::select! {
                biased;
                () = cancel.cancelled() => break,
                () = self.need_ids.notified() => ids_wanted = true,
                () = self.resync.notified() => resync_all = true,
                _ = tick.tick() => {}
            }
            let state = local.borrow().clone();
            let beat = self.heartbeat(&state).await;
            let taken = matches!(beat, Ok(Beat::Taken { .. }));
            // Said once a change; stored below, with Redis's state, once the
            // ids of a shard just registered are asked for (ready before
            // them, its first players would be refused as busy).
            let was_taken = self.status.id_taken.load(Ordering::Acquire);
            match beat {
                Ok(Beat::Taken { expires_in }) if !was_taken && ever_up => {
                    // This process served the id and lost its heartbeat
                    // (away from Redis past the TTL); another took the id
                    // meanwhile. One process must serve it: this one goes.
                    tracing::error!(
                        shard = %self.me, expires_in_ms = expires_in.as_millis() as u64,
                        "another process took this shard id while this one was away from redis: moving this one's players away and stopping"
                    );
                    let _ = self.events.send(ClusterEvent::Superseded).await;
                }
                Ok(Beat::Taken { expires_in }) if !was_taken => tracing::error!(
                    shard = %self.me, expires_in_ms = expires_in.as_millis() as u64,
                    "this shard id's heartbeat is another process's (the same --shard-id started twice in this place, or one that died and whose heartbeat has not expired yet): this one takes no players until that heartbeat expires; two processes with one id would split the place"
                ),
                Ok(Beat::Written { .. }) if was_taken => {
                    tracing::info!(shard = %self.me, "the other process with this shard id is gone; registering");
                }
                _ => {}
            }
            let ok = match beat {
                Ok(Beat::Taken { .. }) => false,
                Ok(Beat::Written { had }) => {
                    if !had && ever_up {
                        // What this shard wrote is gone (Redis restarted
                        // empty, or this shard was away past its TTL): its
                        // players' sessions and tickets too, so a resume of
                        // any of them would fail. The tick loop writes them
                        // again.
                        tracing::warn!(shard = %self.me, "redis lost this shard's keys; writing its players' sessions and tickets again");
                        self.status.sessions_lost.store(true, Ordering::Release);
                    }
                    if !up && ever_up {
                        live.back = Some(clock::now());
                    }
                    self.refresh(&mut live, resync_all).await.is_ok()
                }
                Err(e) => {
                    let every = self.interval;
                    // Redis that answers with an error (out of memory) is
                    // not unreachable, and the fix is another.
                    let what = if e.answered() { "redis refuses this shard's commands" } else { "redis unreachable" };
                    match outage.failed(start.elapsed()) {
                        Say::Nothing => {}
                        Say::NeverReached => tracing::warn!(
                            error = %e, ?every,
                            "{what}; this shard takes no players until it registers (retrying)"
                        ),
                        Say::Lost => tracing::warn!(error = %e, "{what}; local play continues"),
                        Say::Still { down_for, failures } => tracing::warn!(
                            error = %e, down_for_s = down_for.as_secs(), failures,
                            "{what} (still)"
                        ),
                    }
                    false
                }
            };
            if ok && !up {
                match outage.reached(start.elapsed()) {
                    Some(down) => tracing::info!(
                        shard = %self.me, down_for_s = down.as_secs_f64(),
                        "redis reachable; shard registered"
                    ),
                    None => tracing::info!(shard = %self.me, "redis reachable; shard registered"),
                }
                if ever_up {
                    self.metrics.redis_reconnects.inc();
                }
                ever_up = true;
            }
            up = ok;
            // Ids only once registered, so no player exists before its shard is.
            if ok && ids_wanted {
                ids_wanted = self.allocate_ids().await.is_err();
            }
            self.status.id_taken.store(taken, Ordering::Release);
            // A process whose id is taken is fenced as one cut off from Redis
            // (it publishes nothing as this shard: no snapshot, no roster),
            // though Redis answered it: the metric says Redis is up.
            self.status.redis_up.store(ok, Ordering::Relaxed);
            self.metrics.redis_up.set(i64::from(ok || taken));
        }
        let epoch = local.borrow().epoch;
        if let Err(e) = self.deregister(epoch).await {
            tracing::debug!(error = %e, "could not remove this shard's keys; they expire by themselves");
        }
    }

    async fn allocate_ids(&self) -> Result<(), RedisError> {
        let key = self.keys.next_player();
        let end: u64 = self.backplane.cmd(redis::cmd("INCRBY").arg(&key).arg(ID_FETCH)).await?;
        // Ids wrap after 2^32 - 1; 0 is never used.
        let end = (end % u64::from(u32::MAX)) as u32;
        let start = end.saturating_sub(ID_FETCH - 1).max(1);
        let len = end.saturating_sub(start) + 1;
        if self.events.send(ClusterEvent::Ids { start, len }).await.is_err() {
            return Ok(());
        }
        Ok(())
    }

    /// Writes the heartbeat (see [`HEARTBEAT`]).
    async fn heartbeat(&self, state: &LocalState) -> Result<Beat, RedisError> {
        let beat = Heartbeat {
            players: state.players,
            overloaded: state.overloaded,
            published_ms: self.status.published_ms.load(Ordering::Relaxed),
            epoch: state.epoch,
            figures: (*state.figures).clone(),
        };
        let json = serde_json::to_string(&beat).unwrap_or_default();
        let script = redis::Script::new(HEARTBEAT);
        let mut inv = script.prepare_invoke();
        inv.key(self.keys.shard(self.me))
            .key(self.keys.shards())
            .key(self.keys.next_player())
            .arg(json)
            .arg(self.ttl.as_millis() as u64)
            .arg(self.me.0)
            .arg(state.highest_player)
            .arg(state.epoch);
        let (_, had, taken): (u64, u8, u64) = self.backplane.script(&inv).await?;
        Ok(match taken {
            0 => Beat::Written { had: had == 1 },
            ms => Beat::Taken { expires_in: Duration::from_millis(ms) },
        })
    }

    /// Reads the other live shards, tells the tick loop, and fetches the players
    /// of shards that appeared or restarted, of all after a resubscription,
    /// and of all every [`ROSTER_RESYNC`].
    async fn refresh(&self, live: &mut Live, resync_all: bool) -> Result<(), RedisError> {
        let script = redis::Script::new(LIVE);
        let mut inv = script.prepare_invoke();
        inv.key(self.keys.shards()).arg(self.keys.prefix());
        let pairs: Vec<(u32, String)> = self.backplane.script(&inv).await?;
        let mut peers: HashMap<ShardId, Heartbeat> = pairs
            .into_iter()
            .map(|(id, beat)| (ShardId(id), serde_json::from_str::<Heartbeat>(&beat).unwrap_or_default()))
            .filter(|(s, _)| *s != self.me)
            .collect();
        // Back from an outage of its own, this shard reads a registry the
        // others could not write to meanwhile either (or a Redis restarted
        // empty): a shard missing from it now may only not have beaten yet.
        // For a TTL it keeps its last heartbeat instead of leaving the view
        // (its players vanished from every page and came back a beat later).
        let now = clock::now();
        if live.back.is_some_and(|b| now.saturating_duration_since(b) < self.ttl) {
            let before = self.peers.borrow();
            let missing: Vec<ShardId> = live.epochs.keys().filter(|s| !peers.contains_key(s)).copied().collect();
            for shard in missing {
                if let Some(beat) = before.get(&shard) {
                    peers.insert(shard, beat.clone());
                }
            }
        }
        let resync = resync_all || live.resynced.is_none_or(|t| now.saturating_duration_since(t) >= ROSTER_RESYNC);
        if resync {
            live.resynced = Some(now);
        }
        for (shard, beat) in &peers {
            match live.epochs.get(shard) {
                None => tracing::info!(shard = %shard, players = beat.players, "shard joined the view"),
                Some(epoch) if *epoch != beat.epoch => tracing::info!(shard = %shard, "shard restarted"),
                Some(_) if !resync => continue,
                Some(_) => {}
            }
            let n = if live.epochs.get(shard) == Some(&beat.epoch) { 1 } else { RECHECKS + 1 };
            let left = live.recheck.entry(*shard).or_insert(0);
            *left = (*left).max(n);
        }
        for shard in live.epochs.keys().filter(|s| !peers.contains_key(s)) {
            // A shard that stops cleanly (a drain, SIGTERM) removes its keys
            // and is gone at the next read; a dead one lasts its TTL.
            tracing::info!(shard = %shard, "shard left the view (it stopped and removed its keys, or no heartbeat came within the TTL)");
        }
        live.epochs = peers.iter().map(|(s, b)| (*s, b.epoch)).collect();
        live.recheck.retain(|s, n| peers.contains_key(s) && *n > 0);
        self.metrics.cluster_shards.set(peers.len() as i64);
        let _ = self.events.send(ClusterEvent::Live(peers.keys().copied().collect())).await;
        for (shard, n) in live.recheck.iter_mut() {
            *n -= 1;
            let key = self.keys.players(*shard);
            let fields: HashMap<String, String> = self.backplane.cmd(redis::cmd("HGETALL").arg(&key)).await?;
            let (seq, players) = parse_players(fields);
            let epoch = peers.get(shard).map_or(0, |b| b.epoch);
            let _ = self.events.send(ClusterEvent::Roster { shard: *shard, epoch, seq, players }).await;
        }
        self.peers.send_replace(peers);
        Ok(())
    }

    /// Removes this shard's keys, when they are this process's (`epoch`;
    /// see [`DEREGISTER`]): a process refused for a taken id, or superseded,
    /// leaves the other's alone.
    async fn deregister(&self, epoch: u64) -> Result<(), RedisError> {
        let script = redis::Script::new(DEREGISTER);
        let mut inv = script.prepare_invoke();
        inv.key(self.keys.shard(self.me))
            .key(self.keys.players(self.me))
            .key(self.keys.shards())
            .arg(self.me.0)
            .arg(epoch);
        self.backplane.script::<()>(&inv).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn players_hash_parses_with_its_sequence_number() {
        let fields: HashMap<String, String> =
            [("_seq", "42"), ("7", "Ada"), ("junk", "x")].into_iter().map(|(a, b)| (a.into(), b.into())).collect();
        let (seq, players) = parse_players(fields);
        assert_eq!(seq, 42);
        assert_eq!(players, vec![(PlayerId(7), Arc::from("Ada"))]);
    }
}
