// The area of interest's geometry against the shared fixture Rust's stencil
// wrote (schema/tests/stencil.rs): for every place, the stencil's cells by
// tier, and for every view (key and previous cells) its cells with their
// tiers and the candidates for implied cells at every rung and due exponent
// must agree exactly, since a page reads a section's implied cells bit by
// bit from the candidates the server wrote them against.
import { describe, expect, it } from 'vitest';
import fixture from '../../../schema/fixtures/stencil.json';
import { CellGrid } from './grid.js';
import { LADDER, MAX_RADIUS_CELLS, SLOWEST_PERIOD, Stencil, TIER_FAR, TIER_MID, TIER_NEAR, TIER_OWN, TieredCells, ViewScratch, candidates, dueExponent, viewCells, type Tier } from './stencil.js';

interface View {
  key: number;
  previous: number;
  /** [cell, tier], by increasing cell. */
  cells: number[][];
  /** Per rung (0..9), per due exponent (0..6): [candidates, sum of cell × period]. */
  candidates: number[][][];
}

interface Place {
  /** min_x, min_y, max_x, max_y, world units (single precision). */
  bounds: number[];
  cell_size: number;
  view_radius: number;
  /** Cells of the stencil by tier. */
  counts: number[];
  views: View[];
}

const places: Place[] = fixture.places;

function gridOf(p: Place): CellGrid {
  const [minX = Number.NaN, minY = Number.NaN, maxX = Number.NaN, maxY = Number.NaN] = p.bounds;
  const g = CellGrid.of({ minX, minY, maxX, maxY }, p.cell_size);
  if (!g) throw new Error(`no grid of ${p.cell_size} over ${p.bounds.join(', ')}`);
  return g;
}

function listed(cells: TieredCells): number[][] {
  return Array.from({ length: cells.count }, (_, k) => [cells.cells[k] as number, cells.tiers[k] as number]);
}

describe('the stencil against the Rust fixture', () => {
  it('has places and views to check', () => {
    expect(places.length).toBeGreaterThanOrEqual(7);
    expect(places.reduce((n, p) => n + p.views.length, 0)).toBeGreaterThanOrEqual(40);
    expect(places.some((p) => p.view_radius === 0)).toBe(true);
  });

  for (const p of places) {
    it(`sees the cells Rust sees over ${p.bounds.join(', ')}, cells of ${p.cell_size}, radius ${p.view_radius}`, () => {
      const grid = gridOf(p);
      const stencil = Stencil.ofView(p.view_radius, p.cell_size);
      expect(stencil.counts()).toEqual(p.counts);
      const cells = new TieredCells();
      const scratch = new ViewScratch();
      for (const v of p.views) {
        const where = `view ${v.key}, ${v.previous}`;
        viewCells(grid, stencil, v.key, v.previous, cells, scratch);
        expect(listed(cells), where).toEqual(v.cells);
        const got = LADDER.map((_, rung) =>
          Array.from({ length: 7 }, (_, k) => {
            let n = 0;
            let sum = 0;
            expect(candidates(cells, rung, k, (c, period) => ((n += 1), (sum += c * period)))).toBe(true);
            return [n, sum];
          }),
        );
        expect(got, where).toEqual(v.candidates);
      }
    });
  }
});

describe('the stencil', () => {
  it('has a radius of two cells in tiers, with a prefetch ring', () => {
    const [own, near, mid, far] = new Stencil(2).counts();
    expect([own, near]).toEqual([1, 8]);
    // The 7 x 7 square without its four corner 2 x 2 blocks (distance sqrt(5)..).
    expect(mid).toBe(49 - 9 - 12);
    expect(far).toBeGreaterThan(0);
    // Negative and NaN radii are 0: the own cell, its ring, and a prefetch ring.
    for (const r of [-3, Number.NaN, 0]) expect(new Stencil(r).counts()).toEqual([1, 8, 0, 12]);
  });

  it('takes a radius past the widest as the widest, as Rust does', () => {
    const widest = new Stencil(MAX_RADIUS_CELLS);
    expect(widest.reach).toBe(66);
    for (const r of [1e30, Number.POSITIVE_INFINITY, 65]) {
      const s = new Stencil(r);
      expect([s.reach, s.counts()]).toEqual([widest.reach, widest.counts()]);
    }
  });

  it('walks every cell on the grid by increasing id, each at the tier of its offset', () => {
    const grid = CellGrid.of({ minX: 0, minY: 0, maxX: 1000, maxY: 700 }, 100);
    if (!grid) throw new Error('a grid');
    for (const radius of [0, 1, 2.5, 4]) {
      const s = new Stencil(radius);
      const r = Math.fround(radius);
      for (let viewer = 1; viewer <= grid.columns * grid.rows; viewer++) {
        const column = (viewer - 1) % grid.columns;
        const row = Math.floor((viewer - 1) / grid.columns);
        const want: [number, Tier][] = [];
        for (let y = 0; y < grid.rows; y++) {
          for (let x = 0; x < grid.columns; x++) {
            const dx = x - column;
            const dy = y - row;
            const g = (d: number) => Math.max(Math.abs(d) - 1, 0);
            const squared = g(dx) ** 2 + g(dy) ** 2;
            const ring = Math.max(Math.abs(dx), Math.abs(dy));
            const tier = ring === 0 ? TIER_OWN : ring === 1 ? TIER_NEAR : squared <= r * r ? TIER_MID : squared <= (r + 1) ** 2 ? TIER_FAR : -1;
            if (tier >= 0) want.push([grid.cell(x, y), tier as Tier]);
          }
        }
        const got: [number, Tier][] = [];
        s.each(grid, viewer, (c, t) => got.push([c, t]));
        expect(got, `radius ${radius}, viewer ${viewer}`).toEqual(want);
      }
    }
  });

  it('takes a viewer off the grid as the first cell', () => {
    const grid = CellGrid.of({ minX: 0, minY: 0, maxX: 1000, maxY: 1000 }, 100);
    if (!grid) throw new Error('a grid');
    const s = new Stencil(2);
    const first: number[] = [];
    s.each(grid, 1, (c) => first.push(c));
    for (const viewer of [0, 101, 0xffff_ffff]) {
      const got: number[] = [];
      s.each(grid, viewer, (c) => got.push(c));
      expect(got, `viewer ${viewer}`).toEqual(first);
    }
  });

  it('gives a view of two cells as their union, each cell at its nearer tier', () => {
    const grid = CellGrid.of({ minX: 0, minY: 0, maxX: 1000, maxY: 1000 }, 100);
    if (!grid) throw new Error('a grid');
    const s = new Stencil(2);
    const key = grid.cell(5, 5);
    const previous = grid.cell(4, 5);
    const scratch = new ViewScratch();
    const both = new TieredCells();
    const one = new TieredCells();
    const other = new TieredCells();
    viewCells(grid, s, key, previous, both, scratch);
    viewCells(grid, s, key, 0, one, scratch);
    viewCells(grid, s, previous, 0, other, scratch);
    const tiers = (t: TieredCells) => new Map(listed(t).map(([c = 0, tier = 0]) => [c, tier]));
    const [b, x, y] = [tiers(both), tiers(one), tiers(other)];
    expect([b.get(key), b.get(previous)]).toEqual([TIER_OWN, TIER_OWN]);
    expect(b.size).toBe(new Set([...x.keys(), ...y.keys()]).size);
    for (const [c, tier] of b) expect(tier, `cell ${c}`).toBe(Math.min(x.get(c) ?? 9, y.get(c) ?? 9));
    const ids = listed(both).map(([c = 0]) => c);
    expect(ids).toEqual([...ids].sort((p, q) => p - q));
    // Reused, it forgets the last view.
    viewCells(grid, s, key, 0, both, scratch);
    expect(listed(both)).toEqual(listed(one));
  });

  it('offers the cells whose period divides the step as candidates', () => {
    const cells = new TieredCells();
    for (const [c, t] of [
      [3, TIER_OWN],
      [4, TIER_NEAR],
      [9, TIER_MID],
      [12, TIER_FAR],
    ] as const)
      cells.push(c, t);
    const at = (rung: number, step: number): number[][] => {
      const out: number[][] = [];
      candidates(cells, rung, dueExponent(step), (c, p) => out.push([c, p]));
      return out;
    };
    expect(at(0, 1)).toEqual([
      [3, 1],
      [4, 1],
    ]);
    expect(at(0, 2)).toEqual([
      [3, 1],
      [4, 1],
      [9, 2],
    ]);
    expect(at(0, 12)).toEqual([
      [3, 1],
      [4, 1],
      [9, 2],
      [12, 4],
    ]);
    expect(at(9, 8)).toEqual([[3, 8]]);
    expect(at(9, 0)).toEqual([
      [3, 8],
      [4, 16],
      [9, 64],
      [12, 64],
    ]);
    expect(candidates(cells, 10, 0, () => undefined)).toBe(false);
    expect([dueExponent(0), dueExponent(1), dueExponent(96), dueExponent(2 ** 40)]).toEqual([6, 0, 5, 6]);
    expect(Math.max(...LADDER.flat())).toBe(SLOWEST_PERIOD);
    expect(LADDER.flat().every((p) => (p & (p - 1)) === 0)).toBe(true);
    expect(TIER_MID < TIER_FAR).toBe(true);
  });
});
