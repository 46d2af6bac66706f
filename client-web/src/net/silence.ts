// A WebTransport session whose shard died without closing it, noticed by
// its silence: the rule of loadgen/src/silence.rs, which the bots follow too.
//
// Over a websocket the dead process's kernel resets the TCP connection at
// once. Over WebTransport nothing comes: a killed shard's UDP port just stops
// answering, and the session would wait for QUIC's idle timeout (or the
// connection's 8 s silence). So a session that hears nothing for five of its
// usual gaps between messages (from MIN_PROBE_AFTER_MS while frames come
// every tick up to MAX_PROBE_AFTER_MS in a still place, where the keep-alive's
// Pongs are all that comes) sends a Ping; if nothing at all comes within
// ANSWER_WITHIN_MS of it, the shard is taken for dead, and the connection
// resumes elsewhere. A live shard answers a Ping within a round trip, and a
// walking place's frames come every 50 ms, so a live session is never that
// quiet. No I/O: the caller keeps the clock and sends the Ping.

/** Shortest silence that sends a Ping, ms (five ticks at 20 Hz). */
export const MIN_PROBE_AFTER_MS = 250;
/** Longest silence before a Ping, ms: the keep-alive's interval. */
export const MAX_PROBE_AFTER_MS = 2000;
/** How long after the Ping a shard that said nothing is taken for dead, ms. */
export const ANSWER_WITHIN_MS = 1000;
/** Gaps the silence must pass, in units of the session's usual gap. */
const GAPS = 5;
/** Weight of a new gap in the usual gap (an exponential mean). */
const GAP_WEIGHT = 0.125;

/** The silence before a Ping for a session whose usual gap is `usualMs` (null: none seen yet). */
export function probeAfterMs(usualMs: number | null): number {
  if (usualMs === null) return MAX_PROBE_AFTER_MS;
  return Math.min(MAX_PROBE_AFTER_MS, Math.max(MIN_PROBE_AFTER_MS, usualMs * GAPS));
}

/** What the silence calls for now: nothing until `atMs`, a Ping now (look again at `atMs`), or the shard is gone. */
export type Verdict =
  | { readonly kind: 'wait'; readonly atMs: number }
  | { readonly kind: 'probe'; readonly atMs: number }
  | { readonly kind: 'dead'; readonly quietMs: number };

/** One session's silence, on the caller's clock (ms). */
export class Silence {
  private last: number;
  private usual: number | null = null;
  private probed: number | null = null;

  /** A session that heard from its shard at `nowMs` (its Welcome). */
  constructor(nowMs: number) {
    this.last = nowMs;
  }

  /** Something came at `nowMs`: any message counts. */
  heard(nowMs: number): void {
    const gap = Math.max(0, nowMs - this.last);
    // A silence that needed a Ping is not a usual gap.
    if (this.probed === null) this.usual = this.usual === null ? gap : this.usual + GAP_WEIGHT * (gap - this.usual);
    this.last = nowMs;
    this.probed = null;
  }

  /** The usual gap between messages, ms (null before the second message). */
  get usualMs(): number | null {
    return this.usual;
  }

  /** What to do at `nowMs`. */
  check(nowMs: number): Verdict {
    if (this.probed !== null) {
      const deadAt = this.probed + ANSWER_WITHIN_MS;
      return nowMs >= deadAt ? { kind: 'dead', quietMs: nowMs - this.last } : { kind: 'wait', atMs: deadAt };
    }
    const due = this.last + probeAfterMs(this.usual);
    if (nowMs < due) return { kind: 'wait', atMs: due };
    this.probed = nowMs;
    return { kind: 'probe', atMs: nowMs + ANSWER_WITHIN_MS };
  }
}
