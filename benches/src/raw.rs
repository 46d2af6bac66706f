//! The raw results of a scale run (`benches/results/raw/`), as types: what
//! the runner writes and the report reads, strictly (a missing field is an
//! error naming the file, never a dash in RESULTS.md). Loadgen's reports are
//! loadgen's own types (`mino_loadgen::report`); the rest is here:
//!
//! - `NAME.server.json`: the shards' and Redis's figures over each hold
//!   ([`Windows`]), or over a whole failover run ([`Totals`]), from the
//!   samples ([`crate::analysis`]);
//! - `redis-*.json`: what `examples/redis_ha --json` writes ([`RedisHaRun`]);
//! - `nginx/run-N-KIND/summary.json` and `nginx/compare.json` ([`NginxRun`],
//!   [`NginxCompare`]);
//! - `webtransport/run-N-KIND/summary.json` ([`WebTransportRun`]), and
//!   `lossy.json` ([`Lossy`], what the `lossy` binary writes);
//!   `decode-browser.json` ([`DecodeBrowser`], what client-web's
//!   `npm run bench:decode:browser -- --json` writes);
//! - `criterion.json` ([`Criterion`]), `peer-*.json` ([`PeerRun`]),
//!   `agents-KIND-R.json` ([`AgentsRun`], loadgen's `agents` example);
//! - `deltas-trace-GAME.json`: what `delta_trace --json` writes ([`DeltaTrace`]);
//! - `run.tsv` ([`RunLog`]) and `commands-SECTION.txt` ([`Commands`]).

use serde::de::{DeserializeOwned, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Why a raw file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RawError {
    /// The file exists but could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not what its name says (a field missing, renamed or of
    /// another type): rerun the section that writes it.
    #[error("{path}: {source} (rerun the section that writes it)")]
    Json {
        /// The file.
        path: PathBuf,
        /// What serde found.
        source: serde_json::Error,
    },
}

/// Reads `path` as a `T`; None when there is no such file (its section did
/// not run).
///
/// Errors: the file is unreadable or not a `T` ([`RawError`]).
pub fn read<T: DeserializeOwned>(path: &Path) -> Result<Option<T>, RawError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(RawError::Io { path: path.to_owned(), source }),
    };
    serde_json::from_str(&text).map(Some).map_err(|source| RawError::Json { path: path.to_owned(), source })
}

/// Writes `value` to `path` as pretty JSON with a final newline.
///
/// Errors: the file cannot be written.
pub fn write<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    std::fs::write(path, text).map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))
}

/// Counts by label (e.g. sockets closed by reason), in the order written:
/// RESULTS.md lists them as the shard's metrics did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Labelled(pub Vec<(String, u64)>);

impl Labelled {
    /// The sum over every label.
    pub fn total(&self) -> u64 {
        self.0.iter().map(|(_, n)| n).sum()
    }
}

impl Serialize for Labelled {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

impl<'de> Deserialize<'de> for Labelled {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Labelled, D::Error> {
        struct Ordered;
        impl<'de> Visitor<'de> for Ordered {
            type Value = Labelled;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of label to count")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Labelled, A::Error> {
                let mut v = Vec::new();
                while let Some(entry) = map.next_entry::<String, u64>()? {
                    v.push(entry);
                }
                Ok(Labelled(v))
            }
        }
        d.deserialize_map(Ordered)
    }
}

/// `NAME.server.json` of a walk, steps, idle, arrivals or crowd run: one
/// window per measured phase (one for all but steps).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Windows {
    /// Per phase in order; None where no plateau of the players was found.
    pub windows: Vec<Option<Window>>,
}

/// The server side of one hold: the shards' counters and Redis's CPU over
/// the last hold-length of the plateau where the shards held the players
/// the loadgen reported connected.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// Players the loadgen reported connected.
    pub players: u64,
    /// The window's length, s.
    pub seconds: f64,
    /// Each shard by name (`a`, `b`).
    pub shards: BTreeMap<String, ShardWindow>,
    /// Redis, when the run had one.
    pub redis: Option<RedisWindow>,
}

/// Latency quantiles interpolated in a Prometheus histogram's buckets, ms
/// (None without observations).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    /// Median, ms.
    pub p50: Option<f64>,
    /// 99th percentile, ms.
    pub p99: Option<f64>,
}

/// Low, middle and high quantiles interpolated in a Prometheus histogram's
/// buckets, ms.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// 5th percentile, ms.
    pub p5: f64,
    /// Median, ms.
    pub p50: f64,
    /// 95th percentile, ms.
    pub p95: f64,
}

/// One shard over a window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardWindow {
    /// Ticks a second (`mino_ticks_total`).
    pub ticks_per_s: f64,
    /// Ticks run.
    pub ticks: u64,
    /// Of those, started over a fifth of a period late.
    pub ticks_late: u64,
    /// Scheduled ticks dropped after a stall.
    pub ticks_skipped: u64,
    /// Mean players over the window.
    pub players: f64,
    /// `mino_writes_total` a socket a tick (None without ticks or players).
    pub writes_per_socket_tick: Option<f64>,
    /// `mino_frames_sent_total` a socket a tick.
    pub frames_per_socket_tick: Option<f64>,
    /// Frames sent over the window.
    pub frames_sent: u64,
    /// Bytes sent a second.
    pub sent_bytes_per_s: f64,
    /// Bytes a frame sent (None without frames).
    pub bytes_per_frame: Option<f64>,
    /// Mean tick work, ms.
    pub tick_ms_mean: f64,
    /// The tick's writes to the websockets (`mino_tick_deliver_seconds`), ms:
    /// p5, median, p95 (None from a server without the metric, or without
    /// ticks). The last socket written waits this long after the first, so
    /// the spread p95 - p5 is about the spread those sockets' gaps take
    /// from the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick_deliver_ms: Option<Spread>,
    /// Publisher's tick to the receiving shard's tick, ms.
    pub relay_lag_ms: Quantiles,
    /// Relayed snapshots replaced before the next tick.
    pub relay_dropped: u64,
    /// Sockets closed, every reason.
    pub sockets_closed: u64,
    /// Cores its process kept busy (None: its `/proc` was unreadable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_cores: Option<f64>,
    /// User CPU a frame it sent, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_user_us_per_frame_sent: Option<f64>,
    /// System CPU a frame it sent, µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_sys_us_per_frame_sent: Option<f64>,
    /// RSS at the window's end, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_bytes: Option<u64>,
    /// Seconds its threads waited for a CPU a second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runqueue_wait_share: Option<f64>,
}

/// Redis over a window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RedisWindow {
    /// Cores its process kept busy (`/proc`).
    pub cpu_cores: f64,
    /// User CPU, s.
    pub user_s: f64,
    /// System CPU, s.
    pub sys_s: f64,
    /// Commands a second (`INFO stats`; None without INFO samples).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commands_per_s: Option<f64>,
    /// PUBLISH calls a second (`INFO commandstats`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publishes_per_s: Option<f64>,
    /// Bytes in a second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_in_bytes_per_s: Option<f64>,
    /// Bytes out a second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_out_bytes_per_s: Option<f64>,
    /// The CPU Redis reports for itself (`used_cpu_user + used_cpu_sys`), cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub info_cpu_cores: Option<f64>,
}

/// `NAME.server.json` of a failover run: each shard over the whole run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Each shard by name.
    pub totals: BTreeMap<String, ShardTotals>,
}

/// One shard from its first to its last answered scrape.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ShardTotals {
    /// Busy refusals by reason.
    pub busy_refusals: Labelled,
    /// Sockets closed by reason.
    pub sockets_closed: Labelled,
    /// Relayed snapshots dropped by reason.
    pub relay_dropped: Labelled,
    /// Late ticks.
    pub ticks_late: u64,
    /// Ticks.
    pub ticks: u64,
}

/// The own-shard gap `examples/redis_ha` reports, ms.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct HaOwnGap {
    /// 95th percentile, ms.
    pub p95: f64,
    /// 99th percentile, ms.
    pub p99: f64,
    /// Largest, ms.
    pub max: f64,
    /// Samples.
    pub count: u64,
}

/// The relayed gap `examples/redis_ha` reports, ms.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct HaRelayedGap {
    /// 95th percentile, ms.
    pub p95: f64,
    /// Largest, ms.
    pub max: f64,
    /// Samples.
    pub count: u64,
}

/// One `examples/redis_ha --json` run (`redis-failover-MODE-BOTS-K.json`,
/// `redis-spread-BOTS-K.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RedisHaRun {
    /// A Redis primary killed under walking bots.
    Failover(RedisFailover),
    /// The load on each cluster primary.
    Spread(RedisSpread),
}

/// A Redis primary killed under walking bots.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RedisFailover {
    /// `cluster` or `sentinel`.
    pub mode: String,
    /// Bots asked for.
    pub bots: u64,
    /// Kill to the replica's promotion, s.
    pub promoted_s: f64,
    /// Bots not in their first session at the end.
    pub players_lost: u64,
    /// Bots connected at the end.
    pub bots_connected: u64,
    /// Bots that had to reconnect.
    pub reconnected: u64,
    /// Players the shards held.
    pub shards_hold: u64,
    /// Own-shard gap from the kill until relay was back, ms.
    pub own_gap_ms: HaOwnGap,
    /// Relayed gap, ms.
    pub relayed_gap_ms: HaRelayedGap,
    /// Each watcher's longest stop of relayed snapshots, s.
    pub relay_stop_s: Vec<f64>,
    /// When relayed snapshots flowed again after the kill, each watcher, s
    /// (None: not within 90 s).
    pub relay_back_s: Vec<Option<f64>>,
    /// Each watcher's relayed gaps from the kill to the promotion, by where
    /// the relayed shard's snapshot channel lives (issue 24).
    pub outage_relayed_gap_ms: Vec<OutageGap>,
    /// Load averages (1, 5, 15 min) before the run.
    pub load_before: Vec<f64>,
    /// And after.
    pub load_after: Vec<f64>,
}

/// One run of loadgen's `agents` example (`loadgen/examples/agents.rs`):
/// the walk's report (merged over its agents, if any) and the load average
/// around it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentsRun {
    /// The walk, as `mino-loadgen walk --json` wrote it.
    #[serde(flatten)]
    pub report: mino_loadgen::report::WalkReport,
    /// Load averages (1, 5, 15 min) before the run.
    pub load_before: Vec<f64>,
    /// And after.
    pub load_after: Vec<f64>,
}

/// One watcher's relayed gaps from a Redis primary's kill to its replica's
/// promotion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutageGap {
    /// Whether the relayed shard's snapshot channel lives on a primary that
    /// was not killed.
    pub healthy_primary: bool,
    /// Gaps counted.
    pub gaps: u64,
    /// Their p95, ms (None: no gap).
    pub p95: Option<f64>,
    /// Their longest, ms (None: no gap).
    pub max: Option<f64>,
}

/// The load on each cluster primary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RedisSpread {
    /// Bots asked for.
    pub bots: u64,
    /// Bots connected at the end.
    pub bots_connected: u64,
    /// The window, s.
    pub seconds: f64,
    /// Each primary.
    pub primaries: Vec<Primary>,
    /// Load averages before the run.
    pub load_before: Vec<f64>,
    /// And after.
    pub load_after: Vec<f64>,
}

/// One Redis Cluster primary over the spread window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Primary {
    /// Its port.
    pub port: u16,
    /// CPU, percent of a core.
    pub cpu_pct: f64,
    /// SPUBLISH calls a second.
    pub spublish_per_s: f64,
    /// Commands a second.
    pub commands_per_s: f64,
    /// Bytes sent a second, MB.
    pub sent_mb_per_s: f64,
}

/// Loadgen's percentiles as the nginx summary keeps them, ms.
pub type Gap = mino_loadgen::Summary;

/// CPU of a group of processes (the shards, or nginx's workers) over a
/// measured window, per frame the bots received.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuPerFrame {
    /// CPU seconds in the window.
    pub cpu_s: f64,
    /// Cores kept busy.
    pub cores: f64,
    /// User + system µs a frame delivered.
    pub us_per_frame: f64,
    /// User µs a frame.
    pub user_us_per_frame: f64,
    /// System µs a frame.
    pub sys_us_per_frame: f64,
    /// RSS at the window's end over the bots, bytes.
    pub rss_bytes_per_player: u64,
}

/// One run through nginx (`nginx/run-N-KIND/summary.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NginxRun {
    /// `tcp` or `unix`: how nginx reached the shards.
    pub upstream: String,
    /// Bots asked for.
    pub bots: u64,
    /// Shard processes.
    pub shard_processes: u64,
    /// nginx's `worker_processes`.
    pub nginx_workers: String,
    /// False for the control run straight to the shards.
    pub through_nginx: bool,
    /// Bots connected.
    pub connected: u64,
    /// The measured window, s.
    pub window_s: f64,
    /// Own-shard gap, ms.
    pub snapshot_gap_ms: Gap,
    /// Relayed gap, ms.
    pub relayed_snapshot_gap_ms: Gap,
    /// Frames the bots received a second.
    pub frames_per_s_delivered: f64,
    /// Frames the shards sent a second.
    pub frames_per_s_sent_by_shards: f64,
    /// Bytes the bots received a second.
    pub bytes_per_s_delivered: f64,
    /// nginx's workers.
    pub nginx: CpuPerFrame,
    /// The shards.
    pub shards: CpuPerFrame,
    /// The loadgen's own figures of the shards over its hold.
    pub shards_by_loadgen: Option<mino_loadgen::report::ServerFigures>,
    /// The machine's busy share the loadgen saw, percent.
    pub loadgen_machine_busy_pct: f64,
    /// The loadgen's CPU, percent.
    pub loadgen_cpu_pct: f64,
    /// The loadgen's verdict.
    pub judgeable: bool,
    /// The machine's busy share over the window, percent.
    pub machine_busy_pct: f64,
    /// Failures the bots saw.
    pub errors: u64,
    /// Failures by kind.
    pub error_kinds: BTreeMap<String, u64>,
    /// `uptime`'s load averages before the run ("0.52, 0.61, 0.70").
    pub load_average_before: String,
    /// And after.
    pub load_average_after: String,
}

/// One run of section 16, WebTransport beside the websocket
/// (`webtransport/run-N-KIND/summary.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WebTransportRun {
    /// `webtransport`, `websocket` (straight to the shard) or
    /// `websocket-nginx` (`wss://` through nginx with TLS).
    pub kind: String,
    /// Bots asked for.
    pub bots: u64,
    /// Bots connected at the end.
    pub connected: u64,
    /// The measured window, s.
    pub window_s: f64,
    /// Own-shard gap over the loadgen's hold, ms.
    pub snapshot_gap_ms: Gap,
    /// The same gap as the frames reached the bots' sockets (kernel receive
    /// times; websockets only: none over WebTransport, nor in older runs), ms.
    #[serde(default)]
    pub socket_gap_ms: Gap,
    /// Own-shard frames a connected bot received a second, Hz.
    pub ticks_per_s: f64,
    /// Delivered frames a second: a bot's view of one tick, however many
    /// messages or datagrams it came in (ticks a second × bots connected).
    pub view_frames_per_s_delivered: f64,
    /// Messages (websocket) or stream messages and datagrams
    /// (WebTransport) the bots received a second.
    pub messages_per_s_delivered: f64,
    /// Payload bytes the bots received a second.
    pub bytes_per_s_delivered: f64,
    /// Datagrams the shard sent a second (`mino_webtransport_datagrams_total`).
    pub datagrams_per_s_sent: f64,
    /// The shard's CPU per delivered (view) frame.
    pub shard: CpuPerFrame,
    /// nginx's workers' CPU per delivered frame (`websocket-nginx` only).
    pub nginx: Option<CpuPerFrame>,
    /// The shard's RSS at the window's end less before the bots joined,
    /// over the bots connected, bytes.
    pub shard_rss_growth_per_player_bytes: u64,
    /// The loadgen's CPU, percent of its cores.
    pub loadgen_cpu_pct: f64,
    /// The loadgen's verdict.
    pub judgeable: bool,
    /// The machine's busy share over the window, percent.
    pub machine_busy_pct: f64,
    /// Failures the bots saw.
    pub errors: u64,
    /// Failures by kind.
    pub error_kinds: BTreeMap<String, u64>,
    /// `uptime`'s load averages before the run.
    pub load_average_before: String,
    /// And after.
    pub load_average_after: String,
}

/// Issue 25's browser decode figure: what `npm run bench:decode:browser --
/// --json PATH` writes (`decode-browser.json`): a tick's view frame of
/// `players` walkers in `cells` cells applied to the cells held and read, in
/// real Chromium, by case (client-web/bench/decode-core.ts).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DecodeBrowser {
    /// Chromium's version.
    pub chromium: String,
    /// Players in view.
    pub players: u32,
    /// Cells they are in.
    pub cells: u32,
    /// Timed rounds.
    pub rounds: u32,
    /// Frames a round.
    pub batch: u32,
    /// Each case: deltas (every walker straight; a walker turning in 3
    /// cells), the full forms of every cell (a resync: what a client
    /// without deltas decodes every tick), applied but not read.
    pub cases: Vec<DecodeCase>,
}

/// One case of [`DecodeBrowser`]: microseconds a frame (the page's clock).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DecodeCase {
    /// What is decoded.
    pub name: String,
    /// Median over the rounds, µs a frame.
    pub median_us: f64,
    /// First quartile, µs.
    pub q1_us: f64,
    /// Third quartile, µs.
    pub q3_us: f64,
    /// The frame's bytes (0: not shown).
    pub bytes: u64,
}

impl DecodeBrowser {
    /// The case whose name starts with `prefix`.
    pub fn case(&self, prefix: &str) -> Option<&DecodeCase> {
        self.cases.iter().find(|c| c.name.starts_with(prefix))
    }
}

/// Issue 28's loss figure: what `lossy --out DIR` writes (`lossy.json`):
/// walkers on one shard behind the test kit's lossy link, each transport's
/// runs alternating.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Lossy {
    /// Walkers a run.
    pub bots: u32,
    /// The loadgen's hold of each run, s.
    pub hold_s: u64,
    /// Packets the link dropped each way, percent.
    pub loss_pct_each_way: f64,
    /// The link's round trip, ms.
    pub rtt_ms: u64,
    /// The link's jitter each way, ms.
    pub jitter_ms: u64,
    /// Packets the link passed over every run, both ways.
    pub packets_passed: u64,
    /// Packets it dropped.
    pub packets_dropped: u64,
    /// Each run, in the order run.
    pub runs: Vec<LossyRun>,
}

/// One run behind the lossy link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LossyRun {
    /// `websocket`, `webtransport` (the shard's default congestion
    /// controller: CUBIC, floored at 16 KiB since the window floor, bare
    /// before), `webtransport-no-floor` (`--webtransport-window-floor-bytes
    /// 0`) or `webtransport-bbr` (`--webtransport-congestion bbr`).
    pub kind: String,
    /// Bots connected at the end.
    pub connected: u64,
    /// Failures the bots saw.
    pub errors: u64,
    /// Failures by kind.
    pub error_kinds: BTreeMap<String, u64>,
    /// Own-shard snapshot gap over the hold, ms.
    pub snapshot_gap_ms: Gap,
    /// The longest own-shard gap of each bot in each 10 s of the hold, ms
    /// (`mino_loadgen::freeze`).
    pub longest_freeze_ms: Gap,
    /// Payload bytes a connected bot received a second.
    pub bytes_per_s_a_player: f64,
    /// The loadgen's CPU, percent of its cores.
    pub loadgen_cpu_pct: f64,
    /// The loadgen's verdict.
    pub judgeable: bool,
}

/// One figure over the runs of one kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Runs {
    /// Their median.
    pub median: f64,
    /// Each run's value, in order.
    pub runs: Vec<f64>,
}

/// The runs of one upstream kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NginxKind {
    /// Shards, user + system µs a frame.
    pub shard_us_per_frame: Runs,
    /// Shards, user µs a frame.
    pub shard_user_us_per_frame: Runs,
    /// Shards, system µs a frame.
    pub shard_sys_us_per_frame: Runs,
    /// nginx, µs a frame.
    pub nginx_us_per_frame: Runs,
    /// nginx, user µs a frame.
    pub nginx_user_us_per_frame: Runs,
    /// nginx, system µs a frame.
    pub nginx_sys_us_per_frame: Runs,
    /// Frames delivered a second.
    pub frames_per_s_delivered: Runs,
    /// Own gap p95, ms.
    pub snapshot_gap_p95_ms: Runs,
    /// Relayed gap p95, ms.
    pub relayed_snapshot_gap_p95_ms: Runs,
    /// The machine's busy share, percent.
    pub machine_busy_pct: Runs,
    /// Each run's load averages before and after.
    pub load_average: Vec<[String; 2]>,
}

/// `nginx/compare.json`: each kind's runs and medians, the ratio.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NginxCompare {
    /// Over loopback TCP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<NginxKind>,
    /// Over Unix sockets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unix: Option<NginxKind>,
    /// Unix median ÷ TCP median of the CPU figures (both kinds run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unix_over_tcp: Option<BTreeMap<String, f64>>,
    /// Whether the runs of the two kinds overlap, per figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_overlap: Option<BTreeMap<String, bool>>,
}

/// `criterion.json`: criterion's estimates of one `cargo bench` run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Criterion {
    /// Sorted by id.
    pub benchmarks: Vec<Benchmark>,
}

/// One criterion benchmark.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Benchmark {
    /// `group/parameter`.
    pub id: String,
    /// Median time an iteration, ns.
    pub median_ns: f64,
    /// Mean, ns.
    pub mean_ns: f64,
    /// The mean's 95 % confidence interval, ns.
    pub mean_ci_ns: [f64; 2],
    /// Throughput elements (players) an iteration, when declared.
    pub elements: Option<u64>,
}

/// Which server a peer run measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PeerServer {
    /// mino: one shard, whole-shard snapshots, loadgen's walkers.
    Mino,
    /// Colyseus: one room (`benches/peer/colyseus/`), its Node tester.
    Colyseus,
}

impl PeerServer {
    /// Its name in file names and tables.
    pub fn label(self) -> &'static str {
        match self {
            PeerServer::Mino => "mino",
            PeerServer::Colyseus => "colyseus",
        }
    }
}

/// One run of the peer section (`peer-SERVER-PLAYERS-K.json`): the same
/// walking game on one server process, measured the same way for both
/// servers (the runner reads the server's `/proc` over the hold; the
/// tester counts what its clients received).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PeerRun {
    /// The server measured.
    pub server: PeerServer,
    /// Its version (mino's commit, Colyseus's package version).
    pub version: String,
    /// What the clients were and did with each update.
    pub tester: String,
    /// Which run of the repeats (1, 2, ...); runs of the two servers alternate.
    pub run: u32,
    /// Players (clients) asked for.
    pub players: u64,
    /// Clients connected through the hold.
    pub connected: u64,
    /// The hold, s.
    pub seconds: f64,
    /// State updates (mino's snapshots, Colyseus's patches) the clients
    /// received over the hold.
    pub updates: u64,
    /// Bytes the clients received over the hold (websocket payloads).
    pub bytes: u64,
    /// Gap between consecutive updates a client received, ms.
    pub gap_ms: mino_loadgen::Summary,
    /// The server process's user CPU over the hold, s.
    pub server_user_s: f64,
    /// Its system CPU over the hold, s.
    pub server_sys_s: f64,
    /// Its RSS before the first client joined, bytes.
    pub server_rss_idle_bytes: u64,
    /// Its RSS at the end of the hold, bytes.
    pub server_rss_bytes: u64,
    /// The tester's CPU, percent of the cores it may use (its processes or
    /// threads, at most the machine's cores).
    pub tester_cpu_pct: f64,
    /// The whole machine's busy share over the hold, percent.
    pub machine_cpu_pct: f64,
    /// The tester stayed at or under its CPU limit (70 %).
    pub judgeable: bool,
}

impl PeerRun {
    /// Server CPU (user + system) per update delivered, µs.
    pub fn cpu_per_update_us(&self) -> Option<f64> {
        (self.updates > 0).then(|| (self.server_user_s + self.server_sys_s) * 1e6 / self.updates as f64)
    }

    /// Server RSS growth per connected player, bytes.
    pub fn memory_per_player(&self) -> Option<f64> {
        (self.connected > 0)
            .then(|| self.server_rss_bytes.saturating_sub(self.server_rss_idle_bytes) as f64 / self.connected as f64)
    }

    /// Bytes a client received a second.
    pub fn bytes_per_client_per_s(&self) -> Option<f64> {
        (self.connected > 0 && self.seconds > 0.0).then(|| self.bytes as f64 / self.connected as f64 / self.seconds)
    }

    /// The loadgen's verdict of the run.
    pub fn verdict(&self) -> mino_loadgen::report::Verdict {
        mino_loadgen::report::Verdict::of(self.judgeable)
    }
}

/// The encoding protocol 4 chose, as [`DeltaTrace`]'s rows name it.
pub const CHOSEN_ENCODING: &str = "delta vs heading-step prediction, bytes";

/// Protocol 5's framing, as the trace's rows name it after [`CHOSEN_ENCODING`].
pub const PROTOCOL_5_FRAMING: &str = "an empty delta said by its cell's reference (protocol 5)";

/// `deltas-trace-GAME.json`: the bytes of candidate encodings of the cells'
/// entries over a recorded trace of a game (`delta_trace walk|crowd --json
/// FILE`, `benches/src/bin/delta_trace.rs`), what its table prints.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeltaTrace {
    /// `walk` or `crowd`.
    pub game: String,
    /// Players.
    pub players: u32,
    /// Shards they are spread over.
    pub shards: u32,
    /// The world's side, world units.
    pub side: f64,
    /// Ticks recorded.
    pub ticks: u64,
    /// Players in a socket's view's cells, mean over socket ticks.
    pub players_in_view: f64,
    /// One row an encoding, in the table's order.
    pub rows: Vec<TraceRow>,
    /// Cells a socket a tick sent by full frames.
    pub full_cells_per_socket_tick: f64,
    /// Items a socket a tick sent by deltas.
    pub delta_items_per_socket_tick: f64,
    /// Of those, the share sent as full forms (a cell new to the view), %.
    pub full_form_pct: f64,
    /// Records a socket a tick: turns, residuals, enters, leaves.
    pub turns: f64,
    /// Residual records a socket a tick.
    pub residuals: f64,
    /// Enter records a socket a tick.
    pub enters: f64,
    /// Leave records a socket a tick.
    pub leaves: f64,
    /// Full frames' entry bytes a socket a second, bytes/s.
    pub full_entry_bytes_per_s: f64,
    /// The due rule the trace ran with: `spread` (the server's) or
    /// `uniform` (every cell of a period due on the same ticks); absent in
    /// traces before it was a choice: the server's.
    #[serde(default = "spread")]
    pub phase: String,
    /// Enters a socket a tick of players that were in a neighbouring cell
    /// of their shard at the delta's base step (absent before it was
    /// counted: 0).
    #[serde(default)]
    pub movers: f64,
    /// Of those, the ones the move-ins row sends as moves.
    #[serde(default)]
    pub moveins: f64,
}

/// [`DeltaTrace::phase`]'s value in traces before it was recorded.
fn spread() -> String {
    "spread".to_owned()
}

/// One encoding over a trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceRow {
    /// What it is (the chosen one is [`CHOSEN_ENCODING`]).
    pub encoding: String,
    /// Entry bytes a player in view a tick, bytes.
    pub entry_bytes_per_player_tick: f64,
    /// Entry bytes a socket a tick, bytes.
    pub entry_bytes_per_socket_tick: f64,
    /// Item or run headers a socket a tick, bytes.
    pub item_bytes_per_socket_tick: f64,
    /// Frame headers a socket a tick, bytes.
    pub frame_bytes_per_socket_tick: f64,
    /// Everything a socket a second, bytes/s.
    pub bytes_per_socket_s: f64,
}

impl DeltaTrace {
    /// The table `delta_trace` prints and RESULTS.md shows (the chosen
    /// encoding's row in bold when `mark_chosen`).
    pub fn markdown(&self, mark_chosen: bool) -> String {
        let mut out = format!(
            "{} players over {} shard(s), a {:.0}-unit world, {} ticks; a socket sees {:.1} players in its view's cells\n\n",
            self.players, self.shards, self.side, self.ticks, self.players_in_view
        );
        out.push_str(
            "| encoding | entry bytes / player in view / tick | entries B/socket/tick | + item or run headers | + frame headers | all, B/socket/s |\n|---|---|---|---|---|---|\n",
        );
        for r in &self.rows {
            let name = if mark_chosen && r.encoding == CHOSEN_ENCODING {
                format!("**{}**", r.encoding)
            } else {
                r.encoding.clone()
            };
            out.push_str(&format!(
                "| {name} | {:.3} | {:.1} | {:.1} | {:.1} | {:.0} |\n",
                r.entry_bytes_per_player_tick,
                r.entry_bytes_per_socket_tick,
                r.item_bytes_per_socket_tick,
                r.frame_bytes_per_socket_tick,
                r.bytes_per_socket_s
            ));
        }
        out.push_str(&format!(
            "\nA socket a tick: {:.1} cells sent by full frames, {:.1} items by deltas ({:.2} % of them full forms: a cell new to the view); records a tick: {:.2} turns, {:.3} residuals, {:.2} enters, {:.2} leaves. Full frames: {:.0} B/socket/s of entries.\n",
            self.full_cells_per_socket_tick,
            self.delta_items_per_socket_tick,
            self.full_form_pct,
            self.turns,
            self.residuals,
            self.enters,
            self.leaves,
            self.full_entry_bytes_per_s,
        ));
        if self.movers > 0.0 {
            out.push_str(&format!(
                "Enters from a neighbouring cell a socket a tick: {:.2}, of them sent as moves by the move-ins row: {:.2}.\n",
                self.movers, self.moveins
            ));
        }
        out
    }

    /// The chosen encoding's row.
    pub fn chosen(&self) -> Option<&TraceRow> {
        self.rows.iter().find(|r| r.encoding == CHOSEN_ENCODING)
    }
}

/// `run.tsv`: `key<TAB>value` lines in order (a rerun appends its own).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunLog {
    /// The lines, in order; keys repeat (binaries, reruns).
    pub lines: Vec<(String, String)>,
}

impl RunLog {
    /// Reads `path`; empty when there is no such file.
    ///
    /// Errors: unreadable.
    pub fn read(path: &Path) -> Result<RunLog, RawError> {
        Ok(RunLog { lines: tab_lines(path)? })
    }

    /// The first value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.lines.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Appends `key<TAB>value` to the file at `path`.
    ///
    /// Errors: the file cannot be written.
    pub fn append(path: &Path, key: &str, value: &str) -> anyhow::Result<()> {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        writeln!(f, "{key}\t{value}")?;
        Ok(())
    }
}

/// `commands-SECTION.txt`: `label<TAB>command` lines, every command a
/// section ran as RESULTS.md shows it.
pub type Commands = Vec<(String, String)>;

/// Reads `label<TAB>value` lines (lines without a tab skipped); empty when
/// there is no such file.
///
/// Errors: unreadable.
pub fn tab_lines(path: &Path) -> Result<Vec<(String, String)>, RawError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(RawError::Io { path: path.to_owned(), source }),
    };
    Ok(text.lines().filter_map(|l| l.split_once('\t')).map(|(k, v)| (k.to_owned(), v.to_owned())).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labelled_counts_keep_their_order() {
        let l: Labelled = serde_json::from_str(r#"{"too_slow": 2, "client_closed": 5}"#).expect("a map");
        assert_eq!(l.0, [("too_slow".to_owned(), 2), ("client_closed".to_owned(), 5)]);
        assert_eq!(l.total(), 7);
        assert_eq!(serde_json::to_string(&l).expect("json"), r#"{"too_slow":2,"client_closed":5}"#);
    }

    #[test]
    fn a_trace_prints_its_rows_and_marks_the_chosen_encoding() {
        let row = |encoding: &str, per_player: f64| TraceRow {
            encoding: encoding.to_owned(),
            entry_bytes_per_player_tick: per_player,
            entry_bytes_per_socket_tick: 12.5,
            item_bytes_per_socket_tick: 3.0,
            frame_bytes_per_socket_tick: 40.0,
            bytes_per_socket_s: 1110.0,
        };
        let t = DeltaTrace {
            game: "walk".into(),
            players: 1000,
            shards: 2,
            side: 1581.1,
            ticks: 400,
            players_in_view: 98.04,
            rows: vec![row("full, fixed 10 B (today: 6 B runs, 52 B frames)", 10.0), row(CHOSEN_ENCODING, 0.1275)],
            full_cells_per_socket_tick: 40.0,
            delta_items_per_socket_tick: 20.0,
            full_form_pct: 1.5,
            turns: 1.0,
            residuals: 0.0,
            enters: 0.2,
            leaves: 0.2,
            full_entry_bytes_per_s: 19608.0,
            phase: "spread".into(),
            movers: 0.2,
            moveins: 0.1,
        };
        let text = t.markdown(true);
        assert!(text.contains("a socket a tick: 0.20, of them sent as moves by the move-ins row: 0.10."), "{text}");
        // A trace written before the phase and the movers were recorded
        // reads as the server's rule, with no movers counted.
        let mut old = serde_json::to_value(&t).expect("json");
        for key in ["phase", "movers", "moveins"] {
            old.as_object_mut().expect("an object").remove(key);
        }
        let old: DeltaTrace = serde_json::from_value(old).expect("an old trace");
        assert_eq!((old.phase.as_str(), old.movers), ("spread", 0.0));
        assert!(!old.markdown(true).contains("move-ins"));
        assert!(
            text.starts_with("1000 players over 2 shard(s), a 1581-unit world, 400 ticks; a socket sees 98.0 players"),
            "{text}"
        );
        assert!(text.contains(&format!("| **{CHOSEN_ENCODING}** | 0.128 | 12.5 | 3.0 | 40.0 | 1110 |")), "{text}");
        assert!(!t.markdown(false).contains("**"));
        assert_eq!(t.chosen().map(|r| r.entry_bytes_per_player_tick), Some(0.1275));
        let back: DeltaTrace = serde_json::from_str(&serde_json::to_string(&t).expect("json")).expect("a trace");
        assert_eq!(back, t);
    }

    #[test]
    fn a_missing_field_is_an_error_naming_the_file() {
        let dir = std::env::temp_dir().join(format!("mino-raw-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("x.server.json");
        std::fs::write(&path, r#"{"totals": {"a": {"busy_refusals": {}, "sockets_closed": {}, "ticks": 3}}}"#)
            .expect("write");
        let err = read::<Totals>(&path).expect_err("relay_dropped is missing");
        assert!(err.to_string().contains("x.server.json") && err.to_string().contains("relay_dropped"), "{err}");
        assert!(read::<Totals>(&dir.join("absent.json")).expect("no file is no section").is_none());
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// `deltas-crowd-core-FRAMES.json`: a crowd standing in one cell run through
/// the shard core alone (`delta_cost --scenario crowd --json FILE`,
/// `benches/src/bin/delta_cost.rs`): two shards' ticks with every player a
/// socket, no socket, bot or other process; what the shards decide to send
/// each socket, apart from the machine that carries it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CrowdCore {
    /// `deltas` or `full`: what the sockets take.
    pub frames: String,
    /// Players, over the two shards.
    pub players: u32,
    /// The share of the crowd taking a short step now and then (`--shuffle`).
    pub shuffle: f32,
    /// Ticks of gathering before the measured ones.
    pub warmup: u64,
    /// Ticks measured (after the gathering).
    pub ticks: u64,
    /// Players within [`CrowdCore::gather_radius`] of the point when the
    /// measured ticks began.
    pub gathered: u32,
    /// How near the point a player counts as gathered, world units (the
    /// loadgen's crowd radius).
    pub gather_radius: f32,
    /// Gaps between a socket's view frames with a section of its own
    /// shard over the measured ticks, ms (a tick is 50 ms), across every
    /// socket: the loadgen's own gap.
    pub gap_ms: CoreGaps,
    /// The same of the other shard's sections: the relayed gap.
    pub relayed_gap_ms: CoreGaps,
    /// View-frame bytes a socket a tick (websocket headers included).
    pub bytes_per_socket_tick: f64,
    /// View frames a socket a tick.
    pub frames_per_socket_tick: f64,
    /// Wall time of both shards' ticks (`Shard::tick` alone), ms a tick, on
    /// the machine that ran it.
    pub ms_per_tick: f64,
}

/// Gaps between frames, ms.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CoreGaps {
    /// Gaps counted.
    pub count: u64,
    /// Median, ms.
    pub p50: f64,
    /// 95th percentile, ms.
    pub p95: f64,
    /// Longest, ms.
    pub max: f64,
}
