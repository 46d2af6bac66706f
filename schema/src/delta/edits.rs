//! A delta applied where the cell is held: read and checked against its
//! base first ([`Edits::read`], nothing written), then written into the
//! base's own list ([`Edits::write`], which cannot fail). Players between
//! the records only walk by the rule, so a cell of standing players is read
//! once and not rewritten, and a cell of walkers has only their positions
//! written: no copy of the cell. A bot holding a crowd of a thousand in its
//! cell is sent a delta of that cell most ticks (someone in it always
//! turns); copying the cell for each, with the look for walkers that left
//! and the merges of the few who came (`held.rs`), took 40 % of the bots'
//! instructions in section 15's crowd (callgrind on `delta_cost --scenario
//! crowd`: 12,421 M before, 7,337 M with this and held.rs's settled cells).
//!
//! The rule is [`super::apply`]'s, which is this over a copy of its base:
//! the same result and the same error for every body.

use super::{check_span, on_grid, read_change, read_counts, read_entry, walked, DeltaError, Reader};
use super::{FLAGS, HEADING, POSITION};
use crate::entry::Entry;
use crate::motion::Motion;

/// What a delta does to its base, read and checked: reused from one delta
/// to the next (a client keeps one), so applying allocates nothing once
/// its lists have grown.
#[derive(Clone, Debug, Default)]
pub struct Edits {
    /// Base indices of the players that left, increasing.
    leaves: Vec<usize>,
    /// Base indices of the players with a change record, increasing, and
    /// their new entries (rule, change and residual applied).
    changes: Vec<(usize, Entry)>,
    /// The players that entered, by increasing id.
    enters: Vec<Entry>,
}

impl Edits {
    /// Reads delta `body` over `span` ticks against `base` (sorted by id)
    /// and checks it whole, in the order [`super::apply`] reads it; the
    /// result may hold at most `max_players`.
    ///
    /// Errors: [`super::apply`]'s for the same delta. The lists are then
    /// unspecified (and [`Edits::write`] must not follow).
    pub fn read(
        &mut self,
        base: &[Entry],
        body: &[u8],
        span: u32,
        motion: &Motion,
        max_players: usize,
    ) -> Result<(), DeltaError> {
        check_span(span)?;
        self.leaves.clear();
        self.changes.clear();
        self.enters.clear();
        let mut r = Reader::new(body);
        let (leaves, changes, enters) = read_counts(&mut r, base.len())?;
        let mut index = 0usize;
        for k in 0..leaves {
            let gap = r.count(base.len())?;
            if k > 0 && gap == 0 {
                return Err(DeltaError::Index);
            }
            index = if k == 0 { gap } else { index + gap };
            if index >= base.len() {
                return Err(DeltaError::Index);
            }
            self.leaves.push(index);
        }
        // Each change record is read whole (its index, then what it holds,
        // then the next one's index) before its position is checked.
        let mut next = if changes > 0 { Some(read_change(&mut r, None, base.len())?) } else { None };
        let mut left = changes;
        let mut leave = 0;
        while let Some((i, what)) = next {
            leave += self.leaves[leave..].partition_point(|&l| l < i);
            if self.leaves.get(leave) == Some(&i) {
                return Err(DeltaError::Change);
            }
            let mut e = base[i];
            let mut residual = (0, 0);
            if what & HEADING != 0 {
                e.heading = r.u8()?;
            }
            if what & FLAGS != 0 {
                e.flags = r.u8()?;
            }
            if what & POSITION != 0 {
                residual = (super::unzigzag(r.varint()?), super::unzigzag(r.varint()?));
            }
            left -= 1;
            next = if left > 0 { Some(read_change(&mut r, Some(i), base.len())?) } else { None };
            let (x, y) = motion.advance((e.x, e.y), e.heading, e.moving(), span);
            e.x = on_grid(x, residual.0)?;
            e.y = on_grid(y, residual.1)?;
            self.changes.push((i, e));
        }
        if base.len() - leaves + enters > max_players {
            return Err(DeltaError::TooMany);
        }
        let mut last = None;
        for _ in 0..enters {
            let e = read_entry(&mut r, last)?;
            last = Some(e.id.0);
            self.enters.push(e);
        }
        r.finish()?;
        // An enter of a player who stayed (one who left may come back).
        for e in &self.enters {
            if let Ok(i) = base.binary_search_by_key(&e.id, |b| b.id) {
                if self.leaves.binary_search(&i).is_err() {
                    return Err(DeltaError::Duplicate);
                }
            }
        }
        Ok(())
    }

    /// Writes what [`Edits::read`] read against `players` (that base,
    /// unchanged since) into it: the leaves taken out, the changes put in,
    /// every other player walked by the rule over `span` ticks (only a
    /// walker is written), the enters merged in by id. Returns true when
    /// every player it wrote (walked, changed or entered) is `within` (a
    /// client that knew the others were finds who left its cell among
    /// these alone).
    pub fn write(
        &self,
        players: &mut Vec<Entry>,
        span: u32,
        motion: &Motion,
        mut within: impl FnMut(&Entry) -> bool,
    ) -> bool {
        let n = players.len();
        let (mut leaves, mut changes) = (self.leaves.iter().peekable(), self.changes.iter().peekable());
        let (mut from, mut to) = (0, 0);
        let mut all = true;
        loop {
            let next = match (changes.peek(), leaves.peek()) {
                (Some(&&(c, _)), Some(&&l)) => c.min(l),
                (Some(&&(c, _)), None) => c,
                (None, Some(&&l)) => l,
                (None, None) => n,
            };
            // The players before it only walk (moved down past the leaves).
            if to != from {
                players.copy_within(from..next, to);
            }
            all &= walk(&mut players[to..to + (next - from)], span, motion, &mut within);
            to += next - from;
            from = next;
            if from == n {
                break;
            }
            if leaves.next_if(|&&l| l == from).is_none() {
                if let Some(&(_, e)) = changes.next() {
                    all &= within(&e);
                    players[to] = e;
                    to += 1;
                }
            }
            from += 1;
        }
        players.truncate(to);
        // Checked by `read`: in id order, none of them a player who stayed,
        // within the limit.
        super::merge_checked(players, &self.enters);
        all && self.enters.iter().all(within)
    }
}

/// The players of `run` walked by the rule over `span` ticks, where they
/// are (a standing player is not written); true when every walker is
/// `within` after.
pub(super) fn walk(run: &mut [Entry], span: u32, motion: &Motion, within: &mut impl FnMut(&Entry) -> bool) -> bool {
    let mut all = true;
    for p in run.iter_mut().filter(|p| p.moving()) {
        *p = walked(p, span, motion);
        all &= within(p);
    }
    all
}
