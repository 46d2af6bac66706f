//! Resume through nginx: players whose shard is killed, drained, or whose
//! nginx worker closes them on a reload come back as the same players (same
//! id) on a shard nginx picks, presenting the ticket of their last Welcome or
//! Move.

use mino_loadgen::failure::FailureKind;
use mino_loadgen::profile::ProfileName;
use mino_testkit::{Bots, Cluster, ClusterOptions};
use std::time::Duration;

const BOTS: usize = 8;
const LIMIT: Duration = Duration::from_secs(15);

/// Bots whose welcomes went up since `before`.
fn came_back(before: &[u32], now: &[u32]) -> usize {
    before.iter().zip(now).filter(|(b, n)| n > b).count()
}

async fn playing_bots(cluster: &Cluster) -> Bots {
    let bots = Bots::start(cluster.target().await, BOTS, ProfileName::Walker).await;
    assert!(bots.wait_connected(LIMIT).await, "{} of {BOTS} connected", bots.connected());
    cluster.wait_players(BOTS as u32, LIMIT).await;
    bots
}

/// Every bot is playing, and those that came back resumed as themselves.
async fn assert_resumed(bots: &Bots, ids_before: &[Option<mino_protocol::PlayerId>], came_back: usize) {
    assert_eq!(bots.ids(), ids_before, "every bot is the same player as before");
    let t = bots.totals();
    assert_eq!(t.resumed as usize, came_back, "resumed: {t:?}");
    assert_eq!(t.fresh_rejoins, 0, "nobody came back as a new player: {t:?}");
    assert_eq!(t.misplaced, 0, "every resumed player is where it was (largest jump {}): {t:?}", bots.max_resume_jump());
    assert_eq!(t.errors_of(FailureKind::TicketRefused), 0, "{:?}", t.error_kinds());
    let snapshots = bots.own_snapshots_during(Duration::from_secs(1)).await;
    assert!(snapshots >= BOTS as u64 * 10, "every bot is playing (20 Hz snapshots): {snapshots} in 1 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_of_a_killed_shard_resume_with_their_ids_through_nginx() {
    let mut cluster = Cluster::start(ClusterOptions::default()).await;
    let bots = playing_bots(&cluster).await;
    let on_victim = cluster.players().await[0] as usize;
    assert!(on_victim > 0 && on_victim < BOTS);
    let (before, ids) = (bots.welcomes(), bots.ids());

    cluster.shards[0].process().kill9();

    let back = bots.wait_until(LIMIT, |b| came_back(&before, &b.welcomes()) == on_victim).await;
    assert!(back, "{} of {on_victim} back", came_back(&before, &bots.welcomes()));
    assert_eq!(cluster.wait_players(BOTS as u32, LIMIT).await[1] as usize, BOTS);
    assert_resumed(&bots, &ids, on_victim).await;
    bots.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_of_a_drained_shard_resume_with_their_ids_on_the_other_through_nginx() {
    let mut cluster = Cluster::start(ClusterOptions::default()).await;
    let bots = playing_bots(&cluster).await;
    let on_drained = cluster.players().await[0] as usize;
    assert!(on_drained > 0 && on_drained < BOTS);
    let (before, ids) = (bots.welcomes(), bots.ids());

    let status = cluster.shards[0].process().stop(LIMIT).expect("the drained shard exits");
    assert!(status.success(), "drained and exited 0: {status:?}");

    let back = bots.wait_until(LIMIT, |b| came_back(&before, &b.welcomes()) == on_drained).await;
    assert!(back, "{} of {on_drained} back", came_back(&before, &bots.welcomes()));
    assert_eq!(cluster.wait_players(BOTS as u32, LIMIT).await[1] as usize, BOTS);
    assert_resumed(&bots, &ids, on_drained).await;
    bots.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_cut_by_a_reload_resume_with_their_ids() {
    let options = ClusterOptions { shutdown_timeout: "2s".into(), ..ClusterOptions::default() };
    let cluster = Cluster::start(options).await;
    let bots = playing_bots(&cluster).await;
    let (before, ids) = (bots.welcomes(), bots.ids());

    cluster.nginx.reload();

    let back = bots.wait_until(LIMIT, |b| came_back(&before, &b.welcomes()) == BOTS).await;
    assert!(back, "{} of {BOTS} back after the old workers closed them", came_back(&before, &bots.welcomes()));
    cluster.wait_players(BOTS as u32, LIMIT).await;
    assert_resumed(&bots, &ids, BOTS).await;
    bots.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moved_players_are_never_sent_back_to_the_draining_shard() {
    let mut cluster = Cluster::start(ClusterOptions::default()).await;
    let bots = Bots::start(cluster.target().await, 60, ProfileName::Walker).await;
    assert!(bots.wait_connected(LIMIT).await, "{} of 60 connected", bots.connected());
    let on_drained = cluster.wait_players(60, LIMIT).await[0] as usize;
    let (before, ids) = (bots.welcomes(), bots.ids());
    let status = cluster.shards[0].process().stop(LIMIT).expect("the drained shard exits");
    assert!(status.success(), "{status:?}");
    let back = bots.wait_until(LIMIT, |b| came_back(&before, &b.welcomes()) == on_drained).await;
    assert!(back, "{} of {on_drained} back", came_back(&before, &bots.welcomes()));
    assert_eq!(bots.ids(), ids);
    let t = bots.totals();
    assert_eq!(t.busy_refusals, 0, "nginx passed every moved player's upgrade to a shard that admits it: {t:?}");
    assert_eq!(t.misplaced, 0, "largest jump {}: {t:?}", bots.max_resume_jump());
}
