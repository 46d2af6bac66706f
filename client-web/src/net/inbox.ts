// Snapshots and cell frames waiting to be taken, so that a page that falls
// behind the network catches up instead of showing the world seconds late.
//
// Decoding a frame (verifying it, reading its header) is cheap; taking it
// (copying every player into the interpolation buffers) is what costs at
// thousands of players. So frames are offered here as they arrive (with
// their arrival time) and taken once per animation frame, before the world
// is drawn. A page that keeps up finds the frames of the last frame interval
// waiting and takes them all. A page that fell behind finds a backlog: the
// frames of a shard (with area of interest, of one cell of a shard) whose
// server time is more than BACKLOG_MS older than the newest one waiting are
// skipped, since the newer ones replace everything they said, and the page is
// current again at once. (Server time, not arrival: a backlog the browser
// held arrives all at once.) So that a page that draws no frames (a hidden
// tab) stays bounded, a full inbox is taken at once. Chat, presence, pongs and
// the rest never wait here: they are handled as they arrive, every one.

import type { CellMsg, SnapshotMsg } from './protocol.js';

/** A frame that may be skipped for a newer one of the same shard (or shard and cell). */
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
  private readonly waiting: ReplaceableMsg[] = [];
  private readonly arrivals: number[] = [];
  private readonly newest = new Map<string, number>();
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
    return this.waiting.length;
  }

  /** Offers a frame that arrived at local `arrivalMs`; it is taken, or skipped for a newer one, at the next [`flush`]. */
  offer(msg: ReplaceableMsg, arrivalMs: number): void {
    this.waiting.push(msg);
    this.arrivals.push(arrivalMs);
    if (this.waiting.length >= this.cap) this.flush();
  }

  /**
   * Takes the waiting frames in arrival order, but for those more than
   * BACKLOG_MS (server time) older than the newest of their shard (or cell),
   * which are skipped.
   */
  flush(): void {
    const n = this.waiting.length;
    if (!n) return;
    if (n > this.mostWaiting) this.mostWaiting = n;
    const newest = this.newest;
    newest.clear();
    // Arrival order is server order per shard: the last of a key is its newest.
    for (let i = 0; i < n; i++) {
      const m = this.waiting[i] as ReplaceableMsg;
      newest.set(key(m), timeOf(m));
    }
    const taken: boolean[] = new Array<boolean>(n);
    let skipped = 0;
    for (let i = 0; i < n; i++) {
      const m = this.waiting[i] as ReplaceableMsg;
      taken[i] = olderBy(newest.get(key(m)) ?? timeOf(m), timeOf(m), m.kind === 'cell') <= BACKLOG_MS;
      if (!taken[i]) skipped++;
    }
    const frames = this.waiting.splice(0);
    const arrivals = this.arrivals.splice(0);
    if (skipped) {
      this.skipped += skipped;
      this.lastSkipMs = arrivals[n - 1] as number;
    }
    for (let i = 0; i < n; i++) if (taken[i]) this.take(frames[i] as ReplaceableMsg, arrivals[i] as number);
  }

  /** Whether frames were skipped within CATCHING_UP_MS before local `nowMs`. */
  catchingUp(nowMs: number): boolean {
    return nowMs - this.lastSkipMs < CATCHING_UP_MS;
  }
}

/** A frame's server time, ms (a cell frame's: the low 32 bits). */
function timeOf(msg: ReplaceableMsg): number {
  return msg.kind === 'snapshot' ? msg.serverTimeMs : msg.timeMs;
}

/** How much older `t` is than `newest`, ms; 32-bit times (cell frames) wrap. */
function olderBy(newest: number, t: number, wraps: boolean): number {
  if (!wraps) return newest - t;
  const d = (newest - t) >>> 0;
  return d < 2 ** 31 ? d : 0;
}

/** What a newer frame replaces: a shard's snapshot, or one cell of a shard. */
function key(msg: ReplaceableMsg): string {
  return msg.kind === 'snapshot' ? `s${msg.shardId}` : `c${msg.shardId}:${msg.cell}`;
}
