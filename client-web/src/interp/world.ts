// Every shard's interpolated players merged into one set, by player id: a player
// that moved between shards (or whose shard died and who resumed elsewhere)
// appears once, taken from the shard that listed it most recently. A shard
// that has sent nothing for `staleMs` while another still sends is dropped.
// While no shard sends (a reconnect, a stall) the last view is kept as it is.

import type { Bounds, SnapshotMsg } from '../net/protocol.js';
import type { ClockOptions } from './clock.js';
import { DEFAULT_CLOCK } from './clock.js';
import { ShardTrack, type PlayerSink } from './track.js';

/** Merged players of one frame in columns; [0, count) is valid, arrays are reused and grow by doubling. */
export class MergedPlayers implements PlayerSink {
  count = 0;
  ids = new Uint32Array(64);
  x = new Float32Array(64);
  y = new Float32Array(64);
  heading = new Float32Array(64);
  flags = new Uint8Array(64);
  private priority = new Float64Array(64);
  private readonly index = new Map<number, number>();
  private dedupe = false;

  /** Starts a frame; `dedupe` is needed only when more than one shard contributes. */
  begin(dedupe: boolean): void {
    this.count = 0;
    this.dedupe = dedupe;
    if (dedupe) this.index.clear();
  }

  put(id: number, x: number, y: number, heading: number, flags: number, priority: number): void {
    let i = this.count;
    if (this.dedupe) {
      const seen = this.index.get(id);
      if (seen !== undefined) {
        if (priority <= (this.priority[seen] as number)) return;
        i = seen;
      } else {
        this.index.set(id, i);
      }
    }
    if (i === this.count) {
      if (i === this.ids.length) this.grow();
      this.count++;
    }
    this.ids[i] = id;
    this.x[i] = x;
    this.y[i] = y;
    this.heading[i] = heading;
    this.flags[i] = flags;
    this.priority[i] = priority;
  }

  /** Index of player `id` this frame, or -1 (linear; for tests and rare look-ups). */
  indexOf(id: number): number {
    for (let i = 0; i < this.count; i++) if (this.ids[i] === id) return i;
    return -1;
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
  private readonly tracks = new Map<number, ShardTrack>();
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
    }
    track.push(msg, arrivalMs);
    this.bounds = msg.bounds;
  }

  /** Interpolates every shard at local time `nowMs` into [`players`]. */
  update(nowMs: number): void {
    this.dropStale(nowMs);
    this.players.begin(this.tracks.size > 1);
    for (const track of this.tracks.values()) track.sample(nowMs, this.speed, this.players);
  }

  private dropStale(nowMs: number): void {
    if (this.tracks.size < 2) return;
    let live = false;
    for (const t of this.tracks.values()) live ||= nowMs - t.lastArrivalMs < this.staleMs;
    if (!live) return;
    for (const [id, t] of this.tracks) if (nowMs - t.lastArrivalMs >= this.staleMs) this.tracks.delete(id);
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
    for (const t of this.tracks.values()) if (t.clock.ready) d = Number.isNaN(d) ? t.clock.delayMs : Math.max(d, t.clock.delayMs);
    return d;
  }

  /** Number of snapshot slots in use over every shard (bounded by shards x capacity). */
  bufferedSnapshots(): number {
    let n = 0;
    for (const t of this.tracks.values()) n += t.ring.length;
    return n;
  }

  /** Render-time jumps of every shard so far. */
  snaps(): number {
    let n = 0;
    for (const t of this.tracks.values()) n += t.clock.snaps;
    return n;
  }
}
