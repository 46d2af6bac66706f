//! A hello is answered with a welcome, then a roster, then snapshots.

use mino_testkit::{Frame, Player, Shard};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

#[tokio::test]
async fn hello_gets_welcome_with_world_and_ticket() {
    let server = Shard::start(SERVER, &["--shard-id", "42", "--world-size", "500", "--speed", "80"]);
    let c = Player::join(&server, "Ada").await;
    let w = c.welcome.clone().expect("welcome");
    assert_eq!(w.shard_id, 0x42, "--shard-id is hex, as the logs show it");
    assert_eq!(w.tick_hz, 20);
    assert_eq!(w.speed, 80.0);
    assert_eq!((w.bounds.max_x(), w.bounds.max_y()), (500.0, 500.0));
    assert!((0.0..=500.0).contains(&w.x) && (0.0..=500.0).contains(&w.y));
    assert!(w.ticket.len() >= 16, "ticket of at least 128 bits");
    assert_ne!(w.player_id, 0);
}

#[tokio::test]
async fn roster_comes_once_then_snapshots_list_the_player() {
    let server = Shard::start(SERVER, &[]);
    let a = Player::join(&server, "Ada").await;
    let mut b = Player::join(&server, "Bob").await;
    let roster = b
        .until(|f| match f {
            Frame::Roster(r) => Some(r.clone()),
            _ => None,
        })
        .await;
    let mut names: Vec<_> = roster.iter().map(|(_, n)| n.as_str()).collect();
    names.sort();
    assert_eq!(names, ["Ada", "Bob"]);
    assert!(roster.iter().any(|(id, _)| *id == a.id()));
    let (_, _, x, y) = b.own_position().await;
    let w = b.welcome.clone().expect("welcome");
    assert!((x - w.x).abs() < 0.1 && (y - w.y).abs() < 0.1, "standing where welcomed");
    for _ in 0..20 {
        assert!(!matches!(b.next().await, Frame::Roster(_)), "roster is sent once");
    }
}

#[tokio::test]
async fn ticket_never_appears_in_broadcast_frames() {
    let server = Shard::start(SERVER, &[]);
    let a = Player::join(&server, "Ada").await;
    let ticket = a.welcome.clone().expect("welcome").ticket;
    let mut b = Player::join(&server, "Bob").await;
    for _ in 0..30 {
        let m = tokio::time::timeout(mino_testkit::WAIT, futures_util::StreamExt::next(&mut b.ws))
            .await
            .expect("frame")
            .expect("open")
            .expect("ok");
        let data = m.into_data();
        assert!(!data.windows(ticket.len()).any(|w| w == ticket.as_slice()));
    }
}

#[tokio::test]
async fn health_ready_and_metrics_respond() {
    let server = Shard::start(SERVER, &[]);
    assert_eq!(server.get("/healthz").await.status, 200);
    assert_eq!(server.get("/readyz").await.status, 200);
    let _c = Player::join(&server, "Ada").await;
    server.wait_metric("mino_players", 1.0).await;
    assert_eq!(server.metric("mino_players").await, 1.0);
    assert!(server.wait_metric_at_least("mino_snapshots_encoded_total", 1.0).await >= 1.0);
    assert_eq!(server.get("/nope").await.status, 404);
    assert_eq!(server.get("/ws").await.status, 400, "a plain GET of /ws is not an upgrade");
}
