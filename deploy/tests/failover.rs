//! Shards behind nginx failing and going away: a shard killed with SIGKILL,
//! restarted on its address, and a shard stopped with SIGTERM. Every bot
//! only knows nginx's wss URL and must be playing again through it.

use mino_loadgen::failure::FailureKind;
use mino_loadgen::profile::ProfileName;
use mino_testkit::{Bots, Cluster, ClusterOptions};
use std::time::Duration;

const BOTS: usize = 8;
const LIMIT: Duration = Duration::from_secs(15);

/// Bots whose welcomes went up since `before`: the ones that came back.
fn came_back(before: &[u32], now: &[u32]) -> usize {
    before.iter().zip(now).filter(|(b, n)| n > b).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bot_of_a_killed_shard_plays_again_through_nginx() {
    let mut cluster = Cluster::start(ClusterOptions::default()).await;
    let bots = Bots::start(cluster.target().await, BOTS, ProfileName::Walker).await;
    assert!(bots.wait_connected(LIMIT).await, "{} of {BOTS} connected", bots.connected());
    let per_shard = cluster.wait_players(BOTS as u32, LIMIT).await;
    let on_victim = per_shard[0] as usize;
    assert!(on_victim > 0 && on_victim < BOTS, "bots on both shards: {per_shard:?}");
    let before = bots.welcomes();

    cluster.shards[0].process().kill9();

    let back = bots.wait_until(LIMIT, |b| came_back(&before, &b.welcomes()) == on_victim).await;
    assert!(
        back,
        "{} of {on_victim} bots of the killed shard back; {} connected",
        came_back(&before, &bots.welcomes()),
        bots.connected()
    );
    assert_eq!(cluster.shards[1].players().await as usize, BOTS, "all on the surviving shard");
    let snapshots = bots.own_snapshots_during(Duration::from_secs(1)).await;
    assert!(snapshots >= BOTS as u64 * 10, "every bot is playing (20 Hz snapshots): {snapshots} in 1 s");
    let t = bots.totals();
    assert_eq!(
        t.errors_of(FailureKind::Handshake),
        0,
        "nginx passed every upgrade to the live shard itself (proxy_next_upstream): {:?}",
        t.error_kinds()
    );
    bots.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_shard_restarted_then_the_other_stopped_every_bot_plays_on_the_restarted_one() {
    let mut cluster = Cluster::start(ClusterOptions::default()).await;
    let bots = Bots::start(cluster.target().await, BOTS, ProfileName::Walker).await;
    assert!(bots.wait_connected(LIMIT).await, "{} of {BOTS} connected", bots.connected());
    let on_killed = cluster.wait_players(BOTS as u32, LIMIT).await[0] as usize;
    let before_kill = bots.welcomes();

    // Shard 1 dies, its bots move to shard 2, and shard 1 comes back on its
    // address (as systemd's Restart=on-failure would do).
    cluster.shards[0].process().kill9();
    let moved = bots.wait_until(LIMIT, |b| came_back(&before_kill, &b.welcomes()) == on_killed).await;
    assert!(moved, "back after the kill: {} connected", bots.connected());
    cluster.restart_shard(0).await;
    // nginx skips a failed shard for fail_timeout (5 s) before trying it again.
    tokio::time::sleep(Duration::from_millis(5500)).await;
    assert_eq!(cluster.players().await, [0, BOTS as u32], "nobody moved back by itself");
    let before = bots.welcomes();

    // Shard 2 stops (SIGTERM): its players land on the restarted shard 1.
    let status = cluster.shards[1].process().stop(LIMIT).expect("shard 2 exits on SIGTERM");
    assert!(status.success(), "graceful exit: {status:?}");
    let back = bots.wait_until(LIMIT, |b| came_back(&before, &b.welcomes()) == BOTS).await;
    assert!(
        back,
        "{} of {BOTS} back; {} connected; {:?}",
        came_back(&before, &bots.welcomes()),
        bots.connected(),
        bots.totals().error_kinds()
    );
    assert_eq!(cluster.shards[0].players().await as usize, BOTS, "all on the restarted shard");
    let t = bots.totals();
    assert_eq!(
        t.errors_of(FailureKind::Handshake),
        0,
        "no upgrade was refused: the restarted shard took every player at once: {:?}",
        t.error_kinds()
    );
    let snapshots = bots.own_snapshots_during(Duration::from_secs(1)).await;
    assert!(snapshots >= BOTS as u64 * 10, "every bot is playing (20 Hz snapshots): {snapshots} in 1 s");
    bots.stop().await;
}
