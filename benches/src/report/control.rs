//! Section 7, the control rows: writes batched against one write per
//! frame, alternating runs, medians.

use super::fmt::{count, f1, f2, median, pct, ratio, table, DASH};
use super::load::Sampled;
use super::verdict::{self, other_load, p95, shard_max, shard_mean};
use super::Report;
use crate::raw::Window;
use mino_loadgen::report::WalkReport;

/// One figure of a run, read from its report and window.
type Figure = fn(&WalkReport, Option<&Window>, f64) -> Option<f64>;

/// How a figure is written.
type Format = fn(Option<f64>) -> String;

/// The control table's figures: name, how to read it, how to write it.
const FIGURES: [(&str, Figure, Format); 13] = [
    ("writes per socket per tick (server)", |_, w, _| shard_mean(w, |s| s.writes_per_socket_tick), f2),
    ("frames per socket per tick (server)", |_, w, _| shard_mean(w, |s| s.frames_per_socket_tick), f2),
    (
        "server CPU per delivered frame, user µs",
        |r, _, _| r.measured.server.as_ref().map(|s| s.cpu_per_frame_us.user),
        f2,
    ),
    (
        "server CPU per delivered frame, sys µs",
        |r, _, _| r.measured.server.as_ref().map(|s| s.cpu_per_frame_us.sys),
        f2,
    ),
    (
        "server CPU per delivered frame, total µs",
        |r, _, _| r.measured.server.as_ref().map(|s| s.cpu_per_frame_us.total),
        f2,
    ),
    ("server cores, both shards", |r, _, _| r.measured.server.as_ref().map(|s| s.cores), f2),
    ("own snapshot gap p95 ms", |r, _, _| p95(&r.measured.snapshot_gap_ms), f1),
    ("relayed snapshot gap p95 ms", |r, _, _| p95(&r.measured.relayed_snapshot_gap_ms), f1),
    ("connected", |r, _, _| Some(r.measured.connected as f64), |v| v.map_or(DASH.into(), count)),
    ("loadgen CPU %", |r, _, _| Some(r.measured.loadgen_cpu_pct), f1),
    ("machine CPU %", |r, _, _| Some(r.measured.machine_cpu_pct), f1),
    ("other load on the machine, cores", |r, w, cores| Some(other_load(&r.measured, w, cores)), f2),
    ("shard run-queue wait (worst shard), share of a core", |_, w, _| shard_max(w, |s| s.runqueue_wait_share), pct),
];

impl Report {
    pub(super) fn control_section(&mut self) -> Vec<String> {
        let mut out = vec!["## 7. Control: writes batched vs one write per frame".to_owned(), String::new()];
        if self.raw.control.is_empty() {
            out.extend(["Not run.".to_owned(), String::new()]);
            return out;
        }
        let ob = &self.raw.original.batching;
        let counts: Vec<String> = self.raw.control.keys().map(|n| count(*n as f64)).collect();
        let repeats = self.raw.control.values().map(|c| c.batched.len()).max().unwrap_or(0);
        out.extend([
            format!(
                "The same two-shard run at {} players, {repeats} time(s) each with every shard writing a socket's \
                 frames of a tick in one vectored write (batched, the default) and with `--unbatched-writes` (one \
                 write per frame), alternating B U, U B, ... so the machine's drift falls on both; medians. With two \
                 shards every socket gets two snapshots a tick (its own shard's and the relayed one), so unbatched \
                 means about two writes a socket a tick. Original: {}; they admitted {} players instead of {} on {} \
                 cores instead of {}.",
                counts.join(" and "),
                ob.note,
                count(ob.admitted_batched as f64),
                count(ob.admitted_unbatched as f64),
                ob.cores_batched,
                ob.cores_unbatched
            ),
            String::new(),
        ]);
        let pairs: Vec<(u64, super::load::Control)> = self.raw.control.iter().map(|(n, c)| (*n, c.clone())).collect();
        for (n, c) in pairs {
            out.extend(self.control_table(n, &c.batched, &c.unbatched));
        }
        out
    }

    fn control_table(&mut self, n: u64, b: &[Sampled<WalkReport>], u: &[Sampled<WalkReport>]) -> Vec<String> {
        let mut out = vec![format!("**{} players**", count(n as f64)), String::new()];
        if b.is_empty() || u.is_empty() {
            out.extend(["Incomplete: a mode did not run.".to_owned(), String::new()]);
            return out;
        }
        let cores = self.cores;
        let med = |runs: &[Sampled<WalkReport>], f: Figure| median(runs.iter().map(|(r, w)| f(r, w.as_ref(), cores)));
        let verdicts = |runs: &[Sampled<WalkReport>]| verdict::of_runs(runs.iter().map(|(r, _)| &r.measured));
        let ob = &self.raw.original.batching;
        let (cb_orig, cu_orig) = (ob.cores_batched.f(), ob.cores_unbatched.f());
        let mut rows = Vec::new();
        for (name, f, write) in FIGURES {
            let (vb, vu) = (med(b, f), med(u, f));
            let orig = if name.starts_with("server cores") {
                format!("{} batched, {} unbatched: {:.2}×", ob.cores_batched, ob.cores_unbatched, cu_orig / cb_orig)
            } else {
                String::new()
            };
            rows.push(vec![name.to_owned(), write(vb), write(vu), ratio(vu, vb), orig]);
        }
        rows.push(vec!["verdict".into(), verdicts(b), verdicts(u), String::new(), String::new()]);
        out.extend(table(
            &["figure", "batched (median)", "unbatched (median)", "unbatched ÷ batched", "original"],
            &rows,
        ));
        let total: Figure = |r, _, _| r.measured.server.as_ref().map(|s| s.cpu_per_frame_us.total);
        let server_cores: Figure = |r, _, _| r.measured.server.as_ref().map(|s| s.cores);
        let (vb, vu) = (med(b, total), med(u, total));
        let (cb, cu) = (med(b, server_cores), med(u, server_cores));
        self.summarize(
            format!("gain from batching writes at {} players: unbatched ÷ batched", count(n as f64)),
            format!("{:.2}× in cores (0.97 ÷ 0.65)", cu_orig / cb_orig),
            format!("{} in CPU per frame; {} in cores ({} ÷ {})", ratio(vu, vb), ratio(cu, cb), f2(cu), f2(cb)),
            DASH.into(),
            format!("{} / {}", verdicts(b), verdicts(u)),
        );
        out.extend(["", "Each run:", ""].map(String::from));
        let mut each = Vec::new();
        for (mode, runs) in [("batched", b), ("unbatched", u)] {
            for (i, (r, w)) in runs.iter().enumerate() {
                let w = w.as_ref();
                each.push(vec![
                    mode.to_owned(),
                    (i + 1).to_string(),
                    f2(shard_mean(w, |s| s.writes_per_socket_tick)),
                    f2(total(r, w, cores)),
                    f2(server_cores(r, w, cores)),
                    f1(p95(&r.measured.snapshot_gap_ms)),
                    f1(p95(&r.measured.relayed_snapshot_gap_ms)),
                    f2(Some(other_load(&r.measured, w, cores))),
                    verdict::of(&r.measured).into(),
                ]);
            }
        }
        out.extend(table(
            &[
                "writes",
                "run",
                "writes / socket / tick",
                "CPU µs / frame",
                "server cores",
                "own gap p95",
                "relayed gap p95",
                "other load, cores",
                "verdict",
            ],
            &each,
        ));
        out.push(String::new());
        out
    }
}
