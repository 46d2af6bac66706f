//! What every bot measures of the area of interest in one session, cheaply:
//! the gap between consecutive own-shard updates of the cell that lists it
//! (own-cell gap), the gap between consecutive updates of each of the 8
//! cells around its own (neighbour gap, per shard and cell, while the cell
//! stays adjacent and had players at its previous update: a cell whose
//! players walk is updated every tick, a still one not at all), and the
//! bytes of the cells: the items' bodies (entries) and the rest apart.

use crate::event::CellFrame;
use crate::stats::{Metric, Stats, Tally};
use crate::world::Grid;
use mino_protocol::wire::Bounds;
use mino_protocol::{quantize, PlayerId};
use tokio::time::Instant;

/// A player's full state on the wire (protocol 3's fixed entry: id,
/// position, heading, flags): the yardstick of the ideal crop (every player
/// within the radius at full state, every tick).
pub const ENTRY_BYTES: usize = 10;

/// The bot itself in an own-shard cell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Own {
    /// Position, world units.
    pub position: (f32, f32),
    /// The frame's server time, the low 32 bits of the ms.
    pub time_ms: u32,
    /// True for the first such frame of a new own-shard tick.
    pub new_tick: bool,
}

/// The frame clock of one adjacent (shard, cell).
#[derive(Clone, Copy, Debug)]
struct Clock {
    shard: u32,
    cell: u32,
    at: Instant,
    occupied: bool,
}

/// One session's view-frame measurements.
pub struct CellMeter {
    grid: Grid,
    bounds: Bounds,
    own_shard: u32,
    own_id: PlayerId,
    own_cell: u32,
    own_tick: Option<u32>,
    own_hint: usize,
    last_own: Option<Instant>,
    neighbours: Vec<Clock>,
    /// Not yet added to the run's tallies: frames, bytes, entry bytes.
    unflushed: [u64; 3],
}

impl CellMeter {
    /// The meter of player `own_id` on shard `own_shard` over `grid`, with
    /// positions quantized over the world's `bounds`.
    pub fn new(grid: Grid, bounds: Bounds, own_shard: u32, own_id: PlayerId) -> CellMeter {
        CellMeter {
            grid,
            bounds,
            own_shard,
            own_id,
            own_cell: 0,
            own_tick: None,
            own_hint: 0,
            last_own: None,
            neighbours: Vec::with_capacity(16),
            unflushed: [0; 3],
        }
    }

    /// One cell updated at `now` by `len` bytes of a view frame, `entries`
    /// of them its items' bodies: records the gaps into `stats` (stripe
    /// `bot`); returns the bot itself when the cell lists it.
    pub fn on_frame(
        &mut self,
        c: &CellFrame,
        len: usize,
        entries: usize,
        now: Instant,
        stats: &Stats,
        bot: usize,
    ) -> Option<Own> {
        let (shard, cell) = (c.shard_id.0, c.cell);
        self.unflushed[0] += 1;
        self.unflushed[1] += len as u64;
        self.unflushed[2] += entries as u64;
        let own = (shard == self.own_shard).then(|| self.find_own(c)).flatten().map(|(x, y)| {
            if let Some(last) = self.last_own.replace(now) {
                stats.record(bot, Metric::OwnCellGap, now - last);
            }
            let new_tick = self.own_tick.replace(c.tick) != Some(c.tick);
            self.moved_to(self.grid.cell_of(x, y));
            self.flush(stats);
            Own { position: (x, y), time_ms: c.time_ms, new_tick }
        });
        self.neighbour_frame(shard, cell, !c.entries.is_empty(), now, stats, bot);
        own
    }

    /// Adds what was counted since the last flush to the run's tallies
    /// (done once a tick, and at the end of a session).
    pub fn flush(&mut self, stats: &Stats) {
        let [frames, bytes, entries] = std::mem::take(&mut self.unflushed);
        stats.add(Tally::CellFrames, frames);
        stats.add(Tally::CellBytes, bytes);
        stats.add(Tally::CellEntryBytes, entries);
    }

    /// The bot's position in `c`, world units; checks last frame's index first.
    fn find_own(&mut self, c: &CellFrame) -> Option<(f32, f32)> {
        let p = c.find(self.own_id, &mut self.own_hint)?;
        Some(quantize::world_position(&self.bounds, p.x, p.y))
    }

    fn moved_to(&mut self, cell: u32) {
        if cell != self.own_cell {
            self.own_cell = cell;
            let grid = self.grid;
            self.neighbours.retain(|n| grid.adjacent(cell, n.cell));
        }
    }

    fn neighbour_frame(&mut self, shard: u32, cell: u32, occupied: bool, now: Instant, stats: &Stats, bot: usize) {
        // Most cells of a view are not adjacent, and none of those is in
        // the list (moving to another cell keeps only the adjacent ones).
        if !self.grid.adjacent(self.own_cell, cell) {
            return;
        }
        let known = self.neighbours.iter().position(|n| n.shard == shard && n.cell == cell);
        match known {
            Some(i) => {
                let n = &mut self.neighbours[i];
                if n.occupied {
                    stats.record(bot, Metric::NeighbourGap, now - n.at);
                }
                (n.at, n.occupied) = (now, occupied);
            }
            None => self.neighbours.push(Clock { shard, cell, at: now, occupied }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::entry::{Entry, PlayerEntry};
    use std::time::Duration;

    const ME: PlayerId = PlayerId(5);

    fn grid() -> Grid {
        Grid {
            min_x: 0.0,
            min_y: 0.0,
            cell_size: 100.0,
            columns: 10,
            rows: 10,
            view_radius: 200.0,
            view_grace: Duration::from_millis(900),
        }
    }

    fn bounds() -> Bounds {
        Bounds::new(0.0, 0.0, 1000.0, 1000.0)
    }

    /// `shard`'s `cell` as held at `tick`, listing `players` at (x, y).
    fn frame(shard: u32, cell: u32, tick: u64, players: &[(u32, f32, f32)]) -> CellFrame<'static> {
        let entries: Vec<Entry> = players
            .iter()
            .map(|&(id, x, y)| {
                let p = PlayerEntry { id: PlayerId(id), x, y, heading: 0, moving: false, input_seq: 0 };
                p.quantized(&bounds())
            })
            .collect();
        CellFrame::held(shard, cell, tick as u32, tick * 50, &entries).into_owned()
    }

    fn feed(m: &mut CellMeter, c: &CellFrame, at: Instant, stats: &Stats) -> Option<Own> {
        m.on_frame(c, 4 + c.entries.len() * 8, c.entries.len() * 8, at, stats, 0)
    }

    #[test]
    fn own_cell_gaps_and_the_bots_position() {
        let stats = Stats::new();
        let mut m = CellMeter::new(grid(), bounds(), 1, ME);
        let t0 = Instant::now();
        let here = grid().cell_of(150.0, 150.0);
        let own = feed(&mut m, &frame(1, here, 1, &[(4, 140.0, 140.0), (5, 150.0, 150.0)]), t0, &stats).expect("me");
        assert!((own.position.0 - 150.0).abs() < 0.05 && own.new_tick);
        assert_eq!(feed(&mut m, &frame(2, here, 1, &[(5, 150.0, 150.0)]), t0, &stats), None, "another shard's");
        let later = t0 + Duration::from_millis(50);
        assert!(feed(&mut m, &frame(1, here, 2, &[(5, 156.0, 150.0)]), later, &stats).expect("me").new_tick);
        let w = stats.take_window();
        let gap = w.latencies.summary(Metric::OwnCellGap);
        assert_eq!(gap.count, 1);
        assert!((gap.max - 50.0).abs() < 0.1, "{gap:?}");
        assert_eq!(w.counters.tally(Tally::CellFrames), 3);
        assert_eq!(w.counters.tally(Tally::CellEntryBytes), 32);
        assert_eq!(w.counters.tally(Tally::CellBytes), 3 * 4 + 32);
    }

    #[test]
    fn neighbour_gaps_only_while_adjacent_and_occupied() {
        let stats = Stats::new();
        let g = grid();
        let mut m = CellMeter::new(g, bounds(), 1, ME);
        let t0 = Instant::now();
        let tick = |n: u64| t0 + Duration::from_millis(50 * n);
        let (here, east, far) = (g.cell_of(150.0, 150.0), g.cell_of(250.0, 150.0), g.cell_of(550.0, 150.0));
        feed(&mut m, &frame(1, here, 1, &[(5, 150.0, 150.0)]), tick(1), &stats);
        feed(&mut m, &frame(1, east, 1, &[(9, 250.0, 150.0)]), tick(1), &stats);
        feed(&mut m, &frame(1, far, 1, &[(8, 550.0, 150.0)]), tick(1), &stats);
        feed(&mut m, &frame(1, east, 2, &[]), tick(2), &stats); // its player left
        feed(&mut m, &frame(1, far, 2, &[(8, 550.0, 150.0)]), tick(2), &stats);
        feed(&mut m, &frame(1, east, 9, &[(7, 250.0, 150.0)]), tick(9), &stats); // after empty: no gap
        let w = stats.take_window();
        let gap = w.latencies.summary(Metric::NeighbourGap);
        assert_eq!(gap.count, 1, "one gap: the east cell's, while it had a player");
        assert!((gap.max - 50.0).abs() < 0.1, "{gap:?}");
    }

    #[test]
    fn cells_no_longer_adjacent_are_forgotten() {
        let stats = Stats::new();
        let g = grid();
        let mut m = CellMeter::new(g, bounds(), 1, ME);
        let t0 = Instant::now();
        let east = g.cell_of(250.0, 150.0);
        feed(&mut m, &frame(1, g.cell_of(150.0, 150.0), 1, &[(5, 150.0, 150.0)]), t0, &stats);
        feed(&mut m, &frame(1, east, 1, &[(9, 250.0, 150.0)]), t0, &stats);
        // The bot walks three cells west: the east cell is no longer adjacent...
        feed(&mut m, &frame(1, g.cell_of(0.0, 150.0), 30, &[(5, 0.0, 150.0)]), t0 + Duration::from_secs(1), &stats);
        // ... and back: the east cell's next update starts a new clock.
        feed(&mut m, &frame(1, g.cell_of(150.0, 150.0), 60, &[(5, 150.0, 150.0)]), t0 + Duration::from_secs(2), &stats);
        feed(&mut m, &frame(1, east, 60, &[(9, 250.0, 150.0)]), t0 + Duration::from_secs(2), &stats);
        assert_eq!(stats.take_window().latencies.summary(Metric::NeighbourGap).count, 0);
    }
}
