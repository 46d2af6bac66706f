//! This shard's cells of a tick: each occupied cell's players encoded once
//! (10 bytes a player, the bytes a view frame carries for them), shared by
//! every view frame that shows the cell and by the other shards (through
//! Redis, in region bundles).
//!
//! A cell that was occupied and is empty now gets an empty run for
//! [`VACATED_TICKS`] ticks, so the sockets that see it learn that its players
//! left the cell (a run is complete for its cell) instead of waiting for a
//! grace to pass.
//!
//! Each cell also remembers the tick its players last changed (ids,
//! positions, headings, the acknowledged input), so that with keyframes a
//! cell that did not change need not be sent again (see `aoi.rs`).

use super::grid::{CellId, Grid, RegionId};
use crate::sim::Player;
use bytes::Bytes;
use mino_protocol::cell::encode_entries;
use mino_protocol::wire::Bounds;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

/// Ticks an emptied cell keeps getting an empty run: the base period of the
/// prefetch tier, so every socket that sees the cell is sent one.
pub const VACATED_TICKS: u8 = 4;

/// One cell of this tick.
#[derive(Clone, Debug)]
pub(crate) struct CellEntries {
    pub(crate) cell: CellId,
    /// Its players' entries, 10 bytes each (empty: the cell was vacated).
    pub(crate) entries: Bytes,
}

/// This shard's cells, rebuilt each tick.
#[derive(Default)]
pub(crate) struct OwnCells {
    /// Scratch: (cell, index of the player), sorted by cell.
    order: Vec<(CellId, u32)>,
    /// Scratch: where each cell's entries end in this tick's buffer.
    ends: Vec<(CellId, usize)>,
    cells: Vec<CellEntries>,
    /// Cells emptied recently, with the empty runs still to send.
    vacated: HashMap<CellId, u8>,
    occupied: Vec<CellId>,
    /// Per cell with a run: a hash of its entries and the tick they last
    /// changed (kept only when `track_changes`).
    changed: HashMap<CellId, (u64, u64)>,
    /// Keyframes are on: note when each cell's players last changed (a
    /// second walk and a hash of every entry, wasted without keyframes).
    track_changes: bool,
}

impl OwnCells {
    /// Cells that note when their players last changed when
    /// `track_changes` (keyframes on), for [`OwnCells::changed_at`].
    pub(crate) fn new(track_changes: bool) -> OwnCells {
        OwnCells { track_changes, ..OwnCells::default() }
    }

    /// Encodes the cells of `players` for tick `tick`: every player's entry
    /// into one buffer, each cell a slice of it.
    pub(crate) fn encode(&mut self, grid: &Grid, bounds: &Bounds, players: &[Player], tick: u64) {
        self.order.clear();
        self.order.extend(players.iter().enumerate().map(|(i, p)| (grid.cell_of(p.x, p.y), i as u32)));
        self.order.sort_unstable_by_key(|&(cell, i)| (cell, players[i as usize].id));
        self.ends.clear();
        let mut buffer = Vec::with_capacity(players.len() * mino_protocol::cell::ENTRY_BYTES);
        let mut previous = std::mem::take(&mut self.occupied);
        for run in self.order.chunk_by(|a, b| a.0 == b.0) {
            let cell = run[0].0;
            let entries = run.iter().map(|&(_, i)| players[i as usize].entry());
            if self.track_changes {
                note_change(&mut self.changed, cell, entries.clone(), tick);
            }
            encode_entries(bounds, entries, &mut buffer);
            self.ends.push((cell, buffer.len()));
            self.occupied.push(cell);
            self.vacated.remove(&cell);
        }
        let buffer = Bytes::from(buffer);
        self.cells.clear();
        let mut start = 0;
        for &(cell, end) in &self.ends {
            self.cells.push(CellEntries { cell, entries: buffer.slice(start..end) });
            start = end;
        }
        previous.retain(|c| self.occupied.binary_search(c).is_err());
        for cell in previous {
            self.vacated.insert(cell, VACATED_TICKS);
            if self.track_changes {
                note_change(&mut self.changed, cell, std::iter::empty(), tick);
            }
        }
        let cells = &mut self.cells;
        self.vacated.retain(|cell, left| {
            cells.push(CellEntries { cell: *cell, entries: Bytes::new() });
            *left -= 1;
            *left > 0
        });
        self.cells.sort_unstable_by_key(|f| f.cell);
        if !self.track_changes {
            return;
        }
        let vacated = &self.vacated;
        let occupied = &self.occupied;
        self.changed.retain(|cell, _| vacated.contains_key(cell) || occupied.binary_search(cell).is_ok());
    }

    /// The tick `cell`'s players last changed (`None`: no run of this
    /// shard this tick, or changes not tracked).
    pub(crate) fn changed_at(&self, cell: CellId) -> Option<u64> {
        self.changed.get(&cell).map(|&(_, tick)| tick)
    }

    /// This tick's cells, by cell.
    pub(crate) fn cells(&self) -> &[CellEntries] {
        &self.cells
    }

    /// This tick's cells grouped by region, for the region bundles.
    pub(crate) fn by_region(&self, grid: &Grid) -> Vec<(RegionId, Vec<(CellId, Bytes)>)> {
        let mut regions: Vec<(RegionId, Vec<(CellId, Bytes)>)> = Vec::new();
        for f in &self.cells {
            let Some(region) = grid.region_of(f.cell) else { continue };
            let cell = (f.cell, f.entries.clone());
            match regions.iter_mut().find(|(r, _)| *r == region) {
                Some((_, cells)) => cells.push(cell),
                None => regions.push((region, vec![cell])),
            }
        }
        regions
    }
}

/// Notes `cell`'s entries of tick `tick`: a change when their hash differs
/// from the last one (or the cell is new).
fn note_change(
    changed: &mut HashMap<CellId, (u64, u64)>,
    cell: CellId,
    entries: impl Iterator<Item = mino_protocol::entry::PlayerEntry>,
    tick: u64,
) {
    let mut h = DefaultHasher::new();
    for e in entries {
        (e.id.0, e.x.to_bits(), e.y.to_bits(), e.heading, e.moving, e.input_seq).hash(&mut h);
    }
    let hash = h.finish();
    match changed.get_mut(&cell) {
        Some(last) if last.0 == hash => {}
        Some(last) => *last = (hash, tick),
        None => {
            changed.insert(cell, (hash, tick));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::cell::ENTRY_BYTES;
    use mino_protocol::client::Direction;
    use mino_protocol::wire::PlayerState;
    use mino_protocol::PlayerId;
    use std::sync::Arc;

    fn player(id: u32, x: f32, y: f32) -> Player {
        Player { id: PlayerId(id), name: Arc::from("p"), x, y, dir: Direction::STILL, heading: 0, input_seq: 0 }
    }

    fn cells_and_ids(own: &OwnCells) -> Vec<(u32, Vec<u32>)> {
        own.cells()
            .iter()
            .map(|f| {
                let ids = f.entries.chunks_exact(ENTRY_BYTES).map(|e| {
                    let state = PlayerState(e.try_into().expect("an entry"));
                    mino_protocol::server::player_id(&state).0
                });
                (f.cell.0, ids.collect())
            })
            .collect()
    }

    #[test]
    fn entries_per_occupied_cell_then_empty_runs_for_a_vacated_one() {
        let bounds = Bounds::new(0.0, 0.0, 1000.0, 1000.0);
        let grid = Grid::new(&bounds, 100.0).expect("grid");
        let mut own = OwnCells::default();
        let mut players = vec![player(3, 10.0, 10.0), player(1, 20.0, 20.0), player(2, 150.0, 10.0)];
        own.encode(&grid, &bounds, &players, 1);
        assert_eq!(cells_and_ids(&own), [(1, vec![1, 3]), (2, vec![2])]);
        players.truncate(2);
        for tick in 2..2 + u64::from(VACATED_TICKS) {
            own.encode(&grid, &bounds, &players, tick);
            assert_eq!(cells_and_ids(&own), [(1, vec![1, 3]), (2, vec![])], "tick {tick}");
        }
        own.encode(&grid, &bounds, &players, 9);
        assert_eq!(cells_and_ids(&own), [(1, vec![1, 3])], "announced long enough");
    }

    #[test]
    fn cells_group_by_region() {
        let bounds = Bounds::new(0.0, 0.0, 2000.0, 1000.0);
        let grid = Grid::new(&bounds, 100.0).expect("grid");
        let mut own = OwnCells::default();
        let players = [player(1, 10.0, 10.0), player(2, 790.0, 10.0), player(3, 810.0, 10.0)];
        own.encode(&grid, &bounds, &players, 1);
        let regions: Vec<(u32, usize)> = own.by_region(&grid).iter().map(|(r, f)| (r.0, f.len())).collect();
        assert_eq!(regions, [(1, 2), (2, 1)]);
    }
}
