//! mino's test kit (dev only): the real processes of a deployment, started on
//! loopback the one way every test crate starts them, and the clients that
//! play against them. The server's, the loadgen's and the deployment's
//! integration tests use it; the browser end-to-end harness
//! (`client-web/e2e/harness`) renders nginx the same way.
//!
//! Layers, bottom up (declared in the repository's `layers.toml`):
//! - [`workdir`], [`port`], [`process`], [`script`], [`clock`], [`wait`]: a
//!   temporary folder, free loopback ports, child processes that never
//!   outlive the test (killed on drop, with their own children), commands
//!   bounded in time, a shipped shell script run in its own process group and
//!   read line by line, a wall clock off by some seconds (libfaketime), and
//!   waits on a condition or a log line in place of fixed sleeps.
//! - [`http`], [`metrics`]: a small HTTP/1.1 client (plain, or TLS trusting
//!   the test's certificate) and Prometheus text parsed into values.
//! - [`redis`], [`redis_cluster`], [`sentinel`], [`forwarder`], [`link`],
//!   [`shard`], [`cert`], then [`nginx`]: the parts, one each: a
//!   `redis-server` on a free port; a six-node Redis Cluster; a primary, a
//!   replica and three sentinels; a TCP forwarder (the stable address in
//!   front of a primary, made for faults); a link with loss, delay and
//!   jitter for TCP and UDP (in a private network namespace, on loopback
//!   addresses); the `mino-server` binary on port 0, whose
//!   ready lines are parsed here and nowhere else; a self-signed certificate;
//!   nginx from the shipped template, rendered by the shipped
//!   `deploy/nginx/render.sh`, serving that certificate.
//! - [`cluster`]: Redis, N shards and nginx started together.
//! - [`frame`], [`player`]: a websocket test player that speaks the real
//!   protocol, every server message decoded (by loadgen's decoder) into an
//!   owned [`Frame`]; [`raw`]: a raw websocket client for edge cases (any
//!   handshake bytes, frames built bit by bit, how the connection ended);
//!   [`transport`]: a WebTransport test player (the stream and datagrams).
//! - [`bots`], [`loadgen`]: players driven by loadgen: a swarm of its bots in
//!   this process, and the `mino-loadgen` binary run to its JSON report.
//!
//! Every wait is bounded (most by [`WAIT`]) and everything listens on
//! 127.0.0.1. Setup failures panic with a message that says what is missing:
//! a test that cannot start its parts must fail loudly, never skip.
//!
//! Environment: `MINO_SERVER_BIN` (the server binary when a test names none;
//! default: `mino-server` in the cargo target folder of the running test),
//! `MINO_LOG` (the log filter given to the servers and loadgen it starts;
//! default `warn`), `MINO_NGINX_BIN` (default `nginx` on the PATH, else
//! `/usr/sbin/nginx`), `MINO_KEEP_WORKDIR` (keep the temporary folders).

pub mod bots;
pub mod cert;
pub mod clock;
pub mod cluster;
pub mod forwarder;
pub mod frame;
pub mod http;
pub mod link;
pub mod loadgen;
pub mod metrics;
pub mod nginx;
pub mod player;
pub mod port;
pub mod process;
pub mod raw;
pub mod redis;
pub mod redis_cluster;
pub mod script;
pub mod sentinel;
pub mod shard;
pub mod transport;
pub mod wait;
pub mod workdir;

pub use bots::Bots;
pub use cert::Cert;
pub use cluster::{Cluster, ClusterOptions};
pub use forwarder::Forwarder;
pub use frame::{close_code, Frame, Welcome};
pub use http::Response;
pub use metrics::Metrics;
pub use nginx::{Nginx, NginxSettings, Upstream};
pub use nix::sys::signal::Signal;
pub use player::{Endpoint, Player};
pub use process::Process;
pub use raw::{RawReader, RawSocket, RawWriter};
pub use redis::Redis;
pub use redis_cluster::RedisCluster;
pub use sentinel::Sentinel;
pub use shard::{server_bin, Launch, Shard, ShardBuilder};
pub use transport::TransportPlayer;
pub use workdir::WorkDir;

use std::path::PathBuf;
use std::time::Duration;

/// Bound on any single wait of a test on a running part: a frame, an HTTP
/// answer, a metric or readiness reached.
pub const WAIT: Duration = Duration::from_secs(10);

/// Bound on a process starting: its port answering, its ready line printed.
pub const START_WAIT: Duration = Duration::from_secs(15);

/// The log filter (`MINO_LOG`) for the processes the kit starts: the test's
/// own `MINO_LOG`, else `warn`.
pub fn log_filter() -> String {
    std::env::var("MINO_LOG").unwrap_or_else(|_| "warn".into())
}

/// The workspace root (the folder holding `testkit/`).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `deploy/` folder: the shipped configuration files.
pub fn deploy_dir() -> PathBuf {
    workspace_root().join("deploy")
}
