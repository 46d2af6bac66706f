// Protocol 6's handoff in the page's held cells (net/held.ts with a grid),
// past the shared fixture (net/delta.test.ts replays its handoff walks): the
// cases of schema/src/held.rs's unit tests, where a handoff fails, and a
// walker handed back and forth between two cells with no allocation.
// A 1000-unit world of 100-unit cells, walkers at 120 units/s and 20 Hz:
// 393 quantized units a tick along x; cell 1 is x < 6554, cell 2 next.
import { describe, expect, it } from 'vitest';
import { FRAME_BUDGET_BYTES, bytesPerFrame } from '../testing/allocation.js';
import { frameOf, fullBody, item, section, turnsBody, type WirePlayer } from '../testing/delta-frames.js';
import { CellGrid } from './grid.js';
import { Held, type HeldCell } from './held.js';
import { Motion } from './motion.js';

const BOUNDS = { minX: 0, minY: 0, maxX: 1000, maxY: 1000 };
const MOTION = new Motion(BOUNDS, 120, 20);
const GRID = CellGrid.of(BOUNDS, 100) as CellGrid;

/** Item kinds (net/view.ts): a full form, a delta over one and two ticks, a supplement. */
const FULL = 0;
const SPAN_1 = 1;
const SPAN_2 = 2;
const SUPPLEMENT = 9;

function handingOff(maxPlayers = 100): Held {
  return new Held(MOTION, maxPlayers).handingOff(GRID);
}

/** A player at x (quantized), y 1000 (row 0), heading `heading`, walking or not. */
function p(id: number, x: number, heading: number, moving: boolean): WirePlayer {
  return { id, x, y: 1000, heading, flags: moving ? 1 : 0 };
}

function ids(c: HeldCell | undefined): number[] | undefined {
  return c ? Array.from(c.entries.ids.subarray(0, c.entries.count)) : undefined;
}

/** Shard 7's section at `tick`: each cell with its items. */
function frame(tick: number, cells: [number, number[][]][]): Uint8Array {
  return frameOf(section(7, tick, cells));
}

describe('handoff between cells', () => {
  it('hands a walker crossing into a cell advanced with its own over the same span to it, in id order', () => {
    expect(MOTION.advanceX(6400, 0, true, 1)).toBe(6793);
    expect([GRID.cellOfQ(6553, 1000), GRID.cellOfQ(6554, 1000)]).toEqual([1, 2]);
    const h = handingOff();
    const f0 = frame(1, [
      [1, [item(FULL, fullBody([p(5, 6400, 0, true)]))]],
      [2, [item(FULL, fullBody([p(3, 7000, 64, false), p(8, 7100, 64, false)]))]],
    ]);
    expect(h.apply(f0)).toBeNull();
    // A tick on, player 5 is in cell 2: both deltas are empty.
    expect(h.apply(frame(2, [[1, [item(SPAN_1, [])]], [2, [item(SPAN_1, [])]]]))).toBeNull();
    expect([ids(h.cell(7, 1)), ids(h.cell(7, 2))]).toEqual([[], [3, 5, 8]]);
    const c = h.cell(7, 2) as HeldCell;
    expect([c.entries.x[1], c.entries.heading[1], c.entries.flags[1], c.tick]).toEqual([6793, 0, 1, 2]);
    // The updates are the deltas' (the handoff adds none).
    expect(Array.from({ length: h.updateCount }, (_, i) => [h.update(i).kind, h.update(i).cell, h.update(i).held])).toEqual([
      ['cell', 1, h.cell(7, 1)],
      ['cell', 2, c],
    ]);
  });

  it('drops a walker whose new cell is not advanced with its old (another span, or not in the section), and a supplement brings it', () => {
    const h = handingOff();
    expect(h.apply(frame(2, [[1, [item(FULL, fullBody([p(5, 6400, 0, true)]))]], [2, [item(FULL, fullBody([]))]]]))).toBeNull();
    expect(h.apply(frame(4, [[1, [item(SPAN_2, [])]], [2, [item(SPAN_1, [])]]]))).toBeNull();
    expect([ids(h.cell(7, 1)), ids(h.cell(7, 2))]).toEqual([[], []]);
    expect(h.apply(frame(5, [[2, [item(SPAN_1, []), item(SUPPLEMENT, fullBody([p(5, 6400 + 3 * 393, 0, true)]))]]]))).toBeNull();
    expect(ids(h.cell(7, 2))).toEqual([5]);
    expect(h.apply(frame(6, [[1, [item(FULL, fullBody([p(6, 6400, 0, true)]))]]]))).toBeNull();
    expect(h.apply(frame(7, [[1, [item(SPAN_1, [])]]]))).toBeNull();
    expect([ids(h.cell(7, 1)), ids(h.cell(7, 2))]).toEqual([[], [5]]);
  });

  it('drops a walker of a cell told by more than one delta and its supplements', () => {
    const h = handingOff();
    const walker = fullBody([p(5, 6400, 0, true)]);
    expect(h.apply(frame(1, [[2, [item(FULL, fullBody([]))]]]))).toBeNull();
    expect(h.apply(frame(2, [[1, [item(FULL, walker), item(SPAN_1, [])]], [2, [item(SPAN_1, [])]]]))).toBeNull();
    expect([ids(h.cell(7, 1)), ids(h.cell(7, 2))]).toEqual([[], []]);
  });

  it('takes supplements only right after a delta or another supplement, adding no one twice', () => {
    const h = handingOff();
    const b0 = fullBody([p(3, 7000, 64, false)]);
    expect(h.apply(frame(1, [[2, [item(FULL, b0)]]]))).toBeNull();
    const refused = (items: number[][]) => {
      const e = h.apply(frame(2, [[2, items]]));
      return [e?.kind, e?.shard, e?.cell, e?.error.message];
    };
    const four = item(SUPPLEMENT, fullBody([p(4, 7000, 0, false)]));
    expect(refused([four, item(FULL, b0)])).toEqual(['item', 7, 2, 'a supplement not after a delta']);
    expect(refused([item(FULL, b0), four])).toEqual(['item', 7, 2, 'a supplement not after a delta']);
    expect(refused([item(SPAN_1, []), item(8, []), four])).toEqual(['item', 7, 2, 'a supplement not after a delta']);
    expect(h.apply(frame(2, [[2, [item(FULL, b0)]]]))).toBeNull();
    expect(refused([item(SPAN_1, []), item(SUPPLEMENT, b0)])).toEqual(['item', 7, 2, 'entered twice']);
    expect(ids(h.cell(7, 2))).toEqual([3]);
    expect(h.apply(frame(3, [[2, [item(SPAN_1, []), four, item(SUPPLEMENT, fullBody([p(1, 7000, 0, false)]))]]]))).toBeNull();
    expect(ids(h.cell(7, 2))).toEqual([1, 3, 4]);
  });

  it('refuses a walker its new cell already holds, or one past the limit, at that cell, the cells before it handed theirs', () => {
    // Player 5 walks from cell 1 into cell 2; player 7 from cell 4 into
    // cell 3 (x 19,700 to 19,307), where (a frame no server sends) a player
    // 7 stands already, or two others when a cell holds two at most.
    expect([GRID.cellOfQ(19_700, 1000), GRID.cellOfQ(19_700 - 393, 1000), GRID.cellOfQ(14_000, 1000)]).toEqual([4, 3, 3]);
    const told = (third: WirePlayer[]) =>
      frame(1, [
        [1, [item(FULL, fullBody([p(5, 6400, 0, true)]))]],
        [2, [item(FULL, fullBody([p(3, 7000, 64, false)]))]],
        [3, [item(FULL, fullBody(third))]],
        [4, [item(FULL, fullBody([p(7, 19_700, 128, true)]))]],
      ]);
    const walk = frame(2, [1, 2, 3, 4].map((c) => [c, [item(SPAN_1, [])]]));
    const dup = handingOff();
    expect(dup.apply(told([p(7, 14_000, 0, false)]))).toBeNull();
    const refused = dup.apply(walk);
    expect([refused?.kind, refused?.shard, refused?.cell, refused?.error.message]).toEqual(['item', 7, 3, 'entered twice']);
    expect(dup.updateCount).toBe(0);
    // Every delta applied; cell 2 took its walker; cell 3 as its delta left it.
    const cells = (h: Held) => [1, 2, 3, 4].map((c) => [ids(h.cell(7, c)), h.cell(7, c)?.tick]);
    expect(cells(dup)).toEqual([
      [[], 2],
      [[3, 5], 2],
      [[7], 2],
      [[], 2],
    ]);
    expect(dup.cell(7, 3)?.entries.x[0]).toBe(14_000);
    const full = handingOff(2);
    expect(full.apply(told([p(8, 14_000, 0, false), p(9, 14_100, 0, false)]))).toBeNull();
    const over = full.apply(walk);
    expect([over?.cell, over?.error.message]).toEqual([3, 'too many players']);
    expect(cells(full)).toEqual([
      [[], 2],
      [[3, 5], 2],
      [[8, 9], 2],
      [[], 2],
    ]);
  });

  it('refuses a player handed off twice into one cell (held in two), at that cell', () => {
    const h = handingOff();
    const east = p(5, 6400, 0, true);
    const west = p(5, 13_200, 128, true);
    const f0 = frame(1, [
      [1, [item(FULL, fullBody([east]))]],
      [2, [item(FULL, fullBody([]))]],
      [3, [item(FULL, fullBody([west]))]],
    ]);
    expect(h.apply(f0)).toBeNull();
    const refused = h.apply(frame(2, [[1, [item(SPAN_1, [])]], [2, [item(SPAN_1, [])]], [3, [item(SPAN_1, [])]]]));
    expect([refused?.kind, refused?.shard, refused?.cell, refused?.error.message]).toEqual(['item', 7, 2, 'entered twice']);
    expect(ids(h.cell(7, 2))).toEqual([]);
  });

  it('moves nobody without a grid', () => {
    const h = new Held(MOTION, 100);
    expect(h.apply(frame(1, [[1, [item(FULL, fullBody([p(5, 6400, 0, true)]))]]]))).toBeNull();
    expect(h.apply(frame(2, [[1, [item(SPAN_1, [])]], [2, [item(SPAN_1, [])]]]))).toBeNull();
    expect([ids(h.cell(7, 1)), ids(h.cell(7, 2))]).toEqual([[5], []]);
    expect(h.cell(7, 1)?.entries.x[0]).toBe(6793);
  });

  it('hands a walker back and forth between two cells with no allocation', async () => {
    // Ten players standing in each cell; the walker (id 100, last in either)
    // turns east in cell 1, west in cell 2, each turn walking it across.
    const standing = (from: number, x: number) => Array.from({ length: 10 }, (_, i) => p(from + i, x + 100 * i, 0, false));
    // A shard and ticks past V8's small integers, as most are.
    const [shard, tick] = [0xdead_beef, 0xffff_fff0];
    const h = handingOff();
    const setup = section(shard, tick, [[1, [item(FULL, fullBody([...standing(1, 1000), p(100, 6400, 128, true)]))]], [2, [item(FULL, fullBody(standing(11, 8000)))]]]);
    expect(h.apply(frameOf(setup))).toBeNull();
    const east = frameOf(section(shard, tick + 1, [[1, [item(SPAN_1, turnsBody([[10, 0]]))]], [2, [item(SPAN_1, [])]]]));
    const west = frameOf(section(shard, tick + 2, [[1, [item(SPAN_1, [])]], [2, [item(SPAN_1, turnsBody([[10, 128]]))]]]));
    expect(h.apply(east)).toBeNull();
    expect([ids(h.cell(shard, 1))?.length, ids(h.cell(shard, 2))?.at(-1), h.cell(shard, 2)?.entries.x[10]]).toEqual([10, 100, 6793]);
    expect(h.apply(west)).toBeNull();
    expect([ids(h.cell(shard, 1))?.at(-1), h.cell(shard, 1)?.entries.x[10], ids(h.cell(shard, 2))?.length]).toEqual([100, 6400, 10]);
    let frames = 0;
    const bytes = await bytesPerFrame(() => {
      const error = h.apply(frames++ % 2 === 0 ? east : west);
      if (error) throw new Error(error.message);
    });
    expect(frames).toBeGreaterThan(20_000);
    expect(bytes).toBeLessThan(FRAME_BUDGET_BYTES);
  });
});
