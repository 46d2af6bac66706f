//! The area of interest: the grid's cells, the view radius and its
//! hysteresis, and the bytes a socket may get a tick. Off (the whole place
//! is one cell every socket sees) unless `--cell-size` is given.

use super::parse::ranged_f32;
use super::ConfigError;
use clap::builder::RangedU64ValueParser;
use clap::Args;

/// The area of interest's flags.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Area of interest")]
pub struct AoiArgs {
    /// Area of interest: the side of a grid cell, world units. Each tick a
    /// shard sends each socket only the cells near its player (one view frame
    /// a shard, shared by every socket whose player stands in the same cell;
    /// each cell's players encoded once). 0 (the default)
    /// makes the whole place one cell every socket sees. At least --speed x
    /// max(--view-hysteresis-ticks, 8) / --tick-hz, so a walker never skips
    /// a cell and two approaching walkers stay in each other's prefetch ring
    /// for a whole period of it (4 ticks); at most 16,777,216 cells in the
    /// world. 0 to 1,000,000.
    #[arg(long, env = "MINO_CELL_SIZE", default_value_t = 0.0, value_parser = ranged_f32(0.0, 1_000_000.0))]
    pub cell_size: f32,

    /// Area of interest: the view radius, world units. Players within it are
    /// sent every tick (the own and adjacent cells) or every second tick; a
    /// prefetch ring of one cell beyond it every fourth tick. Default: four
    /// cells. Whole cells are sent, so the fewer cells the radius spans, the
    /// more players beyond it a socket gets: at 2 cells about 2.3 times the
    /// players within the radius, at 4 cells about 1.2 times (benches/RESULTS.md
    /// section 9). 0 to 1,000,000, and at most 64 cells (`--cell-size` x 64).
    #[arg(long, env = "MINO_VIEW_RADIUS", value_parser = ranged_f32(0.0, 1_000_000.0))]
    pub view_radius: Option<f32>,

    /// Area of interest: ticks a cell the player walked out of stays in its
    /// view (no flicker at cell borders). 0 to 200.
    #[arg(long, env = "MINO_VIEW_HYSTERESIS_TICKS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(0..=200))]
    pub view_hysteresis_ticks: u64,

    /// Area of interest: bytes of cells one socket may get a tick, on
    /// average; beyond it outer cells, then nearer ones, are sent less often
    /// (a crowd costs each socket this, not the square of the crowd). 512 to
    /// 16,777,216.
    #[arg(long, env = "MINO_VIEW_BUDGET_BYTES", default_value_t = 8192, value_parser = RangedU64ValueParser::<usize>::new().range(512..=16 << 20))]
    pub view_budget_bytes: usize,
}

/// The area-of-interest settings (see [`AoiArgs`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AoiConfig {
    /// Cell side, world units.
    pub cell_size: f32,
    /// View radius, world units.
    pub view_radius: f32,
    /// Ticks a cell the viewer left stays in view.
    pub hysteresis_ticks: u64,
    /// Bytes a socket may get a tick, on average.
    pub budget_bytes: usize,
}

/// Ticks two walkers approaching each other must take to cross one cell: two
/// (twice the speed) times the prefetch ring's base period of 4 ticks.
pub const PREFETCH_CROSSING_TICKS: u64 = 8;

/// The view radius when `--view-radius` is not given, in cells: whole cells
/// are sent, and at 4 a socket gets about 1.2 times the players within its
/// radius (2.3 times at 2 cells; benches/RESULTS.md section 9).
pub const DEFAULT_VIEW_RADIUS_CELLS: f32 = 4.0;

/// Most cells an area-of-interest grid may have (4,096 x 4,096): the wire's
/// (`mino_protocol::grid::MAX_CELLS`), which clients hold a grid to.
pub const MAX_CELLS: u64 = mino_protocol::grid::MAX_CELLS;

/// What the area of interest's checks need of the shard's own flags.
#[derive(Clone, Copy, Debug)]
pub struct Walkers {
    /// World side, world units (`--world-size`).
    pub world_size: f32,
    /// Walking speed, world units per second (`--speed`).
    pub speed: f32,
    /// Tick rate, Hz (`--tick-hz`).
    pub tick_hz: u16,
}

/// The area of interest's tuning flags given (on the command line or in
/// the environment) while it is off (`--cell-size` 0): they do nothing, and
/// the shard says so at its start. `matches`: the shard's parsed flags.
pub fn ignored_flags(matches: &clap::ArgMatches) -> Vec<&'static str> {
    use clap::parser::ValueSource;
    if matches.get_one::<f32>("cell_size").is_some_and(|c| *c > 0.0) {
        return Vec::new();
    }
    let given =
        |id: &str| matches!(matches.value_source(id), Some(ValueSource::CommandLine | ValueSource::EnvVariable));
    [
        ("view_radius", "--view-radius"),
        ("view_hysteresis_ticks", "--view-hysteresis-ticks"),
        ("view_budget_bytes", "--view-budget-bytes"),
    ]
    .into_iter()
    .filter(|(id, _)| given(id))
    .map(|(_, flag)| flag)
    .collect()
}

impl AoiArgs {
    /// The area of interest the flags ask for, checked against the world and
    /// its walkers; `None`: off (`--cell-size 0`).
    ///
    /// Errors: [`ConfigError::CellTooSmall`] when a walker could skip a cell,
    /// [`ConfigError::TooManyCells`] when the grid would be too large,
    /// [`ConfigError::ViewTooWide`] when the view radius spans more than
    /// [`mino_protocol::stencil::MAX_RADIUS_CELLS`] cells.
    pub fn config(&self, walkers: Walkers) -> Result<Option<AoiConfig>, ConfigError> {
        let Walkers { world_size, speed, tick_hz } = walkers;
        if self.cell_size == 0.0 {
            return Ok(None);
        }
        // A walker covers at most one cell while the cell it left is still in
        // view, and two walking toward each other (twice the speed) take a whole
        // prefetch period (4 ticks) to cross the one-cell prefetch ring.
        let ticks = self.view_hysteresis_ticks.max(PREFETCH_CROSSING_TICKS);
        let least = speed * ticks as f32 / f32::from(tick_hz);
        if self.cell_size < least {
            return Err(ConfigError::CellTooSmall { cell_size: self.cell_size, least });
        }
        let side = (f64::from(world_size) / f64::from(self.cell_size)).ceil() as u64;
        if side * side > MAX_CELLS {
            return Err(ConfigError::TooManyCells { world_size, cell_size: self.cell_size, cells: side * side });
        }
        let view_radius = self.view_radius.unwrap_or(DEFAULT_VIEW_RADIUS_CELLS * self.cell_size);
        let cells = view_radius / self.cell_size;
        if cells > mino_protocol::stencil::MAX_RADIUS_CELLS {
            return Err(ConfigError::ViewTooWide { view_radius, cell_size: self.cell_size, cells });
        }
        Ok(Some(AoiConfig {
            cell_size: self.cell_size,
            view_radius,
            hysteresis_ticks: self.view_hysteresis_ticks,
            budget_bytes: self.view_budget_bytes,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::parse;
    use super::super::Config;
    use super::*;

    #[test]
    fn tuning_flags_without_cells_are_named_as_ignored() {
        use clap::CommandFactory;
        let matches = |args: &[&str]| {
            super::super::Cli::command()
                .try_get_matches_from(std::iter::once("mino-server").chain(args.iter().copied()))
                .expect("flags")
        };
        assert_eq!(ignored_flags(&matches(&["--view-radius", "400"])), ["--view-radius"]);
        let both = matches(&["--view-budget-bytes", "600", "--view-hysteresis-ticks", "5"]);
        assert_eq!(ignored_flags(&both), ["--view-hysteresis-ticks", "--view-budget-bytes"]);
        assert!(ignored_flags(&matches(&[])).is_empty(), "defaults are not given");
        assert!(ignored_flags(&matches(&["--cell-size", "100", "--view-radius", "400"])).is_empty());
    }

    #[test]
    fn area_of_interest_is_off_by_default_and_checked_when_on() {
        assert_eq!(Config::default().aoi, None);
        let on = Config::from_cli(&parse(&["--cell-size", "100"]).expect("flags")).expect("valid");
        assert_eq!(
            on.aoi,
            Some(AoiConfig { cell_size: 100.0, view_radius: 400.0, hysteresis_ticks: 10, budget_bytes: 8192 })
        );
        let small = Config::from_cli(&parse(&["--cell-size", "50"]).expect("flags")).expect_err("too small");
        assert!(matches!(small, ConfigError::CellTooSmall { least, .. } if least == 60.0), "{small}");
        let fast = parse(&["--cell-size", "100", "--speed", "300", "--view-hysteresis-ticks", "2"]).expect("flags");
        assert!(matches!(Config::from_cli(&fast), Err(ConfigError::CellTooSmall { least, .. }) if least == 120.0));
        let many = parse(&["--cell-size", "60", "--world-size", "1000000"]).expect("flags");
        assert!(matches!(Config::from_cli(&many), Err(ConfigError::TooManyCells { .. })));
        let wide = parse(&["--cell-size", "100", "--view-radius", "6500"]).expect("flags");
        assert!(matches!(Config::from_cli(&wide), Err(ConfigError::ViewTooWide { cells, .. }) if cells == 65.0));
        let widest = parse(&["--cell-size", "100", "--view-radius", "6400"]).expect("flags");
        assert!(Config::from_cli(&widest).is_ok(), "64 cells");
    }
}
