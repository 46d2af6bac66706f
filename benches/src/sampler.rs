//! Samples of the server side while a load test runs: every interval
//! (0.5 s), each shard's Prometheus `/metrics` (the families the analysis
//! reads), `/proc` of every watched process (CPU, RSS, run-queue wait, read
//! by the test kit), and Redis's `INFO stats cpu commandstats`. Kept in
//! memory for [`crate::analysis`] and written one JSON line each to
//! `NAME.samples.jsonl` (kept out of commits) as they come.

use mino_loadgen::scrape::scrape;
use mino_testkit::process::{self, ProcSample};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio_util::sync::CancellationToken;

/// The metric families kept (the rest is not read by the analysis).
pub const KEEP: [&str; 18] = [
    "mino_players",
    "mino_connections",
    "mino_ticks_total",
    "mino_ticks_late_total",
    "mino_ticks_skipped_total",
    "mino_frames_sent_total",
    "mino_sent_bytes_total",
    "mino_writes_total",
    "mino_relay_frames_total",
    "mino_relay_lag_seconds",
    "mino_relay_dropped_total",
    "mino_busy_refusals_total",
    "mino_sockets_closed_total",
    "mino_tick_duration_seconds_sum",
    "mino_tick_duration_seconds_count",
    "mino_tick_deliver_seconds",
    "mino_redis_publish_failures_total",
    "mino_redis_reconnects_total",
];

/// One shard's kept series (`name{labels}` as printed) and their values.
pub type Series = BTreeMap<String, f64>;

/// What `/proc` says of a process at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Proc {
    /// User CPU so far, s.
    pub user_s: f64,
    /// System CPU so far, s.
    pub sys_s: f64,
    /// RSS now, bytes.
    pub rss: u64,
    /// Its threads' time on a CPU so far, s (None: unreadable).
    pub run_s: Option<f64>,
    /// Its threads' time waiting for a CPU so far, s.
    pub wait_s: Option<f64>,
}

impl From<ProcSample> for Proc {
    fn from(p: ProcSample) -> Proc {
        Proc { user_s: p.user_s, sys_s: p.sys_s, rss: p.rss, run_s: p.run_s, wait_s: p.wait_s }
    }
}

/// Redis's counters at one moment (`INFO stats cpu commandstats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RedisInfo {
    /// `total_commands_processed`.
    pub total_commands_processed: f64,
    /// `total_net_input_bytes`.
    pub total_net_input_bytes: f64,
    /// `total_net_output_bytes`.
    pub total_net_output_bytes: f64,
    /// `used_cpu_sys`, s.
    pub used_cpu_sys: f64,
    /// `used_cpu_user`, s.
    pub used_cpu_user: f64,
    /// PUBLISH calls (`cmdstat_publish`).
    pub publish_calls: f64,
}

/// One sample of everything watched.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Wall time, s since the epoch.
    pub t: f64,
    /// Each shard's series; None when its scrape failed.
    pub shards: BTreeMap<String, Option<Series>>,
    /// Each process; None when it is gone.
    pub procs: BTreeMap<String, Option<Proc>>,
    /// Each Redis; None when it did not answer.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub redis_info: BTreeMap<String, Option<RedisInfo>>,
}

/// What to watch.
#[derive(Clone, Debug, Default)]
pub struct Watch {
    /// Shards by name: their metrics URL.
    pub shards: Vec<(String, String)>,
    /// Processes by name: their pid.
    pub procs: Vec<(String, u32)>,
    /// Redis by name: its port on 127.0.0.1.
    pub redis: Vec<(String, u16)>,
}

impl Watch {
    /// Watches a shard whose HTTP endpoints are at `addr`, and its process.
    pub fn shard(&mut self, name: &str, addr: SocketAddr, pid: u32) {
        self.shards.push((name.into(), format!("http://{addr}/metrics")));
        self.procs.push((name.into(), pid));
    }
}

/// A running sampler: stop it to get its samples.
pub struct Sampler {
    stop: CancellationToken,
    task: tokio::task::JoinHandle<Vec<Sample>>,
}

impl Sampler {
    /// Starts sampling `watch` every `interval`, appending each sample to
    /// `file` as it is taken.
    ///
    /// Errors: `file` cannot be created.
    pub fn start(watch: Watch, interval: Duration, file: &Path) -> anyhow::Result<Sampler> {
        let out = Arc::new(Mutex::new(std::fs::File::create(file)?));
        let stop = CancellationToken::new();
        let token = stop.clone();
        let task = tokio::spawn(async move {
            let mut samples = Vec::new();
            let mut ticker = tokio::time::interval(interval);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = token.cancelled() => break,
                    _ = ticker.tick() => {}
                }
                let s = sample(&watch).await;
                if let (Ok(line), Ok(mut f)) = (serde_json::to_string(&s), out.lock()) {
                    let _ = writeln!(f, "{line}");
                }
                samples.push(s);
            }
            samples
        });
        Ok(Sampler { stop, task })
    }

    /// Stops sampling and returns every sample taken.
    pub async fn stop(self) -> Vec<Sample> {
        self.stop.cancel();
        self.task.await.unwrap_or_default()
    }
}

/// One sample of `watch` now.
pub async fn sample(watch: &Watch) -> Sample {
    let t = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64();
    let mut shards = BTreeMap::new();
    for (name, url) in &watch.shards {
        let kept = scrape(url).await.ok().map(|s| {
            s.samples().filter(|(k, _)| KEEP.iter().any(|f| k.starts_with(f))).map(|(k, v)| (k.to_owned(), v)).collect()
        });
        shards.insert(name.clone(), kept);
    }
    let procs = watch.procs.iter().map(|(name, pid)| (name.clone(), process::sample(*pid).map(Proc::from))).collect();
    let redis_info = watch.redis.iter().map(|(name, port)| (name.clone(), redis_info(*port))).collect();
    Sample { t, shards, procs, redis_info }
}

/// Redis's counters, None when it does not answer.
fn redis_info(port: u16) -> Option<RedisInfo> {
    let i = mino_testkit::redis::info(port, &["stats", "cpu", "commandstats"])?;
    let v = |k: &str| i.value(k).unwrap_or(0.0);
    Some(RedisInfo {
        total_commands_processed: v("total_commands_processed"),
        total_net_input_bytes: v("total_net_input_bytes"),
        total_net_output_bytes: v("total_net_output_bytes"),
        used_cpu_sys: v("used_cpu_sys"),
        used_cpu_user: v("used_cpu_user"),
        publish_calls: i.calls("publish").unwrap_or(0.0),
    })
}
