//! `scripts/play.sh`, README's one command that runs the game, run for real
//! (the debug binaries cargo built for the tests, a stand-in client, free
//! ports): it must say the game is up only once it is, serve the page, the
//! admin console and the bots, refuse a bad setting before it starts
//! anything, and leave nothing behind at a Ctrl-C.

use mino_testkit::metrics::Metrics;
use mino_testkit::port::free_port;
use mino_testkit::script::Script;
use mino_testkit::{http, server_bin, wait, workspace_root, WorkDir};
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Bound on the script's start (no build: the binaries and the client are given).
const START: Duration = Duration::from_secs(60);
/// Bound on its stop after a Ctrl-C.
const STOP: Duration = Duration::from_secs(20);

fn play() -> PathBuf {
    workspace_root().join("scripts/play.sh")
}

fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

/// `play.sh` with the test's binaries and a stand-in client and console, the
/// `settings` on top; its standard error goes to `stderr` in `dir`.
fn command(dir: &WorkDir, settings: &[(&str, String)]) -> Command {
    dir.mkdir("client");
    dir.write("client/index.html", "<!doctype html><title>play test client</title>\n");
    dir.mkdir("console");
    dir.write("console/index.html", "<!doctype html><title>play test console</title>\n");
    let bin_dir = server_bin().parent().expect("target folder").to_owned();
    let mut cmd = Script::bash(&play(), &[]);
    // BIN_DIR given: no build.
    cmd.env_remove("CARGO_TARGET_DIR")
        .env("PROFILE", "debug")
        .env("BIN_DIR", bin_dir)
        .env("STATIC_DIR", dir.join("client"))
        .env("CONSOLE_DIR", dir.join("console"))
        .env("MINO_LOG", "info");
    for (k, v) in settings {
        cmd.env(k, v);
    }
    let stderr = std::fs::File::create(dir.join("stderr")).expect("stderr file");
    cmd.stderr(Stdio::from(stderr));
    cmd
}

/// The pids in process group `group` (from /proc).
fn group_members(group: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            // Fields after the command's closing parenthesis: state, ppid, pgrp.
            std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().is_some_and(|stat| {
                let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
                let fields: Vec<&str> = rest.split_whitespace().collect();
                fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(group) && fields.first() != Some(&"Z")
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_serves_the_game_the_console_and_its_bots_and_a_ctrl_c_stops_everything() {
    let dir = WorkDir::new("play");
    let (port, admin) = (free_port(), free_port());
    let tmp = dir.join("").to_string_lossy().into_owned();
    let cmd = command(
        &dir,
        &[("PORT", port.to_string()), ("ADMIN_PORT", admin.to_string()), ("BOTS", "2".into()), ("TMPDIR", tmp)],
    );
    let mut script = Script::spawn(cmd);
    script.until("Ctrl-C to stop.", START);
    let said = script.seen.join("\n");
    assert!(said.contains("2 bots walk the place (their log: "), "{said}");
    assert!(said.contains(&format!("open http://127.0.0.1:{port}/")), "{said}");
    assert!(said.contains(&format!("http://127.0.0.1:{admin}/admin/")), "{said}");
    assert!(said.contains("WebTransport"), "on by default: {said}");

    let page = http::get(loopback(port), "/").await;
    assert!(page.status == 200 && page.text().contains("play test client"), "{}", page.text());
    let console = http::get(loopback(admin), "/admin/").await;
    assert!(console.status == 200 && console.text().contains("play test console"), "{}", console.text());
    // With an admin listener the probes are its own (the players' port does
    // not answer them): the script's readiness check must ask there.
    assert_eq!(http::get(loopback(admin), "/healthz").await.status, 200);
    wait::until_true("the script's two bots playing", || async {
        Metrics::parse(&http::get(loopback(admin), "/metrics").await.text()).value_or_zero("mino_players") >= 2.0
    })
    .await;

    let (status, _) = script.interrupt(STOP);
    assert_eq!(status.code(), Some(130), "a Ctrl-C's exit status");
    assert_eq!(group_members(script.pid()), Vec::<u32>::new(), "the server and the bots are gone");
    assert!(std::net::TcpStream::connect(loopback(port)).is_err(), "port {port} closed");
    let log = std::fs::read_to_string(dir.join("stderr")).expect("stderr");
    assert!(log.contains("SIGINT: shutting down"), "stopped at once, as a Ctrl-C asks:\n{log}");
    assert!(!log.contains("SIGTERM"), "signalled once, not drained then hurried:\n{log}");
    // The bots' lines are a load tester's: in their own file, not the player's terminal.
    assert!(!log.contains("mino-loadgen"), "{log}");
    let bots = std::fs::read_dir(dir.join(""))
        .expect("the work folder")
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().starts_with("mino-play-bots."))
        .expect("the bots' log in TMPDIR");
    let bots = std::fs::read_to_string(bots.path()).expect("the bots' log");
    assert!(bots.contains("the report is marked interrupted"), "{bots}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn play_without_the_console_is_ready_on_the_players_port() {
    let dir = WorkDir::new("play-no-console");
    let port = free_port();
    let settings = [
        ("PORT", port.to_string()),
        ("ADMIN_PORT", "off".into()),
        ("BOTS", "0".into()),
        ("WEBTRANSPORT", "off".into()),
    ];
    let mut script = Script::spawn(command(&dir, &settings));
    script.until("Ctrl-C to stop.", START);
    let said = script.seen.join("\n");
    assert!(!said.contains("/admin/") && !said.contains("WebTransport"), "{said}");
    assert_eq!(http::get(loopback(port), "/healthz").await.status, 200);
    let (status, _) = script.interrupt(STOP);
    assert_eq!(status.code(), Some(130));
    assert_eq!(group_members(script.pid()), Vec::<u32>::new());
}

#[test]
fn play_lists_its_settings_and_refuses_an_argument() {
    let dir = WorkDir::new("play-help");
    let mut help = Script::spawn(Script::bash(&play(), &["--help"]));
    let (status, said) = help.exit(STOP);
    let text = said.join("\n");
    assert!(status.success(), "{text}");
    for setting in ["PORT", "ADMIN_PORT", "BOTS", "WEBTRANSPORT", "PROFILE", "BIN_DIR", "STATIC_DIR", "CONSOLE_DIR"] {
        assert!(text.contains(setting), "--help names {setting}: {text}");
    }
    let mut cmd = Script::bash(&play(), &["--bots", "3"]);
    cmd.stderr(Stdio::from(std::fs::File::create(dir.join("stderr")).expect("stderr file")));
    let (status, _) = Script::spawn(cmd).exit(STOP);
    assert_eq!(status.code(), Some(1));
    let stderr = std::fs::read_to_string(dir.join("stderr")).expect("stderr");
    assert!(stderr.contains("unknown argument '--bots'"), "{stderr}");
}

#[test]
fn play_refuses_a_bad_setting_or_a_taken_port_before_starting_anything() {
    let dir = WorkDir::new("play-refused");
    let taken = TcpListener::bind("127.0.0.1:0").expect("bind");
    let taken = taken.local_addr().expect("addr").port().to_string();
    // Each case on free ports but for the one it is about.
    let port = || ("PORT", free_port().to_string());
    let no_console = || ("ADMIN_PORT", "off".to_owned());
    let cases: [(Vec<(&str, String)>, &str); 8] = [
        (vec![("PORT", "70000".into()), no_console()], "PORT must be a port number, 1 to 65535 (not '70000')"),
        (vec![("PORT", "http".into()), no_console()], "PORT must be a port number"),
        (vec![port(), ("ADMIN_PORT", "65536".into())], "ADMIN_PORT must be a port number, 1 to 65535, or off"),
        (vec![port(), no_console(), ("BOTS", "abc".into())], "BOTS must be a number"),
        (vec![port(), no_console(), ("PROFILE", "fast".into())], "PROFILE must be release or debug"),
        (vec![port(), no_console(), ("WEBTRANSPORT", "maybe".into())], "WEBTRANSPORT must be on or off"),
        (vec![("PORT", taken.clone()), no_console()], "is taken"),
        (vec![port(), ("ADMIN_PORT", taken.clone())], "for the admin console is taken"),
    ];
    for (settings, why) in cases {
        let mut script = Script::spawn(command(&dir, &settings));
        let (status, said) = script.exit(STOP);
        let stderr = std::fs::read_to_string(dir.join("stderr")).expect("stderr");
        assert_eq!(status.code(), Some(1), "{settings:?}: {stderr}");
        assert!(stderr.contains(why), "{settings:?}: {stderr}");
        assert!(!said.join("\n").contains("mino is running"), "{settings:?}");
    }
}

/// `scripts/target-dir.sh`, where play.sh, local-cluster.sh and the test
/// script find what cargo built: cargo's own answer, so a target folder set
/// by the environment or by a cargo config's `build.target-dir` is followed.
#[test]
fn the_target_folder_is_where_cargo_builds() {
    let dir = WorkDir::new("target-dir");
    let script = workspace_root().join("scripts/target-dir.sh");
    let run = |env: &[(&str, &std::path::Path)]| {
        let mut cmd = Command::new("bash");
        cmd.arg(&script);
        for (k, v) in env {
            cmd.env_remove("CARGO_TARGET_DIR").env_remove("CARGO_BUILD_TARGET_DIR").env(k, v);
        }
        let out = cmd.output().expect("bash runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
    };
    // As this test's own build was set: its binary is in <target>/debug/deps.
    let exe = std::env::current_exe().expect("the test's path");
    let built = exe.ancestors().nth(3).expect("the target folder").canonicalize().expect("the target folder");
    assert_eq!(run(&[]).canonicalize().expect("the answer"), built);
    let (by_env, by_config) = (dir.join("by-env"), dir.join("by-config"));
    assert_eq!(run(&[("CARGO_TARGET_DIR", &by_env)]), by_env);
    // A cargo config's build.target-dir, as cargo reads it from the
    // environment (CARGO_BUILD_TARGET_DIR is that key).
    assert_eq!(run(&[("CARGO_BUILD_TARGET_DIR", &by_config)]), by_config);
}
