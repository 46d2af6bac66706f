// Protocol 6's view frames in the browser: the bytes of ServerMessage.view,
// one websocket message a tick, read with the rules of schema/src/view.rs
// (the same errors, held to schema/fixtures/delta.json).
//
//   frame   := section+
//   section := shard (u32 le) tick (u32 le, the low bits) cells (varint) cell*
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
//
// Cells of a section increase (the first's "previous" is 0); a cell's items
// apply in order (net/held.ts). A frame is verified end to end before any of
// it is applied ([`verifyViewFrame`]); the cursor ([`ViewCursor`]) then walks
// it section by section, cell by cell, item by item, with no allocation.
// Both read bytes[start, end) of a larger buffer (the websocket message) and
// never a byte outside it.

import { DeltaError, Reader } from './delta.js';

/** Item kinds: a full form, deltas 1..7, a forget, a supplement (schema/src/view.rs's `ItemKind`; 10 and up are unknown). */
export const KIND_FULL = 0;
export const KIND_FORGET = 8;
export const KIND_SUPPLEMENT = 9;
/** A tag's length nibble saying a varint length follows. */
const LEN_VARINT = 15;
/** Bits of a cell reference saying what follows it (the rest is the gap). */
const REF_MODE_BITS = 3;
/** A reference's mode: several items follow, their count first (0: one item). */
const REF_SEVERAL = 1;

/** Why bytes are not a valid view frame: the names of Rust's `ViewError`. */
export type ViewErrorKind = 'Bytes' | 'Kind' | 'ForgetBody' | 'Cells' | 'Items' | 'EmptySection';

const VIEW_TEXT: Record<ViewErrorKind, string> = {
  Bytes: 'a field is malformed or cut short',
  Kind: 'unknown item kind',
  ForgetBody: 'a forget with a body',
  Cells: 'cells out of order',
  Items: 'bad item count',
  EmptySection: 'empty frame',
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
 */
export class ViewCursor {
  /** The section's shard. */
  shard = 0;
  /** The section's tick (low 32 bits). */
  tick = 0;
  /** The cell's id. */
  cell = 0;
  /** The item's kind: KIND_FULL, 1..7 (a delta), KIND_FORGET, KIND_SUPPLEMENT. */
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

  private readonly r = new Reader();
  private cellsLeft = 0;
  private itemsLeft = 0;
  private previousCell = 0;
  /** The kind (1..6) of the empty delta the cell's reference said (0: its items follow it). */
  private emptyKind = 0;

  /** Starts on bytes[start, end). */
  begin(bytes: Uint8Array, start: number, end: number): void {
    this.r.reset(bytes, start, end);
    this.cellsLeft = 0;
    this.itemsLeft = 0;
  }

  /** Cells of the current section: none is a reset (every cell of the shard dropped). */
  cellCount = 0;

  /** Moves to the next section; false at the frame's end. */
  nextSection(): boolean {
    while (this.nextCell());
    const r = this.r;
    if (r.remaining() === 0) return false;
    // Both u32s read here, not by Reader.u32: shard ids and ticks are past
    // V8's small integers, and one returned by a call its caller's optimized
    // code did not inline is boxed (16 bytes each, every frame; Held.apply's
    // callers inline it as they see fit).
    const at = r.take(8);
    const b = r.bytes;
    this.shard = ((b[at] as number) | ((b[at + 1] as number) << 8) | ((b[at + 2] as number) << 16) | ((b[at + 3] as number) << 24)) >>> 0;
    this.tick = ((b[at + 4] as number) | ((b[at + 5] as number) << 8) | ((b[at + 6] as number) << 16) | ((b[at + 7] as number) << 24)) >>> 0;
    this.cellsLeft = r.count(r.remaining());
    this.cellCount = this.cellsLeft;
    this.previousCell = 0;
    return true;
  }

  /** Moves to the section's next cell; false after its last. */
  nextCell(): boolean {
    while (this.nextItem());
    if (this.cellsLeft === 0) return false;
    this.cellsLeft--;
    const r = this.r;
    const v = r.varint();
    const mode = r.low & ((1 << REF_MODE_BITS) - 1);
    const gap = Math.floor(v / (1 << REF_MODE_BITS));
    if (gap === 0) throw new ViewError('Cells');
    const cell = this.previousCell + gap;
    if (cell > 0xffff_ffff) throw new ViewError('Cells');
    this.cell = cell;
    this.previousCell = cell;
    if (mode > REF_SEVERAL) {
      this.emptyKind = mode - 1;
      this.itemsLeft = 1;
      return true;
    }
    this.emptyKind = 0;
    const several = mode === REF_SEVERAL;
    const count = several ? r.count(r.remaining()) : 1;
    if (count === 0 || (several && count < 2)) throw new ViewError('Items');
    this.itemsLeft = count;
    return true;
  }

  /** Moves to the cell's next item; false after its last. */
  nextItem(): boolean {
    if (this.itemsLeft === 0) return false;
    this.itemsLeft--;
    const r = this.r;
    if (this.emptyKind > 0) {
      // Said by the reference: no bytes of its own.
      this.kind = this.emptyKind;
      this.span = 1 << (this.emptyKind - 1);
      this.bodyStart = this.bodyEnd = r.pos;
      return true;
    }
    const tag = r.u8();
    const kind = tag & 0x0f;
    if (kind > KIND_SUPPLEMENT) throw new ViewError('Kind', kind);
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
