//! Idle players through nginx: with nginx's websocket timeouts shortened to
//! 2 s and the shards pinging every 500 ms and dropping peers silent for
//! 1.5 s, a joined player that sends nothing of its own stays connected for
//! three times nginx's timeout: the server's pings reach it through nginx and
//! its pongs reach the server. Two controls show that both timeouts are in
//! force: a player that never answers the pings is dropped by its shard, and
//! an upgraded connection on which the shard says nothing (no Hello yet) is
//! cut by nginx at its read timeout.

use futures_util::{SinkExt, StreamExt};
use mino_loadgen::connection::{self, WsStream};
use mino_protocol::client::encode_hello;
use mino_protocol::server::{decode, ServerMsg};
use mino_protocol::wire::CloseCode;
use mino_testkit::{Cluster, ClusterOptions};
use std::time::Duration;
use tokio::time::{timeout_at, Instant};
use tokio_tungstenite::tungstenite::Message;

const WAIT: Duration = Duration::from_secs(10);

/// nginx's shortened proxy_read_timeout / proxy_send_timeout / send_timeout.
const NGINX_TIMEOUT: Duration = Duration::from_secs(2);

async fn cluster() -> Cluster {
    let server_args = ["--ping-interval-ms", "500", "--peer-timeout-ms", "1500"].map(String::from).to_vec();
    Cluster::start(ClusterOptions { shards: 2, server_args, proxy_timeout: "2s".into(), ..ClusterOptions::default() })
        .await
}

/// Opens the websocket through nginx and sends Hello as `name`.
async fn join(cluster: &Cluster, name: &str) -> WsStream {
    let mut ws = connection::connect(&cluster.target().await, None, WAIT).await.expect("upgrade through nginx");
    ws.send(Message::Binary(encode_hello(name, None, None).into())).await.expect("hello");
    ws
}

fn is_welcome(m: &Message) -> bool {
    matches!(m, Message::Binary(b) if matches!(decode(b), Ok(ServerMsg::Welcome(_))))
}

/// `mino_sockets_closed_total{transport="websocket",reason="peer_timeout"}` summed over the shards.
async fn peer_timeouts(cluster: &Cluster) -> f64 {
    let mut n = 0.0;
    for s in &cluster.shards {
        n += s.metric("mino_sockets_closed_total{transport=\"websocket\",reason=\"peer_timeout\"}").await;
    }
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_player_outlives_nginx_read_timeout_kept_alive_by_server_pings() {
    let cluster = cluster().await;
    let mut ws = join(&cluster, "idle").await;
    let hold = NGINX_TIMEOUT * 3;
    let end = Instant::now() + hold;
    let (mut welcomed, mut pings, mut frames) = (false, 0u32, 0u32);
    // Only reads: the websocket layer answers each ping with a pong, nothing else is sent.
    loop {
        match timeout_at(end, ws.next()).await {
            Err(_) => break,
            Ok(Some(Ok(Message::Ping(_)))) => pings += 1,
            Ok(Some(Ok(m @ Message::Binary(_)))) => {
                welcomed |= is_welcome(&m);
                frames += 1;
            }
            Ok(Some(Ok(Message::Pong(_) | Message::Frame(_)))) => {}
            Ok(other) => panic!("idle player's connection ended after {pings} pings: {other:?}"),
        }
    }
    assert!(welcomed, "joined");
    assert!(pings >= 6, "the shard's pings (every 500 ms) came through nginx: {pings} in {hold:?}");
    // A standing player's cell does not change: after its Welcome, roster
    // and first view, no frame is sent; pings alone keep the upstream alive
    // past nginx's read timeout.
    assert!(frames < 10, "a standing player is sent nothing: {frames} frames in {hold:?}");
    assert_eq!(peer_timeouts(&cluster).await, 0.0, "the pongs reached the shard");
    assert_eq!(cluster.players().await.iter().sum::<u32>(), 1, "still joined");
    assert!(!cluster.nginx.error_log().contains("upstream timed out"), "{}", cluster.nginx.error_log());
    ws.close(None).await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn player_that_never_answers_pings_is_dropped_by_its_shard_through_nginx() {
    let cluster = cluster().await;
    let mut ws = join(&cluster, "deaf").await;
    let welcome = timeout_at(Instant::now() + WAIT, ws.next()).await.expect("an answer in time");
    assert!(matches!(&welcome, Some(Ok(m)) if is_welcome(m)), "{welcome:?}");
    // Not reading means not answering pings: the shard's 1.5 s peer timeout fires.
    tokio::time::sleep(NGINX_TIMEOUT + Duration::from_secs(1)).await;
    // Buffered snapshots, then the shard's close (4010), or a broken pipe if
    // the websocket layer first tries to answer the pings read meanwhile.
    let end = Instant::now() + WAIT;
    let mut code = None;
    loop {
        match timeout_at(end, ws.next()).await.expect("closed in time") {
            Some(Ok(Message::Close(frame))) => code = frame.map(|f| u16::from(f.code)),
            Some(Ok(_)) => continue,
            Some(Err(_)) | None => break,
        }
    }
    assert!(code.is_none() || code == Some(CloseCode::PeerTimeout.0), "close code {code:?}");
    assert_eq!(peer_timeouts(&cluster).await, 1.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_upgraded_connection_is_cut_by_nginx_at_its_read_timeout() {
    let cluster = cluster().await;
    // Upgraded, but no Hello: the shard says nothing until its 10 s hello timeout.
    let mut ws = connection::connect(&cluster.target().await, None, WAIT).await.expect("upgrade through nginx");
    let start = Instant::now();
    let end = start + WAIT;
    let ended = loop {
        match timeout_at(end, ws.next()).await {
            Err(_) => panic!("not cut within {WAIT:?}"),
            Ok(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => continue,
            Ok(other) => break other,
        }
    };
    let after = start.elapsed();
    assert!(
        after >= NGINX_TIMEOUT - Duration::from_millis(300) && after < NGINX_TIMEOUT * 2,
        "cut after {after:?} ({ended:?}), nginx's timeout is {NGINX_TIMEOUT:?}"
    );
    let hello_timeout = "mino_sockets_closed_total{transport=\"websocket\",reason=\"hello_timeout\"}";
    assert_eq!(
        cluster.shards[0].metric(hello_timeout).await + cluster.shards[1].metric(hello_timeout).await,
        0.0,
        "nginx cut it, not the shard"
    );
}
