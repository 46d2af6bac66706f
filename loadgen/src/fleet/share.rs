//! Which bots an agent runs: agent `k` of `n` runs the bots whose run-wide
//! index `i` has `i % n == k` (interleaved, so that the first `m` bots of a
//! run, for any `m`, are spread evenly over the agents, step after step), at
//! `1/n` of the run's join rate, each bot joining when it would have in one
//! process.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Agent `agent` of `agents` (0-based, `agent < agents`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Share {
    /// This agent's position among the agents.
    pub agent: usize,
    /// Agents the run was shared among (at its start).
    pub agents: usize,
}

/// What one agent does of a ramp of the whole run from `from` to `to`
/// bots at `rate` bots/s (see [`Share::ramp`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RampShare {
    /// The agent's bots once the ramp is done.
    pub to: usize,
    /// Its join rate, bots/s (infinite: all at once).
    pub rate: f64,
    /// When its first new bot joins, after the ramp's start.
    pub delay: Duration,
}

impl Share {
    /// The only agent: every bot.
    pub const ALONE: Share = Share { agent: 0, agents: 1 };

    /// How many of the run's first `n` bots are this agent's.
    pub fn count(&self, n: usize) -> usize {
        (n + self.agents - 1 - self.agent) / self.agents
    }

    /// The run-wide index of this agent's `local`-th bot.
    pub fn global(&self, local: usize) -> usize {
        local * self.agents + self.agent
    }

    /// This agent's part of a ramp from `from` to `to` bots at `rate`
    /// bots/s: bot `i` joins `(i - from) / rate` after the ramp's start, as
    /// in one process.
    pub fn ramp(&self, from: usize, to: usize, rate: f64) -> RampShare {
        let rate = if rate > 0.0 { rate } else { f64::INFINITY };
        let first = self.global(self.count(from));
        RampShare {
            to: self.count(to),
            rate: rate / self.agents as f64,
            delay: Duration::try_from_secs_f64((first - from) as f64 / rate).unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_every_bot_once() {
        for agents in 1..=4 {
            for n in 0..=13 {
                let shares: Vec<Share> = (0..agents).map(|agent| Share { agent, agents }).collect();
                assert_eq!(shares.iter().map(|s| s.count(n)).sum::<usize>(), n, "{agents} agents, {n} bots");
                let mut all: Vec<usize> = shares.iter().flat_map(|s| (0..s.count(n)).map(|j| s.global(j))).collect();
                all.sort_unstable();
                assert_eq!(all, (0..n).collect::<Vec<_>>());
            }
        }
        assert_eq!(Share::ALONE.count(600), 600);
        assert_eq!((Share { agent: 1, agents: 3 }).count(600), 200);
    }

    #[test]
    fn a_ramp_joins_each_bot_when_one_process_would() {
        // 3 agents, from 5 to 11 bots at 10/s: bot 5 (agent 2) at 0 s, bot 6
        // (agent 0) at 0.1 s, bot 7 (agent 1) at 0.2 s, then every 0.3 s each.
        let r = |agent| Share { agent, agents: 3 }.ramp(5, 11, 10.0);
        assert_eq!((r(2).to, r(2).delay), (3, Duration::ZERO), "bots 2, 5, 8");
        assert_eq!((r(0).to, r(0).delay.as_millis()), (4, 100), "bots 0, 3, 6, 9");
        assert_eq!((r(1).to, r(1).delay.as_millis()), (4, 200), "bots 1, 4, 7, 10");
        assert!((r(0).rate - 10.0 / 3.0).abs() < 1e-9);
        let all_at_once = Share { agent: 1, agents: 2 }.ramp(0, 4, 0.0);
        assert_eq!((all_at_once.to, all_at_once.delay, all_at_once.rate), (2, Duration::ZERO, f64::INFINITY));
    }
}
