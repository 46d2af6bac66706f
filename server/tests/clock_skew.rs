//! Liveness does not trust the shards' wall clocks: a shard whose clock is
//! 5 s behind or ahead of the others (libfaketime, its monotonic clock
//! untouched) stays alive in their views, its snapshots relayed and its
//! players listed. (Before, a shard 5 s behind was dead to the others:
//! heartbeats were scored by the writer's clock and read by the reader's.)

use mino_testkit::{clock, Frame, Player, Redis, Shard};
use std::time::{Duration, Instant};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

async fn skewed_pair_stays_in_view(skew_s: i64) {
    let redis = Redis::start();
    let url = redis.url();
    let a = Shard::start(SERVER, &["--redis-url", &url, "--shard-id", "1"]);
    let b = Shard::start_with_env(SERVER, &["--redis-url", &url, "--shard-id", "2"], &clock::skewed(skew_s));
    a.wait_ready().await;
    b.wait_ready().await;
    let mut on_a = Player::join(&a, "Ada").await;
    let bob = Player::join(&b, "Bob").await;
    let bob_id = bob.id();
    // B's wall clock really is off: its snapshots carry its time.
    let (time_b, local) = on_a
        .until(|f| match f {
            Frame::Snapshot { shard: 2, time_ms, .. } => Some((*time_ms, wall_ms())),
            _ => None,
        })
        .await;
    let off = time_b as i64 - local as i64;
    assert!((off - skew_s * 1000).abs() < 1000, "B's clock is {off} ms off, want about {} s", skew_s);
    // For longer than two TTLs, A sees B alive, relays its snapshots with
    // Bob in them (none dropped as coming from a dead shard), and lists it.
    let drops = "mino_relay_dropped_total{kind=\"relay_snapshot\"}";
    let dropped_before = a.metric(drops).await;
    let start = Instant::now();
    let (mut snapshots, mut last) = (0, Instant::now());
    let mut longest = Duration::ZERO;
    while start.elapsed() < Duration::from_secs(7) {
        if let Frame::Snapshot { shard: 2, players, .. } = on_a.next().await {
            if players.iter().any(|p| p.0 == bob_id) {
                snapshots += 1;
                longest = longest.max(last.elapsed());
                last = Instant::now();
            }
        }
    }
    assert!(snapshots > 100, "B's snapshots relayed to A: {snapshots} in 7 s");
    assert!(longest < Duration::from_millis(500), "longest gap in B's snapshots {longest:?}");
    assert_eq!(a.metric("mino_cluster_shards").await, 1.0, "A's view holds B");
    assert_eq!(b.metric("mino_cluster_shards").await, 1.0, "B's view holds A");
    assert_eq!(a.metric(drops).await, dropped_before, "A dropped none of B's snapshots");
    // A newcomer on A gets Bob in its roster.
    let mut newcomer = Player::join(&a, "Newcomer").await;
    let roster = newcomer.until(|f| if let Frame::Roster(r) = f { Some(r.clone()) } else { None }).await;
    assert!(roster.iter().any(|(id, _)| *id == bob_id), "Bob listed: {roster:?}");
}

fn wall_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shard_five_seconds_behind_stays_alive_in_the_view() {
    skewed_pair_stays_in_view(-5).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shard_five_seconds_ahead_stays_alive_in_the_view() {
    skewed_pair_stays_in_view(5).await;
}
