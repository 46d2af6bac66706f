// What each (shard, cell) listed last: a cell of a view frame is complete for
// its shard and cell, so the players the previous frame listed in a cell and
// the next one does not have left that cell. Kept per shard, per cell: the
// tick and time of the newest frame that carried it (older and duplicate
// ones are refused) and its player ids, in a reusable array.

/** Ticks are 32-bit on the wire; one within 2^31 after another is newer. */
const HALF_TICKS = 2 ** 31;

/** The newest frame of one (shard, cell). */
export class CellListing {
  /** Tick (low 32 bits) and server time (ms) of the frame; -1 / -Infinity before any. */
  tick = -1;
  timeMs = Number.NEGATIVE_INFINITY;
  /** Local arrival time of the frame, ms. */
  arrivalMs = Number.NEGATIVE_INFINITY;
  /** Players it listed: ids[0..count). */
  count = 0;
  ids = new Uint32Array(8);

  /**
   * Whether a frame of tick `tick` taken at server time `timeMs` is newer than
   * this one: a later tick (wrapping at 2^32), or a later time (a shard that
   * restarted counts its ticks from the start again). The same frame again,
   * or an older one, is not.
   */
  isNewer(tick: number, timeMs: number): boolean {
    if (this.tick < 0) return true;
    const ahead = (tick - this.tick) >>> 0;
    return (ahead > 0 && ahead < HALF_TICKS) || timeMs > this.timeMs;
  }

  /** Records a newer frame that listed `ids[0..count)`. */
  record(tick: number, timeMs: number, arrivalMs: number, ids: Uint32Array, count: number): void {
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

/** The newest listing of every (shard, cell) seen. */
export class CellListings {
  private readonly shards = new Map<number, Map<number, CellListing>>();
  private cells = 0;
  /** The cut-off of the running [`purge`], and its callbacks, made once (a purge allocates nothing). */
  private purgeBefore = 0;
  private readonly purgeCell = (listing: CellListing, cell: number, cells: Map<number, CellListing>): void => {
    if (listing.arrivalMs >= this.purgeBefore) return;
    cells.delete(cell);
    this.cells--;
  };
  private readonly purgeShard = (cells: Map<number, CellListing>, shard: number): void => {
    cells.forEach(this.purgeCell);
    if (!cells.size) this.shards.delete(shard);
  };

  /** The listing of (`shard`, `cell`), made empty on first use. */
  of(shard: number, cell: number): CellListing {
    let cells = this.shards.get(shard);
    if (!cells) {
      cells = new Map();
      this.shards.set(shard, cells);
    }
    let listing = cells.get(cell);
    if (!listing) {
      listing = new CellListing();
      cells.set(cell, listing);
      this.cells++;
    }
    return listing;
  }

  /** Number of (shard, cell) listings kept. */
  get size(): number {
    return this.cells;
  }

  /**
   * Forgets listings whose newest frame arrived before `beforeMs` (local
   * time): cells long out of view, and shards that are gone. Their players
   * were forgotten long before, so nothing is lost.
   */
  purge(beforeMs: number): void {
    this.purgeBefore = beforeMs;
    this.shards.forEach(this.purgeShard);
  }
}
