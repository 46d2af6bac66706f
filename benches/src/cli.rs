//! The scale runner's command line (`scale`, `benches/scale.sh`): the plan's
//! overrides, and the run itself: build, record the circumstances in
//! `run.tsv`, each section in turn, then RESULTS.md from the raw results.

use crate::machine;
use crate::plan::{Mode, Plan, Upstream};
use crate::raw::RunLog;
use crate::report::{self, Output};
use crate::runner::{workspace_root, Paths, Run};
use crate::section::Section;
use crate::sections;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// mino's scale runner: real `mino-server` processes, a real `redis-server`,
/// nginx and the `mino-loadgen` bot swarm on this machine (loopback only),
/// measured from outside; writes benches/RESULTS.md (our figures beside the
/// original's published ones), the comparison charts and the raw results
/// under benches/results/. Every process it starts is stopped when it ends
/// or is interrupted. What each section measures: benches/README.md.
#[derive(Clone, Debug, clap::Parser)]
#[command(name = "scale")]
pub struct Cli {
    /// Every section once: fewer steps, short holds, no repeats (a full run
    /// takes about an hour and a quarter on 2 cores; benches/README.md says
    /// how long each section takes).
    #[arg(long)]
    pub quick: bool,
    /// Use the release binaries already built (release/ of the target folder
    /// this runner was built in: CARGO_TARGET_DIR, else target/).
    #[arg(long)]
    pub skip_build: bool,
    /// Leave out the criterion micro-benchmarks.
    #[arg(long)]
    pub skip_criterion: bool,
    /// Runs of the repeated rows (control, idle, redis, nginx, peer, deltas,
    /// webtransport; the median is reported); default 3, 1 with --quick.
    #[arg(long)]
    pub repeat: Option<u32>,
    /// Run only these sections, keep the others' raw results, and rewrite
    /// RESULTS.md from all of them.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub only: Vec<Section>,
    /// Only rewrite RESULTS.md and the charts from the raw results.
    #[arg(long)]
    pub report_only: bool,
    /// Write RESULTS.md, the charts and raw/ under DIR instead of benches/
    /// and benches/results/ (smoke runs: --results /tmp/x).
    #[arg(long, value_name = "DIR")]
    pub results: Option<PathBuf>,
    /// The area-of-interest section's player counts, e.g. 200 (default
    /// 1000,2500,5000,7500,10000; quick 1000,2500).
    #[arg(long, value_delimiter = ',')]
    pub aoi_players: Vec<u32>,
    /// Its players per cell (default 4).
    #[arg(long)]
    pub aoi_density: Option<f64>,
    /// The Redis section's player counts for the load on each cluster
    /// primary (default 1000,5000; quick 1000).
    #[arg(long, value_delimiter = ',')]
    pub redis_spread: Vec<u32>,
    /// The nginx section's bots (default 1000).
    #[arg(long)]
    pub nginx_bots: Option<u32>,
    /// The nginx section's measured window, seconds (default 30; quick 10).
    #[arg(long)]
    pub nginx_hold: Option<u64>,
    /// The nginx section's upstream kinds (default tcp,unix, alternating).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub nginx_upstream: Vec<Upstream>,
    /// The nginx section's bots connect to the shards over plain ws (nginx
    /// idles): the same run without the proxy; tcp only.
    #[arg(long)]
    pub nginx_direct: bool,
    /// The peer section's player counts (default 100,250,500; quick 100,250).
    #[arg(long, value_delimiter = ',')]
    pub peer_players: Vec<u32>,
    /// The peer section's hold, seconds (default 20; quick 10).
    #[arg(long)]
    pub peer_hold: Option<u64>,
    /// The deltas section's crowd (default 2000; quick 500).
    #[arg(long)]
    pub deltas_crowd: Option<u32>,
    /// The deltas section's hold, seconds (default 15; quick 6).
    #[arg(long)]
    pub deltas_hold: Option<u64>,
    /// The webtransport section's walkers on its one shard (default 500; quick 300). With 1,000 the
    /// WebTransport bots and the shard saturate a 2-core machine: hundreds of connects time out.
    #[arg(long)]
    pub webtransport_bots: Option<u32>,
    /// The webtransport section's hold, seconds (default 15; quick 8).
    #[arg(long)]
    pub webtransport_hold: Option<u64>,
}

impl Cli {
    /// The plan: the mode's, with this command line's overrides.
    pub fn plan(&self) -> Plan {
        let mut p = Plan::of(if self.quick { Mode::Quick } else { Mode::Full });
        if let Some(r) = self.repeat {
            p.repeat = r.max(1);
        }
        if !self.only.is_empty() {
            p.sections = Section::ALL.into_iter().filter(|s| self.only.contains(s)).collect();
        } else if self.skip_criterion {
            p.sections.retain(|s| *s != Section::Criterion);
        }
        if !self.aoi_players.is_empty() {
            p.aoi.players = self.aoi_players.clone();
        }
        if let Some(d) = self.aoi_density {
            p.aoi.density = d;
        }
        if !self.redis_spread.is_empty() {
            p.redis.spread = self.redis_spread.clone();
        }
        if let Some(b) = self.nginx_bots {
            p.nginx.bots = b;
        }
        if let Some(h) = self.nginx_hold {
            p.nginx.hold = Duration::from_secs(h);
        }
        if !self.nginx_upstream.is_empty() {
            p.nginx.upstreams = self.nginx_upstream.clone();
        }
        p.nginx.direct = self.nginx_direct;
        if !self.peer_players.is_empty() {
            p.peer.players = self.peer_players.clone();
        }
        if let Some(h) = self.peer_hold {
            p.peer.hold = Duration::from_secs(h);
        }
        if let Some(n) = self.deltas_crowd {
            p.deltas.crowd = n;
        }
        if let Some(h) = self.deltas_hold {
            p.deltas.hold = Duration::from_secs(h);
        }
        if let Some(b) = self.webtransport_bots {
            p.webtransport.bots = b;
        }
        if let Some(h) = self.webtransport_hold {
            p.webtransport.hold = Duration::from_secs(h);
        }
        p
    }
}

/// Runs what `cli` asks.
///
/// Errors: a part could not be built or started, or the report not written.
pub async fn main(cli: Cli) -> anyhow::Result<()> {
    let root = workspace_root();
    let paths = Paths::new(&root, cli.results.as_deref());
    let out = Output { markdown: paths.markdown.clone(), svg_dir: paths.out.clone() };
    if cli.report_only {
        report::write(&paths.raw, &paths.original(), &out)?;
        eprintln!("scale: wrote {}", paths.markdown.display());
        return Ok(());
    }
    anyhow::ensure!(
        !(cli.nginx_direct && cli.nginx_upstream.contains(&Upstream::Unix)),
        "--nginx-direct needs tcp only"
    );
    let plan = cli.plan();
    // A partial run adds to the run recorded in run.tsv; with none there
    // (a fresh --results folder) it starts one.
    let rerun = !cli.only.is_empty() && paths.run_log().exists();
    let mut run = Run::new(plan, paths.clone(), rerun, cli.skip_build)?;
    record_start(&run, &root)?;
    if !run.rerun {
        // A full run replaces every section's results (a skipped section
        // then reads "not run"); what no section writes (the browser
        // client's figures, the heap profiles) is kept.
        for s in Section::ALL {
            run.begin(s)?;
        }
    }
    run.build().await?;
    let sections = run.plan.sections.clone();
    for s in &sections {
        run.begin(*s)?;
        sections::measure(&mut run, *s).await?;
    }
    record_end(&run)?;
    run.finish();
    report::write(&paths.raw, &paths.original(), &out)?;
    eprintln!("scale: done in {} s: {}", run.seconds(), paths.markdown.display());
    Ok(())
}

/// `run.tsv` at the start: a full run starts it afresh (every section's
/// raw files are replaced as each runs); a partial rerun appends its own
/// lines.
fn record_start(run: &Run, root: &std::path::Path) -> anyhow::Result<()> {
    let log = run.paths.run_log();
    let (mode, commit, now) = (run.plan.mode.label(), machine::commit(root), machine::utc(SystemTime::now()));
    if run.rerun {
        let only: Vec<&str> = run.plan.sections.iter().map(|s| s.label()).collect();
        RunLog::append(&log, "rerun", &format!("{} at {now} ({mode} mode, commit {commit})", only.join(", ")))?;
        RunLog::append(&log, "rerun load before", &machine::uptime())?;
        RunLog::append(&log, "rerun machine", &machine::describe())?;
        RunLog::append(&log, "rerun tools", &machine::tools())?;
    } else {
        std::fs::write(&log, format!("started\t{now}\nmode\t{mode}\ncommit\t{commit}\n"))?;
        std::fs::write(run.paths.raw.join("load-before.txt"), format!("{}\n", machine::uptime()))?;
        RunLog::append(&log, "machine", &machine::describe())?;
        RunLog::append(&log, "tools", &machine::tools())?;
    }
    Ok(())
}

/// `run.tsv` at the end.
fn record_end(run: &Run) -> anyhow::Result<()> {
    let log = run.paths.run_log();
    if run.rerun {
        RunLog::append(&log, "rerun load after", &machine::uptime())?;
    } else {
        std::fs::write(run.paths.raw.join("load-after.txt"), format!("{}\n", machine::uptime()))?;
        RunLog::append(&log, "finished", &machine::utc(SystemTime::now()))?;
        RunLog::append(&log, "seconds", &run.seconds().to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn overrides_reach_the_plan() {
        let cli = Cli::parse_from(["scale", "--quick", "--only", "aoi,peer", "--aoi-players", "200", "--repeat", "2"]);
        let p = cli.plan();
        assert_eq!((p.mode, p.repeat, p.aoi.players.clone()), (Mode::Quick, 2, vec![200]));
        assert_eq!(p.sections, [Section::Aoi, Section::Peer]);
        let full = Cli::parse_from(["scale", "--skip-criterion"]).plan();
        assert!(!full.runs(Section::Criterion) && full.runs(Section::Steps));
    }
}
