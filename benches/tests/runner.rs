//! The scale runner's machinery against the real binaries (the debug builds
//! `cargo build --workspace --bins` makes): two shards and Redis started the
//! test kit's way, a loadgen run with the sampler around it, the analysis
//! finding its hold in the samples, the commands recorded for RESULTS.md,
//! and a section's files replaced when it runs again.

use mino_benches::parts::{one_phase, Deployment, PhasesOf, Shards};
use mino_benches::plan::{Mode, Plan};
use mino_benches::raw::{self, Windows};
use mino_benches::runner::{workspace_root, Paths, Run};
use mino_benches::section::Section;
use mino_testkit::{server_bin, WorkDir};

/// A run writing under `dir` with the debug binaries as its copies.
fn run_in(dir: &WorkDir) -> Run {
    let mut plan = Plan::of(Mode::Quick);
    plan.sections = vec![Section::Aoi];
    let run = Run::new(plan, Paths::new(&workspace_root(), Some(dir.path())), false, true).expect("a run");
    let server = server_bin();
    let loadgen = server.with_file_name("mino-loadgen");
    assert!(loadgen.exists(), "{} is missing: cargo build --workspace --bins", loadgen.display());
    std::fs::copy(&server, run.binary("mino-server")).expect("copy the server");
    std::fs::copy(&loadgen, run.binary("mino-loadgen")).expect("copy the loadgen");
    run
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_walk_on_two_shards_is_sampled_and_its_hold_found() {
    let dir = WorkDir::new("scale-runner");
    let mut run = run_in(&dir);
    std::fs::write(run.paths.raw.join("aoi-9-on.json"), "{}").expect("a stale file");
    run.begin(Section::Aoi).expect("the section begins");
    assert!(!run.paths.raw.join("aoi-9-on.json").exists(), "a rerun of a section replaces its files");

    let d = Deployment::two(&run, &Shards::with(&[])).await;
    let args: Vec<String> = ["--bots", "20", "--ramp", "100", "--duration", "3s"].map(String::from).to_vec();
    d.measured(&run, "aoi-20-on", "walk", &args, PhasesOf::Report(one_phase)).await.expect("measured");
    d.stop(&run, "aoi-20-on");

    let w: Windows = raw::read(&run.paths.raw.join("aoi-20-on.server.json")).expect("readable").expect("written");
    let w = w.windows[0].as_ref().expect("the hold was found in the samples");
    assert_eq!(w.players, 20);
    assert!((2.0..=4.0).contains(&w.seconds), "the last hold-length of the plateau: {} s", w.seconds);
    for name in ["a", "b"] {
        let s = &w.shards[name];
        assert!(s.ticks > 0 && s.frames_sent > 0 && s.cpu_cores.is_some() && s.rss_bytes.is_some(), "{name}: {s:?}");
        assert!(s.relay_lag_ms.p50.is_some(), "{name} relays the other's players: {s:?}");
    }
    let redis = w.redis.as_ref().expect("Redis sampled");
    assert!(redis.commands_per_s.is_some_and(|c| c > 0.0), "{redis:?}");
    let commands = std::fs::read_to_string(run.paths.raw.join("commands-aoi.txt")).expect("commands recorded");
    for label in ["redis\tredis-server", "shard a\ttarget/release/mino-server", "shard b\t", "aoi-20-on\t"] {
        assert!(commands.contains(label), "{label:?} in {commands}");
    }
    assert!(run.paths.raw.join("logs/aoi-20-on-shard-a.log").exists(), "the shard's log kept");
    run.finish();
}

/// The runner's commands (its `cargo build` first) go without the variables
/// `cargo run` sets: with them, every `benches/scale.sh` rebuilt ring and the
/// crates over it twice (its build script watches `CARGO_PKG_NAME`).
#[tokio::test]
async fn commands_go_without_what_cargo_run_set() {
    // cargo sets them for the tests it runs as for the programs it runs.
    assert!(std::env::var_os("CARGO_PKG_NAME").is_some(), "run under cargo test");
    let dir = WorkDir::new("scale-runner-env");
    let run = run_in(&dir);
    let log = dir.path().join("env.log");
    assert!(run.command("env", "env", &[], Some(&log)).await.expect("env runs"), "env succeeded");
    let env = std::fs::read_to_string(&log).expect("its output");
    assert!(env.lines().any(|l| l.starts_with("PATH=")), "env printed its environment: {env}");
    let leaked: Vec<&str> = env
        .lines()
        .filter(|l| l.split('=').next().is_some_and(|k| k.starts_with("CARGO_PKG_") || k == "CARGO_MANIFEST_DIR"))
        .collect();
    assert!(leaked.is_empty(), "cargo run's variables reached the command: {leaked:?}");
}
