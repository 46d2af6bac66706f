//! The processes a section measures, started the test kit's way: one
//! standalone shard, or two shards sharing a fresh Redis, each on 127.0.0.1
//! port 0 with its log in the run's folder; and a loadgen run against them
//! with the sampler around it, analysed into `NAME.server.json`.

use crate::analysis::{self, Phase};
use crate::raw;
use crate::runner::Run;
use crate::sampler::{Sampler, Watch};
use mino_testkit::{Launch, Redis, Shard};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Every capacity run switches the busy rule off, as the original's
/// one-machine figures did: a step shows where a process stops, not where
/// it says no.
pub const BUSY_RULE_OFF: [&str; 2] = ["--busy-lateness-ms", "0"];

/// Bound on the shards seeing each other once started.
const CLUSTER_WAIT: Duration = Duration::from_secs(10);

/// The shards a deployment starts, by name, and their `--shard-id`s.
const SHARD_IDS: [(&str, u32); 2] = [("a", 1), ("b", 2)];

/// Which server binary a deployment runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerBin {
    /// The release build (jemalloc).
    Release,
    /// The same code with glibc's malloc (`--no-default-features`).
    Glibc,
}

impl ServerBin {
    fn name(self) -> &'static str {
        match self {
            ServerBin::Release => "mino-server",
            ServerBin::Glibc => "mino-server-glibc",
        }
    }
}

/// The shards (and Redis) of one section's run.
pub struct Deployment {
    /// The shards by name (`a`, `b`), in order.
    pub shards: Vec<(String, Shard)>,
    /// The shared Redis of two shards.
    pub redis: Option<Redis>,
    /// Each shard's log file.
    logs: Vec<(String, PathBuf)>,
}

/// How the shards of a deployment start.
#[derive(Clone, Debug)]
pub struct Shards<'a> {
    /// Flags for every shard (after `--shard-id` and `--redis-url`).
    pub flags: &'a [String],
    /// Which binary.
    pub bin: ServerBin,
    /// Keep the server's own busy rule (failover); else it is off.
    pub busy_rule: bool,
}

impl Shards<'_> {
    /// Release shards with the busy rule off and `flags`.
    pub fn with(flags: &[String]) -> Shards<'_> {
        Shards { flags, bin: ServerBin::Release, busy_rule: false }
    }
}

impl Deployment {
    /// One standalone shard (`a`).
    pub async fn one(run: &Run, how: &Shards<'_>) -> Deployment {
        let mut d = Deployment { shards: Vec::new(), redis: None, logs: Vec::new() };
        d.start_shard(run, SHARD_IDS[0], None, how).await;
        d
    }

    /// Two shards (`a`, `b`) sharing a fresh Redis, waiting until each sees
    /// the other.
    pub async fn two(run: &Run, how: &Shards<'_>) -> Deployment {
        let redis = Redis::start();
        run.record(
            "redis",
            &format!("redis-server --port {} --bind 127.0.0.1 --save '' --appendonly no --dir TMP", redis.port),
        );
        let url = redis.url();
        let mut d = Deployment { shards: Vec::new(), redis: Some(redis), logs: Vec::new() };
        for shard in SHARD_IDS {
            d.start_shard(run, shard, Some(&url), how).await;
        }
        d.wait_cluster(run).await;
        d
    }

    async fn start_shard(&mut self, run: &Run, (name, id): (&str, u32), redis: Option<&str>, how: &Shards<'_>) {
        let mut args = vec!["--shard-id".to_owned(), format!("{id:x}")];
        if let Some(url) = redis {
            args.extend(["--redis-url".to_owned(), url.to_owned()]);
        }
        if !how.busy_rule {
            args.extend(BUSY_RULE_OFF.map(String::from));
        }
        args.extend(how.flags.iter().cloned());
        let bin = run.binary(how.bin.name());
        let mut shown = vec!["--listen".to_owned(), "127.0.0.1:0".into()];
        shown.extend(args.iter().cloned());
        run.record(&format!("shard {name}"), &run.shown(&bin, &shown));
        let log = run.tmp.join(format!("{name}.log"));
        let launch = Launch { log: Some((log.clone(), "info".into())), busy_rule: true, ..Launch::default() };
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let shard = Shard::launch(&bin, &refs, &launch);
        shard.wait_ready().await;
        self.logs.push((name.to_owned(), log));
        self.shards.push((name.to_owned(), shard));
    }

    /// Waits until every shard sees the others (`mino_cluster_shards`).
    async fn wait_cluster(&self, run: &Run) {
        let want = (self.shards.len() - 1) as f64;
        let end = Instant::now() + CLUSTER_WAIT;
        loop {
            let mut all = true;
            for (_, s) in &self.shards {
                all &= s.metric("mino_cluster_shards").await >= want;
            }
            if all {
                return;
            }
            if Instant::now() >= end {
                run.log(&format!("warning: shards did not all see {want} other shard(s) within 10 s"));
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The shard named `name`.
    pub fn shard(&self, name: &str) -> Option<&Shard> {
        self.shards.iter().find(|(n, _)| n == name).map(|(_, s)| s)
    }

    /// The `--shard-id` the shard named `name` was started with (a hex
    /// number, as the shards read it).
    pub fn shard_id(&self, name: &str) -> Option<String> {
        self.shard(name)?;
        SHARD_IDS.iter().find(|(n, _)| *n == name).map(|(_, id)| format!("{id:x}"))
    }

    /// The loadgen's target flags: each shard's URL and pid.
    pub fn targets(&self) -> Vec<String> {
        self.shards
            .iter()
            .flat_map(|(_, s)| ["--url".to_owned(), s.ws_url(), "--server-pid".into(), s.pid().to_string()])
            .collect()
    }

    /// What the sampler watches: each shard, and Redis.
    pub fn watch(&self) -> Watch {
        let mut w = Watch::default();
        for (name, s) in &self.shards {
            w.shard(name, s.addr, s.pid());
        }
        if let Some(r) = &self.redis {
            w.procs.push(("redis".into(), r.pid()));
            w.redis.push(("redis".into(), r.port));
        }
        w
    }

    /// Runs `mino-loadgen SCENARIO` against the shards with the sampler
    /// around it, writes `LABEL.json` (the loadgen's), `LABEL.samples.jsonl`
    /// and `LABEL.server.json` (the analysis; `phases` reads the report's
    /// phases, None for a run without a plateau: failover).
    ///
    /// Errors: the sampler's file cannot be written.
    pub async fn measured(
        &self,
        run: &Run,
        label: &str,
        scenario: &str,
        args: &[String],
        phases: PhasesOf,
    ) -> anyhow::Result<()> {
        let raw_dir = &run.paths.raw;
        let sampler =
            Sampler::start(self.watch(), run.plan.sample_interval, &raw_dir.join(format!("{label}.samples.jsonl")))?;
        tokio::time::sleep(Duration::from_secs(1)).await;
        let json = raw_dir.join(format!("{label}.json"));
        let mut all = vec![scenario.to_owned()];
        all.extend(self.targets());
        all.extend(args.iter().cloned());
        all.extend(["--json".to_owned(), json.to_string_lossy().into_owned(), "-q".into()]);
        run.status(&format!("{label}: mino-loadgen {scenario} {}", args.join(" ")));
        run.log(&format!("{label}: mino-loadgen {scenario} {}", args.join(" ")));
        let log = raw_dir.join(format!("logs/{label}-loadgen.log"));
        if !run.command(label, run.binary("mino-loadgen"), &all, Some(&log)).await? {
            run.log(&format!(
                "{label}: the loadgen failed (its JSON, if written, is still used; see {})",
                log.display()
            ));
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        let samples = sampler.stop().await;
        let server = raw_dir.join(format!("{label}.server.json"));
        match phases {
            PhasesOf::None => raw::write(&server, &analysis::totals(&samples))?,
            PhasesOf::Report(read) => {
                let text = match std::fs::read_to_string(&json) {
                    Ok(t) => t,
                    Err(_) => return Ok(()),
                };
                let report: serde_json::Value = serde_json::from_str(&text)?;
                raw::write(&server, &analysis::windows(&read(&report)?, &samples))?;
            }
        }
        Ok(())
    }

    /// Stops the shards (SIGTERM, then SIGKILL after 8 s) and Redis; keeps
    /// the last megabyte of each shard's log under `raw/logs/LABEL-shard-NAME.log`.
    pub fn stop(mut self, run: &Run, label: &str) {
        for (_, s) in &mut self.shards {
            s.process().stop(Duration::from_secs(8));
        }
        for (name, log) in &self.logs {
            if let Ok(bytes) = std::fs::read(log) {
                let tail = &bytes[bytes.len().saturating_sub(1_000_000)..];
                let _ = std::fs::write(run.paths.raw.join(format!("logs/{label}-shard-{name}.log")), tail);
            }
        }
        self.shards.clear();
        self.redis = None;
    }
}

/// How the analysis finds a report's phases.
pub enum PhasesOf {
    /// No plateau (failover): each shard's totals over the run.
    None,
    /// The report's phases, read from its JSON.
    Report(fn(&serde_json::Value) -> anyhow::Result<Vec<Phase>>),
}

/// The phases of a report with one (walk, idle, arrivals, crowd): its
/// `connected` and `seconds`.
pub fn one_phase(report: &serde_json::Value) -> anyhow::Result<Vec<Phase>> {
    let m: mino_loadgen::report::Measured = serde_json::from_value(report.clone())?;
    Ok(vec![Phase { connected: m.connected, seconds: m.seconds }])
}

/// The phases of a steps report: each step's.
pub fn steps_phases(report: &serde_json::Value) -> anyhow::Result<Vec<Phase>> {
    let r: mino_loadgen::report::StepsReport = serde_json::from_value(report.clone())?;
    Ok(r.steps.iter().map(|s| Phase { connected: s.measured.connected, seconds: s.measured.seconds }).collect())
}
