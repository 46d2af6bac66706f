//! What a run spread over agents adds to its report: each phase's figures
//! per agent ([`AgentFigures`], in `Measured::agents`), and the run's agents
//! ([`FleetReport`], the report's `fleet` object): who came, who never did,
//! who was lost and when. A run in one process has neither.

use super::round2;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// Where an agent stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentStatus {
    /// Taking orders.
    Running,
    /// Stayed to the end of the run.
    Finished,
    /// Its connection closed or broke: the process ended (killed, crashed,
    /// stopped) or its machine dropped it.
    Died,
    /// Nothing heard within the silence bound, or no answer to an order
    /// within its deadline: dropped by the coordinator.
    Silent,
    /// It could not carry out an order (e.g. a target that does not resolve
    /// from its machine), or sent what could not be read.
    Failed,
}

impl AgentStatus {
    /// The status's name in reports.
    pub fn label(self) -> &'static str {
        match self {
            AgentStatus::Running => "running",
            AgentStatus::Finished => "finished",
            AgentStatus::Died => "died",
            AgentStatus::Silent => "silent",
            AgentStatus::Failed => "failed",
        }
    }

    /// True while (or when) the agent reports.
    pub fn is_live(self) -> bool {
        matches!(self, AgentStatus::Running | AgentStatus::Finished)
    }
}

/// One agent of the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentEntry {
    /// Its name (unique in the run).
    pub name: String,
    /// Its machine's host name.
    pub host: String,
    /// Cores it may use.
    pub cores: usize,
    /// Where it connected from.
    pub address: String,
    /// Its position among the agents: it runs the bots `i` with
    /// `i % agents == agent`.
    pub agent: usize,
    /// Its wall clock minus the coordinator's (plus the one-way delay), ms.
    pub clock_offset_ms: f64,
    /// Where it stands.
    pub status: AgentStatus,
    /// The order during which it was lost (None: not lost).
    pub lost_during: Option<String>,
    /// Why it was lost.
    pub reason: Option<String>,
}

/// The run's agents.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FleetReport {
    /// The coordinator's listening address.
    pub coordinator: String,
    /// Agents asked for (`--agents`).
    pub expected: usize,
    /// Agents that joined before the run started: the bots were shared
    /// among these.
    pub joined: usize,
    /// Agents asked for that never joined (their bots went to the others).
    pub never_joined: usize,
    /// Agents that stayed to the end.
    pub finished: usize,
    /// Every agent that joined.
    pub agents: Vec<AgentEntry>,
}

/// Whether an agent's figures of a phase count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AgentVerdict {
    /// Its host's agents stayed at or under the CPU limit.
    #[serde(rename = "measured")]
    Measured,
    /// Its host's agents passed the CPU limit.
    #[serde(rename = "not judgeable")]
    NotJudgeable,
    /// No figures from it for this phase.
    #[serde(rename = "lost")]
    Lost,
}

impl AgentVerdict {
    /// [`AgentVerdict::Measured`] when `judgeable`.
    pub fn of(judgeable: bool) -> AgentVerdict {
        if judgeable {
            AgentVerdict::Measured
        } else {
            AgentVerdict::NotJudgeable
        }
    }

    /// The verdict as reports write it.
    pub fn label(self) -> &'static str {
        match self {
            AgentVerdict::Measured => "measured",
            AgentVerdict::NotJudgeable => "not judgeable",
            AgentVerdict::Lost => "lost",
        }
    }
}

/// One agent's part of a measured phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentFigures {
    /// The agent's name.
    pub name: String,
    /// Its machine's host name.
    pub host: String,
    /// Its bots at the end of the phase (0 when lost).
    pub bots: usize,
    /// Of those, connected.
    pub connected: usize,
    /// Its CPU over the hold, percent of its cores.
    pub loadgen_cpu_pct: f64,
    /// The CPU of every agent on its host over the hold, percent of the
    /// host's cores: what its verdict is judged by (agents of one machine
    /// share its cores).
    pub host_loadgen_cpu_pct: f64,
    /// Its machine's busy share over the hold, percent.
    pub machine_cpu_pct: f64,
    /// False when its host's agents passed the CPU limit, or it was lost.
    pub judgeable: bool,
    /// Whether its figures count.
    pub verdict: AgentVerdict,
    /// Where it stands at the end of the phase.
    pub status: AgentStatus,
}

impl AgentFigures {
    /// An agent that gave no figures for the phase.
    pub fn lost(entry: &AgentEntry) -> AgentFigures {
        AgentFigures {
            name: entry.name.clone(),
            host: entry.host.clone(),
            bots: 0,
            connected: 0,
            loadgen_cpu_pct: 0.0,
            host_loadgen_cpu_pct: 0.0,
            machine_cpu_pct: 0.0,
            judgeable: false,
            verdict: AgentVerdict::Lost,
            status: entry.status,
        }
    }

    /// Rounds the percentages for the report.
    pub fn rounded(mut self) -> AgentFigures {
        self.loadgen_cpu_pct = round2(self.loadgen_cpu_pct);
        self.host_loadgen_cpu_pct = round2(self.host_loadgen_cpu_pct);
        self.machine_cpu_pct = round2(self.machine_cpu_pct);
        self
    }
}

/// The per-agent lines of a phase.
pub fn agent_lines(out: &mut String, agents: &[AgentFigures]) {
    for a in agents {
        let _ = writeln!(
            out,
            "  agent {:<16} {:>6} bots ({} connected), cpu {:.1} % (host {}: {:.1} %), machine {:.1} %: {}",
            a.name,
            a.bots,
            a.connected,
            a.loadgen_cpu_pct,
            a.host,
            a.host_loadgen_cpu_pct,
            a.machine_cpu_pct,
            a.verdict.label()
        );
    }
}

/// The run's agents, as text.
pub fn fleet_lines(f: &FleetReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "agents: {} asked for, {} joined, {} never joined, {} stayed to the end (coordinator {})",
        f.expected, f.joined, f.never_joined, f.finished, f.coordinator
    );
    for a in &f.agents {
        let lost = match (&a.lost_during, &a.reason) {
            (Some(during), Some(reason)) => format!(" during {during}: {reason}"),
            (Some(during), None) => format!(" during {during}"),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "  {:<16} #{} {} ({} cores, from {}, clock {:+.0} ms): {}{lost}",
            a.name,
            a.agent,
            a.host,
            a.cores,
            a.address,
            a.clock_offset_ms,
            a.status.label()
        );
    }
    out
}
