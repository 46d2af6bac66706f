//! The area-of-interest grid: the world cut into square cells of
//! `--cell-size` world units, numbered `1 + row * columns + column` (row 0 and
//! column 0 at the world's minimum corner). Cell 0 means "no cell": the
//! whole-shard snapshot of a shard without area of interest.
//!
//! The grid also groups cells into square *regions* of [`REGION_CELLS`] ×
//! [`REGION_CELLS`] cells: the unit shards publish to each other through
//! Redis (one bundle per region a tick, on a channel per region).

use mino_protocol::grid::CellGrid;
use mino_protocol::wire::Bounds;

/// Side of a region, cells: a region is 8 × 8 = 64 cells.
pub const REGION_CELLS: u32 = 8;

/// Most cells a grid may have (4,096 × 4,096): a cell id fits a `u32` with
/// room to spare, and per-cell tables stay small.
pub use crate::config::MAX_CELLS;

/// One cell of the grid; `CellId(0)` is no cell (the whole shard).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CellId(pub u32);

/// One region of the grid (see the module docs), numbered like cells:
/// `1 + region_row * region_columns + region_column`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegionId(pub u32);

/// Why a grid cannot be made.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum GridError {
    /// The cell size is not a positive finite number of world units.
    #[error("the cell size must be positive, got {0}")]
    CellSize(f32),
    /// The world needs more than [`MAX_CELLS`] cells of this size.
    #[error(
        "{cells} cells of {cell_size} world units exceed the most a grid may have ({MAX_CELLS}); use larger cells"
    )]
    TooManyCells {
        /// Cells the world would need.
        cells: u64,
        /// The cell size asked for.
        cell_size: f32,
    },
}

/// The grid over one world: the wire's cell rule ([`CellGrid`], which
/// clients share) and the regions.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    cells: CellGrid,
}

impl Grid {
    /// Cells of `cell_size` world units over `bounds` (the last row and column
    /// may stick out past the world's edge).
    ///
    /// Errors: [`GridError`] for a cell size that is not positive, or one so
    /// small the grid would exceed [`MAX_CELLS`].
    pub fn new(bounds: &Bounds, cell_size: f32) -> Result<Grid, GridError> {
        if !(cell_size.is_finite() && cell_size > 0.0) {
            return Err(GridError::CellSize(cell_size));
        }
        let cells = CellGrid::new(bounds, cell_size)
            .ok_or_else(|| GridError::TooManyCells { cells: CellGrid::cells_over(bounds, cell_size), cell_size })?;
        Ok(Grid { cells })
    }

    /// The wire's cell rule.
    pub fn cells(&self) -> &CellGrid {
        &self.cells
    }

    /// The cell side, world units.
    pub fn cell_size(&self) -> f32 {
        self.cells.cell_size()
    }

    /// Columns of cells.
    pub fn columns(&self) -> u32 {
        self.cells.columns()
    }

    /// Rows of cells.
    pub fn rows(&self) -> u32 {
        self.cells.rows()
    }

    /// The cell holding world position `(x, y)`; positions outside the world
    /// (or NaN) fall into the nearest edge cell.
    pub fn cell_of(&self, x: f32, y: f32) -> CellId {
        CellId(self.cells.cell_of(x, y))
    }

    /// The cell holding the wire's quantized position `(x, y)`
    /// ([`CellGrid::cell_of_q`]): the cell a player is filed under.
    pub fn cell_of_q(&self, x: u16, y: u16) -> CellId {
        CellId(self.cells.cell_of_q(x, y))
    }

    /// The cell at `column`, `row` (both in range).
    pub fn cell(&self, column: u32, row: u32) -> CellId {
        CellId(self.cells.cell(column, row))
    }

    /// The cell at a signed offset from `(column, row)`, if inside the grid.
    pub fn offset(&self, column: u32, row: u32, dx: i32, dy: i32) -> Option<CellId> {
        let c = column.checked_add_signed(dx).filter(|c| *c < self.columns())?;
        let r = row.checked_add_signed(dy).filter(|r| *r < self.rows())?;
        Some(self.cell(c, r))
    }

    /// Column and row of a cell of this grid (`None` for cell 0 or an id past
    /// the grid).
    pub fn position(&self, cell: CellId) -> Option<(u32, u32)> {
        let i = cell.0.checked_sub(1)?;
        (u64::from(i) < u64::from(self.columns()) * u64::from(self.rows()))
            .then(|| (i % self.columns(), i / self.columns()))
    }

    /// Region columns (regions of [`REGION_CELLS`] cells a side).
    pub fn region_columns(&self) -> u32 {
        self.columns().div_ceil(REGION_CELLS)
    }

    /// The region a cell belongs to (`None` for cell 0 or an id past the grid).
    pub fn region_of(&self, cell: CellId) -> Option<RegionId> {
        let (c, r) = self.position(cell)?;
        Some(RegionId(1 + (r / REGION_CELLS) * self.region_columns() + c / REGION_CELLS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> Grid {
        Grid::new(&Bounds::new(0.0, 0.0, 1000.0, 1000.0), 100.0).expect("grid")
    }

    #[test]
    fn cells_are_numbered_from_one_row_by_row() {
        let g = grid();
        assert_eq!((g.columns(), g.rows()), (10, 10));
        assert_eq!(g.cell_of(0.0, 0.0), CellId(1));
        assert_eq!(g.cell_of(99.9, 0.0), CellId(1));
        assert_eq!(g.cell_of(100.0, 0.0), CellId(2));
        assert_eq!(g.cell_of(50.0, 150.0), CellId(11));
        assert_eq!(g.cell_of(1000.0, 1000.0), CellId(100), "the far edge belongs to the last cell");
        assert_eq!(g.position(CellId(11)), Some((0, 1)));
        assert_eq!(g.position(CellId(0)), None);
        assert_eq!(g.position(CellId(101)), None);
    }

    #[test]
    fn positions_outside_the_world_fall_into_edge_cells() {
        let g = grid();
        assert_eq!(g.cell_of(-5.0, f32::NAN), CellId(1));
        assert_eq!(g.cell_of(5000.0, -1.0), CellId(10));
    }

    #[test]
    fn offsets_stay_inside_the_grid() {
        let g = grid();
        assert_eq!(g.offset(0, 0, -1, 0), None);
        assert_eq!(g.offset(9, 9, 1, 0), None);
        assert_eq!(g.offset(5, 5, -1, 1), Some(g.cell(4, 6)));
    }

    #[test]
    fn a_partial_last_column_is_a_cell_too() {
        let g = Grid::new(&Bounds::new(0.0, 0.0, 1050.0, 1000.0), 100.0).expect("grid");
        assert_eq!((g.columns(), g.rows()), (11, 10));
        assert_eq!(g.cell_of(1049.0, 0.0), CellId(11));
    }

    #[test]
    fn regions_group_eight_by_eight_cells() {
        let g = grid();
        assert_eq!(g.region_columns(), 2);
        assert_eq!(g.region_of(g.cell(0, 0)), Some(RegionId(1)));
        assert_eq!(g.region_of(g.cell(7, 7)), Some(RegionId(1)));
        assert_eq!(g.region_of(g.cell(8, 0)), Some(RegionId(2)));
        assert_eq!(g.region_of(g.cell(9, 9)), Some(RegionId(4)));
    }

    #[test]
    fn bad_sizes_are_refused() {
        let b = Bounds::new(0.0, 0.0, 1000.0, 1000.0);
        assert_eq!(Grid::new(&b, 0.0), Err(GridError::CellSize(0.0)));
        assert!(matches!(Grid::new(&b, 0.01), Err(GridError::TooManyCells { .. })));
    }
}
