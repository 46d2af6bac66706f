//! Section 1, the snapshot gap against players (one shard, two shards and
//! Redis, each step in detail), and the observations the steps call for.

use super::fmt::{count, f1, f2, general, kib, pct, ratio, table, DASH};
use super::load::Sampled;
use super::verdict::{self, other_load, p95, p99, shard_max, shard_mean, shard_sum, JUDGE_NOTE};
use super::Report;
use mino_loadgen::report::StepReport;
use std::collections::{BTreeMap, BTreeSet};

/// The steps of a run by their player count.
pub(super) fn by_players(steps: &[Sampled<StepReport>]) -> BTreeMap<u64, &Sampled<StepReport>> {
    steps.iter().map(|s| (s.0.players as u64, s)).collect()
}

impl Report {
    pub(super) fn gap_section(&mut self) -> Vec<String> {
        let orig = &self.raw.original.gap_p95_ms;
        let o: BTreeMap<u64, _> = orig.rows.iter().map(|r| (r.players, r)).collect();
        let (one, two) = (by_players(&self.raw.one), by_players(&self.raw.two));
        let players: BTreeSet<u64> = o.keys().chain(one.keys()).chain(two.keys()).copied().collect();
        let mut rows = Vec::new();
        let mut summary = None;
        for n in players {
            let orow = o.get(&n);
            let theirs = match orow {
                None if n > 2000 => format!("{DASH} (invalid, not published)"),
                None => DASH.into(),
                Some(r) if r.judgeable => general(r.p95_ms),
                Some(r) => format!("{} ({JUDGE_NOTE})", general(r.p95_ms)),
            };
            let s1 = one.get(&n).map(|s| &s.0.measured);
            let s2 = two.get(&n).map(|s| &s.0.measured);
            rows.push(vec![
                count(n as f64),
                theirs,
                s1.map_or("not run".into(), |s| {
                    format!("{} / {}", f1(p95(&s.snapshot_gap_ms)), f1(p99(&s.snapshot_gap_ms)))
                }),
                s1.map_or(String::new(), |s| verdict::of(s).into()),
                s2.map_or("not run".into(), |s| {
                    format!("{} / {}", f1(p95(&s.snapshot_gap_ms)), f1(p95(&s.relayed_snapshot_gap_ms)))
                }),
                s2.map_or(String::new(), |s| verdict::of(s).into()),
                match (s2, orow) {
                    (Some(s), Some(r)) => ratio(p95(&s.snapshot_gap_ms), Some(r.p95_ms)),
                    _ => DASH.into(),
                },
            ]);
            if let (1000, Some(s), Some(_)) = (n, s2, orow) {
                let g = p95(&s.snapshot_gap_ms);
                summary = Some((format!("{} ms", f1(g)), ratio(g, Some(58.0)), verdict::of(s).to_owned()));
            }
        }
        let setup = orig.setup.clone();
        if let Some((ours, r, v)) = summary {
            self.summarize("snapshot gap p95 at 1,000 players, two processes".into(), "58 ms".into(), ours, r, v);
        }
        let mut out = vec![
            "## 1. Snapshot gap p95 against players".to_owned(),
            String::new(),
            format!(
                "The gap between consecutive snapshots a bot receives; 50 ms is one tick at 20 Hz. Ours: one shard \
                 alone, and two shards sharing the place through Redis with the bots split evenly (own = the bot's \
                 shard, relayed = the other shard's snapshots forwarded through Redis). Original: {setup}."
            ),
            String::new(),
        ];
        out.extend(table(
            &[
                "players",
                "original p95 ms",
                "ours one shard p95 / p99 ms",
                "verdict",
                "ours two shards own p95 / relayed p95 ms",
                "verdict",
                "two shards ÷ original",
            ],
            &rows,
        ));
        out.extend(
            [
                "",
                "![snapshot gap p95, ours and the original](results/gap-vs-original.svg)",
                "",
                "The loadgen's own plots of each run: [one shard](results/gap-one-shard.svg), \
                 [two shards + Redis](results/gap-two-shards.svg).",
                "",
            ]
            .map(String::from),
        );
        out.extend(self.step_detail("One shard, per step", &self.raw.one, false));
        out.extend(self.step_detail(
            "Two shards + Redis, per step (server figures summed or worst of the two shards)",
            &self.raw.two,
            true,
        ));
        out
    }

    fn step_detail(&self, title: &str, steps: &[Sampled<StepReport>], clustered: bool) -> Vec<String> {
        if steps.is_empty() {
            return vec![format!("**{title}**: not run."), String::new()];
        }
        let mut head = vec![
            "players",
            "connected",
            "busy",
            "errors",
            "own gap p50 / p95 / p99 / max ms",
            "bots' ticks/s",
            "server ticks/s",
            "late ticks",
            "writes / socket / tick",
            "server cores",
            "RSS / player",
            "loadgen CPU",
            "machine CPU",
            "other load, cores",
            "shard run-queue wait",
            "verdict",
        ];
        if clustered {
            head.splice(5..5, ["relayed gap p95 ms", "relay lag p50 / p99 ms", "Redis cores"]);
        }
        let mut rows = Vec::new();
        for (s, w) in steps {
            let (m, w) = (&s.measured, w.as_ref());
            let g = &m.snapshot_gap_ms;
            let late = match (shard_sum(w, |s| Some(s.ticks_late as f64)), shard_sum(w, |s| Some(s.ticks as f64))) {
                (Some(l), Some(t)) if w.is_some() => format!("{l} of {t}"),
                _ => DASH.into(),
            };
            let mut row = vec![
                count(s.players as f64),
                m.connected.to_string(),
                m.busy.to_string(),
                m.errors.to_string(),
                format!("{} / {} / {} / {}", f1(Some(g.p50)), f1(Some(g.p95)), f1(Some(g.p99)), f1(Some(g.max))),
                f2(Some(m.ticks_per_s)),
                f2(shard_mean(w, |s| Some(s.ticks_per_s))),
                late,
                f2(shard_mean(w, |s| s.writes_per_socket_tick)),
                f2(m.server.as_ref().map(|s| s.cores)),
                kib(m.server.as_ref().map(|s| s.rss_per_player_bytes as f64)),
                format!("{:.0} %", m.loadgen_cpu_pct),
                format!("{:.0} %", m.machine_cpu_pct),
                f2(Some(other_load(m, w, self.cores))),
                pct(shard_max(w, |s| s.runqueue_wait_share)),
                verdict::of(m).into(),
            ];
            if clustered {
                let lag = |q: fn(&crate::raw::Quantiles) -> Option<f64>| shard_max(w, |s| q(&s.relay_lag_ms));
                row.splice(
                    5..5,
                    [
                        f1(p95(&m.relayed_snapshot_gap_ms)),
                        format!("{} / {}", f1(lag(|q| q.p50)), f1(lag(|q| q.p99))),
                        f2(w.and_then(|w| w.redis.as_ref()).map(|r| r.cpu_cores)),
                    ],
                );
            }
            rows.push(row);
        }
        let mut out = vec![format!("**{title}**"), String::new()];
        out.extend(table(&head, &rows));
        out.push(String::new());
        out
    }

    /// Notes the figures call for, found in the data (not written by hand).
    pub(super) fn observations(&self) -> Vec<String> {
        let mut notes = Vec::new();
        for (s, w) in &self.raw.two {
            let Some(w) = w else { continue };
            for (name, sh) in &w.shards {
                let Some(fps) = sh.frames_per_socket_tick.filter(|f| *f < 1.95) else { continue };
                notes.push(format!(
                    "Two shards at {} players: shard {name}'s sockets got {fps:.2} frames a tick instead of about \
                     2.02 (own + relayed + pongs). Relayed snapshots reached it late (relay lag p99 {} ms, above one \
                     tick), and a shard keeps only the newest relayed snapshot of each shard until its next tick, so \
                     late ones are replaced, uncounted: `mino_relay_dropped_total` rose by {}. Relayed gap p95 {} ms \
                     against {} ms for own snapshots.",
                    count(s.players as f64),
                    f1(sh.relay_lag_ms.p99),
                    sh.relay_dropped,
                    f1(p95(&s.measured.relayed_snapshot_gap_ms)),
                    f1(p95(&s.measured.snapshot_gap_ms)),
                ));
            }
        }
        let first_late = self.raw.one.iter().find_map(|(s, w)| {
            let sh = w.as_ref()?.shards.get("a")?;
            (sh.ticks > 0 && sh.ticks_late as f64 / sh.ticks as f64 > 0.05).then_some((s, sh))
        });
        if let Some((s, sh)) = first_late {
            let m = &s.measured;
            notes.push(format!(
                "One shard starts ticking late at {} players ({} of {} ticks late, {:.2} ticks/s) while it uses {} of \
                 a core: the machine is {:.0} % busy with the loadgen at {:.0} %, and the shard waits for a CPU {} of \
                 the time, so the two cores, not the shard's own work, set this limit here.",
                count(s.players as f64),
                sh.ticks_late,
                sh.ticks,
                sh.ticks_per_s,
                f2(sh.cpu_cores),
                m.machine_cpu_pct,
                m.loadgen_cpu_pct,
                pct(sh.runqueue_wait_share),
            ));
        }
        if notes.is_empty() {
            return Vec::new();
        }
        let mut out = vec!["## Observations".to_owned(), String::new()];
        out.extend(notes.into_iter().map(|n| format!("- {n}")));
        out.push(String::new());
        out
    }
}
