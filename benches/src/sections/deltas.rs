//! Section 15, shared delta frames (issue 25): the trace of candidate
//! encodings (`delta_trace walk` and `crowd`), the crowd through the shard
//! core alone (`delta_cost --scenario crowd`, deltas and full), then the same binaries with
//! bots that take deltas (the default) against bots that do not (`--frames
//! full`, a client without the capability: the control row), alternating in
//! one run: 1,000 walkers on two shards + Redis with area of interest, the
//! same without it (whole shard), and a crowd standing in one cell.

use super::{secs, strings};
use crate::parts::{one_phase, Deployment, PhasesOf, Shards};
use crate::plan::{AOI_CELL, AOI_RADIUS_CELLS, TRACE_SHUFFLE};
use crate::runner::Run;

/// The frames a run's bots ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frames {
    /// Shared delta frames (the loadgen's default, as the browser's).
    Deltas,
    /// Full forms only (`--frames full`): the control.
    Full,
}

impl Frames {
    /// As the raw files name it: `deltas`, `full`.
    pub fn label(self) -> &'static str {
        match self {
            Frames::Deltas => "deltas",
            Frames::Full => "full",
        }
    }

    /// The pair in run `i`'s order (1-based): deltas first in odd runs, so
    /// that drift in the machine's load falls on both.
    pub fn order(i: u32) -> [Frames; 2] {
        if i % 2 == 1 {
            [Frames::Deltas, Frames::Full]
        } else {
            [Frames::Full, Frames::Deltas]
        }
    }
}

/// The runs with bots, by what they measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Two shards + Redis, area of interest (`--cell-size 100 --view-radius 400`), walkers at 4 a cell.
    Aoi,
    /// The same world without area of interest.
    Whole,
    /// Everyone standing in one cell.
    Crowd,
}

impl Kind {
    /// As the raw files name it: `aoi`, `whole`, `crowd`.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Aoi => "aoi",
            Kind::Whole => "whole",
            Kind::Crowd => "crowd",
        }
    }
}

/// The crowd's world, units a side (as the crowd section's).
const CROWD_SIDE: u32 = 2000;

/// Runs an offline bench `binary` with `args` and `--json` into the raw
/// folder as `label.json` (its output in `logs/label.log`); a failure is
/// logged, and the report shows the figures missing.
///
/// Errors: the command could not be recorded or started.
async fn offline(run: &Run, binary: &str, label: &str, mut args: Vec<String>) -> anyhow::Result<()> {
    let said = format!("{label}: {binary} {}", args.join(" "));
    run.log(&said);
    run.status(&said);
    let json = run.paths.raw.join(format!("{label}.json"));
    args.extend(["--json".to_owned(), json.to_string_lossy().into_owned()]);
    let log = run.paths.raw.join(format!("logs/{label}.log"));
    if !run.command(label, run.binary(binary), &args, Some(&log)).await? {
        run.log(&format!("{label}: {binary} failed (see {})", log.display()));
    }
    Ok(())
}

/// Runs the traces, then each kind's pairs `repeat` times.
///
/// Errors: results could not be written.
pub async fn run(run: &mut Run) -> anyhow::Result<()> {
    let p = run.plan.deltas.clone();
    for (game, name, players, extra) in [
        ("walk", "walk", p.trace_walk, Vec::new()),
        ("walk", "walk-uniform", p.trace_walk, strings(["--phase".to_owned(), "uniform".into()])),
        ("crowd", "crowd", p.trace_crowd, strings(["--shuffle".to_owned(), TRACE_SHUFFLE.to_string()])),
    ] {
        let mut args = strings([game.to_owned(), "--players".into(), players.to_string()]);
        args.extend(extra);
        offline(run, "delta_trace", &format!("deltas-trace-{name}"), args).await?;
    }
    // The crowd through the shard core alone: what the shards decide to send
    // it, apart from a machine that may not carry the bots (offline, seconds).
    for frames in [Frames::Deltas, Frames::Full] {
        let args = strings([
            "--scenario".to_owned(),
            "crowd".into(),
            "--players".into(),
            p.crowd.to_string(),
            "--shuffle".into(),
            TRACE_SHUFFLE.to_string(),
            "--frames".into(),
            frames.label().into(),
        ]);
        offline(run, "delta_cost", &format!("deltas-crowd-core-{}", frames.label()), args).await?;
    }
    let side = ((f64::from(p.walkers) / 4.0).sqrt().ceil() as u32) * AOI_CELL;
    for kind in [Kind::Aoi, Kind::Whole, Kind::Crowd] {
        let n = if kind == Kind::Crowd { p.crowd } else { p.walkers };
        for i in 1..=run.plan.repeat {
            for frames in Frames::order(i) {
                let label = format!("deltas-{}-{n}-{}-{i}", kind.label(), frames.label());
                let (flags, scenario, mut args) = match kind {
                    Kind::Aoi | Kind::Whole => {
                        let mut flags = Vec::new();
                        if kind == Kind::Aoi {
                            flags.extend(strings([
                                "--cell-size".to_owned(),
                                AOI_CELL.to_string(),
                                "--view-radius".into(),
                                (AOI_CELL * AOI_RADIUS_CELLS).to_string(),
                            ]));
                        }
                        flags.extend(strings([
                            "--world-size".to_owned(),
                            side.to_string(),
                            "--max-players".into(),
                            n.to_string(),
                        ]));
                        let mut args = strings([
                            "--bots".to_owned(),
                            n.to_string(),
                            "--ramp".into(),
                            run.plan.steps.ramp.to_string(),
                            "--duration".into(),
                            secs(p.hold),
                        ]);
                        if kind == Kind::Aoi {
                            args.extend(strings(["--density", "4", "--observers", "5%"]));
                        }
                        (flags, "walk", args)
                    }
                    Kind::Crowd => {
                        // The middle of the cell just past the world's
                        // centre (the centre is a corner of four cells).
                        let point = CROWD_SIDE / 2 + AOI_CELL / 2;
                        let flags = strings([
                            "--cell-size".to_owned(),
                            AOI_CELL.to_string(),
                            "--world-size".into(),
                            CROWD_SIDE.to_string(),
                            "--max-players".into(),
                            n.to_string(),
                            "--max-connections".into(),
                            (n + 100).to_string(),
                        ]);
                        let args = strings([
                            "--bots".to_owned(),
                            n.to_string(),
                            "--ramp".into(),
                            run.plan.steps.ramp.to_string(),
                            "--hold".into(),
                            secs(p.hold),
                            "--point".into(),
                            format!("{point},{point}"),
                            // Some of the crowd steps now and then, as the
                            // trace's crowd: a still crowd is sent nothing.
                            "--shuffle".into(),
                            TRACE_SHUFFLE.to_string(),
                        ]);
                        (flags, "crowd", args)
                    }
                };
                if frames == Frames::Full {
                    args.extend(strings(["--frames", "full"]));
                }
                run.log(&format!("{label}: {n} players on two shards, {} frames", frames.label()));
                let d = Deployment::two(run, &Shards::with(&flags)).await;
                d.measured(run, &label, scenario, &args, PhasesOf::Report(one_phase)).await?;
                d.stop(run, &label);
            }
        }
    }
    Ok(())
}
