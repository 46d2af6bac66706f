//! `arrivals`: N players arriving at R per second, each with one join attempt
//! (unless `--retry-busy`): joins that timed out, Busy refusals, welcome
//! latency, then the snapshot gaps of the admitted crowd over a short hold.

use super::{Context, Held, SHUTDOWN_TIMEOUT};
use crate::cli::ArrivalsArgs;
use crate::failure::FailureKind;
use crate::profile::Profile;
use crate::reconnect::ReconnectPolicy;
use crate::report::{round2, table, ArrivalsReport};
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
    let mut swarm = ctx.swarm(profile, policy);
    let started = Instant::now();
    swarm.ramp_to(args.bots, args.rate, &ctx.progress, &ctx.stop).await;
    let achieved = swarm.len() as f64 / started.elapsed().as_secs_f64().max(1e-9);
    ctx.settle(&swarm).await;
    ctx.converge(&swarm).await;
    let Held { measured, whole, census, .. } = ctx.measure_hold(&swarm, args.hold, "hold".into()).await;
    swarm.shutdown(SHUTDOWN_TIMEOUT).await;
    ArrivalsReport {
        scenario: "arrivals",
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
