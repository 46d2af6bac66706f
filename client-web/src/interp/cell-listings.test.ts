// What each (shard, cell) listed last, which frames are newer, and the shard
// clocks fed once per tick.
import { describe, expect, it } from 'vitest';
import { CellListing, CellListings } from './cell-listings.js';
import { ShardClocks } from './shard-clocks.js';
import { extraDelayMs, forgetAfterMs, hideAfterMs, unlistedMs } from './view-grace.js';

describe('cell listings', () => {
  it('takes later ticks (across the 32-bit wrap) and later times, never the same or an older frame', () => {
    const l = new CellListing();
    expect(l.isNewer(5, 1000)).toBe(true);
    l.record(5, 1000, 0, new Uint32Array([1, 2]), 2);
    expect(l.isNewer(5, 1000)).toBe(false);
    expect(l.isNewer(4, 950)).toBe(false);
    expect(l.isNewer(6, 1050)).toBe(true);
    expect(l.isNewer(1, 60_000)).toBe(true); // a restarted shard: ticks from the start, later time
    l.record(0xffff_ffff, 2000, 0, new Uint32Array(0), 0);
    expect(l.isNewer(0, 2000)).toBe(true); // the tick after 2^32 - 1
  });

  it('keeps each listing\'s ids, growing, and forgets listings long silent', () => {
    const all = new CellListings();
    const a = all.of(1, 10);
    a.record(1, 50, 100, Uint32Array.from({ length: 40 }, (_, i) => i), 40);
    expect(Array.from(a.ids.subarray(0, a.count))).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(all.of(1, 10)).toBe(a);
    all.of(2, 10).record(1, 50, 5000, new Uint32Array(1), 1);
    expect(all.size).toBe(2);
    all.purge(1000);
    expect(all.size).toBe(1);
    expect(all.of(1, 10)).not.toBe(a);
  });
});

describe('shard clocks', () => {
  it('take one sample of the network delay per tick of each shard, however many cells it sends', () => {
    const clocks = new ShardClocks();
    for (let tick = 1; tick <= 10; tick++) {
      for (let cell = 0; cell < 5; cell++) clocks.observe(7, tick, tick * 50, tick * 50 + 10 + cell * 3, 50);
    }
    const c = clocks.of(7);
    expect(c?.tick).toBe(10);
    // Only the first frame of each tick counted: no jitter from the later ones.
    expect(c?.clock.jitterMs).toBe(0);
    expect(clocks.of(8)).toBeNull();
    clocks.observe(8, 1, 50, 60_000, 50);
    clocks.purge(60_000 + 600); // shard 7's last frame: 510
    expect(clocks.of(7)).toBeNull();
    expect(clocks.of(8)?.shardId).toBe(8);
  });
});

describe('scheduled times', () => {
  it('place a tick at its schedule, however late it ran, and start over after a restart', () => {
    const clocks = new ShardClocks();
    expect(clocks.observe(7, 100, 5000, 5010, 50).frameMs).toBe(5000);
    expect(clocks.observe(7, 101, 5070, 5080, 50).frameMs).toBe(5050); // ran 20 ms late
    expect(clocks.observe(7, 105, 5250, 5260, 50).frameMs).toBe(5250); // ticks skipped: still on schedule
    // Restarted: ticks from 1 again, later time.
    expect(clocks.observe(7, 1, 90_000, 90_010, 50).frameMs).toBe(90_000);
    expect(clocks.observe(7, 2, 90_050, 90_060, 50).frameMs).toBe(90_050);
    expect(clocks.of(7)?.tick).toBe(2);
  });
});

describe('view graces', () => {
  it('scale with how often the player is updated, never below the server\'s grace to forget', () => {
    expect(unlistedMs(50, 50)).toBe(300);
    expect(hideAfterMs(50, 50, 900)).toBe(300);
    expect(forgetAfterMs(50, 50, 900)).toBe(900);
    // The prefetch ring under a crowd: every 64 ticks.
    expect(forgetAfterMs(3200, 50, 900)).toBe(12_900);
    expect(hideAfterMs(3200, 50, 900)).toBe(12_900);
    expect([extraDelayMs(50, 50), extraDelayMs(200, 50), extraDelayMs(3200, 50)]).toEqual([0, 150, 1000]);
  });
});
