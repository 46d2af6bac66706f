// The render clocks: one per shard whose cells view frames bring (the local
// shard's and, clustered, the ones relayed from others), each fed once per
// tick of its shard that changed a cell (a tick's view frame brings many
// cells; only the first is a new sample of the network delay). A player is
// drawn on the clock of the shard that lists it.
//
// Frames are placed at their tick's scheduled time rather than the wall
// clock's reading when the tick ran: a shard moves its players by exactly one
// fixed step a tick and counts scheduled ticks (a skipped tick is skipped), so
// tick n is due at origin + n ticks. A tick that ran late (a busy server)
// still moved everyone one step, so drawing it at its wall time would show a
// walk speeding up and slowing down; at its scheduled time it is even, and
// the lateness is just more delay for the render clock's jitter estimate.

import { DEFAULT_CLOCK, RenderClock, type ClockOptions } from './clock.js';
import { IdIndex } from './id-index.js';

/** A shard's clock and where its ticks stand. */
export class ShardClock {
  readonly clock: RenderClock;
  /** Newest tick (low 32 bits), its scheduled time and its wall time, ms; -1 / -Infinity before any. */
  tick = -1;
  newestMs = Number.NEGATIVE_INFINITY;
  lastTimeMs = Number.NEGATIVE_INFINITY;
  /** Local time the newest tick's first frame arrived, ms. */
  lastArrivalMs = Number.NEGATIVE_INFINITY;
  /** Scheduled time of the frame last observed, ms (same base as the times observed). */
  frameMs = 0;
  /** A tick and its time that scheduled times count from (tick -1: none yet). */
  private originTick = -1;
  private originMs = 0;

  /**
   * The scheduled time of `tick`, which ran at `timeMs`: `tickMs` per tick
   * from the origin. The first frame is the origin, and so is any frame whose
   * schedule is over RESYNC_MS from its time (a restarted shard, a server
   * clock that was set).
   */
  scheduled(tick: number, timeMs: number, tickMs: number): number {
    let at = this.originMs + ((tick - this.originTick) | 0) * tickMs;
    if (this.originTick < 0 || Math.abs(at - timeMs) > RESYNC_MS) {
      this.originTick = tick;
      this.originMs = timeMs;
      at = timeMs;
    }
    return at;
  }

  constructor(
    readonly shardId: number,
    options: ClockOptions,
  ) {
    this.clock = new RenderClock(options);
  }
}

/** A tick whose schedule is this far from its time starts a new schedule, ms. */
export const RESYNC_MS = 1000;

/** Ticks are 32-bit on the wire; one within 2^31 after another is newer. */
const HALF_TICKS = 2 ** 31;

/** Shards silent this long, with no cell held, are forgotten, ms (their players were forgotten long before). */
export const SHARD_CLOCK_KEEP_MS = 60_000;

/** Every shard's clock, found by shard id in O(1). */
export class ShardClocks {
  /** The clocks, walked by index every frame. */
  readonly list: ShardClock[] = [];
  private readonly index = new IdIndex(8);

  constructor(private readonly options: ClockOptions = DEFAULT_CLOCK) {}

  /** The clock of `shardId`, or null. */
  of(shardId: number): ShardClock | null {
    const i = this.index.get(shardId);
    return i >= 0 ? (this.list[i] as ShardClock) : null;
  }

  /**
   * Takes a frame of `of.tick` (run at server time `timeMs`) of `of.shard`
   * (read from an object: u32s past the small integers passed as numbers
   * are boxed), arrived at local `arrivalMs`, and returns the shard's clock, its
   * `frameMs` set to the tick's scheduled time. Only a shard's new tick (or a
   * later time: a restarted shard) is a sample of its clock; `tickMs` is the
   * tick interval.
   */
  observe(of: { readonly shard: number; readonly tick: number }, timeMs: number, arrivalMs: number, tickMs: number): ShardClock {
    const shardId = of.shard;
    const tick = of.tick;
    let c = this.of(shardId);
    if (!c) {
      c = new ShardClock(shardId, this.options);
      this.index.set(shardId, this.list.length);
      this.list.push(c);
    }
    const ahead = (tick - c.tick) >>> 0;
    const fresh = c.tick < 0 || (ahead > 0 && ahead < HALF_TICKS);
    const restarted = !fresh && ahead !== 0 && timeMs > c.lastTimeMs;
    c.frameMs = c.scheduled(tick, timeMs, tickMs);
    if (fresh || restarted) {
      c.clock.observe(c.frameMs, arrivalMs, tickMs);
      c.tick = tick;
      c.newestMs = c.frameMs;
      c.lastTimeMs = timeMs;
      c.lastArrivalMs = arrivalMs;
    }
    return c;
  }

  /** Advances every clock to local time `nowMs` (once a frame); allocates nothing. */
  advance(nowMs: number): void {
    for (let i = 0; i < this.list.length; i++) (this.list[i] as ShardClock).clock.advance(nowMs);
  }

  /**
   * Forgets shards whose last frame arrived over SHARD_CLOCK_KEEP_MS before
   * `nowMs`, but for those `keep` says are still needed (a shard whose cells
   * are held but still sends nothing new).
   */
  purge(nowMs: number, keep: (shardId: number) => boolean = () => false): void {
    let removed = false;
    for (let i = this.list.length - 1; i >= 0; i--) {
      const c = this.list[i] as ShardClock;
      if (nowMs - c.lastArrivalMs <= SHARD_CLOCK_KEEP_MS || keep(c.shardId)) continue;
      this.list.splice(i, 1);
      removed = true;
    }
    if (!removed) return;
    this.index.clear();
    this.list.forEach((c, i) => this.index.set(c.shardId, i));
  }
}
