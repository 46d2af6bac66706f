//! The sections of a scale run, one function each (in the spirit of
//! quinn's `perf`): each starts what it measures from the plan, runs the
//! loadgen (or its own measurement), and writes its raw results; RESULTS.md
//! is written from those alone ([`crate::report`]).

pub mod aoi;
pub mod arrivals;
pub mod control;
pub mod criterion;
pub mod crowd;
pub mod deltas;
pub mod failover;
pub mod idle;
pub mod nginx;
pub mod redis;
pub mod steps;
pub mod webtransport;

use crate::runner::Run;
use crate::section::Section;

/// Runs `section` of `run`'s plan.
///
/// Errors: what it measures could not be started, or its results not
/// written (a failed loadgen run is logged and its results still used).
pub async fn measure(run: &mut Run, section: Section) -> anyhow::Result<()> {
    match section {
        Section::Criterion => criterion::run(run).await,
        Section::Steps => steps::run(run).await,
        Section::Control => control::run(run).await,
        Section::Idle => idle::run(run).await,
        Section::Arrivals => arrivals::run(run).await,
        Section::Failover => failover::run(run).await,
        Section::Aoi => aoi::run(run).await,
        Section::Crowd => crowd::run(run).await,
        Section::Redis => redis::run(run).await,
        Section::Nginx => nginx::run(run).await,
        Section::Peer => crate::peer::run(run).await,
        Section::Deltas => deltas::run(run).await,
        Section::WebTransport => webtransport::run(run).await,
    }
}

/// `--hold 15s` and the like: a duration as loadgen's flags take it.
pub fn secs(d: std::time::Duration) -> String {
    format!("{}s", d.as_secs())
}

/// Strings of anything printable.
pub fn strings<T: ToString>(items: impl IntoIterator<Item = T>) -> Vec<String> {
    items.into_iter().map(|i| i.to_string()).collect()
}

/// A comma-separated list (`100,250,500`).
pub fn list(items: &[u32]) -> String {
    strings(items).join(",")
}
