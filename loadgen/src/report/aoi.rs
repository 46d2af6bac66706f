//! The area-of-interest figures of a measured phase: what every bot
//! received (bytes per second, view-frame bytes per tick, own-cell and
//! neighbour gaps), what the observers saw (view-enter latency, unseen
//! entries, pop-ins, blinks, the ideal crop), and with `--density` how dense
//! the bots stood. Absent from a report when the server sent no cells,
//! so a run without area of interest reports exactly what it always did.

use super::{round2, round3};
use crate::cells::ENTRY_BYTES;
use crate::region::Region;
use crate::stats::{CounterValues, Metric, Summary, Tally, Window};
use serde::{Deserialize, Serialize};

/// How a per-bot quantity spreads over the bots.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// Largest.
    pub max: f64,
    /// Bots counted (0: every figure is 0 and means "no data").
    pub count: usize,
}

impl Spread {
    /// The spread of `values` (reordered); nearest-rank percentiles.
    pub fn of(values: &mut [f64]) -> Spread {
        if values.is_empty() {
            return Spread::default();
        }
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let rank = |q: f64| values[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
        Spread {
            mean: round2(values.iter().sum::<f64>() / n as f64),
            p50: round2(rank(0.50)),
            p95: round2(rank(0.95)),
            max: round2(values[n - 1]),
            count: n,
        }
    }
}

/// What one bot received over a hold (it was connected, in one session,
/// from its start to its end).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct BotBytes {
    /// Payload bytes of every message, bytes.
    pub bytes: u64,
    /// Of those, the cells', bytes.
    pub cell_bytes: u64,
}

/// What the observers measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ObserverFigures {
    /// Bots that observe (`--observers`).
    pub observers: usize,
    /// Own-shard ticks the observers checked, over all of them.
    pub ticks: u64,
    /// Players that came within an observer's view radius.
    pub view_enters: u64,
    /// From entering the radius to the arrival of the first frame showing
    /// the player, ms.
    pub view_enter_ms: Summary,
    /// The same, in server ticks between the entry's frame and the showing
    /// frame (fractional across shards), ticks.
    pub view_enter_ticks: Summary,
    /// Entries no frame showed while the player stayed inside.
    pub view_enters_unseen: u64,
    /// Players first shown already inside the view radius (never in the
    /// prefetch ring).
    pub pop_ins: u64,
    /// Players shown inside the radius, still inside, then in no frame for
    /// longer than the view grace.
    pub blinks: u64,
    /// Players within an observer's view radius (itself included), mean over
    /// the ticks checked.
    pub players_in_view: f64,
    /// 10 bytes times those players: what a perfect crop sends an observer a
    /// tick, bytes.
    pub ideal_bytes_per_tick: f64,
    /// Entry bytes of the view frames an observer received a tick, bytes.
    pub entry_bytes_per_tick: f64,
    /// The rest of those view frames (the FlatBuffers envelope, sections'
    /// headers, cells' references, items' tags and lengths; the websocket's
    /// 2 to 4 bytes a message not counted) an observer received a tick,
    /// bytes.
    pub header_bytes_per_tick: f64,
    /// Every byte an observer received a tick (cells and all other
    /// messages), bytes.
    pub total_bytes_per_tick: f64,
    /// Entry bytes over ideal bytes: above 1, players beyond the radius (the
    /// rest of their cells, the prefetch ring); below 1, cells sent every
    /// 2nd or 4th tick. None without players in view.
    pub crop_ratio: Option<f64>,
    /// Every byte over ideal bytes. None without players in view.
    pub total_vs_ideal: Option<f64>,
    /// Where an observer's bytes of a tick went, by part (absent in
    /// reports of loadgens before it was counted).
    #[serde(default)]
    pub parts_per_tick: Option<PartsPerTick>,
}

/// An observer's bytes of a tick by part ([`crate::parts::FrameParts`]),
/// and its cells a tick; the parts and `other_messages` add up to
/// [`ObserverFigures::total_bytes_per_tick`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PartsPerTick {
    /// View frames' FlatBuffers envelopes and sections' headers, bytes.
    pub framing: f64,
    /// Cells' references in their sections, bytes.
    pub references: f64,
    /// Full-form items, bytes.
    pub full_forms: f64,
    /// Delta items written out, bytes.
    pub deltas: f64,
    /// Supplement items, bytes.
    pub supplements: f64,
    /// Forget items, bytes.
    pub forgets: f64,
    /// Sections' implied blocks (protocol 7), bytes (absent in reports of
    /// loadgens before it).
    #[serde(default)]
    pub implied: f64,
    /// Every other message (pongs, place status, names, chat), bytes.
    pub other_messages: f64,
    /// Cells in view frames.
    pub cells: f64,
    /// Of them, cells whose one item was an empty delta said by the
    /// reference alone.
    pub empty_deltas: f64,
    /// Implied cells (protocol 7: an empty delta said by one bit; not
    /// among `cells`).
    #[serde(default)]
    pub implied_cells: f64,
    /// Players in supplements.
    pub supplement_entries: f64,
    /// Of them, players the observer held in another cell of the shard
    /// before the frame: handed off between cells of its view over
    /// different spans (the rest came into the view).
    pub supplement_entries_held: f64,
}

impl ObserverFigures {
    /// The observers' figures of a window; None when no observer checked a tick.
    pub fn of(w: &Window, observers: usize) -> Option<ObserverFigures> {
        let c = &w.counters;
        let ticks = c.tally(Tally::ObservedTicks);
        if ticks == 0 {
            return None;
        }
        let per_tick = |t: Tally| round2(c.tally(t) as f64 / ticks as f64);
        let ideal = c.tally(Tally::IdealBytes);
        let ratio = |t: Tally| (ideal > 0).then(|| round3(c.tally(t) as f64 / ideal as f64));
        Some(ObserverFigures {
            observers,
            ticks,
            view_enters: c.tally(Tally::ViewEnters),
            view_enter_ms: w.latencies.summary(Metric::ViewEnter),
            view_enter_ticks: w.latencies.summary(Metric::ViewEnterTicks),
            view_enters_unseen: c.tally(Tally::ViewEntersUnseen),
            pop_ins: c.tally(Tally::PopIns),
            blinks: c.tally(Tally::Blinks),
            players_in_view: round2(ideal as f64 / ENTRY_BYTES as f64 / ticks as f64),
            ideal_bytes_per_tick: per_tick(Tally::IdealBytes),
            entry_bytes_per_tick: per_tick(Tally::ObservedEntryBytes),
            header_bytes_per_tick: per_tick(Tally::ObservedHeaderBytes),
            total_bytes_per_tick: per_tick(Tally::ObservedBytes),
            crop_ratio: ratio(Tally::ObservedEntryBytes),
            total_vs_ideal: ratio(Tally::ObservedBytes),
            parts_per_tick: Some(PartsPerTick::of(c, ticks)),
        })
    }
}

impl PartsPerTick {
    /// The parts of `ticks` observed ticks' counters `c`.
    fn of(c: &CounterValues, ticks: u64) -> PartsPerTick {
        let per_tick = |n: u64| round2(n as f64 / ticks.max(1) as f64);
        // The view frames' parts, each tally read once; the rest of the
        // bytes are other messages.
        let [framing, references, full, deltas, supplements, forgets, implied] = Tally::FRAME_PARTS.map(|t| c.tally(t));
        let frames = framing + references + full + deltas + supplements + forgets + implied;
        PartsPerTick {
            framing: per_tick(framing),
            references: per_tick(references),
            full_forms: per_tick(full),
            deltas: per_tick(deltas),
            supplements: per_tick(supplements),
            forgets: per_tick(forgets),
            implied: per_tick(implied),
            other_messages: per_tick(c.tally(Tally::ObservedBytes).saturating_sub(frames)),
            cells: per_tick(c.tally(Tally::ObservedCells)),
            empty_deltas: per_tick(c.tally(Tally::ObservedEmptyDeltas)),
            implied_cells: per_tick(c.tally(Tally::ObservedImpliedCells)),
            supplement_entries: per_tick(c.tally(Tally::ObservedSupplementEntries)),
            supplement_entries_held: per_tick(c.tally(Tally::ObservedSupplementEntriesHeld)),
        }
    }
}

/// The area-of-interest figures of a phase.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AoiFigures {
    /// Bytes each bot received per second over the hold (bots connected
    /// throughout it), bytes/s.
    pub bot_bytes_per_s: Spread,
    /// View-frame bytes each such bot received per tick, bytes.
    pub cell_bytes_per_tick: Spread,
    /// Cells received per second, all bots.
    pub cell_frames_per_s: f64,
    /// Non-entry bytes a cell: its reference, its items' tags and lengths,
    /// and its share of its view frame's envelope and section header, mean,
    /// bytes.
    pub header_bytes_per_frame: f64,
    /// Between consecutive own-shard cells listing the bot, ms.
    pub own_cell_gap_ms: Summary,
    /// Between consecutive frames of each adjacent cell, ms.
    pub neighbour_gap_ms: Summary,
    /// Sessions the server closed as too slow (close code 4009).
    pub too_slow_closes: u64,
    /// The observers' figures (None: no observer, or none checked a tick).
    pub observers: Option<ObserverFigures>,
}

/// Inputs of [`AoiFigures::of`].
pub struct AoiInputs<'a> {
    /// The hold.
    pub hold: &'a Window,
    /// Ramp and hold (for the closes).
    pub whole: &'a CounterValues,
    /// What each bot connected throughout the hold received in it.
    pub per_bot: &'a [BotBytes],
    /// The tick rate of the Welcomes, Hz.
    pub tick_hz: u16,
    /// Bots that observe.
    pub observers: usize,
}

impl AoiFigures {
    /// The figures of a hold; None when no cell arrived in the whole run
    /// (a server of whole-shard snapshots, protocol 3). A hold in which no
    /// cell arrived (everyone stood still: protocol 4 sends nothing then)
    /// has figures of zero.
    pub fn of(i: &AoiInputs<'_>) -> Option<AoiFigures> {
        let c = &i.hold.counters;
        let frames = c.tally(Tally::CellFrames);
        if frames == 0 && i.whole.tally(Tally::CellFrames) == 0 {
            return None;
        }
        let secs = i.hold.elapsed.as_secs_f64().max(1e-9);
        let ticks = secs * f64::from(i.tick_hz.max(1));
        let mut rates: Vec<f64> = i.per_bot.iter().map(|b| b.bytes as f64 / secs).collect();
        let mut cells: Vec<f64> = i.per_bot.iter().map(|b| b.cell_bytes as f64 / ticks).collect();
        let header = c.tally(Tally::CellBytes).saturating_sub(c.tally(Tally::CellEntryBytes));
        Some(AoiFigures {
            bot_bytes_per_s: Spread::of(&mut rates),
            cell_bytes_per_tick: Spread::of(&mut cells),
            cell_frames_per_s: round2(frames as f64 / secs),
            header_bytes_per_frame: round2(header as f64 / frames.max(1) as f64),
            own_cell_gap_ms: i.hold.latencies.summary(Metric::OwnCellGap),
            neighbour_gap_ms: i.hold.latencies.summary(Metric::NeighbourGap),
            too_slow_closes: i.whole.tally(Tally::TooSlowCloses),
            observers: ObserverFigures::of(i.hold, i.observers),
        })
    }
}

/// How dense the bots of a `--density` run stood at the end of a hold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DensityFigures {
    /// Players per cell asked for.
    pub players_per_cell: f64,
    /// The region the bots walk in, world units.
    pub region: Region,
    /// Its area, cells.
    pub region_cells: f64,
    /// Connected bots inside it (with a margin of a few ticks of walking, the
    /// most a steered bot overshoots) at the end of the hold.
    pub inside: usize,
    /// Connected bots at the end of the hold.
    pub connected: usize,
    /// `inside` over the region's cells.
    pub achieved_per_cell: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Stats;

    #[test]
    fn spreads_use_nearest_ranks() {
        let mut v: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let s = Spread::of(&mut v);
        assert_eq!((s.mean, s.p50, s.p95, s.max, s.count), (50.5, 50.0, 95.0, 100.0, 100));
        assert_eq!(Spread::of(&mut []), Spread::default());
        assert_eq!(Spread::of(&mut [7.0]).p95, 7.0);
    }

    #[test]
    fn no_cell_frames_no_figures() {
        let stats = Stats::new();
        stats.frame(100);
        let w = stats.take_window();
        let i = AoiInputs { hold: &w, whole: &w.counters, per_bot: &[], tick_hz: 20, observers: 5 };
        assert_eq!(AoiFigures::of(&i), None);
    }

    #[test]
    fn figures_per_bot_per_tick_and_per_observer_tick() {
        let stats = Stats::new();
        stats.add(Tally::CellFrames, 10);
        stats.add(Tally::CellBytes, 1000);
        stats.add(Tally::CellEntryBytes, 600);
        stats.add(Tally::ObservedTicks, 4);
        stats.add(Tally::IdealBytes, 400);
        stats.add(Tally::ObservedEntryBytes, 600);
        stats.add(Tally::ObservedHeaderBytes, 160);
        stats.add(Tally::ObservedBytes, 800);
        stats.add(Tally::Blinks, 1);
        let mut w = stats.take_window();
        w.elapsed = std::time::Duration::from_secs(2);
        let per_bot = [BotBytes { bytes: 2000, cell_bytes: 400 }, BotBytes { bytes: 4000, cell_bytes: 800 }];
        let i = AoiInputs { hold: &w, whole: &w.counters, per_bot: &per_bot, tick_hz: 20, observers: 1 };
        let a = AoiFigures::of(&i).expect("cells");
        assert_eq!((a.bot_bytes_per_s.p50, a.bot_bytes_per_s.max), (1000.0, 2000.0));
        assert_eq!(a.cell_bytes_per_tick.mean, 15.0, "(10 + 20) / 2 bytes a tick");
        assert_eq!((a.cell_frames_per_s, a.header_bytes_per_frame), (5.0, 40.0));
        let o = a.observers.expect("observers");
        assert_eq!((o.ideal_bytes_per_tick, o.players_in_view, o.entry_bytes_per_tick), (100.0, 10.0, 150.0));
        assert_eq!((o.crop_ratio, o.total_vs_ideal), (Some(1.5), Some(2.0)));
        assert_eq!((o.header_bytes_per_tick, o.blinks), (40.0, 1));
    }
}
