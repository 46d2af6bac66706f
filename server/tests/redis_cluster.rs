//! Shards of one place on a real six-node Redis Cluster (three primaries,
//! three replicas): play, relay, chat, presence and resume cross shards over
//! sharded pub/sub; a primary killed under play is replaced by its replica
//! with no player lost; a slot migrated under play loses no subscription.

use mino_loadgen::profile::ProfileName;
use mino_loadgen::Target;
use mino_protocol::{client, ShardId};
use mino_server::Keys;
use mino_testkit::{Bots, Frame, Player, RedisCluster, Shard, Signal};
use std::time::{Duration, Instant};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// Failure detection of the test clusters.
const NODE_TIMEOUT: Duration = Duration::from_millis(1500);

/// A shard of the place on `cluster`: a 10,000-unit world, walkers at 100
/// units/s.
async fn shard(cluster: &RedisCluster, id: u32) -> Shard {
    let on = Shard::build(SERVER).redis_cluster(&cluster.seeds()).id(id);
    on.world_size(10_000.0).speed(100.0).ready().await
}

/// The shard channel that shard `id`'s cells go out on, named by the
/// server's own [`Keys`] (the whole place is region 1; on a cluster each
/// shard's region channel has a hash tag of its own).
fn cells_channel(id: u32) -> String {
    Keys::spread("main").cells(1, ShardId(id))
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
    // Each shard's cells go over a shard channel of its own slot (the whole
    // place is region 1).
    for id in 1..=3u32 {
        let channel = cells_channel(id);
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
    // cells' channel's slot each to another primary, under play.
    for key in ["mino:{main}:chat".to_owned(), cells_channel(2)] {
        let slot = cluster.slot(&key);
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
    let players = a.players().await;
    drop(on_a);
    // A let the player go (its session parked in Redis).
    a.wait_metric("mino_players", f64::from(players - 1)).await;
    let back = Player::hello(&b, "x", Some(&ticket)).await.expect("resumed after the migration");
    assert!(back.welcome.as_ref().is_some_and(|w| w.resumed));
    bots.stop().await;
}

/// Arrival times of `shard`'s snapshots at `c` until `stop` says so.
async fn arrivals(c: &mut Player, shard: u32, stop: tokio::sync::watch::Receiver<bool>) -> Vec<Instant> {
    let mut at = Vec::new();
    while !*stop.borrow() {
        if let Frame::Snapshot { shard: s, .. } = c.next().await {
            if s == shard {
                at.push(Instant::now());
            }
        }
    }
    at
}

/// The gaps between `arrivals`, sorted.
fn gaps(arrivals: &[Instant]) -> Vec<Duration> {
    let mut g: Vec<Duration> = arrivals.windows(2).map(|w| w[1] - w[0]).collect();
    g.sort_unstable();
    g
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted.get(((sorted.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(Duration::MAX)
}

/// While one primary is down (killed, until its replica is promoted), frames
/// whose channels live on the healthy primaries never wait on it: two
/// shards whose snapshot channels are on other primaries than the place's
/// slot (`{main}`: heartbeats, sessions, chat, presence, last snapshots)
/// keep relaying each other's snapshots every tick, without one pause.
/// Before, each tick's publish waited on its write to the dead slot, a
/// second at a time; and then the subscriber, rebuilding its subscription at
/// the node's loss, waited up to 2 s on a subscribe to the dead primary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_to_healthy_primaries_never_wait_on_a_dead_one() {
    let mut cluster = RedisCluster::start(NODE_TIMEOUT);
    let slot = cluster.slot("mino:{main}:shards");
    let dead = cluster.primary_of(slot).expect("the place's slot is served");
    // Two shard ids whose cells channels live on the other primaries.
    let healthy = (1u32..)
        .filter(|id| cluster.primary_of(cluster.slot(&cells_channel(*id))) != Some(dead))
        .take(2)
        .collect::<Vec<_>>();
    let (a, b) = (shard(&cluster, healthy[0]).await, shard(&cluster, healthy[1]).await);
    let (mut on_a, mut on_b) = (Player::join(&a, "on-a").await, Player::join(&b, "on-b").await);
    until_sees(&mut on_a, healthy[1], on_b.id()).await;
    until_sees(&mut on_b, healthy[0], on_a.id()).await;
    // What the test stands on, read from the cluster rather than assumed:
    // the shards' cells channels are subscribed on live primaries, and
    // none on the one to be killed. (Channels were named otherwise once;
    // the test then chose by the old name, and half its runs measured a
    // channel on the dead primary, that is the failover's length.)
    let on_dead = cluster.cli(dead, &["PUBSUB", "SHARDCHANNELS", "mino:*"]);
    for id in &healthy {
        let channel = cells_channel(*id);
        let port = cluster.primary_of(cluster.slot(&channel)).expect("served");
        assert!(cluster.cli(port, &["PUBSUB", "SHARDCHANNELS", "mino:*"]).contains(&channel), "{channel} on :{port}");
        assert!(!on_dead.contains(&channel), "{channel} is not on the primary to be killed: {on_dead}");
    }
    cluster.wait_replicated(dead);

    let (stop, stopped) = tokio::sync::watch::channel(false);
    let (id_a, id_b) = (healthy[0], healthy[1]);
    let stopped_b = stopped.clone();
    let watch_a = tokio::spawn(async move { (arrivals(&mut on_a, id_b, stopped).await, on_a) });
    let watch_b = tokio::spawn(async move { (arrivals(&mut on_b, id_a, stopped_b).await, on_b) });
    let killed_at = Instant::now();
    cluster.kill(dead);
    let promoted = tokio::task::block_in_place(|| cluster.wait_served(slot, Duration::from_secs(20)));
    let outage = killed_at.elapsed();
    assert_ne!(promoted, dead, "the replica took over");
    let _ = stop.send(true);
    for (watch, relayed) in [(watch_a, id_b), (watch_b, id_a)] {
        let (at, _player) = watch.await.expect("watcher");
        let during: Vec<Instant> = at.into_iter().filter(|t| *t <= killed_at + outage).collect();
        let g = gaps(&during);
        let (p95, longest) = (percentile(&g, 0.95), g.last().copied().unwrap_or(Duration::MAX));
        eprintln!(
            "shard {relayed:08x}'s snapshots relayed during the {outage:?} outage: {} frames, gap p95 {p95:?}, longest {longest:?}",
            during.len()
        );
        // Not one pause: neither publisher nor subscriber waits on the dead
        // primary (seen: longest 51 to 56 ms in 10 runs; before, the
        // subscription was rebuilt at the node's loss and a subscribe to a
        // channel on the dead primary held up the others' for 1 to 2 s).
        // The bound leaves room for a loaded machine: 6 ticks.
        assert!(longest <= Duration::from_millis(300), "longest relayed gap {longest:?}");
        assert!(
            during.len() as f64 >= outage.as_secs_f64() * 20.0 * 0.7,
            "frames kept coming: {} (longest gap {longest:?})",
            during.len()
        );
        assert!(p95 <= Duration::from_millis(150), "relayed gap p95 {p95:?} (longest {longest:?})");
    }
    // And the subscriber's books agree: every channel, those on the dead
    // primary too, held again and counted once (a shard that never tried
    // its failed channels again would not count it, whatever the client
    // library re-subscribes by itself).
    for s in [&a, &b] {
        s.wait_metric_at_least("mino_redis_resubscribes_total{reason=\"node_lost\"}", 1.0).await;
    }
}
