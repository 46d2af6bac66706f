//! The default walk scenario against the real server: the issue-2 command line.

use mino_testkit::loadgen::{self, num};
use mino_testkit::process::Process;
use mino_testkit::workdir::WorkDir;
use mino_testkit::{server_bin, Shard, Signal};
use std::io::{BufRead, BufReader};

/// The loadgen binary cargo built for these tests.
const LOADGEN: &str = env!("CARGO_BIN_EXE_mino-loadgen");

#[test]
fn twenty_walkers_connect_and_see_a_snapshot_every_tick() {
    let server = Shard::start(server_bin(), &[]);
    let pid = server.pid().to_string();
    let run = loadgen::run(
        LOADGEN,
        &["--url", &server.ws_url(), "--bots", "20", "--ramp", "40", "--duration", "3s", "--server-pid", &pid],
    );
    let j = &run.json;
    assert_eq!(num(j, "bots"), 20.0);
    assert_eq!(num(j, "connected"), 20.0, "{j:#}");
    assert_eq!((num(j, "busy"), num(j, "errors")), (0.0, 0.0), "{j:#}");
    assert_eq!(num(j, "welcome_ms.count"), 20.0);
    for key in ["welcome_ms", "snapshot_gap_ms", "relayed_snapshot_gap_ms"] {
        for p in ["p50", "p95", "p99", "max"] {
            num(j, &format!("{key}.{p}"));
        }
    }
    // 20 Hz: the median gap is one tick; a debug server on a shared machine gets slack above.
    let p50 = num(j, "snapshot_gap_ms.p50");
    assert!((45.0..=56.0).contains(&p50), "median gap {p50} ms");
    assert!(num(j, "snapshot_gap_ms.count") > 20.0 * 20.0 * 2.0);
    // The same gaps timed at the socket (kernel receive times): as many,
    // bar the reads before the kernel turned stamps on, and one tick apart.
    let at_socket = num(j, "socket_gap_ms.count");
    assert!(at_socket >= 0.9 * num(j, "snapshot_gap_ms.count"), "{j:#}");
    let p50 = num(j, "socket_gap_ms.p50");
    assert!((45.0..=56.0).contains(&p50), "median gap at the socket {p50} ms");
    let ticks = num(j, "ticks_per_s");
    assert!((18.0..=21.0).contains(&ticks), "tick rate seen {ticks}");
    assert!(num(j, "frames") > 0.0 && num(j, "bytes") > num(j, "frames"));
    assert_eq!(num(j, "shards_seen"), 1.0);
    assert_eq!(num(j, "relayed_snapshot_gap_ms.count"), 0.0);
    assert!(num(j, "server.cpu_per_frame_us.total") > 0.0, "{j:#}");
    assert!(num(j, "server.rss_per_player_bytes") > 0.0);
    assert!(run.stdout.contains("snapshot gap (own)"), "summary printed: {}", run.stdout);
    assert!(run.stdout.contains("own gap at the socket"), "summary printed: {}", run.stdout);
    // The gap less silent ticks hides a stall's skipped ticks too: the table says so.
    assert!(
        run.stdout.contains("gap, silent ticks out") && run.stdout.contains(mino_loadgen::report::table::NEWS_GAP_NOTE),
        "{}",
        run.stdout
    );
}

#[test]
fn bots_spread_round_robin_over_several_urls() {
    let a = Shard::start(server_bin(), &["--shard-id", "11"]);
    let b = Shard::start(server_bin(), &["--shard-id", "22"]);
    let run = loadgen::run(
        LOADGEN,
        &["--url", &a.ws_url(), "--url", &b.ws_url(), "--bots", "10", "--ramp", "50", "--duration", "1s", "--quiet"],
    );
    let j = &run.json;
    assert_eq!(num(j, "connected"), 10.0, "{j:#}");
    assert_eq!(num(j, "shards_seen"), 2.0, "{j:#}");
    assert_eq!(j["shard_ids"], serde_json::json!([0x11, 0x22]), "--shard-id is hex");
    assert!(run.stdout.is_empty(), "--quiet prints nothing: {}", run.stdout);
}

#[test]
fn unreachable_server_is_reported_as_refused_not_as_local() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let url = format!("ws://127.0.0.1:{port}/ws");
    let run = loadgen::run_failing(
        LOADGEN,
        &["--url", &url, "--bots", "3", "--duration", "0.5s", "--no-reconnect", "--quiet"],
    );
    let j = &run.json;
    assert_eq!(num(j, "connected"), 0.0);
    assert_eq!(num(j, "error_kinds.connect_refused"), 3.0, "{j:#}");
    assert!(j["error_kinds"].get("local_fd_limit").is_none());
    // A run that welcomed no bot measured nothing: it fails, saying why and where.
    assert!(
        run.stderr
            .contains("no bot was welcomed (failures: connect_refused 3); is a shard listening at ws://127.0.0.1:"),
        "{}",
        run.stderr
    );
}

#[test]
fn bad_options_are_refused_before_any_bot_starts() {
    for (args, says) in [
        (&["--url", "ws://127.0.0.1:99999/ws", "--bots", "1", "--duration", "1s"][..], "bad port"),
        (&["--bots", "0"], "not a count of at least 1"),
        (&["--duration", "0"], "is no time"),
        (&["--duration", "0.1ms"], "is shorter than a measurement can be: give at least 100ms"),
        (&["crowd", "--hold", "50ms"], "is shorter than a measurement can be"),
        // Accepted, and then measured nothing or nonsense (an outside trial).
        (&["--server-pid", "4000000000"], "no live process with pid 4000000000"),
        (&["crowd", "--metrics-url", "ftp://x/metrics"], "give http://HOST:PORT/metrics"),
        (&["crowd", "--budget-bytes", "0"], "0 is not in 512.."),
        (&["crowd", "--gather-timeout", "0s"], "is no time"),
        (&["failover", "--warmup", "0s", "--kill-pid", "1"], "is no time"),
        // Command lines that cannot work, refused as such (they exited 1).
        (&["--url", "wss://127.0.0.1:9/ws", "--transport", "webtransport"], "each shard's own ws:// URL"),
        (&["agent", "--coordinator", "http://127.0.0.1:1/"], "give ws://HOST:PORT/"),
        (&["idle", "--profile", "heavy"], "--profile does not apply to idle"),
        (&["--profile", "heavy", "idle"], "--profile does not apply to idle"),
    ] {
        let mut cmd = std::process::Command::new(LOADGEN);
        let out = cmd.args(args).arg("--quiet").output().expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.code() == Some(2) && stderr.contains(says), "{args:?}: {stderr}");
    }
}

#[test]
fn no_shard_at_the_url_exits_3_whatever_the_scenario() {
    // Scenarios that probe the shard's world first (crowd, a density, an
    // observer share) exited 1 with a garbled chain (an outside trial).
    for args in [
        &["crowd", "--bots", "2", "--hold", "1s"][..],
        &["walk", "--bots", "2", "--duration", "1s", "--density", "2"],
        &["walk", "--bots", "2", "--duration", "1s", "--observers", "1"],
        &["walk", "--bots", "2", "--duration", "1s"],
    ] {
        // Exit 3 writes its report, the probe's too (its outcome alone).
        let dir = mino_testkit::WorkDir::new("loadgen-no-shard");
        let json = dir.join("r.json");
        let out = std::process::Command::new(LOADGEN)
            .args(args)
            .args(["--url", "ws://127.0.0.1:9/ws", "--join-timeout", "1s", "-q", "--json"])
            .arg(&json)
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {stderr}");
        assert!(stderr.contains("verdict: nobody welcomed (exit 3)"), "{args:?}: {stderr}");
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap_or_default()).unwrap_or_default();
        assert_eq!(report["outcome"]["exit_code"], 3, "{args:?}: {report:#}");
    }
}

#[test]
fn a_crowd_point_outside_the_world_is_refused() {
    let server = Shard::start(server_bin(), &["--world-size", "1000"]);
    let out = std::process::Command::new(LOADGEN)
        .args(["crowd", "--url", &server.ws_url(), "--bots", "2", "--hold", "1s", "--point", "5000,5000", "-q"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--point 5000,5000 is outside the shard's world (0 to 1000 by 0 to 1000)"), "{stderr}");
}

#[test]
fn a_failed_tls_handshake_is_said_as_such() {
    // wss:// to a plain shard: the hint spoke of paths and 503s (an outside
    // trial), where the certificate or the scheme is what is wrong.
    let server = Shard::start(server_bin(), &[]);
    let url = server.ws_url().replace("ws://", "wss://");
    let out = std::process::Command::new(LOADGEN)
        .args(["--url", &url, "--bots", "2", "--duration", "1s", "--join-timeout", "2s", "--insecure", "-q"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&format!("the TLS handshake with {url} failed")) && stderr.contains("tls "), "{stderr}");
}

#[test]
fn a_report_file_that_cannot_be_written_is_refused_before_the_run() {
    // A folder given as --json ran the whole run, then lost its report (an
    // outside trial); the same file for --json and --plot lost it to the
    // chart.
    let dir = mino_testkit::WorkDir::new("loadgen-json");
    let folder = dir.path().display().to_string();
    let file = dir.join("r.json").display().to_string();
    for (args, says) in [
        (vec!["--json", folder.as_str()], format!("--json {folder}: a folder, not a file")),
        (vec!["--plot", folder.as_str()], format!("--plot {folder}: a folder, not a file")),
        (vec!["--json", file.as_str(), "--plot", file.as_str()], format!("--json and --plot are both {file}")),
    ] {
        let started = std::time::Instant::now();
        let out = std::process::Command::new(LOADGEN)
            .args(["--url", "ws://127.0.0.1:9/ws", "--bots", "1", "--duration", "30s", "-q"])
            .args(&args)
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(&says), "{args:?}: {stderr}");
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "{args:?}: said after the run");
    }
    assert!(!dir.join("r.json").exists(), "no file left before there is a report");
}

#[test]
fn a_summary_whose_reader_is_gone_is_lost_without_a_panic() {
    let server = Shard::start(server_bin(), &[]);
    let mut cmd = std::process::Command::new(LOADGEN);
    cmd.args(["--url", &server.ws_url(), "--bots", "2", "--duration", "0.5s"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut loadgen = Process::spawn("mino-loadgen", &mut cmd);
    drop(loadgen.child_mut().stdout.take());
    let out = loadgen.output(loadgen::RUN_WAIT).expect("finishes");
    let (status, stderr) = (out.status, String::from_utf8_lossy(&out.stderr));
    assert!(status.success() && !stderr.contains("panicked"), "{status:?}: {stderr}");
}

#[test]
fn without_area_of_interest_the_report_keeps_its_fields_and_adds_none() {
    let server = Shard::start(server_bin(), &[]);
    let run = loadgen::run(LOADGEN, &["--url", &server.ws_url(), "--bots", "6", "--duration", "1s", "-q"]);
    let j = &run.json;
    let mut keys: Vec<&str> = j.as_object().expect("an object").keys().map(String::as_str).collect();
    keys.sort_unstable();
    let old = [
        "admitted",
        "bots",
        "busy",
        "busy_refusals",
        "bytes",
        "bytes_per_s",
        "connected",
        "error_kinds",
        "errors",
        "frames",
        "frames_per_s",
        "interrupted",
        "judgeable",
        "loadgen_cpu_pct",
        "local_limits",
        "longest_freeze_ms",
        "machine_cpu_pct",
        "news_gap_ms",
        "outcome",
        "profile",
        "relayed_snapshot_gap_ms",
        "resyncs",
        "rtt_ms",
        "scenario",
        "seconds",
        "server",
        "shard_ids",
        "shards_seen",
        "snapshot_age_ms",
        "snapshot_gap_ms",
        "snapshots",
        "socket_gap_ms",
        "ticks_per_s",
        "transport",
        "urls",
        "verdict",
        "welcome_ms",
    ];
    assert_eq!(keys, old, "{j:#}");
    assert!(j["interrupted"].is_null(), "a run that ran to its end: {j:#}");
    assert_eq!(num(j, "connected"), 6.0);
    // A healthy run: frames in the hold, measured, exit 0.
    assert!(num(j, "snapshots") > 6.0, "{j:#}");
    let outcome = serde_json::json!({"verdict": "measured", "exit_code": 0, "reason": ""});
    assert_eq!((&j["outcome"], run.code), (&outcome, Some(0)), "{j:#}");
    let p50 = num(j, "snapshot_gap_ms.p50");
    assert!((45.0..=56.0).contains(&p50), "whole-shard snapshots still time the gap: {p50} ms");
}

#[test]
fn a_run_whose_every_join_is_refused_as_busy_says_so() {
    let server = Shard::start(server_bin(), &["--max-players", "1"]);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    // The one slot is taken: every bot is told Busy.
    let _holder = rt.block_on(mino_testkit::Player::join(&server, "holder"));
    let run = loadgen::run_failing(
        LOADGEN,
        &["--url", &server.ws_url(), "--bots", "2", "--duration", "0.5s", "--no-reconnect", "--quiet"],
    );
    assert_eq!(run.json["verdict"], "nothing measured", "{:#}", run.json);
    assert!(run.stderr.contains("every join was refused as busy (2 refusals) by ws://"), "{}", run.stderr);
    assert!(!run.stderr.contains("is a shard listening"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_walk_whose_welcomed_bots_get_no_frame_fails_as_no_frames() {
    // The first bot is welcomed; then the shard is paused (SIGSTOP) before
    // the second starts, 2 s later: the hold brings nothing, which a walk
    // does not expect.
    let server = Shard::start(server_bin(), &[]);
    let url = server.ws_url();
    let args = ["--url", &url, "--bots", "2", "--ramp", "0.5", "--duration", "1s", "--join-timeout", "1s"];
    let run =
        loadgen::run_failing_with_shard_paused(LOADGEN, &server, &[&args[..], &["--no-reconnect", "-q"]].concat())
            .await;
    let j = &run.json;
    assert_eq!((num(j, "admitted"), num(j, "snapshots")), (1.0, 0.0), "{j:#}");
    assert!(
        run.stderr.contains(
            "mino-loadgen: verdict: no frames (exit 4): 1 bot was welcomed, but no bot received a single snapshot \
             or view frame in the hold; is the shard's tick running"
        ),
        "{}",
        run.stderr
    );
    assert_eq!((run.code, &j["outcome"]["verdict"]), (Some(4), &"no frames".into()), "{j:#}");
    drop(server);
}

#[test]
fn a_walk_stopped_by_ctrl_c_is_marked_interrupted() {
    let server = Shard::start(server_bin(), &[]);
    let dir = WorkDir::new("interrupted");
    let json = dir.join("report.json");
    let mut cmd = std::process::Command::new(LOADGEN);
    cmd.args(["--url", &server.ws_url(), "--bots", "4", "--ramp", "50", "--duration", "30s", "--json"])
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut walk = Process::spawn("mino-loadgen", &mut cmd);
    // The hold has begun once it says so; then Ctrl-C.
    let stderr = walk.child_mut().stderr.take().expect("piped stderr");
    let mut lines = BufReader::new(stderr).lines();
    let mut seen = Vec::new();
    loop {
        match lines.next() {
            Some(Ok(line)) if line.contains("walk: measuring for") => break,
            Some(Ok(line)) => seen.push(line),
            _ => panic!("the loadgen ended before its hold: {seen:?}"),
        }
    }
    assert!(walk.signal(Signal::SIGINT), "still running");
    let out = walk.output(loadgen::RUN_WAIT).expect("stops after Ctrl-C");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(out.status.success(), "an interrupted run still reports: {rest:?}");
    let text = std::fs::read_to_string(&json).expect("json report written");
    let j: serde_json::Value = serde_json::from_str(&text).expect("valid json");
    assert_eq!(j["interrupted"]["reason"], "SIGINT (Ctrl-C)", "{j:#}");
    let at = num(&j, "interrupted.at_s");
    assert!(at > 0.0 && at < 30.0, "{j:#}");
    assert_eq!(j["verdict"], "interrupted", "the hold was cut short: {j:#}");
    assert_eq!(j["judgeable"], false, "{j:#}");
    assert!(num(&j, "seconds") < 30.0, "{j:#}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("INTERRUPTED at ") && stdout.contains("SIGINT (Ctrl-C); a partial run"), "{stdout}");
    assert!(stdout.contains(": interrupted\n"), "the phase's verdict: {stdout}");
    assert!(rest.iter().any(|l| l.contains("SIGINT (Ctrl-C): stopping early")), "{rest:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_walk_whose_shard_dies_in_the_hold_fails_as_nothing_measured() {
    // The bots were welcomed and walked, then their shard died: nobody is
    // connected at the hold's end. The run exited 0 as "measured" while its
    // phase said "nothing measured" (an outside trial): a load tester's
    // script took a dead shard for a pass.
    let mut server = Shard::start(server_bin(), &[]);
    let url = server.ws_url();
    let args = ["--url", &url, "--bots", "4", "--ramp", "20", "--duration", "6s", "--no-reconnect", "-q"];
    let run = loadgen::spawn_failing(LOADGEN, &args);
    server.wait_metric("mino_players", 4.0).await;
    server.wait_ticks(20).await;
    server.process().kill9();
    let run = run.await.expect("the loadgen ran");
    let j = &run.json;
    assert_eq!((&j["verdict"], run.code), (&"nothing measured".into(), Some(5)), "{j:#}");
    assert_eq!((&j["outcome"]["verdict"], &j["outcome"]["exit_code"]), (&"nothing measured".into(), &5.into()));
    assert!(
        run.stderr.contains("mino-loadgen: verdict: nothing measured (exit 5): 4 bots were welcomed, but no bot was connected at the end of the hold (errors: connection_lost"),
        "{}",
        run.stderr
    );
}
