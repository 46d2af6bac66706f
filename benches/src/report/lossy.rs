//! Section 16's loss figure (issue 28): both transports behind the test
//! kit's lossy link, from `lossy.json` (what the `lossy` binary writes).

use super::fmt::{count, f1, median, table, DASH};
use super::verdict::{JUDGE_NOTE, MEASURED};
use super::Report;
use crate::raw::{Lossy, LossyRun};

/// The goals for WebTransport behind the link: gap p99 and the
/// longest freeze p99, ms.
const GAP_P99_GOAL_MS: f64 = 110.0;
const FREEZE_P99_GOAL_MS: f64 = 160.0;

/// Whether every run held all its bots and its loadgen kept within its CPU.
fn judgeable(l: &Lossy, runs: &[&LossyRun]) -> bool {
    !runs.is_empty() && runs.iter().all(|r| r.judgeable && r.connected == u64::from(l.bots))
}

/// The median of one figure of `runs`, ms.
fn med(runs: &[&LossyRun], pick: fn(&LossyRun) -> f64) -> Option<f64> {
    median(runs.iter().map(|r| Some(pick(r))))
}

/// "met" or "not met".
fn word(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "not met"
    }
}

impl Report {
    /// The row of issue 28's figures table for the lossy link.
    pub(super) fn lossy_goal_row(&self) -> Vec<String> {
        let figure = "2 % loss each way, 40 ms round trip, 200 walkers: gap p99 and longest freeze p99".to_owned();
        let goal = format!("WebTransport ≤ {GAP_P99_GOAL_MS:.0} ms and ≤ {FREEZE_P99_GOAL_MS:.0} ms; websocket beside");
        let Some(l) = &self.raw.lossy else {
            return vec![figure, goal, DASH.into(), "not measured (`lossy` not run)".into()];
        };
        let of = |k: &str| -> Vec<&LossyRun> { l.runs.iter().filter(|r| r.kind == k).collect() };
        let (wt, ws) = (of("webtransport"), of("websocket"));
        let gap = |r: &LossyRun| r.snapshot_gap_ms.p99;
        let freeze = |r: &LossyRun| r.longest_freeze_ms.p99;
        let pair = |runs: &[&LossyRun]| format!("{} and {} ms", f1(med(runs, gap)), f1(med(runs, freeze)));
        // The controls beside the default, those this run has.
        let controls: Vec<(&str, Vec<&LossyRun>)> = [
            ("CUBIC without the window floor", "webtransport-no-floor"),
            ("`--webtransport-congestion bbr`", "webtransport-bbr"),
        ]
        .into_iter()
        .map(|(label, kind)| (label, of(kind)))
        .filter(|(_, runs)| !runs.is_empty())
        .collect();
        let beside: Vec<String> = controls.iter().map(|(label, runs)| format!("{label}: {}", pair(runs))).collect();
        let ours = format!("WebTransport {} ({}); websocket {}", pair(&wt), beside.join("; "), pair(&ws));
        let verdict = |runs: &[&LossyRun]| {
            let gap_met = med(runs, gap).is_some_and(|g| g <= GAP_P99_GOAL_MS);
            let freeze_met = med(runs, freeze).is_some_and(|f| f <= FREEZE_P99_GOAL_MS);
            format!("gap {}, freeze {}", word(gap_met), word(freeze_met))
        };
        let verdict = if !judgeable(l, &wt) { JUDGE_NOTE.to_owned() } else { format!("{}; {MEASURED}", verdict(&wt)) };
        vec![figure, goal, ours, verdict]
    }

    /// The lossy link's part of section 16: how, and each run.
    pub(super) fn lossy_part(&self) -> Vec<String> {
        let mut out = vec!["### Behind a lossy link".to_owned(), String::new()];
        let Some(l) = &self.raw.lossy else {
            out.extend(["Not run.".to_owned(), String::new()]);
            return out;
        };
        out.push(format!(
            "`lossy` (`benches/src/bin/lossy.rs`; `target/release/lossy --rounds 3 --out benches/results/raw`, \
             as root): one release shard as above, {} walkers, behind the test kit's lossy link \
             (`testkit/src/link.rs`: a private network namespace on loopback addresses, a TUN device whose \
             thread drops each packet either way with probability {} % and delays the rest {} ms each way, \
             a {} ms round trip, jitter {} ms; this kernel has no netem), the shard and the loadgen inside the \
             namespace, the loadgen dialling the link's far side. Runs alternate the kinds, {} s of hold \
             each: `websocket` (deltas over TCP: a lost segment holds every later frame until it is resent), \
             `webtransport` (view frames as datagrams, deltas since e855f8c: a lost one costs its tick, a \
             change of a cell at period 1 comes again in the next step's chain since 5f3b36d, and \
             a bot that finds a delta whose base it does not hold asks for its view whole; the shard's \
             defaults, CUBIC \
             with its window floored at 16 KiB, `--webtransport-window-floor-bytes`), \
             `webtransport-no-floor` (CUBIC as quinn has it, `--webtransport-window-floor-bytes 0`: a game's \
             flow is application-limited, so CUBIC never regrows a window that random loss cut, and at two \
             packets a frame sent after a loss waits for acknowledgements) and `webtransport-bbr` \
             (`--webtransport-congestion bbr`, quinn's experimental BBR, which does not take random loss for \
             congestion; with the default floor too, which BBR's own window keeps above). The longest freeze is \
             each bot's longest own-shard snapshot gap in each 10 s span of its session (spans start at its \
             Welcome; one cut short by the session's end is not counted), one sample a bot and span \
             (`loadgen/src/freeze.rs`), those ending in the hold; its p99 is over those samples. The link dropped {} of {} \
             packets ({:.2} %).",
            count(f64::from(l.bots)),
            l.loss_pct_each_way,
            l.rtt_ms / 2,
            l.rtt_ms,
            l.jitter_ms,
            l.hold_s,
            count(l.packets_dropped as f64),
            count((l.packets_passed + l.packets_dropped) as f64),
            100.0 * l.packets_dropped as f64 / (l.packets_passed + l.packets_dropped).max(1) as f64,
        ));
        out.push(String::new());
        let rows: Vec<Vec<String>> = l
            .runs
            .iter()
            .map(|r| {
                let errors = if r.error_kinds.is_empty() {
                    count(r.errors as f64)
                } else {
                    let kinds: Vec<String> = r.error_kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
                    format!("{} ({})", count(r.errors as f64), kinds.join(", "))
                };
                vec![
                    r.kind.clone(),
                    count(r.connected as f64),
                    f1(Some(r.snapshot_gap_ms.p95)),
                    f1(Some(r.snapshot_gap_ms.p99)),
                    f1(Some(r.snapshot_gap_ms.max)),
                    f1(Some(r.longest_freeze_ms.p50)),
                    f1(Some(r.longest_freeze_ms.p99)),
                    count(r.bytes_per_s_a_player),
                    errors,
                    format!("{:.0} %", r.loadgen_cpu_pct),
                    if r.judgeable { MEASURED.into() } else { JUDGE_NOTE.into() },
                ]
            })
            .collect();
        out.extend(table(
            &[
                "kind",
                "bots connected",
                "gap p95 ms",
                "gap p99 ms",
                "gap max ms",
                "longest freeze p50 ms",
                "longest freeze p99 ms",
                "bytes / s a player",
                "failures",
                "loadgen CPU",
                "verdict",
            ],
            &rows,
        ));
        out.push(String::new());
        out
    }
}
