//! What a client holds of the cells view frames told it: each (shard, cell)'s
//! players as of the last item applied, and the rule that applies a frame.
//! The bots and the test kit read frames with it; the browser's
//! `net/held.ts` does the same (both tested on `schema/fixtures/delta.json`).
//!
//! A cell never told is empty: a delta applies to the empty state then
//! (players entering a cell that was empty). A forget drops the cell, and so
//! does expiry when the Welcome gave one (`cell_expiry_ms`, for a session
//! whose frames may be lost): a cell sent nothing for that long is dropped as
//! if forgotten, since every cell of the view is sent whole more often.

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
    /// When an item last applied to it, ms on the clock of
    /// [`Held::apply_at`] (0 through [`Held::apply_into`]).
    pub heard_ms: u64,
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
    /// The arrival of the frame being applied, ms ([`HeldCell::heard_ms`]).
    now_ms: u64,
    /// Dropping cells sent nothing for a while (`None`: held until forgotten).
    expiry: Option<Expiry>,
}

/// The expiry of a client's cells.
#[derive(Debug)]
struct Expiry {
    /// A cell sent nothing for longer than this is dropped, ms.
    after_ms: u64,
    /// The clock at the last scan, ms (cells are scanned at most every
    /// [`EXPIRY_SCAN_MS`]).
    scanned_ms: u64,
}

/// Least time between two scans for expired cells, ms.
pub const EXPIRY_SCAN_MS: u64 = 1000;

impl Expiry {
    /// Drops the cells of `cells` heard of last before `now_ms - after_ms`,
    /// pushing a [`Update::Forgot`] for each (at the tick it was held at).
    fn scan(&mut self, now_ms: u64, cells: &mut FxHashMap<(u32, u32), HeldCell>, updates: &mut Vec<Update>) {
        if now_ms.saturating_sub(self.scanned_ms) < EXPIRY_SCAN_MS {
            return;
        }
        self.scanned_ms = now_ms;
        cells.retain(|&(shard, cell), held| {
            let keep = now_ms.saturating_sub(held.heard_ms) <= self.after_ms;
            if !keep {
                updates.push(Update::Forgot { shard, cell, tick: held.tick });
            }
            keep
        });
    }
}

impl Held {
    /// Nothing held yet; deltas predict with `motion` (the Welcome's world);
    /// a cell holds at most `max_players`.
    pub fn new(motion: Motion, max_players: usize) -> Held {
        Held { motion, max_players, cells: FxHashMap::default(), scratch: Vec::new(), now_ms: 0, expiry: None }
    }

    /// The same, dropping a cell that [`Held::apply_at`] applied nothing to
    /// for longer than `after_ms` (the Welcome's `cell_expiry_ms`; 0: never).
    pub fn expiring(mut self, after_ms: u32) -> Held {
        self.expiry = (after_ms > 0).then(|| Expiry { after_ms: u64::from(after_ms), scanned_ms: 0 });
        self
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
        self.now_ms = 0;
        self.apply_items(frame, updates)
    }

    /// [`Held::apply_into`] for a frame that arrived at `now_ms` on the
    /// caller's clock (ms, never going back): first, when cells expire
    /// ([`Held::expiring`]), the cells applied nothing to for longer than
    /// that are dropped, each as a [`Update::Forgot`] at the tick it was
    /// held at (scanned at most every [`EXPIRY_SCAN_MS`]); then the frame.
    ///
    /// Errors: as [`Held::apply_into`].
    pub fn apply_at(&mut self, frame: &ViewFrame<'_>, now_ms: u64, updates: &mut Vec<Update>) -> Result<(), HeldError> {
        updates.clear();
        self.now_ms = now_ms;
        if let Some(expiry) = self.expiry.as_mut() {
            expiry.scan(now_ms, &mut self.cells, updates);
        }
        self.apply_items(frame, updates)
    }

    /// Applies `frame`'s items after what `updates` holds.
    fn apply_items(&mut self, frame: &ViewFrame<'_>, updates: &mut Vec<Update>) -> Result<(), HeldError> {
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
                    held.heard_ms = self.now_ms;
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

    /// A frame of shard 7 at `tick` with one full form of `entries` in each of `cells`.
    fn full_frame(tick: u64, cells: &[u32], entries: &[Entry]) -> Vec<u8> {
        let (mut body, mut item, mut frame) = (Vec::new(), Vec::new(), Vec::new());
        encode_full(entries, &mut body);
        write_item(&mut item, ItemKind::Full, &body);
        let cells: Vec<(u32, Vec<&[u8]>)> = cells.iter().map(|&c| (c, vec![&item[..]])).collect();
        write_section(&mut frame, &Section { shard: 7, tick, cells: &cells });
        frame
    }

    #[test]
    fn cells_sent_nothing_for_the_expiry_are_dropped_as_forgotten() {
        let m = Motion::new(&Bounds::new(0.0, 0.0, 1000.0, 1000.0), 120.0, 20);
        let players = [e(1, 100, 0, false)];
        let mut held = Held::new(m.clone(), 100).expiring(5_000);
        let mut never = Held::new(m, 100);
        let mut updates = Vec::new();
        let mut apply = |held: &mut Held, tick: u64, cells: &[u32], now_ms: u64| {
            let frame = full_frame(tick, cells, &players);
            held.apply_at(&ViewFrame::parse(&frame).expect("valid"), now_ms, &mut updates).expect("applies");
            updates.clone()
        };
        for h in [&mut held, &mut never] {
            apply(h, 10, &[1, 2], 1_000);
            // Cell 1 is sent again; cell 2 is not (its forget was lost).
            assert_eq!(apply(h, 20, &[1], 3_000), [Update::Cell { shard: 7, cell: 1, tick: 20 }]);
        }
        // 5 s after cell 2 was last sent: still held.
        assert_eq!(apply(&mut held, 30, &[1], 6_000), [Update::Cell { shard: 7, cell: 1, tick: 30 }]);
        assert!(held.cell(7, 2).is_some());
        // Past it: dropped before the frame applies, at the tick it was held at.
        let updates = apply(&mut held, 40, &[1], 7_001);
        assert_eq!(
            updates,
            [Update::Forgot { shard: 7, cell: 2, tick: 10 }, Update::Cell { shard: 7, cell: 1, tick: 40 }]
        );
        assert!(held.cell(7, 2).is_none());
        assert!(held.cell(7, 1).is_some(), "a cell sent something within the expiry stays");
        // Sent again, it is held again, and its clock starts anew.
        apply(&mut held, 50, &[2], 7_100);
        assert_eq!(apply(&mut held, 60, &[1], 12_000), [Update::Cell { shard: 7, cell: 1, tick: 60 }]);
        assert!(held.cell(7, 2).is_some());
        // Past it again, but within a second of the last scan: kept until the next.
        assert_eq!(apply(&mut held, 70, &[1], 12_200), [Update::Cell { shard: 7, cell: 1, tick: 70 }]);
        assert!(held.cell(7, 2).is_some(), "no scan within EXPIRY_SCAN_MS of the last");
        let updates = apply(&mut held, 80, &[1], 13_000);
        assert_eq!(updates[0], Update::Forgot { shard: 7, cell: 2, tick: 50 });
        // Each held cell keeps its own time: none is kept for a cell not held.
        let heard = |h: &Held| h.cells().filter(|(_, c)| c.heard_ms > 0).count();
        assert_eq!(heard(&held), 1, "a dropped cell's time is dropped with it");
        // A cell forgotten by its item: its time goes at the next scan.
        let (mut forget, mut frame) = (Vec::new(), Vec::new());
        write_item(&mut forget, ItemKind::Forget, &[]);
        let cells: Vec<(u32, Vec<&[u8]>)> = vec![(1, vec![&forget])];
        write_section(&mut frame, &Section { shard: 7, tick: 90, cells: &cells });
        held.apply_at(&ViewFrame::parse(&frame).expect("valid"), 13_100, &mut Vec::new()).expect("applies");
        assert_eq!(held.cells().count(), 0);
        apply(&mut held, 100, &[3], 14_000);
        assert_eq!(heard(&held), 1, "only cell 3's time is kept");
        // Without an expiry (a reliable transport) nothing is ever dropped.
        assert_eq!(apply(&mut never, 30, &[1], 1_000_000), [Update::Cell { shard: 7, cell: 1, tick: 30 }]);
        assert!(never.cell(7, 2).is_some());
        assert!(Held::new(Motion::new(&Bounds::new(0.0, 0.0, 1.0, 1.0), 1.0, 20), 1).expiring(0).expiry.is_none());
    }
}
