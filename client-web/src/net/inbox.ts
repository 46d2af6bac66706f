// Snapshots and cell frames waiting to be taken, so that a page that falls
// behind the network catches up instead of showing the world seconds late.
//
// Decoding a frame (verifying it, reading its header) is cheap; taking it
// (copying every player into the interpolation buffers) is what costs at
// thousands of players. So frames are offered here as they arrive and taken
// in a task of their own right after the websocket's events (and at the
// start of every animation frame). A page that keeps up takes every frame,
// each alone. When several frames of one shard (with area of interest, of
// one cell of a shard) are waiting, the page fell behind: only the newest is
// taken and the older ones are skipped, since a newer frame of the same
// shard or cell replaces everything they said. Chat, presence, pongs and the
// rest never wait here: they are handled at once, every one.

import type { CellMsg, SnapshotMsg } from './protocol.js';

/** A frame that may be skipped for a newer one of the same shard (or shard and cell). */
export type ReplaceableMsg = SnapshotMsg | CellMsg;

/** How long after the last skip the page still says it is catching up, ms. */
export const CATCHING_UP_MS = 1000;

/** The frames waiting; see the module comment. */
export class FrameInbox {
  private readonly waiting: ReplaceableMsg[] = [];
  private readonly arrivals: number[] = [];
  private readonly newest = new Set<string>();
  private scheduled = false;
  /** Frames skipped so far, and the local time of the last skip (ms; -Infinity before any). */
  skipped = 0;
  lastSkipMs = Number.NEGATIVE_INFINITY;

  constructor(
    /** Takes one frame (in arrival order), with its arrival time (local ms). */
    private readonly take: (msg: ReplaceableMsg, arrivalMs: number) => void,
    /** Runs `fn` in a task after the events already queued (a MessageChannel in the page). */
    private readonly schedule: (fn: () => void) => void,
  ) {}

  /** Frames waiting now. */
  get length(): number {
    return this.waiting.length;
  }

  /** Offers a frame that arrived at local `arrivalMs`; it is taken, or skipped for a newer one, at the next [`flush`]. */
  offer(msg: ReplaceableMsg, arrivalMs: number): void {
    this.waiting.push(msg);
    this.arrivals.push(arrivalMs);
    if (this.scheduled) return;
    this.scheduled = true;
    this.schedule(() => this.flush());
  }

  /** Takes the newest waiting frame of each shard (or shard and cell), in arrival order; skips the rest. */
  flush(): void {
    this.scheduled = false;
    const n = this.waiting.length;
    if (!n) return;
    const keep = this.newest;
    keep.clear();
    let skipped = 0;
    // Newest first: the first frame seen of a key is the one to take.
    const taken: boolean[] = new Array<boolean>(n);
    for (let i = n - 1; i >= 0; i--) {
      const k = key(this.waiting[i] as ReplaceableMsg);
      taken[i] = !keep.has(k);
      if (taken[i]) keep.add(k);
      else skipped++;
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
