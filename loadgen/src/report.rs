//! What each scenario reports, as serde structs: written as JSON with
//! `--json FILE` and printed as tables (see [`crate::report::table`]).
//! Latencies are ms (`{p50, p95, p99, max, count}`), rates per second, sizes
//! bytes, CPU in seconds, µs per frame or percent as each field says. With
//! area of interest a phase adds an `aoi` object ([`aoi::AoiFigures`]) and
//! with `--density` a `density` one; without, neither appears. A
//! `--transport mix` phase adds a `transports` array, each transport's
//! bots' figures ([`transport::TransportFigures`]).

pub mod aoi;
pub mod crowd;
pub mod fleet;
pub mod table;
pub mod transport;

use crate::failure::FailureKind;
use crate::limits::LocalLimits;
use crate::meter::Usage;
use crate::stats::{Metric, Summary, Window};
use crate::swarm::Census;
use crate::transport::Transports;
use aoi::{AoiFigures, AoiInputs, BotBytes, DensityFigures};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Which scenario wrote a report (its `scenario` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scenario {
    /// [`WalkReport`].
    Walk,
    /// [`StepsReport`].
    Steps,
    /// [`IdleReport`].
    Idle,
    /// [`ArrivalsReport`].
    Arrivals,
    /// [`FailoverReport`].
    Failover,
    /// [`crowd::CrowdReport`].
    Crowd,
}

impl Scenario {
    /// The name as in the JSON and on the command line.
    pub fn label(self) -> &'static str {
        match self {
            Scenario::Walk => "walk",
            Scenario::Steps => "steps",
            Scenario::Idle => "idle",
            Scenario::Arrivals => "arrivals",
            Scenario::Failover => "failover",
            Scenario::Crowd => "crowd",
        }
    }
}

/// Whether a phase's figures describe the server: the loadgen's verdict.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// The loadgen's CPU stayed at or under its limit.
    #[default]
    #[serde(rename = "measured")]
    Measured,
    /// The loadgen's CPU passed its limit: the figures say more about it.
    #[serde(rename = "not judgeable")]
    NotJudgeable,
    /// No bot was connected at the phase's end (none came, or their shard
    /// died or stopped during it): its figures describe no run (the run
    /// exits 3 when no bot was ever welcomed, else 5, "nothing measured").
    #[serde(rename = "nothing measured")]
    NothingMeasured,
    /// The run was cut short by the phase's end (Ctrl-C, SIGTERM, an agent
    /// lost; the report's `interrupted` says which and when): its figures
    /// are a partial phase's.
    #[serde(rename = "interrupted")]
    Interrupted,
    /// In a scenario whose holds expect frames (`outcome::Expectation`),
    /// bots connected at the phase's end or welcomed in it, but no bot, or none of one
    /// transport's bots, received a single snapshot or view frame in the
    /// hold: its figures describe no game (the run exits 4, "no frames").
    #[serde(rename = "no frames")]
    NoFrames,
}

impl Verdict {
    /// [`Verdict::Measured`] when `judgeable`.
    pub fn of(judgeable: bool) -> Verdict {
        if judgeable {
            Verdict::Measured
        } else {
            Verdict::NotJudgeable
        }
    }

    /// The verdict as the JSON and the tables write it.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Measured => "measured",
            Verdict::NotJudgeable => "not judgeable",
            Verdict::NothingMeasured => "nothing measured",
            Verdict::Interrupted => "interrupted",
            Verdict::NoFrames => "no frames",
        }
    }

    /// The verdict qualified by the machine's busy share over the phase
    /// (all cores, percent): a measured phase on a machine at or past
    /// [`SATURATED_PCT`] is "measured (machine saturated)", the loadgen
    /// under its limit but the shards, the bots and anything else
    /// competing for CPU, so its figures describe the machine as much as
    /// the server.
    pub fn qualified(self, machine_cpu_pct: f64) -> &'static str {
        match self {
            Verdict::Measured if machine_cpu_pct >= f64::from(SATURATED_PCT) => SATURATED,
            v => v.label(),
        }
    }
}

/// Machine busy share (all cores, percent) from which a measured phase is
/// qualified as on a saturated machine ([`Verdict::qualified`]).
pub const SATURATED_PCT: u32 = 95;

/// A measured phase's verdict on a saturated machine ([`Verdict::qualified`]).
pub const SATURATED: &str = "measured (machine saturated)";

/// How a failover run stopped its shard (its `action` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailoverAction {
    /// SIGKILL: the shard dies at once.
    Kill,
    /// SIGTERM: the shard drains its players first.
    Drain,
}

impl FailoverAction {
    /// The name as in the JSON.
    pub fn label(self) -> &'static str {
        match self {
            FailoverAction::Kill => "kill",
            FailoverAction::Drain => "drain",
        }
    }
}

/// Server CPU per frame delivered to the bots, µs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PerFrame {
    /// User time per frame, µs.
    pub user: f64,
    /// System time per frame, µs.
    pub sys: f64,
    /// Both, µs.
    pub total: f64,
}

/// The `--server-pid` processes over a measurement window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerFigures {
    /// The pids that were readable.
    pub pids: Vec<u32>,
    /// User CPU over the window, s.
    pub cpu_user_s: f64,
    /// System CPU over the window, s.
    pub cpu_sys_s: f64,
    /// Cores kept busy on average.
    pub cores: f64,
    /// Server CPU time divided by the frames all bots received in the window.
    pub cpu_per_frame_us: PerFrame,
    /// Summed RSS at the window's end, bytes.
    pub rss_bytes: u64,
    /// `rss_bytes` divided by connected players, bytes.
    pub rss_per_player_bytes: u64,
    /// Summed peak RSS of the processes' lives, bytes.
    pub rss_peak_bytes: u64,
}

impl ServerFigures {
    /// Figures of `usage`'s servers against `frames` received and `players` connected;
    /// None when no server was given or readable.
    pub fn of(usage: &Usage, frames: u64, players: usize) -> Option<ServerFigures> {
        let cpu = usage.server_cpu()?;
        let per = |s: f64| {
            if frames == 0 {
                0.0
            } else {
                round2(s * 1e6 / frames as f64)
            }
        };
        let rss = usage.server_rss_end().unwrap_or(0);
        Some(ServerFigures {
            pids: usage.servers.iter().filter(|s| s.cpu.is_some()).map(|s| s.pid).collect(),
            cpu_user_s: round3(cpu.user_s),
            cpu_sys_s: round3(cpu.sys_s),
            cores: round3(cpu.cores),
            cpu_per_frame_us: PerFrame { user: per(cpu.user_s), sys: per(cpu.sys_s), total: per(cpu.total_s()) },
            rss_bytes: rss,
            rss_per_player_bytes: if players == 0 { 0 } else { rss / players as u64 },
            rss_peak_bytes: usage.servers.iter().filter_map(|s| s.rss_peak_bytes).sum(),
        })
    }
}

/// Rounds to 2 decimals.
pub fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// Rounds to 3 decimals.
pub fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// The figures of one measured phase (a walk run, or one step).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// Bots in a welcomed session at the end of the phase.
    pub connected: usize,
    /// Bots refused with Busy at least once so far.
    pub busy: usize,
    /// Busy refusals received in the phase (retries included).
    pub busy_refusals: u64,
    /// Resyncs the bots asked for in the phase: bots taking deltas over
    /// datagrams (WebTransport) that missed a change (a datagram lost). 0 in
    /// reports written before there were any.
    #[serde(default)]
    pub resyncs: u64,
    /// Failures in the phase (connect, join, closes, protocol); see `error_kinds`.
    pub errors: u64,
    /// Failures by kind (local_*: this machine's limits, not the server's).
    pub error_kinds: BTreeMap<String, u64>,
    /// Connect start to Welcome, ms.
    pub welcome_ms: Summary,
    /// Gap between consecutive snapshots of the bot's own shard, ms.
    pub snapshot_gap_ms: Summary,
    /// Gap between consecutive snapshots of each other shard (relayed), ms.
    pub relayed_snapshot_gap_ms: Summary,
    /// The own shard's gap less the ticks between that sent the socket
    /// nothing (`Metric::NewsGap`), ms (absent in older reports).
    #[serde(default)]
    pub news_gap_ms: Summary,
    /// The longest own-shard snapshot gap of each bot in each 10 s span
    /// (`mino_loadgen::freeze`), ms (hold; absent in older reports).
    #[serde(default)]
    pub longest_freeze_ms: Summary,
    /// The own shard's gap as the frames reached the bots' sockets (kernel
    /// receive times: most of the bots' own scheduling left out, not all: a
    /// late read that takes in one frame and part of the next stamps both
    /// with the later arrival; websockets only),
    /// ms (absent in older reports).
    #[serde(default)]
    pub socket_gap_ms: Summary,
    /// Arrival minus the snapshot's server time (same host clocks), ms.
    pub snapshot_age_ms: Summary,
    /// Ping round trip, ms.
    pub rtt_ms: Summary,
    /// Messages the bots received in the phase.
    pub frames: u64,
    /// Snapshots and view frames (own shard and relayed, one a shard a
    /// tick) the bots received in the hold: 0 in a hold that expects
    /// frames is verdict "no frames" (absent in older reports).
    #[serde(default)]
    pub snapshots: u64,
    /// Payload bytes the bots received in the phase.
    pub bytes: u64,
    /// Frames received per second.
    pub frames_per_s: f64,
    /// Bytes received per second.
    pub bytes_per_s: f64,
    /// Own-shard snapshots per connected bot per second: the tick rate the bots saw, Hz.
    pub ticks_per_s: f64,
    /// Measured wall time, s.
    pub seconds: f64,
    /// The loadgen's CPU, percent of the cores it may use.
    pub loadgen_cpu_pct: f64,
    /// The whole machine's busy share, percent.
    pub machine_cpu_pct: f64,
    /// False when the loadgen's CPU passed the threshold (its figures then say
    /// more about the loadgen than about the server), or no bot was connected.
    pub judgeable: bool,
    /// "measured", "not judgeable", "nothing measured" (no bot connected
    /// at the end), "no frames" (bots connected, but none received a frame
    /// in a hold that expects frames) or "interrupted" (the run was cut
    /// short by the phase's end: see the report's `interrupted`).
    pub verdict: Verdict,
    /// The `--server-pid` processes, if any were given.
    pub server: Option<ServerFigures>,
    /// Area of interest (absent when the server sent no cells).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aoi: Option<AoiFigures>,
    /// `--density` (absent without).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub density: Option<DensityFigures>,
    /// A run spread over agents (`--agents`): each agent's part of the
    /// phase (absent in one process). The phase's `loadgen_cpu_pct` is then
    /// the busiest host's, all its agents together, and `machine_cpu_pct`
    /// the busiest machine's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agents: Option<Vec<fleet::AgentFigures>>,
    /// A `--transport mix` phase in one process: each transport's bots'
    /// figures, websocket first (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transports: Option<Vec<transport::TransportFigures>>,
}

/// Inputs to [`Measured::of`].
pub struct Phase<'a> {
    /// Window used for welcome latencies and counters (e.g. ramp + hold).
    pub whole: &'a Window,
    /// Window used for gaps, rates and CPU (the hold).
    pub hold: &'a Window,
    /// CPU and memory over the hold.
    pub usage: &'a Usage,
    /// Bots by state at the end.
    pub census: Census,
    /// Loadgen CPU percent above which the phase is not judgeable.
    pub max_loadgen_cpu: f64,
    /// What each bot connected throughout the hold received in it.
    pub per_bot: &'a [BotBytes],
    /// The tick rate of the Welcomes, Hz.
    pub tick_hz: u16,
    /// Bots that observe.
    pub observers: usize,
}

impl Measured {
    /// Computes the figures of a phase.
    pub fn of(p: &Phase<'_>) -> Measured {
        let (whole, hold) = (p.whole, p.hold);
        let secs = hold.elapsed.as_secs_f64().max(1e-9);
        let hc = &hold.counters;
        let connected = p.census.connected;
        // Nothing to measure: no bot connected at the end (a shard killed
        // mid-hold leaves the frames before it, figures of a run that did not
        // last).
        let nothing = connected == 0;
        let judgeable = p.usage.loadgen_cpu_pct <= p.max_loadgen_cpu && !nothing;
        Measured {
            connected,
            busy: p.census.ever_busy,
            busy_refusals: whole.counters.busy_refusals,
            resyncs: whole.counters.resyncs,
            errors: whole.counters.error_total(),
            error_kinds: whole.counters.error_kinds(),
            welcome_ms: whole.latencies.summary(Metric::Welcome),
            snapshot_gap_ms: hold.latencies.summary(Metric::SnapshotGap),
            relayed_snapshot_gap_ms: hold.latencies.summary(Metric::RelayedGap),
            news_gap_ms: hold.latencies.summary(Metric::NewsGap),
            longest_freeze_ms: hold.latencies.summary(Metric::LongestFreeze),
            socket_gap_ms: hold.latencies.summary(Metric::SocketGap),
            snapshot_age_ms: hold.latencies.summary(Metric::SnapshotAge),
            rtt_ms: hold.latencies.summary(Metric::Rtt),
            frames: whole.counters.frames,
            snapshots: hc.own_snapshots + hc.relayed_snapshots,
            bytes: whole.counters.bytes,
            frames_per_s: round2(hc.frames as f64 / secs),
            bytes_per_s: round2(hc.bytes as f64 / secs),
            ticks_per_s: if connected == 0 { 0.0 } else { round2(hc.own_snapshots as f64 / secs / connected as f64) },
            seconds: round3(secs),
            loadgen_cpu_pct: round2(p.usage.loadgen_cpu_pct),
            machine_cpu_pct: round2(p.usage.machine_cpu_pct),
            judgeable,
            verdict: if nothing { Verdict::NothingMeasured } else { Verdict::of(judgeable) },
            server: ServerFigures::of(p.usage, hc.frames, connected),
            aoi: AoiFigures::of(&AoiInputs {
                hold,
                whole: &whole.counters,
                per_bot: p.per_bot,
                tick_hz: p.tick_hz,
                observers: p.observers,
            }),
            density: None,
            agents: None,
            transports: None,
        }
    }
}

/// Where the bots went and from where.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The target URLs.
    pub urls: Vec<String>,
    /// The bots' profile.
    pub profile: crate::profile::ProfileName,
    /// What the local limits allow.
    pub local_limits: LocalLimits,
    /// The bots' transport: `websocket`, `webtransport` or `mix` (absent in
    /// reports before it was written: websocket).
    #[serde(default)]
    pub transport: crate::transport::Transports,
    /// Why and when the run was cut short (Ctrl-C, SIGTERM, an agent lost);
    /// null for a run that ran to its end (absent in older reports).
    #[serde(default)]
    pub interrupted: Option<crate::interrupt::Interrupted>,
}

/// `mino-loadgen` (walk): N bots for a duration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WalkReport {
    /// Always [`Scenario::Walk`].
    pub scenario: Scenario,
    /// Bots started.
    pub bots: usize,
    /// Bots welcomed at least once.
    pub admitted: usize,
    /// Distinct shard ids seen in snapshots.
    pub shards_seen: usize,
    /// Those shard ids.
    pub shard_ids: Vec<u32>,
    /// The figures (connected, busy, errors, latencies, frames, bytes, CPU).
    #[serde(flatten)]
    pub measured: Measured,
    /// Run context.
    #[serde(flatten)]
    pub info: RunInfo,
}

/// One step of `steps`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepReport {
    /// Bots asked for in this step.
    pub players: usize,
    /// The step's figures.
    #[serde(flatten)]
    pub measured: Measured,
}

/// `mino-loadgen steps`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepsReport {
    /// Always [`Scenario::Steps`].
    pub scenario: Scenario,
    /// Each step in order.
    pub steps: Vec<StepReport>,
    /// Bots welcomed at least once by the last step measured (absent in
    /// reports made before it: 0).
    #[serde(default)]
    pub admitted: usize,
    /// Distinct shard ids seen in snapshots.
    pub shards_seen: usize,
    /// Run context.
    #[serde(flatten)]
    pub info: RunInfo,
}

/// `mino-loadgen idle`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IdleReport {
    /// Always [`Scenario::Idle`].
    pub scenario: Scenario,
    /// Idle websockets asked for.
    pub bots: usize,
    /// Bots welcomed at least once (absent in reports made before it: 0).
    #[serde(default)]
    pub admitted: usize,
    /// Figures over the hold (connected, errors, frames, the age of each
    /// snapshot on arrival: how long one message takes to reach all sockets).
    #[serde(flatten)]
    pub measured: Measured,
    /// Server RSS before the first connection, bytes (first `--server-pid`s summed).
    pub server_rss_before_bytes: Option<u64>,
    /// Server RSS with every idle connection open, bytes.
    pub server_rss_after_bytes: Option<u64>,
    /// (after - before) / connected, bytes.
    pub server_bytes_per_connection: Option<u64>,
    /// Kernel TCP memory growth per connection, bytes, both ends (loopback: the
    /// bots' sockets are on this kernel too).
    pub kernel_tcp_bytes_per_connection: Option<u64>,
    /// How long the place stood after the last join before the hold, ms
    /// (`--stand`; absent in reports made before it: 0).
    #[serde(default)]
    pub stand_ms: u64,
    /// Server CPU per tick over the hold, ms (ticks by the clock): what
    /// keeping every socket up to date costs (about none for idle sockets:
    /// a view that did not change is sent nothing).
    pub server_cpu_per_tick_ms: Option<f64>,
    /// What one place-wide chat line costs the server per socket (`None`:
    /// not measured, `--no-chat-cost`, or no readable server process).
    pub chat_cost: Option<ChatCost>,
    /// Run context.
    #[serde(flatten)]
    pub info: RunInfo,
}

/// What one place-wide chat line costs the server per socket (see
/// `scenario/chat_cost.rs`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatCost {
    /// Chat lines the speakers sent in the chat window.
    pub lines: u64,
    /// Chat lines the idle bots received in the chat window (one per line and
    /// socket when nothing is lost).
    pub deliveries: u64,
    /// Server CPU over the quiet window, s (user + system).
    pub quiet_cpu_s: f64,
    /// Server CPU over the chat window, s.
    pub chat_cpu_s: f64,
    /// (chat − quiet, scaled to the same wall time) / deliveries, µs: the
    /// server CPU one line costs one socket.
    pub cpu_per_socket_us: Option<f64>,
}

/// `mino-loadgen arrivals`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArrivalsReport {
    /// Always [`Scenario::Arrivals`].
    pub scenario: Scenario,
    /// Bots arriving.
    pub bots: usize,
    /// Asked arrival rate, bots/s.
    pub rate_per_s: f64,
    /// Achieved arrival rate, bots/s.
    pub achieved_rate_per_s: f64,
    /// Bots welcomed.
    pub admitted: usize,
    /// Joins with no Welcome, Busy or Error within the join timeout.
    pub timed_out: u64,
    /// Figures: welcome latency over the arrivals, gaps over the hold after them.
    #[serde(flatten)]
    pub measured: Measured,
    /// Run context.
    #[serde(flatten)]
    pub info: RunInfo,
}

/// `mino-loadgen failover`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FailoverReport {
    /// Always [`Scenario::Failover`].
    pub scenario: Scenario,
    /// How the shard was stopped.
    pub action: FailoverAction,
    /// The signalled pid.
    pub pid: u32,
    /// Bots started.
    pub bots: usize,
    /// Bots connected just before the signal.
    pub connected_before: usize,
    /// Bots whose session ended after the signal.
    pub affected: u64,
    /// Bots connected before the signal and not back at the end: connected
    /// as the same player, and welcomed again if they were on the shard that
    /// died (`dead_shards`).
    pub lost: usize,
    /// The shard taken for the one the signal stopped, 8 hex digits: the one
    /// given with `--shard-id`, or else the one most bots left (several while
    /// tied; none when no bot left). Empty in reports from before.
    #[serde(default)]
    pub dead_shards: Vec<String>,
    /// Whether `dead_shards` was given (`--shard-id`) rather than worked out
    /// from the bots.
    #[serde(default)]
    pub dead_shard_given: bool,
    /// Bots connected before the signal that were on `dead_shards` then (a
    /// given shard that no bot was on is a wrong `--shard-id`).
    #[serde(default)]
    pub dead_shard_bots: usize,
    /// Welcomes that resumed the same player.
    pub resumed: u64,
    /// Reconnects that came back as a new player.
    pub fresh_rejoins: u64,
    /// Resumed players whose first position was off by more than 3 ticks of walking.
    pub misplaced: u64,
    /// Largest distance between a bot's last position and its resumed one, world units.
    pub max_resume_jump: f64,
    /// Socket close to the resuming Welcome, ms.
    pub resume_welcome_ms: Summary,
    /// Socket close to the first own-shard snapshot with the bot in it, ms.
    pub back_in_place_ms: Summary,
    /// Signal to the last affected socket's close, ms (drain: time to empty).
    pub time_to_empty_ms: Option<f64>,
    /// Signal to the process's exit, ms (None: still alive at the end).
    pub process_exit_ms: Option<f64>,
    /// Bots connected at the end.
    pub connected_after: usize,
    /// Failures after the signal.
    pub errors: u64,
    /// Failures by kind.
    pub error_kinds: BTreeMap<String, u64>,
    /// Run context.
    #[serde(flatten)]
    pub info: RunInfo,
}

/// What every scenario's report says of its bots' joining, for the run's exit
/// status: a run in which no bot was ever welcomed measured nothing (a wrong
/// `--url`, no shard listening, every join refused), so the loadgen prints
/// its report and then fails (`scenario::Context::finish`).
pub trait Joins {
    /// Bots welcomed at least once over the run.
    fn welcomed(&self) -> usize;
    /// The run's measured phases (a walk's one, each step of steps).
    fn phases(&self) -> Vec<&Measured>;
    /// Failures over the run, by kind: its phases' together.
    fn failures(&self) -> BTreeMap<String, u64> {
        let mut all = BTreeMap::new();
        for (kind, n) in self.phases().into_iter().flat_map(|m| &m.error_kinds) {
            *all.entry(kind.clone()).or_insert(0) += n;
        }
        all
    }
    /// Busy refusals over the run (a shard listening, but full or late).
    fn refusals(&self) -> u64 {
        self.phases().iter().map(|m| m.busy_refusals).sum()
    }
    /// Why a run with bots connected measured nothing of what it is for
    /// (a failover whose signal reached none of them); None: it did.
    fn untouched(&self) -> Option<String> {
        None
    }
}

impl Joins for WalkReport {
    fn welcomed(&self) -> usize {
        self.admitted
    }
    fn phases(&self) -> Vec<&Measured> {
        vec![&self.measured]
    }
}

impl Joins for StepsReport {
    fn welcomed(&self) -> usize {
        self.admitted
    }
    fn phases(&self) -> Vec<&Measured> {
        self.steps.iter().map(|s| &s.measured).collect()
    }
}

impl Joins for IdleReport {
    fn welcomed(&self) -> usize {
        self.admitted
    }
    fn phases(&self) -> Vec<&Measured> {
        vec![&self.measured]
    }
}

impl Joins for ArrivalsReport {
    fn welcomed(&self) -> usize {
        self.admitted
    }
    fn phases(&self) -> Vec<&Measured> {
        vec![&self.measured]
    }
}

/// Failover has no measured phase: its failures after the signal, no refusal.
impl Joins for FailoverReport {
    fn welcomed(&self) -> usize {
        self.connected_before
    }
    fn phases(&self) -> Vec<&Measured> {
        Vec::new()
    }
    fn failures(&self) -> BTreeMap<String, u64> {
        self.error_kinds.clone()
    }
    fn untouched(&self) -> Option<String> {
        // Bots on the signalled shard that had not noticed it by the end
        // of --observe (over WebTransport only its silence tells) were
        // touched: lost, or counted on the dead shard.
        let touched = self.affected > 0 || self.lost > 0 || self.dead_shard_bots > 0;
        (!touched && self.connected_before > 0).then(|| {
            format!(
                "no bot lost its connection when pid {} was signalled: none of the {} connected bots played on it (is it a shard of the --url place?)",
                self.pid, self.connected_before
            )
        })
    }
}

/// Why every Hello is refused, most often (a run's verdict and the world
/// probe's say it alike).
pub const WHY_REFUSED: &str = "a shard that takes no guests, --guests deny, refuses bots, which sign in with no token";
/// Why a TLS handshake fails, most often.
pub const WHY_TLS: &str = "a certificate this machine does not trust (give --ca-file, or --insecure for a test's \
                           self-signed one), or wss:// to a plain ws:// port";
/// What answers an upgrade, but not with a websocket.
pub const WHY_NOT_WEBSOCKET: &str =
    "a wrong path: 404; a shard not ready, or over its --max-connections: 503; not a shard";

/// The error of a run in which no bot was welcomed: what failed, and where
/// (over `transports`: a WebTransport session needs the UDP port the shard
/// offers as well as its `--url`).
pub fn nobody_welcomed(report: &impl Joins, urls: &[String], transports: Transports) -> String {
    let (failures, refusals) = (report.failures(), report.refusals());
    let kinds: Vec<String> = failures.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let failed = if kinds.is_empty() { String::new() } else { format!("failures: {}", kinds.join(", ")) };
    let times = if refusals == 1 { "1 refusal".to_owned() } else { format!("{refusals} refusals") };
    match (refusals, failed.is_empty()) {
        (0, _) => {}
        (_, true) => {
            return format!("no bot was welcomed: every join was refused as busy ({times}) by {}", urls.join(", "))
        }
        (_, false) => return format!("no bot was welcomed: joins refused as busy ({times}); {failed}"),
    }
    let failed = if failed.is_empty() { "no failure was seen either".to_owned() } else { failed };
    let udp = match transports {
        Transports::Websocket => "",
        Transports::Webtransport | Transports::Mix => {
            ", and the UDP port its /webtransport offers reachable from here (--transport webtransport)"
        }
    };
    // The bots' own addresses: 127.0.0.2 and on do not reach a shard
    // behind a link emulator (mino-link) or in another network namespace.
    let sources = if failures.contains_key(FailureKind::LocalAddrUnavailable.name()) {
        "; local_addr_unavailable: this machine refused the bots' source addresses (127.0.0.1 to 127.0.0.N, \
         --source-addrs), as inside mino-link: try --source-addrs 0"
    } else {
        ""
    };
    // Every failure of one kind: what that kind says of the shard.
    let only = |kind: FailureKind| !failures.is_empty() && failures.keys().all(|k| k == kind.name());
    // The shard answered every Hello with a refusal (an Error and a close
    // code): it listens, and says why (guests denied, a full place...).
    if only(FailureKind::Refused) {
        return format!(
            "no bot was welcomed ({failed}): {} answered every Hello with a refusal ({WHY_REFUSED}); \
             MINO_LOG=mino_loadgen=debug logs each refusal's code and message",
            urls.join(", ")
        );
    }
    // A TLS handshake that failed: a certificate not trusted here, or TLS
    // where none is spoken (a hint about paths or ports would mislead).
    if only(FailureKind::Tls) {
        let wt = if transports == Transports::Websocket {
            ""
        } else {
            "; for WebTransport, a certificate hash the shard no longer offers (it restarted or renewed it)"
        };
        return format!(
            "no bot was welcomed ({failed}): the TLS handshake with {} failed: {WHY_TLS}{wt}; \
             MINO_LOG=mino_loadgen=debug logs each failure",
            urls.join(", ")
        );
    }
    // Websockets: something answered, but not with a websocket: a wrong
    // path, a shard not ready or over its cap, not a shard at all.
    if only(FailureKind::Handshake) && transports == Transports::Websocket {
        return format!(
            "no bot was welcomed ({failed}): {} answered the upgrade, but not with a websocket \
             ({WHY_NOT_WEBSOCKET}); MINO_LOG=mino_loadgen=debug logs each answer",
            urls.join(", ")
        );
    }
    format!("no bot was welcomed ({failed}); is a shard listening at {}{udp}?{sources}", urls.join(", "))
}

/// Writes `report` as pretty JSON to `path`.
///
/// Errors: serialization or file I/O.
pub fn write_json(path: &Path, report: &impl Serialize) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(report)?;
    text.push('\n');
    std::fs::write(path, text).map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meter::{CpuUse, ServerUse};
    use crate::stats::{Event, Stats};
    use std::time::Duration;

    fn usage(loadgen_pct: f64) -> Usage {
        Usage {
            wall_s: 10.0,
            loadgen: CpuUse::default(),
            loadgen_cpu_pct: loadgen_pct,
            machine_cpu_pct: 50.0,
            servers: vec![ServerUse {
                pid: 1,
                cpu: Some(CpuUse { user_s: 0.3, sys_s: 1.2, cores: 0.15 }),
                rss_start_bytes: Some(1000),
                rss_end_bytes: Some(20_000_000),
                rss_peak_bytes: Some(21_000_000),
            }],
        }
    }

    #[test]
    fn server_cpu_per_frame_is_cpu_over_frames_received() {
        let f = ServerFigures::of(&usage(10.0), 100_000, 1000).expect("server given");
        assert_eq!(f.cpu_per_frame_us, PerFrame { user: 3.0, sys: 12.0, total: 15.0 });
        assert_eq!(f.rss_per_player_bytes, 20_000);
    }

    #[test]
    fn high_loadgen_cpu_makes_a_phase_not_judgeable() {
        let stats = Stats::new();
        stats.record(0, Metric::SnapshotGap, Duration::from_millis(50));
        stats.event(Event::Welcome);
        let w = stats.take_window();
        let census = Census { bots: 1, connected: 1, ..Census::default() };
        let measure = |pct| {
            let usage = usage(pct);
            Measured::of(&Phase {
                whole: &w,
                hold: &w,
                usage: &usage,
                census,
                max_loadgen_cpu: 70.0,
                per_bot: &[],
                tick_hz: 20,
                observers: 0,
            })
        };
        let ok = measure(40.0);
        assert!(ok.judgeable);
        assert_eq!(ok.verdict, Verdict::Measured);
        let busy = measure(71.0);
        assert!(!busy.judgeable);
        assert_eq!(busy.verdict, Verdict::NotJudgeable);
        let nobody = Measured::of(&Phase {
            whole: &w,
            hold: &w,
            usage: &usage(40.0),
            census: Census { bots: 1, ..Census::default() },
            max_loadgen_cpu: 70.0,
            per_bot: &[],
            tick_hz: 20,
            observers: 0,
        });
        assert!(!nobody.judgeable);
        assert_eq!(nobody.verdict, Verdict::NothingMeasured);
    }

    #[test]
    fn walk_json_has_every_issue_field_at_top_level() {
        let stats = Stats::new();
        let w = stats.take_window();
        let measured = Measured::of(&Phase {
            whole: &w,
            hold: &w,
            usage: &usage(1.0),
            census: Census::default(),
            max_loadgen_cpu: 70.0,
            per_bot: &[],
            tick_hz: 20,
            observers: 0,
        });
        let limits = crate::limits::LocalLimits::check_and_raise(1);
        let report = WalkReport {
            scenario: Scenario::Walk,
            bots: 3,
            admitted: 0,
            shards_seen: 0,
            shard_ids: vec![],
            measured,
            info: RunInfo {
                urls: vec![],
                profile: crate::profile::ProfileName::Walker,
                local_limits: limits,
                transport: crate::transport::Transports::Websocket,
                interrupted: None,
            },
        };
        let v = serde_json::to_value(&report).expect("serializes");
        for key in ["bots", "connected", "busy", "errors", "frames", "bytes", "shards_seen"] {
            assert!(v.get(key).is_some_and(|x| x.is_number()), "{key}");
        }
        for key in ["welcome_ms", "snapshot_gap_ms", "relayed_snapshot_gap_ms"] {
            for p in ["p50", "p95", "p99", "max"] {
                assert!(v[key].get(p).is_some_and(|x| x.is_number()), "{key}.{p}");
            }
        }
        assert!(v.get("aoi").is_none() && v.get("density").is_none(), "no cells: no area-of-interest fields");
        let back: WalkReport = serde_json::from_value(v).expect("reads back");
        assert_eq!(back, report, "the benches' report reads loadgen's JSON through these types");
    }

    /// Failures alone, for [`nobody_welcomed`]'s wording.
    struct Failed(BTreeMap<String, u64>);

    impl Joins for Failed {
        fn welcomed(&self) -> usize {
            0
        }
        fn phases(&self) -> Vec<&Measured> {
            Vec::new()
        }
        fn failures(&self) -> BTreeMap<String, u64> {
            self.0.clone()
        }
    }

    #[test]
    fn nobody_welcomed_says_where_to_look_for_the_transport_and_the_failures() {
        let urls = ["ws://127.0.0.1:9/ws".to_owned()];
        let failed = |kind: &str| Failed(BTreeMap::from([(kind.to_owned(), 3)]));
        let ws = nobody_welcomed(&failed("connect_refused"), &urls, Transports::Websocket);
        assert_eq!(
            ws,
            "no bot was welcomed (failures: connect_refused 3); is a shard listening at ws://127.0.0.1:9/ws?"
        );
        let wt = nobody_welcomed(&failed("connect_timeout"), &urls, Transports::Mix);
        assert!(wt.contains("ws://127.0.0.1:9/ws, and the UDP port its /webtransport offers reachable"), "{wt}");
        let local = nobody_welcomed(&failed("local_addr_unavailable"), &urls, Transports::Websocket);
        assert!(local.ends_with("as inside mino-link: try --source-addrs 0"), "{local}");
        // Something answered the upgrade (a 404, a 503): not "is a shard listening".
        let answered = nobody_welcomed(&failed("handshake"), &urls, Transports::Websocket);
        assert!(answered.starts_with("no bot was welcomed (failures: handshake 3): ws://127.0.0.1:9/ws answered"));
        assert!(answered.contains("503") && !answered.contains("is a shard listening"), "{answered}");
        // It answered every Hello with a refusal: it listens (an outside
        // trial was asked whether a shard listened).
        let refused = nobody_welcomed(&failed("refused"), &urls, Transports::Websocket);
        assert!(refused.contains("answered every Hello with a refusal"), "{refused}");
        assert!(!refused.contains("is a shard listening"), "{refused}");
        let tls = nobody_welcomed(&failed("tls"), &urls, Transports::Mix);
        assert!(tls.contains("--ca-file") && tls.contains("no longer offers"), "{tls}");
    }
}
