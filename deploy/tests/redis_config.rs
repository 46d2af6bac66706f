//! The shipped Redis configuration: its ACL shuts the default user out and
//! gives the `mino` user what a shard needs to join its place and serve
//! players (deployment-specific lines, addresses and folders, are
//! overridden for the test).

use mino_loadgen::Target;
use mino_testkit::redis::ping;
use mino_testkit::{deploy_dir, server_bin, Frame, Player, Redis, Shard, WorkDir};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shipped_acl_lets_shards_share_a_place_and_nobody_else_in() {
    let dir = WorkDir::new("redis-conf");
    let conf = deploy_dir().join("redis/mino-redis.conf");
    let redis = Redis::start_with(Some(&conf), &["--dir", &dir.path().to_string_lossy()]);
    let anonymous = ping(redis.port).unwrap_or_default();
    assert!(anonymous.starts_with("-NOAUTH"), "the default user is off: {anonymous:?}");

    let url = format!("redis://mino:change-this-password@127.0.0.1:{}", redis.port);
    let a = Shard::start(server_bin(), &["--shard-id", "1", "--redis-url", &url]);
    let b = Shard::start(server_bin(), &["--shard-id", "2", "--redis-url", &url]);
    a.wait_ready().await;
    b.wait_ready().await;
    let on_a = Target::resolve(&format!("ws://{}/ws", a.addr)).await.expect("target");
    let on_b = Target::resolve(&format!("ws://{}/ws", b.addr)).await.expect("target");
    let mut alice = Player::join(&on_a, "alice").await;
    let bob = Player::join(&on_b, "bob").await;
    // Alice sees Bob's shard's snapshots: publish and subscribe work under the ACL.
    let bob_id = bob.id();
    alice
        .until(|f| match f {
            Frame::Snapshot { shard: 2, players, .. } => players.iter().any(|p| p.0 == bob_id).then_some(()),
            _ => None,
        })
        .await;
    assert_eq!(a.metric("mino_redis_publish_failures_total").await, 0.0);
    assert_eq!(b.metric("mino_redis_publish_failures_total").await, 0.0);
}
