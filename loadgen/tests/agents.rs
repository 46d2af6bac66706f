//! Bots on several machines, on this one: a coordinator (`--agents N`) and
//! its agents, each a `mino-loadgen` process, against the real server.

use mino_testkit::loadgen::{num, Agent, Coordinator};
use mino_testkit::{server_bin, Shard};
use serde_json::Value;
use std::time::Duration;

/// The loadgen binary cargo built for these tests.
const LOADGEN: &str = env!("CARGO_BIN_EXE_mino-loadgen");

/// Bound on an agent's exit after the run.
const EXIT_WAIT: Duration = Duration::from_secs(15);

fn agents_of(j: &Value) -> &Vec<Value> {
    j["agents"].as_array().unwrap_or_else(|| panic!("per-agent figures in {j:#}"))
}

fn fleet_agent<'a>(j: &'a Value, name: &str) -> &'a Value {
    let agents = j["fleet"]["agents"].as_array().unwrap_or_else(|| panic!("fleet.agents in {j:#}"));
    agents.iter().find(|a| a["name"] == name).unwrap_or_else(|| panic!("agent {name} in {j:#}"))
}

#[test]
fn three_agents_share_the_bots_and_merge_their_histograms() {
    let server = Shard::start(server_bin(), &[]);
    let pid = server.pid().to_string();
    let url = server.ws_url();
    let coordinator = Coordinator::start(
        LOADGEN,
        &[
            "walk",
            "--bots",
            "30",
            "--ramp",
            "60",
            "--duration",
            "3s",
            "--url",
            &url,
            "--server-pid",
            &pid,
            "--agents",
            "3",
        ],
    );
    let mut agents: Vec<Agent> =
        ["a", "b", "c"].iter().map(|n| Agent::start(LOADGEN, coordinator.url(), n, &["--threads", "1"])).collect();
    let run = coordinator.finish();
    let j = &run.json;
    assert_eq!((num(j, "bots"), num(j, "connected"), num(j, "errors")), (30.0, 30.0, 0.0), "{j:#}");
    // Each bot joined once: the agents ran different bots.
    assert_eq!(num(j, "welcome_ms.count"), 30.0, "{j:#}");
    let p50 = num(j, "snapshot_gap_ms.p50");
    assert!((45.0..=56.0).contains(&p50), "merged median gap {p50} ms");
    // Every bot's gaps are in the merged histogram: 30 bots, 20 a second, about 3 s.
    assert!(num(j, "snapshot_gap_ms.count") > 30.0 * 20.0 * 2.0, "{j:#}");
    assert!(num(j, "server.cpu_per_frame_us.total") > 0.0, "the coordinator read the server: {j:#}");
    let per_agent = agents_of(j);
    assert_eq!(per_agent.len(), 3, "{j:#}");
    for (a, name) in per_agent.iter().zip(["a", "b", "c"]) {
        assert_eq!(a["name"], name);
        assert_eq!((num(a, "bots"), num(a, "connected")), (10.0, 10.0), "{a:#}");
        assert!(a["verdict"] == "measured" || a["verdict"] == "not judgeable", "{a:#}");
        assert!(num(a, "host_loadgen_cpu_pct") >= num(a, "loadgen_cpu_pct"), "{a:#}");
    }
    let fleet = &j["fleet"];
    assert_eq!((num(fleet, "expected"), num(fleet, "joined"), num(fleet, "never_joined")), (3.0, 3.0, 0.0));
    assert_eq!(num(fleet, "finished"), 3.0, "{fleet:#}");
    assert_eq!(fleet_agent(j, "b")["status"], "finished");
    assert_eq!(num(fleet_agent(j, "c"), "agent"), 2.0, "sorted by name");
    assert!(run.stdout.contains("agent a") && run.stdout.contains("3 joined"), "{}", run.stdout);
    for a in &mut agents {
        let status = a.wait_exit(EXIT_WAIT).unwrap_or_else(|| panic!("agent still running: {}", a.stderr()));
        assert!(status.success(), "agent failed: {}", a.stderr());
    }
}

#[test]
fn steps_over_two_agents_give_each_step_its_agents() {
    let server = Shard::start(server_bin(), &[]);
    let url = server.ws_url();
    let coordinator = Coordinator::start(
        LOADGEN,
        &[
            "steps", "--steps", "6,13", "--hold", "1500ms", "--settle", "200ms", "--ramp", "50", "--url", &url,
            "--agents", "2",
        ],
    );
    let _agents: Vec<Agent> =
        ["x", "y"].iter().map(|n| Agent::start(LOADGEN, coordinator.url(), n, &["--threads", "1"])).collect();
    let run = coordinator.finish();
    let steps = run.json["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 2, "{:#}", run.json);
    for (step, (n, shares)) in steps.iter().zip([(6.0, [3.0, 3.0]), (13.0, [7.0, 6.0])]) {
        assert_eq!(num(step, "connected"), n, "{step:#}");
        let bots: Vec<f64> = agents_of(step).iter().map(|a| num(a, "bots")).collect();
        assert_eq!(bots, shares, "bot i runs on agent i % 2: {step:#}");
    }
    // The second step's welcomes are only its 7 new bots, over both agents.
    assert_eq!(num(&steps[1], "welcome_ms.count"), 7.0);
}

#[test]
fn an_agent_killed_mid_run_is_reported_and_the_others_still_report() {
    let server = Shard::start(server_bin(), &[]);
    let url = server.ws_url();
    let started = std::time::Instant::now();
    let coordinator = Coordinator::start(
        LOADGEN,
        &["walk", "--bots", "20", "--ramp", "100", "--duration", "8s", "--url", &url, "--agents", "2"],
    );
    let mut doomed = Agent::start(LOADGEN, coordinator.url(), "doomed", &["--threads", "1"]);
    let mut survivor = Agent::start(LOADGEN, coordinator.url(), "survivor", &["--threads", "1"]);
    // Once every bot plays, the run is settling or holding: kill one agent.
    wait_players(&server, 20.0);
    doomed.process().kill9();
    let killed = started.elapsed().as_secs_f64();
    let run = coordinator.finish();
    let j = &run.json;
    // Marked when it was lost, not when the survivor answered at the end
    // of the 8 s hold (an outside trial: killed at 3.7 s, said at 11.4 s).
    let at = num(&j["interrupted"], "at_s");
    assert!(at <= killed + 2.5, "lost at {at} s, killed at {killed:.1} s after the coordinator's start");
    let lost = fleet_agent(j, "doomed");
    assert_eq!(lost["status"], "died", "{j:#}");
    assert!(lost["lost_during"].is_string() && lost["reason"].is_string(), "{lost:#}");
    assert_eq!(fleet_agent(j, "survivor")["status"], "finished");
    assert_eq!(num(&j["fleet"], "finished"), 1.0);
    // The survivor's bots are measured; the dead agent's are not.
    assert_eq!(num(j, "connected"), 10.0, "{j:#}");
    assert!(num(j, "snapshot_gap_ms.count") > 10.0 * 20.0 * 2.0, "{j:#}");
    let per_agent = agents_of(j);
    let verdict = |name: &str| per_agent.iter().find(|a| a["name"] == name).map(|a| a["verdict"].clone());
    assert_eq!(verdict("doomed"), Some(Value::from("lost")), "{j:#}");
    assert_ne!(verdict("survivor"), Some(Value::from("lost")), "{j:#}");
    assert!(run.stderr.contains("agent doomed lost during"), "{}", run.stderr);
    // A partial run: the report says so, and why.
    let reason = j["interrupted"]["reason"].as_str().unwrap_or_else(|| panic!("interrupted in {j:#}"));
    assert!(reason.starts_with("agent doomed lost during"), "{reason}");
    assert_eq!(j["verdict"], "interrupted", "{j:#}");
    assert!(run.stdout.contains("INTERRUPTED at "), "{}", run.stdout);
    let status = survivor.wait_exit(EXIT_WAIT).expect("the survivor leaves after bye");
    assert!(status.success(), "{}", survivor.stderr());
}

#[test]
fn a_run_whose_every_agent_is_lost_fails_and_its_report_says_so() {
    // Its report said "interrupted", exit 0, while the process exited 1
    // (an outside trial): a script reading the report took it for a pass.
    let server = Shard::start(server_bin(), &[]);
    let url = server.ws_url();
    let coordinator = Coordinator::start(
        LOADGEN,
        &["walk", "--bots", "6", "--ramp", "100", "--duration", "4s", "--url", &url, "--agents", "1"],
    );
    let mut only = Agent::start(LOADGEN, coordinator.url(), "only", &["--threads", "1"]);
    wait_players(&server, 6.0);
    only.process().kill9();
    let run = coordinator.finish_any();
    let j = &run.json;
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert_eq!((&j["outcome"]["verdict"], &j["outcome"]["exit_code"]), (&"failed".into(), &1.into()), "{j:#}");
    let reason = j["outcome"]["reason"].as_str().unwrap_or_default();
    assert!(reason.starts_with("every agent was lost before the end (the first: agent only lost during"), "{reason}");
    assert!(run.stderr.contains("every agent was lost before the end"), "{}", run.stderr);
}

#[test]
fn an_agent_that_never_starts_is_reported_and_its_bots_go_to_the_others() {
    let server = Shard::start(server_bin(), &[]);
    let url = server.ws_url();
    let coordinator = Coordinator::start(
        LOADGEN,
        &[
            "walk",
            "--bots",
            "12",
            "--ramp",
            "100",
            "--duration",
            "1s",
            "--url",
            &url,
            "--agents",
            "3",
            "--agents-wait",
            "3s",
        ],
    );
    let _agents: Vec<Agent> =
        ["p", "q"].iter().map(|n| Agent::start(LOADGEN, coordinator.url(), n, &["--threads", "1"])).collect();
    let run = coordinator.finish();
    let j = &run.json;
    let fleet = &j["fleet"];
    assert_eq!((num(fleet, "expected"), num(fleet, "joined"), num(fleet, "never_joined")), (3.0, 2.0, 1.0), "{j:#}");
    assert_eq!(num(j, "connected"), 12.0, "the two agents ran every bot: {j:#}");
    let bots: Vec<f64> = agents_of(j).iter().map(|a| num(a, "bots")).collect();
    assert_eq!(bots, [6.0, 6.0]);
    assert!(run.stdout.contains("1 never joined"), "{}", run.stdout);
}

#[test]
fn an_agent_whose_coordinator_dies_stops_its_bots_and_fails() {
    let server = Shard::start(server_bin(), &[]);
    let url = server.ws_url();
    let mut coordinator = Coordinator::start(
        LOADGEN,
        &["walk", "--bots", "8", "--ramp", "100", "--duration", "60s", "--url", &url, "--agents", "1"],
    );
    let mut orphan = Agent::start(LOADGEN, coordinator.url(), "orphan", &["--threads", "1"]);
    wait_players(&server, 8.0);
    coordinator.kill();
    let status = orphan.wait_exit(EXIT_WAIT).unwrap_or_else(|| panic!("agent still running: {}", orphan.stderr()));
    assert!(!status.success(), "an orphan agent fails");
    assert!(orphan.stderr().contains("coordinator was lost"), "{}", orphan.stderr());
    // Its bots left the server.
    wait_players(&server, 0.0);
}

#[test]
fn idle_over_two_agents_measures_the_server_from_the_coordinator() {
    let server = Shard::start(server_bin(), &["--ping-interval-ms", "200", "--peer-timeout-ms", "1000"]);
    let pid = server.pid().to_string();
    let url = server.ws_url();
    let coordinator = Coordinator::start(
        LOADGEN,
        &[
            "idle",
            "--bots",
            "20",
            "--ramp",
            "100",
            "--hold",
            "2s",
            "--url",
            &url,
            "--server-pid",
            &pid,
            "--agents",
            "2",
        ],
    );
    let _agents: Vec<Agent> =
        ["i1", "i2"].iter().map(|n| Agent::start(LOADGEN, coordinator.url(), n, &["--threads", "1"])).collect();
    let run = coordinator.finish();
    let j = &run.json;
    assert_eq!((num(j, "connected"), num(j, "errors")), (20.0, 0.0), "{j:#}");
    assert!(j["server_bytes_per_connection"].is_u64(), "{j:#}");
    // The coordinator read the server's process: its memory, and its CPU in
    // clock ticks (10 ms), which 20 standing players may not fill in 2 s, so
    // the figure is only required to be there (absent when not read).
    assert_eq!(j["server"]["pids"], serde_json::json!([server.pid()]), "{j:#}");
    assert!(num(j, "server_rss_after_bytes") > 0.0, "{j:#}");
    assert!(num(j, "server_cpu_per_tick_ms") >= 0.0, "{j:#}");
    // The speakers join from the coordinator; the agents' idle bots hear
    // every line (but those still on their way at the end). A line a tick
    // for 4 s is 80; a loaded machine delays some ticks.
    let lines = num(j, "chat_cost.lines");
    assert!(lines >= 10.0, "{j:#}");
    assert!(num(j, "chat_cost.deliveries") >= (lines - 5.0) * 20.0, "{j:#}");
}

#[test]
fn a_crowd_over_two_agents_gathers_and_keeps_every_bots_budget() {
    let server = Shard::start(
        server_bin(),
        &["--cell-size", "100", "--speed", "240", "--view-hysteresis-ticks", "8", "--view-budget-bytes", "512"],
    );
    let url = server.ws_url();
    let coordinator = Coordinator::start(
        LOADGEN,
        &[
            "crowd",
            "--url",
            &url,
            "--bots",
            "30",
            "--ramp",
            "100",
            "--hold",
            "2s",
            "--point",
            "450,450",
            "--budget-bytes",
            "512",
            "--agents",
            "2",
        ],
    );
    let _agents: Vec<Agent> =
        ["c1", "c2"].iter().map(|n| Agent::start(LOADGEN, coordinator.url(), n, &["--threads", "1"])).collect();
    let run = coordinator.finish();
    let j = &run.json;
    assert_eq!((num(j, "connected"), num(j, "gathered"), num(j, "gathered_at_end")), (30.0, 30.0, 30.0), "{j:#}");
    assert!(num(j, "late_ticks.ticks") > 0.0, "the coordinator scraped the shard: {j:#}");
    // Every bot's bytes a tick, from both agents.
    assert_eq!(num(j, "budget.cell_bytes_per_tick.count"), 30.0, "{j:#}");
    assert_eq!(j["budget"]["within_budget"], true, "{j:#}");
    assert!(j["aoi"]["observers"].is_null(), "no observers over agents: {j:#}");
}

#[test]
fn an_agent_beyond_those_expected_is_told_the_run_has_them_all() {
    let server = Shard::start(server_bin(), &[]);
    let url = server.ws_url();
    let coordinator = Coordinator::start(
        LOADGEN,
        &["walk", "--bots", "4", "--ramp", "100", "--duration", "6s", "--url", &url, "--agents", "1"],
    );
    let _taken = Agent::start(LOADGEN, coordinator.url(), "taken", &["--threads", "1"]);
    coordinator.wait_stderr("1 of 1 agents ready", EXIT_WAIT);
    // Three connections that say nothing (each held up to the 5 s silence bound) hold up no refusal:
    // one at a time, the extra agent would wait past the end of the run.
    let address = coordinator.url().trim_start_matches("ws://").trim_end_matches('/').to_owned();
    let _silent: Vec<std::net::TcpStream> =
        (0..3).map(|_| std::net::TcpStream::connect(&address).expect("connect to the coordinator")).collect();
    let mut extra = Agent::start(LOADGEN, coordinator.url(), "extra", &["--threads", "1"]);
    let status = extra.wait_exit(EXIT_WAIT).unwrap_or_else(|| panic!("extra agent still running: {}", extra.stderr()));
    assert!(!status.success(), "a refused agent fails: {}", extra.stderr());
    assert!(
        extra.stderr().contains("the coordinator refused this agent: this run expects 1 agent and has it"),
        "{}",
        extra.stderr()
    );
    let run = coordinator.finish();
    assert!(run.stderr.contains("agent extra from 127.0.0.1:"), "{}", run.stderr);
    let fleet = &run.json["fleet"];
    assert_eq!((num(fleet, "joined"), num(fleet, "finished")), (1.0, 1.0), "{fleet:#}");
    assert!(run.json["interrupted"].is_null(), "{:#}", run.json);
}

#[test]
fn the_coordinators_frames_choice_reaches_its_agents_bots() {
    // `--frames full` (the control of a delta measurement) is the run's, not
    // an agent's: before it travelled with the run, the agents' bots asked
    // for deltas whatever the coordinator was given. Whole shard, 20
    // walkers: full frames carry every player every tick, deltas about a
    // byte a walker going straight.
    let server = Shard::start(server_bin(), &[]);
    let url = server.ws_url();
    let bytes_per_s = |frames: &str| {
        let coordinator = Coordinator::start(
            LOADGEN,
            &[
                "walk",
                "--bots",
                "20",
                "--ramp",
                "200",
                "--duration",
                "2s",
                "--url",
                &url,
                "--frames",
                frames,
                "--agents",
                "1",
            ],
        );
        let _agent = Agent::start(LOADGEN, coordinator.url(), "one", &["--threads", "1"]);
        let run = coordinator.finish();
        assert_eq!(num(&run.json, "connected"), 20.0, "{:#}", run.json);
        num(&run.json, "bytes_per_s")
    };
    let (deltas, full) = (bytes_per_s("deltas"), bytes_per_s("full"));
    assert!(full > 2.5 * deltas, "full frames {full} B/s against deltas {deltas} B/s");
}

#[test]
fn an_agent_given_the_runs_options_is_told_they_are_the_coordinators() {
    let out = std::process::Command::new(LOADGEN)
        .args(["agent", "--coordinator", "ws://127.0.0.1:9/", "--url", "ws://127.0.0.1:8080/ws", "--frames", "full"])
        .output()
        .expect("loadgen runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "a usage error: {stderr}");
    assert!(stderr.contains("an agent takes --url, --frames from its coordinator's run"), "{stderr}");
}

/// Waits, from a test without a runtime, until `server` has `n` players.
fn wait_players(server: &Shard, n: f64) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(server.wait_metric("mino_players", n));
}
