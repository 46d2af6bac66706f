//! A primary demoted behind a stable address: Redis P with replica Q, both
//! shards reach Redis through a TCP forwarder (a virtual IP, a DNS name);
//! Q is promoted, the forwarder's new connections go to Q, and P is demoted
//! to a replica of Q without its clients being killed. The shards notice
//! the `READONLY` replies, drop those connections and reconnect (to Q):
//! ready and admitting players again within about a second, logged and
//! counted.

use mino_testkit::{wait, Forwarder, Frame, Player, Redis, Shard, WorkDir, WAIT};
use std::time::{Duration, Instant};

/// The server binary cargo built for these tests.
const SERVER: &str = env!("CARGO_BIN_EXE_mino-server");

/// Waits until `c` receives a snapshot of `shard` listing `player`.
async fn until_sees(c: &mut Player, shard: u32, player: u32) {
    c.until(|f| match f {
        Frame::Snapshot { shard: s, players, .. } if *s == shard && players.iter().any(|p| p.0 == player) => Some(()),
        _ => None,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_demoted_primary_is_left_within_a_second_and_players_join_again() {
    let p = Redis::start();
    let q = Redis::start_with(None, &["--protected-mode", "no", "--replicaof", "127.0.0.1", &p.port.to_string()]);
    let synced = || q.cli(&["INFO", "replication"]).contains("master_link_status:up");
    wait::until("the replica synced", WAIT, || async { synced().then_some(()) }).await;
    let forwarder = Forwarder::start(p.port);
    let dir = WorkDir::new("demoted");
    let log = dir.join("a.log");
    let url = forwarder.url();
    let a = Shard::start_logging_to(SERVER, &["--redis-url", &url, "--shard-id", "1"], &log, "warn");
    let b = Shard::start(SERVER, &["--redis-url", &url, "--shard-id", "2"]);
    a.wait_ready().await;
    b.wait_ready().await;
    let mut on_a = Player::join(&a, "Ada").await;
    let bob = Player::join(&b, "Bob").await;
    until_sees(&mut on_a, 2, bob.id()).await;

    // Promote Q, point the stable address at it, demote P under its clients.
    assert!(q.cli(&["REPLICAOF", "NO", "ONE"]).starts_with("OK"));
    forwarder.point_at(q.port);
    let demoted_at = Instant::now();
    assert!(p.cli(&["REPLICAOF", "127.0.0.1", &q.port.to_string()]).starts_with("OK"));
    // Before the fix both shards stayed on P, every write refused, /readyz
    // 503 for 8 to 20 s. Now: never more than about a second not ready.
    let mut longest = Duration::ZERO;
    let mut since: [Option<Instant>; 2] = [None, None];
    // Readiness sampled every 20 ms for 3 s.
    let mut sample = tokio::time::interval(wait::POLL);
    while demoted_at.elapsed() < Duration::from_secs(3) {
        sample.tick().await;
        for (i, shard) in [&a, &b].into_iter().enumerate() {
            let ready = shard.get("/readyz").await.status == 200;
            match (ready, since[i]) {
                (false, None) => since[i] = Some(Instant::now()),
                (true, Some(t)) => {
                    longest = longest.max(t.elapsed());
                    since[i] = None;
                }
                _ => {}
            }
        }
    }
    for t in since.into_iter().flatten() {
        longest = longest.max(t.elapsed());
    }
    eprintln!("demoted primary: longest time a shard was not ready {longest:?}");
    assert!(longest < Duration::from_millis(1200), "a shard was not ready for {longest:?}");
    // The writes land on Q: each shard's heartbeat there is fresh.
    for id in ["00000001", "00000002"] {
        let pttl: i64 = q.cli(&["PTTL", &format!("mino:{{main}}:shard:{id}")]).trim().parse().unwrap_or(-2);
        assert!(pttl > 1500, "shard {id}'s heartbeat on the new primary expires in {pttl} ms");
    }
    // Nobody lost, relay on, and a resume (a claim script on Q) works.
    assert_eq!((a.players().await, b.players().await), (1, 1));
    until_sees(&mut on_a, 2, bob.id()).await;
    let ticket = on_a.ticket();
    let resumed = Player::hello(&b, "x", Some(&ticket)).await.expect("claimed on the new primary");
    assert!(resumed.welcome.as_ref().is_some_and(|w| w.resumed && w.shard_id == 2));
    // Logged at warn and counted.
    assert!(a.metric("mino_redis_failovers_total{reason=\"readonly\"}").await >= 1.0);
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(logged.contains("READONLY") && logged.contains("WARN"), "the demotion is logged at warn: {logged}");
}
