// What the page holds between frames, past the shared fixture
// (net/delta.test.ts): players read in world units, cells forgotten per
// shard and reused clean, a frame refused whole changing nothing, and a
// steady frame of walkers applied and read with no allocation.
import { describe, expect, it } from 'vitest';
import { FRAME_BUDGET_BYTES, bytesPerFrame } from '../testing/allocation.js';
import { frameOf, fullBody, item, section, walkerScene } from '../testing/delta-frames.js';
import { Held, type HeldCell } from './held.js';
import { Motion } from './motion.js';
import type { PlayerColumns } from './protocol.js';

const BOUNDS = { minX: -100, minY: 50, maxX: 900, maxY: 1050 };

function held(maxPlayers = 100): Held {
  return new Held(new Motion(BOUNDS, 120, 20), maxPlayers);
}

function columns(n: number): PlayerColumns {
  return { ids: new Uint32Array(n), x: new Float32Array(n), y: new Float32Array(n), heading: new Float32Array(n), flags: new Uint8Array(n) };
}

function ids(c: HeldCell | undefined): number[] {
  return c ? Array.from(c.entries.ids.subarray(0, c.entries.count)) : [];
}

const A = { id: 7, x: 0, y: 65535, heading: 64, flags: 3 };
const B = { id: 9, x: 65535, y: 0, heading: 0, flags: 0 };

describe('held cells', () => {
  it("reads a cell's players in world units over the Welcome's bounds", () => {
    const h = held();
    expect(h.apply(frameOf(section(1, 5, [[2, [item(0, fullBody([A, B]))]]])))).toBeNull();
    const cell = h.cell(1, 2);
    const out = columns(2);
    cell?.readPlayers(out, BOUNDS);
    expect(cell?.playerCount).toBe(2);
    expect(Array.from(out.ids)).toEqual([7, 9]);
    expect(Array.from(out.x)).toEqual([-100, 900]);
    expect(Array.from(out.y)).toEqual([1050, 50]);
    expect(Array.from(out.heading)).toEqual([Math.fround(Math.PI / 2), 0]);
    expect(Array.from(out.flags)).toEqual([3, 0]);
  });

  it('forgets a shard, and a cell told again starts from nothing', () => {
    const h = held();
    const both = frameOf(section(1, 5, [[2, [item(0, fullBody([A, B]))]], [3, [item(0, fullBody([A]))]]]), section(4, 5, [[2, [item(0, fullBody([B]))]]]));
    expect(h.apply(both)).toBeNull();
    expect(h.updateCount).toBe(3);
    h.forgetShard(1);
    expect([h.cell(1, 2), h.cell(1, 3)]).toEqual([undefined, undefined]);
    expect(ids(h.cell(4, 2))).toEqual([9]);
    // A delta onto the forgotten cell applies to the empty state: B enters.
    const enter = [0b001_000_00, 9, 0xff, 0xff, 0, 0, 0, 0];
    expect(h.apply(frameOf(section(1, 6, [[2, [item(1, enter)]]])))).toBeNull();
    expect(ids(h.cell(1, 2))).toEqual([9]);
    h.clear();
    let left = 0;
    h.forEachCell(() => left++);
    expect(left).toBe(0);
  });

  it('drops a cell sent nothing for longer than the expiry, before the frame, as forgotten', () => {
    const h = new Held(new Motion(BOUNDS, 120, 20), 100, 5000);
    const cells = (tick: number, ...ids: number[]) => frameOf(section(1, tick, ids.map((c) => [c, [item(0, fullBody([A]))]])));
    const updates = () => Array.from({ length: h.updateCount }, (_, i) => h.update(i)).map((u) => [u.kind, u.cell, u.tick]);
    expect(h.apply(cells(10, 2, 3), 0, undefined, 1000)).toBeNull();
    // Cell 3 is sent nothing more (its forgets were lost); 5 s on it is still held.
    expect(h.apply(cells(20, 2), 0, undefined, 3000)).toBeNull();
    expect(h.apply(cells(30, 2), 0, undefined, 6000)).toBeNull();
    expect(updates()).toEqual([['cell', 2, 30]]);
    expect(ids(h.cell(1, 3))).toEqual([7]);
    // Past it: dropped first, at the tick it was held at; cell 2 stays.
    expect(h.apply(cells(40, 2), 0, undefined, 7001)).toBeNull();
    expect(updates()).toEqual([
      ['forgot', 3, 10],
      ['cell', 2, 40],
    ]);
    expect([h.cell(1, 3), ids(h.cell(1, 2))]).toEqual([undefined, [7]]);
    // Sent again, it is held again, its clock anew.
    expect(h.apply(cells(50, 3), 0, undefined, 7100)).toBeNull();
    expect(h.apply(cells(60, 2), 0, undefined, 12000)).toBeNull();
    expect(ids(h.cell(1, 3))).toEqual([7]);
    // Past it again, within a second of the last scan: kept until the next scan.
    expect(h.apply(cells(70, 2), 0, undefined, 12200)).toBeNull();
    expect(ids(h.cell(1, 3))).toEqual([7]);
    expect(h.apply(cells(80, 2), 0, undefined, 13000)).toBeNull();
    expect(updates()[0]).toEqual(['forgot', 3, 50]);
    expect(h.cell(1, 3)).toBeUndefined();
    // Without an expiry (a reliable transport) nothing is dropped.
    const never = held();
    expect(never.apply(cells(10, 2, 3), 0, undefined, 1000)).toBeNull();
    expect(never.apply(cells(20, 2), 0, undefined, 1_000_000)).toBeNull();
    expect(ids(never.cell(1, 3))).toEqual([7]);
  });

  it('drops every cell of a shard at a section with no cells (a reset), the other shards kept', () => {
    const h = held();
    const told = frameOf(
      section(5, 100, [[2, [item(0, fullBody([A]))]], [3, [item(0, fullBody([B]))]]]),
      section(6, 100, [[2, [item(0, fullBody([A]))]]]),
    );
    expect(h.apply(told)).toBeNull();
    // A reset of shard 5, then one of its cells anew, in one frame.
    expect(h.apply(frameOf(section(5, 101, []), section(5, 101, [[3, [item(0, fullBody([A]))]]])))).toBeNull();
    const updates = Array.from({ length: h.updateCount }, (_, i) => h.update(i));
    expect(updates.map((u) => [u.kind, u.shard, u.cell, u.tick])).toEqual([
      ['reset', 5, 0, 101],
      ['cell', 5, 3, 101],
    ]);
    expect([h.cell(5, 2), ids(h.cell(5, 3)), ids(h.cell(6, 2))]).toEqual([undefined, [7], [7]]);
  });

  it("gives each update the cell as held after the frame, none once the frame forgot it", () => {
    const h = held();
    const f = frameOf(section(0xdead_beef, 0xffff_fff0, [[2, [item(0, fullBody([A])), item(8, [])]], [3, [item(0, fullBody([B]))]]]));
    expect(h.apply(f)).toBeNull();
    const updates = Array.from({ length: h.updateCount }, (_, i) => h.update(i));
    expect(updates.map((u) => [u.kind, u.shard, u.cell, u.tick])).toEqual([
      ['cell', 0xdead_beef, 2, 0xffff_fff0],
      ['forgot', 0xdead_beef, 2, 0xffff_fff0],
      ['cell', 0xdead_beef, 3, 0xffff_fff0],
    ]);
    expect([updates[0]?.held, updates[1]?.held]).toEqual([null, null]);
    expect(updates[2]?.held).toBe(h.cell(0xdead_beef, 3));
    expect(ids(updates[2]?.held ?? undefined)).toEqual([9]);
  });

  it('changes nothing for a frame that does not verify, and says why', () => {
    const h = held();
    expect(h.apply(frameOf(section(1, 5, [[2, [item(0, fullBody([A]))]]])))).toBeNull();
    const cut = frameOf(section(1, 6, [[2, [item(0, fullBody([B]))]], [3, [item(0, fullBody([B]))]]])).subarray(0, 20);
    const refused = h.apply(cut);
    expect([refused?.kind, refused?.message]).toEqual(['frame', 'view frame: truncated']);
    expect(h.updateCount).toBe(0);
    expect([ids(h.cell(1, 2)), h.cell(1, 2)?.tick, h.cell(1, 3)]).toEqual([[7], 5, undefined]);
  });

  it('keeps the items before one that does not apply, and names its cell', () => {
    const h = held(1);
    const refused = h.apply(frameOf(section(1, 5, [[2, [item(0, fullBody([A]))]], [3, [item(0, fullBody([A, B]))]]])));
    expect([refused?.kind, refused?.shard, refused?.cell, refused?.message]).toEqual(['item', 1, 3, 'cell 3 of shard 1: too many players']);
    expect([ids(h.cell(1, 2)), h.cell(1, 3)]).toEqual([[7], undefined]);
  });

  it('applies and reads a steady frame of 165 walkers without allocating, its cells expiring', async () => {
    const scene = walkerScene(165, 3);
    const h = new Held(new Motion(scene.bounds, scene.speed, scene.tickHz), 1000, 12_800);
    expect(h.apply(scene.setup)).toBeNull();
    const out = columns(64);
    let frame = 0;
    let read = 0;
    const bytes = await bytesPerFrame(() => {
      // Fractional arrival times, as performance.now() gives, a second apart: the expiry scans every frame.
      const error = h.apply(scene.steady[frame & 1] as Uint8Array, 0, undefined, frame++ * 1000.5);
      if (error) throw new Error(error.message);
      for (let i = 0; i < h.updateCount; i++) {
        const c = h.update(i).held;
        c?.readPlayers(out, scene.bounds);
        read += c?.playerCount ?? 0;
      }
    });
    expect(read).toBeGreaterThan(165 * 1000);
    expect(bytes).toBeLessThan(FRAME_BUDGET_BYTES);
  });
});
