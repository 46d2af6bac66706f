//! Section 7, the control rows: the same two-shard run with batched writes
//! (the default) and with `--unbatched-writes`, alternating (B U, U B, ...)
//! so that drift in the machine's load falls on both.

use super::{secs, strings};
use crate::parts::{one_phase, Deployment, PhasesOf, Shards};
use crate::runner::Run;

/// Runs the pairs, `repeat` times each count.
///
/// Errors: results could not be written.
pub async fn run(run: &mut Run) -> anyhow::Result<()> {
    let p = run.plan.control.clone();
    for n in p.bots {
        for i in 1..=run.plan.repeat {
            let order = if i % 2 == 1 { ["batched", "unbatched"] } else { ["unbatched", "batched"] };
            for mode in order {
                run.log(&format!("control {n}/{i}: {mode} writes, two shards, {n} bots"));
                let flags = if mode == "unbatched" { vec!["--unbatched-writes".to_owned()] } else { Vec::new() };
                let d = Deployment::two(run, &Shards::with(&flags)).await;
                let label = format!("control-{n}-{mode}-{i}");
                let args = strings([
                    "--bots".to_owned(),
                    n.to_string(),
                    "--ramp".into(),
                    run.plan.steps.ramp.to_string(),
                    "--duration".into(),
                    secs(p.hold),
                ]);
                d.measured(run, &label, "walk", &args, PhasesOf::Report(one_phase)).await?;
                d.stop(run, &label);
            }
        }
    }
    Ok(())
}
