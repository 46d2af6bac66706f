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
use super::handoff::{Kept, Moves};
use super::streams::{Stream, Streams, OWN};
use crate::sim::World;
use bytes::Bytes;
use mino_protocol::delta::{encode_delta, encode_full, MAX_SPAN};
use mino_protocol::entry::Entry;
use mino_protocol::motion::Motion;
use mino_protocol::view::{write_bundle_cell, write_delta_with, write_item, ItemKind};
use mino_protocol::PlayerId;
use smallvec::SmallVec;
use std::collections::HashMap;
use std::sync::Arc;

/// A cell's states over the last steps: (the step from which it holds, the
/// players), oldest first; the last is the current one. The last change and
/// whether the cell is occupied are kept beside them, so a cell that stands
/// still is passed over without reading its states. A settled cell's one
/// state is held inline (no allocation of its own: a standing player's cell
/// costs its table entry and its state).
#[derive(Debug, Default)]
struct History {
    states: SmallVec<[(u64, Arc<[Entry]>); 1]>,
    /// The step of the current state (0: none yet).
    last_change: u64,
    /// The current state holds players.
    occupied: bool,
    /// Listed in [`OwnCells::recent`].
    recent: bool,
}

impl History {
    fn current(&self) -> &[Entry] {
        self.states.last().map_or(&[], |(_, s)| s)
    }

    /// The state from step `step` on is `now`.
    fn push(&mut self, step: u64, now: Arc<[Entry]>) {
        self.occupied = !now.is_empty();
        self.last_change = step;
        self.states.push((step, now));
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
        self.last_change
    }

    /// Forgets states no delta of a step after `step` can start from; a
    /// cell left with its current state only keeps no spare room.
    fn trim(&mut self, step: u64) {
        let oldest = step.saturating_sub(u64::from(MAX_SPAN));
        let before = self.states.len();
        // The states superseded by one that began by `oldest`, in one move.
        let gone = self.states[1.min(before)..].partition_point(|(s, _)| *s <= oldest);
        self.states.drain(..gone);
        if self.states.len() == 1 && before > 1 {
            self.states.shrink_to_fit();
        }
    }
}

/// This shard's cells.
#[derive(Debug, Default)]
pub(crate) struct OwnCells {
    /// Each player's cell and entry at the last step, in the world's storage
    /// order: a player whose record still matches changed nothing.
    last: Vec<(CellId, Entry)>,
    /// Scratch: cells that may have changed this step, sorted, unique.
    dirty: Vec<CellId>,
    /// Scratch: players that may be in another cell than at the last step
    /// (crossed a border, came, or were swapped in storage by a removal).
    crossed: Vec<PlayerId>,
    /// Scratch: (cell, index of the player) of the dirty cells' players,
    /// sorted by cell then id.
    order: Vec<(CellId, u32)>,
    /// Cells holding players, or changed in the last 64 steps.
    history: HashMap<CellId, History>,
    /// The cells changed in the last 64 steps (each once): the only ones a
    /// step encodes; the others' streams are stilled in one pass
    /// ([`Streams::still_own`]).
    recent: Vec<CellId>,
    entries: Vec<Entry>,
    body: Vec<u8>,
    /// The cells that changed this step (sorted), for the region bundles.
    changed: Vec<CellId>,
    /// Where players were over the last steps (handoff deltas).
    moves: Moves,
    /// Scratch: what a delta keeps.
    kept: Kept,
    /// Scratch: a delta's supplements' items.
    supplements: Vec<(u32, Vec<u8>)>,
}

/// An item's bytes: tag, length and `body`.
fn item(kind: ItemKind, body: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(body.len() + 3);
    write_item(&mut out, kind, body);
    Bytes::from(out)
}

impl OwnCells {
    /// The cells that may have changed since the last step (`dirty`): the old
    /// and new cell of every player whose cell or entry differs from its
    /// record, of every player that came or went, in one pass over the
    /// players in storage order (a removal swaps the last player into the
    /// gap: both records then differ). Records `last` anew.
    fn find_dirty(&mut self, grid: &Grid, world: &World) {
        let players = world.players();
        self.dirty.clear();
        self.crossed.clear();
        for (i, p) in players.iter().enumerate() {
            let now = (grid.cell_of_q(p.x, p.y), p.entry());
            match self.last.get_mut(i) {
                Some(was) if *was == now => {}
                Some(was) => {
                    self.dirty.extend([was.0, now.0]);
                    if was.0 != now.0 || was.1.id != now.1.id {
                        self.crossed.push(p.id);
                    }
                    *was = now;
                }
                None => {
                    self.dirty.push(now.0);
                    self.crossed.push(p.id);
                    self.last.push(now);
                }
            }
        }
        self.dirty.extend(self.last.drain(players.len()..).map(|(cell, _)| cell));
        self.dirty.sort_unstable();
        self.dirty.dedup();
    }

    /// Encodes step `step`: every cell of `world`'s players on `grid`, into
    /// the own streams of `streams` (deltas predicted with `motion`).
    pub(crate) fn encode(&mut self, step: u64, grid: &Grid, world: &World, motion: &Motion, streams: &mut Streams) {
        self.find_dirty(grid, world);
        // Only the dirty cells' players: a standing crowd's cells are not
        // even looked at.
        self.order.clear();
        if !self.dirty.is_empty() {
            let dirty = &self.dirty;
            self.order.extend(
                self.last
                    .iter()
                    .enumerate()
                    .filter(|(_, (cell, _))| dirty.binary_search(cell).is_ok())
                    .map(|(i, (cell, _))| (*cell, i as u32)),
            );
            let last = &self.last;
            self.order.sort_unstable_by_key(|&(cell, i)| (cell, last[i as usize].1.id));
        }
        self.changed.clear();
        let mut runs = self.order.chunk_by(|a, b| a.0 == b.0).peekable();
        for &cell in &self.dirty {
            self.entries.clear();
            if let Some(run) = runs.next_if(|run| run[0].0 == cell) {
                self.entries.extend(run.iter().map(|&(_, i)| self.last[i as usize].1));
            }
            let now = &self.entries[..];
            if now.is_empty() && !self.history.contains_key(&cell) {
                continue;
            }
            let history = self.history.entry(cell).or_default();
            if history.current() != now {
                self.moves.changed(cell, history.current(), now);
                history.push(step, Arc::from(now));
                self.changed.push(cell);
            }
        }
        self.moves.settle(step);
        self.changed.sort_unstable();
        for cell in &self.changed {
            if let Some(history) = self.history.get_mut(cell).filter(|h| !h.recent) {
                history.recent = true;
                self.recent.push(*cell);
            }
        }
        let mut gone = Vec::new();
        let one_cell = grid.columns() == 1 && grid.rows() == 1;
        let mut i = 0;
        while i < self.recent.len() {
            let cell = self.recent[i];
            let Some(history) = self.history.get_mut(&cell) else {
                self.recent.swap_remove(i);
                continue;
            };
            let changed = history.last_change() == step;
            let recent = step - history.last_change().min(step) < u64::from(MAX_SPAN);
            let Some(stream) = streams.get_or_insert(OWN, cell, || Stream::new(step.saturating_sub(1), 0)) else {
                self.recent.swap_remove(i);
                continue;
            };
            if !recent {
                // Still for 64 steps: settled, out of the list.
                stream.still(step);
                history.trim(step);
                history.recent = false;
                if !history.occupied {
                    gone.push(cell);
                }
                self.recent.swap_remove(i);
                continue;
            }
            // Read only from here on: a delta looks at other cells' players.
            let Some(history) = self.history.get(&cell) else {
                self.recent.swap_remove(i);
                continue;
            };
            let mut deltas = Vec::new();
            let mut q = 1u32;
            while q <= MAX_SPAN && step.is_multiple_of(u64::from(q)) {
                let from = step.saturating_sub(u64::from(q));
                if history.changed_within(from, step) {
                    let others = &self.history;
                    let entry_of = |there: CellId, id: PlayerId| {
                        let players = others.get(&there)?.current();
                        players.binary_search_by_key(&id, |e| e.id).ok().map(|i| players[i])
                    };
                    // One cell (no area of interest): nobody walks out.
                    let kept: &[Entry] = if one_cell {
                        history.current()
                    } else {
                        self.moves.keep(cell, from, history.at(from), history.current(), entry_of, &mut self.kept);
                        &self.kept.entries
                    };
                    self.body.clear();
                    encode_delta(history.at(from), kept, q, motion, &mut self.body);
                    let mut with = Vec::with_capacity(self.body.len() + 4);
                    if one_cell || self.kept.supplements().is_empty() {
                        with.push(0);
                        write_item(&mut with, ItemKind::Delta { span: q }, &self.body);
                    } else {
                        write_item(&mut with, ItemKind::Delta { span: q }, &self.body);
                        let delta = std::mem::take(&mut with);
                        self.supplements.clear();
                        for (origin, players) in self.kept.supplements() {
                            self.body.clear();
                            encode_full(players, &mut self.body);
                            let mut sup = Vec::with_capacity(self.body.len() + 3);
                            write_item(&mut sup, ItemKind::Supplement, &self.body);
                            self.supplements.push((origin.0, sup));
                        }
                        let sups: SmallVec<[(u32, &[u8]); 4]> =
                            self.supplements.iter().map(|(o, b)| (*o, &b[..])).collect();
                        write_delta_with(&mut with, &delta, &sups);
                    }
                    deltas.push((q, Bytes::from(with)));
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
            stream.push(step, full, history.occupied, changed, &deltas);
            if let Some(history) = self.history.get_mut(&cell) {
                history.trim(step);
            }
            i += 1;
        }
        streams.still_own(step);
        for cell in gone {
            self.history.remove(&cell);
            streams.remove(OWN, cell);
        }
    }

    /// This step's region bundles' items (`CellBundle.cell_items`): every own
    /// stream's full form and the deltas ending at `step`, by region.
    pub(crate) fn bundles(&self, step: u64, grid: &Grid, streams: &Streams) -> Vec<(RegionId, Bytes)> {
        let mut cells: Vec<CellId> = self.history.keys().copied().collect();
        cells.sort_unstable();
        let mut by_region: HashMap<RegionId, (u32, Vec<u8>)> = HashMap::new();
        let mut deltas: Vec<&[u8]> = Vec::new();
        for cell in cells {
            let (Some(region), Some(stream)) = (grid.region_of(cell), streams.get(OWN, cell)) else { continue };
            deltas.clear();
            deltas.extend(stream.deltas_at(step).map(|d| &d[..]));
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

    /// Players that may stand in another cell than at the last step: every
    /// player whose cell changed is among them.
    pub(crate) fn crossed(&self) -> &[PlayerId] {
        &self.crossed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::client::Direction;
    use mino_protocol::delta::{apply, decode_full};
    use mino_protocol::view::{parse_item, read_bundle, DeltaWith};
    use mino_protocol::wire::Bounds;
    use mino_protocol::PlayerId;

    #[test]
    fn a_cells_history_is_small_and_a_settled_one_allocates_nothing() {
        // One per occupied cell (a standing player each, at 15,000 idle): if
        // this grows, say why in benches/RESULTS.md section 4.
        assert!(std::mem::size_of::<History>() <= 48, "History is {} bytes", std::mem::size_of::<History>());
        let mut h = History::default();
        for step in 1..=3 {
            h.push(step, Arc::from(&[][..]));
        }
        h.trim(3 + u64::from(MAX_SPAN));
        assert_eq!(h.states.len(), 1);
        assert!(!h.states.spilled(), "the one state left is inline");
    }

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
            let item = parse_item(DeltaWith::alone(bytes).expect("no supplement")).expect("an item");
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
            let one: Vec<u8> = stream
                .deltas_at(step)
                .find(|d| d.split().is_some_and(|d| d.span == 1))
                .map(|d| d.to_vec())
                .unwrap_or_default();
            if step > 1 && step != 3 {
                assert_eq!(one, [0, 0x01], "step {step}: no supplement, an empty one-step delta");
            }
            items.push(one);
        }
        let now: Vec<Entry> = world.players().iter().map(|p| p.entry()).collect();
        assert_eq!(replay(&items, &motion), now);
    }

    /// Each occupied cell's players, sorted by id, from scratch.
    fn truth(grid: &Grid, world: &World) -> HashMap<CellId, Vec<Entry>> {
        let mut cells: HashMap<CellId, Vec<Entry>> = HashMap::new();
        for p in world.players() {
            let (x, y) = world.position(p);
            cells.entry(grid.cell_of(x, y)).or_default().push(p.entry());
        }
        for entries in cells.values_mut() {
            entries.sort_unstable_by_key(|e| e.id);
        }
        cells
    }

    #[test]
    fn only_changed_cells_are_looked_at_yet_every_cell_matches_the_world_through_joins_leaves_and_turns() {
        use rand::{Rng, SeedableRng};
        let (grid, mut world, mut streams, mut own) = setup();
        let motion = world.motion().clone();
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for id in 1..=40u32 {
            world.add(PlayerId(id), "p".into(), rng.random_range(0.0..1000.0), rng.random_range(0.0..1000.0));
        }
        let mut next = 41u32;
        for step in 1..=300u64 {
            match rng.random_range(0..10) {
                // Leaves from the middle swap the last player into the gap.
                0 => {
                    let ids: Vec<PlayerId> = world.players().iter().map(|p| p.id).collect();
                    if let Some(&id) = ids.get(rng.random_range(0..ids.len().max(1))) {
                        world.remove(id);
                    }
                }
                1 => {
                    world.add(PlayerId(next), "p".into(), rng.random_range(0.0..1000.0), 500.0);
                    next += 1;
                }
                2..=4 => {
                    let ids: Vec<PlayerId> = world.players().iter().map(|p| p.id).collect();
                    let id = ids[rng.random_range(0..ids.len())];
                    let (x, y) = (rng.random_range(-1.0..1.0f32), rng.random_range(-1.0..1.0f32));
                    let dir = if step % 3 == 0 { Direction::STILL } else { Direction::new(x, y).expect("dir") };
                    world.set_direction(id, dir, step as u32);
                }
                _ => {}
            }
            world.step();
            own.encode(step, &grid, &world, &motion, &mut streams);
            let truth = truth(&grid, &world);
            for (cell, entries) in &truth {
                let stream = streams.get(OWN, *cell).expect("an occupied cell has a stream");
                let item = parse_item(stream.full()).expect("an item");
                let mut got = Vec::new();
                decode_full(item.body, usize::MAX, &mut got).expect("decodes");
                assert_eq!(&got, entries, "step {step}: cell {cell:?}");
            }
            for (cell, _) in streams.cells() {
                if let Some(stream) = streams.get(OWN, cell) {
                    assert_eq!(stream.occupied(), truth.contains_key(&cell), "step {step}: cell {cell:?}");
                    assert_eq!(stream.latest(), step, "every own stream is at the step, settled or not");
                }
            }
        }
        // Nobody walks: the next step finds nothing to look at.
        for p in world.players().iter().map(|p| p.id).collect::<Vec<_>>() {
            world.set_direction(p, Direction::STILL, 0);
        }
        own.encode(301, &grid, &world, &motion, &mut streams);
        own.encode(302, &grid, &world, &motion, &mut streams);
        assert!(own.dirty.is_empty() && own.order.is_empty() && own.changed().is_empty());
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
