// What each (shard, cell) listed last, which frames are newer, and the shard
// clocks fed once per tick.
import { describe, expect, it } from 'vitest';
import { CellListing, CellListings } from './cell-listings.js';
import { ShardClocks } from './shard-clocks.js';
import { extraDelayMs, forgetAfterMs, hideAfterMs, unlistedMs } from './view-grace.js';

describe('cell listings', () => {
  it('takes later ticks (across the 32-bit wrap) and later times, never the same or an older frame', () => {
    const l = new CellListing(1, 10);
    expect(l.isNewer({ tick: 5 }, 1000)).toBe(true);
    l.record({ tick: 5 }, 1000, 0, new Uint32Array([1, 2]), 2);
    expect(l.isNewer({ tick: 5 }, 1000)).toBe(false);
    expect(l.isNewer({ tick: 4 }, 950)).toBe(false);
    expect(l.isNewer({ tick: 6 }, 1050)).toBe(true);
    expect(l.isNewer({ tick: 1 }, 60_000)).toBe(true); // a later time (a clock set forward)
    l.record({ tick: 0xffff_ffff }, 2000, 0, new Uint32Array(0), 0);
    expect(l.isNewer({ tick: 0 }, 2000)).toBe(true); // the tick after 2^32 - 1
  });

  it('keeps each listing\'s ids, growing, however long silent, and drops a forgotten cell, a reset shard, or all', () => {
    const all = new CellListings();
    const a = all.of(1, 10);
    a.record({ tick: 1 }, 50, 100, Uint32Array.from({ length: 40 }, (_, i) => i), 40);
    expect(Array.from(a.ids.subarray(0, a.count))).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(all.of(1, 10)).toBe(a);
    expect([a.shard, a.cell]).toEqual([1, 10]);
    all.of(2, 10).record({ tick: 1 }, 50, 5000, new Uint32Array(1), 1);
    all.of(2, 11).record({ tick: 1 }, 50, 5000, new Uint32Array(1), 1);
    expect(all.size).toBe(3);
    const dropped: number[] = [];
    all.drop(1, 10, 100, 6000, (l) => dropped.push(l.count));
    all.drop(1, 99, 100, 6000, (l) => dropped.push(l.count)); // not listed: nothing
    expect(dropped).toEqual([40]);
    expect([all.size, all.hasShard(1), all.find(1, 10)]).toEqual([2, false, undefined]);
    expect(all.of(1, 10)).not.toBe(a);
    all.dropShard(2, (l) => dropped.push(l.cell));
    expect(dropped).toEqual([40, 10, 11]);
    expect([all.size, all.hasShard(2)]).toEqual([1, false]);
    all.dropAll((l) => dropped.push(l.shard));
    expect(dropped).toEqual([40, 10, 11, 1]);
    expect(all.size).toBe(0);
  });

  it('keeps when a cell was forgotten, for a while: states older than a forget are outdated', () => {
    const all = new CellListings();
    all.of(1, 10).record({ tick: 1 }, 50, 100, new Uint32Array(1), 1);
    all.drop(1, 10, 500, 1000, () => undefined);
    all.drop(1, 11, 400, 1000, () => undefined); // never listed (the forget overtook its state): kept too
    all.drop(1, 11, 300, 1100, () => undefined); // an older forget keeps the later one
    expect([all.outdated(1, 10, 450), all.outdated(1, 10, 500), all.outdated(1, 10, 550)]).toEqual([true, false, false]);
    expect([all.outdated(1, 11, 399), all.outdated(1, 12, 0), all.outdated(2, 10, 0)]).toEqual([true, false, false]);
    all.drop(2, 10, 700, 2000, () => undefined);
    expect(all.forgotten).toBe(3);
    all.pruneForgets(1500); // the forgets of shard 1 arrived before: gone; shard 2's stays
    expect([all.outdated(1, 10, 450), all.outdated(2, 10, 650), all.forgotten]).toEqual([false, true, 1]);
    all.drop(3, 1, 10, 3000, () => undefined);
    all.dropAll(() => undefined); // a new socket: the old one's forgets go with it
    expect([all.outdated(3, 1, 5), all.forgotten]).toEqual([false, 0]);
  });
});

describe('shard clocks', () => {
  it('take one sample of the network delay per tick of each shard, however many cells it sends', () => {
    const clocks = new ShardClocks();
    for (let tick = 1; tick <= 10; tick++) {
      for (let cell = 0; cell < 5; cell++) clocks.observe({ shard: 7, tick: tick }, tick * 50, tick * 50 + 10 + cell * 3, 50);
    }
    const c = clocks.of(7);
    expect(c?.tick).toBe(10);
    // Only the first frame of each tick counted: no jitter from the later ones.
    expect(c?.clock.jitterMs).toBe(0);
    expect(clocks.of(8)).toBeNull();
    clocks.observe({ shard: 8, tick: 1 }, 50, 60_000, 50);
    clocks.observe({ shard: 9, tick: 1 }, 50, 100, 50);
    clocks.purge(60_000 + 600, (shard) => shard === 9); // shards 7's and 9's last frames: 510 and 100; 9 is held
    expect(clocks.of(7)).toBeNull();
    expect(clocks.of(8)?.shardId).toBe(8);
    expect(clocks.of(9)?.shardId).toBe(9);
  });
});

describe('scheduled times', () => {
  it('place a tick at its schedule, however late it ran, and start over after a restart', () => {
    const clocks = new ShardClocks();
    expect(clocks.observe({ shard: 7, tick: 100 }, 5000, 5010, 50).frameMs).toBe(5000);
    expect(clocks.observe({ shard: 7, tick: 101 }, 5070, 5080, 50).frameMs).toBe(5050); // ran 20 ms late
    expect(clocks.observe({ shard: 7, tick: 105 }, 5250, 5260, 50).frameMs).toBe(5250); // ticks skipped: still on schedule
    // Restarted: ticks from 1 again, later time.
    expect(clocks.observe({ shard: 7, tick: 1 }, 90_000, 90_010, 50).frameMs).toBe(90_000);
    expect(clocks.observe({ shard: 7, tick: 2 }, 90_050, 90_060, 50).frameMs).toBe(90_050);
    expect(clocks.of(7)?.tick).toBe(2);
  });
});

describe('view graces', () => {
  it('scale with how often the player is updated, never below the server\'s grace to forget (none today: 0)', () => {
    expect(unlistedMs(50, 50)).toBe(300);
    expect(hideAfterMs(50, 50, 900)).toBe(300);
    expect(forgetAfterMs(50, 50, 900)).toBe(900);
    // The prefetch ring under a crowd: every 64 ticks.
    expect(forgetAfterMs(3200, 50, 900)).toBe(12_900);
    expect(hideAfterMs(3200, 50, 900)).toBe(12_900);
    expect([extraDelayMs(50, 50), extraDelayMs(200, 50), extraDelayMs(3200, 50)]).toEqual([0, 150, 1000]);
    expect([hideAfterMs(50, 50, 0), forgetAfterMs(50, 50, 0)]).toEqual([300, 300]);
  });
});
