//! How a bot reaches its shard: a websocket (TCP, the browser's fallback) or
//! a WebTransport session (HTTP/3 over QUIC on UDP: the websocket's messages
//! on one reliable stream, view frames as datagrams), and how a run's bots
//! are split between them (`--transport websocket|webtransport|mix`).

use serde::{Deserialize, Serialize};

/// One bot's transport.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// A websocket (`ws://` or `wss://`): every message on one TCP stream.
    #[default]
    #[serde(rename = "websocket")]
    WebSocket,
    /// A WebTransport session to the shard's `--webtransport-listen`
    /// address, learnt from its `/webtransport` offer.
    #[serde(rename = "webtransport")]
    WebTransport,
}

impl Transport {
    /// Both, in report order.
    pub const ALL: [Transport; 2] = [Transport::WebSocket, Transport::WebTransport];

    /// The name in reports, logs and on the command line.
    pub fn label(self) -> &'static str {
        match self {
            Transport::WebSocket => "websocket",
            Transport::WebTransport => "webtransport",
        }
    }

    /// Position in [`Transport::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// Which transport a run's bots take (`--transport`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transports {
    /// Every bot on a websocket.
    #[default]
    Websocket,
    /// Every bot on WebTransport.
    Webtransport,
    /// Half each, by the bot's place in its share (its process's bots: all
    /// of them in one process, an agent's share over agents): even on a
    /// websocket, odd on WebTransport, so every ramp, and every agent's share
    /// of 2 or more bots, holds both; the report gives each transport's
    /// figures apart.
    Mix,
}

impl Transports {
    /// The transport of the bot at `local` in its share (see
    /// [`Transports::Mix`]; one process: its run-wide index).
    pub fn of_bot(self, local: usize) -> Transport {
        match self {
            Transports::Websocket => Transport::WebSocket,
            Transports::Webtransport => Transport::WebTransport,
            Transports::Mix if local.is_multiple_of(2) => Transport::WebSocket,
            Transports::Mix => Transport::WebTransport,
        }
    }

    /// Where the bot of run-wide number `index`, at `local` in a share whose
    /// first bot is number `first`, starts in the list of targets (then
    /// `% targets`): its index, or in a mix `first + local / 2`, so that
    /// both transports reach every target (by parity alone, with two
    /// targets every websocket bot would start on the first and every
    /// WebTransport bot on the second, and the transports' figures would
    /// compare shards). One process: `first` 0, `local` the index.
    pub fn target_slot(self, index: usize, first: usize, local: usize) -> usize {
        match self {
            Transports::Mix => first + local / 2,
            Transports::Websocket | Transports::Webtransport => index,
        }
    }

    /// True when the bots may use `t`.
    pub fn uses(self, t: Transport) -> bool {
        match self {
            Transports::Websocket => t == Transport::WebSocket,
            Transports::Webtransport => t == Transport::WebTransport,
            Transports::Mix => true,
        }
    }

    /// True when the run splits its bots (and reports each part).
    pub fn is_mix(self) -> bool {
        self == Transports::Mix
    }

    /// The name on the command line.
    pub fn label(self) -> &'static str {
        match self {
            Transports::Websocket => "websocket",
            Transports::Webtransport => "webtransport",
            Transports::Mix => "mix",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix_alternates_and_the_others_are_one_transport() {
        let mixed: Vec<Transport> = (0..4).map(|i| Transports::Mix.of_bot(i)).collect();
        let (ws, wt) = (Transport::WebSocket, Transport::WebTransport);
        assert_eq!(mixed, [ws, wt, ws, wt]);
        assert!((0..5).all(|i| Transports::Websocket.of_bot(i) == ws));
        assert!((0..5).all(|i| Transports::Webtransport.of_bot(i) == wt));
        assert!(Transports::Mix.uses(ws) && Transports::Mix.uses(wt) && !Transports::Websocket.uses(wt));
    }

    #[test]
    fn in_a_mix_both_transports_start_on_every_target() {
        for targets in 1..=4 {
            let mut reached = std::collections::BTreeSet::new();
            for bot in 0..4 * targets {
                let first = crate::target::pick(targets, Transports::Mix.target_slot(bot, 0, bot), 0);
                reached.insert((Transports::Mix.of_bot(bot), first));
            }
            assert_eq!(reached.len(), 2 * targets, "{targets} targets: {reached:?}");
        }
        assert_eq!(Transports::Websocket.target_slot(5, 1, 2), 5);
    }

    #[test]
    fn over_agents_every_share_holds_both_transports_on_every_target() {
        // Agent k of n runs the bots k, k + n, k + 2n, ...: by the run-wide
        // index's parity, with 2 agents one ran only websockets and the other
        // only WebTransport (an outside trial).
        for agents in 1..=4 {
            for k in 0..agents {
                for targets in 1..=2 {
                    let mut reached = std::collections::BTreeSet::new();
                    for local in 0..8 * targets {
                        let index = k + local * agents;
                        let slot = Transports::Mix.target_slot(index, k, local);
                        reached.insert((Transports::Mix.of_bot(local), crate::target::pick(targets, slot, 0)));
                    }
                    assert_eq!(reached.len(), 2 * targets, "agent {k} of {agents}, {targets} targets: {reached:?}");
                }
            }
        }
    }

    #[test]
    fn labels_match_the_json_names() {
        for t in Transport::ALL {
            assert_eq!(serde_json::to_value(t).expect("json"), serde_json::json!(t.label()));
            assert_eq!(Transport::ALL[t.index()], t);
        }
        for t in [Transports::Websocket, Transports::Webtransport, Transports::Mix] {
            assert_eq!(serde_json::to_value(t).expect("json"), serde_json::json!(t.label()));
        }
    }
}
