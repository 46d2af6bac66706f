//! SIGINT: every socket gets "going away" (1001), the process joins its tasks
//! and exits 0. SIGTERM drains: every player gets a Move with a fresh ticket
//! and the close code 4018, the shard reports not ready, and the process exits
//! 0 once they are gone.

mod common;
use common::{code, Client, Server};
use mino_protocol::wire::CloseCode;
use std::time::Duration;

async fn graceful(sig: &str) {
    let mut server = Server::start(&[]);
    let mut a = Client::join(&server, "Ada").await;
    let mut b = Client::join(&server, "Bob").await;
    a.own_position().await;
    server.signal(sig);
    assert_eq!(a.closed().await.0, code(CloseCode::GoingAway));
    assert_eq!(b.closed().await.0, code(CloseCode::GoingAway));
    let status = server.wait_exit(Duration::from_secs(10)).expect("exited in time");
    assert!(status.success(), "exit status {status:?}");
}

#[tokio::test]
async fn sigterm_drains_players_with_move_and_exits_zero() {
    let mut server = Server::start(&[]);
    let mut a = Client::join(&server, "Ada").await;
    let mut b = Client::join(&server, "Bob").await;
    a.own_position().await;
    server.signal("TERM");
    for c in [&mut a, &mut b] {
        let ticket = c.until(|f| if let common::Frame::Move(t) = f { Some(t.clone()) } else { None }).await;
        assert_eq!(ticket.len(), 24, "a fresh resume ticket");
        assert_ne!(Some(&ticket), c.welcome.as_ref().map(|w| &w.ticket));
        assert_eq!(c.closed().await.0, code(CloseCode::Moved));
    }
    drop((a, b));
    let status = server.wait_exit(Duration::from_secs(10)).expect("exited once drained");
    assert!(status.success(), "exit status {status:?}");
}

#[tokio::test]
async fn sigint_closes_sockets_with_going_away_and_exits_zero() {
    graceful("INT").await;
}
