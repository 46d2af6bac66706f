//! A peer that goes silent (no pongs, no messages) is dropped within the peer
//! timeout, while the server keeps pinging the healthy ones.

use mino_testkit::{Player, Shard};
use std::time::{Duration, Instant};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

#[tokio::test]
async fn silent_peer_is_dropped_within_the_timeout() {
    let server = Shard::start(SERVER, &["--ping-interval-ms", "200", "--peer-timeout-ms", "1000"]);
    let silent = Player::join(&server, "silent").await;
    // A healthy client, read continuously, answers pings and stays.
    let mut healthy = Player::join(&server, "healthy").await;
    let start = Instant::now();
    let mut dropped = false;
    while start.elapsed() < Duration::from_secs(6) {
        healthy.own_position().await;
        if server.metric("mino_sockets_closed_total{transport=\"websocket\",reason=\"peer_timeout\"}").await >= 1.0 {
            dropped = true;
            break;
        }
    }
    assert!(dropped, "silent peer dropped");
    let waited = start.elapsed();
    assert!(waited >= Duration::from_millis(900), "not before the timeout ({waited:?})");
    server.wait_metric("mino_players", 1.0).await;
    healthy.own_position().await;
    drop(silent);
}
