//! Section 4, idle websockets: standing players on a world of about one
//! player a cell of 125 units (so each sees few others; a standing player's
//! socket is written nothing while its view does not change, protocol 4);
//! then the largest size again with glibc's malloc in place of jemalloc.

use super::{secs, strings};
use crate::parts::{one_phase, Deployment, PhasesOf, ServerBin, Shards};
use crate::runner::Run;

/// Server flags beyond the world's for idle websockets: none since shared
/// delta frames (a standing player's socket is sent nothing while its view
/// does not change; before them it took `--keyframe-ticks 20`). The one
/// place the runner names them; `heap-idle` uses them too.
pub const IDLE_FLAGS: &[&str] = &[];

/// The server flags of `n` idle websockets.
fn flags(n: u32) -> Vec<String> {
    let world = ((f64::from(n).sqrt() * 125.0).round() as u32).max(1000);
    let mut f = strings([
        "--world-size".to_owned(),
        world.to_string(),
        "--cell-size".into(),
        "125".into(),
        "--view-radius".into(),
        "250".into(),
        "--max-players".into(),
        (n + 100).to_string(),
        "--max-connections".into(),
        (n + 200).to_string(),
    ]);
    f.extend(IDLE_FLAGS.iter().map(|s| s.to_string()));
    f
}

/// Runs each size `repeat` times, then the allocator comparison.
///
/// Errors: results could not be written.
pub async fn run(run: &mut Run) -> anyhow::Result<()> {
    let p = run.plan.idle.clone();
    let hold = secs(p.hold);
    for &n in &p.sizes {
        for i in 1..=run.plan.repeat {
            run.log(&format!("idle {n}/{i}: {n} idle websockets on one shard"));
            let f = flags(n);
            let d = Deployment::one(run, &Shards::with(&f)).await;
            let label = format!("idle-{n}-{i}");
            let args = loadgen_args(n, &hold, &[]);
            d.measured(run, &label, "idle", &args, PhasesOf::Report(one_phase)).await?;
            d.stop(run, &label);
        }
    }
    let Some(&n) = p.sizes.last() else { return Ok(()) };
    if !run.binary("mino-server-glibc").exists() {
        run.log("idle: no server without jemalloc (the target folder's heap/): the allocator comparison is not run");
        return Ok(());
    }
    for i in 1..=run.plan.repeat {
        run.log(&format!("idle {n}/{i} with glibc malloc"));
        let f = flags(n);
        let d = Deployment::one(run, &Shards { flags: &f, bin: ServerBin::Glibc, busy_rule: false }).await;
        let label = format!("malloc-glibc-{n}-{i}");
        let args = loadgen_args(n, &hold, &["--no-chat-cost"]);
        d.measured(run, &label, "idle", &args, PhasesOf::Report(one_phase)).await?;
        d.stop(run, &label);
    }
    Ok(())
}

/// `mino-loadgen idle`'s arguments for `n` sockets held `hold`, plus `extra`.
fn loadgen_args(n: u32, hold: &str, extra: &[&str]) -> Vec<String> {
    let mut args =
        strings(["--bots".to_owned(), n.to_string(), "--ramp".into(), "1000".into(), "--hold".into(), hold.into()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}
