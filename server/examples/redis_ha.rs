//! Measures mino on Redis's distributed engines (issue 13's figures), with the
//! real binaries and loadgen's bots in this process:
//!
//! - `failover cluster|sentinel BOTS`: two shards on a six-node Redis Cluster
//!   (node timeout 2 s) or on Sentinel (down-after 2 s), BOTS walking bots
//!   split over them; the Redis primary holding the place is killed (SIGKILL).
//!   Prints players lost, the bots' own-shard snapshot gap p95 and max from
//!   the kill until relay is back, 15 s at least (local play), when the
//!   replica was promoted, and how long relayed snapshots stopped and when
//!   they flowed again (a watcher on each shard, watching past the 15 s while
//!   they are stopped, up to 90 s). On a cluster each watcher also times the
//!   gaps between the other shard's relayed snapshots from the kill until
//!   the promotion, and says whether that shard's snapshot channel lives on
//!   a healthy primary or on the killed one (the shard ids are chosen so
//!   that the first shard's cells channel is on another primary than the
//!   place's slot and the second's on the same one, by the server's own
//!   names, [`mino_server::Keys`]): the relayed gap p95 on the healthy
//!   primaries during the failover.
//! - `spread BOTS`: two shards with area of interest on a six-node cluster
//!   (the place's region channels spread over the three primaries), BOTS
//!   walkers; over 20 s, each primary's CPU (% of a core), SPUBLISH calls a
//!   second, commands a second (every command, SPUBLISH included) and bytes
//!   sent a second (the published frames times their subscribers).
//!
//! Each run prints one line of figures; with `--json FILE` it also writes
//! them, with the load average before and after (`/proc/loadavg`), as one JSON
//! object (what `benches/scale.sh --only redis` collects for RESULTS.md).
//!
//! ```sh
//! cargo build --release -p mino-server
//! cargo run --release -p mino-server --example redis_ha -- failover cluster 1000 target/release/mino-server
//! cargo run --release -p mino-server --example redis_ha -- spread 5000 target/release/mino-server --json spread.json
//! ```

use mino_loadgen::profile::ProfileName;
use mino_loadgen::stats::Metric;
use mino_loadgen::Target;
use mino_protocol::ShardId;
use mino_server::Keys;
use mino_testkit::process::cpu;
use mino_testkit::redis::Info;
use mino_testkit::{server_bin, Bots, Frame, Player, RedisCluster, Sentinel, Shard};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let json_out = match args.iter().position(|a| a == "--json") {
        Some(i) if i + 1 < args.len() => {
            let path = PathBuf::from(args.remove(i + 1));
            args.remove(i);
            Some(path)
        }
        _ => None,
    };
    let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or("");
    let bin = |i: usize| args.get(i).map(PathBuf::from).unwrap_or_else(server_bin);
    let load_before = load_average();
    let mut figures = match (arg(0), arg(1)) {
        ("failover", mode @ ("cluster" | "sentinel")) => failover(mode, arg(2).parse().unwrap_or(1000), &bin(3)).await,
        ("spread", n) => spread(n.parse().unwrap_or(1000), bin(2)).await,
        _ => {
            eprintln!("usage: redis_ha failover cluster|sentinel BOTS [SERVER] | spread BOTS [SERVER]  [--json FILE]");
            std::process::exit(2);
        }
    };
    figures["load_before"] = json!(load_before);
    figures["load_after"] = json!(load_average());
    if let Some(path) = json_out {
        write_json(&path, &figures);
    }
}

/// The 1, 5 and 15 minute load averages (`/proc/loadavg`, what `uptime`
/// shows); empty when unreadable.
fn load_average() -> Vec<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).filter_map(|v| v.parse().ok()).collect())
        .unwrap_or_default()
}

/// Writes `figures` to `path`, pretty-printed.
///
/// Panics: the file cannot be written (the run's figures are then still on
/// stdout).
fn write_json(path: &Path, figures: &Value) {
    let text = serde_json::to_string_pretty(figures).expect("JSON of plain numbers");
    std::fs::write(path, text + "\n").unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
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

    /// The port of the primary holding the place.
    fn place_primary(&self) -> u16 {
        match self {
            Backend::Cluster(c) => c.primary_of(c.slot("mino:{main}:shards")).expect("served"),
            Backend::Sentinel(s) => s.primary_port().expect("a primary"),
        }
    }

    /// True when shard `id`'s cells channel (the whole place is region 1)
    /// lives on the primary on `port` (on Sentinel, every channel does).
    fn channel_on(&self, id: u32, port: u16) -> bool {
        match self {
            Backend::Cluster(c) => c.primary_of(c.slot(&Keys::spread("main").cells(1, ShardId(id)))) == Some(port),
            Backend::Sentinel(_) => true,
        }
    }

    /// Two shard ids: the first's channel on another primary than the
    /// place's, the second's on the place's (1 and 2 on Sentinel, where
    /// every channel is on the one primary).
    fn shard_ids(&self) -> [u32; 2] {
        let place = self.place_primary();
        let first = |on: bool| (1u32..).find(|id| self.channel_on(*id, place) == on).expect("an id");
        match self {
            Backend::Cluster(_) => [first(false), first(true)],
            Backend::Sentinel(_) => [1, 2],
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

/// Two shards (ids `ids`) reaching Redis with `flags`, plus `extra`.
async fn shards(ids: [u32; 2], flags: &[String], bin: &PathBuf, extra: &[&str]) -> Vec<Shard> {
    let mut out = Vec::new();
    for id in ids.map(|id| id.to_string()) {
        let mut args: Vec<&str> = vec!["--shard-id", &id, "--max-players", "10000"];
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

/// How long relayed snapshots stopped, as a watcher saw it.
struct RelayStop {
    /// The longest stretch without a snapshot of the other shard.
    longest: Duration,
    /// When it ended (the first snapshot after it), from the watch's start;
    /// None if still open when the watch gave up.
    back: Option<Duration>,
    /// When each snapshot of the other shard arrived.
    arrivals: Vec<Instant>,
}

impl RelayStop {
    /// The gaps between the snapshots that arrived from `from` to `to`
    /// (the first one after `from` timed from `from`), ms, sorted.
    fn gaps_ms(&self, from: Instant, to: Instant) -> Vec<f64> {
        let mut last = from;
        let mut gaps = Vec::new();
        for &at in self.arrivals.iter().filter(|t| **t > from && **t <= to) {
            gaps.push((at - last).as_secs_f64() * 1000.0);
            last = at;
        }
        gaps.push((to - last).as_secs_f64() * 1000.0);
        gaps.sort_by(f64::total_cmp);
        gaps
    }
}

/// The `p` quantile (0 to 1) of `sorted`, nearest rank; 0 when empty.
fn quantile(sorted: &[f64], p: f64) -> f64 {
    sorted.get(((sorted.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0.0)
}

/// Watches `shard`'s relayed snapshots on `c` for at least `span`, and past it
/// while they are stopped (up to `limit`), so a stop that outlasts the span is
/// measured to its end rather than cut short.
async fn relay_watch(mut c: Player, shard: u32, span: Duration, limit: Duration) -> RelayStop {
    let start = Instant::now();
    let mut last = Instant::now();
    let mut stop = RelayStop { longest: Duration::ZERO, back: Some(Duration::ZERO), arrivals: Vec::new() };
    let stopped = |last: Instant| last.elapsed() > Duration::from_millis(500);
    while start.elapsed() < span || (stopped(last) && start.elapsed() < limit) {
        // Own snapshots arrive every tick; a frame of any kind ends the wait.
        match c.next().await {
            Frame::Snapshot { shard: s, .. } if s == shard => {
                if last.elapsed() > stop.longest {
                    (stop.longest, stop.back) = (last.elapsed(), Some(start.elapsed()));
                }
                last = Instant::now();
                stop.arrivals.push(last);
            }
            Frame::Closed(_) => break,
            _ => {}
        }
    }
    if last.elapsed() > stop.longest {
        (stop.longest, stop.back) = (last.elapsed(), None);
    }
    stop
}

async fn failover(mode: &str, n: usize, bin: &PathBuf) -> Value {
    let mut backend = match mode {
        "cluster" => Backend::Cluster(RedisCluster::start(Duration::from_secs(2))),
        _ => Backend::Sentinel(Sentinel::start(Duration::from_secs(2))),
    };
    let ids = backend.shard_ids();
    let s = shards(ids, &backend.flags(), bin, &[]).await;
    let (a, b) = (swarm(&s[0], n / 2).await, swarm(&s[1], n - n / 2).await);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let (wa, wb) = (Player::join(&s[0], "watch-a").await, Player::join(&s[1], "watch-b").await);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (_, _) = (a.take_window(), b.take_window());
    let (span, limit) = (Duration::from_secs(15), Duration::from_secs(90));
    let watch_a = tokio::spawn(relay_watch(wa, ids[1], span, limit));
    let watch_b = tokio::spawn(relay_watch(wb, ids[0], span, limit));
    // Where each relayed shard's channel lives, asked before the kill (A
    // watches the second shard, on the place's primary; B the first).
    let dead = backend.place_primary();
    let healthy = [!backend.channel_on(ids[1], dead), !backend.channel_on(ids[0], dead)];
    let killed_at = Instant::now();
    let promoted = tokio::task::block_in_place(|| backend.kill_primary());
    let (ra, rb) = (watch_a.await.expect("watch"), watch_b.await.expect("watch"));
    // Each watcher's relayed gaps during the outage.
    let outage = |r: &RelayStop, healthy: bool| {
        let gaps = r.gaps_ms(killed_at, killed_at + promoted);
        (healthy, quantile(&gaps, 0.95), quantile(&gaps, 1.0), gaps.len())
    };
    let during = [outage(&ra, healthy[0]), outage(&rb, healthy[1])];
    let (fa, fb) = (a.take_window(), b.take_window());
    let lat = fa.merge(&fb).latencies;
    let own = lat.summary(Metric::SnapshotGap);
    let relayed = lat.summary(Metric::RelayedGap);
    let connected = a.connected() + b.connected();
    let reconnected = a.welcomes().iter().chain(b.welcomes().iter()).filter(|w| **w > 1).count();
    let players = s[0].players().await + s[1].players().await;
    let secs = |d: Option<Duration>| d.map_or("not back".to_owned(), |d| format!("{:.2} s", d.as_secs_f64()));
    for ((healthy, p95, max, count), (watcher, relayed)) in during.iter().zip([("A", ids[1]), ("B", ids[0])]) {
        let on = if *healthy { "a healthy primary" } else { "the killed primary" };
        println!(
            "  watcher {watcher}: shard {relayed}'s snapshots (channel on {on}) from the kill until the promotion: \
             {count} gaps, p95 {p95:.1} ms, max {max:.1} ms"
        );
    }
    println!(
        "failover {mode} bots={n}: promoted after {:.2} s; players lost {} (bots connected {connected}/{n}, \
         reconnected {reconnected}, shards hold {players}); local own-snapshot gap from the kill until relay was \
         back (15 s at least): p95 {:.1} ms, p99 {:.1} ms, max {:.1} ms; relayed gap p95 {:.1} ms, max {:.1} ms; \
         watchers' longest relay stop {:.2} s (A) / {:.2} s (B), flowing again {} / {} after the kill",
        promoted.as_secs_f64(),
        n - connected.min(n),
        own.p95,
        own.p99,
        own.max,
        relayed.p95,
        relayed.max,
        ra.longest.as_secs_f64(),
        rb.longest.as_secs_f64(),
        secs(ra.back),
        secs(rb.back),
    );
    a.stop().await;
    b.stop().await;
    json!({
        "kind": "failover",
        "mode": mode,
        "bots": n,
        "promoted_s": promoted.as_secs_f64(),
        "players_lost": n - connected.min(n),
        "bots_connected": connected,
        "reconnected": reconnected,
        "shards_hold": players,
        "own_gap_ms": { "p95": own.p95, "p99": own.p99, "max": own.max, "count": own.count },
        "relayed_gap_ms": { "p95": relayed.p95, "max": relayed.max, "count": relayed.count },
        "relay_stop_s": [ra.longest.as_secs_f64(), rb.longest.as_secs_f64()],
        "relay_back_s": [ra.back.map(|d| d.as_secs_f64()), rb.back.map(|d| d.as_secs_f64())],
        "outage_relayed_gap_ms": during
            .iter()
            .map(|(healthy, p95, max, count)| json!({ "healthy_primary": healthy, "p95": p95, "max": max, "gaps": count }))
            .collect::<Vec<_>>(),
    })
}

/// What one primary has done so far: CPU seconds of its process, SPUBLISH
/// calls, every command, bytes sent.
#[derive(Clone, Copy)]
struct NodeCounters {
    cpu_s: f64,
    spublish: u64,
    commands: u64,
    sent_bytes: u64,
}

/// The counters of each primary.
fn node_counters(c: &RedisCluster, primaries: &[u16]) -> Vec<NodeCounters> {
    primaries
        .iter()
        .map(|p| {
            let info = Info::parse(&c.cli(*p, &["INFO", "stats", "commandstats"]));
            NodeCounters {
                cpu_s: cpu(c.pid(*p)).map_or(0.0, |t| t.total().as_secs_f64()),
                spublish: info.calls("spublish").unwrap_or(0.0) as u64,
                commands: info.value("total_commands_processed").unwrap_or(0.0) as u64,
                sent_bytes: info.value("total_net_output_bytes").unwrap_or(0.0) as u64,
            }
        })
        .collect()
}

async fn spread(n: usize, bin: PathBuf) -> Value {
    let cluster = RedisCluster::start(Duration::from_secs(2));
    let aoi = ["--world-size", "4000", "--cell-size", "125", "--view-radius", "250"];
    let s = shards([1, 2], &["--redis-cluster".into(), cluster.seeds()], &bin, &aoi).await;
    let cluster = &cluster;
    let (a, b) = (swarm(&s[0], n / 2).await, swarm(&s[1], n - n / 2).await);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let primaries: Vec<u16> = cluster.nodes().into_iter().filter(|n| n.primary).map(|n| n.port).collect();
    let before = node_counters(cluster, &primaries);
    let t = Instant::now();
    tokio::time::sleep(Duration::from_secs(20)).await;
    let after = node_counters(cluster, &primaries);
    let secs = t.elapsed().as_secs_f64();
    println!("spread bots={n} (area of interest, 2 shards, 3 primaries), over {secs:.1} s:");
    let mut nodes = Vec::new();
    for (i, p) in primaries.iter().enumerate() {
        let (b, a) = (before[i], after[i]);
        let rate = |x: u64, y: u64| y.saturating_sub(x) as f64 / secs;
        let cpu = (a.cpu_s - b.cpu_s).max(0.0) / secs * 100.0;
        let (spublish, commands) = (rate(b.spublish, a.spublish), rate(b.commands, a.commands));
        let sent = rate(b.sent_bytes, a.sent_bytes) / 1e6;
        println!(
            "  primary :{p}: CPU {cpu:.1} % of a core, SPUBLISH {spublish:.0}/s, commands {commands:.0}/s, \
             sent {sent:.2} MB/s"
        );
        nodes.push(json!({
            "port": p,
            "cpu_pct": cpu,
            "spublish_per_s": spublish,
            "commands_per_s": commands,
            "sent_mb_per_s": sent,
        }));
    }
    let connected = a.connected() + b.connected();
    println!("  bots connected {connected}/{n}");
    a.stop().await;
    b.stop().await;
    json!({ "kind": "spread", "bots": n, "bots_connected": connected, "seconds": secs, "primaries": nodes })
}
