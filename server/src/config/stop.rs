//! How a shard stops: the drain's pace and bound (SIGTERM), and the bound on
//! the shutdown after it.

use clap::Args;

/// The drain's and the shutdown's flags.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Drain and shutdown")]
pub struct StopArgs {
    /// Drain (SIGTERM): players told to move to another shard per second
    /// (below the tick rate, one every few ticks). Paced so the remaining
    /// shards are not stampeded. 1 to 1,000,000.
    #[arg(long, env = "MINO_DRAIN_RATE", default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub drain_rate: u32,

    /// Drain: longest wait for every player to leave before exiting, ms. 0 to
    /// 3,600,000.
    #[arg(long, env = "MINO_DRAIN_TIMEOUT_MS", default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(0..=3_600_000))]
    pub drain_timeout_ms: u64,

    /// Time the graceful shutdown may take before tasks are abandoned, ms. 0 to
    /// 600,000.
    #[arg(long, env = "MINO_SHUTDOWN_TIMEOUT_MS", default_value_t = 5000, value_parser = clap::value_parser!(u64).range(0..=600_000))]
    pub shutdown_timeout_ms: u64,
}
