//! `walk`: N bots join at R per second and walk; after every bot has an
//! outcome, the run is measured for a duration.

use super::{Context, Held, SHUTDOWN_TIMEOUT};
use crate::cli::WalkArgs;
use crate::profile::Profile;
use crate::report::{table, WalkReport};

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
    let mut swarm = ctx.swarm(profile, ctx.policy());
    swarm.ramp_to(args.bots, args.ramp, &ctx.progress, &ctx.stop).await;
    ctx.settle(&swarm).await;
    ctx.converge(&swarm).await;
    let Held { measured, census, .. } = ctx.measure_hold(&swarm, args.duration, "walk".into()).await;
    let shard_ids = swarm.stats().shards_seen();
    swarm.shutdown(SHUTDOWN_TIMEOUT).await;
    WalkReport {
        scenario: "walk",
        bots: census.bots,
        admitted: census.admitted,
        shards_seen: shard_ids.len(),
        shard_ids,
        measured,
        info: ctx.info(profile.name),
    }
}
