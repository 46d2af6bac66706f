//! The shipped Redis Cluster configuration (deploy/redis/cluster): six
//! nodes with its ACL (the default user off, the shards as `mino`, the
//! replicas' own user), joined by the operator's `redis-cli --cluster
//! create`; shards given `--redis-cluster` share a place, and a primary
//! killed is replaced by its replica (the replication user works) with the
//! shards following.

use mino_testkit::{deploy_dir, server_bin, Frame, Player, RedisCluster, Shard};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shipped_cluster_config_carries_a_place_through_a_failover() {
    let conf = deploy_dir().join("redis/cluster/mino-redis-cluster.conf");
    let mut cluster = RedisCluster::start_with(
        Some(&conf),
        Some(("admin", "change-this-admin-password")),
        Duration::from_millis(1500),
    );
    let anonymous = mino_testkit::redis::ping(cluster.ports()[0]).unwrap_or_default();
    assert!(anonymous.starts_with("-NOAUTH"), "the default user is off: {anonymous:?}");
    let seeds: Vec<String> =
        cluster.ports().iter().map(|p| format!("redis://mino:change-this-password@127.0.0.1:{p}")).collect();
    let seeds = seeds.join(",");
    let a = Shard::start(server_bin(), &["--shard-id", "1", "--redis-cluster", &seeds]);
    let b = Shard::start(server_bin(), &["--shard-id", "2", "--redis-cluster", &seeds]);
    a.wait_ready().await;
    b.wait_ready().await;
    let mut alice = Player::join(&a, "alice").await;
    let bob = Player::join(&b, "bob").await;
    let bob_id = bob.id();
    let sees_bob = |f: &Frame| match f {
        Frame::Snapshot { shard: 2, players, .. } => players.iter().any(|p| p.0 == bob_id).then_some(()),
        _ => None,
    };
    alice.until(sees_bob).await;
    // Kill the primary of the place's slot; its replica takes over.
    let slot = cluster.slot("mino:{main}:shards");
    let primary = cluster.primary_of(slot).expect("served");
    // The sessions are on the replica before the primary dies (replication
    // is asynchronous; a write within its lag would die with the primary).
    cluster.wait_replicated(primary);
    cluster.kill(primary);
    let now = tokio::task::block_in_place(|| cluster.wait_served(slot, Duration::from_secs(30)));
    assert_ne!(now, primary);
    a.wait_ready().await;
    b.wait_ready().await;
    alice.until(sees_bob).await;
    assert_eq!((a.players().await, b.players().await), (1, 1), "nobody lost");
    // The promoted replica has the place's state: a resume claims there.
    let ticket = alice.ticket();
    drop(alice);
    let back = Player::hello(&b, "x", Some(&ticket)).await.expect("resumed after the failover");
    assert!(back.welcome.as_ref().is_some_and(|w| w.resumed && w.shard_id == 2));
}
