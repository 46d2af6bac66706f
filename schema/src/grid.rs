//! The area-of-interest grid's cell rule: the world cut into square cells of
//! `cell_size` world units, numbered `1 + row × columns + column` (row 0 and
//! column 0 at the world's minimum corner; cell 0 means "no cell", the whole
//! shard of a place without area of interest).
//!
//! The server files each player under the cell of its position, and with
//! handoff deltas ([`crate::held`]) a client moves a player that walked out
//! of its cell into the cell its position is in: both must find the same cell
//! for the same position, bit for bit. So the rule is one function of the
//! wire's quantized position ([`CellGrid::cell_of_q`]), computed in IEEE-754
//! single precision in one order of operations: the browser's
//! `net/grid.ts` repeats it with `Math.fround` after every operation (a
//! double operation on single operands rounded to single is the single
//! operation, exactly), and `schema/fixtures/grid.json` pins both.

use crate::quantize;
use crate::wire::Bounds;

/// Most cells a grid may have (4,096 × 4,096): a server refuses a larger
/// one at its start, and a client given one (a Welcome that says so) takes
/// no grid, so cell ids never overflow 32 bits.
pub const MAX_CELLS: u64 = 1 << 24;

/// The grid over one world (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct CellGrid {
    bounds: Bounds,
    cell_size: f32,
    columns: u32,
    rows: u32,
}

impl CellGrid {
    /// Cells of `cell_size` world units over `bounds` (the last row and
    /// column may stick out past the world's edge); `None` when the size is
    /// not a positive finite number, or the grid would have more than
    /// [`MAX_CELLS`]. Columns are `ceil(width / cell_size)` in single
    /// precision, at least one (rows the same).
    pub fn new(bounds: &Bounds, cell_size: f32) -> Option<CellGrid> {
        if !(cell_size.is_finite() && cell_size > 0.0) {
            return None;
        }
        let (columns, rows) = sides(bounds, cell_size);
        if columns * rows > MAX_CELLS {
            return None;
        }
        Some(CellGrid { bounds: *bounds, cell_size, columns: columns as u32, rows: rows as u32 })
    }

    /// The cells a grid of `cell_size` over `bounds` would have, whether or
    /// not that is past [`MAX_CELLS`] (what [`CellGrid::new`] refuses says).
    pub fn cells_over(bounds: &Bounds, cell_size: f32) -> u64 {
        let (columns, rows) = sides(bounds, cell_size);
        columns * rows
    }

    /// The world's bounds, world units.
    pub fn bounds(&self) -> &Bounds {
        &self.bounds
    }

    /// The cell side, world units.
    pub fn cell_size(&self) -> f32 {
        self.cell_size
    }

    /// Columns of cells.
    pub fn columns(&self) -> u32 {
        self.columns
    }

    /// Rows of cells.
    pub fn rows(&self) -> u32 {
        self.rows
    }

    /// The id of the cell at `column`, `row` (both in range).
    pub fn cell(&self, column: u32, row: u32) -> u32 {
        1 + row * self.columns + column
    }

    /// The cell holding world position `(x, y)`; positions outside the world
    /// (or NaN) fall into the nearest edge cell.
    pub fn cell_of(&self, x: f32, y: f32) -> u32 {
        let index = |v: f32, min: f32, n: u32| {
            let i = ((v - min) / self.cell_size).floor();
            if i.is_nan() || i < 0.0 {
                0
            } else {
                (i as u32).min(n - 1)
            }
        };
        self.cell(index(x, self.bounds.min_x(), self.columns), index(y, self.bounds.min_y(), self.rows))
    }

    /// The quantized coordinates of cell `cell`'s players: `(x, y)` ranges
    /// (end exclusive, up to 65,536) such that [`CellGrid::cell_of_q`] is
    /// `cell` exactly when `x` and `y` are in them (the rule is monotonic
    /// along each axis: found by binary search, 17 evaluations a bound).
    /// `None` for a cell not on the grid. A client asking whether the
    /// players of a crowded cell are still in it compares, rather than
    /// computes each one's cell.
    pub fn span_q(&self, cell: u32) -> Option<(std::ops::Range<u32>, std::ops::Range<u32>)> {
        let (column, row) = self.column_row(cell)?;
        Some((self.column_span_q(column), self.row_span_q(row)))
    }

    /// The column and row of cell `cell`; `None` for a cell not on the grid.
    pub fn column_row(&self, cell: u32) -> Option<(u32, u32)> {
        let i = cell.checked_sub(1)?;
        if u64::from(i) >= u64::from(self.columns) * u64::from(self.rows) {
            return None;
        }
        Some((i % self.columns, i / self.columns))
    }

    /// The quantized x coordinates whose cell ([`CellGrid::cell_of_q`]) is
    /// in column `column`: a range, end exclusive, up to 65,536 (empty for
    /// a column no quantized position reaches); 34 evaluations of the rule.
    pub fn column_span_q(&self, column: u32) -> std::ops::Range<u32> {
        let column_of = |q: u32| (self.cell_of_q(q as u16, 0) - 1) % self.columns;
        first_q(column, column_of)..first_q(column + 1, column_of)
    }

    /// The quantized y coordinates whose cell is in row `row`, as
    /// [`CellGrid::column_span_q`] for columns.
    pub fn row_span_q(&self, row: u32) -> std::ops::Range<u32> {
        let row_of = |q: u32| (self.cell_of_q(0, q as u16) - 1) / self.columns;
        first_q(row, row_of)..first_q(row + 1, row_of)
    }

    /// The cell holding the wire's quantized position `(x, y)`: the cell of
    /// its world position ([`quantize::world_position`]). The rule the server
    /// files players by and a client relocates them by.
    pub fn cell_of_q(&self, x: u16, y: u16) -> u32 {
        let (wx, wy) = quantize::world_position(&self.bounds, x, y);
        self.cell_of(wx, wy)
    }
}

/// The first quantized coordinate q (0 to 65,535) whose `index` is at least
/// `k`, `index` non-decreasing in q; 65,536 when none is (binary search, 17
/// evaluations).
fn first_q(k: u32, index: impl Fn(u32) -> u32) -> u32 {
    let (mut lo, mut hi) = (0u32, 1u32 << 16);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if index(mid) >= k {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// Columns and rows of cells of `cell_size` over `bounds`: `ceil(extent /
/// cell_size)` in single precision, at least one, at most `u32::MAX`.
fn sides(bounds: &Bounds, cell_size: f32) -> (u64, u64) {
    let side = |extent: f32| ((extent / cell_size).ceil() as u64).clamp(1, u64::from(u32::MAX));
    (side(bounds.max_x() - bounds.min_x()), side(bounds.max_y() - bounds.min_y()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> CellGrid {
        CellGrid::new(&Bounds::new(0.0, 0.0, 1000.0, 1000.0), 100.0).expect("grid")
    }

    #[test]
    fn cells_are_numbered_from_one_row_by_row() {
        let g = grid();
        assert_eq!((g.columns(), g.rows()), (10, 10));
        assert_eq!(g.cell_of(0.0, 0.0), 1);
        assert_eq!(g.cell_of(99.9, 0.0), 1);
        assert_eq!(g.cell_of(100.0, 0.0), 2);
        assert_eq!(g.cell_of(50.0, 150.0), 11);
        assert_eq!(g.cell_of(1000.0, 1000.0), 100, "the far edge belongs to the last cell");
    }

    #[test]
    fn positions_outside_the_world_fall_into_edge_cells() {
        let g = grid();
        assert_eq!(g.cell_of(-5.0, f32::NAN), 1);
        assert_eq!(g.cell_of(5000.0, -1.0), 10);
    }

    #[test]
    fn quantized_positions_take_their_world_position_s_cell() {
        let g = grid();
        assert_eq!(g.cell_of_q(0, 0), 1);
        assert_eq!(g.cell_of_q(u16::MAX, u16::MAX), 100);
        // 6553.5 quantized units are 100 world units: the border.
        assert_eq!(g.cell_of_q(6553, 0), 1);
        assert_eq!(g.cell_of_q(6554, 0), 2);
    }

    #[test]
    fn a_cells_quantized_span_holds_exactly_its_positions() {
        for (bounds, size) in
            [(Bounds::new(0.0, 0.0, 1000.0, 1000.0), 100.0), (Bounds::new(-50.0, 10.0, 1234.5, 777.25), 301.7)]
        {
            let g = CellGrid::new(&bounds, size).expect("grid");
            for cell in 1..=g.columns() * g.rows() {
                let (xs, ys) = g.span_q(cell).expect("on the grid");
                assert!(!xs.is_empty() && !ys.is_empty());
                for (x, y) in [(xs.start, ys.start), (xs.end - 1, ys.end - 1)] {
                    assert_eq!(g.cell_of_q(x as u16, y as u16), cell);
                }
                if xs.start > 0 {
                    assert_ne!(g.cell_of_q(xs.start as u16 - 1, ys.start as u16), cell);
                }
                if xs.end < 65_536 {
                    assert_ne!(g.cell_of_q(xs.end as u16, ys.start as u16), cell);
                }
            }
            assert_eq!(g.span_q(0), None);
            assert_eq!(g.span_q(g.columns() * g.rows() + 1), None);
        }
    }

    #[test]
    fn bad_sizes_are_refused() {
        let b = Bounds::new(0.0, 0.0, 1000.0, 1000.0);
        assert_eq!(CellGrid::new(&b, 0.0), None);
        assert_eq!(CellGrid::new(&b, f32::NAN), None);
        assert_eq!(CellGrid::new(&b, -1.0), None);
        assert_eq!(CellGrid::new(&Bounds::new(0.0, 0.0, 1e9, 1e9), 1e-3), None, "past MAX_CELLS");
        assert!(CellGrid::new(&Bounds::new(0.0, 0.0, 4096.0, 4096.0), 1.0).is_some(), "MAX_CELLS itself");
    }
}
