//! Section 3, ticks per second of one shard at the highest counts.

use super::fmt::{count, f1, f2, pct, ratio, table, DASH};
use super::gap::by_players;
use super::verdict;
use super::Report;
use std::collections::{BTreeMap, BTreeSet};

impl Report {
    pub(super) fn ticks_section(&mut self) -> Vec<String> {
        let orig = &self.raw.original.ticks_per_s;
        let o: BTreeMap<u64, _> = orig.rows.iter().map(|r| (r.players, r)).collect();
        let one = by_players(&self.raw.one);
        let players: BTreeSet<u64> = o.keys().copied().chain(one.keys().copied().filter(|n| *n >= 1000)).collect();
        let (mut rows, mut summary) = (Vec::new(), Vec::new());
        for n in players {
            let orow = o.get(&n);
            let (s, w) = match one.get(&n) {
                Some((s, w)) => (Some(&s.measured), w.as_ref()),
                None => (None, None),
            };
            let sh = w.and_then(|w| w.shards.get("a"));
            let late = sh.map_or(DASH.into(), |sh| {
                format!("{} ({:.1} %)", sh.ticks_late, 100.0 * sh.ticks_late as f64 / sh.ticks.max(1) as f64)
            });
            rows.push(vec![
                count(n as f64),
                f1(orow.map(|r| r.loopback_tcp)),
                f1(orow.map(|r| r.unix_socket)),
                sh.map_or("not run".into(), |sh| format!("**{}**", f2(Some(sh.ticks_per_s)))),
                late,
                sh.map_or(DASH.into(), |sh| sh.ticks_skipped.to_string()),
                f2(sh.map(|sh| sh.tick_ms_mean)),
                s.map_or(DASH.into(), |s| f2(Some(s.ticks_per_s))),
                f2(sh.and_then(|sh| sh.cpu_cores)),
                pct(sh.and_then(|sh| sh.runqueue_wait_share)),
                s.map_or(DASH.into(), |s| format!("{:.0} %", s.loadgen_cpu_pct)),
                s.map_or(DASH.into(), |s| format!("{:.0} %", s.machine_cpu_pct)),
                s.map_or(String::new(), |s| verdict::of(s).into()),
                ratio(sh.map(|sh| sh.ticks_per_s), orow.map(|r| r.loopback_tcp)),
            ]);
            if let (Some(sh), Some(orow), Some(s)) = (sh, orow, s) {
                summary.push([
                    format!("ticks per second at {} players, one process, loopback", count(n as f64)),
                    f1(Some(orow.loopback_tcp)),
                    f2(Some(sh.ticks_per_s)),
                    ratio(Some(sh.ticks_per_s), Some(orow.loopback_tcp)),
                    verdict::of(s).into(),
                ]);
            }
        }
        let mut out = vec![
            "## 3. Ticks per second at the highest counts".to_owned(),
            String::new(),
            format!(
                "One shard process, busy rule off. Server ticks/s from `mino_ticks_total` deltas over the hold; late \
                 ticks: started more than a fifth of a period late (`mino_ticks_late_total`); skipped: scheduled \
                 ticks dropped after a stall (never replayed). Bots' ticks/s: own-shard snapshots each bot received \
                 per second. Original: {}. Here the loadgen shares the same two cores, so past the point where it \
                 passes 70 % CPU the figures say more about the machine than about the server.",
                orig.setup
            ),
            String::new(),
        ];
        out.extend(table(
            &[
                "players",
                "original loopback TCP",
                "original Unix socket",
                "ours server ticks/s",
                "late ticks",
                "skipped",
                "mean tick work ms",
                "bots' ticks/s",
                "shard cores",
                "shard run-queue wait",
                "loadgen CPU",
                "machine CPU",
                "verdict",
                "ours ÷ original (TCP)",
            ],
            &rows,
        ));
        out.extend(["", "![ticks per second](results/ticks-vs-original.svg)", ""].map(String::from));
        self.summary.extend(summary);
        out
    }
}
