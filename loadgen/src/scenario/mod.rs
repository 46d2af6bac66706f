//! The load-test scenarios and what they share: resolving targets, checking
//! local limits, planning where the bots walk and who observes ([`plan`]),
//! building the swarm, measuring a hold window, and writing the report (JSON,
//! table, plot).

pub mod arrivals;
pub mod chat_cost;
pub mod crowd;
pub mod failover;
pub mod idle;
pub mod plan;
pub mod steps;
pub mod walk;

use crate::cli::{Cli, Command, CommonArgs};
use crate::limits::LocalLimits;
use crate::meter::{Meter, Usage};
use crate::plot::{self, GapPoint};
use crate::profile::Profile;
use crate::progress::Progress;
use crate::reconnect::ReconnectPolicy;
use crate::report::aoi::BotBytes;
use crate::report::{self, Measured, Phase, RunInfo};
use crate::stats::Window;
use crate::swarm::{Census, Received, Swarm, SwarmConfig};
use crate::target::{self, SourceAddrs, Target};
use crate::tls::{Tls, TlsOptions};
use anyhow::Context as _;
use plan::Plan;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long bots get to close politely at the end of a run.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// The ideal snapshot gap drawn on plots, ms (20 Hz).
pub const TICK_MS: f64 = 50.0;

/// Everything a scenario needs besides its own options.
pub struct Context {
    /// Options shared by every scenario.
    pub common: CommonArgs,
    /// Resolved targets.
    pub targets: Arc<[Target]>,
    /// Local source addresses.
    pub sources: Arc<SourceAddrs>,
    /// What the local limits allow.
    pub limits: LocalLimits,
    /// Progress bars (hidden when quiet).
    pub progress: Progress,
    /// Fires on Ctrl-C/SIGTERM: scenarios stop early and report what they have.
    pub stop: CancellationToken,
    /// Base seed of the run.
    pub seed: u64,
    /// Where the bots walk and who observes (set by [`run`] before the scenario).
    pub plan: Plan,
}

/// One measured hold (see [`Context::measure_hold`]).
pub struct Held {
    /// The phase's figures.
    pub measured: Measured,
    /// Ramp + hold window.
    pub whole: Window,
    /// Hold window.
    pub hold: Window,
    /// CPU and memory over the hold.
    pub usage: Usage,
    /// Bots by state at the end of the hold.
    pub census: Census,
    /// What each bot connected throughout the hold received in it.
    pub per_bot: Vec<BotBytes>,
}

impl Context {
    /// Resolves the targets (with one TLS configuration shared by every
    /// `wss://` target) and checks (and raises) the local limits.
    ///
    /// Errors: a URL that is neither ws:// nor wss:// or does not resolve, an
    /// unreadable `--ca-file`.
    pub async fn new(common: CommonArgs, stop: CancellationToken) -> anyhow::Result<Context> {
        let tls = if common.urls.iter().any(|u| target::is_tls(u)) {
            Some(Tls::new(&TlsOptions { ca_files: common.ca_files.clone(), insecure: common.insecure })?)
        } else {
            None
        };
        let mut targets = Vec::with_capacity(common.urls.len());
        for url in &common.urls {
            targets.push(Target::resolve_with(url, tls.as_ref()).await?);
        }
        let sources = SourceAddrs::for_targets(&targets, common.source_addrs);
        let limits = LocalLimits::check_and_raise(sources.len());
        let seed = common.seed.unwrap_or_else(rand::random);
        Ok(Context {
            progress: Progress::new(common.quiet),
            targets: targets.into(),
            sources: Arc::new(sources),
            limits,
            stop,
            seed,
            common,
            plan: Plan::default(),
        })
    }

    /// Prints a line on stderr unless quiet.
    pub fn note(&self, line: &str) {
        if !self.progress.is_quiet() {
            eprintln!("{line}");
        }
    }

    /// Says what the local limits allow, and warns when `bots` will not fit.
    pub fn check_capacity(&self, bots: usize) {
        self.note(&self.limits.describe());
        if let Some(w) = self.limits.warning_for(bots as u64) {
            tracing::warn!("{w}");
        }
    }

    /// The reconnect policy the options ask for.
    pub fn policy(&self) -> ReconnectPolicy {
        if self.common.no_reconnect {
            ReconnectPolicy::single_attempt()
        } else {
            ReconnectPolicy::default()
        }
    }

    /// An empty swarm with this run's targets and the given behaviour.
    pub fn swarm(&self, profile: Profile, policy: ReconnectPolicy) -> Swarm {
        let config = SwarmConfig {
            targets: self.targets.clone(),
            sources: self.sources.clone(),
            profile,
            policy,
            join_timeout: self.common.join_timeout,
            name_prefix: self.common.name_prefix.clone(),
            seed: self.seed,
            threads: self.common.threads.unwrap_or(0),
            movement: self.plan.movement,
            observers: self.plan.observers,
        };
        Swarm::new(config)
    }

    /// With `--density`, waits until the connected bots are inside their
    /// region (see [`Plan::converge`]); nothing to wait for otherwise.
    pub async fn converge(&self, swarm: &Swarm) {
        if self.plan.density.is_some() {
            self.plan.converge(self, swarm, "into region", None).await;
        }
    }

    /// The run context for reports.
    pub fn info(&self, profile: crate::profile::ProfileName) -> RunInfo {
        RunInfo { urls: self.common.urls.clone(), profile, local_limits: self.limits.clone() }
    }

    /// Lets joining bots settle: at most the join timeout (twice: connect, then Welcome) plus a second.
    pub async fn settle(&self, swarm: &Swarm) {
        let bound = self.common.join_timeout * 2 + Duration::from_secs(1);
        if !swarm.settle(bound, &self.stop).await && !self.stop.is_cancelled() {
            tracing::warn!("some bots were still joining after {bound:?}");
        }
    }

    /// Measures a hold of `d`: CPU and memory of the loadgen and the servers,
    /// and the stats window it covered.
    pub async fn hold(&self, swarm: &Swarm, d: Duration, label: String) -> (Window, Usage) {
        let meter = Meter::start(&self.common.server_pids);
        let stats = swarm.stats().clone();
        self.progress.hold(d, label, &self.stop, || format!("{} connected", stats.connected())).await;
        (swarm.stats().take_window(), meter.finish())
    }

    /// The measuring step every scenario shares: closes the window of the ramp
    /// (and settle), holds for `d`, and measures the phase: welcome latencies
    /// and counters over ramp + hold, gaps, rates and CPU over the hold.
    pub async fn measure_hold(&self, swarm: &Swarm, d: Duration, label: String) -> Held {
        let ramp = swarm.stats().take_window();
        let before = swarm.received();
        let (hold, usage) = self.hold(swarm, d, label).await;
        let per_bot = bot_bytes(&before, &swarm.received());
        let census = swarm.census();
        let whole = ramp.merge(&hold);
        let observers = (0..swarm.len()).filter(|i| self.plan.observers.includes(*i)).count();
        let mut measured = Measured::of(&Phase {
            whole: &whole,
            hold: &hold,
            usage: &usage,
            census,
            max_loadgen_cpu: self.common.max_loadgen_cpu,
            per_bot: &per_bot,
            tick_hz: swarm.stats().tick_hz(),
            observers,
        });
        measured.density = self.plan.density_figures(swarm);
        Held { measured, whole, hold, usage, census, per_bot }
    }

    /// Writes the JSON (if asked) and prints the table (unless quiet).
    ///
    /// Errors: the JSON file could not be written.
    pub fn finish(&self, report: &impl Serialize, table: String) -> anyhow::Result<()> {
        if let Some(path) = &self.common.json {
            report::write_json(path, report)?;
        }
        if !self.common.quiet {
            print!("{table}");
        }
        Ok(())
    }

    /// Draws the gap plot (if asked).
    ///
    /// Errors: drawing failed.
    pub fn plot(&self, points: &[(usize, &Measured)]) -> anyhow::Result<()> {
        let Some(path) = &self.common.plot else {
            return Ok(());
        };
        let points: Vec<GapPoint> = points
            .iter()
            .map(|(players, m)| GapPoint {
                players: *players as f64,
                own_p95: m.snapshot_gap_ms.p95,
                own_p99: m.snapshot_gap_ms.p99,
                relayed_p95: (m.relayed_snapshot_gap_ms.count > 0).then_some(m.relayed_snapshot_gap_ms.p95),
                judgeable: m.judgeable,
            })
            .collect();
        plot::gap_chart(path, &points, TICK_MS).with_context(|| format!("plotting {}", path.display()))
    }
}

/// Runs the scenario `cli` names until it ends or `stop` fires.
///
/// Errors: bad options, unresolvable URLs, unwritable output files.
pub async fn run(cli: Cli, stop: CancellationToken) -> anyhow::Result<()> {
    let scenario = cli.scenario()?;
    let mut ctx = Context::new(cli.common, stop).await?;
    ctx.plan = Plan::make(&ctx, &scenario).await?;
    match scenario {
        Command::Walk(a) => walk::run(&ctx, &a).await,
        Command::Steps(a) => steps::run(&ctx, &a).await,
        Command::Idle(a) => idle::run(&ctx, &a).await,
        Command::Arrivals(a) => arrivals::run(&ctx, &a).await,
        Command::Failover(a) => failover::run(&ctx, &a).await,
        Command::Crowd(a) => crowd::run(&ctx, &a).await,
    }
}

/// What each bot received between `before` and `after` (same order), for the
/// bots connected at both moments in the same session.
pub fn bot_bytes(before: &[Received], after: &[Received]) -> Vec<BotBytes> {
    before
        .iter()
        .zip(after)
        .filter(|(a, b)| a.connected && b.connected && a.welcomes == b.welcomes)
        .map(|(a, b)| BotBytes {
            bytes: b.bytes.saturating_sub(a.bytes),
            cell_bytes: b.cell_bytes.saturating_sub(a.cell_bytes),
        })
        .collect()
}
