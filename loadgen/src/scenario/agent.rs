//! `mino-loadgen agent`: runs bots for a coordinator. It connects (trying
//! again until `--wait` passes, so agents may start first), says hello,
//! takes its share of the run, and carries out the coordinator's orders on
//! its own swarm, one at a time, answering each (see [`crate::fleet`]). A
//! `stop` order ends the current one early; `bye` ends the agent. When the
//! coordinator is lost, the agent stops its bots and exits with an error.

use super::plan::Plan;
use super::{Context, SHUTDOWN_TIMEOUT};
use crate::cli::{AgentArgs, CommonArgs};
use crate::fleet::coordinator::{unix_ms, HANDSHAKE};
use crate::fleet::link::{Link, LinkEnd};
use crate::fleet::wire::{Answer, Hello, HoldParts, Order, RunPlan, PROTOCOL};
use crate::fleet::Share;
use crate::meter::available_cores;
use crate::observer::{ObserverShare, Observers};
use crate::profile::Profile;
use crate::swarm::Swarm;
use crate::sysinfo::host_name;
use anyhow::Context as _;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use tokio_util::sync::CancellationToken;

/// Between attempts to reach the coordinator.
const RETRY: Duration = Duration::from_millis(500);

/// Longest wait for a ramp's start time (a clock offset gone wrong must
/// not park the agent).
const MAX_START_WAIT: Duration = Duration::from_secs(10);

type Socket = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

/// Runs as an agent until the coordinator says bye, is lost, or `stop`
/// fires; `local` gives this machine's own options (threads, source
/// addresses, TLS trust), `silence` the bound on hearing nothing.
///
/// Errors: the coordinator could not be reached, refused this agent, or was
/// lost before the end; the targets do not resolve from here.
pub async fn run(
    args: &AgentArgs,
    local: CommonArgs,
    silence: Duration,
    stop: CancellationToken,
) -> anyhow::Result<()> {
    let host = host_name();
    let name = args.name.clone().unwrap_or_else(|| format!("{host}-{}", std::process::id()));
    let socket = connect(&args.coordinator, args.wait, &stop).await?;
    let mut link: Link<Answer, Order> = Link::start(socket, silence);
    link.send(Answer::Hello(Hello { protocol: PROTOCOL, name: name.clone(), host, cores: available_cores() })).await?;
    let (share, plan, coordinator_ms) = match link.recv().await {
        Ok(Order::Assign { share, plan, coordinator_unix_ms }) => (share, plan, coordinator_unix_ms),
        Ok(Order::Refuse { reason }) => anyhow::bail!("the coordinator refused this agent: {reason}"),
        Ok(other) => anyhow::bail!("the coordinator sent {} before an assignment", other.label()),
        Err(e) => anyhow::bail!("the coordinator left before assigning a share: {e}"),
    };
    let offset_ms = unix_ms() as f64 - coordinator_ms as f64;
    // The coordinator's stop ends the current order; this process's own
    // (Ctrl-C, SIGTERM) ends the agent too.
    let run_stop = stop.child_token();
    let ctx = match agent_context(&plan, local, run_stop.clone()).await {
        Ok(ctx) => ctx,
        Err(e) => {
            let _ = link.send(Answer::Failed { reason: format!("{e:#}") }).await;
            link.close(Duration::from_secs(1)).await;
            return Err(e);
        }
    };
    link.send(Answer::Ready { clock_offset_ms: offset_ms, limits: ctx.limits.describe() }).await?;
    eprintln!(
        "agent {name}: bots i with i % {} == {} of the {} run, clock {offset_ms:+.0} ms from the coordinator's",
        share.agents, share.agent, plan.scenario
    );
    let answers = link.sender();
    let (orders_tx, mut orders) = mpsc::channel(4);
    let reader = tokio::spawn(take_orders(link, orders_tx, run_stop.clone()));
    let mut agent = Agent { ctx, share, offset_ms, swarm: None };
    loop {
        let order = tokio::select! {
            o = orders.recv() => o,
            _ = stop.cancelled() => None,
        };
        let Some(order) = order else { break };
        if let Some(answer) = agent.carry_out(order).await {
            if answers.send(answer).await.is_err() {
                break;
            }
        }
    }
    if let Some(swarm) = agent.swarm.take() {
        swarm.shutdown(SHUTDOWN_TIMEOUT).await;
    }
    drop(answers);
    reader.abort();
    match reader.await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(end)) if !stop.is_cancelled() => Err(anyhow::anyhow!("the coordinator was lost: {end}")),
        _ => Ok(()),
    }
}

/// Connects to the coordinator, trying again until `wait` passes.
async fn connect(url: &str, wait: Duration, stop: &CancellationToken) -> anyhow::Result<Socket> {
    anyhow::ensure!(url.starts_with("ws://"), "--coordinator must be ws://HOST:PORT/, not {url:?}");
    let end = Instant::now() + wait;
    loop {
        let failure = match tokio::time::timeout(HANDSHAKE, tokio_tungstenite::connect_async(url)).await {
            Ok(Ok((socket, _))) => return Ok(socket),
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no handshake within {HANDSHAKE:?}"),
        };
        if Instant::now() >= end {
            anyhow::bail!("coordinator {url} not reached within {wait:?}: {failure}");
        }
        tracing::debug!("coordinator {url} not reached yet: {failure}");
        tokio::select! {
            _ = stop.cancelled() => anyhow::bail!("stopped before reaching the coordinator"),
            _ = tokio::time::sleep(RETRY) => {}
        }
    }
}

/// The agent's context: the coordinator's targets and plan, this machine's
/// own options, no observers (they need every bot's position in one process).
async fn agent_context(plan: &RunPlan, local: CommonArgs, stop: CancellationToken) -> anyhow::Result<Context> {
    let common = CommonArgs {
        urls: plan.urls.clone(),
        json: None,
        plot: None,
        quiet: true,
        server_pids: Vec::new(),
        join_timeout: Duration::from_millis(plan.join_timeout_ms),
        name_prefix: plan.name_prefix.clone(),
        seed: Some(plan.seed),
        density: plan.density,
        observers: Some(ObserverShare::Count(0)),
        metrics_urls: Vec::new(),
        transport: plan.transport,
        frames: plan.frames,
        ..local
    };
    let mut ctx = Context::new(common, stop).await.context("starting this agent")?;
    ctx.plan =
        Plan { world: plan.world, movement: plan.movement, observers: Observers::default(), density: plan.density };
    Ok(ctx)
}

/// Reads the coordinator's orders: `stop` cancels `run_stop` at once, `bye`
/// ends (Ok), every other order goes to the agent in turn. Returns why the
/// link ended when the coordinator was lost.
async fn take_orders(
    mut link: Link<Answer, Order>,
    orders: mpsc::Sender<Order>,
    run_stop: CancellationToken,
) -> Result<(), LinkEnd> {
    let result = loop {
        match link.recv().await {
            Ok(Order::Stop) => run_stop.cancel(),
            Ok(Order::Bye) => break Ok(()),
            Ok(order) => {
                if orders.send(order).await.is_err() {
                    break Ok(());
                }
            }
            Err(end) => break Err(end),
        }
    };
    if result.is_err() {
        run_stop.cancel();
    }
    link.close(Duration::from_secs(1)).await;
    result
}

/// An agent at work.
struct Agent {
    ctx: Context,
    share: Share,
    /// This clock minus the coordinator's, ms.
    offset_ms: f64,
    swarm: Option<Swarm>,
}

impl Agent {
    /// Carries out `order` and gives its answer (None: it has none).
    async fn carry_out(&mut self, order: Order) -> Option<Answer> {
        let ctx = &self.ctx;
        let answer = match order {
            Order::Swarm { profile, policy } => {
                if let Some(old) = self.swarm.take() {
                    old.shutdown(SHUTDOWN_TIMEOUT).await;
                }
                let swarm = ctx.swarm(Profile::of(profile), policy);
                self.swarm = Some(swarm.numbered(self.share.agent, self.share.agents));
                Answer::Done
            }
            Order::Shutdown => {
                if let Some(swarm) = self.swarm.take() {
                    swarm.shutdown(SHUTDOWN_TIMEOUT).await;
                }
                Answer::Done
            }
            Order::Assign { .. } | Order::Refuse { .. } => Answer::Failed { reason: "assigned twice".into() },
            Order::Stop | Order::Bye => return None,
            order => match &mut self.swarm {
                Some(swarm) => on_swarm(ctx, self.share, self.offset_ms, swarm, order).await,
                None => Answer::Failed { reason: format!("{} before a swarm", order.label()) },
            },
        };
        Some(answer)
    }
}

/// Carries out an order on the agent's swarm.
async fn on_swarm(ctx: &Context, share: Share, offset_ms: f64, swarm: &mut Swarm, order: Order) -> Answer {
    match order {
        Order::Ramp { from, to, rate, start_unix_ms } => {
            let part = share.ramp(from, to, rate);
            let start_in_ms = start_unix_ms as f64 + offset_ms - unix_ms() as f64;
            let wait = Duration::try_from_secs_f64(start_in_ms.max(0.0) / 1000.0).unwrap_or_default();
            let wait = wait.min(MAX_START_WAIT) + part.delay;
            let started = tokio::select! {
                _ = ctx.stop.cancelled() => false,
                _ = tokio::time::sleep(wait) => true,
            };
            let complete = started && swarm.ramp_to(part.to, part.rate, &ctx.progress, &ctx.stop).await;
            Answer::Ramped { bots: swarm.len(), complete }
        }
        Order::Settle => {
            ctx.settle(swarm).await;
            Answer::Settled { complete: swarm.census().joining == 0 }
        }
        Order::Converge { label, limit_ms } => {
            Answer::Placed(ctx.plan.converge(ctx, swarm, &label, limit_ms.map(Duration::from_millis)).await)
        }
        Order::Placed => Answer::Placed(ctx.plan.count_placed(swarm)),
        Order::Window => Answer::Window(Box::new(swarm.stats().take_window().encode())),
        Order::Hold { ms, label } => {
            let raw = ctx.hold_raw(swarm, Duration::from_millis(ms), label).await;
            Answer::Held(Box::new(HoldParts {
                ramp: raw.ramp.encode(),
                hold: raw.hold.encode(),
                usage: raw.usage,
                census: raw.census,
                per_bot: raw.per_bot,
                placed: raw.placed,
                tick_hz: raw.tick_hz,
            }))
        }
        Order::Shards => Answer::Shards { ids: swarm.stats().shards_seen(), tick_hz: swarm.stats().tick_hz() },
        other => Answer::Failed { reason: format!("{} is not an order for a swarm", other.label()) },
    }
}
