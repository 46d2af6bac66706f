//! The real binary's flags: each is also read from its `MINO_*` variable
//! (set on the child process only: no test changes its own environment),
//! checked the same way, and `--help` shows every one with its variable.

use clap::CommandFactory;
use mino_server::Cli;
use mino_testkit::process;
use std::process::{Command, Output};
use std::time::Duration;

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// The server run with `args` and the variables `env` to its end (bounded).
fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(SERVER);
    cmd.args(args).envs(env.iter().copied());
    process::run("mino-server", &mut cmd, Duration::from_secs(10))
}

#[test]
fn an_environment_variable_is_read_and_checked_like_its_flag() {
    let out = run(&[], &[("MINO_TICK_HZ", "0")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--tick-hz") && stderr.contains("1..=120"), "{stderr}");
    // The rule between two flags, both given as variables.
    let out = run(&["--listen", "127.0.0.1:0"], &[("MINO_SHARD_TTL_MS", "1000"), ("MINO_HEARTBEAT_MS", "600")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--heartbeat-ms 600") && stderr.contains("--shard-ttl-ms 1000"), "{stderr}");
}

#[test]
fn help_shows_every_flag_with_its_variable_under_its_subject() {
    let out = run(&["--help"], &[]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    let command = Cli::command();
    let shown = command.get_arguments().filter(|a| !a.is_hide_set() && a.get_env().is_some());
    let mut count = 0;
    for arg in shown {
        let long = arg.get_long().expect("long flag");
        let env = arg.get_env().expect("variable").to_string_lossy();
        assert!(help.contains(&format!("--{long} ")), "--{long} missing from --help");
        assert!(help.contains(&format!("[env: {env}=")), "{env} missing from --help");
        count += 1;
    }
    assert!(count >= 47, "{count} flags shown");
    for heading in ["Listening:", "Admin:", "Shard:", "Cluster:", "Area of interest:", "Identity:"] {
        assert!(help.lines().any(|l| l == heading), "no {heading} heading");
    }
    assert!(!help.contains("--unbatched-writes"), "a benchmark control stays hidden");
}

#[test]
fn the_operators_guide_names_real_flags_under_their_subjects() {
    // deploy/README.md, "The server's flags": each bullet is a subject of
    // `--help` ("- **Listening**: ..."), and every flag it names is one of
    // that subject's.
    let guide = std::fs::read_to_string(mino_testkit::deploy_dir().join("README.md")).expect("deploy/README.md");
    let start = guide.find("<!-- flags -->").expect("the flags' section");
    let end = guide[start..].find("<!-- end of flags -->").expect("its end") + start;
    let command = Cli::command();
    let (mut subject, mut named) = (None, 0);
    for line in guide[start..end].lines() {
        if let Some(rest) = line.strip_prefix("- **") {
            subject = rest.split("**").next().map(str::to_owned);
        }
        for word in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
            let Some(long) = word.strip_prefix("--").filter(|w| !w.is_empty()) else { continue };
            let arg = command.get_arguments().find(|a| a.get_long() == Some(long));
            let arg = arg.unwrap_or_else(|| panic!("--{long} is not a flag of mino-server"));
            assert_eq!(arg.get_help_heading(), subject.as_deref(), "--{long} is under another subject in --help");
            named += 1;
        }
    }
    assert!(named > 30, "{named} flags named");
}

#[tokio::test]
async fn view_flags_without_cells_are_said_to_do_nothing() {
    // --view-radius and the other area-of-interest flags without
    // --cell-size: the place is one cell, and the flags were silently
    // ignored (an outside trial); the shard starts and says so.
    let dir = mino_testkit::WorkDir::new("view-flags");
    let log = dir.join("shard.log");
    let args = ["--view-radius", "400", "--view-budget-bytes", "600"];
    let server = mino_testkit::Shard::start_logging_to(SERVER, &args, &log, "warn");
    let said = "area of interest is off (no --cell-size): --view-radius, --view-budget-bytes do nothing";
    assert!(server.logged(said).await, "{}", std::fs::read_to_string(&log).unwrap_or_default());
}
