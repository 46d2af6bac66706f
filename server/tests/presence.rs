//! Joins and leaves reach the other players as presence.

use mino_testkit::{Frame, Player, Shard};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

#[tokio::test]
async fn join_and_leave_are_announced() {
    let server = Shard::start(SERVER, &[]);
    let mut a = Player::join(&server, "Ada").await;
    let b = Player::join(&server, "Bob").await;
    let bob = b.id();
    let joined = a
        .until(|f| match f {
            Frame::Presence { joined, .. } => joined.iter().find(|(id, _)| *id == bob).cloned(),
            _ => None,
        })
        .await;
    assert_eq!(joined.1, "Bob");
    drop(b);
    a.until(|f| match f {
        Frame::Presence { left, .. } if left.contains(&bob) => Some(()),
        _ => None,
    })
    .await;
    // And Bob is gone from the snapshots.
    let listed = a
        .until(|f| match f {
            Frame::Snapshot { players, .. } => Some(players.iter().any(|p| p.0 == bob)),
            _ => None,
        })
        .await;
    assert!(!listed);
}
