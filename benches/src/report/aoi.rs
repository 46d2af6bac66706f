//! Section 9, area of interest against whole-shard snapshots, what the
//! observers saw, and the crowd against the view budget.

use super::fmt::{count, f1, f1u, f2, general, ratio, table, DASH};
use super::load::Sampled;
use super::verdict::{self, p95, shard_sum};
use super::Report;
use mino_loadgen::report::WalkReport;

impl Report {
    pub(super) fn aoi_section(&mut self) -> Vec<String> {
        let mut out = vec!["## 9. Area of interest".to_owned(), String::new()];
        if self.raw.aoi.is_empty() {
            out.extend(["Not run.".to_owned(), String::new()]);
            return out;
        }
        out.extend([
            "`mino-loadgen walk --density D` on two shards + Redis with `--cell-size 100 --view-radius 400` (a \
             radius of 4 cells), the world sized so the players make D a cell at each count (the loadgen keeps them \
             spread over it), against the same world without area of interest (whole-shard snapshots: every socket \
             gets every player) as the control, where that still runs; at 1,000 players also at a radius of 2 cells \
             (200 units; the server's default before it was 4), where whole cells bring a socket more players beyond \
             its radius. Each socket gets at most one view frame a shard a tick, its cells' items \
             (`schema/src/view.rs`; section 15 sets today's deltas against full forms); runs taken before protocol 4 \
             (the header names each run's commit) got protocol 3's frames, every due cell whole: a 52-byte header, 6 \
             bytes a cell, 10 a player (`schema/src/cell.rs` at those commits). Bytes a player a second are what the \
             bots received; server CPU a player \
             a tick is both shards' user + system time over the hold, over players times ticks; Redis from \
             `redis-cli INFO stats cpu commandstats` sampled with the shards (PUBLISH calls, every command, the CPU \
             Redis reports for itself); gaps are own-shard (first frame of a tick) and, with area of interest, \
             own-cell (frames listing the bot)."
                .to_owned(),
            String::new(),
        ]);
        let mut rows = Vec::new();
        for (n, runs) in &self.raw.aoi {
            for (run, label) in [
                (&runs.on, "area of interest"),
                (&runs.on2, "area of interest, radius 2 cells"),
                (&runs.off, "off (control)"),
            ] {
                match run {
                    Some(run) => rows.push(self.aoi_row(*n, label, run)),
                    None if label == "off (control)" => {
                        let mut row =
                            vec![count(*n as f64), label.into(), "not run (too many bytes for one machine)".into()];
                        row.extend(std::iter::repeat_n(String::new(), 9));
                        rows.push(row);
                    }
                    None => {}
                }
            }
        }
        out.extend(table(
            &[
                "players",
                "mode",
                "bytes / player / s",
                "server CPU / player / tick",
                "own gap p95 ms",
                "own-cell gap p95 ms",
                "relayed gap p95 ms",
                "late ticks",
                "Redis PUBLISH / s",
                "Redis commands / s",
                "Redis CPU, cores",
                "verdict",
            ],
            &rows,
        ));
        out.extend(
            ["", "Observers (a sample of the bots, `--observers`, 5 % or at least 20) with area of interest:", ""]
                .map(String::from),
        );
        let mut orows = Vec::new();
        for (n, runs) in &self.raw.aoi {
            for (run, suffix) in [(&runs.on, ""), (&runs.on2, " (radius 2 cells)")] {
                let Some(o) = run.as_ref().and_then(|(r, _)| r.measured.aoi.as_ref()?.observers.as_ref()) else {
                    continue;
                };
                let (e_ms, e_t) = (&o.view_enter_ms, &o.view_enter_ticks);
                orows.push(vec![
                    format!("{}{suffix}", count(*n as f64)),
                    o.observers.to_string(),
                    format!("{:.1}", o.players_in_view),
                    format!("{} / {}", f1(Some(e_ms.p50)), f1(Some(e_ms.p95))),
                    format!("{} / {}", f2(Some(e_t.p50)), f2(Some(e_t.p95))),
                    format!("{} ({} unseen)", count(o.view_enters as f64), o.view_enters_unseen),
                    o.pop_ins.to_string(),
                    o.blinks.to_string(),
                    f2(o.crop_ratio),
                    f1(Some(o.header_bytes_per_tick)),
                    f2(o.total_vs_ideal),
                ]);
            }
        }
        out.extend(table(
            &[
                "players",
                "observers",
                "players in view",
                "view enter p50 / p95 ms",
                "view enter p50 / p95 ticks",
                "entries",
                "pop-ins",
                "blinks",
                "crop (entries ÷ ideal)",
                "header bytes / tick",
                "all bytes ÷ ideal",
            ],
            &orows,
        ));
        out.extend(self.crowd_part());
        let at_1000 = self.raw.aoi.get(&1000);
        let on = at_1000.and_then(|r| r.on.as_ref()).map(|(r, _)| &r.measured);
        let off = at_1000.and_then(|r| r.off.as_ref()).map(|(r, _)| &r.measured);
        if let (Some(on), Some(off)) = (on, off) {
            if on.connected > 0 && off.connected > 0 {
                let b_on = on.bytes_per_s / on.connected as f64;
                let b_off = off.bytes_per_s / off.connected as f64;
                let v = verdict::of(on).to_owned();
                self.summarize(
                    "bytes a player a second at 1,000 players, area of interest ÷ off".into(),
                    DASH.into(),
                    format!("{} B/s ÷ {} B/s", count(b_on), count(b_off)),
                    ratio(Some(b_on), Some(b_off)),
                    v,
                );
            }
        }
        out.push(String::new());
        out
    }

    fn aoi_row(&self, n: u64, label: &str, (r, w): &Sampled<WalkReport>) -> Vec<String> {
        let (m, w) = (&r.measured, w.as_ref());
        let connected = m.connected as f64;
        let per_player = (connected > 0.0).then(|| m.bytes_per_s / connected);
        let ticks = m.ticks_per_s * m.seconds;
        let cpu_us = match &m.server {
            Some(s) if connected > 0.0 && ticks != 0.0 => {
                Some((s.cpu_user_s + s.cpu_sys_s) * 1e6 / (connected * ticks))
            }
            _ => None,
        };
        let late = shard_sum(w, |s| Some(s.ticks_late as f64));
        let all_ticks = shard_sum(w, |s| Some(s.ticks as f64));
        let redis = w.and_then(|w| w.redis.as_ref());
        let redis_cpu = redis.map(|r| r.info_cpu_cores.unwrap_or(r.cpu_cores));
        vec![
            count(n as f64),
            label.into(),
            per_player.map_or(DASH.into(), count),
            f1u(cpu_us, " µs"),
            f1(p95(&m.snapshot_gap_ms)),
            f1(m.aoi.as_ref().and_then(|a| p95(&a.own_cell_gap_ms))),
            f1(p95(&m.relayed_snapshot_gap_ms)),
            match (late, all_ticks) {
                (Some(l), Some(t)) if w.is_some() => format!("{l} of {t}"),
                _ => DASH.into(),
            },
            f1(redis.and_then(|r| r.publishes_per_s)),
            f1(redis.and_then(|r| r.commands_per_s)),
            f2(redis_cpu),
            verdict::of(m).into(),
        ]
    }

    /// The crowd rows of section 9: everyone in one cell, against the view budget.
    fn crowd_part(&self) -> Vec<String> {
        let Some((first, _)) = self.raw.crowd.values().next() else {
            return ["", "Crowd: not run.", ""].map(String::from).to_vec();
        };
        let [x, y] = first.point;
        let mut out = vec![
            String::new(),
            format!(
                "**Crowd** (`mino-loadgen crowd`): on two shards + Redis with area of interest, every bot walks to \
                 ({}, {}) and stands within {} units of it for the hold, all in one cell (`scale.sh` puts the point \
                 in the middle of the cell next to the world's centre, so the cell holds the whole crowd). The \
                 issue's goals: late ticks under 1 %, no socket closed as too slow, each socket's view-frame bytes \
                 within the view budget, which is an average (the server's default `--view-budget-bytes`, 8,192 \
                 bytes a tick): the byte figures are each socket's mean over the hold, p50 / p95 / max across \
                 sockets. When the crowd's own cell alone comes to more than the budget, the budget's ladder sends \
                 even that cell less often (never below every 8th tick; `server/src/shard/interest.rs`): the own gap \
                 below shows it.",
                count(f64::from(x)),
                count(f64::from(y)),
                general(f64::from(first.gather_radius))
            ),
            String::new(),
        ];
        let mut rows = Vec::new();
        for (n, (r, _)) in &self.raw.crowd {
            let late = r.late_ticks.as_ref();
            let budget = r.budget.as_ref();
            let per_tick = budget.map(|b| &b.cell_bytes_per_tick);
            let met = late.is_some_and(|l| l.late_share < 0.01)
                && r.too_slow.bots == 0
                && r.too_slow.server == Some(0)
                && budget.is_some_and(|b| b.within_budget);
            rows.push(vec![
                count(*n as f64),
                count(r.admitted as f64),
                format!("{} / {}", count(r.gathered as f64), count(r.gathered_at_end as f64)),
                match late {
                    Some(l) => format!("{} of {} ({:.1} %)", l.late, l.ticks, 100.0 * l.late_share),
                    None => format!("{DASH} of {DASH} (0.0 %)"),
                },
                format!("{} / {}", r.too_slow.bots, r.too_slow.server.map_or(DASH.into(), |s| s.to_string())),
                format!(
                    "{} / {} / {}",
                    f1(per_tick.map(|s| s.p50)),
                    f1(per_tick.map(|s| s.p95)),
                    f1(per_tick.map(|s| s.max))
                ),
                budget.map_or(DASH.into(), |b| count(b.budget_bytes as f64)),
                budget.map_or(DASH.into(), |b| b.bots_over_budget.to_string()),
                f1(budget.and_then(|b| b.server_bytes_per_socket_tick)),
                f1(p95(&r.measured.snapshot_gap_ms)),
                format!("{}; goals {}", verdict::of(&r.measured), if met { "met" } else { "not met" }),
            ]);
        }
        out.extend(table(
            &[
                "bots",
                "admitted",
                "gathered at start / end of hold",
                "late ticks",
                "closed as too slow (bots / server)",
                "cell bytes a socket a tick (its mean) p50 / p95 / max",
                "budget bytes",
                "bots over budget",
                "bytes the shards wrote a socket a tick",
                "own gap p95 ms",
                "verdict",
            ],
            &rows,
        ));
        out
    }
}
