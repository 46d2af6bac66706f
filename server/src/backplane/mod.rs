//! The backplane: how a shard reaches the Redis its place lives in, whatever
//! the deployment (one node, Sentinel, Redis Cluster), and where in Redis each
//! thing of the place lives. The tasks that use it (publisher, subscriber,
//! registry: [`crate::cluster`]) and resume's session store
//! ([`crate::resume::store`]) never branch on the deployment: they run
//! commands ([`Backplane::cmd`], [`Backplane::pipe`]), write in lanes that
//! never wait on each other ([`Lanes`]), publish with
//! [`Backplane::publish`], and read a [`Feed`].
//!
//! | | one node | Sentinel | Redis Cluster |
//! |---|---|---|---|
//! | commands | a pool of connections to the primary | the same, the primary asked of the sentinels | one cluster-aware connection (`MOVED`, `ASK`, slot map refreshes) |
//! | publish | `PUBLISH` | `PUBLISH` | `SPUBLISH` (to the node owning the channel's slot) |
//! | subscribe | `SUBSCRIBE` on one connection | the same, to the primary | `SSUBSCRIBE` a channel at a time, RESP3 pushes |
//! | demoted primary | `READONLY` drops the pool, reconnects | the same, through the sentinels | the cluster connection is rebuilt |
//!
//! Where Redis is comes typed from the flags ([`crate::topology`]). Modules:
//! [`connection`] (timeouts, errors,
//! redaction), [`primary`] (finding the primary, its pool), [`commands`],
//! [`batch`] (pipelines by slot), [`lanes`] (writes a slot at a time, slots
//! independent), [`feed`] (subscriptions), [`keys`] (names).

pub mod batch;
pub mod commands;
pub mod connection;
pub mod feed;
pub mod keys;
pub mod lanes;
pub mod primary;

pub use crate::topology::{Mode, RedisTarget};
pub use batch::Batch;
pub use commands::Request;
pub use connection::RedisError;
pub use feed::{Feed, FeedEvent};
pub use keys::Keys;
pub use lanes::Lanes;

use crate::metrics::Metrics;
use commands::Commands;

/// A reply as `T`.
fn convert<T: FromRedisValue>(value: Value) -> Result<T, RedisError> {
    T::from_redis_value(value).map_err(|e| RedisError::Command(e.into()))
}
use primary::Locator;
use redis::cluster::ClusterClientBuilder;
use redis::{Cmd, ConnectionInfo, FromRedisValue, Pipeline, ScriptInvocation, Value};
use std::sync::Arc;
use tokio::sync::watch;

/// The Redis of one place, as one shard uses it. Cheap to clone.
#[derive(Clone)]
pub struct Backplane {
    commands: Commands,
    keys: Keys,
    mode: Mode,
    /// A cluster's seed nodes (for feeds of their own).
    seeds: Arc<Vec<ConnectionInfo>>,
}

impl Backplane {
    /// The backplane of `place` on `target`, with up to `pool_size` command
    /// connections (one node, Sentinel). Nothing is connected yet: an
    /// unreachable Redis is not an error here.
    ///
    /// Errors: [`RedisError::Url`] for a URL that is not a Redis URL.
    pub fn new(
        target: &RedisTarget,
        place: &str,
        pool_size: usize,
        metrics: &Metrics,
    ) -> Result<Backplane, RedisError> {
        let (commands, keys, seeds) = match target {
            RedisTarget::Node(url) => {
                (Commands::primary(Locator::node(url)?, pool_size, metrics.clone()), Keys::new(place), Vec::new())
            }
            RedisTarget::Sentinel { sentinels, master } => (
                Commands::primary(Locator::sentinel(sentinels, master)?, pool_size, metrics.clone()),
                Keys::new(place),
                Vec::new(),
            ),
            RedisTarget::Cluster { seeds } => {
                let infos = seeds.iter().map(|u| connection::parse_url(u)).collect::<Result<Vec<_>, _>>()?;
                let client = ClusterClientBuilder::new(infos.clone())
                    .connection_timeout(connection::COMMAND_TIMEOUT)
                    .response_timeout(connection::COMMAND_TIMEOUT)
                    .build()
                    .map_err(RedisError::Command)?;
                (Commands::cluster(client, metrics.clone()), Keys::spread(place), infos)
            }
        };
        metrics.redis_mode(target.mode());
        Ok(Backplane { commands, keys, mode: target.mode(), seeds: Arc::new(seeds) })
    }

    /// The place's key and channel names.
    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    /// One node, Sentinel or cluster.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The command that publishes: `PUBLISH`, or `SPUBLISH` on a cluster
    /// (also what the Lua scripts call).
    pub fn publish_command(&self) -> &'static str {
        match self.mode {
            Mode::Cluster => "SPUBLISH",
            Mode::Node | Mode::Sentinel => "PUBLISH",
        }
    }

    /// A command publishing `payload` on `channel`.
    pub fn publish(&self, channel: &str, payload: &[u8]) -> Cmd {
        let mut cmd = redis::cmd(self.publish_command());
        cmd.arg(channel).arg(payload);
        cmd
    }

    /// An empty batch for [`Backplane::send`].
    pub fn batch(&self) -> Batch {
        Batch::new(self.mode == Mode::Cluster)
    }

    /// Runs one command (see [`commands::Commands::run`]) and converts its
    /// reply.
    ///
    /// Errors: checkout, command, timeout or conversion failures.
    pub async fn cmd<T: FromRedisValue>(&self, cmd: &Cmd) -> Result<T, RedisError> {
        convert(self.commands.run(Request::Cmd(cmd)).await?)
    }

    /// Runs a pipeline (or transaction) within one slot and converts its
    /// replies.
    ///
    /// Errors: as [`Backplane::cmd`].
    pub async fn pipe<T: FromRedisValue>(&self, pipe: &Pipeline) -> Result<T, RedisError> {
        convert(self.commands.run(Request::Pipe(pipe)).await?)
    }

    /// Runs a Lua script (its keys within one slot) and converts its reply.
    ///
    /// Errors: as [`Backplane::cmd`].
    pub async fn script<T: FromRedisValue>(&self, inv: &ScriptInvocation<'_>) -> Result<T, RedisError> {
        convert(self.commands.run(Request::Script(inv)).await?)
    }

    /// The slot `key` (a key, or a channel) is written in: its own on a
    /// Redis Cluster, one for every key on one node or Sentinel (the lane a
    /// write of it goes on, see [`lanes`]).
    pub fn slot_of(&self, key: &str) -> redis::cluster_routing::Slot {
        batch::slot_of(self.mode == Mode::Cluster, key)
    }

    /// A new subscription connection.
    ///
    /// Errors: Redis (or every seed) out of reach.
    pub async fn feed(&self) -> Result<Feed, RedisError> {
        match self.commands.locator() {
            Some(locator) => Feed::node(locator).await,
            None => Feed::cluster(&self.seeds).await,
        }
    }

    /// Moves on when the command connections were dropped for a demoted
    /// primary (a subscription connection should follow).
    pub fn generation(&self) -> watch::Receiver<u64> {
        self.commands.generation()
    }
}
