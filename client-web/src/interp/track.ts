// One shard's timeline: its bounded snapshot ring, its render clock, and the
// interpolation of its players at the render time — between the two snapshots
// around it, or at most one tick past the newest, never further.

import type { SnapshotMsg } from '../net/protocol.js';
import { SnapshotRing, type SnapshotSlot } from './buffer.js';
import { DEFAULT_CLOCK, RenderClock, type ClockOptions } from './clock.js';

/** Receives interpolated players; `priority` orders copies of one player from several shards. */
export interface PlayerSink {
  put(id: number, x: number, y: number, heading: number, flags: number, priority: number): void;
}

const TAU = Math.PI * 2;

/** Shortest-way blend of two angles (radians). */
function lerpAngle(a: number, b: number, t: number): number {
  let d = (b - a) % TAU;
  if (d > Math.PI) d -= TAU;
  else if (d < -Math.PI) d += TAU;
  return a + d * t;
}

/** Snapshots and render clock of one shard. */
export class ShardTrack {
  readonly ring: SnapshotRing;
  readonly clock: RenderClock;
  /** Tick interval of the shard, ms. */
  intervalMs = 50;
  /** Local time of the last accepted snapshot, ms. */
  lastArrivalMs = Number.NEGATIVE_INFINITY;
  /** Server time that was last rendered (after the extrapolation limit), ms. */
  sampleTimeMs = Number.NaN;
  /**
   * The current sample's blend between its two snapshots (0..1, above 1 past
   * the newest) and the largest move per tick that is a walk, world units.
   * Fields rather than arguments of `emit`, so the per-frame call boxes no number.
   */
  private alpha = 0;
  private maxStep = 0;

  constructor(
    readonly shardId: number,
    capacity = 32,
    clock: ClockOptions = DEFAULT_CLOCK,
  ) {
    this.ring = new SnapshotRing(capacity);
    this.clock = new RenderClock(clock);
  }

  /** Stores a snapshot that arrived at local time `arrivalMs`. */
  push(msg: SnapshotMsg, arrivalMs: number): void {
    if (msg.tickHz > 0) this.intervalMs = 1000 / msg.tickHz;
    if (!this.ring.push(msg, arrivalMs)) return;
    this.clock.observe(msg.serverTimeMs, arrivalMs, this.intervalMs);
    this.lastArrivalMs = arrivalMs;
  }

  /**
   * Writes this shard's players as they stood at the render time for local
   * time `nowMs` into `sink`. `speed` (world units/s) tells a walk from a
   * teleport (a resume, a respawn), which is not interpolated.
   */
  sample(nowMs: number, speed: number, sink: PlayerSink): void {
    this.clock.advance(nowMs);
    const rt = this.clock.renderMs;
    const n = this.ring.length;
    const newest = this.ring.newest();
    if (!newest || Number.isNaN(rt)) return;
    const t = Math.min(rt, newest.serverTimeMs + this.intervalMs);
    this.sampleTimeMs = t;
    const i = this.ring.indexAtOrBefore(t);
    let a: SnapshotSlot;
    let b: SnapshotSlot;
    if (i < 0) {
      a = b = this.ring.at(0);
    } else if (i < n - 1) {
      a = this.ring.at(i);
      b = this.ring.at(i + 1);
    } else {
      a = n > 1 ? this.ring.at(n - 2) : newest;
      b = newest;
    }
    const span = b.serverTimeMs - a.serverTimeMs;
    this.alpha = span > 0 ? Math.max(0, (t - a.serverTimeMs) / span) : 1;
    this.maxStep = (speed * Math.max(span, this.intervalMs) * 1.5) / 1000 + 2;
    this.emit(a, b, newest, sink);
  }

  /** Hot loop: one pass over the later snapshot's players, blended by [`alpha`]. */
  private emit(a: SnapshotSlot, b: SnapshotSlot, newest: SnapshotSlot, sink: PlayerSink): void {
    const alpha = this.alpha;
    const maxStep = this.maxStep;
    const blendHeading = alpha <= 1;
    for (let k = 0; k < b.count; k++) {
      const id = b.ids[k] as number;
      let x = b.x[k] as number;
      let y = b.y[k] as number;
      let h = b.heading[k] as number;
      const j = a === b ? -1 : a.find(id, k);
      if (j >= 0) {
        const ax = a.x[j] as number;
        const ay = a.y[j] as number;
        if (Math.abs(x - ax) <= maxStep && Math.abs(y - ay) <= maxStep) {
          x = ax + (x - ax) * alpha;
          y = ay + (y - ay) * alpha;
          if (blendHeading) h = lerpAngle(a.heading[j] as number, h, alpha);
        }
      }
      const priority = b === newest || newest.find(id, k) >= 0 ? newest.arrivalMs : b.arrivalMs;
      sink.put(id, x, y, h, b.flags[k] as number, priority);
    }
  }
}
