//! Section 6, failover: two shards on the default configuration (busy rule
//! on: it is about resume, not capacity); shard b killed (SIGKILL), then in
//! a fresh run drained (SIGTERM) by the loadgen.

use super::{secs, strings};
use crate::parts::{Deployment, PhasesOf, Shards};
use crate::runner::Run;

/// Runs the kill, then the drain.
///
/// Errors: results could not be written.
pub async fn run(run: &mut Run) -> anyhow::Result<()> {
    let p = run.plan.failover.clone();
    for action in ["kill", "drain"] {
        run.log(&format!("failover: {action} shard b with {} bots on two shards", p.bots));
        let d = Deployment::two(run, &Shards { busy_rule: true, ..Shards::with(&[]) }).await;
        let pid = d.shard("b").map_or(0, |s| s.pid());
        let id = d.shard_id("b").unwrap_or_default();
        let label = format!("failover-{action}");
        let args = strings([
            "--bots".to_owned(),
            p.bots.to_string(),
            "--ramp".into(),
            "200".into(),
            "--warmup".into(),
            "5s".into(),
            format!("--{action}-pid"),
            pid.to_string(),
            "--shard-id".into(),
            id,
            "--observe".into(),
            secs(p.observe),
        ]);
        d.measured(run, &label, "failover", &args, PhasesOf::None).await?;
        d.stop(run, &label);
    }
    Ok(())
}
