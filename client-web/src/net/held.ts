// What the page holds of the cells protocol 7's view frames told it: each
// (shard, cell)'s players as of the last item applied, and the rule that
// applies a frame (schema/src/held.rs, held to schema/fixtures/delta.json).
// A cell never told is empty: a delta applies to the empty state then
// (players entering a cell that was empty); a full form replaces the cell; a
// forget drops it (the cell left the view); a supplement adds its players to
// what the delta just before it left. When the Welcome gives a cell
// expiry (a session whose frames may be lost: its forgets may all be lost, yet
// every cell of its view is sent whole more often than that), a cell sent
// nothing for that long is dropped as if forgotten (schema/src/held.rs's
// `expiring`).
//
// Handoff (protocol 6, schema/src/held.rs's module docs): with a grid
// ([`Held.handingOff`], the Welcome's area of interest), a delta of a cell
// keeps a player that walked into another cell of the same shard over its
// span, and the cell it went to has no enter of it. After a delta applies,
// its cell's players whose quantized position is in another cell
// (net/grid.ts) are taken out of it; when the cell's items in the section
// are that one delta and supplements, and the cell the player went to is
// advanced the same way over the same span in the same section, the player
// is put there (in id order) once the section's items have all applied;
// otherwise it is dropped, and the server sends it in a supplement of every
// cell it belongs to. Without a grid (or in cell 0) nothing moves.
//
// Implied cells (protocol 7, net/view.ts): with the place's stencil too
// ([`Held.seeing`]), a section's implied cells are read against its view and
// applied with its own cells, by increasing cell id, each as if the section
// had it with one item, an empty delta over its period (so they advance and
// hand off like any other). A section with implied cells is refused whole
// (ViewError 'Implied', before any of its items applies) without a grid and
// a stencil, or when its bits do not fit the candidates of its view.
//
// Lost frames (schema/src/held.rs's `Delivery::Lossy`, [`Held.delivered`]):
// a client whose frames are datagrams, which may be lost or come out of
// order, applies a cell's items only onto the state they start from. Items
// whose first (after an unchanged item) is a delta, over spans adding up to
// s, at section tick t, start from b = t - s, and the cell had not changed
// for the unchanged item's u ticks before b (0 without one): a cell held as
// of tick h takes them when b - u <= h < t. Held as of t or later they are
// an older frame's and skipped; held earlier, or not held, a change was
// missed: the cell stays as it is and is reported 'broken' (the page asks
// for a resync). An unchanged item of UNCHANGED_EVER (the cell was empty
// before b) applies to the empty cell, held or not. A chain of deltas has
// later bases inside it: a cell held as of one of them or after (before t)
// takes the deltas from the last such base on, passing over those before
// and their supplements (a server repeats a change's delta in the cell's
// next chain, so a client that lost it needs no resync). Whole items (a
// full form or a forget first) apply unless the cell is held as of a later
// tick. Walkers are never handed off (the server sends each in a
// supplement). Ticks compare across the 32-bit wrap.
//
// Applying a frame allocates nothing once its cells are known: each cell
// keeps two column sets (what it holds, and the one the next item is written
// into, swapped when the item applies), forgotten cells are kept for reuse,
// the handoff's scratch is kept (net/handoff.ts), and the updates a frame
// made are reused objects.

import { headingRadians } from './entries.js';
import { DeltaError, Entries, NO_ENTRIES, Reader, applyDelta, decodeFull } from './delta.js';
import type { CellGrid } from './grid.js';
import { SectionHandoff, mergeEntries } from './handoff.js';
import type { Motion } from './motion.js';
import type { Bounds, PlayerColumns } from './messages.js';
import type { Stencil } from './stencil.js';
import {
  ImpliedCells,
  KIND_FORGET,
  KIND_FULL,
  KIND_SUPPLEMENT,
  KIND_UNCHANGED,
  ViewCursor,
  ViewError,
  verifyViewFrame,
} from './view.js';

/** Least time between two scans for expired cells, ms (Rust's `EXPIRY_SCAN_MS`). */
export const EXPIRY_SCAN_MS = 1000;

/**
 * How a client's frames reach it (Rust's `held::Delivery`): 'in-order' (a
 * websocket, a WebTransport stream: a delta applies to what is held) or
 * 'lossy' (WebTransport datagrams granted Capability.DatagramDeltas: the
 * lossy rule, see the module comment).
 */
export type Delivery = 'in-order' | 'lossy';

/** An unchanged item's ticks saying the cell was empty before the delta's base, with no stream (Rust's `view::UNCHANGED_EVER`). */
export const UNCHANGED_EVER = 0xffff_ffff;

/** What a lossy client does with a cell's items (Rust's `held::Admit`): applies them (passing over `heldDeltas` of the chain's first deltas). */
const enum Admit {
  Apply,
  /** An older frame's: the cell is held as of its tick or later. */
  Skip,
  /** A change was missed. */
  Broken,
}

/** A cell's items start whole (a full form or a forget first): no base to hold. */
const WHOLE = -1;

/** One cell as held. */
export class HeldCell {
  /** The low 32 bits of the tick of the section that last changed it. */
  tick = 0;
  /** The local time an item last applied to it, ms (for the cell expiry). */
  heardMs = 0;
  /** The map of its shard's held cells it is in (null: not held). */
  home: Map<number, HeldCell> | null = null;
  /** Its index in the list of every held cell (-1: not held). */
  at = -1;
  /** Its players, sorted by id. */
  entries = new Entries();
  /** Where the next item is written; swapped with `entries` when it applies. */
  spare = new Entries();

  constructor(
    public shard: number,
    public cell: number,
  ) {}

  /** Players in the cell. */
  get playerCount(): number {
    return this.entries.count;
  }

  /**
   * Copies the players into `out[0, playerCount)`: ids, positions in world
   * units over `b` (the Welcome's bounds), headings in radians, flags as on
   * the wire. The arrays of `out` must hold `playerCount` players.
   */
  readPlayers(out: PlayerColumns, b: Bounds): void {
    const e = this.entries;
    const sx = (b.maxX - b.minX) / 65535;
    const sy = (b.maxY - b.minY) / 65535;
    for (let i = 0; i < e.count; i++) {
      out.ids[i] = e.ids[i] as number;
      out.x[i] = b.minX + (e.x[i] as number) * sx;
      out.y[i] = b.minY + (e.y[i] as number) * sy;
      out.heading[i] = headingRadians(e.heading[i] as number);
      out.flags[i] = e.flags[i] as number;
    }
  }
}

/** What one item of a frame did to a cell (Rust's `held::Update`). */
export class Update {
  /**
   * 'cell': the cell now holds new players at `tick`; 'forgot': it left the
   * view and was dropped; 'reset': every cell of the shard was dropped (a
   * resync, or the shard left; `cell` is 0); 'broken': a lossy client's
   * delta of the cell did not start from what it holds (a frame lost), the
   * cell stays as it was and the page asks for a resync.
   */
  kind: 'cell' | 'forgot' | 'reset' | 'broken' = 'cell';
  shard = 0;
  cell = 0;
  /** The section's tick (low 32 bits). */
  tick = 0;
  /**
   * 'cell': the item's span, ticks: a delta from the state the cell held
   * `span` ticks before `tick` (so its players that stayed were where they
   * were held until then); 0 for a full form and a supplement (and
   * 'forgot', 'reset').
   */
  span = 0;
  /** 'cell': the item was a supplement (players added after its cell's delta, which keeps its span). */
  adds = false;
  /**
   * The cell as held after the frame ('cell'), so the page reads it without
   * a lookup; null for 'forgot', 'reset' and 'broken', and for a cell the frame dropped afterwards.
   */
  held: HeldCell | null = null;
}

/** One shard's held cells. */
interface ShardCells {
  readonly shard: number;
  readonly cells: Map<number, HeldCell>;
}

/**
 * Why a frame could not be applied: its bytes ('frame': nothing was
 * applied; or a section's implied cells that do not read against the
 * place's geometry, ViewError 'Implied': nothing of that section was
 * applied, the frame's earlier sections stay applied), or an item that does
 * not fit what is held ('item': the frame's earlier items stay applied). A
 * client resyncs (reconnects) rather than draw on.
 */
export class HeldError {
  constructor(
    readonly kind: 'frame' | 'item',
    readonly error: ViewError | DeltaError,
    /** The item's cell ('item'). */
    readonly shard = 0,
    readonly cell = 0,
  ) {}

  /** What went wrong, for a log line. */
  get message(): string {
    return this.kind === 'frame' ? this.error.message : `cell ${this.cell} of shard ${this.shard}: ${this.error.message}`;
  }
}

/**
 * Every cell the page holds, and the rule deltas predict with.
 *
 * Shard ids and ticks are u32s, most of them past V8's small integers (shard
 * ids are random, ticks follow the wall clock): they are compared and
 * stored, never used as a Map key or returned, so that reading them
 * allocates nothing. Shards are found by a scan (a view spans a few).
 */
export class Held {
  private readonly shards: ShardCells[] = [];
  /** Forgotten cells, kept for reuse with their arrays. */
  private readonly free: HeldCell[] = [];
  /** Every held cell, in no order (the expiry scans it: a Map's iterator would allocate). */
  private readonly all: HeldCell[] = [];
  private readonly cursor = new ViewCursor();
  private readonly reader = new Reader();
  private readonly updates: Update[] = [];
  /** The arrival time of the frame being applied, ms. */
  private nowMs = 0;
  private updated = 0;
  /** Local time of the last scan for expired cells, ms. */
  private scannedMs = -Infinity;
  /** The place's grid: players that walked out of a cell are handed off (null: nothing moves). */
  private grid: CellGrid | null = null;
  /** The place's stencil: a section's implied cells are read with it and the grid (null: a section with implied cells is refused). */
  private stencil: Stencil | null = null;
  /** The section's implied cells (scratch). */
  private readonly impliedCells = new ImpliedCells();
  /** The section's handoff scratch. */
  private readonly handoff = new SectionHandoff();
  /** A supplement's players (scratch). */
  private readonly sup = new Entries();
  /** The cursor's item's index in its cell (0 first). */
  private itemIndex = 0;
  /** Of the cell's chain of deltas, how many first ones a lossy client holds already (passed over with their supplements). */
  private heldDeltas = 0;
  /** Whether the cell's last item applied was a delta or a supplement (a supplement may follow). */
  private afterDelta = false;
  /** How frames reach this client (`delivered`). */
  private deliveredBy: Delivery = 'in-order';

  /**
   * Nothing held yet; deltas predict with `motion` (the Welcome's world,
   * speed and tick rate); a cell holds at most `maxPlayers`; a cell sent
   * nothing for longer than `expiryMs` is dropped (the Welcome's
   * cell_expiry_ms; 0: held until forgotten).
   */
  constructor(
    readonly motion: Motion,
    readonly maxPlayers: number,
    readonly expiryMs = 0,
  ) {}

  /**
   * Hands players off between the cells of `grid` from now on (null: not;
   * schema/src/held.rs's `Held::handing_off`): the page passes
   * `CellGrid.of(welcome.bounds, welcome.aoi.cellSize)` when the Welcome
   * has an area of interest. Returns this.
   */
  handingOff(grid: CellGrid | null): this {
    this.grid = grid;
    return this;
  }

  /**
   * Reads a section's implied cells with `stencil` (null: refuses them;
   * schema/src/held.rs's `Held::seeing`) on the grid of `handingOff`: the
   * page passes `Stencil.ofView(aoi.wireViewRadius, aoi.cellSize)` when the
   * Welcome has an area of interest. Returns this.
   */
  seeing(stencil: Stencil | null): this {
    this.stencil = stencil;
    return this;
  }

  /**
   * Holds frames by `delivery` from now on (schema/src/held.rs's
   * `Held::delivered`; 'in-order' by default): the page passes 'lossy' when
   * its Welcome granted Capability.DatagramDeltas. Returns this.
   */
  delivered(delivery: Delivery): this {
    this.deliveredBy = delivery;
    return this;
  }

  /** How frames reach this client. */
  get delivery(): Delivery {
    return this.deliveredBy;
  }

  /**
   * Verifies the view frame bytes[start, end) (ServerMessage.view) and applies
   * it item by item: null when every item applied, else why not (see
   * [`HeldError`]). The updates it made are `update(0..updateCount)`. With an
   * expiry, `nowMs` is when the frame arrived (local ms, never going back):
   * first the cells sent nothing for longer than the expiry are dropped, each
   * a 'forgot' update at the tick it was held at (scanned at most every
   * EXPIRY_SCAN_MS). Throws RangeError if [start, end) is not within `bytes`.
   */
  apply(bytes: Uint8Array, start = 0, end = bytes.length, nowMs = 0): HeldError | null {
    this.updated = 0;
    const bad = verifyViewFrame(bytes, start, end);
    if (bad) return new HeldError('frame', bad);
    this.nowMs = nowMs;
    if (this.expiryMs > 0 && nowMs - this.scannedMs >= EXPIRY_SCAN_MS) this.expire();
    const c = this.cursor;
    c.begin(bytes, start, end);
    while (c.nextSection()) {
      if (c.isReset) {
        this.forgetShard(c.shard);
        for (let i = 0; i < this.updated; i++) {
          const u = this.updates[i] as Update;
          if (u.shard === c.shard) u.held = null;
        }
        this.note(c, 'reset', null);
        continue;
      }
      const error = this.applySection(c);
      if (error) {
        this.updated = 0;
        return error;
      }
    }
    return null;
  }

  /**
   * Applies the cursor's section (not a reset), its implied cells merged
   * with its own, then hands its movers off: null, or the first error.
   */
  private applySection(c: ViewCursor): HeldError | null {
    if (c.implied) {
      // Read whole before any item applies (Rust's `apply_section`).
      const grid = this.grid;
      const stencil = this.stencil;
      if (!grid || !stencil) return new HeldError('frame', new ViewError('Implied'));
      const bad = this.impliedCells.read(c, grid, stencil);
      if (bad) return new HeldError('frame', bad);
      c.imply(this.impliedCells);
    }
    const h = this.handoff;
    const lossy = this.deliveredBy === 'lossy';
    h.beginSection();
    while (c.nextCell()) {
      this.heldDeltas = 0;
      if (lossy) {
        const admit = this.admitCell(c);
        if (admit === Admit.Broken) this.note(c, 'broken', null);
        if (admit !== Admit.Apply) continue;
      }
      h.beginCell();
      this.itemIndex = 0;
      this.afterDelta = false;
      // An unchanged item (a lossy client's check of a delta's base, read by
      // every client): the cell's first, its ticks readable, a delta next.
      let unchanged = false;
      let passing = false;
      let n = 0;
      while (c.nextItem()) {
        const delta = c.kind >= 1 && c.kind <= 7;
        const misplaced = c.kind === KIND_UNCHANGED ? n > 0 || this.unchangedTicks(c) < 0 : unchanged && !delta;
        if (misplaced) return new HeldError('item', new DeltaError('Unchanged'), c.shard, c.cell);
        n++;
        unchanged = c.kind === KIND_UNCHANGED;
        if (unchanged) continue;
        // A lossy client's held deltas of the chain, and their supplements.
        if (delta && this.heldDeltas > 0) {
          this.heldDeltas--;
          passing = true;
          continue;
        }
        if (passing && c.kind === KIND_SUPPLEMENT) continue;
        passing = false;
        h.item(this.itemIndex, c.kind, c.span);
        const error = this.applyItem(c);
        if (error) return new HeldError('item', error, c.shard, c.cell);
        this.itemIndex++;
      }
      if (unchanged) return new HeldError('item', new DeltaError('Unchanged'), c.shard, c.cell);
      h.endCell(c.cell);
    }
    // A lossy client's walkers are not handed off: a supplement brings each.
    return h.anyMovers && !lossy ? this.handOff() : null;
  }

  /** The cursor's unchanged item's ticks: its body, one varint of at most 32 bits, or -1 (Rust's `view::unchanged_ticks`). */
  private unchangedTicks(c: ViewCursor): number {
    const r = this.reader.reset(c.bytes, c.bodyStart, c.bodyEnd);
    try {
      const ticks = r.varint();
      r.finish();
      return ticks <= 0xffff_ffff ? ticks : -1;
    } catch (e) {
      if (e instanceof DeltaError) return -1;
      throw e;
    }
  }

  /**
   * Whether the cursor's cell's items apply, by the lossy rule (Rust's
   * `Held::admit_cell`), read ahead of them (the cursor is left before its
   * first item). Items out of place apply, so that they are refused in
   * order, as in order.
   */
  private admitCell(c: ViewCursor): Admit {
    let unchanged = 0;
    let span = 0;
    let first = 0;
    let whole = false;
    let misplaced = false;
    c.markCell();
    for (let n = 0; c.nextItem(); n++) {
      if (c.kind === KIND_UNCHANGED) {
        const ticks = n === 0 ? this.unchangedTicks(c) : -1;
        if (ticks < 0) misplaced = true;
        else unchanged = ticks;
      } else if (c.kind >= 1 && c.kind <= 7) {
        if (first === 0) first = c.span;
        span += c.span;
      } else if ((c.kind === KIND_FULL || c.kind === KIND_FORGET) && span === 0) whole = true;
    }
    c.rewindCell();
    if (misplaced) return Admit.Apply;
    const held = this.cellsOf(c.shard)?.get(c.cell);
    const from = whole || span === 0 ? WHOLE : unchanged === UNCHANGED_EVER ? UNCHANGED_EVER : Math.min(span + unchanged, UNCHANGED_EVER - 1);
    const admit = this.admit(held, from, span - first, c.tick);
    if (admit === Admit.Apply && held && from !== WHOLE) this.heldDeltas = this.deltasHeld(c, held, span, span - first);
    return admit;
  }

  /**
   * How many of the cursor's cell's chain of deltas (over `span` ticks in
   * all, its later deltas over `tail`) end at or before the tick `held` is
   * held as of (Rust's `Held::held_deltas`): none when it is held before the
   * chain's second base, without walking the items again (the usual case);
   * the cursor is left before the cell's first item.
   */
  private deltasHeld(c: ViewCursor, held: HeldCell, span: number, tail: number): number {
    const behind = (c.tick - held.tick) | 0;
    if (behind > tail) return 0;
    let left = span;
    let n = 0;
    c.markCell();
    while (c.nextItem()) {
      if (c.kind < 1 || c.kind > 7) continue;
      left -= c.span;
      if (left < behind || left <= 0) break;
      n++;
    }
    c.rewindCell();
    return n;
  }

  /**
   * The lossy rule for a cell held as `held` (undefined: not held) at
   * section tick `tick`, whose items need it held as of at least `from`
   * ticks before, or at most `tail` (the chain's later deltas start there)
   * (WHOLE: they start whole; UNCHANGED_EVER: from the empty cell). Rust's
   * `Held::admit`.
   */
  private admit(held: HeldCell | undefined, from: number, tail: number, tick: number): Admit {
    // Ticks behind `tick`, over the low 32 bits across the wrap (RFC 1982).
    const behind = held ? (tick - held.tick) | 0 : 0;
    if (from === WHOLE) return held && behind < 0 ? Admit.Skip : Admit.Apply;
    if (held && behind <= 0) return Admit.Skip;
    if (held && behind <= tail) return Admit.Apply;
    if (from === UNCHANGED_EVER) return !held || held.entries.count === 0 ? Admit.Apply : Admit.Broken;
    return held && behind <= from ? Admit.Apply : Admit.Broken;
  }

  /**
   * Puts the section's movers into the cells they went to, when those were
   * advanced by one delta over the same span (the others are dropped), cells
   * increasing (schema/src/held.rs's `hand_off`): at a cell where they do
   * not fit (DeltaError 'Duplicate' for a player already there, 'TooMany'
   * past the limit), that cell and the later ones are left as their items
   * left them, and the error says which. (The shard is read from the
   * cursor, not passed: a u32 passed to a call is boxed.)
   */
  private handOff(): HeldError | null {
    const h = this.handoff;
    const shard = this.cursor.shard;
    const cells = this.cellsOf(shard);
    h.sortMovers();
    for (let k = 0; k < h.advancedCount; k++) {
      if (h.arrivals(k) === 0) continue;
      // Advanced by a delta that applied: held.
      const into = cells?.get(h.advancedCell(k)) as HeldCell;
      try {
        if (h.arrivesTwice) throw new DeltaError('Duplicate');
        mergeEntries(into.entries, h.arriving, this.maxPlayers, into.spare);
      } catch (e) {
        if (e instanceof DeltaError) return new HeldError('item', e, shard, into.cell);
        throw e;
      }
      const spare = into.entries;
      into.entries = into.spare;
      into.spare = spare;
    }
    return null;
  }

  /**
   * Drops every cell sent nothing for longer than the expiry before the
   * frame's arrival, noting each as forgotten. (The time is read from the
   * object, not passed: a fractional number passed to a call is boxed.)
   */
  private expire(): void {
    const nowMs = this.nowMs;
    this.scannedMs = nowMs;
    const all = this.all;
    // Backwards: a dropped cell's place takes the last one, already looked at.
    for (let i = all.length - 1; i >= 0; i--) {
      const c = all[i] as HeldCell;
      if (nowMs - c.heardMs <= this.expiryMs) continue;
      this.unhold(c);
      this.noteExpired(c);
    }
  }

  /** Files `c` as held in `cells`. */
  private hold(c: HeldCell, cells: Map<number, HeldCell>): void {
    cells.set(c.cell, c);
    c.home = cells;
    c.at = this.all.length;
    this.all.push(c);
  }

  /** Drops held cell `c` (kept for reuse). */
  private unhold(c: HeldCell): void {
    c.home?.delete(c.cell);
    c.home = null;
    const last = this.all.pop() as HeldCell;
    if (last !== c) {
      this.all[c.at] = last;
      last.at = c.at;
    }
    c.at = -1;
    this.free.push(c);
  }

  /** Updates the last frame made (none after an error). */
  get updateCount(): number {
    return this.updated;
  }

  /** Update `i` (0 <= i < updateCount) of the last frame; reused by the next. */
  update(i: number): Update {
    return this.updates[i] as Update;
  }

  /** Shards with a cell held. */
  get shardCount(): number {
    let n = 0;
    for (let i = 0; i < this.shards.length; i++) if ((this.shards[i] as ShardCells).cells.size > 0) n++;
    return n;
  }

  /** The cell of `shard` and `cell` id, if held. */
  cell(shard: number, cell: number): HeldCell | undefined {
    return this.cellsOf(shard)?.get(cell);
  }

  /** Calls `f` on every held cell (in no set order). */
  forEachCell(f: (cell: HeldCell) => void): void {
    for (const s of this.shards) for (const c of s.cells.values()) f(c);
  }

  /** Drops every cell of `shard` (its shard left the place). */
  forgetShard(shard: number): void {
    const i = this.shards.findIndex((s) => s.shard === shard);
    if (i < 0) return;
    for (const c of (this.shards[i] as ShardCells).cells.values()) this.unhold(c);
    this.shards.splice(i, 1);
  }

  /** Drops everything (a new Welcome). */
  clear(): void {
    while (this.shards.length > 0) this.forgetShard((this.shards[0] as ShardCells).shard);
  }

  /** The cells of `shard`, if any is held. */
  private cellsOf(shard: number): Map<number, HeldCell> | undefined {
    const shards = this.shards;
    for (let i = 0; i < shards.length; i++) {
      const s = shards[i] as ShardCells;
      if (s.shard === shard) return s.cells;
    }
    return undefined;
  }

  /** Applies the cursor's item to its cell; the item's error, if it does not apply. */
  private applyItem(c: ViewCursor): DeltaError | null {
    let cells = this.cellsOf(c.shard);
    const held = cells?.get(c.cell);
    if (c.kind === KIND_FORGET) {
      if (held) {
        this.unhold(held);
        for (let i = 0; i < this.updated; i++) if ((this.updates[i] as Update).held === held) (this.updates[i] as Update).held = null;
      }
      this.note(c, 'forgot', null);
      this.afterDelta = false;
      return null;
    }
    if (c.kind === KIND_SUPPLEMENT && !(held && this.afterDelta)) return new DeltaError('Supplement');
    const into = held ?? this.fresh(c.shard, c.cell);
    const r = this.reader.reset(c.bytes, c.bodyStart, c.bodyEnd);
    try {
      if (c.kind === KIND_FULL) decodeFull(r, this.maxPlayers, into.spare);
      else if (c.kind === KIND_SUPPLEMENT) {
        decodeFull(r, this.maxPlayers, this.sup);
        mergeEntries(into.entries, this.sup, this.maxPlayers, into.spare);
      } else applyDelta(held ? held.entries : NO_ENTRIES, r, c.span, this.motion, this.maxPlayers, into.spare);
    } catch (e) {
      if (!held) this.free.push(into);
      if (e instanceof DeltaError) return e;
      throw e;
    }
    const spare = into.entries;
    into.entries = into.spare;
    into.spare = spare;
    const delta = c.kind !== KIND_FULL && c.kind !== KIND_SUPPLEMENT;
    if (delta && this.grid && c.cell !== 0) this.takeOutWalkers(into, this.grid);
    this.afterDelta = c.kind !== KIND_FULL;
    into.tick = c.tick;
    into.heardMs = this.nowMs;
    if (!held) {
      if (!cells) {
        cells = new Map();
        this.shards.push({ shard: c.shard, cells });
      }
      this.hold(into, cells);
    }
    this.note(c, 'cell', into);
    return null;
  }

  /**
   * Takes the players of `cell` (just advanced by a delta) whose position is
   * in another cell of `grid` out of it: movers of the section's handoff
   * when the cell is one delta so far, else dropped.
   */
  private takeOutWalkers(cell: HeldCell, grid: CellGrid): void {
    const e = cell.entries;
    const h = this.handoff;
    const here = cell.cell;
    let kept = 0;
    for (let i = 0; i < e.count; i++) {
      const there = grid.cellOfQ(e.x[i] as number, e.y[i] as number);
      if (there !== here) {
        if (h.handingOff) h.leave(e, i, there);
        continue;
      }
      if (kept !== i) {
        e.ids[kept] = e.ids[i] as number;
        e.x[kept] = e.x[i] as number;
        e.y[kept] = e.y[i] as number;
        e.heading[kept] = e.heading[i] as number;
        e.flags[kept] = e.flags[i] as number;
      }
      kept++;
    }
    e.count = kept;
  }

  /** A cell to write a newly told cell into: a forgotten one's, or a new one. */
  private fresh(shard: number, cell: number): HeldCell {
    const c = this.free.pop() ?? new HeldCell(shard, cell);
    c.shard = shard;
    c.cell = cell;
    c.tick = 0;
    c.entries.count = 0;
    return c;
  }

  /** Records an update of the cursor's section (a reset) or item: its cell as held, or null. */
  private note(c: ViewCursor, kind: Update['kind'], held: HeldCell | null): void {
    const u = this.nextUpdate();
    u.kind = kind;
    u.shard = c.shard;
    u.cell = kind === 'reset' ? 0 : c.cell;
    u.tick = c.tick;
    u.span = kind === 'cell' ? c.span : 0;
    u.adds = kind === 'cell' && c.kind === KIND_SUPPLEMENT;
    u.held = held;
  }

  /** Records the expiry of `c`: forgotten at the tick it was held at. (Fields copied object to object: u32s are never passed as numbers, which boxes them.) */
  private noteExpired(c: HeldCell): void {
    const u = this.nextUpdate();
    u.kind = 'forgot';
    u.shard = c.shard;
    u.cell = c.cell;
    u.tick = c.tick;
    u.span = 0;
    u.adds = false;
    u.held = null;
  }

  /** The next update to fill (reused frame to frame). */
  private nextUpdate(): Update {
    let u = this.updates[this.updated];
    if (!u) {
      u = new Update();
      this.updates.push(u);
    }
    this.updated++;
    return u;
  }
}
