//! Every cell's **stream**, of this shard and of every other shard seen here:
//! what a view needs to bring a socket from any step it may hold of the cell
//! to the newest one. One mechanism for own and relayed cells: this shard's
//! encoder ([`super::own`]) and the other shards' region bundles fill streams
//! the same way, and the views ([`super::views`]) read only streams.
//!
//! A stream keeps the cell's newest full form, the deltas of the last
//! [`MAX_SPAN`] steps (each "over `span` steps, ending at `step`"), and which
//! of those steps changed the cell. Deltas are aligned: the one over `q`
//! steps ends only on a multiple of `q` (every cell's, as every delta view
//! takes each cell at phase 0: see [`super::interest`]), so the
//! tiers' periods (powers of two) all read the same deltas, and a socket at
//! any step reaches a later one through at most a dozen of them
//! ([`Stream::chain`]).
//!
//! Steps count the ticks a shard ran (one a tick, a stall skips none), so a
//! delta's span is the number of times the movement rule applied.

use super::grid::CellId;
use bytes::Bytes;
use mino_protocol::delta::MAX_SPAN;
use mino_protocol::stencil::SLOWEST_PERIOD;
use mino_protocol::view::KeptDelta;
use mino_protocol::ShardId;
use smallvec::SmallVec;
use std::collections::VecDeque;

/// The largest step `<= at` on the grid of `period` for a cell at `phase`
/// (0 for a delta view; [`super::interest::spread_phase`] for a view of
/// whole cells): the step a view holding the cell at that period was last
/// sent it.
pub(crate) fn aligned(at: u64, period: u32, phase: u64) -> u64 {
    let p = u64::from(period.max(1));
    // Every period of the ladder and every span is a power of two: a mask,
    // not a division (this runs for every stream of every view, every tick).
    let r = if p.is_power_of_two() { (at + phase) & (p - 1) } else { (at + phase) % p };
    at.saturating_sub(r)
}

/// One cell of one shard.
#[derive(Clone, Debug)]
pub(crate) struct Stream {
    /// The newest full form's item bytes (tag and body), of step `latest`.
    full: Bytes,
    /// The cell held players at `latest`.
    occupied: bool,
    /// The newest step known.
    latest: u64,
    /// `latest` as of the previous tick: views' holdings are aligned below it.
    prev: u64,
    /// Bit i: the cell changed at step `latest - i` (the last
    /// [`KNOWN_STEPS`]).
    changes: u64,
    /// A holding of a step before this one is not to be trusted (a stream
    /// heard from mid-way: no view was sent its earlier steps; or a lost
    /// bundle): no chain starts before it, the full form is sent instead.
    known_from: u64,
    /// Deltas of the last [`MAX_SPAN`] steps: (end step, span, the delta
    /// with its supplements split once), oldest first.
    deltas: VecDeque<(u64, u32, KeptDelta)>,
    /// A smoothed size of the cell's one-step delta, bytes (for the budget).
    weight: f32,
    /// The low 32 bits of the step the stream began at (the cell had no
    /// stream before: empty, or not heard of): [`Stream::last_change_by`].
    born: u32,
    /// Per period 1, 2 and 4 (the base rung's, see [`super::interest::LADDER`]):
    /// the index in `deltas` of the delta over exactly that period ending
    /// at the aligned step at or below `latest` ([`NO_DELTA`]: none). Every
    /// view due at such a period reads it here (the tick's commonest
    /// question) instead of searching the history.
    due: [u16; DUE_PERIODS],
}

/// A cell's last change at or before a step ([`Stream::last_change_by`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unchanged {
    /// At this step.
    Since(u64),
    /// At this step or before (none known since: a stream knows its last
    /// [`KNOWN_STEPS`], and not those before it was heard of).
    Before(u64),
    /// It had no stream then (empty, or not heard of): nothing a client
    /// holds of it is older than a change ([`mino_protocol::view::UNCHANGED_EVER`]).
    Ever,
}

/// How many of its last steps a stream knows whether its cell changed at
/// (the bits of [`Stream::changes`]).
pub(crate) const KNOWN_STEPS: u64 = u64::BITS as u64;

/// Periods 1, 2 and 4 have their due delta noted in the stream.
const DUE_PERIODS: usize = 3;

// One a cell with players, of every shard seen (15,000 standing players one
// a cell: 15,000 streams, a slot's first inline): every 8 bytes here are
// about 9 a standing player's socket (RESULTS section 4).
const _: () = assert!(std::mem::size_of::<Stream>() <= 112);

/// [`Stream`]'s `due`: no such delta.
const NO_DELTA: u16 = u16::MAX;

impl Stream {
    /// A stream first heard at `step`; holdings of steps before `known_from`
    /// are not trusted (`step + 1` for a cell another shard's bundle brings
    /// for the first time: no view here has been sent any of its steps; 0 for
    /// an own cell, known empty before).
    pub(crate) fn new(step: u64, known_from: u64) -> Stream {
        Stream {
            full: Bytes::new(),
            occupied: false,
            latest: step,
            prev: step,
            changes: 0,
            known_from,
            deltas: VecDeque::new(),
            weight: 0.0,
            born: step as u32,
            due: [NO_DELTA; DUE_PERIODS],
        }
    }

    /// The cell's last change at or before step `base` (the start of a
    /// delta to a lossy client, [`mino_protocol::held::Delivery::Lossy`],
    /// which checks it holds that change). `base` is at most [`MAX_SPAN`]
    /// steps back.
    ///
    /// Only an own cell's stream says [`Unchanged::Ever`]: one of another
    /// shard was not heard of before its first step, not empty; and steps
    /// not heard (`known_from`) count as a change, so a client is never
    /// told it may hold the cell from before them.
    pub(crate) fn last_change_by(&self, base: u64) -> Unchanged {
        // The step it began at: `born`'s low bits, less than 2^32 steps back.
        let born = self.latest - u64::from((self.latest as u32).wrapping_sub(self.born));
        let own = self.known_from == 0;
        if base < born && own {
            return Unchanged::Ever;
        }
        if !self.knows(base) {
            return Unchanged::Since(base); // not known: the strictest
        }
        let bits = self.changes >> (self.latest - base);
        if bits != 0 {
            return Unchanged::Since((base - u64::from(bits.trailing_zeros())).max(self.known_from.min(base)));
        }
        // No change from its first step to `base`: an own cell was empty
        // before (its stream begins with its first players); else none in
        // the steps known here, said as of the oldest.
        let oldest = self.latest.saturating_sub(KNOWN_STEPS);
        if born > oldest && own {
            return Unchanged::Ever;
        }
        Unchanged::Before(oldest.max(self.known_from).min(base))
    }

    /// Whether the stream knows if the cell changed at step `step`: one of
    /// its last [`KNOWN_STEPS`] (a step before them, or after its newest, it
    /// does not; [`Stream::last_change_by`] then answers the strictest).
    pub(crate) fn knows(&self, step: u64) -> bool {
        self.latest.checked_sub(step).is_some_and(|back| back < KNOWN_STEPS)
    }

    /// The newest step.
    pub(crate) fn latest(&self) -> u64 {
        self.latest
    }

    /// For a view sending the cell every `period` steps: the aligned step
    /// it held before this tick and the one it holds after; the cell is
    /// due when the second is later.
    pub(crate) fn due_steps(&self, period: u32) -> (u64, u64) {
        self.due_steps_at(period, 0)
    }

    /// [`Stream::due_steps`] for a view whose due rule shifts the cell by
    /// `phase` ([`super::interest::spread_phase`]: a view of whole cells,
    /// which reads no delta, so its steps need not be the deltas' aligned
    /// ones).
    pub(crate) fn due_steps_at(&self, period: u32, phase: u64) -> (u64, u64) {
        (aligned(self.prev, period, phase), aligned(self.latest, period, phase))
    }

    /// Whether a holding of step `h` may start a chain of deltas (it is
    /// not before the stream's known steps): otherwise the full form is sent.
    pub(crate) fn trusts(&self, h: u64) -> bool {
        h >= self.known_from
    }

    /// Whether a holder of step `h` (past `target`) holds what a holder of
    /// `target` does: the cell did not change in between, or its state at
    /// `target` is not known (a chain from it is refused, so what is sent
    /// next is whole either way).
    pub(crate) fn holds_as(&self, h: u64, target: u64) -> bool {
        !self.trusts(target) || !self.changed_within(target, h)
    }

    /// The newest full form's item.
    pub(crate) fn full(&self) -> &Bytes {
        &self.full
    }

    /// The cell held players at its newest step.
    pub(crate) fn occupied(&self) -> bool {
        self.occupied
    }

    /// What a socket seeing the cell every step costs a tick, bytes (smoothed).
    pub(crate) fn weight(&self) -> f32 {
        self.weight
    }

    /// Records step `step` (after `latest`): the full form, whether the cell
    /// holds players, whether its state changed since the step before, and
    /// the deltas ending at it (span and item bytes). A step that does not
    /// follow the last one leaves the steps between unknown.
    ///
    /// Returns true when views may have something new to send of the cell:
    /// it changed, it is new here, or steps were lost (a change among them
    /// is not known); false for a step already recorded or a still one.
    pub(crate) fn push(
        &mut self,
        step: u64,
        full: Bytes,
        occupied: bool,
        changed: bool,
        deltas: &[(u32, Bytes)],
    ) -> bool {
        if step < self.latest || (step == self.latest && !self.full.is_empty()) {
            return false;
        }
        // (Occupied where it was not: a vacated cell heard again, whose
        // players stood still meanwhile.)
        let news = changed || self.full.is_empty() || step > self.latest + 1 || occupied != self.occupied;
        if step > self.latest + 1 {
            // Steps were lost (or this stream was idle and not told): unknown.
            self.known_from = self.known_from.max(step);
            let shift = step - self.latest;
            self.changes = if shift >= KNOWN_STEPS { 0 } else { self.changes << shift };
        } else if step == self.latest + 1 {
            self.changes <<= 1;
        }
        self.changes |= u64::from(changed);
        self.latest = step;
        self.full = full;
        self.occupied = occupied;
        // Each delta split once here, for every view that sends it.
        let first = self.deltas.len();
        self.deltas.extend(deltas.iter().map(|(span, b)| (step, *span, KeptDelta::new(b.clone()))));
        // A delta's item as views send it (its supplements seldom go).
        let one = self
            .deltas
            .range(first..)
            .find(|d| d.1 == 1)
            .map_or(0.0, |(_, _, d)| d.split().map_or(d.len(), |d| d.item.len()) as f32 + 1.0);
        self.weight = 0.8 * self.weight + 0.2 * if changed { one } else { 0.0 };
        self.forget_deltas(step);
        self.note_due();
        news
    }

    /// Notes the due delta of each of the first [`DUE_PERIODS`] periods
    /// (after every change of `latest` or `deltas`).
    fn note_due(&mut self) {
        if self.deltas.is_empty() {
            self.due = [NO_DELTA; DUE_PERIODS];
            return;
        }
        for k in 0..DUE_PERIODS {
            let span = 1u32 << k;
            let to = aligned(self.latest, span, 0);
            self.due[k] = self.search(span, to).and_then(|i| u16::try_from(i).ok()).unwrap_or(NO_DELTA);
        }
    }

    /// The index in `deltas` of the delta over `span` steps ending at `to`.
    fn search(&self, span: u32, to: u64) -> Option<usize> {
        let n = self.deltas.len();
        self.deltas
            .iter()
            .rev()
            .enumerate()
            .skip_while(|(_, d)| d.0 > to)
            .take_while(|(_, d)| d.0 == to)
            .find_map(|(back, d)| (d.1 == span).then_some(n - 1 - back))
    }

    /// The delta item over `span` steps ending at `to`, if kept.
    fn delta_over(&self, span: u64, to: u64) -> Option<&KeptDelta> {
        debug_assert!(span.is_power_of_two(), "spans are powers of two");
        let k = span.trailing_zeros() as usize;
        let span = u32::try_from(span).ok()?;
        let index = if k < DUE_PERIODS && to == aligned(self.latest, span, 0) {
            let i = self.due[k];
            debug_assert_eq!((i != NO_DELTA).then_some(usize::from(i)), self.search(span, to), "the noted due delta");
            (i != NO_DELTA).then_some(usize::from(i))
        } else {
            self.search(span, to)
        };
        index.map(|i| &self.deltas[i].2)
    }

    /// Drops the deltas no chain to `step` or later can reach (ending
    /// [`MAX_SPAN`] steps or more before it); a stream left with none keeps
    /// no room for them.
    fn forget_deltas(&mut self, step: u64) {
        let oldest = step.saturating_sub(u64::from(MAX_SPAN));
        if self.deltas.front().is_some_and(|d| d.0 <= oldest) {
            while self.deltas.front().is_some_and(|d| d.0 <= oldest) {
                self.deltas.pop_front();
            }
            if self.deltas.is_empty() {
                self.deltas = VecDeque::new();
            }
        }
    }

    /// Moves the stream to `step` with nothing new (an own cell that did
    /// not change this step).
    pub(crate) fn still(&mut self, step: u64) {
        if step > self.latest {
            let shift = step - self.latest;
            self.changes = if shift >= 64 { 0 } else { self.changes << shift };
            self.latest = step;
            self.weight *= 0.8;
        }
        // A cell standing still keeps no deltas (nor room for them).
        self.forget_deltas(step);
        if !self.deltas.is_empty() || self.due != [NO_DELTA; DUE_PERIODS] {
            self.note_due();
        }
    }

    /// The cell's shard is no longer heard of it, though it held players
    /// here or changed just before (see [`super::aoi`]'s stale cells, and
    /// [`super::aoi::STALE_STEPS`]): it stands empty from `step` (at
    /// least the step after `latest`, and at least a slowest period) on,
    /// with `empty` as its full form. No holding up to that step is a base
    /// for a delta (what comes next is whole: [`Stream::trusts`]), and the
    /// stream is due this tick for every view whatever its period or phase
    /// (`prev` a slowest period back), so each sends its sockets the
    /// emptying: a stopped stream would never come due. Sent once: a
    /// datagram view's frame that is lost is mended at the view's refresh
    /// (a deltas one's too: this step is not trusted, so its refresh does
    /// not take it for a change the client can check).
    /// Heard again at that very step, the shard's state there is not
    /// taken; the next step's is, whole.
    pub(crate) fn vacate(&mut self, step: u64, empty: Bytes) {
        let step = step.max(self.latest + 1).max(u64::from(SLOWEST_PERIOD));
        let shift = step - self.latest;
        self.changes = if shift >= 64 { 1 } else { self.changes << shift | 1 };
        self.prev = step.saturating_sub(u64::from(SLOWEST_PERIOD));
        self.latest = step;
        self.known_from = step + 1;
        self.full = empty;
        self.occupied = false;
        self.deltas = VecDeque::new();
        self.weight = 0.0;
        self.note_due();
    }

    /// The delta items ending at `step`, shortest span first.
    pub(crate) fn deltas_at(&self, step: u64) -> impl Iterator<Item = &KeptDelta> {
        let end = self.deltas.len() - self.deltas.iter().rev().take_while(|d| d.0 > step).count();
        let start = end - self.deltas.range(..end).rev().take_while(|d| d.0 == step).count();
        self.deltas.range(start..end).map(|d| &d.2)
    }

    /// The tick ended: every view's holding is now aligned below `latest`.
    pub(crate) fn settle(&mut self) {
        self.prev = self.latest;
    }

    /// True unless the cell is known not to have changed in `(from, to]`
    /// (steps not known count as changed).
    pub(crate) fn changed_within(&self, from: u64, to: u64) -> bool {
        if to <= from {
            return false;
        }
        if from < self.known_from || to > self.latest || self.latest - from > KNOWN_STEPS {
            return true;
        }
        // Bits latest - to .. latest - from - 1 of `changes`.
        let (lo, hi) = (self.latest - to, self.latest - from);
        let width = hi - lo;
        let mask = if width >= KNOWN_STEPS { u64::MAX } else { (1u64 << width) - 1 };
        (self.changes >> lo) & mask != 0
    }

    /// The delta that brought a holder of `base - period` to `base` (a due
    /// step at `period`), when the cell changed over it: the change a lossy
    /// client may have lost, repeated before the chain of the cell's next
    /// due step (`mino_protocol::held::Delivery::Lossy`: a client that got
    /// it passes over it). `None` when the cell did not change then, or the
    /// delta is not kept or not to be trusted.
    pub(crate) fn repeat_of(&self, base: u64, period: u32) -> Option<&KeptDelta> {
        let from = base.checked_sub(u64::from(period))?;
        if !self.trusts(from) || !self.changed_within(from, base) {
            return None;
        }
        self.delta_over(u64::from(period), base)
    }

    /// The last step up to `latest` at which the cell changed, if within the
    /// last 64 steps.
    pub(crate) fn last_change(&self) -> Option<u64> {
        (self.changes != 0).then(|| self.latest - u64::from(self.changes.trailing_zeros()))
    }

    /// The delta items that bring a holder of step `from` to step `to`, in
    /// order: aligned steps of the largest span that fits, skipping spans in
    /// which the cell did not change. `None` when one is missing (lost or
    /// older than the history), or `from` is not known: send the full form.
    pub(crate) fn chain<'s>(&'s self, from: u64, to: u64, mut out: impl FnMut(&'s KeptDelta)) -> Option<()> {
        if !self.trusts(from) {
            return None;
        }
        let span = to.saturating_sub(from);
        if span.is_power_of_two() && span <= u64::from(MAX_SPAN) && from & (span - 1) == 0 {
            // One aligned span (a view due at its period, the usual case):
            // the delta over it, if the cell changed.
            if self.changed_within(from, to) {
                out(self.delta_over(span, to)?);
            }
            return Some(());
        }
        // The deltas first, then handed out: one delta alone must end at
        // `to` (see below).
        let mut items: SmallVec<[&'s KeptDelta; 4]> = SmallVec::new();
        let mut at = from;
        let mut last_end = from;
        while at < to {
            // The largest aligned span from `at` (a power of two dividing
            // `at`, at most MAX_SPAN) that does not pass `to`.
            let mut q = 1u64 << at.trailing_zeros().min(MAX_SPAN.trailing_zeros());
            while at + q > to {
                q /= 2;
            }
            let end = at + q;
            if self.changed_within(at, end) {
                items.push(self.delta_over(q, end)?);
                last_end = end;
            }
            at = end;
        }
        // A client takes a cell's one delta as ending at its section's step,
        // and hands the players that walked out of the cell to the cells
        // they are in then (`mino_protocol::held`): a delta ending earlier
        // (the cell still since) holds them where they were at its end. The
        // full form instead (a view catching up on a cell that stands).
        if items.len() == 1 && last_end != to {
            return None;
        }
        items.into_iter().for_each(out);
        Some(())
    }
}

/// A kept delta as a view's frame reads it: its item, span and whether it
/// has supplements, read from the stream once (the due table keeps these
/// side by side, so the hundreds of views that send a delta in a tick do
/// not each load it from its stream's history: those loads were a sixth
/// of the views' samples, `perf` on section 15's walk).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DeltaRef<'s> {
    /// The delta with its supplements, as kept.
    pub(crate) kept: &'s KeptDelta,
    /// The delta's item (tag, length, body).
    pub(crate) item: &'s [u8],
    /// Its span, ticks (`None`: the kept bytes do not split; never for an
    /// own encoder's or a verified bundle's).
    pub(crate) span: Option<u32>,
    /// It has no supplements.
    pub(crate) alone: bool,
}

impl<'s> DeltaRef<'s> {
    /// `kept`'s parts.
    pub(crate) fn of(kept: &'s KeptDelta) -> DeltaRef<'s> {
        DeltaRef { kept, item: kept.item().unwrap_or(&[]), span: kept.span(), alone: kept.is_alone() }
    }
}

/// What a view holding a stream at its aligned step for some period (no
/// exception) is sent of it this tick: see [`Stream::due`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Due<'s> {
    /// Nothing: the cell is not due, or did not change since the holding.
    Nothing,
    /// One delta item, the whole chain to the step given.
    Delta(DeltaRef<'s>, u64),
    /// Anything else (a full form: a missing delta or a holding not known;
    /// a chain of several deltas): ask [`Stream::chain`] and the full form.
    Ask,
}

impl Stream {
    /// What a view holding the cell at its aligned step for `period` before
    /// this tick is sent, when that is nothing or one delta (the case of
    /// almost every view, which [`super::due::DueTable`] tabulates once
    /// a tick): [`Stream::chain`] between the two [`Stream::due_steps`].
    pub(crate) fn due(&self, period: u32) -> Due<'_> {
        let (before, target) = self.due_steps(period);
        if target <= before {
            return Due::Nothing;
        }
        let (mut items, mut last) = (0, None);
        match self.chain(before, target, |item| {
            items += 1;
            last = Some(item);
        }) {
            Some(()) if items == 0 => Due::Nothing,
            Some(()) if items == 1 => last.map_or(Due::Ask, |item| Due::Delta(DeltaRef::of(item), target)),
            _ => Due::Ask,
        }
    }
}

/// Where a shard's streams come from: index 0 is this shard, the others
/// are the shards heard through Redis.
pub(crate) type SourceId = u16;

/// This shard's source.
pub(crate) const OWN: SourceId = 0;

/// One shard whose cells are seen here.
#[derive(Debug)]
pub(crate) struct Source {
    /// Whose cells.
    pub(crate) shard: ShardId,
    /// Its recent steps and the ticks they ran at, oldest first.
    ticks: VecDeque<(u64, u64)>,
    /// This shard's step when a bundle of it was last heard.
    pub(crate) heard_at: u64,
    /// Still alive (a dead shard's source is emptied and reused).
    pub(crate) live: bool,
}

impl Source {
    /// The tick step `step` ran at (its nearest known one otherwise).
    pub(crate) fn tick_of(&self, step: u64) -> u64 {
        match self.ticks.iter().rev().find(|(s, _)| *s <= step) {
            Some(&(s, t)) => t + (step - s),
            None => self.ticks.front().map_or(step, |&(s, t)| t.saturating_sub(s - step)),
        }
    }

    /// The newest step known to have run, if any.
    pub(crate) fn newest_step(&self) -> Option<u64> {
        self.ticks.back().map(|&(s, _)| s)
    }

    /// Step `step` ran at tick `tick`.
    pub(crate) fn ran(&mut self, step: u64, tick: u64) {
        if self.ticks.back().is_some_and(|&(s, _)| s >= step) {
            return;
        }
        self.ticks.push_back((step, tick));
        while self.ticks.len() > 2 * MAX_SPAN as usize {
            self.ticks.pop_front();
        }
    }
}

/// The streams of one cell, one a shard with something there.
#[derive(Debug, Default)]
pub(crate) struct Slot {
    /// (source, stream), by source; the first inline (most cells have one
    /// source), so [`Streams::still_own`] reads the slots as one array.
    pub(crate) streams: SmallVec<[(SourceId, Stream); 1]>,
}

/// Every stream, found by cell id in O(1).
#[derive(Debug)]
pub(crate) struct Streams {
    /// Per cell id: its slot in `slots` (`u32::MAX`: none).
    slot_of: Vec<u32>,
    slots: Vec<Slot>,
    cells: Vec<CellId>,
    free: Vec<u32>,
    sources: Vec<Source>,
}

impl Streams {
    /// No streams over a grid of `cells` cells (ids 1..=cells), this
    /// shard's source being `own`.
    pub(crate) fn new(cells: usize, own: ShardId) -> Streams {
        Streams {
            slot_of: vec![u32::MAX; cells + 1],
            slots: Vec::new(),
            cells: Vec::new(),
            free: Vec::new(),
            sources: vec![Source { shard: own, ticks: VecDeque::new(), heard_at: 0, live: true }],
        }
    }

    /// The streams of `cell` (none: the cell is empty and still).
    pub(crate) fn at(&self, cell: CellId) -> &[(SourceId, Stream)] {
        self.slot_of(cell).map_or(&[], |i| &self.slots[i as usize].streams)
    }

    /// The stream of `source` at `cell`.
    pub(crate) fn get(&self, source: SourceId, cell: CellId) -> Option<&Stream> {
        self.at(cell).iter().find(|(s, _)| *s == source).map(|(_, st)| st)
    }

    /// The stream of `source` at `cell`, made with `new` if there is none
    /// (`None` for a cell off the grid, or cell 0).
    pub(crate) fn get_or_insert(
        &mut self,
        source: SourceId,
        cell: CellId,
        new: impl FnOnce() -> Stream,
    ) -> Option<&mut Stream> {
        let &i = self.slot_of.get(cell.0 as usize).filter(|_| cell.0 != 0)?;
        let i = if i == u32::MAX {
            let i = match self.free.pop() {
                Some(i) => i,
                None => {
                    self.slots.push(Slot::default());
                    self.cells.push(cell);
                    (self.slots.len() - 1) as u32
                }
            };
            self.cells[i as usize] = cell;
            self.slot_of[cell.0 as usize] = i;
            i
        } else {
            i
        };
        let slot = &mut self.slots[i as usize];
        let at = match slot.streams.iter().position(|(s, _)| *s == source) {
            Some(at) => at,
            None => {
                let at = slot.streams.partition_point(|(s, _)| *s < source);
                slot.streams.insert(at, (source, new()));
                at
            }
        };
        Some(&mut slot.streams[at].1)
    }

    /// Moves every own stream not written at `step` to it with nothing
    /// new ([`Stream::still`]): one pass in slot order, touching no other
    /// memory, so cells standing still cost a few nanoseconds a step.
    pub(crate) fn still_own(&mut self, step: u64) {
        for slot in &mut self.slots {
            if let Some((OWN, stream)) = slot.streams.first_mut() {
                if stream.latest < step {
                    stream.still(step);
                }
            }
        }
    }

    /// The slot index of `cell`'s streams (none: no stream there).
    pub(crate) fn slot_of(&self, cell: CellId) -> Option<u32> {
        self.slot_of.get(cell.0 as usize).copied().filter(|&i| i != u32::MAX)
    }

    /// Slot indices in use up to this.
    pub(crate) fn slots_len(&self) -> usize {
        self.slots.len()
    }

    /// Removes the stream of `source` at `cell`.
    pub(crate) fn remove(&mut self, source: SourceId, cell: CellId) {
        let Some(i) = self.slot_of(cell) else { return };
        let slot = &mut self.slots[i as usize];
        slot.streams.retain(|(s, _)| *s != source);
        if slot.streams.is_empty() {
            self.slot_of[cell.0 as usize] = u32::MAX;
            self.free.push(i);
        }
    }

    /// Removes every other shard's stream at the cells `at` picks.
    pub(crate) fn drop_relayed_where(&mut self, at: impl Fn(CellId) -> bool) {
        let stale: Vec<(SourceId, CellId)> = self
            .cells()
            .filter(|(cell, _)| at(*cell))
            .flat_map(|(cell, slot)| slot.streams.iter().filter(|(s, _)| *s != OWN).map(move |(s, _)| (*s, cell)))
            .collect();
        for (source, cell) in stale {
            self.remove(source, cell);
        }
    }

    /// Every cell with streams.
    pub(crate) fn cells(&self) -> impl Iterator<Item = (CellId, &Slot)> {
        self.cells.iter().zip(&self.slots).filter(|(c, _)| self.slot_of[c.0 as usize] != u32::MAX).map(|(c, s)| (*c, s))
    }

    /// Every stream, mutably.
    pub(crate) fn each_mut(&mut self, mut f: impl FnMut(CellId, SourceId, &mut Stream)) {
        for (i, slot) in self.slots.iter_mut().enumerate() {
            let cell = self.cells[i];
            if self.slot_of[cell.0 as usize] != i as u32 {
                continue;
            }
            for (source, stream) in &mut slot.streams {
                f(cell, *source, stream);
            }
        }
    }

    /// The source of `shard`, made if new.
    pub(crate) fn source_of(&mut self, shard: ShardId) -> SourceId {
        if let Some(i) = self.sources.iter().position(|s| s.shard == shard && s.live) {
            return i as SourceId;
        }
        let fresh = Source { shard, ticks: VecDeque::new(), heard_at: 0, live: true };
        match self.sources.iter().position(|s| !s.live) {
            Some(i) => {
                self.sources[i] = fresh;
                i as SourceId
            }
            None => {
                self.sources.push(fresh);
                (self.sources.len() - 1) as SourceId
            }
        }
    }

    /// Source ids in use up to this (live or not).
    pub(crate) fn sources_len(&self) -> SourceId {
        self.sources.len() as SourceId
    }

    /// The source `id`.
    pub(crate) fn source(&self, id: SourceId) -> &Source {
        &self.sources[usize::from(id)]
    }

    /// The source `id`, mutably.
    pub(crate) fn source_mut(&mut self, id: SourceId) -> &mut Source {
        &mut self.sources[usize::from(id)]
    }

    /// The live sources other than this shard's.
    pub(crate) fn relayed(&self) -> impl Iterator<Item = (SourceId, &Source)> {
        self.sources.iter().enumerate().skip(1).filter(|(_, s)| s.live).map(|(i, s)| (i as SourceId, s))
    }

    /// Forgets every stream of `source` (its shard left the place) and
    /// retires it; returns the cells it had.
    pub(crate) fn drop_source(&mut self, source: SourceId) -> Vec<CellId> {
        let cells: Vec<CellId> =
            self.cells().filter(|(_, slot)| slot.streams.iter().any(|(s, _)| *s == source)).map(|(c, _)| c).collect();
        for &cell in &cells {
            self.remove(source, cell);
        }
        if let Some(s) = self.sources.get_mut(usize::from(source)) {
            s.live = false;
            s.ticks.clear();
        }
        cells
    }

    /// The tick ended: every stream's holdings settle.
    pub(crate) fn settle(&mut self) {
        self.each_mut(|_, _, s| s.settle());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(tag: u8) -> Bytes {
        Bytes::from(vec![tag])
    }

    /// A stream with deltas for every aligned span at every step 1..=n, each
    /// item's byte naming (span, step): changed at every step in `changed`.
    fn stream(n: u64, changed: &[u64]) -> Stream {
        let mut s = Stream::new(0, 0);
        for step in 1..=n {
            push_step(&mut s, step, changed);
        }
        s
    }

    /// Records step `step` of [`stream`]'s stream.
    fn push_step(s: &mut Stream, step: u64, changed: &[u64]) {
        let mut deltas = Vec::new();
        let mut q = 1u32;
        while q <= MAX_SPAN && step.is_multiple_of(u64::from(q)) {
            if changed.iter().any(|&x| x > step - u64::from(q).min(step) && x <= step) {
                deltas.push((q, Bytes::from(format!("{q}@{step}"))));
            }
            q *= 2;
        }
        s.push(step, item(0), true, changed.contains(&step), &deltas);
    }

    fn names(items: &[Bytes]) -> Vec<String> {
        items.iter().map(|b| String::from_utf8_lossy(b).into_owned()).collect()
    }

    #[test]
    fn aligned_steps_follow_the_due_rule() {
        assert_eq!(aligned(10, 1, 3), 10);
        assert_eq!(aligned(10, 4, 3), 9, "9 + 3 is a multiple of 4");
        assert_eq!(aligned(10, 4, 2), 10);
        assert_eq!(aligned(1, 64, 0), 0);
    }

    #[test]
    fn a_chain_takes_the_largest_aligned_spans_and_skips_still_ones() {
        let s = stream(40, &(1..=40).collect::<Vec<_>>());
        let mut out = Vec::new();
        s.chain(13, 20, |b| out.push(Bytes::copy_from_slice(b))).expect("known");
        assert_eq!(names(&out), ["1@14", "2@16", "4@20"]);
        out.clear();
        s.chain(16, 32, |b| out.push(Bytes::copy_from_slice(b))).expect("known");
        assert_eq!(names(&out), ["16@32"]);
        let still = stream(40, &[3, 30]);
        out.clear();
        still.chain(4, 29, |b| out.push(Bytes::copy_from_slice(b))).expect("known");
        assert!(out.is_empty(), "nothing changed in between: {:?}", names(&out));
        out.clear();
        still.chain(24, 32, |b| out.push(Bytes::copy_from_slice(b))).expect("known");
        assert_eq!(names(&out), ["8@32"]);
    }

    #[test]
    fn the_due_delta_of_each_base_period_is_the_one_a_search_finds() {
        let chain = |s: &Stream, from: u64, to: u64| {
            let mut out = Vec::new();
            s.chain(from, to, |b| out.push(Bytes::copy_from_slice(b))).map(|()| names(&out))
        };
        {
            // Changed at every step: the due delta of each period ends at
            // the aligned step at or below the newest.
            let mut s = stream(41, &(1..=41).collect::<Vec<_>>());
            for period in [1u64, 2, 4] {
                let to = aligned(41, period as u32, 0);
                assert_eq!(chain(&s, to - period, to), Some(vec![format!("{period}@{to}")]), "period {period}");
            }
            // Still for three steps: a span after the last change has
            // nothing new; one ending at or before it has its delta; one
            // across it has none kept (the full form is sent).
            // (Each still step is checked: at 42 period 4's span ends at
            // 40, at 44 the spans of 2 and 4 cross the last change.)
            let mut seen = [0; 3];
            for step in 42..=44 {
                s.still(step);
                for period in [1u64, 2, 4] {
                    let to = aligned(step, period as u32, 0);
                    let (want, case) = if to <= 41 {
                        (Some(vec![format!("{period}@{to}")]), 0)
                    } else if to - period >= 41 {
                        (Some(Vec::new()), 1)
                    } else {
                        (None, 2)
                    };
                    seen[case] += 1;
                    assert_eq!(chain(&s, to - period, to), want, "period {period} at still step {step}");
                }
            }
            assert!(seen.iter().all(|&n| n > 0), "every case met: {seen:?}");
            // Still for longer than the history: nothing kept, nothing due.
            for step in 45..=120 {
                s.still(step);
            }
            assert_eq!(s.due, [NO_DELTA; DUE_PERIODS]);
            assert_eq!(chain(&s, 119, 120), Some(Vec::new()));
        }
    }

    #[test]
    fn the_due_answer_is_the_chain_from_the_held_step() {
        let some: Vec<u64> = vec![5, 17, 18, 30, 64, 65];
        let every: Vec<u64> = (1..=100).collect();
        // Answers that are a delta, and that are nothing when due.
        let (mut deltas, mut still) = (0, 0);
        for start in [0, 1, 3] {
            for changed in [&every[..], &some[..], &[]] {
                let mut s = Stream::new(start, 0);
                for step in start + 1..=start + 100 {
                    push_step(&mut s, step, changed);
                    for period in [1u32, 2, 3, 4, 8, 16, 32, 64] {
                        let (before, target) = s.due_steps(period);
                        let mut chain = Vec::new();
                        let whole = s.chain(before, target, |b| chain.push(b));
                        let at = format!("from {start}, step {step}, period {period}");
                        match s.due(period) {
                            Due::Nothing => {
                                assert!(target <= before || whole == Some(()) && chain.is_empty(), "{at}");
                                still += usize::from(target > before);
                            }
                            Due::Delta(item, to) => {
                                assert_eq!((to, whole, &chain[..]), (target, Some(()), &[item.kept][..]), "{at}");
                                deltas += 1;
                            }
                            Due::Ask => assert!(target > before && (whole.is_none() || chain.len() > 1), "{at}"),
                        }
                    }
                    s.settle();
                }
            }
        }
        assert!(deltas > 500 && still > 500, "{deltas} deltas, {still} due and still");
        // Steps heard mid-way: a holding before them is asked about.
        let mut s = Stream::new(10, 11);
        push_step(&mut s, 12, &[12]);
        assert_eq!(s.due(1), Due::Ask);
    }

    #[test]
    fn unknown_steps_break_the_chain() {
        let mut s = stream(10, &[5, 10]);
        s.push(14, item(0), true, true, &[(1, item(1)), (2, item(2))]);
        assert!(s.changed_within(11, 12), "lost steps count as changed");
        let mut out = Vec::new();
        assert!(s.chain(10, 14, |b| out.push(Bytes::copy_from_slice(b))).is_none());
        out.clear();
        assert!(s.chain(13, 14, |b| out.push(Bytes::copy_from_slice(b))).is_none(), "13 was lost: not to be trusted");
        let fresh = Stream::new(100, 101);
        assert!(fresh.chain(50, 100, |b| out.push(Bytes::copy_from_slice(b))).is_none(), "heard from mid-way");
    }

    #[test]
    fn changes_are_remembered_for_64_steps() {
        let mut s = stream(10, &[3]);
        assert!(s.changed_within(2, 3) && !s.changed_within(3, 10));
        assert_eq!(s.last_change(), Some(3));
        s.still(70);
        assert!(s.changed_within(2, 3), "out of the window: unknown");
        assert_eq!(s.last_change(), None);
        assert!(!s.changed_within(10, 70));
    }

    #[test]
    fn a_change_is_repeated_from_the_step_it_was_sent_at() {
        let s = stream(12, &[7, 9]);
        let repeat = |base, period| s.repeat_of(base, period).map(|d| names(&[Bytes::copy_from_slice(d)]));
        assert_eq!(repeat(9, 1), Some(vec!["1@9".to_owned()]), "changed at 9: its one-step delta");
        assert_eq!(repeat(8, 1), None, "still at 8: nothing to repeat");
        assert_eq!(repeat(10, 2), Some(vec!["2@10".to_owned()]), "over (8, 10], at period 2");
        assert_eq!(repeat(0, 1), None, "no step before the first");
        // A holding not to be trusted (heard anew at 11): none.
        let mut t = stream(12, &[9]);
        t.vacate(12, item(0));
        assert_eq!(t.repeat_of(9, 1), None);
    }

    #[test]
    fn a_lossy_client_is_told_a_cells_last_change_before_a_deltas_base() {
        // Born at step 5 (empty before), changed at 8 and 20.
        let mut s = Stream::new(5, 0);
        for step in 5..=30 {
            s.push(step, item(0), true, [5, 8, 20].contains(&step), &[]);
        }
        assert_eq!(s.last_change_by(4), Unchanged::Ever, "before its first step: no stream, empty");
        assert_eq!(s.last_change_by(20), Unchanged::Since(20));
        assert_eq!(s.last_change_by(24), Unchanged::Since(20));
        assert_eq!(s.last_change_by(19), Unchanged::Since(8));
        assert_eq!(s.last_change_by(6), Unchanged::Since(5));
        // Still for long: what is known goes back 64 steps, and it is said so.
        s.still(100);
        assert_eq!(s.last_change_by(90), Unchanged::Before(36), "as of the oldest step known");
        assert_eq!(s.last_change_by(20), Unchanged::Since(20), "past what is known: the strictest");
        // Begun a step before its first players came (as a cell a walker
        // enters): empty until then.
        let mut s = Stream::new(10, 0);
        s.push(11, item(0), true, true, &[]);
        assert_eq!((s.last_change_by(10), s.last_change_by(11)), (Unchanged::Ever, Unchanged::Since(11)));
        // Another shard's cell, first heard at 10, standing: not empty before
        // it, unknown; then steps 13 and 14 not heard (a lost bundle): a
        // client must hold it from after them.
        let mut s = Stream::new(10, 11);
        s.push(10, item(0), true, false, &[]);
        s.push(12, item(0), true, false, &[]);
        assert_eq!(s.last_change_by(11), Unchanged::Before(11), "its first step trusted, no change since");
        s.push(15, item(0), true, false, &[]);
        assert_eq!(s.last_change_by(15), Unchanged::Before(15), "the steps not heard count as a change");
    }
}
