// The own player's input timeline, for prediction: every Input the page sent
// since its last Welcome, as stretches of constant direction in local time
// (ms), each with its sequence number. The server echoes the low 7 bits of the
// last sequence number it applied (PlayerState.flags bits 1-7); the stretch of
// that input is where the server is. A bounded ring of typed arrays: it
// allocates nothing once made.

/** Bits of Input.seq the server echoes. */
export const ACK_MASK = 0x7f;

/** Stretches kept (at 20 inputs a second, over 12 s of unacknowledged input). */
export const INPUT_CAPACITY = 256;

/** Sent inputs as stretches of constant direction; index 0 is the oldest kept. */
export class InputTimeline {
  /** Local time each stretch starts, ms; its unit direction; its Input.seq (-1: none, the Welcome's stillness). */
  private readonly startMs = new Float64Array(INPUT_CAPACITY);
  private readonly dx = new Float64Array(INPUT_CAPACITY);
  private readonly dy = new Float64Array(INPUT_CAPACITY);
  private readonly seqs = new Float64Array(INPUT_CAPACITY);
  private head = 0;
  /** Stretches kept. */
  count = 0;
  /** Stretches dropped for room since the last reset (the oldest go first). */
  dropped = 0;

  /** Starts over at local `nowMs` with the server's view after a Welcome: standing still, no input applied. */
  reset(nowMs: number): void {
    this.head = 0;
    this.count = 0;
    this.dropped = 0;
    this.push(nowMs, 0, 0, -1);
  }

  /** A stretch from local `nowMs` on, walking unit (`dx`, `dy`) (0, 0: still), sent as Input `seq`. */
  push(nowMs: number, dx: number, dy: number, seq: number): void {
    if (this.count === INPUT_CAPACITY) this.dropOldest(1);
    const i = (this.head + this.count) % INPUT_CAPACITY;
    // Never before the previous stretch: local time is monotonic, but be safe.
    const prev = this.count ? this.start(this.count - 1) : nowMs;
    this.startMs[i] = Math.max(nowMs, prev);
    this.dx[i] = dx;
    this.dy[i] = dy;
    this.seqs[i] = seq;
    this.count++;
  }

  /** Forgets the `n` oldest stretches. */
  dropOldest(n: number): void {
    const k = Math.min(n, this.count);
    this.head = (this.head + k) % INPUT_CAPACITY;
    this.count -= k;
    this.dropped += k;
  }

  /** Start of the k-th oldest stretch, local ms. */
  start(k: number): number {
    return this.startMs[(this.head + k) % INPUT_CAPACITY] as number;
  }

  /** Unit direction of the k-th oldest stretch. */
  dirX(k: number): number {
    return this.dx[(this.head + k) % INPUT_CAPACITY] as number;
  }

  dirY(k: number): number {
    return this.dy[(this.head + k) % INPUT_CAPACITY] as number;
  }

  /** Input.seq of the k-th oldest stretch (-1: the Welcome's stillness). */
  seq(k: number): number {
    return this.seqs[(this.head + k) % INPUT_CAPACITY] as number;
  }

  /**
   * The newest stretch at index `from` or later whose sequence number's low
   * 7 bits are `ack`, or -1. The server applies inputs in order, so the
   * newest match is the one it means.
   */
  findAck(ack: number, from: number): number {
    for (let k = this.count - 1; k >= Math.max(0, from); k--) {
      const s = this.seq(k);
      if (s >= 0 && (s & ACK_MASK) === ack) return k;
    }
    return -1;
  }

  /** Index of the stretch in effect at local `t` (the last starting at or before it), or -1 before the oldest. */
  at(t: number): number {
    for (let k = this.count - 1; k >= 0; k--) if (this.start(k) <= t) return k;
    return -1;
  }
}
