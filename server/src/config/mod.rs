//! Command-line flags (also read from `MINO_*` environment variables),
//! grouped by subject (one file each, flattened into [`Cli`] and shown under
//! their own heading in `--help`), and the typed [`Config`] they become.
//! Nothing deeper in the server reads the environment.
//!
//! Every numeric flag has an allowed range, checked by clap when the flags are
//! parsed: an out-of-range value stops the start with the flag's name and its
//! range (`invalid value '0' for '--tick-hz <TICK_HZ>': 0 is not in 1..=120`),
//! never a silent clamp. The rules between flags (the heartbeat fits twice in
//! the shard TTL, a cell is wider than a walker's stride, an admin listener
//! beyond loopback has tokens) are checked by [`Config::from_cli`].

mod admin;
mod aoi;
mod auth;
mod cluster;
mod listen;
mod parse;
mod shard;
mod socket;
mod stop;
mod webtransport;

pub use admin::{AdminArgs, AdminConfig};
pub use aoi::{
    ignored_flags as ignored_view_flags, AoiArgs, AoiConfig, Walkers, DEFAULT_VIEW_RADIUS_CELLS, MAX_CELLS,
    PREFETCH_CROSSING_TICKS,
};
pub use auth::{AuthArgs, AuthConfig, AuthKeys, Guests};
pub use cluster::ClusterArgs;
pub use listen::{ListenArgs, ListenConfig};
pub use shard::ShardArgs;
pub use socket::{SocketArgs, SocketConfig, Writes};
pub use stop::StopArgs;
pub use webtransport::{Advertised, Certificate, Congestion, WebTransportArgs, WebTransportConfig};

use crate::address::ListenAddr;
use crate::topology::RedisTarget;
use clap::{CommandFactory, FromArgMatches, Parser};
use mino_protocol::ShardId;
use std::time::Duration;

/// mino shard server: runs the 20 Hz tick for its players and serves the
/// websocket at /ws, the browser client at / (with --static-dir), and
/// /healthz, /readyz and Prometheus /metrics (on the admin listener only,
/// when there is one). Logs go to stderr, filtered by MINO_LOG
/// (tracing's filter syntax, e.g. `info` or `mino_server=debug`; default
/// info).
#[derive(Parser, Debug, Clone)]
#[command(name = "mino-server", version, about, long_about = None)]
pub struct Cli {
    /// The players' listener.
    #[command(flatten)]
    pub listen: ListenArgs,
    /// The admin listener.
    #[command(flatten)]
    pub admin: AdminArgs,
    /// The shard itself.
    #[command(flatten)]
    pub shard: ShardArgs,
    /// Each admitted socket.
    #[command(flatten)]
    pub socket: SocketArgs,
    /// Redis, the place, the heartbeat.
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// The area of interest.
    #[command(flatten)]
    pub aoi: AoiArgs,
    /// Identity tokens and guests.
    #[command(flatten)]
    pub auth: AuthArgs,
    /// The drain and the shutdown.
    #[command(flatten)]
    pub stop: StopArgs,
    /// WebTransport.
    #[command(flatten)]
    pub webtransport: WebTransportArgs,
}

/// The server's settings, typed. Built from [`Cli`] by [`Config::from_cli`] or
/// by tests directly. The shard core's settings (its id, tick, world,
/// admission, sessions, cluster timing, drain) are its own fields, as
/// `shard::Shard::new` reads them; each edge's are a group of their own.
#[derive(Debug, Clone)]
pub struct Config {
    /// The players' listener.
    pub listen: ListenConfig,
    /// The admin listener's settings.
    pub admin: AdminConfig,
    /// Each admitted socket's limits.
    pub socket: SocketConfig,
    /// Tick rate, Hz.
    pub tick_hz: u16,
    /// Admission cap.
    pub max_players: u32,
    /// This shard.
    pub shard_id: ShardId,
    /// World side, world units.
    pub world_size: f32,
    /// World units per second.
    pub speed: f32,
    /// Busy threshold on mean tick lateness; `None` = rule off.
    pub busy_lateness: Option<Duration>,
    /// Retry-after base for busy refusals.
    pub busy_retry: Duration,
    /// Runtime threads (1: the whole shard on one thread).
    pub worker_threads: u16,
    /// Where Redis is; `None` = standalone.
    pub redis: Option<RedisTarget>,
    /// Place name (Redis key and channel prefix).
    pub place: String,
    /// Heartbeat age after which a shard is dead.
    pub shard_ttl: Duration,
    /// Heartbeat and registry read interval.
    pub heartbeat: Duration,
    /// Bound on the graceful shutdown.
    pub shutdown_timeout: Duration,
    /// Area of interest; `None`: whole-shard snapshots.
    pub aoi: Option<AoiConfig>,
    /// Identity: how Hello tokens are verified.
    pub auth: AuthConfig,
    /// Resume ticket and parked session lifetime.
    pub ticket_ttl: Duration,
    /// Moves per second while draining.
    pub drain_rate: u32,
    /// Bound on the drain.
    pub drain_timeout: Duration,
    /// WebTransport; `None`: off.
    pub webtransport: Option<WebTransportConfig>,
}

/// True when two listeners would take the same address: the same Unix
/// socket path, or TCP on the same port (not 0, the kernel's pick) of the
/// same IP, or of an unspecified one that covers the other (0.0.0.0 every
/// IPv4 address; [::] every address, dual-stack as Linux binds it).
fn same_listener(a: &ListenAddr, b: &ListenAddr) -> bool {
    let covers = |x: &std::net::SocketAddr, y: &std::net::SocketAddr| {
        x.ip() == y.ip() || (x.ip().is_unspecified() && (x.is_ipv6() || y.is_ipv4()))
    };
    match (a, b) {
        (ListenAddr::Unix(a), ListenAddr::Unix(b)) => a == b,
        (ListenAddr::Tcp(a), ListenAddr::Tcp(b)) => {
            a.port() != 0 && a.port() == b.port() && (covers(a, b) || covers(b, a))
        }
        _ => false,
    }
}

impl Config {
    /// What the shard reads again on SIGHUP and when the file changes
    /// ([`crate::reload`]), as the logs name it: "admin tokens" (with
    /// `--admin-token-file` and an admin listener, which alone reads them),
    /// "identity keys" (with a JWKS or public key file).
    pub fn reloaded_files(&self) -> Vec<&'static str> {
        let tokens = self.admin.token_file.as_ref().filter(|_| self.admin.listen.is_some()).map(|_| "admin tokens");
        let keys = self.auth.keys.as_ref().map(|_| "identity keys");
        tokens.into_iter().chain(keys).collect()
    }
}

/// Flags that parse one by one but not together.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ConfigError {
    /// The heartbeat must fit twice in the shard TTL, or a live shard would
    /// look dead between two heartbeats.
    #[error("--heartbeat-ms {heartbeat_ms} must be at most half of --shard-ttl-ms {shard_ttl_ms}")]
    HeartbeatTooSlow {
        /// The heartbeat interval given, ms.
        heartbeat_ms: u64,
        /// The shard TTL given, ms.
        shard_ttl_ms: u64,
    },
    /// The admin listener would take the players' listener's address.
    #[error("--admin-listen {0} is --listen's address too: give the admin listener its own port or socket")]
    SameListener(ListenAddr),
    /// An idle peer that answers every ping would be dropped: the ping goes
    /// out after the interval and a sweep, and the timeout must outlast both.
    #[error("--peer-timeout-ms {peer_timeout_ms} drops an idle player who answers every ping: give at least {least_ms} (more than --ping-interval-ms and the sweep that sends the ping)")]
    PeerTimeoutTooShort {
        /// The peer timeout given, ms.
        peer_timeout_ms: u64,
        /// The least it may be, ms.
        least_ms: u64,
    },
    /// A walker could cross a whole cell while the cell it left is still in
    /// view, and skip the next one.
    #[error("--cell-size {cell_size} is under --speed x max(--view-hysteresis-ticks, 8) / --tick-hz = {least}: a walker could skip a cell or cross the prefetch ring unseen")]
    CellTooSmall {
        /// The cell size given.
        cell_size: f32,
        /// The least it may be.
        least: f32,
    },
    /// The admin listener is reachable from other machines with nothing
    /// guarding it.
    #[error(
        "--admin-listen {0} is reachable from other machines: give --admin-token-file too (or listen on loopback)"
    )]
    AdminUnguarded(ListenAddr),
    /// WebTransport's send queue cannot hold two ticks of a view's frames:
    /// a frame's last datagrams would push out its first before they are sent.
    #[error("--webtransport-send-queue-bytes {queue} is under twice --view-budget-bytes {budget}: a tick's frame would push out its own first datagrams")]
    SendQueueTooSmall {
        /// The send queue given, bytes.
        queue: u32,
        /// The view budget given, bytes a tick.
        budget: usize,
    },
    /// A flag given empty (most often an environment variable set to
    /// nothing) where empty means nothing: a shard started standalone by an
    /// empty MINO_REDIS_URL would split the place behind nginx.
    #[error("--{flag} is empty ({env} set to nothing?): {hint}")]
    Empty {
        /// The flag.
        flag: &'static str,
        /// Its environment variable.
        env: &'static str,
        /// What to do instead.
        hint: &'static str,
    },
    /// A flag that needs the identity service's key and was given without
    /// one: every signed-in player would be refused.
    #[error("{flag} needs a key to verify tokens with: give --auth-jwks-file, --auth-public-key-file or --auth-hs256-secret-file")]
    NoAuthKey {
        /// The flag, as given.
        flag: &'static str,
    },
    /// A folder flag naming something that is not a folder.
    #[error("--{flag} {path}: not a folder")]
    NotAFolder {
        /// The flag.
        flag: &'static str,
        /// The path given.
        path: String,
    },
    /// The world would need too many cells.
    #[error("--world-size {world_size} in cells of --cell-size {cell_size} is {cells} cells, over {MAX_CELLS}")]
    TooManyCells {
        /// The world side given.
        world_size: f32,
        /// The cell size given.
        cell_size: f32,
        /// Cells it would take.
        cells: u64,
    },
    /// The view radius spans more cells than a stencil may.
    #[error(
        "--view-radius {view_radius} is {cells} cells of --cell-size {cell_size}, over {}",
        mino_protocol::stencil::MAX_RADIUS_CELLS
    )]
    ViewTooWide {
        /// The view radius, world units.
        view_radius: f32,
        /// The cell size given.
        cell_size: f32,
        /// The radius in cells.
        cells: f32,
    },
}

impl Config {
    /// Types the parsed flags; a missing shard id becomes a random non-zero one.
    ///
    /// Errors: [`ConfigError`] when two flags disagree.
    pub fn from_cli(cli: &Cli) -> Result<Config, ConfigError> {
        let Cli { listen, admin, shard, socket, cluster, aoi, auth, stop, webtransport } = cli;
        let (heartbeat, shard_ttl) = cluster.heartbeat_and_ttl()?;
        let walkers = Walkers { world_size: shard.world_size, speed: shard.speed, tick_hz: shard.tick_hz };
        if webtransport.webtransport_listen.is_some()
            && (webtransport.webtransport_send_queue_bytes as usize) < 2 * aoi.view_budget_bytes
        {
            return Err(ConfigError::SendQueueTooSmall {
                queue: webtransport.webtransport_send_queue_bytes,
                budget: aoi.view_budget_bytes,
            });
        }
        let aoi = aoi.config(walkers)?;
        if cluster.redis_url.as_deref().is_some_and(|u| u.trim().is_empty()) {
            let hint = "unset it for a standalone shard, or give the place's Redis";
            return Err(ConfigError::Empty { flag: "redis-url", env: "MINO_REDIS_URL", hint });
        }
        // Given, but not one URL in it: as an empty --redis-url, not standalone.
        let blank = |urls: &[String]| !urls.is_empty() && urls.iter().all(|u| u.trim().is_empty());
        if blank(&cluster.redis_cluster) {
            let hint = "unset it for a standalone shard, or give the cluster's seed nodes";
            return Err(ConfigError::Empty { flag: "redis-cluster", env: "MINO_REDIS_CLUSTER", hint });
        }
        if blank(&cluster.redis_sentinel) {
            let hint = "unset it (and MINO_REDIS_MASTER) for a standalone shard, or give the sentinels";
            return Err(ConfigError::Empty { flag: "redis-sentinel", env: "MINO_REDIS_SENTINEL", hint });
        }
        let keyless = auth.auth_jwks_file.is_none()
            && auth.auth_public_key_file.is_none()
            && auth.auth_hs256_secret_file.is_none();
        if keyless {
            let given = |v: &Option<String>| v.as_deref().is_some_and(|s| !s.is_empty());
            if auth.guests == Guests::Deny {
                return Err(ConfigError::NoAuthKey { flag: "--guests deny" });
            }
            if given(&auth.auth_issuer) {
                return Err(ConfigError::NoAuthKey { flag: "--auth-issuer" });
            }
            if given(&auth.auth_audience) {
                return Err(ConfigError::NoAuthKey { flag: "--auth-audience" });
            }
        }
        for (flag, dir) in [("static-dir", &listen.static_dir), ("admin-console-dir", &admin.admin_console_dir)] {
            if let Some(dir) = dir.as_ref().filter(|d| !d.is_dir()) {
                return Err(ConfigError::NotAFolder { flag, path: dir.display().to_string() });
            }
        }
        let admin = admin.config()?;
        if let Some(at) = admin.listen.as_ref().filter(|at| same_listener(at, &listen.listen)) {
            return Err(ConfigError::SameListener(at.clone()));
        }
        let ms = Duration::from_millis;
        Ok(Config {
            listen: listen.config(),
            admin,
            socket: socket.config()?,
            tick_hz: shard.tick_hz,
            max_players: shard.max_players,
            shard_id: shard.shard_id(),
            world_size: shard.world_size,
            speed: shard.speed,
            busy_lateness: shard.busy_lateness(),
            busy_retry: ms(shard.busy_retry_ms.into()),
            worker_threads: shard.worker_threads,
            redis: cluster.redis(),
            place: cluster.place.clone(),
            shard_ttl,
            heartbeat,
            shutdown_timeout: ms(stop.shutdown_timeout_ms),
            aoi,
            auth: auth.config(),
            ticket_ttl: ms(shard.ticket_ttl_ms),
            drain_rate: stop.drain_rate,
            drain_timeout: ms(stop.drain_timeout_ms),
            webtransport: webtransport.config(),
        })
    }

    /// The tick period (1 / tick rate).
    pub fn tick_period(&self) -> Duration {
        Duration::from_secs_f64(1.0 / f64::from(self.tick_hz))
    }
}

/// The command line with no environment variable read: what
/// [`Config::default`] and the unit tests parse.
fn command_without_environment() -> clap::Command {
    Cli::command().mut_args(|arg| arg.env(None::<&str>))
}

impl Default for Config {
    /// The command line's defaults, as documented on [`Cli`], standalone, with
    /// shard id 1. Reads no environment variable and draws nothing random, so
    /// unit tests and benches do not depend on the machine they run on.
    fn default() -> Self {
        let cli = command_without_environment()
            .try_get_matches_from(["mino-server", "--shard-id", "1"])
            .and_then(|m| Cli::from_arg_matches(&m));
        match cli.map_err(|e| e.to_string()).and_then(|c| Config::from_cli(&c).map_err(|e| e.to_string())) {
            Ok(config) => config,
            // The defaults are constants checked by the test below.
            Err(e) => unreachable!("the default flags are valid: {e}"),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `args` parsed as the command line, with no environment variable read.
    pub(crate) fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        let mut all = vec!["mino-server"];
        all.extend_from_slice(args);
        command_without_environment().try_get_matches_from(all).and_then(|m| Cli::from_arg_matches(&m))
    }

    #[test]
    fn defaults_read_no_environment_and_nothing_random() {
        // No flag of the command the defaults are parsed from has a variable
        // (so none is read, whatever the process's environment holds; a test
        // that set one would race the tests running beside it).
        let command = command_without_environment();
        let read = command.get_arguments().filter(|a| a.get_env().is_some()).map(|a| a.get_id().to_string());
        assert_eq!(read.collect::<Vec<_>>(), Vec::<String>::new());
        let (a, b) = (Config::default(), Config::default());
        assert_eq!((a.tick_hz, a.shard_id, a.redis.as_ref()), (20, ShardId(1), None));
        assert_eq!(a.shard_id, b.shard_id);
    }

    #[test]
    fn sighup_reloads_the_admin_tokens_only_where_an_admin_listener_reads_them() {
        let reloads = |args: &[&str]| Config::from_cli(&parse(args).expect("flags")).expect("valid").reloaded_files();
        assert_eq!(reloads(&[]), Vec::<&str>::new());
        // A token file in a shared environment, but no admin listener here.
        assert_eq!(reloads(&["--admin-token-file", "/etc/mino/admin-tokens"]), Vec::<&str>::new());
        let both = ["--admin-listen", "127.0.0.1:0", "--admin-token-file", "/etc/mino/admin-tokens"];
        assert_eq!(reloads(&both), ["admin tokens"]);
    }

    #[test]
    fn every_flag_has_its_environment_variable() {
        // `--tick-hz` is also MINO_TICK_HZ, and so on for every flag.
        let command = Cli::command();
        let mut flags = 0;
        for arg in command.get_arguments().filter(|a| !matches!(a.get_id().as_str(), "help" | "version")) {
            let long = arg.get_long().expect("every flag is long");
            let env = arg.get_env().map(|e| e.to_string_lossy().into_owned());
            assert_eq!(env, Some(format!("MINO_{}", long.replace('-', "_").to_uppercase())), "--{long}");
            flags += 1;
        }
        assert!(flags > 40, "{flags} flags read");
    }

    #[test]
    fn a_missing_shard_id_is_drawn_non_zero() {
        let drawn = Config::from_cli(&parse(&[]).expect("flags")).expect("valid").shard_id;
        assert_ne!(drawn.0, 0);
        assert!(parse(&["--shard-id", "0"]).is_err());
    }
}
