//! This shard's cell frames of a tick: one self-contained frame per occupied
//! cell of its own players (shard, tick, server time, the cell, its entries),
//! encoded once and shared by every socket that sees the cell and by the
//! other shards (through Redis, in region bundles).
//!
//! A cell that was occupied and is empty now gets an empty frame for
//! [`VACATED_TICKS`] ticks, so the sockets that see it learn that its players
//! left the cell (a frame is complete for its cell) instead of waiting for a
//! grace to pass.
//!
//! Each cell also remembers the tick its players last changed (ids,
//! positions, headings, the acknowledged input), so that with keyframes a
//! cell that did not change need not be sent again (see `aoi.rs`).

use super::grid::{CellId, Grid, RegionId};
use crate::sim::Player;
use crate::ws_frame;
use bytes::Bytes;
use mino_protocol::cell::{CellEncoder, CellKey};
use mino_protocol::wire::Bounds;
use mino_protocol::{ShardId, Tick};
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

/// Ticks an emptied cell keeps getting an empty frame: the base period of the
/// prefetch tier, so every socket that sees the cell is sent one.
pub const VACATED_TICKS: u8 = 4;

/// One cell's frame of this tick.
#[derive(Clone, Debug)]
pub(crate) struct CellFrame {
    pub(crate) cell: CellId,
    /// Websocket-framed, for sockets.
    pub(crate) framed: Bytes,
    /// The message alone (a slice of `framed`), for other shards.
    pub(crate) payload: Bytes,
}

/// This shard's cell frames, rebuilt each tick.
#[derive(Default)]
pub(crate) struct OwnCells {
    encoder: CellEncoder,
    /// Scratch: (cell, index of the player), sorted by cell.
    order: Vec<(CellId, u32)>,
    frames: Vec<CellFrame>,
    /// Cells emptied recently, with the empty frames still to send.
    vacated: HashMap<CellId, u8>,
    occupied: Vec<CellId>,
    /// Per cell with a frame: a hash of its entries and the tick they last
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

    /// Encodes the frames of `players` for tick `tick` at wall time `wall_ms`.
    pub(crate) fn encode(
        &mut self,
        grid: &Grid,
        bounds: &Bounds,
        players: &[Player],
        shard: ShardId,
        tick: Tick,
        wall_ms: u64,
    ) {
        self.order.clear();
        self.order.extend(players.iter().enumerate().map(|(i, p)| (grid.cell_of(p.x, p.y), i as u32)));
        self.order.sort_unstable_by_key(|&(cell, i)| (cell, players[i as usize].id));
        self.frames.clear();
        let key = |cell: CellId| CellKey { shard, cell: cell.0, tick, server_time_ms: wall_ms };
        let mut previous = std::mem::take(&mut self.occupied);
        for run in self.order.chunk_by(|a, b| a.0 == b.0) {
            let cell = run[0].0;
            let entries = run.iter().map(|&(_, i)| players[i as usize].entry());
            if self.track_changes {
                note_change(&mut self.changed, cell, entries.clone(), tick.0);
            }
            let payload = self.encoder.encode(&key(cell), bounds, entries);
            self.frames.push(frame(cell, payload));
            self.occupied.push(cell);
            self.vacated.remove(&cell);
        }
        previous.retain(|c| self.occupied.binary_search(c).is_err());
        for cell in previous {
            self.vacated.insert(cell, VACATED_TICKS);
            if self.track_changes {
                note_change(&mut self.changed, cell, std::iter::empty(), tick.0);
            }
        }
        let encoder = &mut self.encoder;
        let frames = &mut self.frames;
        self.vacated.retain(|cell, left| {
            frames.push(frame(*cell, encoder.encode(&key(*cell), bounds, std::iter::empty())));
            *left -= 1;
            *left > 0
        });
        self.frames.sort_unstable_by_key(|f| f.cell);
        if !self.track_changes {
            return;
        }
        let vacated = &self.vacated;
        let occupied = &self.occupied;
        self.changed.retain(|cell, _| vacated.contains_key(cell) || occupied.binary_search(cell).is_ok());
    }

    /// The tick `cell`'s players last changed (`None`: no frame of this
    /// shard this tick, or changes not tracked).
    pub(crate) fn changed_at(&self, cell: CellId) -> Option<u64> {
        self.changed.get(&cell).map(|&(_, tick)| tick)
    }

    /// This tick's frames, by cell.
    pub(crate) fn frames(&self) -> &[CellFrame] {
        &self.frames
    }

    /// This tick's frames grouped by region, for the region bundles.
    pub(crate) fn by_region(&self, grid: &Grid) -> Vec<(RegionId, Vec<Bytes>)> {
        let mut regions: Vec<(RegionId, Vec<Bytes>)> = Vec::new();
        for f in &self.frames {
            let Some(region) = grid.region_of(f.cell) else { continue };
            match regions.iter_mut().find(|(r, _)| *r == region) {
                Some((_, frames)) => frames.push(f.payload.clone()),
                None => regions.push((region, vec![f.payload.clone()])),
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

fn frame(cell: CellId, payload: &[u8]) -> CellFrame {
    let framed = ws_frame::binary(payload);
    let payload = framed.slice(framed.len() - payload.len()..);
    CellFrame { cell, framed, payload }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::client::Direction;
    use mino_protocol::server::{decode, ServerMsg};
    use mino_protocol::PlayerId;
    use std::sync::Arc;

    fn player(id: u32, x: f32, y: f32) -> Player {
        Player { id: PlayerId(id), name: Arc::from("p"), x, y, dir: Direction::STILL, heading: 0, input_seq: 0 }
    }

    fn cells_and_ids(own: &OwnCells) -> Vec<(u32, Vec<u32>)> {
        own.frames()
            .iter()
            .map(|f| {
                let Ok(ServerMsg::Cell(c)) = decode(&f.payload) else { panic!("a cell frame") };
                assert_eq!(c.key().cell(), f.cell.0);
                (f.cell.0, c.players().iter().map(|p| mino_protocol::server::player_id(p).0).collect())
            })
            .collect()
    }

    #[test]
    fn one_frame_per_occupied_cell_then_empty_frames_for_a_vacated_one() {
        let bounds = Bounds::new(0.0, 0.0, 1000.0, 1000.0);
        let grid = Grid::new(&bounds, 100.0).expect("grid");
        let mut own = OwnCells::default();
        let mut players = vec![player(3, 10.0, 10.0), player(1, 20.0, 20.0), player(2, 150.0, 10.0)];
        own.encode(&grid, &bounds, &players, ShardId(7), Tick(1), 0);
        assert_eq!(cells_and_ids(&own), [(1, vec![1, 3]), (2, vec![2])]);
        players.truncate(2);
        for tick in 2..2 + u64::from(VACATED_TICKS) {
            own.encode(&grid, &bounds, &players, ShardId(7), Tick(tick), 0);
            assert_eq!(cells_and_ids(&own), [(1, vec![1, 3]), (2, vec![])], "tick {tick}");
        }
        own.encode(&grid, &bounds, &players, ShardId(7), Tick(9), 0);
        assert_eq!(cells_and_ids(&own), [(1, vec![1, 3])], "announced long enough");
    }

    #[test]
    fn frames_group_by_region() {
        let bounds = Bounds::new(0.0, 0.0, 2000.0, 1000.0);
        let grid = Grid::new(&bounds, 100.0).expect("grid");
        let mut own = OwnCells::default();
        let players = [player(1, 10.0, 10.0), player(2, 790.0, 10.0), player(3, 810.0, 10.0)];
        own.encode(&grid, &bounds, &players, ShardId(7), Tick(1), 0);
        let regions: Vec<(u32, usize)> = own.by_region(&grid).iter().map(|(r, f)| (r.0, f.len())).collect();
        assert_eq!(regions, [(1, 2), (2, 1)]);
    }
}
