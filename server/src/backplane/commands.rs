//! Commands to Redis, whatever the deployment: a pool of connections to the
//! primary (one node or Sentinel) or one cluster-aware connection (Redis
//! Cluster: it follows `MOVED` and `ASK` and refreshes its slot map by
//! itself). Every call is bounded by [`COMMAND_TIMEOUT`].
//!
//! A `READONLY` reply means the node written to was demoted to a replica
//! behind the address in use: the connection and its whole pool are dropped
//! (closed, so no connection to the demoted node is handed out again), the
//! call is retried once on a fresh connection to whatever is primary now
//! (a refused write changed nothing), and [`Commands::generation`] moves on
//! so the subscriber reconnects too. Logged at warn, counted in
//! `mino_redis_failovers_total{reason="readonly"}`.

use super::connection::{is_readonly, RedisError, COMMAND_TIMEOUT};
use super::primary::{Locator, PrimaryManager};
use crate::metrics::{FailoverReason, Metrics};
use deadpool::managed::{Object, Pool, Timeouts};
use futures_util::future::BoxFuture;
use redis::aio::ConnectionLike;
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Value};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::{watch, Mutex};

/// A connection handed to a command: pooled (one node, Sentinel) or the
/// cluster connection. Implements [`ConnectionLike`], so every redis-rs
/// command and pipeline runs on it.
pub enum Conn {
    /// A pooled connection to the primary.
    Pooled(Object<PrimaryManager>),
    /// A handle to the cluster connection (cheap to clone, multiplexed).
    Cluster(ClusterConnection),
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Conn::Pooled(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::Pooled(c) => c.req_packed_commands(cmd, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(cmd, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Pooled(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
        }
    }
}

/// What to run: a command, a pipeline (a transaction when atomic), or a
/// Lua script (sent by its hash, loaded when the node lacks it).
#[derive(Clone, Copy)]
pub enum Request<'a> {
    /// One command.
    Cmd(&'a Cmd),
    /// A pipeline.
    Pipe(&'a Pipeline),
    /// A script invocation.
    Script(&'a redis::ScriptInvocation<'a>),
}

impl<'a> Request<'a> {
    /// Sends it (boxed: the futures of the three kinds differ, and nest deep).
    fn send<'c>(self, conn: &'c mut Conn) -> BoxFuture<'c, Result<Value, redis::RedisError>>
    where
        'a: 'c,
    {
        match self {
            Request::Cmd(cmd) => Box::pin(cmd.query_async(conn)),
            Request::Pipe(pipe) => Box::pin(pipe.query_async(conn)),
            Request::Script(inv) => Box::pin(inv.invoke_async(conn)),
        }
    }
}

/// Where commands go.
enum Source {
    /// A pool of connections to the primary, replaced on `READONLY`.
    Primary { manager: PrimaryManager, size: usize, pool: RwLock<Pool<PrimaryManager>> },
    /// The cluster client and its connection (made at first use, dropped on
    /// `READONLY`).
    Cluster { client: ClusterClient, conn: Mutex<Option<ClusterConnection>> },
}

/// Commands to the Redis of a place. Cheap to clone.
#[derive(Clone)]
pub struct Commands {
    inner: Arc<Inner>,
}

struct Inner {
    source: Source,
    metrics: Metrics,
    generation: watch::Sender<u64>,
}

impl Commands {
    /// Commands to the primary `locator` finds, over a pool of up to `size`
    /// connections. Nothing is connected yet.
    pub fn primary(locator: Locator, size: usize, metrics: Metrics) -> Commands {
        let manager = PrimaryManager::new(locator, metrics.clone());
        let pool = RwLock::new(build_pool(&manager, size));
        Commands::with(Source::Primary { manager, size, pool }, metrics)
    }

    /// Commands to a Redis Cluster. Nothing is connected yet.
    pub fn cluster(client: ClusterClient, metrics: Metrics) -> Commands {
        Commands::with(Source::Cluster { client, conn: Mutex::new(None) }, metrics)
    }

    fn with(source: Source, metrics: Metrics) -> Commands {
        let (generation, _) = watch::channel(0);
        Commands { inner: Arc::new(Inner { source, metrics, generation }) }
    }

    /// Moves on each time the connections were dropped for a demoted
    /// primary: whoever holds a connection of its own (the subscriber)
    /// reconnects.
    pub fn generation(&self) -> watch::Receiver<u64> {
        self.inner.generation.subscribe()
    }

    /// The primary's locator (one node or Sentinel); `None` for a cluster.
    pub fn locator(&self) -> Option<&Locator> {
        match &self.inner.source {
            Source::Primary { manager, .. } => Some(manager.locator()),
            Source::Cluster { .. } => None,
        }
    }

    /// Runs `req` on a connection within [`COMMAND_TIMEOUT`]; after a
    /// `READONLY` reply, once more on a fresh connection (see the module
    /// docs: a refused write changed nothing, so this is safe).
    ///
    /// Errors: checkout, command or timeout failures.
    pub async fn run(&self, req: Request<'_>) -> Result<Value, RedisError> {
        let attempt = async {
            let mut conn = self.conn().await?;
            match req.send(&mut conn).await {
                Err(e) if is_readonly(&e) => {
                    self.demoted(conn, &e).await;
                    let mut conn = self.conn().await?;
                    Ok(req.send(&mut conn).await?)
                }
                other => Ok(other?),
            }
        };
        // Boxed as a trait object: the futures that await a command (a
        // handshake claiming its session, say) stop at this type instead of
        // carrying the connection pool's and the redis client's whole future
        // types, which overflowed the compiler's trait-solving depth.
        let attempt: BoxFuture<'_, Result<Value, RedisError>> = Box::pin(attempt);
        tokio::time::timeout(COMMAND_TIMEOUT, attempt).await.unwrap_or(Err(RedisError::Timeout))
    }

    async fn conn(&self) -> Result<Conn, RedisError> {
        match &self.inner.source {
            Source::Primary { pool, .. } => {
                let pool = pool.read().map_err(|_| RedisError::Checkout("pool lock poisoned".into()))?.clone();
                pool.get().await.map(Conn::Pooled).map_err(|e| RedisError::Checkout(e.to_string()))
            }
            Source::Cluster { client, conn } => {
                let mut slot = conn.lock().await;
                if let Some(c) = slot.as_ref() {
                    return Ok(Conn::Cluster(c.clone()));
                }
                let c = client.get_async_connection().await?;
                *slot = Some(c.clone());
                Ok(Conn::Cluster(c))
            }
        }
    }

    /// A write was refused with `READONLY`: drops `conn` and every pooled
    /// connection, and moves the generation on.
    async fn demoted(&self, conn: Conn, e: &redis::RedisError) {
        tracing::warn!(error = %e, "redis answered READONLY: the primary was demoted; reconnecting");
        self.inner.metrics.failover(FailoverReason::Readonly);
        match (&self.inner.source, conn) {
            (Source::Primary { manager, size, pool }, Conn::Pooled(object)) => {
                drop(Object::take(object));
                if let Ok(mut pool) = pool.write() {
                    pool.close();
                    *pool = build_pool(manager, *size);
                }
            }
            (Source::Cluster { conn: slot, .. }, _) => *slot.lock().await = None,
            _ => {}
        }
        self.inner.generation.send_modify(|g| *g += 1);
    }
}

/// A pool of up to `size` connections with bounded waits.
fn build_pool(manager: &PrimaryManager, size: usize) -> Pool<PrimaryManager> {
    let timeouts = Timeouts {
        wait: Some(Duration::from_secs(2)),
        create: Some(Duration::from_secs(1)),
        recycle: Some(Duration::from_millis(500)),
    };
    match Pool::builder(manager.clone()).max_size(size).timeouts(timeouts).runtime(deadpool::Runtime::Tokio1).build() {
        Ok(pool) => pool,
        // Only a missing runtime fails a build, and a runtime is given.
        Err(e) => unreachable!("pool with a runtime: {e}"),
    }
}
