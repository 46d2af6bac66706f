//! Shared delta frames: a cell's players as a **full form** (every player's
//! entry) or a **delta** against the same cell's state some ticks before
//! (only what the movement rule did not predict), the items view frames and
//! region bundles carry. Encoders, a strict decoder that never reads outside
//! its bytes, and the one rule that applies a delta, used by the server's
//! tests, the bots and the test kit (the browser mirrors it in
//! `client-web/src/net/delta.ts`, held to the same bytes by
//! `schema/fixtures/delta.json`).
//!
//! A cell's state is its players' [`Entry`]s sorted by id. A delta over
//! `span` ticks (a power of two, 1 to 64) from a base state holds, in order:
//!
//! - **leaves**: players of the base that are gone, as gaps between their
//!   indices in the base (varints);
//! - **changes**: players that stayed whose heading or flags changed, or whose
//!   position is not the prediction: the gap to its base index shifted left 3
//!   with 3 bits saying what follows (heading byte, flags byte, a position
//!   residual as two zigzag varints, x then y);
//! - **enters**: new players: the gap from the previous enter's id (varint;
//!   the first's is its id), x and y (u16 little-endian), heading, flags.
//!
//! The counts come first in one byte (leaves 0-3 in bits 0-1, changes 0-7 in
//! bits 2-4, enters 0-6 in bits 5-7), or the escape `0b111_00000` followed by
//! the three counts as varints. A delta with nothing to say is empty: every
//! player that stayed is where the rule puts it.
//!
//! **Prediction.** Every player that stayed takes its new heading and flags
//! (from its change, else its base ones), then walks `span` ticks with them
//! ([`Motion::advance`]: its heading's step a tick when the walking flag is
//! set, each axis clamped), then adds its residual. The server simulates on
//! the same grid with the same rule, so a walker going straight, or standing,
//! costs nothing; a turn costs its index and two bytes. (Source: the
//! research note's "predicted delta", `research/bandwidth.md` §5-7, and
//! Fiedler's "Snapshot Compression": changed-only records with relative
//! indices.)
//!
//! A **full form**: each player as an enter is written (id gaps; the first
//! is the id), up to the end of its bytes. A full form is always the body
//! of an item, whose length bounds it, so since protocol 8 it carries no
//! count (a byte a full form and a supplement).

use crate::entry::Entry;
use crate::ids::PlayerId;
use crate::motion::Motion;

mod edits;
pub use edits::Edits;

/// The longest span of a delta, ticks (the slowest period of a view's tiers).
pub const MAX_SPAN: u32 = 64;

/// Bytes of a player in a full form or an enter, after its id's varint.
pub const ENTRY_TAIL_BYTES: usize = 6;

/// Why bytes are not a valid item: the decoders' and [`apply`]'s errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DeltaError {
    /// The bytes end inside a field.
    #[error("truncated")]
    Truncated,
    /// A varint longer than 10 bytes or past 64 bits.
    #[error("bad varint")]
    Varint,
    /// Bytes left over after the last field.
    #[error("{0} trailing bytes")]
    Trailing(usize),
    /// Ids not strictly increasing, or an id past 32 bits.
    #[error("ids out of order")]
    Ids,
    /// A leave or change index past the base, or not increasing.
    #[error("index out of range")]
    Index,
    /// A change record with nothing in it, or for a player that left.
    #[error("bad change record")]
    Change,
    /// A residual that puts a player off the grid.
    #[error("position off the grid")]
    Position,
    /// An enter of a player who is already there.
    #[error("entered twice")]
    Duplicate,
    /// A span that is not a power of two of at most [`MAX_SPAN`].
    #[error("bad span {0}")]
    Span(u32),
    /// More players than the limit given.
    #[error("too many players")]
    TooMany,
    /// A counts byte that is neither the compact form nor the escape.
    #[error("bad counts")]
    Counts,
    /// A supplement that does not follow its cell's delta.
    #[error("a supplement not after a delta")]
    Supplement,
    /// An unchanged item not followed by a delta of its cell, or one past
    /// 32 bits.
    #[error("an unchanged item not before a delta")]
    Unchanged,
}

const HEADING: u8 = 1;
const FLAGS: u8 = 2;
const POSITION: u8 = 4;
/// The counts byte's escape: "enters" 7, the counts follow as varints.
const ESCAPE: u8 = 7 << 5;

/// Appends `v` as a LEB128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Bytes of `v` as a LEB128 varint ([`put_varint`]), 1 to 10.
pub fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros()).div_ceil(7) as usize
}

/// `v` zigzag-mapped to an unsigned value (0, -1, 1, -2 … as 0, 1, 2, 3 …).
pub(crate) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The signed value of a zigzag-mapped `v` ([`zigzag`]).
pub(crate) fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// A cursor over bytes that refuses to read past them.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    /// Reads `bytes`.
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.bytes.len()
    }

    /// True when every byte was read.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// One byte.
    ///
    /// Errors: [`DeltaError::Truncated`].
    pub fn u8(&mut self) -> Result<u8, DeltaError> {
        let (&b, rest) = self.bytes.split_first().ok_or(DeltaError::Truncated)?;
        self.bytes = rest;
        Ok(b)
    }

    /// A little-endian u16.
    ///
    /// Errors: [`DeltaError::Truncated`].
    pub fn u16(&mut self) -> Result<u16, DeltaError> {
        Ok(u16::from_le_bytes([self.u8()?, self.u8()?]))
    }

    /// A little-endian u32.
    ///
    /// Errors: [`DeltaError::Truncated`].
    pub fn u32(&mut self) -> Result<u32, DeltaError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A LEB128 varint of at most 64 bits.
    ///
    /// Errors: [`DeltaError::Truncated`], [`DeltaError::Varint`].
    pub fn varint(&mut self) -> Result<u64, DeltaError> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.u8()?;
            if shift == 63 && b > 1 {
                return Err(DeltaError::Varint);
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(DeltaError::Varint)
    }

    /// A varint that must fit a `usize` count no larger than `max`.
    ///
    /// Errors: as [`Reader::varint`]; [`DeltaError::TooMany`].
    pub fn count(&mut self, max: usize) -> Result<usize, DeltaError> {
        let v = self.varint()?;
        usize::try_from(v).ok().filter(|&n| n <= max).ok_or(DeltaError::TooMany)
    }

    /// The next `n` bytes.
    ///
    /// Errors: [`DeltaError::Truncated`].
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], DeltaError> {
        if n > self.bytes.len() {
            return Err(DeltaError::Truncated);
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    /// Errors unless every byte was read.
    ///
    /// Errors: [`DeltaError::Trailing`].
    pub fn finish(&self) -> Result<(), DeltaError> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(DeltaError::Trailing(self.bytes.len()))
        }
    }
}

/// Appends a player's entry after its id gap: x, y, heading, flags.
fn put_tail(out: &mut Vec<u8>, e: &Entry) {
    out.extend_from_slice(&e.x.to_le_bytes());
    out.extend_from_slice(&e.y.to_le_bytes());
    out.extend_from_slice(&[e.heading, e.flags]);
}

/// Appends the full form of `entries` (sorted by id) to `out`.
pub fn encode_full(entries: &[Entry], out: &mut Vec<u8>) {
    let mut last = 0u64;
    for e in entries {
        put_varint(out, u64::from(e.id.0) - last);
        last = u64::from(e.id.0);
        put_tail(out, e);
    }
}

/// Reads one player of a full form or an enter: its id after `last` (the
/// previous id, or `None` for the first).
fn read_entry(r: &mut Reader<'_>, last: Option<u32>) -> Result<Entry, DeltaError> {
    let gap = r.varint()?;
    let id = match last {
        None => gap,
        Some(_) if gap == 0 => return Err(DeltaError::Ids),
        Some(last) => u64::from(last).checked_add(gap).ok_or(DeltaError::Ids)?,
    };
    let id = u32::try_from(id).map_err(|_| DeltaError::Ids)?;
    let (x, y) = (r.u16()?, r.u16()?);
    let (heading, flags) = (r.u8()?, r.u8()?);
    Ok(Entry { id: PlayerId(id), x, y, heading, flags })
}

/// Reads a full form (all of `body`) into `out` (cleared first): at most
/// `max_players`.
///
/// Errors: any [`DeltaError`] of a malformed or truncated form;
/// [`DeltaError::TooMany`] past `max_players`.
pub fn decode_full(body: &[u8], max_players: usize, out: &mut Vec<Entry>) -> Result<(), DeltaError> {
    out.clear();
    let mut r = Reader::new(body);
    // Each player takes at least 7 bytes.
    out.reserve(max_players.min(r.remaining() / (1 + ENTRY_TAIL_BYTES)));
    let mut last = None;
    while r.remaining() > 0 {
        if out.len() == max_players {
            return Err(DeltaError::TooMany);
        }
        let e = read_entry(&mut r, last)?;
        last = Some(e.id.0);
        out.push(e);
    }
    Ok(())
}

/// What [`encode_delta`] found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeltaSummary {
    /// Players of the base that left.
    pub leaves: usize,
    /// Players that stayed with a change record.
    pub changes: usize,
    /// Players that entered.
    pub enters: usize,
    /// The state is exactly the base's (nobody moved, turned or came and
    /// went): a holder of the base holds this state already.
    pub unchanged: bool,
}

/// Appends the delta from `base` to `new` (both sorted by id) over `span`
/// ticks to `out`, with `motion` predicting the players that stayed.
pub fn encode_delta(base: &[Entry], new: &[Entry], span: u32, motion: &Motion, out: &mut Vec<u8>) -> DeltaSummary {
    let mut leaves: Vec<u64> = Vec::new();
    let mut changes: Vec<(usize, u8, Entry, (i64, i64))> = Vec::new();
    let mut enters: Vec<&Entry> = Vec::new();
    let mut unchanged = base.len() == new.len();
    let (mut i, mut j) = (0, 0);
    while i < base.len() || j < new.len() {
        match (base.get(i), new.get(j)) {
            (Some(b), Some(n)) if b.id == n.id => {
                unchanged &= b == n;
                let at = motion.advance((b.x, b.y), n.heading, n.moving(), span);
                let residual = (i64::from(n.x) - i64::from(at.0), i64::from(n.y) - i64::from(at.1));
                let what = if b.heading != n.heading { HEADING } else { 0 }
                    | if b.flags != n.flags { FLAGS } else { 0 }
                    | if residual != (0, 0) { POSITION } else { 0 };
                if what != 0 {
                    changes.push((i, what, *n, residual));
                }
                i += 1;
                j += 1;
            }
            (Some(b), Some(n)) if n.id < b.id => {
                enters.push(n);
                unchanged = false;
                j += 1;
            }
            (None, Some(n)) => {
                enters.push(n);
                unchanged = false;
                j += 1;
            }
            (Some(_), _) => {
                leaves.push(i as u64);
                unchanged = false;
                i += 1;
            }
            (None, None) => break,
        }
    }
    let summary = DeltaSummary { leaves: leaves.len(), changes: changes.len(), enters: enters.len(), unchanged };
    if leaves.is_empty() && changes.is_empty() && enters.is_empty() {
        return summary;
    }
    if leaves.len() < 4 && changes.len() < 8 && enters.len() < 7 {
        out.push((leaves.len() | changes.len() << 2 | enters.len() << 5) as u8);
    } else {
        out.push(ESCAPE);
        put_varint(out, leaves.len() as u64);
        put_varint(out, changes.len() as u64);
        put_varint(out, enters.len() as u64);
    }
    let mut last = 0;
    for &index in &leaves {
        put_varint(out, index - last);
        last = index;
    }
    let mut last = 0;
    for (index, what, n, residual) in changes {
        put_varint(out, ((index - last) as u64) << 3 | u64::from(what));
        last = index;
        if what & HEADING != 0 {
            out.push(n.heading);
        }
        if what & FLAGS != 0 {
            out.push(n.flags);
        }
        if what & POSITION != 0 {
            put_varint(out, zigzag(residual.0));
            put_varint(out, zigzag(residual.1));
        }
    }
    let mut last = 0u64;
    for e in enters {
        put_varint(out, u64::from(e.id.0) - last);
        last = u64::from(e.id.0);
        put_tail(out, e);
    }
    summary
}

/// Applies the delta `body` over `span` ticks to `base` (sorted by id), into
/// `out` (cleared first), with `motion` predicting the players that stayed;
/// the result holds at most `max_players`. This is [`apply_in_place`] on a
/// copy of `base`.
///
/// Errors: any [`DeltaError`] of a malformed or truncated delta, or one that
/// does not fit `base` (an index past it, a leaving player changed, an enter
/// of someone there, a position off the grid). `out` is then unspecified.
pub fn apply(
    base: &[Entry],
    body: &[u8],
    span: u32,
    motion: &Motion,
    max_players: usize,
    out: &mut Vec<Entry>,
) -> Result<(), DeltaError> {
    out.clear();
    out.extend_from_slice(base);
    apply_in_place(out, body, span, motion, max_players, &mut Edits::default(), |_| true).map(drop)
}

/// [`apply`] where the cell is held: the delta `body` over `span` ticks
/// applied to `players` (its base, sorted by id) in place, `edits` its
/// scratch ([`Edits`]: the delta is read and checked whole before anything
/// is written). Returns true when every player written (walked, changed or
/// entered) is `within` ([`Edits::write`]).
///
/// Errors: [`apply`]'s for the same delta; `players` is then as it was.
pub fn apply_in_place(
    players: &mut Vec<Entry>,
    body: &[u8],
    span: u32,
    motion: &Motion,
    max_players: usize,
    edits: &mut Edits,
    within: impl FnMut(&Entry) -> bool,
) -> Result<bool, DeltaError> {
    edits.read(players, body, span, motion, max_players)?;
    Ok(edits.write(players, span, motion, within))
}

/// A delta's counts of leaves, changes and enters (its first byte, or the
/// escape and three varints; none for an empty body), checked against a
/// base of `base` players.
///
/// Errors: [`DeltaError::Counts`] for a reserved first byte; the varints'
/// errors; [`DeltaError::Index`] for more leaves and changes than the base
/// holds.
fn read_counts(r: &mut Reader<'_>, base: usize) -> Result<(usize, usize, usize), DeltaError> {
    let (leaves, changes, enters) = match r.u8() {
        Err(_) => (0, 0, 0),
        Ok(ESCAPE) => {
            let n = r.remaining();
            (r.count(base)?, r.count(base)?, r.count(n / (1 + ENTRY_TAIL_BYTES))?)
        }
        Ok(b) if b >> 5 == 7 => return Err(DeltaError::Counts),
        Ok(b) => (usize::from(b & 3), usize::from(b >> 2 & 7), usize::from(b >> 5)),
    };
    if leaves > base || changes > base - leaves {
        return Err(DeltaError::Index);
    }
    Ok((leaves, changes, enters))
}

/// [`apply`] of an empty delta (a body of no bytes, as an implied cell's),
/// in place: every player of `players` stays and walks by the rule over
/// `span` ticks, the same result and errors as [`apply`] without reading a
/// body or copying the cell (only the walkers' positions are written: a
/// standing crowd's cell is read, not rewritten). Returns true when every
/// walker is `within` after ([`Edits::write`]).
///
/// Errors: [`DeltaError::Span`] for a span that is not a power of two up
/// to [`MAX_SPAN`]; [`DeltaError::TooMany`] for more than `max_players`;
/// `players` is then as it was.
pub fn advance(
    players: &mut [Entry],
    span: u32,
    motion: &Motion,
    max_players: usize,
    mut within: impl FnMut(&Entry) -> bool,
) -> Result<bool, DeltaError> {
    check_span(span)?;
    if players.len() > max_players {
        return Err(DeltaError::TooMany);
    }
    Ok(edits::walk(players, span, motion, &mut within))
}

/// `span` as a delta's span: a power of two up to [`MAX_SPAN`] ticks.
///
/// Errors: [`DeltaError::Span`] for any other.
fn check_span(span: u32) -> Result<(), DeltaError> {
    if !span.is_power_of_two() || span > MAX_SPAN {
        return Err(DeltaError::Span(span));
    }
    Ok(())
}

/// Player `b` after walking by the rule over `span` ticks.
fn walked(b: &Entry, span: u32, motion: &Motion) -> Entry {
    let (x, y) = motion.advance((b.x, b.y), b.heading, b.moving(), span);
    Entry { x, y, ..*b }
}

/// `at` moved by `residual`, if that stays on the grid.
fn on_grid(at: u16, residual: i64) -> Result<u16, DeltaError> {
    i64::from(at).checked_add(residual).and_then(|v| u16::try_from(v).ok()).ok_or(DeltaError::Position)
}

/// The next change record's base index (after `previous`) and what it holds.
fn read_change(r: &mut Reader<'_>, previous: Option<usize>, base: usize) -> Result<(usize, u8), DeltaError> {
    let v = r.varint()?;
    let (gap, what) = (v >> 3, (v & 7) as u8);
    if what == 0 || (previous.is_some() && gap == 0) {
        return Err(DeltaError::Change);
    }
    let index = usize::try_from(gap)
        .ok()
        .and_then(|g| g.checked_add(previous.unwrap_or(0)))
        .filter(|&i| i < base)
        .ok_or(DeltaError::Index)?;
    Ok((index, what))
}

/// Merges `add` (sorted by id) into `players` (sorted by id) in place, from
/// the back: only the players past the first one added move, in blocks, so
/// a few added to a crowd's cell cost a few searches and copies (a bot
/// applies a delta with enters, or takes a walker handed off, most ticks). The result holds at most
/// `max_players`.
///
/// Errors: [`DeltaError::Duplicate`] for an id in both (or twice in `add`,
/// or `add` out of order), [`DeltaError::TooMany`] past `max_players`;
/// `players` is then as it was.
pub fn merge_in(players: &mut Vec<Entry>, add: &[Entry], max_players: usize) -> Result<(), DeltaError> {
    if players.len() + add.len() > max_players {
        return Err(DeltaError::TooMany);
    }
    let twice = add.windows(2).any(|w| w[0].id >= w[1].id);
    if twice || add.iter().any(|a| players.binary_search_by_key(&a.id, |p| p.id).is_ok()) {
        return Err(DeltaError::Duplicate);
    }
    merge_checked(players, add);
    Ok(())
}

/// [`merge_in`] of players checked already: `add` in id order, none of
/// them in `players` (as [`Edits::read`] checks a delta's enters).
fn merge_checked(players: &mut Vec<Entry>, add: &[Entry]) {
    let n = players.len();
    players.extend_from_slice(add);
    // From the last added: the players after its place move up past it and
    // every one added before it (a block copy), then it goes in.
    let mut end = n;
    for (j, a) in add.iter().enumerate().rev() {
        let at = players[..end].partition_point(|p| p.id < a.id);
        players.copy_within(at..end, at + j + 1);
        players[at + j] = *a;
        end = at;
    }
}

#[cfg(test)]
// Counts bytes are written as enters_changes_leaves (3, 3 and 2 bits).
#[allow(clippy::unusual_byte_groupings)]
mod tests {
    use super::*;
    use crate::entry::flags;
    use crate::wire::Bounds;

    fn motion() -> Motion {
        Motion::new(&Bounds::new(0.0, 0.0, 1000.0, 1000.0), 120.0, 20)
    }

    fn e(id: u32, x: u16, y: u16, heading: u8, moving: bool) -> Entry {
        Entry { id: PlayerId(id), x, y, heading, flags: flags(moving, 0) }
    }

    /// A seeded xorshift: `next(n)` is the next number below `n` (0 for n = 0),
    /// the same sequence every run.
    fn xorshift(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n.max(1)
        }
    }

    fn roundtrip(base: &[Entry], new: &[Entry], span: u32) -> (Vec<u8>, DeltaSummary) {
        let m = motion();
        let mut body = Vec::new();
        let summary = encode_delta(base, new, span, &m, &mut body);
        let mut out = Vec::new();
        apply(base, &body, span, &m, usize::MAX, &mut out).expect("applies");
        assert_eq!(out, new, "the delta rebuilds the new state");
        (body, summary)
    }

    #[test]
    fn varints_are_measured_as_written() {
        for (v, n) in [(0, 1), (127, 1), (128, 2), (16_383, 2), (16_384, 3), (u64::MAX, 10)] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!((varint_len(v), out.len()), (n, n), "{v}");
        }
        for v in [0i64, -1, 1, -2, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!((zigzag(0), zigzag(-1), zigzag(1)), (0, 1, 2));
    }

    #[test]
    fn walkers_going_straight_and_players_standing_cost_nothing() {
        let m = motion();
        let base = vec![e(3, 100, 100, 0, true), e(7, 5000, 60_000, 77, true), e(9, 40_000, 40_000, 5, false)];
        let new: Vec<Entry> = base
            .iter()
            .map(|b| {
                let (x, y) = m.advance((b.x, b.y), b.heading, b.moving(), 4);
                Entry { x, y, ..*b }
            })
            .collect();
        let (body, summary) = roundtrip(&base, &new, 4);
        assert!(body.is_empty(), "{body:?}");
        assert!(!summary.unchanged, "the walkers moved");
        let (body, summary) = roundtrip(&base[2..], &new[2..], 1);
        assert!(body.is_empty() && summary.unchanged, "standing");
    }

    #[test]
    fn advancing_is_applying_an_empty_delta() {
        let m = motion();
        let base = [e(3, 100, 100, 0, true), e(7, 5000, 65_500, 77, true), e(9, 40_000, 40_000, 5, false)];
        for (players, span, max_players) in
            [(3, 1, 3), (3, 4, 100), (1, 64, 1), (0, 2, 0), (3, 2, 2), (3, 3, 9), (2, 128, 9)]
        {
            let (mut advanced, mut applied) = (base[..players].to_vec(), Vec::new());
            let a = advance(&mut advanced, span, &m, max_players, |p| p.y < 60_000);
            let b = apply(&base[..players], &[], span, &m, max_players, &mut applied);
            assert_eq!(a.map(drop), b, "{players} players over {span} ticks, at most {max_players}");
            // Player 7 walks and stays past y 60,000 (player 9 stands: not
            // written, not looked at).
            assert!(a.is_err() || a == Ok(players < 2), "{players} players: {a:?}");
            if a.is_ok() {
                assert_eq!(advanced, applied);
            } else {
                assert_eq!(advanced, base[..players], "left as it was");
            }
        }
    }

    #[test]
    fn a_turn_costs_its_index_and_two_bytes() {
        let m = motion();
        let base = vec![e(1, 1000, 1000, 0, true), e(2, 2000, 2000, 0, true)];
        let mut new = base.clone();
        new[1].heading = 64;
        new[1].flags = flags(true, 5);
        (new[1].x, new[1].y) = m.advance((base[1].x, base[1].y), 64, true, 1);
        (new[0].x, new[0].y) = m.advance((base[0].x, base[0].y), 0, true, 1);
        let (body, summary) = roundtrip(&base, &new, 1);
        assert_eq!(summary.changes, 1);
        assert_eq!(body.len(), 1 + 1 + 2, "counts, index and what, heading, flags: {body:?}");
    }

    #[test]
    fn leaves_enters_and_residuals_round_trip() {
        let base =
            vec![e(1, 0, 0, 0, false), e(5, 10, 10, 0, true), e(8, 65_535, 65_535, 3, true), e(20, 7, 7, 9, false)];
        let new = vec![
            e(2, 1, 2, 3, true),
            e(5, 999, 12, 0, true),
            e(9, 4, 4, 4, false),
            e(20, 7, 7, 9, false),
            e(70_000, 9, 9, 9, true),
        ];
        let (_, summary) = roundtrip(&base, &new, 2);
        assert_eq!((summary.leaves, summary.enters), (2, 3));
        // Many of each: the escape.
        let base: Vec<Entry> = (1..=300).map(|i| e(i * 2, i as u16, 0, 0, false)).collect();
        let new: Vec<Entry> = (1..=300).map(|i| e(i * 2 + 1, 0, i as u16, 1, true)).collect();
        let (body, _) = roundtrip(&base, &new, 64);
        assert_eq!(body[0], ESCAPE);
        roundtrip(&[], &new, 1);
        roundtrip(&new, &[], 1);
    }

    #[test]
    fn enters_between_the_players_that_stayed_merge_by_id_few_or_many() {
        // Enters whose ids fall between, before and after the stayers', 0 to
        // 40 of them: the in-place merge (up to 16) and the other agree.
        let m = motion();
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        for case in 0..2_000 {
            let base: Vec<Entry> = (0..next(30)).map(|k| e(k as u32 * 4 + 2, 100, 100, 0, false)).collect();
            let mut new = base.clone();
            for _ in 0..next(41) {
                new.push(e(next(200) as u32 * 2 + 1, next(1000) as u16, 7, 9, true));
            }
            new.sort_by_key(|p| p.id);
            new.dedup_by_key(|p| p.id);
            let (body, _) = roundtrip(&base, &new, 1);
            // The same enters onto a base that already holds one of them.
            if let Some(twice) = new.iter().find(|p| p.id.0 % 2 == 1 && p.id.0 > 2) {
                let mut holding = base.clone();
                holding.push(e(twice.id.0, 5, 5, 0, false));
                holding.sort_by_key(|p| p.id);
                let mut out = Vec::new();
                let refused = apply(&holding, &body, 1, &m, usize::MAX, &mut out);
                assert_eq!(refused, Err(DeltaError::Duplicate), "case {case}");
            }
        }
    }

    /// How [`random_case`] draws a case.
    struct Shape {
        /// At most this many players in the base...
        players: u64,
        /// ...ids this far apart, give or take.
        stride: u64,
        /// Each player that stayed left, turned, stopped or started, or was
        /// nudged, each 1 in this many.
        odds: u64,
        /// Players entered among the ids of the base (some of them players
        /// who left), or only after its last.
        among: bool,
    }

    const ENTERS_LAST: Shape = Shape { players: 40, stride: 3, odds: 12, among: false };
    const ENTERS_AMONG: Shape = Shape { players: 30, stride: 4, odds: 8, among: true };

    /// A seeded case: a span, a base and the next state (both by id), where
    /// each player stayed, walked by the rule, turned, stopped, was nudged
    /// or left, and others entered, as `shape` says.
    fn random_case(next: &mut impl FnMut(u64) -> u64, m: &Motion, shape: &Shape) -> (u32, Vec<Entry>, Vec<Entry>) {
        let span = 1 << next(7);
        let mut base: Vec<Entry> = (0..next(shape.players))
            .map(|k| {
                let id = (k * shape.stride + next(shape.stride)) as u32;
                e(id, next(65_536) as u16, next(65_536) as u16, next(256) as u8, next(4) > 0)
            })
            .collect();
        base.dedup_by_key(|p| p.id);
        let mut new = Vec::new();
        for b in &base {
            let (x, y) = m.advance((b.x, b.y), b.heading, b.moving(), span);
            let mut n = Entry { x, y, ..*b };
            match next(shape.odds) {
                0 => continue,
                1 => n.heading = n.heading.wrapping_add(1 + next(255) as u8),
                2 => n.flags = flags(!b.moving(), 0),
                3 => n.x = n.x.saturating_add(next(9) as u16),
                _ => {}
            }
            new.push(n);
        }
        if shape.among {
            for _ in 0..next(20) {
                new.push(e(next(130) as u32, next(65_536) as u16, next(65_536) as u16, 0, next(2) == 0));
            }
        } else {
            for k in 0..next(4) {
                new.push(e(200 + k as u32 * 5 + next(5) as u32, next(65_536) as u16, 3, 0, true));
            }
        }
        new.sort_by_key(|p| p.id);
        new.dedup_by_key(|p| p.id);
        (span, base, new)
    }

    #[test]
    fn random_mixes_of_leaves_changes_enters_and_walkers_round_trip() {
        // A seeded xorshift: the same ten thousand cases every run, each a
        // base of up to 40 players and a next state where each stayed,
        // walked by the rule, turned, stopped, was nudged or left, and
        // others entered (runs of plain walkers between records exercise
        // the decoder's copy path, the records its slow one).
        let m = motion();
        let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
        for case in 0..10_000 {
            let (span, base, new) = random_case(&mut next, &m, &ENTERS_LAST);
            let mut body = Vec::new();
            encode_delta(&base, &new, span, &m, &mut body);
            let mut out = Vec::new();
            apply(&base, &body, span, &m, usize::MAX, &mut out).unwrap_or_else(|e| panic!("case {case}: {e}"));
            assert_eq!(out, new, "case {case}");
        }
    }

    #[test]
    fn many_changes_with_every_field_round_trip() {
        let base: Vec<Entry> = (1..=40).map(|i| e(i, (i * 1000) as u16, 500, (i * 7) as u8, i % 3 == 0)).collect();
        let mut new = base.clone();
        for (k, n) in new.iter_mut().enumerate() {
            match k % 5 {
                0 => n.heading = n.heading.wrapping_add(9),
                1 => n.flags = flags(!n.moving(), 3),
                2 => n.x = n.x.wrapping_add(77),
                3 => {
                    n.heading = 1;
                    n.flags = flags(true, 9);
                    n.y = 4000;
                }
                _ => {}
            }
        }
        let (body, summary) = roundtrip(&base, &new, 8);
        assert!(summary.changes >= 30 && body[0] == ESCAPE, "{summary:?}");
    }

    #[test]
    fn several_changes_of_every_kind_round_trip() {
        let m = motion();
        let base: Vec<Entry> = (1..=12).map(|i| e(i * 3, i as u16 * 1000, 500, i as u8, i % 3 != 0)).collect();
        let mut new: Vec<Entry> = base
            .iter()
            .map(|b| {
                let (x, y) = m.advance((b.x, b.y), b.heading, b.moving(), 2);
                Entry { x, y, ..*b }
            })
            .collect();
        new[0].heading = 200;
        new[1].flags = flags(false, 9);
        new[2].x += 7;
        new[4].heading = 3;
        new[4].flags = flags(true, 1);
        new[4].y -= 3;
        new[11].y = 0;
        let (body, summary) = roundtrip(&base, &new, 2);
        assert_eq!(summary.changes, 5, "{body:?}");
        // And with leaves and enters among them, past the compact counts.
        new.remove(3);
        new.remove(6);
        new.push(e(1000, 1, 1, 1, true));
        for (k, p) in new.iter_mut().enumerate() {
            p.heading = p.heading.wrapping_add(k as u8);
        }
        let (body, summary) = roundtrip(&base, &new, 2);
        assert_eq!((summary.leaves, summary.enters), (2, 1));
        assert_eq!(body[0], ESCAPE, "{} changes", summary.changes);
    }

    #[test]
    fn ids_and_residuals_past_their_range_are_refused_not_wrapped() {
        let m = motion();
        let mut out = Vec::new();
        // A full form whose second id gap would wrap 64 bits back to id 2.
        let mut full = Vec::new();
        put_varint(&mut full, 5);
        full.extend_from_slice(&[0; ENTRY_TAIL_BYTES]);
        put_varint(&mut full, u64::MAX - 2);
        full.extend_from_slice(&[0; ENTRY_TAIL_BYTES]);
        assert_eq!(decode_full(&full, 10, &mut out), Err(DeltaError::Ids));
        // A residual of i64::MAX from x = 100.
        let base = vec![e(1, 100, 100, 0, false)];
        let mut body = vec![0b000_001_00, 4];
        put_varint(&mut body, u64::MAX - 1);
        put_varint(&mut body, 0);
        assert_eq!(apply(&base, &body, 1, &m, 10, &mut out), Err(DeltaError::Position));
    }

    #[test]
    fn a_full_form_round_trips_and_refuses_unsorted_ids() {
        let entries = vec![e(1, 1, 2, 3, true), e(2, 4, 5, 6, false), e(1 << 31, 65_535, 0, 255, true)];
        let mut body = Vec::new();
        encode_full(&entries, &mut body);
        let mut out = Vec::new();
        decode_full(&body, 10, &mut out).expect("decodes");
        assert_eq!(out, entries);
        assert_eq!(decode_full(&body, 2, &mut out), Err(DeltaError::TooMany));
        // No count: the players run to the end of the bytes, and one cut
        // short is refused.
        let mut one = Vec::new();
        encode_full(&entries[..1], &mut one);
        assert_eq!(one.len(), 1 + ENTRY_TAIL_BYTES);
        let mut none = Vec::new();
        encode_full(&[], &mut none);
        assert!(none.is_empty());
        decode_full(&none, 0, &mut out).expect("an empty cell decodes");
        assert!(out.is_empty());
        assert_eq!(decode_full(&body[..body.len() - 1], 10, &mut out), Err(DeltaError::Truncated));
        let mut bad = Vec::new();
        put_varint(&mut bad, 5);
        put_tail(&mut bad, &entries[0]);
        put_varint(&mut bad, 0);
        put_tail(&mut bad, &entries[0]);
        assert_eq!(decode_full(&bad, 10, &mut out), Err(DeltaError::Ids));
    }

    #[test]
    fn malformed_deltas_are_refused_never_read_past() {
        let m = motion();
        let base = vec![e(1, 0, 0, 0, false), e(2, 0, 0, 0, false)];
        let mut out = Vec::new();
        let cases: &[(&[u8], DeltaError)] = &[
            (&[0b000_001_00], DeltaError::Truncated),
            (&[0b000_000_01, 2], DeltaError::Index),
            (&[0b000_000_10, 1, 0], DeltaError::Index),
            (&[0b000_001_00, 0 << 3], DeltaError::Change),
            (&[0b000_001_01, 0, 1], DeltaError::Change),
            (&[0b000_001_00, 4, 0xff, 0xff, 0xff, 0xff, 0x0f, 0], DeltaError::Position),
            (&[0b001_000_00, 1, 0, 0, 0, 0, 0, 0], DeltaError::Duplicate),
            (&[0, 0], DeltaError::Trailing(1)),
            (&[ESCAPE, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], DeltaError::Varint),
            (&[ESCAPE, 3, 0, 0], DeltaError::TooMany),
        ];
        for (body, want) in cases {
            assert_eq!(apply(&base, body, 1, &m, usize::MAX, &mut out), Err(*want), "{body:?}");
        }
        assert_eq!(apply(&base, &[], 3, &m, usize::MAX, &mut out), Err(DeltaError::Span(3)));
        assert_eq!(apply(&base, &[0b001_000_00, 9, 0, 0, 0, 0, 0, 0], 1, &m, 2, &mut out), Err(DeltaError::TooMany));
    }

    /// [`apply`]'s rule written plainly, as the module's doc says it (no
    /// runs, no validation ahead), checking in the order the copying
    /// `apply` before the in-place one did (a change's position after the
    /// next change's index, a twice entered player after the trailing
    /// bytes): the reference the in-place applying is held to, errors
    /// included.
    fn plain(base: &[Entry], body: &[u8], span: u32, m: &Motion, max: usize) -> Result<Vec<Entry>, DeltaError> {
        check_span(span)?;
        let mut r = Reader::new(body);
        let (leaves, changes, enters) = read_counts(&mut r, base.len())?;
        let mut gone = vec![false; base.len()];
        let mut index = 0;
        for k in 0..leaves {
            let gap = r.count(base.len())?;
            index = if k == 0 {
                gap
            } else if gap == 0 {
                return Err(DeltaError::Index);
            } else {
                index + gap
            };
            *gone.get_mut(index).ok_or(DeltaError::Index)? = true;
        }
        let mut new: Vec<Entry> = base.iter().map(|b| walked(b, span, m)).collect();
        let mut previous = None;
        // A change read, its position not yet checked.
        let mut pending: Option<(usize, Entry, (i64, i64))> = None;
        let settle = |pending: Option<(usize, Entry, (i64, i64))>, new: &mut Vec<Entry>| {
            if let Some((i, mut e, residual)) = pending {
                let (x, y) = m.advance((e.x, e.y), e.heading, e.moving(), span);
                (e.x, e.y) = (on_grid(x, residual.0)?, on_grid(y, residual.1)?);
                new[i] = e;
            }
            Ok::<(), DeltaError>(())
        };
        for _ in 0..changes {
            let (i, what) = read_change(&mut r, previous, base.len())?;
            previous = Some(i);
            settle(pending.take(), &mut new)?;
            if gone[i] {
                return Err(DeltaError::Change);
            }
            let mut e = base[i];
            if what & HEADING != 0 {
                e.heading = r.u8()?;
            }
            if what & FLAGS != 0 {
                e.flags = r.u8()?;
            }
            let residual = if what & POSITION != 0 { (unzigzag(r.varint()?), unzigzag(r.varint()?)) } else { (0, 0) };
            pending = Some((i, e, residual));
        }
        settle(pending, &mut new)?;
        let mut out: Vec<Entry> = new.into_iter().zip(gone).filter(|(_, g)| !g).map(|(e, _)| e).collect();
        if out.len() + enters > max {
            return Err(DeltaError::TooMany);
        }
        let (stayed, mut last) = (out.len(), None);
        for _ in 0..enters {
            let e = read_entry(&mut r, last)?;
            last = Some(e.id.0);
            out.push(e);
        }
        r.finish()?;
        if out[stayed..].iter().any(|e| out[..stayed].iter().any(|o| o.id == e.id)) {
            return Err(DeltaError::Duplicate);
        }
        out.sort_by_key(|e| e.id);
        Ok(out)
    }

    #[test]
    fn applied_in_place_every_delta_and_every_flipped_byte_of_it_is_the_plain_rule_or_changes_nothing() {
        // Seeded cases as above, with enters among the ids that stayed and
        // players who left coming back; each delta's bodies (whole, cut,
        // and each byte with each bit flipped) applied in place with one
        // Edits reused throughout, as a client does.
        let m = motion();
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        let mut edits = Edits::default();
        let (mut applied, mut refused) = (0, 0);
        for case in 0..400 {
            let (span, base, new) = random_case(&mut next, &m, &ENTERS_AMONG);
            let mut body = Vec::new();
            encode_delta(&base, &new, span, &m, &mut body);
            let mut bodies = vec![body.clone()];
            bodies.extend((0..body.len()).map(|cut| body[..cut].to_vec()));
            for i in 0..body.len() {
                for bit in 0..8 {
                    let mut b = body.clone();
                    b[i] ^= 1 << bit;
                    bodies.push(b);
                }
            }
            for (k, b) in bodies.iter().enumerate() {
                let max = if k % 7 == 6 { base.len() } else { usize::MAX };
                let mut players = base.clone();
                match (
                    apply_in_place(&mut players, b, span, &m, max, &mut edits, |_| true),
                    plain(&base, b, span, &m, max),
                ) {
                    (Ok(_), Ok(want)) => {
                        assert_eq!(players, want, "case {case}, body {k}");
                        applied += 1;
                    }
                    (Err(got), Err(want)) => {
                        assert_eq!(got, want, "case {case}, body {k}: the same error");
                        assert_eq!(players, base, "case {case}, body {k}: refused, and the cell as it was");
                        refused += 1;
                    }
                    (got, want) => {
                        panic!("case {case}, body {k}: in place {got:?}, the plain rule {:?}", want.map(drop))
                    }
                }
            }
            // What it wrote: every walker, changed and entered player (the
            // encoder writes a change only where one differs).
            let within = |p: &Entry| p.x < 40_000;
            let written = new.iter().filter(|n| n.moving() || !base.contains(n));
            let all_within = written.clone().all(within);
            let mut players = base.clone();
            let got = apply_in_place(&mut players, &body, span, &m, usize::MAX, &mut edits, within);
            assert_eq!(got, Ok(all_within), "case {case}: {} written", written.count());
            assert_eq!(players, new, "case {case}");
        }
        assert!(applied > 10_000 && refused > 10_000, "{applied} applied, {refused} refused");
    }

    #[test]
    fn merged_in_place_players_keep_id_order_and_a_refused_merge_changes_nothing() {
        let mut next = xorshift(0x5851_F42D_4C95_7F2D);
        for case in 0..2_000 {
            let ids = |n: u64, next: &mut dyn FnMut(u64) -> u64| {
                let mut v: Vec<u32> = (0..n).map(|_| next(200) as u32).collect();
                v.sort_unstable();
                v.dedup();
                v
            };
            let held: Vec<Entry> =
                ids(next(60), &mut next).into_iter().map(|id| e(id, id as u16, 1, 0, true)).collect();
            let mut add: Vec<Entry> =
                ids(next(20), &mut next).into_iter().map(|id| e(id, 7, id as u16, 1, false)).collect();
            let clash = add.iter().any(|a| held.iter().any(|h| h.id == a.id));
            if case % 5 == 4 && add.len() > 1 {
                add[1].id = add[0].id; // one player added twice
            }
            let twice = add.windows(2).any(|w| w[0].id == w[1].id);
            let max = if case % 7 == 6 { held.len() + add.len() - 1 } else { usize::MAX };
            let mut players = held.clone();
            match merge_in(&mut players, &add, max) {
                Ok(()) => {
                    let mut want = [held.clone(), add.clone()].concat();
                    want.sort_by_key(|p| p.id);
                    assert_eq!(players, want, "case {case}");
                    assert!(!clash && !twice && max == usize::MAX, "case {case}: a merge that must be refused");
                }
                Err(error) => {
                    assert_eq!(players, held, "case {case}: refused ({error}), and as it was");
                    let expected = if max < usize::MAX { DeltaError::TooMany } else { DeltaError::Duplicate };
                    assert_eq!(error, expected, "case {case}");
                    assert!(clash || twice || max < usize::MAX, "case {case}: a merge that must be taken");
                }
            }
        }
    }

    #[test]
    fn every_cut_and_every_flipped_byte_is_refused_or_read_within_bounds() {
        let m = motion();
        let base = vec![e(1, 0, 0, 0, false), e(5, 10, 10, 0, true), e(8, 65_000, 65_000, 3, true)];
        let new = vec![e(2, 1, 2, 3, true), e(5, 999, 12, 9, true), e(9, 4, 4, 4, false)];
        let mut body = Vec::new();
        encode_delta(&base, &new, 2, &m, &mut body);
        let mut out = Vec::new();
        for cut in 0..body.len() {
            assert!(apply(&base, &body[..cut], 2, &m, usize::MAX, &mut out).is_err() || cut == 0);
        }
        for i in 0..body.len() {
            for bit in 0..8 {
                let mut b = body.clone();
                b[i] ^= 1 << bit;
                let _ = apply(&base, &b, 2, &m, usize::MAX, &mut out);
            }
        }
    }
}
