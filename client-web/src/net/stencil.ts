// Which cells a viewer sees, at which tier, and how often each tier is sent
// (schema/src/stencil.rs, held to schema/fixtures/stencil.json): the area of
// interest's geometry, which a view frame's implied cells are read with
// (protocol 7, net/view.ts).
//
// A viewer in cell (column, row) sees the cells at offsets (dx, dy) whose
// rectangle is within the view radius of its own cell's rectangle, plus one
// prefetch ring a cell wide beyond. The radius in cells is view_radius /
// cell_size in single precision (the Welcome's two floats); a cell's
// distance is tested in double precision on integers, gx² + gy² <= r² with
// gx = max(|dx| - 1, 0): the same operations in Rust and here give the same
// answer, bit for bit. Cells off the grid are left out.
//
// A section names the view it was assembled for: its key cell and, for a
// viewer that just crossed a border, its previous cell (the view is then the
// union of both stencils, each cell at its nearer tier, [`viewCells`]), and
// the rung of LADDER its budget allows. Read per section of every frame, so
// nothing here allocates once its arrays have grown.

import type { CellGrid } from './grid.js';

/** How close a seen cell is, nearest first (Rust's `Tier`); each tier has its own period. */
export type Tier = 0 | 1 | 2 | 3;
/** The viewer's own cell. */
export const TIER_OWN = 0;
/** The eight cells around it. */
export const TIER_NEAR = 1;
/** The rest of the view radius. */
export const TIER_MID = 2;
/** The prefetch ring beyond the view radius. */
export const TIER_FAR = 3;

/** Periods (ticks) of the four tiers, indexed by tier. */
export type Periods = readonly [number, number, number, number];

/** The longest period of the LADDER, ticks: the floor's outer tiers. */
export const SLOWEST_PERIOD = 64;

/**
 * The widest view radius a stencil takes, cells (Rust's `MAX_RADIUS_CELLS`):
 * a server refuses a wider one, and a page given one takes this one.
 */
export const MAX_RADIUS_CELLS = 64;

/**
 * The periods a view's cells are sent at, from the base (rung 0) down to the
 * floor (rung 9), each a power of two (Rust's `LADDER`).
 */
export const LADDER: readonly Periods[] = [
  [1, 1, 2, 4],
  [1, 1, 2, 8],
  [1, 1, 4, 8],
  [1, 1, 4, 16],
  [1, 2, 8, 16],
  [1, 2, 8, 32],
  [2, 4, 16, 32],
  [2, 4, 16, 64],
  [4, 8, 32, 64],
  [8, 16, 64, 64],
];

/**
 * Cells each with a byte: [0, count) of each array, in the order pushed. The
 * arrays grow when needed and are kept, so a list reused section after
 * section stops allocating once it fits the view.
 */
export class CellBytes {
  count = 0;
  cells = new Uint32Array(64);
  bytes = new Uint8Array(64);

  /** Appends `cell` with `byte`. */
  push(cell: number, byte: number): void {
    const k = this.count;
    if (k === this.cells.length) {
      const cells = new Uint32Array(2 * k);
      const bytes = new Uint8Array(2 * k);
      cells.set(this.cells);
      bytes.set(this.bytes);
      this.cells = cells;
      this.bytes = bytes;
    }
    this.cells[k] = cell;
    this.bytes[k] = byte;
    this.count = k + 1;
  }
}

/** Cells with their tiers (a cell's byte is its tier). */
export class TieredCells extends CellBytes {
  /** Each cell's tier. */
  get tiers(): Uint8Array {
    return this.bytes;
  }
}

/**
 * The cells around a viewer cell, with their tier, made once from the view
 * radius in cells (Rust's `Stencil`). Kept as runs along rows: (dy, first
 * dx, last dx, tier), by row then column.
 */
export class Stencil {
  /** Cells of the stencil's reach around the viewer cell, each way. */
  readonly reach: number;
  /** The runs, four numbers each: dy, first dx, last dx, tier. */
  private readonly runs: Int32Array;
  private readonly tierCounts = new Uint32Array(4);

  /**
   * The stencil of a view radius of `radiusCells` cells (view radius / cell
   * size, rounded to single precision here; negative or NaN: 0; past
   * MAX_RADIUS_CELLS: that, as Rust's).
   */
  constructor(radiusCells: number) {
    const f = Math.fround(radiusCells);
    const radius = f > 0 ? Math.min(f, MAX_RADIUS_CELLS) : 0;
    const reach = Math.ceil(radius) + 2;
    const mid = radius * radius;
    const far = (radius + 1) * (radius + 1);
    const runs: number[] = [];
    for (let dy = -reach; dy <= reach; dy++) {
      const gy = Math.max(Math.abs(dy) - 1, 0);
      for (let dx = -reach; dx <= reach; dx++) {
        // Distance between the viewer cell's rectangle and this one's, cells.
        const gx = Math.max(Math.abs(dx) - 1, 0);
        const squared = gx * gx + gy * gy;
        const ring = Math.max(Math.abs(dx), Math.abs(dy));
        const tier = ring === 0 ? TIER_OWN : ring === 1 ? TIER_NEAR : squared <= mid ? TIER_MID : squared <= far ? TIER_FAR : -1;
        if (tier < 0) continue;
        this.tierCounts[tier] = (this.tierCounts[tier] as number) + 1;
        const n = runs.length;
        if (n > 0 && runs[n - 4] === dy && (runs[n - 2] as number) + 1 === dx && runs[n - 1] === tier) runs[n - 2] = dx;
        else runs.push(dy, dx, dx, tier);
      }
    }
    this.runs = Int32Array.from(runs);
    this.reach = reach;
  }

  /**
   * The stencil of a Welcome's `view_radius` and `cell_size` (world units,
   * single precision): their quotient in single precision (Rust's
   * `Stencil::of_view`).
   */
  static ofView(viewRadius: number, cellSize: number): Stencil {
    return new Stencil(Math.fround(Math.fround(viewRadius) / Math.fround(cellSize)));
  }

  /** Number of cells in the stencil, by tier. */
  counts(): [number, number, number, number] {
    const n = this.tierCounts;
    return [n[0] as number, n[1] as number, n[2] as number, n[3] as number];
  }

  /**
   * Appends each cell seen from `viewer` to `out` with its tier, by
   * increasing cell id (row by row), cells off `grid` left out (a viewer
   * off the grid sees from the first cell). Rust's `Stencil::each`.
   */
  collect(grid: CellGrid, viewer: number, out: TieredCells): void {
    const columns = grid.columns;
    const rows = grid.rows;
    const i = viewer > 0 ? viewer - 1 : 0;
    const inside = i < columns * rows;
    const column = inside ? i % columns : 0;
    const row = inside ? Math.floor(i / columns) : 0;
    const last = columns - 1;
    const runs = this.runs;
    for (let k = 0; k < runs.length; k += 4) {
      const r = row + (runs[k] as number);
      if (r < 0 || r >= rows) continue;
      const from = Math.max(column + (runs[k + 1] as number), 0);
      const to = Math.min(column + (runs[k + 2] as number), last);
      const tier = runs[k + 3] as number;
      const base = 1 + r * columns;
      for (let c = from; c <= to; c++) out.push(base + c, tier);
    }
  }

  /** Calls `f` with each cell seen from `viewer` and its tier, as `collect` lists them (Rust's `Stencil::each`; tests and tools). */
  each(grid: CellGrid, viewer: number, f: (cell: number, tier: Tier) => void): void {
    const out = new TieredCells();
    this.collect(grid, viewer, out);
    for (let k = 0; k < out.count; k++) f(out.cells[k] as number, out.tiers[k] as Tier);
  }
}

/** Room [`viewCells`] keeps between calls: each cell's stencil (Rust's `ViewScratch`). */
export class ViewScratch {
  readonly a = new TieredCells();
  readonly b = new TieredCells();
}

/**
 * The cells of the view of `key` and `previous` (0: none) into `out`
 * (emptied first), by increasing cell id: the union of both cells'
 * stencils, each cell once at its nearer tier (Rust's `view_cells`).
 * `scratch` is room kept between calls.
 */
export function viewCells(grid: CellGrid, stencil: Stencil, key: number, previous: number, out: TieredCells, scratch: ViewScratch): void {
  out.count = 0;
  if (previous === 0) {
    stencil.collect(grid, key, out);
    return;
  }
  const a = scratch.a;
  const b = scratch.b;
  a.count = 0;
  b.count = 0;
  stencil.collect(grid, key, a);
  stencil.collect(grid, previous, b);
  // Both come by ascending cell: merged, each cell once at its nearer tier.
  let i = 0;
  let j = 0;
  while (i < a.count || j < b.count) {
    if (i < a.count && j < b.count) {
      const x = a.cells[i] as number;
      const y = b.cells[j] as number;
      if (x === y) {
        out.push(x, Math.min(a.tiers[i] as number, b.tiers[j] as number));
        i++;
        j++;
      } else if (x < y) {
        out.push(x, a.tiers[i++] as number);
      } else {
        out.push(y, b.tiers[j++] as number);
      }
    } else if (i < a.count) {
      out.push(a.cells[i] as number, a.tiers[i] as number);
      i++;
    } else {
      out.push(b.cells[j] as number, b.tiers[j] as number);
      j++;
    }
  }
}

/**
 * The due exponent of `step` (a non-negative integer): periods up to 2^k
 * ticks are due at it (k = its trailing zero bits, at most 6:
 * SLOWEST_PERIOD; 6 for step 0). Rust's `due_exponent`.
 */
export function dueExponent(step: number): number {
  let k = 0;
  let s = step;
  while (k < 6 && s % 2 === 0) {
    s /= 2;
    k++;
  }
  return k;
}

/**
 * Calls `f` with each candidate for an implied cell of a section (protocol
 * 7, net/view.ts): the cells of `cells` (a view's, [`viewCells`]) whose
 * tier's period at `rung` is at most 2^`due` ticks, in order, each with that
 * period. False (and no call) for a rung past the LADDER or a due exponent
 * of 32 or more (Rust's `candidates`, None).
 */
export function candidates(cells: TieredCells, rung: number, due: number, f: (cell: number, period: number) => void): boolean {
  const periods = LADDER[rung];
  if (!periods || !(due >= 0 && due < 32)) return false;
  const most = 2 ** due;
  for (let k = 0; k < cells.count; k++) {
    const period = periods[cells.tiers[k] as Tier];
    if (period <= most) f(cells.cells[k] as number, period);
  }
  return true;
}
