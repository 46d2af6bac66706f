//! Section 12, through nginx with TLS: the shards reached over loopback TCP
//! against Unix sockets, alternating runs, medians.

use super::fmt::{count, f1, f2, ratio, table, DASH};
use super::verdict::{JUDGE_NOTE, MEASURED, SATURATED, SATURATED_PCT};
use super::{Report, ReportError};
use crate::raw::{CpuPerFrame, NginxKind, NginxRun, Runs};

/// One figure of a kind's runs.
type Pick = fn(&NginxKind) -> &Runs;

/// A run's verdict: the loadgen's own judgement, qualified when the whole
/// machine was saturated.
fn nginx_verdict(r: &NginxRun) -> &'static str {
    if !r.judgeable {
        JUDGE_NOTE
    } else if r.machine_busy_pct >= f64::from(SATURATED_PCT) {
        SATURATED
    } else {
        MEASURED
    }
}

/// `user / sys / **total**` µs a frame.
fn per_frame(c: &CpuPerFrame) -> String {
    format!("{} / {} / **{}**", f2(Some(c.user_us_per_frame)), f2(Some(c.sys_us_per_frame)), f2(Some(c.us_per_frame)))
}

/// Whether the runs of one kind spread over the other's: noise moved the
/// figure as much as the upstream did.
fn overlap(t: &Runs, u: &Runs) -> bool {
    let min = |r: &Runs| r.runs.iter().copied().reduce(f64::min).unwrap_or(f64::NAN);
    let max = |r: &Runs| r.runs.iter().copied().reduce(f64::max).unwrap_or(f64::NAN);
    min(t) <= max(u) && min(u) <= max(t)
}

/// `median (run, run, ...)`.
fn with_runs(r: &Runs) -> String {
    let each: Vec<String> = r.runs.iter().map(|v| f2(Some(*v))).collect();
    format!("{} ({})", f2(Some(r.median)), each.join(", "))
}

impl Report {
    pub(super) fn nginx_section(&mut self) -> Result<Vec<String>, ReportError> {
        let mut out =
            vec!["## 12. Through nginx with TLS: loopback TCP against Unix sockets".to_owned(), String::new()];
        let (runs, cmp) = (&self.raw.nginx_runs, self.raw.nginx.as_ref());
        let (Some(first), Some(cmp)) = (runs.first(), cmp) else {
            out.extend(["Not run.".to_owned(), String::new()]);
            return Ok(out);
        };
        let (Some(tcp), Some(unix)) = (&cmp.tcp, &cmp.unix) else {
            return Err(ReportError::Incomplete("nginx/compare.json lacks the tcp or the unix runs".into()));
        };
        let o = &self.raw.original.unix_socket;
        let bots = first.bots;
        out.extend([
            format!(
                "The nginx section (`benches/src/sections/nginx.rs`; `deploy/bench-nginx.sh` runs it alone): \
                 Redis, two shards and nginx as shipped (the template rendered by \
                 `deploy/nginx/render.sh`, TLS with a self-signed certificate, `worker_processes {}`), {} walker bots \
                 over `wss://` through nginx; nginx reaches the shards over 127.0.0.1 TCP in one kind of run and over \
                 Unix sockets (`--listen unix:PATH`, `server unix:PATH` upstreams) in the other, the kinds \
                 alternating so the machine's other load falls on both. CPU per delivered frame: user + system time \
                 of the shard processes, and of the nginx workers, over the hold (`/proc/PID/stat`), divided by the \
                 frames the bots received in it. The load average (`uptime`, 1 / 5 / 15 min) is taken before and \
                 after each run. Original: {}; {}.",
                first.nginx_workers,
                count(bots as f64),
                o.setup,
                o.note
            ),
            String::new(),
        ]);
        let rows: Vec<Vec<String>> = runs
            .iter()
            .map(|r| {
                vec![
                    r.upstream.clone(),
                    count(r.connected as f64),
                    count(r.frames_per_s_delivered),
                    per_frame(&r.shards),
                    per_frame(&r.nginx),
                    f2(Some(r.shards.cores)),
                    f2(Some(r.nginx.cores)),
                    f1(Some(r.snapshot_gap_ms.p95)),
                    f1(Some(r.relayed_snapshot_gap_ms.p95)),
                    format!("{:.0} %", r.loadgen_cpu_pct),
                    format!("{:.0} %", r.machine_busy_pct),
                    format!("{} → {}", r.load_average_before, r.load_average_after),
                    nginx_verdict(r).into(),
                ]
            })
            .collect();
        out.extend(["Each run, in the order run:".to_owned(), String::new()]);
        out.extend(table(
            &[
                "upstream",
                "bots connected",
                "frames / s delivered",
                "shards user / sys / total µs a frame",
                "nginx user / sys / total µs a frame",
                "shard cores",
                "nginx cores",
                "own gap p95 ms",
                "relayed gap p95 ms",
                "loadgen CPU",
                "machine busy",
                "load average before → after",
                "verdict",
            ],
            &rows,
        ));
        let unix_over_tcp = cmp.unix_over_tcp.clone().unwrap_or_default();
        let shard_overlap = overlap(&tcp.shard_us_per_frame, &unix.shard_us_per_frame);
        let mut mrows = Vec::new();
        let medians: [(&str, Pick, &str); 2] = [
            ("shard_us_per_frame", |k| &k.shard_us_per_frame, "shards, µs a frame"),
            ("nginx_us_per_frame", |k| &k.nginx_us_per_frame, "nginx, µs a frame"),
        ];
        for (name, get, label) in medians {
            let (t, u) = (get(tcp), get(unix));
            mrows.push(vec![
                label.to_owned(),
                with_runs(t),
                with_runs(u),
                unix_over_tcp.get(name).map_or(DASH.into(), |r| format!("{r:.2}×")),
                if name.starts_with("shard") {
                    format!("{:.2}× (about 30 % less)", o.server_cpu_per_frame_ratio)
                } else {
                    format!("{DASH} (not published)")
                },
                if overlap(t, u) { "yes: the machine's noise is as large as the difference" } else { "no" }.into(),
            ]);
        }
        let parts: [(Pick, &str); 4] = [
            (|k| &k.shard_user_us_per_frame, "shards, user µs a frame"),
            (|k| &k.shard_sys_us_per_frame, "shards, system µs a frame"),
            (|k| &k.nginx_user_us_per_frame, "nginx, user µs a frame"),
            (|k| &k.nginx_sys_us_per_frame, "nginx, system µs a frame"),
        ];
        for (get, label) in parts {
            let (t, u) = (get(tcp).median, get(unix).median);
            mrows.push(vec![
                label.to_owned(),
                f2(Some(t)),
                f2(Some(u)),
                ratio(Some(u), Some(t)),
                DASH.into(),
                String::new(),
            ]);
        }
        out.extend(["", "Medians (each run in brackets):", ""].map(String::from));
        out.extend(table(
            &[
                "CPU per delivered frame",
                "loopback TCP",
                "Unix socket",
                "Unix ÷ TCP",
                "original Unix ÷ TCP",
                "runs of the two kinds overlap",
            ],
            &mrows,
        ));
        if let Some(r) = unix_over_tcp.get("shard_us_per_frame") {
            self.summarize(
                format!(
                    "server CPU per delivered frame, Unix socket ÷ loopback TCP, through nginx (TLS), {} players",
                    count(bots as f64)
                ),
                format!("{:.2}× (no nginx)", o.server_cpu_per_frame_ratio),
                format!(
                    "{r:.2}× ({} ÷ {} µs)",
                    f2(Some(unix.shard_us_per_frame.median)),
                    f2(Some(tcp.shard_us_per_frame.median))
                ),
                ratio(Some(*r), Some(o.server_cpu_per_frame_ratio)),
                if shard_overlap { "measured (runs overlap: noise)" } else { MEASURED }.into(),
            );
        }
        out.push(String::new());
        Ok(out)
    }
}
