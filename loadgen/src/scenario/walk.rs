//! `walk`: N bots join at R per second and walk; after every bot has an
//! outcome, the run is measured for a duration.

use super::{Context, Held};
use crate::cli::WalkArgs;
use crate::profile::Profile;
use crate::report::{table, Scenario, WalkReport};

/// Runs the walk scenario and reports.
///
/// Errors: writing the report or plot failed.
pub async fn run(ctx: &Context, args: &WalkArgs) -> anyhow::Result<()> {
    let report = measure(ctx, args).await;
    ctx.finish(&report, table::walk(&report))?;
    ctx.plot(&[(report.measured.connected, &report.measured)])
}

/// Runs the walk and returns its report (no output).
pub async fn measure(ctx: &Context, args: &WalkArgs) -> WalkReport {
    ctx.check_capacity(args.bots);
    let profile = Profile::of(ctx.common.profile);
    let mut crew = ctx.crew(profile, ctx.policy()).await;
    crew.ramp_to(ctx, args.bots, args.ramp).await;
    crew.settle(ctx).await;
    crew.converge(ctx).await;
    let Held { measured, census, .. } = crew.measure_hold(ctx, args.duration, "walk".into()).await;
    let (shard_ids, _) = crew.shards(ctx).await;
    crew.shutdown(ctx).await;
    WalkReport {
        scenario: Scenario::Walk,
        bots: census.bots,
        admitted: census.admitted,
        shards_seen: shard_ids.len(),
        shard_ids,
        measured,
        info: ctx.info(profile.name),
    }
}
