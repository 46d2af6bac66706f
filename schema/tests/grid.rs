//! The shared fixture of the grid's cell rule: for a few worlds and cell
//! sizes, the grid's columns and rows and the cell of quantized positions at
//! and around every border (and wherever double precision would pick another
//! cell), as `mino_protocol::grid` computes them, in
//! `schema/fixtures/grid.json`. The browser client's unit tests
//! (client-web/src/net/grid.test.ts) compute the same with `net/grid.ts` and
//! must agree exactly: with handoff deltas a client moves a player into the
//! cell its position is in, and must pick the server's.
//!
//! `MINO_UPDATE_FIXTURES=1 cargo test -p mino-protocol --test grid`
//! rewrites the file; otherwise the test fails unless it matches.

mod fixture_file;

use mino_protocol::grid::CellGrid;
use mino_protocol::wire::Bounds;

const FIXTURE: &str = "fixtures/grid.json";

/// The worlds: bounds (f32 as the Welcome carries them) and cell size
/// (world units): the walk game's, the benches' 1,600-unit world, an odd one
/// whose cells do not divide it, a thin one, a huge one, cells wider than
/// the world.
const WORLDS: [([f32; 4], f32); 7] = [
    ([0.0, 0.0, 1000.0, 1000.0], 100.0),
    ([0.0, 0.0, 1600.0, 1600.0], 100.0),
    ([0.0, 0.0, 2000.0, 2000.0], 125.0),
    ([-50.0, 10.0, 1234.5, 777.25], 301.7),
    ([0.0, 0.0, 100.0, 50.0], 7.3),
    ([0.0, 0.0, 1_000_000.0, 1_000_000.0], 333.3),
    ([0.0, 0.0, 10.0, 10.0], 64.0),
];

fn num(v: f32) -> String {
    format!("{}", f64::from(v))
}

/// Quantized coordinates at and around each border of `n` cells along an
/// axis whose first coordinate of cell `k` is found by search, plus both
/// ends.
fn probes(n: u32, cell: impl Fn(u16) -> u32) -> Vec<u16> {
    let mut out = vec![0, 1, u16::MAX - 1, u16::MAX];
    for k in 1..n.min(200) {
        // The first q in cell k or past it.
        let (mut lo, mut hi) = (0u32, u32::from(u16::MAX) + 1);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if cell(mid as u16) >= k {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        for q in [lo.saturating_sub(1), lo, lo + 1] {
            if let Ok(q) = u16::try_from(q) {
                out.push(q);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The coordinates along an axis (`min`, `max`, `n` cells) where the rule
/// in double precision would pick another column than single precision's:
/// a client must round as the server does.
fn single_precision_matters(min: f32, max: f32, size: f32, n: u32, rule: impl Fn(u16) -> u32) -> Vec<u16> {
    (0..=u16::MAX)
        .filter(|&q| {
            let (min, max, size) = (f64::from(min), f64::from(max), f64::from(size));
            let world = min + (f64::from(q) / 65535.0) * (max - min);
            let double = (((world - min) / size).floor().max(0.0) as u32).min(n - 1);
            double != rule(q)
        })
        .collect()
}

fn fixture() -> String {
    let mut worlds = Vec::new();
    for (b, size) in WORLDS {
        let grid = CellGrid::new(&Bounds::new(b[0], b[1], b[2], b[3]), size).expect("a grid");
        let column = |q| (grid.cell_of_q(q, 0) - 1) % grid.columns();
        let row = |q| (grid.cell_of_q(0, q) - 1) / grid.columns();
        let mut xs = probes(grid.columns(), column);
        xs.extend(single_precision_matters(b[0], b[2], size, grid.columns(), column));
        xs.sort_unstable();
        xs.dedup();
        let mut ys = probes(grid.rows(), row);
        ys.extend(single_precision_matters(b[1], b[3], size, grid.rows(), row));
        ys.sort_unstable();
        ys.dedup();
        let mut cells = Vec::new();
        for (i, &x) in xs.iter().enumerate() {
            // Every x against a few ys (and every y against a few xs): the
            // axes are independent.
            let y = ys[i % ys.len()];
            cells.push(format!("[{x}, {y}, {}]", grid.cell_of_q(x, y)));
        }
        for (i, &y) in ys.iter().enumerate() {
            let x = xs[(i * 7) % xs.len()];
            cells.push(format!("[{x}, {y}, {}]", grid.cell_of_q(x, y)));
        }
        worlds.push(format!(
            "    {{\"bounds\": [{}, {}, {}, {}], \"cell_size\": {}, \"columns\": {}, \"rows\": {},\n     \"cells\": [{}]}}",
            num(b[0]),
            num(b[1]),
            num(b[2]),
            num(b[3]),
            num(size),
            grid.columns(),
            grid.rows(),
            cells.join(", ")
        ));
    }
    format!(
        "{{\n  \"about\": \"schema/tests/grid.rs: mino_protocol::grid, the cell of quantized positions around every border: [x, y, cell]\",\n  \"worlds\": [\n{}\n  ]\n}}\n",
        worlds.join(",\n")
    )
}

#[test]
fn the_grid_fixture_matches_the_rule() {
    fixture_file::matches_or_update(FIXTURE, &fixture());
}

#[test]
fn borders_fall_where_the_cell_size_puts_them() {
    // The walk game's world: 100-unit cells are 6,553.5 quantized units.
    let grid = CellGrid::new(&Bounds::new(0.0, 0.0, 1000.0, 1000.0), 100.0).expect("a grid");
    let xs = probes(grid.columns(), |q| (grid.cell_of_q(q, 0) - 1) % grid.columns());
    assert!(xs.contains(&6553) && xs.contains(&6554));
    assert_eq!((grid.cell_of_q(6553, 0), grid.cell_of_q(6554, 0)), (1, 2));
}

#[test]
fn the_fixture_holds_positions_where_single_precision_matters() {
    // The huge world: a client in double precision would misfile players.
    let (b, size) = WORLDS[5];
    let grid = CellGrid::new(&Bounds::new(b[0], b[1], b[2], b[3]), size).expect("a grid");
    let odd =
        single_precision_matters(b[0], b[2], size, grid.columns(), |q| (grid.cell_of_q(q, 0) - 1) % grid.columns());
    assert!(odd.contains(&14591), "{odd:?}");
}
