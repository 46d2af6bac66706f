//! The shipped Redis configuration: its ACL shuts the default user out and
//! gives the `mino` user what a shard needs to join its place and serve
//! players (deployment-specific lines, addresses and folders, are
//! overridden for the test).

use mino_deploy::redis::ping;
use mino_deploy::{deploy_dir, Player, Redis, Shard, WorkDir};
use mino_loadgen::{ServerEvent, Target};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shipped_acl_lets_shards_share_a_place_and_nobody_else_in() {
    let dir = WorkDir::new("redis-conf");
    let conf = deploy_dir().join("redis/mino-redis.conf");
    let redis = Redis::start_with(Some(&conf), &["--dir", &dir.path().to_string_lossy()]);
    let anonymous = ping(redis.port).unwrap_or_default();
    assert!(anonymous.starts_with("-NOAUTH"), "the default user is off: {anonymous:?}");

    let url = format!("redis://mino:change-this-password@127.0.0.1:{}", redis.port);
    let a = Shard::start(1, Some(&url), &[]);
    let b = Shard::start(2, Some(&url), &[]);
    a.wait_ready().await;
    b.wait_ready().await;
    let on_a = Target::resolve(&format!("ws://{}/ws", a.addr)).await.expect("target");
    let on_b = Target::resolve(&format!("ws://{}/ws", b.addr)).await.expect("target");
    let mut alice = Player::join(&on_a, "alice").await;
    let bob = Player::join(&on_b, "bob").await;
    // Alice sees Bob's shard's snapshots: publish and subscribe work under the ACL.
    let bob_id = bob.welcome.player_id;
    alice
        .until(Duration::from_secs(10), |e| match e {
            ServerEvent::Snapshot(s) if s.shard_id.0 == 2 => s.player(bob_id).map(|_| ()),
            _ => None,
        })
        .await;
    assert_eq!(a.metric("mino_redis_publish_failures_total").await, 0.0);
    assert_eq!(b.metric("mino_redis_publish_failures_total").await, 0.0);
}
