//! Issue 26's figure for bots on several machines: the same walk run (one
//! shard, N bots) in one process, over 1 agent, and over 3 agents of a third
//! of the bots each, alternating, repeated; the merged own-shard snapshot
//! gap percentiles of each kind side by side, with their medians over the
//! repeats. Every run gets a fresh release shard; the agents are processes
//! of their own on this machine (`mino-loadgen agent`), as the test kit
//! starts them.
//!
//! ```sh
//! cargo build --release -p mino-server -p mino-loadgen
//! cargo run --release -p mino-loadgen --example agents -- --bots 600 --repeat 3 --out benches/results/raw
//! ```
//!
//! Writes each run's report as `OUT/agents-KIND-R.json` (KIND `process`,
//! `1`, `3`, or `1x6` for `--kinds 1x6`: one agent of 6 bot threads), adds
//! the commands to `OUT/commands-agents.txt`, and prints the table of
//! RESULTS.md's section on stdout.

use clap::Parser;
use mino_testkit::loadgen::{num, Agent, Coordinator, LoadgenRun};
use mino_testkit::Shard;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The figure's options.
#[derive(Parser, Debug)]
struct Args {
    /// Walking bots of each run.
    #[arg(long, default_value_t = 600)]
    bots: usize,
    /// Join rate, bots per second.
    #[arg(long, default_value_t = 200)]
    ramp: usize,
    /// The hold, seconds.
    #[arg(long, default_value_t = 20)]
    hold: u64,
    /// Runs of each kind.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Where the raw reports go.
    #[arg(long, default_value = "benches/results/raw")]
    out: PathBuf,
    /// The kinds of run, in order: `process`, `N` (N agents, one bot thread
    /// a core each), `NxT` (N agents of T bot threads each).
    #[arg(long, value_delimiter = ',', default_value = "process,1,3", value_parser = parse_kind)]
    kinds: Vec<Kind>,
}

fn parse_kind(text: &str) -> Result<Kind, String> {
    let bad = || format!("{text:?}: use process, N or NxT");
    match text.split_once('x') {
        _ if text == "process" => Ok(Kind::Process),
        None => Ok(Kind::Agents(text.parse().map_err(|_| bad())?, None)),
        Some((n, t)) => Ok(Kind::Agents(n.parse().map_err(|_| bad())?, Some(t.parse().map_err(|_| bad())?))),
    }
}

/// How the bots of a run are spread.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// `mino-loadgen walk` alone.
    Process,
    /// A coordinator and this many agents, each with this many bot threads
    /// (None: one a core).
    Agents(usize, Option<usize>),
}

impl Kind {
    fn label(self) -> String {
        match self {
            Kind::Process => "process".into(),
            Kind::Agents(n, None) => n.to_string(),
            Kind::Agents(n, Some(t)) => format!("{n}x{t}"),
        }
    }

    fn title(self) -> String {
        match self {
            Kind::Process => "one process (control)".into(),
            Kind::Agents(1, None) => "1 agent".into(),
            Kind::Agents(n, None) => format!("{n} agents"),
            Kind::Agents(1, Some(t)) => format!("1 agent, {t} bot threads"),
            Kind::Agents(n, Some(t)) => format!("{n} agents, {t} bot threads each"),
        }
    }
}

/// The release binaries beside this example (`target/release/examples/..`).
fn release_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("own path");
    let dir = exe.parent().and_then(Path::parent).expect("target/release");
    let path = dir.join(name);
    assert!(path.exists(), "{} missing: cargo build --release -p mino-server -p mino-loadgen", path.display());
    path
}

fn run_once(kind: Kind, args: &Args, commands: &mut String) -> Value {
    let shard = Shard::start(release_bin("mino-server"), &[]);
    let loadgen = release_bin("mino-loadgen");
    let (bots, ramp, hold, pid, url) = (
        args.bots.to_string(),
        args.ramp.to_string(),
        format!("{}s", args.hold),
        shard.pid().to_string(),
        shard.ws_url(),
    );
    let mut walk =
        vec!["walk", "--bots", &bots, "--ramp", &ramp, "--duration", &hold, "--url", &url, "--server-pid", &pid];
    let run: LoadgenRun = match kind {
        Kind::Process => {
            let _ = writeln!(commands, "mino-loadgen {} --json FILE", walk.join(" "));
            mino_testkit::loadgen::run(&loadgen, &[walk.as_slice(), &["--quiet"]].concat())
        }
        Kind::Agents(n, threads) => {
            let agents = n.to_string();
            let threads = threads.map(|t| t.to_string());
            let local: Vec<&str> = threads.as_deref().map_or_else(Vec::new, |t| vec!["--threads", t]);
            walk.extend(["--agents", &agents, "--quiet"]);
            let coordinator = Coordinator::start(&loadgen, &walk);
            let _ = writeln!(commands, "mino-loadgen {} --listen 127.0.0.1:0 --json FILE", walk.join(" "));
            let names: Vec<String> = (0..n).map(|i| format!("agent-{i}")).collect();
            let _agents: Vec<Agent> =
                names.iter().map(|name| Agent::start(&loadgen, coordinator.url(), name, &local)).collect();
            let _ = writeln!(
                commands,
                "  {n} x mino-loadgen agent --coordinator ws://127.0.0.1:PORT/ --name agent-I {}",
                local.join(" ")
            );
            coordinator.finish()
        }
    };
    drop(shard);
    run.json
}

/// The 1, 5 and 15 minute load averages (`/proc/loadavg`); empty when unreadable.
fn load_average() -> Vec<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).filter_map(|v| v.parse().ok()).collect())
        .unwrap_or_default()
}

fn loads(v: &Value) -> String {
    v.as_array().map_or_else(String::new, |a| a.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn gap(j: &Value, p: &str) -> f64 {
    num(j, &format!("snapshot_gap_ms.{p}"))
}

fn main() {
    let args = Args::parse();
    std::fs::create_dir_all(&args.out).expect("output folder");
    let kinds = args.kinds.clone();
    let mut commands = String::new();
    let mut runs: Vec<(Kind, usize, Value)> = Vec::new();
    for r in 1..=args.repeat {
        // Alternate the order so that no kind always runs first.
        let order: Vec<Kind> = if r % 2 == 1 { kinds.to_vec() } else { kinds.iter().rev().copied().collect() };
        for kind in order {
            eprintln!("run {r}: {}", kind.title());
            let _ = writeln!(commands, "# agents-{}-{r}", kind.label());
            let load_before = load_average();
            let mut json = run_once(kind, &args, &mut commands);
            json["load_before"] = load_before.into();
            json["load_after"] = load_average().into();
            let path = args.out.join(format!("agents-{}-{r}.json", kind.label()));
            std::fs::write(&path, format!("{json:#}\n")).expect("raw report written");
            runs.push((kind, r, json));
        }
    }
    let commands_path = args.out.join("commands-agents.txt");
    let before = std::fs::read_to_string(&commands_path).unwrap_or_default();
    std::fs::write(&commands_path, before + &commands).expect("commands written");
    let mut table = String::from(
        "| bots spread | run | own gap p50 / p95 / p99 / max, ms | gaps counted | connected | loadgen CPU (busiest host) | load average before → after | verdict |\n|---|---|---|---|---|---|---|---|\n",
    );
    for (kind, r, j) in &runs {
        let _ = writeln!(
            table,
            "| {} | {r} | {:.1} / {:.1} / {:.1} / {:.1} | {} | {} | {:.0} % | {} → {} | {} |",
            kind.title(),
            gap(j, "p50"),
            gap(j, "p95"),
            gap(j, "p99"),
            gap(j, "max"),
            num(j, "snapshot_gap_ms.count"),
            num(j, "connected"),
            num(j, "loadgen_cpu_pct"),
            loads(&j["load_before"]),
            loads(&j["load_after"]),
            j["verdict"].as_str().unwrap_or("?")
        );
    }
    for kind in kinds {
        let of = |p: &str| median(runs.iter().filter(|(k, _, _)| *k == kind).map(|(_, _, j)| gap(j, p)).collect());
        let _ = writeln!(
            table,
            "| **{}** | median | **{:.1} / {:.1} / {:.1} / {:.1}** | | | | | |",
            kind.title(),
            of("p50"),
            of("p95"),
            of("p99"),
            of("max")
        );
    }
    print!("{table}");
}
