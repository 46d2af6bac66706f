// The area-of-interest grid's cell rule (schema/src/grid.rs's `CellGrid`):
// the world cut into square cells of `cellSize` world units, numbered
// 1 + row × columns + column (row 0 and column 0 at the world's minimum
// corner; cell 0 means "no cell", the whole shard of a place without area of
// interest).
//
// The server files each player under the cell of its position, and with
// protocol 6's handoff (net/held.ts) the page moves a player that walked out
// of its cell into the cell its position is in: both must find the same cell
// for the same position, bit for bit. So the rule is one function of the
// wire's quantized position ([`CellGrid.cellOfQ`]) in IEEE-754 single
// precision, in Rust's order of operations, with `Math.fround` after every
// operation: a double operation on single operands rounded to single is the
// single operation, exactly. schema/fixtures/grid.json pins both sides
// (net/grid.test.ts).

import type { Bounds } from './messages.js';

const f32 = Math.fround;
/** The largest quantized coordinate. */
const Q_MAX = 65535;
/** The largest u32 (Rust's `u32::MAX`, where its casts saturate). */
const U32_MAX = 0xffff_ffff;

/**
 * `min + (q / 65535) × (max - min)` in single precision: the world position
 * of quantized coordinate `q` (0..65535) over [min, max] (single-precision
 * world units; schema/src/quantize.rs's `dequantize`).
 */
export function dequantize32(q: number, min: number, max: number): number {
  return f32(min + f32(f32(q / Q_MAX) * f32(max - min)));
}

/**
 * Cells along an axis of `extent` world units: `ceil(extent / cellSize)` in
 * single precision, cast as Rust casts it to u64 (NaN and negatives 0,
 * saturating) and clamped to [1, u32::MAX].
 */
function side(extent: number, cellSize: number): number {
  const n = Math.ceil(f32(extent / cellSize));
  if (!(n >= 1)) return 1;
  return Math.min(n, U32_MAX);
}

/**
 * The index along an axis of `n` cells of world coordinate `v` (single
 * precision) over one starting at `min`: `floor((v - min) / cellSize)`, NaN
 * and negatives 0, at most n - 1 (positions outside the world fall into the
 * edge cell).
 */
function index(v: number, min: number, cellSize: number, n: number): number {
  const i = Math.floor(f32(f32(v - min) / cellSize));
  if (!(i > 0)) return 0;
  return Math.min(i, n - 1);
}

/** Most cells a grid may have, 4,096 x 4,096 (Rust's `grid::MAX_CELLS`): a Welcome saying more gets no grid. */
export const MAX_CELLS = 2 ** 24;

/** The grid over one world (see the module comment). */
export class CellGrid {
  /** max - min along each axis, world units, single precision (dequantize32's `max - min`). */
  private readonly spanX: number;
  private readonly spanY: number;

  private constructor(
    /** The world's bounds, world units, rounded to single precision (as the Welcome carries them). */
    readonly bounds: Bounds,
    /** The cell side, world units (single precision, > 0). */
    readonly cellSize: number,
    /** Columns of cells (at least 1). */
    readonly columns: number,
    /** Rows of cells (at least 1). */
    readonly rows: number,
  ) {
    this.spanX = f32(bounds.maxX - bounds.minX);
    this.spanY = f32(bounds.maxY - bounds.minY);
  }

  /**
   * Cells of `cellSize` world units over `bounds` (the Welcome's bounds and
   * `aoi.cellSize`; the last row and column may stick out past the world's
   * edge); null when the size is not a positive finite number, or past
   * MAX_CELLS cells (Rust's `CellGrid::new`). Both are rounded to single precision first (a no-op
   * for the Welcome's, which are f32s).
   */
  static of(bounds: Bounds, cellSize: number): CellGrid | null {
    const size = f32(cellSize);
    if (!(Number.isFinite(size) && size > 0)) return null;
    const b: Bounds = { minX: f32(bounds.minX), minY: f32(bounds.minY), maxX: f32(bounds.maxX), maxY: f32(bounds.maxY) };
    const columns = side(f32(b.maxX - b.minX), size);
    const rows = side(f32(b.maxY - b.minY), size);
    if (columns * rows > MAX_CELLS) return null;
    return new CellGrid(b, size, columns, rows);
  }

  /** The id of the cell at `column`, `row` (both in range). */
  cell(column: number, row: number): number {
    return 1 + row * this.columns + column;
  }

  /** The cell holding world position (`x`, `y`), single precision; outside the world (or NaN): the nearest edge cell. */
  cellOf(x: number, y: number): number {
    const b = this.bounds;
    return this.cell(index(f32(x), b.minX, this.cellSize, this.columns), index(f32(y), b.minY, this.cellSize, this.rows));
  }

  /**
   * The cell holding the wire's quantized position (`x`, `y`, 0..65535):
   * the cell of its world position (dequantize32), as `cellOf` finds it.
   * The rule the server files players by and the page hands them off by.
   * Computed here in full, with no call taking or returning a fraction: run
   * for every player of every delta, it allocates nothing whatever the
   * optimizer inlines (a fraction passed to or returned by a call it does
   * not inline is boxed).
   */
  cellOfQ(x: number, y: number): number {
    const b = this.bounds;
    const size = this.cellSize;
    const wx = f32(b.minX + f32(f32(x / Q_MAX) * this.spanX));
    const wy = f32(b.minY + f32(f32(y / Q_MAX) * this.spanY));
    const i = Math.floor(f32(f32(wx - b.minX) / size));
    const j = Math.floor(f32(f32(wy - b.minY) / size));
    const column = i > 0 ? Math.min(i, this.columns - 1) : 0;
    const row = j > 0 ? Math.min(j, this.rows - 1) : 0;
    return 1 + row * this.columns + column;
  }
}
