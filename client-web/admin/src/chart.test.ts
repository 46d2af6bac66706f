import { describe, expect, it } from 'vitest';
import { linePath, niceMax, shardColor } from './chart.js';
import { HistoryModel } from './history.js';

describe('charts', () => {
  it('scale to a round top', () => {
    expect([0, 0.5, 1, 3, 7, 10, 11, 240, 2600].map(niceMax)).toEqual([1, 1, 1, 5, 10, 10, 20, 500, 5000]);
  });

  it('draw time across and values up, lifting the pen over gaps', () => {
    const frame = { width: 300, height: 80 };
    const d = linePath(
      [
        [0, 0],
        [1000, 50],
        [2000, 100],
        [10_000, 100],
      ],
      0,
      10_000,
      100,
      frame,
      3000,
    );
    expect(d).toBe('M0.0 80.0 L30.0 40.0 L60.0 0.0 M300.0 0.0');
    expect(linePath([], 0, 1, 1, frame, 1)).toBe('');
    expect(linePath([[5, 500]], 0, 10, 100, frame, 1)).toBe('M150.0 0.0');
  });

  it('give every shard its own colour', () => {
    expect(shardColor(1)).not.toBe(shardColor(2));
    expect(shardColor(9)).toBe(shardColor(1));
  });

  it('make one series a shard from the history', () => {
    const h = new HistoryModel();
    expect(h.span()).toBeNull();
    h.replace({
      intervalMs: 1000,
      samples: [
        { atMs: 1000, shards: [{ id: 2, players: 5, latenessP99Ms: 1 }] },
        {
          atMs: 2000,
          shards: [
            { id: 1, players: 3, latenessP99Ms: 2 },
            { id: 2, players: 6, latenessP99Ms: 4 },
          ],
        },
      ],
    });
    expect(h.series('players')).toEqual([
      { id: 1, points: [[2000, 3]] },
      {
        id: 2,
        points: [
          [1000, 5],
          [2000, 6],
        ],
      },
    ]);
    expect(h.series('latenessP99Ms')[1]?.points[1]).toEqual([2000, 4]);
    expect(h.span()).toEqual([1000, 2000]);
  });
});
