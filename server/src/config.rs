//! Command-line flags (also read from `MINO_*` environment variables) and the
//! typed [`Config`] they become. Nothing deeper in the server reads the
//! environment.
//!
//! Every numeric flag has an allowed range, checked by clap when the flags are
//! parsed: an out-of-range value stops the start with the flag's name and its
//! range (`invalid value '0' for '--tick-hz <TICK_HZ>': 0 is not in 1..=120`),
//! never a silent clamp. The one rule between two flags (the heartbeat fits
//! twice in the shard TTL) is checked by [`Config::from_cli`].

use crate::address::{parse_listen, ListenAddr};
use crate::topology::RedisTarget;
use clap::builder::RangedU64ValueParser;
use clap::{CommandFactory, FromArgMatches, Parser};
use mino_protocol::ShardId;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

/// mino shard server: runs the 20 Hz tick for its players and serves the
/// websocket at /ws, the browser client at / (with --static-dir), /healthz,
/// /readyz and Prometheus /metrics. Logs go to stderr, filtered by MINO_LOG
/// (tracing's filter syntax, e.g. `info` or `mino_server=debug`; default
/// info).
#[derive(Parser, Debug, Clone)]
#[command(name = "mino-server", version, about, long_about = None)]
pub struct Cli {
    /// Where to listen (HTTP and websocket): IP:PORT, a bare PORT (on
    /// 127.0.0.1), or unix:PATH, a Unix socket for nginx on the same machine
    /// (a stale socket left by a dead process is replaced, a live one
    /// refused; removed at exit). Port 0 picks a free port. Printed on
    /// stdout as "mino-server listening on http://ADDR" (or "on unix:PATH").
    #[arg(long, env = "MINO_LISTEN", default_value = "127.0.0.1:8080", value_parser = parse_listen)]
    pub listen: ListenAddr,

    /// Permissions of the Unix sockets this process listens on, octal (0660:
    /// its user and group may connect; put nginx's user in that group).
    #[arg(long, env = "MINO_LISTEN_MODE", default_value = "0660", value_parser = parse_mode)]
    pub listen_mode: u32,

    /// Optional admin listener: /healthz, /readyz, /metrics, the admin console
    /// (/admin/) and its API, on a listener of their own, reachable however
    /// many sockets players hold. IP:PORT, a bare PORT (127.0.0.1: loopback
    /// by default), or unix:PATH. Listening beyond loopback needs
    /// --admin-token-file. Printed on stdout as "mino-server admin on
    /// http://ADDR".
    #[arg(long, env = "MINO_ADMIN_LISTEN", value_parser = parse_listen)]
    pub admin_listen: Option<ListenAddr>,

    /// A file of admin bearer tokens, one a line: `NAME TOKEN` (NAME, the
    /// operator logged with each action: 1 to 32 of A-Z a-z 0-9 _ . @ -) or
    /// just `TOKEN` (logged as "admin"); tokens are 16 to 256 printable
    /// characters; blank lines and lines starting with # are skipped. With it,
    /// every admin route but the console's own files needs `Authorization:
    /// Bearer TOKEN` (401 otherwise). Read again when it changes and on
    /// SIGHUP.
    #[arg(long, env = "MINO_ADMIN_TOKEN_FILE")]
    pub admin_token_file: Option<PathBuf>,

    /// Folder with the built admin console (client-web/dist-admin), served at
    /// /admin/ on the admin listener.
    #[arg(long, env = "MINO_ADMIN_CONSOLE_DIR")]
    pub admin_console_dir: Option<PathBuf>,

    /// Folder with the built browser client (client-web/dist), served at /.
    #[arg(long, env = "MINO_STATIC_DIR")]
    pub static_dir: Option<PathBuf>,

    /// Simulation and snapshot rate, Hz. 1 to 120.
    #[arg(long, env = "MINO_TICK_HZ", default_value_t = 20, value_parser = clap::value_parser!(u16).range(1..=120))]
    pub tick_hz: u16,

    /// Most players this process admits; further hellos get "busy".
    /// 1 to 1,000,000.
    #[arg(long, env = "MINO_MAX_PLAYERS", default_value_t = 5000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_players: u32,

    /// This shard's id (non-zero). Default: random.
    #[arg(long, env = "MINO_SHARD_ID")]
    pub shard_id: Option<NonZeroU32>,

    /// World width and height, world units; the world spans (0,0) to
    /// (size,size). 1 to 1,000,000.
    #[arg(long, env = "MINO_WORLD_SIZE", default_value_t = 1000.0, value_parser = ranged_f32(1.0, 1_000_000.0))]
    pub world_size: f32,

    /// Walking speed, world units per second. 0 to 10,000.
    #[arg(long, env = "MINO_SPEED", default_value_t = 120.0, value_parser = ranged_f32(0.0, 10_000.0))]
    pub speed: f32,

    /// Busy rule: refuse new players while the mean tick start lateness over the
    /// last second exceeds this many ms. 0 turns the lateness part of the rule
    /// off. 0 to 10,000.
    #[arg(long, env = "MINO_BUSY_LATENESS_MS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(0..=10_000))]
    pub busy_lateness_ms: u64,

    /// Retry-after sent with a busy refusal, ms (a random 0-50 % is added).
    /// 0 to 600,000.
    #[arg(long, env = "MINO_BUSY_RETRY_MS", default_value_t = 2000, value_parser = clap::value_parser!(u32).range(0..=600_000))]
    pub busy_retry_ms: u32,

    /// Interval between websocket pings the server sends, ms (a ping goes out
    /// with the next tick's write; checked once a second). 100 to 600,000.
    #[arg(long, env = "MINO_PING_INTERVAL_MS", default_value_t = 5000, value_parser = clap::value_parser!(u64).range(100..=600_000))]
    pub ping_interval_ms: u64,

    /// A peer that sent nothing (not even a pong) for this long is dropped, ms
    /// (checked once a second). 200 to 3,600,000.
    #[arg(long, env = "MINO_PEER_TIMEOUT_MS", default_value_t = 15000, value_parser = clap::value_parser!(u64).range(200..=3_600_000))]
    pub peer_timeout_ms: u64,

    /// Time allowed for the HTTP upgrade and then for the first Hello, ms each.
    /// 100 to 600,000.
    #[arg(long, env = "MINO_HANDSHAKE_TIMEOUT_MS", default_value_t = 10000, value_parser = clap::value_parser!(u64).range(100..=600_000))]
    pub handshake_timeout_ms: u64,

    /// A socket whose writes stay blocked this long is closed as too slow, ms.
    /// 50 to 600,000.
    #[arg(long, env = "MINO_WRITE_TIMEOUT_MS", default_value_t = 2000, value_parser = clap::value_parser!(u64).range(50..=600_000))]
    pub write_timeout_ms: u64,

    /// Ticks in a row a socket's writes may stay blocked (its kernel buffer
    /// full) before it is closed as too slow. Meanwhile newer snapshots replace
    /// its unsent ones; chat and presence are kept (at most 1,024 frames).
    /// 2 to 1,000.
    #[arg(long, env = "MINO_OUTBOUND_TICKS", default_value_t = 40, value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub outbound_ticks: u32,

    /// Sustained input messages a player may send per second (burst: twice
    /// this). 1 to 10,000.
    #[arg(long, env = "MINO_INPUT_RATE", default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub input_rate: u32,

    /// Websocket pings and pongs a socket may send per second, sustained
    /// (burst: twice this); past it the socket closes with 4019. An admitted
    /// player's pings are answered with the next tick's write, the newest
    /// only. 1 to 10,000.
    #[arg(long, env = "MINO_CONTROL_RATE", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub control_rate: u32,

    /// Sustained chat lines a player may send per second, as a fraction (burst:
    /// 5). 0.01 to 1,000.
    #[arg(long, env = "MINO_CHAT_RATE", default_value_t = 1.0, value_parser = ranged_f64(0.01, 1000.0))]
    pub chat_rate: f64,

    /// Most open connections (websockets plus plain HTTP) at once. 1 to
    /// 10,000,000.
    #[arg(long, env = "MINO_MAX_CONNECTIONS", default_value_t = 20_000, value_parser = RangedU64ValueParser::<usize>::new().range(1..=10_000_000))]
    pub max_connections: usize,

    /// Kernel send buffer of each accepted socket, bytes (SO_SNDBUF). 0 keeps the
    /// kernel's autotuning. A fixed size bounds kernel memory per socket and how
    /// much a peer that stops reading can hold before it is closed as too slow.
    /// 0 to 1 GiB.
    #[arg(long, env = "MINO_SEND_BUFFER_BYTES", default_value_t = 0, value_parser = RangedU64ValueParser::<usize>::new().range(0..=1 << 30))]
    pub send_buffer_bytes: usize,

    /// Redis URL (redis://, rediss:// for TLS, redis://user:pass@host:port/db).
    /// With it, this shard joins the other shards of its place; without it, it
    /// runs standalone. Append #insecure to a rediss:// URL to accept a
    /// self-signed certificate.
    #[arg(long, env = "MINO_REDIS_URL", conflicts_with_all = ["redis_cluster", "redis_sentinel"])]
    pub redis_url: Option<String>,

    /// Redis Cluster (7.0+) seed nodes, comma-separated
    /// (redis://host:port,redis://host:port; the first URL's user, password
    /// and TLS are used for every node). Instead of --redis-url: the place's
    /// frames go over sharded pub/sub (SPUBLISH/SSUBSCRIBE), each shard's
    /// snapshots on a channel of their own, so a busy place spreads over the
    /// cluster's primaries; slot moves and failovers are followed.
    #[arg(long, env = "MINO_REDIS_CLUSTER", value_delimiter = ',', conflicts_with = "redis_sentinel")]
    pub redis_cluster: Vec<String>,

    /// Redis Sentinel URLs, comma-separated (redis://host:26379,...), with
    /// --redis-master: the shards ask the sentinels for the primary and
    /// follow its failovers. The primary is reached with the first URL's
    /// user, password, database and TLS. Instead of --redis-url.
    #[arg(long, env = "MINO_REDIS_SENTINEL", value_delimiter = ',', requires = "redis_master")]
    pub redis_sentinel: Vec<String>,

    /// With --redis-sentinel: the master's name in the sentinels'
    /// configuration (`sentinel monitor NAME ...`).
    #[arg(long, env = "MINO_REDIS_MASTER")]
    pub redis_master: Option<String>,

    /// The place this shard serves: shards with the same place and Redis share
    /// one world. 1 to 64 of A-Z a-z 0-9 _ -.
    #[arg(long, env = "MINO_PLACE", default_value = "main", value_parser = parse_place)]
    pub place: String,

    /// A shard whose heartbeat is older than this is dead to the others, ms.
    /// 200 to 600,000.
    #[arg(long, env = "MINO_SHARD_TTL_MS", default_value_t = 3000, value_parser = clap::value_parser!(u64).range(200..=600_000))]
    pub shard_ttl_ms: u64,

    /// Interval of the shard's heartbeat and of its reading of the registry, ms.
    /// 50 to 300,000, and at most half of --shard-ttl-ms.
    #[arg(long, env = "MINO_HEARTBEAT_MS", default_value_t = 500, value_parser = clap::value_parser!(u64).range(50..=300_000))]
    pub heartbeat_ms: u64,

    /// Runtime threads, 1 to 256. 1 (the default) runs the whole shard on one thread: no
    /// cross-thread wake-ups on the fan-out path, and one core per shard process
    /// (scale out with more processes). More threads spread the sockets' work.
    #[arg(long, env = "MINO_WORKER_THREADS", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub worker_threads: u16,

    /// How long a resume ticket (and a disconnected player's session) stays
    /// valid after it was issued or last refreshed, ms. 1,000 to 2,592,000,000
    /// (30 days).
    #[arg(long, env = "MINO_TICKET_TTL_MS", default_value_t = 600_000, value_parser = clap::value_parser!(u64).range(1000..=2_592_000_000))]
    pub ticket_ttl_ms: u64,

    /// Drain (SIGTERM): players told to move to another shard per second.
    /// Paced so the remaining shards are not stampeded. 1 to 1,000,000.
    #[arg(long, env = "MINO_DRAIN_RATE", default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub drain_rate: u32,

    /// Drain: longest wait for every player to leave before exiting, ms. 0 to
    /// 3,600,000.
    #[arg(long, env = "MINO_DRAIN_TIMEOUT_MS", default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(0..=3_600_000))]
    pub drain_timeout_ms: u64,

    /// Area of interest: the side of a grid cell, world units. Each tick a
    /// shard sends each socket only the cells near its player (one view frame
    /// a shard, shared by every socket whose player stands in the same cell;
    /// each cell's players encoded once). 0 (the default)
    /// sends every socket the whole place instead. At least --speed x
    /// max(--view-hysteresis-ticks, 8) / --tick-hz, so a walker never skips
    /// a cell and two approaching walkers stay in each other's prefetch ring
    /// for a whole period of it (4 ticks); at most 16,777,216 cells in the
    /// world. 0 to 1,000,000.
    #[arg(long, env = "MINO_CELL_SIZE", default_value_t = 0.0, value_parser = ranged_f32(0.0, 1_000_000.0))]
    pub cell_size: f32,

    /// Area of interest: the view radius, world units. Players within it are
    /// sent every tick (the own and adjacent cells) or every second tick; a
    /// prefetch ring of one cell beyond it every fourth tick. Default: four
    /// cells. Whole cells are sent, so the fewer cells the radius spans, the
    /// more players beyond it a socket gets: at 2 cells about 2.3 times the
    /// players within the radius, at 4 cells about 1.2 times (benches/RESULTS.md
    /// section 9). 0 to 1,000,000.
    #[arg(long, env = "MINO_VIEW_RADIUS", value_parser = ranged_f32(0.0, 1_000_000.0))]
    pub view_radius: Option<f32>,

    /// Area of interest: ticks a cell the player walked out of stays in its
    /// view (no flicker at cell borders). 0 to 200.
    #[arg(long, env = "MINO_VIEW_HYSTERESIS_TICKS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(0..=200))]
    pub view_hysteresis_ticks: u64,

    /// Area of interest: bytes of cells one socket may get a tick, on
    /// average; beyond it outer cells, then nearer ones, are sent less often
    /// (a crowd costs each socket this, not the square of the crowd). 512 to
    /// 16,777,216.
    #[arg(long, env = "MINO_VIEW_BUDGET_BYTES", default_value_t = 8192, value_parser = RangedU64ValueParser::<usize>::new().range(512..=16 << 20))]
    pub view_budget_bytes: usize,

    /// Area of interest: keyframes. 0 (the default) sends each cell at its
    /// tier's rate whether or not its players changed. N > 0: a cell of this
    /// shard whose players did not change (same ids, positions, headings)
    /// is not sent again, except in a keyframe: every N ticks each view group
    /// gets its whole view (groups take turns over the N ticks), and a socket
    /// whose player entered another cell gets its whole view at once. A
    /// standing player then costs its socket one write every N ticks, not
    /// every tick. 0 to 200.
    #[arg(long, env = "MINO_KEYFRAME_TICKS", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=200))]
    pub keyframe_ticks: u32,

    /// Identity: a JWKS file of the identity service's public keys (tokens
    /// pick theirs by `kid`; reloaded on SIGHUP and when the file changes).
    /// With a key file, a Hello's access token is verified; see --guests.
    #[arg(long, env = "MINO_AUTH_JWKS_FILE", group = "auth_keys")]
    pub auth_jwks_file: Option<PathBuf>,

    /// Identity: a PEM public key (RSA: RS256, P-256: ES256, Ed25519: EdDSA)
    /// instead of a JWKS.
    #[arg(long, env = "MINO_AUTH_PUBLIC_KEY_FILE", group = "auth_keys")]
    pub auth_public_key_file: Option<PathBuf>,

    /// Identity: a file whose bytes (a trailing newline trimmed; at least 32)
    /// are the HMAC key of HS256 tokens, instead of a public key.
    #[arg(long, env = "MINO_AUTH_HS256_SECRET_FILE", group = "auth_keys")]
    pub auth_hs256_secret_file: Option<PathBuf>,

    /// Identity: the `iss` a token must carry (unchecked when unset).
    #[arg(long, env = "MINO_AUTH_ISSUER")]
    pub auth_issuer: Option<String>,

    /// Identity: the `aud` a token must be for (unchecked when unset).
    #[arg(long, env = "MINO_AUTH_AUDIENCE")]
    pub auth_audience: Option<String>,

    /// Identity: the claim that holds the display name (checked like a
    /// Hello's name; the Hello's name is used when it is missing or invalid).
    #[arg(long, env = "MINO_AUTH_NAME_CLAIM", default_value = "name")]
    pub auth_name_claim: String,

    /// Identity: seconds of clock difference allowed on `exp` and `nbf`. 0 to
    /// 300.
    #[arg(long, env = "MINO_AUTH_LEEWAY_S", default_value_t = 30, value_parser = clap::value_parser!(u64).range(0..=300))]
    pub auth_leeway_s: u64,

    /// Whether players without a token are admitted as guests: allow (the
    /// default) or deny (every Hello needs a valid token, or a resume ticket
    /// of an account's session).
    #[arg(long, env = "MINO_GUESTS", default_value = "allow")]
    pub guests: Guests,

    /// Benchmark control only: write each frame with its own system call
    /// instead of one vectored write a tick, to measure what batching saves.
    #[arg(long, env = "MINO_UNBATCHED_WRITES", hide = true)]
    pub unbatched_writes: bool,

    /// Time the graceful shutdown may take before tasks are abandoned, ms. 0 to
    /// 600,000.
    #[arg(long, env = "MINO_SHUTDOWN_TIMEOUT_MS", default_value_t = 5000, value_parser = clap::value_parser!(u64).range(0..=600_000))]
    pub shutdown_timeout_ms: u64,
}

/// A clap parser for an `f32` within `min..=max` (NaN refused).
fn ranged_f32(min: f32, max: f32) -> impl Fn(&str) -> Result<f32, String> + Clone + Send + Sync + 'static {
    move |s| {
        let v: f32 = s.trim().parse().map_err(|e| format!("{e}"))?;
        if (min..=max).contains(&v) {
            Ok(v)
        } else {
            Err(format!("{s} is not in {min}..={max}"))
        }
    }
}

/// A clap parser for an `f64` within `min..=max` (NaN refused).
fn ranged_f64(min: f64, max: f64) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |s| {
        let v: f64 = s.trim().parse().map_err(|e| format!("{e}"))?;
        if (min..=max).contains(&v) {
            Ok(v)
        } else {
            Err(format!("{s} is not in {min}..={max}"))
        }
    }
}

/// A clap parser for a file mode in octal (`0660`, `660`), at most 0777.
fn parse_mode(s: &str) -> Result<u32, String> {
    match u32::from_str_radix(s.trim(), 8) {
        Ok(mode) if mode <= 0o777 => Ok(mode),
        _ => Err(format!("{s} is not a file mode in octal (0000 to 0777)")),
    }
}

fn parse_place(s: &str) -> Result<String, String> {
    let ok = !s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(s.to_owned())
    } else {
        Err("a place is 1 to 64 of A-Z a-z 0-9 _ -".into())
    }
}

/// The server's settings, typed. Built from [`Cli`] by [`Config::from_cli`] or
/// by tests directly.
#[derive(Debug, Clone)]
pub struct Config {
    /// The admin listener's settings.
    pub admin: AdminConfig,
    /// See [`Cli::static_dir`].
    pub static_dir: Option<PathBuf>,
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
    /// Server ping interval.
    pub ping_interval: Duration,
    /// Silence after which a peer is dropped.
    pub peer_timeout: Duration,
    /// Upgrade and hello timeout.
    pub handshake_timeout: Duration,
    /// Longest a socket write may stay blocked.
    pub write_timeout: Duration,
    /// Ticks in a row a socket may stay blocked.
    pub outbound_ticks: u32,
    /// Inputs per second, sustained.
    pub input_rate: u32,
    /// Pings and pongs per second a socket may send, sustained.
    pub control_rate: u32,
    /// Chat lines per second, sustained.
    pub chat_rate: f64,
    /// Open connection cap.
    pub max_connections: usize,
    /// Where Redis is; `None` = standalone.
    pub redis: Option<RedisTarget>,
    /// Place name (Redis key and channel prefix).
    pub place: String,
    /// Heartbeat age after which a shard is dead.
    pub shard_ttl: Duration,
    /// Heartbeat and registry read interval.
    pub heartbeat: Duration,
    /// Fixed SO_SNDBUF, bytes; `None` = kernel autotuning.
    pub send_buffer: Option<usize>,
    /// Bound on the graceful shutdown.
    pub shutdown_timeout: Duration,
    /// One write a frame instead of one a tick (benchmark control row).
    pub unbatched_writes: bool,
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
}

/// The admin listener and console (see [`Cli::admin_listen`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AdminConfig {
    /// Where it listens; `None`: no admin listener.
    pub listen: Option<ListenAddr>,
    /// The bearer tokens' file; `None`: no token asked (loopback only).
    pub token_file: Option<PathBuf>,
    /// The built console; `None`: /admin/ says it is not installed.
    pub console_dir: Option<PathBuf>,
}

/// Whether players without an access token are admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Guests {
    /// Guests play with the name they give.
    Allow,
    /// Every player needs a valid token (or a ticket of an account's session).
    Deny,
}

/// Where the identity service's keys are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuthKeys {
    /// A JWKS file.
    Jwks(PathBuf),
    /// A PEM public key.
    PublicKey(PathBuf),
    /// An HS256 secret.
    Hs256Secret(PathBuf),
}

/// How Hello tokens are verified (see [`crate::auth`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthConfig {
    /// The keys; `None`: no tokens are verified (guests only).
    pub keys: Option<AuthKeys>,
    /// The required issuer.
    pub issuer: Option<String>,
    /// The required audience.
    pub audience: Option<String>,
    /// Whether guests are admitted.
    pub guests: Guests,
    /// The display name's claim.
    pub name_claim: String,
    /// Clock difference allowed on `exp` and `nbf`.
    pub leeway: Duration,
}

/// The area-of-interest settings (see [`Cli::cell_size`] and the flags after it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AoiConfig {
    /// Cell side, world units.
    pub cell_size: f32,
    /// View radius, world units.
    pub view_radius: f32,
    /// Ticks a cell the viewer left stays in view.
    pub hysteresis_ticks: u64,
    /// Bytes a socket may get a tick, on average.
    pub budget_bytes: usize,
    /// Ticks between two keyframes of a view group; 0: no keyframes, every
    /// cell sent at its tier's rate, changed or not (see `--keyframe-ticks`).
    pub keyframe_ticks: u32,
}

/// Ticks two walkers approaching each other must take to cross one cell: two
/// (twice the speed) times the prefetch ring's base period of 4 ticks.
pub const PREFETCH_CROSSING_TICKS: u64 = 8;

/// The view radius when `--view-radius` is not given, in cells: whole cells
/// are sent, and at 4 a socket gets about 1.2 times the players within its
/// radius (2.3 times at 2 cells; benches/RESULTS.md section 9).
pub const DEFAULT_VIEW_RADIUS_CELLS: f32 = 4.0;

/// Most cells an area-of-interest grid may have (4,096 x 4,096).
pub const MAX_CELLS: u64 = 1 << 24;

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
}

impl Config {
    /// Types the parsed flags; a missing shard id becomes a random non-zero one.
    ///
    /// Errors: [`ConfigError`] when two flags disagree.
    pub fn from_cli(cli: &Cli) -> Result<Config, ConfigError> {
        if cli.heartbeat_ms > cli.shard_ttl_ms / 2 {
            return Err(ConfigError::HeartbeatTooSlow {
                heartbeat_ms: cli.heartbeat_ms,
                shard_ttl_ms: cli.shard_ttl_ms,
            });
        }
        let aoi = aoi_config(cli)?;
        if let Some(at) = cli.admin_listen.as_ref().filter(|a| !a.is_local() && cli.admin_token_file.is_none()) {
            return Err(ConfigError::AdminUnguarded(at.clone()));
        }
        let ms = Duration::from_millis;
        Ok(Config {
            admin: AdminConfig {
                listen: cli.admin_listen.clone(),
                token_file: cli.admin_token_file.clone(),
                console_dir: cli.admin_console_dir.clone(),
            },
            static_dir: cli.static_dir.clone(),
            tick_hz: cli.tick_hz,
            max_players: cli.max_players,
            shard_id: ShardId(cli.shard_id.map_or_else(|| rand::random_range(1..=u32::MAX), NonZeroU32::get)),
            world_size: cli.world_size,
            speed: cli.speed,
            busy_lateness: (cli.busy_lateness_ms > 0).then(|| ms(cli.busy_lateness_ms)),
            busy_retry: ms(cli.busy_retry_ms.into()),
            ping_interval: ms(cli.ping_interval_ms),
            peer_timeout: ms(cli.peer_timeout_ms),
            handshake_timeout: ms(cli.handshake_timeout_ms),
            write_timeout: ms(cli.write_timeout_ms),
            outbound_ticks: cli.outbound_ticks,
            input_rate: cli.input_rate,
            control_rate: cli.control_rate,
            chat_rate: cli.chat_rate,
            max_connections: cli.max_connections,
            send_buffer: (cli.send_buffer_bytes > 0).then_some(cli.send_buffer_bytes),
            redis: redis_target(cli),
            place: cli.place.clone(),
            shard_ttl: ms(cli.shard_ttl_ms),
            heartbeat: ms(cli.heartbeat_ms),
            shutdown_timeout: ms(cli.shutdown_timeout_ms),
            unbatched_writes: cli.unbatched_writes,
            ticket_ttl: ms(cli.ticket_ttl_ms),
            drain_rate: cli.drain_rate,
            drain_timeout: ms(cli.drain_timeout_ms),
            aoi,
            auth: AuthConfig {
                keys: cli
                    .auth_jwks_file
                    .clone()
                    .map(AuthKeys::Jwks)
                    .or_else(|| cli.auth_public_key_file.clone().map(AuthKeys::PublicKey))
                    .or_else(|| cli.auth_hs256_secret_file.clone().map(AuthKeys::Hs256Secret)),
                issuer: cli.auth_issuer.clone().filter(|s| !s.is_empty()),
                audience: cli.auth_audience.clone().filter(|s| !s.is_empty()),
                guests: cli.guests,
                name_claim: cli.auth_name_claim.clone(),
                leeway: Duration::from_secs(cli.auth_leeway_s),
            },
        })
    }

    /// The tick period (1 / tick rate).
    pub fn tick_period(&self) -> Duration {
        Duration::from_secs_f64(1.0 / f64::from(self.tick_hz))
    }
}

/// Where Redis is, from `--redis-url`, `--redis-cluster` or
/// `--redis-sentinel` with `--redis-master` (clap lets at most one through).
fn redis_target(cli: &Cli) -> Option<RedisTarget> {
    let nonempty =
        |v: &[String]| v.iter().filter(|u| !u.trim().is_empty()).map(|u| u.trim().to_owned()).collect::<Vec<_>>();
    let (seeds, sentinels) = (nonempty(&cli.redis_cluster), nonempty(&cli.redis_sentinel));
    if !seeds.is_empty() {
        return Some(RedisTarget::Cluster { seeds });
    }
    if let (false, Some(master)) = (sentinels.is_empty(), cli.redis_master.clone()) {
        return Some(RedisTarget::Sentinel { sentinels, master });
    }
    cli.redis_url.clone().filter(|u| !u.is_empty()).map(RedisTarget::Node)
}

/// The area of interest the flags ask for, checked.
fn aoi_config(cli: &Cli) -> Result<Option<AoiConfig>, ConfigError> {
    if cli.cell_size == 0.0 {
        return Ok(None);
    }
    // A walker covers at most one cell while the cell it left is still in
    // view, and two walking toward each other (twice the speed) take a whole
    // prefetch period (4 ticks) to cross the one-cell prefetch ring.
    let ticks = cli.view_hysteresis_ticks.max(PREFETCH_CROSSING_TICKS);
    let least = cli.speed * ticks as f32 / f32::from(cli.tick_hz);
    if cli.cell_size < least {
        return Err(ConfigError::CellTooSmall { cell_size: cli.cell_size, least });
    }
    let side = (f64::from(cli.world_size) / f64::from(cli.cell_size)).ceil() as u64;
    if side * side > MAX_CELLS {
        return Err(ConfigError::TooManyCells {
            world_size: cli.world_size,
            cell_size: cli.cell_size,
            cells: side * side,
        });
    }
    Ok(Some(AoiConfig {
        cell_size: cli.cell_size,
        view_radius: cli.view_radius.unwrap_or(DEFAULT_VIEW_RADIUS_CELLS * cli.cell_size),
        hysteresis_ticks: cli.view_hysteresis_ticks,
        budget_bytes: cli.view_budget_bytes,
        keyframe_ticks: cli.keyframe_ticks,
    }))
}

impl Default for Config {
    /// The command line's defaults, as documented on [`Cli`], standalone, with
    /// shard id 1. Reads no environment variable and draws nothing random, so
    /// unit tests and benches do not depend on the machine they run on.
    fn default() -> Self {
        let command = Cli::command().mut_args(|arg| arg.env(None::<&str>));
        let cli =
            command.try_get_matches_from(["mino-server", "--shard-id", "1"]).and_then(|m| Cli::from_arg_matches(&m));
        match cli.map_err(|e| e.to_string()).and_then(|c| Config::from_cli(&c).map_err(|e| e.to_string())) {
            Ok(config) => config,
            // The defaults are constants checked by the test below.
            Err(e) => unreachable!("the default flags are valid: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        let command = Cli::command().mut_args(|arg| arg.env(None::<&str>));
        let mut all = vec!["mino-server"];
        all.extend_from_slice(args);
        command.try_get_matches_from(all).and_then(|m| Cli::from_arg_matches(&m))
    }

    #[test]
    fn defaults_read_no_environment_and_nothing_random() {
        std::env::set_var("MINO_TICK_HZ", "7");
        let (a, b) = (Config::default(), Config::default());
        std::env::remove_var("MINO_TICK_HZ");
        assert_eq!((a.tick_hz, a.shard_id, a.redis.as_ref()), (20, ShardId(1), None));
        assert_eq!(a.shard_id, b.shard_id);
    }

    #[test]
    fn out_of_range_values_name_the_flag_and_its_range() {
        for (args, flag, range) in [
            (&["--tick-hz", "0"][..], "--tick-hz", "1..=120"),
            (&["--outbound-ticks", "1"][..], "--outbound-ticks", "2..=1000"),
            (&["--peer-timeout-ms", "5"][..], "--peer-timeout-ms", "200..=3600000"),
            (&["--world-size", "0"][..], "--world-size", "1..=1000000"),
            (&["--chat-rate", "NaN"][..], "--chat-rate", "0.01..=1000"),
            (&["--max-players", "0"][..], "--max-players", "1..=1000000"),
        ] {
            let e = parse(args).expect_err("out of range").to_string();
            assert!(e.contains(flag) && e.contains(range), "{args:?}: {e}");
        }
    }

    #[test]
    fn area_of_interest_is_off_by_default_and_checked_when_on() {
        assert_eq!(Config::default().aoi, None);
        let on = Config::from_cli(&parse(&["--cell-size", "100"]).expect("flags")).expect("valid");
        assert_eq!(
            on.aoi,
            Some(AoiConfig {
                cell_size: 100.0,
                view_radius: 400.0,
                hysteresis_ticks: 10,
                budget_bytes: 8192,
                keyframe_ticks: 0
            })
        );
        let small = Config::from_cli(&parse(&["--cell-size", "50"]).expect("flags")).expect_err("too small");
        assert!(matches!(small, ConfigError::CellTooSmall { least, .. } if least == 60.0), "{small}");
        let fast = parse(&["--cell-size", "100", "--speed", "300", "--view-hysteresis-ticks", "2"]).expect("flags");
        assert!(matches!(Config::from_cli(&fast), Err(ConfigError::CellTooSmall { least, .. }) if least == 120.0));
        let many = parse(&["--cell-size", "60", "--world-size", "1000000"]).expect("flags");
        assert!(matches!(Config::from_cli(&many), Err(ConfigError::TooManyCells { .. })));
    }

    #[test]
    fn an_admin_listener_beyond_loopback_needs_a_token_file() {
        let open = parse(&["--admin-listen", "0.0.0.0:9100"]).expect("flags");
        let e = Config::from_cli(&open).expect_err("unguarded");
        assert!(matches!(&e, ConfigError::AdminUnguarded(_)) && e.to_string().contains("--admin-token-file"), "{e}");
        let guarded = parse(&["--admin-listen", "0.0.0.0:9100", "--admin-token-file", "/etc/mino/admin-tokens"]);
        assert!(Config::from_cli(&guarded.expect("flags")).is_ok());
        let bare = Config::from_cli(&parse(&["--admin-listen", "9100"]).expect("flags")).expect("loopback");
        assert_eq!(bare.admin.listen.map(|a| a.to_string()).as_deref(), Some("127.0.0.1:9100"));
        let unix = Config::from_cli(&parse(&["--admin-listen", "unix:/run/mino/admin.sock"]).expect("flags"));
        assert!(unix.is_ok(), "a unix socket is local");
    }

    #[test]
    fn listen_takes_addresses_ports_and_unix_sockets_with_a_mode() {
        let cli = parse(&["--listen", "unix:/run/mino/shard-1.sock", "--listen-mode", "0600"]).expect("flags");
        assert_eq!(cli.listen.to_string(), "unix:/run/mino/shard-1.sock");
        assert_eq!(cli.listen_mode, 0o600);
        assert_eq!(parse(&[]).expect("defaults").listen_mode, 0o660);
        assert!(parse(&["--listen-mode", "0999"]).is_err());
        assert!(parse(&["--listen", "unix:"]).is_err());
    }

    #[test]
    fn redis_is_one_node_a_cluster_or_sentinels_never_two() {
        let target = |args: &[&str]| Config::from_cli(&parse(args).expect("flags")).expect("valid").redis;
        assert_eq!(target(&["--redis-url", "redis://a"]), Some(RedisTarget::Node("redis://a".into())));
        assert_eq!(
            target(&["--redis-cluster", "redis://a:1,redis://b:2"]),
            Some(RedisTarget::Cluster { seeds: vec!["redis://a:1".into(), "redis://b:2".into()] })
        );
        assert_eq!(
            target(&["--redis-sentinel", "redis://s:26379", "--redis-master", "mino"]),
            Some(RedisTarget::Sentinel { sentinels: vec!["redis://s:26379".into()], master: "mino".into() })
        );
        assert!(parse(&["--redis-url", "redis://a", "--redis-cluster", "redis://b"]).is_err());
        assert!(parse(&["--redis-sentinel", "redis://s"]).is_err(), "a sentinel needs --redis-master");
    }

    #[test]
    fn a_heartbeat_that_does_not_fit_twice_in_the_ttl_is_refused() {
        let cli = parse(&["--shard-ttl-ms", "1000", "--heartbeat-ms", "600"]).expect("each in range");
        let e = Config::from_cli(&cli).expect_err("too slow");
        assert_eq!(e, ConfigError::HeartbeatTooSlow { heartbeat_ms: 600, shard_ttl_ms: 1000 });
        assert!(e.to_string().contains("--heartbeat-ms") && e.to_string().contains("--shard-ttl-ms"));
    }
}
