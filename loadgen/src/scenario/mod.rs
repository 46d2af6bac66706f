//! The load-test scenarios and what they share: resolving targets, checking
//! local limits, planning where the bots walk and who observes ([`plan`]),
//! building the bots ([`crew`]: a swarm here, or agents' swarms), measuring
//! a hold window, and writing the report (JSON, table, plot). A run over
//! agents is coordinated here and carried out by [`agent`]s.

pub mod agent;
pub mod arrivals;
pub mod chat_cost;
pub mod crew;
pub mod crowd;
pub mod failover;
pub mod idle;
pub mod plan;
pub mod steps;
pub mod walk;

use crate::cli::{Cli, Command, CommonArgs, FleetArgs};
use crate::fleet::wire::RunPlan;
use crate::fleet::{Fleet, FleetOptions};
use crate::interrupt::Interruptions;
use crate::limits::LocalLimits;
use crate::meter::{Meter, Usage};
use crate::outcome::{Ending, Expectation, Outcome};
use crate::plot::{self, GapPoint};
use crate::profile::Profile;
use crate::progress::Progress;
use crate::reconnect::ReconnectPolicy;
use crate::report::aoi::BotBytes;
use crate::report::transport::{TransportFigures, TransportPhase};
use crate::report::{self, Measured, Phase, RunInfo};
use crate::stats::Window;
use crate::swarm::{Census, Converged, Received, Swarm, SwarmConfig};
use crate::target::{self, SourceAddrs, Target};
use crate::tls::{Tls, TlsOptions};
use crate::transport::Transport;
use crate::webtransport;
use anyhow::Context as _;
use crew::Crew;
use plan::Plan;
use serde::Serialize;
use std::io::Write as _;
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
    /// Whether the run was cut short (a signal, an agent lost), for the
    /// report (set by [`run`]; none of its own otherwise).
    pub interruptions: Interruptions,
    /// Base seed of the run.
    pub seed: u64,
    /// Where the bots walk and who observes (set by [`run`] before the scenario).
    pub plan: Plan,
    /// Whether the scenario's holds must bring frames (set by [`run`]
    /// before the scenario; [`Expectation::MaybeSilent`] until then).
    pub expects: Expectation,
    /// The agents when this process coordinates a run over them (`--agents`):
    /// the scenario's bots are theirs (set by [`run`]).
    pub fleet: Option<Arc<Fleet>>,
}

/// What one process measured over a hold, before its figures are computed
/// (see [`Context::hold_raw`]); an agent sends it to its coordinator.
pub struct HeldRaw {
    /// The window before the hold (the ramp and settle).
    pub ramp: Window,
    /// The hold's window.
    pub hold: Window,
    /// CPU and memory over the hold.
    pub usage: Usage,
    /// Bots by state at the end of the hold.
    pub census: Census,
    /// What each bot connected throughout the hold received in it.
    pub per_bot: Vec<BotBytes>,
    /// Bots standing where the plan wants them at the end.
    pub placed: Converged,
    /// Bots that observe.
    pub observers: usize,
    /// The tick rate of the Welcomes, Hz (0: none yet).
    pub tick_hz: u16,
    /// A `--transport mix` run: each transport's part of the hold (none
    /// otherwise, and none over agents: their parts are not sent).
    pub parts: Vec<PartRaw>,
}

/// One transport's part of a hold (a `--transport mix` run).
pub struct PartRaw {
    /// The transport.
    pub transport: Transport,
    /// Its bots' window before the hold.
    pub ramp: Window,
    /// Its bots' window of the hold.
    pub hold: Window,
    /// Its bots by state at the end of the hold.
    pub census: Census,
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
    /// `wss://` target; with WebTransport bots, each shard's offer) and
    /// checks (and raises) the local limits.
    ///
    /// Errors: a URL that is neither ws:// nor wss:// or does not resolve, an
    /// unreadable `--ca-file`; with WebTransport bots, a shard without an
    /// offer (no `--webtransport-listen`) or a `wss://` URL.
    pub async fn new(common: CommonArgs, stop: CancellationToken) -> anyhow::Result<Context> {
        let tls = if common.urls.iter().any(|u| target::is_tls(u)) {
            Some(Tls::new(&TlsOptions { ca_files: common.ca_files.clone(), insecure: common.insecure })?)
        } else {
            None
        };
        let mut targets = Vec::with_capacity(common.urls.len());
        for url in &common.urls {
            let mut target = Target::resolve_with(url, tls.as_ref()).await?;
            if common.transport.uses(Transport::WebTransport) {
                let offer = webtransport::offer(&target)
                    .await
                    .with_context(|| format!("--transport {}", common.transport.label()))?;
                target.webtransport = Some(std::sync::Arc::new(crate::target::LiveOffer::new(offer)));
            }
            targets.push(target);
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
            interruptions: Interruptions::new(),
            seed,
            common,
            plan: Plan::default(),
            expects: Expectation::default(),
            fleet: None,
        })
    }

    /// The bots of a scenario, with the given behaviour: an empty swarm
    /// here, or (coordinating) one on every agent.
    pub async fn crew(&self, profile: Profile, policy: ReconnectPolicy) -> Crew<'_> {
        match &self.fleet {
            None => Crew::Local(Box::new(self.swarm(profile, policy))),
            Some(fleet) => Crew::on_agents(self, fleet, profile, policy).await,
        }
    }

    /// Prints a line on stderr unless quiet.
    pub fn note(&self, line: &str) {
        if !self.progress.is_quiet() {
            eprintln!("{line}");
        }
    }

    /// Warns when `bots` will not fit the local limits (what they allow is
    /// in the report; coordinating, nothing: the bots run on the agents,
    /// each checks its own).
    pub fn check_capacity(&self, bots: usize) {
        if self.fleet.is_some() {
            return;
        }
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
            frames: self.common.frames,
            transports: self.common.transport,
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
        RunInfo {
            urls: self.common.urls.clone(),
            profile,
            local_limits: self.limits.clone(),
            transport: self.common.transport,
            interrupted: self.interruptions.first(),
        }
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
        self.note_hold(d, &label);
        let meter = Meter::start(&self.common.server_pids);
        let stats = swarm.stats().clone();
        self.progress.hold(d, label, &self.stop, || format!("{} connected", stats.connected())).await;
        (swarm.stats().take_window(), meter.finish())
    }

    /// Says a hold starts (unless quiet): the progress bar is not drawn
    /// when stderr is no terminal, and a log then shows where measuring
    /// began.
    pub fn note_hold(&self, d: Duration, label: &str) {
        // Stopped already (Ctrl-C in the ramp): nothing is measured, and
        // saying it starts would mislead (an outside trial).
        if !self.stop.is_cancelled() {
            self.note(&format!("{label}: measuring for {d:?}"));
        }
    }

    /// The measuring step every scenario shares: closes the window of the ramp
    /// (and settle), holds for `d`, and measures the phase: welcome latencies
    /// and counters over ramp + hold, gaps, rates and CPU over the hold.
    pub async fn measure_hold(&self, swarm: &Swarm, d: Duration, label: String) -> Held {
        let raw = self.hold_raw(swarm, d, label).await;
        self.held_of(raw)
    }

    /// What [`Context::measure_hold`] measures, before the figures.
    pub async fn hold_raw(&self, swarm: &Swarm, d: Duration, label: String) -> HeldRaw {
        let ramp = swarm.stats().take_window();
        let part_ramps = Transport::ALL.map(|t| swarm.part(t).map(|p| p.take_window()));
        let before = swarm.received();
        let (hold, usage) = self.hold(swarm, d, label).await;
        let per_bot = bot_bytes(&before, &swarm.received());
        let parts: Vec<PartRaw> = Transport::ALL
            .into_iter()
            .zip(part_ramps)
            .filter_map(|(transport, ramp)| {
                let hold = swarm.part(transport)?.take_window();
                Some(PartRaw { transport, ramp: ramp?, hold, census: swarm.census_of(transport) })
            })
            .collect();
        // A mix's whole is its parts side by side, so that they add up to it
        // exactly (the whole's own windows close a moment apart from theirs).
        let (ramp, hold) = match parts.split_first() {
            None => (ramp, hold),
            Some((first, rest)) => rest.iter().fold((first.ramp.clone(), first.hold.clone()), |(r, h), p| {
                (r.alongside(&p.ramp), h.alongside(&p.hold))
            }),
        };
        HeldRaw {
            parts,
            ramp,
            hold,
            usage,
            census: swarm.census(),
            per_bot,
            placed: self.plan.count_placed(swarm),
            observers: (0..swarm.len()).filter(|i| self.plan.observers.includes(*i)).count(),
            tick_hz: swarm.stats().tick_hz(),
        }
    }

    /// The figures of a hold; a hold the run was cut short by its end
    /// (see [`Context::interruptions`]) is [`report::Verdict::Interrupted`],
    /// one with bots connected at its end, or welcomed in it, that did not
    /// bring the frames the scenario expects (see [`Context::expects`])
    /// [`report::Verdict::NoFrames`].
    pub fn held_of(&self, raw: HeldRaw) -> Held {
        let whole = raw.ramp.merge(&raw.hold);
        let mut measured = Measured::of(&Phase {
            whole: &whole,
            hold: &raw.hold,
            usage: &raw.usage,
            census: raw.census,
            max_loadgen_cpu: self.common.max_loadgen_cpu,
            per_bot: &raw.per_bot,
            tick_hz: raw.tick_hz,
            observers: raw.observers,
        });
        measured.density = self.plan.density_figures(raw.placed);
        if !raw.parts.is_empty() {
            let figures = raw.parts.iter().map(|p| {
                let whole = p.ramp.merge(&p.hold);
                TransportFigures::of(&TransportPhase {
                    transport: p.transport,
                    whole: &whole,
                    hold: &p.hold,
                    census: p.census,
                })
            });
            measured.transports = Some(figures.collect());
        }
        // Bots connected at its end, or welcomed in it and gone since (a
        // stalled shard's silence): no frames all the same. None of either:
        // nothing measured, as the phase says already.
        if (measured.connected > 0 || measured.welcome_ms.count > 0) && !self.expects.met(&measured) {
            measured.judgeable = false;
            measured.verdict = report::Verdict::NoFrames;
        }
        if self.interruptions.first().is_some() {
            measured.judgeable = false;
            measured.verdict = report::Verdict::Interrupted;
        }
        Held { measured, whole, hold: raw.hold, usage: raw.usage, census: raw.census, per_bot: raw.per_bot }
    }

    /// Writes the JSON (if asked) and prints the table (unless quiet; a
    /// closed stdout loses it, as the log does a line). The JSON gains an
    /// `outcome` object: how the run ended ([`Context::ending`]).
    ///
    /// Errors: the JSON file could not be written; the run measured
    /// nothing (an [`Ending`]: no bot was welcomed, a hold that expects
    /// frames brought none, or no bot was connected at a hold's end; the report is written and printed first, with
    /// its failures), which `main` prints as the verdict line and exits
    /// with its code.
    /// Coordinating, the report gains a `fleet` object (the run's agents,
    /// see [`report::fleet::FleetReport`]) and the table their lines.
    pub fn finish(&self, report: &(impl Serialize + report::Joins), table: String) -> anyhow::Result<()> {
        let fleet = self.fleet.as_ref().map(|f| f.report());
        let ending = self.ending(report);
        // The table first: a JSON file that cannot be written loses the
        // file, not the run's figures.
        if !self.common.quiet {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(table.as_bytes());
            if let Some(f) = &fleet {
                let _ = out.write_all(report::fleet::fleet_lines(f).as_bytes());
            }
            let _ = out.flush();
        }
        if let Some(path) = &self.common.json {
            let mut value = serde_json::to_value(report)?;
            if let Some(object) = value.as_object_mut() {
                if let Some(f) = &fleet {
                    object.insert("fleet".into(), serde_json::to_value(f)?);
                }
                object.insert("outcome".into(), serde_json::to_value(&ending)?);
            }
            report::write_json(path, &value)?;
        }
        if ending.succeeded() {
            Ok(())
        } else {
            Err(ending.into())
        }
    }

    /// How the run of `report` ended: failed when every agent was lost;
    /// interrupted (Ctrl-C, SIGTERM, an agent lost mid-run: its report is
    /// marked, whatever it holds); else
    /// nobody welcomed; else no frames in a hold that expects them
    /// ([`Context::expects`]); else nothing measured (no bot connected at
    /// a hold's end, or none touched by a failover's signal); else measured.
    pub fn ending(&self, report: &impl report::Joins) -> Ending {
        // Coordinating, with no agent left: no report is whole (exit 1, as
        // the verdict line says; the report said interrupted, exit 0).
        if self.fleet.as_ref().is_some_and(|f| f.live() == 0) {
            let why =
                self.interruptions.first().map(|cut| format!(" (the first: {} at {:.1} s)", cut.reason, cut.at_s));
            let why = format!("every agent was lost before the end{}", why.unwrap_or_default());
            return Ending::new(Outcome::Failed, why);
        }
        if let Some(cut) = self.interruptions.first() {
            return Ending::new(Outcome::Interrupted, format!("{} at {:.1} s", cut.reason, cut.at_s));
        }
        if report.welcomed() == 0 {
            let why = report::nobody_welcomed(report, &self.common.urls, self.common.transport);
            return Ending::new(Outcome::NobodyWelcomed, why);
        }
        if let Some(why) = report.untouched() {
            return Ending::new(Outcome::NothingMeasured, why);
        }
        Ending::no_frames(report, self.common.transport)
            .or_else(|| Ending::nothing_measured(report))
            .unwrap_or_else(|| Ending::new(Outcome::Measured, ""))
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

/// Runs the scenario `cli` names until it ends or `stop` fires; the report
/// says whether the run was cut short, from `interruptions` (the signal
/// handler marks them; coordinating, so does the fleet when it loses an agent).
///
/// Errors: bad options, unresolvable URLs, unwritable output files.
pub async fn run(cli: Cli, stop: CancellationToken, interruptions: Interruptions) -> anyhow::Result<()> {
    let scenario = cli.scenario()?;
    if let Command::Agent(a) = &scenario {
        return agent::run(a, cli.common, cli.fleet.agent_timeout, stop).await;
    }
    let mut ctx = Context::new(cli.common, stop).await?;
    ctx.interruptions = interruptions;
    ctx.expects = Expectation::of(&scenario, ctx.common.profile);
    ctx.plan = Plan::make(&ctx, &scenario).await?;
    if let Some(n) = cli.fleet.agents {
        // Observers need every bot's position in one process: none here.
        ctx.plan.observers = Default::default();
        ctx.fleet = Some(Arc::new(coordinate(&ctx, &scenario, &cli.fleet, usize::from(n)).await?));
    }
    let result = match scenario {
        Command::Walk(a) => walk::run(&ctx, &a).await,
        Command::Steps(a) => steps::run(&ctx, &a).await,
        Command::Idle(a) => idle::run(&ctx, &a).await,
        Command::Arrivals(a) => arrivals::run(&ctx, &a).await,
        Command::Failover(a) => failover::run(&ctx, &a).await,
        Command::Crowd(a) => crowd::run(&ctx, &a).await,
        Command::Agent(_) => Ok(()),
    };
    if let Some(fleet) = &ctx.fleet {
        fleet.dismiss().await;
        if result.is_ok() && fleet.live() == 0 {
            anyhow::bail!("every agent was lost before the end (the report says when and why)");
        }
    }
    result
}

/// Listens for `n` agents, takes those that join within the wait, and gives
/// them the run's plan.
///
/// Errors: the address cannot be bound, or no agent joined or started.
async fn coordinate(ctx: &Context, scenario: &Command, args: &FleetArgs, n: usize) -> anyhow::Result<Fleet> {
    let options = FleetOptions { listen: args.listen, agents: n, wait: args.agents_wait, silence: args.agent_timeout };
    let fleet = Fleet::bind(options, ctx.interruptions.clone()).await?;
    // Always printed: operators start their agents with this address.
    eprintln!(
        "coordinator listening on ws://{}/ (waiting up to {:?} for {n} agents)",
        fleet.address(),
        args.agents_wait
    );
    let plan = RunPlan {
        scenario: scenario.name().into(),
        urls: ctx.common.urls.clone(),
        join_timeout_ms: u64::try_from(ctx.common.join_timeout.as_millis()).unwrap_or(u64::MAX),
        name_prefix: ctx.common.name_prefix.clone(),
        seed: ctx.seed,
        movement: ctx.plan.movement,
        world: ctx.plan.world,
        density: ctx.plan.density,
        transport: ctx.common.transport,
        frames: ctx.common.frames,
    };
    let ready = fleet.gather(&plan, &ctx.stop).await?;
    ctx.note(&format!("{ready} of {n} agents ready"));
    Ok(fleet)
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
