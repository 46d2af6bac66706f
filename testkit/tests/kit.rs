//! The kit's own promises: each part it starts answers where it says it
//! does, and no process it started outlives the value that owns it.
//! (Needs the server binary: `cargo build -p mino-server`.)

use mino_testkit::process::alive;
use mino_testkit::{http, server_bin, Cluster, ClusterOptions, Player, Redis, Shard};
use std::time::{Duration, Instant};

/// Waits until none of `pids` runs, at most 2 s; returns those still running.
fn still_running(pids: &[u32]) -> Vec<u32> {
    let end = Instant::now() + Duration::from_secs(2);
    loop {
        let left: Vec<u32> = pids.iter().copied().filter(|p| alive(*p)).collect();
        if left.is_empty() || Instant::now() >= end {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test]
async fn a_shard_announces_both_listeners_takes_players_and_is_gone_once_dropped() {
    let shard = Shard::start(server_bin(), &["--admin-listen", "127.0.0.1:0", "--shard-id", "7"]);
    let admin = shard.admin.expect("the admin line was read");
    assert_eq!(http::get(admin, "/healthz").await.status, 200);
    let player = Player::join(&shard, "kit").await;
    assert_eq!(player.welcome.as_ref().map(|w| w.shard_id), Some(7));
    shard.wait_metric("mino_players", 1.0).await;
    assert!(shard.metrics().await.families().contains("mino_players"));
    let pid = shard.pid();
    drop(player);
    drop(shard);
    assert_eq!(still_running(&[pid]), Vec::<u32>::new(), "the shard outlived its Shard");
}

#[test]
fn redis_restarts_empty_on_its_port_and_is_gone_once_dropped() {
    let mut redis = Redis::start();
    assert_eq!(redis.cli(&["SET", "k", "v"]).trim(), "OK");
    assert_eq!(redis.keys(), ["k"]);
    let (port, before) = (redis.port, redis.pid());
    redis.restart();
    assert_eq!(redis.port, port);
    assert_ne!(redis.pid(), before);
    assert!(redis.keys().is_empty(), "no persistence");
    let pid = redis.pid();
    drop(redis);
    assert_eq!(still_running(&[before, pid]), Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_plays_through_nginx_and_leaves_no_process_behind() {
    let cluster = Cluster::start(ClusterOptions { shards: 1, ..ClusterOptions::default() }).await;
    let player = Player::join(&cluster.target().await, "kit").await;
    assert_eq!(player.welcome.as_ref().map(|w| w.shard_id), Some(1));
    let conf = std::fs::read_to_string(&cluster.nginx.conf).expect("the rendered configuration");
    assert!(conf.contains("proxy_next_upstream error timeout http_502 http_503;"), "the shipped template");
    let mut pids = vec![cluster.nginx.pid(), cluster.redis.pid(), cluster.shards[0].pid()];
    pids.extend(cluster.nginx.workers());
    assert!(pids.len() > 3, "nginx has workers: {pids:?}");
    drop(player);
    drop(cluster);
    assert_eq!(still_running(&pids), Vec::<u32>::new(), "of {pids:?}");
}
