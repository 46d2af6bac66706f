// The server clock of view frames: a section carries only the low 32 bits of
// its tick, and ticks are whole periods of 1 / tick rate since the Unix epoch
// (schema/src/view.rs, `tick_time_ms`; net/view.ts mirrors it), so a tick is
// unwrapped against a tick the client already knows (the Welcome's time's,
// then the newest frame's) and its time is its number times the period. Any
// reference within 2^31 ticks of the frame's (3.4 years at 20 Hz) gives the
// right answer.
//
// Times come out as ms since a base (the first Welcome's server time): whole
// numbers that stay small integers for 12 days, which JavaScript engines keep
// unboxed, and the unwrapping is 32-bit integer arithmetic, so taking a frame
// allocates nothing.

/** 2^32: the period of a section's tick on the wire. */
export const TICK_WRAP = 2 ** 32;

/** Unwraps section ticks against a moving reference; see the module comment. */
export class ServerTimeline {
  /** Server time (ms since the epoch) times are counted from; NaN before the first anchor. */
  private base = Number.NaN;
  /** Ticks a second (from the Welcome). */
  private hz = 20;
  /** The reference: a full tick, and its low 32 bits on the wire. */
  private refTick = 0;
  private refLow = 0;

  /** Whether a server time anchored it (a Welcome arrived). */
  get anchored(): boolean {
    return !Number.isNaN(this.base);
  }

  /** The server time (ms since the epoch) that relative times count from (NaN before the first anchor). */
  get baseMs(): number {
    return this.base;
  }

  /**
   * Takes a server time known now (a Welcome's, ms since the epoch) and the
   * tick rate (Hz) as the reference; the first one is also the base.
   */
  anchor(serverTimeMs: number, tickHz: number): void {
    if (Number.isNaN(this.base)) this.base = serverTimeMs;
    this.hz = Math.max(1, tickHz);
    const scaled = serverTimeMs * this.hz;
    this.refTick = (scaled - (scaled % 1000)) / 1000;
    this.refLow = this.refTick % TICK_WRAP;
  }

  /** Forgets the base (the next anchor sets a new one). */
  reset(): void {
    this.base = Number.NaN;
    this.refTick = 0;
    this.refLow = 0;
  }

  /**
   * The time of a section whose tick's low 32 bits are `of.tick`, as ms
   * since [`baseMs`]: the tick nearest the reference, times the period
   * (rounded down, as the server does). A tick later than the reference
   * becomes the reference. Call after an anchor. (The tick is read from an
   * object: a u32 past the small integers passed as a number is boxed.)
   */
  relative(of: { readonly tick: number }): number {
    const low = of.tick;
    const tick = this.refTick + ((low - this.refLow) | 0);
    if (tick > this.refTick) {
      this.refTick = tick;
      this.refLow = low;
    }
    const ms = tick * 1000;
    const t = (ms - (ms % this.hz)) / this.hz - this.base;
    // A whole number: within 24 days of the base an int32, which is returned
    // and passed on unboxed (a small integer, 12 days); later as it is.
    return t === (t | 0) ? t | 0 : t;
  }
}
