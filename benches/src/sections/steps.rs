//! Sections 1 to 3: the snapshot gap, CPU per frame and ticks against
//! players, on one shard, then on two shards sharing a fresh Redis.

use super::{list, secs, strings};
use crate::parts::{steps_phases, Deployment, PhasesOf, Shards};
use crate::runner::Run;

/// Runs the steps on one shard, then on two.
///
/// Errors: results could not be written.
pub async fn run(run: &mut Run) -> anyhow::Result<()> {
    let p = run.plan.steps.clone();
    for (label, steps, two) in [("one-shard", &p.one, false), ("two-shards", &p.two, true)] {
        run.log(&format!("{label}: steps {}", list(steps)));
        let d = if two {
            Deployment::two(run, &Shards::with(&[])).await
        } else {
            Deployment::one(run, &Shards::with(&[])).await
        };
        let plot = run.paths.out.join(format!("gap-{label}.svg"));
        let mut args = strings(["--steps", &list(steps), "--hold", &secs(p.hold), "--settle", &secs(p.settle)]);
        args.extend(strings([
            "--ramp".to_owned(),
            p.ramp.to_string(),
            "--plot".into(),
            plot.to_string_lossy().into_owned(),
        ]));
        d.measured(run, label, "steps", &args, PhasesOf::Report(steps_phases)).await?;
        d.stop(run, label);
    }
    Ok(())
}
