// Protocol 6's handoff scratch for one section of a view frame
// (schema/src/held.rs: `Held::movers`, `Held::advanced`, `Held::hand_off`;
// schema/src/delta.rs: `merge_in`; the rule is in net/held.ts's module
// comment). Reused section after
// section: a frame of walkers allocates nothing once the arrays fit.

import { DeltaError, Entries } from './delta.js';
import { KIND_SUPPLEMENT } from './view.js';

/** `into` (twice the room, or more) holding `from`'s values first. */
function doubled<T extends Uint32Array | Uint8Array>(from: T, into: T): T {
  into.set(from);
  return into;
}

/** Appends player `i` of `from` to `to` (room reserved). */
function copyEntry(from: Readonly<Entries>, i: number, to: Entries): void {
  to.push(from.ids[i] as number, from.x[i] as number, from.y[i] as number, from.heading[i] as number, from.flags[i] as number);
}

/**
 * `base` and `add` (both sorted by id) merged in id order into `out`
 * (emptied first; neither of them). Throws DeltaError('TooMany') when they
 * hold more than `maxPlayers` together (checked first), DeltaError('Duplicate')
 * for an id in both; `out` is then unspecified (Rust's `delta::merge_in`,
 * which merges in place, refuses ids repeated within `add` too: neither
 * caller passes any).
 */
export function mergeEntries(base: Readonly<Entries>, add: Readonly<Entries>, maxPlayers: number, out: Entries): void {
  if (base.count + add.count > maxPlayers) throw new DeltaError('TooMany');
  out.count = 0;
  out.reserve(base.count + add.count);
  let i = 0;
  let j = 0;
  while (i < base.count || j < add.count) {
    if (i < base.count && j < add.count) {
      const a = base.ids[i] as number;
      const b = add.ids[j] as number;
      if (a === b) throw new DeltaError('Duplicate');
      if (a < b) copyEntry(base, i++, out);
      else copyEntry(add, j++, out);
    } else if (j < add.count) copyEntry(add, j++, out);
    else copyEntry(base, i++, out);
  }
}

/**
 * One section's cells advanced by one delta and the players that walked out
 * of them. Held calls `beginSection`, then for each cell `beginCell`,
 * `item` before each of its items (and `leave` for each player a delta took
 * out of it), `endCell`; then `arrivals` for each advanced cell, increasing.
 */
export class SectionHandoff {
  /** Players taken out of a cell advanced by one delta (Rust's `movers`): the cell they are in, the delta's span (ticks), themselves. */
  private readonly movers = new Entries();
  private moverCells = new Uint32Array(8);
  private moverSpans = new Uint8Array(8);
  /** Cells advanced by one delta and its supplements, increasing, and that delta's span, ticks (Rust's `advanced`). */
  private advancedCells = new Uint32Array(8);
  private advancedSpans = new Uint8Array(8);
  /** Cells in `advancedCells`. */
  advancedCount = 0;
  /** The current cell's first mover (its movers are the ones from there on). */
  private cellMovers = 0;
  /** The current cell's span while its items so far are one delta then supplements only (0: they are not). */
  private cellSpan = 0;
  /** The players arriving in the last cell `arrivals` was asked about, by id. */
  readonly arriving = new Entries();

  /** A new section: nothing advanced, no movers. */
  beginSection(): void {
    this.movers.count = 0;
    this.advancedCount = 0;
  }

  /** A new cell of the section. */
  beginCell(): void {
    this.cellMovers = this.movers.count;
    this.cellSpan = 0;
  }

  /**
   * The cell's item `index` (0 first), of `kind` (a delta's span, ticks, in
   * `span`), is about to apply: a cell stays "one delta" while its first
   * item is a delta and the others supplements; once it is not, its movers
   * are dropped (Rust's `one_delta`, decided item by item).
   */
  item(index: number, kind: number, span: number): void {
    if (index === 0) this.cellSpan = kind >= 1 && kind <= 7 ? span : 0;
    else if (kind !== KIND_SUPPLEMENT && this.cellSpan > 0) {
      this.cellSpan = 0;
      this.movers.count = this.cellMovers;
    }
  }

  /** True when the delta about to apply makes its players that walked out movers (the cell is one delta so far). */
  get handingOff(): boolean {
    return this.cellSpan > 0;
  }

  /** Player `i` of `from` walked out of the cell being applied into cell `cell`: a mover (when `handingOff`). */
  leave(from: Readonly<Entries>, i: number, cell: number): void {
    const k = this.movers.count;
    if (k >= this.moverCells.length) {
      this.moverCells = doubled(this.moverCells, new Uint32Array(2 * k));
      this.moverSpans = doubled(this.moverSpans, new Uint8Array(2 * k));
    }
    this.moverCells[k] = cell;
    this.moverSpans[k] = this.cellSpan;
    this.movers.reserve(k + 1);
    copyEntry(from, i, this.movers);
  }

  /** The cell `cell` is done: advanced when its items were one delta and supplements. */
  endCell(cell: number): void {
    if (this.cellSpan === 0) return;
    const k = this.advancedCount++;
    if (k >= this.advancedCells.length) {
      this.advancedCells = doubled(this.advancedCells, new Uint32Array(2 * k));
      this.advancedSpans = doubled(this.advancedSpans, new Uint8Array(2 * k));
    }
    this.advancedCells[k] = cell;
    this.advancedSpans[k] = this.cellSpan;
  }

  /** Whether any player walked out of an advanced cell this section. */
  get anyMovers(): boolean {
    return this.movers.count > 0;
  }

  /** Advanced cell `k` (0 <= k < advancedCount; increasing). */
  advancedCell(k: number): number {
    return this.advancedCells[k] as number;
  }

  /** The movers' indices sorted by (cell they went to, id, index): made by `sortMovers`. */
  private order = new Uint32Array(8);
  /** The next place in `order` that `arrivals` reads (advanced cells are asked of in increasing order). */
  private next = 0;

  /**
   * Sorts the movers once by the cell they went to, then id (Rust's
   * `hand_off` sort), for `arrivals` to walk: a section of many movers and
   * many advanced cells costs their sum, not their product.
   */
  sortMovers(): void {
    const n = this.movers.count;
    if (this.order.length < n) this.order = new Uint32Array(Math.max(n, 2 * this.order.length));
    for (let i = 0; i < n; i++) this.order[i] = i;
    if (n > 1) this.order.subarray(0, n).sort(this.byCellAndId);
    this.next = 0;
  }

  /** `sortMovers`'s order of two movers' indices (made once: a closure a section would allocate). */
  private readonly byCellAndId = (a: number, b: number): number => {
    const ca = this.moverCells[a] as number;
    const cb = this.moverCells[b] as number;
    if (ca !== cb) return ca - cb;
    const ia = this.movers.ids[a] as number;
    const ib = this.movers.ids[b] as number;
    return ia !== ib ? ia - ib : a - b;
  };

  /**
   * Fills `arriving` with the movers into advanced cell `k` that walked out
   * of a cell advanced over the same span, by id; their count. After
   * `sortMovers`, with `k` increasing.
   */
  arrivals(k: number): number {
    const cell = this.advancedCells[k] as number;
    const span = this.advancedSpans[k] as number;
    const m = this.movers;
    const a = this.arriving;
    const n = m.count;
    a.count = 0;
    while (this.next < n && (this.moverCells[this.order[this.next] as number] as number) < cell) this.next++;
    for (; this.next < n; this.next++) {
      const i = this.order[this.next] as number;
      if (this.moverCells[i] !== cell) break;
      if (this.moverSpans[i] !== span) continue;
      a.reserve(a.count + 1);
      copyEntry(m, i, a);
    }
    return a.count;
  }

  /** True when `arriving` holds one player twice (held in two cells: refused as 'Duplicate', Rust's `hand_off`). */
  get arrivesTwice(): boolean {
    const a = this.arriving;
    for (let i = 1; i < a.count; i++) if (a.ids[i - 1] === a.ids[i]) return true;
    return false;
  }
}

