//! Views: the sockets that hold the same thing of the same cells get the same
//! frame, assembled once a tick from the cells' streams ([`super::streams`]).
//!
//! **Holdings.** A view holds each cell of its key's view (own and relayed
//! alike) at a step: by default the cell's last due step for its tier's
//! period, the step its stream's deltas are aligned on; so every view of the
//! same key holds the same steps, and the streams' one encode of each delta
//! serves all of them. A cell is due when its aligned step passes; the view
//! then sends it the delta from its holding to the new aligned step (or
//! nothing when the cell did not change meanwhile: a standing crowd costs
//! nothing, and a socket with nothing new gets no frame).
//!
//! **Exceptions.** A view holds some cells at other steps, or not at all,
//! when its sockets just came: a socket that joined (holds nothing: full
//! forms as its cells come due), one whose player crossed into another cell
//! (it holds what its old view held: cells of both views whose tier changed
//! are brought over by a chain of deltas, cells new to it come as full forms,
//! cells it leaves are forgotten), one whose frames were dropped (a resync:
//! every shard's cells reset and sent whole), and a view whose budget changed
//! its tiers' periods. Exceptions are resolved as their cells come due; a
//! view with none left joins its key's canonical view, when that view has
//! none either (a canonical view holds a cell at another step for a while
//! after a lost bundle or a change of rung, and a socket joining it then
//! would be sent deltas from a step it does not hold). So deltas are encoded
//! once a cell, and frames assembled once a view, whatever the sockets.
//!
//! **Full form.** A socket that did not ask for deltas is sent every cell it
//! is due as a full form (as protocol 3 sent every cell), in views of its own.
//! Views of whole cells (this form and the datagram form) take each cell's
//! due steps at its spread phase ([`interest::spread_phase`]), not at the
//! deltas' common one: their frames stay near their average every tick.
//! An empty cell is sent only when its sockets may hold it otherwise: so
//! where a cell's period changed (its tier or the view's rung), the view
//! keeps the step its sockets hold it at as an exception, as a delta view
//! does, and sends the cell whole the next tick it looks at it if it
//! changed since.
//!
//! **Datagram form.** A socket whose frames may be lost (WebTransport) and
//! whose client does not check a delta's base is sent full forms, but only
//! of what changed: a cell at its due steps while it changes and for
//! [`REPEATS`] due steps after, a cell new to the view (or one whose tier
//! changed after it changed) once, and every cell again once every
//! [`REFRESH_STEPS`] of its steps while the view is looked at, and the whole
//! view (emptied cells too, and a forget of each own cell of it with no
//! stream) on the view's own turn every [`REFRESH_STEPS`] (so a change
//! whose every repeat was lost is wrong for at most that long). A cell
//! that left the view is forgotten, and a shard that left the place reset,
//! in [`REPEATS`] frames; its client drops a cell sent nothing for
//! [`super::viewers::EXPIRY_REFRESHES`] refreshes (the Welcome's cell
//! expiry), so one whose forgets were all lost is gone then. Its views hold
//! cells as delta views do (a joiner's and a mover's new cells are unheld
//! exceptions), so a standing place sends them nothing between refreshes
//! and wakes them only on their turn.
//!
//! **Datagram deltas.** A socket whose frames may be lost and whose client
//! checks each delta's base ([`Form::DatagramDeltas`]) is sent a deltas
//! view's items, with what its client needs to check them and to stand
//! alone in a datagram ([`lossy_items`]: an unchanged item, empty deltas
//! repeated after a change; every supplement; a cell told by an empty
//! delta alone implied as a bit, as a websocket's, when that is shorter); on its
//! view's turn every cell still at its newest step is unheld again
//! ([`refill`]), and a client that
//! missed a change asks for a resync ([`Fresh::Refill`]).

use super::due::{DueRoom, DueTable};
use super::empties::{self, is_empty_over, Empties};
use super::grid::{CellId, Grid, RegionId, REGION_CELLS};
use super::interest::{self, Stencil, Tier};
use super::streams::{aligned, DeltaRef, Due, Source, SourceId, Stream, Streams, Unchanged};
use super::viewers::{Form, Fresh, GroupKey, Move, DELTA_REPEAT_STEPS, REFRESH_STEPS, REPEATS};
use crate::ws_frame;
use bytes::Bytes;
use mino_protocol::delta::varint_len;
use mino_protocol::limits::MAX_SERVER_MESSAGE_BYTES;
use mino_protocol::stencil::{self, ViewScratch};
use mino_protocol::view::{
    empty_delta_item, implied_bytes, unchanged_item, write_item, write_section_cell, write_section_header,
    write_section_header_implied, write_view_envelope, Implied, ItemKind, KeptDelta, SectionView, UNCHANGED_EVER_ITEM,
    VIEW_ENVELOPE_BYTES,
};
use mino_protocol::ShardId;
use std::collections::HashMap;
use std::sync::LazyLock;

/// What a view holds of one (source, cell), when not its due step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Holding {
    /// The state at this step.
    At(u64),
    /// Nothing: the next due step sends the full form.
    Unheld,
}

/// What a view holds or owes out of the ordinary (most views: nothing, and
/// no allocation: see [`View::owed`]).
#[derive(Debug, Default)]
struct Owed {
    /// (cell, source, holding), by cell then source.
    exceptions: Vec<(CellId, SourceId, Holding)>,
    /// To drop in the next frames: (source, cell, frames left to tell it
    /// in: 1, or [`REPEATS`] for a datagram view, whose frames may be lost).
    forgets: Vec<(SourceId, CellId, u32)>,
    /// Shards to reset (every cell dropped) at the start of the next frames.
    resets: Vec<Reset>,
}

/// A shard whose cells a view's sockets are told to drop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Reset {
    shard: ShardId,
    /// Frames left to tell it in: 1, or [`REPEATS`] for a datagram view
    /// when the shard left the place (its frames may be lost, and nothing
    /// else would ever drop the cells of a shard that is gone).
    left: u32,
    /// Told at least once: a repeat is not sent once the shard is heard
    /// from again (it would drop the cells the shard sends anew).
    told: bool,
}

impl Reset {
    /// A reset told once (`left` 1) or in several frames.
    fn new(shard: ShardId, left: u32) -> Reset {
        Reset { shard, left, told: false }
    }
}

impl Owed {
    fn is_empty(&self) -> bool {
        self.exceptions.is_empty() && self.forgets.is_empty() && self.resets.is_empty()
    }
}

/// One view: its key, form and tiers' rung, and what it holds otherwise.
/// A standing player's view is one of these and nothing else (48 bytes).
#[derive(Debug)]
struct View {
    key: GroupKey,
    form: Form,
    /// The rung of [`interest::LADDER`] its budget allows.
    level: u8,
    canonical: bool,
    sockets: u32,
    /// What it holds or owes out of the ordinary (`None`: nothing).
    owed: Option<Box<Owed>>,
    /// The step it was last walked.
    visited: u64,
    /// The step it was last woken (each view is looked at once a tick).
    woken: u64,
    /// Its frames this tick: a range of [`Views::messages`].
    frames: (u32, u32),
}

// A standing player's view costs this and nothing more.
const _: () = assert!(std::mem::size_of::<View>() == 48);

impl View {
    /// A view of `key` in `form` at rung `level`, holding nothing out of
    /// the ordinary, with no socket, never walked.
    fn new(key: GroupKey, form: Form, level: u8) -> View {
        View { key, form, level, canonical: false, sockets: 0, owed: None, visited: 0, woken: 0, frames: (0, 0) }
    }

    /// True when the view holds exactly what its tiers say (every cell at
    /// its due step) and has nothing else to send: the only state another
    /// socket can be known to share, so the only view one may join.
    fn is_plain(&self) -> bool {
        self.owed.as_ref().is_none_or(|o| o.is_empty())
    }

    /// Its exceptions, by cell then source.
    fn exceptions(&self) -> &[(CellId, SourceId, Holding)] {
        self.owed.as_ref().map_or(&[], |o| &o.exceptions[..])
    }

    /// What it owes, made when first needed.
    fn owed_mut(&mut self) -> &mut Owed {
        self.owed.get_or_insert_with(Box::default)
    }

    /// Drops what it owes once that is nothing (no room kept).
    fn settle(&mut self) {
        if self.is_plain() {
            self.owed = None;
        }
    }

    /// A stream's due steps for this view at `period` ([`Stream::due_steps`]):
    /// at the deltas' common phase, or for a view of whole cells at the
    /// cell's `phase` ([`interest::spread_phase`]).
    fn due_steps_of(&self, stream: &Stream, period: u32, phase: u64) -> (u64, u64) {
        match self.form {
            Form::Deltas | Form::DatagramDeltas => stream.due_steps(period),
            Form::Full | Form::Datagram => stream.due_steps_at(period, phase),
        }
    }

    /// The periods of its tiers.
    fn periods(&self) -> &'static [u32; 4] {
        &interest::LADDER[usize::from(self.level)]
    }

    /// True when the view may have something to send whatever its regions
    /// do: full forms (sent at every due step), something out of the
    /// ordinary, or never walked.
    fn restless(&self) -> bool {
        self.form == Form::Full || !self.is_plain() || self.visited == 0
    }

    /// True when view `i` is a datagram view whose refresh is at `step`.
    fn refreshes(&self, i: usize, step: u64) -> bool {
        self.form.lossy() && turn(i as u64, step)
    }
}

/// True when `step` is datagram view `i`'s turn to refresh (views take
/// turns, so a standing place's refreshes are spread over the steps).
fn turn(i: u64, step: u64) -> bool {
    step % REFRESH_STEPS == i % REFRESH_STEPS
}

/// What a tick's views read.
pub(crate) struct Area<'a> {
    /// The grid.
    pub(crate) grid: &'a Grid,
    /// The view stencil.
    pub(crate) stencil: &'a Stencil,
    /// Every stream.
    pub(crate) streams: &'a Streams,
    /// Bytes a socket may get a tick on average (`usize::MAX`: no budget).
    pub(crate) budget: usize,
    /// Sections may carry implied cells ([`super::aoi::AreaSettings`]).
    pub(crate) implied_cells: bool,
    /// This shard's step.
    pub(crate) step: u64,
    /// Per region id: the last step a stream in it changed (none: never
    /// since the shard started).
    pub(crate) region_changed: &'a [Option<u64>],
    /// Cells of the stencil's reach around a viewer cell, each way.
    pub(crate) reach: u32,
}

/// One item of a frame being assembled: its bytes borrowed from the
/// streams (no reference count taken: a tick assembles tens of thousands).
#[derive(Clone, Debug, PartialEq)]
struct Piece<'a> {
    source: SourceId,
    step: u64,
    cell: CellId,
    /// Its place among the tick's pieces: a cell's items keep their order.
    order: u32,
    /// An item (for a delta: the delta's item alone).
    item: &'a [u8],
    /// For a delta, the delta with its supplements as its stream keeps it
    /// (`None`: `item` is an item).
    kept: Option<&'a KeptDelta>,
    /// A delta's span, ticks (0: the kept bytes do not split, or no delta).
    span: u32,
    /// A delta without supplements.
    alone: bool,
}

impl<'a> Piece<'a> {
    /// An item (a full form, a forget).
    fn new(source: SourceId, step: u64, cell: CellId, item: &'a [u8]) -> Piece<'a> {
        Piece { source, step, cell, order: 0, item, kept: None, span: 0, alone: true }
    }

    /// A delta with its supplements, as its stream keeps it.
    /// (Its parts copied in: 48 bytes a piece; the tick pushes tens of
    /// thousands.)
    fn delta(source: SourceId, step: u64, cell: CellId, d: DeltaRef<'a>) -> Piece<'a> {
        let (kept, span, alone) = (Some(d.kept), d.span.unwrap_or(0), d.alone);
        Piece { source, step, cell, order: 0, item: d.item, kept, span, alone }
    }

    /// The span of the delta it is (`None`: an item, or kept bytes that do
    /// not split).
    fn delta_span(&self) -> Option<u32> {
        (self.kept.is_some() && self.span > 0).then_some(self.span)
    }

    /// Its bytes in a frame at most (a delta with all its supplements).
    fn len(&self) -> usize {
        match self.kept {
            Some(kept) if !self.alone => kept.len(),
            Some(_) => self.item.len() + 1,
            None => self.item.len(),
        }
    }
}

// A tick pushes tens of thousands of pieces: they stay this small.
const _: () = assert!(std::mem::size_of::<Piece<'static>>() <= 48);

/// The forget item (a cell to drop), the same bytes for every cell.
static FORGET: LazyLock<Vec<u8>> = LazyLock::new(|| {
    let mut forget = Vec::new();
    write_item(&mut forget, ItemKind::Forget, &[]);
    forget
});

/// Every view.
#[derive(Debug, Default)]
pub(crate) struct Views {
    views: Vec<View>,
    free: Vec<u32>,
    canonical: HashMap<(GroupKey, Form), u32>,
    /// Movers of this tick: (from view, key, form, fresh) -> their view.
    movers: HashMap<(Option<u32>, GroupKey, Form, Option<Fresh>), u32>,
    /// Per cell id: a tier + 1 while a stencil is marked (0: not in it).
    marks: Vec<u8>,
    /// Scratch: a view's cells with their tiers, ascending.
    cells: Vec<(CellId, Tier)>,
    other: Vec<(CellId, Tier)>,
    /// Room for [`stencil::view_cells`].
    room: ViewScratch,
    /// Per cell id, this tick: what a socket seeing the cell every step
    /// costs, bytes (the budget's weights), and its streams; by form.
    weights: Vec<(u32, u32, u8)>,
    /// The most pieces a view has had in a tick (the room each tick's list
    /// starts with).
    pieces: usize,
    /// Scratch: a deltas view's cells that have streams, with their slot,
    /// period and index in `cells`.
    slots: Vec<(CellId, u32, u32, u32)>,
    /// Scratch: the (source, cell) pairs a view holds exceptions of.
    excepted: Vec<(SourceId, CellId)>,
    /// Room for the tick's [`DueTable`].
    due_room: DueRoom,
    /// Scratch: a frame's body while it is written.
    body: Vec<u8>,
    /// [`Scratch::single`] and [`Scratch::single_span`], kept from tick to
    /// tick (the spans one cell id each, zeroed as they are used).
    single: Vec<u32>,
    single_span: Vec<u32>,
    /// Views assembled in the last tick (the others were idle or empty).
    assembled: usize,
    /// Every view's frames this tick, view after view.
    messages: Vec<Bytes>,
    /// Per region id: the views whose key's view touches it, each once.
    by_region: Vec<Vec<u32>>,
    /// Views that may have something to send whatever their regions do
    /// ([`View::restless`]) or were just given sockets: looked at next tick.
    restless: Vec<u32>,
    /// Scratch: the views a tick looks at, each with whether a region it
    /// touches changed within the slowest period (then it is not idle).
    woken: Vec<(u32, bool)>,
    /// The views with frames this tick.
    with_frames: Vec<u32>,
    /// The views whose frames may be lost ([`Form::lossy`]), woken on their
    /// refresh steps.
    datagram: Vec<u32>,
    /// Something that may let a view join another or be freed happened
    /// since the last [`Views::merge`] (a socket moved or left, a view was
    /// assembled or reset); without it the merge has nothing to do.
    unsettled: bool,
}

impl Views {
    /// Views over a grid of `cells` cells.
    pub(crate) fn new(cells: usize) -> Views {
        Views { marks: vec![0; cells + 1], weights: vec![(0, 0, 0); cells + 1], ..Views::default() }
    }

    /// The frames of view `view` this tick (none: nothing new).
    pub(crate) fn frames(&self, view: u32) -> &[Bytes] {
        self.views.get(view as usize).map_or(&[], |v| &self.messages[v.frames.0 as usize..v.frames.1 as usize])
    }

    /// The views with frames this tick, ascending (a standing place: none).
    pub(crate) fn with_frames(&self) -> &[u32] {
        &self.with_frames
    }

    /// The regions some socket's view touches (each once, in no order).
    pub(crate) fn live_regions(&self) -> impl Iterator<Item = RegionId> + '_ {
        self.by_region
            .iter()
            .enumerate()
            .filter(|(_, views)| views.iter().any(|&v| self.views[v as usize].sockets > 0))
            .map(|(r, _)| RegionId(r as u32))
    }

    /// How many views the last tick assembled (a standing place: none).
    pub(crate) fn assembled(&self) -> usize {
        self.assembled
    }

    /// View indices in use up to this (the tick's views are indexed by them).
    pub(crate) fn capacity(&self) -> usize {
        self.views.len()
    }

    /// `source`'s shard left: every view drops what it held of it, and its
    /// sockets are told to drop its cells.
    pub(crate) fn reset_all(&mut self, source: SourceId, streams: &Streams) {
        let shard = streams.source(source).shard;
        self.unsettled = true;
        for (i, v) in self.views.iter_mut().enumerate().filter(|(_, v)| v.sockets > 0) {
            let times = if v.form.lossy() { REPEATS } else { 1 };
            let owed = v.owed_mut();
            owed.exceptions.retain(|&(_, s, _)| s != source);
            owed.forgets.retain(|&(s, _, _)| s != source);
            owed.resets.retain(|r| r.shard != shard);
            owed.resets.push(Reset::new(shard, times));
            self.restless.push(i as u32);
        }
    }

    /// `sockets` sockets join view `view`: it is looked at next tick, since
    /// a view nobody was in may have been left out of the restless ones
    /// (a full-form view is never idle).
    fn give(&mut self, view: u32, sockets: u32) {
        self.views[view as usize].sockets += sockets;
        self.restless.push(view);
    }

    /// A socket left view `view`.
    pub(crate) fn leave(&mut self, view: u32) {
        if let Some(v) = self.views.get_mut(view as usize) {
            v.sockets = v.sockets.saturating_sub(1);
            self.unsettled = true;
        }
    }

    /// Places this tick's movers in views (made for them when they need
    /// one); returns each mover's view, in the order of `moves`.
    pub(crate) fn place(&mut self, moves: &[Move], area: &Area<'_>, out: &mut Vec<u32>) {
        self.movers.clear();
        out.clear();
        self.unsettled |= !moves.is_empty();
        for m in moves {
            let group = (m.from, m.key, m.form, m.fresh);
            let to = match self.movers.get(&group) {
                Some(&to) => to,
                None => {
                    let to = self.made_for(m, area);
                    self.movers.insert(group, to);
                    to
                }
            };
            if let Some(from) = m.from {
                self.leave(from);
            }
            self.give(to, 1);
            out.push(to);
        }
    }

    /// The view a mover goes to: its key's canonical view when both hold
    /// exactly what their tiers say (a canonical view may itself hold a cell
    /// at another step for a while: sent whole after a lost bundle, or kept
    /// when its budget moved its tiers), else one made for it.
    fn made_for(&mut self, m: &Move, area: &Area<'_>) -> u32 {
        let level = self.canonical.get(&(m.key, m.form)).map_or(0, |&i| self.views[i as usize].level);
        let mut view = View::new(m.key, m.form, level);
        self.walk_into(m.key, area, Which::Cells);
        match (m.fresh, m.from) {
            (Some(fresh), _) => {
                let owed = view.owed_mut();
                let old = m.from.and_then(|f| self.views.get(f as usize)).and_then(|v| v.owed.as_ref());
                match fresh {
                    Fresh::Resync => {
                        owed.resets.push(Reset::new(area.streams.source(super::streams::OWN).shard, 1));
                        owed.resets.extend(area.streams.relayed().map(|(_, s)| Reset::new(s.shard, 1)));
                        // A shard that left since the last frame is no longer a
                        // source, but the socket still holds its cells.
                        for &reset in old.map_or(&[][..], |o| &o.resets[..]) {
                            if !owed.resets.iter().any(|r| r.shard == reset.shard) {
                                owed.resets.push(reset);
                            }
                        }
                    }
                    // Nothing is reset: what the old view still owes the
                    // socket (forgets, resets of shards gone) is kept.
                    Fresh::Refill => {
                        if let Some(old) = old {
                            owed.forgets.extend(old.forgets.iter().copied());
                            owed.resets.extend(old.resets.iter().copied());
                        }
                    }
                    Fresh::Joined => {}
                }
                if m.form != Form::Full {
                    for &(cell, _) in &self.cells {
                        for (source, _) in area.streams.at(cell) {
                            owed.exceptions.push((cell, *source, Holding::Unheld));
                        }
                    }
                }
            }
            (None, Some(from)) => self.carry_over(from, &mut view, area),
            (None, None) => {}
        }
        if let Some(owed) = view.owed.as_mut() {
            owed.exceptions.sort_unstable_by_key(|&(c, s, _)| (c, s));
        }
        view.settle();
        if view.is_plain() {
            if let Some(&i) = self.canonical.get(&(m.key, m.form)).filter(|&&i| self.views[i as usize].is_plain()) {
                return i;
            }
        }
        self.insert(view, area)
    }

    /// A mover from view `from` to `view`'s key: what it holds of the cells
    /// of both views that is not what `view` holds by default, and the cells
    /// it leaves.
    fn carry_over(&mut self, from: u32, view: &mut View, area: &Area<'_>) {
        let Some(old) = self.views.get(from as usize) else { return };
        let (old_key, old_periods, old_form) = (old.key, old.periods(), old.form);
        let old_exceptions = old.exceptions().to_vec();
        if let Some(old) = old.owed.as_ref() {
            let owed = view.owed_mut();
            owed.forgets.extend(old.forgets.iter().copied());
            // Shards that left since the old view's last frame: its sockets
            // still hold their cells.
            owed.resets.extend(old.resets.iter().copied());
        }
        // The old view's cells, marked with their tiers.
        self.walk_into(old_key, area, Which::Other);
        for &(cell, tier) in &self.other {
            if let Some(m) = self.marks.get_mut(cell.0 as usize) {
                *m = tier as u8 + 1;
            }
        }
        for &(cell, tier) in &self.cells {
            let old_tier = self.marks.get(cell.0 as usize).copied().unwrap_or(0);
            for (source, stream) in area.streams.at(cell) {
                let phase = spread_of(area.grid, cell);
                let implicit = Holding::At(view.due_steps_of(stream, view.periods()[tier as usize], phase).0);
                let held = if old_tier == 0 || old_form != view.form {
                    Holding::Unheld
                } else {
                    match old_exceptions.binary_search_by_key(&(cell, *source), |&(c, s, _)| (c, s)) {
                        Ok(i) => old_exceptions[i].2,
                        Err(_) => {
                            let old_period = old_periods[usize::from(old_tier - 1)];
                            Holding::At(view.due_steps_of(stream, old_period, phase).0)
                        }
                    }
                };
                // A datagram view's sockets hold what they were last sent: a
                // cell new to them is owed, and so is one that changed since
                // the old view's last due step (the new tier's window may not
                // reach back), whole. A full-form view keeps the step its
                // sockets hold a cell of both views at, as a delta view does
                // (`decide` sends it whole if it changed since); a cell new
                // to them is sent as any is, when due and occupied.
                let owed = match (view.form, held) {
                    (Form::Deltas | Form::DatagramDeltas, _) | (Form::Full, Holding::At(_)) => {
                        (held != implicit).then_some(held)
                    }
                    (Form::Full, Holding::Unheld) => None,
                    (Form::Datagram, Holding::Unheld) => Some(Holding::Unheld),
                    (Form::Datagram, Holding::At(h)) => {
                        stream.changed_within(h, stream.latest()).then_some(Holding::Unheld)
                    }
                };
                if let Some(owed) = owed {
                    view.owed_mut().exceptions.push((cell, *source, owed));
                }
            }
        }
        // Cells of the old view not in the new one: forgotten.
        for &(cell, _) in &self.cells {
            if let Some(m) = self.marks.get_mut(cell.0 as usize) {
                *m = 0;
            }
        }
        for &(cell, _) in &self.other {
            let Some(m) = self.marks.get_mut(cell.0 as usize) else { continue };
            if *m != 0 {
                *m = 0;
                let times = if view.form.lossy() { REPEATS } else { 1 };
                view.owed_mut().forgets.extend(area.streams.at(cell).iter().map(|(s, _)| (*s, cell, times)));
            }
        }
    }

    fn insert(&mut self, view: View, area: &Area<'_>) -> u32 {
        let (key, form) = (view.key, view.form);
        let i = match self.free.pop() {
            Some(i) => {
                self.views[i as usize] = view;
                i
            }
            None => {
                self.views.push(view);
                (self.views.len() - 1) as u32
            }
        };
        let by_region = &mut self.by_region;
        each_distinct_region(area.grid, area.reach, key, |r| {
            let r = r.0 as usize;
            if by_region.len() <= r {
                by_region.resize_with(r + 1, Vec::new);
            }
            by_region[r].push(i);
        });
        if form.lossy() {
            self.datagram.push(i);
        }
        i
    }

    /// Frees view `i` (nobody is in it).
    fn free(&mut self, i: usize, grid: &Grid, reach: u32) {
        let v = &mut self.views[i];
        v.visited = u64::MAX;
        v.owed = None;
        v.frames = (0, 0);
        let (key, form) = (v.key, v.form);
        if form.lossy() {
            self.datagram.retain(|&v| v as usize != i);
        }
        let by_region = &mut self.by_region;
        each_distinct_region(grid, reach, key, |r| {
            if let Some(views) = by_region.get_mut(r.0 as usize) {
                views.retain(|&v| v as usize != i);
            }
        });
        self.free.push(i as u32);
    }

    /// The cells of `key`'s view with their tiers (the union of both cells'
    /// stencils, each at its nearer tier: the protocol's
    /// [`stencil::view_cells`], which clients read implied cells against),
    /// into `cells` or `other`.
    fn walk_into(&mut self, (cell, previous): GroupKey, area: &Area<'_>, which: Which) {
        let out = match which {
            Which::Cells => &mut self.cells,
            Which::Other => &mut self.other,
        };
        let (grid, stencil) = (area.grid.cells(), area.stencil.shared());
        stencil::view_cells(grid, stencil, (cell.0, previous.0), out, &mut self.room, |c, tier| (CellId(c), tier));
    }

    /// First thing a tick: views that hold what their key's canonical view
    /// holds (neither has exceptions, same rung) join it, and views nobody is in
    /// are freed; `remap[view]` is where a view's sockets went (`u32::MAX`:
    /// stayed), for the viewers. Returns true when any view's sockets went
    /// elsewhere (`remap` is then filled; else it is not to be read). A
    /// tick after nothing moved (a standing place) does nothing here.
    pub(crate) fn merge(&mut self, grid: &Grid, reach: u32, remap: &mut Vec<u32>) -> bool {
        if !std::mem::take(&mut self.unsettled) {
            return false;
        }
        // Whether this pass changed anything: then the next tick passes
        // again (a view freed here may leave another to be canonical).
        let (mut moved, mut changed) = (false, false);
        remap.clear();
        remap.resize(self.views.len(), u32::MAX);
        // By index: a view joins another of the same list.
        #[allow(clippy::needless_range_loop)]
        for i in 0..self.views.len() {
            let v = &mut self.views[i];
            if v.sockets == 0 {
                if v.canonical {
                    self.canonical.remove(&(v.key, v.form));
                    v.canonical = false;
                    changed = true;
                }
                if v.visited != u64::MAX {
                    changed = true;
                    self.free(i, grid, reach);
                }
                continue;
            }
            if v.canonical || !v.is_plain() {
                continue;
            }
            // Caught up: what it held out of the ordinary (a joined socket's
            // whole view) is freed, not kept as capacity by a standing
            // player's view for as long as it stands.
            v.owed = None;
            let (key, form, level) = (v.key, v.form, v.level);
            match self.canonical.get(&(key, form)) {
                // Only a canonical view that holds what its tiers say: its
                // exceptions are not what the joining sockets hold.
                Some(&c) if self.views[c as usize].level == level && self.views[c as usize].is_plain() => {
                    remap[i] = c;
                    (moved, changed) = (true, true);
                    let sockets = std::mem::take(&mut self.views[i].sockets);
                    self.give(c, sockets);
                }
                Some(_) => {}
                None => {
                    self.canonical.insert((key, form), i as u32);
                    self.views[i].canonical = true;
                    changed = true;
                }
            }
        }
        self.unsettled |= changed;
        moved
    }

    /// Assembles each live view's frames for this tick. Only the views that
    /// may have something to send are looked at: those touching a region
    /// that changed within the slowest period, and the restless ones (a
    /// standing place looks at none).
    pub(crate) fn tick<'a>(&mut self, area: &Area<'a>) {
        if area.budget != usize::MAX {
            self.weigh(area.streams);
        }
        for &i in &self.with_frames {
            self.views[i as usize].frames = (0, 0);
        }
        self.with_frames.clear();
        self.messages.clear();
        self.wake(area);
        // One list for every view of the tick, its pieces borrowing the
        // streams' bytes.
        let mut pieces: Vec<Piece<'a>> = Vec::with_capacity(self.pieces);
        self.assembled = 0;
        let woken = std::mem::take(&mut self.woken);
        // What views holding a cell at its aligned step are sent of it, once
        // for all of them.
        let room = std::mem::take(&mut self.due_room);
        let mut due = DueTable::new(area.streams, room);
        // A view's empty deltas (its pieces' room, made once a tick).
        let mut empties = Empties::default();
        let mut scratch = Scratch {
            body: std::mem::take(&mut self.body),
            single: std::mem::take(&mut self.single),
            single_span: std::mem::take(&mut self.single_span),
            ..Scratch::default()
        };
        for &(i, changed) in &woken {
            let i = i as usize;
            if self.views[i].sockets == 0 {
                continue;
            }
            if changed || !self.idle(i, area) {
                pieces.clear();
                self.assembled += 1;
                self.unsettled = true;
                self.assemble(i, area, &mut due, &mut pieces, &mut scratch, &mut empties);
                self.pieces = self.pieces.max(pieces.len());
                if self.views[i].frames.1 > self.views[i].frames.0 {
                    self.with_frames.push(i as u32);
                }
            }
            if self.views[i].restless() {
                self.restless.push(i as u32);
            }
        }
        self.woken = woken;
        self.due_room = due.into_room();
        self.body = scratch.body;
        self.single = scratch.single;
        self.single_span = scratch.single_span;
    }

    /// Fills `woken`, ascending and each once: the views touching a region
    /// changed within the slowest period (not idle, no need to ask) and the
    /// restless ones (every other view [`Views::idle`] may find not idle).
    fn wake(&mut self, area: &Area<'_>) {
        let since = area.step.saturating_sub(u64::from(interest::SLOWEST_PERIOD));
        let step = area.step;
        self.woken.clear();
        let (views, woken) = (&mut self.views, &mut self.woken);
        let mut wake = |i: u32, changed: bool| {
            if let Some(v) = views.get_mut(i as usize).filter(|v| v.woken != step) {
                v.woken = step;
                woken.push((i, changed));
            }
        };
        for (r, changed) in area.region_changed.iter().enumerate() {
            if changed.is_some_and(|c| c >= since) {
                for &i in self.by_region.get(r).map_or(&[][..], |v| &v[..]) {
                    wake(i, true);
                }
            }
        }
        for i in self.restless.drain(..) {
            wake(i, false);
        }
        for &i in self.datagram.iter().filter(|&&i| turn(u64::from(i), step)) {
            wake(i, false);
        }
        self.woken.sort_unstable_by_key(|&(i, _)| i);
        #[cfg(test)]
        self.check_wake(area);
    }

    /// Tests only: view `i` holds or owes something out of the ordinary
    /// (an exception, a forget or a reset), so it cannot share its key's.
    #[cfg(test)]
    pub(crate) fn owes(&self, i: usize) -> bool {
        !self.views[i].is_plain()
    }

    /// Tests only: the region index is exact, and every live view left
    /// unwoken is idle (what waking only some views must never change).
    #[cfg(test)]
    fn check_wake(&self, area: &Area<'_>) {
        for (i, v) in self.views.iter().enumerate() {
            if v.visited == u64::MAX {
                assert!(self.by_region.iter().all(|views| !views.contains(&(i as u32))), "freed view {i} indexed");
                continue;
            }
            let mut regions = Vec::new();
            each_distinct_region(area.grid, area.reach, v.key, |r| regions.push(r.0 as usize));
            for (r, views) in self.by_region.iter().enumerate() {
                let n = views.iter().filter(|&&x| x as usize == i).count();
                assert_eq!(n, usize::from(regions.contains(&r)), "view {i} in region {r}");
            }
            if v.sockets > 0 && v.woken != area.step {
                assert!(self.idle(i, area), "view {i} not woken but not idle");
            }
            if let Some(&(_, true)) = self.woken.iter().find(|&&(w, _)| w as usize == i) {
                assert!(v.visited == u64::MAX || !self.idle(i, area), "view {i} woken as changed but idle");
            }
        }
        let mut live: Vec<u32> = self.live_regions().map(|r| r.0).collect();
        let mut want = Vec::new();
        for v in self.views.iter().filter(|v| v.sockets > 0) {
            each_region(area.grid, area.reach, v.key, |r| want.push(r.0));
        }
        live.sort_unstable();
        want.sort_unstable();
        want.dedup();
        assert_eq!(live, want, "the regions live views touch");
    }

    /// Each cell's weights this tick, once for every view's budget: what a
    /// socket seeing it every step costs by form (a delta's smoothed size,
    /// the full form's bytes while occupied; 2 bytes a stream of header),
    /// and its streams.
    fn weigh(&mut self, streams: &Streams) {
        for w in &mut self.weights {
            *w = (0, 0, 0);
        }
        for (cell, slot) in streams.cells() {
            let Some(w) = self.weights.get_mut(cell.0 as usize) else { continue };
            for (_, stream) in &slot.streams {
                w.0 += stream.weight() as u32 + 2;
                w.1 += if stream.occupied() { stream.full().len() as u32 + 2 } else { 0 };
            }
            w.2 = u8::try_from(slot.streams.len()).unwrap_or(u8::MAX);
        }
    }

    /// True when nothing in the view's regions changed for the slowest
    /// period, and it holds nothing out of the ordinary: nothing can be due
    /// (never for full forms, which are sent whether or not anything changed).
    fn idle(&self, i: usize, area: &Area<'_>) -> bool {
        let v = &self.views[i];
        if v.form == Form::Full || !v.is_plain() || v.visited == 0 || v.refreshes(i, area.step) {
            return false;
        }
        let since = area.step.saturating_sub(u64::from(interest::SLOWEST_PERIOD));
        let mut still = true;
        each_region(area.grid, area.reach, v.key, |r| {
            still &= area.region_changed.get(r.0 as usize).copied().flatten().is_none_or(|c| c < since);
        });
        still
    }

    /// Assembles view `i`'s frames for this tick.
    fn assemble<'a>(
        &mut self,
        i: usize,
        area: &Area<'a>,
        due: &mut DueTable<'a>,
        pieces: &mut Vec<Piece<'a>>,
        scratch: &mut Scratch<'a>,
        empties: &mut Empties<'a>,
    ) {
        let key = self.views[i].key;
        self.walk_into(key, area, Which::Cells);
        empties.clear(self.cells.len());
        self.views[i].visited = area.step;
        self.budget(i, area);
        let v = &mut self.views[i];
        let periods = *v.periods();
        let refresh = v.refreshes(i, area.step);
        // Source by source, cells ascending: the pieces come in the frame's
        // order (sections by source, cells ascending) but for steps that
        // differ, which `frames` sorts.
        if v.form.deltas() {
            let lossy = v.form.lossy();
            if lossy && refresh {
                // Its turn: every cell still at its newest step whole at its
                // next due step (a change whose repeats were all lost is
                // wrong for at most 64 steps; a walking cell's next delta
                // shows its client a change it missed).
                refill(v, &self.cells, area);
            }
            // A deltas view reads the tick's table for each (source, cell)
            // it holds no exception of, asking the stream only what the table
            // does not say. The pairs it holds exceptions of are a copy taken
            // first: `decide` changes only its own pair's exception, so the
            // copy stays right for the pairs still to read.
            self.excepted.clear();
            self.excepted.extend(v.exceptions().iter().map(|&(cell, source, _)| (source, cell)));
            self.excepted.sort_unstable();
            let mut excepted = Excepted { rest: &self.excepted };
            self.slots.clear();
            self.slots.extend(self.cells.iter().enumerate().filter_map(|(j, &(cell, tier))| {
                area.streams.slot_of(cell).map(|slot| (cell, slot, periods[tier as usize], j as u32))
            }));
            // A view that names itself takes its empty deltas as bits (not a
            // lossy one: `lossy_items` weighs each of its cells' pieces, and
            // may put an unchanged item or a repeat before an empty delta;
            // its cells told by an empty delta alone are implied at writing).
            let named = area.implied_cells && !lossy;
            for source in 0..area.streams.sources_len() {
                for &(cell, slot, period, j) in &self.slots {
                    #[cfg(test)]
                    let (mark, mut bit) = (pieces.len(), None);
                    let plain = !excepted.holds((source, cell));
                    let from = pieces.len();
                    // What a lossy view held of the pair before this tick.
                    let held = match v.exceptions().binary_search_by_key(&(cell, source), |&(c, s, _)| (c, s)) {
                        _ if !lossy => None,
                        Ok(i) => match v.exceptions()[i].2 {
                            Holding::At(h) => Some(h),
                            Holding::Unheld => None,
                        },
                        Err(_) => area.streams.get(source, cell).map(|s| s.due_steps(period).0),
                    };
                    match if plain { due.get(slot, source, cell, period) } else { Due::Ask } {
                        Due::Nothing => {}
                        Due::Delta(item, step)
                            if named
                                && is_empty_over(&item, period)
                                && empties.add(source, step, j as usize, &item) =>
                        {
                            #[cfg(test)]
                            {
                                bit = Some(Piece::delta(source, step, cell, item));
                            }
                        }
                        Due::Delta(item, step) => pieces.push(Piece::delta(source, step, cell, item)),
                        Due::Ask => {
                            if let Some(stream) = area.streams.get(source, cell) {
                                decide(v, (source, cell), stream, period, 0, refresh, pieces);
                            }
                        }
                    }
                    // (Tests: a bit taken is checked as the piece it stands for.)
                    #[cfg(test)]
                    if plain {
                        let pushed = bit.map_or_else(|| pieces[mark..].to_vec(), |p| vec![p]);
                        check_due(v, source, cell, period, area, due, &pushed);
                    }
                    if lossy {
                        if let Some(stream) = area.streams.get(source, cell) {
                            let of = area.streams.source(source);
                            lossy_items(stream, (source, cell), of, period, (held, plain), pieces, from);
                        }
                    }
                }
            }
        } else {
            for source in 0..area.streams.sources_len() {
                for &(cell, tier) in &self.cells {
                    if let Some(stream) = area.streams.get(source, cell) {
                        let phase = spread_of(area.grid, cell);
                        decide(v, (source, cell), stream, periods[tier as usize], phase, refresh, pieces);
                    }
                }
            }
        }
        // A datagram view's turn also forgets each own cell of the view that
        // has no stream: an own cell empty and still for 64 steps loses its
        // stream, and a socket that lost every frame of its emptying would
        // otherwise show its players for good (relayed streams are kept).
        if refresh {
            for &(cell, _) in &self.cells {
                if area.streams.get(super::streams::OWN, cell).is_none() {
                    pieces.push(Piece::new(super::streams::OWN, area.step, cell, &FORGET));
                }
            }
        }
        // An exception on a stream that is gone (an own cell empty and still
        // for 64 steps is dropped before a slow tier came due): the cell is
        // empty, and a socket holding it at some step drops it.
        let mut resets = Vec::new();
        if let Some(owed) = v.owed.as_mut() {
            owed.exceptions.retain(|&(cell, source, holding)| {
                if area.streams.get(source, cell).is_some() {
                    return true;
                }
                if let Holding::At(_) = holding {
                    pieces.push(Piece::new(source, newest_step(area, source), cell, &FORGET));
                }
                false
            });
            let cells = &self.cells;
            owed.forgets.retain_mut(|(source, cell, times)| {
                // A repeated forget of a cell back in the view would drop
                // what it is sent now.
                if cells.binary_search_by_key(cell, |&(c, _)| c).is_ok() {
                    return false;
                }
                let step = area.streams.get(*source, *cell).map_or_else(|| newest_step(area, *source), Stream::latest);
                pieces.push(Piece::new(*source, step, *cell, &FORGET));
                *times -= 1;
                *times > 0
            });
            owed.resets.retain_mut(|r| {
                if r.told && area.streams.relayed().any(|(_, s)| s.shard == r.shard) {
                    return false;
                }
                resets.push(r.shard);
                r.told = true;
                r.left -= 1;
                r.left > 0
            });
        }
        v.settle();
        if !pieces.is_empty() || !resets.is_empty() || !empties.is_empty() {
            let start = self.messages.len() as u32;
            // A deltas view names itself so its sections may imply cells
            // (`cells` still holds its cells: walked first thing above). A
            // lossy one too: its cells told by an empty delta alone are
            // implied when that is shorter (each stands alone, as told, and
            // a datagram cut keeps the block whole), though it takes no
            // empty deltas as bits above (each of its cells' items is
            // weighed by `lossy_items`).
            let view = (area.implied_cells && v.form.deltas()).then(|| NamedView {
                view: SectionView { key: key.0 .0, previous: key.1 .0, rung: v.level },
                cells: &self.cells,
                empties,
            });
            let supplements = if v.form.lossy() { Supplements::Every } else { Supplements::Needed };
            frames(pieces, &resets, area.streams, view.as_ref(), supplements, scratch, &mut self.messages);
            let end = self.messages.len() as u32;
            if end > start {
                v.frames = (start, end);
            }
        }
    }

    /// Sets view `i`'s rung for this tick's weights; cells whose period
    /// changes keep what they hold as exceptions.
    fn budget(&mut self, i: usize, area: &Area<'_>) {
        if area.budget == usize::MAX {
            return;
        }
        let v = &mut self.views[i];
        let mut tiers = [0usize; 4];
        let mut sources = 0;
        for &(cell, tier) in &self.cells {
            let Some(&(deltas, full, n)) = self.weights.get(cell.0 as usize) else { continue };
            tiers[tier as usize] += match v.form {
                Form::Deltas | Form::DatagramDeltas => deltas,
                Form::Full | Form::Datagram => full,
            } as usize;
            sources = sources.max(usize::from(n));
        }
        tiers[Tier::Own as usize] += VIEW_ENVELOPE_BYTES + 4 + sources * 9;
        let fit = interest::fit(area.budget, &tiers);
        let level = interest::LADDER.iter().position(|p| p == fit).unwrap_or(0) as u8;
        if level == v.level {
            return;
        }
        {
            let (old, new) = (*v.periods(), interest::LADDER[usize::from(level)]);
            for &(cell, tier) in &self.cells {
                for (source, stream) in area.streams.at(cell) {
                    let t = tier as usize;
                    let phase = spread_of(area.grid, cell);
                    let (was, now) = (v.due_steps_of(stream, old[t], phase).0, v.due_steps_of(stream, new[t], phase).0);
                    // A datagram view owes the cell whole when it changed since
                    // it was last due: the new period's window may not reach back.
                    let held = match v.form {
                        Form::Datagram if stream.changed_within(was, stream.latest()) => Some(Holding::Unheld),
                        Form::Datagram => None,
                        Form::Deltas | Form::DatagramDeltas | Form::Full => Some(Holding::At(was)),
                    };
                    let Some(held) = held.filter(|_| was != now) else { continue };
                    if v.exceptions().binary_search_by_key(&(cell, *source), |&(c, s, _)| (c, s)).is_err() {
                        let exceptions = &mut v.owed_mut().exceptions;
                        let at = exceptions.partition_point(|&(c, s, _)| (c, s) < (cell, *source));
                        exceptions.insert(at, (cell, *source, held));
                    }
                }
            }
        }
        v.level = level;
    }
}

/// A view's excepted (source, cell) pairs, ascending, asked of in
/// ascending order (source-major, as a view's pieces are gathered).
struct Excepted<'s> {
    /// The pairs not passed yet.
    rest: &'s [(SourceId, CellId)],
}

impl Excepted<'_> {
    /// True when `pair` is excepted. Pairs below it are passed for good,
    /// asked of or not (an exception's cell with no stream left is never
    /// asked of, and must not hide the ones after it).
    fn holds(&mut self, pair: (SourceId, CellId)) -> bool {
        while let [first, tail @ ..] = self.rest {
            if *first >= pair {
                break;
            }
            self.rest = tail;
        }
        self.rest.first() == Some(&pair)
    }
}

/// Which scratch list a walk fills.
#[derive(Clone, Copy)]
enum Which {
    Cells,
    Other,
}

/// What view `v` is sent of one (source, cell) this tick, at `period`
/// (`phase`: the cell's [`interest::spread_phase`], for a view of whole
/// cells; `refresh`: a datagram view's refresh step).
fn decide<'a>(
    v: &mut View,
    (source, cell): (SourceId, CellId),
    stream: &'a Stream,
    period: u32,
    phase: u64,
    refresh: bool,
    pieces: &mut Vec<Piece<'a>>,
) {
    let (before, target) = v.due_steps_of(stream, period, phase);
    let due = target > before;
    let at = v.exceptions().binary_search_by_key(&(cell, source), |&(c, s, _)| (c, s));
    if at.is_err() && !due && !refresh {
        return;
    }
    let full = |pieces: &mut Vec<Piece<'a>>| {
        pieces.push(Piece::new(source, stream.latest(), cell, stream.full()));
        Holding::At(stream.latest())
    };
    if v.form == Form::Full {
        // Sent whole when due, unless it is empty and its sockets hold it
        // empty already (held since its last change). An exception (the
        // step they hold it at from before its period changed) is resolved
        // the first tick the view looks at it, due or not: the cell is sent
        // whole then if it changed since (a change the new period's due
        // steps would not bring), else they hold it as it stands. So none
        // waits on a stream that stopped (a relayed cell the other shard
        // no longer sends), and the view soon rejoins its key's.
        match at {
            Err(_) => {
                if due && (stream.occupied() || stream.changed_within(before, target)) {
                    full(pieces);
                }
            }
            Ok(i) => {
                let (send, resolved) = match v.exceptions()[i].2 {
                    Holding::At(h) => {
                        (!stream.trusts(h) || stream.changed_within(h, target) || due && stream.occupied(), true)
                    }
                    Holding::Unheld => (due && (stream.occupied() || stream.last_change().is_some()), due),
                };
                if send {
                    full(pieces);
                }
                if resolved {
                    v.owed_mut().exceptions.remove(i);
                }
            }
        }
        return;
    }
    if v.form == Form::Datagram {
        match at {
            // New to the view: sent whole at its due step (or the refresh).
            Ok(_) if !due && !refresh => {}
            Ok(i) => {
                if stream.occupied() || stream.last_change().is_some() {
                    full(pieces);
                }
                v.owed_mut().exceptions.remove(i);
            }
            Err(_) => {
                // Every change since the last due step, and the repeats of
                // the ones before it.
                let window = u64::from(period.saturating_mul(REPEATS).min(interest::SLOWEST_PERIOD));
                let changed = due && stream.changed_within(before.min(target.saturating_sub(window)), target);
                // Each cell is refreshed on its own every 64 of its steps
                // (a walker's view changes: its view's turn alone would not
                // bound the wait), besides the view's turn; an emptied cell
                // too, or a lost emptying would leave its players shown.
                let (held, now) = stream.due_steps_at(REFRESH_STEPS as u32, phase);
                if changed || refresh || now > held {
                    full(pieces);
                }
            }
        }
        return;
    }
    let holding = at.map_or(Holding::At(before), |i| v.exceptions()[i].2);
    // Held at `h`, past the rule's step: the same as held at the rule's
    // step when the cell did not change between (its sockets hold the same
    // players, and a client applies a delta to the players it holds,
    // whatever step it took them at; the next due step is past `h`), or
    // when that step is not known (what is sent next is whole).
    // Without this, a view sent a cell whole at a step the rule does not
    // reach kept it as an exception for good where the stream stopped there
    // (a cell the other shard emptied and no longer publishes): a crowd's
    // views, each with a few cells its bots walked past, never rejoined
    // their key's, and the shard assembled a frame for each socket.
    let settled = |h: u64| if h > target && stream.holds_as(h, target) { Holding::At(target) } else { Holding::At(h) };
    let now = match holding {
        // Not held: sent at its due step. An empty cell standing as it stood
        // at the rule's step is held as it is (nothing) without waiting for
        // it, as a stopped stream's never comes; an occupied one waits (a
        // stopped stream's players may be long gone: shown, they would be
        // ghosts).
        // A lossy view's client does not hold a cell it was never sent (its
        // full form may have been lost): an empty one too is sent whole, at
        // once when it stands as at the rule's step (a stopped stream).
        Holding::Unheld if !due && !stream.occupied() && stream.holds_as(stream.latest(), target) => {
            if v.form.lossy() {
                full(pieces);
            }
            Holding::At(target)
        }
        Holding::Unheld if !due => Holding::Unheld,
        Holding::Unheld if stream.occupied() || stream.last_change().is_some() || v.form.lossy() => {
            full(pieces);
            settled(stream.latest())
        }
        Holding::Unheld => Holding::At(target),
        // Held at a step no delta may start from (the stream was heard anew
        // or vacated since): whole, once due, whatever the step. Settled
        // instead (held at or past the rule's step), a vacated stream's
        // emptying was never sent where it stopped past its rule's step.
        Holding::At(h) if due && !stream.trusts(h) => full(pieces),
        Holding::At(h) if h >= target => settled(h),
        // A chain over steps in which the cell did not change is empty.
        Holding::At(h) => {
            let mark = pieces.len();
            match stream.chain(h, target, |item| pieces.push(Piece::delta(source, target, cell, DeltaRef::of(item)))) {
                Some(()) => Holding::At(target),
                None => {
                    pieces.truncate(mark);
                    full(pieces)
                }
            }
        }
    };
    match (at, now == Holding::At(target)) {
        (Ok(i), true) => {
            v.owed_mut().exceptions.remove(i);
        }
        (Ok(i), false) => v.owed_mut().exceptions[i].2 = now,
        (Err(i), false) => v.owed_mut().exceptions.insert(i, (cell, source, now)),
        (Err(_), true) => {}
    }
}

/// A lossy deltas view's ([`Form::DatagramDeltas`]) additions to the pieces
/// `pieces[from..]` just given (source, cell) of `stream` at `period`, which
/// the view held at `held` before them (`None`: unheld): a plain pair
/// (`plain`) due and still that is known to have changed a few due steps
/// before gets an empty delta ([`repeats_change`]: a client that missed the
/// change then finds out, its base is one the client does not hold); a
/// plain pair's delta (or empty delta) at period 1 after a step at which
/// the cell changed gets that change's delta first ([`Stream::repeat_of`]:
/// a client that lost it takes both, one that got it passes over it, so a
/// lost datagram costs a tick instead of a resync's round trip); and a
/// delta (or a chain of them, which starts at `held` whatever spans it
/// skips, or a step before it with a repeat) gets an unchanged item first
/// when its client must hold the cell
/// as of a tick before `b`, the section's tick less the chain's spans
/// ([`mino_protocol::held::Delivery::Lossy`]): the tick of the cell's last
/// change by `held` ([`Stream::last_change_by`]). Counted in `source`'s
/// ticks, which skip where its steps stalled, so a base after a stall gets
/// one too.
#[allow(clippy::too_many_arguments)]
fn lossy_items<'a>(
    stream: &'a Stream,
    (source, cell): (SourceId, CellId),
    of: &Source,
    period: u32,
    (held, plain): (Option<u64>, bool),
    pieces: &mut Vec<Piece<'a>>,
    from: usize,
) {
    let (before, target) = stream.due_steps(period);
    if plain
        && pieces.len() == from
        && target > before
        && stream.trusts(before)
        && !stream.changed_within(before, target)
        && repeats_change(stream, before, target, period)
    {
        pieces.push(Piece::delta(source, target, cell, empties::lone_empty(period)));
    }
    let Some(first) = pieces.get(from).filter(|p| p.delta_span().is_some()) else { return };
    let step = first.step;
    // The change that brought the view's holding, again, when it was one
    // (a plain pair at period 1 due one step on: the chain is the step from
    // `before`), so that a client that lost it needs no resync; one that got
    // it passes over it. Only at period 1: a client holds such a cell as of
    // `before` or of a tick not after `before - 1`, which the rule tells
    // apart; at a longer period it may hold a tick between (sent whole, or
    // at a faster period, then settled), whose players may or may not
    // include the change. Only one step on: a relayed cell two steps on in
    // a tick (a bundle held back) has a chain that skips still spans, and
    // the client takes a chain's bases as its spans say, each delta
    // starting where the one before ends (found by review). Not across a
    // stall (the client counts the chain in ticks).
    let repeat = stream.repeat_of(before, period).filter(|_| {
        let base = before.saturating_sub(1);
        period == 1
            && plain
            && held == Some(before)
            && target == before + 1
            && of.tick_of(step).checked_sub(of.tick_of(base)) == step.checked_sub(base)
    });
    if let Some(kept) = repeat {
        pieces.insert(from, Piece::delta(source, step, cell, DeltaRef::of(kept)));
    }
    let spans: u64 = pieces[from..].iter().filter_map(Piece::delta_span).map(u64::from).sum();
    // The chain's start: the view's holding (a repeat's: the due step before).
    let start = held.unwrap_or(before).min(step.saturating_sub(spans));
    let item: &'static [u8] = match stream.last_change_by(start) {
        Unchanged::Since(change) | Unchanged::Before(change) => {
            // The client's base, in ticks: the section's tick less the spans.
            let base = of.tick_of(step).saturating_sub(spans);
            match base.saturating_sub(of.tick_of(change)) {
                0 => return,
                ticks => &UNCHANGED_ITEMS[ticks.min(UNCHANGED_MOST) as usize],
            }
        }
        Unchanged::Ever => &UNCHANGED_EVER_ITEM,
    };
    pieces.insert(from, Piece::new(source, step, cell, item));
}

/// Whether due step `target` at `period` (the cell still since `before`,
/// the due step before it) repeats the cell's last change known by
/// `before` with an empty delta: at the 1st, 2nd, 4th and 8th due step
/// after the one that sent the change ([`DELTA_REPEAT_STEPS`]), within the
/// steps the stream knows ([`Stream::knows`]; at period 64, none). A client that lost the
/// change finds out at the first of them it gets. Four instead of the
/// eight in a row first built, the last still at the 8th: a burst must
/// still cover all eight due steps to hide a change, random loss five
/// datagrams instead of nine, for half the repeats of a cell still that
/// long (the client's rule takes any due step: the schedule is the
/// server's alone).
fn repeats_change(stream: &Stream, before: u64, target: u64, period: u32) -> bool {
    if !stream.knows(before) {
        return false; // its last change by `before` is not known
    }
    let Unchanged::Since(change) = stream.last_change_by(before) else { return false };
    let p = u64::from(period.max(1));
    // The due step that sent the change: the first aligned one at or after it.
    let sent = aligned(change + p - 1, period, 0);
    let k = target.saturating_sub(sent) / p;
    k.is_power_of_two() && k <= u64::from(DELTA_REPEAT_STEPS)
}

/// The newest step of `source` known here (a forget of a cell with no
/// stream left is stamped with it: its section's tick is then not older than
/// what its socket holds of the cell, which a lossy client would take for
/// an older frame's).
fn newest_step(area: &Area<'_>, source: SourceId) -> u64 {
    if source == super::streams::OWN {
        return area.step;
    }
    area.streams.source(source).newest_step().unwrap_or(area.step)
}

/// The longest unchanged item's ticks here: a stream knows its last 64
/// steps, and a stall's skipped ticks may add to them (past this, the
/// client is asked to hold a later tick than it may need: at worst a
/// resync).
const UNCHANGED_MOST: u64 = 127;

/// The unchanged items of 0 to [`UNCHANGED_MOST`] ticks.
static UNCHANGED_ITEMS: [[u8; 2]; UNCHANGED_MOST as usize + 1] = {
    let mut items = [[0; 2]; UNCHANGED_MOST as usize + 1];
    let mut ticks = 0;
    while ticks <= UNCHANGED_MOST as usize {
        items[ticks] = unchanged_item(ticks as u8);
        ticks += 1;
    }
    items
};

/// Marks the cells of lossy view `v` (its `cells`) unheld, sent whole at
/// their next due step (its refresh): each (source, cell) but those whose
/// stream changed at its newest step, a step it knows. One that did (a
/// walking cell, most of a walking place) is sent a delta at its next due
/// step, whose base its client checks, so a client that missed a change of
/// it finds out there and asks a resync: its full form would tell the
/// client nothing more. A stream that does not trust its newest step (a
/// relayed cell taken for empty, unheard for long: it is sent whole once
/// and then never due) is refreshed as a still one (found by review: a
/// lost frame emptying such a cell left its players shown until the cell
/// expired)
/// (`delta_cost --frames datagram-deltas --breakdown`, 200 walkers: full
/// forms 29.6 bytes a socket a tick of 385.0 when every cell was
/// refreshed, 3.1 of 365.1 since).
fn refill(v: &mut View, cells: &[(CellId, Tier)], area: &Area<'_>) {
    let owed = v.owed_mut();
    for &(cell, _) in cells {
        for (source, stream) in area.streams.at(cell) {
            let latest = stream.latest();
            if stream.trusts(latest) && stream.changed_within(latest.saturating_sub(1), latest) {
                continue;
            }
            match owed.exceptions.binary_search_by_key(&(cell, *source), |&(c, s, _)| (c, s)) {
                Ok(i) => owed.exceptions[i].2 = Holding::Unheld,
                Err(i) => owed.exceptions.insert(i, (cell, *source, Holding::Unheld)),
            }
        }
    }
}

/// Tests only: what the due table made of (`source`, `cell`) for deltas
/// view `v`, which holds no exception of it, is what asking the stream gives (`pushed`: the pieces it pushed).
#[cfg(test)]
fn check_due(
    v: &View,
    source: SourceId,
    cell: CellId,
    period: u32,
    area: &Area<'_>,
    due: &mut DueTable<'_>,
    pushed: &[Piece<'_>],
) {
    let Some(stream) = area.streams.get(source, cell) else { return };
    if due.get(area.streams.slot_of(cell).unwrap_or(u32::MAX), source, cell, period) == Due::Ask {
        return;
    }
    let mut probe = View::new(v.key, v.form, v.level);
    let mut want = Vec::new();
    decide(&mut probe, (source, cell), stream, period, 0, false, &mut want);
    assert!(probe.is_plain(), "the table's answer for {cell:?} of source {source} leaves an exception");
    assert_eq!(pushed, &want[..], "the table's answer for {cell:?} of source {source}");
}

/// The view a frame is assembled for, when its sections may imply cells:
/// its name and its cells (`view_cells` of its key and previous cell).
struct NamedView<'v, 'a> {
    view: SectionView,
    cells: &'v [(CellId, Tier)],
    /// Its empty deltas, as bits over `cells` (not among the pieces).
    empties: &'v Empties<'a>,
}

impl NamedView<'_, '_> {
    /// Its `j`th cell and that cell's period, ticks: the span of the empty
    /// delta its bit stands for.
    fn empty_span(&self, j: usize) -> (CellId, u32) {
        let (cell, tier) = self.cells[j];
        (cell, interest::LADDER[usize::from(self.view.rung)][tier as usize])
    }

    /// Its `j`th cell and the empty delta its bit stands for.
    fn empty_item(&self, j: usize) -> (CellId, &'static [u8]) {
        let (cell, span) = self.empty_span(j);
        (cell, empty_delta_item(span))
    }
}

/// Appends to `out` the websocket messages of a frame of `pieces` (sorted
/// here) after `resets`: sections by source and step, cells in order, cut
/// into several messages between cells when over the client's message
/// limit. `scratch` keeps its room from view to view of a tick. With
/// `view` (a deltas view of a place with area of interest), a section
/// whose empty deltas are shorter said as implied cells says them so
/// (protocol 7, [`Scratch::imply`]); the view's empty deltas of plain
/// pairs come as bits ([`Empties`]), each a cell of its source's section
/// at the run's step.
///
/// A delta piece is a delta with its supplements (as streams keep it):
/// each written section carries the delta's item, then the supplements its
/// client needs (the handoff rule of `mino_protocol::held`): for a cell
/// whose one item is that delta, those whose origin cell is not also
/// advanced by one delta over the same span in the section; after a delta
/// among several items, all of them.
fn frames<'a>(
    pieces: &mut Vec<Piece<'a>>,
    resets: &[ShardId],
    streams: &Streams,
    view: Option<&NamedView<'_, 'a>>,
    supplements: Supplements,
    scratch: &mut Scratch<'a>,
    out: &mut Vec<Bytes>,
) {
    scratch.supplements = supplements;
    // A piece's order within its cell (chains and forgets keep their order).
    // On the way, the frame's bytes at most (a section's header and a
    // piece's cell reference take at most 13 and 10 bytes; a delta counted
    // with all its supplements): most frames fit one message, and their
    // sections are then written whole, their cells not counted out.
    let (mut sorted, mut bound) = (true, resets.len() * 13);
    let mut last: Option<(SourceId, u64, CellId)> = None;
    for p in pieces.iter() {
        let key = (p.source, p.step, p.cell);
        bound += p.len() + 10;
        sorted &= last.is_none_or(|l| l <= key);
        if last.is_none_or(|l| (l.0, l.1) != (key.0, key.1)) {
            bound += 13;
        }
        last = Some(key);
    }
    let limit = MAX_SERVER_MESSAGE_BYTES - VIEW_ENVELOPE_BYTES;
    let mut runs = view.map_or(&[][..], |v| v.empties.runs());
    bound += runs.iter().map(|r| r.bytes + 13).sum::<usize>();
    let fits = bound <= limit;
    if let Some(v) = view.filter(|_| !fits) {
        // A frame cut between cells takes its empty deltas back as pieces
        // (the cut counts a piece's bytes).
        for (r, run) in runs.iter().enumerate() {
            let mut supplemented = v.empties.supplemented(r).iter().peekable();
            for j in empties::set_bits(v.empties.bits(r)) {
                let (cell, period) = v.empty_span(j);
                let d = match supplemented.next_if(|&&(s, _)| s as usize == j) {
                    Some(&(_, kept)) => DeltaRef::of(kept),
                    None => empties::lone_empty(period),
                };
                pieces.push(Piece::delta(run.source, run.step, cell, d));
            }
        }
        sorted = sorted && runs.is_empty();
        runs = &[];
    }
    if !sorted {
        for (i, p) in pieces.iter_mut().enumerate() {
            p.order = i as u32;
        }
        pieces.sort_unstable_by_key(|p| (p.source, p.step, p.cell, p.order));
        // (Sorted, its sections are no more than counted unsorted.)
    }
    let pieces = &*pieces;
    scratch.body.clear();
    // A new message: no view named in it yet.
    scratch.named = None;
    for &shard in resets {
        write_section_header(&mut scratch.body, shard.0, 0, 0);
    }
    let (mut at, mut e) = (0, 0);
    loop {
        // The next section: the pieces' and the empty deltas' in order.
        let key = match (pieces.get(at).map(|p| (p.source, p.step)), runs.get(e).map(|r| (r.source, r.step))) {
            (None, None) => break,
            (Some(k), None) | (None, Some(k)) => k,
            (Some(a), Some(b)) => a.min(b),
        };
        let n = pieces[at..].iter().take_while(|p| (p.source, p.step) == key).count();
        let section = &pieces[at..at + n];
        at += n;
        let run = runs.get(e).filter(|r| (r.source, r.step) == key).map(|_| e);
        e += usize::from(run.is_some());
        let source = streams.source(key.0);
        let tick = source.tick_of(key.1);
        let view = view.map(|v| (v, key.1));
        if fits {
            scratch.section(source.shard.0, tick, section, view, run);
            continue;
        }
        // The section's cells, each its pieces' range.
        scratch.groups.clear();
        let mut g = 0;
        for group in cells_of(section) {
            scratch.groups.push(g..g + group.len());
            g += group.len();
        }
        let mut start = 0;
        while start < scratch.groups.len() {
            // As many cells as the message has room for.
            let room = limit.saturating_sub(scratch.body.len() + 13);
            let (mut end, mut bytes) = (start, 0);
            while end < scratch.groups.len() {
                let more = section[scratch.groups[end].clone()].iter().map(Piece::len).sum::<usize>() + 10;
                if end > start && bytes + more > room {
                    break;
                }
                bytes += more;
                end += 1;
            }
            if bytes > room && !scratch.body.is_empty() {
                scratch.flush(out);
                continue;
            }
            let cells = scratch.groups[start].start..scratch.groups[end - 1].end;
            scratch.section(source.shard.0, tick, &section[cells], view, None);
            start = end;
        }
    }
    scratch.flush(out);
}

/// The cells of a section's `pieces` (sorted by cell): each cell's pieces.
fn cells_of<'p, 'a>(pieces: &'p [Piece<'a>]) -> impl Iterator<Item = &'p [Piece<'a>]> {
    let mut rest = pieces;
    std::iter::from_fn(move || {
        let cell = rest.first()?.cell;
        let len = rest.iter().take_while(|p| p.cell == cell).count();
        let (group, tail) = rest.split_at(len);
        rest = tail;
        Some(group)
    })
}

/// Which supplements of a delta a frame carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Supplements {
    /// Those whose origin cell the section does not advance with the
    /// delta's (the others' players are handed off by the client).
    #[default]
    Needed,
    /// All of them: a lossy client hands no walker off (a datagram may
    /// carry one cell and not the other).
    Every,
}

/// Scratch of [`frames`], made once a tick: its lists keep their room from
/// view to view (a view's frame costs one allocation, its message's).
#[derive(Default)]
struct Scratch<'a> {
    /// Which supplements the frame being written carries.
    supplements: Supplements,
    /// A message's sections while they are written.
    body: Vec<u8>,
    /// A section's cells: each its range of the pieces.
    groups: Vec<std::ops::Range<usize>>,
    /// A section's items to write, cell after cell.
    items: Vec<&'a [u8]>,
    /// A section's cells written: (cell, its range of `items`, the tag of
    /// its one item when that is a tag alone, an empty delta's, else 0).
    ranges: Vec<(u32, std::ops::Range<usize>, u8)>,
    /// The cells of a section advanced by one delta (only worked out when
    /// a delta has supplements), each with its span in `single_span`.
    single: Vec<u32>,
    /// Per cell id: the span of the cell's one delta in the section being
    /// written, ticks (0: not such a cell, or not worked out). Read for
    /// each origin of each supplemented delta (tens a view a tick: a
    /// binary search of `single` was 4 % of a walking shard's tick, `perf`
    /// on `delta_cost`); set and cleared with `single`.
    single_span: Vec<u32>,
    /// The view named last in the message being written.
    named: Option<SectionView>,
    /// Of [`Scratch::imply`]: the bits, the candidates they are over, and
    /// the indices in `ranges` of the cells not implied (the ones written).
    bits: Vec<u8>,
    count: usize,
    kept: Vec<u32>,
    /// A section's empty-delta bits still to imply (its run's, but for
    /// the deltas whose supplements the view needs).
    left: Vec<u64>,
}

impl<'a> Scratch<'a> {
    /// Ends the message being written (nothing when it is empty).
    fn flush(&mut self, out: &mut Vec<Bytes>) {
        if self.body.is_empty() {
            return;
        }
        // Each message its own block: a socket that reads slowly keeps its
        // queued frames alive, and a block shared with other frames would
        // keep theirs too.
        let mut message = Vec::with_capacity(self.body.len() + VIEW_ENVELOPE_BYTES + 10);
        ws_frame::put_header(&mut message, crate::websocket::Opcode::Binary, self.body.len() + VIEW_ENVELOPE_BYTES);
        write_view_envelope(&mut message, self.body.len());
        message.extend_from_slice(&self.body);
        out.push(Bytes::from(message));
        self.body.clear();
        self.named = None;
    }

    /// Writes the section of `shard` at `tick` of the cells of `pieces`
    /// (sorted by cell, all of one source and step) and of the view's
    /// empty deltas of `run` (an index of its [`Empties::runs`]).
    fn section(
        &mut self,
        shard: u32,
        tick: u64,
        pieces: &[Piece<'a>],
        view: Option<(&NamedView<'_, 'a>, u64)>,
        run: Option<usize>,
    ) {
        self.items.clear();
        self.ranges.clear();
        for &cell in &self.single {
            self.single_span[cell as usize] = 0;
        }
        self.single.clear();
        let mut singles_known = false;
        for group in cells_of(pieces) {
            let cell = group[0].cell.0;
            let first = self.items.len();
            // A cell whose empty delta is a bit has no piece (`assemble`
            // takes bits only of plain pairs, which nothing else sends).
            debug_assert!(
                !view.zip(run).is_some_and(|((v, _), r)| {
                    let j = v.cells.binary_search_by_key(&cell, |&(c, _)| c.0);
                    j.is_ok_and(|j| empties::is_set(v.empties.bits(r), j))
                }),
                "cell {cell} both a piece and a bit"
            );
            // Most cells: one delta without supplements.
            if let [one @ Piece { kept: Some(_), alone: true, .. }] = group {
                if one.span > 0 {
                    self.items.push(one.item);
                    self.ranges.push((cell, first..first + 1, solo(&self.items[first..])));
                    continue;
                }
            }
            // The span of the cell's one delta, when that is its one piece
            // (`None`: every supplement goes).
            let span = match (group, self.supplements) {
                ([one], Supplements::Needed) => one.delta_span(),
                _ => None,
            };
            for p in group {
                let Some(kept) = p.kept else {
                    self.items.push(p.item);
                    continue;
                };
                if p.span == 0 {
                    debug_assert!(false, "a stream's delta of cell {} does not split", p.cell.0);
                    continue;
                }
                self.items.push(p.item);
                if p.alone {
                    continue;
                }
                if !singles_known {
                    singles_known = true;
                    self.know_singles(pieces, view.zip(run).map(|((v, _), r)| (v, r)));
                }
                supplements(&mut self.items, kept, span, &self.single_span);
            }
            if self.items.len() > first {
                self.ranges.push((cell, first..self.items.len(), solo(&self.items[first..])));
            }
        }
        // The view's empty deltas of this section: bits, but for those
        // whose supplements the view needs (then cells written as above).
        let mut left = std::mem::take(&mut self.left);
        left.clear();
        if let Some(((v, _), r)) = view.zip(run) {
            left.extend_from_slice(v.empties.bits(r));
            let supplemented = v.empties.supplemented(r);
            if !supplemented.is_empty() && !singles_known {
                self.know_singles(pieces, Some((v, r)));
            }
            let mut written = false;
            for &(j, kept) in supplemented {
                let (cell, period) = v.empty_span(j as usize);
                let span = Some(period);
                if kept.all_origins(|origin| moved_with(&self.single_span, span, origin)) {
                    continue;
                }
                left[j as usize / 64] &= !(1 << (j % 64));
                let first = self.items.len();
                self.items.push(empty_delta_item(period));
                supplements(&mut self.items, kept, span, &self.single_span);
                self.ranges.push((cell.0, first..self.items.len(), solo(&self.items[first..])));
                written = true;
            }
            if written {
                self.ranges.sort_unstable_by_key(|r| r.0);
            }
        }
        let empties = left.iter().any(|&w| w != 0).then_some(&left[..]);
        if !self.ranges.is_empty() || empties.is_some() {
            self.write(shard, tick, view, empties);
        }
        self.left = left;
    }

    /// Writes the section of `shard` at `tick` of the cells gathered
    /// (`items`, `ranges`) and the view's empty deltas still to imply,
    /// `empties` (bits over its cells): with implied cells when `view`
    /// names itself and that is shorter.
    fn write(&mut self, shard: u32, tick: u64, view: Option<(&NamedView<'_, 'a>, u64)>, empties: Option<&[u64]>) {
        if let Some((view, step)) = view {
            let implying = self.imply(view, step, empties);
            if let Implying::Implied(how) = implying {
                self.write_implied(shard, tick, view.view, how);
                return;
            }
            // Not written with its empty deltas implied: they are cells like
            // the others, and when one was not a candidate the section is
            // weighed again with them (others may still be implied).
            if let Some(bits) = empties {
                for j in empties::set_bits(bits) {
                    let (cell, item) = view.empty_item(j);
                    self.items.push(item);
                    self.ranges.push((cell.0, self.items.len() - 1..self.items.len(), item[0]));
                }
                self.ranges.sort_unstable_by_key(|r| r.0);
                if implying == Implying::Unsure {
                    if let Implying::Implied(how) = self.imply(view, step, None) {
                        self.write_implied(shard, tick, view.view, how);
                        return;
                    }
                }
            }
        }
        write_section_header(&mut self.body, shard, tick, self.ranges.len());
        let mut previous = 0;
        for (cell, r, _) in &self.ranges {
            write_section_cell(&mut self.body, previous, *cell, &self.items[r.clone()]);
            previous = *cell;
        }
    }

    /// Sets `single` and `single_span`: the section's cells advanced by one
    /// delta (a cell of `pieces` whose one piece is a delta, and each of
    /// the view's empty deltas of run `r`), with its span.
    fn know_singles(&mut self, pieces: &[Piece<'a>], empties: Option<(&NamedView<'_, 'a>, usize)>) {
        let mut single = |cell: u32, span: u32| {
            let at = cell as usize;
            if self.single_span.len() <= at {
                self.single_span.resize(at + 1, 0);
            }
            self.single_span[at] = span;
            self.single.push(cell);
        };
        for group in cells_of(pieces) {
            if let [one] = group {
                if let Some(span) = one.delta_span() {
                    single(one.cell.0, span);
                }
            }
        }
        if let Some((v, r)) = empties {
            for j in empties::set_bits(v.empties.bits(r)) {
                let (cell, span) = v.empty_span(j);
                single(cell.0, span);
            }
        }
    }

    /// Works out which of the section's cells (`ranges`, and the view's
    /// empty deltas of `empties`, bits over its cells) `view` implies at
    /// `step` (protocol 7): the candidates whose one item is an empty delta
    /// over their period, into `bits`, and the others into `kept` (indices
    /// into `ranges`); and whether the section is shorter written so.
    #[inline(never)]
    fn imply(&mut self, view: &NamedView<'_, '_>, step: u64, empties: Option<&[u64]>) -> Implying {
        let due = stencil::due_exponent(step);
        let Some(rule) = stencil::CandidateRule::new(view.view.rung, due) else { return Implying::Written };
        // Each tier's empty delta over its period, the tag of its implied
        // cells (0: not a candidate at this step).
        let tags =
            [Tier::Own, Tier::Near, Tier::Mid, Tier::Far].map(|t| rule.period(t).map_or(0, |p| empty_delta_item(p)[0]));
        // The tags of the empty deltas `empties` stands for, by tier.
        let periods = &interest::LADDER[usize::from(view.view.rung)];
        let bit_tags = [0, 1, 2, 3].map(|t| empty_delta_item(periods[t])[0]);
        let (ranges, bits, kept_at) = (&self.ranges, &mut self.bits, &mut self.kept);
        // The view's cells and the section's, both by increasing cell, in
        // one pass: the candidates among the view's cells are counted on the
        // way, and a section's cell that is a candidate whose one item is the
        // empty delta over its period is implied (its bit set). Counted on
        // the way too, the bytes that differ between the two ways of writing
        // the section: the references (a kept cell's gap grows over the
        // implied ones), and an implied empty delta over 64 ticks (its tag:
        // no mode says it).
        bits.clear();
        bits.resize(view.cells.len().div_ceil(8), 0);
        kept_at.clear();
        let cells = view.cells;
        let (mut told, mut kept) = (0usize, 0usize);
        let (mut previous, mut kept_previous) = (0u32, 0u32);
        // The next of the view's cells, and the candidates before it.
        let (mut at, mut count) = (0usize, 0usize);
        // Passes the view's cell `$j` (`$c`, of tier `$tier`) before the
        // next range, or after the last: counted when a candidate, and when
        // `empties` has it, a written cell, implied (or the whole answer is
        // Unsure, returned from here, when it is not a candidate).
        let mut implied_empties = 0usize;
        let is_empty = |j: usize| empties.is_some_and(|b| empties::is_set(b, j));
        macro_rules! pass {
            ($j:expr, $c:expr, $tier:expr) => {{
                let tag = tags[$tier as usize];
                if is_empty($j) {
                    if tag == 0 || tag != bit_tags[$tier as usize] {
                        return Implying::Unsure;
                    }
                    told += varint_len(u64::from($c - previous) << 3) + usize::from(tag == 7);
                    previous = $c;
                    bits[count / 8] |= 1 << (count % 8);
                    implied_empties += 1;
                }
                count += usize::from(tag != 0);
            }};
        }
        for (r, &(cell, _, solo)) in ranges.iter().enumerate() {
            while let Some(&(c, tier)) = cells.get(at).filter(|(c, _)| c.0 < cell) {
                pass!(at, c.0, tier);
                at += 1;
            }
            told += varint_len(u64::from(cell - previous) << 3);
            previous = cell;
            if let Some(&(_, tier)) = cells.get(at).filter(|(c, _)| c.0 == cell) {
                at += 1;
                let tag = tags[tier as usize];
                if tag != 0 {
                    let i = count;
                    count += 1;
                    if solo == tag {
                        bits[i / 8] |= 1 << (i % 8);
                        told += usize::from(tag == 7);
                        continue;
                    }
                }
            }
            kept_at.push(r as u32);
            kept += varint_len(u64::from(cell - kept_previous) << 3);
            kept_previous = cell;
        }
        while let Some(&(c, tier)) = cells.get(at) {
            pass!(at, c.0, tier);
            at += 1;
        }
        bits.truncate(count.div_ceil(8));
        self.count = count;
        // A block costs a byte a candidate in eight and 3 to 8 bytes more;
        // an implied cell saves its reference, a byte or two.
        let written = ranges.len() + implied_empties;
        if kept_at.len() == written {
            return Implying::Written;
        }
        let named = self.named.is_none_or(|n| (n.key, n.previous) != (view.view.key, view.view.previous));
        let block = Implied { view: view.view, due, count, bits };
        told += varint_len((written as u64) << 2);
        let implied_way = kept + varint_len((kept_at.len() as u64) << 2) + implied_bytes(&block, named);
        if implied_way < told {
            Implying::Implied((due, named))
        } else {
            Implying::Written
        }
    }

    /// Writes the section of `ranges` with the cells [`Scratch::imply`]
    /// found implied as bits (the others, `kept`, as cells), at due exponent
    /// `due`, the view `named` or not.
    #[inline(never)]
    fn write_implied(&mut self, shard: u32, tick: u64, view: SectionView, (due, named): (u8, bool)) {
        let block = Implied { view, due, count: self.count, bits: &self.bits };
        write_section_header_implied(&mut self.body, shard, tick, self.kept.len(), &block, named);
        let mut previous = 0;
        for &i in &self.kept {
            let (cell, r, _) = &self.ranges[i as usize];
            write_section_cell(&mut self.body, previous, *cell, &self.items[r.clone()]);
            previous = *cell;
        }
        self.named = Some(view);
    }
}

/// How a section is best written ([`Scratch::imply`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Implying {
    /// With implied cells: its due exponent, and whether the view is named
    /// (unless the message named it last).
    Implied((u8, bool)),
    /// Every cell written: none to imply, or not shorter so.
    Written,
    /// Not known: an empty delta taken as a bit is not a candidate (it is
    /// a cell to write), so the section is weighed again with the bits as
    /// cells.
    Unsure,
}

/// The tag of a cell's `items` when they are one tag alone (an empty
/// delta's, which a section may imply), else 0.
fn solo(items: &[&[u8]]) -> u8 {
    match items {
        [[tag]] => *tag,
        _ => 0,
    }
}

/// True when `origin` is advanced in the section by one delta over `span`
/// (`single_span`: [`Scratch::single_span`]).
fn moved_with(single_span: &[u32], span: Option<u32>, origin: u32) -> bool {
    span.is_some_and(|s| single_span.get(origin as usize).is_some_and(|&o| o == s))
}

/// Appends to `items` the supplements of `kept` (a delta over `span`, the
/// cell's one piece, else `None`) its client needs: those whose origin the
/// section does not advance with it.
fn supplements<'a>(items: &mut Vec<&'a [u8]>, kept: &'a KeptDelta, span: Option<u32>, single_span: &[u32]) {
    // Usually the view advances every origin with this cell: the origins
    // alone are read.
    if kept.all_origins(|origin| moved_with(single_span, span, origin)) {
        return;
    }
    let Some(d) = kept.split() else { return };
    items.extend(d.supplements().filter(|&(origin, _)| !moved_with(single_span, span, origin)).map(|(_, item)| item));
}

/// The spread phase of `cell` ([`interest::spread_phase`]; 0 off the grid).
fn spread_of(grid: &Grid, cell: CellId) -> u64 {
    grid.position(cell).map_or(0, |(column, row)| interest::spread_phase(column, row))
}

/// Calls `f` once with each region the view of `(cell, previous)` touches.
fn each_distinct_region(grid: &Grid, reach: u32, key: GroupKey, mut f: impl FnMut(RegionId)) {
    let mut regions: Vec<RegionId> = Vec::new();
    each_region(grid, reach, key, |r| regions.push(r));
    regions.sort_unstable_by_key(|r| r.0);
    regions.dedup();
    regions.into_iter().for_each(&mut f);
}

/// Calls `f` with each region the view of `(cell, previous)` touches, a view
/// reaching `reach` cells each way (a region may come twice).
fn each_region(grid: &Grid, reach: u32, (cell, previous): GroupKey, mut f: impl FnMut(RegionId)) {
    for viewer in [cell, previous] {
        let Some((column, row)) = grid.position(viewer) else { continue };
        let low = |v: u32| v.saturating_sub(reach) / REGION_CELLS;
        let high = |v: u32, n: u32| (v + reach).min(n - 1) / REGION_CELLS;
        for region_row in low(row)..=high(row, grid.rows()) {
            for region_column in low(column)..=high(column, grid.columns()) {
                f(RegionId(1 + region_row * grid.region_columns() + region_column));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::server::{decode, ServerMsg};

    /// The cells of each message `frames` makes of `pieces`, each message
    /// checked to be a verified view frame within the client's limit.
    fn cut(pieces: &mut Vec<Piece<'_>>) -> Vec<Vec<u32>> {
        let streams = Streams::new(64, ShardId(1));
        let (mut scratch, mut out) = (Scratch::default(), Vec::new());
        frames(pieces, &[], &streams, None, Supplements::Needed, &mut scratch, &mut out);
        out.iter()
            .map(|framed| {
                let payload = crate::ws_frame::payload(framed);
                assert!(payload.len() <= MAX_SERVER_MESSAGE_BYTES, "a message of {} bytes", payload.len());
                let frame = match decode(payload) {
                    Ok(ServerMsg::View(frame)) => frame,
                    other => panic!("a view frame: {other:?}"),
                };
                frame.sections().flat_map(|s| s.cells().map(|c| c.cell).collect::<Vec<_>>()).collect()
            })
            .collect()
    }

    #[test]
    fn a_cells_change_is_repeated_at_the_1st_2nd_4th_and_8th_due_step_after_it() {
        for (period, change) in [(1u32, 40u64), (2, 40), (2, 41), (4, 37), (8, 40), (16, 48), (32, 64), (64, 64)] {
            let p = u64::from(period);
            // The due step that sent the change, then each one after it, the
            // stream as it stands then (it knows its last 64 steps).
            let sent = change.next_multiple_of(p);
            let repeated: Vec<u64> = (1..=12)
                .filter(|k| {
                    let target = sent + k * p;
                    let mut s = Stream::new(0, 0);
                    // A change long before: only the last one counts.
                    for step in 1..=target {
                        s.push(step, Bytes::from_static(&[0]), true, step == change || step == 3, &[]);
                    }
                    repeats_change(&s, target - p, target, period)
                })
                .collect();
            // Within the 64 steps a stream knows.
            let want: Vec<u64> = [1, 2, 4, 8].into_iter().filter(|k| k * p < 64).collect();
            assert_eq!(repeated, want, "period {period}, changed at {change}");
        }
    }

    #[test]
    fn empty_deltas_as_bits_make_the_frames_their_pieces_make() {
        use mino_protocol::view::write_delta_with;
        use rand::{rngs::StdRng, Rng, SeedableRng};
        let mut streams = Streams::new(1024, ShardId(1));
        let relayed = streams.source_of(ShardId(2));
        let (mut small, mut big, mut supplement) = (Vec::new(), Vec::new(), Vec::new());
        write_item(&mut small, ItemKind::Full, &[0; 12]);
        write_item(&mut big, ItemKind::Full, &vec![0; MAX_SERVER_MESSAGE_BYTES / 3]);
        write_item(&mut supplement, ItemKind::Supplement, &[0; 5]);
        // A delta over 2^k ticks, empty or not, with a supplement from cell
        // `origin`: kept[k * 200 + origin] and changed[k * 200 + origin].
        let with = |item: &dyn Fn(u32) -> Vec<u8>| -> Vec<KeptDelta> {
            (0..7)
                .flat_map(|k| (0..200u32).map(move |origin| (k, origin)))
                .map(|(k, origin)| {
                    let mut bytes = Vec::new();
                    write_delta_with(&mut bytes, &item(1 << k), &[(origin, &supplement[..])]);
                    KeptDelta::new(Bytes::from(bytes))
                })
                .collect()
        };
        let kept = with(&|span| empty_delta_item(span).to_vec());
        let changed = with(&|span| {
            let mut item = Vec::new();
            write_item(&mut item, ItemKind::Delta { span }, &[1, 2, 3]);
            item
        });
        let (mut bits_taken, mut refused, mut cut, mut written) = (0, 0, 0, 0);
        for seed in 0..1000 {
            let mut rng = StdRng::seed_from_u64(seed);
            let rung = rng.random_range(0..interest::LADDER.len() as u8);
            let periods = interest::LADDER[usize::from(rung)];
            let cells: Vec<(CellId, Tier)> = (0..60u32)
                .map(|j| (CellId(j * 3 + 1), [Tier::Own, Tier::Near, Tier::Mid, Tier::Far][rng.random_range(0..4)]))
                .collect();
            // Every tier due, or only the fastest (the others' empties then are not candidates).
            let step = if rng.random_bool(0.7) { 64 * rng.random_range(1..5) } else { 2 * rng.random_range(1..30) + 1 };
            let (mut all, mut rest) = (Vec::new(), Vec::new());
            let mut empties = Empties::default();
            empties.clear(cells.len());
            for source in [super::super::streams::OWN, relayed] {
                // Some sections are of bits alone.
                let bits_alone = source == relayed && seed % 3 == 0;
                for (j, &(cell, tier)) in cells.iter().enumerate() {
                    let period = periods[tier as usize];
                    let origin = cells[rng.random_range(0..cells.len())].0 .0 + rng.random_range(0..2);
                    // Some frames have three full forms of a third of the limit: cut.
                    let huge = seed % 7 == 3 && j % 20 == 10;
                    // Few empty deltas or many: the section then is written
                    // without implied cells or with them, and near the edge.
                    let share = [0.02, 0.05, 0.1, 0.3, 0.6][seed as usize % 5];
                    let roll = match rng.random_range(0.0..1.0) {
                        _ if huge => 4,
                        r if r < share / 2.0 => 0,
                        r if r < share => 2,
                        _ if bits_alone => continue,
                        r if r < share + 0.1 => 3,
                        r if r < share + 0.2 => 4,
                        _ => continue,
                    };
                    let at = origin as usize + period.trailing_zeros() as usize * 200;
                    let d = match roll {
                        0 => empties::lone_empty(period),
                        2 => DeltaRef::of(&kept[at]),
                        3 => DeltaRef::of(&changed[at]),
                        _ => {
                            let item: &[u8] = if huge { &big } else { &small };
                            let piece = Piece::new(source, step, cell, item);
                            all.push(piece.clone());
                            rest.push(piece);
                            continue;
                        }
                    };
                    // Now and then one at a later step than its source's
                    // first: a piece, as `assemble` keeps it.
                    let end = if roll != 3 && rng.random_bool(0.05) { step + 64 } else { step };
                    let piece = Piece::delta(source, end, cell, d);
                    all.push(piece.clone());
                    if roll == 0 || roll == 2 {
                        if empties.add(source, end, j, &d) {
                            bits_taken += 1;
                            continue;
                        }
                        refused += 1;
                    }
                    rest.push(piece);
                }
                // A forget of a cell the view left, in a section of its own.
                let forget = Piece::new(source, step + 128, CellId(101), &FORGET);
                all.push(forget.clone());
                rest.push(forget);
            }
            // As a view assembles them: source by source, cells ascending.
            all.sort_by_key(|p| (p.source, p.cell));
            rest.sort_by_key(|p| (p.source, p.cell));
            let want = frame_of(&mut all, &Empties::default(), (&cells, rung), &streams);
            assert_eq!(frame_of(&mut rest, &empties, (&cells, rung), &streams), want, "seed {seed}");
            cut += usize::from(want.len() > 1);
            written += want.len();
        }
        assert!(bits_taken > 1000 && refused > 10 && cut > 0 && written > 60, "{bits_taken} bits, {cut} cut");
    }

    /// The messages of the frame of `pieces` and `empties` for a view of
    /// `cells` at `rung`.
    fn frame_of<'a>(
        pieces: &mut Vec<Piece<'a>>,
        empties: &Empties<'a>,
        (cells, rung): (&[(CellId, Tier)], u8),
        streams: &Streams,
    ) -> Vec<Bytes> {
        let view = NamedView { view: SectionView { key: 91, previous: 0, rung }, cells, empties };
        let (mut scratch, mut out) = (Scratch::default(), Vec::new());
        frames(pieces, &[], streams, Some(&view), Supplements::Needed, &mut scratch, &mut out);
        out
    }

    #[test]
    fn bits_and_pieces_are_cut_alike_at_the_message_limit() {
        use mino_protocol::view::write_delta_with;
        let streams = Streams::new(1024, ShardId(1));
        let own = super::super::streams::OWN;
        // Rung 0, every cell of the own tier (period 1): the view's 60 cells.
        let cells: Vec<(CellId, Tier)> = (0..60u32).map(|j| (CellId(j * 3 + 1), Tier::Own)).collect();
        let mut supplement = Vec::new();
        write_item(&mut supplement, ItemKind::Supplement, &[0; 40]);
        // Its origin, cell 2, is not advanced with it: its supplement is sent.
        let mut bytes = Vec::new();
        write_delta_with(&mut bytes, empty_delta_item(1), &[(2, &supplement[..])]);
        let kept = KeptDelta::new(Bytes::from(bytes));
        // A frame of a full form of `filler` bytes (cell 1) and 59 empty
        // deltas, every other one supplemented; its messages made from
        // pieces, then from bits.
        let frames_at = |filler: usize| {
            let mut item = Vec::new();
            write_item(&mut item, ItemKind::Full, &vec![0; filler]);
            let (mut all, mut empties) = (vec![Piece::new(own, 64, CellId(1), &item)], Empties::default());
            let mut rest = all.clone();
            empties.clear(cells.len());
            for (j, &(cell, _)) in cells.iter().enumerate().skip(1) {
                let d = if j % 2 == 0 { DeltaRef::of(&kept) } else { empties::lone_empty(1) };
                all.push(Piece::delta(own, 64, cell, d));
                assert!(empties.add(own, 64, j, &d));
            }
            let want = frame_of(&mut all, &Empties::default(), (&cells, 0), &streams);
            (frame_of(&mut rest, &empties, (&cells, 0), &streams), want)
        };
        // The smallest filler whose frame is cut, by halves.
        let (mut whole, mut cut) = (0, MAX_SERVER_MESSAGE_BYTES);
        while cut - whole > 1 {
            let mid = (whole + cut) / 2;
            if frames_at(mid).1.len() > 1 {
                cut = mid;
            } else {
                whole = mid;
            }
        }
        for filler in cut - 24..cut + 24 {
            let (bits, pieces) = frames_at(filler);
            assert_eq!(bits, pieces, "a filler of {filler} bytes");
            assert_eq!(pieces.len(), if filler < cut { 1 } else { 2 }, "a filler of {filler} bytes");
        }
    }

    #[test]
    fn a_frame_over_the_message_limit_is_cut_between_cells_and_one_within_it_is_not() {
        // Full forms of a third of the limit each: three cells never fit one
        // message, and a cell's two items stay together (the pieces come
        // unsorted, as a view's chains and forgets may).
        let mut big = Vec::new();
        write_item(&mut big, ItemKind::Full, &vec![0; MAX_SERVER_MESSAGE_BYTES / 3]);
        let mut pieces: Vec<Piece<'_>> =
            (1..=7u32).rev().map(|c| Piece::new(super::super::streams::OWN, 5, CellId(c * 2), &big)).collect();
        pieces.insert(3, Piece::new(super::super::streams::OWN, 5, CellId(8), &FORGET));
        let messages = cut(&mut pieces);
        assert!(messages.iter().all(|cells| !cells.is_empty() && cells.len() <= 2), "{messages:?}");
        assert_eq!(messages.concat(), [2, 4, 6, 8, 10, 12, 14], "every cell once, in order");
        let mut small = Vec::new();
        write_item(&mut small, ItemKind::Full, &[0; 40]);
        let mut pieces: Vec<Piece<'_>> =
            (1..=50u32).map(|c| Piece::new(super::super::streams::OWN, 5, CellId(c), &small)).collect();
        assert_eq!(cut(&mut pieces), [(1..=50).collect::<Vec<u32>>()], "one message");
    }

    #[test]
    fn excepted_pairs_not_asked_of_do_not_hide_the_next_ones() {
        let pairs = [(0, CellId(3)), (0, CellId(5)), (1, CellId(2)), (1, CellId(9))];
        let mut excepted = Excepted { rest: &pairs };
        // Cell 3 is never asked of (its stream is gone): cell 5 still is excepted.
        assert!(!excepted.holds((0, CellId(4))));
        assert!(excepted.holds((0, CellId(5))));
        assert!(!excepted.holds((0, CellId(7))));
        // Source 1's cell 2 is passed unasked, its cell 9 is found.
        assert!(!excepted.holds((1, CellId(4))));
        assert!(excepted.holds((1, CellId(9))));
        assert!(!excepted.holds((2, CellId(1))), "past the last pair");
    }
}
