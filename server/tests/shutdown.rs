//! SIGTERM and SIGINT: every socket gets "going away" (1001), the process joins
//! its tasks and exits 0.

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
async fn sigterm_closes_sockets_with_going_away_and_exits_zero() {
    graceful("TERM").await;
}

#[tokio::test]
async fn sigint_closes_sockets_with_going_away_and_exits_zero() {
    graceful("INT").await;
}
