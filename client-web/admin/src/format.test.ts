import { describe, expect, it } from 'vitest';
import { drainProgress, formatMs, formatPlayers, formatPosition, formatRate, formatUptime, ticksBehind } from './format.js';

describe('format', () => {
  it('writes uptimes at a useful precision', () => {
    expect(formatUptime(12_400)).toBe('12 s');
    expect(formatUptime(252_000)).toBe('4 min 12 s');
    expect(formatUptime(2 * 3_600_000 + 5 * 60_000)).toBe('2 h 05 min');
    expect(formatUptime(3 * 86_400_000 + 4 * 3_600_000)).toBe('3 d 4 h');
    expect(formatUptime(-5)).toBe('0 s');
  });

  it('writes milliseconds, rates and positions', () => {
    expect(formatMs(0.44)).toBe('0.4 ms');
    expect(formatMs(12.6)).toBe('13 ms');
    expect(formatMs(1300)).toBe('1.3 s');
    expect(formatMs(null)).toBe('–');
    expect(formatRate(19.94, 20)).toBe('19.9 / 20');
    expect(ticksBehind(17.9, 20)).toBe(true);
    expect(ticksBehind(18.1, 20)).toBe(false);
    expect(formatPosition(120.4, 344.6)).toBe('(120, 345)');
    expect(formatPosition(null, 3)).toBe('–');
    expect(formatPlayers(2500, 5000)).toBe('2,500 / 5,000');
  });

  it('reads a drain as the share moved', () => {
    expect(drainProgress({ from: 250, left: 100 })).toEqual({ done: 0.6, text: 'moved 150 of 250, 100 left' });
    expect(drainProgress({ from: 0, left: 0 }).done).toBe(1);
    expect(drainProgress({ from: 10, left: 12 }).done).toBe(0);
  });
});
