//! The failover scenario against real standalone servers: the mechanics of
//! killing or draining a shard and counting who came back. (Resuming the same
//! player on another shard needs the cluster; here bots come back as new
//! players on the other URL, and the report must say so.)

use mino_testkit::loadgen::{self, num};
use mino_testkit::{server_bin, Shard};
use std::time::Duration;

/// The loadgen binary cargo built for these tests.
const LOADGEN: &str = env!("CARGO_BIN_EXE_mino-loadgen");

#[test]
fn killed_shard_bots_move_to_the_next_url_as_new_players() {
    let mut doomed = Shard::start(server_bin(), &["--shard-id", "1"]);
    let other = Shard::start(server_bin(), &["--shard-id", "2"]);
    let pid = doomed.pid().to_string();
    let run = loadgen::run(
        LOADGEN,
        &[
            "failover",
            "--bots",
            "6",
            "--ramp",
            "60",
            "--warmup",
            "500ms",
            "--kill-pid",
            &pid,
            "--observe",
            "4s",
            "--url",
            &doomed.ws_url(),
            "--url",
            &other.ws_url(),
            "-q",
        ],
    );
    let j = &run.json;
    assert_eq!(j["action"], "kill");
    assert_eq!(num(j, "connected_before"), 6.0, "{j:#}");
    assert_eq!(num(j, "affected"), 3.0, "{j:#}");
    assert_eq!(num(j, "fresh_rejoins"), 3.0, "{j:#}");
    assert_eq!(num(j, "resumed"), 0.0);
    assert_eq!(num(j, "lost"), 3.0, "new player ids are not the same players: {j:#}");
    // No --shard-id: the shard that died is the one its bots left.
    assert_eq!((&j["dead_shards"][0], &j["dead_shard_given"]), (&"00000001".into(), &false.into()), "{j:#}");
    assert_eq!(num(j, "dead_shard_bots"), 3.0, "{j:#}");
    assert_eq!(num(j, "connected_after"), 6.0, "{j:#}");
    assert!(num(j, "process_exit_ms") < 1000.0, "{j:#}");
    assert!(num(j, "error_kinds.connection_lost") >= 3.0, "{j:#}");
    assert!(doomed.wait_exit(Duration::from_secs(1)).is_some());
}

#[test]
fn a_kill_of_a_shard_none_of_the_bots_plays_on_measures_nothing() {
    // A pid of another place's shard was killed and the run said
    // "measured", exit 0, with no bot affected (an outside trial).
    let mut bystander = Shard::start(server_bin(), &["--shard-id", "7"]);
    let played = Shard::start(server_bin(), &["--shard-id", "8"]);
    let pid = bystander.pid().to_string();
    let args = [
        "failover",
        "--bots",
        "4",
        "--ramp",
        "60",
        "--warmup",
        "300ms",
        "--kill-pid",
        &pid,
        "--observe",
        "1s",
        "--url",
        &played.ws_url(),
        "-q",
    ];
    let run = loadgen::run_failing(LOADGEN, &args);
    let j = &run.json;
    assert_eq!((run.code, num(j, "affected")), (Some(5), 0.0), "{j:#}");
    assert_eq!(j["outcome"]["verdict"], "nothing measured", "{j:#}");
    let reason = j["outcome"]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("none of the 4 connected bots played on it"), "{reason}");
    assert!(bystander.wait_exit(Duration::from_secs(1)).is_some(), "it was killed all the same");
}

#[test]
fn drained_standalone_shard_empties_and_exits() {
    let mut server = Shard::start(server_bin(), &[]);
    let pid = server.pid().to_string();
    let run = loadgen::run(
        LOADGEN,
        &[
            "failover",
            "--bots",
            "4",
            "--ramp",
            "40",
            "--warmup",
            "300ms",
            "--drain-pid",
            &pid,
            "--observe",
            "3s",
            "--url",
            &server.ws_url(),
            "--no-reconnect",
            "-q",
        ],
    );
    let j = &run.json;
    assert_eq!(j["action"], "drain");
    assert_eq!(num(j, "connected_before"), 4.0, "{j:#}");
    assert_eq!(num(j, "affected"), 4.0, "{j:#}");
    assert_eq!(num(j, "lost"), 4.0, "nowhere to resume: {j:#}");
    assert!(num(j, "time_to_empty_ms") >= 0.0, "{j:#}");
    assert!(num(j, "process_exit_ms") >= num(j, "time_to_empty_ms"), "{j:#}");
    let status = server.wait_exit(Duration::from_secs(1)).expect("exited");
    assert!(status.success(), "graceful exit: {status:?}");
}

#[test]
fn failover_refuses_a_dead_pid() {
    let out = std::process::Command::new(LOADGEN)
        .args(["failover", "--kill-pid", "4000000000", "--url", "ws://127.0.0.1:9/ws", "-q"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no live process"));
}

#[test]
fn failover_refuses_a_pid_that_is_not_a_shard() {
    // A mistyped pid was killed whatever it was (a `sleep` here), and the
    // run reported success.
    let mut other = std::process::Command::new("sleep").arg("30").spawn().expect("sleep");
    let pid = other.id().to_string();
    let out = std::process::Command::new(LOADGEN)
        .args(["failover", "--kill-pid", &pid, "--url", "ws://127.0.0.1:9/ws", "-q"])
        .output()
        .expect("run");
    let alive = other.try_wait().expect("wait").is_none();
    let _ = other.kill();
    let _ = other.wait();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a mino-server"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(alive, "the sleep was signalled");
}

#[test]
fn a_report_file_that_cannot_be_written_is_said_before_the_run() {
    let started = std::time::Instant::now();
    let out = std::process::Command::new(LOADGEN)
        .args([
            "walk",
            "--bots",
            "1",
            "--duration",
            "30s",
            "--url",
            "ws://127.0.0.1:9/ws",
            "--json",
            "/nonexistent/x.json",
        ])
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--json /nonexistent/x.json"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "said after the run");
}
