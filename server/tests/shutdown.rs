//! SIGINT: every socket gets "going away" (1001), the process joins its tasks
//! and exits 0. SIGTERM drains: every player gets a Move with a fresh ticket
//! and the close code 4018, the shard reports not ready, and the process exits
//! 0 once they are gone.

use mino_protocol::wire::CloseCode;
use mino_testkit::{close_code, Frame, Player, Shard, Signal};
use std::time::Duration;

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

async fn graceful(sig: Signal) {
    let mut server = Shard::start(SERVER, &[]);
    let mut a = Player::join(&server, "Ada").await;
    let mut b = Player::join(&server, "Bob").await;
    a.own_position().await;
    server.signal(sig);
    assert_eq!(a.closed().await.0, close_code(CloseCode::GoingAway));
    assert_eq!(b.closed().await.0, close_code(CloseCode::GoingAway));
    let status = server.wait_exit(Duration::from_secs(10)).expect("exited in time");
    assert!(status.success(), "exit status {status:?}");
}

#[tokio::test]
async fn sigterm_drains_players_with_move_and_exits_zero() {
    let mut server = Shard::start(SERVER, &[]);
    let mut a = Player::join(&server, "Ada").await;
    let mut b = Player::join(&server, "Bob").await;
    a.own_position().await;
    server.signal(Signal::SIGTERM);
    for c in [&mut a, &mut b] {
        let ticket = c.until(|f| if let Frame::Move(t) = f { Some(t.clone()) } else { None }).await;
        assert_eq!(ticket.len(), 24, "a fresh resume ticket");
        assert_ne!(Some(&ticket), c.welcome.as_ref().map(|w| &w.ticket));
        assert_eq!(c.closed().await.0, close_code(CloseCode::Moved));
    }
    drop((a, b));
    let status = server.wait_exit(Duration::from_secs(10)).expect("exited once drained");
    assert!(status.success(), "exit status {status:?}");
}

#[tokio::test]
async fn sigint_closes_sockets_with_going_away_and_exits_zero() {
    graceful(Signal::SIGINT).await;
}
