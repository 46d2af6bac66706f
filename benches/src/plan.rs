//! What a scale run measures: the sections it runs and, for each, its
//! player counts, holds and repeats, by mode (full or quick), with the
//! command line's overrides. The plan is a value: sections read it, nothing
//! else decides their sizes.

use crate::section::Section;
use std::time::Duration;

/// How long and how thoroughly a run measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Every step, long holds, repeated rows (about an hour and a quarter on
    /// 2 cores for all 13 sections: benches/README.md, "How long").
    Full,
    /// Fewer steps, short holds, no repeats (untimed since the runner grew
    /// past six sections, when it took about 3 minutes).
    Quick,
}

impl Mode {
    /// As `run.tsv` and RESULTS.md name it.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Full => "full",
            Mode::Quick => "quick",
        }
    }
}

/// Sections 1 to 3: steps of players on one shard, then on two.
#[derive(Clone, Debug, PartialEq)]
pub struct Steps {
    /// One shard's steps, players.
    pub one: Vec<u32>,
    /// Two shards' steps, players.
    pub two: Vec<u32>,
    /// Each step's hold.
    pub hold: Duration,
    /// Settling before each hold.
    pub settle: Duration,
    /// Joins a second.
    pub ramp: u32,
}

/// Section 7: batched against unbatched writes.
#[derive(Clone, Debug, PartialEq)]
pub struct Control {
    /// Player counts, each a batched/unbatched pair a repeat.
    pub bots: Vec<u32>,
    /// Each run's length.
    pub hold: Duration,
}

/// Section 4: idle websockets.
#[derive(Clone, Debug, PartialEq)]
pub struct Idle {
    /// Sizes, websockets (the largest also with glibc's malloc).
    pub sizes: Vec<u32>,
    /// The hold.
    pub hold: Duration,
}

/// Section 6: a shard killed, then drained.
#[derive(Clone, Debug, PartialEq)]
pub struct Failover {
    /// Bots.
    pub bots: u32,
    /// Observed after the signal.
    pub observe: Duration,
}

/// Section 5: arrivals.
#[derive(Clone, Debug, PartialEq)]
pub struct Arrivals {
    /// Bots arriving.
    pub bots: u32,
    /// Arrivals a second.
    pub rate: u32,
}

/// Section 9: area of interest.
#[derive(Clone, Debug, PartialEq)]
pub struct Aoi {
    /// Player counts.
    pub players: Vec<u32>,
    /// Players a cell, the world sized to make it at each count.
    pub density: f64,
    /// The control rows (whole-shard snapshots) run up to this count.
    pub off_max: u32,
    /// Each run's length.
    pub hold: Duration,
}

/// Cells of the area-of-interest runs, world units.
pub const AOI_CELL: u32 = 100;

/// Their view radius, cells (the server's default).
pub const AOI_RADIUS_CELLS: u32 = 4;

/// Section 9's crowd.
#[derive(Clone, Debug, PartialEq)]
pub struct Crowd {
    /// Bots.
    pub bots: u32,
    /// The hold, everyone gathered.
    pub hold: Duration,
}

/// Section 11: Redis beyond one node.
#[derive(Clone, Debug, PartialEq)]
pub struct Redis {
    /// Bots when a primary is killed.
    pub failover_bots: u32,
    /// Player counts of the load on each primary.
    pub spread: Vec<u32>,
}

/// Section 12: through nginx.
#[derive(Clone, Debug, PartialEq)]
pub struct Nginx {
    /// Bots.
    pub bots: u32,
    /// The measured window.
    pub hold: Duration,
    /// The upstream kinds, alternating.
    pub upstreams: Vec<Upstream>,
    /// The bots straight to the shards (nginx idles): the run without the proxy.
    pub direct: bool,
}

/// How nginx reaches the shards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Upstream {
    /// 127.0.0.1 ports.
    Tcp,
    /// Unix sockets.
    Unix,
}

impl Upstream {
    /// `tcp` or `unix`.
    pub fn label(self) -> &'static str {
        match self {
            Upstream::Tcp => "tcp",
            Upstream::Unix => "unix",
        }
    }
}

/// Section 14: the peer, side by side.
#[derive(Clone, Debug, PartialEq)]
pub struct Peer {
    /// Player counts.
    pub players: Vec<u32>,
    /// Each run's hold.
    pub hold: Duration,
    /// Joins a second.
    pub ramp: u32,
}

/// Section 15: shared delta frames against full frames (issue 25).
#[derive(Clone, Debug, PartialEq)]
pub struct Deltas {
    /// Walkers of the area-of-interest and whole-shard runs.
    pub walkers: u32,
    /// The crowd standing in one cell.
    pub crowd: u32,
    /// Each run's hold.
    pub hold: Duration,
    /// Players of the trace of the walk game (`delta_trace walk`).
    pub trace_walk: u32,
    /// Players of the crowd's trace (`delta_trace crowd`).
    pub trace_crowd: u32,
}

/// Section 16: WebTransport beside the websocket (issue 28).
#[derive(Clone, Debug, PartialEq)]
pub struct WebTransport {
    /// Walkers on the one shard: 500, not the 1,000, on this 2-core
    /// shared machine: 1,000 WebTransport bots joining at 100 a second got
    /// 630 welcomed (the rest timed out connecting: the loadgen's 1,000 QUIC
    /// endpoints and the shard's handshakes on cores other sessions kept
    /// busy, load 6 to 8); 500 at 50 a second, 499.
    pub bots: u32,
    /// The measured window.
    pub hold: Duration,
    /// The kinds of run, rotating their order each repeat.
    pub kinds: Vec<WtKind>,
}

/// How section 16's bots reach the shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum WtKind {
    /// WebTransport sessions to the shard's UDP port.
    Webtransport,
    /// Websockets straight to the shard (plain TCP, no encryption).
    Websocket,
    /// Websockets through nginx with TLS (both encrypt, as WebTransport's QUIC does).
    WebsocketNginx,
}

impl WtKind {
    /// As the runs' folders and RESULTS.md name it.
    pub fn label(self) -> &'static str {
        match self {
            WtKind::Webtransport => "webtransport",
            WtKind::Websocket => "websocket",
            WtKind::WebsocketNginx => "websocket-nginx",
        }
    }
}

/// The share of the crowd's trace taking a step now and then.
pub const TRACE_SHUFFLE: f64 = 0.05;

/// A whole run.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Full or quick.
    pub mode: Mode,
    /// The sections run, in order.
    pub sections: Vec<Section>,
    /// Runs of the repeated rows (control, idle, redis, nginx, peer, deltas,
    /// webtransport).
    pub repeat: u32,
    /// Sections 1 to 3.
    pub steps: Steps,
    /// Section 7.
    pub control: Control,
    /// Section 4.
    pub idle: Idle,
    /// Section 6.
    pub failover: Failover,
    /// Section 5.
    pub arrivals: Arrivals,
    /// Section 9.
    pub aoi: Aoi,
    /// Section 9's crowd.
    pub crowd: Crowd,
    /// Section 11.
    pub redis: Redis,
    /// Section 12.
    pub nginx: Nginx,
    /// Section 14.
    pub peer: Peer,
    /// Section 15.
    pub deltas: Deltas,
    /// Section 16.
    pub webtransport: WebTransport,
    /// `cargo bench` options of section 8.
    pub criterion_args: Vec<String>,
    /// Between two samples of the server side.
    pub sample_interval: Duration,
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

impl Plan {
    /// The plan of `mode`, every section.
    pub fn of(mode: Mode) -> Plan {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect();
        let both = vec![Upstream::Tcp, Upstream::Unix];
        let wt_kinds = vec![WtKind::Webtransport, WtKind::Websocket, WtKind::WebsocketNginx];
        match mode {
            Mode::Quick => Plan {
                mode,
                sections: Section::ALL.to_vec(),
                repeat: 1,
                steps: Steps {
                    one: vec![100, 500, 1000],
                    two: vec![100, 500, 1000],
                    hold: secs(6),
                    settle: secs(2),
                    ramp: 250,
                },
                control: Control { bots: vec![1000], hold: secs(6) },
                idle: Idle { sizes: vec![1000], hold: secs(5) },
                failover: Failover { bots: 500, observe: secs(10) },
                arrivals: Arrivals { bots: 1000, rate: 250 },
                aoi: Aoi { players: vec![1000, 2500], density: 4.0, off_max: 1000, hold: secs(6) },
                crowd: Crowd { bots: 500, hold: secs(6) },
                redis: Redis { failover_bots: 500, spread: vec![1000] },
                nginx: Nginx { bots: 1000, hold: secs(10), upstreams: both, direct: false },
                peer: Peer { players: vec![100, 250], hold: secs(10), ramp: 100 },
                deltas: Deltas { walkers: 1000, crowd: 500, hold: secs(6), trace_walk: 1000, trace_crowd: 2000 },
                webtransport: WebTransport { bots: 300, hold: secs(8), kinds: wt_kinds.clone() },
                criterion_args: args(&["--warm-up-time", "0.5", "--measurement-time", "1", "--sample-size", "10"]),
                sample_interval: Duration::from_millis(500),
            },
            Mode::Full => Plan {
                mode,
                sections: Section::ALL.to_vec(),
                repeat: 3,
                steps: Steps {
                    one: vec![100, 250, 500, 1000, 1500, 2000, 2500, 3000],
                    two: vec![100, 250, 500, 1000, 1500, 2000],
                    hold: secs(15),
                    settle: secs(2),
                    ramp: 250,
                },
                control: Control { bots: vec![1000, 2000], hold: secs(12) },
                idle: Idle { sizes: vec![2000, 15000], hold: secs(8) },
                failover: Failover { bots: 500, observe: secs(15) },
                arrivals: Arrivals { bots: 2500, rate: 280 },
                aoi: Aoi { players: vec![1000, 2500, 5000, 7500, 10000], density: 4.0, off_max: 2000, hold: secs(15) },
                crowd: Crowd { bots: 2000, hold: secs(20) },
                redis: Redis { failover_bots: 1000, spread: vec![1000, 5000] },
                nginx: Nginx { bots: 1000, hold: secs(30), upstreams: both, direct: false },
                peer: Peer { players: vec![100, 250, 500], hold: secs(20), ramp: 100 },
                deltas: Deltas { walkers: 1000, crowd: 2000, hold: secs(15), trace_walk: 1000, trace_crowd: 2000 },
                webtransport: WebTransport { bots: 500, hold: secs(15), kinds: wt_kinds },
                criterion_args: args(&["--warm-up-time", "1", "--measurement-time", "3"]),
                sample_interval: Duration::from_millis(500),
            },
        }
    }

    /// Whether `section` runs.
    pub fn runs(&self, section: Section) -> bool {
        self.sections.contains(&section)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_is_smaller_than_full_everywhere() {
        let (q, f) = (Plan::of(Mode::Quick), Plan::of(Mode::Full));
        assert!(q.repeat < f.repeat && q.steps.hold < f.steps.hold && q.aoi.players.len() < f.aoi.players.len());
        assert_eq!(f.sections, Section::ALL);
        assert!(f.runs(Section::Peer) && f.aoi.off_max < *f.aoi.players.last().expect("counts"));
        assert!(f.runs(Section::Deltas) && q.deltas.hold < f.deltas.hold && q.deltas.crowd < f.deltas.crowd);
    }
}
