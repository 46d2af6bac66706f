//! Area of interest across shards: a player on one shard sees only the nearby
//! players of another (their cells relayed byte for byte through Redis, in
//! region bundles), and each shard's Redis subscriptions follow its players
//! region by region.

use mino_testkit::{wait, Frame, Player, Redis, Shard};
use std::time::{Duration, Instant};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// A 2,000-unit world of 125-unit cells (16 x 16 cells, 2 x 2 regions of
/// 8 x 8 cells), a view radius of two cells, walkers at 300 units/s.
async fn shard(redis: &Redis, id: u32) -> Shard {
    let world = Shard::build(SERVER).redis(redis).id(id).world_size(2000.0).speed(300.0);
    world.cell_size(125.0).view_radius(250.0).flag("view-hysteresis-ticks", 2).ready().await
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Reads frames until one of the last 60 ms (the socket's backlog skipped).
async fn skip_stale(p: &mut Player) {
    let w = p.welcome.clone().expect("welcome");
    loop {
        if let Frame::Cell(c) = p.next().await {
            if w.unwrap_time(c.time_ms) + 60 >= now_ms() {
                return;
            }
        }
    }
}
/// The ids of everyone `p` is sent for about one second, with the shard
/// that sent each.
async fn seen_for_a_second(p: &mut Player) -> Vec<(u32, u32)> {
    skip_stale(p).await;
    let start = Instant::now();
    let mut seen = Vec::new();
    while start.elapsed() < Duration::from_secs(1) {
        if let Frame::Cell(c) = p.next().await {
            for (id, _, _) in p.players_of(&c) {
                if !seen.contains(&(id, c.shard_id.0)) {
                    seen.push((id, c.shard_id.0));
                }
            }
        }
    }
    seen
}

/// Subscribers of a region's channel (PUBSUB NUMSUB).
fn subscribers(redis: &Redis, region: u32) -> u32 {
    let channel = format!("mino:{{main.r{region}}}:cells");
    let out = redis.cli(&["PUBSUB", "NUMSUB", &channel]);
    out.lines().nth(1).and_then(|n| n.trim().parse().ok()).unwrap_or(0)
}

/// Waits up to 10 s for a region's subscriber count to become `want` (a
/// region is kept 2 s after its last viewer; on a loaded machine the ticks
/// and the subscriber's change come late: 5 s was missed once in a full run).
async fn wait_subscribers(redis: &Redis, region: u32, want: u32) {
    let what = format!("{want} subscribers of region {region}");
    wait::until(&what, Duration::from_secs(10), || async { (subscribers(redis, region) == want).then_some(()) }).await;
    assert_eq!(subscribers(redis, region), want, "subscribers of region {region}");
}

#[tokio::test]
async fn a_player_sees_only_the_nearby_players_of_another_shard_and_subscriptions_follow_players() {
    let redis = Redis::start();
    let one = shard(&redis, 1).await;
    let two = shard(&redis, 2).await;
    let mut p = Player::join(&one, "OnOne").await;
    let mut near = Player::join(&two, "NearOnTwo").await;
    let mut far = Player::join(&two, "FarOnTwo").await;
    p.walk_to((200.0, 200.0), 30.0).await;
    near.walk_to((260.0, 200.0), 30.0).await;
    far.walk_to((1800.0, 1800.0), 30.0).await;

    let seen = seen_for_a_second(&mut p).await;
    assert!(seen.contains(&(near.id(), 2)), "the nearby player of shard 2, relayed: {seen:?}");
    assert!(!seen.iter().any(|s| s.0 == far.id()), "not the far one: {seen:?}");
    // Region 1 (top left) is heard by both shards; region 4 (bottom right)
    // only by shard 2, whose far player stands there.
    wait_subscribers(&redis, 1, 2).await;
    wait_subscribers(&redis, 4, 1).await;

    // The player of shard 1 walks over to the far one: shard 1 starts hearing
    // region 4, and after the keep time stops hearing region 1.
    p.walk_to((1750.0, 1800.0), 30.0).await;
    wait_subscribers(&redis, 4, 2).await;
    let seen = seen_for_a_second(&mut p).await;
    assert!(seen.contains(&(far.id(), 2)), "now the far one is near: {seen:?}");
    assert!(!seen.iter().any(|s| s.0 == near.id()), "and the other one far: {seen:?}");
    wait_subscribers(&redis, 1, 1).await;
    assert_eq!(one.metric("mino_region_subscriptions").await, 1.0);
}
