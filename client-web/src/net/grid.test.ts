// The grid's cell rule against the shared fixture Rust's rule wrote
// (schema/tests/grid.rs): for every world and cell size, the columns, the
// rows and the cell of quantized positions at and around every border must
// agree exactly, since a page hands a player off to the cell the server
// files it under.

import { describe, expect, it } from 'vitest';
import fixture from '../../../schema/fixtures/grid.json';
import { CellGrid } from './grid.js';

interface World {
  /** min_x, min_y, max_x, max_y, world units. */
  bounds: number[];
  cell_size: number;
  columns: number;
  rows: number;
  /** [x, y, cell]: quantized positions and their cell. */
  cells: number[][];
}

const worlds: World[] = fixture.worlds;

function gridOf(w: World): CellGrid {
  const [minX = Number.NaN, minY = Number.NaN, maxX = Number.NaN, maxY = Number.NaN] = w.bounds;
  const g = CellGrid.of({ minX, minY, maxX, maxY }, w.cell_size);
  if (!g) throw new Error(`no grid of ${w.cell_size} over ${w.bounds.join(', ')}`);
  return g;
}

describe('the grid cell rule against the Rust fixture', () => {
  it('has worlds and probes to check', () => {
    expect(worlds.length).toBeGreaterThanOrEqual(7);
    expect(worlds.reduce((n, w) => n + w.cells.length, 0)).toBeGreaterThan(1000);
  });

  for (const w of worlds) {
    it(`cuts ${w.bounds.join(', ')} into cells of ${w.cell_size} units as the server does`, () => {
      const g = gridOf(w);
      expect([g.columns, g.rows]).toEqual([w.columns, w.rows]);
      const got = w.cells.map(([x = -1, y = -1]) => [x, y, g.cellOfQ(x, y)]);
      expect(got).toEqual(w.cells);
    });
  }
});

describe('the grid cell rule', () => {
  const g = CellGrid.of({ minX: 0, minY: 0, maxX: 1000, maxY: 1000 }, 100) as CellGrid;

  it('numbers cells from one, row by row (schema/src/grid.rs tests)', () => {
    expect([g.columns, g.rows]).toEqual([10, 10]);
    expect([g.cellOf(0, 0), g.cellOf(99.9, 0), g.cellOf(100, 0), g.cellOf(50, 150)]).toEqual([1, 1, 2, 11]);
    expect(g.cellOf(1000, 1000)).toBe(100);
  });

  it('puts positions outside the world (and NaN) in edge cells', () => {
    expect(g.cellOf(-5, Number.NaN)).toBe(1);
    expect(g.cellOf(5000, -1)).toBe(10);
    expect(g.cellOf(Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY)).toBe(10);
  });

  it("gives a quantized position its world position's cell: 6,553.5 quantized units are 100 world units", () => {
    expect([g.cellOfQ(0, 0), g.cellOfQ(65535, 65535), g.cellOfQ(6553, 0), g.cellOfQ(6554, 0)]).toEqual([1, 100, 1, 2]);
  });

  it("computes in single precision: positions where double precision picks another cell get the server's", () => {
    // The 1,000,000-unit world of 333.3-unit cells (in the fixture, whose
    // probes miss these): at x 14,591 and y 29,182 double precision finds
    // column 667 and row 1,335; Rust's single precision (mino_protocol's
    // CellGrid printed it) 668 and 1,336.
    const huge = CellGrid.of({ minX: 0, minY: 0, maxX: 1_000_000, maxY: 1_000_000 }, 333.3) as CellGrid;
    expect(huge.cellOfQ(14_591, 29_182)).toBe(1 + 1336 * 3001 + 668);
    const double = (q: number) => Math.floor(((q / 65535) * 1_000_000) / Math.fround(333.3));
    expect([double(14_591), double(29_182)]).toEqual([667, 1335]);
  });

  it('refuses sizes that are not positive finite numbers, and has a cell at least however wide a cell is', () => {
    const b = { minX: 0, minY: 0, maxX: 1000, maxY: 1000 };
    expect([CellGrid.of(b, 0), CellGrid.of(b, Number.NaN), CellGrid.of(b, -1), CellGrid.of(b, Number.POSITIVE_INFINITY)]).toEqual([null, null, null, null]);
    const wide = CellGrid.of(b, 1e30) as CellGrid;
    expect([wide.columns, wide.rows, wide.cellOfQ(65535, 65535)]).toEqual([1, 1, 1]);
    const flat = CellGrid.of({ minX: 5, minY: 5, maxX: 5, maxY: 4 }, 1) as CellGrid;
    expect([flat.columns, flat.rows]).toEqual([1, 1]);
    // Past 4,096 x 4,096 cells (a Welcome saying so): no grid, as Rust's.
    expect(CellGrid.of({ minX: 0, minY: 0, maxX: 1e9, maxY: 1e9 }, 1e-3)).toBeNull();
    expect(CellGrid.of({ minX: 0, minY: 0, maxX: 4096, maxY: 4096 }, 1)?.columns).toBe(4096);
  });
});
