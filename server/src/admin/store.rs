//! What the admin API reads and writes in the place's Redis, on a small pool
//! of its own (an operator's search never waits behind the players'
//! resumes): the other shards' players (their players hashes) and where they
//! stand (their last snapshots), ending a kicked player's session, and
//! orders to the other shards on the control channel.

use crate::backplane::{connection, with_conn, Keys, RedisError};
use crate::order::Order;
use crate::resume::store::position_in;
use crate::shard::find::PlayerQuery;
use deadpool_redis::Pool;
use mino_protocol::{PlayerId, ShardId};
use redis::AsyncCommands;
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
    pool: Pool,
    keys: Keys,
}

impl PlaceStore {
    /// A store for `place` at the Redis `url`.
    ///
    /// Errors: an invalid URL.
    pub fn new(url: &str, place: &str) -> Result<PlaceStore, RedisError> {
        Ok(PlaceStore { pool: connection::pool(url, POOL_SIZE)?, keys: Keys::new(place) })
    }

    /// The players of `shard` that `query` matches, with where they stand.
    ///
    /// Errors: Redis unreachable.
    pub async fn find(&self, shard: ShardId, query: &PlayerQuery) -> Result<Vec<RemotePlayer>, RedisError> {
        let key = self.keys.players(shard);
        let fields: HashMap<String, String> = with_conn(&self.pool, async move |c| c.hgetall(key).await).await?;
        let matched: Vec<(PlayerId, String)> = fields
            .into_iter()
            .filter_map(|(field, name)| Some((PlayerId(field.parse().ok()?), name)))
            .filter(|(id, name)| query.matches(*id, name))
            .collect();
        if matched.is_empty() {
            return Ok(Vec::new());
        }
        let key = self.keys.last_snapshot(shard);
        let snapshot: Option<Vec<u8>> = with_conn(&self.pool, async move |c| c.get(key).await).await?;
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
        let key = self.keys.players(shard);
        with_conn(&self.pool, async move |c| c.hexists(key, player.0).await).await
    }

    /// Ends `player`'s session: its resume ticket no longer resumes it (an
    /// account's next sign-in starts a new session).
    ///
    /// Errors: Redis unreachable.
    pub async fn end_session(&self, player: PlayerId) -> Result<(), RedisError> {
        let key = self.keys.session(player);
        with_conn(&self.pool, async move |c| c.del::<_, ()>(key).await).await
    }

    /// Sends `order` to every shard of the place (the control channel).
    ///
    /// Errors: Redis unreachable.
    pub async fn publish(&self, order: &Order) -> Result<(), RedisError> {
        let (channel, line) = (self.keys.control(), order.encode());
        with_conn(&self.pool, async move |c| c.publish::<_, _, ()>(channel, line).await).await
    }
}
