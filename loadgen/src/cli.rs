//! The `mino-loadgen` command line (clap derive; the doc comments are `--help`).
//!
//! Without a subcommand it runs the walk scenario:
//! `mino-loadgen --url ws://127.0.0.1:8080/ws --bots N --ramp R --duration 30s --json FILE`.

use crate::observer::ObserverShare;
use crate::profile::ProfileName;
use clap::{Args, Parser, Subcommand};
use mino_protocol::ShardId;
use std::path::PathBuf;
use std::time::Duration;

/// mino's bot swarm: bots that speak the real protocol, walk, and measure what
/// they receive (snapshot gaps per shard, welcome latency, frames, bytes).
///
/// With no subcommand, runs `walk`. Durations take a unit: 500ms, 30s, 2m, 1h
/// (a bare number is seconds). Rates are bots per second; positions and
/// distances are world units; gaps and latencies are reported in ms
/// (p50/p95/p99/max), sizes in bytes.
///
/// Against a server with area of interest (mino-server --cell-size), every
/// bot also measures its own-cell and neighbour gaps and the bytes it
/// receives per second, and a sample of observers (--observers) measures
/// view-enter latency (ms and ticks), pop-ins, blinks and the ideal-crop
/// ratio; --density and the crowd scenario set where the bots walk.
///
/// Logs go to stderr, filtered by the MINO_LOG environment variable (as for
/// every mino binary; tracing's syntax, e.g. MINO_LOG=debug or
/// MINO_LOG=mino_loadgen=debug; default warn).
///
/// Exit status, one per outcome (the --json report's `outcome` says the
/// same: verdict, exit_code, reason; a run that measured nothing ends with
/// a line "verdict: ... (exit N): why" on stderr, after its report):
///
/// 0: measured; or interrupted (Ctrl-C, SIGTERM, an agent lost: the report
/// is marked and says when).
///
/// 1: failed: an error before or instead of a report (a URL that does not
/// resolve, a shard with no WebTransport offer, a --kill-pid or --drain-pid
/// with no mino-server behind it, an unwritable --json or --plot (said
/// before the run), every agent lost).
///
/// 2: usage: a wrong command line, a bad option value among them (nothing
/// ran); or a crowd --point outside the shard's world.
///
/// 3: nobody welcomed: no bot was ever welcomed (no shard at the URL, every
/// join refused).
///
/// 4: no frames: bots were welcomed, but in a hold of walk, steps or
/// arrivals with walker bots (the default profile) no bot (or none of one
/// --transport mix half) received a single snapshot or view frame (e.g.
/// WebTransport datagrams that never arrive). Idle, crowd, failover and
/// the other profiles expect none: their players may all stand, and a
/// standing player is sent nothing.
///
/// 5: nothing measured: bots were welcomed, but none was connected at a
/// hold's end (their shard stopped or died during it, or closed them all),
/// or a failover's signalled pid had none of them.
#[derive(Parser, Debug, Clone)]
#[command(name = "mino-loadgen", version)]
pub struct Cli {
    /// Scenario (default: walk).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Walk options when no subcommand is given.
    #[command(flatten)]
    pub walk: TopWalkArgs,
    /// Options of every scenario.
    #[command(flatten)]
    pub common: CommonArgs,
    /// Spreading the bots over agents.
    #[command(flatten)]
    pub fleet: FleetArgs,
}

/// A run spread over agents: this process coordinates (no bots of its own).
#[derive(Args, Debug, Clone, PartialEq)]
pub struct FleetArgs {
    /// Coordinate N agents (`mino-loadgen agent --coordinator ws://THIS:PORT/`
    /// on each load machine) instead of running bots here: they share the
    /// scenario's bots (agent k of N the bots i with i % N == k), start
    /// together, and their histograms are merged exactly. Not for failover.
    #[arg(long, value_name = "N", global = true, value_parser = clap::value_parser!(u16).range(1..))]
    pub agents: Option<u16>,
    /// Where the coordinator listens for agents (port 0: any free port;
    /// the address is printed on stderr).
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:7700", global = true)]
    pub listen: std::net::SocketAddr,
    /// How long the coordinator waits for the agents; it then starts with
    /// those that joined (the others are reported as never joined).
    #[arg(long, value_name = "DURATION", value_parser = positive_duration, default_value = "60s", global = true)]
    pub agents_wait: Duration,
    /// An agent (or coordinator) not heard from for this long is taken for gone
    /// (heartbeats go every second).
    #[arg(long, value_name = "DURATION", value_parser = positive_duration, default_value = "5s", global = true)]
    pub agent_timeout: Duration,
}

/// The scenarios.
#[derive(Subcommand, Debug, Clone)]
pub enum Command {
    /// N walking bots joining at R per second, measured for a duration (the default).
    Walk(WalkArgs),
    /// A series of player counts, each held after its ramp; a row per step.
    Steps(StepsArgs),
    /// N idle websockets (Hello, then only pongs): memory per connection and the
    /// cost of one message to all of them.
    Idle(IdleArgs),
    /// N players arriving at R per second: joins timed out, welcome latency.
    Arrivals(ArrivalsArgs),
    /// Bots spread over shards; kill or drain one and time every bot's resume.
    Failover(FailoverArgs),
    /// Every bot walks to one point and stays (area of interest under a
    /// crowd): late ticks, sockets closed as too slow, bytes per socket per
    /// tick against the view budget.
    Crowd(CrowdArgs),
    /// Run bots for a coordinator (`mino-loadgen --agents N SCENARIO ...` on
    /// another machine): it says what to run; this process runs its share.
    /// Local options (--threads, --source-addrs, --ca-file, --insecure)
    /// apply here.
    Agent(AgentArgs),
}

impl Command {
    /// The most bots the scenario runs at once.
    pub fn bots(&self) -> usize {
        match self {
            Command::Walk(a) => a.bots,
            Command::Steps(a) => a.steps.iter().copied().max().unwrap_or(0),
            Command::Idle(a) => a.bots,
            Command::Arrivals(a) => a.bots,
            Command::Failover(a) => a.bots,
            Command::Crowd(a) => a.bots,
            Command::Agent(_) => 0,
        }
    }

    /// The scenario's name as on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Walk(_) => "walk",
            Command::Steps(_) => "steps",
            Command::Idle(_) => "idle",
            Command::Arrivals(_) => "arrivals",
            Command::Failover(_) => "failover",
            Command::Crowd(_) => "crowd",
            Command::Agent(_) => "agent",
        }
    }
}

/// The options an agent takes from its coordinator's run (the targets, the
/// bots' behaviour, the report) or has no use for: given to `agent` on the
/// command line, they would be ignored, so they are refused
/// ([`refuse_agent_ignored`]). As (clap's argument id, the flag).
pub const AGENT_IGNORED: [(&str, &str); 16] = [
    ("urls", "--url"),
    ("json", "--json"),
    ("plot", "--plot"),
    ("server_pids", "--server-pid"),
    ("profile", "--profile"),
    ("frames", "--frames"),
    ("transport", "--transport"),
    ("join_timeout", "--join-timeout"),
    ("no_reconnect", "--no-reconnect"),
    ("name_prefix", "--name-prefix"),
    ("seed", "--seed"),
    ("density", "--density"),
    ("observers", "--observers"),
    ("metrics_urls", "--metrics-url"),
    ("listen", "--listen"),
    ("agents_wait", "--agents-wait"),
];

/// Options left out of `agent --help` besides [`AGENT_IGNORED`]: `--agents`
/// (an agent runs in one process: refused by [`Cli::scenario`]) and
/// `--quiet` (an agent is always quiet).
const AGENT_HIDDEN: [&str; 2] = ["agents", "quiet"];

/// The command line as the binary parses it: [`Cli`]'s, with the options an
/// agent takes from its coordinator ([`AGENT_IGNORED`]) or has no use for
/// ([`AGENT_HIDDEN`]) left out of `agent --help` (they are global, so clap
/// would list them there too; given, they are refused by
/// [`refuse_agent_ignored`] and [`Cli::scenario`], or do nothing).
pub fn command() -> clap::Command {
    let command = <Cli as clap::CommandFactory>::command();
    // Clap copies each global option into every subcommand that has none of
    // that id when the command is built: `agent` is given its hidden copies
    // first (the same options, so parsed as before).
    let hidden: Vec<clap::Arg> = AGENT_IGNORED
        .iter()
        .map(|(id, _)| *id)
        .chain(AGENT_HIDDEN)
        .filter_map(|id| command.get_arguments().find(|a| a.get_id() == id))
        .map(|arg| arg.clone().hide(true))
        .collect();
    command.mut_subcommand("agent", |agent| agent.args(hidden))
}

/// Refuses options given on the command line of an `agent` that it takes
/// from its coordinator instead ([`AGENT_IGNORED`]): a load tester who
/// gives an agent `--url` or `--frames full` is told, not ignored; and
/// `--profile` given to idle, whose bots stand whatever it says.
///
/// Errors: clap's argument conflict naming the flags.
pub fn refuse_agent_ignored(matches: &clap::ArgMatches) -> Result<(), clap::Error> {
    let given = |m: &clap::ArgMatches, id: &str| {
        m.try_contains_id(id).unwrap_or(false) && m.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
    };
    // Idle bots stand and answer pings whatever the profile: a --profile
    // given there was ignored, silently (an outside trial).
    if let Some(("idle", sub)) = matches.subcommand() {
        if given(matches, "profile") || given(sub, "profile") {
            return Err(<Cli as clap::CommandFactory>::command().error(
                clap::error::ErrorKind::ArgumentConflict,
                "idle bots send nothing but pongs: --profile does not apply to idle (leave it out)",
            ));
        }
    }
    let Some(("agent", sub)) = matches.subcommand() else { return Ok(()) };
    let ignored: Vec<&str> =
        AGENT_IGNORED.iter().filter(|(id, _)| given(matches, id) || given(sub, id)).map(|(_, flag)| *flag).collect();
    if ignored.is_empty() {
        return Ok(());
    }
    Err(<Cli as clap::CommandFactory>::command().error(
        clap::error::ErrorKind::ArgumentConflict,
        format!(
            "an agent takes {} from its coordinator's run: give {} to the coordinator (the run with --agents); \
             an agent's own options are --threads, --source-addrs, --ca-file, --insecure, --max-loadgen-cpu \
             and --agent-timeout",
            ignored.join(", "),
            if ignored.len() == 1 { "it" } else { "them" }
        ),
    ))
}

/// `agent` options. The scenario's options come from the coordinator's run;
/// an agent's own are `--threads`, `--source-addrs`, `--ca-file`,
/// `--insecure`, `--max-loadgen-cpu` and `--agent-timeout` (an agent is
/// always quiet; the rest are refused: [`AGENT_IGNORED`]).
#[derive(Args, Debug, Clone, PartialEq)]
pub struct AgentArgs {
    /// The coordinator, ws://HOST:PORT/ (its --listen address as this
    /// machine reaches it).
    #[arg(long, value_name = "URL", value_parser = coordinator_url)]
    pub coordinator: String,
    /// This agent's name in the report (default: host name and process id).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// How long to keep trying to reach the coordinator (it may start later).
    #[arg(long, value_name = "DURATION", value_parser = positive_duration, default_value = "60s")]
    pub wait: Duration,
}

/// Options shared by every scenario (may be given before or after the subcommand).
#[derive(Args, Debug, Clone)]
pub struct CommonArgs {
    /// Websocket URL of a shard, ws://HOST:PORT/PATH, or of a TLS proxy in
    /// front of shards, wss://HOST:PORT/PATH. Repeat to spread bots
    /// round-robin over shards; a reconnecting bot tries the next URL.
    #[arg(long = "url", value_name = "URL", global = true, default_value = "ws://127.0.0.1:8080/ws", value_parser = shard_url)]
    pub urls: Vec<String>,
    /// wss:// URLs: also trust the certificates in this PEM file (a private
    /// CA, or a self-signed server certificate). Repeatable. The public web
    /// roots are always trusted.
    #[arg(long = "ca-file", value_name = "PEM", global = true)]
    pub ca_files: Vec<PathBuf>,
    /// wss:// URLs: accept any server certificate without verifying it
    /// (self-signed test setups only).
    #[arg(long, global = true)]
    pub insecure: bool,
    /// Write the report as JSON to FILE.
    #[arg(long, value_name = "FILE", global = true)]
    pub json: Option<PathBuf>,
    /// Draw snapshot gap p95/p99 (own and relayed) against players to FILE.svg.
    #[arg(long, value_name = "FILE.svg", global = true)]
    pub plot: Option<PathBuf>,
    /// No progress bar and no summary on stdout (for --json-only runs).
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// A server process to measure over each window: CPU user/sys from
    /// /proc/PID/stat (reported per delivered frame, µs) and RSS (the
    /// process's whole RSS over the players connected: an upper bound of a
    /// player's cost, which includes what the process holds with none;
    /// benches/ subtract a baseline). Repeat for several shards.
    #[arg(long = "server-pid", value_name = "PID", global = true, value_parser = live_pid)]
    pub server_pids: Vec<u32>,
    /// Bot behaviour: walker turns every 1-3 s; light, typical and heavy add
    /// standing still and chat (heavy: 2-5 inputs/s, a chat line every 1.5-3 s).
    #[arg(long, value_enum, default_value_t = ProfileName::Walker, global = true)]
    pub profile: ProfileName,
    /// What view frames bots ask for: deltas (as the browser does) or full
    /// forms (the control row of a delta measurement).
    #[arg(long, value_enum, default_value_t = crate::client::Frames::Deltas, global = true)]
    pub frames: crate::client::Frames,
    /// How bots reach the shards: websocket; webtransport (a session to
    /// each shard's --webtransport-listen address, read with its
    /// certificate's hash from the shard's /webtransport: give the shards'
    /// own ws:// URLs); or mix: half each (even bots on websockets, odd on
    /// WebTransport, both spread over every --url), each transport's
    /// figures reported apart.
    #[arg(long, value_enum, default_value_t = crate::transport::Transports::Websocket, global = true)]
    pub transport: crate::transport::Transports,
    /// Bound on connecting, and again on waiting for Welcome after Hello.
    #[arg(long, value_name = "DURATION", value_parser = positive_duration, default_value = "10s", global = true)]
    pub join_timeout: Duration,
    /// Loopback targets: spread connections over source addresses
    /// 127.0.0.1..127.0.0.N (0: let the kernel pick).
    #[arg(long, value_name = "N", default_value_t = 8, global = true)]
    pub source_addrs: u8,
    /// Never reconnect or retry after Busy (by default bots reconnect at once
    /// with jitter, then with backoff capped at 2 s, resuming with their ticket).
    #[arg(long, global = true)]
    pub no_reconnect: bool,
    /// Loadgen CPU, percent of its cores, above which a step is "not judgeable".
    #[arg(long, value_name = "PERCENT", default_value_t = 70.0, global = true, value_parser = percent)]
    pub max_loadgen_cpu: f64,
    /// Bot names are this prefix plus the bot's index.
    #[arg(long, value_name = "PREFIX", default_value = "bot-", global = true)]
    pub name_prefix: String,
    /// Random seed for directions and jitter (default: random).
    #[arg(long, value_name = "N", global = true)]
    pub seed: Option<u64>,
    /// Threads that run bots, each its share of them on a single-threaded
    /// runtime, so a bot's timing does not depend on work stealing (default:
    /// one per core).
    #[arg(long, value_name = "N", global = true, value_parser = positive_count)]
    pub threads: Option<usize>,
    /// Area of interest: players per cell. The bots walk inside a square
    /// centred on the world's centre, sqrt(N / D) cells a side for N bots
    /// (the largest step's N for steps), clipped to the world, and are
    /// steered back in at its edges; measuring starts once they are inside.
    /// The cell size comes from the first --url's Welcome; a server without
    /// area of interest is refused. Not for idle or crowd.
    #[arg(long, value_name = "D", value_parser = positive_f64, global = true)]
    pub density: Option<f64>,
    /// Area of interest: bots that also measure view-enter latency, pop-ins,
    /// blinks and the ideal-crop ratio, from a shared table of every bot's
    /// position: a count (e.g. 50, 0 for none) or a share of the bots (e.g.
    /// 10%). Default: 5 %, at least 20; none for idle (nothing moves).
    /// Given (not 0) against a server without area of interest, refused.
    #[arg(long, value_name = "N|P%", global = true)]
    pub observers: Option<ObserverShare>,
    /// A shard's Prometheus endpoint, http://HOST:PORT/metrics, read at the
    /// start and end of a crowd hold (late ticks, sockets closed as too slow,
    /// bytes sent). Repeat for several shards. Default: derived from each
    /// ws:// --url (none for wss:// URLs; a shard with an admin listener
    /// serves /metrics there only: name the shards' admin listeners).
    #[arg(long = "metrics-url", value_name = "URL", global = true, value_parser = metrics_url)]
    pub metrics_urls: Vec<String>,
}

const WALK_BOTS: usize = 100;
const WALK_RAMP: f64 = 100.0;
const WALK_DURATION: Duration = Duration::from_secs(30);

/// `walk` options.
#[derive(Args, Debug, Clone, PartialEq)]
pub struct WalkArgs {
    /// Number of bots.
    #[arg(long, value_name = "N", default_value_t = WALK_BOTS, value_parser = positive_count)]
    pub bots: usize,
    /// Join rate, bots per second.
    #[arg(long, value_name = "PER_S", default_value_t = WALK_RAMP, value_parser = positive_f64)]
    pub ramp: f64,
    /// Measurement time after every bot has joined (or been refused).
    #[arg(long, value_name = "DURATION", value_parser = hold_duration, default_value = "30s")]
    pub duration: Duration,
}

/// The walk options given without a subcommand (the issue-2 form).
#[derive(Args, Debug, Clone, PartialEq, Default)]
pub struct TopWalkArgs {
    /// Walk: number of bots [default: 100].
    #[arg(long, value_name = "N", value_parser = positive_count)]
    pub bots: Option<usize>,
    /// Walk: join rate, bots per second [default: 100].
    #[arg(long, value_name = "PER_S", value_parser = positive_f64)]
    pub ramp: Option<f64>,
    /// Walk: measurement time after every bot has joined or been refused [default: 30s].
    #[arg(long, value_name = "DURATION", value_parser = hold_duration)]
    pub duration: Option<Duration>,
}

impl TopWalkArgs {
    fn given(&self) -> bool {
        self.bots.is_some() || self.ramp.is_some() || self.duration.is_some()
    }

    fn resolve(&self) -> WalkArgs {
        WalkArgs {
            bots: self.bots.unwrap_or(WALK_BOTS),
            ramp: self.ramp.unwrap_or(WALK_RAMP),
            duration: self.duration.unwrap_or(WALK_DURATION),
        }
    }
}

/// `steps` options.
#[derive(Args, Debug, Clone, PartialEq)]
pub struct StepsArgs {
    /// Player counts, comma-separated and rising, e.g. 100,250,500,1000.
    #[arg(long, value_name = "N,N,..", value_delimiter = ',', required = true)]
    pub steps: Vec<usize>,
    /// Measurement time of each step, after its ramp and settle.
    #[arg(long, value_name = "DURATION", value_parser = hold_duration, default_value = "20s")]
    pub hold: Duration,
    /// Join rate during each ramp, bots per second.
    #[arg(long, value_name = "PER_S", default_value_t = 100.0, value_parser = positive_f64)]
    pub ramp: f64,
    /// Wait after a ramp before measuring.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "2s")]
    pub settle: Duration,
}

/// `idle` options.
#[derive(Args, Debug, Clone, PartialEq)]
pub struct IdleArgs {
    /// Number of idle websockets.
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = positive_count)]
    pub bots: usize,
    /// Open rate, connections per second.
    #[arg(long, value_name = "PER_S", default_value_t = 500.0, value_parser = positive_f64)]
    pub ramp: f64,
    /// Measurement time with every connection open.
    #[arg(long, value_name = "DURATION", value_parser = hold_duration, default_value = "10s")]
    pub hold: Duration,
    /// How long the place stands after every bot joined before the hold
    /// is measured: a join changes its region, whose views the server looks
    /// at for its slowest tier (64 ticks: 3.2 s at 20 Hz; the default covers
    /// tick rates of 16 Hz and more), so the hold measures players standing,
    /// not the last joins. 0s measures from the last join.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "4s")]
    pub stand: Duration,
    /// Skip the chat-line cost after the hold (two 4 s windows and 20
    /// speakers joining the place).
    #[arg(long)]
    pub no_chat_cost: bool,
}

/// `arrivals` options.
#[derive(Args, Debug, Clone, PartialEq)]
pub struct ArrivalsArgs {
    /// Number of arriving players.
    #[arg(long, value_name = "N", default_value_t = 2500, value_parser = positive_count)]
    pub bots: usize,
    /// Arrival rate, players per second.
    #[arg(long, value_name = "PER_S", default_value_t = 250.0, value_parser = positive_f64)]
    pub rate: f64,
    /// Measurement time after the last arrival's outcome.
    #[arg(long, value_name = "DURATION", value_parser = hold_duration, default_value = "5s")]
    pub hold: Duration,
    /// Retry after Busy (default: a refused arrival is counted, not retried).
    #[arg(long)]
    pub retry_busy: bool,
}

/// `failover` options.
#[derive(Args, Debug, Clone, PartialEq)]
#[command(group(clap::ArgGroup::new("action").required(true).args(["kill_pid", "drain_pid"])))]
pub struct FailoverArgs {
    /// Number of bots, spread over every --url.
    #[arg(long, value_name = "N", default_value_t = 500, value_parser = positive_count)]
    pub bots: usize,
    /// Join rate, bots per second.
    #[arg(long, value_name = "PER_S", default_value_t = 200.0, value_parser = positive_f64)]
    pub ramp: f64,
    /// Time between the last join and the signal.
    #[arg(long, value_name = "DURATION", value_parser = positive_duration, default_value = "5s")]
    pub warmup: Duration,
    /// SIGKILL this shard process after the warm-up.
    #[arg(long, value_name = "PID")]
    pub kill_pid: Option<u32>,
    /// SIGTERM (drain) this shard process after the warm-up.
    #[arg(long, value_name = "PID")]
    pub drain_pid: Option<u32>,
    /// The signalled shard's id, as its logs and Welcomes show it (hex): its
    /// bots must be welcomed again to count as back. Default: the shard most
    /// bots left after the signal (exact unless more bots of live shards
    /// break on their own than the dead shard's bots have noticed).
    #[arg(long, value_name = "HEX")]
    pub shard_id: Option<ShardId>,
    /// Longest wait after the signal for every bot to be back: connected as
    /// the same player, and welcomed again if it was on the shard that died
    /// (a bot on a killed shard is connected until it notices: over
    /// WebTransport, by its silence, a second or more after the kill).
    #[arg(long, value_name = "DURATION", value_parser = hold_duration, default_value = "15s")]
    pub observe: Duration,
}

/// `crowd` options.
#[derive(Args, Debug, Clone, PartialEq)]
pub struct CrowdArgs {
    /// Number of bots.
    #[arg(long, value_name = "N", default_value_t = 500, value_parser = positive_count)]
    pub bots: usize,
    /// Join rate, bots per second.
    #[arg(long, value_name = "PER_S", default_value_t = 100.0, value_parser = positive_f64)]
    pub ramp: f64,
    /// Measurement time once the crowd has gathered.
    #[arg(long, value_name = "DURATION", value_parser = hold_duration, default_value = "20s")]
    pub hold: Duration,
    /// The point everyone walks to, world units (default: the world's centre).
    #[arg(long, value_name = "X,Y", value_parser = parse_point)]
    pub point: Option<(f32, f32)>,
    /// The server's --view-budget-bytes: view-frame bytes a socket may get a
    /// tick, on average, that the report compares each bot's with.
    #[arg(long, value_name = "BYTES", default_value_t = 8192, value_parser = clap::value_parser!(u64).range(512..))]
    pub budget_bytes: u64,
    /// Longest wait for the crowd to gather before measuring anyway (default:
    /// the time to walk the world's diagonal, plus 5 s).
    #[arg(long, value_name = "DURATION", value_parser = positive_duration)]
    pub gather_timeout: Option<Duration>,
    /// The share of the crowd (0 to 1) that, once gathered, takes a short step
    /// every 1 to 3 s and walks back: with enough shufflers (0.05 of 2,000
    /// is 100, a step each every 2 s on average, each some ticks long) the
    /// crowd's cell changes in most ticks, so the hold measures how a
    /// changing crowd's frames arrive (few shufflers leave ticks with
    /// nothing new, which deltas skip). With
    /// 0 the crowd stands still, and a shard that sends only what changed
    /// (protocol 4's deltas) sends it nothing.
    #[arg(long, value_name = "SHARE", default_value_t = 0.0, value_parser = parse_share)]
    pub shuffle: f32,
}

/// A share from 0 to 1.
fn parse_share(s: &str) -> Result<f32, String> {
    match s.parse::<f32>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is not a share from 0 to 1")),
    }
}

impl Cli {
    /// The scenario to run (walk with the top-level options when none was named).
    ///
    /// Errors: top-level walk options (`--bots`, `--ramp`, `--duration`) given
    /// together with a subcommand, where they would be ignored; `--density`
    /// with a scenario whose bots do not walk freely (idle, crowd);
    /// `--agents` with failover or agent, or with observers.
    pub fn scenario(&self) -> Result<Command, clap::Error> {
        let conflict =
            |text: &str| <Cli as clap::CommandFactory>::command().error(clap::error::ErrorKind::ArgumentConflict, text);
        let command = match &self.command {
            None => Command::Walk(self.walk.resolve()),
            Some(_) if self.walk.given() => {
                return Err(conflict(
                    "--bots/--ramp/--duration before a subcommand belong to the default walk; give them after the subcommand",
                ))
            }
            Some(c) => c.clone(),
        };
        if self.fleet.agents.is_some() {
            if let Command::Failover(_) | Command::Agent(_) = command {
                return Err(conflict(&format!(
                    "--agents coordinates agents; {} runs in one process (see deploy/README.md)",
                    command.name()
                )));
            }
            if matches!(self.common.observers, Some(o) if o != ObserverShare::Count(0)) {
                return Err(conflict(
                    "--observers needs every bot's position in one process; a run over agents has none",
                ));
            }
        }
        if matches!(command, Command::Agent(_)) && (self.common.json.is_some() || self.common.plot.is_some()) {
            return Err(conflict(
                "an agent writes no report: give --json and --plot to the coordinator (the run with --agents)",
            ));
        }
        if let Command::Steps(steps) = &command {
            let rising = steps.steps.windows(2).all(|w| w[0] < w[1]);
            if steps.steps.first().is_none_or(|first| *first == 0) || !rising {
                let mut invalid = <Cli as clap::CommandFactory>::command();
                return Err(invalid.error(
                    clap::error::ErrorKind::ValueValidation,
                    "--steps must be rising player counts above 0, e.g. 100,250,500",
                ));
            }
        }
        let proxied = self.common.urls.iter().find(|u| crate::target::is_tls(u));
        if let (true, Some(url)) = (self.common.transport.uses(crate::transport::Transport::WebTransport), proxied) {
            return Err(conflict(&format!(
                "--transport {}: {url}: WebTransport bots need each shard's own ws:// URL (a proxy does not carry WebTransport)",
                self.common.transport.label()
            )));
        }
        if self.common.density.is_some() && matches!(command, Command::Idle(_) | Command::Crowd(_)) {
            return Err(conflict(&format!(
                "--density sets where walking bots walk; {} bots do not walk freely",
                command.name()
            )));
        }
        Ok(command)
    }
}

/// Checks a `--url`: `ws://` or `wss://`, a host, a port of 1 to 65535
/// (the host is resolved when the run starts).
///
/// Errors: why the URL is unusable ([`crate::target::TargetError`]).
pub fn shard_url(text: &str) -> Result<String, String> {
    crate::target::host_port(text).map(|_| text.to_owned()).map_err(|e| e.to_string())
}

/// Parses a positive, finite number.
///
/// Errors: a message saying what is accepted.
pub fn positive_f64(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("{text:?} is not a positive number")),
    }
}

/// Parses a percentage above 0 and at most 100.
pub fn percent(text: &str) -> Result<f64, String> {
    match positive_f64(text) {
        Ok(v) if v <= 100.0 => Ok(v),
        _ => Err(format!("{text:?} is not a percentage above 0 and at most 100")),
    }
}

/// Parses a count of at least 1.
///
/// Errors: a message saying what is accepted.
pub fn positive_count(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("{text:?} is not a count of at least 1")),
    }
}

/// Parses a duration as [`parse_duration`] does, refusing zero (a window
/// that measures nothing, a timeout that never waits).
///
/// Errors: a message naming the accepted forms, or saying it is zero.
pub fn positive_duration(text: &str) -> Result<Duration, String> {
    match parse_duration(text)? {
        d if d.is_zero() => Err(format!("{text:?} is no time: give more than 0, e.g. 500ms or 30s")),
        d => Ok(d),
    }
}

/// Parses an agent's `--coordinator`: `ws://HOST:PORT/`.
///
/// Errors: another scheme, or no host and port.
pub fn coordinator_url(text: &str) -> Result<String, String> {
    if !text.starts_with("ws://") {
        return Err(format!("{text:?}: give ws://HOST:PORT/ (the coordinator's --listen address)"));
    }
    crate::target::host_port(text).map(|_| text.to_owned()).map_err(|e| e.to_string())
}

/// Parses a `--server-pid`: a live process's id.
///
/// Errors: no process with it (a pid mistyped measured nothing, silently).
pub fn live_pid(text: &str) -> Result<u32, String> {
    let pid: u32 = text.trim().parse().map_err(|_| format!("{text:?} is not a process id"))?;
    if pid == 0 || !std::path::Path::new(&format!("/proc/{pid}/stat")).exists() {
        return Err(format!("no live process with pid {pid}"));
    }
    Ok(pid)
}

/// Parses a `--metrics-url`: `http://HOST:PORT/PATH`.
///
/// Errors: another scheme, no host, or not a URL.
pub fn metrics_url(text: &str) -> Result<String, String> {
    let uri: tokio_tungstenite::tungstenite::http::Uri =
        text.parse().map_err(|_| format!("{text:?} is not a URL: give http://HOST:PORT/metrics"))?;
    let port_ok = uri.port().is_none() || uri.port_u16().is_some_and(|p| p > 0);
    match (uri.scheme_str(), uri.host()) {
        (Some("http"), Some(_)) if port_ok => Ok(text.to_owned()),
        _ => Err(format!("{text:?}: give http://HOST:PORT/metrics (a shard's Prometheus endpoint, plain HTTP)")),
    }
}

/// The shortest hold: two ticks at the default 20 Hz (a hold shorter than
/// a tick measured nonsense: 272 ticks a second a bot, an outside trial).
pub const LEAST_HOLD: Duration = Duration::from_millis(100);

/// Parses a hold's (a measurement's) duration: at least [`LEAST_HOLD`].
///
/// Errors: a message saying the least.
pub fn hold_duration(text: &str) -> Result<Duration, String> {
    match positive_duration(text)? {
        d if d < LEAST_HOLD => {
            Err(format!("{text:?} is shorter than a measurement can be: give at least {LEAST_HOLD:?}"))
        }
        d => Ok(d),
    }
}

/// Parses "X,Y" in world units.
///
/// Errors: a message naming the form.
pub fn parse_point(text: &str) -> Result<(f32, f32), String> {
    let bad = || format!("invalid point {text:?}: use X,Y in world units, e.g. 500,500");
    let (x, y) = text.split_once(',').ok_or_else(bad)?;
    let (x, y): (f32, f32) = (x.trim().parse().map_err(|_| bad())?, y.trim().parse().map_err(|_| bad())?);
    (x.is_finite() && y.is_finite()).then_some((x, y)).ok_or_else(bad)
}

/// Parses "250ms", "30s", "1.5s", "2m", "1h" or a bare number of seconds.
///
/// Errors: a message naming the accepted forms.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| format!("invalid duration {text:?}: use e.g. 500ms, 30s, 2m"))?;
    let secs = match unit.trim() {
        "" | "s" => value,
        "ms" => value / 1000.0,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        other => return Err(format!("unknown unit {other:?} in {text:?}: use ms, s, m or h")),
    };
    Duration::try_from_secs_f64(secs).map_err(|e| format!("invalid duration {text:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_limit_is_a_percentage() {
        assert_eq!(percent("70"), Ok(70.0));
        assert_eq!(percent("100"), Ok(100.0));
        for bad in ["0", "100.5", "500", "-3", "x"] {
            assert!(percent(bad).is_err(), "{bad}");
        }
    }
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("mino-loadgen").chain(args.iter().copied()))
    }

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
        command().debug_assert();
        // Every option an agent refuses is one of its arguments.
        let command = Cli::command();
        for (id, flag) in AGENT_IGNORED {
            let arg = command.get_arguments().find(|a| a.get_id() == id).unwrap_or_else(|| panic!("no argument {id}"));
            assert_eq!(arg.get_long().map(|l| format!("--{l}")).as_deref(), Some(flag), "{id}");
        }
    }

    #[test]
    fn an_agent_refuses_the_options_it_takes_from_its_coordinator() {
        let check = |args: &[&str]| {
            let matches =
                command().try_get_matches_from(std::iter::once("mino-loadgen").chain(args.iter().copied()))?;
            refuse_agent_ignored(&matches)
        };
        let agent = ["agent", "--coordinator", "ws://127.0.0.1:7700/"];
        assert!(check(&agent).is_ok());
        // Its help lists its own options and not the refused ones.
        let mut built = command();
        built.build();
        let help = built.find_subcommand_mut("agent").expect("agent").render_long_help().to_string();
        let own = ["--coordinator", "--threads", "--source-addrs", "--ca-file", "--insecure", "--max-loadgen-cpu"];
        for own in own.into_iter().chain(["--agent-timeout"]) {
            assert!(help.lines().any(|l| l.trim_start().starts_with(own)), "{own} in {help}");
        }
        for refused in AGENT_IGNORED.map(|(_, flag)| flag).into_iter().chain(["--agents ", "-q, --quiet"]) {
            assert!(!help.lines().any(|l| l.trim_start().starts_with(refused)), "{refused} in {help}");
        }
        // The binary's command parses as the derived one does.
        assert!(command()
            .try_get_matches_from(["mino-loadgen", "agent", "--coordinator", "ws://127.0.0.1:7700/"])
            .is_ok());
        assert!(check(&[&agent[..], &["--threads", "2", "--insecure", "--agent-timeout", "9s"]].concat()).is_ok());
        // Before or after the subcommand.
        for args in [
            [&agent[..], &["--url", "ws://10.0.0.1:8080/ws", "--frames", "full"]].concat(),
            [&["--frames", "full", "--url", "ws://10.0.0.1:8080/ws"], &agent[..]].concat(),
        ] {
            let e = check(&args).expect_err("refused").to_string();
            assert!(e.contains("an agent takes --url, --frames from its coordinator's run"), "{e}");
        }
        // A scenario's run takes them.
        assert!(check(&["walk", "--url", "ws://10.0.0.1:8080/ws", "--frames", "full"]).is_ok());
    }

    #[test]
    fn the_issue_two_form_runs_walk() {
        let cli = parse(&[
            "--url",
            "ws://127.0.0.1:8080/ws",
            "--bots",
            "20",
            "--ramp",
            "5",
            "--duration",
            "30s",
            "--json",
            "out.json",
        ])
        .expect("parses");
        let Ok(Command::Walk(w)) = cli.scenario() else { panic!("walk by default") };
        assert_eq!(w, WalkArgs { bots: 20, ramp: 5.0, duration: Duration::from_secs(30) });
        assert_eq!(cli.common.json, Some(PathBuf::from("out.json")));
        assert_eq!(cli.common.urls, ["ws://127.0.0.1:8080/ws"]);
    }

    #[test]
    fn an_agent_takes_no_report_options() {
        // They were taken and ignored: no file was written.
        for flag in ["--json", "--plot"] {
            let cli = parse(&["agent", "--coordinator", "ws://127.0.0.1:9/", flag, "out.x"]).expect("parses");
            let e = cli.scenario().expect_err("refused");
            assert!(e.to_string().contains("an agent writes no report"), "{e}");
        }
        assert!(parse(&["agent", "--coordinator", "ws://127.0.0.1:9/"]).expect("parses").scenario().is_ok());
    }

    #[test]
    fn urls_and_server_pids_repeat() {
        let cli = parse(&["--url", "ws://a:1/ws", "--url", "ws://b:2/ws", "--server-pid", "5", "--server-pid", "6"])
            .expect("parses");
        assert_eq!(cli.common.urls, ["ws://a:1/ws", "ws://b:2/ws"]);
        assert_eq!(cli.common.server_pids, [5, 6]);
    }

    #[test]
    fn tls_options_parse() {
        let cli = parse(&["--url", "wss://h:8443/ws", "--ca-file", "a.pem", "--ca-file", "b.pem", "--insecure"])
            .expect("parses");
        assert_eq!(cli.common.ca_files, [PathBuf::from("a.pem"), PathBuf::from("b.pem")]);
        assert!(cli.common.insecure);
        assert!(!parse(&[]).expect("parses").common.insecure);
    }

    #[test]
    fn subcommands_take_common_options_before_or_after() {
        let cli = parse(&["--quiet", "steps", "--steps", "100,250,500", "--hold", "20s", "--url", "ws://h:1/ws"])
            .expect("parses");
        assert!(cli.common.quiet);
        assert_eq!(cli.common.urls, ["ws://h:1/ws"]);
        let Ok(Command::Steps(s)) = cli.scenario() else { panic!("steps") };
        assert_eq!(s.steps, [100, 250, 500]);
        assert_eq!(s.hold, Duration::from_secs(20));
    }

    #[test]
    fn failover_needs_exactly_one_action() {
        assert!(parse(&["failover"]).is_err());
        assert!(parse(&["failover", "--kill-pid", "1", "--drain-pid", "2"]).is_err());
        let cli = parse(&["failover", "--drain-pid", "42"]).expect("parses");
        let Ok(Command::Failover(f)) = cli.scenario() else { panic!("failover") };
        assert_eq!((f.kill_pid, f.drain_pid, f.shard_id), (None, Some(42), None));
        let cli = parse(&["failover", "--kill-pid", "42", "--shard-id", "2A"]).expect("parses");
        let Ok(Command::Failover(f)) = cli.scenario() else { panic!("failover") };
        assert_eq!(f.shard_id, Some(ShardId(42)));
        assert!(parse(&["failover", "--kill-pid", "42", "--shard-id", "0"]).is_err(), "no shard has the id 0");
    }

    #[test]
    fn walk_options_do_not_mix_with_subcommands() {
        assert!(parse(&["--bots", "5", "idle"]).expect("parses").scenario().is_err());
        let Ok(Command::Walk(w)) = parse(&[]).expect("parses").scenario() else { panic!("walk") };
        assert_eq!(w, WalkArgs { bots: 100, ramp: 100.0, duration: Duration::from_secs(30) });
        let cli = parse(&["idle", "--bots", "5", "--profile", "heavy"]).expect("parses");
        assert_eq!(cli.common.profile, ProfileName::Heavy);
    }

    #[test]
    fn density_observers_and_metrics_urls_parse() {
        let cli =
            parse(&["--density", "2.5", "--observers", "10%", "--metrics-url", "http://h:1/metrics"]).expect("parses");
        assert_eq!(cli.common.density, Some(2.5));
        assert_eq!(cli.common.observers, Some(ObserverShare::Percent(10.0)));
        assert_eq!(cli.common.metrics_urls, ["http://h:1/metrics"]);
        let plain = parse(&[]).expect("parses");
        assert_eq!((plain.common.density, plain.common.observers), (None, None), "5 %, at least 20");
        assert!(parse(&["--density", "0"]).is_err());
        assert!(parse(&["--density", "-1"]).is_err());
        assert!(parse(&["--observers", "lots"]).is_err());
    }

    #[test]
    fn density_is_refused_where_bots_do_not_walk_freely() {
        assert!(parse(&["--density", "1", "idle"]).expect("parses").scenario().is_err());
        assert!(parse(&["crowd", "--density", "1"]).expect("parses").scenario().is_err());
        let Ok(Command::Steps(_)) = parse(&["steps", "--steps", "5,10", "--density", "1"]).expect("parses").scenario()
        else {
            panic!("steps with a density")
        };
    }

    #[test]
    fn crowd_takes_a_point_and_a_budget() {
        let cli = parse(&["crowd", "--bots", "30", "--point", "250,750.5", "--budget-bytes", "4096"]).expect("parses");
        let Ok(Command::Crowd(c)) = cli.scenario() else { panic!("crowd") };
        assert_eq!((c.bots, c.point, c.budget_bytes), (30, Some((250.0, 750.5)), 4096));
        assert_eq!(Command::Crowd(c).bots(), 30);
        assert!(parse(&["crowd", "--point", "1;2"]).is_err());
        assert!(parse(&["crowd", "--point", "nan,2"]).is_err());
        let Ok(Command::Crowd(c)) = parse(&["crowd", "--shuffle", "0.05"]).expect("parses").scenario() else {
            panic!("crowd")
        };
        assert_eq!(c.shuffle, 0.05);
        assert!(parse(&["crowd", "--shuffle", "1.5"]).is_err(), "a share is at most 1");
        assert!(parse(&["crowd", "--shuffle", "-0.1"]).is_err());
    }

    #[test]
    fn agents_coordinate_scenarios_but_not_failover() {
        let cli = parse(&["walk", "--bots", "600", "--agents", "3", "--listen", "127.0.0.1:0"]).expect("parses");
        assert_eq!(cli.fleet.agents, Some(3));
        assert!(matches!(cli.scenario(), Ok(Command::Walk(_))));
        assert!(parse(&["--agents", "0"]).is_err());
        assert!(parse(&["failover", "--kill-pid", "1", "--agents", "2"]).expect("parses").scenario().is_err());
        assert!(parse(&["--agents", "2", "--observers", "10"]).expect("parses").scenario().is_err());
        assert!(parse(&["--agents", "2", "--observers", "0"]).expect("parses").scenario().is_ok());
        let agent = parse(&["agent", "--coordinator", "ws://10.0.0.5:7700/", "--threads", "2"]).expect("parses");
        let Ok(Command::Agent(a)) = agent.scenario() else { panic!("agent") };
        assert_eq!((a.coordinator.as_str(), a.name, agent.common.threads), ("ws://10.0.0.5:7700/", None, Some(2)));
        assert!(parse(&["agent", "--coordinator", "ws://h:1/", "--agents", "2"]).expect("parses").scenario().is_err());
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("7"), Ok(Duration::from_secs(7)));
        assert!(parse_duration("3 parsecs").is_err());
        assert!(parse_duration("").is_err());
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn counts_rates_and_windows_that_measure_nothing_are_refused() {
        for args in [
            &["--bots", "0"][..],
            &["walk", "--bots", "0"],
            &["--duration", "0"],
            &["walk", "--duration", "0ms"],
            &["--ramp", "0"],
            &["idle", "--ramp=-5"],
            &["idle", "--hold", "0s"],
            &["steps", "--steps", "10", "--hold", "0"],
            &["arrivals", "--rate", "0"],
            &["failover", "--kill-pid", "1", "--observe", "0"],
            &["crowd", "--bots", "0"],
            &["--threads", "0"],
            &["--join-timeout", "0"],
        ] {
            let error = parse(args).expect_err(&format!("{args:?} parsed"));
            assert_eq!(error.kind(), clap::error::ErrorKind::ValueValidation, "{args:?}");
        }
        // Waits that may be none stay allowed.
        assert!(parse(&["idle", "--stand", "0s"]).is_ok());
        assert!(parse(&["steps", "--steps", "10", "--settle", "0"]).is_ok());
        // Refused as a usage error (exit 2), before a bot starts.
        for steps in ["0", "10,5", "5,5"] {
            let cli = parse(&["steps", "--steps", steps]).expect("parses");
            let e = cli.scenario().expect_err(steps);
            assert!(e.to_string().contains("rising player counts above 0"), "{e}");
            assert_eq!(e.exit_code(), 2, "{steps}");
        }
        for url in ["ws://127.0.0.1:70000/ws", "http://127.0.0.1:1/ws", "ws:///nohost", "ws://h:0/ws"] {
            let e = parse(&["--url", url]).expect_err(url);
            assert_eq!(e.exit_code(), 2, "{url}: {e}");
        }
        assert_eq!(positive_duration("1ms"), Ok(Duration::from_millis(1)));
        assert_eq!(positive_count("3"), Ok(3));
    }
}
