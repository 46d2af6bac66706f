// Shared delta frames (protocol 4) in the browser: a cell's players as a
// full form (every player's entry) or a delta against the same cell's state
// some ticks before (only what the movement rule did not predict). The
// mirror of schema/src/delta.rs, rule for rule and error for error, held to
// the same bytes by schema/fixtures/delta.json (net/delta.test.ts) and fed
// the same mutants as Rust by test/delta-differential.test.ts.
//
// A cell's state is its players sorted by id, kept in column arrays
// ([`Entries`]) that are reused frame after frame: reading a delta of walkers
// allocates nothing. A delta over `span` ticks (a power of two, 1 to 64)
// holds, in order:
// - leaves: base players that are gone, as gaps between their base indices;
// - changes: players that stayed whose heading or flags changed, or whose
//   position is not the prediction: the gap to its base index shifted left 3
//   with 3 bits saying what follows (heading byte, flags byte, a position
//   residual as two zigzag varints, x then y);
// - enters: new players: the gap from the previous enter's id (the first's is
//   its id), x and y (u16 little-endian), heading, flags.
// The counts come first in one byte (leaves 0-3 in bits 0-1, changes 0-7 in
// bits 2-4, enters 0-6 in bits 5-7), or the escape 0b111_00000 and the three
// counts as varints; an empty delta says every player that stayed is where
// the rule puts it. A player that stayed takes its new heading and flags,
// walks `span` ticks with them (net/motion.ts), then adds its residual.
// A full form is each player as an enter is written, up to the end of its
// item (protocol 8: no count; the item's length bounds it).
//
// Varints are LEB128 of up to 64 bits. JavaScript numbers hold integers
// exactly below 2^53; every varint the rules accept is far below that (a
// count, an index, an id, a residual), and a larger one is read as a number
// at least 2^53 (inexact), which every limit refuses just as Rust refuses
// the exact value. The bits a record packs into a varint's low end are read
// from its first byte, so they are exact at any size.

import type { Motion } from './motion.js';

/** The longest span of a delta, ticks. */
export const MAX_SPAN = 64;
/** Bytes of a player in a full form or an enter, after its id's varint. */
export const ENTRY_TAIL_BYTES = 6;
/** The largest player id (32 bits). */
const MAX_ID = 0xffff_ffff;
/** The largest quantized coordinate. */
const Q_MAX = 65535;

/** A change record's bits: what follows its index. */
const HEADING = 1;
const FLAGS = 2;
const POSITION = 4;
/** The counts byte's escape: the three counts follow as varints. */
const ESCAPE = 7 << 5;

/** Why bytes are not a valid full form or delta: the names of Rust's `DeltaError`. */
export type DeltaErrorKind =
  | 'Truncated'
  | 'Varint'
  | 'Trailing'
  | 'Ids'
  | 'Index'
  | 'Change'
  | 'Position'
  | 'Duplicate'
  | 'Span'
  | 'TooMany'
  | 'Counts'
  | 'Supplement'
  | 'Unchanged';

/** What each kind means (Rust's messages; Trailing and Span lead with their value). */
const DELTA_TEXT: Record<DeltaErrorKind, string> = {
  Truncated: 'truncated',
  Varint: 'bad varint',
  Trailing: 'trailing bytes',
  Ids: 'ids out of order',
  Index: 'index out of range',
  Change: 'bad change record',
  Position: 'position off the grid',
  Duplicate: 'entered twice',
  Span: 'bad span',
  TooMany: 'too many players',
  Counts: 'bad counts',
  Supplement: 'a supplement not after a delta',
  Unchanged: 'an unchanged item not before a delta',
};

/** A malformed or truncated full form or delta, or one that does not fit its base. */
export class DeltaError extends Error {
  constructor(
    readonly kind: DeltaErrorKind,
    /** The trailing bytes (Trailing) or the span (Span); -1 for the others. */
    readonly value = -1,
  ) {
    super(kind === 'Trailing' ? `${value} trailing bytes` : kind === 'Span' ? `bad span ${value}` : DELTA_TEXT[kind]);
    this.name = 'DeltaError';
  }

  /** As Rust's Debug prints the error: `Index`, `Trailing(1)`, `Span(3)`. */
  get label(): string {
    return this.value >= 0 ? `${this.kind}(${this.value})` : this.kind;
  }
}

const EMPTY_BYTES = new Uint8Array(0);

/**
 * A cursor over bytes[pos, end) that refuses to read past `end`: every read
 * past it throws DeltaError('Truncated'). One is reused for every frame.
 */
export class Reader {
  bytes: Uint8Array = EMPTY_BYTES;
  pos = 0;
  end = 0;
  /** The low 7 bits of the last varint read (exact at any size). */
  low = 0;

  /** Reads bytes[start, end) from now on (0 <= start <= end <= bytes.length). */
  reset(bytes: Uint8Array, start: number, end: number): this {
    this.bytes = bytes;
    this.pos = start;
    this.end = end;
    return this;
  }

  /** Bytes not read yet. */
  remaining(): number {
    return this.end - this.pos;
  }

  /** One byte. */
  u8(): number {
    if (this.pos >= this.end) throw new DeltaError('Truncated');
    return this.bytes[this.pos++] as number;
  }

  /** A little-endian u16. */
  u16(): number {
    if (this.end - this.pos < 2) throw new DeltaError('Truncated');
    const b = this.bytes;
    const p = this.pos;
    this.pos = p + 2;
    return (b[p] as number) | ((b[p + 1] as number) << 8);
  }

  /** A little-endian u32 (unsigned). */
  u32(): number {
    if (this.end - this.pos < 4) throw new DeltaError('Truncated');
    const b = this.bytes;
    const p = this.pos;
    this.pos = p + 4;
    return ((b[p] as number) | ((b[p + 1] as number) << 8) | ((b[p + 2] as number) << 16) | ((b[p + 3] as number) << 24)) >>> 0;
  }

  /**
   * A LEB128 varint of at most 64 bits (at most 10 bytes, the 10th at most
   * 1): exact below 2^53, at least 2^53 otherwise (see the module comment).
   */
  varint(): number {
    const first = this.u8();
    this.low = first & 0x7f;
    if (first < 0x80) return first;
    // Up to 28 bits in int32 arithmetic (small integers stay unboxed), then
    // in doubles.
    let v = first & 0x7f;
    for (let shift = 7; shift < 28; shift += 7) {
      const b = this.u8();
      v |= (b & 0x7f) << shift;
      if (b < 0x80) return v;
    }
    let scale = 0x1000_0000;
    for (let shift = 28; shift < 70; shift += 7) {
      const b = this.u8();
      if (shift === 63 && b > 1) throw new DeltaError('Varint');
      v += (b & 0x7f) * scale;
      if (b < 0x80) return v;
      scale *= 128;
    }
    throw new DeltaError('Varint');
  }

  /** A varint that must be at most `max`, else DeltaError('TooMany'). */
  count(max: number): number {
    const v = this.varint();
    if (v > max) throw new DeltaError('TooMany');
    return v;
  }

  /** Skips the next `n` bytes; returns where they start. */
  take(n: number): number {
    if (n > this.end - this.pos) throw new DeltaError('Truncated');
    const at = this.pos;
    this.pos = at + n;
    return at;
  }

  /** Throws DeltaError('Trailing') unless every byte was read. */
  finish(): void {
    if (this.pos !== this.end) throw new DeltaError('Trailing', this.end - this.pos);
  }
}

/**
 * A cell's players in columns, sorted by id: `count` players in index
 * [0, count) of each array (quantized position, heading 0..255, flags as on
 * the wire). The arrays grow when needed and are kept: reused frame after
 * frame, they stop growing once they fit the cell.
 */
export class Entries {
  count = 0;
  ids: Uint32Array;
  x: Uint16Array;
  y: Uint16Array;
  heading: Uint8Array;
  flags: Uint8Array;

  constructor(capacity = 0) {
    this.ids = new Uint32Array(capacity);
    this.x = new Uint16Array(capacity);
    this.y = new Uint16Array(capacity);
    this.heading = new Uint8Array(capacity);
    this.flags = new Uint8Array(capacity);
  }

  /** Room for `n` players, keeping the first `count`. */
  reserve(n: number): void {
    if (n > this.ids.length) this.grow(Math.max(n, 2 * this.ids.length, 8));
  }

  /** New arrays of `cap` players, the first `count` copied (no closure: a call that does not grow allocates nothing). */
  private grow(cap: number): void {
    const n = this.count;
    const ids = new Uint32Array(cap);
    ids.set(this.ids.subarray(0, n));
    this.ids = ids;
    const x = new Uint16Array(cap);
    x.set(this.x.subarray(0, n));
    this.x = x;
    const y = new Uint16Array(cap);
    y.set(this.y.subarray(0, n));
    this.y = y;
    const heading = new Uint8Array(cap);
    heading.set(this.heading.subarray(0, n));
    this.heading = heading;
    const flags = new Uint8Array(cap);
    flags.set(this.flags.subarray(0, n));
    this.flags = flags;
  }

  /** Appends a player (room reserved). */
  push(id: number, x: number, y: number, heading: number, flags: number): void {
    const i = this.count++;
    this.ids[i] = id;
    this.x[i] = x;
    this.y[i] = y;
    this.heading[i] = heading;
    this.flags[i] = flags;
  }
}

/** No players: the state of a cell never held. */
export const NO_ENTRIES: Readonly<Entries> = new Entries();

/**
 * Reads a full form from `r` (up to its end) into `out` (emptied first): at
 * most `maxPlayers`. Throws DeltaError for a malformed or truncated form;
 * `out` is then unspecified.
 */
export function decodeFull(r: Reader, maxPlayers: number, out: Entries): void {
  out.count = 0;
  // Each player takes at least 7 bytes.
  out.reserve(Math.min(maxPlayers, Math.floor(r.remaining() / (1 + ENTRY_TAIL_BYTES))));
  let last = -1;
  while (r.remaining() > 0) {
    if (out.count === maxPlayers) throw new DeltaError('TooMany');
    last = readEntry(r, last, out);
  }
}

/** Reads one player of a full form or an enter into `out`, its id after `last` (-1: the first); returns its id. */
function readEntry(r: Reader, last: number, out: Entries): number {
  const gap = r.varint();
  if (last >= 0 && gap === 0) throw new DeltaError('Ids');
  const id = last < 0 ? gap : last + gap;
  if (id > MAX_ID) throw new DeltaError('Ids');
  const x = r.u16();
  const y = r.u16();
  const heading = r.u8();
  out.push(id, x, y, heading, r.u8());
  return id;
}

/** The signed value of a zigzag varint (inexact, and far off the grid, past 2^53). */
function unzigzag(v: number): number {
  if (v < 0x8000_0000) return (v >>> 1) ^ -(v & 1);
  return v % 2 === 1 ? -(v + 1) / 2 : v / 2;
}

/** Which base players a delta's leaves marked (reused; grows). */
let gone = new Uint8Array(64);
/** The enters while they are merged among the players that stayed (reused). */
const entering = new Entries(16);
/** A change record's base index (-1: none) and bits, as read by readChange. */
let changeAt = -1;
let changeWhat = 0;

/**
 * Applies the delta in `r` (up to its end) over `span` ticks to `base`
 * (sorted by id) into `out` (emptied first; not `base`), `motion` predicting
 * the players that stayed; the result holds at most `maxPlayers`. Throws
 * DeltaError for a malformed or truncated delta, or one that does not fit
 * `base` (an index past it, a leaving player changed, an enter of someone
 * there, a position off the grid); `out` is then unspecified.
 */
export function applyDelta(base: Readonly<Entries>, r: Reader, span: number, motion: Motion, maxPlayers: number, out: Entries): void {
  if (!(span >= 1 && span <= MAX_SPAN && (span & (span - 1)) === 0)) throw new DeltaError('Span', span);
  out.count = 0;
  const n = base.count;
  let leaves = 0;
  let changes = 0;
  let enters = 0;
  if (r.remaining() > 0) {
    const b = r.u8();
    if (b === ESCAPE) {
      const left = r.remaining();
      leaves = r.count(n);
      changes = r.count(n);
      enters = r.count(Math.floor(left / (1 + ENTRY_TAIL_BYTES)));
    } else if (b >> 5 === 7) {
      throw new DeltaError('Counts');
    } else {
      leaves = b & 3;
      changes = (b >> 2) & 7;
      enters = b >> 5;
    }
  }
  if (leaves > n || changes > n - leaves) throw new DeltaError('Index');
  if (leaves > 0) markLeaves(r, leaves, n);
  out.reserve(n - leaves + enters);
  changeAt = -1;
  if (changes > 0) readChange(r, -1, n);
  let changesLeft = changes;
  // The hot loop (every player that stayed, every frame): columns in locals.
  const { ids, x: bx, y: by, heading: bh, flags: bf } = base;
  const { ids: oi, x: ox, y: oy, heading: oh, flags: of } = out;
  let o = 0;
  for (let i = 0; i < n; i++) {
    const changed = changeAt === i;
    if (leaves > 0 && gone[i] === 1) {
      if (changed) throw new DeltaError('Change');
      continue;
    }
    let heading = bh[i] as number;
    let flags = bf[i] as number;
    let rx = 0;
    let ry = 0;
    if (changed) {
      const what = changeWhat;
      if (what & HEADING) heading = r.u8();
      if (what & FLAGS) flags = r.u8();
      if (what & POSITION) {
        rx = unzigzag(r.varint());
        ry = unzigzag(r.varint());
      }
      changesLeft--;
      if (changesLeft > 0) readChange(r, i, n);
      else changeAt = -1;
    }
    const moving = (flags & 1) !== 0;
    const x = motion.advanceX(bx[i] as number, heading, moving, span) + rx;
    const y = motion.advanceY(by[i] as number, heading, moving, span) + ry;
    if (!(x >= 0 && x <= Q_MAX && y >= 0 && y <= Q_MAX)) throw new DeltaError('Position');
    oi[o] = ids[i] as number;
    ox[o] = x;
    oy[o] = y;
    oh[o] = heading;
    of[o] = flags;
    o++;
  }
  out.count = o;
  if (changeAt >= 0 || changesLeft > 0) throw new DeltaError('Index');
  if (out.count + enters > maxPlayers) throw new DeltaError('TooMany');
  const stayed = out.count;
  let last = -1;
  for (let k = 0; k < enters; k++) last = readEntry(r, last, out);
  r.finish();
  if (enters > 0) mergeEnters(out, stayed);
}

/** Reads `leaves` leave records of a base of `n` players into `gone`. */
function markLeaves(r: Reader, leaves: number, n: number): void {
  if (gone.length < n) gone = new Uint8Array(Math.max(n, 2 * gone.length));
  gone.fill(0, 0, n);
  let index = 0;
  for (let k = 0; k < leaves; k++) {
    const gap = r.count(n);
    if (k > 0 && gap === 0) throw new DeltaError('Index');
    index += gap;
    if (index >= n) throw new DeltaError('Index');
    gone[index] = 1;
  }
}

/** Reads the next change record's base index (after `previous`, -1 for the first) and bits into changeAt/changeWhat. */
function readChange(r: Reader, previous: number, n: number): void {
  const v = r.varint();
  const what = r.low & 7;
  const gap = v < 0x8000_0000 ? v >>> 3 : Math.floor(v / 8);
  if (what === 0 || (previous >= 0 && gap === 0)) throw new DeltaError('Change');
  const index = gap + (previous < 0 ? 0 : previous);
  if (index >= n) throw new DeltaError('Index');
  changeAt = index;
  changeWhat = what;
}

/**
 * Sorts the players that stayed (`out[0, stayed)`, sorted) and the enters
 * after them (sorted) into one list by id; an id in both is DeltaError('Duplicate').
 */
function mergeEnters(out: Entries, stayed: number): void {
  if (stayed === 0 || (out.ids[stayed - 1] as number) < (out.ids[stayed] as number)) return;
  const e = entering;
  e.count = 0;
  e.reserve(out.count - stayed);
  for (let k = stayed; k < out.count; k++) {
    e.push(out.ids[k] as number, out.x[k] as number, out.y[k] as number, out.heading[k] as number, out.flags[k] as number);
  }
  // From the back: the larger id of the two heads goes last.
  let i = stayed - 1;
  let j = e.count - 1;
  for (let k = out.count - 1; j >= 0; k--) {
    const a = i >= 0 ? (out.ids[i] as number) : -1;
    const b = e.ids[j] as number;
    if (a === b) throw new DeltaError('Duplicate');
    if (a > b) {
      out.ids[k] = a;
      out.x[k] = out.x[i] as number;
      out.y[k] = out.y[i] as number;
      out.heading[k] = out.heading[i] as number;
      out.flags[k] = out.flags[i] as number;
      i--;
    } else {
      out.ids[k] = b;
      out.x[k] = e.x[j] as number;
      out.y[k] = e.y[j] as number;
      out.heading[k] = e.heading[j] as number;
      out.flags[k] = e.flags[j] as number;
      j--;
    }
  }
}
