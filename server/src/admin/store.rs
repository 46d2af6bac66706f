//! What the admin API reads and writes in the place's Redis, through a
//! backplane of its own (its own small pool on one node or Sentinel, its own
//! cluster connection on a Redis Cluster: an operator's search never waits
//! behind the players' resumes): the other shards' players (their players
//! hashes) and where they stand (their last snapshots), ending a kicked
//! player's session, and orders to the other shards on the control channel
//! (`PUBLISH`, or `SPUBLISH` on a cluster).

use crate::backplane::{Backplane, RedisError, RedisTarget};
use crate::metrics::Metrics;
use crate::order::Order;
use crate::resume::store::position_in;
use crate::shard::find::PlayerQuery;
use mino_protocol::{PlayerId, ShardId};
use std::collections::HashMap;

/// Connections of the admin API's pool.
pub const POOL_SIZE: usize = 2;

/// A player of another shard, as Redis lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct RemotePlayer {
    /// Its id.
    pub player: PlayerId,
    /// Its name.
    pub name: String,
    /// Its shard.
    pub shard: ShardId,
    /// Where its shard's last snapshot has it, world units.
    pub position: Option<(f32, f32)>,
}

/// The admin API's access to the place's Redis.
#[derive(Clone)]
pub struct PlaceStore {
    backplane: Backplane,
}

impl PlaceStore {
    /// A store for `place` on `target` (nothing is connected yet: an
    /// unreachable Redis is not an error here).
    ///
    /// Errors: a URL that is not a Redis URL.
    pub fn new(target: &RedisTarget, place: &str, metrics: &Metrics) -> Result<PlaceStore, RedisError> {
        Ok(PlaceStore { backplane: Backplane::new(target, place, POOL_SIZE, metrics)? })
    }

    /// The players of `shard` that `query` matches, with where they stand.
    ///
    /// Errors: Redis unreachable.
    pub async fn find(&self, shard: ShardId, query: &PlayerQuery) -> Result<Vec<RemotePlayer>, RedisError> {
        let keys = self.backplane.keys();
        let fields: HashMap<String, String> =
            self.backplane.cmd(redis::cmd("HGETALL").arg(keys.players(shard))).await?;
        let matched: Vec<(PlayerId, String)> = fields
            .into_iter()
            .filter_map(|(field, name)| Some((PlayerId(field.parse().ok()?), name)))
            .filter(|(id, name)| query.matches(*id, name))
            .collect();
        if matched.is_empty() {
            return Ok(Vec::new());
        }
        let snapshot: Option<Vec<u8>> = self.backplane.cmd(redis::cmd("GET").arg(keys.last_snapshot(shard))).await?;
        Ok(matched
            .into_iter()
            .map(|(player, name)| RemotePlayer {
                player,
                name,
                shard,
                position: snapshot.as_deref().and_then(|s| position_in(s, player)),
            })
            .collect())
    }

    /// Whether `shard`'s players hash lists `player`.
    ///
    /// Errors: Redis unreachable.
    pub async fn holds(&self, shard: ShardId, player: PlayerId) -> Result<bool, RedisError> {
        let key = self.backplane.keys().players(shard);
        self.backplane.cmd(redis::cmd("HEXISTS").arg(key).arg(player.0)).await
    }

    /// Ends `player`'s session: its resume ticket no longer resumes it (an
    /// account's next sign-in starts a new session).
    ///
    /// Errors: Redis unreachable.
    pub async fn end_session(&self, player: PlayerId) -> Result<(), RedisError> {
        let key = self.backplane.keys().session(player);
        self.backplane.cmd(redis::cmd("DEL").arg(key)).await
    }

    /// Sends `order` to every shard of the place (the control channel).
    ///
    /// Errors: Redis unreachable.
    pub async fn publish(&self, order: &Order) -> Result<(), RedisError> {
        let channel = self.backplane.keys().control();
        self.backplane.cmd(&self.backplane.publish(&channel, order.encode().as_bytes())).await
    }
}
