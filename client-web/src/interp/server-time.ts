// The server clock of view frames: a FrameHeader carries only the low 32 bits
// of the server's ms since the Unix epoch (they wrap every 49.7 days), so the
// client unwraps them against a server time it already knows: the Welcome's,
// then the newest frame's. Any reference within 24.8 days of the frame's real
// time gives the right answer.
//
// Times come out as ms since a base (the first Welcome's server time): whole
// numbers that stay small integers for 12 days, which JavaScript engines keep
// unboxed, and the unwrapping is 32-bit integer arithmetic, so taking a frame
// allocates nothing.

/** 2^32: the period of a FrameHeader's time, ms. */
export const TIME_WRAP_MS = 2 ** 32;

/** Unwraps FrameHeader times against a moving reference; see the module comment. */
export class ServerTimeline {
  /** Server time (ms since the epoch) times are counted from; NaN before the first anchor. */
  private base = Number.NaN;
  /** The reference: ms since the base, and its low 32 bits on the wire. */
  private refMs = 0;
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
   * Takes a server time known now (a Welcome's, ms since the epoch) as the
   * reference; the first one is also the base.
   */
  anchor(serverTimeMs: number): void {
    if (Number.isNaN(this.base)) this.base = serverTimeMs;
    this.refMs = serverTimeMs - this.base;
    this.refLow = serverTimeMs % TIME_WRAP_MS;
  }

  /** Forgets the base (the next anchor sets a new one). */
  reset(): void {
    this.base = Number.NaN;
    this.refMs = 0;
    this.refLow = 0;
  }

  /**
   * The time of a frame whose header says `low32` (the low 32 bits of its
   * server time), as ms since [`baseMs`]: the one nearest the reference. A
   * time later than the reference becomes the reference. Call after an
   * anchor.
   */
  relative(low32: number): number {
    const t = this.refMs + ((low32 - this.refLow) | 0);
    if (t > this.refMs) {
      this.refMs = t;
      this.refLow = low32;
    }
    return t;
  }
}

/**
 * The full server time (ms since the Unix epoch) whose low 32 bits are
 * `low32`, nearest to `referenceMs`.
 */
export function unwrapServerTime(low32: number, referenceMs: number): number {
  const line = new ServerTimeline();
  line.anchor(referenceMs);
  return referenceMs + line.relative(low32);
}
