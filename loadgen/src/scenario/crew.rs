//! The bots of a scenario: a swarm in this process ([`Crew::Local`]), or,
//! coordinating, one swarm on every agent ([`Crew::Agents`]), driven by the
//! same steps: ramp, settle, converge, hold, shutdown. On agents each step is
//! an order to all of them at once, and their answers merge into what one
//! process would have measured: histograms added bucket for bucket, counters
//! summed, each agent's CPU and verdict kept beside.

use super::{Context, Held, HeldRaw, SHUTDOWN_TIMEOUT};
use crate::fleet::coordinator::unix_ms;
use crate::fleet::wire::{Answer, HoldParts, Order};
use crate::fleet::Fleet;
use crate::meter::{CpuUse, Meter, Usage};
use crate::profile::Profile;
use crate::reconnect::ReconnectPolicy;
use crate::report::fleet::{AgentEntry, AgentFigures, AgentStatus, AgentVerdict};
use crate::report::Verdict;
use crate::stats::{DecodeError, Window};
use crate::swarm::{Census, Converged, Swarm};
use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

/// Added to what an order itself takes for its deadline: the agents' work
/// around it and the network.
pub const ORDER_SLACK: Duration = Duration::from_secs(30);

/// A ramp starts this long after its order is sent, so that every agent has
/// it by then.
pub const START_LEAD: Duration = Duration::from_millis(250);

/// The bots of a scenario.
pub enum Crew<'a> {
    /// A swarm in this process.
    Local(Box<Swarm>),
    /// A swarm on each agent of the fleet.
    Agents(Agents<'a>),
}

/// The agents' swarms, as the coordinator sees them.
pub struct Agents<'a> {
    fleet: &'a Fleet,
    /// The run's bots asked for so far (the last ramp's target).
    planned: usize,
    /// The agents' bots started so far.
    bots: usize,
}

impl<'a> Crew<'a> {
    /// Starts an empty swarm with `profile` and `policy` on every agent.
    pub async fn on_agents(ctx: &Context, fleet: &'a Fleet, profile: Profile, policy: ReconnectPolicy) -> Crew<'a> {
        let order = Order::Swarm { profile: profile.name, policy };
        fleet.order(order, SHUTDOWN_TIMEOUT + ORDER_SLACK, &ctx.stop).await;
        Crew::Agents(Agents { fleet, planned: 0, bots: 0 })
    }

    /// Bots started.
    pub fn len(&self) -> usize {
        match self {
            Crew::Local(s) => s.len(),
            Crew::Agents(a) => a.bots,
        }
    }

    /// True before the first bot.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Starts bots at `rate` per second until there are `n`. Returns false
    /// if the run was stopped first.
    pub async fn ramp_to(&mut self, ctx: &Context, n: usize, rate: f64) -> bool {
        match self {
            Crew::Local(s) => s.ramp_to(n, rate, &ctx.progress, &ctx.stop).await,
            Crew::Agents(a) => {
                let from = a.planned;
                let ramp = if rate > 0.0 { n.saturating_sub(from) as f64 / rate } else { 0.0 };
                let start = unix_ms() + START_LEAD.as_millis() as u64;
                let order = Order::Ramp { from, to: n, rate, start_unix_ms: start };
                ctx.note(&format!("ramp to {n} over {} agents", a.fleet.live()));
                let deadline = START_LEAD + Duration::try_from_secs_f64(ramp).unwrap_or_default() + ORDER_SLACK;
                let answers = a.fleet.order(order, deadline, &ctx.stop).await;
                a.planned = n;
                a.bots = 0;
                let mut complete = true;
                for (_, answer) in answers {
                    if let Answer::Ramped { bots, complete: c } = answer {
                        a.bots += bots;
                        complete &= c;
                    }
                }
                complete && !ctx.stop.is_cancelled()
            }
        }
    }

    /// Lets joining bots settle (see [`Context::settle`]).
    pub async fn settle(&self, ctx: &Context) {
        match self {
            Crew::Local(s) => ctx.settle(s).await,
            Crew::Agents(a) => {
                let deadline = ctx.common.join_timeout * 2 + Duration::from_secs(1) + ORDER_SLACK;
                a.fleet.order(Order::Settle, deadline, &ctx.stop).await;
            }
        }
    }

    /// With `--density`, waits until the connected bots are inside their
    /// region; nothing to wait for otherwise.
    pub async fn converge(&self, ctx: &Context) {
        if ctx.plan.density.is_some() {
            self.converge_to(ctx, "into region", None).await;
        }
    }

    /// Waits until every connected bot stands where the plan wants it, at
    /// most `limit` (see [`super::plan::Plan::converge`]).
    pub async fn converge_to(&self, ctx: &Context, label: &str, limit: Option<Duration>) -> Converged {
        match self {
            Crew::Local(s) => ctx.plan.converge(ctx, s, label, limit).await,
            Crew::Agents(a) => {
                let limit_ms = limit.map(|l| u64::try_from(l.as_millis()).unwrap_or(u64::MAX));
                let deadline = ctx.plan.converge_bound(limit) + ORDER_SLACK;
                let order = Order::Converge { label: label.to_owned(), limit_ms };
                placed(a.fleet.order(order, deadline, &ctx.stop).await)
            }
        }
    }

    /// Connected bots and those standing where the plan wants them, now.
    pub async fn count_placed(&self, ctx: &Context) -> Converged {
        match self {
            Crew::Local(s) => ctx.plan.count_placed(s),
            Crew::Agents(a) => placed(a.fleet.order(Order::Placed, ORDER_SLACK, &ctx.stop).await),
        }
    }

    /// Ends the current measurement window and starts the next.
    pub async fn take_window(&self, ctx: &Context) -> Window {
        match self {
            Crew::Local(s) => s.stats().take_window(),
            Crew::Agents(a) => {
                let mut merged = Window::empty();
                for (i, answer) in a.fleet.order(Order::Window, ORDER_SLACK, &ctx.stop).await {
                    if let Answer::Window(w) = answer {
                        match w.decode() {
                            Ok(w) => merged = merged.alongside(&w),
                            Err(e) => a.unreadable(i, "window", &e).await,
                        }
                    }
                }
                merged
            }
        }
    }

    /// Measures a hold of `d` (see [`Context::measure_hold`]); on agents,
    /// each agent's part of it in `measured.agents`.
    pub async fn measure_hold(&self, ctx: &Context, d: Duration, label: String) -> Held {
        match self {
            Crew::Local(s) => ctx.measure_hold(s, d, label).await,
            Crew::Agents(a) => a.measure_hold(ctx, d, label).await,
        }
    }

    /// The shard ids the bots have seen, and the Welcomes' tick rate (Hz, 0: none yet).
    pub async fn shards(&self, ctx: &Context) -> (Vec<u32>, u16) {
        match self {
            Crew::Local(s) => (s.stats().shards_seen(), s.stats().tick_hz()),
            Crew::Agents(a) => {
                let (mut ids, mut hz) = (BTreeSet::new(), 0);
                for (_, answer) in a.fleet.order(Order::Shards, ORDER_SLACK, &ctx.stop).await {
                    if let Answer::Shards { ids: seen, tick_hz } = answer {
                        ids.extend(seen);
                        hz = hz.max(tick_hz);
                    }
                }
                (ids.into_iter().collect(), hz)
            }
        }
    }

    /// Stops every bot (politely, bounded).
    pub async fn shutdown(self, ctx: &Context) {
        ctx.interruptions.seal();
        match self {
            Crew::Local(s) => {
                (*s).shutdown(SHUTDOWN_TIMEOUT).await;
            }
            Crew::Agents(a) => {
                a.fleet.order(Order::Shutdown, SHUTDOWN_TIMEOUT + ORDER_SLACK, &ctx.stop).await;
            }
        }
    }
}

/// The agents' placements together.
fn placed(answers: Vec<(usize, Answer)>) -> Converged {
    answers.into_iter().fold(Converged::default(), |sum, (_, answer)| match answer {
        Answer::Placed(c) => sum.plus(&c),
        _ => sum,
    })
}

/// One agent's hold, read back.
struct AgentHold {
    raw: HeldRaw,
}

impl AgentHold {
    fn of(p: HoldParts) -> Result<AgentHold, DecodeError> {
        Ok(AgentHold {
            raw: HeldRaw {
                ramp: p.ramp.decode()?,
                hold: p.hold.decode()?,
                usage: p.usage,
                census: p.census,
                per_bot: p.per_bot,
                placed: p.placed,
                observers: 0,
                tick_hz: p.tick_hz,
                parts: Vec::new(),
            },
        })
    }
}

impl Agents<'_> {
    /// Marks agent `i` lost for sending what could not be read.
    async fn unreadable(&self, i: usize, what: &str, e: &DecodeError) {
        self.fleet.lose(i, AgentStatus::Failed, what, format!("unreadable answer: {e}")).await;
    }

    /// Every agent holds `d`; this process reads the `--server-pid`s over
    /// the same time; the agents' windows merge.
    async fn measure_hold(&self, ctx: &Context, d: Duration, label: String) -> Held {
        ctx.note_hold(d, &label);
        let meter = Meter::start(&ctx.common.server_pids);
        let order = Order::Hold { ms: u64::try_from(d.as_millis()).unwrap_or(u64::MAX), label: label.clone() };
        let (answers, servers) = tokio::join!(self.fleet.order(order, d + ORDER_SLACK, &ctx.stop), async {
            ctx.progress.hold(d, label.clone(), &ctx.stop, String::new).await;
            meter.finish()
        });
        let mut holds: Vec<(usize, AgentHold)> = Vec::with_capacity(answers.len());
        for (i, answer) in answers {
            if let Answer::Held(parts) = answer {
                match AgentHold::of(*parts) {
                    Ok(h) => holds.push((i, h)),
                    Err(e) => self.unreadable(i, &label, &e).await,
                }
            }
        }
        let entries = self.fleet.entries();
        let figures = agent_figures(&entries, &holds, ctx.common.max_loadgen_cpu);
        let busiest = figures.iter().map(|f| f.host_loadgen_cpu_pct).fold(0.0, f64::max);
        let raw = merge(holds.into_iter().map(|(_, h)| h.raw), servers, busiest);
        let reported = figures.iter().any(|f| f.verdict != AgentVerdict::Lost);
        let mut held = ctx.held_of(raw);
        if !reported && held.measured.verdict != Verdict::Interrupted {
            held.measured.judgeable = false;
            held.measured.verdict = Verdict::NotJudgeable;
        }
        held.measured.agents = Some(figures.into_iter().map(AgentFigures::rounded).collect());
        held
    }
}

/// The agents' holds as one: windows side by side, bots and placements
/// summed, each bot's bytes kept; `usage` is the coordinator's reading of
/// the servers with the busiest host's loadgen CPU (`busiest_pct`) and
/// the busiest machine's share.
fn merge(holds: impl Iterator<Item = HeldRaw>, servers: Usage, busiest_pct: f64) -> HeldRaw {
    let mut merged = HeldRaw {
        ramp: Window::empty(),
        hold: Window::empty(),
        usage: Usage { loadgen: CpuUse::default(), loadgen_cpu_pct: busiest_pct, machine_cpu_pct: 0.0, ..servers },
        census: Census::default(),
        per_bot: Vec::new(),
        placed: Converged::default(),
        observers: 0,
        tick_hz: 0,
        parts: Vec::new(),
    };
    for h in holds {
        merged.ramp = merged.ramp.alongside(&h.ramp);
        merged.hold = merged.hold.alongside(&h.hold);
        let (l, m) = (merged.usage.loadgen, h.usage.loadgen);
        merged.usage.loadgen =
            CpuUse { user_s: l.user_s + m.user_s, sys_s: l.sys_s + m.sys_s, cores: l.cores + m.cores };
        merged.usage.machine_cpu_pct = merged.usage.machine_cpu_pct.max(h.usage.machine_cpu_pct);
        merged.census = merged.census.plus(&h.census);
        merged.per_bot.extend(h.per_bot);
        merged.placed = merged.placed.plus(&h.placed);
        merged.tick_hz = merged.tick_hz.max(h.tick_hz);
    }
    merged
}

/// Each agent's part of a hold, judged by its host's agents' CPU together
/// (agents of one machine share its cores): their CPU seconds over the
/// host's cores (the most any of them may use).
fn agent_figures(entries: &[AgentEntry], holds: &[(usize, AgentHold)], max_cpu_pct: f64) -> Vec<AgentFigures> {
    let mut host_cores: HashMap<&str, f64> = HashMap::new();
    let mut host_busy: HashMap<&str, f64> = HashMap::new();
    for (i, h) in holds {
        let host = entries[*i].host.as_str();
        let cores = entries[*i].cores.max(1) as f64;
        *host_busy.entry(host).or_default() += h.raw.usage.loadgen_cpu_pct * cores;
        let c = host_cores.entry(host).or_default();
        *c = c.max(cores);
    }
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let Some((_, h)) = holds.iter().find(|(j, _)| *j == i) else {
                return AgentFigures::lost(e);
            };
            let host = e.host.as_str();
            let host_pct = host_busy.get(host).copied().unwrap_or(0.0) / host_cores.get(host).copied().unwrap_or(1.0);
            let judgeable = host_pct <= max_cpu_pct;
            AgentFigures {
                name: e.name.clone(),
                host: e.host.clone(),
                bots: h.raw.census.bots,
                connected: h.raw.census.connected,
                loadgen_cpu_pct: h.raw.usage.loadgen_cpu_pct,
                host_loadgen_cpu_pct: host_pct,
                machine_cpu_pct: h.raw.usage.machine_cpu_pct,
                judgeable,
                verdict: AgentVerdict::of(judgeable),
                status: e.status,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{Metric, Stats};

    fn entry(name: &str, host: &str, agent: usize) -> AgentEntry {
        AgentEntry {
            name: name.into(),
            host: host.into(),
            cores: 2,
            address: "127.0.0.1:1".into(),
            agent,
            clock_offset_ms: 0.0,
            status: AgentStatus::Running,
            lost_during: None,
            reason: None,
        }
    }

    fn hold(cpu_pct: f64, bots: usize, gap_ms: u64) -> AgentHold {
        let stats = Stats::new();
        stats.record(0, Metric::SnapshotGap, Duration::from_millis(gap_ms));
        let mut usage = Usage {
            wall_s: 1.0,
            loadgen: CpuUse::default(),
            loadgen_cpu_pct: cpu_pct,
            machine_cpu_pct: 40.0,
            servers: Vec::new(),
        };
        usage.loadgen.cores = cpu_pct / 50.0;
        AgentHold {
            raw: HeldRaw {
                ramp: Window::empty(),
                hold: stats.take_window(),
                usage,
                census: Census { bots, connected: bots, ..Census::default() },
                per_bot: Vec::new(),
                placed: Converged::default(),
                observers: 0,
                tick_hz: 20,
                parts: Vec::new(),
            },
        }
    }

    #[test]
    fn agents_of_one_host_are_judged_by_their_cpu_together() {
        let entries = [entry("a", "one", 0), entry("b", "one", 1), entry("c", "two", 2), entry("d", "two", 3)];
        let holds = [(0, hold(40.0, 10, 50)), (1, hold(40.0, 10, 50)), (2, hold(40.0, 10, 50))];
        let f = agent_figures(&entries, &holds, 70.0);
        assert_eq!((f[0].host_loadgen_cpu_pct, f[0].verdict), (80.0, AgentVerdict::NotJudgeable));
        assert_eq!(f[1].verdict, AgentVerdict::NotJudgeable);
        assert_eq!((f[2].host_loadgen_cpu_pct, f[2].verdict), (40.0, AgentVerdict::Measured));
        assert_eq!((f[3].verdict, f[3].bots, f[3].judgeable), (AgentVerdict::Lost, 0, false));
    }

    #[test]
    fn holds_merge_their_histograms_and_bots() {
        let holds = [hold(10.0, 5, 50), hold(30.0, 7, 900)];
        let servers = Usage {
            wall_s: 1.0,
            loadgen: CpuUse::default(),
            loadgen_cpu_pct: 0.0,
            machine_cpu_pct: 0.0,
            servers: Vec::new(),
        };
        let m = merge(holds.into_iter().map(|h| h.raw), servers, 30.0);
        let gaps = m.hold.latencies.summary(Metric::SnapshotGap);
        assert_eq!((gaps.count, gaps.max.round()), (2, 900.0));
        assert_eq!((m.census.bots, m.usage.loadgen_cpu_pct, m.usage.machine_cpu_pct), (12, 30.0, 40.0));
        assert!((m.usage.loadgen.cores - 0.8).abs() < 1e-9);
    }
}
