//! `--density` against the real server with area of interest: the bots are
//! confined to a square sized for the density asked, steered back in at its
//! edges; a server without area of interest is refused with a clear message.

use mino_testkit::loadgen::{self, num};
use mino_testkit::{server_bin, Shard};

/// The loadgen binary cargo built for these tests.
const LOADGEN: &str = env!("CARGO_BIN_EXE_mino-loadgen");

/// Cells of 100 units over the default 1000-unit world; walkers at 240
/// units/s (12 a tick), so they reach their region and its edges quickly.
const AOI: [&str; 6] = ["--cell-size", "100", "--speed", "240", "--view-hysteresis-ticks", "8"];

#[test]
fn density_confines_the_bots_to_a_region_of_that_many_players_a_cell() {
    let server = Shard::start(server_bin(), &AOI);
    let run = loadgen::run(
        LOADGEN,
        &["--url", &server.ws_url(), "--bots", "24", "--ramp", "60", "--duration", "4s", "--density", "2", "-q"],
    );
    let j = &run.json;
    assert_eq!(num(j, "connected"), 24.0, "{j:#}");
    // 24 bots at 2 a cell: 12 cells, sqrt(12) = 3.46 cells a side, centred on (500, 500).
    let side = 100.0 * 12f64.sqrt();
    for (key, want) in [("min_x", 500.0 - side / 2.0), ("max_x", 500.0 + side / 2.0), ("min_y", 500.0 - side / 2.0)] {
        let got = num(j, &format!("density.region.{key}"));
        assert!((got - want).abs() < 0.5, "{key} {got}, want {want}");
    }
    assert!((num(j, "density.region_cells") - 12.0).abs() < 0.05, "{j:#}");
    // Walking 240 units/s and turning every 1-3 s, every bot met the edges
    // of a 346-unit square several times during the 4 s; all are inside.
    assert_eq!(num(j, "density.inside"), 24.0, "{:#}", j["density"]);
    assert!((num(j, "density.achieved_per_cell") - 2.0).abs() < 0.01);
    assert_eq!(num(j, "density.players_per_cell"), 2.0);
    // The area-of-interest figures are there, with every bot in its own cell's frames.
    assert!(num(j, "aoi.own_cell_gap_ms.count") > 24.0 * 20.0 * 3.0, "{:#}", j["aoi"]);
    assert_eq!(num(j, "aoi.bot_bytes_per_s.count"), 24.0);
    assert_eq!(num(j, "aoi.observers.observers"), 20.0, "by default 5 % of the bots, but at least 20");
    assert!(num(j, "aoi.bot_bytes_per_s.p50") > 0.0);
}

#[test]
fn density_without_area_of_interest_is_refused() {
    let server = Shard::start(server_bin(), &[]);
    let out = std::process::Command::new(LOADGEN)
        .args(["--url", &server.ws_url(), "--bots", "3", "--duration", "1s", "--density", "1", "--quiet"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--density needs area of interest") && stderr.contains("--cell-size"), "{stderr}");
}
