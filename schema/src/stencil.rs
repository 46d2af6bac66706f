//! Which cells a viewer sees, at which tier, and how often each tier is sent:
//! the area of interest's geometry, shared by the server (which assembles
//! views from it) and clients (which read a view frame's implied cells from
//! it, [`crate::view`], protocol 7). The browser's `net/stencil.ts` repeats
//! it, held to the same cells by `schema/fixtures/stencil.json`.
//!
//! A viewer in cell `(column, row)` sees the cells at offsets `(dx, dy)`
//! whose rectangle is within the view radius of its own cell's rectangle,
//! plus one prefetch ring a cell wide beyond ([`Tier`]). The radius in cells
//! is `view_radius / cell_size` in single precision (the Welcome's two
//! floats); a cell's distance is tested in double precision on integers,
//! `gx² + gy² ≤ r²` with `gx = max(|dx| - 1, 0)` (the same operations in
//! Rust and JavaScript give the same answer, bit for bit). Cells off the
//! grid are left out.
//!
//! A view frame's section names the view it was assembled for: its **key**
//! cell and, for a viewer that just crossed a border, its **previous** cell
//! (the view is then the union of both stencils, each cell at its nearer
//! tier, [`view_cells`]), and the **rung** of [`LADDER`] its budget allows.

use crate::grid::CellGrid;

/// How close a seen cell is, nearest first; each tier has its own period.
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

/// The periods a view's cells are sent at, from the base (rung 0) down to
/// the floor (rung 9): when a view's cells would come to more than its
/// budget, the periods step down, the outer tiers first, the own cell last
/// and never below every 8th tick. Every period is a power of two, so a
/// cell of period `p` is due at the steps that are multiples of `p`.
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

/// The widest view radius a stencil takes, cells: a server refuses a wider
/// one at its start, and a client given one (a Welcome that says so) takes
/// this one, so neither spends long on a stencil of millions of cells (the
/// browser's `net/stencil.ts` clamps the same).
pub const MAX_RADIUS_CELLS: f32 = 64.0;

/// The cells around a viewer cell, as offsets with their tier. Made once
/// from the view radius in cells.
#[derive(Clone, Debug, PartialEq)]
pub struct Stencil {
    /// (dx, dy, tier), nearest tiers first, then by row and column.
    offsets: Vec<(i32, i32, Tier)>,
    /// The same offsets as runs along rows: (dy, first dx, last dx, tier),
    /// by row then column.
    runs: Vec<(i32, i32, i32, Tier)>,
    /// Cells of the stencil's reach around the viewer cell, each way.
    reach: u32,
}

impl Stencil {
    /// The stencil of a view radius of `radius_cells` cells (view radius /
    /// cell size, single precision; negative or NaN: 0; past
    /// [`MAX_RADIUS_CELLS`]: that).
    pub fn new(radius_cells: f32) -> Stencil {
        let radius = f64::from(if radius_cells > 0.0 { radius_cells.min(MAX_RADIUS_CELLS) } else { 0.0 });
        let reach = radius.ceil() as i32 + 2;
        let (mid, far) = (radius * radius, (radius + 1.0) * (radius + 1.0));
        let mut offsets = Vec::new();
        for dy in -reach..=reach {
            for dx in -reach..=reach {
                // Distance between the viewer cell's rectangle and this one's, cells.
                let gap = |d: i32| f64::from((d.abs() - 1).max(0));
                let squared = gap(dx) * gap(dx) + gap(dy) * gap(dy);
                let tier = match dx.abs().max(dy.abs()) {
                    0 => Tier::Own,
                    1 => Tier::Near,
                    _ if squared <= mid => Tier::Mid,
                    _ if squared <= far => Tier::Far,
                    _ => continue,
                };
                offsets.push((dx, dy, tier));
            }
        }
        let mut runs: Vec<(i32, i32, i32, Tier)> = Vec::new();
        for &(dx, dy, tier) in &offsets {
            match runs.last_mut() {
                Some(run) if run.0 == dy && run.2 + 1 == dx && run.3 == tier => run.2 = dx,
                _ => runs.push((dy, dx, dx, tier)),
            }
        }
        offsets.sort_by_key(|&(dx, dy, tier)| (tier, dy, dx));
        Stencil { offsets, runs, reach: reach as u32 }
    }

    /// The stencil of a Welcome's `view_radius` and `cell_size` (world units).
    pub fn of_view(view_radius: f32, cell_size: f32) -> Stencil {
        Stencil::new(view_radius / cell_size)
    }

    /// Cells of the stencil's reach around the viewer cell, each way.
    pub fn reach(&self) -> u32 {
        self.reach
    }

    /// The offsets `(dx, dy, tier)`, nearest tiers first.
    pub fn offsets(&self) -> &[(i32, i32, Tier)] {
        &self.offsets
    }

    /// Calls `f` with each cell seen from `viewer` and its tier, by
    /// increasing cell id (row by row), cells off `grid` left out (a viewer
    /// off the grid sees from the first cell).
    pub fn each(&self, grid: &CellGrid, viewer: u32, mut f: impl FnMut(u32, Tier)) {
        let (columns, rows) = (grid.columns(), grid.rows());
        let i = viewer.saturating_sub(1);
        let (column, row) =
            if u64::from(i) < u64::from(columns) * u64::from(rows) { (i % columns, i / columns) } else { (0, 0) };
        let last = i64::from(columns) - 1;
        for &(dy, first, end, tier) in &self.runs {
            let Some(r) = row.checked_add_signed(dy).filter(|r| *r < rows) else { continue };
            let (from, to) =
                ((i64::from(column) + i64::from(first)).max(0), (i64::from(column) + i64::from(end)).min(last));
            let base = grid.cell(0, r);
            for c in from..=to {
                f(base + c as u32, tier);
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

/// Room [`view_cells`] keeps between calls: each cell's stencil.
pub type ViewScratch = (Vec<(u32, Tier)>, Vec<(u32, Tier)>);

/// The cells of the view of `key` and `previous` (0: none) into `out`
/// (cleared first) as `make` makes them of a cell and its tier, by
/// increasing cell id: the union of both cells' stencils, each cell once at
/// its nearer tier. `scratch` is room kept between calls (no allocation
/// once grown).
pub fn view_cells<T>(
    grid: &CellGrid,
    stencil: &Stencil,
    (key, previous): (u32, u32),
    out: &mut Vec<T>,
    scratch: &mut ViewScratch,
    make: impl Fn(u32, Tier) -> T,
) {
    out.clear();
    if previous == 0 {
        stencil.each(grid, key, |c, tier| out.push(make(c, tier)));
        return;
    }
    let (a, b) = (&mut scratch.0, &mut scratch.1);
    a.clear();
    b.clear();
    stencil.each(grid, key, |c, tier| a.push((c, tier)));
    stencil.each(grid, previous, |c, tier| b.push((c, tier)));
    // Both come by ascending cell: merged, each cell once at its nearer tier.
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) if x.0 == y.0 => {
                out.push(make(x.0, x.1.min(y.1)));
                (i, j) = (i + 1, j + 1);
            }
            (Some(&x), Some(&y)) if x.0 < y.0 => {
                out.push(make(x.0, x.1));
                i += 1;
            }
            (Some(&x), None) => {
                out.push(make(x.0, x.1));
                i += 1;
            }
            (_, Some(&y)) => {
                out.push(make(y.0, y.1));
                j += 1;
            }
            (None, None) => break,
        }
    }
}

/// The due exponent of `step`: periods up to `2^k` ticks are due at it
/// (`k` = its trailing zero bits, at most 6: [`SLOWEST_PERIOD`]).
pub fn due_exponent(step: u64) -> u8 {
    step.trailing_zeros().min(SLOWEST_PERIOD.trailing_zeros()) as u8
}

/// Calls `f` with each candidate for an implied cell of a section (protocol
/// 7, [`crate::view`]): the cells of `cells` (a view's, [`view_cells`])
/// whose tier's period at `rung` is at most `2^due` ticks, in order, each
/// with that period. `None` for a rung past the [`LADDER`].
pub fn candidates(
    cells: impl IntoIterator<Item = (u32, Tier)>,
    rung: u8,
    due: u8,
    mut f: impl FnMut(u32, u32),
) -> Option<()> {
    let rule = CandidateRule::new(rung, due)?;
    for (cell, tier) in cells {
        if let Some(period) = rule.period(tier) {
            f(cell, period);
        }
    }
    Some(())
}

/// Which cells of a view are candidates at one rung and due exponent: the
/// rule of [`candidates`], for a writer that walks a view's cells itself
/// (the shard's, along with the section's own cells).
#[derive(Clone, Copy, Debug)]
pub struct CandidateRule {
    periods: &'static Periods,
    most: u32,
}

impl CandidateRule {
    /// The rule at `rung` and due exponent `due`; `None` for a rung past
    /// the [`LADDER`] or a due exponent past 31.
    pub fn new(rung: u8, due: u8) -> Option<CandidateRule> {
        Some(CandidateRule { periods: LADDER.get(usize::from(rung))?, most: 1u32.checked_shl(u32::from(due))? })
    }

    /// The period of a cell of `tier`, ticks, when it is a candidate (at
    /// most `2^due`); `None` when it is not.
    #[inline]
    pub fn period(&self, tier: Tier) -> Option<u32> {
        let period = self.periods[tier as usize];
        (period <= self.most).then_some(period)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Bounds;

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
    fn a_radius_past_the_widest_takes_the_widest_and_nan_none() {
        assert_eq!(Stencil::new(1e30), Stencil::new(MAX_RADIUS_CELLS));
        assert_eq!(Stencil::new(f32::INFINITY), Stencil::new(MAX_RADIUS_CELLS));
        assert_eq!(Stencil::new(f32::NAN), Stencil::new(0.0));
        assert_eq!(Stencil::new(-3.0), Stencil::new(0.0));
        assert_eq!(Stencil::new(MAX_RADIUS_CELLS).reach(), 66);
    }

    #[test]
    fn each_walks_every_offset_on_the_grid_by_increasing_cell() {
        let grid = CellGrid::new(&Bounds::new(0.0, 0.0, 1000.0, 700.0), 100.0).expect("grid");
        for radius in [0.0, 1.0, 2.5, 4.0] {
            let s = Stencil::new(radius);
            for viewer in 1..=grid.columns() * grid.rows() {
                let (column, row) = ((viewer - 1) % grid.columns(), (viewer - 1) / grid.columns());
                let mut want: Vec<(u32, Tier)> = s
                    .offsets()
                    .iter()
                    .filter_map(|&(dx, dy, tier)| {
                        let c = column.checked_add_signed(dx).filter(|c| *c < grid.columns())?;
                        let r = row.checked_add_signed(dy).filter(|r| *r < grid.rows())?;
                        Some((grid.cell(c, r), tier))
                    })
                    .collect();
                want.sort_unstable();
                let mut got = Vec::new();
                s.each(&grid, viewer, |c, t| got.push((c, t)));
                assert_eq!(got, want, "radius {radius}, viewer {viewer}");
            }
        }
    }

    #[test]
    fn a_view_of_two_cells_is_their_union_at_the_nearer_tier() {
        let grid = CellGrid::new(&Bounds::new(0.0, 0.0, 1000.0, 1000.0), 100.0).expect("grid");
        let s = Stencil::new(2.0);
        let (key, previous) = (grid.cell(5, 5), grid.cell(4, 5));
        let (mut cells, mut scratch) = (Vec::new(), ViewScratch::default());
        view_cells(&grid, &s, (key, previous), &mut cells, &mut scratch, |c, t| (c, t));
        assert!(cells.windows(2).all(|w| w[0].0 < w[1].0), "ascending, each once");
        let tier_of = |cells: &[(u32, Tier)], c: u32| cells.iter().find(|x| x.0 == c).map(|x| x.1);
        assert_eq!(tier_of(&cells, key), Some(Tier::Own));
        assert_eq!(tier_of(&cells, previous), Some(Tier::Own), "the previous cell is its own view's own cell");
        let (mut one, mut other) = (Vec::new(), Vec::new());
        view_cells(&grid, &s, (key, 0), &mut one, &mut scratch, |c, t| (c, t));
        view_cells(&grid, &s, (previous, 0), &mut other, &mut scratch, |c, t| (c, t));
        for &(c, tier) in &cells {
            let want = [tier_of(&one, c), tier_of(&other, c)].into_iter().flatten().min();
            assert_eq!(Some(tier), want, "cell {c}");
        }
        assert_eq!(cells.len(), one.iter().chain(&other).map(|x| x.0).collect::<std::collections::BTreeSet<_>>().len());
    }

    #[test]
    fn candidates_are_the_cells_whose_period_divides_the_step() {
        let cells = [(3, Tier::Own), (4, Tier::Near), (9, Tier::Mid), (12, Tier::Far)];
        let at = |rung, step| {
            let mut out = Vec::new();
            candidates(cells, rung, due_exponent(step), |c, p| out.push((c, p)));
            out
        };
        assert_eq!(at(0, 1), vec![(3, 1), (4, 1)]);
        assert_eq!(at(0, 2), vec![(3, 1), (4, 1), (9, 2)]);
        assert_eq!(at(0, 12), vec![(3, 1), (4, 1), (9, 2), (12, 4)]);
        assert_eq!(at(9, 8), vec![(3, 8)]);
        assert_eq!(at(9, 0), vec![(3, 8), (4, 16), (9, 64), (12, 64)], "step 0 is due at every period");
        assert_eq!(candidates(cells, 10, 0, |_, _| ()), None, "a rung past the ladder");
        // The rule a writer walks a view's cells with is the same.
        let rule = CandidateRule::new(0, due_exponent(2)).expect("a rung of the ladder");
        assert_eq!(
            [Tier::Own, Tier::Near, Tier::Mid, Tier::Far].map(|t| rule.period(t)),
            [Some(1), Some(1), Some(2), None]
        );
        assert!(CandidateRule::new(10, 0).is_none() && CandidateRule::new(0, 32).is_none());
        assert_eq!(LADDER.iter().flatten().max(), Some(&SLOWEST_PERIOD));
        assert!(LADDER.iter().flatten().all(|p| p.is_power_of_two()));
    }
}
