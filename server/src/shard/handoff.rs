//! Handoff (protocol 6): where this shard's players were, step by step, for
//! the last [`MAX_SPAN`] steps, so a cell's delta over `(from, step]` can keep
//! the players that were in it at `from` wherever they walked, and send the
//! players that came from another cell as supplements keyed by that cell.
//!
//! The rule (`mino_protocol::held`, which clients apply): a cell's delta
//! over a span keeps every player that was in the cell at the span's base
//! and is still on the shard (at its position now, in another cell or not:
//! no leave), and enters only players new to the shard since the base; a
//! client moves a player that walked out into the cell its position is in
//! when it advances that cell by one delta over the same span in the same
//! section. A player that came from cell O is in a supplement keyed by O,
//! which a view sends unless it advances O that way ([`super::views`]). So
//! a straight walk from one cell of a view to another costs nothing, where
//! it cost a leave and a 7-byte enter.
//!
//! The moves are read off the cells' states as they change (a player gone
//! from one cell and found in another the same step), not off the players:
//! a standing place records none.

use super::grid::CellId;
use mino_protocol::delta::MAX_SPAN;
use mino_protocol::entry::Entry;
use mino_protocol::PlayerId;
use smallvec::SmallVec;
use std::collections::{HashMap, VecDeque};

/// Cell id of "not on the shard" (before it came, after it left).
const AWAY: CellId = CellId(0);

/// One player's moves in the last steps: (step, cell before, cell from that
/// step on), oldest first.
type Trail = SmallVec<[(u64, CellId, CellId); 2]>;

/// The moves of this shard's players over the last [`MAX_SPAN`] steps.
#[derive(Debug, Default)]
pub(crate) struct Moves {
    /// Each player that moved (came, left or crossed) in the window.
    trails: HashMap<PlayerId, Trail>,
    /// The cell of each player now (players that never moved since they
    /// came are there too).
    now: HashMap<PlayerId, CellId>,
    /// (step, player) of every trail record, oldest first: trimming order.
    order: VecDeque<(u64, PlayerId)>,
    /// Scratch: this step's departures (player, from).
    gone: Vec<(PlayerId, CellId)>,
    /// Scratch: this step's arrivals (player, into).
    came: Vec<(PlayerId, CellId)>,
}

/// A cell's players as one of its deltas keeps them, and the supplements of
/// the players that came from other cells.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    /// The players the delta's new state has, sorted by id.
    pub(crate) entries: Vec<Entry>,
    /// (origin cell, its players now here, sorted by id): the first `used`
    /// (the others are rooms kept for the next delta).
    supplements: Vec<(CellId, Vec<Entry>)>,
    used: usize,
}

impl Moves {
    /// Cell `cell`'s players went from `before` to `after` at `step` (both
    /// sorted by id); call for every changed cell of a step, then
    /// [`Moves::settle`].
    pub(crate) fn changed(&mut self, cell: CellId, before: &[Entry], after: &[Entry]) {
        let (mut a, mut b) = (before.iter().peekable(), after.iter().peekable());
        loop {
            match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x.id == y.id => {
                    a.next();
                    b.next();
                }
                (Some(x), Some(y)) if x.id < y.id => {
                    self.gone.push((x.id, cell));
                    a.next();
                }
                (Some(x), None) => {
                    self.gone.push((x.id, cell));
                    a.next();
                }
                (_, Some(y)) => {
                    self.came.push((y.id, cell));
                    b.next();
                }
                (None, None) => break,
            }
        }
    }

    /// Records step `step`'s moves (those [`Moves::changed`] saw) and forgets
    /// the ones no delta of a later step can reach back to.
    pub(crate) fn settle(&mut self, step: u64) {
        self.gone.sort_unstable();
        self.came.sort_unstable();
        let (mut g, mut c) = (0, 0);
        while g < self.gone.len() || c < self.came.len() {
            let (gone, came) = (self.gone.get(g), self.came.get(c));
            let (player, from, to) = match (gone, came) {
                (Some(&(p, from)), Some(&(q, to))) if p == q => {
                    g += 1;
                    c += 1;
                    (p, from, to)
                }
                (Some(&(p, from)), Some(&(q, _))) if p < q => {
                    g += 1;
                    (p, from, AWAY)
                }
                (Some(&(p, from)), None) => {
                    g += 1;
                    (p, from, AWAY)
                }
                (_, Some(&(q, to))) => {
                    c += 1;
                    (q, AWAY, to)
                }
                (None, None) => break,
            };
            self.trails.entry(player).or_default().push((step, from, to));
            self.order.push_back((step, player));
            if to == AWAY {
                self.now.remove(&player);
            } else {
                self.now.insert(player, to);
            }
        }
        self.gone.clear();
        self.came.clear();
        let oldest = step.saturating_sub(u64::from(MAX_SPAN));
        while let Some(&(s, player)) = self.order.front().filter(|(s, _)| *s <= oldest) {
            self.order.pop_front();
            if let Some(trail) = self.trails.get_mut(&player) {
                trail.retain(|r| r.0 > s);
                if trail.is_empty() {
                    self.trails.remove(&player);
                }
            }
        }
    }

    /// Where `player` was at step `at` (within the window): [`AWAY`] when
    /// it was not on the shard.
    fn cell_at(&self, player: PlayerId, at: u64) -> CellId {
        match self.trails.get(&player).and_then(|t| t.iter().find(|r| r.0 > at)) {
            Some(&(_, before, _)) => before,
            None => self.now.get(&player).copied().unwrap_or(AWAY),
        }
    }

    /// What `cell`'s delta over `(from, now]` keeps (see the module docs):
    /// `base` its players at `from`, `current` its players now (both sorted
    /// by id), `entry_of` a player's entry now in the cell it is in. One
    /// merge of the two: a player in both stayed (no lookup); one only now
    /// came (from another cell: a supplement; new to the shard: an enter);
    /// one only then left (to another cell: kept as it is now; gone: a leave).
    pub(crate) fn keep(
        &self,
        cell: CellId,
        from: u64,
        base: &[Entry],
        current: &[Entry],
        entry_of: impl Fn(CellId, PlayerId) -> Option<Entry>,
        out: &mut Kept,
    ) {
        out.entries.clear();
        out.clear_supplements();
        let (mut a, mut b) = (base.iter().peekable(), current.iter().peekable());
        loop {
            match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x.id == y.id => {
                    out.entries.push(**y);
                    a.next();
                    b.next();
                }
                (Some(x), Some(y)) if x.id < y.id => {
                    self.left(cell, x.id, &entry_of, out);
                    a.next();
                }
                (Some(x), None) => {
                    self.left(cell, x.id, &entry_of, out);
                    a.next();
                }
                (_, Some(y)) => {
                    match self.cell_at(y.id, from) {
                        c if c == cell || c == AWAY => out.entries.push(**y),
                        origin => out.supplement(origin, **y),
                    }
                    b.next();
                }
                (None, None) => break,
            }
        }
        out.supplements[..out.used].sort_unstable_by_key(|(o, _)| *o);
    }

    /// A player of `cell`'s base not there now: kept as it is now in the
    /// cell it went to, or left out (gone from the shard).
    fn left(&self, cell: CellId, id: PlayerId, entry_of: &impl Fn(CellId, PlayerId) -> Option<Entry>, out: &mut Kept) {
        if let Some(&there) = self.now.get(&id).filter(|&&there| there != cell) {
            out.entries.extend(entry_of(there, id));
        }
    }
}

impl Kept {
    /// No supplements (their rooms kept).
    fn clear_supplements(&mut self) {
        for (_, players) in &mut self.supplements[..self.used] {
            players.clear();
        }
        self.used = 0;
    }

    /// `player` came from `origin`: into its supplement.
    fn supplement(&mut self, origin: CellId, player: Entry) {
        if let Some((_, players)) = self.supplements[..self.used].iter_mut().find(|(o, _)| *o == origin) {
            players.push(player);
            return;
        }
        if self.used == self.supplements.len() {
            self.supplements.push((origin, Vec::new()));
        }
        let slot = &mut self.supplements[self.used];
        slot.0 = origin;
        slot.1.clear();
        slot.1.push(player);
        self.used += 1;
    }

    /// The supplements: (origin cell, its players now here, sorted by id),
    /// origins increasing.
    pub(crate) fn supplements(&self) -> &[(CellId, Vec<Entry>)] {
        &self.supplements[..self.used]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::entry::flags;

    fn e(id: u32, x: u16) -> Entry {
        Entry { id: PlayerId(id), x, y: 0, heading: 0, flags: flags(true, 0) }
    }

    #[test]
    fn a_delta_keeps_who_walked_out_and_supplements_who_walked_in() {
        let (a, b) = (CellId(1), CellId(2));
        let mut moves = Moves::default();
        // Step 1: 1 and 2 come into a, 3 into b.
        moves.changed(a, &[], &[e(1, 10), e(2, 20)]);
        moves.changed(b, &[], &[e(3, 30)]);
        moves.settle(1);
        // Step 2: 1 walks from a to b; 4 comes into b.
        moves.changed(a, &[e(1, 10), e(2, 20)], &[e(2, 21)]);
        moves.changed(b, &[e(3, 30)], &[e(1, 11), e(3, 31), e(4, 40)]);
        moves.settle(2);
        let now_b = [e(1, 11), e(3, 31), e(4, 40)];
        let entry_of =
            |cell: CellId, id: PlayerId| (cell == b).then(|| now_b.iter().find(|p| p.id == id).copied()).flatten();
        let mut kept = Kept::default();
        moves.keep(a, 1, &[e(1, 10), e(2, 20)], &[e(2, 21)], entry_of, &mut kept);
        assert_eq!(kept.entries, [e(1, 11), e(2, 21)], "a keeps 1 where it is now");
        assert!(kept.supplements().is_empty());
        moves.keep(b, 1, &[e(3, 30)], &now_b, entry_of, &mut kept);
        assert_eq!(kept.entries, [e(3, 31), e(4, 40)], "b has no enter of 1; 4 is new to the shard");
        assert_eq!(kept.supplements(), [(a, vec![e(1, 11)])]);
        // Over (0, 2]: 1, 2 and 4 were not on the shard at 0: all enters.
        moves.keep(b, 0, &[], &now_b, entry_of, &mut kept);
        assert_eq!((kept.entries.len(), kept.supplements().len()), (3, 0));
    }

    #[test]
    fn a_player_who_left_is_left_out_and_old_moves_are_forgotten() {
        let a = CellId(1);
        let mut moves = Moves::default();
        moves.changed(a, &[], &[e(1, 10)]);
        moves.settle(1);
        moves.changed(a, &[e(1, 10)], &[]);
        moves.settle(2);
        let mut kept = Kept::default();
        // Asked where player 1 is, anything would be found: it is not asked.
        moves.keep(a, 1, &[e(1, 10)], &[], |_, id| Some(e(id.0, 99)), &mut kept);
        assert!(kept.entries.is_empty(), "a leave");
        // Back at step 3: over (1, 3] it stayed (it was here at 1, is here now).
        moves.changed(a, &[], &[e(1, 12)]);
        moves.settle(3);
        moves.keep(a, 1, &[e(1, 10)], &[e(1, 12)], |_, _| None, &mut kept);
        assert_eq!((kept.entries.as_slice(), kept.supplements().len()), (&[e(1, 12)][..], 0));
        // Over (2, 3] it is new to the shard: an enter.
        moves.keep(a, 2, &[], &[e(1, 12)], |_, _| None, &mut kept);
        assert_eq!((kept.entries.as_slice(), kept.supplements().len()), (&[e(1, 12)][..], 0));
        for step in 4..=70 {
            moves.settle(step);
        }
        // Its last move (step 3) is kept while a delta may reach back to it.
        moves.changed(a, &[e(1, 12)], &[]);
        moves.settle(71);
        for step in 72..=140 {
            moves.settle(step);
        }
        assert!(moves.trails.is_empty() && moves.order.is_empty() && moves.now.is_empty());
    }
}
