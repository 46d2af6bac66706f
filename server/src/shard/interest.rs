//! Area of interest: which cells a player sees, and how often each is sent.
//!
//! A player sees the cells whose rectangle lies within the view radius of
//! *its own cell's* rectangle (so wherever it stands in its cell, everything
//! within the radius is covered), plus one prefetch ring of a cell's width
//! beyond, so nobody pops in at the edge of the screen. Because the view
//! depends only on the viewer's cell, every socket whose player stands in the
//! same cell gets the same frames: they are chosen once per cell, not once per
//! socket. This is the pattern of Mirror's spatial hashing and Unreal's
//! replication graph grid; the prefetch ring is the tile demo on Centrifugo's.
//!
//! Cells are sent in tiers, each at its own period (in ticks), so bytes per
//! socket do not grow with the square of the view:
//!
//! | tier | cells | base period |
//! |---|---|---|
//! | [`Tier::Own`] | the viewer's cell | every tick |
//! | [`Tier::Near`] | the 8 cells around it | every tick |
//! | [`Tier::Mid`] | the rest of the view radius | every 2nd tick |
//! | [`Tier::Far`] | the prefetch ring | every 4th tick |
//!
//! A cell is due on tick `t` when `t % period == 0`: every cell of a period
//! on the same ticks, so a player walking from one cell of a view to another
//! of the same tier is handed off between them (protocol 6: both are sent
//! one delta over the same span in the same section) rather than sent as a
//! supplement. Measured on section 15's walk, offline: 7,218 bytes a socket a
//! second with phases spread over the ticks (`(t + column + 2 × row) %
//! period`, before protocol 6), 5,377 with them uniform. A socket's outer
//! cells then come due together, every second and fourth tick; another
//! shard's come due on ticks of their own, the relay taking a shard a tick
//! late when its steps would run even with this one's ([`super::lag`]).
//!
//! Views that send whole cells (full-form and datagram views: they hold no
//! delta and hand no player off) keep the spread phases ([`spread_phase`]):
//! their frames stay near their average on every tick, the budget's figure,
//! so a datagram session's send queue (at least twice the budget) holds a
//! tick's frame, and their cells' refreshes spread over 64 ticks instead of
//! all falling on one.
//!
//! **Budget.** When the cells due would come to more than the socket budget
//! (`--view-budget-bytes` a tick, on average), the periods step down a fixed
//! ladder ([`LADDER`]): the outer tiers first, the own cell last and never
//! below every 8th tick. A crowd of thousands in one cell thus costs each
//! socket at most about the budget, not the square of the crowd.

use super::grid::{CellId, Grid};
pub use mino_protocol::stencil::{Periods, Tier, LADDER, SLOWEST_PERIOD};

/// The cells around a viewer cell, as offsets with their tier: the
/// protocol's [`mino_protocol::stencil::Stencil`] (which clients read
/// implied cells with) on this shard's [`Grid`].
#[derive(Clone, Debug, PartialEq)]
pub struct Stencil(mino_protocol::stencil::Stencil);

impl Stencil {
    /// The stencil of a view radius of `radius_cells` cells (view radius /
    /// cell size, single precision).
    pub fn new(radius_cells: f32) -> Stencil {
        Stencil(mino_protocol::stencil::Stencil::new(radius_cells))
    }

    /// The protocol's stencil.
    pub fn shared(&self) -> &mino_protocol::stencil::Stencil {
        &self.0
    }

    /// The cells seen from `viewer` with their tiers, nearest tiers first
    /// (cells off the grid left out).
    pub fn cells<'a>(&'a self, grid: &'a Grid, viewer: CellId) -> impl Iterator<Item = (CellId, Tier)> + 'a {
        let (column, row) = grid.position(viewer).unwrap_or((0, 0));
        self.0.offsets().iter().filter_map(move |&(dx, dy, tier)| Some((grid.offset(column, row, dx, dy)?, tier)))
    }

    /// Calls `f` with each cell seen from `viewer` and its tier, by
    /// increasing cell (the cells of [`Stencil::cells`], in another order).
    pub fn each(&self, grid: &Grid, viewer: CellId, mut f: impl FnMut(CellId, Tier)) {
        self.0.each(grid.cells(), viewer.0, |c, tier| f(CellId(c), tier));
    }

    /// Number of cells in the stencil, by tier.
    pub fn counts(&self) -> [usize; 4] {
        self.0.counts()
    }
}

/// The phase of the cell at `column`, `row` for a view that sends whole
/// cells (see the module docs): `column + 2 × row`, so that neighbouring
/// cells of a tier come due on different ticks of its period.
pub fn spread_phase(column: u32, row: u32) -> u64 {
    u64::from(column) + 2 * u64::from(row)
}

/// The first rung of the [`LADDER`] at which cells of `tiers` bytes each
/// tier (indexed by [`Tier`]) come to at most `budget` bytes a tick on
/// average; the floor if none does.
pub fn fit(budget: usize, tiers: &[usize; 4]) -> &'static Periods {
    LADDER
        .iter()
        .find(|periods| {
            let per_tick: f64 = tiers.iter().zip(periods.iter()).map(|(&bytes, &p)| bytes as f64 / f64::from(p)).sum();
            per_tick <= budget as f64
        })
        .unwrap_or(&LADDER[LADDER.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use mino_protocol::wire::Bounds;

    #[test]
    fn every_point_within_the_radius_is_covered_wherever_the_viewer_stands() {
        let grid = Grid::new(&Bounds::new(0.0, 0.0, 2000.0, 2000.0), 100.0).expect("grid");
        let radius = 230.0;
        let s = Stencil::new(radius / 100.0);
        for (vx, vy) in [(1000.0, 1000.0), (1099.0, 1001.0), (1050.0, 1099.9)] {
            let seen: Vec<CellId> =
                s.cells(&grid, grid.cell_of(vx, vy)).filter(|c| c.1 != Tier::Far).map(|c| c.0).collect();
            for i in 0..64 {
                let a = i as f32 / 64.0 * std::f32::consts::TAU;
                let (x, y) = (vx + radius * 0.999 * a.cos(), vy + radius * 0.999 * a.sin());
                assert!(seen.contains(&grid.cell_of(x, y)), "({x}, {y}) seen from ({vx}, {vy})");
            }
        }
    }

    #[test]
    fn each_walks_the_cells_of_cells_row_by_row() {
        let grid = Grid::new(&Bounds::new(0.0, 0.0, 1000.0, 700.0), 100.0).expect("grid");
        for radius in [0.0, 1.0, 2.5, 4.0] {
            let s = Stencil::new(radius);
            for viewer in (1..=grid.columns() * grid.rows()).map(CellId) {
                let mut want: Vec<(CellId, Tier)> = s.cells(&grid, viewer).collect();
                let mut got = Vec::new();
                s.each(&grid, viewer, |c, t| got.push((c, t)));
                assert!(got.windows(2).all(|w| w[0].0 < w[1].0), "row by row");
                want.sort_unstable();
                assert_eq!(got, want, "radius {radius}, viewer {viewer:?}");
            }
        }
    }

    #[test]
    fn cells_off_the_grid_are_left_out() {
        let grid = Grid::new(&Bounds::new(0.0, 0.0, 1000.0, 1000.0), 100.0).expect("grid");
        let s = Stencil::new(1.0);
        let corner: Vec<_> = s.cells(&grid, grid.cell(0, 0)).collect();
        assert_eq!(corner[0], (grid.cell(0, 0), Tier::Own));
        assert!(corner.iter().all(|(c, _)| grid.position(*c).is_some()));
        assert_eq!(corner.iter().filter(|c| c.1 == Tier::Near).count(), 3);
    }

    #[test]
    fn the_budget_steps_down_the_ladder_outer_tiers_first() {
        let small = [400, 3000, 8000, 8000];
        assert_eq!(fit(16_384, &small), &LADDER[0]);
        let crowd = [20_000, 2000, 4000, 4000];
        let p = fit(8192, &crowd);
        assert!(p[Tier::Own as usize] > 1, "a crowd in one's own cell is sent less often: {p:?}");
        let per_tick: f64 = crowd.iter().zip(p).map(|(&b, &period)| b as f64 / f64::from(period)).sum();
        assert!(per_tick <= 8192.0);
        assert_eq!(fit(1, &crowd), &LADDER[9], "the floor");
        assert!(LADDER.windows(2).all(|w| (0..4).all(|i| w[0][i] <= w[1][i])), "periods only grow");
        assert_eq!(LADDER.iter().flatten().max(), Some(&SLOWEST_PERIOD));
    }
}
