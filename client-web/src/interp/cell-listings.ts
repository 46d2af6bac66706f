// What each (shard, cell) listed last: a held cell is complete for its shard
// and cell, so the players it listed when last taken and not when taken next
// have left that cell. Kept per shard, per cell while the cell is held: the
// tick and time of the newest state taken (older and duplicate ones are
// refused) and its player ids, in a reusable array. A cell forgotten or reset
// is dropped (its players left it).

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

/** One shard's listings, by cell. */
interface ShardListings {
  readonly shard: number;
  readonly cells: Map<number, CellListing>;
}

/**
 * The newest listing of every (shard, cell) held. Shard ids are u32s, most
 * past V8's small integers (random ids): never a Map key (a lookup would box
 * one), shards are found by a scan (a view spans a few).
 */
export class CellListings {
  private readonly shards: ShardListings[] = [];
  private cells = 0;

  /** The listings of `shard`, if any. */
  private cellsOf(shard: number): Map<number, CellListing> | undefined {
    const shards = this.shards;
    for (let i = 0; i < shards.length; i++) {
      const s = shards[i] as ShardListings;
      if (s.shard === shard) return s.cells;
    }
    return undefined;
  }

  /** Removes `shard`'s entry. */
  private remove(shard: number): void {
    const i = this.shards.findIndex((s) => s.shard === shard);
    if (i >= 0) this.shards.splice(i, 1);
  }

  /** The listing of (`shard`, `cell`), made empty on first use. */
  of(shard: number, cell: number): CellListing {
    let cells = this.cellsOf(shard);
    if (!cells) {
      cells = new Map();
      this.shards.push({ shard, cells });
    }
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
    return this.cellsOf(shard)?.get(cell);
  }

  /** Whether a cell of `shard` is listed. */
  hasShard(shard: number): boolean {
    return this.cellsOf(shard) !== undefined;
  }

  /** Drops the listing of (`shard`, `cell`) (a forgotten cell), after `f` read it. */
  drop(shard: number, cell: number, f: (listing: CellListing) => void): void {
    const cells = this.cellsOf(shard);
    const listing = cells?.get(cell);
    if (!cells || !listing) return;
    f(listing);
    cells.delete(cell);
    this.cells--;
    if (!cells.size) this.remove(shard);
  }

  /** Drops every listing of `shard` (a reset), after `f` read each. */
  dropShard(shard: number, f: (listing: CellListing) => void): void {
    const cells = this.cellsOf(shard);
    if (!cells) return;
    cells.forEach(f);
    this.cells -= cells.size;
    this.remove(shard);
  }

  /** Drops every listing (a new socket holds nothing), after `f` read each. */
  dropAll(f: (listing: CellListing) => void): void {
    for (const s of this.shards) s.cells.forEach(f);
    this.shards.length = 0;
    this.cells = 0;
  }

  /** Number of (shard, cell) listings kept. */
  get size(): number {
    return this.cells;
  }
}
