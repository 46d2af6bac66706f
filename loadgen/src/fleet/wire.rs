//! The messages between the coordinator and its agents (JSON, one a text
//! frame of the [`link`](super::link)): the coordinator gives [`Order`]s,
//! each agent gives one [`Answer`] to each order except `stop` and `bye`.

use super::share::Share;
use crate::meter::Usage;
use crate::profile::ProfileName;
use crate::reconnect::ReconnectPolicy;
use crate::report::aoi::BotBytes;
use crate::stats::EncodedWindow;
use crate::steer::Movement;
use crate::swarm::{Census, Converged};
use crate::world::World;
use serde::{Deserialize, Serialize};

/// The protocol's version: a coordinator refuses an agent of another.
/// Raised whenever a message changes shape (including the failure kinds and
/// tallies an [`EncodedWindow`] carries as arrays, and the run plan: 3 added
/// its `frames`, which an agent of 2 would ignore; 4 the observers' bytes by
/// part, ten tallies more; 5 the implied cells of protocol 7, two more).
pub const PROTOCOL: u32 = 5;

/// An agent's first message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    /// The agent's [`PROTOCOL`].
    pub protocol: u32,
    /// Its name (`--name`, default: host name and process id).
    pub name: String,
    /// Its machine's host name: agents of one host share its cores.
    pub host: String,
    /// Cores it may use.
    pub cores: usize,
}

/// What every agent of a run needs to know (the coordinator's options).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunPlan {
    /// The scenario's name, for the agents' logs.
    pub scenario: String,
    /// The targets (as the agents must reach them).
    pub urls: Vec<String>,
    /// Bound on connecting, and again on waiting for Welcome, ms.
    pub join_timeout_ms: u64,
    /// Bot names are this prefix plus the bot's run-wide index.
    pub name_prefix: String,
    /// The run's random seed (bot `i`'s seed derives from it and `i`).
    pub seed: u64,
    /// Where the bots walk.
    pub movement: Movement,
    /// The world of the coordinator's probe, if it probed.
    pub world: Option<World>,
    /// `--density`, if given.
    pub density: Option<f64>,
    /// `--transport`: how the bots reach the shards (bot `i`'s by its
    /// run-wide index); absent from an older coordinator: websockets.
    #[serde(default)]
    pub transport: crate::transport::Transports,
    /// `--frames`: what view frames the bots ask for in their Hello (the
    /// control of a delta measurement takes full frames); absent from an
    /// older coordinator: deltas.
    #[serde(default)]
    pub frames: crate::client::Frames,
}

/// Coordinator to agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "order", rename_all = "snake_case")]
pub enum Order {
    /// The answer to Hello: the agent's share and the run. Answer: `ready`
    /// or `failed`.
    Assign {
        /// Which bots are this agent's.
        share: Share,
        /// The run.
        plan: RunPlan,
        /// The coordinator's wall clock when it sent this, ms since the Unix
        /// epoch: the agent's offset to it converts the start times of ramps.
        coordinator_unix_ms: u64,
    },
    /// The agent is not taken (another protocol version, the run started).
    Refuse {
        /// Why.
        reason: String,
    },
    /// Start an empty swarm of bots that behave so (the previous one is
    /// shut down first). Answer: `done`.
    Swarm {
        /// Their profile.
        profile: ProfileName,
        /// Their reconnect policy.
        policy: ReconnectPolicy,
    },
    /// Ramp the run from `from` to `to` bots at `rate` bots/s, starting at
    /// `start_unix_ms` on the coordinator's clock: the agent starts its own
    /// share (see [`Share::ramp`]). Answer: `ramped`.
    Ramp {
        /// The run's bots before the ramp.
        from: usize,
        /// The run's bots after it.
        to: usize,
        /// The run's join rate, bots/s (0: all at once).
        rate: f64,
        /// When the ramp starts, ms since the Unix epoch, coordinator's clock.
        start_unix_ms: u64,
    },
    /// Wait until no bot is joining (bounded by twice the join timeout plus
    /// a second). Answer: `settled`.
    Settle,
    /// Wait until the bots stand where the plan wants them, at most
    /// `limit_ms` (default: the time to walk the world's diagonal plus 5 s).
    /// Answer: `placed`.
    Converge {
        /// The progress label.
        label: String,
        /// The bound, ms.
        limit_ms: Option<u64>,
    },
    /// Count the bots standing where the plan wants them now. Answer: `placed`.
    Placed,
    /// End the current measurement window and start the next. Answer: `window`.
    Window,
    /// End the current window (the ramp's), measure a hold of `ms`, and
    /// answer `held` with both windows and what the hold cost the agent.
    Hold {
        /// The hold, ms.
        ms: u64,
        /// The progress label.
        label: String,
    },
    /// Which shards the bots have seen, and the Welcomes' tick rate. Answer: `shards`.
    Shards,
    /// Stop every bot of the swarm (politely, bounded). Answer: `done`.
    Shutdown,
    /// The run is being stopped early: end the current ramp, wait or hold
    /// now and answer what it has. No answer of its own.
    Stop,
    /// The run is over: the agent leaves. No answer.
    Bye,
}

impl Order {
    /// What the order does, for reports ("during ...") and logs.
    pub fn label(&self) -> String {
        match self {
            Order::Assign { .. } => "start".into(),
            Order::Refuse { .. } => "refusal".into(),
            Order::Swarm { profile, .. } => format!("swarm ({})", profile.as_str()),
            Order::Ramp { to, .. } => format!("ramp to {to}"),
            Order::Settle => "settle".into(),
            Order::Converge { label, .. } => label.clone(),
            Order::Placed => "placement".into(),
            Order::Window => "window".into(),
            Order::Hold { label, .. } => label.clone(),
            Order::Shards => "shards".into(),
            Order::Shutdown => "shutdown".into(),
            Order::Stop => "stop".into(),
            Order::Bye => "bye".into(),
        }
    }
}

/// What an agent measured over a hold (see [`Order::Hold`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HoldParts {
    /// The window before the hold (the ramp and settle).
    pub ramp: EncodedWindow,
    /// The hold's window.
    pub hold: EncodedWindow,
    /// The agent's CPU over the hold (`servers` empty: the coordinator reads those).
    pub usage: Usage,
    /// Its bots by state at the end.
    pub census: Census,
    /// What each of its bots connected throughout the hold received in it.
    pub per_bot: Vec<BotBytes>,
    /// Its bots standing where the plan wants them at the end.
    pub placed: Converged,
    /// The tick rate of its Welcomes, Hz (0: none yet).
    pub tick_hz: u16,
}

/// Agent to coordinator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum Answer {
    /// The first message.
    Hello(Hello),
    /// Assigned: the targets resolved and the local limits raised.
    Ready {
        /// The agent's wall clock minus the coordinator's (plus the one-way
        /// delay of the assignment), ms.
        clock_offset_ms: f64,
        /// What its local limits allow, in words.
        limits: String,
    },
    /// The order could not be carried out (e.g. a target that does not
    /// resolve from the agent); the agent leaves.
    Failed {
        /// Why.
        reason: String,
    },
    /// Done (`swarm`, `shutdown`).
    Done,
    /// The ramp is done (`complete` false: stopped early).
    Ramped {
        /// The agent's bots now.
        bots: usize,
        /// False when the run was stopped during the ramp.
        complete: bool,
    },
    /// Settled (`complete` false: some bots were still joining at the bound).
    Settled {
        /// False when the bound passed first.
        complete: bool,
    },
    /// How many of the agent's bots stand where they should.
    Placed(Converged),
    /// The window just ended.
    Window(Box<EncodedWindow>),
    /// The hold.
    Held(Box<HoldParts>),
    /// The shards seen and the tick rate.
    Shards {
        /// Shard ids seen in snapshots.
        ids: Vec<u32>,
        /// The Welcomes' tick rate, Hz (0: none yet).
        tick_hz: u16,
    },
}

impl Answer {
    /// The answer's name, for logs.
    pub fn label(&self) -> &'static str {
        match self {
            Answer::Hello(_) => "hello",
            Answer::Ready { .. } => "ready",
            Answer::Failed { .. } => "failed",
            Answer::Done => "done",
            Answer::Ramped { .. } => "ramped",
            Answer::Settled { .. } => "settled",
            Answer::Placed(_) => "placed",
            Answer::Window(_) => "window",
            Answer::Held(_) => "held",
            Answer::Shards { .. } => "shards",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_and_answers_read_back_as_sent() {
        let orders = [
            Order::Ramp { from: 0, to: 600, rate: 200.0, start_unix_ms: 1_700_000_000_000 },
            Order::Swarm { profile: ProfileName::Idle, policy: ReconnectPolicy::single_attempt() },
            Order::Hold { ms: 20_000, label: "hold 600".into() },
            Order::Stop,
        ];
        for o in orders {
            let text = serde_json::to_string(&o).expect("json");
            assert_eq!(serde_json::from_str::<Order>(&text).expect("parses"), o, "{text}");
        }
        let ramp = serde_json::to_value(Order::Ramp { from: 1, to: 2, rate: 3.0, start_unix_ms: 4 }).expect("json");
        assert_eq!(ramp["order"], "ramp", "tagged by name: {ramp}");
        let a = Answer::Ramped { bots: 200, complete: true };
        let text = serde_json::to_string(&a).expect("json");
        assert_eq!(serde_json::from_str::<Answer>(&text).expect("parses"), a);
        assert!(serde_json::from_str::<Answer>(r#"{"answer":"launch_missiles"}"#).is_err());
    }
}
