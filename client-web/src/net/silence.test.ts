// The silence rule, with the same cases as loadgen/src/silence.rs's tests.
import { describe, expect, it } from 'vitest';
import { MAX_PROBE_AFTER_MS, MIN_PROBE_AFTER_MS, Silence, probeAfterMs } from './silence.js';

/** A session heard every `gapMs` from 0 to `untilMs`. */
function steady(gapMs: number, untilMs: number): Silence {
  const s = new Silence(0);
  for (let t = gapMs; t <= untilMs; t += gapMs) s.heard(t);
  return s;
}

describe('silence', () => {
  it('in a walking place pings after five quiet ticks and gives up a second later', () => {
    const s = steady(50, 2000);
    expect(s.check(2100)).toEqual({ kind: 'wait', atMs: 2250 });
    expect(s.check(2250)).toEqual({ kind: 'probe', atMs: 3250 });
    expect(s.check(2300)).toEqual({ kind: 'wait', atMs: 3250 });
    expect(s.check(3250)).toEqual({ kind: 'dead', quietMs: 1250 });
  });

  it('ends with any answer, which does not count as a usual gap', () => {
    const s = steady(50, 2000);
    expect(s.check(2250).kind).toBe('probe');
    s.heard(2260);
    expect(s.usualMs).toBeCloseTo(50, 6);
    expect(s.check(2400)).toEqual({ kind: 'wait', atMs: 2510 });
  });

  it('in a still place heard only by its Pongs waits the keep-alive interval', () => {
    const s = steady(2000, 20_000);
    expect(s.check(21_000)).toEqual({ kind: 'wait', atMs: 22_000 });
    expect(s.check(22_000)).toEqual({ kind: 'probe', atMs: 23_000 });
    expect(s.check(23_000)).toEqual({ kind: 'dead', quietMs: 3000 });
    expect(new Silence(0).check(1)).toEqual({ kind: 'wait', atMs: MAX_PROBE_AFTER_MS });
  });

  it('bounds the wait before a Ping both ways', () => {
    expect(probeAfterMs(1)).toBe(MIN_PROBE_AFTER_MS);
    expect(probeAfterMs(100)).toBe(500);
    expect(probeAfterMs(60_000)).toBe(MAX_PROBE_AFTER_MS);
    expect(probeAfterMs(null)).toBe(MAX_PROBE_AFTER_MS);
  });
});
