// The players drawn in one frame, in columns for the one instanced draw: each
// player once, by id (the own player's prediction replaces its interpolated
// copy, by priority).

import { IdIndex } from './id-index.js';
import type { PlayerSink } from './player-tracks.js';

/**
 * Merged players of one frame in columns; [0, count) is valid, arrays are
 * reused and grow by doubling. Players are found by id through an index
 * rebuilt as the frame is filled, so [`indexOf`] is O(1) and a frame allocates
 * nothing once the arrays have grown to the player count.
 */
export class MergedPlayers implements PlayerSink {
  count = 0;
  ids = new Uint32Array(64);
  x = new Float32Array(64);
  y = new Float32Array(64);
  heading = new Float32Array(64);
  flags = new Uint8Array(64);
  private priority = new Float64Array(64);
  private readonly index = new IdIndex(64);

  /** Starts a frame: no players. */
  begin(): void {
    this.count = 0;
    this.index.clear();
  }

  /**
   * Adds a player, or replaces the copy of it already in this frame when
   * `priority` is higher (the same player listed by two shards).
   */
  put(id: number, x: number, y: number, heading: number, flags: number, priority: number): void {
    let i = this.index.get(id);
    if (i >= 0) {
      if (priority <= (this.priority[i] as number)) return;
    } else {
      i = this.count;
      if (i === this.ids.length) this.grow();
      this.count++;
      this.index.set(id, i);
    }
    this.ids[i] = id;
    this.x[i] = x;
    this.y[i] = y;
    this.heading[i] = heading;
    this.flags[i] = flags;
    this.priority[i] = priority;
  }

  /** Index of player `id` this frame, or -1; O(1). */
  indexOf(id: number): number {
    return this.index.get(id);
  }

  private grow(): void {
    const cap = this.ids.length * 2;
    const copy = <T extends Uint32Array | Float32Array | Uint8Array | Float64Array>(src: T, dst: T): T => {
      dst.set(src);
      return dst;
    };
    this.ids = copy(this.ids, new Uint32Array(cap));
    this.x = copy(this.x, new Float32Array(cap));
    this.y = copy(this.y, new Float32Array(cap));
    this.heading = copy(this.heading, new Float32Array(cap));
    this.flags = copy(this.flags, new Uint8Array(cap));
    this.priority = copy(this.priority, new Float64Array(cap));
  }
}
