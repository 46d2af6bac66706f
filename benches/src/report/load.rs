//! The raw results of a run loaded by section, strictly: a file that is
//! there must be what its name says (or loading fails, naming it); a
//! section whose files are absent did not run and is reported so.

use crate::raw::{
    self, Commands, Criterion, CrowdCore, DecodeBrowser, DeltaTrace, Lossy, NginxCompare, NginxRun, RawError,
    RedisFailover, RedisHaRun, RedisSpread, RunLog, Totals, WebTransportRun, Window, Windows,
};
use crate::section::Section;
use mino_loadgen::report::crowd::CrowdReport;
use mino_loadgen::report::{ArrivalsReport, FailoverReport, IdleReport, StepReport, StepsReport, WalkReport};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A number as the raw file wrote it: an integer stays an integer when
/// RESULTS.md quotes it as it is (`400`, not `400.0`; `12.0` stays `12.0`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(transparent)]
pub struct Num(pub serde_json::Number);

impl Num {
    /// The value.
    pub fn f(&self) -> f64 {
        self.0.as_f64().unwrap_or(f64::NAN)
    }
}

impl std::fmt::Display for Num {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A loadgen report with the server-side window of each of its phases.
pub type Sampled<R> = (R, Option<Window>);

/// The two kinds of a control pair.
#[derive(Clone, Debug, Default)]
pub struct Control {
    /// Batched writes (the default), in run order.
    pub batched: Vec<Sampled<WalkReport>>,
    /// `--unbatched-writes`.
    pub unbatched: Vec<Sampled<WalkReport>>,
}

/// Area-of-interest runs at one player count, by mode.
#[derive(Clone, Debug, Default)]
pub struct AoiRuns {
    /// At a radius of 4 cells.
    pub on: Option<Sampled<WalkReport>>,
    /// At a radius of 2 cells.
    pub on2: Option<Sampled<WalkReport>>,
    /// Without area of interest (the control).
    pub off: Option<Sampled<WalkReport>>,
}

/// Section 15's runs of one kind at one count: bots taking deltas and bots
/// taking full frames (the control), each in run order.
#[derive(Clone, Debug)]
pub struct FramesPair<R> {
    /// Players (bots).
    pub players: u64,
    /// `deltas-KIND-N-deltas-I`.
    pub deltas: Vec<Sampled<R>>,
    /// `deltas-KIND-N-full-I`.
    pub full: Vec<Sampled<R>>,
}

/// Section 15, shared delta frames.
#[derive(Clone, Debug, Default)]
pub struct DeltaRuns {
    /// `deltas-trace-walk.json`.
    pub trace_walk: Option<DeltaTrace>,
    /// `deltas-trace-walk-uniform.json`: the same walk with every cell of a
    /// period due on the same ticks.
    pub trace_walk_uniform: Option<DeltaTrace>,
    /// `deltas-trace-crowd.json`.
    pub trace_crowd: Option<DeltaTrace>,
    /// `deltas-crowd-core-deltas.json` and `-full.json`: the crowd through
    /// the shard core alone, deltas and the control.
    pub crowd_core: Option<(CrowdCore, CrowdCore)>,
    /// Walkers with area of interest.
    pub aoi: Option<FramesPair<WalkReport>>,
    /// Walkers on the whole shard.
    pub whole: Option<FramesPair<WalkReport>>,
    /// The crowd in one cell.
    pub crowd: Option<FramesPair<CrowdReport>>,
}

/// The original's published figures (`benches/original.json`, transcribed
/// from its write-up).
#[derive(Clone, Debug, Deserialize)]
pub struct Original {
    /// Snapshot gap p95 against players.
    pub gap_p95_ms: OrigGap,
    /// Server and nginx CPU per frame.
    pub cpu_per_frame_us: OrigCpu,
    /// Ticks per second at the highest counts.
    pub ticks_per_s: OrigTicks,
    /// Over a Unix socket against loopback TCP.
    pub unix_socket: OrigUnix,
    /// Arrivals.
    pub arrivals: OrigArrivals,
    /// Batched writes.
    pub batching: OrigBatching,
    /// Idle websockets.
    pub idle: OrigIdle,
    /// Failover.
    pub failover: OrigFailover,
}

/// The original's gap rows.
#[derive(Clone, Debug, Deserialize)]
pub struct OrigGap {
    /// Where it ran.
    pub setup: String,
    /// One row a player count.
    pub rows: Vec<OrigGapRow>,
}

/// One gap row.
#[derive(Clone, Debug, Deserialize)]
pub struct OrigGapRow {
    /// Players.
    pub players: u64,
    /// Gap p95, ms.
    pub p95_ms: f64,
    /// Whether the original judged it.
    pub judgeable: bool,
}

/// The original's CPU rows.
#[derive(Clone, Debug, Deserialize)]
pub struct OrigCpu {
    /// One row a player count.
    pub rows: Vec<OrigCpuRow>,
    /// Cores at 1,000 players.
    pub cores_at_1000: OrigCores,
}

/// One CPU row.
#[derive(Clone, Debug, Deserialize)]
pub struct OrigCpuRow {
    /// Players.
    pub players: u64,
    /// Server µs a frame.
    pub server_us: f64,
    /// nginx µs a frame.
    pub nginx_us: f64,
}

/// Cores at 1,000 players.
#[derive(Clone, Debug, Deserialize)]
pub struct OrigCores {
    /// The server process.
    pub server: Num,
    /// nginx.
    pub nginx: Num,
}

/// The original's ticks rows.
#[derive(Clone, Debug, Deserialize)]
pub struct OrigTicks {
    /// Where it ran.
    pub setup: String,
    /// One row a player count.
    pub rows: Vec<OrigTicksRow>,
}

/// One ticks row.
#[derive(Clone, Debug, Deserialize)]
pub struct OrigTicksRow {
    /// Players.
    pub players: u64,
    /// Over loopback TCP.
    pub loopback_tcp: f64,
    /// Over a Unix socket.
    pub unix_socket: f64,
}

/// Unix socket against loopback TCP.
#[derive(Clone, Debug, Deserialize)]
pub struct OrigUnix {
    /// Server CPU a frame, Unix ÷ TCP.
    pub server_cpu_per_frame_ratio: f64,
    /// Where it ran.
    pub setup: String,
    /// What it says.
    pub note: String,
}

/// The original's arrivals.
#[derive(Clone, Debug, Deserialize)]
pub struct OrigArrivals {
    /// Players arriving.
    pub players: u64,
    /// About this many a second.
    pub rate_per_s: Num,
    /// Joins timed out before its fix.
    pub timed_out_before: Num,
    /// And after.
    pub timed_out_after: Num,
    /// Memory before its fix, MB.
    pub memory_before_mb: Num,
    /// And after, MB.
    pub memory_after_mb: Num,
}

/// The original's batching figures.
#[derive(Clone, Debug, Deserialize)]
pub struct OrigBatching {
    /// Players admitted batched.
    pub admitted_batched: u64,
    /// Unbatched.
    pub admitted_unbatched: u64,
    /// Cores batched.
    pub cores_batched: Num,
    /// Cores unbatched.
    pub cores_unbatched: Num,
    /// What it says.
    pub note: String,
}

/// The original's idle websockets.
#[derive(Clone, Debug, Deserialize)]
pub struct OrigIdle {
    /// Idle websockets.
    pub connections: u64,
    /// Process bytes a connection.
    pub process_bytes_per_conn: f64,
    /// One message to all, core seconds, low.
    pub broadcast_core_s_low: Num,
    /// And high.
    pub broadcast_core_s_high: Num,
}

/// The original's failover.
#[derive(Clone, Debug, Deserialize)]
pub struct OrigFailover {
    /// Close to Welcome, ms.
    pub welcome_ms: Num,
    /// Close to back in place, ms.
    pub back_in_place_ms: Num,
    /// Where it ran.
    pub setup: String,
}

/// `client.json`: the browser client's figures from its end-to-end tests.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientFigures {
    /// Keydown to the own label moving, loopback.
    pub keydown_loopback: Option<Keydown>,
    /// The same over a 100 ms round trip.
    pub keydown_rtt100: Option<Keydown>,
    /// Prediction error over a 100 ms round trip.
    pub prediction_error_rtt100: Option<PredictionError>,
    /// A standalone restart: live again after, ms.
    pub restart_back_ms: Option<f64>,
    /// A page too slow for its frames.
    pub slow_page: Option<SlowPage>,
}

/// Keydown presses.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Keydown {
    /// Median, ms.
    pub median_ms: f64,
    /// Each press, ms.
    pub samples_ms: Vec<f64>,
}

/// Prediction error samples, world units.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PredictionError {
    /// Samples.
    pub samples: Num,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// Largest.
    pub max: f64,
    /// Snaps.
    pub snaps: Num,
    /// One step, world units.
    pub step_units: Num,
    /// The uplink delay's spread, ms.
    pub up_spread_ms: Option<f64>,
    /// The bound p95 is held to.
    pub bound: Option<f64>,
}

/// A page too slow for its frames.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SlowPage {
    /// Work a frame, ms.
    pub burn_ms_per_frame: Num,
    /// Snapshots skipped in 2 s.
    pub skipped: Num,
    /// Drawn behind the newest snapshot, ms.
    pub render_lag_ms: f64,
    /// The page's ping, ms.
    pub ping_ms: f64,
    /// Current again after, ms.
    pub current_again_ms: f64,
}

/// `client-behind-{before,after}-K.json`: `npm run figure -- --json`.
#[derive(Clone, Debug, Deserialize)]
pub struct Behind {
    /// The figures (None: the run wrote none).
    pub result: Option<BehindResult>,
}

/// One falling-behind run.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BehindResult {
    /// Walking bots.
    pub bots: u64,
    /// Chromium's CPU throttle.
    pub cpu_throttle: Num,
    /// The page's ping, median, ms.
    pub ping_ms_median: f64,
    /// And largest.
    pub ping_ms_max: f64,
    /// Drawn behind, median, ms.
    pub render_lag_ms_median: f64,
    /// And p95.
    pub render_lag_ms_p95: f64,
    /// The HUD's delay, ms.
    pub interp_delay_ms_median: f64,
    /// Frames a second.
    pub fps_median: f64,
    /// Snapshots skipped (None: not counted).
    pub frames_skipped: Option<f64>,
    /// Share of the time the HUD said catching up.
    pub hud_catching_up_share: Option<f64>,
    /// The load average.
    pub load_average: Option<f64>,
}

/// `heap-idle-N.json`: heaptrack's summaries of idle websockets.
#[derive(Clone, Debug, Deserialize)]
pub struct HeapIdle {
    /// Idle websockets.
    pub connections: u64,
    /// How it was made.
    pub command: String,
    /// Before and after.
    pub runs: HeapRuns,
    /// A profile taken later, of another count and binary.
    #[serde(default)]
    pub later: Option<LaterHeap>,
}

/// A heap profile taken after [`HeapRuns`], as `benches/heap-idle.sh` prints it.
#[derive(Clone, Debug, Deserialize)]
pub struct LaterHeap {
    /// Idle websockets.
    pub connections: u64,
    /// How it was made.
    pub command: String,
    /// Its summary.
    #[serde(flatten)]
    pub run: HeapRun,
}

/// Before and after.
#[derive(Clone, Debug, Deserialize)]
pub struct HeapRuns {
    /// Before.
    pub before: HeapRun,
    /// After.
    pub after: HeapRun,
}

/// One heap profile.
#[derive(Clone, Debug, Deserialize)]
pub struct HeapRun {
    /// What was profiled.
    pub what: String,
    /// Live heap a connection, bytes.
    pub live_heap_bytes_per_connection: f64,
    /// The biggest sites: (site, bytes a connection).
    pub top: Vec<(String, u64)>,
}

/// `kernel-slab-idle-N.json`: the kernel's slab growth with idle websockets.
#[derive(Clone, Debug, Deserialize)]
pub struct KernelSlab {
    /// Idle websockets.
    pub connections: u64,
    /// Growth a connection, both ends, bytes.
    pub bytes_per_connection_both_ends: f64,
    /// A socket end, bytes.
    pub bytes_per_end: f64,
    /// How it was made.
    pub command: String,
}

/// The raw results of a run, by section.
#[derive(Debug)]
pub struct Raw {
    /// The folder.
    pub dir: PathBuf,
    /// The original's figures.
    pub original: Original,
    /// One shard, each step with its window.
    pub one: Vec<Sampled<StepReport>>,
    /// Two shards.
    pub two: Vec<Sampled<StepReport>>,
    /// Batched against unbatched writes, by players.
    pub control: BTreeMap<u64, Control>,
    /// Idle websockets, in file order.
    pub idle: Vec<Sampled<IdleReport>>,
    /// The same with glibc's malloc.
    pub idle_glibc: Vec<Sampled<IdleReport>>,
    /// Arrivals.
    pub arrivals: Option<ArrivalsReport>,
    /// Failover: kill, then drain.
    pub failover_kill: Option<FailoverReport>,
    /// Drain.
    pub failover_drain: Option<FailoverReport>,
    /// Each shard over the kill run.
    pub failover_kill_totals: Option<Totals>,
    /// And the drain run.
    pub failover_drain_totals: Option<Totals>,
    /// Area of interest by players.
    pub aoi: BTreeMap<u64, AoiRuns>,
    /// Crowds by bots.
    pub crowd: BTreeMap<u64, Sampled<CrowdReport>>,
    /// Redis primary killed: cluster runs, in run order.
    pub redis_cluster: Vec<RedisFailover>,
    /// Sentinel runs.
    pub redis_sentinel: Vec<RedisFailover>,
    /// The load on each primary, by players, in run order.
    pub redis_spread: BTreeMap<u64, Vec<RedisSpread>>,
    /// Through nginx: each run in the order run.
    pub nginx_runs: Vec<NginxRun>,
    /// Their medians.
    pub nginx: Option<NginxCompare>,
    /// WebTransport beside the websocket: each run, by run number then kind.
    pub webtransport: Vec<WebTransportRun>,
    /// Both transports behind the lossy link (`lossy.json`).
    pub lossy: Option<Lossy>,
    /// The browser's decode time (`decode-browser.json`).
    pub decode_browser: Option<DecodeBrowser>,
    /// Criterion's estimates.
    pub criterion: Option<Criterion>,
    /// The browser client.
    pub client: Option<ClientFigures>,
    /// Falling behind, before.
    pub behind_before: Vec<Option<BehindResult>>,
    /// And after.
    pub behind_after: Vec<Option<BehindResult>>,
    /// The heap profile.
    pub heap: Option<HeapIdle>,
    /// The kernel's slab.
    pub slab: Option<KernelSlab>,
    /// `run.tsv`.
    pub run: RunLog,
    /// Every section's commands, in section order.
    pub commands: Commands,
    /// The peer section's runs (see [`crate::peer`]).
    pub peer: Vec<raw::PeerRun>,
    /// Bots over agents: each run's kind (`process`, `1`, `3`, `1x6`...),
    /// number and report, in the order run (`commands-agents.txt`).
    pub agents: Vec<(String, u32, raw::AgentsRun)>,
    /// Shared delta frames against full frames.
    pub deltas: DeltaRuns,
}

/// Why the raw results could not be loaded.
pub type LoadError = RawError;

impl Raw {
    /// Loads `dir` with the original's figures from `original`.
    ///
    /// Errors: a file that is there is unreadable or not what its name says.
    pub fn load(dir: &Path, original: &Path) -> Result<Raw, LoadError> {
        let file = |name: &str| dir.join(name);
        let original = raw::read::<Original>(original)?.ok_or_else(|| missing(original))?;
        let mut control = BTreeMap::new();
        for name in names(dir, "control-", "-batched-")? {
            let Some(n) = name.split('-').nth(1).and_then(|n| n.parse::<u64>().ok()) else { continue };
            control.entry(n).or_insert(Control {
                batched: runs(dir, &format!("control-{n}-batched-"))?,
                unbatched: runs(dir, &format!("control-{n}-unbatched-"))?,
            });
        }
        let mut aoi: BTreeMap<u64, AoiRuns> = BTreeMap::new();
        for name in names(dir, "aoi-", "")? {
            let parts: Vec<&str> = name.split('-').collect();
            let [_, n, mode] = parts[..] else { continue };
            let Ok(n) = n.parse::<u64>() else { continue };
            let slot = match mode {
                "on" => &mut aoi.entry(n).or_default().on,
                "on2" => &mut aoi.entry(n).or_default().on2,
                "off" => &mut aoi.entry(n).or_default().off,
                _ => continue,
            };
            *slot = sampled(dir, &name)?;
        }
        let mut crowd = BTreeMap::new();
        for name in names(dir, "crowd-", "")? {
            let Some(n) = name.strip_prefix("crowd-").and_then(|n| n.parse::<u64>().ok()) else { continue };
            if let Some(r) = sampled(dir, &name)? {
                crowd.insert(n, r);
            }
        }
        let mut redis_spread: BTreeMap<u64, Vec<RedisSpread>> = BTreeMap::new();
        for run in redis_runs(dir, "redis-spread-")? {
            if let RedisHaRun::Spread(s) = run {
                redis_spread.entry(s.bots).or_default().push(s);
            }
        }
        let failovers = |mode: &str| -> Result<Vec<RedisFailover>, LoadError> {
            Ok(redis_runs(dir, &format!("redis-failover-{mode}-"))?
                .into_iter()
                .filter_map(|r| match r {
                    RedisHaRun::Failover(f) => Some(f),
                    RedisHaRun::Spread(_) => None,
                })
                .collect())
        };
        let mut commands = Vec::new();
        for s in Section::ALL {
            commands.extend(raw::tab_lines(&file(&format!("commands-{}.txt", s.label())))?);
        }
        Ok(Raw {
            original,
            one: steps(dir, "one-shard")?,
            two: steps(dir, "two-shards")?,
            control,
            idle: runs(dir, "idle-")?,
            idle_glibc: runs(dir, "malloc-glibc-")?,
            arrivals: raw::read(&file("arrivals.json"))?,
            failover_kill: raw::read(&file("failover-kill.json"))?,
            failover_drain: raw::read(&file("failover-drain.json"))?,
            failover_kill_totals: raw::read(&file("failover-kill.server.json"))?,
            failover_drain_totals: raw::read(&file("failover-drain.server.json"))?,
            aoi,
            crowd,
            redis_cluster: failovers("cluster")?,
            redis_sentinel: failovers("sentinel")?,
            redis_spread,
            nginx_runs: nginx_runs(dir)?,
            nginx: raw::read(&file("nginx/compare.json"))?,
            webtransport: numbered_runs(dir, "webtransport")?,
            lossy: raw::read(&file("lossy.json"))?,
            decode_browser: raw::read(&file("decode-browser.json"))?,
            criterion: raw::read(&file("criterion.json"))?,
            client: raw::read(&file("client.json"))?,
            behind_before: behind(dir, "before")?,
            behind_after: behind(dir, "after")?,
            heap: raw::read(&file("heap-idle-10000.json"))?,
            slab: raw::read(&file("kernel-slab-idle-10000.json"))?,
            run: RunLog::read(&file("run.tsv"))?,
            commands,
            peer: peer_runs(dir)?,
            agents: agents_runs(dir)?,
            deltas: DeltaRuns {
                trace_walk: raw::read(&file("deltas-trace-walk.json"))?,
                trace_walk_uniform: raw::read(&file("deltas-trace-walk-uniform.json"))?,
                trace_crowd: raw::read(&file("deltas-trace-crowd.json"))?,
                crowd_core: raw::read(&file("deltas-crowd-core-deltas.json"))?
                    .zip(raw::read(&file("deltas-crowd-core-full.json"))?),
                aoi: frames_pair(dir, "aoi")?,
                whole: frames_pair(dir, "whole")?,
                crowd: frames_pair(dir, "crowd")?,
            },
            dir: dir.to_owned(),
        })
    }

    /// A text file of the folder, trimmed; empty when absent.
    pub fn text(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join(name)).map(|t| t.trim().to_owned()).unwrap_or_default()
    }
}

fn missing(path: &Path) -> RawError {
    RawError::Io { path: path.to_owned(), source: std::io::Error::from(std::io::ErrorKind::NotFound) }
}

/// The labels (file names without `.json`) of the loadgen reports in `dir`
/// starting with `prefix` and holding `within`, sorted by name.
fn names(dir: &Path, prefix: &str, within: &str) -> Result<Vec<String>, LoadError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(RawError::Io { path: dir.to_owned(), source }),
    };
    let mut out: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".json").map(str::to_owned))
        .filter(|n| !n.ends_with(".server") && n.starts_with(prefix) && n.contains(within))
        .collect();
    out.sort();
    Ok(out)
}

/// A loadgen report with the server-side window of each phase.
type Phases<R> = (R, Vec<Option<Window>>);

/// A loadgen report and its server windows; None when the report is absent.
fn run<R: DeserializeOwned>(dir: &Path, label: &str) -> Result<Option<Phases<R>>, LoadError> {
    let Some(report) = raw::read::<R>(&dir.join(format!("{label}.json")))? else { return Ok(None) };
    let windows = raw::read::<Windows>(&dir.join(format!("{label}.server.json")))?.unwrap_or_default();
    Ok(Some((report, windows.windows)))
}

/// A one-phase run with its window.
fn sampled<R: DeserializeOwned>(dir: &Path, label: &str) -> Result<Option<Sampled<R>>, LoadError> {
    Ok(run::<R>(dir, label)?.map(|(r, w)| (r, w.into_iter().next().flatten())))
}

/// Repeated one-phase runs `PREFIX*`, by name.
fn runs<R: DeserializeOwned>(dir: &Path, prefix: &str) -> Result<Vec<Sampled<R>>, LoadError> {
    let mut out = Vec::new();
    for name in names(dir, prefix, "")? {
        out.extend(sampled(dir, &name)?);
    }
    Ok(out)
}

/// Each step of a steps run with its window.
fn steps(dir: &Path, label: &str) -> Result<Vec<Sampled<StepReport>>, LoadError> {
    let Some((report, windows)) = run::<StepsReport>(dir, label)? else { return Ok(Vec::new()) };
    let mut windows = windows.into_iter();
    Ok(report.steps.into_iter().map(|s| (s, windows.next().flatten())).collect())
}

/// The `redis_ha` runs `PREFIX*-K.json` by run number K, then name.
fn redis_runs(dir: &Path, prefix: &str) -> Result<Vec<RedisHaRun>, LoadError> {
    let mut named: Vec<(u64, String)> =
        names(dir, prefix, "")?.into_iter().filter_map(|n| Some((n.rsplit('-').next()?.parse().ok()?, n))).collect();
    named.sort();
    let mut out = Vec::new();
    for (_, name) in named {
        out.extend(raw::read(&dir.join(format!("{name}.json")))?);
    }
    Ok(out)
}

/// `nginx/run-N-KIND/summary.json` in the order run: by N, tcp before unix.
fn nginx_runs(dir: &Path) -> Result<Vec<NginxRun>, LoadError> {
    numbered_runs(dir, "nginx")
}

/// `FOLDER/run-N-KIND/summary.json` by N, then KIND.
fn numbered_runs<R: DeserializeOwned>(dir: &Path, folder: &str) -> Result<Vec<R>, LoadError> {
    let Ok(entries) = std::fs::read_dir(dir.join(folder)) else { return Ok(Vec::new()) };
    let mut found: Vec<(u64, String, PathBuf)> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().into_string().ok()?;
            let rest = name.strip_prefix("run-")?;
            let (n, kind) = rest.split_once('-')?;
            Some((n.parse().unwrap_or(0), kind.to_owned(), e.path().join("summary.json")))
        })
        .collect();
    found.sort();
    let mut out = Vec::new();
    for (_, _, path) in found {
        out.extend(raw::read(&path)?);
    }
    Ok(out)
}

/// Section 15's runs `deltas-KIND-N-FRAMES-I` (the count of the first
/// found); None when there are none.
fn frames_pair<R: DeserializeOwned>(dir: &Path, kind: &str) -> Result<Option<FramesPair<R>>, LoadError> {
    let prefix = format!("deltas-{kind}-");
    let found = names(dir, &prefix, "")?;
    let Some(n) = found.iter().find_map(|n| n.strip_prefix(&prefix)?.split('-').next()?.parse::<u64>().ok()) else {
        return Ok(None);
    };
    Ok(Some(FramesPair {
        players: n,
        deltas: runs(dir, &format!("{prefix}{n}-deltas-"))?,
        full: runs(dir, &format!("{prefix}{n}-full-"))?,
    }))
}

/// `client-behind-WHEN*.json`, by name.
fn behind(dir: &Path, when: &str) -> Result<Vec<Option<BehindResult>>, LoadError> {
    let mut out = Vec::new();
    for name in names(dir, &format!("client-behind-{when}"), "")? {
        out.push(raw::read::<Behind>(&dir.join(format!("{name}.json")))?.and_then(|b| b.result));
    }
    Ok(out)
}

/// `peer-SERVER-PLAYERS-RUN.json` (not the loadgen's and tester's own
/// reports beside them, `*.walk.json`, `*.tester.json`), by name.
/// The agents example's runs, in the order its `commands-agents.txt` names
/// them (`# agents-KIND-R`); each must be there.
fn agents_runs(dir: &Path) -> Result<Vec<(String, u32, raw::AgentsRun)>, LoadError> {
    let commands = dir.join("commands-agents.txt");
    let text = match std::fs::read_to_string(&commands) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(RawError::Io { path: commands, source }),
    };
    let mut out = Vec::new();
    for label in text.lines().filter_map(|l| l.strip_prefix("# ")).filter(|l| l.starts_with("agents-")) {
        let Some((kind, run)) = label.trim_start_matches("agents-").rsplit_once('-') else { continue };
        let Ok(run) = run.parse::<u32>() else { continue };
        let path = dir.join(format!("{label}.json"));
        let report = raw::read(&path)?.ok_or_else(|| missing(&path))?;
        out.push((kind.to_owned(), run, report));
    }
    Ok(out)
}

fn peer_runs(dir: &Path) -> Result<Vec<raw::PeerRun>, LoadError> {
    let mut out = Vec::new();
    for name in names(dir, "peer-", "")? {
        let parts: Vec<&str> = name.split('-').collect();
        if parts.len() == 4 && parts[2..].iter().all(|p| p.parse::<u64>().is_ok()) {
            out.extend(raw::read(&dir.join(format!("{name}.json")))?);
        }
    }
    Ok(out)
}
