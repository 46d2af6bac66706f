//! mino's deployment kit, tested: the harness that runs the shipped nginx
//! configuration (rendered by `deploy/nginx/render.sh`) as a real nginx with a
//! real TLS certificate in front of real `mino-server` processes sharing a real
//! `redis-server`, all on loopback, every process a child that is stopped on
//! drop.
//!
//! Layers, bottom up:
//! - [`workdir`], [`port`], [`process`]: a temporary folder, free loopback
//!   ports, child processes that never outlive the test.
//! - [`redis`], [`shard`], [`cert`], [`nginx`]: the parts, one each.
//! - [`cluster`]: Redis, N shards and nginx started together.
//! - [`https`]: a small HTTPS/HTTP client for the static files and redirects.
//! - [`bots`], [`player`]: a swarm of `mino-loadgen` bots playing through
//!   nginx over wss, and single players driven by hand.
//!
//! Setup failures panic with a message that says what is missing: this is a
//! test harness, and a test that cannot start its parts must fail loudly.

pub mod bots;
pub mod cert;
pub mod cluster;
pub mod https;
pub mod nginx;
pub mod player;
pub mod port;
pub mod process;
pub mod redis;
pub mod shard;
pub mod workdir;

pub use bots::Bots;
pub use cert::Cert;
pub use cluster::{Cluster, ClusterOptions};
pub use nginx::{Nginx, NginxSettings};
pub use player::Player;
pub use process::Process;
pub use redis::Redis;
pub use shard::Shard;
pub use workdir::WorkDir;

use std::path::PathBuf;
use std::time::Duration;

/// Bound on any single wait of the harness (a process starting, a port
/// answering).
pub const WAIT: Duration = Duration::from_secs(15);

/// The workspace root (the folder holding `deploy/`).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `deploy/` folder: the shipped configuration files.
pub fn deploy_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}
