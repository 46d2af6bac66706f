//! What the `crowd` scenario reports: how well the bots gathered, and what
//! a crowd costs the shards (late ticks, sockets closed as too slow, bytes
//! per socket per tick against the view budget). Server figures come from
//! each shard's `/metrics` read at the start and the end of the hold.

use super::aoi::{BotBytes, Spread};
use super::{round2, round3, Measured, RunInfo, Scenario};
use crate::scrape::Scrape;
use serde::{Deserialize, Serialize};

/// The series of a shard's ticks, late ticks, bytes sent and too-slow closes
/// (bytes and closes of both transports: bots may be either).
const TICKS: &str = "mino_ticks_total";
const TICKS_LATE: &str = "mino_ticks_late_total";
const TICKS_SKIPPED: &str = "mino_ticks_skipped_total";
const SENT_BYTES: [&str; 3] = [
    "mino_sent_bytes_total",
    "mino_webtransport_sent_bytes_total{path=\"datagram\"}",
    "mino_webtransport_sent_bytes_total{path=\"stream\"}",
];
const PLAYERS: &str = "mino_players";
/// The too-slow closes of both transports, and of a shard from before the
/// transport label (which has only that series: the three never overlap).
const TOO_SLOW: [&str; 3] = [
    "mino_sockets_closed_total{transport=\"websocket\",reason=\"too_slow\"}",
    "mino_sockets_closed_total{transport=\"webtransport\",reason=\"too_slow\"}",
    "mino_sockets_closed_total{reason=\"too_slow\"}",
];

/// One shard read at the start and at the end of the hold.
#[derive(Clone, Debug, PartialEq)]
pub struct ShardScrapes {
    /// The metrics URL.
    pub url: String,
    /// At the start of the hold.
    pub before: Scrape,
    /// At its end.
    pub after: Scrape,
}

impl ShardScrapes {
    fn delta(&self, series: &str) -> f64 {
        (self.after.value(series) - self.before.value(series)).max(0.0)
    }

    /// A counter's growth over the hold; None when either read lacks it or
    /// it fell (the shard restarted).
    fn counted(&self, series: &str) -> Option<f64> {
        let (before, after) = (self.before.has(series), self.after.has(series));
        (before && after).then(|| self.after.value(series) - self.before.value(series)).filter(|d| *d >= 0.0)
    }
}

/// Ticks that started late over the hold, every shard read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LateTicks {
    /// Shards read (both times).
    pub shards: usize,
    /// Ticks run (`mino_ticks_total`), summed.
    pub ticks: u64,
    /// Of those, started over a fifth of a period late (`mino_ticks_late_total`).
    pub late: u64,
    /// `late / ticks` (0 without ticks).
    pub late_share: f64,
    /// Scheduled ticks the shards skipped after a stall
    /// (`mino_ticks_skipped_total`). None unless every shard was read and
    /// had the counter both times, rising (older reports lack it too). A bot
    /// cannot tell a skipped tick from one that sent it nothing (tick
    /// numbers count scheduled ticks), so the own gap with the silent ticks
    /// out (`Metric::NewsGap`) hides a stall: read it only where this is 0.
    #[serde(default)]
    pub skipped: Option<u64>,
}

impl LateTicks {
    /// The late ticks of `shards`; None when none was read. `all_read`:
    /// no shard's metrics failed to read (else the skipped ticks are not
    /// known).
    pub fn of(shards: &[ShardScrapes], all_read: bool) -> Option<LateTicks> {
        if shards.is_empty() {
            return None;
        }
        let ticks: f64 = shards.iter().map(|s| s.delta(TICKS)).sum();
        let late: f64 = shards.iter().map(|s| s.delta(TICKS_LATE)).sum();
        let skipped: Option<f64> = shards.iter().map(|s| s.counted(TICKS_SKIPPED)).sum();
        Some(LateTicks {
            shards: shards.len(),
            ticks: ticks as u64,
            late: late as u64,
            late_share: if ticks > 0.0 { round3(late / ticks) } else { 0.0 },
            skipped: skipped.filter(|_| all_read).map(|k| k as u64),
        })
    }
}

/// Sockets closed as too slow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TooSlow {
    /// Sessions the bots saw closed with 4009 (TooSlow), from the ramp to the
    /// end of the hold.
    pub bots: u64,
    /// `mino_sockets_closed_total{transport,reason="too_slow"}` of both
    /// transports over the hold, every shard read (None: no shard read).
    pub server: Option<u64>,
}

impl TooSlow {
    /// `bots` closes the bots saw, and the shards' own count.
    pub fn of(bots: u64, shards: &[ShardScrapes]) -> TooSlow {
        let server =
            (!shards.is_empty()).then(|| shards.iter().flat_map(|s| TOO_SLOW.map(|t| s.delta(t))).sum::<f64>() as u64);
        TooSlow { bots, server }
    }
}

/// Bytes per socket per tick against the view budget.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// The budget compared with (`--budget-bytes`, the server's
    /// `--view-budget-bytes`), bytes a tick.
    pub budget_bytes: u64,
    /// View-frame payload bytes each bot connected throughout the hold got a
    /// tick, bytes.
    pub cell_bytes_per_tick: Spread,
    /// Bots whose mean is over the budget.
    pub bots_over_budget: usize,
    /// True when no bot's mean is over the budget.
    pub within_budget: bool,
    /// Bytes the shards wrote to sockets (`mino_sent_bytes_total`, every
    /// message, websocket headers included, and the WebTransport sessions'
    /// `mino_webtransport_sent_bytes_total`) per player per tick (None: no
    /// shard read).
    pub server_bytes_per_socket_tick: Option<f64>,
}

impl Budget {
    /// The budget figures of bots that got `per_bot` over `ticks` ticks.
    pub fn of(budget_bytes: u64, per_bot: &[BotBytes], ticks: f64, shards: &[ShardScrapes]) -> Budget {
        let ticks = ticks.max(1e-9);
        let mut per_tick: Vec<f64> = per_bot.iter().map(|b| b.cell_bytes as f64 / ticks).collect();
        let over = per_tick.iter().filter(|v| **v > budget_bytes as f64).count();
        let socket_ticks: f64 = shards.iter().map(|s| s.after.value(PLAYERS) * s.delta(TICKS)).sum();
        let sent: f64 = shards.iter().flat_map(|s| SENT_BYTES.map(|b| s.delta(b))).sum();
        Budget {
            budget_bytes,
            cell_bytes_per_tick: Spread::of(&mut per_tick),
            bots_over_budget: over,
            within_budget: over == 0,
            server_bytes_per_socket_tick: (socket_ticks > 0.0).then(|| round2(sent / socket_ticks)),
        }
    }
}

/// `mino-loadgen crowd`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CrowdReport {
    /// Always [`Scenario::Crowd`].
    pub scenario: Scenario,
    /// Bots started.
    pub bots: usize,
    /// Bots welcomed at least once.
    pub admitted: usize,
    /// The point everyone walked to, world units.
    pub point: [f32; 2],
    /// How near the point a bot counts as gathered, world units.
    pub gather_radius: f32,
    /// The share of the crowd that took a step now and then (`--shuffle`;
    /// 0 in older reports: a still crowd).
    #[serde(default)]
    pub shuffle: f32,
    /// Connected bots gathered when the hold started.
    pub gathered: usize,
    /// Connected bots gathered at the end of the hold.
    pub gathered_at_end: usize,
    /// From the last bot's spawn to the crowd gathered (or the wait's end), s.
    pub gather_s: f64,
    /// The shards' late ticks over the hold (None: no shard read).
    pub late_ticks: Option<LateTicks>,
    /// Sockets closed as too slow.
    pub too_slow: TooSlow,
    /// Bytes per socket per tick against the budget (None without area of interest).
    pub budget: Option<Budget>,
    /// The metrics URLs that could not be read, with why.
    pub scrape_errors: Vec<String>,
    /// The hold's figures.
    #[serde(flatten)]
    pub measured: Measured,
    /// Run context.
    #[serde(flatten)]
    pub info: RunInfo,
}

impl super::Joins for CrowdReport {
    fn welcomed(&self) -> usize {
        self.admitted
    }
    fn phases(&self) -> Vec<&Measured> {
        vec![&self.measured]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard(before: &str, after: &str) -> ShardScrapes {
        ShardScrapes { url: "u".into(), before: Scrape::parse(before), after: Scrape::parse(after) }
    }

    #[test]
    fn late_ticks_and_bytes_per_socket_tick_sum_the_shards() {
        let shards = [
            shard(
                "mino_ticks_total 100\nmino_ticks_late_total 1\n",
                "mino_ticks_total 300\nmino_ticks_late_total 11\nmino_ticks_skipped_total 9\nmino_players 10\n\
                 mino_sent_bytes_total 40000\n",
            ),
            shard(
                "mino_ticks_total 0\n",
                "mino_ticks_total 200\nmino_players 30\nmino_sent_bytes_total 30000\n\
                 mino_webtransport_sent_bytes_total{path=\"datagram\"} 8000\n\
                 mino_webtransport_sent_bytes_total{path=\"stream\"} 2000\n",
            ),
        ];
        let late = LateTicks::of(&shards, true).expect("read");
        assert_eq!((late.shards, late.ticks, late.late, late.late_share), (2, 400, 10, 0.025));
        assert_eq!(late.skipped, None, "the second shard has no skipped ticks' counter: not known");
        let per_bot = [BotBytes { bytes: 0, cell_bytes: 2000 }, BotBytes { bytes: 0, cell_bytes: 20_000 }];
        let b = Budget::of(500, &per_bot, 20.0, &shards);
        assert_eq!((b.bots_over_budget, b.within_budget), (1, false));
        assert_eq!(b.cell_bytes_per_tick.max, 1000.0);
        assert_eq!(
            b.server_bytes_per_socket_tick,
            Some(10.0),
            "80,000 bytes (WebTransport's too) over 8,000 socket ticks"
        );
        assert_eq!(LateTicks::of(&[], true), None);
        let slow = shard(
            "",
            "mino_sockets_closed_total{transport=\"websocket\",reason=\"too_slow\"} 2\n\
             mino_sockets_closed_total{transport=\"webtransport\",reason=\"too_slow\"} 5\n",
        );
        assert_eq!(TooSlow::of(1, &[slow]), TooSlow { bots: 1, server: Some(7) }, "both transports");
        let older = shard("", "mino_sockets_closed_total{reason=\"too_slow\"} 3\n");
        assert_eq!(TooSlow::of(0, &[older]).server, Some(3), "a shard from before the transport label");
        assert_eq!(TooSlow::of(0, &[]).server, None);
        assert_eq!(Budget::of(500, &per_bot, 20.0, &[]).server_bytes_per_socket_tick, None);
    }

    #[test]
    fn skipped_ticks_are_known_only_when_every_shard_counted_them() {
        let read = [
            shard("mino_ticks_skipped_total 3\n", "mino_ticks_skipped_total 12\n"),
            shard("mino_ticks_skipped_total 0\n", "mino_ticks_skipped_total 0\n"),
        ];
        assert_eq!(LateTicks::of(&read, true).and_then(|l| l.skipped), Some(9), "summed");
        assert_eq!(LateTicks::of(&read, false).and_then(|l| l.skipped), None, "a shard not read");
        let restarted = [shard("mino_ticks_skipped_total 5\n", "mino_ticks_skipped_total 1\n")];
        assert_eq!(LateTicks::of(&restarted, true).and_then(|l| l.skipped), None, "the counter fell");
        let absent = [shard("mino_ticks_total 1\n", "mino_ticks_skipped_total 1\n")];
        assert_eq!(LateTicks::of(&absent, true).and_then(|l| l.skipped), None, "not in the first read");
    }
}
