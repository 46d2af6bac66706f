//! The admin listener answers probes and scrapes however many sockets hold the
//! players' listener, and drains the shard on request.

mod common;
use common::{code, http, Client, Frame, Server};
use mino_protocol::wire::CloseCode;
use std::time::Duration;
use tokio::net::TcpStream;

#[tokio::test]
async fn probes_get_through_while_player_connections_are_exhausted() {
    let (server, admin) = Server::start_with_admin(&["--admin-listen", "127.0.0.1:0", "--max-connections", "5"]);
    let admin = admin.expect("admin address printed");
    // Hold every player connection slot (and more) without a request.
    let mut held = Vec::new();
    for _ in 0..8 {
        held.push(TcpStream::connect(server.addr).await.expect("connect"));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(http(admin, "GET", "/healthz").await.0, 200);
    assert_eq!(http(admin, "GET", "/readyz").await.0, 200);
    let (status, body) = http(admin, "GET", "/metrics").await;
    assert_eq!(status, 200);
    assert!(body.contains("mino_ticks_total"));
    assert_eq!(http(admin, "GET", "/ws").await.0, 404, "no players on the admin listener");
    drop(held);
}

#[tokio::test]
async fn admin_drain_moves_players_and_exits_zero() {
    let (mut server, admin) = Server::start_with_admin(&["--admin-listen", "127.0.0.1:0"]);
    let admin = admin.expect("admin address printed");
    let mut c = Client::join(&server, "Ada").await;
    assert_eq!(http(admin, "POST", "/admin/drain").await.0, 202);
    c.until(|f| if let Frame::Move(t) = f { Some(t.clone()) } else { None }).await;
    assert_eq!(c.closed().await.0, code(CloseCode::Moved));
    drop(c);
    let status = server.wait_exit(Duration::from_secs(10)).expect("exited after the drain");
    assert!(status.success());
}
