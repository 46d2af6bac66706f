//! Command-line flags (also read from `MINO_*` environment variables) and the
//! typed [`Config`] they become. Nothing deeper in the server reads the environment.

use clap::Parser;
use mino_protocol::ShardId;
use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

/// mino shard server: runs the 20 Hz tick for its players and serves the
/// websocket at /ws, the browser client at / (with --static-dir), /healthz,
/// /readyz and Prometheus /metrics.
#[derive(Parser, Debug, Clone)]
#[command(name = "mino-server", version, about, long_about = None)]
pub struct Cli {
    /// Address to listen on (HTTP and websocket). Port 0 picks a free port; the
    /// bound address is printed on stdout as "mino-server listening on http://ADDR".
    #[arg(long, env = "MINO_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// Folder with the built browser client (client-web/dist), served at /.
    #[arg(long, env = "MINO_STATIC_DIR")]
    pub static_dir: Option<PathBuf>,

    /// Simulation and snapshot rate, Hz (1 to 120).
    #[arg(long, env = "MINO_TICK_HZ", default_value_t = 20, value_parser = clap::value_parser!(u16).range(1..=120))]
    pub tick_hz: u16,

    /// Most players this process admits; further hellos get "busy".
    #[arg(long, env = "MINO_MAX_PLAYERS", default_value_t = NonZeroU32::new(5000).unwrap_or(NonZeroU32::MIN))]
    pub max_players: NonZeroU32,

    /// This shard's id (non-zero). Default: random.
    #[arg(long, env = "MINO_SHARD_ID")]
    pub shard_id: Option<NonZeroU32>,

    /// World width and height, world units; the world spans (0,0) to (size,size).
    #[arg(long, env = "MINO_WORLD_SIZE", default_value_t = 1000.0)]
    pub world_size: f32,

    /// Walking speed, world units per second.
    #[arg(long, env = "MINO_SPEED", default_value_t = 120.0)]
    pub speed: f32,

    /// Busy rule: refuse new players while the mean tick start lateness over the
    /// last second exceeds this many ms. 0 turns the lateness part of the rule off.
    #[arg(long, env = "MINO_BUSY_LATENESS_MS", default_value_t = 10)]
    pub busy_lateness_ms: u64,

    /// Retry-after sent with a busy refusal, ms (a random 0-50 % is added).
    #[arg(long, env = "MINO_BUSY_RETRY_MS", default_value_t = 2000)]
    pub busy_retry_ms: u32,

    /// Interval between websocket pings the server sends, ms.
    #[arg(long, env = "MINO_PING_INTERVAL_MS", default_value_t = 5000)]
    pub ping_interval_ms: u64,

    /// A peer that sent nothing (not even a pong) for this long is dropped, ms.
    #[arg(long, env = "MINO_PEER_TIMEOUT_MS", default_value_t = 15000)]
    pub peer_timeout_ms: u64,

    /// Time allowed for the HTTP upgrade and then for the first Hello, ms each.
    #[arg(long, env = "MINO_HANDSHAKE_TIMEOUT_MS", default_value_t = 10000)]
    pub handshake_timeout_ms: u64,

    /// A socket whose writes stay blocked this long is closed as too slow, ms.
    #[arg(long, env = "MINO_WRITE_TIMEOUT_MS", default_value_t = 2000)]
    pub write_timeout_ms: u64,

    /// Ticks of output a socket may fall behind before it is closed as too slow.
    #[arg(long, env = "MINO_OUTBOUND_TICKS", default_value_t = 40)]
    pub outbound_ticks: usize,

    /// Sustained input messages a player may send per second (burst: twice this).
    #[arg(long, env = "MINO_INPUT_RATE", default_value_t = 30)]
    pub input_rate: u32,

    /// Sustained chat lines a player may send per second, as a fraction (burst: 5).
    #[arg(long, env = "MINO_CHAT_RATE", default_value_t = 1.0)]
    pub chat_rate: f64,

    /// Most open connections (websockets plus plain HTTP) at once.
    #[arg(long, env = "MINO_MAX_CONNECTIONS", default_value_t = 20_000)]
    pub max_connections: usize,

    /// Kernel send buffer of each accepted socket, bytes (SO_SNDBUF). 0 keeps the
    /// kernel's autotuning. A fixed size bounds kernel memory per socket and how
    /// much a peer that stops reading can hold before it is closed as too slow.
    #[arg(long, env = "MINO_SEND_BUFFER_BYTES", default_value_t = 0)]
    pub send_buffer_bytes: usize,

    /// Time the graceful shutdown may take before tasks are abandoned, ms.
    #[arg(long, env = "MINO_SHUTDOWN_TIMEOUT_MS", default_value_t = 5000)]
    pub shutdown_timeout_ms: u64,
}

/// The server's settings, typed. Built from [`Cli`] by [`Config::from_cli`] or
/// by tests directly.
#[derive(Debug, Clone)]
pub struct Config {
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
    /// Outbound queue length, ticks.
    pub outbound_ticks: usize,
    /// Inputs per second, sustained.
    pub input_rate: u32,
    /// Chat lines per second, sustained.
    pub chat_rate: f64,
    /// Open connection cap.
    pub max_connections: usize,
    /// Fixed SO_SNDBUF, bytes; `None` = kernel autotuning.
    pub send_buffer: Option<usize>,
    /// Bound on the graceful shutdown.
    pub shutdown_timeout: Duration,
}

impl Config {
    /// Types the parsed flags; a missing shard id becomes a random non-zero one.
    pub fn from_cli(cli: &Cli) -> Config {
        Config {
            static_dir: cli.static_dir.clone(),
            tick_hz: cli.tick_hz,
            max_players: cli.max_players.get(),
            shard_id: ShardId(
                cli.shard_id
                    .map_or_else(|| rand::random_range(1..=u32::MAX), NonZeroU32::get),
            ),
            world_size: cli.world_size.max(1.0),
            speed: cli.speed.max(0.0),
            busy_lateness: (cli.busy_lateness_ms > 0)
                .then(|| Duration::from_millis(cli.busy_lateness_ms)),
            busy_retry: Duration::from_millis(cli.busy_retry_ms.into()),
            ping_interval: Duration::from_millis(cli.ping_interval_ms.max(100)),
            peer_timeout: Duration::from_millis(cli.peer_timeout_ms.max(200)),
            handshake_timeout: Duration::from_millis(cli.handshake_timeout_ms.max(100)),
            write_timeout: Duration::from_millis(cli.write_timeout_ms.max(50)),
            outbound_ticks: cli.outbound_ticks.clamp(2, 1000),
            input_rate: cli.input_rate.max(1),
            chat_rate: cli.chat_rate.max(0.01),
            max_connections: cli.max_connections.max(1),
            send_buffer: (cli.send_buffer_bytes > 0).then_some(cli.send_buffer_bytes),
            shutdown_timeout: Duration::from_millis(cli.shutdown_timeout_ms),
        }
    }

    /// The tick period (1 / tick rate).
    pub fn tick_period(&self) -> Duration {
        Duration::from_secs_f64(1.0 / f64::from(self.tick_hz))
    }
}

impl Default for Config {
    /// The defaults of the command line, with a random shard id.
    fn default() -> Self {
        Config::from_cli(&Cli::parse_from(["mino-server"]))
    }
}
