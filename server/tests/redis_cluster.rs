//! Shards of one place on a real six-node Redis Cluster (three primaries,
//! three replicas): play, relay, chat, presence and resume cross shards over
//! sharded pub/sub; a primary killed under play is replaced by its replica
//! with no player lost; a slot migrated under play loses no subscription.

use mino_loadgen::profile::ProfileName;
use mino_loadgen::Target;
use mino_protocol::client;
use mino_testkit::{Bots, Frame, Player, RedisCluster, Shard, Signal};
use std::time::{Duration, Instant};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// Failure detection of the test clusters.
const NODE_TIMEOUT: Duration = Duration::from_millis(1500);

/// A shard of the place on `cluster`, ready.
async fn shard(cluster: &RedisCluster, id: u32) -> Shard {
    let (id, seeds) = (id.to_string(), cluster.seeds());
    let args = ["--redis-cluster", &seeds, "--shard-id", &id, "--world-size", "10000", "--speed", "100"];
    let server = Shard::start(SERVER, &args);
    server.wait_ready().await;
    server
}

/// Waits until `c` receives a snapshot of `shard` listing `player`.
async fn until_sees(c: &mut Player, shard: u32, player: u32) {
    c.until(|f| match f {
        Frame::Snapshot { shard: s, players, .. } if *s == shard && players.iter().any(|p| p.0 == player) => Some(()),
        _ => None,
    })
    .await;
}

/// The longest gap between snapshots of `shard` that `c` receives over `span`.
async fn longest_gap(c: &mut Player, shard: u32, span: Duration) -> Duration {
    let start = Instant::now();
    let (mut last, mut longest) = (Instant::now(), Duration::ZERO);
    while start.elapsed() < span {
        if let Frame::Snapshot { shard: s, .. } = c.next().await {
            if s == shard {
                longest = longest.max(last.elapsed());
                last = Instant::now();
            }
        }
    }
    longest.max(last.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_shards_on_a_cluster_play_relay_chat_presence_and_resume() {
    let cluster = RedisCluster::start(NODE_TIMEOUT);
    let (a, b) = (shard(&cluster, 1).await, shard(&cluster, 2).await);
    let mut c = shard(&cluster, 3).await;
    let mut on_a = Player::join(&a, "Ada").await;
    let mut on_b = Player::join(&b, "Bob").await;
    let on_c = Player::join(&c, "Cy").await;
    let (ada, bob, cy) = (on_a.id(), on_b.id(), on_c.id());
    assert!(ada != bob && bob != cy && ada != cy, "ids unique across shards");
    // Relay: each sees the others' snapshots.
    until_sees(&mut on_a, 2, bob).await;
    until_sees(&mut on_a, 3, cy).await;
    until_sees(&mut on_b, 1, ada).await;
    // Each shard's snapshots go over a shard channel of its own slot.
    for id in 1..=3u32 {
        let channel = format!("mino:{{main.s{id:08x}}}:snapshots");
        let port = cluster.primary_of(cluster.slot(&channel)).expect("served");
        let listed = cluster.cli(port, &["PUBSUB", "SHARDCHANNELS", "mino:*"]);
        assert!(listed.contains(&channel), "{channel} is a shard channel on its node: {listed}");
    }
    // Chat and presence cross.
    on_a.send(client::encode_chat("hello cluster")).await;
    let got = on_b
        .until(|f| match f {
            Frame::Chat { from, text, .. } => Some((*from, text.clone())),
            _ => None,
        })
        .await;
    assert_eq!(got, (ada, "hello cluster".to_owned()));
    drop(on_c);
    on_b.until(|f| match f {
        Frame::Presence { left, .. } if left.contains(&cy) => Some(()),
        _ => None,
    })
    .await;
    // Resume across shards: A dies, Ada continues on B as herself.
    let ticket = on_a.ticket();
    let mut a = a;
    a.signal(Signal::SIGKILL);
    a.wait_exit(Duration::from_secs(5)).expect("killed");
    let back = Player::hello(&b, "ignored", Some(&ticket)).await.expect("resumed on B");
    let w = back.welcome.clone().expect("welcome");
    assert!(w.resumed && w.player_id == ada && w.shard_id == 2);
    c.process().kill9();
}

/// A swarm of walking bots on `shard`.
async fn bots_on(shard: &Shard, n: usize) -> Bots {
    let target = Target::resolve(&shard.ws_url()).await.expect("target");
    let bots = Bots::start(target, n, ProfileName::Walker).await;
    assert!(bots.wait_connected(Duration::from_secs(20)).await, "bots joined");
    bots
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_primary_of_the_place_loses_no_player_and_relay_comes_back() {
    let mut cluster = RedisCluster::start(NODE_TIMEOUT);
    let (a, b) = (shard(&cluster, 1).await, shard(&cluster, 2).await);
    let (bots_a, bots_b) = (bots_on(&a, 20).await, bots_on(&b, 20).await);
    let mut watcher = Player::join(&a, "watcher").await;
    let bob = Player::join(&b, "bob").await;
    until_sees(&mut watcher, 2, bob.id()).await;

    let slot = cluster.slot("mino:{main}:shards");
    let primary = cluster.primary_of(slot).expect("the place's slot is served");
    // Watch B's snapshots on A from the kill on.
    let watch = tokio::spawn(async move {
        let gap = longest_gap(&mut watcher, 2, Duration::from_secs(10)).await;
        (gap, watcher)
    });
    let killed_at = Instant::now();
    cluster.kill(primary);
    let new_primary = tokio::task::block_in_place(|| cluster.wait_served(slot, Duration::from_secs(20)));
    let promoted = killed_at.elapsed();
    assert_ne!(new_primary, primary, "the replica took over");
    // Relay of B's snapshots to A's watcher comes back within the cluster's
    // failover (node timeout, election) plus a second.
    let (gap, watcher) = watch.await.expect("watcher");
    eprintln!("failover: replica promoted after {promoted:?}; longest relay gap on A {gap:?}");
    assert!(gap < promoted + Duration::from_secs(1), "relay gap {gap:?}, promoted after {promoted:?}");
    a.wait_ready().await;
    b.wait_ready().await;
    // No player lost: every bot is still in its first session.
    for bots in [&bots_a, &bots_b] {
        assert_eq!(bots.connected(), bots.len(), "every bot still playing");
        assert!(bots.welcomes().iter().all(|w| *w == 1), "no bot had to reconnect: {:?}", bots.welcomes());
    }
    assert_eq!(a.players().await + b.players().await, 42);
    // And a newcomer can join, and is seen across.
    let mut late = Player::join(&b, "late").await;
    until_sees(&mut late, 1, watcher.id()).await;
    bots_a.stop().await;
    bots_b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrating_the_place_and_snapshot_slots_loses_no_subscription() {
    let cluster = RedisCluster::start(NODE_TIMEOUT);
    let (a, b) = (shard(&cluster, 1).await, shard(&cluster, 2).await);
    let bots = bots_on(&a, 20).await;
    let mut on_a = Player::join(&a, "Ada").await;
    let mut on_b = Player::join(&b, "Bob").await;
    until_sees(&mut on_a, 2, on_b.id()).await;

    // Move the place's slot (chat, presence, control, sessions) and B's
    // snapshot channel's slot each to another primary, under play.
    for key in ["mino:{main}:chat", "mino:{main.s00000002}:snapshots"] {
        let slot = cluster.slot(key);
        let from = cluster.primary_of(slot).expect("served");
        let primaries: Vec<u16> =
            cluster.nodes().into_iter().filter(|n| n.primary && !n.failed).map(|n| n.port).collect();
        let to = *primaries.iter().find(|p| **p != from).expect("another primary");
        cluster.migrate_slot(slot, to);
        assert_eq!(cluster.primary_of(slot), Some(to), "{key} moved");
    }
    // Every subscription follows: snapshots, chat and presence still cross.
    let gap = longest_gap(&mut on_a, 2, Duration::from_secs(3)).await;
    assert!(gap < Duration::from_millis(1000), "relay gap after the migration {gap:?}");
    on_b.send(client::encode_chat("after the move")).await;
    let text = on_a
        .until(|f| match f {
            Frame::Chat { text, .. } => Some(text.clone()),
            _ => None,
        })
        .await;
    assert_eq!(text, "after the move");
    let cy = Player::join(&b, "Cy").await;
    let cy_id = cy.id();
    on_a.until(|f| match f {
        Frame::Presence { joined, .. } if joined.iter().any(|(id, _)| *id == cy_id) => Some(()),
        _ => None,
    })
    .await;
    let moved = a.metric("mino_redis_resubscribes_total{reason=\"slot_moved\"}").await;
    assert!(moved >= 1.0, "the server's sunsubscribe was followed and counted: {moved}");
    assert_eq!(bots.connected(), bots.len());
    assert!(bots.welcomes().iter().all(|w| *w == 1), "no bot reconnected");
    // Resume still works with the sessions on their new node.
    let ticket = on_a.ticket();
    drop(on_a);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let back = Player::hello(&b, "x", Some(&ticket)).await.expect("resumed after the migration");
    assert!(back.welcome.as_ref().is_some_and(|w| w.resumed));
    bots.stop().await;
}
