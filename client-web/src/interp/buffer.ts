// The bounded snapshot buffer of one shard: a ring of reusable slots, each a
// copy of one snapshot's players in column arrays. Pushing into a full ring
// overwrites the oldest slot, so however long the tab stays hidden (snapshots
// keep arriving, nothing consumes them) the memory stays the same.

import type { PlayerColumns, SnapshotMsg } from '../net/protocol.js';
import { IdIndex } from './id-index.js';

/** One stored snapshot. Arrays are reused and grow by doubling; only [0, count) is valid. */
export class SnapshotSlot implements PlayerColumns {
  tick = 0;
  /** Server wall clock of the tick, ms. */
  serverTimeMs = 0;
  /** Local clock (performance.now()) when the frame arrived, ms. */
  arrivalMs = 0;
  count = 0;
  ids = new Uint32Array(0);
  x = new Float32Array(0);
  y = new Float32Array(0);
  heading = new Float32Array(0);
  flags = new Uint8Array(0);
  /** Id -> index of [0, count), built on the first look-up that misses its hint. */
  private readonly index = new IdIndex(16);
  private indexValid = false;

  /** Copies `msg` in, growing the arrays if needed. */
  fill(msg: SnapshotMsg, arrivalMs: number): void {
    const n = msg.playerCount;
    if (n > this.ids.length) this.grow(n);
    this.tick = msg.tick;
    this.serverTimeMs = msg.serverTimeMs;
    this.arrivalMs = arrivalMs;
    this.count = n;
    msg.readPlayers(this);
    this.indexValid = false;
  }

  private grow(n: number): void {
    let cap = Math.max(16, this.ids.length);
    while (cap < n) cap *= 2;
    this.ids = new Uint32Array(cap);
    this.x = new Float32Array(cap);
    this.y = new Float32Array(cap);
    this.heading = new Float32Array(cap);
    this.flags = new Uint8Array(cap);
  }

  /**
   * Index of player `id` in this slot, or -1. `hint` is tried first: shards
   * list players in a stable order, so the same index usually matches.
   */
  find(id: number, hint: number): number {
    if (hint >= 0 && hint < this.count && this.ids[hint] === id) return hint;
    if (!this.indexValid) {
      this.index.clear();
      for (let i = 0; i < this.count; i++) this.index.set(this.ids[i] as number, i);
      this.indexValid = true;
    }
    return this.index.get(id);
  }
}

/** Snapshots of one shard in tick order, at most `capacity` of them. */
export class SnapshotRing {
  private readonly slots: SnapshotSlot[];
  private start = 0;
  private size = 0;

  /** `capacity` slots (default 32: 1.6 s at 20 Hz). */
  constructor(readonly capacity = 32) {
    this.slots = Array.from({ length: capacity }, () => new SnapshotSlot());
  }

  /** Number of stored snapshots. */
  get length(): number {
    return this.size;
  }

  /** The i-th stored snapshot, oldest first. */
  at(i: number): SnapshotSlot {
    return this.slots[(this.start + i) % this.capacity] as SnapshotSlot;
  }

  /** The newest snapshot, or null when empty. */
  newest(): SnapshotSlot | null {
    return this.size ? this.at(this.size - 1) : null;
  }

  /**
   * Stores `msg`. A tick at or before the newest is a duplicate or out of
   * order and is dropped (returns false), unless it was taken later than the
   * newest, which means the shard restarted its tick count: then the ring
   * starts over from it.
   */
  push(msg: SnapshotMsg, arrivalMs: number): boolean {
    const newest = this.newest();
    if (newest && msg.tick <= newest.tick) {
      if (msg.serverTimeMs <= newest.serverTimeMs) return false;
      this.clear();
    }
    let slot: SnapshotSlot;
    if (this.size < this.capacity) {
      slot = this.at(this.size);
      this.size++;
    } else {
      slot = this.at(0);
      this.start = (this.start + 1) % this.capacity;
    }
    slot.fill(msg, arrivalMs);
    return true;
  }

  /**
   * Index of the last snapshot whose server time is at or before `t`, or -1
   * when `t` is before the oldest.
   */
  indexAtOrBefore(t: number): number {
    for (let i = this.size - 1; i >= 0; i--) if (this.at(i).serverTimeMs <= t) return i;
    return -1;
  }

  /** Forgets every snapshot (slots and their arrays are kept). */
  clear(): void {
    this.start = 0;
    this.size = 0;
  }
}
