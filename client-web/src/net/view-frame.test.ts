// View frames built with the generated builder (src/testing/view-frames.ts):
// their runs cut the players vector into cells, every cell read from its own
// slice; runs that do not add up, or a frame without its vectors, are refused
// with a reason and never thrown.
import { describe, expect, it } from 'vitest';
import { encodeViewFrame, type ViewFrameSpec } from '../testing/view-frames.js';
import { decodeServer, type Bounds, type CellMsg, type PlayerColumns, type ViewMsg } from './protocol.js';

/** Quantized coordinates read back as themselves. */
const Q: Bounds = { minX: 0, minY: 0, maxX: 65535, maxY: 65535 };

function view(spec: ViewFrameSpec): ViewMsg {
  const d = decodeServer(encodeViewFrame(spec));
  if (!d.ok) throw new Error(d.error);
  if (d.msg.kind !== 'view') throw new Error(`a ${d.msg.kind}, not a view frame`);
  return d.msg;
}

/** A cell's players' ids and x (world units over Q: the quantized value). */
function read(cell: CellMsg | undefined): { ids: number[]; x: number[] } {
  if (!cell) throw new Error('no such cell');
  const n = cell.playerCount;
  const out: PlayerColumns = { ids: new Uint32Array(n), x: new Float32Array(n), y: new Float32Array(n), heading: new Float32Array(n), flags: new Uint8Array(n) };
  cell.readPlayers(out, Q);
  return { ids: Array.from(out.ids), x: Array.from(out.x) };
}

/** Each cell as [cell, its players' ids]. */
function cellsOf(v: ViewMsg): [number, number[]][] {
  return v.cells.map((c) => [c.cell, read(c).ids]);
}

describe('view frames', () => {
  it("gives every cell the frame's shard, tick and time and only its own run's players", () => {
    const v = view({ shardId: 9, tick: 2 ** 32 - 1, timeMs: 2 ** 32 - 5, runs: [{ cell: 3, count: 2 }, { cell: 4, count: 1 }], players: [10, 11, 70_000] });
    expect([v.shardId, v.tick, v.timeMs]).toEqual([9, 2 ** 32 - 1, 2 ** 32 - 5]);
    expect(v.cells.map((c) => [c.kind, c.shardId, c.tick, c.timeMs])).toEqual([
      ['cell', 9, 2 ** 32 - 1, 2 ** 32 - 5],
      ['cell', 9, 2 ** 32 - 1, 2 ** 32 - 5],
    ]);
    expect(cellsOf(v)).toEqual([
      [3, [10, 11]],
      [4, [70_000]],
    ]);
    expect(read(v.cells[1]).x).toEqual([70_000 % 65536]);
  });

  it('keeps an empty run as an emptied cell, its neighbours reading the right players', () => {
    const v = view({ runs: [{ cell: 1, count: 1 }, { cell: 2, count: 0 }, { cell: 3, count: 2 }], players: [5, 6, 7] });
    expect(v.cells.map((c) => c.playerCount)).toEqual([1, 0, 2]);
    expect(cellsOf(v)).toEqual([
      [1, [5]],
      [2, []],
      [3, [6, 7]],
    ]);
  });

  it('joins consecutive runs of the same cell into one cell, complete for it', () => {
    const v = view({ runs: [{ cell: 8, count: 2 }, { cell: 8, count: 1 }, { cell: 9, count: 1 }], players: [1, 2, 3, 4] });
    expect(cellsOf(v)).toEqual([
      [8, [1, 2, 3]],
      [9, [4]],
    ]);
  });

  it('reads a cell as lo | hi << 16, unsigned', () => {
    const v = view({ runs: [{ cell: 0xfffe_0001, count: 0 }, { cell: 0x1_0000, count: 0 }], players: [] });
    expect(v.cells.map((c) => c.cell)).toEqual([0xfffe_0001, 0x1_0000]);
  });

  it('may carry no cell at all', () => {
    expect(view({ runs: [], players: [] }).cells).toEqual([]);
  });

  it('refuses runs that do not add up to the players, saying so', () => {
    const cases: [ViewFrameSpec, string][] = [
      [{ runs: [{ cell: 1, count: 2 }, { cell: 2, count: 2 }], players: [1, 2, 3] }, 'view frame runs count 4 players but it carries 3'],
      [{ runs: [{ cell: 1, count: 1 }, { cell: 2, count: 0 }], players: [1, 2, 3] }, 'view frame runs count 1 players but it carries 3'],
      [{ runs: [], players: [1] }, 'view frame runs count 0 players but it carries 1'],
      [{ runs: [{ cell: 1, count: 65535 }], players: [] }, 'view frame runs count 65535 players but it carries 0'],
    ];
    for (const [spec, error] of cases) expect(decodeServer(encodeViewFrame(spec))).toEqual({ ok: false, error });
  });

  it('refuses a frame without its runs or its players', () => {
    for (const spec of [{ runs: null, players: [] }, { runs: [], players: null }, { runs: null, players: null }]) {
      expect(decodeServer(encodeViewFrame(spec))).toEqual({ ok: false, error: 'view frame without runs or players' });
    }
  });
});
