//! Connections to Redis: a deadpool pool for commands (with wait, create and
//! recycle timeouts, so nothing waits forever) and dedicated connections for
//! pub/sub. URLs may carry a password; [`redact`] keeps it out of logs.

use deadpool_redis::{Pool, PoolConfig, Runtime, Timeouts};
use std::time::Duration;

/// Longest any one Redis command may take before it counts as failed.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(1);

/// Why Redis could not be used.
#[derive(Debug, thiserror::Error)]
pub enum RedisError {
    /// The URL does not parse as a Redis URL.
    #[error("invalid Redis URL {0}")]
    Url(String),
    /// Creating the pool failed.
    #[error("cannot create the Redis pool: {0}")]
    Pool(String),
    /// A connection or command failed.
    #[error("redis: {0}")]
    Command(#[from] redis::RedisError),
    /// A pooled connection could not be had in time.
    #[error("redis pool: {0}")]
    Checkout(#[from] deadpool_redis::PoolError),
    /// A command took longer than [`COMMAND_TIMEOUT`].
    #[error("redis command timed out")]
    Timeout,
}

/// The URL with any password replaced by `***`, for logs.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    match rest.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split_once(':').map_or("", |(u, _)| u);
            format!("{scheme}://{user}:***@{host}")
        }
        None => url.to_owned(),
    }
}

/// Installs rustls' ring provider once (for rediss://).
fn crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A client for dedicated (pub/sub) connections.
///
/// Errors: [`RedisError::Url`] when the URL is not a Redis URL.
pub fn client(url: &str) -> Result<redis::Client, RedisError> {
    crypto_provider();
    redis::Client::open(url).map_err(|_| RedisError::Url(redact(url)))
}

/// A command pool of up to `size` connections with bounded waits.
///
/// Errors: [`RedisError::Url`] or [`RedisError::Pool`].
pub fn pool(url: &str, size: usize) -> Result<Pool, RedisError> {
    crypto_provider();
    let mut cfg = deadpool_redis::Config::from_url(url);
    let mut pc = PoolConfig::new(size);
    pc.timeouts = Timeouts {
        wait: Some(Duration::from_secs(2)),
        create: Some(Duration::from_secs(1)),
        recycle: Some(Duration::from_millis(500)),
    };
    cfg.pool = Some(pc);
    cfg.create_pool(Some(Runtime::Tokio1)).map_err(|e| RedisError::Pool(redact(&e.to_string())))
}

/// Runs `f` on a pooled connection within [`COMMAND_TIMEOUT`].
///
/// Errors: checkout, command or timeout failures.
pub async fn with_conn<T, F>(pool: &Pool, f: F) -> Result<T, RedisError>
where
    F: AsyncFnOnce(&mut deadpool_redis::Connection) -> Result<T, redis::RedisError>,
{
    let run = async {
        let mut conn = pool.get().await?;
        Ok(f(&mut conn).await?)
    };
    tokio::time::timeout(COMMAND_TIMEOUT, run).await.unwrap_or(Err(RedisError::Timeout))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_logs() {
        assert_eq!(redact("redis://:s3cret@host:6379/0"), "redis://:***@host:6379/0");
        assert_eq!(redact("rediss://user:pa:ss@h/1"), "rediss://user:***@h/1");
        assert_eq!(redact("redis://127.0.0.1:6379"), "redis://127.0.0.1:6379");
        assert!(!redact("redis://u:p%40ss@h").contains("p%40ss"));
    }

    #[test]
    fn bad_urls_are_refused_without_echoing_secrets() {
        let e = client("http://u:secret@host").expect_err("not redis");
        assert!(!e.to_string().contains("secret"));
    }
}
