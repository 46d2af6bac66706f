//! What a client holds of the cells view frames told it: each (shard, cell)'s
//! players as of the last item applied, and the rule that applies a frame.
//! The bots and the test kit read frames with it; the browser's
//! `net/held.ts` does the same (both tested on `schema/fixtures/delta.json`).
//!
//! A cell never told is empty: a delta applies to the empty state then
//! (players entering a cell that was empty). A forget drops the cell, and so
//! does expiry when the Welcome gave one (`cell_expiry_ms`, for a session
//! whose frames may be lost): a cell sent nothing for that long is dropped as
//! if forgotten, since every cell of the view is sent something more often
//! (whole, or a delta of a walking cell).
//!
//! **Handoff (protocol 6).** A delta of a cell keeps a player that walked
//! into another cell of the same shard over its span (no leave: it is
//! moved by the rule like the others), and the cell it went to has no enter
//! of it. After a delta applies, its cell's players whose position is in
//! another cell ([`CellGrid::cell_of_q`]) are taken out of it; when the
//! cell's items in the section are that one delta and its supplements, and
//! the cell the player went to is advanced the same way over the same span
//! in the same section, the player is put there (in id order) once the
//! section's items are all applied; otherwise it is dropped, and the server
//! has sent it to every cell it belongs to in a supplement (an item of its
//! entries added after the delta). So a player that walks straight from one
//! cell of the view to another costs nothing, and what a client holds of a
//! cell stays exactly the server's players of that cell. Without a grid (a
//! place without area of interest: one cell, 0) nothing moves.
//!
//! **Lost frames.** A client whose frames may be lost or come out of order
//! (WebTransport datagrams) applies a cell's items only onto the state they
//! start from ([`Delivery::Lossy`]): a cell it missed a change of is left as
//! it is and said to be [`Update::Broken`] (the client asks for it whole),
//! and no walker is handed off (the server sends every walker that crossed
//! into a cell in a supplement).
//!
//! **Layout.** The cells are kept in one array sorted by (shard, cell),
//! each with its players in a block of its own; a frame's section (one
//! shard, cells increasing) walks the array once, and an item rewrites its
//! cell's block only. A bot holding a hundred cells reads its state front
//! to back once a section, instead of one hash probe a cell (with a thousand
//! bots on a machine no bot's state stays in cache between two ticks, and
//! those misses were half of a bot's time: `perf` on `mino-loadgen walk
//! --bots 1000 --density 4`); and a bot in a crowd, holding a thousand
//! players in one cell of each shard, no longer copies every player it
//! holds for each section (two thirds of its time went to applying frames:
//! `perf` on `mino-loadgen crowd --bots 2000`). Emptied blocks are kept for
//! new cells, so a bot allocates nothing once its cells have grown.

use crate::delta::{self, DeltaError};
use crate::entry::Entry;
use crate::grid::CellGrid;
use crate::motion::Motion;
use crate::stencil::{Stencil, Tier, ViewScratch};
use crate::view::{implied_span, Item, ItemKind, ViewCell, ViewError, ViewFrame, ViewSection};
use crate::wire::Bounds;
use std::ops::Range;

/// One cell as held, borrowed from the [`Held`] it is read from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeldCell<'a> {
    /// The low 32 bits of the tick of the section that last changed it.
    pub tick: u32,
    /// When an item last applied to it, ms on the clock of
    /// [`Held::apply_at`] (0 through [`Held::apply_into`]).
    pub heard_ms: u64,
    /// Its players, sorted by id.
    pub entries: &'a [Entry],
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
    /// A delta of the cell could not apply: a lossy client ([`Delivery::Lossy`])
    /// missed an item of it (a lost frame), or holds nothing of it. The cell
    /// stays as it was (until a full form of it) and the client asks for a
    /// resync.
    Broken {
        /// Whose players.
        shard: u32,
        /// The cell.
        cell: u32,
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

/// One held cell: its key, tick, time and players (sorted by id).
#[derive(Debug)]
struct Slot {
    key: (u32, u32),
    tick: u32,
    heard_ms: u64,
    players: Vec<Entry>,
    /// Nobody in it to hand off: every player was found in the cell by the
    /// last scan ([`Held::take_walkers`]), written inside its span since, or
    /// handed off to it (found in it by [`CellGrid::cell_of_q`], whose
    /// quantized span [`cell_span`] is exactly). A delta of a settled cell
    /// needs no scan unless it put someone outside its span.
    settled: bool,
    /// Its span on the grid ([`cell_span`], worked out once: `None`
    /// without a grid, nobody moves).
    span: Option<CellSpan>,
}

impl Slot {
    fn view(&self) -> HeldCell<'_> {
        HeldCell { tick: self.tick, heard_ms: self.heard_ms, entries: &self.players }
    }
}

/// How a client's frames reach it, which says what its deltas apply to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Delivery {
    /// Every frame, in order (a websocket, a WebTransport stream): a delta
    /// applies to what is held, and walkers are handed off between cells
    /// advanced together (the module docs).
    #[default]
    InOrder,
    /// Frames may be lost or come out of order (WebTransport datagrams). A
    /// cell's items whose first (after an unchanged item) is a delta come
    /// from the step `b = t - s` (`t` the section's tick, `s` the spans of the
    /// cell's deltas added up; an empty delta alone, its span), and the cell
    /// had not changed for the `u` ticks before `b` (the unchanged item's; 0
    /// without one): a cell held as of tick `h` applies them when
    /// `b - u <= h < t`. Held as of `t` or later, they are an older frame's
    /// and skipped; held as of before `b - u`, or not held, a change was
    /// missed: the cell is left as it is and said [`Update::Broken`]; but
    /// an unchanged item of [`crate::view::UNCHANGED_EVER`] (the cell was
    /// empty, with no stream, before `b`) applies to the empty cell, held or
    /// not (held with players, it is broken). A chain of deltas has later
    /// bases inside it (each delta starts where the one before ends): a
    /// cell held as of one of them or after it (and before `t`) takes the
    /// chain's deltas from the last such base on, passing over those before
    /// and their supplements, which it holds (a server repeats a change's
    /// delta in the chain of the cell's next due step, so that a client
    /// that lost it needs no resync). Full forms and forgets apply
    /// unless the cell is held as of a later tick than `t`.
    /// Walkers are never handed off. Ticks compare over their low 32 bits,
    /// across the wrap (serial number arithmetic, RFC 1982).
    Lossy,
}

/// What a [`Delivery::Lossy`] client does with a cell's items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Admit {
    /// Applies them, passing over the chain's first `skip` deltas (and
    /// their supplements): it holds the cell as of where they end.
    Apply { skip: usize },
    /// An older frame's (the cell is held as of its tick or later).
    Skip,
    /// A change was missed.
    Broken,
}

/// Every cell a client holds, and the rule deltas predict with.
#[derive(Debug)]
pub struct Held {
    delivery: Delivery,
    motion: Motion,
    max_players: usize,
    /// What is held, by key increasing.
    slots: Vec<Slot>,
    /// Blocks of cells dropped, kept (emptied) for cells to come.
    spare: Vec<Vec<Entry>>,
    /// A cell's players as an earlier item of the section left them (the base
    /// of its next item; a cell not changed yet is read from its slot).
    cell: Vec<Entry>,
    /// [`Slot::settled`] of [`Held::cell`].
    cell_settled: bool,
    scratch: Vec<Entry>,
    /// Scratch: a delta read and checked before it is applied in place.
    edits: delta::Edits,
    /// Scratch: a supplement's players.
    sup: Vec<Entry>,
    /// The arrival of the frame being applied, ms ([`HeldCell::heard_ms`]).
    now_ms: u64,
    /// Dropping cells sent nothing for a while (`None`: held until forgotten).
    expiry: Option<Expiry>,
    /// The place's grid: players that walked out of a cell are handed off
    /// to the cell they are in (`None`: no area of interest, nothing moves).
    grid: Option<CellGrid>,
    /// Scratch of a section: players that walked out of a cell advanced by
    /// one delta, (cell they are in, the delta's span, entry).
    movers: Vec<(u32, u32, Entry)>,
    /// Scratch of a section: the cells advanced by one delta (and its
    /// supplements) and its span, cells increasing.
    advanced: Vec<(u32, u32)>,
    /// The place's stencil: a section's implied cells are read with it
    /// (`None`: a section with implied cells is refused).
    stencil: Option<Stencil>,
    /// Scratch of a section: its implied cells and their spans.
    implied: Vec<(u32, u32)>,
    /// A section's view's cells.
    view: ViewCells,
    /// The quantized spans of the grid's columns and rows (handoffs).
    spans: Spans,
}

/// A section's view's cells ([`crate::stencil::view_cells`]), kept for as
/// long as the sections name the same view.
#[derive(Debug, Default)]
struct ViewCells {
    /// The view they are of: the (key, previous) cell of an implied block
    /// (`None`: none yet).
    of: Option<(u32, u32)>,
    /// The cells and their tiers, by increasing cell.
    cells: Vec<(u32, Tier)>,
    /// Room for working them out.
    scratch: ViewScratch,
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
    /// True when a scan is due at `now_ms` (and then it counts as done).
    fn due(&mut self, now_ms: u64) -> bool {
        if now_ms.saturating_sub(self.scanned_ms) < EXPIRY_SCAN_MS {
            return false;
        }
        self.scanned_ms = now_ms;
        true
    }
}

/// A cell's state while a section's items apply to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Current {
    /// Not held (never told, or forgotten by an earlier item).
    Absent,
    /// As held before the section: its slot.
    Before,
    /// In [`Held::cell`], at the tick and time of the item that made it.
    Changed,
}

impl Held {
    /// Nothing held yet; deltas predict with `motion` (the Welcome's world);
    /// a cell holds at most `max_players`.
    pub fn new(motion: Motion, max_players: usize) -> Held {
        Held {
            delivery: Delivery::InOrder,
            motion,
            max_players,
            slots: Vec::new(),
            spare: Vec::new(),
            cell: Vec::new(),
            cell_settled: true,
            scratch: Vec::new(),
            edits: delta::Edits::default(),
            sup: Vec::new(),
            now_ms: 0,
            expiry: None,
            grid: None,
            movers: Vec::new(),
            advanced: Vec::new(),
            stencil: None,
            implied: Vec::new(),
            view: Default::default(),
            spans: Spans::default(),
        }
    }

    /// A client of the place a Welcome describes: deltas predicted with
    /// the movement rule of `bounds` (world units), `speed` (world units a
    /// second) and `tick_hz`, players handed off between cells of
    /// `cell_size` world units (0: no area of interest, nothing moves), and
    /// implied cells read with the stencil of `view_radius` (world units); a
    /// cell holds at most `max_players`.
    pub fn for_place(
        bounds: &Bounds,
        speed: f32,
        tick_hz: u16,
        (cell_size, view_radius): (f32, f32),
        max_players: usize,
    ) -> Held {
        let held = Held::new(Motion::new(bounds, speed, tick_hz), max_players);
        match CellGrid::new(bounds, cell_size) {
            Some(grid) => held.handing_off(grid).seeing(Stencil::of_view(view_radius, cell_size)),
            None => held,
        }
    }

    /// The same, reading a section's implied cells with `stencil` (the
    /// Welcome's view radius over its cell size) on the grid of
    /// [`Held::handing_off`].
    pub fn seeing(mut self, stencil: Stencil) -> Held {
        self.stencil = Some(stencil);
        self.view.of = None;
        self
    }

    /// The same, handing players off between the cells of `grid` (the
    /// Welcome's bounds and cell size; see the module docs).
    pub fn handing_off(mut self, grid: CellGrid) -> Held {
        self.grid = Some(grid);
        (self.view.of, self.spans) = (None, Spans::default());
        for slot in &mut self.slots {
            slot.span = cell_span(self.grid.as_ref(), &mut self.spans, slot.key.1);
            slot.settled = false;
        }
        self
    }

    /// The same, for frames that come as `delivery` says (by default
    /// [`Delivery::InOrder`]).
    pub fn delivered(mut self, delivery: Delivery) -> Held {
        self.delivery = delivery;
        self
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
        self.apply_items(frame, updates, |_| {})
    }

    /// [`Held::apply_into`] for a frame that arrived at `now_ms` on the
    /// caller's clock (ms, never going back): first, when cells expire
    /// ([`Held::expiring`]), the cells applied nothing to for longer than
    /// that are dropped, each as a [`Update::Forgot`] at the tick it was
    /// held at (scanned at most every [`EXPIRY_SCAN_MS`]); then the frame.
    ///
    /// Errors: as [`Held::apply_into`].
    pub fn apply_at(&mut self, frame: &ViewFrame<'_>, now_ms: u64, updates: &mut Vec<Update>) -> Result<(), HeldError> {
        self.apply_at_each(frame, now_ms, updates, |_| {})
    }

    /// [`Held::apply_at`], calling `each` with every section of the frame
    /// just before it applies, so a client that reads the sections for
    /// itself too (the bytes of their cells) does it in the same pass over
    /// the frame; the sections after one that does not apply are not.
    ///
    /// Errors: as [`Held::apply_into`].
    pub fn apply_at_each(
        &mut self,
        frame: &ViewFrame<'_>,
        now_ms: u64,
        updates: &mut Vec<Update>,
        each: impl FnMut(&ViewSection<'_>),
    ) -> Result<(), HeldError> {
        updates.clear();
        self.now_ms = now_ms;
        if let Some(after_ms) = self.expiry.as_mut().and_then(|e| e.due(now_ms).then_some(e.after_ms)) {
            self.retain(|slot| {
                let keep = now_ms.saturating_sub(slot.heard_ms) <= after_ms;
                if !keep {
                    updates.push(Update::Forgot { shard: slot.key.0, cell: slot.key.1, tick: slot.tick });
                }
                keep
            });
        }
        self.apply_items(frame, updates, each)
    }

    /// The frame's sections in order, each handed to `each` and applied.
    fn apply_items(
        &mut self,
        frame: &ViewFrame<'_>,
        updates: &mut Vec<Update>,
        mut each: impl FnMut(&ViewSection<'_>),
    ) -> Result<(), HeldError> {
        for section in frame.sections() {
            each(&section);
            if section.is_empty() {
                self.forget_shard(section.shard);
                updates.push(Update::Reset { shard: section.shard, tick: section.tick });
                continue;
            }
            self.apply_section(&section, updates)?;
        }
        Ok(())
    }

    /// One section's items, applied to what is held in one pass over the
    /// held cells. At an item that does not apply, the items before it stay
    /// applied and the rest of what is held stays as it was.
    fn apply_section(&mut self, section: &ViewSection<'_>, updates: &mut Vec<Update>) -> Result<(), HeldError> {
        let shard = section.shard;
        self.movers.clear();
        self.advanced.clear();
        let mut implied = std::mem::take(&mut self.implied);
        implied.clear();
        if let Err(e) = self.read_implied(section, &mut implied) {
            self.implied = implied;
            return Err(e);
        }
        let mut at = self.warm(shard); // the slots before it have keys below the next cell's
        let mut failed = None;
        // The section's cells and its implied ones, by increasing cell (the
        // two are disjoint: `each_implied_in` said so).
        let mut explicit = section.cells().peekable();
        let mut implied_cells = implied.iter().copied().peekable();
        loop {
            let told = match (explicit.peek().map(|e| e.cell), implied_cells.peek()) {
                (Some(e), Some(&(c, _))) if c < e => None,
                (Some(_), _) => explicit.next(),
                (None, Some(_)) => None,
                (None, None) => break,
            };
            let tick = section.tick;
            let (cell, applied) = match told {
                Some(view_cell) => {
                    let key = (shard, view_cell.cell);
                    at = self.seek(at, key);
                    let applied = match self.admit_cell(at, key, &view_cell, tick) {
                        Admit::Apply { skip } => self.apply_cell(at, key, &view_cell, tick, skip, updates),
                        admit => Ok(self.pass(at, key, admit, tick, updates)),
                    };
                    (view_cell.cell, applied)
                }
                None => {
                    let Some((cell, span)) = implied_cells.next() else { break };
                    let key = (shard, cell);
                    at = self.seek(at, key);
                    let applied = match self.admit(at, key, Some((span, 0)), tick) {
                        Admit::Apply { .. } => self.advance_cell(at, key, span, tick, updates),
                        admit => Ok(self.pass(at, key, admit, tick, updates)),
                    };
                    (cell, applied)
                }
            };
            match applied {
                Ok(next) => at = next,
                Err(error) => {
                    failed = Some(HeldError::Item { shard, cell, error });
                    break;
                }
            }
        }
        self.implied = implied;
        if self.delivery == Delivery::Lossy {
            self.movers.clear(); // every walker that crossed comes in a supplement
        }
        if failed.is_none() && !self.movers.is_empty() {
            failed = self.hand_off(shard).err();
        }
        failed.map_or(Ok(()), Err)
    }

    /// Whether a told cell's items apply ([`Delivery`]): always in order;
    /// lossy, by the rule, from its items' spans and unchanged item. Items
    /// out of place are applied, so [`Held::apply_cell`] refuses them in
    /// order, as it does in order.
    fn admit_cell(&self, at: usize, key: (u32, u32), view_cell: &ViewCell<'_>, tick: u32) -> Admit {
        const IN_PLACE: Admit = Admit::Apply { skip: 0 };
        if self.delivery == Delivery::InOrder {
            return IN_PLACE;
        }
        let (mut unchanged, mut span, mut whole, mut first) = (0u32, 0u32, false, None);
        for (i, item) in view_cell.items().enumerate() {
            match item.kind {
                ItemKind::Unchanged if i == 0 => match crate::view::unchanged_ticks(item.body) {
                    Ok(ticks) => unchanged = ticks,
                    Err(_) => return IN_PLACE,
                },
                ItemKind::Unchanged => return IN_PLACE,
                ItemKind::Delta { span: s } => {
                    first.get_or_insert(s);
                    span = span.saturating_add(s);
                }
                ItemKind::Full | ItemKind::Forget => whole |= span == 0,
                ItemKind::Supplement => {}
            }
        }
        // `u32::MAX`: empty before the base, whatever is held applies.
        let from = (!whole && span > 0).then(|| {
            let tail = span - first.unwrap_or(0);
            match unchanged {
                crate::view::UNCHANGED_EVER => (u32::MAX, tail),
                ticks => (span.saturating_add(ticks).min(u32::MAX - 1), tail),
            }
        });
        match self.admit(at, key, from, tick) {
            // Held as of a base inside the chain: the deltas before it are
            // held (items that start whole have no base: none passed over).
            Admit::Apply { .. } if from.is_some() => {
                Admit::Apply { skip: self.held_deltas(at, key, view_cell, (span, span - first.unwrap_or(0)), tick) }
            }
            admit => admit,
        }
    }

    /// How many of a chain's deltas (over `span` ticks in all, to section
    /// tick `tick`; its later deltas over `tail`) end at or before the tick
    /// the cell at slot `at` is held as of: its first deltas a lossy client
    /// passes over (0 for a cell not held, or held before the chain's
    /// second base: the items are not walked again then, the usual case).
    fn held_deltas(
        &self,
        at: usize,
        key: (u32, u32),
        view_cell: &ViewCell<'_>,
        (span, tail): (u32, u32),
        tick: u32,
    ) -> usize {
        let Some(slot) = self.slots.get(at).filter(|s| s.key == key) else { return 0 };
        let behind = u64::from(tick.wrapping_sub(slot.tick));
        if behind > u64::from(tail) {
            return 0;
        }
        // A delta ending `left` ticks before `tick` ends at or before the holding when `left >= behind`.
        let mut left = u64::from(span);
        let mut held = 0;
        for item in view_cell.items() {
            if let ItemKind::Delta { span: s } = item.kind {
                left = left.saturating_sub(u64::from(s));
                if left < behind || left == 0 {
                    break;
                }
                held += 1;
            }
        }
        held
    }

    /// The lossy rule ([`Delivery::Lossy`]) for cell `key` (at slot `at`:
    /// there, or where it goes) at section tick `tick`, whose items start
    /// from a chain of deltas that needs it held as of at least `from.0`
    /// ticks before, or at most `from.1` (the chain's later deltas start
    /// there: held as of one of their bases, the deltas before it are held)
    /// (`None`: they start whole).
    fn admit(&self, at: usize, key: (u32, u32), from: Option<(u32, u32)>, tick: u32) -> Admit {
        const IN_PLACE: Admit = Admit::Apply { skip: 0 };
        if self.delivery == Delivery::InOrder {
            return IN_PLACE;
        }
        let slot = self.slots.get(at).filter(|s| s.key == key);
        // Ticks behind `tick`, over the low 32 bits across the wrap.
        let behind = slot.map(|s| tick.wrapping_sub(s.tick) as i32);
        match (behind, from) {
            // Whole items of a later tick than held, or of the same (the
            // same state: a forget stamped with the step its cell stopped at).
            (Some(b), None) if b < 0 => Admit::Skip,
            (_, None) => IN_PLACE,
            (Some(b), Some(_)) if b <= 0 => Admit::Skip,
            // Held as of a base of the chain's later deltas.
            (Some(b), Some((_, tail))) if i64::from(b) <= i64::from(tail) => IN_PLACE,
            // Empty before the base (`UNCHANGED_EVER`): the empty cell, held
            // or not (held with players, an emptying was missed).
            (_, Some((u32::MAX, _))) if slot.is_none_or(|s| s.players.is_empty()) => IN_PLACE,
            (Some(b), Some((from, _))) if from != u32::MAX && i64::from(b) <= i64::from(from) => IN_PLACE,
            _ => Admit::Broken,
        }
    }

    /// Leaves cell `key` (at slot `at`: there, or where it goes) as it is,
    /// for `admit` (a skip or a broken cell); returns the slot after it.
    fn pass(&mut self, at: usize, key: (u32, u32), admit: Admit, tick: u32, updates: &mut Vec<Update>) -> usize {
        if admit == Admit::Broken {
            updates.push(Update::Broken { shard: key.0, cell: key.1, tick });
        }
        if self.slots.get(at).is_some_and(|s| s.key == key) {
            at + 1
        } else {
            at
        }
    }

    /// A section's implied cells, each with the span of its empty delta,
    /// into `implied` (by increasing cell; nothing for a section without).
    /// The view's cells are worked out once for as long as the sections
    /// name the same view (a bot's two shards' sections name its view, and
    /// it stays in a cell for many ticks).
    ///
    /// Errors: [`ViewError::Implied`] without the grid and the stencil, or
    /// for a block that does not fit them.
    fn read_implied(&mut self, section: &ViewSection<'_>, implied: &mut Vec<(u32, u32)>) -> Result<(), HeldError> {
        let Some(block) = &section.implied else { return Ok(()) };
        let (Some(grid), Some(stencil)) = (self.grid.as_ref(), self.stencil.as_ref()) else {
            return Err(ViewError::Implied.into());
        };
        let ViewCells { of, cells, scratch } = &mut self.view;
        let view = (block.view.key, block.view.previous);
        if *of != Some(view) {
            crate::stencil::view_cells(grid, stencil, view, cells, scratch, |c, t| (c, t));
            *of = Some(view);
        }
        section.each_implied_in(cells, |cell, period| implied.push((cell, implied_span(period))))?;
        Ok(())
    }

    /// The first slot at or after `at` whose key is not below `key` (the
    /// slots before `at` are all below it): a step or two along the slots
    /// when keys come in increasing order, as a section's cells do (a
    /// binary search past [`SEEK_STEPS`]).
    fn seek(&self, at: usize, key: (u32, u32)) -> usize {
        let (rest, key) = (&self.slots[at..], packed(key));
        let near = rest.len().min(SEEK_STEPS);
        match rest[..near].iter().position(|s| packed(s.key) >= key) {
            Some(i) => at + i,
            None => at + near + rest[near..].partition_point(|s| packed(s.key) < key),
        }
    }

    /// Applies a told cell's items to cell `key` (at slot `at`: there, or
    /// where it goes), in order, but for the first `skip` deltas and their
    /// supplements (a lossy client holds where they end); returns the slot
    /// after it. An empty delta alone (said by its reference) is
    /// [`Held::advance_cell`]'s.
    ///
    /// Errors: the first item's that does not apply (the cell then stays
    /// as the items before it left it).
    fn apply_cell(
        &mut self,
        at: usize,
        key: (u32, u32),
        view_cell: &ViewCell<'_>,
        tick: u32,
        mut skip: usize,
        updates: &mut Vec<Update>,
    ) -> Result<usize, DeltaError> {
        let mut items = view_cell.items().peekable();
        let first = items.next();
        if let Some(Item { kind: ItemKind::Delta { span }, body: [], .. }) = first {
            if items.peek().is_none() {
                return self.advance_cell(at, key, span, tick, updates);
            }
        }
        let held = self.slots.get(at).is_some_and(|s| s.key == key);
        let mut current = if held { Current::Before } else { Current::Absent };
        // Some(span) while the items are one delta (over span) followed by
        // nothing but supplements: its walkers are handed off.
        let mut single = None;
        let movers_before = self.movers.len();
        let mut after_delta = false;
        // An unchanged item: the first, its ticks readable, a delta next.
        let (mut unchanged, mut led) = (false, false);
        // Passing over a held delta's supplements.
        let mut passing = false;
        for (n, item) in first.into_iter().chain(items).enumerate() {
            let out_of_place = match item.kind {
                ItemKind::Unchanged => n > 0 || crate::view::unchanged_ticks(item.body).is_err(),
                ItemKind::Delta { .. } => false,
                _ => unchanged,
            };
            if out_of_place {
                self.close(at, held, current, key, tick);
                return Err(DeltaError::Unchanged);
            }
            unchanged = item.kind == ItemKind::Unchanged;
            if unchanged {
                led = true;
                continue;
            }
            match item.kind {
                ItemKind::Delta { .. } if skip > 0 => {
                    (skip, passing) = (skip - 1, true);
                    continue;
                }
                ItemKind::Supplement if passing => continue,
                _ => passing = false,
            }
            // The item's place among the cell's items, the unchanged one not counted.
            let i = n - usize::from(led);
            single = match (i, item.kind) {
                (0, ItemKind::Delta { span }) => Some(span),
                (_, ItemKind::Supplement) => single,
                _ => None,
            };
            let applied = match item.kind {
                ItemKind::Forget => {
                    current = Current::Absent;
                    after_delta = false;
                    updates.push(Update::Forgot { shard: key.0, cell: key.1, tick });
                    continue;
                }
                // A full form's or a supplement's players are not checked
                // against the cell's span: a scan at the cell's next delta.
                ItemKind::Full => delta::decode_full(item.body, self.max_players, &mut self.scratch).map(|()| {
                    std::mem::swap(&mut self.cell, &mut self.scratch);
                    self.cell_settled = false;
                }),
                ItemKind::Delta { span } => self.apply_delta(at, key.1, current, item.body, span),
                ItemKind::Supplement if after_delta => delta::decode_full(item.body, self.max_players, &mut self.sup)
                    .and_then(|()| delta::merge_in(&mut self.cell, &self.sup, self.max_players))
                    .map(|()| self.cell_settled = false),
                ItemKind::Supplement => Err(DeltaError::Supplement),
                ItemKind::Unchanged => Ok(()), // passed over above
            };
            if let Err(error) = applied {
                self.close(at, held, current, key, tick);
                return Err(error);
            }
            after_delta = matches!(item.kind, ItemKind::Delta { .. } | ItemKind::Supplement);
            current = Current::Changed;
            updates.push(Update::Cell { shard: key.0, cell: key.1, tick });
        }
        if unchanged {
            self.close(at, held, current, key, tick);
            return Err(DeltaError::Unchanged);
        }
        // Walkers out of a cell whose items turned out not to be one delta
        // and its supplements are dropped, not handed off.
        match single {
            Some(span) => self.advanced.push((key.1, span)),
            None => self.movers.truncate(movers_before),
        }
        Ok(self.close(at, held, current, key, tick))
    }

    /// Applies a delta over `span` ticks to the cell being built at slot
    /// `at` (`current`: as held before the section, the slot's players; as
    /// an earlier item left it, [`Held::cell`]; not held, nobody), into
    /// [`Held::cell`] (of cell `here`), in place: a held cell's players are
    /// swapped in as the base (`close` swaps them back), not copied. Then
    /// takes its walkers ([`Held::take_walkers`]).
    ///
    /// Errors: the delta's; the cell is then as `current` says it was.
    fn apply_delta(
        &mut self,
        at: usize,
        here: u32,
        current: Current,
        body: &[u8],
        span: u32,
    ) -> Result<(), DeltaError> {
        match current {
            Current::Absent => {
                self.cell.clear();
                self.cell_settled = true;
            }
            Current::Before => {
                let slot = &mut self.slots[at];
                std::mem::swap(&mut slot.players, &mut self.cell);
                self.cell_settled = slot.settled;
            }
            Current::Changed => {}
        }
        let span_of = match current {
            Current::Before => self.slots[at].span,
            Current::Absent | Current::Changed => cell_span(self.grid.as_ref(), &mut self.spans, here),
        };
        let (motion, max) = (&self.motion, self.max_players);
        match delta::apply_in_place(&mut self.cell, body, span, motion, max, &mut self.edits, within(span_of)) {
            Ok(all_within) => {
                self.cell_settled &= all_within;
                self.take_walkers(here, span, span_of);
                Ok(())
            }
            Err(error) => {
                if current == Current::Before {
                    std::mem::swap(&mut self.slots[at].players, &mut self.cell);
                }
                Err(error)
            }
        }
    }

    /// Advances cell `key` (at slot `at`: there, or where it goes) by one
    /// empty delta over `span` ticks (an implied cell, or one whose
    /// reference says so): its players walk by the rule, and those who
    /// walked out of it are handed off. An empty cell (the most of a view:
    /// its players gather in a few) just takes the tick and time, the
    /// delta's work skipped. Returns the slot after it.
    ///
    /// Errors: [`DeltaError::TooMany`] past the limit a cell (the cell is
    /// then left as it was).
    fn advance_cell(
        &mut self,
        at: usize,
        key: (u32, u32),
        span: u32,
        tick: u32,
        updates: &mut Vec<Update>,
    ) -> Result<usize, DeltaError> {
        match self.slots.get_mut(at).filter(|s| s.key == key) {
            // The delta of nobody (a span is a power of two up to
            // `MAX_SPAN`, as its tag says: nothing to refuse).
            Some(slot) if slot.players.is_empty() => (slot.tick, slot.heard_ms) = (tick, self.now_ms),
            // Walked where it is held (no copy of the cell), then swapped
            // in as the cell being built: its players out of it are taken
            // (a standing one too, as after a delta, unless the cell is
            // settled and every walker stayed inside), and it is swapped
            // back by `close`.
            Some(slot) => {
                let span_of = slot.span;
                let all_within =
                    delta::advance(&mut slot.players, span, &self.motion, self.max_players, within(span_of))?;
                std::mem::swap(&mut slot.players, &mut self.cell);
                self.cell_settled = slot.settled && all_within;
                self.take_walkers(key.1, span, span_of);
                self.close(at, true, Current::Changed, key, tick);
            }
            None => {
                let players = self.spare.pop().unwrap_or_default();
                let span = cell_span(self.grid.as_ref(), &mut self.spans, key.1);
                self.slots.insert(at, Slot { key, tick, heard_ms: self.now_ms, players, settled: true, span });
            }
        }
        self.advanced.push((key.1, span));
        updates.push(Update::Cell { shard: key.0, cell: key.1, tick });
        Ok(at + 1)
    }

    /// Takes out of the cell being built ([`Held::cell`], `here` advanced
    /// by a delta over `span` ticks) its players whose position is now in
    /// another cell of the grid, noting each as a mover to hand off (kept
    /// only when the cell's items are one delta and its supplements). A
    /// player inside the cell's quantized span (`span_of`, [`cell_span`]:
    /// most) stays without working out its cell; a settled cell
    /// ([`Slot::settled`]) is not looked at. Without a grid nobody moves.
    fn take_walkers(&mut self, here: u32, span: u32, span_of: Option<CellSpan>) {
        if self.cell_settled {
            return; // nobody written outside the cell's span
        }
        self.cell_settled = true;
        let (Some(grid), Some(inside)) = (self.grid.as_ref(), span_of) else { return };
        let outside_from = |cell: &[Entry], from: usize| {
            cell[from..].iter().position(|p| !inside.contains(p)).map_or(cell.len(), |i| from + i)
        };
        let cell = &mut self.cell;
        let mut read = outside_from(cell, 0);
        let mut kept = read;
        // Each player outside the span is looked at, and the players between
        // two of them move down in one block past those taken out (a
        // crowd's cell of a thousand loses one or two at a time).
        while read < cell.len() {
            let p = cell[read];
            let there = grid.cell_of_q(p.x, p.y);
            if there == here {
                cell[kept] = p;
                kept += 1;
            } else {
                self.movers.push((there, span, p));
            }
            let next = outside_from(cell, read + 1);
            cell.copy_within(read + 1..next, kept);
            kept += next - read - 1;
            read = next;
        }
        cell.truncate(kept);
    }

    /// Reads the first and last player of every held cell of `shard`, so
    /// the memory lines that hold them are fetched together before the
    /// section walks its cells (independent loads overlap; the walk's own
    /// come one cell at a time, each after the last one's work). A bot among
    /// a thousand on a machine finds none of its cells in cache at a tick:
    /// with this, the loadgen took 45.0 % of its cores instead of 50.8 % on
    /// 1,000 walkers over two shards (`perf`, one run each). Returns the
    /// first slot of `shard` (or where it would be).
    fn warm(&self, shard: u32) -> usize {
        let from = self.slots.partition_point(|s| s.key.0 < shard);
        let mut touched = 0u32;
        for slot in self.slots[from..].iter().take_while(|s| s.key.0 == shard) {
            if let (Some(first), Some(last)) = (slot.players.first(), slot.players.last()) {
                touched ^= first.id.0 ^ last.id.0;
            }
        }
        std::hint::black_box(touched);
        from
    }

    /// Puts the section's movers into the cells they went to, when those
    /// were advanced by one delta over the same span (the others are
    /// dropped).
    ///
    /// Errors: [`DeltaError::Duplicate`] for a player already there,
    /// [`DeltaError::TooMany`] past the limit a cell.
    fn hand_off(&mut self, shard: u32) -> Result<(), HeldError> {
        let advanced = &self.advanced;
        self.movers.retain(|&(cell, span, _)| {
            advanced.binary_search_by_key(&cell, |a| a.0).is_ok_and(|i| advanced[i].1 == span)
        });
        self.movers.sort_unstable_by_key(|&(cell, _, p)| (cell, p.id));
        let mut movers = &self.movers[..];
        let mut at = 0;
        while let Some(&(cell, _, _)) = movers.first() {
            let arriving = movers.partition_point(|m| m.0 == cell);
            let (these, rest) = movers.split_at(arriving);
            movers = rest;
            let key = (shard, cell);
            at += self.slots[at..].partition_point(|s| s.key < key);
            let Some(slot) = self.slots.get_mut(at).filter(|s| s.key == key) else { continue };
            self.sup.clear();
            self.sup.extend(these.iter().map(|m| m.2));
            // One player handed off twice (held in two cells: only a frame
            // that says so on purpose) is refused, not added twice, before
            // the cell's limit is looked at (as the browser's `held.ts`).
            let twice = self.sup.windows(2).any(|w| w[0].id == w[1].id);
            let merged = if twice {
                Err(DeltaError::Duplicate)
            } else {
                delta::merge_in(&mut slot.players, &self.sup, self.max_players)
            };
            if let Err(error) = merged {
                return Err(HeldError::Item { shard, cell, error });
            }
        }
        Ok(())
    }

    /// Leaves cell `key` (at slot `at`, `held` there before the section) as
    /// its items left it; returns the slot after it.
    fn close(&mut self, at: usize, held: bool, current: Current, key: (u32, u32), tick: u32) -> usize {
        match (current, held) {
            (Current::Absent, false) => at,
            (Current::Absent, true) => {
                let mut gone = self.slots.remove(at).players;
                gone.clear();
                self.spare.push(gone);
                at
            }
            (Current::Before, _) => at + 1,
            (Current::Changed, true) => {
                let slot = &mut self.slots[at];
                std::mem::swap(&mut slot.players, &mut self.cell);
                (slot.tick, slot.heard_ms, slot.settled) = (tick, self.now_ms, self.cell_settled);
                at + 1
            }
            (Current::Changed, false) => {
                let room = self.spare.pop().unwrap_or_default();
                let players = std::mem::replace(&mut self.cell, room);
                let span = cell_span(self.grid.as_ref(), &mut self.spans, key.1);
                let settled = self.cell_settled;
                self.slots.insert(at, Slot { key, tick, heard_ms: self.now_ms, players, settled, span });
                at + 1
            }
        }
    }

    /// Keeps the cells `keep` says yes to.
    fn retain(&mut self, mut keep: impl FnMut(&Slot) -> bool) {
        let spare = &mut self.spare;
        self.slots.retain_mut(|slot| {
            let kept = keep(slot);
            if !kept {
                let mut gone = std::mem::take(&mut slot.players);
                gone.clear();
                spare.push(gone);
            }
            kept
        });
    }

    /// What is held of `cell` of `shard`, if anything.
    pub fn cell(&self, shard: u32, cell: u32) -> Option<HeldCell<'_>> {
        let i = self.slots.binary_search_by_key(&(shard, cell), |s| s.key).ok()?;
        Some(self.slots[i].view())
    }

    /// [`Held::cell`] through `cursor` (0 at first, kept between calls;
    /// any value answers alike): the cell is found a step or two from the
    /// last when cells are asked for by increasing (shard, cell), as a
    /// frame's [`Update::Cell`]s of one section come, rather than by a
    /// binary search each.
    #[inline]
    pub fn cell_at(&self, shard: u32, cell: u32, cursor: &mut usize) -> Option<HeldCell<'_>> {
        let key = (shard, cell);
        let mut at = (*cursor).min(self.slots.len());
        if at > 0 && self.slots[at - 1].key >= key {
            at = self.slots[..at].partition_point(|s| s.key < key);
        }
        at = self.seek(at, key);
        *cursor = at;
        self.slots.get(at).filter(|s| s.key == key).map(Slot::view)
    }

    /// Every held cell, by (shard, cell) increasing: ((shard, cell), what it holds).
    pub fn cells(&self) -> impl Iterator<Item = (&(u32, u32), HeldCell<'_>)> {
        self.slots.iter().map(|slot| (&slot.key, slot.view()))
    }

    /// The (shard, cell) of every held cell whose players include `id`,
    /// by (shard, cell) increasing (one, unless a hand-off is pending).
    pub fn cells_holding(&self, id: crate::PlayerId) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.cells().filter(move |(_, c)| c.entries.binary_search_by_key(&id, |e| e.id).is_ok()).map(|(k, _)| *k)
    }

    /// Drops every cell of `shard` (its shard left the place).
    pub fn forget_shard(&mut self, shard: u32) {
        if self.slots.iter().any(|s| s.key.0 == shard) {
            self.retain(|slot| slot.key.0 != shard);
        }
    }

    /// Drops everything (a new Welcome).
    pub fn clear(&mut self) {
        self.retain(|_| false);
    }

    /// The movement rule in use.
    pub fn motion(&self) -> &Motion {
        &self.motion
    }
}

/// A cell's quantized span ([`Spans`]) as one unsigned compare an axis (a
/// position below the start wraps past the width), with no branch: a scan
/// of a crowd's cell runs as fast as its players are read.
#[derive(Clone, Copy, Debug)]
struct CellSpan {
    x0: u32,
    w: u32,
    y0: u32,
    h: u32,
}

impl CellSpan {
    /// True when `p` is inside it (and so in its cell).
    fn contains(&self, p: &Entry) -> bool {
        (u32::from(p.x).wrapping_sub(self.x0) < self.w) & (u32::from(p.y).wrapping_sub(self.y0) < self.h)
    }
}

/// Whether a player is inside `span` (anywhere when there is none: without
/// a grid nobody moves), as [`delta::apply_in_place`] asks of what it wrote.
fn within(span: Option<CellSpan>) -> impl Fn(&Entry) -> bool {
    move |p| span.is_none_or(|s| s.contains(p))
}

/// The span of cell `here` of `grid` (`None` without a grid or for cell 0:
/// nobody moves), from the spans kept.
fn cell_span(grid: Option<&CellGrid>, spans: &mut Spans, here: u32) -> Option<CellSpan> {
    let grid = grid.filter(|_| here != 0)?;
    let (xs, ys) = spans.of(grid, here);
    Some(CellSpan {
        x0: xs.start,
        w: xs.end.saturating_sub(xs.start),
        y0: ys.start,
        h: ys.end.saturating_sub(ys.start),
    })
}

/// A key as one number, ordered as the key: (shard, cell) compared at once.
fn packed((shard, cell): (u32, u32)) -> u64 {
    u64::from(shard) << 32 | u64::from(cell)
}

/// Slots [`Held::seek`] steps over before it searches the rest.
const SEEK_STEPS: usize = 8;

/// Slots of the [`Spans`] cache a dimension: a view's columns (rows) all
/// fit in them (a view is 11 cells wide at a view radius of four cells).
const SPAN_SLOTS: usize = 32;

/// The quantized spans of the grid's columns and rows lately asked for
/// ([`CellGrid::column_span_q`], [`CellGrid::row_span_q`]), so that a
/// delta's walkers are found by comparing each position with its cell's
/// span (two comparisons an axis) instead of working out each one's cell:
/// a span takes 34 evaluations of the cell rule, once for as long as its
/// slot is not taken by another column (row) SPAN_SLOTS away.
#[derive(Debug)]
struct Spans {
    /// Column `c`'s span in slot `c % SPAN_SLOTS`: (c + 1, start, end);
    /// (0, 0, 0) when empty.
    columns: [(u32, u32, u32); SPAN_SLOTS],
    /// Rows the same.
    rows: [(u32, u32, u32); SPAN_SLOTS],
}

impl Default for Spans {
    fn default() -> Spans {
        Spans { columns: [(0, 0, 0); SPAN_SLOTS], rows: [(0, 0, 0); SPAN_SLOTS] }
    }
}

impl Spans {
    /// The quantized `(x, y)` ranges of cell `cell` of `grid`, as
    /// [`CellGrid::span_q`] says (empty for a cell not on the grid).
    fn of(&mut self, grid: &CellGrid, cell: u32) -> (Range<u32>, Range<u32>) {
        let Some((column, row)) = grid.column_row(cell) else { return (0..0, 0..0) };
        let xs = Spans::cached(&mut self.columns, column, |c| grid.column_span_q(c));
        let ys = Spans::cached(&mut self.rows, row, |r| grid.row_span_q(r));
        (xs, ys)
    }

    /// The span of column (row) `i` from `slots`, worked out by `span` and
    /// kept there when it is not.
    fn cached(slots: &mut [(u32, u32, u32); SPAN_SLOTS], i: u32, span: impl Fn(u32) -> Range<u32>) -> Range<u32> {
        let slot = &mut slots[i as usize % SPAN_SLOTS];
        if slot.0 != i.wrapping_add(1) {
            let r = span(i);
            *slot = (i.wrapping_add(1), r.start, r.end);
        }
        slot.1..slot.2
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delta::{encode_delta, encode_full};
    use crate::entry::flags;
    use crate::view::tests::item;
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
        assert_eq!(held.cell(7, 4).map(|c| (c.tick, c.entries.to_vec())), Some((12, second.clone())));
        assert_eq!(held.cell(7, 9).map(|c| c.entries.to_vec()), Some(first.clone()));
        assert_eq!(held.cells_holding(PlayerId(2)).collect::<Vec<_>>(), [(7, 4), (7, 9)], "player 2 in both");
        assert_eq!(held.cells_holding(PlayerId(3)).collect::<Vec<_>>(), [(7, 4)]);
        assert_eq!(held.cells_holding(PlayerId(5)).count(), 0);
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

    /// A section of `shard` at `tick`: each cell with its items.
    fn section(shard: u32, tick: u64, cells: &[(u32, Vec<Vec<u8>>)]) -> Vec<u8> {
        let cells: Vec<(u32, Vec<&[u8]>)> =
            cells.iter().map(|(c, items)| (*c, items.iter().map(Vec::as_slice).collect())).collect();
        let mut out = Vec::new();
        write_section(&mut out, &Section { shard, tick, cells: &cells });
        out
    }

    #[test]
    fn sections_of_several_shards_merge_in_order_and_a_failing_item_keeps_the_rest_as_it_was() {
        let cell = |held: &Held, s, c| held.cell(s, c).map(|h| (h.tick, h.entries.to_vec()));
        let m = Motion::new(&Bounds::new(0.0, 0.0, 1000.0, 1000.0), 120.0, 20);
        let (a, b) = ([e(1, 100, 0, true)], [e(2, 500, 64, false), e(4, 600, 0, false)]);
        let (mut fa, mut fb) = (Vec::new(), Vec::new());
        encode_full(&a, &mut fa);
        encode_full(&b, &mut fb);
        let (full_a, full_b) = (item(ItemKind::Full, &fa), item(ItemKind::Full, &fb));
        let mut held = Held::new(m.clone(), 100);
        // Shard 9 first, then shard 7: held sorted by (shard, cell) whatever the frame's order.
        let mut frame = section(9, 5, &[(2, vec![full_b.clone()])]);
        frame.extend(section(7, 5, &[(1, vec![full_a.clone()]), (3, vec![full_b.clone()]), (5, vec![full_a.clone()])]));
        held.apply(&ViewFrame::parse(&frame).expect("valid")).expect("applies");
        let keys: Vec<(u32, u32)> = held.cells().map(|(k, _)| *k).collect();
        assert_eq!(keys, [(7, 1), (7, 3), (7, 5), (9, 2)]);
        // Cell 1 walks a tick, cell 3 gets a delta that does not fit it (it
        // turns an index past its two players), cell 5 would be emptied.
        let mut walk = Vec::new();
        encode_delta(&a, &[e(1, 100 + 393, 0, true)], 1, &m, &mut walk);
        let bad = [1 << 2, (5 << 3) | 1, 9]; // one change, at index 5, of the heading
        let mut empty = Vec::new();
        encode_full(&[], &mut empty);
        let frame = section(
            7,
            6,
            &[
                (1, vec![item(ItemKind::Delta { span: 1 }, &walk)]),
                (3, vec![item(ItemKind::Delta { span: 1 }, &bad)]),
                (5, vec![item(ItemKind::Full, &empty)]),
            ],
        );
        let mut updates = Vec::new();
        let refused = held.apply_into(&ViewFrame::parse(&frame).expect("valid"), &mut updates);
        assert!(matches!(refused, Err(HeldError::Item { shard: 7, cell: 3, .. })), "{refused:?}");
        assert_eq!(updates, [Update::Cell { shard: 7, cell: 1, tick: 6 }]);
        assert_eq!(
            cell(&held, 7, 1),
            Some((6, vec![e(1, 100 + 393, 0, true)])),
            "the item before the failing one stays applied"
        );
        assert_eq!(cell(&held, 7, 3), Some((5, b.to_vec())), "the failing cell as it was");
        assert_eq!(cell(&held, 7, 5), Some((5, a.to_vec())), "the cells after it as they were");
        assert_eq!(cell(&held, 9, 2), Some((5, b.to_vec())), "another shard's cells as they were");
        // A forget and a full form of the same cell in one frame: the last wins.
        let forget = item(ItemKind::Forget, &[]);
        let frame = section(7, 7, &[(3, vec![forget.clone(), full_a.clone()]), (5, vec![full_b, forget])]);
        held.apply(&ViewFrame::parse(&frame).expect("valid")).expect("applies");
        assert_eq!(cell(&held, 7, 3), Some((7, a.to_vec())));
        assert_eq!(cell(&held, 7, 5), None);
        held.forget_shard(7);
        assert_eq!(held.cells().map(|(k, _)| *k).collect::<Vec<_>>(), [(9, 2)]);
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

    /// A 1000-unit world of 100-unit cells, walkers at 120 units a second
    /// (393 quantized units a tick along x): cell 1 is x < 6554, cell 2 next.
    fn handoff_world() -> (Motion, Held) {
        let bounds = Bounds::new(0.0, 0.0, 1000.0, 1000.0);
        let m = Motion::new(&bounds, 120.0, 20);
        let grid = CellGrid::new(&bounds, 100.0).expect("grid");
        (m.clone(), Held::new(m, 100).handing_off(grid))
    }

    fn full(entries: &[Entry]) -> Vec<u8> {
        let mut body = Vec::new();
        encode_full(entries, &mut body);
        item(ItemKind::Full, &body)
    }

    fn delta(m: &Motion, base: &[Entry], new: &[Entry], span: u32) -> Vec<u8> {
        let mut body = Vec::new();
        encode_delta(base, new, span, m, &mut body);
        item(ItemKind::Delta { span }, &body)
    }

    fn sup(entries: &[Entry]) -> Vec<u8> {
        let mut body = Vec::new();
        encode_full(entries, &mut body);
        item(ItemKind::Supplement, &body)
    }

    fn players(held: &Held, cell: u32) -> Option<Vec<u32>> {
        held.cell(7, cell).map(|c| c.entries.iter().map(|e| e.id.0).collect())
    }

    #[test]
    fn a_walker_crossing_into_a_cell_advanced_with_its_own_is_handed_off_for_nothing() {
        let (m, mut held) = handoff_world();
        // Player 5 walks east at x 6400 (cell 1); cell 2 holds players 3 and 8.
        let (a0, b0) = (vec![e(5, 6400, 0, true)], vec![e(3, 7000, 64, false), e(8, 7100, 64, false)]);
        let frame = section(7, 1, &[(1, vec![full(&a0)]), (2, vec![full(&b0)])]);
        held.apply(&ViewFrame::parse(&frame).expect("valid")).expect("applies");
        // A tick on, it is at 6793, in cell 2: cell 1's delta keeps it (moved
        // by the rule: empty), cell 2's has no enter of it (empty too).
        let a1 = vec![e(5, 6793, 0, true)];
        let (da, db) = (delta(&m, &a0, &a1, 1), delta(&m, &b0, &b0, 1));
        assert_eq!((da.len(), db.len()), (1, 1), "both deltas are empty");
        let frame = section(7, 2, &[(1, vec![da]), (2, vec![db])]);
        held.apply(&ViewFrame::parse(&frame).expect("valid")).expect("applies");
        assert_eq!(players(&held, 1), Some(vec![]), "gone from cell 1");
        assert_eq!(players(&held, 2), Some(vec![3, 5, 8]), "in cell 2, in id order");
        let held_5 = held.cell(7, 2).and_then(|c| c.entries.iter().find(|p| p.id.0 == 5).copied());
        assert_eq!(held_5, Some(a1[0]));
    }

    #[test]
    fn a_walker_whose_new_cell_is_not_advanced_with_its_old_is_dropped_and_a_supplement_brings_it() {
        let (m, mut held) = handoff_world();
        let a0 = vec![e(5, 6400, 0, true)];
        let frame = section(7, 2, &[(1, vec![full(&a0)]), (2, vec![full(&[])])]);
        held.apply(&ViewFrame::parse(&frame).expect("valid")).expect("applies");
        let a2 = vec![e(5, 6400 + 2 * 393, 0, true)];
        // Cell 1 over 2 ticks, cell 2 over 1 (another tier): no handoff.
        let frame = section(7, 4, &[(1, vec![delta(&m, &a0, &a2, 2)]), (2, vec![delta(&m, &[], &[], 1)])]);
        held.apply(&ViewFrame::parse(&frame).expect("valid")).expect("applies");
        assert_eq!((players(&held, 1), players(&held, 2)), (Some(vec![]), Some(vec![])), "dropped");
        // The server's supplement of cell 2 (origin cell 1) brings it.
        let frame = section(7, 5, &[(2, vec![delta(&m, &[], &[], 1), sup(&[e(5, 6400 + 3 * 393, 0, true)])])]);
        held.apply(&ViewFrame::parse(&frame).expect("valid")).expect("applies");
        assert_eq!(players(&held, 2), Some(vec![5]));
        // A cell sent not in the section, or by a chain: dropped too.
        let (c0, c1) = (vec![e(6, 6400, 0, true)], vec![e(6, 6793, 0, true)]);
        let frame = section(7, 6, &[(1, vec![full(&c0)])]);
        held.apply(&ViewFrame::parse(&frame).expect("valid")).expect("applies");
        let frame = section(7, 7, &[(1, vec![delta(&m, &c0, &c1, 1)])]);
        held.apply(&ViewFrame::parse(&frame).expect("valid")).expect("applies");
        assert_eq!((players(&held, 1), players(&held, 2)), (Some(vec![]), Some(vec![5])));
    }

    #[test]
    fn supplements_follow_a_delta_and_add_no_one_twice() {
        let (m, mut held) = handoff_world();
        let b0 = vec![e(3, 7000, 64, false)];
        let frame = section(7, 1, &[(2, vec![full(&b0)])]);
        held.apply(&ViewFrame::parse(&frame).expect("valid")).expect("applies");
        let refused = |held: &mut Held, items: Vec<Vec<u8>>| {
            let frame = section(7, 2, &[(2, items)]);
            match held.apply(&ViewFrame::parse(&frame).expect("valid")) {
                Err(HeldError::Item { error, .. }) => error,
                other => panic!("{other:?}"),
            }
        };
        let one = sup(&[e(4, 7000, 0, false)]);
        assert_eq!(refused(&mut held, vec![one.clone(), full(&b0)]), DeltaError::Supplement, "before any delta");
        assert_eq!(refused(&mut held, vec![full(&b0), one.clone()]), DeltaError::Supplement, "after a full form");
        let twice = sup(&[e(3, 7000, 64, false)]);
        assert_eq!(refused(&mut held, vec![delta(&m, &b0, &b0, 1), twice]), DeltaError::Duplicate);
        assert_eq!(players(&held, 2), Some(vec![3]), "the refused frames changed nothing of the cell");
        // Several in a row, after a delta, each in id order.
        let frame = section(7, 3, &[(2, vec![delta(&m, &b0, &b0, 1), one, sup(&[e(1, 7000, 0, false)])])]);
        held.apply(&ViewFrame::parse(&frame).expect("valid")).expect("applies");
        assert_eq!(players(&held, 2), Some(vec![1, 3, 4]));
    }

    #[test]
    fn a_player_handed_off_twice_is_refused_at_the_cell_it_went_to() {
        let (m, mut held) = handoff_world();
        // Player 5 held in cells 1 and 3 (only a frame meant to can say so),
        // walking into cell 2 from both sides.
        let (east, west) = (e(5, 6400, 0, true), e(5, 13_200, 128, true));
        let frame = section(7, 1, &[(1, vec![full(&[east])]), (2, vec![full(&[])]), (3, vec![full(&[west])])]);
        held.apply(&ViewFrame::parse(&frame).expect("valid")).expect("applies");
        let step = |p: Entry| {
            let (x, y) = m.advance((p.x, p.y), p.heading, true, 1);
            Entry { x, y, ..p }
        };
        let frame = section(
            7,
            2,
            &[
                (1, vec![delta(&m, &[east], &[step(east)], 1)]),
                (2, vec![delta(&m, &[], &[], 1)]),
                (3, vec![delta(&m, &[west], &[step(west)], 1)]),
            ],
        );
        let refused = held.apply(&ViewFrame::parse(&frame).expect("valid"));
        assert_eq!(refused, Err(HeldError::Item { shard: 7, cell: 2, error: DeltaError::Duplicate }));
        assert_eq!(players(&held, 2), Some(vec![]), "cell 2 as its delta left it");
        // Twice is found before the cell's limit (one player a cell here),
        // as the browser finds it.
        let grid = CellGrid::new(&Bounds::new(0.0, 0.0, 1000.0, 1000.0), 100.0).expect("grid");
        let mut one = Held::new(m.clone(), 1).handing_off(grid);
        let first = section(7, 1, &[(1, vec![full(&[east])]), (2, vec![full(&[])]), (3, vec![full(&[west])])]);
        one.apply(&ViewFrame::parse(&first).expect("valid")).expect("applies");
        let refused = one.apply(&ViewFrame::parse(&frame).expect("valid"));
        assert_eq!(refused, Err(HeldError::Item { shard: 7, cell: 2, error: DeltaError::Duplicate }));
    }

    #[test]
    fn a_settled_cell_still_hands_off_a_walker_that_crosses_later() {
        // A full form leaves its cell to be looked at; the first delta's
        // look finds nobody outside (settled); at the next delta player 5
        // walks across into cell 2, and only the players written are looked
        // at then: it is handed off all the same, whether that delta is
        // empty (the cell advanced where it is held) or not (player 9 turns).
        let grid = CellGrid::new(&Bounds::new(0.0, 0.0, 1000.0, 1000.0), 100.0).expect("grid");
        for turn in [false, true] {
            let (m, mut held) = handoff_world();
            let step = |p: &Entry| {
                let (x, y) = m.advance((p.x, p.y), p.heading, p.moving(), 1);
                Entry { x, y, ..*p }
            };
            let a0 = vec![e(5, 6000, 0, true), e(9, 100, 64, false)];
            let b0 = vec![e(3, 7000, 64, false)];
            let a1: Vec<Entry> = a0.iter().map(step).collect();
            let mut a2: Vec<Entry> = a1.iter().map(step).collect();
            a2[1].heading += u8::from(turn);
            assert_eq!((grid.cell_of_q(a1[0].x, 0), grid.cell_of_q(a2[0].x, 0)), (1, 2), "cell 1 a tick on, 2 two");
            let last = delta(&m, &a1, &a2, 1);
            assert_eq!(last.len() > 1, turn, "a delta with something to say only when 9 turns");
            let frames = [
                section(7, 1, &[(1, vec![full(&a0)]), (2, vec![full(&b0)])]),
                section(7, 2, &[(1, vec![delta(&m, &a0, &a1, 1)]), (2, vec![delta(&m, &b0, &b0, 1)])]),
                section(7, 3, &[(1, vec![last]), (2, vec![delta(&m, &b0, &b0, 1)])]),
            ];
            for frame in &frames[..2] {
                held.apply(&ViewFrame::parse(frame).expect("valid")).expect("applies");
            }
            assert_eq!((players(&held, 1), players(&held, 2)), (Some(vec![5, 9]), Some(vec![3])));
            held.apply(&ViewFrame::parse(&frames[2]).expect("valid")).expect("applies");
            assert_eq!((players(&held, 1), players(&held, 2)), (Some(vec![9]), Some(vec![3, 5])), "turn {turn}");
            let in_2 = held.cell(7, 2).and_then(|c| c.entries.iter().find(|p| p.id.0 == 5).copied());
            assert_eq!(in_2, Some(a2[0]));
        }
    }

    #[test]
    fn without_a_grid_nobody_moves() {
        let m = Motion::new(&Bounds::new(0.0, 0.0, 1000.0, 1000.0), 120.0, 20);
        let mut held = Held::new(m.clone(), 100);
        let (a0, a1) = (vec![e(5, 6400, 0, true)], vec![e(5, 6793, 0, true)]);
        held.apply(&ViewFrame::parse(&section(7, 1, &[(1, vec![full(&a0)])])).expect("valid")).expect("applies");
        let frame = section(7, 2, &[(1, vec![delta(&m, &a0, &a1, 1)]), (2, vec![delta(&m, &[], &[], 1)])]);
        held.apply(&ViewFrame::parse(&frame).expect("valid")).expect("applies");
        assert_eq!((players(&held, 1), players(&held, 2)), (Some(vec![5]), Some(vec![])));
    }

    /// A section of shard 7 at `tick` implying those of `cells` (each a
    /// candidate of the view of cell 12, a radius of two cells, rung 0, due
    /// every tick), then telling `told` (cell, items), cells increasing.
    fn implied_section(tick: u64, cells: &[u32], told: &[(u32, Vec<Vec<u8>>)]) -> Vec<u8> {
        use crate::stencil::{candidates, view_cells, ViewScratch};
        use crate::view::{write_section_cell, write_section_header_implied, Implied, SectionView};
        let grid = CellGrid::new(&Bounds::new(0.0, 0.0, 1000.0, 1000.0), 100.0).expect("grid");
        let stencil = Stencil::of_view(200.0, 100.0);
        let (mut view, mut room, mut list) = (Vec::new(), ViewScratch::default(), Vec::new());
        view_cells(&grid, &stencil, (12, 0), &mut view, &mut room, |c, t| (c, t));
        candidates(view.iter().copied(), 0, 0, |c, _| list.push(c)).expect("rung 0");
        let mut bits = vec![0u8; list.len().div_ceil(8)];
        for cell in cells {
            let i = list.iter().position(|c| c == cell).expect("a candidate");
            bits[i / 8] |= 1 << (i % 8);
        }
        let block =
            Implied { view: SectionView { key: 12, previous: 0, rung: 0 }, due: 0, count: list.len(), bits: &bits };
        let mut frame = Vec::new();
        write_section_header_implied(&mut frame, 7, tick, told.len(), &block, true);
        let mut previous = 0;
        for (cell, items) in told {
            let items: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
            write_section_cell(&mut frame, previous, *cell, &items);
            previous = *cell;
        }
        frame
    }

    #[test]
    fn empty_cells_advanced_by_nothing_stay_held_and_take_the_tick_and_the_time() {
        let (m, held) = handoff_world();
        let mut held = held.seeing(Stencil::of_view(200.0, 100.0));
        let mut updates = Vec::new();
        let mut apply = |held: &mut Held, frame: Vec<u8>, now_ms: u64| {
            held.apply_at(&ViewFrame::parse(&frame).expect("valid"), now_ms, &mut updates).expect("applies");
            updates.clone()
        };
        // Cell 2 holds player 3 (standing); cells 3 and 40 are held empty.
        let three = e(3, 7000, 64, false);
        apply(
            &mut held,
            section(7, 1, &[(2, vec![full(&[three])]), (3, vec![full(&[])]), (40, vec![full(&[])])]),
            1_000,
        );
        // Implied: cells 2 and 3, and 11 never told. Told: cell 40's and
        // cell 60's (never told) empty deltas, each said by its reference.
        let empty = delta(&m, &[], &[], 1);
        let frame = implied_section(2, &[2, 3, 11], &[(40, vec![empty.clone()]), (60, vec![empty])]);
        let updates = apply(&mut held, frame, 2_000);
        let cell = |cell| Update::Cell { shard: 7, cell, tick: 2 };
        assert_eq!(updates, [cell(2), cell(3), cell(11), cell(40), cell(60)], "one update a cell, by cell");
        for c in [3, 11, 40, 60] {
            assert_eq!(held.cell(7, c), Some(HeldCell { tick: 2, heard_ms: 2_000, entries: &[] }), "cell {c}");
        }
        assert_eq!(held.cell(7, 2), Some(HeldCell { tick: 2, heard_ms: 2_000, entries: &[three] }));
        assert_eq!(held.cells().count(), 5);
        // A cell emptied by its delta is held empty, and advanced by nothing
        // after that.
        let frame = section(7, 3, &[(2, vec![delta(&m, &[three], &[], 1)])]);
        apply(&mut held, frame, 3_000);
        let updates = apply(&mut held, implied_section(4, &[2], &[]), 4_000);
        assert_eq!(updates, [Update::Cell { shard: 7, cell: 2, tick: 4 }]);
        assert_eq!(held.cell(7, 2), Some(HeldCell { tick: 4, heard_ms: 4_000, entries: &[] }));
    }

    #[test]
    fn a_cursor_finds_every_cell_as_a_search_does() {
        let m = Motion::new(&Bounds::new(0.0, 0.0, 1000.0, 1000.0), 120.0, 20);
        let mut held = Held::new(m, 100);
        let one = full(&[e(1, 100, 0, false)]);
        let cells: Vec<(u32, Vec<Vec<u8>>)> = (1..40).step_by(3).map(|c| (c, vec![one.clone()])).collect();
        let mut frame = section(9, 1, &cells);
        frame.extend(section(7, 1, &cells));
        held.apply(&ViewFrame::parse(&frame).expect("valid")).expect("applies");
        let increasing: Vec<(u32, u32)> = [7, 9].iter().flat_map(|&s| (0..45).map(move |c| (s, c))).collect();
        let mut shuffled = increasing.clone();
        let mut seed = 7u64;
        for i in (1..shuffled.len()).rev() {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            shuffled.swap(i, (seed >> 33) as usize % (i + 1));
        }
        let decreasing: Vec<(u32, u32)> = increasing.iter().rev().copied().collect();
        for keys in [increasing, decreasing, shuffled] {
            for start in [0, 3, 1_000] {
                let mut cursor = start;
                for &(shard, cell) in &keys {
                    assert_eq!(held.cell_at(shard, cell, &mut cursor), held.cell(shard, cell), "({shard}, {cell})");
                    assert_eq!(held.cell_at(shard, cell, &mut cursor), held.cell(shard, cell), "asked again");
                }
            }
        }
    }

    #[test]
    fn spans_kept_are_the_grids_whatever_shares_their_slot() {
        // 45 columns: columns 0, 32 (and 1, 33...) share a slot.
        let grid = CellGrid::new(&Bounds::new(-20.0, 5.0, 4480.0, 305.0), 100.0).expect("grid");
        let mut spans = Spans::default();
        let cells = grid.columns() * grid.rows();
        for cell in (1..=cells).chain((1..=cells).rev()).chain((1..=cells).step_by(7)) {
            let (xs, ys) = grid.span_q(cell).expect("on the grid");
            assert_eq!(spans.of(&grid, cell), (xs.clone(), ys.clone()), "cell {cell}");
            let c = cell_span(Some(&grid), &mut spans, cell).expect("a cell");
            assert_eq!((c.x0..c.x0 + c.w, c.y0..c.y0 + c.h), (xs, ys), "cell {cell} as one compare an axis");
        }
        assert_eq!(spans.of(&grid, 0), (0..0, 0..0));
        assert_eq!(spans.of(&grid, cells + 1), (0..0, 0..0));
    }

    #[test]
    fn implied_cells_advance_and_hand_off_as_told_ones_and_need_the_stencil() {
        use crate::stencil::{candidates, view_cells, Stencil, ViewScratch};
        use crate::view::{write_section_header_implied, Implied, SectionView};
        let (_, held) = handoff_world();
        let stencil = Stencil::of_view(200.0, 100.0);
        let mut held = held.seeing(stencil.clone());
        let (a0, b0) = (vec![e(5, 6400, 0, true)], vec![e(3, 7000, 64, false)]);
        let setup = section(7, 1, &[(1, vec![full(&a0)]), (2, vec![full(&b0)])]);
        held.apply(&ViewFrame::parse(&setup).expect("valid")).expect("applies");
        // The viewer in cell 12: cells 1 and 2 are near it, due every tick.
        let grid = CellGrid::new(&Bounds::new(0.0, 0.0, 1000.0, 1000.0), 100.0).expect("grid");
        let (mut cells, mut room) = (Vec::new(), ViewScratch::default());
        view_cells(&grid, &stencil, (12, 0), &mut cells, &mut room, |c, t| (c, t));
        let mut list = Vec::new();
        candidates(cells.iter().copied(), 0, 0, |c, p| list.push((c, p))).expect("rung 0");
        let mut bits = vec![0u8; list.len().div_ceil(8)];
        for (i, (c, _)) in list.iter().enumerate() {
            if [1, 2].contains(c) {
                bits[i / 8] |= 1 << (i % 8);
            }
        }
        let block =
            Implied { view: SectionView { key: 12, previous: 0, rung: 0 }, due: 0, count: list.len(), bits: &bits };
        let mut frame = Vec::new();
        write_section_header_implied(&mut frame, 7, 2, 0, &block, true);
        let parsed = ViewFrame::parse(&frame).expect("valid");
        // A client without the stencil refuses it, holding what it held.
        let (_, mut blind) = handoff_world();
        blind.apply(&ViewFrame::parse(&setup).expect("valid")).expect("applies");
        assert_eq!(blind.apply(&parsed), Err(HeldError::Frame(ViewError::Implied)));
        assert_eq!((players(&blind, 1), players(&blind, 2)), (Some(vec![5]), Some(vec![3])));
        // With it: player 5 walked into cell 2, both cells implied over a tick.
        let updates = held.apply(&parsed).expect("applies");
        assert_eq!(updates.len(), 2, "an update an implied cell");
        assert_eq!((players(&held, 1), players(&held, 2)), (Some(vec![]), Some(vec![3, 5])));
        let moved = held.cell(7, 2).and_then(|c| c.entries.iter().find(|p| p.id.0 == 5).copied());
        assert_eq!(moved, Some(e(5, 6793, 0, true)));
    }

    /// Applies `frame` to `held`: its updates.
    fn apply(held: &mut Held, frame: &[u8]) -> Vec<Update> {
        held.apply(&ViewFrame::parse(frame).expect("valid")).expect("applies")
    }

    fn forget() -> Vec<u8> {
        item(ItemKind::Forget, &[])
    }

    fn unchanged(ticks: u32) -> Vec<u8> {
        let mut out = Vec::new();
        crate::view::write_unchanged(&mut out, ticks);
        out
    }

    #[test]
    fn a_lossy_client_applies_a_delta_only_onto_the_state_it_starts_from() {
        let (m, held) = handoff_world();
        let mut held = held.delivered(Delivery::Lossy);
        let walk = |t: u16| vec![e(5, 100 + 393 * t, 0, true)];
        let cell = |t: u64, items: Vec<Vec<u8>>| section(7, t, &[(1, items)]);
        let updated = |tick| vec![Update::Cell { shard: 7, cell: 1, tick }];
        let at = |held: &Held| held.cell(7, 1).map(|c| (c.tick, c.entries[0].x));
        apply(&mut held, &cell(10, vec![full(&walk(0))]));
        // The next step: from 10.
        assert_eq!(apply(&mut held, &cell(11, vec![delta(&m, &walk(0), &walk(1), 1)])), updated(11));
        // Step 12's frame is lost: 13's delta starts from 12, which it does
        // not hold, an empty one too (the walker going straight).
        let broken = vec![Update::Broken { shard: 7, cell: 1, tick: 13 }];
        assert_eq!(apply(&mut held, &cell(13, vec![delta(&m, &walk(2), &walk(3), 1)])), broken);
        assert_eq!(apply(&mut held, &cell(13, vec![delta(&m, &walk(2), &walk(3), 1), sup(&[])])), broken);
        assert_eq!(at(&held), Some((11, 100 + 393)), "left as it was");
        // Over two steps (a chain of deltas adding up to 2) it holds 11: applies.
        let chain = vec![delta(&m, &walk(1), &walk(2), 1), delta(&m, &walk(2), &walk(3), 1)];
        assert_eq!(apply(&mut held, &cell(13, chain)), [updated(13), updated(13)].concat());
        assert_eq!(at(&held), Some((13, 100 + 3 * 393)));
        // Step 12's frame, late: older than what is held, passed over.
        assert_eq!(apply(&mut held, &cell(12, vec![delta(&m, &walk(1), &walk(2), 1)])), vec![]);
        let again = apply(&mut held, &cell(13, vec![full(&walk(3))]));
        assert_eq!(again, updated(13), "a whole item of the step held: the same state (a forget at it drops it)");
        assert_eq!(apply(&mut held, &cell(13, vec![delta(&m, &walk(2), &walk(3), 1)])), vec![], "a delta is not");
        assert_eq!(at(&held), Some((13, 100 + 3 * 393)));
        // A full form stands alone whatever was lost.
        assert_eq!(apply(&mut held, &cell(20, vec![full(&walk(20))])), updated(20));
        assert_eq!(at(&held), Some((20, 100 + 20 * 393)));
        // A cell held as of a step between the delta's base and its tick
        // (held past its tier's step, not changed since): applies.
        assert_eq!(apply(&mut held, &cell(22, vec![delta(&m, &walk(18), &walk(22), 4)])), updated(22));
    }

    #[test]
    fn a_lossy_client_passes_over_the_deltas_of_a_chain_it_holds_already() {
        let (m, held) = handoff_world();
        let walk = |t: u16| vec![e(5, 100 + 393 * t, 0, true)];
        let cell = |t: u64, items: Vec<Vec<u8>>| section(7, t, &[(1, items)]);
        let at = |held: &Held| held.cell(7, 1).map(|c| (c.tick, c.entries[0].x));
        // Step 13's chain repeats step 12's delta (with a supplement) before its own.
        let chain = || vec![delta(&m, &walk(1), &walk(2), 1), sup(&[]), delta(&m, &walk(2), &walk(3), 1)];
        let mut lost = held.delivered(Delivery::Lossy);
        apply(&mut lost, &cell(11, vec![full(&walk(1))]));
        // 12 lost: both apply.
        assert_eq!(apply(&mut lost, &cell(13, chain())).len(), 3);
        assert_eq!(at(&lost), Some((13, 100 + 3 * 393)));
        // 12 held: its delta is passed over, and its supplement (applied
        // again, the walker would be a step ahead).
        let mut got = handoff_world().1.delivered(Delivery::Lossy);
        apply(&mut got, &cell(11, vec![full(&walk(1))]));
        apply(&mut got, &cell(12, vec![delta(&m, &walk(1), &walk(2), 1)]));
        assert_eq!(apply(&mut got, &cell(13, chain())), vec![Update::Cell { shard: 7, cell: 1, tick: 13 }]);
        assert_eq!(at(&got), Some((13, 100 + 3 * 393)));
        // Held before the chain's base: broken; in order, the chain applies to what is held.
        let mut behind = handoff_world().1.delivered(Delivery::Lossy);
        apply(&mut behind, &cell(10, vec![full(&walk(0))]));
        assert_eq!(apply(&mut behind, &cell(13, chain())), vec![Update::Broken { shard: 7, cell: 1, tick: 13 }]);
    }

    #[test]
    fn an_unchanged_item_lets_a_lossy_client_apply_a_delta_onto_a_cell_it_took_before_the_base() {
        let (m, held) = handoff_world();
        let mut held = held.delivered(Delivery::Lossy);
        let (stood, walks) = (vec![e(5, 100, 0, false)], vec![e(5, 100, 0, true)]);
        let cell = |t: u64, items: Vec<Vec<u8>>| section(7, t, &[(1, items)]);
        apply(&mut held, &cell(10, vec![full(&stood)]));
        // Step 20's delta over 4 ticks starts from 16; the cell had not
        // changed for 6 ticks before then: since 10, which it holds.
        let starts = cell(20, vec![unchanged(6), delta(&m, &stood, &walks, 4)]);
        assert_eq!(apply(&mut held, &starts), vec![Update::Cell { shard: 7, cell: 1, tick: 20 }]);
        // Changed at 11 instead: a change it missed.
        let mut held2 = handoff_world().1.delivered(Delivery::Lossy);
        apply(&mut held2, &cell(10, vec![full(&stood)]));
        let missed = cell(20, vec![unchanged(5), delta(&m, &stood, &walks, 4)]);
        assert_eq!(apply(&mut held2, &missed), vec![Update::Broken { shard: 7, cell: 1, tick: 20 }]);
        assert_eq!(held2.cell(7, 1).map(|c| c.entries.to_vec()), Some(stood.clone()));
        // Held in order, an unchanged item checks nothing.
        let mut in_order = handoff_world().1;
        apply(&mut in_order, &cell(10, vec![full(&stood)]));
        assert_eq!(apply(&mut in_order, &missed), vec![Update::Cell { shard: 7, cell: 1, tick: 20 }]);
    }

    #[test]
    fn a_lossy_client_refuses_a_delta_of_a_cell_it_does_not_hold_and_takes_whole_ones() {
        let (m, held) = handoff_world();
        let mut held = held.delivered(Delivery::Lossy);
        let a = vec![e(5, 100, 0, false)];
        // Not held (its full form lost, or never sent): a delta, even an
        // empty one, is a change missed.
        for items in [vec![delta(&m, &[], &a, 1)], vec![delta(&m, &[], &[], 2)]] {
            let updates = apply(&mut held, &section(7, 4, &[(1, items)]));
            assert_eq!(updates, vec![Update::Broken { shard: 7, cell: 1, tick: 4 }]);
            assert_eq!(held.cell(7, 1), None);
        }
        // Unless the cell was empty before the delta's base (no stream then).
        let ever = || {
            let mut out = Vec::new();
            crate::view::write_unchanged(&mut out, crate::view::UNCHANGED_EVER);
            out
        };
        let updates = apply(&mut held, &section(7, 3, &[(1, vec![ever(), delta(&m, &[], &a, 1)])]));
        assert_eq!(updates, vec![Update::Cell { shard: 7, cell: 1, tick: 3 }]);
        assert_eq!(held.cell(7, 1).map(|c| c.entries.len()), Some(1));
        let updates = apply(&mut held, &section(7, 4, &[(1, vec![full(&a)]), (2, vec![forget()])]));
        let forgot = Update::Forgot { shard: 7, cell: 2, tick: 4 };
        assert_eq!(updates, vec![Update::Cell { shard: 7, cell: 1, tick: 4 }, forgot]);
        // Held with players, a delta said to start from an empty cell: an
        // emptying was missed.
        let updates = apply(&mut held, &section(7, 5, &[(1, vec![ever(), delta(&m, &[], &a, 1)])]));
        assert_eq!(updates, vec![Update::Broken { shard: 7, cell: 1, tick: 5 }]);
    }

    #[test]
    fn a_lossy_client_hands_no_walker_off_a_supplement_brings_each() {
        let (m, held) = handoff_world();
        let a0 = vec![e(5, 6400, 0, true)];
        let a1 = vec![e(5, 6400 + 393, 0, true)];
        let first = section(7, 2, &[(1, vec![full(&a0)]), (2, vec![full(&[])])]);
        // Both cells advanced over the same step; cell 2's supplement brings
        // the walker (as the server sends every walker to a lossy client).
        let next = section(7, 3, &[(1, vec![delta(&m, &a0, &a1, 1)]), (2, vec![delta(&m, &[], &[], 1), sup(&a1)])]);
        let mut lossy = held.delivered(Delivery::Lossy);
        apply(&mut lossy, &first);
        apply(&mut lossy, &next);
        assert_eq!((players(&lossy, 1), players(&lossy, 2)), (Some(vec![]), Some(vec![5])));
        // In order, the same frame hands the walker off onto the supplement's.
        let mut in_order = handoff_world().1;
        apply(&mut in_order, &first);
        let refused = in_order.apply(&ViewFrame::parse(&next).expect("valid"));
        assert_eq!(refused, Err(HeldError::Item { shard: 7, cell: 2, error: DeltaError::Duplicate }));
    }

    #[test]
    fn a_lossy_client_compares_ticks_across_the_wrap() {
        let (m, held) = handoff_world();
        let mut held = held.delivered(Delivery::Lossy);
        let walk = |t: u16| vec![e(5, 100 + 393 * t, 0, true)];
        let last = u64::from(u32::MAX);
        apply(&mut held, &section(7, last, &[(1, vec![full(&walk(0))])]));
        let over = section(7, last + 1, &[(1, vec![delta(&m, &walk(0), &walk(1), 1)])]);
        assert_eq!(apply(&mut held, &over), vec![Update::Cell { shard: 7, cell: 1, tick: 0 }]);
        let late = section(7, last, &[(1, vec![full(&walk(0))])]);
        assert_eq!(apply(&mut held, &late), vec![], "the step before the wrap is older");
        let skipped = section(7, last + 3, &[(1, vec![delta(&m, &walk(2), &walk(3), 1)])]);
        assert_eq!(apply(&mut held, &skipped), vec![Update::Broken { shard: 7, cell: 1, tick: 2 }]);
    }
}
