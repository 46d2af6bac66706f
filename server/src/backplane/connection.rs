//! What every Redis connection shares: the command timeout, the errors, URL
//! parsing (passwords kept out of errors with [`redact`]).

pub use crate::topology::redact;

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
    Checkout(String),
    /// A command took longer than [`COMMAND_TIMEOUT`].
    #[error("redis command timed out")]
    Timeout,
}

impl RedisError {
    /// True when Redis answered, with an error (out of memory, a script
    /// refused, ...): it is reachable and refuses the command, which the
    /// logs say apart from a Redis that does not answer.
    pub fn answered(&self) -> bool {
        matches!(self, RedisError::Command(e) if e.code().is_some())
    }
}

/// Installs rustls' ring provider once (for rediss://).
pub(crate) fn crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// True for a `READONLY` reply: the node written to is a replica now (a
/// primary demoted behind the address the shard uses). Also found inside a
/// transaction's or a script's error.
pub fn is_readonly(e: &redis::RedisError) -> bool {
    matches!(e.kind(), redis::ErrorKind::Server(redis::ServerErrorKind::ReadOnly)) || e.to_string().contains("READONLY")
}

/// A URL parsed as a Redis connection's settings.
///
/// Errors: [`RedisError::Url`] (the password is not echoed).
pub fn parse_url(url: &str) -> Result<redis::ConnectionInfo, RedisError> {
    crypto_provider();
    redis::IntoConnectionInfo::into_connection_info(url).map_err(|_| RedisError::Url(redact(url)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_urls_are_refused_without_echoing_secrets() {
        let e = parse_url("http://u:secret@host").expect_err("not redis");
        assert!(!e.to_string().contains("secret"));
    }
}
