// Unwrapping the 32-bit times of view frames against a known server time.
import { describe, expect, it } from 'vitest';
import { ServerTimeline, TIME_WRAP_MS, unwrapServerTime } from './server-time.js';

const low = (ms: number): number => ms % TIME_WRAP_MS;

describe('server time', () => {
  it('unwraps the low 32 bits to the time nearest the reference, across a wrap either way', () => {
    const wrap = TIME_WRAP_MS * 411;
    for (const [frame, reference] of [
      [1_764_450_000_150, 1_764_450_000_000],
      [wrap + 30, wrap - 70], // the frame is just past a wrap, the reference before it
      [wrap - 30, wrap + 70], // and the other way round
      [wrap + 5 * 86_400_000, wrap - 86_400_000], // days apart
    ] as const) {
      expect(unwrapServerTime(low(frame), reference)).toBe(frame);
    }
  });

  it('counts from the first anchor in small integers and follows the newest frame', () => {
    const base = TIME_WRAP_MS * 411 - 1000;
    const line = new ServerTimeline();
    expect(line.anchored).toBe(false);
    line.anchor(base);
    expect(line.baseMs).toBe(base);
    // Twenty days of frames, a minute apart: each is relative to the last, so
    // the reference never falls more than 24 days behind.
    for (let t = 0; t <= 20 * 86_400_000; t += 60_000) expect(line.relative(low(base + t))).toBe(t);
    // A frame a little older than the newest is still placed right.
    expect(line.relative(low(base + 20 * 86_400_000 - 500))).toBe(20 * 86_400_000 - 500);
    // A later Welcome moves the reference, not the base.
    line.anchor(base + 30 * 86_400_000);
    expect(line.relative(low(base + 30 * 86_400_000 + 50))).toBe(30 * 86_400_000 + 50);
    line.reset();
    expect(line.anchored).toBe(false);
  });
});
