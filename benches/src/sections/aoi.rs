//! Section 9, area of interest: two shards + Redis at each count, the world
//! sized so the players make the plan's density a cell (the loadgen's
//! `--density` keeps them spread over it); at 1,000 players also at a
//! radius of 2 cells; the same world without area of interest as the
//! control row up to the plan's limit, past which whole-shard snapshots to
//! every socket cannot run on one machine.

use super::{secs, strings};
use crate::parts::{one_phase, Deployment, PhasesOf, Shards};
use crate::plan::{AOI_CELL, AOI_RADIUS_CELLS};
use crate::runner::Run;

/// Runs every count.
///
/// Errors: results could not be written.
pub async fn run(run: &mut Run) -> anyhow::Result<()> {
    let p = run.plan.aoi.clone();
    let walk = |n: u32, density: bool| {
        let mut a = strings([
            "--bots".to_owned(),
            n.to_string(),
            "--ramp".into(),
            run.plan.steps.ramp.to_string(),
            "--duration".into(),
            secs(p.hold),
        ]);
        if density {
            a.extend(["--density".to_owned(), format!("{}", p.density)]);
        }
        a
    };
    for &n in &p.players {
        let side = ((f64::from(n) / p.density).sqrt().ceil() as u32) * AOI_CELL;
        let aoi = |radius_cells: u32| {
            strings([
                "--cell-size".to_owned(),
                AOI_CELL.to_string(),
                "--view-radius".into(),
                (AOI_CELL * radius_cells).to_string(),
                "--world-size".into(),
                side.to_string(),
                "--max-players".into(),
                n.to_string(),
            ])
        };
        let mut runs = vec![(format!("aoi-{n}-on"), aoi(AOI_RADIUS_CELLS), true)];
        if n == 1000 {
            runs.push((format!("aoi-{n}-on2"), aoi(2), true));
        }
        if n <= p.off_max {
            let off = strings(["--world-size".to_owned(), side.to_string(), "--max-players".into(), n.to_string()]);
            runs.push((format!("aoi-{n}-off"), off, false));
        }
        for (label, flags, density) in runs {
            run.log(&format!("{label}: {n} players on two shards, world {side} units"));
            let d = Deployment::two(run, &Shards::with(&flags)).await;
            d.measured(run, &label, "walk", &walk(n, density), PhasesOf::Report(one_phase)).await?;
            d.stop(run, &label);
        }
    }
    Ok(())
}
