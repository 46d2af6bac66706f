import { describe, expect, it } from 'vitest';
import { FrameInbox, type ReplaceableMsg } from './inbox.js';
import type { CellMsg, SnapshotMsg } from './protocol.js';

function snapshot(shardId: number, tick: number): SnapshotMsg {
  const bounds = { minX: 0, minY: 0, maxX: 1, maxY: 1 };
  return { kind: 'snapshot', shardId, tick, serverTimeMs: tick * 50, tickHz: 20, bounds, cell: 0, playerCount: 0, readPlayers: () => undefined };
}

function cell(shardId: number, c: number, tick: number): CellMsg {
  return { kind: 'cell', shardId, cell: c, tick, timeMs: tick * 50, playerCount: 0, readPlayers: () => undefined };
}

function inbox(cap?: number): { box: FrameInbox; taken: [string, number, number][] } {
  const taken: [string, number, number][] = [];
  const box = new FrameInbox((m: ReplaceableMsg, at) => taken.push([m.kind === 'snapshot' ? `s${m.shardId}` : `c${m.shardId}:${m.cell}`, m.tick, at]), cap);
  return { box, taken };
}

describe('frame inbox', () => {
  it('takes every frame of a page that keeps up (one or two waiting a shard at each animation frame)', () => {
    const { box, taken } = inbox();
    box.offer(snapshot(1, 10), 100);
    expect(taken).toEqual([]);
    box.flush();
    box.offer(snapshot(1, 11), 150);
    box.offer(snapshot(1, 12), 200);
    box.offer(snapshot(2, 12), 200);
    box.flush();
    expect(taken).toEqual([
      ['s1', 10, 100],
      ['s1', 11, 150],
      ['s1', 12, 200],
      ['s2', 12, 200],
    ]);
    expect(box.skipped).toBe(0);
    expect(box.catchingUp(250)).toBe(false);
  });

  it('behind, takes only the newest frame of a backlogged shard, in arrival order, and says so for a second', () => {
    const { box, taken } = inbox();
    for (let t = 10; t < 50; t++) box.offer(snapshot(1, t), 1000 + t);
    box.offer(snapshot(2, 48), 1048);
    box.offer(snapshot(2, 49), 1049);
    box.flush();
    // Shard 2 kept up (two waiting): both taken, after shard 1's newest, as they arrived.
    expect(taken).toEqual([
      ['s1', 49, 1049],
      ['s2', 48, 1048],
      ['s2', 49, 1049],
    ]);
    expect(box.skipped).toBe(39);
    expect(box.catchingUp(1049 + 999)).toBe(true);
    expect(box.catchingUp(1049 + 1000)).toBe(false);
    expect(box.length).toBe(0);
  });

  it('with area of interest, keeps the newest frame of each backlogged cell of each shard', () => {
    const { box, taken } = inbox();
    for (let t = 1; t <= 3; t++) {
      box.offer(cell(1, 5, t), t);
      if (t === 3) box.offer(cell(1, 6, t), t);
    }
    box.offer(cell(2, 5, 1), 4);
    box.flush();
    expect(taken).toEqual([
      ['c1:5', 3, 3],
      ['c1:6', 3, 3],
      ['c2:5', 1, 4],
    ]);
    expect(box.skipped).toBe(2);
  });

  it('stays bounded without animation frames (a hidden tab): a full inbox is taken at once', () => {
    const { box, taken } = inbox(64);
    for (let t = 0; t < 640; t++) box.offer(snapshot(1, t), t);
    expect(box.length).toBeLessThan(64);
    expect(taken.length).toBe(10);
    expect(taken.at(-1)?.[1]).toBe(639 - box.length);
  });
});
