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
//! cells then come due together, every second and fourth tick.
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

/// How often, and how close: see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tier {
    /// The viewer's own cell.
    Own = 0,
    /// The eight cells around it.
    Near = 1,
    /// The rest of the view radius.
    Mid = 2,
    /// The prefetch ring beyond the view radius.
    Far = 3,
}

/// Periods (ticks) of the four tiers, indexed by [`Tier`].
pub type Periods = [u32; 4];

/// The longest period of the [`LADDER`], ticks: the floor's outer tiers.
pub const SLOWEST_PERIOD: u32 = 64;

/// The periods a socket's cells are sent at, from the base (first) down to
/// the floor (last); see the module docs.
pub const LADDER: [Periods; 10] = [
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

/// The cells around a viewer cell, as offsets with their tier, nearest
/// tiers first. Made once from the view radius and the cell size.
#[derive(Clone, Debug, PartialEq)]
pub struct Stencil {
    offsets: Vec<(i32, i32, Tier)>,
    /// The same offsets as runs along rows: (dy, first dx, last dx, tier).
    runs: Vec<(i32, i32, i32, Tier)>,
}

impl Stencil {
    /// The stencil of a view radius of `radius_cells` cells (view radius /
    /// cell size).
    pub fn new(radius_cells: f32) -> Stencil {
        let radius = radius_cells.max(0.0);
        let reach = radius.ceil() as i32 + 2;
        let mut offsets = Vec::new();
        for dy in -reach..=reach {
            for dx in -reach..=reach {
                // Distance between the viewer cell's rectangle and this one's, cells.
                let gap = |d: i32| (d.abs() - 1).max(0) as f32;
                let distance = gap(dx).hypot(gap(dy));
                let tier = match (dx.abs().max(dy.abs()), distance) {
                    (0, _) => Tier::Own,
                    (1, _) => Tier::Near,
                    (_, d) if d <= radius => Tier::Mid,
                    (_, d) if d <= radius + 1.0 => Tier::Far,
                    _ => continue,
                };
                offsets.push((dx, dy, tier));
            }
        }
        let mut by_row = offsets.clone();
        by_row.sort_by_key(|&(dx, dy, _)| (dy, dx));
        let mut runs: Vec<(i32, i32, i32, Tier)> = Vec::new();
        for (dx, dy, tier) in by_row {
            match runs.last_mut() {
                Some(run) if run.0 == dy && run.2 + 1 == dx && run.3 == tier => run.2 = dx,
                _ => runs.push((dy, dx, dx, tier)),
            }
        }
        offsets.sort_by_key(|&(dx, dy, tier)| (tier, dy, dx));
        Stencil { offsets, runs }
    }

    /// The cells seen from `viewer` with their tiers, nearest tiers first
    /// (cells off the grid left out).
    pub fn cells<'a>(&'a self, grid: &'a Grid, viewer: CellId) -> impl Iterator<Item = (CellId, Tier)> + 'a {
        let (column, row) = grid.position(viewer).unwrap_or((0, 0));
        self.offsets.iter().filter_map(move |&(dx, dy, tier)| Some((grid.offset(column, row, dx, dy)?, tier)))
    }

    /// Calls `f` with each cell seen from `viewer` and its tier, row by row
    /// (the cells of [`Stencil::cells`], in another order): runs of a row's
    /// cells, clipped to the grid once a run (this runs for every view,
    /// every tick).
    pub fn each(&self, grid: &Grid, viewer: CellId, mut f: impl FnMut(CellId, Tier)) {
        let (column, row) = grid.position(viewer).unwrap_or((0, 0));
        let last = i64::from(grid.columns()) - 1;
        for &(dy, first, end, tier) in &self.runs {
            let Some(r) = row.checked_add_signed(dy).filter(|r| *r < grid.rows()) else { continue };
            let (from, to) =
                ((i64::from(column) + i64::from(first)).max(0), (i64::from(column) + i64::from(end)).min(last));
            let base = grid.cell(0, r).0;
            for c in from..=to {
                f(CellId(base + c as u32), tier);
            }
        }
    }

    /// Number of cells in the stencil, by tier.
    pub fn counts(&self) -> [usize; 4] {
        let mut n = [0; 4];
        for (_, _, tier) in &self.offsets {
            n[*tier as usize] += 1;
        }
        n
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
    fn a_radius_of_two_cells_has_its_tiers_and_a_prefetch_ring() {
        let s = Stencil::new(2.0);
        let [own, near, mid, far] = s.counts();
        assert_eq!((own, near), (1, 8));
        // Cells whose rectangle is within 2 cells of the viewer's: the 7 x 7
        // square without its four corner 2 x 2 blocks (distance sqrt(5)..).
        assert_eq!(mid, 49 - 9 - 12);
        assert!(far > 0, "a prefetch ring");
        let tiers: Vec<Tier> = s.offsets.iter().map(|o| o.2).collect();
        assert!(tiers.windows(2).all(|w| w[0] <= w[1]), "nearest first");
    }

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
