//! The admin listener answers probes and scrapes however many sockets hold the
//! players' listener, and drains the shard on request.

use mino_protocol::wire::CloseCode;
use mino_testkit::{close_code, http, Player, Shard};
use std::time::Duration;
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
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(http::get(admin, "/healthz").await.status, 200);
    assert_eq!(http::get(admin, "/readyz").await.status, 200);
    let metrics = http::get(admin, "/metrics").await;
    assert_eq!(metrics.status, 200);
    assert!(metrics.text().contains("mino_ticks_total"));
    assert_eq!(http::get(admin, "/ws").await.status, 404, "no players on the admin listener");
    drop(held);
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
