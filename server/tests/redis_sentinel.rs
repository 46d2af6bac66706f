//! Shards that find their Redis primary through Sentinel follow a failover:
//! the primary killed, the sentinels promote the replica, and the shards,
//! asking the sentinels again, play on with every player and the relay back.

use mino_protocol::client;
use mino_testkit::{Frame, Player, Sentinel, Shard};
use std::time::{Duration, Instant};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// A shard of the place on the primary `sentinel` names "mino", in a
/// 10,000-unit world.
async fn shard(sentinel: &Sentinel, id: u32) -> Shard {
    Shard::build(SERVER).redis_sentinel(&sentinel.urls(), "mino").id(id).world_size(10_000.0).ready().await
}

/// Waits until `c` receives a snapshot of `shard` listing `player`; how long it took.
async fn until_sees(c: &mut Player, shard: u32, player: u32) -> Duration {
    let start = Instant::now();
    c.until(|f| match f {
        Frame::Snapshot { shard: s, players, .. } if *s == shard && players.iter().any(|p| p.0 == player) => Some(()),
        _ => None,
    })
    .await;
    start.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shards_follow_a_sentinel_failover_and_keep_every_player() {
    let mut sentinel = Sentinel::start(Duration::from_millis(1000));
    let (a, b) = (shard(&sentinel, 1).await, shard(&sentinel, 2).await);
    let mut on_a = Player::join(&a, "Ada").await;
    let mut on_b = Player::join(&b, "Bob").await;
    let (ada, bob) = (on_a.id(), on_b.id());
    until_sees(&mut on_a, 2, bob).await;

    let old = sentinel.primary_port().expect("a primary");
    // The sessions are on the replica before the primary dies (replication
    // is asynchronous; a write within its lag would die with the primary).
    sentinel.wait_replicated(old);
    let killed_at = Instant::now();
    sentinel.node(old).kill();
    let new = tokio::task::block_in_place(|| sentinel.wait_new_primary(old, Duration::from_secs(30)));
    let promoted = killed_at.elapsed();
    // The shards are ready again, on the new primary.
    a.wait_ready().await;
    b.wait_ready().await;
    let ready = killed_at.elapsed();
    // Each shard's subscription follows to the new primary (renewed once, for
    // the lost connection): only from then on does a message published on the
    // new primary reach it (a player's frames buffered before the kill say
    // nothing of that).
    for s in [&a, &b] {
        s.wait_metric("mino_redis_resubscribes_total{reason=\"connection_lost\"}", 1.0).await;
    }
    let subscribed = killed_at.elapsed();
    assert!(
        subscribed < promoted + Duration::from_secs(3),
        "subscribed {subscribed:?} after a promotion at {promoted:?}"
    );
    // Relay of each other's players comes back.
    until_sees(&mut on_a, 2, bob).await;
    until_sees(&mut on_b, 1, ada).await;
    eprintln!(
        "sentinel failover: promoted after {promoted:?}, shards ready after {ready:?}, subscribed after {subscribed:?}"
    );
    assert!(ready < promoted + Duration::from_secs(3), "ready {ready:?} after a promotion at {promoted:?}");
    // Nobody was dropped, and the new primary has the place's state: chat,
    // a newcomer, and a resume all work.
    assert_eq!((a.players().await, b.players().await), (1, 1));
    on_a.send(client::encode_chat("still here")).await;
    let text = on_b
        .until(|f| match f {
            Frame::Chat { text, .. } => Some(text.clone()),
            _ => None,
        })
        .await;
    assert_eq!(text, "still here");
    let newcomer = Player::join(&b, "Cy").await;
    assert!(newcomer.id() != ada && newcomer.id() != bob, "ids stay unique after the failover");
    let ticket = on_a.ticket();
    drop(on_a);
    let back = Player::hello(&b, "x", Some(&ticket)).await.expect("resumed after the failover");
    assert!(back.welcome.as_ref().is_some_and(|w| w.resumed && w.player_id == ada));
    assert!(a.metric("mino_redis_failovers_total{reason=\"primary_moved\"}").await >= 1.0);
    assert_eq!(a.metric("mino_redis_mode{mode=\"sentinel\"}").await, 1.0);
    let _ = new;
}
