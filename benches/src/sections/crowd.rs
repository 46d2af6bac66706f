//! Section 9's crowd: every bot walks to the middle of one cell and stays
//! there for the hold; the view budget (the server's default) against what
//! each socket got, late ticks, sockets closed as too slow.

use super::{secs, strings};
use crate::parts::{one_phase, Deployment, PhasesOf, Shards};
use crate::plan::AOI_CELL;
use crate::runner::Run;

/// The crowd's world, units a side.
const SIDE: u32 = 2000;

/// Runs the crowd once.
///
/// Errors: results could not be written.
pub async fn run(run: &mut Run) -> anyhow::Result<()> {
    let p = run.plan.crowd.clone();
    // The middle of the cell just past the world's centre: the centre itself
    // is a corner of four cells.
    let point = SIDE / 2 + AOI_CELL / 2;
    run.log(&format!("crowd: {} players on two shards walk to ({point}, {point})", p.bots));
    let flags = strings([
        "--cell-size".to_owned(),
        AOI_CELL.to_string(),
        "--world-size".into(),
        SIDE.to_string(),
        "--max-players".into(),
        p.bots.to_string(),
        "--max-connections".into(),
        (p.bots + 100).to_string(),
    ]);
    let d = Deployment::two(run, &Shards::with(&flags)).await;
    let label = format!("crowd-{}", p.bots);
    let args = strings([
        "--bots".to_owned(),
        p.bots.to_string(),
        "--ramp".into(),
        run.plan.steps.ramp.to_string(),
        "--hold".into(),
        secs(p.hold),
        "--point".into(),
        format!("{point},{point}"),
    ]);
    d.measured(run, &label, "crowd", &args, PhasesOf::Report(one_phase)).await?;
    d.stop(run, &label);
    Ok(())
}
