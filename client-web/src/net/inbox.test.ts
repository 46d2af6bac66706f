import { describe, expect, it } from 'vitest';
import { FRAME_BUDGET_BYTES, bytesPerFrame } from '../testing/allocation.js';
import { FrameInbox, type ReplaceableMsg } from './inbox.js';
import type { CellMsg, SnapshotMsg } from './protocol.js';

function snapshot(shardId: number, tick: number): SnapshotMsg {
  const bounds = { minX: 0, minY: 0, maxX: 1, maxY: 1 };
  return { kind: 'snapshot', shardId, tick, serverTimeMs: tick * 50, tickHz: 20, bounds, cell: 0, playerCount: 0, readPlayers: () => undefined };
}

function cell(shardId: number, c: number, tick: number): CellMsg {
  return { kind: 'cell', shardId, cell: c, tick, timeMs: (tick * 50) % 2 ** 32, playerCount: 0, readPlayers: () => undefined };
}

function inbox(cap?: number): { box: FrameInbox; taken: [string, number, number][] } {
  const taken: [string, number, number][] = [];
  const box = new FrameInbox((m: ReplaceableMsg, at) => taken.push([m.kind === 'snapshot' ? `s${m.shardId}` : `c${m.shardId}:${m.cell}`, m.tick, at]), cap);
  return { box, taken };
}

describe('frame inbox', () => {
  it('takes every frame of a page that keeps up, even one drawing only 5 frames a second', () => {
    const { box, taken } = inbox();
    box.offer(snapshot(1, 10), 100);
    expect(taken).toEqual([]);
    box.flush();
    // 200 ms of snapshots (ticks every 50 ms) waiting: a slow page, not a backlog.
    for (let t = 11; t <= 15; t++) box.offer(snapshot(1, t), 100 + 50 * (t - 10));
    box.offer(snapshot(2, 15), 350);
    box.flush();
    expect(taken.map(([k, t]) => `${k}@${t}`)).toEqual(['s1@10', 's1@11', 's1@12', 's1@13', 's1@14', 's1@15', 's2@15']);
    expect(box.skipped).toBe(0);
    expect(box.catchingUp(400)).toBe(false);
  });

  it('behind, skips what is over 200 ms older than the newest of its shard, in arrival order, and says so for a second', () => {
    const { box, taken } = inbox();
    // Two seconds of shard 1 arrive in one burst (the browser held them), one tick of shard 2.
    for (let t = 10; t < 50; t++) box.offer(snapshot(1, t), 1049);
    box.offer(snapshot(2, 49), 1049);
    box.flush();
    expect(taken.map(([k, t]) => `${k}@${t}`)).toEqual(['s1@45', 's1@46', 's1@47', 's1@48', 's1@49', 's2@49']);
    expect(box.skipped).toBe(35);
    expect(box.catchingUp(1049 + 999)).toBe(true);
    expect(box.catchingUp(1049 + 1000)).toBe(false);
    expect(box.length).toBe(0);
  });

  it('with area of interest, judges each cell of each shard by its own newest, across the 32-bit wrap', () => {
    const { box, taken } = inbox();
    const near = Math.floor(2 ** 32 / 50) - 4; // ticks whose 32-bit times wrap between them
    for (let t = 0; t < 10; t++) box.offer(cell(1, 5, near + t), t);
    box.offer(cell(1, 6, near), 10); // a far cell: its only frame is its newest
    box.flush();
    expect(taken.map(([k]) => k)).toEqual(['c1:5', 'c1:5', 'c1:5', 'c1:5', 'c1:5', 'c1:6']);
    expect(box.skipped).toBe(5);
  });

  it('stays bounded without animation frames (a hidden tab): a full inbox is taken at once', () => {
    const { box, taken } = inbox(64);
    for (let t = 0; t < 640; t++) box.offer(snapshot(1, t), t);
    expect(box.length).toBeLessThan(64);
    expect(taken.length).toBe(50);
    expect(taken.at(-1)?.[1]).toBe(639 - box.length);
  });

  it('allocates nothing in a steady frame that takes a snapshot', async () => {
    let taken = 0;
    const box = new FrameInbox(() => taken++);
    const frames = Array.from({ length: 64 }, (_, i) => snapshot(1, i));
    const cells = Array.from({ length: 64 }, (_, i) => cell(1, 5, i));
    let f = 0;
    const bytes = await bytesPerFrame(() => {
      box.offer(frames[f % 64] as SnapshotMsg, f);
      box.offer(cells[f % 64] as CellMsg, f);
      box.flush();
      f++;
    });
    expect(taken).toBeGreaterThan(1000);
    expect(bytes).toBeLessThan(FRAME_BUDGET_BYTES);
  });
});
