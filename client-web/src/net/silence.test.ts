// The silence rule, with the same cases as loadgen/src/silence.rs's tests.
import { describe, expect, it } from 'vitest';
import { MAX_ANSWER_WITHIN_MS, MAX_PROBE_AFTER_MS, MAX_QUIET_MS, MIN_ANSWER_WITHIN_MS, MIN_PROBE_AFTER_MS, Silence, UNKNOWN_PATH, answerWithinMs, probeAfterMs, type Path } from './silence.js';

/** A session heard every `gapMs` from 0 to `untilMs`. */
function steady(gapMs: number, untilMs: number): Silence {
  const s = new Silence(0);
  for (let t = gapMs; t <= untilMs; t += gapMs) s.heard(t);
  return s;
}

/** A path of round trip `rttMs` that has received `packets`, read now. */
const path = (rttMs: number, packets: number): Path => ({ rttMs, packets, asOfMs: Infinity });

describe('silence', () => {
  it('in a walking place pings after five quiet ticks and gives up a second later', () => {
    const s = steady(50, 2000);
    expect(s.check(2100, path(1, 90))).toEqual({ kind: 'wait', atMs: 2250 });
    expect(s.check(2250, path(1, 90))).toEqual({ kind: 'probe', atMs: 3250 });
    expect(s.check(2300, path(1, 90))).toEqual({ kind: 'wait', atMs: 3250 });
    expect(s.check(3250, path(1, 90))).toEqual({ kind: 'dead', quietMs: 1250 });
  });

  it('ends with any message, and pings a place gone still less and less', () => {
    const s = steady(50, 2000);
    expect(s.check(2250, path(1, 90)).kind).toBe('probe');
    s.heard(2260);
    // The silence's 260 ms is learnt: 50 + (260 - 50) / 8.
    expect(s.usualMs).toBeCloseTo(76.25, 6);
    expect(s.check(2400, path(1, 91)).kind).toBe('wait');
    // Only Pongs come now, each a round trip after its Ping: the Pings grow rarer, up to one each MAX_PROBE_AFTER_MS.
    const pings: number[] = [];
    for (let t = 2261; t < 60_000; t++) {
      if (s.check(t, path(1, 91)).kind === 'probe') {
        pings.push(t);
        s.heard(t + 1);
      }
    }
    expect(pings[pings.length - 1]! - pings[pings.length - 2]!).toBeGreaterThanOrEqual(MAX_PROBE_AFTER_MS);
    expect(pings.length).toBeLessThan(60);
  });

  it('in a still place heard only by its Pongs waits the keep-alive interval', () => {
    const s = steady(2000, 20_000);
    // A little past the keep-alive's 2 s, so its own Pong comes first.
    expect(s.check(21_000, path(1, 9))).toEqual({ kind: 'wait', atMs: 22_250 });
    expect(s.check(22_250, path(1, 9))).toEqual({ kind: 'probe', atMs: 23_250 });
    expect(s.check(23_250, path(1, 9))).toEqual({ kind: 'dead', quietMs: 3250 });
    expect(new Silence(0).check(1, UNKNOWN_PATH)).toEqual({ kind: 'wait', atMs: MAX_PROBE_AFTER_MS });
  });

  it('gives a slow path four round trips to answer', () => {
    const s = steady(50, 2000);
    expect(s.check(2250, path(1200, 90))).toEqual({ kind: 'probe', atMs: 7050 });
    expect(s.check(7000, path(1200, 90))).toEqual({ kind: 'wait', atMs: 7050 });
    expect(s.check(7050, path(1200, 90))).toEqual({ kind: 'dead', quietMs: 5050 });
  });

  it('takes packets without a message for a live shard whose tick stalled', () => {
    const s = steady(50, 2000);
    expect(s.check(2250, path(1, 90))).toEqual({ kind: 'probe', atMs: 3250 });
    expect(s.check(3250, path(1, 91))).toEqual({ kind: 'probe', atMs: 4250 });
    expect(s.check(4250, path(1, 91))).toEqual({ kind: 'dead', quietMs: 2250 });
    // Packets for ever, no message: dead at MAX_QUIET_MS all the same (a hung tick).
    const hung = steady(50, 2000);
    let verdict = hung.check(2010, path(1, 90));
    for (let t = 2010, packets = 90; verdict.kind !== 'dead'; ) {
      t += 10;
      packets += 1;
      verdict = hung.check(t, path(1, packets));
    }
    expect(verdict).toEqual({ kind: 'dead', quietMs: MAX_QUIET_MS });
    const blind = steady(50, 2000);
    expect(blind.check(2250, UNKNOWN_PATH)).toEqual({ kind: 'probe', atMs: 3250 });
    expect(blind.check(3250, UNKNOWN_PATH)).toEqual({ kind: 'dead', quietMs: 1250 });
  });

  it('does not believe a packet count read before the answer time', () => {
    const s = steady(50, 2000);
    const readAt = (packets: number, asOfMs: number): Path => ({ rttMs: 1, packets, asOfMs });
    expect(s.check(2250, readAt(90, 2100))).toEqual({ kind: 'probe', atMs: 3250 });
    expect(s.check(3250, readAt(90, 3050))).toEqual({ kind: 'wait', atMs: 3300 });
    expect(s.check(3300, readAt(91, 3260))).toEqual({ kind: 'probe', atMs: 4300 });
  });

  it('bounds the waits both ways', () => {
    expect(probeAfterMs(1)).toBe(MIN_PROBE_AFTER_MS);
    expect(probeAfterMs(100)).toBe(500);
    expect(probeAfterMs(60_000)).toBe(MAX_PROBE_AFTER_MS);
    expect(probeAfterMs(null)).toBe(MAX_PROBE_AFTER_MS);
    expect(answerWithinMs(40)).toBe(MIN_ANSWER_WITHIN_MS);
    expect(answerWithinMs(500)).toBe(2000);
    expect(answerWithinMs(60_000)).toBe(MAX_ANSWER_WITHIN_MS);
    expect(answerWithinMs(null)).toBe(MIN_ANSWER_WITHIN_MS);
  });
});
