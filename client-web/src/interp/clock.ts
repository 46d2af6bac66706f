// The render clock of one shard: which server time to draw at, now.
//
// Every snapshot gives one sample of `arrival - server_time` (local clock minus
// server clock plus that frame's network delay). The smallest sample of the
// recent window is the offset with the least delay; a frame's lateness is how
// far its sample sits above that minimum, and the jitter is a fast-rising,
// slowly-falling average of lateness. The delay is one tick plus the larger of
// one tick and twice the jitter, within [minDelayMs, maxDelayMs]: 100 ms at
// 20 Hz on a quiet network.
//
// The render time follows `now - offset - delay` at the speed of real time,
// slewing at most `slew` (15 %) faster or slower to close a small error. It
// never fast-forwards through buffered snapshots: after a frame gap (hidden
// tab, a blocked page), or an error above `snapMs` (a server stall or a late
// burst that moved the offset), it jumps straight to the target, so it is back
// at newest-minus-delay at once, and within snapMs / slew (a third of a
// second) for small errors. No I/O and no clock reads: the caller passes `now`.

/** Tuning of a [`RenderClock`]; every time is ms. */
export interface ClockOptions {
  /** Lowest interpolation delay, ms. */
  readonly minDelayMs: number;
  /** Highest interpolation delay, ms. */
  readonly maxDelayMs: number;
  /** Snapshots over which the least offset is taken (64: 3.2 s at 20 Hz). */
  readonly window: number;
  /** A gap between two frames longer than this snaps the render time. */
  readonly maxFrameGapMs: number;
  /** An error of the render time larger than this snaps instead of slewing. */
  readonly snapMs: number;
  /** Most the render clock runs fast or slow to close an error (0.15 = 15 %). */
  readonly slew: number;
  /** How much the delay may change per ms when it grows / shrinks. */
  readonly delayRise: number;
  readonly delayFall: number;
  /** Weight of a lateness sample above / below the jitter estimate. */
  readonly jitterAttack: number;
  readonly jitterDecay: number;
}

/** Defaults for a 20 Hz shard. */
export const DEFAULT_CLOCK: ClockOptions = {
  minDelayMs: 50,
  maxDelayMs: 250,
  window: 64,
  maxFrameGapMs: 250,
  snapMs: 50,
  slew: 0.15,
  delayRise: 0.1,
  delayFall: 0.02,
  jitterAttack: 0.1,
  jitterDecay: 0.01,
};

/** Render time of one shard's snapshots; see the module comment. */
export class RenderClock {
  private readonly offsets: Float64Array;
  private samples = 0;
  private minOffset = 0;
  private jitter = 0;
  private delay = 0;
  private render = 0;
  private lastNow = Number.NaN;
  private interval = 50;
  /** How many times the render time jumped (by more than snapMs) instead of slewing. */
  snaps = 0;

  constructor(private readonly opts: ClockOptions = DEFAULT_CLOCK) {
    this.offsets = new Float64Array(opts.window);
  }

  /** Records a snapshot of server time `serverTimeMs` that arrived at local `arrivalMs`; `intervalMs` is the tick. */
  observe(serverTimeMs: number, arrivalMs: number, intervalMs: number): void {
    const sample = arrivalMs - serverTimeMs;
    this.offsets[this.samples % this.opts.window] = sample;
    this.samples++;
    this.interval = intervalMs;
    let min = Infinity;
    for (let i = Math.min(this.samples, this.opts.window) - 1; i >= 0; i--) min = Math.min(min, this.offsets[i] as number);
    this.minOffset = min;
    const late = sample - min;
    const w = late > this.jitter ? this.opts.jitterAttack : this.opts.jitterDecay;
    this.jitter += (late - this.jitter) * w;
    if (this.samples === 1) this.delay = this.targetDelay();
  }

  /** The delay the clock moves towards: one tick plus max(one tick, 2 x jitter), within bounds. */
  targetDelay(): number {
    const want = this.interval + Math.max(this.interval, 2 * this.jitter);
    return Math.min(this.opts.maxDelayMs, Math.max(this.opts.minDelayMs, want));
  }

  /** Current interpolation delay, ms. */
  get delayMs(): number {
    return this.delay;
  }

  /** Current jitter estimate, ms. */
  get jitterMs(): number {
    return this.jitter;
  }

  /** Whether any snapshot was observed. */
  get ready(): boolean {
    return this.samples > 0;
  }

  /**
   * Advances to local time `nowMs` (one call per frame); the server time to
   * render is then [`renderMs`]. Returns nothing, so a frame's call boxes no
   * number.
   */
  advance(nowMs: number): void {
    if (!this.samples) return;
    const dt = nowMs - this.lastNow;
    const first = Number.isNaN(dt);
    if (!first) this.moveDelay(Math.max(0, dt));
    const target = nowMs - this.minOffset - this.delay;
    const gap = first || dt > this.opts.maxFrameGapMs || dt < 0;
    const off = Math.abs(target - (this.render + dt)) > this.opts.snapMs;
    if (gap || off) {
      // Counted only when the jump is one: after a long frame on time, nothing moved.
      if (!first && off) this.snaps++;
      this.render = target;
    } else {
      this.render += dt;
      const err = target - this.render;
      const most = this.opts.slew * dt;
      this.render += Math.max(-most, Math.min(most, err));
    }
    this.lastNow = nowMs;
  }

  /** Server time to render as of the last [`advance`], ms; NaN before the first snapshot. */
  get renderMs(): number {
    return this.samples ? this.render : Number.NaN;
  }

  private moveDelay(dt: number): void {
    const goal = this.targetDelay();
    const step = (goal > this.delay ? this.opts.delayRise : this.opts.delayFall) * dt;
    this.delay = goal > this.delay ? Math.min(goal, this.delay + step) : Math.max(goal, this.delay - step);
  }
}
