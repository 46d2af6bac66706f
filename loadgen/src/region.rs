//! `--density`: the square part of the world a run's bots walk in, sized so
//! that they make a target number of players per area-of-interest cell.
//!
//! For N bots and D players per cell the side is `sqrt(N / D)` cells, centred
//! on the world's centre and clipped to its bounds (a clipped region is denser
//! than asked; [`Region::density`] says how dense).

use crate::world::World;
use rand::Rng;

/// A rectangle of the world, world units (`min < max` on both axes).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Region {
    /// Smallest x, world units.
    pub min_x: f32,
    /// Smallest y, world units.
    pub min_y: f32,
    /// Largest x, world units.
    pub max_x: f32,
    /// Largest y, world units.
    pub max_y: f32,
}

/// Why `--density` cannot be used.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DensityError {
    /// The server sends whole-shard snapshots: there are no cells to fill.
    #[error(
        "--density needs area of interest, but {url} sends whole-shard snapshots (its Welcome has no cell size); \
         start mino-server with --cell-size, or leave --density out"
    )]
    NoAreaOfInterest {
        /// The URL whose Welcome said so.
        url: String,
    },
    /// Not a positive number of players per cell.
    #[error("--density must be a positive number of players per cell, got {0}")]
    Invalid(f64),
    /// No bots to place.
    #[error("--density needs at least one bot")]
    NoBots,
}

impl Region {
    /// The region where `bots` bots make `density` players per cell of
    /// `world`'s grid: `sqrt(bots / density)` cells a side, centred, clipped to
    /// the world. `url` names the server in the error.
    ///
    /// Errors: [`DensityError`] when the world has no grid, the density is
    /// not positive and finite, or there are no bots.
    pub fn for_density(world: &World, bots: usize, density: f64, url: &str) -> Result<Region, DensityError> {
        let grid = world.grid.ok_or_else(|| DensityError::NoAreaOfInterest { url: url.to_owned() })?;
        if !(density.is_finite() && density > 0.0) {
            return Err(DensityError::Invalid(density));
        }
        if bots == 0 {
            return Err(DensityError::NoBots);
        }
        let half = ((bots as f64 / density).sqrt() * f64::from(grid.cell_size) / 2.0) as f32;
        let (cx, cy) = world.centre();
        Ok(Region {
            min_x: (cx - half).max(world.min_x),
            min_y: (cy - half).max(world.min_y),
            max_x: (cx + half).min(world.max_x),
            max_y: (cy + half).min(world.max_y),
        })
    }

    /// True when `(x, y)` lies inside, or within `margin` world units of, the region.
    pub fn contains(&self, (x, y): (f32, f32), margin: f32) -> bool {
        (self.min_x - margin..=self.max_x + margin).contains(&x)
            && (self.min_y - margin..=self.max_y + margin).contains(&y)
    }

    /// The region's area in cells of `cell_size` world units.
    pub fn cells(&self, cell_size: f32) -> f64 {
        let side = f64::from(cell_size.max(f32::MIN_POSITIVE));
        f64::from(self.max_x - self.min_x) * f64::from(self.max_y - self.min_y) / (side * side)
    }

    /// Players per cell when `players` stand in the region.
    pub fn density(&self, players: usize, cell_size: f32) -> f64 {
        players as f64 / self.cells(cell_size).max(f64::MIN_POSITIVE)
    }

    /// A uniformly random point of the region.
    pub fn random_point(&self, rng: &mut impl Rng) -> (f32, f32) {
        let mut pick = |lo: f32, hi: f32| if hi > lo { rng.random_range(lo..hi) } else { lo };
        (pick(self.min_x, self.max_x), pick(self.min_y, self.max_y))
    }

    /// True when a walker at `(x, y)` going `dir` heads back in on every axis
    /// it is outside on (a standing walker outside does not).
    pub fn heading_inward(&self, (x, y): (f32, f32), (dx, dy): (f32, f32)) -> bool {
        let axis = |v: f32, lo: f32, hi: f32, d: f32| (v >= lo || d > 0.0) && (v <= hi || d < 0.0);
        axis(x, self.min_x, self.max_x, dx) && axis(y, self.min_y, self.max_y, dy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::Grid;
    use rand::SeedableRng;
    use std::time::Duration;

    fn world(side: f32, cell: f32) -> World {
        let grid = (cell > 0.0).then_some(Grid {
            min_x: 0.0,
            min_y: 0.0,
            cell_size: cell,
            columns: (side / cell).ceil() as u32,
            rows: (side / cell).ceil() as u32,
            view_radius: 2.0 * cell,
            view_grace: Duration::from_millis(900),
        });
        World { min_x: 0.0, min_y: 0.0, max_x: side, max_y: side, tick_hz: 20, speed: 120.0, grid }
    }

    #[test]
    fn the_side_gives_the_density_asked_for() {
        let r = Region::for_density(&world(1000.0, 100.0), 36, 4.0, "ws://x").expect("region");
        assert_eq!(r, Region { min_x: 350.0, min_y: 350.0, max_x: 650.0, max_y: 650.0 }, "3 cells a side");
        assert!((r.cells(100.0) - 9.0).abs() < 1e-9);
        assert!((r.density(36, 100.0) - 4.0).abs() < 1e-9);
    }

    #[test]
    fn a_region_larger_than_the_world_is_clipped_and_denser() {
        let r = Region::for_density(&world(1000.0, 100.0), 400, 1.0, "ws://x").expect("region");
        assert_eq!(r, Region { min_x: 0.0, min_y: 0.0, max_x: 1000.0, max_y: 1000.0 });
        assert!((r.density(400, 100.0) - 4.0).abs() < 1e-9);
    }

    #[test]
    fn density_needs_cells_a_positive_density_and_bots() {
        let err = Region::for_density(&world(1000.0, 0.0), 10, 1.0, "ws://h:1/ws").expect_err("no grid");
        assert!(matches!(err, DensityError::NoAreaOfInterest { .. }));
        assert!(err.to_string().contains("ws://h:1/ws") && err.to_string().contains("--cell-size"), "{err}");
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(Region::for_density(&world(1000.0, 100.0), 10, bad, "u"), Err(DensityError::Invalid(_))));
        }
        assert_eq!(Region::for_density(&world(1000.0, 100.0), 0, 1.0, "u"), Err(DensityError::NoBots));
    }

    #[test]
    fn heading_inward_on_every_axis_outside() {
        let r = Region { min_x: 100.0, min_y: 100.0, max_x: 200.0, max_y: 200.0 };
        assert!(r.heading_inward((150.0, 150.0), (0.0, 0.0)), "inside: anything goes");
        assert!(r.heading_inward((90.0, 150.0), (1.0, 0.0)));
        assert!(!r.heading_inward((90.0, 150.0), (-1.0, 0.0)));
        assert!(!r.heading_inward((90.0, 150.0), (0.0, 0.0)), "standing outside");
        assert!(!r.heading_inward((90.0, 210.0), (1.0, 0.0)), "out on y too");
        assert!(r.heading_inward((90.0, 210.0), (0.7, -0.7)));
        assert!(r.contains((95.0, 150.0), 5.0) && !r.contains((94.0, 150.0), 5.0));
        let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
        assert!((0..100).all(|_| r.contains(r.random_point(&mut rng), 0.0)));
    }
}
