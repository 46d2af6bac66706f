//! The shard registry of a place, in Redis:
//!
//! - every [`Registry::interval`] this shard writes its heartbeat (a JSON
//!   [`Heartbeat`] with a TTL) and its entry in the sorted set of shards
//!   (scored by expiry), in one MULTI (its players hash is the publisher's);
//! - then it reads which other shards are alive and tells the tick loop, with
//!   the full player list of each shard that appeared or came back, read then
//!   and at the next [`RECHECKS`] intervals (the returning shard's publisher
//!   rewrites its hash within one interval of waking);
//! - it hands out cluster-unique player ids in blocks (INCRBY) when the tick
//!   loop runs low;
//! - on shutdown it deletes its keys so the others see it gone at once.
//!
//! A shard that stops heartbeating (killed, paused, cut off) is dead to the
//! others within the TTL plus one interval; its keys expire by themselves, and
//! the others remove its entry from the sorted set.

use super::publisher::SEQ_FIELD;
use super::{ClusterStatus, LocalState};
use crate::backplane::{with_conn, Keys, RedisError};
use crate::clock::wall_ms as now_ms;
use crate::figures::ShardFigures;
use crate::ids::ID_FETCH;
use crate::metrics::Metrics;
use crate::shard::ClusterEvent;
use deadpool_redis::Pool;
use mino_protocol::{PlayerId, ShardId};
use redis::AsyncCommands;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch, Notify};
use tokio_util::sync::CancellationToken;

/// Raises the id counter to at least ARGV[1] (never lowers it).
const RESEED: &str =
    "if tonumber(redis.call('GET', KEYS[1]) or '0') < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end";

/// Extra reads of a shard's players after it appeared.
pub const RECHECKS: u8 = 2;

/// What a shard's heartbeat key holds.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Heartbeat {
    /// Players on the shard.
    pub players: usize,
    /// True while its busy rule refuses players.
    pub overloaded: bool,
    /// Its clock at the newest snapshot it published, ms (0: none yet).
    pub published_ms: u64,
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

/// The registry task.
pub struct Registry {
    /// Command pool.
    pub pool: Pool,
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
    /// The other live shards' heartbeats, for the subscriber's watchdog.
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
        let mut live: HashSet<ShardId> = HashSet::new();
        let mut recheck: HashMap<ShardId, u8> = HashMap::new();
        let mut ids_wanted = true;
        let (mut up, mut ever_up) = (false, false);
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
            let ok = match self.heartbeat(&state).await {
                Ok(()) => self.refresh(&mut live, &mut recheck, resync_all).await.is_ok(),
                Err(e) => {
                    if up {
                        tracing::warn!(error = %e, "redis unreachable; local play continues");
                    }
                    false
                }
            };
            if ok && !up {
                tracing::info!(shard = %self.me, "redis reachable; shard registered");
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
            self.status.redis_up.store(ok, Ordering::Relaxed);
            self.metrics.redis_up.set(i64::from(ok));
        }
        if let Err(e) = self.deregister().await {
            tracing::debug!(error = %e, "could not remove this shard's keys; they expire by themselves");
        }
    }

    async fn allocate_ids(&self) -> Result<(), RedisError> {
        let key = self.keys.next_player();
        let end: u64 = with_conn(&self.pool, async move |c| c.incr(key, ID_FETCH).await).await?;
        // Ids wrap after 2^32 - 1; 0 is never used.
        let end = (end % u64::from(u32::MAX)) as u32;
        let start = end.saturating_sub(ID_FETCH - 1).max(1);
        let len = end.saturating_sub(start) + 1;
        if self.events.send(ClusterEvent::Ids { start, len }).await.is_err() {
            return Ok(());
        }
        Ok(())
    }

    async fn heartbeat(&self, state: &LocalState) -> Result<(), RedisError> {
        let now = now_ms();
        let ttl_ms = self.ttl.as_millis() as u64;
        let beat = Heartbeat {
            players: state.players,
            overloaded: state.overloaded,
            published_ms: self.status.published_ms.load(Ordering::Relaxed),
            figures: (*state.figures).clone(),
        };
        let json = serde_json::to_string(&beat).unwrap_or_default();
        let mut pipe = redis::pipe();
        pipe.atomic();
        pipe.set_options(
            self.keys.shard(self.me),
            json,
            redis::SetOptions::default().with_expiration(redis::SetExpiry::PX(ttl_ms)),
        )
        .ignore();
        pipe.zadd(self.keys.shards(), self.me.0, now + ttl_ms).ignore();
        // Keep the id counter above every id this shard holds.
        pipe.cmd("EVAL").arg(RESEED).arg(1).arg(self.keys.next_player()).arg(state.highest_player).ignore();
        pipe.zrembyscore(self.keys.shards(), "-inf", now).ignore();
        pipe.pexpire(self.keys.shards(), (ttl_ms * 10) as i64).ignore();
        with_conn(&self.pool, async move |c| pipe.query_async::<()>(c).await).await
    }

    /// Reads the other live shards, tells the tick loop, and fetches the players
    /// of shards that appeared (or of all, after a resubscription).
    async fn refresh(
        &self,
        live: &mut HashSet<ShardId>,
        recheck: &mut HashMap<ShardId, u8>,
        resync_all: bool,
    ) -> Result<(), RedisError> {
        let zkey = self.keys.shards();
        let now = now_ms();
        let ids: Vec<u32> = with_conn(&self.pool, async move |c| c.zrangebyscore(zkey, now, "+inf").await).await?;
        let others: Vec<ShardId> = ids.into_iter().map(ShardId).filter(|s| *s != self.me).collect();
        let beats: Vec<Option<String>> = if others.is_empty() {
            Vec::new()
        } else {
            let keys: Vec<String> = others.iter().map(|s| self.keys.shard(*s)).collect();
            with_conn(&self.pool, async move |c| redis::cmd("MGET").arg(keys).query_async(c).await).await?
        };
        let mut peers = HashMap::new();
        for (shard, beat) in others.iter().zip(beats) {
            if let Some(beat) = beat {
                peers.insert(*shard, serde_json::from_str::<Heartbeat>(&beat).unwrap_or_default());
            }
        }
        let now_live: HashSet<ShardId> = peers.keys().copied().collect();
        for shard in &now_live {
            if resync_all || !live.contains(shard) {
                recheck.insert(*shard, RECHECKS + 1);
            }
        }
        recheck.retain(|s, n| now_live.contains(s) && *n > 0);
        self.metrics.cluster_shards.set(now_live.len() as i64);
        let _ = self.events.send(ClusterEvent::Live(now_live.iter().copied().collect())).await;
        for (shard, n) in recheck.iter_mut() {
            *n -= 1;
            let key = self.keys.players(*shard);
            let fields: HashMap<String, String> = with_conn(&self.pool, async move |c| c.hgetall(key).await).await?;
            let (seq, players) = parse_players(fields);
            let _ = self.events.send(ClusterEvent::Roster { shard: *shard, seq, players }).await;
        }
        *live = now_live;
        self.peers.send_replace(peers);
        Ok(())
    }

    async fn deregister(&self) -> Result<(), RedisError> {
        let (shard, players, zkey, me) =
            (self.keys.shard(self.me), self.keys.players(self.me), self.keys.shards(), self.me.0);
        with_conn(&self.pool, async move |c| {
            redis::pipe().atomic().del(shard).del(players).zrem(zkey, me).query_async::<()>(c).await
        })
        .await
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
