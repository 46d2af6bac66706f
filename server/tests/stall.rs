//! A shard that was stalled (stopped with SIGSTOP longer than the peer
//! timeout) does not blame its idle players for the silence: on waking it
//! pings them and waits, and drops only those that then stay silent.

use futures_util::StreamExt;
use mino_testkit::{Player, Shard, Signal};
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// What a reading player saw: the close code (if it closed before
/// `until`) and when each ping arrived; the first ping is also sent on
/// `first_ping`. The player comes back, still connected when it did not
/// close, so its socket outlives the watch.
async fn watch(
    mut p: Player,
    until: Instant,
    first_ping: tokio::sync::oneshot::Sender<()>,
) -> (Option<Option<u16>>, Vec<Instant>, Player) {
    let mut pings = Vec::new();
    let mut first_ping = Some(first_ping);
    loop {
        let left = until.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, p.ws.next()).await {
            Err(_) => return (None, pings, p),
            Ok(Some(Ok(Message::Ping(_)))) => {
                pings.push(Instant::now());
                if let Some(tx) = first_ping.take() {
                    let _ = tx.send(());
                }
            }
            Ok(Some(Ok(Message::Close(c)))) => return (Some(c.map(|c| u16::from(c.code))), pings, p),
            Ok(Some(Ok(_))) => {}
            Ok(Some(Err(_)) | None) => return (Some(None), pings, p),
        }
    }
}

#[tokio::test]
async fn a_stalled_shard_pings_its_idle_players_before_it_judges_them() {
    const STALL: Duration = Duration::from_secs(4);
    let server = Shard::start(SERVER, &["--ping-interval-ms", "2000", "--peer-timeout-ms", "3000"]);
    let healthy = Player::join(&server, "Idle").await;
    let _silent = Player::join(&server, "Silent").await; // never read: never answers a ping
    let (pinged, first_ping) = tokio::sync::oneshot::channel();
    let until = Instant::now() + Duration::from_secs(4) + STALL + Duration::from_secs(4);
    let watcher = tokio::spawn(watch(healthy, until, pinged));
    // Stopped just after a ping: on waking, the next one is not yet due by
    // the clock, and the stall outlasts the peer timeout.
    tokio::time::timeout(Duration::from_secs(4), first_ping).await.expect("a first ping").expect("watcher");
    server.signal(Signal::SIGSTOP);
    // The stall itself (the fault under test, not a wait: nothing runs in
    // the stopped process to wait on).
    tokio::time::sleep(STALL).await;
    server.signal(Signal::SIGCONT);
    let woke = Instant::now();
    // The healthy player stays connected and answering pings to the end:
    // its socket closing (or falling silent) would race the count below.
    let (closed, pings, mut healthy) = watcher.await.expect("watcher");
    let reader = tokio::spawn(async move { while let Some(Ok(_)) = healthy.ws.next().await {} });
    assert_eq!(closed, None, "the healthy idle player stays through the stall");
    let first = pings.iter().find(|t| **t > woke).expect("pinged after waking");
    let after = first.duration_since(woke);
    assert!(after < Duration::from_millis(900), "pinged at once on waking: {after:?}");
    // The silent player is still dropped, once given its time to answer.
    server.wait_metric("mino_sockets_closed_total{transport=\"websocket\",reason=\"peer_timeout\"}", 1.0).await;
    server.wait_metric("mino_players", 1.0).await;
    assert_eq!(server.players().await, 1);
    reader.abort();
}
