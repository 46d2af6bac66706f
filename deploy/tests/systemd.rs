//! The systemd units pass `systemd-analyze verify` (every key known, every
//! command executable) with the server binary at its installed path
//! replaced by the one just built.

use mino_testkit::{deploy_dir, server_bin, WorkDir};
use std::process::Command;

#[test]
fn units_pass_systemd_analyze_verify() {
    let dir = WorkDir::new("systemd");
    for unit in ["mino-server@.service", "mino-nginx.service", "mino-redis.service"] {
        let text = std::fs::read_to_string(deploy_dir().join("systemd").join(unit)).expect("unit file");
        let text = text.replace("/usr/local/bin/mino-server", &server_bin().to_string_lossy());
        dir.write(unit, text);
    }
    std::os::unix::fs::symlink(dir.join("mino-server@.service"), dir.join("mino-server@1.service")).expect("symlink");
    let out = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .args(["mino-server@1.service", "mino-nginx.service", "mino-redis.service"].map(|u| dir.join(u)))
        .output()
        .expect("systemd-analyze (package systemd)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.trim().is_empty(), "systemd-analyze verify:\n{stderr}");
}

#[test]
fn shard_unit_restarts_on_failure_and_outwaits_the_drain() {
    let unit = std::fs::read_to_string(deploy_dir().join("systemd/mino-server@.service")).expect("unit");
    let value =
        |key: &str| unit.lines().find_map(|l| l.strip_prefix(key).and_then(|v| v.strip_prefix('='))).map(str::trim);
    assert_eq!(value("Restart"), Some("on-failure"));
    // `systemctl reload`: SIGHUP, which the shard takes as a reload (a test
    // in server/tests/shutdown.rs: it plays on).
    assert_eq!(value("ExecReload"), Some("/bin/kill -HUP $MAINPID"));
    assert_eq!(value("EnvironmentFile"), Some("-/etc/mino/shard.env"));
    assert!(unit.contains("EnvironmentFile=/etc/mino/%i.env"));
    let stop: u64 = value("TimeoutStopSec").and_then(|v| v.trim_end_matches('s').parse().ok()).expect("seconds");
    let env = std::fs::read_to_string(deploy_dir().join("systemd/shard.env.example")).expect("env example");
    let ms = |key: &str| -> u64 {
        env.lines()
            .find_map(|l| l.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("{key} in the example"))
    };
    let bound_ms = ms("MINO_DRAIN_TIMEOUT_MS") + ms("MINO_SHUTDOWN_TIMEOUT_MS");
    assert!(stop * 1000 >= bound_ms * 2, "TimeoutStopSec {stop}s vs drain and shutdown {bound_ms} ms");
    let nofile: u64 = value("LimitNOFILE").and_then(|v| v.parse().ok()).expect("LimitNOFILE");
    assert!(nofile >= 20_000 + 1024, "room for --max-connections (20000) and more");
}

#[test]
fn shard_sockets_live_in_a_runtime_folder_that_outlives_each_instance() {
    let unit = std::fs::read_to_string(deploy_dir().join("systemd/mino-server@.service")).expect("unit");
    let value =
        |key: &str| unit.lines().find_map(|l| l.strip_prefix(key).and_then(|v| v.strip_prefix('='))).map(str::trim);
    assert_eq!(value("RuntimeDirectory"), Some("mino"), "/run/mino for the sockets");
    assert_eq!(value("RuntimeDirectoryPreserve"), Some("yes"), "one instance stopping keeps the others' sockets");
    assert_eq!(value("RuntimeDirectoryMode"), Some("0750"), "nginx's user enters it through the group");
    assert!(value("RestrictAddressFamilies").is_some_and(|v| v.contains("AF_UNIX")));
    let env = std::fs::read_to_string(deploy_dir().join("systemd/shard.env.example")).expect("env example");
    assert!(env.contains("MINO_LISTEN=unix:/run/mino/shard-1.sock"), "the example shows the socket in /run/mino");
}
