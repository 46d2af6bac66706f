//! The primary of a one-node or Sentinel deployment, and the pool of command
//! connections to it.
//!
//! - [`Locator`]: where the primary is now: a fixed address (`--redis-url`),
//!   or the address the sentinels name for the master (asked again for every
//!   new connection, and checked with `ROLE` to really be a primary).
//! - [`PrimaryManager`]: deadpool's manager of multiplexed connections to it,
//!   with connect and response timeouts; it notes when the sentinels start
//!   naming another primary (counted as a failover).

use super::connection::{crypto_provider, parse_url, RedisError, COMMAND_TIMEOUT};
use crate::metrics::{FailoverReason, Metrics};
use deadpool::managed::{self, RecycleResult};
use redis::aio::MultiplexedConnection;
use redis::sentinel::{SentinelClient, SentinelNodeConnectionInfo, SentinelServerType};
use redis::{AsyncConnectionConfig, Client, ConnectionAddr, TlsMode};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::Mutex as AsyncMutex;

/// Where the primary is.
pub enum Locator {
    /// A fixed address (possibly a stable name in front of the primary).
    Node(Client),
    /// Asked of the sentinels for every new connection.
    Sentinel(AsyncMutex<SentinelClient>),
}

impl Locator {
    /// A fixed address.
    ///
    /// Errors: [`RedisError::Url`].
    pub fn node(url: &str) -> Result<Locator, RedisError> {
        crypto_provider();
        Ok(Locator::Node(Client::open(parse_url(url)?).map_err(RedisError::Command)?))
    }

    /// The master `master` of these sentinels; the primary is reached with
    /// the first sentinel URL's user, password, database and TLS.
    ///
    /// Errors: [`RedisError::Url`] for a URL that is not one, or no URL.
    pub fn sentinel(sentinels: &[String], master: &str) -> Result<Locator, RedisError> {
        let infos = sentinels.iter().map(|u| parse_url(u)).collect::<Result<Vec<_>, _>>()?;
        let first = infos.first().ok_or_else(|| RedisError::Url("no sentinel URL".into()))?;
        let mut node = SentinelNodeConnectionInfo::default().set_redis_connection_info(first.redis_settings().clone());
        if let ConnectionAddr::TcpTls { insecure, .. } = first.addr() {
            node = node.set_tls_mode(if *insecure { TlsMode::Insecure } else { TlsMode::Secure });
        }
        let client = SentinelClient::build(infos.clone(), master, Some(node), SentinelServerType::Master)
            .map_err(RedisError::Command)?;
        Ok(Locator::Sentinel(AsyncMutex::new(client)))
    }

    /// A client for the primary now.
    ///
    /// Errors: no sentinel answered, or none named a reachable primary.
    pub async fn client(&self) -> Result<Client, RedisError> {
        match self {
            Locator::Node(client) => Ok(client.clone()),
            Locator::Sentinel(sentinel) => {
                let ask = async { sentinel.lock().await.async_get_client().await };
                tokio::time::timeout(COMMAND_TIMEOUT * 2, ask)
                    .await
                    .map_err(|_| RedisError::Timeout)?
                    .map_err(RedisError::Command)
            }
        }
    }
}

/// Timeouts of every command connection.
pub fn connection_config() -> AsyncConnectionConfig {
    AsyncConnectionConfig::new()
        .set_connection_timeout(Some(COMMAND_TIMEOUT))
        .set_response_timeout(Some(COMMAND_TIMEOUT))
}

/// deadpool's manager of connections to the primary. Clones share their
/// state, so a pool rebuilt after a reset remembers the primary it saw last.
#[derive(Clone)]
pub struct PrimaryManager {
    locator: Arc<Locator>,
    metrics: Metrics,
    /// The address of the primary of the newest connection ("host:port").
    primary: Arc<Mutex<Option<String>>>,
    pings: Arc<AtomicUsize>,
}

impl PrimaryManager {
    /// A manager that finds the primary with `locator`.
    pub fn new(locator: Locator, metrics: Metrics) -> PrimaryManager {
        PrimaryManager {
            locator: Arc::new(locator),
            metrics,
            primary: Arc::new(Mutex::new(None)),
            pings: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// The locator (the subscriber connects through it too).
    pub fn locator(&self) -> &Locator {
        &self.locator
    }

    /// Notes the primary of a new connection; a change is a failover.
    fn note(&self, addr: String) {
        let Ok(mut primary) = self.primary.lock() else { return };
        if primary.as_ref().is_some_and(|p| *p != addr) {
            tracing::warn!(from = primary.as_deref().unwrap_or(""), to = %addr, "redis primary changed");
            self.metrics.failover(FailoverReason::PrimaryMoved);
        }
        *primary = Some(addr);
    }
}

impl managed::Manager for PrimaryManager {
    type Type = MultiplexedConnection;
    type Error = RedisError;

    async fn create(&self) -> Result<MultiplexedConnection, RedisError> {
        let client = self.locator.client().await?;
        let addr = client.get_connection_info().addr().to_string();
        let conn = client.get_multiplexed_async_connection_with_config(&connection_config()).await?;
        self.note(addr);
        Ok(conn)
    }

    async fn recycle(&self, conn: &mut MultiplexedConnection, _: &managed::Metrics) -> RecycleResult<RedisError> {
        let n = self.pings.fetch_add(1, Ordering::Relaxed).to_string();
        let echoed: String =
            redis::cmd("PING").arg(&n).query_async(conn).await.map_err(|e| managed::RecycleError::Backend(e.into()))?;
        if echoed == n {
            Ok(())
        } else {
            Err(managed::RecycleError::message("wrong PING reply"))
        }
    }
}
