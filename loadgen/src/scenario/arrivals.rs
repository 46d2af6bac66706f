//! `arrivals`: N players arriving at R per second, each with one join attempt
//! (unless `--retry-busy`): joins that timed out, Busy refusals, welcome
//! latency, then the snapshot gaps of the admitted crowd over a short hold.

use super::{Context, Held};
use crate::cli::ArrivalsArgs;
use crate::failure::FailureKind;
use crate::profile::Profile;
use crate::reconnect::ReconnectPolicy;
use crate::report::{round2, table, ArrivalsReport, Scenario};
use tokio::time::Instant;

/// Runs the arrivals scenario and reports.
///
/// Errors: writing the report or plot failed.
pub async fn run(ctx: &Context, args: &ArrivalsArgs) -> anyhow::Result<()> {
    let report = measure(ctx, args).await;
    ctx.finish(&report, table::arrivals(&report))?;
    ctx.plot(&[(report.measured.connected, &report.measured)])
}

/// Runs the arrivals and returns the report (no output).
pub async fn measure(ctx: &Context, args: &ArrivalsArgs) -> ArrivalsReport {
    ctx.check_capacity(args.bots);
    let profile = Profile::of(ctx.common.profile);
    let policy = ReconnectPolicy { retry_busy: args.retry_busy, ..ReconnectPolicy::single_attempt() };
    let mut crew = ctx.crew(profile, policy).await;
    let started = Instant::now();
    crew.ramp_to(ctx, args.bots, args.rate).await;
    let achieved = crew.len() as f64 / started.elapsed().as_secs_f64().max(1e-9);
    crew.settle(ctx).await;
    crew.converge(ctx).await;
    let Held { measured, whole, census, .. } = crew.measure_hold(ctx, args.hold, "hold".into()).await;
    crew.shutdown(ctx).await;
    ArrivalsReport {
        scenario: Scenario::Arrivals,
        bots: census.bots,
        rate_per_s: args.rate,
        achieved_rate_per_s: round2(achieved),
        admitted: census.admitted,
        timed_out: whole.counters.errors_of(FailureKind::JoinTimeout)
            + whole.counters.errors_of(FailureKind::ConnectTimeout),
        measured,
        info: ctx.info(profile.name),
    }
}
