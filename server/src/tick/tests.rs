//! The tick driver in process, with its hub on real loopback sockets: how
//! long stopping takes, whatever the peers do. A silent peer's linger is
//! checked on tokio's paused clock (the runtime moves it to each next
//! deadline while nothing else can run), to the step. The peers are plain
//! blocking sockets.

use super::*;
use crate::figures::ShardFigures;
use crate::hub::tests::{handover, loopback, next_frame};
use crate::session::Join;
use crate::websocket::Opcode;
use mino_protocol::client::Capabilities;
use prometheus_client::registry::Registry;
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::io::Write;
use std::net::TcpStream;

/// A standalone driver of a fresh shard, and its lifecycle.
fn driver(config: &Config) -> (TickDriver, Lifecycle) {
    let config = Arc::new(config.clone());
    let shard = Shard::new(&config, StdRng::seed_from_u64(1), 0).expect("a shard");
    let metrics = Metrics::register(&mut Registry::default());
    let life = Lifecycle::default();
    let (vitals, _) = Vitals::new(ShardFigures::default(), time::now());
    let driver =
        TickDriver::new(shard, config, metrics, None, TaskTracker::new(), life.clone(), vitals).expect("a driver");
    (driver, life)
}

/// Joins a player through the driver's command queue; its peer socket.
async fn join(commands: &mpsc::Sender<Command>, config: &Config, name: &str) -> TcpStream {
    let (socket, peer) = loopback();
    let (reply, joined) = oneshot::channel();
    let conn = handover(socket, &config.socket);
    let join = Join {
        name: name.into(),
        resume: None,
        account: None,
        capabilities: Capabilities::DELTAS,
        conn: crate::hub::Handed::Socket(Box::new(conn)),
        welcome: Welcome::Now,
        reply,
    };
    assert!(commands.send(join.into()).await.is_ok(), "the driver runs");
    joined.await.expect("answered").expect("admitted");
    peer
}

/// The payload of the first close frame on `peer`.
fn close_frame(peer: &mut TcpStream) -> Vec<u8> {
    loop {
        match next_frame(peer) {
            Some((Opcode::Close, payload)) => return payload,
            Some(_) => {}
            None => panic!("closed before the close frame"),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn stopping_with_a_silent_peer_ends_when_its_linger_does() {
    let config = Config::default();
    let (driver, life) = driver(&config);
    let (commands, queue) = mpsc::channel(8);
    let run = tokio::spawn(driver.run(queue));
    let mut peer = join(&commands, &config, "Ada").await;
    let stopped_at = time::now();
    life.stop.cancel();
    run.await.expect("the driver ends");
    let took = time::now() - stopped_at;
    assert!(took >= LINGER, "ended at {took:?}, before the linger");
    assert!(took <= LINGER + 2 * STOPPING_STEP, "ended at {took:?}, after the linger");
    let close = close_frame(&mut peer);
    assert_eq!(close[..2], CloseReason::Shutdown.code().0.to_be_bytes(), "going away");
}

/// On the real clock: the peers answer from threads of their own, which a
/// paused clock would race (it moves on whenever the runtime idles).
#[tokio::test]
async fn stopping_ends_as_soon_as_every_peer_answered_its_close() {
    let config = Config::default();
    let (driver, life) = driver(&config);
    let (commands, queue) = mpsc::channel(8);
    let run = tokio::spawn(driver.run(queue));
    let mut peers = Vec::new();
    for name in ["Ada", "Bob"] {
        peers.push(join(&commands, &config, name).await);
    }
    // Each peer, on a thread of its own, answers the close frame with its
    // own (masked, as a client's), as a browser does.
    let answering: Vec<_> = peers
        .into_iter()
        .map(|mut peer| {
            std::thread::spawn(move || {
                let close = close_frame(&mut peer);
                let code = [close[0], close[1]];
                let key = [1, 2, 3, 4];
                let mut frame = vec![0x80 | Opcode::Close.bits(), 0x80 | 2, 1, 2, 3, 4];
                frame.extend(code.iter().zip(key).map(|(b, k)| b ^ k));
                peer.write_all(&frame).expect("close answered");
                peer
            })
        })
        .collect();
    let stopped_at = time::now();
    life.stop.cancel();
    run.await.expect("the driver ends");
    let took = time::now() - stopped_at;
    assert!(took < LINGER, "ended at {took:?}: the peers' close frames end the linger");
    for thread in answering {
        let mut peer = thread.join().expect("peer thread");
        assert_eq!(next_frame(&mut peer), None, "closed once answered");
    }
}
