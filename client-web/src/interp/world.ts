// Every shard's interpolated players merged into one set, by player id: a player
// that moved between shards (or whose shard died and who resumed elsewhere)
// appears once, taken from the shard that listed it most recently. A shard
// that has sent nothing for `staleMs` while another still sends is dropped.
// While no shard sends (a reconnect, a stall) the last view is kept as it is.

import type { Bounds, SnapshotMsg } from '../net/protocol.js';
import type { ClockOptions } from './clock.js';
import { DEFAULT_CLOCK } from './clock.js';
import { IdIndex } from './id-index.js';
import { ShardTrack, type PlayerSink } from './track.js';

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

/** The interpolated view of the place across shards. */
export class InterpolatedWorld {
  /** Tracks by shard id, and the same tracks in a list the frame loop walks without an iterator. */
  private readonly tracks = new Map<number, ShardTrack>();
  private readonly list: ShardTrack[] = [];
  readonly players = new MergedPlayers();
  /** Walking speed, world units per second (from Welcome). */
  speed = 120;
  /** World bounds from the newest snapshot or Welcome. */
  bounds: Bounds | null = null;

  constructor(
    /** A shard silent this long while another sends is dropped, ms. */
    private readonly staleMs = 2000,
    private readonly capacity = 32,
    private readonly clock: ClockOptions = DEFAULT_CLOCK,
  ) {}

  /** Stores a snapshot that arrived at local time `arrivalMs`. */
  onSnapshot(msg: SnapshotMsg, arrivalMs: number): void {
    let track = this.tracks.get(msg.shardId);
    if (!track) {
      track = new ShardTrack(msg.shardId, this.capacity, this.clock);
      this.tracks.set(msg.shardId, track);
      this.list.push(track);
    }
    track.push(msg, arrivalMs);
    this.bounds = msg.bounds;
  }

  /** Interpolates every shard at local time `nowMs` into [`players`]; allocates nothing. */
  update(nowMs: number): void {
    this.dropStale(nowMs);
    this.players.begin();
    for (let i = 0; i < this.list.length; i++) (this.list[i] as ShardTrack).sample(nowMs, this.speed, this.players);
  }

  private dropStale(nowMs: number): void {
    if (this.list.length < 2) return;
    let live = false;
    for (let i = 0; i < this.list.length; i++) live ||= nowMs - (this.list[i] as ShardTrack).lastArrivalMs < this.staleMs;
    if (!live) return;
    for (let i = this.list.length - 1; i >= 0; i--) {
      const t = this.list[i] as ShardTrack;
      if (nowMs - t.lastArrivalMs < this.staleMs) continue;
      this.list.splice(i, 1);
      this.tracks.delete(t.shardId);
    }
  }

  /** The track of `shardId`, if any. */
  track(shardId: number): ShardTrack | undefined {
    return this.tracks.get(shardId);
  }

  /** Number of shards with snapshots. */
  get shardCount(): number {
    return this.tracks.size;
  }

  /** Interpolation delay of `shardId`'s track, or the largest of all when absent; ms (NaN when none). */
  delayMs(shardId?: number): number {
    const own = shardId === undefined ? undefined : this.tracks.get(shardId);
    if (own?.clock.ready) return own.clock.delayMs;
    let d = Number.NaN;
    for (const t of this.list) if (t.clock.ready) d = Number.isNaN(d) ? t.clock.delayMs : Math.max(d, t.clock.delayMs);
    return d;
  }

  /** Number of snapshot slots in use over every shard (bounded by shards x capacity). */
  bufferedSnapshots(): number {
    let n = 0;
    for (const t of this.list) n += t.ring.length;
    return n;
  }

  /** Render-time jumps of every shard so far. */
  snaps(): number {
    let n = 0;
    for (const t of this.list) n += t.clock.snaps;
    return n;
  }
}
