// Snapshots and the cells of view frames waiting to be taken, so that a page
// that falls behind the network catches up instead of showing the world
// seconds late.
//
// Decoding a frame (verifying it, reading its header) is cheap; taking it
// (copying every player into the interpolation buffers) is what costs at
// thousands of players. So frames are offered here as they arrive (with
// their arrival time; a view frame offers each of its cells, in order) and
// taken once per animation frame, before the world is drawn. A page that
// keeps up finds the frames of the last frame interval waiting and takes
// them all. A page that fell behind finds a backlog: the frames of a shard
// (with area of interest, the cells of one cell of a shard) whose server
// time is more than BACKLOG_MS older than the newest one waiting are
// skipped, since the newer ones replace everything they said, and the page is
// current again at once. (Server time, not arrival: a backlog the browser
// held arrives all at once.) So that a page that draws no frames (a hidden
// tab) stays bounded, a full inbox is taken at once. Chat, presence, pongs and
// the rest never wait here: they are handled as they arrive, every one.

import type { CellMsg, SnapshotMsg } from './protocol.js';

/** A snapshot, or a view frame's cell, that may be skipped for a newer one of the same shard (or shard and cell). */
export type ReplaceableMsg = SnapshotMsg | CellMsg;

/** How long after the last skip the page still says it is catching up, ms. */
export const CATCHING_UP_MS = 1000;
/**
 * A frame this much older (server time, ms) than the newest waiting of its
 * shard (or cell) is a backlog and is skipped: four ticks at 20 Hz, so a page
 * drawing 5 frames a second or more skips nothing.
 */
export const BACKLOG_MS = 200;
/** Frames waiting at most: more are taken at once (a page drawing no frames). */
export const INBOX_CAP = 1024;

/** The frames waiting; see the module comment. */
export class FrameInbox {
  /**
   * The frames waiting, [0, count), and the lists being taken, swapped at
   * each flush. Emptied by count and by clearing the slots (setting an
   * array's length to 0 drops its storage), so a steady flush allocates
   * nothing.
   */
  private waiting: (ReplaceableMsg | null)[] = [];
  private arrivals: number[] = [];
  private count = 0;
  private taking: (ReplaceableMsg | null)[] = [];
  private takingArrivals: number[] = [];
  /** Newest server time waiting per shard (snapshots) and per shard and cell (view frames' cells), as of the flush that last saw it. */
  private readonly newestSnapshot = new Map<number, number>();
  private readonly newestCell = new Map<number, Map<number, number>>();
  /** Frames skipped so far, and the local time of the last skip (ms; -Infinity before any). */
  skipped = 0;
  lastSkipMs = Number.NEGATIVE_INFINITY;
  /** Most frames found waiting at one flush. */
  mostWaiting = 0;

  constructor(
    /** Takes one frame (in arrival order), with its arrival time (local ms). */
    private readonly take: (msg: ReplaceableMsg, arrivalMs: number) => void,
    private readonly cap = INBOX_CAP,
  ) {}

  /** Frames waiting now. */
  get length(): number {
    return this.count;
  }

  /** Offers a frame that arrived at local `arrivalMs`; it is taken, or skipped for a newer one, at the next [`flush`]. */
  offer(msg: ReplaceableMsg, arrivalMs: number): void {
    const i = this.count++;
    if (i < this.waiting.length) {
      this.waiting[i] = msg;
      this.arrivals[i] = arrivalMs;
    } else {
      this.waiting.push(msg);
      this.arrivals.push(arrivalMs);
    }
    if (this.count >= this.cap) this.flush();
  }

  /**
   * Takes the waiting frames in arrival order, but for those more than
   * BACKLOG_MS (server time) older than the newest of their shard (or cell),
   * which are skipped. Frames offered while taking wait for the next flush.
   */
  flush(): void {
    const n = this.count;
    if (!n) return;
    if (n > this.mostWaiting) this.mostWaiting = n;
    const frames = this.waiting;
    const arrivals = this.arrivals;
    this.waiting = this.taking;
    this.arrivals = this.takingArrivals;
    this.taking = frames;
    this.takingArrivals = arrivals;
    this.count = 0;
    // Arrival order is server order per shard: the last of a key is its newest.
    // (An entry from an earlier flush is overwritten before it is read, so the
    // maps are never cleared: clearing a Map allocates.)
    for (let i = 0; i < n; i++) this.note(frames[i] as ReplaceableMsg);
    let skipped = 0;
    try {
      for (let i = 0; i < n; i++) {
        const m = frames[i] as ReplaceableMsg;
        if (this.backlog(m) > BACKLOG_MS) skipped++;
        else this.take(m, arrivals[i] as number);
      }
      if (skipped) {
        this.skipped += skipped;
        this.lastSkipMs = arrivals[n - 1] as number;
      }
    } finally {
      frames.fill(null, 0, n);
    }
  }

  /** Whether frames were skipped within CATCHING_UP_MS before local `nowMs`. */
  catchingUp(nowMs: number): boolean {
    return nowMs - this.lastSkipMs < CATCHING_UP_MS;
  }

  /** Notes `msg`'s server time as the newest of its shard (or cell) so far. */
  private note(msg: ReplaceableMsg): void {
    if (msg.kind === 'snapshot') {
      this.newestSnapshot.set(msg.shardId, msg.serverTimeMs);
      return;
    }
    let cells = this.newestCell.get(msg.shardId);
    if (!cells) {
      cells = new Map();
      this.newestCell.set(msg.shardId, cells);
    }
    cells.set(msg.cell, msg.timeMs);
  }

  /** How much older `msg` is than the newest waiting of its shard (or cell), server ms. */
  private backlog(msg: ReplaceableMsg): number {
    if (msg.kind === 'snapshot') return (this.newestSnapshot.get(msg.shardId) ?? msg.serverTimeMs) - msg.serverTimeMs;
    const newest = this.newestCell.get(msg.shardId)?.get(msg.cell) ?? msg.timeMs;
    // 32-bit times wrap.
    const d = (newest - msg.timeMs) >>> 0;
    return d < 2 ** 31 ? d : 0;
  }
}
