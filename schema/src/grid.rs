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
    /// not a positive finite number. Columns are `ceil(width / cell_size)` in
    /// single precision, at least one (rows the same); the caller bounds
    /// their product.
    pub fn new(bounds: &Bounds, cell_size: f32) -> Option<CellGrid> {
        if !(cell_size.is_finite() && cell_size > 0.0) {
            return None;
        }
        let side = |extent: f32| ((extent / cell_size).ceil() as u64).clamp(1, u64::from(u32::MAX)) as u32;
        Some(CellGrid {
            bounds: *bounds,
            cell_size,
            columns: side(bounds.max_x() - bounds.min_x()),
            rows: side(bounds.max_y() - bounds.min_y()),
        })
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

    /// The cell holding the wire's quantized position `(x, y)`: the cell of
    /// its world position ([`quantize::world_position`]). The rule the server
    /// files players by and a client relocates them by.
    pub fn cell_of_q(&self, x: u16, y: u16) -> u32 {
        let (wx, wy) = quantize::world_position(&self.bounds, x, y);
        self.cell_of(wx, wy)
    }
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
    fn bad_sizes_are_refused() {
        let b = Bounds::new(0.0, 0.0, 1000.0, 1000.0);
        assert_eq!(CellGrid::new(&b, 0.0), None);
        assert_eq!(CellGrid::new(&b, f32::NAN), None);
        assert_eq!(CellGrid::new(&b, -1.0), None);
    }
}
