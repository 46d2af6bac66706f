//! Measures mino on Redis's distributed engines (issue 13's figures), with the
//! real binaries and loadgen's bots in this process:
//!
//! - `failover cluster|sentinel BOTS`: two shards on a six-node Redis Cluster
//!   (node timeout 2 s) or on Sentinel (down-after 2 s), BOTS walking bots
//!   split over them; the Redis primary holding the place is killed (SIGKILL).
//!   Prints players lost, the bots' own-shard snapshot gap p95 and max over the
//!   15 s from the kill (local play), when the replica was promoted, and how
//!   long relayed snapshots stopped (a watcher on each shard).
//! - `spread BOTS`: two shards with area of interest on a six-node cluster
//!   (the place's region channels spread over the three primaries), BOTS
//!   walkers; over 20 s, each primary's CPU (% of a core), SPUBLISH calls a
//!   second, commands a second (every command, SPUBLISH included) and bytes
//!   sent a second (the published frames times their subscribers).
//!
//! ```sh
//! cargo build --release -p mino-server
//! cargo run --release -p mino-server --example redis_ha -- failover cluster 1000 target/release/mino-server
//! ```

use mino_loadgen::profile::ProfileName;
use mino_loadgen::stats::Metric;
use mino_loadgen::Target;
use mino_testkit::process::cpu_ticks;
use mino_testkit::{server_bin, Bots, Frame, Player, RedisCluster, Sentinel, Shard};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Clock ticks a second of `/proc/PID/stat`.
const CLK_TCK: f64 = 100.0;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or("");
    let bin = |i: usize| args.get(i).map(PathBuf::from).unwrap_or_else(server_bin);
    match (arg(0), arg(1)) {
        ("failover", mode @ ("cluster" | "sentinel")) => failover(mode, arg(2).parse().unwrap_or(1000), &bin(3)).await,
        ("spread", n) => spread(n.parse().unwrap_or(1000), bin(2)).await,
        _ => eprintln!("usage: redis_ha failover cluster|sentinel BOTS [SERVER] | spread BOTS [SERVER]"),
    }
}

/// Where the shards' Redis is, kept alive for the run.
enum Backend {
    Cluster(RedisCluster),
    Sentinel(Sentinel),
}

impl Backend {
    fn flags(&self) -> Vec<String> {
        match self {
            Backend::Cluster(c) => vec!["--redis-cluster".into(), c.seeds()],
            Backend::Sentinel(s) => vec!["--redis-sentinel".into(), s.urls(), "--redis-master".into(), "mino".into()],
        }
    }

    /// Kills the primary holding the place; returns when a new one serves it.
    fn kill_primary(&mut self) -> Duration {
        let t = Instant::now();
        match self {
            Backend::Cluster(c) => {
                let slot = c.slot("mino:{main}:shards");
                let p = c.primary_of(slot).expect("served");
                c.kill(p);
                c.wait_served(slot, Duration::from_secs(60));
            }
            Backend::Sentinel(s) => {
                let p = s.primary_port().expect("a primary");
                s.node(p).kill();
                s.wait_new_primary(p, Duration::from_secs(60));
            }
        }
        t.elapsed()
    }
}

async fn shards(backend: &Backend, bin: &PathBuf, extra: &[&str]) -> Vec<Shard> {
    let flags = backend.flags();
    let mut out = Vec::new();
    for id in ["1", "2"] {
        let mut args: Vec<&str> = vec!["--shard-id", id, "--max-players", "10000"];
        args.extend(flags.iter().map(String::as_str));
        args.extend_from_slice(extra);
        let s = Shard::start(bin, &args);
        s.wait_ready().await;
        out.push(s);
    }
    out
}

async fn swarm(shard: &Shard, n: usize) -> Bots {
    let target = Target::resolve(&shard.ws_url()).await.expect("target");
    let bots = Bots::start(target, n, ProfileName::Walker).await;
    if !bots.wait_connected(Duration::from_secs(60)).await {
        eprintln!("only {} of {n} bots joined {} within 60 s", bots.connected(), shard.addr);
    }
    bots
}

/// Gaps in `shard`'s relayed snapshots seen by `c` for `span`: (the longest,
/// when it ended measured from the start).
async fn relay_watch(mut c: Player, shard: u32, span: Duration) -> (Duration, Duration) {
    let start = Instant::now();
    let (mut last, mut longest, mut ended) = (Instant::now(), Duration::ZERO, Duration::ZERO);
    while start.elapsed() < span {
        if let Frame::Snapshot { shard: s, .. } = c.next().await {
            if s == shard {
                if last.elapsed() > longest {
                    longest = last.elapsed();
                    ended = start.elapsed();
                }
                last = Instant::now();
            }
        }
    }
    (longest, ended)
}

async fn failover(mode: &str, n: usize, bin: &PathBuf) {
    let mut backend = match mode {
        "cluster" => Backend::Cluster(RedisCluster::start(Duration::from_secs(2))),
        _ => Backend::Sentinel(Sentinel::start(Duration::from_secs(2))),
    };
    let s = shards(&backend, bin, &[]).await;
    let (a, b) = (swarm(&s[0], n / 2).await, swarm(&s[1], n - n / 2).await);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let (wa, wb) = (Player::join(&s[0], "watch-a").await, Player::join(&s[1], "watch-b").await);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (_, _) = (a.take_window(), b.take_window());
    let span = Duration::from_secs(15);
    let watch_a = tokio::spawn(relay_watch(wa, 2, span));
    let watch_b = tokio::spawn(relay_watch(wb, 1, span));
    let promoted = tokio::task::block_in_place(|| backend.kill_primary());
    let (ra, rb) = (watch_a.await.expect("watch"), watch_b.await.expect("watch"));
    let (fa, fb) = (a.take_window(), b.take_window());
    let lat = fa.merge(&fb).latencies;
    let own = lat.summary(Metric::SnapshotGap);
    let relayed = lat.summary(Metric::RelayedGap);
    let connected = a.connected() + b.connected();
    let reconnected = a.welcomes().iter().chain(b.welcomes().iter()).filter(|w| **w > 1).count();
    let players = s[0].players().await + s[1].players().await;
    println!(
        "failover {mode} bots={n}: promoted after {:.2} s; players lost {} (bots connected {connected}/{n}, \
         reconnected {reconnected}, shards hold {players}); local own-snapshot gap over the 15 s from the kill: \
         p95 {:.1} ms, p99 {:.1} ms, max {:.1} ms; relayed gap p95 {:.1} ms, max {:.1} ms; watchers' longest relay \
         stop {:.2} s (A) / {:.2} s (B), flowing again {:.2} s / {:.2} s after the kill",
        promoted.as_secs_f64(),
        n - connected.min(n),
        own.p95,
        own.p99,
        own.max,
        relayed.p95,
        relayed.max,
        ra.0.as_secs_f64(),
        rb.0.as_secs_f64(),
        ra.1.as_secs_f64(),
        rb.1.as_secs_f64(),
    );
    a.stop().await;
    b.stop().await;
}

/// What one primary has done so far: CPU ticks of its process, SPUBLISH
/// calls, every command, bytes sent.
#[derive(Clone, Copy)]
struct NodeCounters {
    cpu_ticks: u64,
    spublish: u64,
    commands: u64,
    sent_bytes: u64,
}

/// The number after `prefix` (`name:` or `cmdstat_x:calls=`) in an `INFO`
/// answer, up to the next comma; 0 when absent.
fn info_field(info: &str, prefix: &str) -> u64 {
    info.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .and_then(|v| v.split(',').next()?.trim().parse().ok())
        .unwrap_or(0)
}

/// The counters of each primary.
fn node_counters(c: &RedisCluster, primaries: &[u16]) -> Vec<NodeCounters> {
    primaries
        .iter()
        .map(|p| {
            let cmds = c.cli(*p, &["INFO", "commandstats"]);
            let stats = c.cli(*p, &["INFO", "stats"]);
            NodeCounters {
                cpu_ticks: cpu_ticks(c.pid(*p)).unwrap_or(0),
                spublish: info_field(&cmds, "cmdstat_spublish:calls="),
                commands: info_field(&stats, "total_commands_processed:"),
                sent_bytes: info_field(&stats, "total_net_output_bytes:"),
            }
        })
        .collect()
}

async fn spread(n: usize, bin: PathBuf) {
    let cluster = RedisCluster::start(Duration::from_secs(2));
    let backend = Backend::Cluster(cluster);
    let aoi = ["--world-size", "4000", "--cell-size", "125", "--view-radius", "250"];
    let s = shards(&backend, &bin, &aoi).await;
    let Backend::Cluster(cluster) = &backend else { return };
    let (a, b) = (swarm(&s[0], n / 2).await, swarm(&s[1], n - n / 2).await);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let primaries: Vec<u16> = cluster.nodes().into_iter().filter(|n| n.primary).map(|n| n.port).collect();
    let before = node_counters(cluster, &primaries);
    let t = Instant::now();
    tokio::time::sleep(Duration::from_secs(20)).await;
    let after = node_counters(cluster, &primaries);
    let secs = t.elapsed().as_secs_f64();
    println!("spread bots={n} (area of interest, 2 shards, 3 primaries), over {secs:.1} s:");
    for (i, p) in primaries.iter().enumerate() {
        let (b, a) = (before[i], after[i]);
        let rate = |x: u64, y: u64| y.saturating_sub(x) as f64 / secs;
        println!(
            "  primary :{p}: CPU {:.1} % of a core, SPUBLISH {:.0}/s, commands {:.0}/s, sent {:.2} MB/s",
            rate(b.cpu_ticks, a.cpu_ticks) / CLK_TCK * 100.0,
            rate(b.spublish, a.spublish),
            rate(b.commands, a.commands),
            rate(b.sent_bytes, a.sent_bytes) / 1e6
        );
    }
    println!("  bots connected {}/{n}", a.connected() + b.connected());
    a.stop().await;
    b.stop().await;
}
