// A WebTransport session whose shard died without closing it, noticed by
// its silence: the rule of loadgen/src/silence.rs, which the bots follow too
// (the same test cases).
//
// Over a websocket the dead process's kernel resets the TCP connection at
// once. Over WebTransport nothing comes: a killed shard's UDP port just stops
// answering, and the session would wait for QUIC's idle timeout (or the
// connection's 8 s silence). So a session that hears no message for five of
// its usual gaps (MIN_PROBE_AFTER_MS while frames come every tick, up to
// MAX_PROBE_AFTER_MS) sends a Ping, and judges at the end of answerWithinMs
// of it (at least MIN_ANSWER_WITHIN_MS, and four round trips: QUIC resends a
// lost Ping or Pong after about one):
// - a message came meanwhile: alive, the silence is over;
// - none came, but the transport received packets since the Ping (the
//   shard's QUIC stack acknowledged it: the process lives, its tick is late
//   or stalled, and its Pong, answered by the tick, waits; a shard with
//   --worker-threads above 1, whose QUIC runs beside the tick): alive, and
//   another Ping;
// - nothing at all came (or the transport cannot tell: Chromium 156 has no
//   WebTransport.getStats()): the shard is taken for dead, and the
//   connection resumes elsewhere, as from a shard that stalled that long;
// - and whatever the packets, no message for MAX_QUIET_MS (a tick that hangs
//   while its QUIC answers) is dead too: the websocket's silence bound.
// A packet count is only believed when read at or after the answer time (a
// page reads its browser's asynchronously, a look late).
// No I/O: the caller keeps the clock, sends the Ping and reads its
// transport's round trip and packet count.

/** Shortest silence that sends a Ping, ms (five ticks at 20 Hz). */
export const MIN_PROBE_AFTER_MS = 250;
/** Longest silence before a Ping, ms: a little more than the keep-alive's 2 s, so in a still place its own Pong comes first. */
export const MAX_PROBE_AFTER_MS = 2250;
/** Least time given a Ping to be answered, ms. */
export const MIN_ANSWER_WITHIN_MS = 1000;
/** Most time given a Ping to be answered, ms, whatever the round trip read. */
export const MAX_ANSWER_WITHIN_MS = 5000;
/** Longest silence a session takes, packets or not, ms (the websocket's silence bound). */
export const MAX_QUIET_MS = 8000;
/** How soon to look again when the packet count is older than the answer time, ms. */
const RECHECK_MS = 50;
/** Round trips given a Ping to be answered. */
const ANSWER_ROUND_TRIPS = 4;
/** Gaps the silence must pass, in units of the session's usual gap. */
const GAPS = 5;
/** Weight of a new gap in the usual gap (an exponential mean). */
const GAP_WEIGHT = 0.125;

/** The silence before a Ping for a session whose usual gap is `usualMs` (null: none seen yet). */
export function probeAfterMs(usualMs: number | null): number {
  if (usualMs === null) return MAX_PROBE_AFTER_MS;
  return Math.min(MAX_PROBE_AFTER_MS, Math.max(MIN_PROBE_AFTER_MS, usualMs * GAPS));
}

/** How long a Ping is given to be answered on a path of round trip `rttMs` (null: not known). */
export function answerWithinMs(rttMs: number | null): number {
  return rttMs === null ? MIN_ANSWER_WITHIN_MS : Math.min(MAX_ANSWER_WITHIN_MS, Math.max(MIN_ANSWER_WITHIN_MS, rttMs * ANSWER_ROUND_TRIPS));
}

/** What the transport says of its path: its smoothed round trip (ms) and the packets it had received (null: not known) when read, at `asOfMs` on the silence's clock. */
export interface Path {
  readonly rttMs: number | null;
  readonly packets: number | null;
  readonly asOfMs: number;
}

/** A path the transport says nothing of. */
export const UNKNOWN_PATH: Path = { rttMs: null, packets: null, asOfMs: 0 };

/** What the silence calls for now: nothing until `atMs`, a Ping now (look again at `atMs`), or the shard is gone. */
export type Verdict =
  | { readonly kind: 'wait'; readonly atMs: number }
  | { readonly kind: 'probe'; readonly atMs: number }
  | { readonly kind: 'dead'; readonly quietMs: number };

/** One session's silence, on the caller's clock (ms). */
export class Silence {
  private last: number;
  private usual: number | null = null;
  /** The Ping of this silence: when, the packets received then, and its answer time. */
  private probe: { at: number; packets: number | null; answer: number } | null = null;

  /** A session that heard from its shard at `nowMs` (its Welcome). */
  constructor(nowMs: number) {
    this.last = nowMs;
  }

  /**
   * A message came at `nowMs`: any message counts, and its gap is learnt (a
   * silence that needed a Ping too: a place gone still, whose Pongs are all
   * that comes, lengthens the usual gap towards MAX_PROBE_AFTER_MS instead of
   * being pinged every MIN_PROBE_AFTER_MS for ever).
   */
  heard(nowMs: number): void {
    const gap = Math.max(0, nowMs - this.last);
    this.usual = this.usual === null ? gap : this.usual + GAP_WEIGHT * (gap - this.usual);
    this.last = nowMs;
    this.probe = null;
  }

  /** The usual gap between messages, ms (null before the second message). */
  get usualMs(): number | null {
    return this.usual;
  }

  /** What to do at `nowMs`, the transport's path being `path`. */
  check(nowMs: number, path: Path): Verdict {
    const p = this.probe;
    if (nowMs - this.last >= MAX_QUIET_MS) return { kind: 'dead', quietMs: nowMs - this.last };
    if (p !== null) {
      if (nowMs < p.at + p.answer) return { kind: 'wait', atMs: p.at + p.answer };
      if (path.packets !== null && path.asOfMs < p.at + p.answer) return { kind: 'wait', atMs: nowMs + RECHECK_MS };
      const packetsCame = p.packets !== null && path.packets !== null && path.packets > p.packets;
      return packetsCame ? this.ping(nowMs, path) : { kind: 'dead', quietMs: nowMs - this.last };
    }
    const due = this.last + probeAfterMs(this.usual);
    return nowMs >= due ? this.ping(nowMs, path) : { kind: 'wait', atMs: due };
  }

  private ping(nowMs: number, path: Path): Verdict {
    const answer = answerWithinMs(path.rttMs);
    this.probe = { at: nowMs, packets: path.packets, answer };
    return { kind: 'probe', atMs: nowMs + answer };
  }
}
