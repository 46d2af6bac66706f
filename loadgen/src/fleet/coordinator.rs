//! The coordinator's side of a run spread over agents: it listens, takes
//! the agents that join within a bound, shares the bots among them, then
//! gives every live agent the same order at once and gathers their answers,
//! each within a deadline. An agent whose link ends (its process died), that
//! falls silent, or that misses a deadline is dropped and said so; the run
//! goes on with the others.

use super::link::{Link, LinkEnd, LinkSender};
use super::share::Share;
use super::wire::{Answer, Hello, Order, RunPlan, PROTOCOL};
use crate::interrupt::Interruptions;
use crate::report::fleet::{AgentEntry, AgentStatus, FleetReport};
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Bound on an agent's websocket handshake and Hello.
pub const HANDSHAKE: Duration = Duration::from_secs(5);

/// Bound on an agent's start (resolving the targets, raising its limits).
pub const START_DEADLINE: Duration = Duration::from_secs(30);

/// Bound on closing a link at the end.
const CLOSE_WAIT: Duration = Duration::from_secs(1);

/// How the coordinator runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FleetOptions {
    /// Where agents connect.
    pub listen: SocketAddr,
    /// Agents asked for.
    pub agents: usize,
    /// How long to wait for them before starting with those that came.
    pub wait: Duration,
    /// An agent not heard from for this long is taken for gone.
    pub silence: Duration,
}

/// Why a run could not be spread over agents.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// The listening address could not be bound.
    #[error("cannot listen for agents on {addr}: {source}")]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// The error.
        source: std::io::Error,
    },
    /// No agent joined within the wait.
    #[error("no agent joined within {0:?}")]
    NoAgents(Duration),
    /// The run was stopped (Ctrl-C, SIGTERM) while waiting for agents.
    #[error("stopped while waiting for agents (none had joined)")]
    StoppedWaiting,
    /// Every agent was lost before it could start.
    #[error("no agent could start: {0}")]
    NoneStarted(String),
}

/// The agents of a run.
pub struct Fleet {
    options: FleetOptions,
    address: SocketAddr,
    listener: tokio::sync::Mutex<Option<TcpListener>>,
    links: tokio::sync::Mutex<Vec<Option<Link<Order, Answer>>>>,
    entries: Mutex<Vec<AgentEntry>>,
    interruptions: Interruptions,
    /// Once the agents are gathered: the listener, answering every agent
    /// that connects after with a refusal that says why.
    latecomers: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Drop for Fleet {
    fn drop(&mut self) {
        if let Some(task) = lock(&self.latecomers).take() {
            task.abort();
        }
    }
}

/// The wall clock, ms since the Unix epoch.
pub fn unix_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Fleet {
    /// Listens on `options.listen` (port 0: any free port). An agent lost
    /// before the bots' shutdown marks the run interrupted in
    /// `interruptions` (its bots are missing from what follows).
    ///
    /// Errors: the address cannot be bound.
    pub async fn bind(options: FleetOptions, interruptions: Interruptions) -> Result<Fleet, FleetError> {
        let listen_error = |source| FleetError::Listen { addr: options.listen, source };
        let listener = TcpListener::bind(options.listen).await.map_err(listen_error)?;
        let address = listener.local_addr().map_err(listen_error)?;
        Ok(Fleet {
            options,
            address,
            listener: tokio::sync::Mutex::new(Some(listener)),
            links: tokio::sync::Mutex::new(Vec::new()),
            entries: Mutex::new(Vec::new()),
            interruptions,
            latecomers: Mutex::new(None),
        })
    }

    /// The address agents connect to.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Takes the agents that join until as many as asked for have, the wait
    /// passes, or `stop` fires; from then on refuses every agent that
    /// connects, saying why ([`Order::Refuse`]: the run has its agents);
    /// shares the bots among them (in the order of their names) and waits
    /// until each is ready. Returns how many are.
    ///
    /// Errors: no agent joined, or none could start.
    pub async fn gather(&self, plan: &RunPlan, stop: &CancellationToken) -> Result<usize, FleetError> {
        let Some(listener) = self.listener.lock().await.take() else {
            return Err(FleetError::NoAgents(Duration::ZERO));
        };
        let mut joined = self.accept(&listener, stop).await;
        if joined.is_empty() {
            return Err(match stop.is_cancelled() {
                true => FleetError::StoppedWaiting,
                false => FleetError::NoAgents(self.options.wait),
            });
        }
        joined.sort_by(|a, b| a.1.name.cmp(&b.1.name));
        let count = joined.len();
        let reason = full(self.options.agents, count);
        *lock(&self.latecomers) = Some(tokio::spawn(refuse_latecomers(listener, reason, self.options.silence)));
        let mut taken: Vec<String> = Vec::with_capacity(count);
        for (agent, (link, hello, address)) in joined.into_iter().enumerate() {
            let name = unique(&hello.name, &taken);
            taken.push(name.clone());
            let share = Share { agent, agents: count };
            let assign = Order::Assign { share, plan: plan.clone(), coordinator_unix_ms: unix_ms() };
            // A failed send shows when its answer does not come.
            let _ = link.send(assign).await;
            lock(&self.entries).push(AgentEntry {
                name,
                host: hello.host,
                cores: hello.cores,
                address: address.to_string(),
                agent,
                clock_offset_ms: 0.0,
                status: AgentStatus::Running,
                lost_during: None,
                reason: None,
            });
            self.links.lock().await.push(Some(link));
        }
        let mut ready = 0;
        for (i, answer) in self.collect("start", START_DEADLINE, stop).await {
            if let Answer::Ready { clock_offset_ms, limits } = answer {
                let mut entries = lock(&self.entries);
                entries[i].clock_offset_ms = (clock_offset_ms * 10.0).round() / 10.0;
                tracing::info!("agent {} ready: {limits}", entries[i].name);
                ready += 1;
            } else {
                self.lose(i, AgentStatus::Failed, "start", format!("answered {} to its assignment", answer.label()))
                    .await;
            }
        }
        if ready == 0 {
            let reasons: Vec<String> = lock(&self.entries).iter().filter_map(|e| e.reason.clone()).collect();
            return Err(FleetError::NoneStarted(reasons.join("; ")));
        }
        Ok(ready)
    }

    /// Accepts agents until enough, the wait, or `stop`.
    async fn accept(
        &self,
        listener: &TcpListener,
        stop: &CancellationToken,
    ) -> Vec<(Link<Order, Answer>, Hello, SocketAddr)> {
        let end = Instant::now() + self.options.wait;
        let mut joined = Vec::new();
        while joined.len() < self.options.agents {
            let accepted = tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::sleep_until(end) => break,
                a = listener.accept() => a,
            };
            let (tcp, address) = match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!("accepting an agent: {e}");
                    continue;
                }
            };
            match handshake(tcp, self.options.silence).await {
                Ok((link, hello)) if hello.protocol == PROTOCOL => {
                    eprintln!("agent {} joined from {address} ({}, {} cores)", hello.name, hello.host, hello.cores);
                    joined.push((link, hello, address));
                }
                Ok((link, hello)) => {
                    let reason =
                        format!("protocol {} here, {} there: run the same mino-loadgen", PROTOCOL, hello.protocol);
                    tracing::warn!("agent {} from {address} refused: {reason}", hello.name);
                    let _ = link.send(Order::Refuse { reason }).await;
                    link.close(CLOSE_WAIT).await;
                }
                Err(e) => tracing::warn!("{address} did not join: {e}"),
            }
        }
        joined
    }

    /// Gives every live agent `order` and gathers their answers, each within
    /// `deadline` (measured from now). If `stop` fires meanwhile, the
    /// agents are told to stop and answer what they have. Agents lost on
    /// the way are marked (see [`AgentStatus`]); the answers of the others
    /// are returned with their agents' positions in [`Fleet::entries`].
    pub async fn order(&self, order: Order, deadline: Duration, stop: &CancellationToken) -> Vec<(usize, Answer)> {
        let label = order.label();
        let mut failed = Vec::new();
        for (i, link) in self.links.lock().await.iter().enumerate() {
            if let Some(link) = link {
                if let Err(e) = link.send(order.clone()).await {
                    failed.push((i, e));
                }
            }
        }
        for (i, e) in failed {
            self.lose(i, AgentStatus::Died, &label, e.to_string()).await;
        }
        self.collect(&label, deadline, stop).await
    }

    /// Gives every live agent `order`, which has no answer.
    pub async fn tell(&self, order: Order) {
        for link in self.links.lock().await.iter().flatten() {
            let _ = link.send(order.clone()).await;
        }
    }

    /// One answer from each live agent (see [`Fleet::order`]). An agent
    /// lost meanwhile (its link ended, it failed, or it said nothing by the
    /// deadline) is said at once, and marked lost at that moment, not when
    /// the others have answered (an outside trial: an agent killed 3.7 s
    /// into a hold was reported at its end, 11.4 s).
    async fn collect(&self, label: &str, deadline: Duration, stop: &CancellationToken) -> Vec<(usize, Answer)> {
        let mut lost = Vec::new();
        let mut answers = Vec::new();
        {
            let mut links = self.links.lock().await;
            let senders: Vec<LinkSender<Order>> = links.iter().flatten().map(Link::sender).collect();
            let end = Instant::now() + deadline;
            let mut waits: futures_util::stream::FuturesUnordered<_> = links
                .iter_mut()
                .enumerate()
                .filter_map(|(i, link)| {
                    link.as_mut().map(|l| async move { (i, tokio::time::timeout_at(end, l.recv()).await) })
                })
                .collect();
            let mut stopping = false;
            loop {
                tokio::select! {
                    next = futures_util::StreamExt::next(&mut waits) => {
                        let Some((i, result)) = next else { break };
                        let (status, reason) = match result {
                            Ok(Ok(Answer::Failed { reason })) => (AgentStatus::Failed, reason),
                            Ok(Ok(answer)) => {
                                answers.push((i, answer));
                                continue;
                            }
                            Ok(Err(end)) => (status_of(&end), end.to_string()),
                            Err(_) => (AgentStatus::Silent, format!("no answer within {deadline:?}")),
                        };
                        self.say_lost(i, status, label, &reason);
                        lost.push((i, status, reason));
                    }
                    () = stop.cancelled(), if !stopping => {
                        stopping = true;
                        for s in &senders {
                            let _ = s.send(Order::Stop).await;
                        }
                    }
                }
            }
        }
        for (i, status, reason) in lost {
            self.mark_lost(i, status, label, reason).await;
        }
        answers
    }

    /// Marks agent `i` lost and drops its link.
    pub async fn lose(&self, i: usize, status: AgentStatus, during: &str, reason: String) {
        self.say_lost(i, status, during, &reason);
        self.mark_lost(i, status, during, reason).await;
    }

    /// Says that agent `i` was lost, and marks the run interrupted now
    /// (unless it was lost while the others said which shards they saw, or
    /// while its bots were closing: it took nothing from the figures). Said
    /// when seen, not once the other agents have answered, so the report
    /// dates it and names it first (an outside trial).
    fn say_lost(&self, i: usize, status: AgentStatus, during: &str, reason: &str) {
        let Some(name) = lock(&self.entries).get(i).map(|e| e.name.clone()) else { return };
        let what = format!("agent {name} lost during {during}: {} ({reason})", status.label());
        eprintln!("{what}");
        if during != Order::Shutdown.label() && during != Order::Shards.label() {
            self.interruptions.mark(what);
        }
    }

    /// Records agent `i` lost (its entry) and drops its link.
    async fn mark_lost(&self, i: usize, status: AgentStatus, during: &str, reason: String) {
        if let Some(link) = self.links.lock().await.get_mut(i).and_then(Option::take) {
            drop(link);
        }
        let mut entries = lock(&self.entries);
        let Some(e) = entries.get_mut(i) else { return };
        e.status = status;
        e.lost_during = Some(during.to_owned());
        e.reason = Some(reason);
    }

    /// Says goodbye to every live agent (marked finished) and closes the
    /// links; stops listening.
    pub async fn dismiss(&self) {
        if let Some(task) = lock(&self.latecomers).take() {
            task.abort();
        }
        let links: Vec<(usize, Link<Order, Answer>)> =
            self.links.lock().await.iter_mut().enumerate().filter_map(|(i, l)| l.take().map(|l| (i, l))).collect();
        for (i, link) in links {
            let _ = link.send(Order::Bye).await;
            link.close(CLOSE_WAIT).await;
            if let Some(e) = lock(&self.entries).get_mut(i) {
                e.status = AgentStatus::Finished;
            }
        }
    }

    /// Every agent that joined, by position.
    pub fn entries(&self) -> Vec<AgentEntry> {
        lock(&self.entries).clone()
    }

    /// Agents still taking orders.
    pub fn live(&self) -> usize {
        lock(&self.entries).iter().filter(|e| e.status.is_live()).count()
    }

    /// The run's agents, for the report, which is written at the run's
    /// end: agents still taking orders count as finished.
    pub fn report(&self) -> FleetReport {
        let mut agents = self.entries();
        for a in agents.iter_mut().filter(|a| a.status == AgentStatus::Running) {
            a.status = AgentStatus::Finished;
        }
        FleetReport {
            coordinator: self.address.to_string(),
            expected: self.options.agents,
            joined: agents.len(),
            never_joined: self.options.agents.saturating_sub(agents.len()),
            finished: agents.iter().filter(|a| a.status.is_live()).count(),
            agents,
        }
    }
}

/// Why an agent that connects after the run took its agents is refused:
/// `joined` of the `expected`.
fn full(expected: usize, joined: usize) -> String {
    let agents = |n: usize| if n == 1 { "1 agent".to_owned() } else { format!("{n} agents") };
    if joined >= expected {
        let them = if expected == 1 { "it" } else { "them all" };
        format!("this run expects {} and has {them}; it takes no more", agents(expected))
    } else {
        format!(
            "this run expected {} and started with the {joined} that joined within --agents-wait; it takes no more",
            agents(expected)
        )
    }
}

/// Late agents refused at once at most; one past them is dropped unanswered
/// (it took the link for a silent coordinator's, and says so).
const REFUSING_AT_ONCE: usize = 32;

/// Answers every agent that connects to `listener` (after the run took its
/// agents) with a refusal for `reason`, up to [`REFUSING_AT_ONCE`] at once,
/// each bounded by the handshake and a close, so one that connects and says
/// nothing holds up no other; runs until aborted (the refusals under way
/// with it).
async fn refuse_latecomers(listener: TcpListener, reason: String, silence: Duration) {
    let mut refusing = tokio::task::JoinSet::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            Some(_) = refusing.join_next(), if !refusing.is_empty() => continue,
        };
        let (tcp, address) = match accepted {
            Ok(a) => a,
            Err(e) => {
                tracing::warn!("accepting a late agent: {e}");
                // Out of descriptors, say: not a busy loop meanwhile.
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        if refusing.len() >= REFUSING_AT_ONCE {
            tracing::warn!("{address} connected after the agents were gathered, with {REFUSING_AT_ONCE} others being refused: dropped");
            continue;
        }
        refusing.spawn(refuse(tcp, address, reason.clone(), silence));
    }
}

/// Refuses one late agent for `reason`.
async fn refuse(tcp: TcpStream, address: SocketAddr, reason: String, silence: Duration) {
    match handshake(tcp, silence).await {
        Ok((link, hello)) => {
            eprintln!("agent {} from {address} refused: {reason}", hello.name);
            let _ = link.send(Order::Refuse { reason }).await;
            link.close(CLOSE_WAIT).await;
        }
        Err(e) => tracing::warn!("{address} connected after the agents were gathered: {e}"),
    }
}

/// The status of an agent whose link ended so.
fn status_of(end: &LinkEnd) -> AgentStatus {
    match end {
        LinkEnd::Silent(_) => AgentStatus::Silent,
        LinkEnd::Malformed(_) => AgentStatus::Failed,
        LinkEnd::Closed | LinkEnd::Broken(_) | LinkEnd::Dropped => AgentStatus::Died,
    }
}

/// `name`, or `name-2`, `name-3`, ... if taken.
fn unique(name: &str, taken: &[String]) -> String {
    let mut candidate = name.to_owned();
    let mut n = 1;
    while taken.contains(&candidate) {
        n += 1;
        candidate = format!("{name}-{n}");
    }
    candidate
}

/// The websocket handshake and the agent's Hello, bounded by [`HANDSHAKE`] each.
async fn handshake(tcp: TcpStream, silence: Duration) -> Result<(Link<Order, Answer>, Hello), String> {
    let _ = tcp.set_nodelay(true);
    let ws = tokio::time::timeout(HANDSHAKE, tokio_tungstenite::accept_async(tcp))
        .await
        .map_err(|_| format!("no websocket handshake within {HANDSHAKE:?}"))?
        .map_err(|e| format!("websocket handshake: {e}"))?;
    let mut link = Link::start(ws, silence);
    match tokio::time::timeout(HANDSHAKE, link.recv()).await {
        Ok(Ok(Answer::Hello(hello))) => Ok((link, hello)),
        Ok(Ok(other)) => Err(format!("{} before hello", other.label())),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no hello within {HANDSHAKE:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_late_agent_is_told_the_run_has_its_agents() {
        assert_eq!(full(1, 1), "this run expects 1 agent and has it; it takes no more");
        assert_eq!(full(3, 3), "this run expects 3 agents and has them all; it takes no more");
        assert!(
            full(3, 2).starts_with("this run expected 3 agents and started with the 2 that joined"),
            "{}",
            full(3, 2)
        );
    }

    #[test]
    fn names_are_made_unique() {
        let taken = vec!["a".to_string(), "a-2".to_string()];
        assert_eq!(unique("a", &taken), "a-3");
        assert_eq!(unique("b", &taken), "b");
    }
}
