//! Section 8, criterion's micro-benchmarks (`cargo bench -p mino-benches`),
//! and their estimates collected into `criterion.json`.

use crate::analysis::round;
use crate::raw::{self, Benchmark, Criterion};
use crate::runner::Run;
use std::path::Path;
use std::time::SystemTime;

/// Runs the benchmarks; their output goes to `criterion.txt`.
///
/// Errors: results could not be written.
pub async fn run(run: &mut Run) -> anyhow::Result<()> {
    run.log("criterion micro-benchmarks");
    let started = SystemTime::now();
    let mut args: Vec<String> = ["bench", "-p", "mino-benches", "--benches", "--"].map(String::from).to_vec();
    args.extend(run.plan.criterion_args.iter().cloned());
    run.status("cargo bench -p mino-benches");
    let log = run.paths.raw.join("criterion.txt");
    if !run.command("criterion", "cargo", &args, Some(&log)).await? {
        run.log(&format!("criterion failed: see {}", log.display()));
    }
    // Criterion writes under the target folder that CARGO_TARGET_DIR names
    // (`Run::command` names the runner's).
    let found = collect(&crate::runner::target_root().join("criterion"), started);
    raw::write(&run.paths.raw.join("criterion.json"), &Criterion { benchmarks: found })
}

/// Criterion's estimates written at or after `since` under `root`
/// (`**/new/{benchmark,estimates}.json`), sorted by id.
pub fn collect(root: &Path, since: SystemTime) -> Vec<Benchmark> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_owned()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            }
        }
        if dir.file_name().is_some_and(|n| n == "new") {
            out.extend(benchmark(&dir, since));
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

/// One benchmark's estimates in `dir` (its `new/` folder), if written since `since`.
fn benchmark(dir: &Path, since: SystemTime) -> Option<Benchmark> {
    let est_path = dir.join("estimates.json");
    if std::fs::metadata(&est_path).and_then(|m| m.modified()).ok()? < since {
        return None;
    }
    let read = |p: &Path| -> Option<serde_json::Value> { serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok() };
    let (bench, est) = (read(&dir.join("benchmark.json"))?, read(&est_path)?);
    let point = |k: &str| est[k]["point_estimate"].as_f64();
    let ci = &est["mean"]["confidence_interval"];
    Some(Benchmark {
        id: bench["full_id"].as_str()?.to_owned(),
        median_ns: round(point("median")?, 1),
        mean_ns: round(point("mean")?, 1),
        mean_ci_ns: [round(ci["lower_bound"].as_f64()?, 1), round(ci["upper_bound"].as_f64()?, 1)],
        elements: bench["throughput"]["Elements"].as_u64(),
    })
}
