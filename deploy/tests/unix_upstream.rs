//! nginx with TLS in front of shards on the same machine over Unix sockets
//! (`--listen unix:PATH`, `MINO_SHARDS="unix:PATH ..."`): players land on
//! both shards and see each other; a killed shard's players play on the other
//! through nginx, and the shard restarted on its socket (its stale file
//! replaced) takes players again.

use mino_loadgen::failure::FailureKind;
use mino_loadgen::profile::ProfileName;
use mino_testkit::{Bots, Cluster, ClusterOptions, Frame, Player};
use std::time::Duration;

const BOTS: usize = 8;
const LIMIT: Duration = Duration::from_secs(15);

fn unix_cluster() -> ClusterOptions {
    ClusterOptions { unix_sockets: true, ..ClusterOptions::default() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn players_reach_both_shards_over_unix_sockets_behind_tls() {
    let cluster = Cluster::start(unix_cluster()).await;
    for (i, shard) in cluster.shards.iter().enumerate() {
        let socket = shard.socket.as_ref().expect("a unix shard");
        assert!(
            cluster.nginx.conf.exists()
                && std::fs::read_to_string(&cluster.nginx.conf)
                    .expect("conf")
                    .contains(&format!("server unix:{} max_fails=1", socket.display())),
            "shard {} is in the upstream by its socket",
            i + 1
        );
    }
    let target = cluster.target().await;
    let mut alice = Player::join(&target, "alice").await;
    let bob = Player::join(&target, "bob").await;
    let (a, b) = (alice.welcome.clone().expect("welcome"), bob.welcome.clone().expect("welcome"));
    assert_ne!(a.shard_id, b.shard_id, "least_conn puts the second player on the other shard");
    // Alice sees Bob in the snapshots relayed from Bob's shard.
    let seen = alice
        .until(|f| match f {
            Frame::Snapshot { shard, players, .. } if *shard == b.shard_id => {
                players.iter().any(|p| p.0 == b.player_id).then_some(())
            }
            _ => None,
        })
        .await;
    assert_eq!(seen, ());
    assert_eq!(cluster.players().await, vec![1, 1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_unix_shard_fails_over_and_comes_back_on_its_socket() {
    let mut cluster = Cluster::start(unix_cluster()).await;
    let bots = Bots::start(cluster.target().await, BOTS, ProfileName::Walker).await;
    assert!(bots.wait_connected(LIMIT).await, "{} of {BOTS} connected", bots.connected());
    let on_killed = cluster.wait_players(BOTS as u32, LIMIT).await[0] as usize;
    assert!(on_killed > 0 && on_killed < BOTS, "bots on both shards");
    let before = bots.welcomes();

    cluster.shards[0].process().kill9();
    let socket = cluster.shards[0].socket.clone().expect("a unix shard");
    assert!(socket.exists(), "the killed shard's socket file stays behind");
    let back = bots
        .wait_until(LIMIT, |b| before.iter().zip(b.welcomes()).filter(|(old, now)| now > *old).count() == on_killed)
        .await;
    assert!(back, "every bot of the killed shard plays again through nginx");
    assert_eq!(cluster.shards[1].players().await as usize, BOTS);

    // Restarted on the same socket; with the other shard stopped, every bot
    // lands on it.
    cluster.restart_shard(0).await;
    assert_eq!(cluster.shards[0].socket.as_ref(), Some(&socket));
    cluster.shards[1].process().kill9();
    cluster.wait_players(BOTS as u32, LIMIT).await;
    assert_eq!(cluster.shards[0].players().await as usize, BOTS, "all on the restarted shard");
    let t = bots.totals();
    assert_eq!(t.errors_of(FailureKind::Handshake), 0, "no failed upgrade: {:?}", t.error_kinds());
    bots.stop().await;
}
