//! Section 5, players arriving at a rate on one shard.

use super::fmt::{count, f1, fixed, general, ratio, table, DASH};
use super::verdict::{self, p95};
use super::Report;

impl Report {
    pub(super) fn arrivals_section(&mut self) -> Vec<String> {
        let mut out = vec!["## 5. Arrivals".to_owned(), String::new()];
        let Some(r) = &self.raw.arrivals else {
            out.extend(["Not run.".to_owned(), String::new()]);
            return out;
        };
        let oa = &self.raw.original.arrivals;
        let v = verdict::of(&r.measured).to_owned();
        let peak_mb = r.measured.server.as_ref().map(|s| s.rss_peak_bytes as f64 / 1e6);
        let wl = &r.measured.welcome_ms;
        out.extend([
            format!(
                "`mino-loadgen arrivals`: {} players arriving at {}/s on one shard (busy rule off), one join attempt \
                 each. A join that gets no Welcome, Busy or Error within the 10 s join timeout counts as timed out.",
                count(r.bots as f64),
                general(r.rate_per_s)
            ),
            String::new(),
        ]);
        let s = String::new;
        let rows = vec![
            vec![
                "arrivals".into(),
                format!("{} at about {}/s", count(oa.players as f64), oa.rate_per_s),
                format!("{} at {}/s achieved", count(r.bots as f64), general(r.achieved_rate_per_s)),
                s(),
                s(),
            ],
            vec![
                "joins timed out".into(),
                format!("{} before the fix, {} after", oa.timed_out_before, oa.timed_out_after),
                format!("**{}**", r.timed_out),
                s(),
                v.clone(),
            ],
            vec!["admitted".into(), "all".into(), count(r.admitted as f64), s(), v.clone()],
            vec![
                "welcome latency p50 / p95 / p99 / max".into(),
                DASH.into(),
                format!("{} / {} / {} / {} ms", f1(Some(wl.p50)), f1(Some(wl.p95)), f1(Some(wl.p99)), f1(Some(wl.max))),
                s(),
                v.clone(),
            ],
            vec![
                "server memory (peak RSS)".into(),
                format!("{} MB before, {} MB after", oa.memory_before_mb, oa.memory_after_mb),
                peak_mb.map_or(DASH.into(), |p| format!("{} MB", fixed(p, 0))),
                ratio(peak_mb, Some(oa.memory_after_mb.f())),
                v.clone(),
            ],
            vec![
                "snapshot gap p95 after the arrivals".into(),
                DASH.into(),
                format!("{} ms", f1(p95(&r.measured.snapshot_gap_ms))),
                s(),
                v.clone(),
            ],
        ];
        out.extend(table(&["figure", "original", "ours", "ours ÷ original", "verdict"], &rows));
        let (joins, ours_timed_out) = (
            format!(
                "joins timed out, players arriving (original {} at ~{}/s; ours {} at {}/s)",
                count(oa.players as f64),
                oa.rate_per_s,
                count(r.bots as f64),
                general(r.rate_per_s)
            ),
            r.timed_out.to_string(),
        );
        let memory = (
            format!("{} MB", oa.memory_after_mb),
            peak_mb.map_or(DASH.into(), |p| format!("{} MB (peak)", fixed(p, 0))),
            ratio(peak_mb, Some(oa.memory_after_mb.f())),
        );
        self.summarize(joins, "0".into(), ours_timed_out, DASH.into(), v.clone());
        self.summarize("server memory after those arrivals (ours: peak RSS)".into(), memory.0, memory.1, memory.2, v);
        out.push(String::new());
        out
    }
}
