//! The admin listener answers probes and scrapes however many sockets hold the
//! players' listener, and drains the shard on request.

use mino_protocol::wire::CloseCode;
use mino_testkit::{close_code, http, Player, Shard, WAIT};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

#[tokio::test]
async fn probes_get_through_while_player_connections_are_exhausted() {
    let server = Shard::start(SERVER, &["--admin-listen", "127.0.0.1:0", "--max-connections", "5"]);
    let admin = server.admin.expect("admin address printed");
    // Hold every player connection slot (and more) without a request.
    let mut held = Vec::new();
    for _ in 0..8 {
        held.push(TcpStream::connect(server.addr).await.expect("connect"));
    }
    // Every slot is taken once the server refuses the connections past the
    // cap: a 503 (so a load balancer asks another shard), then closed.
    for over in &mut held[5..] {
        assert_refused_over_cap(over).await;
    }
    assert_eq!(http::get(admin, "/healthz").await.status, 200);
    assert_eq!(http::get(admin, "/readyz").await.status, 200);
    let metrics = http::get(admin, "/metrics").await;
    assert_eq!(metrics.status, 200);
    assert!(metrics.text().contains("mino_ticks_total"));
    assert!(metrics.text().contains("mino_connections_over_cap_total 3"), "each counted");
    assert_eq!(http::get(admin, "/ws").await.status, 404, "no players on the admin listener");
    drop(held);
}

/// `over`, a connection past the cap, is answered 503 and closed.
async fn assert_refused_over_cap(over: &mut TcpStream) {
    let mut answer = Vec::new();
    let read = tokio::time::timeout(WAIT, over.read_to_end(&mut answer)).await.expect("closed within the wait");
    assert!(read.is_ok(), "{read:?}");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 503 Service Unavailable\r\n"), "a connection past the cap: {answer:?}");
}

/// A websocket keeps the slot of the HTTP connection it upgraded (the
/// upgrade takes it over) until it closes: with a cap of 2 and two players
/// in, a third connection is refused (503); once one player's socket is
/// dropped (`mino_connections` back to 1), a new player is let in.
#[tokio::test]
async fn a_websocket_holds_its_connection_slot_until_it_closes() {
    let server = Shard::start(SERVER, &["--admin-listen", "127.0.0.1:0", "--max-connections", "2"]);
    let first = Player::join(&server, "first").await;
    let _second = Player::join(&server, "second").await;
    let mut over = TcpStream::connect(server.addr).await.expect("connect");
    // Two websockets hold both slots: a third connection is refused.
    assert_refused_over_cap(&mut over).await;
    drop(first);
    server.wait_metric("mino_connections", 1.0).await;
    let third = Player::join(&server, "third").await;
    assert!(third.welcome.is_some(), "the slot came back with the closed websocket");
}

/// With an admin listener the operator routes live only there: the players'
/// port answers `/metrics`, `/readyz` and `/healthz` with 404 (the static
/// folder's fallback included) and no operator data. Without one, the
/// players' port serves them (`ADMIN_PORT=off scripts/play.sh`, or a shard on a
/// private address).
#[tokio::test]
async fn operator_routes_live_only_on_the_admin_listener_when_there_is_one() {
    let dir = mino_testkit::WorkDir::new("operator-routes");
    dir.write("index.html", "<!doctype html><title>mino</title>\n");
    let static_dir = dir.path().to_str().expect("utf-8").to_owned();
    const OPERATOR: [&str; 3] = ["/metrics", "/readyz", "/healthz"];
    for extra in [&[][..], &["--static-dir", &static_dir][..]] {
        let mut args = vec!["--admin-listen", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        let server = Shard::start(SERVER, &args);
        let admin = server.admin.expect("admin address printed");
        for path in OPERATOR {
            let players = server.get(path).await;
            assert_eq!(players.status, 404, "{path} on the players' port ({extra:?})");
            assert!(!players.text().contains("mino_") && !players.text().contains("ready"), "{}", players.text());
            assert_eq!(http::get(admin, path).await.status, 200, "{path} on the admin listener");
        }
        let mut c = Player::join(&server, "Ada").await;
        c.own_position().await;
    }
    let bare = Shard::start(SERVER, &[]);
    assert!(bare.admin.is_none());
    for path in OPERATOR {
        assert_eq!(bare.get(path).await.status, 200, "{path} on the players' port without an admin listener");
    }
    assert!(bare.get("/metrics").await.text().contains("mino_ticks_total"));
}

/// Standalone there is no other shard to move anyone to: a drain closes every
/// socket with 1012 "service restart" (clustered, it moves them: failover.rs).
#[tokio::test]
async fn admin_drain_standalone_closes_players_with_service_restart_and_exits_zero() {
    let mut server = Shard::start(SERVER, &["--admin-listen", "127.0.0.1:0"]);
    let admin = server.admin.expect("admin address printed");
    let mut c = Player::join(&server, "Ada").await;
    assert_eq!(http::request(admin, "POST", "/admin/drain").await.status, 202);
    assert_eq!(c.closed().await.0, close_code(CloseCode::ServiceRestart));
    drop(c);
    let status = server.wait_exit(Duration::from_secs(10)).expect("exited after the drain");
    assert!(status.success());
}

/// `/metrics` tells the part of each tick spent writing to the websockets
/// (`mino_tick_deliver_seconds`), one observation a tick, within the tick's
/// whole work: a player joined, its frames written every tick.
#[tokio::test]
async fn the_ticks_socket_writes_are_timed_within_the_tick() {
    let server = Shard::start(SERVER, &[]);
    let _player = Player::join(&server, "timed").await;
    server.wait_metric_at_least("mino_tick_deliver_seconds_count", 20.0).await;
    let m = server.metrics().await;
    let (deliver, ticks) =
        (m.value_or_zero("mino_tick_deliver_seconds_count"), m.value_or_zero("mino_tick_duration_seconds_count"));
    // A scrape may fall between a tick's two observations: one apart.
    assert!((deliver - ticks).abs() <= 1.0, "one a tick: {deliver} for {ticks} ticks");
    let (spent, whole) =
        (m.value_or_zero("mino_tick_deliver_seconds_sum"), m.value_or_zero("mino_tick_duration_seconds_sum"));
    assert!(spent > 0.0 && spent <= whole + 0.05, "the writes took {spent} s of the ticks' {whole} s");
}

#[tokio::test]
async fn a_burst_refused_over_the_cap_is_said_whole_when_its_window_ends() {
    // The first refusal is logged at once, the others of its window when
    // the window (10 s) ends: they waited for a later refusal, which may
    // never come (an outside trial: 130 refused, 1 said).
    let dir = mino_testkit::WorkDir::new("over-cap-log");
    let log = dir.join("shard.log");
    let server = Shard::start_logging_to(SERVER, &["--max-connections", "1"], &log, "warn");
    let _held = TcpStream::connect(server.addr).await.expect("connect");
    let mut over = Vec::new();
    for _ in 0..4 {
        let mut c = TcpStream::connect(server.addr).await.expect("connect");
        assert_refused_over_cap(&mut c).await;
        over.push(c);
    }
    // The window's end, 10 s after the first refusal, with room to spare.
    let said = "3 more connection(s) refused with 503 since the last such line";
    let text = mino_testkit::wait::until("the burst's other 3 said", Duration::from_secs(20), || async {
        std::fs::read_to_string(&log).ok().filter(|t| t.contains(said))
    })
    .await;
    assert!(text.contains("1 connection(s) refused with 503"), "the first said at once: {text}");
}
