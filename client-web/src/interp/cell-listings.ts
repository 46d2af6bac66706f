// What each (shard, cell) listed last: a held cell is complete for its shard
// and cell, so the players it listed when last taken and not when taken next
// have left that cell. Kept per shard, per cell while the cell is held: the
// tick and time of the newest state taken (older and duplicate ones are
// refused) and its player ids, in a reusable array. A cell forgotten or reset
// is dropped (its players left it), and the time of a forget is kept for a
// while: a state of the cell from before it is old news (a reset's section
// carries no tick: none is kept for it). Over a websocket frames arrive in
// order and none comes; over WebTransport a cell's state may come on the
// reliable stream after a datagram that forgot it (or a datagram may be
// overtaken), and taken again it would list players who have left the view,
// with no forget to come (the server holds the cell as out of the view),
// until the graces hid them.

/** Ticks are 32-bit on the wire; one within 2^31 after another is newer. */
const HALF_TICKS = 2 ** 31;

/** The newest frame of one (shard, cell). */
export class CellListing {
  constructor(
    readonly shard: number,
    readonly cell: number,
  ) {}

  /** Tick (low 32 bits) and server time (ms) of the frame; -1 / -Infinity before any. */
  tick = -1;
  timeMs = Number.NEGATIVE_INFINITY;
  /** Local arrival time of the frame, ms. */
  arrivalMs = Number.NEGATIVE_INFINITY;
  /** Players it listed: ids[0..count). */
  count = 0;
  ids = new Uint32Array(8);

  /**
   * Whether a state of tick `of.tick` taken at server time `timeMs` is newer
   * than this one: a later tick (wrapping at 2^32), or a later time. The same
   * state again, or an older one, is not. (The tick is read from an object:
   * a u32 past the small integers passed as a number is boxed.)
   */
  isNewer(of: { readonly tick: number }, timeMs: number): boolean {
    const tick = of.tick;
    if (this.tick < 0) return true;
    const ahead = (tick - this.tick) >>> 0;
    return (ahead > 0 && ahead < HALF_TICKS) || timeMs > this.timeMs;
  }

  /** Records a newer state, of tick `of.tick`, that listed `ids[0..count)`. */
  record(of: { readonly tick: number }, timeMs: number, arrivalMs: number, ids: Uint32Array, count: number): void {
    const tick = of.tick;
    if (count > this.ids.length) {
      let cap = this.ids.length;
      while (cap < count) cap *= 2;
      this.ids = new Uint32Array(cap);
    }
    for (let i = 0; i < count; i++) this.ids[i] = ids[i] as number;
    this.count = count;
    this.tick = tick;
    this.timeMs = timeMs;
    this.arrivalMs = arrivalMs;
  }
}

/** How long the time of a forget is kept, ms of local time: far longer than a stream frame trails a datagram. */
export const FORGETS_KEPT_MS = 30_000;

/** When a cell was forgotten (server ms, as listings' times) and when that arrived (local ms). */
interface Forget {
  timeMs: number;
  arrivalMs: number;
}

/**
 * A map of cells to `T`, one a shard. Shard ids are u32s, most past V8's
 * small integers (random ids): never a Map key (a lookup would box one),
 * shards are found by a scan (a view spans a few).
 */
class ByShard<T> {
  private readonly shards: { readonly shard: number; readonly cells: Map<number, T> }[] = [];

  /** The cells of `shard`, if any. */
  get(shard: number): Map<number, T> | undefined {
    const shards = this.shards;
    for (let i = 0; i < shards.length; i++) {
      const s = shards[i] as { readonly shard: number; readonly cells: Map<number, T> };
      if (s.shard === shard) return s.cells;
    }
    return undefined;
  }

  /** The cells of `shard`, made empty on first use. */
  make(shard: number): Map<number, T> {
    let cells = this.get(shard);
    if (!cells) {
      cells = new Map();
      this.shards.push({ shard, cells });
    }
    return cells;
  }

  /** Removes `shard`'s cells. */
  remove(shard: number): void {
    const i = this.shards.findIndex((s) => s.shard === shard);
    if (i >= 0) this.shards.splice(i, 1);
  }

  /** Removes every shard's cells that `keep` does not keep, and the shards left with none. */
  retain(keep: (value: T) => boolean): void {
    for (let i = this.shards.length - 1; i >= 0; i--) {
      const cells = (this.shards[i] as { readonly cells: Map<number, T> }).cells;
      cells.forEach((value, cell) => {
        if (!keep(value)) cells.delete(cell);
      });
      if (!cells.size) this.shards.splice(i, 1);
    }
  }

  /** Calls `f` on every shard's cells. */
  forEach(f: (cells: Map<number, T>) => void): void {
    for (const s of this.shards) f(s.cells);
  }

  /** Removes everything. */
  clear(): void {
    this.shards.length = 0;
  }
}

/** The newest listing of every (shard, cell) held, and when cells were forgotten. */
export class CellListings {
  private readonly listings = new ByShard<CellListing>();
  private cells = 0;
  private readonly forgets = new ByShard<Forget>();

  /** The listing of (`shard`, `cell`), made empty on first use. */
  of(shard: number, cell: number): CellListing {
    const cells = this.listings.make(shard);
    let listing = cells.get(cell);
    if (!listing) {
      listing = new CellListing(shard, cell);
      cells.set(cell, listing);
      this.cells++;
    }
    return listing;
  }

  /** The listing of (`shard`, `cell`), if kept. */
  find(shard: number, cell: number): CellListing | undefined {
    return this.listings.get(shard)?.get(cell);
  }

  /** Whether a cell of `shard` is listed. */
  hasShard(shard: number): boolean {
    return this.listings.get(shard) !== undefined;
  }

  /**
   * Drops the listing of (`shard`, `cell`), forgotten by a frame of server
   * time `timeMs` that arrived at local `arrivalMs`, after `f` read it; a
   * state of the cell older than the forget is [`outdated`] from now on.
   * (Not one of the same tick: a relayed cell whose shard's stream has not
   * moved on comes back into view with the tick it was forgotten at.)
   */
  drop(shard: number, cell: number, timeMs: number, arrivalMs: number, f: (listing: CellListing) => void): void {
    later(this.forgets.make(shard), cell, timeMs, arrivalMs);
    const cells = this.listings.get(shard);
    const listing = cells?.get(cell);
    if (!cells || !listing) return;
    f(listing);
    cells.delete(cell);
    this.cells--;
    if (!cells.size) this.listings.remove(shard);
  }

  /** Drops every listing of `shard` (a reset), after `f` read each. */
  dropShard(shard: number, f: (listing: CellListing) => void): void {
    const cells = this.listings.get(shard);
    if (!cells) return;
    cells.forEach(f);
    this.cells -= cells.size;
    this.listings.remove(shard);
  }

  /** Drops every listing and forget (a new socket holds nothing, and the old one sends nothing more), after `f` read each listing. */
  dropAll(f: (listing: CellListing) => void): void {
    this.listings.forEach((cells) => cells.forEach(f));
    this.listings.clear();
    this.cells = 0;
    this.forgets.clear();
  }

  /**
   * Whether a state of (`shard`, `cell`) of server time `timeMs` is old news:
   * older than a forget of the cell, kept (see [`FORGETS_KEPT_MS`]).
   */
  outdated(shard: number, cell: number, timeMs: number): boolean {
    const forget = this.forgets.get(shard)?.get(cell);
    return forget !== undefined && timeMs < forget.timeMs;
  }

  /** Forgets the forgets that arrived before local `beforeMs`. */
  pruneForgets(beforeMs: number): void {
    this.forgets.retain((f) => f.arrivalMs >= beforeMs);
  }

  /** Number of cells whose forget is kept. */
  get forgotten(): number {
    let n = 0;
    this.forgets.forEach((cells) => (n += cells.size));
    return n;
  }

  /** Number of (shard, cell) listings kept. */
  get size(): number {
    return this.cells;
  }
}

/** Keeps the forget of `cell` at `timeMs` (arrived at `arrivalMs`) in `cells`, unless a later one is kept. */
function later(cells: Map<number, Forget>, cell: number, timeMs: number, arrivalMs: number): void {
  const kept = cells.get(cell);
  if (kept === undefined) cells.set(cell, { timeMs, arrivalMs });
  else if (timeMs >= kept.timeMs) {
    kept.timeMs = timeMs;
    kept.arrivalMs = arrivalMs;
  }
}
