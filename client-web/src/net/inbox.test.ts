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

function inbox(): { box: FrameInbox; taken: [string, number, number][]; run: () => void } {
  const taken: [string, number, number][] = [];
  let task: (() => void) | null = null;
  const box = new FrameInbox(
    (m: ReplaceableMsg, at) => taken.push([m.kind === 'snapshot' ? `s${m.shardId}` : `c${m.shardId}:${m.cell}`, m.tick, at]),
    (fn) => (task = fn),
  );
  return { box, taken, run: () => task?.() };
}

describe('frame inbox', () => {
  it('takes every frame of a page that keeps up, each in its own task', () => {
    const { box, taken, run } = inbox();
    box.offer(snapshot(1, 10), 100);
    expect(taken).toEqual([]);
    run();
    box.offer(snapshot(1, 11), 150);
    run();
    expect(taken).toEqual([
      ['s1', 10, 100],
      ['s1', 11, 150],
    ]);
    expect(box.skipped).toBe(0);
    expect(box.catchingUp(200)).toBe(false);
  });

  it('behind, takes only the newest frame of each shard, in arrival order, and says so for a second', () => {
    const { box, taken, run } = inbox();
    for (let t = 10; t < 50; t++) {
      box.offer(snapshot(1, t), 1000 + t);
      if (t % 2) box.offer(snapshot(2, t), 1000 + t);
    }
    run();
    expect(taken).toEqual([
      ['s1', 49, 1049],
      ['s2', 49, 1049],
    ]);
    expect(box.skipped).toBe(40 + 20 - 2);
    expect(box.catchingUp(1049 + 999)).toBe(true);
    expect(box.catchingUp(1049 + 1000)).toBe(false);
    expect(box.length).toBe(0);
  });

  it('with area of interest, keeps the newest frame of each cell of each shard', () => {
    const { box, taken } = inbox();
    box.offer(cell(1, 5, 1), 1);
    box.offer(cell(1, 6, 1), 1);
    box.offer(cell(2, 5, 1), 1);
    box.offer(cell(1, 5, 2), 2);
    box.offer(cell(1, 6, 2), 2);
    box.flush();
    expect(taken).toEqual([
      ['c2:5', 1, 1],
      ['c1:5', 2, 2],
      ['c1:6', 2, 2],
    ]);
    expect(box.skipped).toBe(2);
  });
});
