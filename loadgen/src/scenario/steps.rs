//! `steps`: rising player counts, each ramped to, settled and held; one row of
//! figures per step, each marked "not judgeable" when the loadgen was too busy.

use super::Context;
use crate::cli::StepsArgs;
use crate::profile::Profile;
use crate::report::{table, Scenario, StepReport, StepsReport};

/// Runs the steps scenario and reports (`Cli::scenario` checked that the
/// steps rise from above 0).
///
/// Errors: writing the report or plot failed.
pub async fn run(ctx: &Context, args: &StepsArgs) -> anyhow::Result<()> {
    let report = measure(ctx, args).await;
    ctx.finish(&report, table::steps(&report))?;
    let points: Vec<_> = report.steps.iter().map(|s| (s.measured.connected, &s.measured)).collect();
    ctx.plot(&points)
}

/// Runs every step and returns the report (no output). Stops early, with the
/// steps done so far, when the run is stopped.
pub async fn measure(ctx: &Context, args: &StepsArgs) -> StepsReport {
    ctx.check_capacity(args.steps.iter().copied().max().unwrap_or(0));
    let profile = Profile::of(ctx.common.profile);
    let mut crew = ctx.crew(profile, ctx.policy()).await;
    let mut steps = Vec::with_capacity(args.steps.len());
    let mut admitted = 0;
    for &n in &args.steps {
        let _between = crew.take_window(ctx).await;
        if !crew.ramp_to(ctx, n, args.ramp).await {
            break;
        }
        crew.settle(ctx).await;
        crew.converge(ctx).await;
        if !ctx.progress.hold(args.settle, format!("settle {n}"), &ctx.stop, String::new).await {
            break;
        }
        let held = crew.measure_hold(ctx, args.hold, format!("hold {n}")).await;
        admitted = admitted.max(held.census.admitted);
        steps.push(StepReport { players: n, measured: held.measured });
        if ctx.stop.is_cancelled() {
            break;
        }
    }
    let shards_seen = crew.shards(ctx).await.0.len();
    crew.shutdown(ctx).await;
    StepsReport { scenario: Scenario::Steps, steps, admitted, shards_seen, info: ctx.info(profile.name) }
}
