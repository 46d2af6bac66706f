//! View frames (protocol 8) and the region bundles shards relay them in: the
//! bytes of `ServerMessage.view` and `CellBundle.cell_items`, with a writer and a
//! strict reader for each.
//!
//! **Items.** What a socket is told of one cell of one shard is one or more
//! items, each self-contained (so a relaying shard copies a published item
//! into its own frames byte for byte):
//!
//! ```text
//! item  := tag [len - 15: varint, when the tag's length is 15] body
//! tag   := kind (bits 0-3) | length (bits 4-7; 15: a varint follows)
//! kind  := 0 full form | 1..=7 delta over 2^(kind-1) ticks | 8 forget
//!        | 9 supplement | 10 unchanged (body: ticks, varint)
//! ```
//!
//! A full form replaces what the socket holds of the cell; a delta applies
//! to it ([`crate::delta`]); a forget (no body) drops it: the cell left the
//! socket's view; a supplement (protocol 6, a full form's body) adds its
//! players to what the delta before it left: players that walked in from a
//! cell the socket does not advance over the same span in the same section
//! (the handoff rule of [`crate::held`]). A cell's items apply in order.
//!
//! **A view frame** is one websocket message a tick: sections, each one
//! shard's cells at one of its ticks.
//!
//! ```text
//! frame   := section+
//! section := shard (u32 le) tick (u32 le, the low bits) head (varint) [implied] cell*
//! head    := cells << 2 | form
//! form    := 0 no implied cells (with no cells: a reset, every cell of the shard dropped)
//!          | 1 implied cells, the view named   | 2 implied cells, the view of the
//!            message's last section of form 1 (protocol 7)
//! implied := due (u8: k in bits 0-2, 0..=6; rung in bits 3-7, 0..=9)
//!            [key (varint) previous (varint: 0 none, else zigzag(previous - key) + 1), form 1]
//!            count (varint) bits (ceil(count / 8) bytes, least significant bit first)
//! cell    := varint((cell_id - previous_cell_id) << 3 | mode) [items: varint, when several] item*
//! mode    := 0 one item follows | 1 several (their count follows)
//!          | 2..=7 no item follows: the cell's one item is an empty delta over 2^(mode-2) ticks
//! ```
//!
//! Cells of a section are in increasing order (the first's "previous" is 0).
//!
//! **Implied cells (protocol 7).** Most of a walking place's cells are an
//! empty delta over their tier's period (walkers going straight), one byte
//! each. A section may instead name the view it was assembled for (its key
//! cell, the previous cell of a viewer that just crossed a border, and the
//! rung of its tiers' periods, [`crate::stencil`]) and the due exponent `k`
//! of its step: the **candidates** are the view's cells whose period is at
//! most `2^k` ticks, by increasing cell id ([`crate::stencil::candidates`]),
//! and bit `i` set says candidate `i`'s one item is an empty delta over its
//! period, as if it were a cell of the section (it must not also be one).
//! `count` is the number of candidates, so the frame verifies without the
//! place's geometry; a client reads the candidates with it
//! ([`ViewSection::each_implied`]) and refuses a count that is not theirs.
//! A writer names the view when that is shorter than the cells it implies.
//! What it costs: the FlatBuffers envelope once a message (24 bytes), 9 a
//! section, about 2 a cell (its reference and an item's tag) plus the
//! item's body; an empty delta of up to 32 ticks (walkers going straight,
//! the commonest item by far) is the reference alone, one byte while cells
//! are fewer than 16 apart (protocol 5; in protocol 4 it was the reference
//! and the tag, and a reference's one byte spanned gaps up to 63).
//!
//! **A region bundle** carries one shard's tick of one region to the other
//! shards (Redis): for every occupied (or just emptied) cell, its full form
//! and the deltas the views of other shards may need (those of the tick's
//! spans in which the cell changed), each with its supplements keyed by the
//! cell its players came from (protocol 6).
//!
//! ```text
//! bundle := cell*        (up to the end)
//! cell   := varint(cell_id - previous_cell_id) full-item deltas (varint) delta*
//! delta  := supplements (varint) origin_cell (varint)* delta-item supplement-item*
//! ```
//!
//! A `delta` there is how a shard's streams keep each delta too
//! ([`write_delta_with`], [`DeltaWith`]).

use crate::delta::{put_varint, unzigzag, varint_len, zigzag, DeltaError, Reader, MAX_SPAN};
use crate::grid::CellGrid;
use crate::ids::{ShardId, Tick};
use crate::root::finish;
use crate::stencil::{self, Stencil, Tier, ViewScratch, LADDER};
use crate::wire;
use bytes::Bytes;
use flatbuffers::FlatBufferBuilder;
use std::ops::Range;

/// Whose and when a bundle (or a view's section) is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameStamp {
    /// The shard whose players these are.
    pub shard: ShardId,
    /// The shard's tick.
    pub tick: Tick,
    /// Wall clock of the tick, ms since the Unix epoch.
    pub server_time_ms: u64,
}

/// Bytes of the FlatBuffers envelope of a view frame message (a
/// `ServerMessage` with only `view` set, its first field since protocol 8):
/// the root offset, the vtable of one slot (6 bytes and 2 of padding), the
/// table (its vtable offset and the vector's) and the vector's length. The
/// sections follow it. (Protocols 4 to 7 had `view` at id 6: 36 bytes.)
pub const VIEW_ENVELOPE_BYTES: usize = 24;

/// Appends the envelope of a view frame message whose sections come to
/// `len` bytes: the sections must follow it, making a valid `ServerMessage`
/// (FlatBuffers' layout, written by hand so the sections are copied once;
/// a test checks it against the builder's).
pub fn write_view_envelope(out: &mut Vec<u8>, len: usize) {
    // Root offset to the table at 12; the vtable at 4: its size (4 + 1
    // slot), the table's size (8), then `view`'s offset in the table (4);
    // 2 bytes of padding.
    out.extend_from_slice(&12u32.to_le_bytes());
    [6u16, 8, 4, 0].iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
    // The table: the vtable 8 bytes back, the vector 4 bytes on from where
    // its offset is stored; then the vector's length.
    out.extend_from_slice(&8i32.to_le_bytes());
    out.extend_from_slice(&4u32.to_le_bytes());
    out.extend_from_slice(&(len as u32).to_le_bytes());
}

/// A view frame message (`ServerMessage.view`) of `sections` (as
/// [`write_section`] wrote them): the envelope, then the sections.
pub fn encode_view(sections: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(VIEW_ENVELOPE_BYTES + sections.len());
    write_view_envelope(&mut out, sections.len());
    out.extend_from_slice(sections);
    out
}

/// A view frame message of one section: `shard`'s `cell` at `tick` as the
/// full form of `entries` (sorted by id). For tests and tools.
pub fn encode_full_view(shard: u32, tick: u64, cell: u32, entries: &[crate::entry::Entry]) -> Vec<u8> {
    let (mut body, mut item, mut sections) = (Vec::new(), Vec::new(), Vec::new());
    crate::delta::encode_full(entries, &mut body);
    write_item(&mut item, ItemKind::Full, &body);
    let cells: Vec<(u32, Vec<&[u8]>)> = vec![(cell, vec![&item])];
    write_section(&mut sections, &Section { shard, tick, cells: &cells });
    encode_view(&sections)
}

/// What an item says of its cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ItemKind {
    /// Every player of the cell ([`crate::delta::encode_full`]).
    Full,
    /// What changed over `span` ticks (a power of two up to
    /// [`MAX_SPAN`]; [`crate::delta::encode_delta`]).
    Delta {
        /// Ticks since the state the delta applies to.
        span: u32,
    },
    /// The cell left the view: drop it.
    Forget,
    /// Players to add to what the delta before it left (a full form's
    /// body): players that came from a cell the client did not advance with
    /// this one (protocol 6).
    Supplement,
    /// How long the cell had not changed before the base of the delta that
    /// follows: the body is the ticks, a varint ([`unchanged_ticks`]). A
    /// client whose frames may be lost checks with it that it holds the
    /// cell's last change ([`crate::held::Delivery::Lossy`]); without one,
    /// the cell changed at the base itself.
    Unchanged,
}

const KIND_FULL: u8 = 0;
const KIND_FORGET: u8 = 8;
const KIND_SUPPLEMENT: u8 = 9;
const KIND_UNCHANGED: u8 = 10;
const LEN_VARINT: u8 = 15;

/// Why bytes are not a valid view frame or bundle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ViewError {
    /// A field is malformed or cut short.
    #[error("{0}")]
    Bytes(#[from] DeltaError),
    /// An item kind that does not exist.
    #[error("unknown item kind {0}")]
    Kind(u8),
    /// A forget with a body.
    #[error("a forget with a body")]
    ForgetBody,
    /// Cells out of order, or a cell id past 32 bits.
    #[error("cells out of order")]
    Cells,
    /// A cell with no items, or "several" items that are fewer than two.
    #[error("bad item count")]
    Items,
    /// A bundle cell whose first item is not a full form, or a delta that
    /// is not a delta.
    #[error("bad bundle cell")]
    Bundle,
    /// A frame with no sections.
    #[error("empty frame")]
    EmptySection,
    /// A section's implied cells that cannot be read: a form or due byte
    /// that does not exist, a view not named before, a key or previous cell
    /// of 0 or past 32 bits, bits past the count,
    /// a count that is not the view's candidates, an implied cell that is
    /// also a cell of the section, or a client without the place's grid.
    #[error("bad implied cells")]
    Implied,
}

impl ItemKind {
    fn code(self) -> u8 {
        match self {
            ItemKind::Full => KIND_FULL,
            ItemKind::Delta { span } => 1 + span.max(1).trailing_zeros().min(6) as u8,
            ItemKind::Forget => KIND_FORGET,
            ItemKind::Supplement => KIND_SUPPLEMENT,
            ItemKind::Unchanged => KIND_UNCHANGED,
        }
    }

    fn of(code: u8) -> Result<ItemKind, ViewError> {
        match code {
            KIND_FULL => Ok(ItemKind::Full),
            1..=7 => Ok(ItemKind::Delta { span: 1 << (code - 1) }),
            KIND_FORGET => Ok(ItemKind::Forget),
            KIND_SUPPLEMENT => Ok(ItemKind::Supplement),
            KIND_UNCHANGED => Ok(ItemKind::Unchanged),
            other => Err(ViewError::Kind(other)),
        }
    }
}

/// Appends one item: its tag, length and `body` (empty for a forget).
/// A delta's span must be a power of two up to [`MAX_SPAN`].
pub fn write_item(out: &mut Vec<u8>, kind: ItemKind, body: &[u8]) {
    debug_assert!(!matches!(kind, ItemKind::Delta { span } if !span.is_power_of_two() || span > MAX_SPAN));
    let len = body.len();
    let code = if len < usize::from(LEN_VARINT) { len as u8 } else { LEN_VARINT };
    out.push(kind.code() | code << 4);
    if code == LEN_VARINT {
        put_varint(out, (len - usize::from(LEN_VARINT)) as u64);
    }
    out.extend_from_slice(body);
}

/// An [`ItemKind::Unchanged`] item's ticks saying the cell had no state
/// before the delta's base that a client could hold (it was empty, unheard
/// of): a lossy client applies the delta whatever it holds of the cell, or
/// to the empty cell when it holds none ([`crate::held::Delivery::Lossy`]).
pub const UNCHANGED_EVER: u32 = u32::MAX;

/// The [`ItemKind::Unchanged`] item of `ticks` (under 128: one byte of
/// varint), as [`write_unchanged`] writes it, made at compile time.
pub const fn unchanged_item(ticks: u8) -> [u8; 2] {
    assert!(ticks < 0x80, "one byte of varint");
    [KIND_UNCHANGED | 1 << 4, ticks]
}

/// The [`ItemKind::Unchanged`] item of [`UNCHANGED_EVER`].
pub const UNCHANGED_EVER_ITEM: [u8; 6] = [KIND_UNCHANGED | 5 << 4, 0xff, 0xff, 0xff, 0xff, 0x0f];

/// Appends an [`ItemKind::Unchanged`] item: the cell had not changed for
/// `ticks` ticks before the base of the delta that follows it.
pub fn write_unchanged(out: &mut Vec<u8>, ticks: u32) {
    let mut body = Vec::with_capacity(5);
    put_varint(&mut body, u64::from(ticks));
    write_item(out, ItemKind::Unchanged, &body);
}

/// The ticks an [`ItemKind::Unchanged`] item's `body` says.
///
/// Errors: [`DeltaError::Varint`] or [`DeltaError::Truncated`] for a body
/// that is not one varint, [`DeltaError::Trailing`] after it, and
/// [`DeltaError::Unchanged`] past 32 bits.
pub fn unchanged_ticks(body: &[u8]) -> Result<u32, DeltaError> {
    let mut r = Reader::new(body);
    let ticks = r.varint()?;
    r.finish()?;
    u32::try_from(ticks).map_err(|_| DeltaError::Unchanged)
}

/// One item read from a frame or a bundle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item<'a> {
    /// What it says.
    pub kind: ItemKind,
    /// Its body.
    pub body: &'a [u8],
    /// All of its bytes (tag, length, body), as a relay copies them.
    pub bytes: &'a [u8],
}

/// Reads one item.
fn read_item<'a>(r: &mut Reader<'a>) -> Result<Item<'a>, ViewError> {
    let start = r.clone();
    let tag = r.u8()?;
    let kind = ItemKind::of(tag & 0x0f)?;
    let code = tag >> 4;
    let len = if code == LEN_VARINT { usize::from(LEN_VARINT) + r.count(r.remaining())? } else { usize::from(code) };
    if kind == ItemKind::Forget && len > 0 {
        return Err(ViewError::ForgetBody);
    }
    let body = r.take(len)?;
    let used = start.remaining() - r.remaining();
    let bytes = start.clone().take(used)?;
    Ok(Item { kind, body, bytes })
}

/// Reads one item from `bytes`, which must hold exactly one.
///
/// Errors: [`ViewError`] for anything else.
pub fn parse_item(bytes: &[u8]) -> Result<Item<'_>, ViewError> {
    let mut r = Reader::new(bytes);
    let item = read_item(&mut r)?;
    r.finish()?;
    Ok(item)
}

/// One section of a view frame to write: a shard's cells at one of its ticks.
pub struct Section<'a, C> {
    /// Whose players.
    pub shard: u32,
    /// The shard's tick (its low 32 bits go on the wire).
    pub tick: u64,
    /// Each cell and its items' bytes (each as [`write_item`] made it), by
    /// increasing cell id; at least one item a cell.
    pub cells: &'a [C],
}

/// A cell of a [`Section`]: its id and its items' bytes.
pub trait SectionCell {
    /// The cell id.
    fn cell(&self) -> u32;
    /// Its items, each the whole bytes of one item, in order.
    fn items(&self) -> &[&[u8]];
}

impl SectionCell for (u32, Vec<&[u8]>) {
    fn cell(&self) -> u32 {
        self.0
    }
    fn items(&self) -> &[&[u8]] {
        &self.1
    }
}

/// Appends one section to a view frame's bytes.
pub fn write_section<C: SectionCell>(out: &mut Vec<u8>, section: &Section<'_, C>) {
    write_section_header(out, section.shard, section.tick, section.cells.len());
    let mut previous = 0u32;
    for c in section.cells {
        write_section_cell(out, previous, c.cell(), c.items());
        previous = c.cell();
    }
}

/// Appends a section's header: [`write_section`] in parts, for a writer
/// that has its cells' items at hand without a [`SectionCell`] list. The
/// header is followed by exactly `cells` [`write_section_cell`]s.
pub fn write_section_header(out: &mut Vec<u8>, shard: u32, tick: u64, cells: usize) {
    out.extend_from_slice(&shard.to_le_bytes());
    out.extend_from_slice(&(tick as u32).to_le_bytes());
    put_varint(out, (cells as u64) << FORM_BITS | FORM_NONE);
}

/// The view a section was assembled for (protocol 7): what its implied
/// cells are read against ([`crate::stencil`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SectionView {
    /// The viewer's cell.
    pub key: u32,
    /// The cell the viewer just left, whose view it still has (0: none).
    pub previous: u32,
    /// The rung of [`LADDER`] its tiers' periods are at (0 to 9).
    pub rung: u8,
}

/// A section's implied cells: the view, the due exponent and the bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Implied<'a> {
    /// The view.
    pub view: SectionView,
    /// Periods up to `2^due` ticks are due (0 to 6,
    /// [`crate::stencil::due_exponent`] of the section's step).
    pub due: u8,
    /// Number of candidates.
    pub count: usize,
    /// One bit a candidate, least significant first: set for an implied
    /// cell (`ceil(count / 8)` bytes, the last one's unused bits clear).
    pub bits: &'a [u8],
}

/// Bytes of an implied block: its due byte, the view when named, the count
/// and the bits.
pub fn implied_bytes(implied: &Implied<'_>, named: bool) -> usize {
    let view =
        if named { varint_len(u64::from(implied.view.key)) + varint_len(previous_code(&implied.view)) } else { 0 };
    1 + view + varint_len(implied.count as u64) + implied.bits.len()
}

/// The varint a view's previous cell is written as.
fn previous_code(view: &SectionView) -> u64 {
    if view.previous == 0 {
        return 0;
    }
    zigzag(i64::from(view.previous) - i64::from(view.key)) + 1
}

/// Appends a section's header with implied cells (protocol 7), followed by
/// exactly `cells` [`write_section_cell`]s; `named`: the view is written
/// (else the reader takes the message's last named one, which must be the
/// same).
pub fn write_section_header_implied(
    out: &mut Vec<u8>,
    shard: u32,
    tick: u64,
    cells: usize,
    implied: &Implied<'_>,
    named: bool,
) {
    debug_assert!(implied.due <= 6 && usize::from(implied.view.rung) < LADDER.len());
    debug_assert_eq!(implied.bits.len(), implied.count.div_ceil(8));
    out.extend_from_slice(&shard.to_le_bytes());
    out.extend_from_slice(&(tick as u32).to_le_bytes());
    put_varint(out, (cells as u64) << FORM_BITS | if named { FORM_NAMED } else { FORM_SAME });
    out.push(implied.due | implied.view.rung << 3);
    if named {
        put_varint(out, u64::from(implied.view.key));
        put_varint(out, previous_code(&implied.view));
    }
    put_varint(out, implied.count as u64);
    out.extend_from_slice(implied.bits);
}

/// Bits of a section's head that say its form (the rest is its cells).
const FORM_BITS: u32 = 2;
/// A section's form: no implied cells.
const FORM_NONE: u64 = 0;
/// A section's form: implied cells, the view named.
const FORM_NAMED: u64 = 1;
/// A section's form: implied cells, the view of the last named.
const FORM_SAME: u64 = 2;

/// Appends one cell of a section (see [`write_section_header`]): `cell` with
/// its `items` (at least one), after `previous` (the section's last cell
/// written, 0 for the first; cells increase).
pub fn write_section_cell(out: &mut Vec<u8>, previous: u32, cell: u32, items: &[&[u8]]) {
    let mode = match items {
        [one] => empty_delta_mode(one).unwrap_or(REF_ONE),
        _ => REF_SEVERAL,
    };
    put_varint(out, u64::from(cell - previous) << REF_MODE_BITS | mode);
    if mode == REF_SEVERAL {
        put_varint(out, items.len() as u64);
    }
    if mode <= REF_SEVERAL {
        for item in items {
            out.extend_from_slice(item);
        }
    }
}

/// Bits of a cell reference that say what follows it (the rest is the gap
/// from the previous cell).
const REF_MODE_BITS: u32 = 3;
/// A reference's mode: one item follows.
const REF_ONE: u64 = 0;
/// A reference's mode: several items follow, their count first.
const REF_SEVERAL: u64 = 1;
/// The tags of empty deltas over 1 to 64 ticks (kinds 1 to 7, length 0):
/// an item a reference says by its mode (2 to 7: spans 1 to 32 ticks) or
/// an implied cell's borrows its bytes here, the same bytes as the item it
/// stands for.
static EMPTY_DELTA_TAGS: [u8; 7] = [1, 2, 3, 4, 5, 6, 7];

/// The item of an empty cell's full form (no players): its tag alone.
pub static EMPTY_FULL_ITEM: [u8; 1] = [KIND_FULL];

/// The item of an empty delta over `span` ticks (a power of two up to
/// [`MAX_SPAN`]; another is taken as [`MAX_SPAN`]): its tag alone.
/// (Inlined: a shard's views ask it for most cells they are due.)
#[inline]
pub fn empty_delta_item(span: u32) -> &'static [u8] {
    let at = (span.trailing_zeros() as usize).min(EMPTY_DELTA_TAGS.len() - 1);
    &EMPTY_DELTA_TAGS[at..=at]
}

/// The span of `item` when it is an empty delta (its tag alone: kind 1 to
/// 7, length 0), ticks.
pub fn empty_delta_span(item: &[u8]) -> Option<u32> {
    match item {
        [tag] if EMPTY_DELTA_TAGS.contains(tag) => Some(1 << (tag - 1)),
        _ => None,
    }
}

/// The span, ticks, over which an implied cell of candidate period `span`
/// is advanced: what its empty delta's item ([`empty_delta_item`]) says
/// (`span` itself for a power of two up to [`MAX_SPAN`]).
pub fn implied_span(span: u32) -> u32 {
    empty_delta_span(empty_delta_item(span)).unwrap_or(MAX_SPAN)
}

/// The reference mode that says `item`, when it is an empty delta over at
/// most 32 ticks (spans 1 to 32 as modes 2 to 7).
fn empty_delta_mode(item: &[u8]) -> Option<u64> {
    empty_delta_span(item).filter(|&span| span <= 32).map(|span| 2 + u64::from(span.trailing_zeros()))
}

/// Bytes of a section of `cells` cells whose items come to `item_bytes`,
/// at most (a cell's reference and item count up to 5 bytes each).
pub fn section_bytes_at_most(cells: usize, item_bytes: usize) -> usize {
    8 + 5 + cells * (5 + 5) + item_bytes
}

/// One cell of a view frame, as read.
#[derive(Clone, Debug)]
pub struct ViewCell<'a> {
    /// The cell id.
    pub cell: u32,
    items: Reader<'a>,
    count: usize,
    /// Told by its reference alone (protocol 8).
    by_reference: bool,
}

impl<'a> ViewCell<'a> {
    /// An implied cell: its one item an empty delta over `span` ticks (a
    /// power of two up to [`MAX_SPAN`]; another is taken as [`MAX_SPAN`]).
    pub fn implied(cell: u32, span: u32) -> ViewCell<'static> {
        ViewCell { cell, items: Reader::new(empty_delta_item(span)), count: 1, by_reference: false }
    }

    /// True for a cell told by its reference alone (protocol 8): its one
    /// item, an empty delta over 1 to 32 ticks, is said by the reference's
    /// mode, so none of the item's bytes are in the message (the reader
    /// lends its own).
    pub fn told_by_reference(&self) -> bool {
        self.by_reference
    }

    /// Its items, in order (verified by [`ViewFrame::parse`]).
    pub fn items(&self) -> impl Iterator<Item = Item<'a>> + '_ {
        let mut r = self.items.clone();
        (0..self.count).map_while(move |_| read_item(&mut r).ok())
    }
}

/// One section of a view frame, as read.
#[derive(Clone, Debug)]
pub struct ViewSection<'a> {
    /// Whose players.
    pub shard: u32,
    /// The low 32 bits of the shard's tick.
    pub tick: u32,
    /// Its implied cells (protocol 7), when it has any.
    pub implied: Option<Implied<'a>>,
    cells: Reader<'a>,
    count: usize,
    /// Bytes of its header (shard, tick, head) and of its implied block.
    sizes: (usize, usize),
}

impl<'a> ViewSection<'a> {
    /// Its cells, in increasing order (verified by [`ViewFrame::parse`]).
    pub fn cells(&self) -> impl Iterator<Item = ViewCell<'a>> + '_ {
        let mut r = self.cells.clone();
        let mut previous = 0u32;
        (0..self.count).map_while(move |_| read_cell(&mut r, &mut previous).ok())
    }

    /// Number of cells (implied cells apart).
    pub fn len(&self) -> usize {
        self.count
    }

    /// Bytes of its header: the shard, the tick and the head (implied
    /// block apart).
    pub fn header_bytes(&self) -> usize {
        self.sizes.0
    }

    /// Bytes of its implied block (0 without one).
    pub fn implied_bytes(&self) -> usize {
        self.sizes.1
    }

    /// Number of implied cells (the bits set).
    pub fn implied_cells(&self) -> usize {
        self.implied.map_or(0, |i| i.bits.iter().map(|b| b.count_ones() as usize).sum())
    }

    /// True with no cells and no implied cells: a reset (drop every cell
    /// of the shard).
    pub fn is_empty(&self) -> bool {
        self.count == 0 && self.implied.is_none()
    }

    /// Calls `f` with each implied cell and its empty delta's span, by
    /// increasing cell id: the candidates of the section's view on `grid`
    /// seen through `stencil` (the Welcome's), `cells` and `scratch` room
    /// kept between calls. Nothing without implied cells.
    ///
    /// Errors: [`ViewError::Implied`] when the candidates are not `count`,
    /// or an implied cell is also a cell of the section (`f` has then been
    /// called with some: a caller applies none before this returns).
    pub fn each_implied(
        &self,
        grid: &CellGrid,
        stencil: &Stencil,
        cells: &mut Vec<(u32, Tier)>,
        scratch: &mut ViewScratch,
        f: impl FnMut(u32, u32),
    ) -> Result<(), ViewError> {
        let Some(implied) = &self.implied else { return Ok(()) };
        stencil::view_cells(grid, stencil, (implied.view.key, implied.view.previous), cells, scratch, |c, t| (c, t));
        self.each_implied_in(cells, f)
    }

    /// [`ViewSection::each_implied`] with the view's cells at hand: `cells`
    /// as [`stencil::view_cells`] makes them of the implied block's view
    /// (its key and previous cell) on the Welcome's grid and stencil, so a
    /// client reads them once for as long as its sections name that view.
    ///
    /// Errors: as [`ViewSection::each_implied`].
    pub fn each_implied_in(&self, cells: &[(u32, Tier)], mut f: impl FnMut(u32, u32)) -> Result<(), ViewError> {
        let Some(implied) = &self.implied else { return Ok(()) };
        let (mut i, mut clash) = (0usize, false);
        let mut explicit = self.cells().map(|c| c.cell).peekable();
        stencil::candidates(cells.iter().copied(), implied.view.rung, implied.due, |cell, period| {
            if implied.bits.get(i / 8).is_some_and(|b| b >> (i % 8) & 1 == 1) {
                while explicit.next_if(|&c| c < cell).is_some() {}
                clash |= explicit.peek() == Some(&cell);
                f(cell, period);
            }
            i += 1;
        })
        .ok_or(ViewError::Implied)?;
        if i != implied.count || clash {
            return Err(ViewError::Implied);
        }
        Ok(())
    }
}

/// Reads one cell (its reference and items) after `previous`.
fn read_cell<'a>(r: &mut Reader<'a>, previous: &mut u32) -> Result<ViewCell<'a>, ViewError> {
    let v = r.varint()?;
    let (gap, mode) = (v >> REF_MODE_BITS, v & ((1 << REF_MODE_BITS) - 1));
    if gap == 0 {
        return Err(ViewError::Cells);
    }
    let cell = u64::from(*previous).checked_add(gap).and_then(|c| u32::try_from(c).ok()).ok_or(ViewError::Cells)?;
    *previous = cell;
    if mode > REF_SEVERAL {
        let at = (mode - 2) as usize;
        return Ok(ViewCell { cell, items: Reader::new(&EMPTY_DELTA_TAGS[at..=at]), count: 1, by_reference: true });
    }
    let several = mode == REF_SEVERAL;
    let count = if several { r.count(r.remaining())? } else { 1 };
    if count == 0 || (several && count < 2) {
        return Err(ViewError::Items);
    }
    let items = r.clone();
    for _ in 0..count {
        read_item(r)?;
    }
    Ok(ViewCell { cell, items, count, by_reference: false })
}

/// A verified view frame: the bytes of `ServerMessage.view`.
#[derive(Clone, Debug)]
pub struct ViewFrame<'a> {
    bytes: &'a [u8],
}

impl<'a> ViewFrame<'a> {
    /// Verifies `bytes` end to end (every section, cell and item within
    /// them, cells increasing, kinds known, lengths exact).
    ///
    /// Errors: [`ViewError`].
    pub fn parse(bytes: &'a [u8]) -> Result<ViewFrame<'a>, ViewError> {
        let mut r = Reader::new(bytes);
        if r.is_empty() {
            return Err(ViewError::EmptySection);
        }
        let mut named = None;
        while !r.is_empty() {
            read_section(&mut r, &mut named)?;
        }
        Ok(ViewFrame { bytes })
    }

    /// Its sections, in order.
    pub fn sections(&self) -> impl Iterator<Item = ViewSection<'a>> + '_ {
        let mut r = Reader::new(self.bytes);
        let mut named = None;
        std::iter::from_fn(move || if r.is_empty() { None } else { read_section(&mut r, &mut named).ok() })
    }

    /// The frame's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

/// Reads one section; `named` is the message's last view named (a
/// section of form 1 sets it, one of form 2 reads it).
fn read_section<'a>(r: &mut Reader<'a>, named: &mut Option<SectionView>) -> Result<ViewSection<'a>, ViewError> {
    let start = r.remaining();
    let shard = r.u32()?;
    let tick = r.u32()?;
    let head = r.varint()?;
    let header = start - r.remaining();
    let (count, form) = (head >> FORM_BITS, head & ((1 << FORM_BITS) - 1));
    let count = usize::try_from(count).ok().filter(|&n| n <= r.remaining()).ok_or(DeltaError::TooMany)?;
    let implied = match form {
        FORM_NONE => None,
        FORM_NAMED | FORM_SAME => Some(read_implied(r, form == FORM_NAMED, named)?),
        _ => return Err(ViewError::Implied),
    };
    let sizes = (header, start - r.remaining() - header);
    let cells = r.clone();
    let mut previous = 0u32;
    for _ in 0..count {
        read_cell(r, &mut previous)?;
    }
    Ok(ViewSection { shard, tick, implied, cells, count, sizes })
}

/// Reads a section's implied block (see the module docs).
fn read_implied<'a>(
    r: &mut Reader<'a>,
    names: bool,
    named: &mut Option<SectionView>,
) -> Result<Implied<'a>, ViewError> {
    let due = r.u8()?;
    let (k, rung) = (due & 7, due >> 3);
    if k > 6 || usize::from(rung) >= LADDER.len() {
        return Err(ViewError::Implied);
    }
    let view = if names {
        let key = u32::try_from(r.varint()?).ok().filter(|&k| k != 0).ok_or(ViewError::Implied)?;
        let code = r.varint()?;
        let previous = if code == 0 {
            0
        } else {
            i64::from(key)
                .checked_add(unzigzag(code - 1))
                .and_then(|p| u32::try_from(p).ok())
                .filter(|&p| p != 0)
                .ok_or(ViewError::Implied)?
        };
        let view = SectionView { key, previous, rung };
        *named = Some(view);
        view
    } else {
        SectionView { rung, ..named.ok_or(ViewError::Implied)? }
    };
    let count = r.count(r.remaining().saturating_mul(8))?;
    let bits = r.take(count.div_ceil(8))?;
    if count % 8 != 0 && bits.last().is_some_and(|b| b >> (count % 8) != 0) {
        return Err(ViewError::Implied);
    }
    Ok(Implied { view, due: k, count, bits })
}

/// Appends a delta *with its supplements*, as streams keep it and region
/// bundles carry it: the count of its supplements, their origin cells
/// (increasing), the delta's item, then the supplements' items in the same
/// order (each item as [`write_item`] made it). A view frame carries the
/// delta's item alone, and after it those supplements the view needs (see
/// [`crate::held`]). The count and origins come first so that a delta with
/// none (the commonest) is a zero byte and its item, and a view that needs
/// none of them reads only their origins.
pub fn write_delta_with(out: &mut Vec<u8>, delta: &[u8], supplements: &[(u32, &[u8])]) {
    put_varint(out, supplements.len() as u64);
    for (origin, _) in supplements {
        put_varint(out, u64::from(*origin));
    }
    out.extend_from_slice(delta);
    for (_, item) in supplements {
        out.extend_from_slice(item);
    }
}

/// A delta with its supplements ([`write_delta_with`]), as read.
#[derive(Clone, Debug)]
pub struct DeltaWith<'a> {
    /// The delta's span, ticks.
    pub span: u32,
    /// The delta's item (tag, length, body).
    pub item: &'a [u8],
    origins: Reader<'a>,
    supplements: Reader<'a>,
    count: usize,
}

impl<'a> DeltaWith<'a> {
    /// Reads one from the front of `r`, verified: the count, origins that
    /// increase and are not `cell` (the delta's own cell), a delta item,
    /// then as many supplement items.
    ///
    /// Errors: [`ViewError`]; [`ViewError::Bundle`] for an item of another
    /// kind or a bad origin.
    fn read(r: &mut Reader<'a>, cell: u32) -> Result<DeltaWith<'a>, ViewError> {
        let count = r.count(r.remaining())?;
        let origins = r.clone();
        let mut last = None;
        for _ in 0..count {
            let origin = u32::try_from(r.varint()?).map_err(|_| ViewError::Bundle)?;
            if origin == cell || last.is_some_and(|o| o >= origin) {
                return Err(ViewError::Bundle);
            }
            last = Some(origin);
        }
        let item = read_item(r)?;
        let ItemKind::Delta { span } = item.kind else { return Err(ViewError::Bundle) };
        let supplements = r.clone();
        for _ in 0..count {
            if read_item(r)?.kind != ItemKind::Supplement {
                return Err(ViewError::Bundle);
            }
        }
        Ok(DeltaWith { span, item: item.bytes, origins, supplements, count })
    }

    /// Reads `bytes`, which must hold exactly one, of cell `cell`.
    ///
    /// Errors: as [`DeltaWith::read`], and trailing bytes.
    pub fn parse(bytes: &'a [u8], cell: u32) -> Result<DeltaWith<'a>, ViewError> {
        let mut r = Reader::new(bytes);
        let d = DeltaWith::read(&mut r, cell)?;
        r.finish()?;
        Ok(d)
    }

    /// Splits `bytes` a stream kept (its own encoder's, or a bundle's that
    /// [`read_bundle`] verified) without verifying it again: the count, the
    /// origins passed over, the delta's item by its tag and length. `None`
    /// for bytes that do not hold a count and a delta item.
    pub fn of_kept(bytes: &'a [u8]) -> Option<DeltaWith<'a>> {
        let mut r = Reader::new(bytes);
        let count = r.count(r.remaining()).ok()?;
        let origins = r.clone();
        for _ in 0..count {
            r.varint().ok()?;
        }
        let start = bytes.len() - r.remaining();
        let tag = r.u8().ok()?;
        let ItemKind::Delta { span } = ItemKind::of(tag & 0x0f).ok()? else { return None };
        let code = tag >> 4;
        let len =
            if code == LEN_VARINT { usize::from(LEN_VARINT) + r.count(r.remaining()).ok()? } else { usize::from(code) };
        r.take(len).ok()?;
        let item = &bytes[start..bytes.len() - r.remaining()];
        Some(DeltaWith { span, item, origins: origins.clone(), supplements: r, count })
    }

    /// The offsets of what [`DeltaWith::of_kept`] splits `bytes` into.
    fn layout(bytes: &[u8]) -> Option<KeptLayout> {
        let d = DeltaWith::of_kept(bytes)?;
        let offset = |part: &[u8]| u32::try_from(part.as_ptr() as usize - bytes.as_ptr() as usize).ok();
        let item = offset(d.item)?;
        let mut first = [0u32; KEPT_ORIGINS];
        let mut read = 0;
        for (slot, origin) in first.iter_mut().zip(d.origins()) {
            *slot = origin;
            read += 1;
        }
        Some(KeptLayout {
            first_origins: (d.count <= KEPT_ORIGINS && read == d.count).then_some(first),
            span: d.span,
            count: u32::try_from(d.count).ok()?,
            origins: u32::try_from(bytes.len() - d.origins.remaining()).ok()?,
            item: item..item + u32::try_from(d.item.len()).ok()?,
        })
    }

    /// Its supplements' origin cells, increasing.
    pub fn origins(&self) -> impl Iterator<Item = u32> + '_ {
        let mut r = self.origins.clone();
        (0..self.count).map_while(move |_| u32::try_from(r.varint().ok()?).ok())
    }

    /// The delta item of `bytes` a stream kept, when it has no supplement
    /// (its first byte, the count, is 0): the rest, read without parsing.
    pub fn alone(bytes: &'a [u8]) -> Option<&'a [u8]> {
        match bytes {
            [0, item @ ..] => Some(item),
            _ => None,
        }
    }

    /// Its supplements: (origin cell, supplement item), origins increasing.
    pub fn supplements(&self) -> impl Iterator<Item = (u32, &'a [u8])> + '_ {
        let mut r = self.supplements.clone();
        self.origins().map_while(move |origin| Some((origin, read_item(&mut r).ok()?.bytes)))
    }

    /// True with no supplements.
    pub fn is_alone(&self) -> bool {
        self.count == 0
    }
}

/// A delta with its supplements as a stream keeps it: its bytes
/// ([`write_delta_with`]) and where [`DeltaWith::of_kept`] splits them,
/// found once when it is kept, so that each of the hundreds of views a tick
/// that send it reads its parts without parsing them again (that parse was
/// a tenth of a walking shard's tick: callgrind on `delta_cost`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeptDelta {
    bytes: Bytes,
    /// `None`: the bytes do not split (never for a shard's own encoder's, or
    /// a verified bundle's).
    layout: Option<KeptLayout>,
}

/// The most supplements' origins a [`KeptDelta`] keeps read: a player's
/// old cell is one of the 8 around its new one unless it crossed more than
/// a cell within the delta's span.
const KEPT_ORIGINS: usize = 8;

/// Where a [`KeptDelta`]'s parts are, offsets into its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
struct KeptLayout {
    /// Its supplements' origin cells, read once when kept, when they are
    /// at most [`KEPT_ORIGINS`] (the first `count`; `None`: more, read from
    /// the bytes when asked).
    first_origins: Option<[u32; KEPT_ORIGINS]>,
    span: u32,
    count: u32,
    /// Where the origins start (after the count).
    origins: u32,
    /// The delta's item; the supplements follow it.
    item: Range<u32>,
}

impl KeptDelta {
    /// Keeps `bytes` ([`write_delta_with`]'s), split once.
    pub fn new(bytes: Bytes) -> KeptDelta {
        let layout = DeltaWith::layout(&bytes);
        KeptDelta { bytes, layout }
    }

    /// Its bytes, as kept.
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// Its delta's span, ticks (`None`: the bytes do not split).
    pub fn span(&self) -> Option<u32> {
        self.layout.as_ref().map(|l| l.span)
    }

    /// Its delta's item (tag, length, body); `None`: the bytes do not split.
    pub fn item(&self) -> Option<&[u8]> {
        self.layout.as_ref().map(|l| &self.bytes[l.item.start as usize..l.item.end as usize])
    }

    /// True when `f` holds for each of its supplements' origin cells (for
    /// none: with no supplements, or bytes that do not split). Reads the
    /// origins it kept when it was made (a view a tick asks this of tens of
    /// deltas: parsing them each time was 3 % of a walking shard's tick,
    /// `perf` on `delta_cost`), else the bytes.
    pub fn all_origins(&self, mut f: impl FnMut(u32) -> bool) -> bool {
        let Some(l) = self.layout.as_ref() else { return true };
        match &l.first_origins {
            Some(first) => first[..l.count as usize].iter().all(|&o| f(o)),
            None => self.split().is_none_or(|d| d.origins().all(f)),
        }
    }

    /// True with no supplements (and for bytes that do not split).
    pub fn is_alone(&self) -> bool {
        self.layout.as_ref().is_none_or(|l| l.count == 0)
    }

    /// Its parts, without parsing (as [`DeltaWith::of_kept`] gives them);
    /// `None` for bytes that do not split.
    pub fn split(&self) -> Option<DeltaWith<'_>> {
        let l = self.layout.as_ref()?;
        let b = &self.bytes[..];
        let (origins, item) = (l.origins as usize, l.item.start as usize..l.item.end as usize);
        Some(DeltaWith {
            span: l.span,
            item: &b[item.clone()],
            origins: Reader::new(&b[origins..item.start]),
            supplements: Reader::new(&b[item.end..]),
            count: l.count as usize,
        })
    }
}

impl std::ops::Deref for KeptDelta {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

/// Appends one cell of a region bundle: its full form's item and its
/// deltas, each with its supplements as [`write_delta_with`] wrote it,
/// after `previous` (the last cell written, 0 for the first; cells
/// increase).
pub fn write_bundle_cell(out: &mut Vec<u8>, previous: u32, cell: u32, full: &[u8], deltas: &[&[u8]]) {
    put_varint(out, u64::from(cell - previous));
    out.extend_from_slice(full);
    put_varint(out, deltas.len() as u64);
    for d in deltas {
        out.extend_from_slice(d);
    }
}

/// One cell of a region bundle, as read: where its items are in the
/// bundle's bytes (so a relay slices them without copying).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleCell {
    /// The cell id.
    pub cell: u32,
    /// Its full form's item.
    pub full: Range<usize>,
    /// Its deltas, each with its supplements ([`DeltaWith`]), and their spans.
    pub deltas: Vec<(u32, Range<usize>)>,
}

/// Reads a region bundle's items (`CellBundle.cell_items`), verified end to end.
///
/// Errors: [`ViewError`].
pub fn read_bundle(bytes: &[u8]) -> Result<Vec<BundleCell>, ViewError> {
    let mut r = Reader::new(bytes);
    let mut cells = Vec::new();
    let mut previous = 0u32;
    let at = |r: &Reader<'_>| bytes.len() - r.remaining();
    while !r.is_empty() {
        let gap = r.varint()?;
        if gap == 0 {
            return Err(ViewError::Cells);
        }
        previous = u64::from(previous).checked_add(gap).and_then(|c| u32::try_from(c).ok()).ok_or(ViewError::Cells)?;
        let start = at(&r);
        let full = read_item(&mut r)?;
        if full.kind != ItemKind::Full {
            return Err(ViewError::Bundle);
        }
        let full = start..at(&r);
        let n = r.count(r.remaining())?;
        let mut deltas = Vec::with_capacity(n);
        for _ in 0..n {
            let start = at(&r);
            let span = DeltaWith::read(&mut r, previous)?.span;
            deltas.push((span, start..at(&r)));
        }
        cells.push(BundleCell { cell: previous, full, deltas });
    }
    Ok(cells)
}

/// The full tick whose low 32 bits are `low`, the one nearest `near`.
pub fn unwrap_tick(low: u32, near: u64) -> u64 {
    let base = near & !0xffff_ffff;
    [base.wrapping_sub(1 << 32), base, base.wrapping_add(1 << 32)]
        .into_iter()
        .map(|high| high | u64::from(low))
        .min_by_key(|t| t.abs_diff(near))
        .unwrap_or(u64::from(low))
}

/// The wall time (ms since the Unix epoch) of a section's tick `low` (its
/// low 32 bits): ticks are whole periods of `1 / tick_hz` s since the
/// epoch, so a tick's time is its number times the period; `near_ms` (a
/// recent server time, such as the Welcome's) picks which wrap.
pub fn tick_time_ms(low: u32, tick_hz: u16, near_ms: u64) -> u64 {
    let hz = u64::from(tick_hz.max(1));
    let tick = unwrap_tick(low, near_ms * hz / 1000);
    tick.saturating_mul(1000) / hz
}

/// Encodes a region bundle: one shard's cells of one region at one tick
/// (`stamp`) and step (`step`), `items` as [`write_bundle_cell`] wrote them.
pub fn encode_bundle(stamp: &FrameStamp, step: u64, region: u32, items: &[u8]) -> Bytes {
    let mut fbb = FlatBufferBuilder::with_capacity(items.len() + 96);
    let items = fbb.create_vector(items);
    let body = wire::CellBundle::create(
        &mut fbb,
        &wire::CellBundleArgs {
            shard_id: stamp.shard.0,
            region,
            tick: stamp.tick.0,
            server_time_ms: stamp.server_time_ms,
            step,
            cell_items: Some(items),
        },
    );
    finish(&mut fbb, wire::ServerBody::CellBundle, body.as_union_value())
}

/// A verified region bundle of protocol 8 (its items read end to end).
#[derive(Clone, Debug)]
pub struct Bundle<'a> {
    bundle: wire::CellBundle<'a>,
    items: &'a [u8],
    cells: Vec<BundleCell>,
}

impl<'a> Bundle<'a> {
    /// The bundle a verified body is.
    ///
    /// Errors: [`ViewError::Bundle`] for one of another protocol (no items),
    /// any other [`ViewError`] for malformed items.
    pub fn of(bundle: wire::CellBundle<'a>) -> Result<Bundle<'a>, ViewError> {
        let items = bundle.cell_items().ok_or(ViewError::Bundle)?.bytes();
        let cells = read_bundle(items)?;
        Ok(Bundle { bundle, items, cells })
    }

    /// Whose and when.
    pub fn stamp(&self) -> FrameStamp {
        FrameStamp {
            shard: ShardId(self.bundle.shard_id()),
            tick: Tick(self.bundle.tick()),
            server_time_ms: self.bundle.server_time_ms(),
        }
    }

    /// The publisher's step.
    pub fn step(&self) -> u64 {
        self.bundle.step()
    }

    /// The region.
    pub fn region(&self) -> u32 {
        self.bundle.region()
    }

    /// The items' bytes.
    pub fn items(&self) -> &'a [u8] {
        self.items
    }

    /// Its cells, with where their items are in [`Bundle::items`].
    pub fn cells(&self) -> &[BundleCell] {
        &self.cells
    }

    /// Its cells, taken.
    pub fn into_cells(self) -> Vec<BundleCell> {
        self.cells
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// One item of `kind` with `body`, as [`write_item`] writes it.
    pub(crate) fn item(kind: ItemKind, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        write_item(&mut out, kind, body);
        out
    }

    #[test]
    fn unchanged_items_made_at_compile_time_are_written_ones() {
        let written = |ticks: u32| {
            let mut out = Vec::new();
            write_unchanged(&mut out, ticks);
            out
        };
        for ticks in 0..0x80u8 {
            assert_eq!(unchanged_item(ticks).to_vec(), written(u32::from(ticks)));
        }
        assert_eq!(UNCHANGED_EVER_ITEM.to_vec(), written(UNCHANGED_EVER));
        let item = parse_item(&UNCHANGED_EVER_ITEM).expect("one item");
        assert_eq!((item.kind, unchanged_ticks(item.body)), (ItemKind::Unchanged, Ok(UNCHANGED_EVER)));
    }

    #[test]
    fn a_ticks_time_is_its_number_of_periods() {
        let now_ms = 1_764_450_000_050u64;
        let tick = now_ms / 50;
        assert_eq!(tick_time_ms(tick as u32, 20, now_ms - 3000), now_ms);
        assert_eq!(unwrap_tick(5, (1 << 32) - 3), (1 << 32) + 5, "past a wrap");
        assert_eq!(unwrap_tick(u32::MAX, (1 << 32) + 2), u64::from(u32::MAX), "before a wrap");
    }

    #[test]
    fn the_envelope_is_what_the_builder_makes() {
        let sections = [1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
        let mut fbb = flatbuffers::FlatBufferBuilder::new();
        let view = fbb.create_vector(&sections);
        let msg = crate::wire::ServerMessage::create(
            &mut fbb,
            &crate::wire::ServerMessageArgs { view: Some(view), ..Default::default() },
        );
        fbb.finish(msg, None);
        let mut mine = Vec::new();
        write_view_envelope(&mut mine, sections.len());
        assert_eq!(mine.len(), VIEW_ENVELOPE_BYTES);
        mine.extend_from_slice(&sections);
        let read = flatbuffers::root::<crate::wire::ServerMessage>(&mine).expect("verifies");
        assert_eq!(read.view().map(|v| v.bytes().to_vec()), Some(sections.to_vec()));
        assert_eq!(read.body_type(), crate::wire::ServerBody::NONE);
        let theirs = fbb.finished_data();
        let back = flatbuffers::root::<crate::wire::ServerMessage>(theirs).expect("verifies");
        assert_eq!(back.view().map(|v| v.bytes().to_vec()), Some(sections.to_vec()));
        assert!(theirs.len() <= mine.len() + 4, "the builder's is no smaller: {} vs {}", theirs.len(), mine.len());
    }

    #[test]
    fn items_say_their_kind_and_length_in_one_byte_when_short() {
        assert_eq!(item(ItemKind::Delta { span: 1 }, &[]), [0x01]);
        assert_eq!(item(ItemKind::Delta { span: 64 }, &[9, 9]), [0x27, 9, 9]);
        assert_eq!(item(ItemKind::Forget, &[]), [0x08]);
        let long = vec![7u8; 300];
        let bytes = item(ItemKind::Full, &long);
        assert_eq!(&bytes[..3], [0xf0, 0x9d, 0x02], "15 in the tag, then 285 as a varint");
        let read = parse_item(&bytes).expect("an item");
        assert_eq!((read.kind, read.body.len(), read.bytes.len()), (ItemKind::Full, 300, bytes.len()));
    }

    #[test]
    fn an_empty_full_form_is_its_tag_alone() {
        assert_eq!(item(ItemKind::Full, &[]), EMPTY_FULL_ITEM);
        assert!(parse_item(&EMPTY_FULL_ITEM).is_ok_and(|i| i.kind == ItemKind::Full && i.body.is_empty()));
    }

    #[test]
    fn an_empty_delta_of_up_to_32_ticks_is_its_cells_reference_alone() {
        let spans = [1, 2, 4, 8, 16, 32, 64];
        let items: Vec<Vec<u8>> = spans.iter().map(|&span| item(ItemKind::Delta { span }, &[])).collect();
        let cells: Vec<(u32, Vec<&[u8]>)> =
            items.iter().enumerate().map(|(i, it)| (i as u32 + 1, vec![&it[..]])).collect();
        let mut out = Vec::new();
        write_section(&mut out, &Section { shard: 3, tick: 4, cells: &cells });
        // Modes 2 to 7 say spans 1 to 32; span 64 has no mode: one item, its tag.
        let refs: Vec<u8> = (2..=7).map(|mode| 1 << 3 | mode).chain([1 << 3, 0x07]).collect();
        assert_eq!(out[9..], refs[..]);
        let frame = ViewFrame::parse(&out).expect("valid");
        let Some(section) = frame.sections().next() else { panic!("a section") };
        type Read = Vec<(u32, Vec<(ItemKind, Vec<u8>, Vec<u8>)>)>;
        let read: Read = section
            .cells()
            .map(|c| (c.cell, c.items().map(|i| (i.kind, i.body.to_vec(), i.bytes.to_vec())).collect()))
            .collect();
        let want: Vec<_> = spans
            .iter()
            .zip(&items)
            .enumerate()
            .map(|(i, (&span, it))| (i as u32 + 1, vec![(ItemKind::Delta { span }, vec![], it.clone())]))
            .collect();
        assert_eq!(read, want, "each read back as the item it stands for, bytes and all");
        let by_reference: Vec<bool> = section.cells().map(|c| c.told_by_reference()).collect();
        assert_eq!(by_reference, [true, true, true, true, true, true, false], "spans 1 to 32 by reference, 64 not");
        assert!(!ViewCell::implied(9, 1).told_by_reference(), "an implied cell is not told");
        // A reference of one item followed by an empty delta's tag (never
        // written, but valid) reads as the same item.
        let header = [3, 0, 0, 0, 4, 0, 0, 0, 1 << 2];
        let odd = [&header[..], &[5 << 3, 0x02]].concat();
        let frame = ViewFrame::parse(&odd).expect("valid");
        let mut kinds = Vec::new();
        for section in frame.sections() {
            for cell in section.cells() {
                assert!(!cell.told_by_reference(), "its item's tag is in the message");
                kinds.extend(cell.items().map(|i| i.kind));
            }
        }
        assert_eq!(kinds, [ItemKind::Delta { span: 2 }]);
        // Within several items, or alone with a body, an empty delta keeps its tag.
        let turn = item(ItemKind::Delta { span: 1 }, &[4, 1, 9, 9]);
        let cells: Vec<(u32, Vec<&[u8]>)> = vec![(2, vec![&items[0], &items[0]]), (3, vec![&turn])];
        let mut out = Vec::new();
        write_section(&mut out, &Section { shard: 3, tick: 4, cells: &cells });
        assert_eq!(out[9..], [2 << 3 | 1, 2, 0x01, 0x01, 1 << 3, 0x41, 4, 1, 9, 9]);
    }

    #[test]
    fn a_frame_of_sections_reads_back_and_costs_what_the_docs_say() {
        let (walkers, turn, forget) = (
            item(ItemKind::Delta { span: 1 }, &[]),
            item(ItemKind::Delta { span: 2 }, &[4, 1, 9, 9]),
            item(ItemKind::Forget, &[]),
        );
        let own: Vec<(u32, Vec<&[u8]>)> = vec![(5, vec![&walkers]), (6, vec![&turn, &walkers]), (300, vec![&forget])];
        let theirs: Vec<(u32, Vec<&[u8]>)> = vec![(70_000, vec![&walkers])];
        let mut out = Vec::new();
        write_section(&mut out, &Section { shard: 7, tick: (1 << 33) + 12, cells: &own });
        write_section(&mut out, &Section { shard: 8, tick: 11, cells: &theirs });
        // Cell 5's empty delta is its reference alone; cell 6 has two items
        // (reference, count, the turn's 5 bytes, the tag); cell 300, 294
        // on, a reference of 2 bytes; shard 8's cell a reference of 3.
        assert_eq!(out.len(), 9 + 1 + (1 + 1 + 5 + 1) + (2 + 1) + 9 + 3);
        let frame = ViewFrame::parse(&out).expect("valid");
        type Cells = Vec<(u32, Vec<ItemKind>)>;
        let sections: Vec<(u32, u32, Cells)> = frame
            .sections()
            .map(|s| (s.shard, s.tick, s.cells().map(|c| (c.cell, c.items().map(|i| i.kind).collect())).collect()))
            .collect();
        let d = |span| ItemKind::Delta { span };
        assert_eq!(
            sections,
            [
                (7, 12, vec![(5, vec![d(1)]), (6, vec![d(2), d(1)]), (300, vec![ItemKind::Forget])]),
                (8, 11, vec![(70_000, vec![d(1)])])
            ]
        );
    }

    #[test]
    fn malformed_frames_are_refused_and_never_read_past() {
        let walkers = item(ItemKind::Delta { span: 1 }, &[]);
        let cells: Vec<(u32, Vec<&[u8]>)> = vec![(5, vec![&walkers]), (9, vec![&walkers, &walkers])];
        let mut good = Vec::new();
        write_section(&mut good, &Section { shard: 1, tick: 1, cells: &cells });
        assert!(ViewFrame::parse(&good).is_ok());
        for cut in 0..good.len() {
            assert!(ViewFrame::parse(&good[..cut]).is_err(), "cut at {cut}");
        }
        // The section's 9 bytes, cell 5 (its reference alone: gap 5, an
        // empty delta of 1 tick), cell 9 (its reference: gap 4 and several,
        // the count, then 2 items).
        assert_eq!(good[9..], [5 << 3 | 2, 4 << 3 | 1, 2, 0x01, 0x01]);
        let mut bad = good.clone();
        bad[13] = 0x0b;
        assert_eq!(ViewFrame::parse(&bad).err(), Some(ViewError::Kind(11)));
        let mut bad = good.clone();
        bad[10] = 0x01;
        assert_eq!(ViewFrame::parse(&bad).err(), Some(ViewError::Cells));
        let mut bad = good.clone();
        bad[11] = 1;
        assert_eq!(ViewFrame::parse(&bad).err(), Some(ViewError::Items));
        // A bundle's second cell whose gap would wrap 64 bits.
        let mut bundle = Vec::new();
        write_bundle_cell(&mut bundle, 0, 4, &item(ItemKind::Full, &[]), &[]);
        put_varint(&mut bundle, u64::MAX - 1);
        assert_eq!(read_bundle(&bundle).err(), Some(ViewError::Cells));
        assert_eq!(ViewFrame::parse(&[0x18]).err(), Some(ViewError::Bytes(DeltaError::Truncated)));
        assert_eq!(parse_item(&[0x18, 0]).err(), Some(ViewError::ForgetBody));
        for i in 0..good.len() {
            for bit in 0..8 {
                let mut b = good.clone();
                b[i] ^= 1 << bit;
                if let Ok(f) = ViewFrame::parse(&b) {
                    for s in f.sections() {
                        for c in s.cells() {
                            assert!(c.items().count() >= 1);
                        }
                    }
                }
            }
        }
    }

    /// A 10 x 10 grid of 100-unit cells and a view radius of 2 cells.
    fn place() -> (CellGrid, Stencil) {
        let grid = CellGrid::new(&crate::wire::Bounds::new(0.0, 0.0, 1000.0, 1000.0), 100.0).expect("grid");
        (grid, Stencil::of_view(200.0, 100.0))
    }

    #[test]
    fn implied_cells_read_back_as_the_candidates_their_bits_name() {
        let (grid, stencil) = place();
        let view = SectionView { key: 56, previous: 55, rung: 1 };
        let (mut cells, mut room) = (Vec::new(), ViewScratch::default());
        stencil::view_cells(&grid, &stencil, (56, 55), &mut cells, &mut room, |c, t| (c, t));
        let mut candidates = Vec::new();
        stencil::candidates(cells.iter().copied(), 1, 1, |c, p| candidates.push((c, p))).expect("rung 1");
        // Rung 1 at due exponent 1: own, near and mid cells (periods 1, 1, 2).
        assert!(candidates.iter().all(|&(_, p)| p <= 2) && candidates.len() > 20);
        let pick = [0, 3, candidates.len() - 1];
        let mut bits = vec![0u8; candidates.len().div_ceil(8)];
        for i in pick {
            bits[i / 8] |= 1 << (i % 8);
        }
        let block = Implied { view, due: 1, count: candidates.len(), bits: &bits };
        let told = item(ItemKind::Full, &[]);
        let mut out = Vec::new();
        // One named, then one taking its view (another rung: its own).
        write_section_header_implied(&mut out, 7, 100, 1, &block, true);
        write_section_cell(&mut out, 0, candidates[1].0, &[&told]);
        let second = Implied { view: SectionView { rung: 1, ..view }, ..block };
        write_section_header_implied(&mut out, 8, 100, 0, &second, false);
        assert_eq!(out[8], 1 << 2 | 1, "one cell, the view named");
        assert_eq!(out[9..12], [1 | 1 << 3, 56, 2], "the due byte, the key, previous - key = -1 as zigzag 1, + 1");
        let frame = ViewFrame::parse(&out).expect("valid");
        let sections: Vec<ViewSection<'_>> = frame.sections().collect();
        assert_eq!(sections.len(), 2);
        assert_eq!(sections[1].implied.map(|i| i.view), Some(view), "the second takes the first's view");
        assert_eq!(sections[0].header_bytes(), 9);
        assert_eq!(sections[0].implied_bytes(), implied_bytes(&block, true));
        assert_eq!(sections[1].implied_bytes(), implied_bytes(&second, false));
        assert!(!sections[1].is_empty(), "no cells but implied ones: not a reset");
        let want: Vec<(u32, u32)> = pick.iter().map(|&i| candidates[i]).collect();
        for s in &sections {
            let mut got = Vec::new();
            s.each_implied(&grid, &stencil, &mut cells, &mut room, |c, p| got.push((c, p))).expect("reads");
            assert_eq!(got, want);
            assert_eq!(s.implied_cells(), 3);
        }
        // A cell both implied and told, and a count that is not the view's,
        // are refused when read against the place.
        let mut clash = Vec::new();
        write_section_header_implied(&mut clash, 7, 100, 1, &block, true);
        write_section_cell(&mut clash, 0, candidates[3].0, &[&told]);
        let frame = ViewFrame::parse(&clash).expect("verifies without the place");
        let Some(s) = frame.sections().next() else { panic!("a section") };
        assert_eq!(s.each_implied(&grid, &stencil, &mut cells, &mut room, |_, _| ()), Err(ViewError::Implied));
        let mut wider = bits.clone();
        wider.push(0);
        let off = Implied { count: candidates.len() + 8, bits: &wider, ..block };
        let mut bad = Vec::new();
        write_section_header_implied(&mut bad, 7, 100, 0, &off, true);
        let frame = ViewFrame::parse(&bad).expect("verifies without the place");
        let Some(s) = frame.sections().next() else { panic!("a section") };
        assert_eq!(s.each_implied(&grid, &stencil, &mut cells, &mut room, |_, _| ()), Err(ViewError::Implied));
    }

    #[test]
    fn malformed_implied_blocks_are_refused() {
        let header = |rest: &[u8]| [&[1, 0, 0, 0, 2, 0, 0, 0][..], rest].concat();
        for (name, bytes) in [
            ("form 3", header(&[3])),
            ("a view never named", header(&[2, 0, 1, 1])),
            ("k 7", header(&[1, 7, 5, 0, 1, 1])),
            ("rung 10", header(&[1, 10 << 3, 5, 0, 1, 1])),
            ("the top bit", header(&[1, 0x80, 5, 0, 1, 1])),
            ("a previous cell of 0", header(&[1, 0, 5, 10, 1, 1])),
            ("a key of 0", header(&[1, 0, 0, 0, 1, 1])),
            ("bits past the count", header(&[1, 0, 5, 0, 3, 0b1000])),
        ] {
            assert_eq!(ViewFrame::parse(&bytes).err(), Some(ViewError::Implied), "{name}");
        }
        assert_eq!(
            ViewFrame::parse(&header(&[1, 0, 5, 0, 200, 1])).err(),
            Some(ViewError::Bytes(DeltaError::TooMany)),
            "a count past the bytes"
        );
        assert_eq!(
            ViewFrame::parse(&header(&[1, 0, 5, 0, 9, 0xff])).err(),
            Some(ViewError::Bytes(DeltaError::Truncated)),
            "bits cut short"
        );
        assert!(ViewFrame::parse(&header(&[1, 0, 5, 0, 3, 0b111])).is_ok());
    }

    #[test]
    fn a_bundle_reads_back_with_its_items_and_supplements_in_place() {
        let full = item(ItemKind::Full, &[1, 2, 3]);
        let (d1, d2) = (item(ItemKind::Delta { span: 1 }, &[]), item(ItemKind::Delta { span: 2 }, &[5]));
        let sup = item(ItemKind::Supplement, &[7, 0, 0, 0, 0, 0, 0]);
        let with = |d: &[u8], sups: &[(u32, &[u8])]| {
            let mut out = Vec::new();
            write_delta_with(&mut out, d, sups);
            out
        };
        let (w1, w2) = (with(&d1, &[]), with(&d2, &[(3, &sup), (5, &sup)]));
        let mut out = Vec::new();
        write_bundle_cell(&mut out, 0, 4, &full, &[&w1, &w2]);
        write_bundle_cell(&mut out, 4, 90, &full, &[]);
        let cells = read_bundle(&out).expect("valid");
        assert_eq!(cells.len(), 2);
        assert_eq!((cells[0].cell, &out[cells[0].full.clone()]), (4, &full[..]));
        assert_eq!(
            cells[0].deltas.iter().map(|(s, r)| (*s, &out[r.clone()])).collect::<Vec<_>>(),
            [(1, &w1[..]), (2, &w2[..])]
        );
        let second = DeltaWith::parse(&out[cells[0].deltas[1].1.clone()], 4).expect("valid");
        assert_eq!((second.span, second.item), (2, &d2[..]));
        assert_eq!(second.supplements().collect::<Vec<_>>(), [(3, &sup[..]), (5, &sup[..])]);
        let kept = DeltaWith::of_kept(&out[cells[0].deltas[1].1.clone()]).expect("a delta");
        assert_eq!((kept.span, kept.item), (2, &d2[..]));
        assert_eq!(kept.supplements().collect::<Vec<_>>(), [(3, &sup[..]), (5, &sup[..])]);
        assert!(DeltaWith::of_kept(&full).is_none(), "a full form is no delta");
        // Kept once split, read as often: the same parts.
        for (w, origins) in [(&w1, vec![]), (&w2, vec![3, 5])] {
            let kept = KeptDelta::new(Bytes::from(w.clone()));
            let (a, b) = (kept.split().expect("a delta"), DeltaWith::of_kept(w).expect("a delta"));
            assert_eq!((a.span, a.item, a.is_alone()), (b.span, b.item, b.is_alone()));
            assert_eq!(a.origins().collect::<Vec<_>>(), origins);
            assert_eq!(a.supplements().collect::<Vec<_>>(), b.supplements().collect::<Vec<_>>());
            assert_eq!(&kept[..], &w[..]);
        }
        assert!(KeptDelta::new(Bytes::from(full.clone())).split().is_none(), "a full form is no delta");
        // Its origins asked of as kept (up to 8) or read from the bytes
        // (more): the same answers.
        let many: Vec<(u32, &[u8])> = (10..20).map(|o| (o, &sup[..])).collect();
        for n in [0, 1, 2, 8, 9, 10] {
            let kept = KeptDelta::new(Bytes::from(with(&d2, &many[..n])));
            let mut asked = Vec::new();
            assert!(kept.all_origins(|o| {
                asked.push(o);
                true
            }));
            assert_eq!(asked, (10..10 + n as u32).collect::<Vec<_>>(), "{n} origins");
            assert_eq!(kept.all_origins(|o| o != 10 + n as u32 - 1), n == 0, "{n} origins, the last refused");
        }
        assert!(KeptDelta::new(Bytes::from(full.clone())).all_origins(|_| false), "no delta: no origins");
        assert!(DeltaWith::parse(&w1, 4).expect("valid").is_alone());
        assert_eq!((cells[1].cell, cells[1].deltas.len()), (90, 0));
        let mut bad = Vec::new();
        write_bundle_cell(&mut bad, 0, 4, &d1, &[]);
        assert_eq!(read_bundle(&bad).err(), Some(ViewError::Bundle));
        // A supplement whose origin is its own cell, origins out of order, or
        // a delta where a supplement should be: refused.
        for sups in [&[(4, &sup[..])][..], &[(5, &sup[..]), (3, &sup[..])], &[(3, &d1[..])]] {
            let mut bad = Vec::new();
            write_bundle_cell(&mut bad, 0, 4, &full, &[&with(&d1, sups)]);
            assert_eq!(read_bundle(&bad).err(), Some(ViewError::Bundle), "{sups:?}");
        }
        // A bundle is cells up to its end: a cut between cells is a shorter
        // bundle, a cut inside one is refused.
        let first = 1 + full.len() + 1 + w1.len() + w2.len();
        assert_eq!(DeltaWith::alone(&w1), Some(&d1[..]));
        assert_eq!(DeltaWith::alone(&w2), None);
        for cut in (1..out.len()).filter(|&c| c != first) {
            assert!(read_bundle(&out[..cut]).is_err(), "cut at {cut}");
        }
    }
}
