//! What a Welcome says about the world a bot walks in: its bounds, the tick
//! rate and walking speed, and with area of interest the server's grid (cell
//! side, columns, rows), view radius and view grace. Cells are numbered as the
//! server numbers them: `1 + row * columns + column`, row 0 and column 0 at
//! the world's minimum corner, 0 meaning no cell.

use crate::event::Welcomed;
use std::time::Duration;

/// The world of a Welcome.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct World {
    /// Smallest x, world units.
    pub min_x: f32,
    /// Smallest y, world units.
    pub min_y: f32,
    /// Largest x, world units.
    pub max_x: f32,
    /// Largest y, world units.
    pub max_y: f32,
    /// Tick (and frame) rate, Hz (at least 1).
    pub tick_hz: u16,
    /// Walking speed, world units per second.
    pub speed: f32,
    /// The area-of-interest grid; None when the server sends whole-shard snapshots.
    pub grid: Option<Grid>,
}

/// The server's area-of-interest grid and view.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Grid {
    /// World x of column 0's left edge, world units.
    pub min_x: f32,
    /// World y of row 0's lower edge, world units.
    pub min_y: f32,
    /// Cell side, world units (> 0).
    pub cell_size: f32,
    /// Columns of cells (at least 1).
    pub columns: u32,
    /// Rows of cells (at least 1).
    pub rows: u32,
    /// View radius, world units.
    pub view_radius: f32,
    /// How long a player inside the view may go unmentioned by frames
    /// before an observer counts a blink: the Welcome's view grace, or
    /// [`HELD_GRACE`] when the client holds cells until they are forgotten
    /// (protocol 4's Welcome says 0).
    pub view_grace: Duration,
}

/// The observers' grace when cells are held until forgotten: an occupied
/// cell within the view radius is sent at least every 2nd tick (a delta with
/// nothing to say is its tag), so a player held and inside the radius shows
/// in a frame well within 18 ticks at 20 Hz; one missing for longer was
/// dropped from what the client holds.
pub const HELD_GRACE: Duration = Duration::from_millis(900);

impl World {
    /// The world `w` describes.
    pub fn of(w: &Welcomed) -> World {
        let b = &w.bounds;
        let (min_x, min_y, max_x, max_y) = (b.min_x(), b.min_y(), b.max_x(), b.max_y());
        let grid = (w.cell_size.is_finite() && w.cell_size > 0.0).then(|| {
            let rows = ((max_y - min_y) / w.cell_size).ceil().max(1.0) as u32;
            Grid {
                min_x,
                min_y,
                cell_size: w.cell_size,
                columns: w.grid_columns.max(1),
                rows,
                view_radius: w.view_radius.max(0.0),
                view_grace: match w.view_grace_ms {
                    0 => HELD_GRACE,
                    ms => Duration::from_millis(u64::from(ms)),
                },
            }
        });
        World { min_x, min_y, max_x, max_y, tick_hz: w.tick_hz.max(1), speed: w.speed.max(0.0), grid }
    }

    /// The tick period.
    pub fn tick_period(&self) -> Duration {
        Duration::from_secs_f64(1.0 / f64::from(self.tick_hz.max(1)))
    }

    /// How far a walker goes in one tick, world units.
    pub fn step(&self) -> f32 {
        self.speed / f32::from(self.tick_hz.max(1))
    }

    /// The world's centre, world units.
    pub fn centre(&self) -> (f32, f32) {
        ((self.min_x + self.max_x) / 2.0, (self.min_y + self.max_y) / 2.0)
    }

    /// Length of the world's diagonal, world units.
    pub fn diagonal(&self) -> f32 {
        (self.max_x - self.min_x).hypot(self.max_y - self.min_y)
    }

    /// True when `(x, y)` lies within the bounds.
    pub fn contains(&self, (x, y): (f32, f32)) -> bool {
        (self.min_x..=self.max_x).contains(&x) && (self.min_y..=self.max_y).contains(&y)
    }
}

impl Grid {
    /// Column and row of the cell holding `(x, y)`; positions outside the
    /// world (or NaN) fall into the nearest edge cell, as on the server.
    pub fn column_row(&self, x: f32, y: f32) -> (u32, u32) {
        let index = |v: f32, min: f32, n: u32| {
            let i = ((v - min) / self.cell_size).floor();
            if i.is_nan() || i < 0.0 {
                0
            } else {
                (i as u32).min(n - 1)
            }
        };
        (index(x, self.min_x, self.columns), index(y, self.min_y, self.rows))
    }

    /// The cell id holding `(x, y)`.
    pub fn cell_of(&self, x: f32, y: f32) -> u32 {
        let (column, row) = self.column_row(x, y);
        1 + row * self.columns + column
    }

    /// Column and row of cell id `cell`; None for 0 or an id past the grid.
    pub fn position(&self, cell: u32) -> Option<(u32, u32)> {
        let i = cell.checked_sub(1)?;
        (u64::from(i) < u64::from(self.columns) * u64::from(self.rows)).then(|| (i % self.columns, i / self.columns))
    }

    /// True when `cell` is one of the (up to) 8 cells around `around`.
    pub fn adjacent(&self, around: u32, cell: u32) -> bool {
        // Ids of adjacent cells are at most a row and a column apart: most
        // cells of a view are told apart by this alone.
        if around.abs_diff(cell) > self.columns.saturating_add(1) {
            return false;
        }
        match (self.position(around), self.position(cell)) {
            (Some((c0, r0)), Some((c1, r1))) => around != cell && c0.abs_diff(c1) <= 1 && r0.abs_diff(r1) <= 1,
            _ => false,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use mino_protocol::wire::Bounds;
    use mino_protocol::{PlayerId, ShardId};

    pub(crate) fn welcomed(cell_size: f32) -> Welcomed {
        Welcomed {
            player_id: PlayerId(1),
            shard_id: ShardId(1),
            tick_hz: 20,
            bounds: Bounds::new(0.0, 0.0, 1000.0, 1050.0),
            speed: 120.0,
            ticket: Vec::new(),
            server_time_ms: 0,
            name: "bot".into(),
            position: (0.0, 0.0),
            resumed: false,
            cell_size,
            grid_columns: if cell_size > 0.0 { (1000.0 / cell_size).ceil() as u32 } else { 0 },
            view_radius: 2.0 * cell_size,
            view_grace_ms: 900,
            cell_expiry_ms: 0,
            capabilities: mino_protocol::client::Capabilities::DELTAS,
        }
    }

    #[test]
    fn a_welcome_without_cells_has_no_grid() {
        let w = World::of(&welcomed(0.0));
        assert!(w.grid.is_none());
        assert_eq!((w.step(), w.centre()), (6.0, (500.0, 525.0)));
        assert_eq!(w.tick_period(), Duration::from_millis(50));
    }

    #[test]
    fn cells_are_numbered_like_the_servers() {
        let g = World::of(&welcomed(100.0)).grid.expect("grid");
        assert_eq!((g.columns, g.rows), (10, 11), "a partial last row is a row");
        assert_eq!(g.cell_of(0.0, 0.0), 1);
        assert_eq!(g.cell_of(100.0, 0.0), 2);
        assert_eq!(g.cell_of(50.0, 150.0), 11);
        assert_eq!(g.cell_of(-5.0, f32::NAN), 1, "outside: the nearest edge cell");
        assert_eq!(g.cell_of(5000.0, 1049.0), 110);
        assert_eq!(g.position(11), Some((0, 1)));
        assert_eq!((g.position(0), g.position(111)), (None, None));
        assert_eq!(g.view_grace, Duration::from_millis(900));
    }

    #[test]
    fn adjacency_is_the_eight_cells_around() {
        let g = World::of(&welcomed(100.0)).grid.expect("grid");
        let centre = g.cell_of(550.0, 550.0);
        let around: Vec<u32> = (1..=110).filter(|c| g.adjacent(centre, *c)).collect();
        assert_eq!(around.len(), 8);
        assert!(!g.adjacent(centre, centre));
        assert_eq!((1..=110).filter(|c| g.adjacent(1, *c)).count(), 3, "a corner has three");
        assert!(!g.adjacent(centre, 0));
    }
}
