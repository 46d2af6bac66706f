//! Section 5, arrivals: players arriving at a rate on one shard.

use super::strings;
use crate::parts::{one_phase, Deployment, PhasesOf, Shards};
use crate::runner::Run;

/// Runs the arrivals once.
///
/// Errors: results could not be written.
pub async fn run(run: &mut Run) -> anyhow::Result<()> {
    let p = run.plan.arrivals.clone();
    run.log(&format!("arrivals: {} at {}/s on one shard", p.bots, p.rate));
    let d = Deployment::one(run, &Shards::with(&[])).await;
    let args = strings([
        "--bots".to_owned(),
        p.bots.to_string(),
        "--rate".into(),
        p.rate.to_string(),
        "--hold".into(),
        "5s".into(),
    ]);
    d.measured(run, "arrivals", "arrivals", &args, PhasesOf::Report(one_phase)).await?;
    d.stop(run, "arrivals");
    Ok(())
}
