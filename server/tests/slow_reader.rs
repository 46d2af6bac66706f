//! A socket that never reads is closed as too slow (one that pings meanwhile,
//! as a control flood); server memory stays bounded and other players keep
//! their 20 Hz.

use mino_protocol::client;
use mino_testkit::{Frame, Player, Shard};
use std::time::{Duration, Instant};
use tokio::net::TcpSocket;

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// Websockets closed for pings and pongs past --control-rate.
const FLOODED: &str = "mino_sockets_closed_total{transport=\"websocket\",reason=\"control_flood\"}";

#[tokio::test]
async fn never_reading_socket_is_dropped_and_others_unaffected() {
    // Small kernel buffers on both sides so the stall shows within a second.
    let server = Shard::start(SERVER, &["--send-buffer-bytes", "16384", "--write-timeout-ms", "1000"]);
    // Enough players that snapshots are a few KB.
    let mut crowd: Vec<Player> = Vec::new();
    for i in 0..200 {
        crowd.push(Player::join(&server, &format!("c{i}")).await);
    }
    let mut watcher = crowd.pop().expect("watcher");
    // Everyone else reads all the time, like a healthy client; raw frames,
    // not decoded (199 debug-build decoders of every snapshot could not keep
    // up on a loaded machine and were closed as too slow themselves).
    let readers: Vec<_> = crowd
        .into_iter()
        .map(|mut c| {
            tokio::spawn(async move { while let Some(Ok(_)) = futures_util::StreamExt::next(&mut c.ws).await {} })
        })
        .collect();
    let rss_before = server.rss_bytes();

    let sock = TcpSocket::new_v4().expect("socket");
    sock.set_recv_buffer_size(4096).expect("rcvbuf");
    let tcp = sock.connect(server.addr).await.expect("connect");
    let (mut stalled, _) = tokio_tungstenite::client_async(server.ws_url(), tcp).await.expect("handshake");
    // Full forms: the whole place every tick, whether or not anyone moves.
    let hello =
        client::encode_hello_with(mino_protocol::PROTOCOL_VERSION, "stalled", None, None, client::Capabilities::NONE);
    futures_util::SinkExt::send(&mut stalled, hello.into()).await.expect("hello");
    // From here on `stalled` is never read.

    let start = Instant::now();
    let mut gaps = Vec::new();
    let mut last = Instant::now();
    let mut closed = 0.0;
    while start.elapsed() < Duration::from_secs(8) {
        if let Frame::Snapshot { .. } = watcher.next().await {
            gaps.push(last.elapsed());
            last = Instant::now();
        }
        if gaps.len() % 20 == 0 {
            closed = server.metric("mino_sockets_closed_total{transport=\"websocket\",reason=\"too_slow\"}").await;
            if closed >= 1.0 && start.elapsed() > Duration::from_secs(3) {
                break;
            }
        }
    }
    assert_eq!(closed, 1.0, "the stalled socket was closed as too slow");
    gaps.sort();
    let p95 = gaps[gaps.len() * 95 / 100];
    assert!(p95 < Duration::from_millis(120), "watcher p95 gap {p95:?}");
    let growth = server.rss_bytes().saturating_sub(rss_before);
    assert!(growth < 16 * 1024 * 1024, "server RSS grew by {growth} bytes");
    server.wait_metric("mino_players", 199.0).await;
    drop(stalled);
    for r in readers {
        r.abort();
    }
}

#[tokio::test]
async fn pings_before_hello_from_a_socket_that_never_reads_end_as_a_flood() {
    let server = Shard::start(SERVER, &["--send-buffer-bytes", "16384", "--write-timeout-ms", "500"]);
    let rss_before = server.rss_bytes();
    let sock = TcpSocket::new_v4().expect("socket");
    sock.set_recv_buffer_size(4096).expect("rcvbuf");
    let tcp = sock.connect(server.addr).await.expect("connect");
    let (mut ws, _) = tokio_tungstenite::client_async(server.ws_url(), tcp).await.expect("handshake");
    // Never a Hello, never a read: only pings, each owed a pong. The control
    // budget ends it long before the pongs could fill the socket.
    let start = Instant::now();
    let mut sent = 0;
    while start.elapsed() < Duration::from_secs(5) {
        let ping = tokio_tungstenite::tungstenite::Message::Ping(vec![7u8; 125].into());
        match tokio::time::timeout(Duration::from_millis(200), futures_util::SinkExt::send(&mut ws, ping)).await {
            Ok(Ok(())) => sent += 1,
            Ok(Err(_)) => break,
            Err(_) => {}
        }
        if sent % 500 == 0 && server.metric(FLOODED).await >= 1.0 {
            break;
        }
    }
    server.wait_metric(FLOODED, 1.0).await;
    assert!(start.elapsed() < Duration::from_secs(8), "closed well before the hello timeout (10 s)");
    let growth = server.rss_bytes().saturating_sub(rss_before);
    assert!(growth < 16 * 1024 * 1024, "server RSS grew by {growth} bytes after {sent} pings");
}
