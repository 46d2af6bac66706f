//! Section 16, WebTransport beside the websocket (issue 28): each run,
//! each kind's medians, and the figures with their goals.

use super::fmt::{count, f1, f2, kib, median, ratio, table, DASH};
use super::verdict::{of_verdicts, JUDGE_NOTE, MEASURED, SATURATED, SATURATED_PCT};
use super::Report;
use crate::raw::{CpuPerFrame, WebTransportRun};

/// A figure of a run.
type Pick = fn(&WebTransportRun) -> f64;

/// A figure as the tables write it.
type Show = fn(Option<f64>) -> String;

/// The gap goal on both transports, ms.
const GAP_GOAL_MS: f64 = 55.0;

/// A run's verdict: the loadgen's own, qualified when the whole machine
/// was saturated.
fn run_verdict(r: &WebTransportRun) -> &'static str {
    if !r.judgeable {
        JUDGE_NOTE
    } else if r.machine_busy_pct >= f64::from(SATURATED_PCT) {
        SATURATED
    } else {
        MEASURED
    }
}

/// One verdict for a figure's runs.
fn runs_verdict(runs: &[&WebTransportRun]) -> String {
    let v: Vec<&str> = runs.iter().map(|r| run_verdict(r)).collect();
    of_verdicts(&v)
}

/// `user / sys / **total**` µs a frame.
fn per_frame(c: &CpuPerFrame) -> String {
    format!("{} / {} / **{}**", f2(Some(c.user_us_per_frame)), f2(Some(c.sys_us_per_frame)), f2(Some(c.us_per_frame)))
}

/// The own gap p95 at the bots' sockets; None where the run timed none
/// (WebTransport, older runs).
fn socket_p95(r: &WebTransportRun) -> Option<f64> {
    (r.socket_gap_ms.count > 0).then_some(r.socket_gap_ms.p95)
}

/// Shard and nginx µs a frame together.
fn total_us(r: &WebTransportRun) -> f64 {
    r.shard.us_per_frame + r.nginx.as_ref().map_or(0.0, |n| n.us_per_frame)
}

/// A figure of a kind's runs: the median, and each run in brackets.
struct Figure {
    median: Option<f64>,
    runs: Vec<f64>,
}

impl Figure {
    fn of(runs: &[&WebTransportRun], pick: impl Fn(&WebTransportRun) -> f64) -> Figure {
        let runs: Vec<f64> = runs.iter().map(|r| pick(r)).collect();
        Figure { median: median(runs.iter().copied().map(Some)), runs }
    }

    /// `median (run, run, ...)` with `show` for each number.
    fn shown(&self, show: impl Fn(Option<f64>) -> String) -> String {
        if self.runs.is_empty() {
            return DASH.into();
        }
        let each: Vec<String> = self.runs.iter().map(|v| show(Some(*v))).collect();
        format!("{} ({})", show(self.median), each.join(", "))
    }
}

/// "met", "not met", or the reason there is no verdict.
fn goal(met: Option<bool>, verdict: &str) -> String {
    match met {
        None => "not measured".into(),
        Some(_) if verdict.starts_with(JUDGE_NOTE) => verdict.to_owned(),
        Some(true) => format!("met; {verdict}"),
        Some(false) => format!("not met; {verdict}"),
    }
}

impl Report {
    pub(super) fn webtransport_section(&mut self) -> Vec<String> {
        let mut out = vec!["## 16. WebTransport beside the websocket".to_owned(), String::new()];
        let runs = &self.raw.webtransport;
        let Some(first) = runs.first() else {
            out.extend(["Not run.".to_owned(), String::new()]);
            return out;
        };
        out.extend([
            format!(
                "The webtransport section (`benches/src/sections/webtransport.rs`): one release shard with area of \
                 interest (cells of 100, a view radius of 400, a world of 4 walkers a cell) and \
                 `--webtransport-listen`, {} walkers joining at 50 a second (`mino-loadgen walk --density 4`; not \
                 the issue's 1,000: on this machine 1,000 WebTransport bots joining at 100 a second got 630 \
                 welcomed, the rest timing out connecting) in three kinds of run alternating, their order \
                 rotating each repeat: `webtransport` (`--transport webtransport`: a \
                 session each to the shard's UDP port, trusting its certificate by the hash it offers at \
                 `/webtransport`; view frames as datagrams, deltas since e855f8c: the bots ask for datagram \
                 deltas, checking each delta's base and asking for a resync when one was missed; before, full \
                 forms), `websocket` (straight to the shard, plain \
                 TCP, deltas) and `websocket-nginx` (`wss://` through nginx as shipped, TLS: both encrypt, as \
                 QUIC does). The own gap at the socket (websockets only) is the same gap timed on the kernel's \
                 receive times of the bots' reads (`SO_TIMESTAMPNS`), which leaves most of the bots' own scheduling \
                 out; datagrams carry no such time here. CPU per delivered frame: user + system time of the shard, and of nginx's workers, \
                 over the hold (`/proc/PID/stat`), divided by the frames the bots received in it, a frame being a \
                 bot's view of one tick however many datagrams it came in (own-shard ticks a second × bots \
                 connected × the window). Memory per player: the shard's RSS at the window's end less before the \
                 bots joined, over the bots. The loadgen's WebTransport clients (quinn, an endpoint a bot) share \
                 the 2 cores with the shard. A shard on a saturated machine falls behind its 20 ticks a second \
                 and later catches up: a run's frames / s delivered below or above 20 a bot says it, and its \
                 CPU per frame is then less comparable. A WebTransport run in which fewer than 98 % of the bots \
                 were welcomed 20 s after the ramp is left out (the runner's log says so).",
                count(first.bots as f64)
            ),
            String::new(),
            "Each run (by run, then kind):".to_owned(),
            String::new(),
        ]);
        let rows: Vec<Vec<String>> = runs
            .iter()
            .map(|r| {
                vec![
                    r.kind.clone(),
                    count(r.connected as f64),
                    count(r.view_frames_per_s_delivered),
                    count(r.datagrams_per_s_sent),
                    per_frame(&r.shard),
                    r.nginx.as_ref().map_or(DASH.into(), per_frame),
                    f2(Some(total_us(r))),
                    f1(Some(r.snapshot_gap_ms.p95)),
                    f1(socket_p95(r)),
                    kib(Some(r.shard_rss_growth_per_player_bytes as f64)),
                    format!("{:.0} %", r.loadgen_cpu_pct),
                    format!("{:.0} %", r.machine_busy_pct),
                    format!("{} → {}", r.load_average_before, r.load_average_after),
                    run_verdict(r).into(),
                ]
            })
            .collect();
        out.extend(table(
            &[
                "kind",
                "bots connected",
                "frames / s delivered",
                "datagrams / s sent",
                "shard user / sys / total µs a frame",
                "nginx user / sys / total µs a frame",
                "shard + nginx µs a frame",
                "own gap p95 ms",
                "own gap p95 at the socket ms",
                "shard RSS a player",
                "loadgen CPU",
                "machine busy",
                "load average before → after",
                "verdict",
            ],
            &rows,
        ));
        let of = |kind: &str| -> Vec<&WebTransportRun> { runs.iter().filter(|r| r.kind == kind).collect() };
        let (wt, ws, wss) = (of("webtransport"), of("websocket"), of("websocket-nginx"));
        let mut mrows = Vec::new();
        let figures: [(&str, Pick, Show); 6] = [
            ("own gap p95, ms", |r| r.snapshot_gap_ms.p95, f1),
            ("own gap p95 at the socket, ms", |r| r.socket_gap_ms.p95, f1),
            ("shard, µs a frame", |r| r.shard.us_per_frame, f2),
            ("nginx, µs a frame", |r| r.nginx.as_ref().map_or(0.0, |n| n.us_per_frame), f2),
            ("shard + nginx, µs a frame", total_us, f2),
            ("shard RSS a player", |r| r.shard_rss_growth_per_player_bytes as f64, kib),
        ];
        for (label, pick, show) in figures {
            let nginx_only = label.starts_with("nginx");
            // Datagrams carry no kernel receive time here.
            let websocket_only = label.contains("at the socket");
            let row = [(&wt, false, false), (&ws, false, true), (&wss, true, true)].map(|(k, has_nginx, websocket)| {
                if (nginx_only && !has_nginx) || (websocket_only && !websocket) {
                    DASH.into()
                } else {
                    Figure::of(k, pick).shown(show)
                }
            });
            mrows.push(std::iter::once(label.to_owned()).chain(row).collect::<Vec<_>>());
        }
        out.extend(["", "Medians (each run in brackets):", ""].map(String::from));
        out.extend(table(&["figure", "webtransport", "websocket", "websocket through nginx (TLS)"], &mrows));
        let med = |k: &[&WebTransportRun], pick: fn(&WebTransportRun) -> f64| Figure::of(k, pick).median;
        let gap = |r: &WebTransportRun| r.snapshot_gap_ms.p95;
        let (wt_gap, wss_gap, ws_gap) = (med(&wt, gap), med(&wss, gap), med(&ws, gap));
        let (wt_cpu, wss_cpu) = (med(&wt, total_us), med(&wss, total_us));
        let (wt_verdict, wss_verdict) = (runs_verdict(&wt), runs_verdict(&wss));
        let both: Vec<&WebTransportRun> = wt.iter().chain(&wss).copied().collect();
        let players = count(first.bots as f64);
        let grows = [
            vec![
                format!("no loss, {players} walkers: gap p95, WebTransport"),
                format!("≤ {GAP_GOAL_MS:.0} ms"),
                f1(wt_gap),
                goal(wt_gap.map(|g| g <= GAP_GOAL_MS), &wt_verdict),
            ],
            vec![
                format!("no loss, {players} walkers: gap p95, websocket through nginx (straight: {})", f1(ws_gap)),
                format!("≤ {GAP_GOAL_MS:.0} ms"),
                match med(&wss, |r| r.socket_gap_ms.p95) {
                    Some(s) if wss.iter().all(|r| r.socket_gap_ms.count > 0) => {
                        format!("{} (at the sockets {})", f1(wss_gap), f1(Some(s)))
                    }
                    _ => f1(wss_gap),
                },
                goal(wss_gap.map(|g| g <= GAP_GOAL_MS), &wss_verdict),
            ],
            vec![
                format!("server CPU per delivered frame, {players} walkers: WebTransport's shard against the websocket's shard + nginx (TLS)"),
                "WebTransport ≤ the websocket's shard + nginx".into(),
                format!("{} against {} µs ({})", f2(wt_cpu), f2(wss_cpu), ratio(wt_cpu, wss_cpu)),
                goal(wt_cpu.zip(wss_cpu).map(|(a, b)| a <= b), &runs_verdict(&both)),
            ],
            vec![
                "memory per WebTransport player (shard RSS growth)".into(),
                "report it".into(),
                format!(
                    "{} (websocket {})",
                    kib(med(&wt, |r| r.shard_rss_growth_per_player_bytes as f64)),
                    kib(med(&ws, |r| r.shard_rss_growth_per_player_bytes as f64))
                ),
                wt_verdict.clone(),
            ],
            self.lossy_goal_row(),
        ];
        out.extend(["", "Issue 28's figures:", ""].map(String::from));
        out.extend(table(&["figure", "goal", "ours (medians)", "verdict"], &grows));
        out.push(String::new());
        out.push(
            "Before e855f8c the WebTransport bots took full forms of what changed (the runs at b319bad, on a \
             quieter machine: the shard 20.85 µs a frame against the websocket's shard and nginx 19.06, 1.09×, \
             15,013 datagrams a second for 10,005 frames; behind the lossy link 18.2 KB/s a player, gap p99 \
             100.0 ms, longest freeze p99 152.8 ms). They take deltas over datagrams since: the ratio above, \
             about 1.0 datagram a frame, and the bytes behind the lossy link below, at the same gap and freeze \
             (5.5 KB/s a player at 73ff968; since 5f3b36d a change of a cell at period 1 comes again in the \
             next step's chain, about 15 % more bytes, so that a lost datagram costs a page a tick rather than \
             a resync's round trip: the page's longest stand-still of a walking bot in `npm run e2e:lossy` went \
             from 117 to 250 ms, 4 runs, to 0 to 83 ms, 8 runs; the bots' own gap counts frames, applied or not, \
             and did not show it). Since 2026-12-07 a still cell's empty deltas after a change, \
             by which a client that lost the change finds out, go at its 1st, 2nd, 4th and 8th due step after \
             it, not at each of the 8: 6.26 KB/s a player behind the lossy link against 6.34 (medians of the 9 \
             WebTransport runs each; 6,257 against 6,366 B/s the default kind's), at the same gap and freeze; \
             8 % fewer bytes in the shard core test's sparser place, where cells stand still more often. What \
             the rest are (`target/release/delta_cost --players 200 --frames datagram-deltas --breakdown`, two \
             shards' walkers as section 15's, 400 ticks, nothing lost; the messages' bytes, a websocket's header \
             apart): 365 bytes a socket a tick against the websocket deltas' 134, of which supplements 154 (the \
             websocket's 26: a lossy client hands no walker off), headers 117 (69: 34 cells told a tick and 24 \
             implied as bits, against 9 told and 44 implied), empty deltas written out 42 (2; at period 1 a \
             cell's chain repeats the step before), deltas 37 (33), unchanged items 11 and full forms 3 (3): \
             supplements and chains are what is left. Until 2026-12-08 a lossy view implied no cell: its cells \
             told by an empty delta alone (24 a tick) took their references, 398 bytes a socket a tick and \
             headers 130; and its turn every 64 ticks refreshed every cell whole, walking ones too (whose next \
             delta's base the client checks anyway): full forms 30, 385 bytes a tick with cells implied. \
             Behind the lossy link: 5.86 KB/s a player since both (medians of the 9 WebTransport runs; the \
             default kind's 5,857 B/s), against 6.16 with cells implied alone (6,161) and 6.26 before either \
             (6,257), at the same gap and freeze; the bots' loadgen at 17 to 19 % of its cores (20 to 24 % in \
             the run with cells implied alone, 17 to 20 % before: the machine's noise). The \
             no-loss runs above are at 6181ef1, with the repeats (at e855f8c, without: 37.14 against 42.84 µs a \
             frame, 0.87×; gap p95 64.7 and 61.2 ms)."
                .to_owned(),
        );
        out.push(String::new());
        out.extend(self.lossy_part());
        out
    }
}
