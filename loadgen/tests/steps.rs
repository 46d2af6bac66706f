//! The steps scenario against the real server: one row per step, a plot.

use mino_testkit::loadgen::{self, num};
use mino_testkit::{server_bin, Shard, WorkDir};

/// The loadgen binary cargo built for these tests.
const LOADGEN: &str = env!("CARGO_BIN_EXE_mino-loadgen");

#[test]
fn two_small_steps_each_get_a_row_and_a_plot_point() {
    let server = Shard::start(server_bin(), &[]);
    let pid = server.pid().to_string();
    let dir = WorkDir::new("steps");
    let plot = dir.join("steps.svg");
    let plot_arg = plot.to_string_lossy().into_owned();
    let run = loadgen::run(
        LOADGEN,
        &[
            "steps",
            "--steps",
            "5,12",
            "--hold",
            "2s",
            "--settle",
            "300ms",
            "--ramp",
            "50",
            "--url",
            &server.ws_url(),
            "--server-pid",
            &pid,
            "--plot",
            &plot_arg,
        ],
    );
    let steps = run.json["steps"].as_array().expect("steps array");
    assert_eq!(steps.len(), 2, "{:#}", run.json);
    for (step, n) in steps.iter().zip([5.0, 12.0]) {
        assert_eq!(num(step, "players"), n);
        assert_eq!(num(step, "connected"), n, "{step:#}");
        assert_eq!((num(step, "busy"), num(step, "errors")), (0.0, 0.0), "{step:#}");
        let p50 = num(step, "snapshot_gap_ms.p50");
        assert!((45.0..=56.0).contains(&p50), "median gap {p50} ms");
        assert!(num(step, "frames_per_s") > n * 15.0, "{step:#}");
        assert!(num(step, "bytes_per_s") > 0.0);
        assert!(num(step, "loadgen_cpu_pct") >= 0.0);
        assert!(step["judgeable"].is_boolean());
        // The server process was read each step: its pid, its memory. Its CPU
        // is counted by /proc in 10 ms clock ticks, and a dozen players for
        // 2 s may cost the shard less than one: only its shape is checked.
        assert_eq!(step["server"]["pids"][0].as_u64(), Some(u64::from(server.pid())), "{step:#}");
        assert!(num(step, "server.rss_bytes") > 1e6, "{step:#}");
        let (user, sys) = (num(step, "server.cpu_user_s"), num(step, "server.cpu_sys_s"));
        assert!(user >= 0.0 && sys >= 0.0 && user + sys < 2.0, "{step:#}");
        let f = |part: &str| num(step, &format!("server.cpu_per_frame_us.{part}"));
        assert!(f("total") >= 0.0 && (f("total") - f("user") - f("sys")).abs() <= 0.02, "{step:#}");
    }
    // The second step's welcomes are only the 7 new bots.
    assert_eq!(num(&steps[1], "welcome_ms.count"), 7.0);
    let svg = std::fs::read_to_string(&plot).expect("plot written");
    assert!(svg.contains("own shard p95"));
    assert!(run.stdout.contains("verdict"), "{}", run.stdout);
}

#[test]
fn falling_steps_are_refused() {
    let out = std::process::Command::new(LOADGEN)
        .args(["steps", "--steps", "10,5", "--url", "ws://127.0.0.1:9/ws", "--quiet"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("rising"));
}

#[test]
fn a_mix_of_transports_gives_each_steps_transports_apart() {
    // The JSON had them; the table printed none (an outside trial).
    let server = Shard::start(server_bin(), &["--webtransport-listen", "127.0.0.1:0"]);
    let url = server.ws_url();
    let args = ["steps", "--steps", "2,4", "--hold", "1s", "--settle", "200ms", "--transport", "mix", "--url", &url];
    let run = loadgen::run(LOADGEN, &args);
    for players in [2, 4] {
        let at = run.stdout.find(&format!("step of {players} players:")).unwrap_or_else(|| panic!("{}", run.stdout));
        let rest = &run.stdout[at..];
        assert!(rest.contains("per transport:") && rest.contains("webtransport"), "{}", run.stdout);
    }
    assert_eq!(num(&run.json["steps"][1], "connected"), 4.0, "{:#}", run.json);
}
