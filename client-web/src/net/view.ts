// View frames in the browser (protocol 8): the bytes of ServerMessage.view,
// one websocket message a tick, read with the rules of schema/src/view.rs
// (the same errors, held to schema/fixtures/delta.json).
//
//   frame   := section+
//   section := shard (u32 le) tick (u32 le, the low bits) head (varint) [implied] cell*
//   head    := cells << 2 | form
//   form    := 0 no implied cells (with no cells: a reset, every cell of the shard dropped)
//            | 1 implied cells, the view named
//            | 2 implied cells, the view of the message's last section of form 1
//            (3: refused, Implied)
//   implied := due (u8: k in bits 0-2, 0..=6; rung in bits 3-7, 0..=9)
//              [key (varint, a nonzero u32) previous (varint: 0 none, else
//               zigzag(previous - key) + 1, a nonzero u32), form 1]
//              count (varint, at most 8 a byte left)
//              bits (ceil(count / 8) bytes, least significant bit first; the
//               last byte's unused bits clear)
//   cell    := varint((cell_id - previous_cell_id) << 3 | mode)
//              [items: varint, when several] item*
//   mode    := 0 one item follows | 1 several (their count follows)
//            | 2..=7 no item follows: the cell's one item is an empty delta
//              over 2^(mode-2) ticks (walkers going straight: the reference alone)
//   item    := tag [len - 15: varint, when the tag's length is 15] body
//   tag     := kind (bits 0-3) | length (bits 4-7; 15: a varint follows)
//   kind    := 0 full form | 1..=7 delta over 2^(kind-1) ticks | 8 forget
//            | 9 supplement (protocol 6: a full form's body, players added
//              to what the delta before it left; net/held.ts)
//            | 10 unchanged (body: ticks, a varint; the first of a cell's
//              items, before a delta: the cell had not changed for that
//              long before the delta's base; sent only to a client whose
//              frames may be lost, schema/src/held.rs's `Delivery::Lossy`)
//
// Cells of a section increase (the first's "previous" is 0); a cell's items
// apply in order (net/held.ts). A frame is verified end to end before any of
// it is applied ([`verifyViewFrame`]); the cursor ([`ViewCursor`]) then walks
// it section by section, cell by cell, item by item, with no allocation.
// Both read bytes[start, end) of a larger buffer (the websocket message) and
// never a byte outside it.
//
// Implied cells (protocol 7): a section may name the view it was assembled
// for (its key cell, the previous cell of a viewer that just crossed a
// border, the rung of its tiers' periods: net/stencil.ts) and the due
// exponent k of its step. The candidates are the view's cells whose period
// is at most 2^k ticks, by increasing cell id, and bit i set says candidate
// i's one item is an empty delta over its period, as if it were a cell of
// the section (it must not also be one). The count is the number of
// candidates, so a frame verifies without the place's geometry; the page
// reads the candidates with it ([`ImpliedCells`]) and refuses a count that is
// not theirs.

import { DeltaError, Reader } from './delta.js';
import type { CellGrid } from './grid.js';
import { CellBytes, LADDER, type Stencil, TieredCells, ViewScratch, viewCells } from './stencil.js';

/** Item kinds: a full form, deltas 1..7, a forget, a supplement, an unchanged item (schema/src/view.rs's `ItemKind`; 11 and up are unknown). */
export const KIND_FULL = 0;
export const KIND_FORGET = 8;
export const KIND_SUPPLEMENT = 9;
export const KIND_UNCHANGED = 10;
/** A tag's length nibble saying a varint length follows. */
const LEN_VARINT = 15;
/** Bits of a cell reference saying what follows it (the rest is the gap). */
const REF_MODE_BITS = 3;
/** A reference's mode: several items follow, their count first (0: one item). */
const REF_SEVERAL = 1;
/** Bits of a section's head that say its form (the rest is its cells). */
const FORM_BITS = 2;
/** A section's form: implied cells, the view named (0: none; 2: the view of the last named; 3 does not exist). */
const FORM_NAMED = 1;
const FORM_SAME = 2;
/** Most due exponent of an implied block (periods up to 64 ticks, SLOWEST_PERIOD). */
const MAX_DUE = 6;

/** Why bytes are not a valid view frame: the names of Rust's `ViewError`. */
export type ViewErrorKind = 'Bytes' | 'Kind' | 'ForgetBody' | 'Cells' | 'Items' | 'EmptySection' | 'Implied';

const VIEW_TEXT: Record<ViewErrorKind, string> = {
  Bytes: 'a field is malformed or cut short',
  Kind: 'unknown item kind',
  ForgetBody: 'a forget with a body',
  Cells: 'cells out of order',
  Items: 'bad item count',
  EmptySection: 'empty frame',
  Implied: 'bad implied cells',
};

/** A view frame that does not verify. */
export class ViewError extends Error {
  constructor(
    readonly kind: ViewErrorKind,
    /** The unknown kind (Kind); -1 for the others. */
    readonly value = -1,
    /** The field's error (Bytes). */
    readonly bytes: DeltaError | null = null,
  ) {
    super(bytes ? `view frame: ${bytes.message}` : `view frame: ${VIEW_TEXT[kind]}${value >= 0 ? ` ${value}` : ''}`);
    this.name = 'ViewError';
  }

  /** As Rust's Debug prints the error: `Bytes(Truncated)`, `Kind(10)`, `Cells`. */
  get label(): string {
    if (this.bytes) return `Bytes(${this.bytes.label})`;
    return this.value >= 0 ? `${this.kind}(${this.value})` : this.kind;
  }
}

/** The error a reading error is as a frame's: a field's DeltaError becomes Bytes. */
export function asViewError(e: unknown): ViewError {
  if (e instanceof ViewError) return e;
  if (e instanceof DeltaError) return new ViewError('Bytes', -1, e);
  throw e;
}

/**
 * Walks a view frame: `nextSection()`, then `nextCell()` within it, then
 * `nextItem()` within the cell, each false when there are no more; the
 * fields say where the cursor is. Reading a frame that was not verified
 * throws DeltaError or ViewError at the first bad field; a verified one
 * reads without error. Calls skip what the previous level left unread.
 *
 * A section's implied block (protocol 7) is read with its head: `implied`
 * and the fields after it say what it holds. Its cells are not walked unless
 * given back by [`ImpliedCells.read`] through `imply` (net/held.ts does),
 * then merged with the section's own by increasing cell id.
 */
export class ViewCursor {
  /** The section's shard. */
  shard = 0;
  /** The section's tick (low 32 bits). */
  tick = 0;
  /** The cell's id. */
  cell = 0;
  /** Whether the cell is one of the section's implied cells (`imply`): its one item an empty delta over its period. */
  cellImplied = false;
  /** The item's kind: KIND_FULL, 1..7 (a delta), KIND_FORGET, KIND_SUPPLEMENT, KIND_UNCHANGED. */
  kind = 0;
  /** A delta item's span, ticks (0 for the others). */
  span = 0;
  /** The item's body: bytes[bodyStart, bodyEnd) of the frame's buffer. */
  bodyStart = 0;
  bodyEnd = 0;
  /** The frame's buffer. */
  get bytes(): Uint8Array {
    return this.r.bytes;
  }

  /** Cells of the current section (its own, not the implied ones). */
  cellCount = 0;
  /** Whether the current section has an implied block (form 1 or 2). */
  implied = false;
  /** The implied block's view (Rust's `SectionView`): its key cell, its previous cell (0: none), and the rung of LADDER its periods are at (0..9). */
  viewKey = 0;
  viewPrevious = 0;
  rung = 0;
  /** The implied block's due exponent: periods up to 2^due ticks are due (0..6). */
  due = 0;
  /** The implied block's number of candidates, and its bits: bytes[bitsStart, bitsStart + ceil(impliedCount / 8)) of the frame's buffer. */
  impliedCount = 0;
  bitsStart = 0;

  /** Whether the current section is a reset (no cells, no implied block: every cell of the shard dropped). */
  get isReset(): boolean {
    return this.cellCount === 0 && !this.implied;
  }

  private readonly r = new Reader();
  private cellsLeft = 0;
  private itemsLeft = 0;
  private previousCell = 0;
  /** The kind (1..7) of the empty delta the cell's reference said, or the implied cell is (0: its items follow it). */
  private emptyKind = 0;
  /** Where the section's cells start in the buffer. */
  private cellsStart = 0;
  /** Whether a section of form 1 was read in this frame, and the view it named. */
  private named = false;
  private namedKey = 0;
  private namedPrevious = 0;
  /** A cell of the section whose reference was read, not walked yet (0: none): an implied cell came before it. */
  private pendingCell = 0;
  private pendingEmptyKind = 0;
  private pendingItems = 0;
  /** The implied cells merged into the section's (`imply`), and the next one. */
  private impliedCells: ImpliedCells | null = null;
  private impliedAt = 0;
  /** `markCell`'s reader position and items left. */
  private markPos = 0;
  private markItems = 0;

  /** Starts on bytes[start, end). */
  begin(bytes: Uint8Array, start: number, end: number): void {
    this.r.reset(bytes, start, end);
    this.cellsLeft = 0;
    this.itemsLeft = 0;
    this.pendingCell = 0;
    this.impliedCells = null;
    this.named = false;
  }

  /**
   * Starts on the cells of `other`'s current section, before any of them is
   * walked (its own cells, not the implied ones): `nextCell()` and
   * `nextItem()` walk them, then `nextCell()` is false.
   */
  beginCellsOf(other: ViewCursor): void {
    this.r.reset(other.r.bytes, other.cellsStart, other.r.end);
    this.cellsLeft = other.cellCount;
    this.cellCount = other.cellCount;
    this.itemsLeft = 0;
    this.previousCell = 0;
    this.pendingCell = 0;
    this.impliedCells = null;
    this.implied = false;
  }

  /**
   * Walks `cells` (the current section's implied cells, as
   * [`ImpliedCells.read`] found them, before any of the section's cells is
   * walked) with the section's own cells, by increasing cell id: each an
   * item of its own, an empty delta over its period. For the current
   * section only.
   */
  imply(cells: ImpliedCells): void {
    this.impliedCells = cells;
    this.impliedAt = 0;
  }

  /** Moves to the next section; false at the frame's end. */
  nextSection(): boolean {
    while (this.nextCell());
    const r = this.r;
    this.impliedCells = null;
    if (r.remaining() === 0) return false;
    // Both u32s read here, not by Reader.u32: shard ids and ticks are past
    // V8's small integers, and one returned by a call its caller's optimized
    // code did not inline is boxed (16 bytes each, every frame; Held.apply's
    // callers inline it as they see fit).
    const at = r.take(8);
    const b = r.bytes;
    this.shard = ((b[at] as number) | ((b[at + 1] as number) << 8) | ((b[at + 2] as number) << 16) | ((b[at + 3] as number) << 24)) >>> 0;
    this.tick = ((b[at + 4] as number) | ((b[at + 5] as number) << 8) | ((b[at + 6] as number) << 16) | ((b[at + 7] as number) << 24)) >>> 0;
    const head = r.varint();
    const form = r.low & ((1 << FORM_BITS) - 1);
    // Exact below 2^53; a head past it says more cells than there are bytes either way.
    const count = Math.floor(head / (1 << FORM_BITS));
    if (count > r.remaining()) throw new DeltaError('TooMany');
    if (form === FORM_NAMED || form === FORM_SAME) this.readImplied(form === FORM_NAMED);
    else if (form !== 0) throw new ViewError('Implied');
    else this.implied = false;
    this.cellsLeft = count;
    this.cellCount = count;
    this.cellsStart = r.pos;
    this.previousCell = 0;
    this.pendingCell = 0;
    return true;
  }

  /** Reads a section's implied block (Rust's `read_implied`); `names`: of form 1. */
  private readImplied(names: boolean): void {
    const r = this.r;
    const due = r.u8();
    const k = due & 7;
    const rung = due >> 3;
    if (k > MAX_DUE || rung >= LADDER.length) throw new ViewError('Implied');
    if (names) {
      const key = r.varint();
      if (key === 0 || key > 0xffff_ffff) throw new ViewError('Implied');
      const code = r.varint();
      let previous = 0;
      if (code !== 0) {
        // zigzag(previous - key) + 1: an odd code is a difference of 0 or more. Exact
        // below 2^53; a code past it is a difference past any u32 either way.
        const z = code - 1;
        const d = (r.low & 1) === 1 ? z / 2 : -(z + 1) / 2;
        previous = key + d;
        if (!(previous >= 1 && previous <= 0xffff_ffff)) throw new ViewError('Implied');
      }
      this.named = true;
      this.namedKey = key;
      this.namedPrevious = previous;
    } else if (!this.named) throw new ViewError('Implied');
    this.viewKey = this.namedKey;
    this.viewPrevious = this.namedPrevious;
    this.rung = rung;
    this.due = k;
    const count = r.count(r.remaining() * 8);
    const bytes = Math.ceil(count / 8);
    this.bitsStart = r.take(bytes);
    const used = count % 8;
    if (used !== 0 && (r.bytes[this.bitsStart + bytes - 1] as number) >> used !== 0) throw new ViewError('Implied');
    this.impliedCount = count;
    this.implied = true;
  }

  /** Moves to the section's next cell; false after its last. */
  nextCell(): boolean {
    while (this.nextItem());
    if (this.pendingCell === 0 && this.cellsLeft > 0) this.readReference();
    const implied = this.impliedCells;
    if (implied && this.impliedAt < implied.count) {
      const cell = implied.cells[this.impliedAt] as number;
      if (this.pendingCell === 0 || cell < this.pendingCell) {
        this.impliedAt++;
        this.cell = cell;
        this.cellImplied = true;
        this.emptyKind = implied.kinds[this.impliedAt - 1] as number;
        this.itemsLeft = 1;
        return true;
      }
    }
    if (this.pendingCell === 0) return false;
    this.cell = this.pendingCell;
    this.cellImplied = false;
    this.emptyKind = this.pendingEmptyKind;
    this.itemsLeft = this.pendingItems;
    this.pendingCell = 0;
    return true;
  }

  /** Reads the next cell's reference (and item count) into the pending cell. */
  private readReference(): void {
    this.cellsLeft--;
    const r = this.r;
    const v = r.varint();
    const mode = r.low & ((1 << REF_MODE_BITS) - 1);
    const gap = Math.floor(v / (1 << REF_MODE_BITS));
    if (gap === 0) throw new ViewError('Cells');
    const cell = this.previousCell + gap;
    if (cell > 0xffff_ffff) throw new ViewError('Cells');
    this.previousCell = cell;
    if (mode > REF_SEVERAL) {
      this.pendingEmptyKind = mode - 1;
      this.pendingItems = 1;
    } else {
      const several = mode === REF_SEVERAL;
      const count = several ? r.count(r.remaining()) : 1;
      if (count === 0 || (several && count < 2)) throw new ViewError('Items');
      this.pendingEmptyKind = 0;
      this.pendingItems = count;
    }
    this.pendingCell = cell;
  }

  /**
   * Marks where the cell's items are now (before its first: a lossy client
   * reads them ahead, net/held.ts), for `rewindCell`.
   */
  markCell(): void {
    this.markPos = this.r.pos;
    this.markItems = this.itemsLeft;
  }

  /** Goes back to the mark `markCell` made in this cell. */
  rewindCell(): void {
    this.r.pos = this.markPos;
    this.itemsLeft = this.markItems;
  }

  /** Moves to the cell's next item; false after its last. */
  nextItem(): boolean {
    if (this.itemsLeft === 0) return false;
    this.itemsLeft--;
    const r = this.r;
    if (this.emptyKind > 0) {
      // Said by the reference (or implied): no bytes of its own.
      this.kind = this.emptyKind;
      this.span = 1 << (this.emptyKind - 1);
      this.bodyStart = this.bodyEnd = r.pos;
      return true;
    }
    const tag = r.u8();
    const kind = tag & 0x0f;
    if (kind > KIND_UNCHANGED) throw new ViewError('Kind', kind);
    const code = tag >> 4;
    const len = code === LEN_VARINT ? LEN_VARINT + r.count(r.remaining()) : code;
    if (kind === KIND_FORGET && len > 0) throw new ViewError('ForgetBody');
    this.bodyStart = r.take(len);
    this.bodyEnd = this.bodyStart + len;
    this.kind = kind;
    this.span = kind >= 1 && kind <= 7 ? 1 << (kind - 1) : 0;
    return true;
  }
}

/**
 * A section's implied cells, read against the place's geometry (Rust's
 * `ViewSection::each_implied`): [0, count) of `cells` (increasing) and
 * `kinds` (each cell's item, an empty delta over its period: kind 1..7).
 * The arrays grow when needed and are kept, as is the room the view's cells
 * are found in: reused section after section, reading allocates nothing
 * once they fit the view.
 */
export class ImpliedCells extends CellBytes {
  /** The view's cells, and the room they are found in. */
  private readonly view = new TieredCells();
  private readonly scratch = new ViewScratch();
  /** Walks the section's own cells, for the clash check. */
  private readonly own = new ViewCursor();

  /**
   * Reads the implied cells of `c`'s current section (a frame verified,
   * before any of the section's cells is walked): the candidates of its view
   * on `grid` seen through `stencil` (the Welcome's) whose bit is set. None
   * without an implied block. Null, or ViewError('Implied') when the
   * candidates are not the block's count, or an implied cell is also a cell
   * of the section (`count` is then unspecified: apply none of them).
   */
  read(c: ViewCursor, grid: CellGrid, stencil: Stencil): ViewError | null {
    this.count = 0;
    if (!c.implied) return null;
    const view = this.view;
    viewCells(grid, stencil, c.viewKey, c.viewPrevious, view, this.scratch);
    const periods = LADDER[c.rung];
    if (!periods) return new ViewError('Implied');
    const most = 1 << c.due;
    const bytes = c.bytes;
    const bitsStart = c.bitsStart;
    const bitBytes = Math.ceil(c.impliedCount / 8);
    const own = this.own;
    own.beginCellsOf(c);
    let next = own.nextCell() ? own.cell : 0;
    let clash = false;
    let i = 0;
    for (let k = 0; k < view.count; k++) {
      const period = periods[view.tiers[k] as 0 | 1 | 2 | 3];
      if (period > most) continue;
      const byte = i >> 3;
      if (byte < bitBytes && (((bytes[bitsStart + byte] as number) >> (i & 7)) & 1) === 1) {
        const cell = view.cells[k] as number;
        while (next !== 0 && next < cell) next = own.nextCell() ? own.cell : 0;
        if (next === cell) clash = true;
        this.push(cell, 1 + Math.min(6, 31 - Math.clz32(period)));
      }
      i++;
    }
    if (i !== c.impliedCount || clash) return new ViewError('Implied');
    return null;
  }

  /** Each implied cell's item kind: an empty delta over 2^(kind-1) ticks. */
  get kinds(): Uint8Array {
    return this.bytes;
  }
}

/** The cursor verification walks with (reading is synchronous, so one is enough). */
const verifier = new ViewCursor();

/**
 * Verifies the view frame bytes[start, end) end to end (every section, cell
 * and item within them, cells increasing, kinds known, lengths exact):
 * null when it is valid, else why not (Rust's `ViewFrame::parse`). Throws
 * RangeError if [start, end) is not within `bytes` (the caller's mistake).
 */
export function verifyViewFrame(bytes: Uint8Array, start = 0, end = bytes.length): ViewError | null {
  if (!(start >= 0 && end <= bytes.length)) throw new RangeError(`a view frame at [${start}, ${end}) of ${bytes.length} bytes`);
  if (start >= end) return new ViewError('EmptySection');
  try {
    verifier.begin(bytes, start, end);
    while (verifier.nextSection());
    return null;
  } catch (e) {
    return asViewError(e);
  }
}

/** 2^32: the period of a section's tick on the wire. */
export const TICK_WRAP = 2 ** 32;

/**
 * The full tick whose low 32 bits are `low`, the one nearest `near` (a full
 * tick; Rust's `unwrap_tick`, ties to the earlier). Exact while ticks stay
 * below 2^53.
 */
export function unwrapTick(low: number, near: number): number {
  const base = near - (near % TICK_WRAP);
  let best = base + low;
  let bestGap = Math.abs(best - near);
  const below = base - TICK_WRAP + low;
  if (below >= 0 && Math.abs(below - near) <= bestGap) {
    best = below;
    bestGap = Math.abs(below - near);
  }
  const above = base + TICK_WRAP + low;
  if (Math.abs(above - near) < bestGap) best = above;
  return best;
}

/**
 * The wall time (ms since the Unix epoch) of a section's tick `low` (its low
 * 32 bits): ticks are whole periods of 1 / `tickHz` s since the epoch, so a
 * tick's time is its number times the period, rounded down; `nearMs` (a
 * recent server time, such as the Welcome's) picks the wrap (Rust's
 * `tick_time_ms`). Exact while `nearMs * tickHz` stays below 2^53 (any
 * tick rate up to 5 kHz).
 */
export function tickTimeMs(low: number, tickHz: number, nearMs: number): number {
  const hz = Math.max(1, tickHz);
  const scaled = nearMs * hz;
  const tick = unwrapTick(low, (scaled - (scaled % 1000)) / 1000);
  const ms = tick * 1000;
  return (ms - (ms % hz)) / hz;
}
