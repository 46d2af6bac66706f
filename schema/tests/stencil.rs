//! The shared fixture of the area of interest's geometry: for a few grids,
//! view radii (world units, f32 as the Welcome carries them) and views (key
//! and previous cells), the view's cells with their tiers, and the
//! candidates for implied cells at every rung and due exponent, as
//! `mino_protocol::stencil` computes them, in `schema/fixtures/stencil.json`.
//! The browser's unit tests (client-web/src/net/stencil.test.ts) compute the
//! same with `net/stencil.ts` and must agree exactly: a client reads a
//! section's implied cells from the candidates, bit by bit.
//!
//! `MINO_UPDATE_FIXTURES=1 cargo test -p mino-protocol --test stencil`
//! rewrites the file; otherwise the test fails unless it matches.

mod fixture_file;

use mino_protocol::grid::CellGrid;
use mino_protocol::stencil::{candidates, view_cells, Stencil, ViewScratch, LADDER};
use mino_protocol::wire::Bounds;

const FIXTURE: &str = "fixtures/stencil.json";

/// (bounds, cell size, view radius): the walk game's (radius 4 cells), the
/// benches' world, an odd one whose cells do not divide it and whose radius
/// is not a whole number of cells, a radius of 0, and radii at and around
/// sqrt(5) cells (the cells at gaps (2, 1) change tier there).
const PLACES: [([f32; 4], f32, f32); 7] = [
    ([0.0, 0.0, 1000.0, 1000.0], 100.0, 400.0),
    ([0.0, 0.0, 1600.0, 1600.0], 100.0, 400.0),
    ([-50.0, 10.0, 1234.5, 777.25], 101.7, 333.3),
    ([0.0, 0.0, 1000.0, 1000.0], 100.0, 0.0),
    ([0.0, 0.0, 2000.0, 2000.0], 100.0, 223.606),
    ([0.0, 0.0, 2000.0, 2000.0], 100.0, 223.607),
    ([0.0, 0.0, 2000.0, 2000.0], 30.0, 91.0),
];

fn num(v: f32) -> String {
    format!("{}", f64::from(v))
}

fn fixture() -> String {
    let mut places = Vec::new();
    for (bounds, cell_size, view_radius) in PLACES {
        let [a, b, c, d] = bounds;
        let grid = CellGrid::new(&Bounds::new(a, b, c, d), cell_size).expect("a grid");
        let stencil = Stencil::of_view(view_radius, cell_size);
        let (columns, rows) = (grid.columns(), grid.rows());
        // A middle cell, a corner, an edge, and each with the cell beside or
        // below it as the previous one.
        let middle = grid.cell(columns / 2, rows / 2);
        let views = [
            (middle, 0),
            (middle, middle + 1),
            (middle, middle + columns),
            (1, 0),
            (1, 2),
            (grid.cell(columns - 1, rows / 2), 0),
            (grid.cell(columns - 1, rows - 1), grid.cell(columns - 2, rows - 2)),
        ];
        let (mut cells, mut scratch) = (Vec::new(), ViewScratch::default());
        let mut out = Vec::new();
        for (key, previous) in views {
            view_cells(&grid, &stencil, (key, previous), &mut cells, &mut scratch, |c, t| (c, t));
            let listed: Vec<String> = cells.iter().map(|&(c, t)| format!("[{c}, {}]", t as u8)).collect();
            // Per rung and due exponent: the number of candidates, and a
            // check sum of them (cell × period, summed) so the file stays small.
            let mut due = Vec::new();
            for rung in 0..LADDER.len() as u8 {
                let mut row = Vec::new();
                for k in 0..=6u8 {
                    let (mut n, mut sum) = (0u64, 0u64);
                    candidates(cells.iter().copied(), rung, k, |c, p| {
                        n += 1;
                        sum += u64::from(c) * u64::from(p);
                    });
                    row.push(format!("[{n}, {sum}]"));
                }
                due.push(format!("[{}]", row.join(", ")));
            }
            out.push(format!(
                "        {{\"key\": {key}, \"previous\": {previous},\n         \"cells\": [{}],\n         \"candidates\": [{}]}}",
                listed.join(", "),
                due.join(", ")
            ));
        }
        places.push(format!(
            "    {{\"bounds\": [{}], \"cell_size\": {}, \"view_radius\": {}, \"counts\": {:?}, \"views\": [\n{}\n    ]}}",
            bounds.map(num).join(", "),
            num(cell_size),
            num(view_radius),
            stencil.counts(),
            out.join(",\n")
        ));
    }
    format!(
        "{{\n  \"generator\": \"schema/tests/stencil.rs (MINO_UPDATE_FIXTURES=1 cargo test -p mino-protocol --test stencil)\",\n  \"places\": [\n{}\n  ]\n}}\n",
        places.join(",\n")
    )
}

#[test]
fn the_fixture_is_what_the_stencil_computes() {
    fixture_file::matches_or_update(FIXTURE, &fixture());
}

#[test]
fn radii_on_either_side_of_a_distance_take_different_cells() {
    // 223.606 / 100 is just below sqrt(5) and 223.607 / 100 just above:
    // the cells at gaps (2, 1) are Mid in one and Far in the other.
    let below = Stencil::of_view(223.606, 100.0).counts();
    let above = Stencil::of_view(223.607, 100.0).counts();
    assert!(above[2] > below[2], "{below:?} {above:?}");
}
