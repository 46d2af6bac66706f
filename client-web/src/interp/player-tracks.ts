// Per-player timelines for area of interest: view frames carry different
// cells at different rates (the own and adjacent cells every tick, farther
// ones every 2nd or 4th, less under a crowd), and a player moves between cells
// and shards, so each player keeps its own short ring of positions in server
// time, wherever they came from, and is interpolated on its own.
//
// Storage is one set of typed arrays for all players (struct of arrays, a
// ring of SAMPLES positions per player), found by id through an IdIndex and
// compacted by moving the last player into a removed one's slot. Nothing here
// allocates except growing, by doubling, when more players are tracked.

import { FLAG_MOVING } from '../net/protocol.js';
import { IdIndex } from './id-index.js';

/** [`PlayerTracks.hidden`]: drawn in the last frame. */
export const DRAWN = 0;
/** [`PlayerTracks.hidden`]: tracked, not drawn yet. */
export const NOT_YET_DRAWN = 1;
/** [`PlayerTracks.hidden`]: hidden after leaving its cell and every other frame. */
export const HIDDEN = 2;

/** Where interpolated players are written, one call a player (interp/world's MergedPlayers). */
export interface PlayerSink {
  put(id: number, x: number, y: number, heading: number, flags: number, priority: number): void;
}

/** Positions kept per player: at 20 Hz, 0.8 s of every-tick updates. */
export const SAMPLES = 16;

const TAU = Math.PI * 2;

/** Shortest-way blend of two angles (radians). */
function lerpAngle(a: number, b: number, t: number): number {
  let d = (b - a) % TAU;
  if (d > Math.PI) d -= TAU;
  else if (d < -Math.PI) d += TAU;
  return a + d * t;
}

/**
 * Every tracked player's timeline and what the area of interest knows about
 * it, by slot in [0, count): column arrays, replaced only when they grow.
 */
export class PlayerTracks {
  count = 0;
  /** Player id of each slot. */
  ids = new Uint32Array(0);
  /** Shard and cell of the newest frame that listed the player. */
  shard = new Uint32Array(0);
  cell = new Uint32Array(0);
  /** Server time of the newest frame that listed the player, ms since the epoch. */
  seenMs = new Float64Array(0);
  /** Local time that frame arrived, ms. */
  seenAt = new Float64Array(0);
  /**
   * Local time a newer frame of the player's last cell arrived without it (it
   * left that cell: for another cell, another shard, or the place), ms; NaN
   * while its last cell still lists it.
   */
  leftAt = new Float64Array(0);
  /**
   * The shard that listed the player before its newest listing, while the
   * change is not yet taken up by its render time (NaN otherwise).
   */
  previousShard = new Float64Array(0);
  /** Observed time between the player's updates, server ms (one tick until measured). */
  interval = new Float32Array(0);
  /** Extra interpolation delay for a player updated less often than every tick, ms. */
  extra = new Float32Array(0);
  /** [`DRAWN`], [`NOT_YET_DRAWN`] or [`HIDDEN`]. */
  hidden = new Uint8Array(0);
  /** Server time the player was last drawn at (its render time less its extra delay), ms; NaN before. */
  drawnMs = new Float64Array(0);
  /** Ring of samples per slot: index of the oldest and how many. */
  private head = new Uint8Array(0);
  private size = new Uint8Array(0);
  /** Samples, SAMPLES per slot: server time (ms), position (world units), heading (radians), flags. */
  private st = new Float64Array(0);
  private sx = new Float32Array(0);
  private sy = new Float32Array(0);
  private sh = new Float32Array(0);
  private sf = new Uint8Array(0);
  private readonly index = new IdIndex(64);

  constructor(initialCapacity = 64) {
    this.grow(Math.max(1, initialCapacity));
  }

  /** Slot of player `id`, or -1. */
  slotOf(id: number): number {
    return this.index.get(id);
  }

  /** Starts tracking `id` (not tracked yet) with no samples, not drawn yet; returns its slot. */
  add(id: number, tickMs: number): number {
    const slot = this.count;
    if (slot === this.ids.length) this.grow(slot * 2);
    this.count++;
    this.index.set(id, slot);
    this.ids[slot] = id;
    this.shard[slot] = 0;
    this.cell[slot] = 0;
    this.seenMs[slot] = Number.NEGATIVE_INFINITY;
    this.seenAt[slot] = Number.NEGATIVE_INFINITY;
    this.leftAt[slot] = Number.NaN;
    this.previousShard[slot] = Number.NaN;
    this.interval[slot] = tickMs;
    this.extra[slot] = 0;
    this.hidden[slot] = NOT_YET_DRAWN;
    this.drawnMs[slot] = Number.NaN;
    this.head[slot] = 0;
    this.size[slot] = 0;
    return slot;
  }

  /** Stops tracking the player in `slot`; the last slot's player moves into it. */
  remove(slot: number): void {
    const last = this.count - 1;
    this.index.delete(this.ids[slot] as number);
    if (slot !== last) this.move(last, slot);
    this.count--;
  }

  /** Samples stored for `slot`. */
  samples(slot: number): number {
    return this.size[slot] as number;
  }

  /** Server time of the newest sample of `slot`, ms (-Infinity when none). */
  newestMs(slot: number): number {
    const n = this.size[slot] as number;
    return n ? (this.st[this.at(slot, n - 1)] as number) : Number.NEGATIVE_INFINITY;
  }

  /** Server time of the oldest sample of `slot`, ms (Infinity when none). */
  oldestMs(slot: number): number {
    return this.size[slot] ? (this.st[this.at(slot, 0)] as number) : Number.POSITIVE_INFINITY;
  }

  /** Position of the newest sample of `slot`, world units (NaN when none). */
  newestX(slot: number): number {
    const n = this.size[slot] as number;
    return n ? (this.sx[this.at(slot, n - 1)] as number) : Number.NaN;
  }

  /** [`newestX`]'s y, world units (NaN when none). */
  newestY(slot: number): number {
    const n = this.size[slot] as number;
    return n ? (this.sy[this.at(slot, n - 1)] as number) : Number.NaN;
  }

  /** Whether the newest sample of `slot` is walking (false when it has none). */
  newestMoving(slot: number): boolean {
    const n = this.size[slot] as number;
    return n > 0 && ((this.sf[this.at(slot, n - 1)] as number) & FLAG_MOVING) !== 0;
  }

  /**
   * Repeats the newest sample of `slot` at server time `t` (ms, later than
   * it): the player was known to stand there until then (a delta's base).
   * Nothing happens without a sample.
   */
  repeatNewest(slot: number, t: number): void {
    const n = this.size[slot] as number;
    if (!n) return;
    const i = this.at(slot, n - 1);
    this.push(slot, t, this.sx[i] as number, this.sy[i] as number, this.sh[i] as number, this.sf[i] as number);
  }

  /** Forgets the samples of `slot` (it starts over from its next one). */
  clearSamples(slot: number): void {
    this.size[slot] = 0;
  }

  /**
   * Appends a sample at server time `t` (ms): position in world units, heading
   * in radians, flags as on the wire. A sample not newer than the newest is a
   * duplicate or out of order and is dropped (returns false). A full ring
   * drops its oldest.
   */
  push(slot: number, t: number, x: number, y: number, heading: number, flags: number): boolean {
    const n = this.size[slot] as number;
    if (n && t <= (this.st[this.at(slot, n - 1)] as number)) return false;
    let i: number;
    if (n < SAMPLES) {
      i = this.at(slot, n);
      this.size[slot] = n + 1;
    } else {
      i = this.at(slot, 0);
      this.head[slot] = ((this.head[slot] as number) + 1) % SAMPLES;
    }
    this.st[i] = t;
    this.sx[i] = x;
    this.sy[i] = y;
    this.sh[i] = heading;
    this.sf[i] = flags;
    return true;
  }

  /**
   * Server time to draw at in [`emit`], ms (NaN: each player's newest
   * sample), the tick interval (ms) and the walking speed (world units/s).
   * Fields set once a frame rather than arguments, so the per-player call
   * passes no fractional number (none is boxed).
   */
  drawMs = Number.NaN;
  tickMs = 50;
  speed = 120;

  /**
   * Writes the player of `slot` as it stood at server time [`drawMs`] into
   * `sink`: between the two samples around it, at the newest after it (never
   * extrapolated: a walker drawn past its newest would be pulled back when
   * its next sample shows a stop, a turn or a stalled server; cell-world
   * stretches a late walker's delay instead), at the oldest before it. A move between two samples
   * longer than a walk at [`speed`] is a teleport and is not interpolated.
   * Nothing is written for a slot without samples. Hot path: allocates
   * nothing.
   */
  emit(slot: number, sink: PlayerSink): void {
    const n = this.size[slot] as number;
    if (!n) return;
    const base = slot * SAMPLES;
    const head = this.head[slot] as number;
    const newest = base + ((head + n - 1) % SAMPLES);
    const tn = this.st[newest] as number;
    const t = this.drawMs;
    const tc = t === t ? Math.min(t, tn) : tn;
    let k = n - 1;
    while (k >= 0 && (this.st[base + ((head + k) % SAMPLES)] as number) > tc) k--;
    let a: number;
    let b: number;
    if (k < 0) {
      a = b = base + (head % SAMPLES);
    } else if (k < n - 1) {
      a = base + ((head + k) % SAMPLES);
      b = base + ((head + k + 1) % SAMPLES);
    } else {
      a = n > 1 ? base + ((head + n - 2) % SAMPLES) : newest;
      b = newest;
    }
    const ta = this.st[a] as number;
    const span = (this.st[b] as number) - ta;
    let alpha = span > 0 ? Math.max(0, (tc - ta) / span) : 1;
    const ax = this.sx[a] as number;
    const ay = this.sy[a] as number;
    const bx = this.sx[b] as number;
    const by = this.sy[b] as number;
    const maxStep = (this.speed * Math.max(span, this.tickMs) * 1.5) / 1000 + 2;
    if (Math.abs(bx - ax) > maxStep || Math.abs(by - ay) > maxStep) alpha = 1;
    const h = alpha <= 1 ? lerpAngle(this.sh[a] as number, this.sh[b] as number, alpha) : (this.sh[b] as number);
    sink.put(this.ids[slot] as number, ax + (bx - ax) * alpha, ay + (by - ay) * alpha, h, this.sf[b] as number, 0);
  }

  /** Index into the sample arrays of the k-th oldest sample of `slot`. */
  private at(slot: number, k: number): number {
    return slot * SAMPLES + (((this.head[slot] as number) + k) % SAMPLES);
  }

  /** Copies slot `from` (metadata and samples) into slot `to` and re-indexes its id. */
  private move(from: number, to: number): void {
    const id = this.ids[from] as number;
    this.ids[to] = id;
    this.shard[to] = this.shard[from] as number;
    this.cell[to] = this.cell[from] as number;
    this.seenMs[to] = this.seenMs[from] as number;
    this.seenAt[to] = this.seenAt[from] as number;
    this.leftAt[to] = this.leftAt[from] as number;
    this.previousShard[to] = this.previousShard[from] as number;
    this.interval[to] = this.interval[from] as number;
    this.extra[to] = this.extra[from] as number;
    this.hidden[to] = this.hidden[from] as number;
    this.drawnMs[to] = this.drawnMs[from] as number;
    this.head[to] = this.head[from] as number;
    this.size[to] = this.size[from] as number;
    this.st.copyWithin(to * SAMPLES, from * SAMPLES, (from + 1) * SAMPLES);
    this.sx.copyWithin(to * SAMPLES, from * SAMPLES, (from + 1) * SAMPLES);
    this.sy.copyWithin(to * SAMPLES, from * SAMPLES, (from + 1) * SAMPLES);
    this.sh.copyWithin(to * SAMPLES, from * SAMPLES, (from + 1) * SAMPLES);
    this.sf.copyWithin(to * SAMPLES, from * SAMPLES, (from + 1) * SAMPLES);
    this.index.set(id, to);
  }

  /** Replaces every array with one of `cap` slots, keeping [0, count). */
  private grow(cap: number): void {
    const keep = <T extends Uint8Array | Uint32Array | Float32Array | Float64Array>(old: T, made: T): T => {
      made.set(old.subarray(0, Math.min(old.length, made.length)));
      return made;
    };
    this.ids = keep(this.ids, new Uint32Array(cap));
    this.shard = keep(this.shard, new Uint32Array(cap));
    this.cell = keep(this.cell, new Uint32Array(cap));
    this.seenMs = keep(this.seenMs, new Float64Array(cap));
    this.seenAt = keep(this.seenAt, new Float64Array(cap));
    this.leftAt = keep(this.leftAt, new Float64Array(cap));
    this.previousShard = keep(this.previousShard, new Float64Array(cap));
    this.interval = keep(this.interval, new Float32Array(cap));
    this.extra = keep(this.extra, new Float32Array(cap));
    this.hidden = keep(this.hidden, new Uint8Array(cap));
    this.drawnMs = keep(this.drawnMs, new Float64Array(cap));
    this.head = keep(this.head, new Uint8Array(cap));
    this.size = keep(this.size, new Uint8Array(cap));
    this.st = keep(this.st, new Float64Array(cap * SAMPLES));
    this.sx = keep(this.sx, new Float32Array(cap * SAMPLES));
    this.sy = keep(this.sy, new Float32Array(cap * SAMPLES));
    this.sh = keep(this.sh, new Float32Array(cap * SAMPLES));
    this.sf = keep(this.sf, new Uint8Array(cap * SAMPLES));
  }
}
