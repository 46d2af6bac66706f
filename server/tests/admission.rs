//! The player cap holds under a concurrent burst of joins: exactly the cap is
//! admitted, the rest get Busy with a retry-after and a clean close.

use mino_protocol::client;
use mino_protocol::wire::CloseCode;
use mino_testkit::{close_code, Frame, Player, Shard};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

#[tokio::test]
async fn burst_of_joins_never_exceeds_the_cap() {
    let server = Shard::start(SERVER, &["--max-players", "10"]);
    let mut tasks = Vec::new();
    for i in 0..40 {
        let mut c = Player::connect(&server).await;
        tasks.push(tokio::spawn(async move {
            c.send(client::encode_hello(&format!("bot{i}"), None, None)).await;
            match c.next().await {
                Frame::Welcome(w) => {
                    c.welcome = Some(w);
                    (Some(c), None)
                }
                Frame::Busy { reason, retry_after_ms } => {
                    let (close, _) = c.closed().await;
                    assert_eq!(close, close_code(CloseCode::ServerBusy));
                    (None, Some((reason, retry_after_ms)))
                }
                other => panic!("unexpected {other:?}"),
            }
        }));
    }
    let mut admitted = Vec::new();
    let mut busy = Vec::new();
    for t in tasks {
        let (c, b) = t.await.expect("task");
        admitted.extend(c);
        busy.extend(b);
    }
    assert_eq!(admitted.len(), 10);
    assert_eq!(busy.len(), 30);
    assert!(busy.iter().all(|(reason, retry)| reason == "full" && *retry >= 2000));
    server.wait_metric("mino_players", 10.0).await;
    assert_eq!(server.metric("mino_busy_refusals_total{reason=\"full\"}").await, 30.0);
    // Admitted players keep ticking; a slot freed is a slot taken.
    let mut first = admitted.pop().expect("one");
    first.own_position().await;
    drop(first);
    server.wait_metric("mino_players", 9.0).await;
    let late = Player::join(&server, "late").await;
    assert_ne!(late.id(), 0);
}
