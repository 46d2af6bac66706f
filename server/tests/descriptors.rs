//! Descriptor exhaustion: with every descriptor of the process in use, the
//! failing accepts are logged as one line with a count (not 20 a second), and
//! the admin listener still answers `/healthz` and `/metrics` from its
//! reserved descriptor; once descriptors free up, players join again.

use mino_testkit::{http, wait, Player, Shard, WorkDir};
use std::os::unix::fs::PermissionsExt;
use tokio::net::TcpStream;

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// Descriptors the server may open: a few more than it needs to start.
const NOFILE: u32 = 40;

#[tokio::test]
async fn an_exhausted_shard_logs_once_and_still_answers_its_admin_listener() {
    let dir = WorkDir::new("descriptors");
    let log = dir.join("server.log");
    let script = format!("#!/bin/sh\nulimit -n {NOFILE}\nexec {SERVER} \"$@\" 2>>{}\n", log.display());
    let wrapper = dir.write("mino-server-limited", script);
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let server = Shard::start(&wrapper, &["--admin-listen", "127.0.0.1:0", "--handshake-timeout-ms", "60000"]);
    let admin = server.admin.expect("admin listener");
    // Idle connections that send nothing hold a descriptor each; the rest
    // wait in the backlog.
    let mut held = Vec::new();
    for _ in 0..NOFILE + 10 {
        held.push(TcpStream::connect(server.addr).await.expect("connect"));
    }
    // Accepts fail once every descriptor is in use: logged, and counted.
    assert!(wait::file_holds(&log, "listener=\"players\" kind=\"descriptors\"").await, "the failures are logged");
    wait::until_true("accepts failing for lack of descriptors", || async {
        let metrics = mino_testkit::Metrics::parse(&http::get(admin, "/metrics").await.text());
        metrics.value_or_zero("mino_accept_errors_total{kind=\"descriptors\"}") >= 10.0
    })
    .await;
    for _ in 0..3 {
        let health = http::get(admin, "/healthz").await;
        assert_eq!((health.status, health.text().as_str()), (200, "ok\n"));
    }
    let metrics = mino_testkit::Metrics::parse(&http::get(admin, "/metrics").await.text());
    let failures = metrics.value_or_zero("mino_accept_errors_total{kind=\"descriptors\"}");
    assert!(failures >= 10.0, "accepts failed and were counted: {failures}");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("accept failing")).collect();
    let players = lines.iter().filter(|l| l.contains("players")).count();
    assert_eq!(players, 1, "one line for {failures} failures, not 20 a second:\n{text}");
    assert!(lines.iter().all(|l| l.contains("failures")), "each line carries its count:\n{text}");
    drop(held);
    let mut p = Player::join(&server, "After").await;
    p.own_position().await;
}
