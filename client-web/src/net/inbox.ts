// Snapshots and cell frames waiting to be taken, so that a page that falls
// behind the network catches up instead of showing the world seconds late.
//
// Decoding a frame (verifying it, reading its header) is cheap; taking it
// (copying every player into the interpolation buffers) is what costs at
// thousands of players. So frames are offered here as they arrive (with
// their arrival time) and taken once per animation frame, before the world
// is drawn. A page that keeps up finds one or two frames of a shard waiting
// (snapshots come at 20 Hz, frames at 60 or at least 10 a second) and takes
// them all. When more are waiting, the page fell behind: only the newest of
// that shard (with area of interest, of that cell of that shard) is taken,
// since it replaces everything the older ones said, and the page is current
// again at once. So that a page that draws no frames (a hidden tab) stays
// bounded, a full inbox is taken at once. Chat, presence, pongs and the rest
// never wait here: they are handled as they arrive, every one.

import type { CellMsg, SnapshotMsg } from './protocol.js';

/** A frame that may be skipped for a newer one of the same shard (or shard and cell). */
export type ReplaceableMsg = SnapshotMsg | CellMsg;

/** How long after the last skip the page still says it is catching up, ms. */
export const CATCHING_UP_MS = 1000;
/** Frames of one shard (or cell) a page that keeps up may find waiting; more are a backlog. */
export const KEEPING_UP = 2;
/** Frames waiting at most: more are taken at once (a page drawing no frames). */
export const INBOX_CAP = 1024;

/** The frames waiting; see the module comment. */
export class FrameInbox {
  private readonly waiting: ReplaceableMsg[] = [];
  private readonly arrivals: number[] = [];
  private readonly counts = new Map<string, number>();
  private readonly seen = new Set<string>();
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
   * Takes the waiting frames in arrival order: all of a shard (or cell) with
   * at most KEEPING_UP waiting, only the newest of one with more (the rest
   * are skipped).
   */
  flush(): void {
    const n = this.waiting.length;
    if (!n) return;
    if (n > this.mostWaiting) this.mostWaiting = n;
    const counts = this.counts;
    counts.clear();
    for (let i = 0; i < n; i++) {
      const k = key(this.waiting[i] as ReplaceableMsg);
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    const seen = this.seen;
    seen.clear();
    const taken: boolean[] = new Array<boolean>(n);
    let skipped = 0;
    // Newest first: the first frame seen of a backlogged key is the one to take.
    for (let i = n - 1; i >= 0; i--) {
      const k = key(this.waiting[i] as ReplaceableMsg);
      taken[i] = (counts.get(k) ?? 0) <= KEEPING_UP || !seen.has(k);
      seen.add(k);
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

/** What a newer frame replaces: a shard's snapshot, or one cell of a shard. */
function key(msg: ReplaceableMsg): string {
  return msg.kind === 'snapshot' ? `s${msg.shardId}` : `c${msg.shardId}:${msg.cell}`;
}
