//! A `--transport mix` phase's figures per transport (the `transports`
//! array of a phase): what each transport's bots measured over the same
//! phase, side by side. The server's CPU and memory are the whole run's
//! (one process serves both): they stay in the phase's own figures.

use super::{round2, Measured};
use crate::stats::{Metric, Summary, Window};
use crate::swarm::Census;
use crate::transport::Transport;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What one transport's bots of a phase measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransportFigures {
    /// The transport.
    pub transport: Transport,
    /// Its bots started.
    pub bots: usize,
    /// Its bots in a welcomed session at the end of the phase.
    pub connected: usize,
    /// Its failures in the phase (ramp and hold).
    pub errors: u64,
    /// Those failures by kind.
    pub error_kinds: BTreeMap<String, u64>,
    /// Connect start to Welcome, ms (ramp and hold).
    pub welcome_ms: Summary,
    /// Gap between consecutive frames of the bot's own shard, ms (hold).
    pub snapshot_gap_ms: Summary,
    /// Gap between consecutive frames of each other shard, ms (hold).
    pub relayed_snapshot_gap_ms: Summary,
    /// The longest own-shard snapshot gap of each bot in each 10 s span
    /// (`mino_loadgen::freeze`), ms (hold; absent in older reports).
    #[serde(default)]
    pub longest_freeze_ms: Summary,
    /// Area of interest: gap between consecutive own-shard cells that list
    /// the bot, ms (hold; count 0 without area of interest).
    pub own_cell_gap_ms: Summary,
    /// Ping round trip, ms (hold).
    pub rtt_ms: Summary,
    /// Messages (on WebTransport: stream messages and datagrams) received
    /// per second (hold).
    pub frames_per_s: f64,
    /// Their payload bytes per second (hold).
    pub bytes_per_s: f64,
    /// Own-shard frames per connected bot per second, Hz (hold).
    pub ticks_per_s: f64,
    /// Snapshots and view frames (own and relayed) its bots received in
    /// the hold (absent in older reports).
    #[serde(default)]
    pub snapshots: u64,
    /// Resumed sessions in the phase.
    pub resumed: u64,
}

/// One transport's windows and bots of a phase.
pub struct TransportPhase<'a> {
    /// The transport.
    pub transport: Transport,
    /// Its bots' window over ramp and hold.
    pub whole: &'a Window,
    /// Its bots' window over the hold.
    pub hold: &'a Window,
    /// Its bots by state at the end.
    pub census: Census,
}

impl TransportFigures {
    /// The figures of one transport's part of a phase.
    pub fn of(p: &TransportPhase<'_>) -> TransportFigures {
        let secs = p.hold.elapsed.as_secs_f64().max(1e-9);
        let hc = &p.hold.counters;
        let connected = p.census.connected;
        TransportFigures {
            transport: p.transport,
            bots: p.census.bots,
            connected,
            errors: p.whole.counters.error_total(),
            error_kinds: p.whole.counters.error_kinds(),
            welcome_ms: p.whole.latencies.summary(Metric::Welcome),
            snapshot_gap_ms: p.hold.latencies.summary(Metric::SnapshotGap),
            relayed_snapshot_gap_ms: p.hold.latencies.summary(Metric::RelayedGap),
            longest_freeze_ms: p.hold.latencies.summary(Metric::LongestFreeze),
            own_cell_gap_ms: p.hold.latencies.summary(Metric::OwnCellGap),
            rtt_ms: p.hold.latencies.summary(Metric::Rtt),
            frames_per_s: round2(hc.frames as f64 / secs),
            bytes_per_s: round2(hc.bytes as f64 / secs),
            ticks_per_s: if connected == 0 { 0.0 } else { round2(hc.own_snapshots as f64 / secs / connected as f64) },
            snapshots: hc.own_snapshots + hc.relayed_snapshots,
            resumed: p.whole.counters.resumed,
        }
    }
}

/// The table's lines of a phase's transports (nothing when not a mix).
pub fn lines(out: &mut String, m: &Measured) {
    use std::fmt::Write as _;
    let Some(parts) = &m.transports else { return };
    let _ =
        writeln!(out, "  per transport: connected/bots, errors; gap (own) p50 / p95 / p99 / max ms; ticks/s; bytes/s");
    for t in parts {
        let _ = writeln!(
            out,
            "  {:<13} {}/{}, {} errors; {}; {:.2}/s; {}/s",
            t.transport.label(),
            t.connected,
            t.bots,
            t.errors,
            super::table::summary(&t.snapshot_gap_ms),
            t.ticks_per_s,
            super::table::bytes(t.bytes_per_s),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Stats;
    use std::time::Duration;

    #[test]
    fn a_part_reports_its_own_bots_and_gaps() {
        let stats = Stats::new();
        stats.record(0, Metric::SnapshotGap, Duration::from_millis(50));
        stats.record(0, Metric::SnapshotGap, Duration::from_millis(150));
        stats.snapshot(true);
        stats.snapshot(true);
        stats.frame(100);
        let hold = stats.take_window();
        let census = Census { bots: 3, connected: 2, ..Census::default() };
        let f = TransportFigures::of(&TransportPhase {
            transport: Transport::WebTransport,
            whole: &hold,
            hold: &hold,
            census,
        });
        assert_eq!((f.transport, f.bots, f.connected, f.snapshot_gap_ms.count), (Transport::WebTransport, 3, 2, 2));
        assert!(f.snapshot_gap_ms.max >= 149.0, "{:?}", f.snapshot_gap_ms);
        let json = serde_json::to_value(&f).expect("json");
        assert_eq!(json["transport"], "webtransport");
        let mut m = measured();
        m.transports = Some(vec![f]);
        let mut out = String::new();
        lines(&mut out, &m);
        assert!(out.contains("webtransport  2/3, 0 errors"), "{out}");
    }

    fn measured() -> Measured {
        let w = Stats::new().take_window();
        crate::report::Measured::of(&crate::report::Phase {
            whole: &w,
            hold: &w,
            usage: &crate::meter::Usage {
                wall_s: 1.0,
                loadgen: crate::meter::CpuUse::default(),
                loadgen_cpu_pct: 0.0,
                machine_cpu_pct: 0.0,
                servers: Vec::new(),
            },
            census: Census::default(),
            max_loadgen_cpu: 70.0,
            per_bot: &[],
            tick_hz: 20,
            observers: 0,
        })
    }
}
