//! The backplane: how a shard reaches the Redis its place lives in, and where
//! in Redis each thing of the place lives. Two leaves the rest builds on:
//!
//! - [`connection`]: the command pool (bounded waits, every command under a
//!   timeout), dedicated pub/sub connections, passwords kept out of logs;
//! - [`keys`]: the key and channel layout of one place (`mino:{place}:…`).
//!
//! The tasks that use them (publisher, subscriber, registry) are
//! [`crate::cluster`]; resume's session store is [`crate::resume::store`].

pub mod connection;
pub mod keys;

pub use connection::{with_conn, RedisError};
pub use keys::Keys;
