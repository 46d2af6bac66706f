//! `nginx -s reload` with players connected: new workers take over, the old
//! ones close what they still hold after worker_shutdown_timeout, and every
//! player is playing again through the new workers.

use mino_loadgen::failure::FailureKind;
use mino_loadgen::profile::ProfileName;
use mino_testkit::process::alive;
use mino_testkit::{Bots, Cluster, ClusterOptions};
use std::time::Duration;
use tokio::time::Instant;

const BOTS: usize = 8;
const LIMIT: Duration = Duration::from_secs(15);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_with_players_connected_loses_nobody() {
    let options = ClusterOptions { shutdown_timeout: "2s".into(), ..ClusterOptions::default() };
    let cluster = Cluster::start(options).await;
    let bots = Bots::start(cluster.target().await, BOTS, ProfileName::Walker).await;
    assert!(bots.wait_connected(LIMIT).await, "{} of {BOTS} connected", bots.connected());
    cluster.wait_players(BOTS as u32, LIMIT).await;
    let old_workers = cluster.nginx.workers();
    assert!(!old_workers.is_empty());
    let before = bots.welcomes();

    cluster.nginx.reload();

    // The old workers hold the websockets until worker_shutdown_timeout
    // (2 s here), then close them and exit.
    let end = Instant::now() + LIMIT;
    while old_workers.iter().any(|w| alive(*w)) {
        assert!(Instant::now() < end, "old workers still alive {LIMIT:?} after the reload");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let new_workers = cluster.nginx.workers();
    assert!(!new_workers.is_empty() && new_workers.iter().all(|w| !old_workers.contains(w)), "{new_workers:?}");

    // Every bot was cut by its old worker and came back through a new one.
    let back = bots.wait_until(LIMIT, |b| b.welcomes().iter().zip(&before).all(|(now, was)| now > was)).await;
    assert!(back, "welcomes before {before:?}, now {:?}; {} connected", bots.welcomes(), bots.connected());
    cluster.wait_players(BOTS as u32, LIMIT).await;
    let snapshots = bots.own_snapshots_during(Duration::from_secs(1)).await;
    assert!(snapshots >= BOTS as u64 * 10, "every bot is playing (20 Hz snapshots): {snapshots} in 1 s");
    let t = bots.totals();
    assert_eq!(t.errors_of(FailureKind::Handshake), 0, "no upgrade refused: {:?}", t.error_kinds());
    bots.stop().await;
}
