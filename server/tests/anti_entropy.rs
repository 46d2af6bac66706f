//! Cross-shard state converges after a lost message: each kind repairs
//! itself from what Redis holds within its documented bound (deploy/README.md,
//! "State that converges"):
//!
//! - rosters and presence: every live shard's players hash is re-read every
//!   5 s (a presence "left" dropped while Redis refused writes);
//! - ownership: every 5 s a shard asks whether another shard owns any of its
//!   players' sessions (a takeover notice lost with a cut connection);
//! - liveness and the cluster view: a shard whose heartbeats were lost leaves
//!   the others' views within the TTL and comes back, with its players and
//!   its relayed snapshots, at its next heartbeat.

use mino_protocol::wire::CloseCode;
use mino_testkit::{close_code, Forwarder, Frame, Player, Redis, Shard};
use std::time::{Duration, Instant};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// A shard of the place on the Redis at `url`, in a 10,000-unit world.
async fn shard(url: &str, id: u32) -> Shard {
    Shard::build(SERVER).redis_url(url).id(id).world_size(10_000.0).ready().await
}

/// Waits until `c` has been told of `player` (roster or presence).
async fn until_known(c: &mut Player, player: u32) {
    c.until(|f| match f {
        Frame::Roster(r) if r.iter().any(|(id, _)| *id == player) => Some(()),
        Frame::Presence { joined, .. } if joined.iter().any(|(id, _)| *id == player) => Some(()),
        _ => None,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_presence_left_dropped_while_redis_refused_writes_is_repaired_by_the_roster_reads() {
    let redis = Redis::start_with(None, &["--protected-mode", "no", "--maxmemory-policy", "noeviction"]);
    let (a, b) = (shard(&redis.url(), 1).await, shard(&redis.url(), 2).await);
    let leaver = Player::join(&a, "Leaver").await;
    let gone = leaver.id();
    let mut watcher = Player::join(&b, "Watcher").await;
    until_known(&mut watcher, gone).await;

    // Redis refuses every write while the player closes: the presence
    // MULTI (players hash and PUBLISH) is refused whole, its "left" lost.
    assert!(redis.cli(&["CONFIG", "SET", "maxmemory", "1"]).starts_with("OK"));
    drop(leaver);
    a.wait_metric("mino_players", 0.0).await;
    a.wait_metric_at_least("mino_redis_publish_failures_total", 1.0).await;
    assert!(a.metric("mino_redis_publish_failures_total").await >= 1.0, "the presence publish was refused");
    assert!(redis.cli(&["CONFIG", "SET", "maxmemory", "0"]).starts_with("OK"));
    let accepted = Instant::now();

    // B learns it from A's players hash within the roster period (5 s) plus
    // a heartbeat interval: its watcher gets the "left".
    watcher
        .until(|f| match f {
            Frame::Presence { left, .. } if left.contains(&gone) => Some(()),
            _ => None,
        })
        .await;
    let repaired = accepted.elapsed();
    assert!(repaired < Duration::from_millis(5000 + 500 + 1000), "repaired after {repaired:?}");
    // A newcomer's roster no longer lists the departed player.
    let mut newcomer = Player::join(&b, "Newcomer").await;
    let roster = newcomer.until(|f| if let Frame::Roster(r) = f { Some(r.clone()) } else { None }).await;
    assert!(!roster.iter().any(|(id, _)| *id == gone), "the departed player is not in {roster:?}");
    assert!(b.metric("mino_anti_entropy_repairs_total{kind=\"roster\"}").await >= 1.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_takeover_notice_is_found_by_the_ownership_audit() {
    let redis = Redis::start();
    // Shard A reaches Redis through a forwarder that can cut it off.
    let forwarder = Forwarder::start(redis.port);
    let a = shard(&forwarder.url(), 1).await;
    let b = shard(&redis.url(), 2).await;
    let mut first = Player::join(&a, "Ada").await;
    // The place settled: each shard sees the other.
    a.wait_metric("mino_cluster_shards", 1.0).await;
    b.wait_metric("mino_cluster_shards", 1.0).await;

    // Cut A off (its subscription too) for a moment, too short to fence it,
    // and resume Ada on B meanwhile: the takeover notice is lost to A.
    let failed = a.metric("mino_redis_publish_failures_total").await;
    forwarder.refuse(true);
    forwarder.cut();
    let second = Player::hello(&b, "Ada", Some(&first.ticket())).await.expect("taken over on B");
    assert_eq!(second.id(), first.id());
    // The cut is felt: a publish of A failed after it.
    a.wait_metric_at_least("mino_redis_publish_failures_total", failed + 1.0).await;
    forwarder.refuse(false);
    let reconnected = Instant::now();

    // A drops its stale copy within the audit period (5 s) plus a round trip.
    let (code, _) = first.closed().await;
    let dropped = reconnected.elapsed();
    assert_eq!(code, close_code(CloseCode::SessionReplaced));
    assert!(dropped < Duration::from_millis(5000 + 1000), "dropped after {dropped:?}");
    a.wait_metric("mino_players", 0.0).await;
    assert!(a.metric("mino_anti_entropy_repairs_total{kind=\"ownership\"}").await >= 1.0);
    assert_eq!(b.players().await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shard_whose_heartbeats_were_lost_leaves_the_views_and_returns_with_its_players() {
    let redis = Redis::start();
    let forwarder = Forwarder::start(redis.port);
    let fast = ["--shard-ttl-ms", "1000", "--heartbeat-ms", "200"];
    let url = forwarder.url();
    let mut args = vec!["--redis-url", url.as_str(), "--shard-id", "1"];
    args.extend(fast);
    let a = Shard::start(SERVER, &args);
    a.wait_ready().await;
    let redis_url = redis.url();
    let mut args = vec!["--redis-url", redis_url.as_str(), "--shard-id", "2"];
    args.extend(fast);
    let b = Shard::start(SERVER, &args);
    b.wait_ready().await;
    let on_a = Player::join(&a, "Ada").await;
    let mut on_b = Player::join(&b, "Bob").await;
    let ada = on_a.id();
    until_known(&mut on_b, ada).await;

    // A's heartbeats are lost for longer than the TTL: B drops A and its players.
    forwarder.refuse(true);
    forwarder.cut();
    on_b.until(|f| match f {
        Frame::Presence { left, .. } if left.contains(&ada) => Some(()),
        _ => None,
    })
    .await;
    b.wait_metric("mino_cluster_shards", 0.0).await;
    // Back: A's next heartbeat brings it, its players and its snapshots back.
    forwarder.refuse(false);
    let back = Instant::now();
    until_known(&mut on_b, ada).await;
    on_b.until(|f| match f {
        Frame::Snapshot { shard: 1, players, .. } if players.iter().any(|p| p.0 == ada) => Some(()),
        _ => None,
    })
    .await;
    let took = back.elapsed();
    assert!(took < Duration::from_secs(3), "back in the view after {took:?}");
    b.wait_metric("mino_cluster_shards", 1.0).await;
    assert_eq!(a.players().await, 1, "Ada never left her shard");
}
