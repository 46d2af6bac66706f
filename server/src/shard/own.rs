//! This shard's cells, a step at a time: each occupied cell's players (sorted
//! by id, exactly as the wire carries them), and for every cell that changed
//! in the last 64 steps the items its stream takes ([`super::streams`]):
//! the full form when it changed, and a delta for each of the step's aligned
//! spans in which it changed, each encoded once for every socket and every
//! other shard. Clustered, the same items go to the other shards in one
//! region bundle a region a step.
//!
//! A cell emptied keeps its stream (an empty full form, the deltas of its
//! leaves) until it has been empty and still for 64 steps.

use super::grid::{CellId, Grid, RegionId};
use super::streams::{Stream, Streams, OWN};
use crate::sim::World;
use bytes::Bytes;
use mino_protocol::delta::{encode_delta, encode_full, MAX_SPAN};
use mino_protocol::entry::Entry;
use mino_protocol::motion::Motion;
use mino_protocol::quantize;
use mino_protocol::view::{write_bundle_cell, write_item, ItemKind};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// A cell's states over the last steps: (the step from which it holds, the
/// players), oldest first; the last is the current one.
#[derive(Debug, Default)]
struct History {
    states: VecDeque<(u64, Arc<[Entry]>)>,
}

impl History {
    fn current(&self) -> &[Entry] {
        self.states.back().map_or(&[], |(_, s)| s)
    }

    /// The state at step `at` (empty before the first).
    fn at(&self, at: u64) -> &[Entry] {
        let i = self.states.partition_point(|(s, _)| *s <= at);
        if i == 0 {
            &[]
        } else {
            &self.states[i - 1].1
        }
    }

    /// True when the state changed at a step in `(from, to]`.
    fn changed_within(&self, from: u64, to: u64) -> bool {
        self.states.iter().any(|(s, _)| *s > from && *s <= to)
    }

    /// The last step the state changed.
    fn last_change(&self) -> u64 {
        self.states.back().map_or(0, |(s, _)| *s)
    }

    /// Forgets states no delta of a step after `step` can start from.
    fn trim(&mut self, step: u64) {
        let oldest = step.saturating_sub(u64::from(MAX_SPAN));
        while self.states.len() > 1 && self.states[1].0 <= oldest {
            self.states.pop_front();
        }
    }
}

/// This shard's cells.
#[derive(Debug, Default)]
pub(crate) struct OwnCells {
    /// Scratch: (cell, index of the player), sorted by cell then id.
    order: Vec<(CellId, u32)>,
    /// Cells holding players, or changed in the last 64 steps.
    history: HashMap<CellId, History>,
    /// Scratch: this step's occupied cells and their entries' ranges.
    occupied: Vec<(CellId, std::ops::Range<usize>)>,
    entries: Vec<Entry>,
    body: Vec<u8>,
    /// The cells that changed this step (sorted), for the region bundles.
    changed: Vec<CellId>,
}

/// An item's bytes: tag, length and `body`.
fn item(kind: ItemKind, body: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(body.len() + 3);
    write_item(&mut out, kind, body);
    Bytes::from(out)
}

impl OwnCells {
    /// Encodes step `step`: every cell of `world`'s players on `grid`, into
    /// the own streams of `streams` (deltas predicted with `motion`).
    pub(crate) fn encode(&mut self, step: u64, grid: &Grid, world: &World, motion: &Motion, streams: &mut Streams) {
        let players = world.players();
        let bounds = world.bounds();
        self.order.clear();
        self.order.extend(players.iter().enumerate().map(|(i, p)| {
            let (x, y) = quantize::world_position(bounds, p.x, p.y);
            (grid.cell_of(x, y), i as u32)
        }));
        self.order.sort_unstable_by_key(|&(cell, i)| (cell, players[i as usize].id));
        self.entries.clear();
        self.entries.extend(self.order.iter().map(|&(_, i)| players[i as usize].entry()));
        self.occupied.clear();
        let mut start = 0;
        for run in self.order.chunk_by(|a, b| a.0 == b.0) {
            self.occupied.push((run[0].0, start..start + run.len()));
            start += run.len();
        }
        self.changed.clear();
        // Occupied cells whose players changed, then cells emptied.
        for (cell, range) in &self.occupied {
            let now = &self.entries[range.clone()];
            let history = self.history.entry(*cell).or_default();
            if history.current() != now {
                history.states.push_back((step, Arc::from(now)));
                self.changed.push(*cell);
            }
        }
        for (cell, history) in &mut self.history {
            if !history.current().is_empty() && self.occupied.binary_search_by_key(cell, |(c, _)| *c).is_err() {
                history.states.push_back((step, Arc::from(&[][..])));
                self.changed.push(*cell);
            }
        }
        self.changed.sort_unstable();
        let mut gone = Vec::new();
        for (&cell, history) in &mut self.history {
            let Some((column, row)) = grid.position(cell) else { continue };
            let offset = u64::from(column) + 2 * u64::from(row);
            let changed = history.last_change() == step;
            let recent = step - history.last_change().min(step) < u64::from(MAX_SPAN);
            let Some(stream) = streams.get_or_insert(OWN, cell, || Stream::new(step.saturating_sub(1), offset, 0))
            else {
                continue;
            };
            if !recent {
                stream.still(step);
                history.trim(step);
                if history.current().is_empty() {
                    gone.push(cell);
                }
                continue;
            }
            let mut deltas = Vec::new();
            let mut q = 1u32;
            while q <= MAX_SPAN && (step + offset).is_multiple_of(u64::from(q)) {
                let from = step.saturating_sub(u64::from(q));
                if history.changed_within(from, step) {
                    self.body.clear();
                    encode_delta(history.at(from), history.current(), q, motion, &mut self.body);
                    deltas.push((q, item(ItemKind::Delta { span: q }, &self.body)));
                }
                q *= 2;
            }
            let full = if changed || stream.full().is_empty() {
                self.body.clear();
                encode_full(history.current(), &mut self.body);
                item(ItemKind::Full, &self.body)
            } else {
                stream.full().clone()
            };
            stream.push(step, full, !history.current().is_empty(), changed, &deltas);
            history.trim(step);
        }
        for cell in gone {
            self.history.remove(&cell);
            streams.remove(OWN, cell);
        }
    }

    /// This step's region bundles' items (`CellBundle.items`): every own
    /// stream's full form and the deltas ending at `step`, by region.
    pub(crate) fn bundles(&self, step: u64, grid: &Grid, streams: &Streams) -> Vec<(RegionId, Bytes)> {
        let mut cells: Vec<CellId> = self.history.keys().copied().collect();
        cells.sort_unstable();
        let mut by_region: HashMap<RegionId, (u32, Vec<u8>)> = HashMap::new();
        let mut deltas: Vec<&[u8]> = Vec::new();
        for cell in cells {
            let (Some(region), Some(stream)) = (grid.region_of(cell), streams.get(OWN, cell)) else { continue };
            deltas.clear();
            deltas.extend(stream.deltas_at(step));
            let (previous, out) = by_region.entry(region).or_default();
            write_bundle_cell(out, *previous, cell.0, stream.full(), &deltas);
            *previous = cell.0;
        }
        let mut out: Vec<(RegionId, Bytes)> = by_region.into_iter().map(|(r, (_, b))| (r, Bytes::from(b))).collect();
        out.sort_unstable_by_key(|(r, _)| *r);
        out
    }

    /// Cells that changed this step.
    pub(crate) fn changed(&self) -> &[CellId] {
        &self.changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::client::Direction;
    use mino_protocol::delta::apply;
    use mino_protocol::view::{parse_item, read_bundle};
    use mino_protocol::wire::Bounds;
    use mino_protocol::PlayerId;

    fn setup() -> (Grid, World, Streams, OwnCells) {
        let bounds = Bounds::new(0.0, 0.0, 1000.0, 1000.0);
        let grid = Grid::new(&bounds, 100.0).expect("grid");
        let world = World::new(bounds, 120.0, 20);
        let streams = Streams::new(100, mino_protocol::ShardId(7));
        (grid, world, streams, OwnCells::default())
    }

    /// What a holder of every step's one-step deltas holds of `cell`.
    fn replay(stream_items: &[Vec<u8>], motion: &Motion) -> Vec<Entry> {
        let mut held = Vec::new();
        let mut out = Vec::new();
        for bytes in stream_items {
            let item = parse_item(bytes).expect("an item");
            let ItemKind::Delta { span } = item.kind else { panic!("a delta") };
            apply(&held, item.body, span, motion, usize::MAX, &mut out).expect("applies");
            std::mem::swap(&mut held, &mut out);
        }
        held
    }

    #[test]
    fn a_walkers_one_step_deltas_rebuild_its_cell_and_cost_nothing_between_turns() {
        let (grid, mut world, mut streams, mut own) = setup();
        world.add(PlayerId(1), "a".into(), 150.0, 150.0);
        world.add(PlayerId(2), "b".into(), 160.0, 150.0);
        let cell = grid.cell_of(150.0, 150.0);
        let motion = world.motion().clone();
        world.set_direction(PlayerId(1), Direction::new(1.0, 0.1).expect("dir"), 1);
        world.set_direction(PlayerId(2), Direction::new(-0.1, 1.0).expect("dir"), 1);
        let mut items = Vec::new();
        for step in 1..=8 {
            if step == 3 {
                world.set_direction(PlayerId(1), Direction::new(0.0, 1.0).expect("dir"), 2);
            }
            world.step();
            own.encode(step, &grid, &world, &motion, &mut streams);
            let stream = streams.get(OWN, cell).expect("a stream");
            let one: Vec<u8> =
                stream.deltas_at(step).find(|d| d[0] & 0x0f == 1).map(<[u8]>::to_vec).unwrap_or_default();
            if step > 1 && step != 3 {
                assert_eq!(one, [0x01], "step {step}: an empty one-step delta");
            }
            items.push(one);
        }
        let now: Vec<Entry> = world.players().iter().map(|p| p.entry()).collect();
        assert_eq!(replay(&items, &motion), now);
    }

    #[test]
    fn an_emptied_cell_says_so_then_goes_after_64_still_steps() {
        let (grid, mut world, mut streams, mut own) = setup();
        world.add(PlayerId(1), "a".into(), 150.0, 150.0);
        let motion = world.motion().clone();
        let cell = grid.cell_of(150.0, 150.0);
        own.encode(1, &grid, &world, &motion, &mut streams);
        world.remove(PlayerId(1));
        own.encode(2, &grid, &world, &motion, &mut streams);
        let stream = streams.get(OWN, cell).expect("still there");
        assert!(!stream.occupied());
        assert_eq!(own.changed(), [cell]);
        for step in 3..=70 {
            own.encode(step, &grid, &world, &motion, &mut streams);
        }
        assert!(streams.get(OWN, cell).is_none(), "gone");
    }

    #[test]
    fn bundles_carry_every_cells_full_form_and_this_steps_deltas_by_region() {
        let (grid, mut world, mut streams, mut own) = setup();
        world.add(PlayerId(1), "a".into(), 150.0, 150.0);
        world.add(PlayerId(2), "b".into(), 950.0, 950.0);
        let motion = world.motion().clone();
        own.encode(4, &grid, &world, &motion, &mut streams);
        let bundles = own.bundles(4, &grid, &streams);
        assert_eq!(bundles.len(), 2, "two regions");
        for (_, bytes) in &bundles {
            let cells = read_bundle(bytes).expect("valid");
            assert_eq!(cells.len(), 1);
            assert!(!cells[0].deltas.is_empty(), "the cell is new: its deltas of step 4");
        }
    }
}
