// What the page holds between frames, past the shared fixture
// (net/delta.test.ts): players read in world units, cells forgotten per
// shard and reused clean, a frame refused whole changing nothing, a
// steady frame of walkers applied and read with no allocation, and
// protocol 7's implied cells.
import { describe, expect, it } from 'vitest';
import { FRAME_BUDGET_BYTES, bytesPerFrame } from '../testing/allocation.js';
import { frameOf, fullBody, item, putVarint, section, turnsBody, walkerScene, type ImpliedBlock, type WirePlayer } from '../testing/delta-frames.js';
import { CellGrid } from './grid.js';
import { Held, UNCHANGED_EVER, type HeldCell } from './held.js';
import { Motion } from './motion.js';
import { Stencil, TieredCells, ViewScratch, candidates, viewCells } from './stencil.js';
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

// The lossy rule (schema/src/held.rs's `Delivery::Lossy`) by hand, past the
// fixture's lossy sequences: standing players, so every delta is empty and
// what a cell holds says which items applied. Each case fails under a
// change of the rule's bounds.
describe('a lossy client (datagram deltas)', () => {
  const S = 5;
  const stand = { id: 3, x: 1000, y: 1000, heading: 0, flags: 0 };
  const whole = (t: number, players = [stand]) => frameOf(section(S, t, [[1, [item(0, fullBody(players))]]]));
  /** Cell 1's delta over `span` ticks at tick `t` (an empty one), after an unchanged item of `unchanged` ticks when given. */
  const delta = (t: number, span: number, unchanged?: number) => {
    const body: number[] = [];
    if (unchanged !== undefined) putVarint(body, unchanged);
    const items = unchanged === undefined ? [] : [item(10, body)];
    return frameOf(section(S, t, [[1, [...items, item(1 + Math.log2(span), [])]]]));
  };
  const lossy = () => new Held(new Motion(BOUNDS, 120, 20), 100).delivered('lossy');
  const kinds = (h: Held) => Array.from({ length: h.updateCount }, (_, i) => h.update(i)).map((u) => `${u.kind}@${u.tick}`);
  const at = (h: Held) => h.cell(S, 1)?.tick;

  it('applies a delta only onto the tick it starts from, or within its unchanged ticks before', () => {
    const h = lossy();
    expect(h.delivery).toBe('lossy');
    h.apply(whole(10));
    expect([h.apply(delta(11, 1)), kinds(h), at(h)]).toEqual([null, ['cell@11'], 11]);
    // Step 12 lost: 13's delta starts from 12.
    expect([h.apply(delta(13, 1)), kinds(h), at(h)]).toEqual([null, ['broken@13'], 11]);
    // Over two ticks it starts from 11: applies.
    expect([kinds((h.apply(delta(13, 2)), h)), at(h)]).toEqual([['cell@13'], 13]);
    // 17's delta over 2 starts from 15; unchanged for 2 ticks before: from 13, held.
    expect([kinds((h.apply(delta(17, 2, 2)), h)), at(h)]).toEqual([['cell@17'], 17]);
    // A tick short (unchanged 1 before 19: from 18, held 17).
    expect([kinds((h.apply(delta(20, 1, 1)), h)), at(h)]).toEqual([['broken@20'], 17]);
    // Held at a tick between the base and the delta's tick (20 over 4: base 16).
    expect([kinds((h.apply(delta(20, 4)), h)), at(h)]).toEqual([['cell@20'], 20]);
  });

  it('passes over an older frame, and takes a whole item of the tick it holds or later', () => {
    const h = lossy();
    h.apply(whole(10));
    h.apply(delta(11, 1));
    expect([kinds((h.apply(delta(11, 1)), h)), kinds((h.apply(delta(10, 1)), h)), kinds((h.apply(whole(9)), h))]).toEqual([[], [], []]);
    expect(at(h)).toBe(11);
    expect([kinds((h.apply(whole(11, [])), h)), h.cell(S, 1)?.playerCount]).toEqual([['cell@11'], 0]);
    expect([kinds((h.apply(whole(30)), h)), at(h)]).toEqual([['cell@30'], 30]);
    // Across the 32-bit wrap: 2^32 - 1 is before 0, and 1 after 0 over one tick.
    const w = lossy();
    w.apply(whole(0xffff_ffff));
    expect([kinds((w.apply(delta(0, 1)), w)), kinds((w.apply(whole(0xffff_fffe)), w)), kinds((w.apply(delta(2, 1)), w))]).toEqual([['cell@0'], [], ['broken@2']]);
  });

  it('refuses a delta of a cell not held, unless the cell was empty before its base, and then only onto nobody', () => {
    const h = lossy();
    expect([kinds((h.apply(delta(4, 1)), h)), h.cell(S, 1)]).toEqual([['broken@4'], undefined]);
    expect([kinds((h.apply(delta(4, 1, UNCHANGED_EVER)), h)), at(h)]).toEqual([['cell@4'], 4]);
    h.apply(whole(5));
    expect([kinds((h.apply(delta(6, 1, UNCHANGED_EVER)), h)), at(h)]).toEqual([['broken@6'], 5]);
    h.apply(whole(7, []));
    expect([kinds((h.apply(delta(8, 1, UNCHANGED_EVER)), h)), at(h)]).toEqual([['cell@8'], 8]);
  });

  it("passes over a chain's deltas it holds already, and their supplements", () => {
    const walker = { id: 3, x: 1000, y: 1000, heading: 0, flags: 1 };
    const chain = frameOf(section(S, 13, [[1, [item(1, []), item(9, []), item(1, [])]]]));
    const x = (h: Held) => h.cell(S, 1)?.entries.x[0];
    // Held as of 12 (the chain's second base): only its last delta applies.
    const got = lossy();
    got.apply(whole(11, [walker]));
    got.apply(delta(12, 1));
    const at12 = x(got);
    got.apply(chain);
    expect([kinds(got), at(got)]).toEqual([['cell@13'], 13]);
    // Held as of 11 (its first base): both apply, to the same place.
    const lost = lossy();
    lost.apply(whole(11, [walker]));
    lost.apply(chain);
    expect([kinds(lost), at(lost), x(lost)]).toEqual([['cell@13', 'cell@13', 'cell@13'], 13, x(got)]);
    expect(x(got)).not.toBe(at12);
    // Held as of 10: broken.
    const behind = lossy();
    behind.apply(whole(10, [walker]));
    expect(kinds((behind.apply(chain), behind))).toEqual(['broken@13']);
  });

  it('holds in order what a client not told lossy is sent, whatever the ticks', () => {
    const h = new Held(new Motion(BOUNDS, 120, 20), 100);
    expect(h.delivery).toBe('in-order');
    h.apply(whole(10));
    expect([kinds((h.apply(delta(13, 1)), h)), kinds((h.apply(delta(12, 1)), h))]).toEqual([['cell@13'], ['cell@12']]);
  });

  it('applies steady frames of 165 walkers, each tick later, without allocating', async () => {
    const scene = walkerScene(165, 3);
    const h = new Held(new Motion(scene.bounds, scene.speed, scene.tickHz), 1000, 12_800).delivered('lossy');
    expect(h.apply(scene.setup)).toBeNull();
    const ticks = scene.steady.map((f) => new DataView(f.buffer, f.byteOffset + 4, 4));
    const first = (ticks[0] as DataView).getUint32(0, true);
    let frame = 0;
    let applied = 0;
    const bytes = await bytesPerFrame(() => {
      // The next tick, written into the frame's first section (bytes 4..8).
      const f = frame & 1;
      (ticks[f] as DataView).setUint32(0, (first + frame) >>> 0, true);
      const error = h.apply(scene.steady[f] as Uint8Array, 0, undefined, frame++ * 50.5);
      if (error) throw new Error(error.message);
      for (let i = 0; i < h.updateCount; i++) if (h.update(i).kind === 'cell') applied++;
    });
    expect(applied).toBeGreaterThan(9 * 20_000);
    expect(bytes).toBeLessThan(FRAME_BUDGET_BYTES);
  });
});

// Protocol 7's implied cells (net/view.ts) in a 1000-unit world of 250-unit
// cells (a 4 x 4 grid) seen with a view radius of one cell: from cell 6 the
// own and near cells (period 1 at rung 0) are 1, 2, 3, 5, 6, 7, 9, 10, 11,
// the mid ones (period 2) 4, 8, 12, 13, 14, 15, the far one (period 4) 16.
// Walkers at 120 units/s and 20 Hz go 393 quantized units a tick; column 1
// is x in [16384, 32767], column 2 from 32768.
describe('implied cells', () => {
  const WORLD = { minX: 0, minY: 0, maxX: 1000, maxY: 1000 };
  const MOTION = new Motion(WORLD, 120, 20);
  const GRID = CellGrid.of(WORLD, 250) as CellGrid;
  const STENCIL = Stencil.ofView(250, 250);

  /** A client of the world reading implied cells (or not, without a stencil or a grid). */
  function seeing(stencil: Stencil | null = STENCIL, grid: CellGrid | null = GRID): Held {
    return new Held(MOTION, 100).handingOff(grid).seeing(stencil);
  }

  /** The candidates of a view, [cell, period], as the server lists them. */
  function candidatesOf(key: number, previous: number, rung: number, k: number): number[][] {
    const cells = new TieredCells();
    viewCells(GRID, STENCIL, key, previous, cells, new ViewScratch());
    const out: number[][] = [];
    candidates(cells, rung, k, (c, period) => out.push([c, period]));
    return out;
  }

  /** The implied block of `view` at rung and due exponent `k` implying `implied` (cells), named or not. */
  function block(view: { key: number; previous: number }, rung: number, k: number, implied: number[], named = true): ImpliedBlock {
    const all = candidatesOf(view.key, view.previous, rung, k);
    const bits = all.flatMap(([c], i) => (implied.includes(c as number) ? [i] : []));
    expect(bits.length, 'every implied cell a candidate').toBe(implied.length);
    return named ? { k, rung, view, count: all.length, bits } : { k, rung, count: all.length, bits };
  }

  /** The same section with its implied cells told: each an empty delta over its period (kind 1 + log2 period). */
  function told(shard: number, tick: number, cells: [number, number[][]][], view: { key: number; previous: number }, rung: number, k: number, implied: number[]): number[] {
    const periods = new Map(candidatesOf(view.key, view.previous, rung, k).map(([c = 0, p = 0]) => [c, p]));
    const all: [number, number[][]][] = [...cells, ...implied.map((c): [number, number[][]] => [c, [item(1 + Math.log2(periods.get(c) ?? 0), [])]])];
    return section(shard, tick, all.sort((a, b) => a[0] - b[0]));
  }

  /** Every held cell: [shard, cell, tick, ids, xs]. */
  function everything(h: Held): (number | number[])[][] {
    const out: (number | number[])[][] = [];
    h.forEachCell((c) => out.push([c.shard, c.cell, c.tick, ids(c), Array.from(c.entries.x.subarray(0, c.entries.count))]));
    return out.sort((a, b) => (a[0] as number) - (b[0] as number) || (a[1] as number) - (b[1] as number));
  }

  function updates(h: Held): (string | number)[][] {
    return Array.from({ length: h.updateCount }, (_, i) => h.update(i)).map((u) => [u.kind, u.shard, u.cell, u.tick, u.span]);
  }

  const walker = (id: number, x: number, y: number, heading = 0): WirePlayer => ({ id, x, y, heading, flags: 1 });
  const stander = (id: number, x: number, y: number): WirePlayer => ({ id, x, y, heading: 0, flags: 0 });
  /** Cell 6 (column 1, row 1): A walks east, well inside it; cell 8 (column 3, row 1): B stands; cell 2: C walks south. */
  const A = walker(1, 20_000, 20_000);
  const B = stander(2, 55_000, 20_000);
  const C = walker(3, 20_000, 10_000, 64);
  const setup = frameOf(section(7, 10, [[2, [item(0, fullBody([C]))]], [6, [item(0, fullBody([A]))]], [8, [item(0, fullBody([B]))]]]));

  it("advances a cell's walkers by an implied empty delta over its period, as if the section told it", () => {
    const view = { key: 6, previous: 0 };
    // Tick 11 (due exponent 0): cells 2 and 6 over one tick. Tick 12 (due
    // exponent 2): 6 over one tick, 8 (mid) over two, and 16 (far, never
    // held) over four; cell 2 told a turn.
    const frames = [
      [section(7, 11, [], block(view, 0, 0, [2, 6])), told(7, 11, [], view, 0, 0, [2, 6])],
      [
        section(7, 12, [[2, [item(1, turnsBody([[0, 0]]))]]], block(view, 0, 2, [6, 8, 16])),
        told(7, 12, [[2, [item(1, turnsBody([[0, 0]]))]]], view, 0, 2, [6, 8, 16]),
      ],
    ];
    const h = seeing();
    const twin = seeing();
    expect([h.apply(setup), twin.apply(setup)]).toEqual([null, null]);
    for (const [implied = [], explicit = []] of frames) {
      expect(h.apply(frameOf(implied))).toBeNull();
      expect(twin.apply(frameOf(explicit))).toBeNull();
      expect(updates(h)).toEqual(updates(twin));
      expect(everything(h)).toEqual(everything(twin));
    }
    expect(updates(h)).toEqual([
      ['cell', 7, 2, 12, 1],
      ['cell', 7, 6, 12, 1],
      ['cell', 7, 8, 12, 2],
      ['cell', 7, 16, 12, 4],
    ]);
    expect(h.cell(7, 6)?.entries.x[0]).toBe(MOTION.advanceX(MOTION.advanceX(20_000, 0, true, 1), 0, true, 1));
    expect([ids(h.cell(7, 8)), ids(h.cell(7, 16)), h.cell(7, 16)?.tick]).toEqual([[2], [], 12]);
  });

  it('hands a walker off between two implied cells advanced over the same span, and drops it for another span', () => {
    // A a tick from crossing into cell 7.
    const crossing = walker(1, 32_700, 20_000);
    expect([GRID.cellOfQ(32_700, 20_000), GRID.cellOfQ(MOTION.advanceX(32_700, 0, true, 1), 20_000)]).toEqual([6, 7]);
    const start = frameOf(section(7, 10, [[6, [item(0, fullBody([crossing]))]], [7, [item(0, fullBody([stander(2, 40_000, 20_000)]))]]]));
    const h = seeing();
    expect(h.apply(start)).toBeNull();
    expect(h.apply(frameOf(section(7, 11, [], block({ key: 6, previous: 0 }, 0, 0, [6, 7]))))).toBeNull();
    expect([ids(h.cell(7, 6)), ids(h.cell(7, 7))]).toEqual([[], [1, 2]]);
    expect(h.cell(7, 7)?.entries.x[0]).toBe(MOTION.advanceX(32_700, 0, true, 1));
    // From an implied cell into one told an empty delta over the same span: handed off too.
    const mixed = seeing();
    expect(mixed.apply(start)).toBeNull();
    expect(mixed.apply(frameOf(section(7, 11, [[7, [item(1, [])]]], block({ key: 6, previous: 0 }, 0, 0, [6]))))).toBeNull();
    expect([ids(mixed.cell(7, 6)), ids(mixed.cell(7, 7))]).toEqual([[], [1, 2]]);
    // At rung 4 the own cell's period is 1 and the near cells' 2: cell 7 is
    // advanced over two ticks, so the walker out of cell 6 is dropped (the
    // server sends it in a supplement).
    const apart = seeing();
    expect(apart.apply(start)).toBeNull();
    expect(apart.apply(frameOf(section(7, 12, [], block({ key: 6, previous: 0 }, 4, 1, [6, 7]))))).toBeNull();
    expect([ids(apart.cell(7, 6)), ids(apart.cell(7, 7))]).toEqual([[], [2]]);
    // A view of two cells (the viewer crossed from 6 into 7): both own cells.
    const both = seeing();
    expect(both.apply(start)).toBeNull();
    expect(both.apply(frameOf(section(7, 11, [], block({ key: 7, previous: 6 }, 4, 0, [6, 7]))))).toBeNull();
    expect([ids(both.cell(7, 6)), ids(both.cell(7, 7))]).toEqual([[], [1, 2]]);
  });

  it('reads a form 2 section with the view the frame named before it, and a section of implied cells alone is no reset', () => {
    const h = seeing();
    const other = frameOf(section(8, 10, [[5, [item(0, fullBody([stander(9, 1000, 20_000)]))]]]));
    expect(h.apply(setup)).toBeNull();
    expect(h.apply(other)).toBeNull();
    const view = { key: 6, previous: 0 };
    expect(h.apply(frameOf(section(7, 11, [], block(view, 0, 0, [6])), section(8, 11, [], block(view, 0, 0, [5], false))))).toBeNull();
    expect(updates(h)).toEqual([
      ['cell', 7, 6, 11, 1],
      ['cell', 8, 5, 11, 1],
    ]);
    expect(everything(h).map(([s, c, t]) => [s, c, t])).toEqual([
      [7, 2, 10],
      [7, 6, 11],
      [7, 8, 10],
      [8, 5, 11],
    ]);
  });

  it("refuses a section's implied cells without a grid and a stencil, or that do not fit its view, before any of its items applies", () => {
    const view = { key: 6, previous: 0 };
    const first = section(8, 11, [[5, [item(0, fullBody([stander(9, 1000, 20_000)]))]]]);
    // Cell 2 told a full form, cell 6 implied: nothing of it applies.
    const implied = section(7, 11, [[2, [item(0, fullBody([stander(4, 20_000, 10_000)]))]]], block(view, 0, 0, [6]));
    for (const [name, h] of [
      ['no stencil', seeing(null)],
      ['no grid', seeing(STENCIL, null)],
      ['neither', new Held(MOTION, 100)],
    ] as const) {
      expect(h.apply(setup), name).toBeNull();
      const refused = h.apply(frameOf(first, implied));
      expect([refused?.kind, refused?.error.label, refused?.message], name).toEqual(['frame', 'Implied', 'view frame: bad implied cells']);
      expect(h.updateCount, name).toBe(0);
      // The frame's earlier section stays applied (Rust's `apply_section`).
      expect([ids(h.cell(7, 2)), h.cell(7, 2)?.tick, ids(h.cell(7, 6)), h.cell(7, 6)?.tick, ids(h.cell(8, 5))], name).toEqual([[3], 10, [1], 10, [9]]);
    }
    // With both, a count that is not the view's, and a cell both implied and told.
    const h = seeing();
    expect(h.apply(setup)).toBeNull();
    const wrong = { ...block(view, 0, 0, [6]), count: 10 };
    const clash = section(7, 11, [[6, [item(1, [])]]], block(view, 0, 0, [6]));
    for (const bad of [section(7, 11, [[2, [item(0, fullBody([stander(4, 20_000, 10_000)]))]]], wrong), clash]) {
      const refused = h.apply(frameOf(bad));
      expect([refused?.kind, refused?.error.label]).toEqual(['frame', 'Implied']);
      expect(everything(h).map(([s, c, t, i]) => [s, c, t, i])).toEqual([
        [7, 2, 10, [3]],
        [7, 6, 10, [1]],
        [7, 8, 10, [2]],
      ]);
    }
    expect(h.apply(frameOf(section(7, 11, [], block(view, 0, 0, [2, 6]))))).toBeNull();
    expect(updates(h).map(([, , c]) => c)).toEqual([2, 6]);
  });

  it('applies steady frames of implied cells without allocating', async () => {
    // A standing player in each of the 16 cells; the viewer in cell 6, then
    // crossing into 7 and back, every candidate implied each tick but one.
    const players = Array.from({ length: 16 }, (_, c) => stander(100 + c, 8000 + 16_384 * (c % 4), 8000 + 16_384 * Math.floor(c / 4)));
    const h = seeing();
    expect(h.apply(frameOf(section(7, 1, players.map((p, c) => [c + 1, [item(0, fullBody([p]))]] as const))))).toBeNull();
    const steady = (key: number, previous: number, k: number): Uint8Array => {
      // Every candidate implied but one in the middle, told an empty delta over one tick.
      const cells = candidatesOf(key, previous, 0, k).map(([c = 0]) => c);
      const [middle = 0] = cells.splice(cells.length >> 1, 1);
      return frameOf(section(7, 2, [[middle, [item(1, [])]]], block({ key, previous }, 0, k, cells)));
    };
    const frames = [steady(6, 0, 0), steady(7, 6, 1), steady(6, 7, 2), steady(6, 0, 1)];
    let frame = 0;
    let updated = 0;
    const bytes = await bytesPerFrame(() => {
      const error = h.apply(frames[frame++ & 3] as Uint8Array);
      if (error) throw new Error(error.message);
      updated += h.updateCount;
    });
    expect(updated).toBeGreaterThan(9 * 1000);
    expect(bytes).toBeLessThan(FRAME_BUDGET_BYTES);
  });
});
