//! What a client holds of the cells view frames told it: each (shard, cell)'s
//! players as of the last item applied, and the rule that applies a frame.
//! The bots and the test kit read frames with it; the browser's
//! `net/held.ts` does the same (both tested on `schema/fixtures/delta.json`).
//!
//! A cell never told is empty: a delta applies to the empty state then
//! (players entering a cell that was empty). A forget drops the cell.

use crate::delta::{self, DeltaError};
use crate::entry::Entry;
use crate::motion::Motion;
use crate::view::{ItemKind, ViewError, ViewFrame};
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry as Slot;

/// One cell as held.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeldCell {
    /// The low 32 bits of the tick of the section that last changed it.
    pub tick: u32,
    /// Its players, sorted by id.
    pub entries: Vec<Entry>,
}

/// What one frame did to a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// The cell (of shard, cell id) now holds new players at the tick.
    Cell {
        /// Whose players.
        shard: u32,
        /// The cell.
        cell: u32,
        /// The section's tick (low 32 bits).
        tick: u32,
    },
    /// Every cell of the shard was dropped (a resync, or the shard left).
    Reset {
        /// Whose cells.
        shard: u32,
        /// The section's tick (low 32 bits).
        tick: u32,
    },
    /// The cell left the view and was dropped.
    Forgot {
        /// Whose players.
        shard: u32,
        /// The cell.
        cell: u32,
        /// The section's tick (low 32 bits).
        tick: u32,
    },
}

/// Why a frame could not be applied: the bytes, or an item that does not fit
/// what is held. The frame's earlier items stay applied; a client resyncs
/// (reconnects) rather than draw on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HeldError {
    /// The frame's bytes.
    #[error("view frame: {0}")]
    Frame(#[from] ViewError),
    /// An item of (shard, cell) that does not apply.
    #[error("cell {cell} of shard {shard}: {error}")]
    Item {
        /// Whose players.
        shard: u32,
        /// The cell.
        cell: u32,
        /// What was wrong.
        error: DeltaError,
    },
}

/// Every cell a client holds, and the rule deltas predict with.
#[derive(Debug)]
pub struct Held {
    motion: Motion,
    max_players: usize,
    /// By (shard, cell id): small integer keys, hashed with Fx (rustc-hash)
    /// rather than SipHash, which was a tenth of a bot's time.
    cells: FxHashMap<(u32, u32), HeldCell>,
    scratch: Vec<Entry>,
}

impl Held {
    /// Nothing held yet; deltas predict with `motion` (the Welcome's world);
    /// a cell holds at most `max_players`.
    pub fn new(motion: Motion, max_players: usize) -> Held {
        Held { motion, max_players, cells: FxHashMap::default(), scratch: Vec::new() }
    }

    /// Applies the verified `frame`, item by item, and returns what changed
    /// in order.
    ///
    /// Errors: [`HeldError`] at the first item that does not apply.
    pub fn apply(&mut self, frame: &ViewFrame<'_>) -> Result<Vec<Update>, HeldError> {
        let mut updates = Vec::new();
        self.apply_into(frame, &mut updates)?;
        Ok(updates)
    }

    /// [`Held::apply`] into `updates` (cleared first), so a client reading
    /// twenty frames a second reuses one buffer.
    ///
    /// Errors: [`HeldError`] at the first item that does not apply; `updates`
    /// then holds what the frame's earlier items did.
    pub fn apply_into(&mut self, frame: &ViewFrame<'_>, updates: &mut Vec<Update>) -> Result<(), HeldError> {
        updates.clear();
        for section in frame.sections() {
            if section.is_empty() {
                self.forget_shard(section.shard);
                updates.push(Update::Reset { shard: section.shard, tick: section.tick });
                continue;
            }
            for cell in section.cells() {
                let key = (section.shard, cell.cell);
                let fail = |error| HeldError::Item { shard: section.shard, cell: cell.cell, error };
                for item in cell.items() {
                    // One lookup an item (a cell is rarely sent more than
                    // one): a bot applies a hundred a frame, 20 frames a second.
                    let slot = self.cells.entry(key);
                    let applied = match item.kind {
                        ItemKind::Forget => {
                            if let Slot::Occupied(held) = slot {
                                held.remove();
                            }
                            updates.push(Update::Forgot { shard: section.shard, cell: cell.cell, tick: section.tick });
                            continue;
                        }
                        ItemKind::Full => delta::decode_full(item.body, self.max_players, &mut self.scratch),
                        ItemKind::Delta { span } => {
                            let base = match &slot {
                                Slot::Occupied(held) => &held.get().entries[..],
                                Slot::Vacant(_) => &[][..],
                            };
                            delta::apply(base, item.body, span, &self.motion, self.max_players, &mut self.scratch)
                        }
                    };
                    applied.map_err(fail)?;
                    let held = slot.or_default();
                    std::mem::swap(&mut held.entries, &mut self.scratch);
                    held.tick = section.tick;
                    updates.push(Update::Cell { shard: section.shard, cell: cell.cell, tick: section.tick });
                }
            }
        }
        Ok(())
    }

    /// The cell of `shard` and `cell` id, if held.
    pub fn cell(&self, shard: u32, cell: u32) -> Option<&HeldCell> {
        self.cells.get(&(shard, cell))
    }

    /// Every held cell: ((shard, cell), what it holds).
    pub fn cells(&self) -> impl Iterator<Item = (&(u32, u32), &HeldCell)> {
        self.cells.iter()
    }

    /// Drops every cell of `shard` (its shard left the place).
    pub fn forget_shard(&mut self, shard: u32) {
        self.cells.retain(|(s, _), _| *s != shard);
    }

    /// Drops everything (a new Welcome).
    pub fn clear(&mut self) {
        self.cells.clear();
    }

    /// The movement rule in use.
    pub fn motion(&self) -> &Motion {
        &self.motion
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delta::{encode_delta, encode_full};
    use crate::entry::flags;
    use crate::view::{write_item, write_section, Section};
    use crate::wire::Bounds;
    use crate::PlayerId;

    fn e(id: u32, x: u16, heading: u8, moving: bool) -> Entry {
        Entry { id: PlayerId(id), x, y: 1000, heading, flags: flags(moving, 0) }
    }

    #[test]
    fn full_forms_deltas_and_forgets_apply_in_order() {
        let m = Motion::new(&Bounds::new(0.0, 0.0, 1000.0, 1000.0), 120.0, 20);
        let first = vec![e(1, 100, 0, true), e(2, 900, 128, false)];
        let second: Vec<Entry> = vec![e(1, 100 + 2 * 393, 0, true), e(2, 900, 140, false), e(3, 50, 64, true)];
        let (mut full, mut body, mut delta) = (Vec::new(), Vec::new(), Vec::new());
        encode_full(&first, &mut body);
        write_item(&mut full, ItemKind::Full, &body);
        body.clear();
        encode_delta(&first, &second, 2, &m, &mut body);
        write_item(&mut delta, ItemKind::Delta { span: 2 }, &body);
        let mut forget = Vec::new();
        write_item(&mut forget, ItemKind::Forget, &[]);
        let mut frame = Vec::new();
        let cells: Vec<(u32, Vec<&[u8]>)> = vec![(4, vec![&full, &delta]), (9, vec![&full])];
        write_section(&mut frame, &Section { shard: 7, tick: 12, cells: &cells });
        let mut held = Held::new(m.clone(), 100);
        let updates = held.apply(&ViewFrame::parse(&frame).expect("valid")).expect("applies");
        assert_eq!(updates.len(), 3);
        assert_eq!(held.cell(7, 4).map(|c| (c.tick, c.entries.clone())), Some((12, second.clone())));
        assert_eq!(held.cell(7, 9).map(|c| c.entries.clone()), Some(first.clone()));
        // A delta onto a cell never held applies to the empty state: this one
        // does not fit it (it turns player 2, who is not there).
        let mut frame = Vec::new();
        let cells: Vec<(u32, Vec<&[u8]>)> = vec![(30, vec![&delta])];
        write_section(&mut frame, &Section { shard: 7, tick: 12, cells: &cells });
        let refused = held.apply(&ViewFrame::parse(&frame).expect("valid"));
        assert!(matches!(refused, Err(HeldError::Item { shard: 7, cell: 30, .. })), "{refused:?}");
        let mut frame = Vec::new();
        let cells: Vec<(u32, Vec<&[u8]>)> = vec![(4, vec![&forget])];
        write_section(&mut frame, &Section { shard: 7, tick: 13, cells: &cells });
        let updates = held.apply(&ViewFrame::parse(&frame).expect("valid")).expect("applies");
        assert_eq!(updates, [Update::Forgot { shard: 7, cell: 4, tick: 13 }]);
        assert!(held.cell(7, 4).is_none());
    }
}
