// Unwrapping the 32-bit ticks of view frames' sections against a known server
// time, and their times, as Rust's schema/src/view.rs does.
import { describe, expect, it } from 'vitest';
import { tickTimeMs, unwrapTick } from '../net/view.js';
import { ServerTimeline, TICK_WRAP } from './server-time.js';

/**
 * [low 32 bits, tick rate (Hz), near (ms since the epoch), Rust's
 * `unwrap_tick(low, near * hz / 1000)`, Rust's `tick_time_ms(low, hz, near)`],
 * as a throwaway example against mino_protocol::view printed them.
 */
const RUST: readonly (readonly [number, number, number, number, number])[] = [
  [929261634, 20, 1764450000123, 35289000002, 1764450000100],
  [5, 20, 1764450000123, 34359738373, 1717986918650],
  [4294967290, 20, 1764450000123, 34359738362, 1717986918100],
  [3, 20, 214748364790, 4294967299, 214748364950],
  [4294967294, 20, 214748364850, 4294967294, 214748364700],
  [1000, 30, 1764450000000, 51539608552, 1717986951733],
  [2147483647, 60, 1000, 2147483647, 35791394116],
  [100, 7, 1764450000999, 12884901988, 1840700284000],
  [0, 0, 1764450000999, 0, 0],
];

const low = (tick: number): number => tick % TICK_WRAP;

describe('tick time', () => {
  it("unwraps a tick and gives its time as Rust's unwrap_tick and tick_time_ms do, across a wrap either way", () => {
    for (const [lo, hz, near, tick, ms] of RUST) {
      const nearTick = Math.floor((near * Math.max(1, hz)) / 1000);
      expect(unwrapTick(lo, nearTick), `unwrap ${lo} near ${nearTick}`).toBe(tick);
      expect(tickTimeMs(lo, hz, near), `time of ${lo} at ${hz} Hz near ${near}`).toBe(ms);
    }
  });

  it('places a tick as tickTimeMs does, counting from the first anchor in small integers, and follows the newest frame', () => {
    const base = 1_764_450_000_123;
    const line = new ServerTimeline();
    expect(line.anchored).toBe(false);
    line.anchor(base, 20);
    expect(line.baseMs).toBe(base);
    const first = Math.floor((base * 20) / 1000);
    // Forty days of ticks, an hour apart, each placed relative to the last
    // (the wrap of the low 32 bits, every 6.8 years at 20 Hz, is the next test's).
    for (let t = 0; t <= 40 * 86_400 * 20; t += 72_000) {
      const tick = first + t;
      const at = line.relative({ tick: low(tick) });
      expect(at).toBe(tickTimeMs(low(tick), 20, base + t * 50) - base);
      expect(Number.isInteger(at)).toBe(true);
    }
    // A tick a little older than the newest is still placed right.
    const newest = first + 40 * 86_400 * 20;
    expect(line.relative({ tick: low(newest - 10) })).toBe((newest - 10) * 50 - base);
    line.reset();
    expect(line.anchored).toBe(false);
  });

  it('unwraps across the wrap of the low 32 bits, either way, and a later Welcome moves the reference, not the base', () => {
    const wrapTick = TICK_WRAP * 9; // a multiple of 2^32 ticks: its low bits are 0
    const base = (wrapTick - 100) * 50; // 20 Hz: 100 ticks before the wrap
    const line = new ServerTimeline();
    line.anchor(base, 20);
    expect(line.relative({ tick: low(wrapTick + 30) })).toBe((wrapTick + 30) * 50 - base); // just past the wrap
    expect(line.relative({ tick: low(wrapTick - 30) })).toBe((wrapTick - 30) * 50 - base); // an older one, before it
    line.anchor(base + 30 * 86_400_000, 20);
    const later = (base + 30 * 86_400_000) / 50 + 1;
    expect(line.relative({ tick: low(later) })).toBe(later * 50 - base);
    expect(line.baseMs).toBe(base);
  });
});
