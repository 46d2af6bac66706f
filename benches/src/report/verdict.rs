//! How a figure is judged, as the original judged its own: the loadgen's
//! verdict (not judgeable past 70 % of its CPU), qualified when the whole
//! machine was saturated; one verdict for repeated runs; and the figures
//! the verdicts read (gaps with samples, a window's shards, the other load).

use crate::raw::{ShardWindow, Window};
use mino_loadgen::report::{Measured, Verdict};
use mino_loadgen::Summary;

/// Machine busy share (all cores, percent) from which a measured figure is
/// qualified (the loadgen's own, which its table says too).
pub const SATURATED_PCT: u32 = mino_loadgen::report::SATURATED_PCT;

/// "not judgeable".
pub const JUDGE_NOTE: &str = "not judgeable";

/// "measured".
pub const MEASURED: &str = "measured";

/// "measured (machine saturated)".
pub const SATURATED: &str = mino_loadgen::report::SATURATED;

/// "interrupted": the run was cut short (Ctrl-C, an agent lost).
pub const INTERRUPTED: &str = "interrupted";

/// "nothing measured": no bot was connected at the phase's end.
pub const NOTHING: &str = "nothing measured";

/// "no frames": bots were connected, but none received a frame in a hold
/// that expects them (the loadgen then exits 4).
pub const NO_FRAMES: &str = "no frames";

/// Whether a verdict of [`of`] lets its figures be judged: measured, on a
/// saturated machine or not.
pub fn judgeable(verdict: &str) -> bool {
    verdict == MEASURED || verdict == SATURATED
}

/// The loadgen's verdict of a phase, qualified when the whole machine was
/// saturated while the loadgen itself stayed under its limit (the shards
/// then competed for CPU).
pub fn of(m: &Measured) -> &'static str {
    judge(m.verdict, m.machine_cpu_pct)
}

/// [`of`] from a verdict and the machine's busy share, percent.
pub fn judge(v: Verdict, machine_cpu_pct: f64) -> &'static str {
    v.qualified(machine_cpu_pct)
}

/// One verdict for repeated runs: all measured, or how many measured
/// nothing (no bot connected, or no frames), or how many were not judgeable, or how many were interrupted,
/// or how many ran on a saturated machine.
pub fn of_runs<'a>(reports: impl IntoIterator<Item = &'a Measured>) -> String {
    let v: Vec<&str> = reports.into_iter().map(of).collect();
    of_verdicts(&v)
}

/// [`of_runs`] from each run's verdict (one of this module's, as [`judge`]
/// gives them): a section whose runs are not the loadgen's reports (the
/// peer's, WebTransport's) judges its own runs and sums them up here.
pub fn of_verdicts(v: &[&str]) -> String {
    for empty in [NOTHING, NO_FRAMES] {
        let n = v.iter().filter(|x| **x == empty).count();
        if n > 0 {
            return format!("{empty} ({n} of {} runs)", v.len());
        }
    }
    let bad = v.iter().filter(|x| **x == JUDGE_NOTE).count();
    if bad > 0 {
        return format!("{JUDGE_NOTE} ({bad} of {} runs)", v.len());
    }
    let cut = v.iter().filter(|x| **x == INTERRUPTED).count();
    if cut > 0 {
        return format!("{INTERRUPTED} ({cut} of {} runs)", v.len());
    }
    match v.iter().filter(|x| **x == SATURATED).count() {
        0 => MEASURED.into(),
        sat => format!("measured ({sat} of {} runs on a saturated machine)", v.len()),
    }
}

/// The 95th percentile of `s`, None without samples.
pub fn p95(s: &Summary) -> Option<f64> {
    (s.count > 0).then_some(s.p95)
}

/// The 99th percentile of `s`, None without samples.
pub fn p99(s: &Summary) -> Option<f64> {
    (s.count > 0).then_some(s.p99)
}

/// The sum of a figure over a window's shards; None without a window or
/// when a shard lacks it.
pub fn shard_sum(w: Option<&Window>, f: impl Fn(&ShardWindow) -> Option<f64>) -> Option<f64> {
    w?.shards.values().map(f).sum()
}

/// The mean of a figure over the shards that have it.
pub fn shard_mean(w: Option<&Window>, f: impl Fn(&ShardWindow) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = w?.shards.values().filter_map(f).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The largest of a figure over the shards that have it.
pub fn shard_max(w: Option<&Window>, f: impl Fn(&ShardWindow) -> Option<f64>) -> Option<f64> {
    w?.shards.values().filter_map(f).reduce(f64::max)
}

/// Cores busy with neither the loadgen, the shards nor Redis during the
/// hold: the shared machine's noise.
pub fn other_load(m: &Measured, w: Option<&Window>, cores: f64) -> f64 {
    let mut busy = (m.machine_cpu_pct - m.loadgen_cpu_pct) / 100.0 * cores;
    busy -= m.server.as_ref().map_or(0.0, |s| s.cores);
    busy -= w.and_then(|w| w.redis.as_ref()).map_or(0.0, |r| r.cpu_cores);
    busy.max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(verdict: Verdict, machine_cpu_pct: f64) -> Measured {
        Measured { verdict, machine_cpu_pct, ..Measured::default() }
    }

    #[test]
    fn repeated_runs_name_the_worst_verdict_and_its_count() {
        let (ok, busy) = (run(Verdict::Measured, 50.0), run(Verdict::Measured, 99.0));
        assert_eq!(of_runs([&ok, &ok]), MEASURED);
        assert_eq!(of_runs([&ok, &busy]), "measured (1 of 2 runs on a saturated machine)");
        let cut = run(Verdict::Interrupted, 50.0);
        assert_eq!(of_runs([&ok, &cut, &busy]), "interrupted (1 of 3 runs)", "not a saturated machine");
        assert!(!judgeable(of(&cut)));
        let over = run(Verdict::NotJudgeable, 50.0);
        assert_eq!(of_runs([&cut, &over]), "not judgeable (1 of 2 runs)");
        let none = run(Verdict::NothingMeasured, 50.0);
        assert_eq!(of_runs([&over, &none]), "nothing measured (1 of 2 runs)");
        let silent = run(Verdict::NoFrames, 50.0);
        assert_eq!(of_runs([&ok, &silent, &over]), "no frames (1 of 3 runs)", "not measured");
        assert_eq!(of_verdicts(&[MEASURED, SATURATED, NOTHING]), "nothing measured (1 of 3 runs)", "not saturated");
        assert_eq!(of_verdicts(&[SATURATED, JUDGE_NOTE]), "not judgeable (1 of 2 runs)");
        assert!(!judgeable(of(&silent)));
    }
}
