//! Section 15, shared delta frames (issue 25): the trace of candidate
//! encodings, then bots taking deltas against bots taking full frames (the
//! control) in the same run, and the figures with a verdict each.

use super::fmt::{count, f1, f2, general, kb, median, ratio, table, DASH};
use super::load::{FramesPair, Sampled};
use super::verdict::{self, p95, JUDGE_NOTE, SATURATED};
use super::Report;
use crate::raw::{CrowdCore, DeltaTrace, CHOSEN_ENCODING, PROTOCOL_5_FRAMING};
use mino_loadgen::report::aoi::PartsPerTick;
use mino_loadgen::report::crowd::CrowdReport;
use mino_loadgen::report::{IdleReport, Measured, WalkReport};

/// The figures of one walking run.
struct Walk {
    bytes_per_player_s: Option<f64>,
    entry_bytes_per_visible: Option<f64>,
    own_p95: Option<f64>,
    /// The own gap p95 as the frames reached the bots' sockets (kernel
    /// receive times: most of the bots' own scheduling left out).
    socket_p95: Option<f64>,
    /// The own gap p95 with the ticks that sent nothing taken out.
    news_p95: Option<f64>,
    relayed_p95: Option<f64>,
    cpu_player_tick_us: Option<f64>,
    cpu_frame_us: Option<f64>,
    runqueue: Option<f64>,
    /// The shards' socket writes a tick, p5 and p95, ms (mean of the shards).
    writes_p5: Option<f64>,
    writes_p95: Option<f64>,
    /// The bots' own share: the loadgen's CPU, percent of its cores, and the
    /// own snapshot age p50 (a frame's arrival at its bot less its tick's
    /// time), ms.
    bots_cpu_pct: Option<f64>,
    age_p50: Option<f64>,
}

impl Walk {
    fn of((r, w): &Sampled<WalkReport>) -> Walk {
        let m = &r.measured;
        let connected = m.connected as f64;
        // The shards' own tick rate (a socket with nothing new gets no
        // frame, so the rate the bots saw is not the tick rate).
        let tick_hz = w.as_ref().and_then(|w| {
            let rates: Vec<f64> = w.shards.values().map(|s| s.ticks_per_s).collect();
            (!rates.is_empty()).then(|| rates.iter().sum::<f64>() / rates.len() as f64)
        });
        let cpu_player_tick_us = match (&m.server, tick_hz) {
            (Some(s), Some(hz)) if connected > 0.0 && hz > 0.0 && m.seconds > 0.0 => {
                Some((s.cpu_user_s + s.cpu_sys_s) * 1e6 / (connected * hz * m.seconds))
            }
            _ => None,
        };
        let observers = m.aoi.as_ref().and_then(|a| a.observers.as_ref());
        Walk {
            bytes_per_player_s: (connected > 0.0).then(|| m.bytes_per_s / connected),
            entry_bytes_per_visible: observers
                .filter(|o| o.players_in_view > 0.0)
                .map(|o| o.entry_bytes_per_tick / o.players_in_view),
            own_p95: p95(&m.snapshot_gap_ms),
            socket_p95: p95(&m.socket_gap_ms),
            news_p95: p95(&m.news_gap_ms),
            relayed_p95: p95(&m.relayed_snapshot_gap_ms),
            cpu_player_tick_us,
            cpu_frame_us: m.server.as_ref().map(|s| s.cpu_per_frame_us.total),
            runqueue: verdict::shard_mean(w.as_ref(), |s| s.runqueue_wait_share),
            writes_p5: verdict::shard_mean(w.as_ref(), |s| s.tick_deliver_ms.map(|d| d.p5)),
            writes_p95: verdict::shard_mean(w.as_ref(), |s| s.tick_deliver_ms.map(|d| d.p95)),
            bots_cpu_pct: m.loadgen_cpu_pct.is_finite().then_some(m.loadgen_cpu_pct),
            age_p50: (m.snapshot_age_ms.count > 0).then_some(m.snapshot_age_ms.p50),
        }
    }

    fn cells(&self, aoi: bool) -> Vec<String> {
        let mut row = vec![self.bytes_per_player_s.map_or(DASH.into(), count)];
        if aoi {
            row.push(f2(self.entry_bytes_per_visible));
        }
        row.extend([
            f1(self.own_p95),
            f1(self.socket_p95),
            f1(self.news_p95),
            f1(self.relayed_p95),
            f2(self.cpu_player_tick_us),
            f2(self.cpu_frame_us),
            f2(self.runqueue),
            match (self.writes_p5, self.writes_p95) {
                (Some(lo), Some(hi)) => format!("{} / {}", f1(Some(lo)), f1(Some(hi))),
                _ => DASH.into(),
            },
            format!("{} % / {}", f1(self.bots_cpu_pct), f1(self.age_p50)),
        ]);
        row
    }

    fn median(runs: &[Walk]) -> Walk {
        let m = |f: fn(&Walk) -> Option<f64>| median(runs.iter().map(f));
        Walk {
            bytes_per_player_s: m(|w| w.bytes_per_player_s),
            entry_bytes_per_visible: m(|w| w.entry_bytes_per_visible),
            own_p95: m(|w| w.own_p95),
            socket_p95: m(|w| w.socket_p95),
            news_p95: m(|w| w.news_p95),
            relayed_p95: m(|w| w.relayed_p95),
            cpu_player_tick_us: m(|w| w.cpu_player_tick_us),
            cpu_frame_us: m(|w| w.cpu_frame_us),
            runqueue: m(|w| w.runqueue),
            writes_p5: m(|w| w.writes_p5),
            writes_p95: m(|w| w.writes_p95),
            bots_cpu_pct: m(|w| w.bots_cpu_pct),
            age_p50: m(|w| w.age_p50),
        }
    }
}

/// What the runs' verdicts allow: every run judgeable (the loadgen stayed
/// under its limit), and whether any ran on a saturated machine.
#[derive(Clone, Copy, Debug)]
struct Judged {
    judgeable: bool,
    saturated: bool,
}

impl Judged {
    fn of<'a>(runs: impl IntoIterator<Item = &'a Measured>) -> Judged {
        let v: Vec<&str> = runs.into_iter().map(verdict::of).collect();
        Judged { judgeable: v.iter().all(|v| verdict::judgeable(v)), saturated: v.contains(&SATURATED) }
    }

    fn and(self, other: Judged) -> Judged {
        Judged { judgeable: self.judgeable && other.judgeable, saturated: self.saturated || other.saturated }
    }
}

/// met / not met / not judgeable, from a judgement and what the runs allow.
fn goal(met: Option<bool>, j: Judged) -> String {
    let v = match (met, j.judgeable) {
        (_, false) => return "not judgeable".into(),
        (None, true) => return "not judgeable (no figure)".into(),
        (Some(true), true) => "**met**",
        (Some(false), true) => "not met",
    };
    if j.saturated {
        format!("{v} (machine saturated)")
    } else {
        v.into()
    }
}

impl Report {
    pub(super) fn deltas_section(&mut self) -> Vec<String> {
        let mut out = vec!["## 15. Shared delta frames".to_owned(), String::new()];
        let d = self.raw.deltas.clone();
        if d.trace_walk.is_none() && d.aoi.is_none() && d.whole.is_none() && d.crowd.is_none() {
            out.extend(["Not run.".to_owned(), String::new()]);
            return out;
        }
        out.extend([
            "Protocol 4 (issue 25) sends a cell's entries as a delta against the same cell's previous frame: \
             residuals against the heading-step prediction the server and the browser compute alike, explicit \
             leave and enter records, the same bytes to every socket holding the baseline, the cell's full form to \
             every socket that does not; a socket with nothing new gets no write. Protocol 6 hands players off \
             between cells (the trace's handoff row, built): a delta keeps a player that walked into another cell \
             of its shard, the client moves it there when it advances that cell by one delta over the same span, \
             and a supplement brings it where it does not; every cell of a period is due on the same ticks. \
             What is compared: the same \
             binaries and the same run, bots that say in their Hello that they take deltas (the loadgen's default, \
             as the browser's) against bots that do not (`mino-loadgen --frames full`, the control: a client \
             without the capability, which gets full frames), alternating (deltas first in odd runs), \
             `benches/scale.sh --only deltas`; raw files `deltas-KIND-N-FRAMES-I.json` (the loadgen's report) and \
             `.server.json` (the shards' windows); the commands are at the end."
                .to_owned(),
            String::new(),
        ]);
        out.extend(self.trace_part(d.trace_walk.as_ref(), d.trace_walk_uniform.as_ref(), d.trace_crowd.as_ref()));
        let aoi = d.aoi.as_ref().map(|p| self.walk_part(p, true));
        if let Some((lines, _)) = &aoi {
            out.extend(lines.iter().cloned());
        }
        let whole = d.whole.as_ref().map(|p| self.walk_part(p, false));
        if let Some((lines, _)) = &whole {
            out.extend(lines.iter().cloned());
        }
        let crowd = d.crowd.as_ref().map(|p| self.crowd_part15(p));
        if let Some((lines, _)) = &crowd {
            out.extend(lines.iter().cloned());
        }
        if let Some(core) = &d.crowd_core {
            out.extend(crowd_core_part(core));
        }
        out.extend(self.goals_part(&d, aoi.map(|a| a.1), whole.map(|w| w.1), crowd.map(|c| c.1)));
        out
    }

    fn trace_part(
        &self,
        walk: Option<&DeltaTrace>,
        uniform: Option<&DeltaTrace>,
        crowd: Option<&DeltaTrace>,
    ) -> Vec<String> {
        let mut out = vec![
            "**The trace** (`benches/src/bin/delta_trace.rs`, issue 25's \"measure before choosing\"): the server's \
             own simulation, grid and view stencil run offline for some seconds of a game, every cell's entries \
             recorded every tick, and for every socket's view (own and near cells every tick, mid every 2nd, \
             prefetch every 4th) the bytes each candidate encoding would send. Raw: `deltas-trace-walk.json` \
             (`delta_trace walk --players 1000`: walkers, 4 a cell, two shards) and `deltas-trace-crowd.json` \
             (`delta_trace crowd --players 2000 --shuffle 0.05`: a crowd standing in one cell, 5 % of it taking a \
             step now and then). The encoding protocol 4 chose is in bold; the row after it is the same with \
             protocol 5's framing, built (an empty delta over up to 32 ticks is its cell's reference alone, \
             one byte instead of two). Its last ten rows are next steps (the sixth, eighth and ninth with protocol 5's \
             framing), \
             measured and not built: no item for a delta with nothing to say (walkers going straight; the client \
             would advance a cell it is not sent by the rule, so it must know which cells were due); runs of \
             empty deltas (a stateless alternative: empty deltas of one span in cells one id apart as one \
             reference, one tag and a count, 3 bytes instead of 2 a cell; few runs form, since a cell's delta \
             is empty only when all its walkers went straight); a move \
             between two cells of the view sent as a move (an enter of a player the view held in another of its \
             cells at the delta's base step, its 6 bytes of position, heading and flags replaced by 1: at best, \
             since a player that turned after the step the view holds would need its residual; the same cell's \
             bytes then differ between views that hold the origin cell and views that do not, so a cell would \
             have two forms); and predicted crossings, the move carried by the rule itself: a player that walked \
             straight out of a cell needs no leave (the client's rule puts it past the border and into the cell \
             there, or out of the view), and a view that held it at the base step needs no enter where it went, \
             so a straight walk across the view costs nothing, as a straight walk within a cell does now (a view \
             that did not hold it still takes the full enter: two forms again). A player counts as walking \
             straight when its heading, flags and the rule's position held over the span and over the slowest \
             tier's period (the cell it came from may be held that far back); a held mover that turned costs \
             its id, 1 byte and its change; a cell new to the view its full form. At best still, since the \
             view's holdings are taken as all at the base step. The last row is what the view's real holdings \
             allow of a move: **move-ins**, an enter of a player that was in a neighbouring cell of its shard at \
             the delta's base step sent as its id, 1 byte (the origin's direction and what follows) and its change \
             if it turned, where a view advances that cell over the same span in the same section (the client \
             then holds the player's base state); the cell's delta has two forms, and a view takes the one with \
             moves only when it advances the origin of every mover of the item with it. A neighbour is advanced \
             with a cell only at the same period and phase: with the due rule before protocol 6 (a cell's column \
             + 2 x row shifts its phase) neighbours in a row never are at periods 2 and 4, so the same walk was \
             traced again with every cell of a period due on the same ticks (`delta_trace walk --players 1000 \
             --phase uniform`, raw `deltas-trace-walk-uniform.json`; the rule protocol 6 built: a view's outer \
             cells are all sent on the same ticks rather than spread over them). The last two rows are **handoff**, predicted \
             crossings with the real holdings: a player that went to another cell of its shard stays in its old \
             cell's item (no leave; a change if it turned), and the client moves it by the rule into the cell its \
             position is in when the view advances that cell in the same section over the same span (else drops \
             it); a player that came from another cell is in no record of its new cell's item, and a view that \
             does not advance its origin with that cell takes its full entry in a supplement keyed by the origin \
             (2 bytes, and the id gap and 6 bytes an entry)."
                .to_owned(),
            String::new(),
        ];
        for (name, t) in
            [("Walk", walk), ("Walk, every cell of a period due on the same ticks", uniform), ("Crowd", crowd)]
        {
            match t {
                Some(t) => {
                    out.push(format!("*{name}:* {}", t.markdown(true).trim_end()));
                    out.push(String::new());
                }
                None => out.extend([format!("*{name}:* not run."), String::new()]),
            }
        }
        out
    }

    /// The walking runs of one kind: each run, then the medians, and the
    /// medians of deltas (for the goals), and the control's.
    fn walk_part(&self, p: &FramesPair<WalkReport>, aoi: bool) -> (Vec<String>, WalkGoals) {
        let n = count(p.players as f64);
        let mut out = vec![if aoi {
            format!(
                "**{n} walkers, two shards + Redis, area of interest** (`--cell-size 100 --view-radius 400`, world \
                 1,600 units, `mino-loadgen walk --density 4 --observers 5%`, as section 9's 1,000 row). Bytes a \
                 player a second are what the bots received (payload); entry bytes per visible player per tick are \
                 the observers' entry bytes a tick ÷ the players within their view radius (item headers, frame \
                 headers and websocket headers apart; full frames: 10 bytes an entry, plus players beyond the \
                 radius in whole cells); gaps p95 between frames of the own shard and of the other shard (with \
                 deltas a socket with nothing new gets no frame), and the own gap p95 at the socket (the same gaps \
                 between the kernel's receive times of the frames, `SO_TIMESTAMPNS`: when a frame reached the bot's \
                 socket, not when the bot's thread got to it, so most of the bots' own scheduling is left out: not a \
                 late read that takes in one frame and part of the next, stamped with the later arrival, nor a bot \
                 so late that its receive window holds the server's writes back; absent in runs \
                 before it was measured); server CPU is both shards' user + system time over \
                 the hold ÷ (players × the shards' ticks), and ÷ the frames the bots received; run-queue wait is the \
                 share of a core the shards' threads spent runnable but waiting for a CPU (other sessions' work on \
                 the shared machine), mean of the two shards; socket writes a tick are the part of a tick spent \
                 writing its frames to the websockets (`mino_tick_deliver_seconds`, p5 and p95 over the hold, mean \
                 of the two shards): the last socket written waits that long after the first, so the spread between \
                 the two is about the spread the server adds to those sockets' gaps (on this machine each loopback \
                 write also runs the bot's receive and wakes its thread); the bots' CPU (percent of the cores the \
                 loadgen may use) and the own snapshot age p50 (a frame's arrival at its bot less its tick's time) \
                 are the bots' own share of the gaps: a bot timestamps a frame when its thread gets to it, after the \
                 frames of the bots before it on that thread."
            )
        } else {
            format!(
                "**The same, whole shard** ({n} walkers on two shards + Redis, world 1,600 units, no `--cell-size`, \
                 no `--density`: every socket gets every player)."
            )
        }];
        out.push(String::new());
        let mut head = vec!["frames", "run", "bytes / player / s"];
        if aoi {
            head.push("entry bytes / visible player / tick");
        }
        head.extend([
            "own gap p95 ms",
            "own gap p95 at the socket ms",
            "own gap p95, silent ticks out, ms",
            "relayed gap p95 ms",
            "server CPU / player / tick µs",
            "server CPU / delivered frame µs",
            "shards' run-queue wait",
            "socket writes a tick p5 / p95 ms",
            "bots' CPU / own snapshot age p50 ms",
            "verdict",
        ]);
        let mut rows = Vec::new();
        let mut medians = Vec::new();
        for (label, runs) in [("deltas", &p.deltas), ("full (control)", &p.full)] {
            let walks: Vec<Walk> = runs.iter().map(Walk::of).collect();
            for (i, (w, (r, _))) in walks.iter().zip(runs).enumerate() {
                let mut row = vec![label.to_owned(), (i + 1).to_string()];
                row.extend(w.cells(aoi));
                row.push(verdict::of(&r.measured).into());
                rows.push(row);
            }
            let m = Walk::median(&walks);
            let mut row = vec![format!("**{label}**"), format!("median of {}", runs.len())];
            row.extend(m.cells(aoi));
            row.push(verdict::of_runs(runs.iter().map(|(r, _)| &r.measured)));
            rows.push(row);
            medians.push(m);
        }
        out.extend(table(&head, &rows));
        let full = medians.pop();
        let deltas = medians.pop();
        if let (Some(dl), Some(fl)) = (&deltas, &full) {
            out.push(String::new());
            out.push(format!(
                "Deltas ÷ full, medians: bytes a player a second {}, server CPU a player a tick {}, server CPU a \
                 delivered frame {}.",
                ratio(dl.bytes_per_player_s, fl.bytes_per_player_s),
                ratio(dl.cpu_player_tick_us, fl.cpu_player_tick_us),
                ratio(dl.cpu_frame_us, fl.cpu_frame_us),
            ));
        }
        if aoi {
            out.push(String::new());
            out.push(
                "The own gap p95 reads each shard's heaviest tick. Before the relay's lag \
                 (`server/src/shard/lag.rs`, commit d68aea7), one of the two shards heard the other's steps even \
                 with its own and sent both shards' mid tier and prefetch ring on the same ticks: on 2026-12-06 the \
                 deltas' own gap p95 was 69.6 ms (runs 69.6, 70.0, 57.1; in the last the two shards' steps ran odd \
                 by chance) against the control's 55.2; with it, 57.8 against 56.2 (runs at commit 96abef4). \
                 `target/release/delta_cost --step-offset N` prints each shard's tick by its number mod 4. \
                 Server CPU: the runs before commit 431eecc took 18.93 µs a player a tick against the control's \
                 17.20 (1.10x); the runs at commit 60f6b4b, 18.12 against 18.52; at e424564 (with f39a148: a view \
                 holding a cell unchanged since its rule's step rejoins its key's view, so a crowd shares one view \
                 a shard: see the crowd below), 18.45 against 18.62; at d7073a3 (with 631acbd), 21.50 against \
                 21.38, the control 15 % slower than before on the shared machine; at b04be19, 20.34 against 19.53 \
                 (1.04x): the four reruns from 60f6b4b to b04be19 read 0.98x to 1.04x, within the machine's noise \
                 (after them, the release profile: next paragraph). Between: handoff origins \
                 looked up by cell (431eecc; offline 2,920 to 2,835 M instructions), then from commit 96abef4 a \
                 frame that fits one message written without counting its cells out (3ddbff1) and a deltas view's \
                 empty deltas taken as bits over its cells, not as pieces of its frame \
                 (`server/src/shard/empties.rs`, 60f6b4b). Offline, with the same frames (delta_cost's digests \
                 unchanged), these took a shard's tick over 40 ticks from 2,769 to 2,416 M instructions with deltas \
                 and from 2,644 to 2,493 with full frames (callgrind, as delta_cost's doc says), and the walk's wall \
                 time, medians of 7 alternating on the shared machine, from 9,481 to 8,916 µs a tick against full \
                 frames' 8,819 to 8,732 (1.07x to 1.02x); with the review's fixes after it (a frame's bound counts \
                 the supplements of its empty deltas), 2,427 and 2,500 M instructions."
                    .into(),
            );
            out.push(String::new());
            out.push(
                "Where the deltas' extra CPU went, and the release profile (2026-12-07, after the runs at b04be19): \
                 `perf record` of both shards over 15 s of this walk's hold, two runs a form, found the deltas' \
                 user time 1.28x the control's and their kernel time 1.05x (smaller frames, but as many writes). \
                 Offline, at commit 1651d65, the deltas execute fewer instructions than full frames (callgrind on \
                 delta_cost's whole measured function over 40 ticks: both shards' ticks, the relay between them and \
                 the tool's hashing of every frame, the last far more for full frames: 2,552 against 2,797 M), yet \
                 take more wall time: the time goes to small functions of mino-protocol called for each cell of \
                 every view (a kept delta's item and origins, the item readers, the stencil's cells), which the \
                 release build did not inline across crates. Release builds have since been optimized as one unit \
                 (`Cargo.toml`: fat LTO, one codegen unit, commit fda3114): 2,404 M instructions with deltas \
                 (-5.8 %) and 2,771 with full frames (-0.9 %), the same frames (digests unchanged). Live, both \
                 shards' CPU ticks over 15 s of the hold, from 9 s after the loadgen started (`mino-loadgen walk` \
                 as above with `--duration 25s`, utime + stime of /proc/PID/stat), 4 runs a form alternating, \
                 medians: before the change, deltas 648 against full frames' 590 (1.10x; b04be19's 1.04x is \
                 other runs on the shared machine); after it, 537 against 579 (0.93x). `benches/scale.sh --only \
                 deltas` at a7fdcb8 (2026-12-07), the first section run with it: 16.20 µs a player a tick against \
                 the control's 16.93 (0.96x), on another processor than the runs from 60f6b4b to b04be19 (an AMD \
                 EPYC, theirs an Intel Xeon: see the provenance rows; their µs do not compare, their ratios do, \
                 0.96x against 0.98x to 1.04x). At 3e2cde9 (2026-12-07, the same processor, the machine busier: \
                 every figure of both forms some 20 % above a7fdcb8's, and the crowd's shards late, see below): \
                 19.86 against 22.16 (0.90x); the whole shard 11.00 against 11.96 (0.92x)."
                    .into(),
            );
            out.extend(parts_part(p));
        }
        out.push(String::new());
        let goals = WalkGoals {
            deltas,
            full,
            judged_deltas: Judged::of(p.deltas.iter().map(|(r, _)| &r.measured)),
            judged_full: Judged::of(p.full.iter().map(|(r, _)| &r.measured)),
        };
        (out, goals)
    }

    fn crowd_part15(&self, p: &FramesPair<CrowdReport>) -> (Vec<String>, CrowdGoals) {
        let n = count(p.players as f64);
        let shuffle = p.deltas.first().map_or(0.0, |(r, _)| r.shuffle);
        let how = if shuffle > 0.0 {
            format!(
                "{} % of it taking a short step every 1 to 3 s and walking back (`--shuffle {shuffle}`, as the \
                 trace's crowd), so that its cell changes in most ticks; a crowd standing quite still is sent nothing \
                 with deltas, and its hold's frames are then only the last arrivals'",
                general(f64::from(shuffle) * 100.0)
            )
        } else {
            "standing still".to_owned()
        };
        let mut out = vec![
            format!(
                "**A crowd of {n} in one cell** (`mino-loadgen crowd`, two shards + Redis, `--cell-size 100`, world \
                 2,000 units, as section 9's crowd; {how}): the own gap p95 (between frames of the own shard), the \
                 same with the silent ticks taken out (each gap less a tick period for every tick between its two \
                 frames' ticks: with deltas a socket whose cells did not change gets no frame, and this is the gap a \
                 frame every tick would have had, what the goal is judged on when no shard skipped a tick: a tick \
                 skipped after a stall looks silent to a bot), the snapshot age p95 (a frame's \
                 arrival less its tick's time: how late the crowd sees itself), the bytes each socket's view frames \
                 came to a tick (its mean, median across sockets), the late ticks and the ticks the shards skipped \
                 (`mino_ticks_skipped_total`; – where a run did not read them). A run is judgeable only when \
                 at least 95 % of the bots gathered at the start and at the end of the hold, and the loadgen \
                 stayed within its CPU limit (70 % of its cores): on a machine that cannot run the count, bots \
                 fail to connect or to reach the point (the loadgen's errors), or the loadgen falls behind its \
                 frames, and the figures describe the machine."
            ),
            String::new(),
        ];
        let mut rows = Vec::new();
        let mut medians = Vec::new();
        for (label, runs) in [("deltas", &p.deltas), ("full (control)", &p.full)] {
            let gap = |r: &CrowdReport| p95(&r.measured.snapshot_gap_ms);
            let news = |r: &CrowdReport| p95(&r.measured.news_gap_ms);
            let age = |r: &CrowdReport| p95(&r.measured.snapshot_age_ms);
            let bytes = |r: &CrowdReport| r.budget.as_ref().map(|b| b.cell_bytes_per_tick.p50);
            let late = |r: &CrowdReport| r.late_ticks.as_ref().map(|l| 100.0 * l.late_share);
            for (i, (r, _)) in runs.iter().enumerate() {
                rows.push(vec![
                    label.to_owned(),
                    (i + 1).to_string(),
                    format!(
                        "{} / {} / {} / {}",
                        count(r.admitted as f64),
                        count(r.gathered as f64),
                        count(r.gathered_at_end as f64),
                        count(r.measured.connected as f64)
                    ),
                    count(r.measured.errors as f64),
                    f1(gap(r)),
                    f1(news(r)),
                    f1(age(r)),
                    f1(bytes(r)),
                    format!("{} / {}", f1(late(r)), skipped(r).map_or(DASH.into(), |k| count(k as f64))),
                    crowd_verdict(r),
                ]);
            }
            let g = median(runs.iter().map(|(r, _)| gap(r)));
            let n = median(runs.iter().map(|(r, _)| news(r)));
            rows.push(vec![
                format!("**{label}**"),
                format!("median of {}", runs.len()),
                String::new(),
                String::new(),
                f1(g),
                f1(n),
                f1(median(runs.iter().map(|(r, _)| age(r)))),
                f1(median(runs.iter().map(|(r, _)| bytes(r)))),
                format!(
                    "{} / {}",
                    f1(median(runs.iter().map(|(r, _)| late(r)))),
                    runs.iter()
                        .map(|(r, _)| skipped(r))
                        .sum::<Option<u64>>()
                        .map_or(DASH.into(), |k| format!("{} in all", count(k as f64)))
                ),
                match runs.iter().filter(|(r, _)| !gathered(r)).count() {
                    0 => match runs.iter().filter(|(r, _)| past_cpu_limit(r)).count() {
                        0 => verdict::of_runs(runs.iter().map(|(r, _)| &r.measured)),
                        k => format!("{JUDGE_NOTE} ({k} of {} runs: the loadgen past its CPU limit)", runs.len()),
                    },
                    k => format!("{JUDGE_NOTE} ({k} of {} runs without the crowd)", runs.len()),
                },
            ]);
            medians.push((g, n));
        }
        out.extend(table(
            &[
                "frames",
                "run",
                "admitted / gathered at start / at end of hold / connected",
                "errors (the loadgen's)",
                "own gap p95 ms",
                "own gap p95, silent ticks out, ms",
                "snapshot age p95 ms",
                "view-frame bytes a socket a tick (p50 across sockets)",
                "late ticks % / ticks skipped",
                "verdict",
            ],
            &rows,
        ));
        out.push(String::new());
        out.push(
            "The bots' part (2026-12-07). In the runs at a7fdcb8 the deltas' crowd did not gather (1,261 to 1,336 \
             of 2,000 at the hold's start) while the control's did: the bots were seconds behind their frames \
             (snapshot age p95 3.6 to 5.3 s), and a bot not yet in the crowd is sent some 60 cells a frame, each \
             advanced, so it stayed behind. With deltas a crowd's cell changes every tick, and each bot copied it \
             (a thousand players) to apply each delta and scanned it for walkers that left. Since 76de7dc and \
             3e2cde9 a bot applies a delta where the cell is held (read and checked whole, then written in place: \
             a standing player is not written), merges the few players added to a cell by block copies, and looks \
             for walkers only among the players a delta wrote when nobody else could have left (`schema/src/held.rs` \
             `Slot::settled`). The bots' part of the crowd offline (`delta_cost --scenario crowd --players 2000 \
             --frames deltas --clients 200 --ticks 40 --warmup 400` under callgrind, as delta_cost's doc says): \
             12,421 M instructions before, 7,337 M after (-40.9 %), the same frames read (digests unchanged); \
             the walk's 50 clients 677.6 M both. In the runs at 3e2cde9 above neither form's crowd gathered: the \
             shards themselves fell behind (the control's late ticks 3.8 to 7.7 %, 0.0 to 0.2 % at a7fdcb8; its \
             loadgen at 59 to 64 % of its cores), and the same control with the loadgen of before 7ed3f7b, run by \
             hand at the same hour, gathered 1,236 of 2,000: the machine, not the bots' reading."
                .into(),
        );
        out.push(String::new());
        let goals = CrowdGoals {
            players: p.players,
            own_p95: medians.first().and_then(|m| m.0),
            news_p95: medians.first().and_then(|m| m.1),
            skipped: p.deltas.iter().map(|(r, _)| skipped(r)).sum(),
            shuffle,
            judged: {
                let j = Judged::of(p.deltas.iter().map(|(r, _)| &r.measured));
                Judged { judgeable: j.judgeable && p.deltas.iter().all(|(r, _)| gathered(r)), ..j }
            },
        };
        (out, goals)
    }

    fn goals_part(
        &self,
        d: &super::load::DeltaRuns,
        aoi: Option<WalkGoals>,
        whole: Option<WalkGoals>,
        crowd: Option<CrowdGoals>,
    ) -> Vec<String> {
        let mut out = vec![
            "**Issue 25's figures**: today (the issue's column, before protocol 4), the goal, ours (medians of the \
             deltas runs above) and whether it was met; a goal is not judgeable when a run it reads was (the \
             loadgen passed its CPU limit); \"machine saturated\" when a run it reads had the whole machine at least \
             95 % busy: the shards then competed for the cores, and gaps describe the machine as much as the \
             server (see the run-queue wait above)."
                .to_owned(),
            String::new(),
        ];
        let mut rows = Vec::new();
        let none = || ("not run".to_owned(), "not judgeable (not run)".to_owned());
        let walk = |g: &Option<WalkGoals>, f: fn(&Walk) -> Option<f64>, limit: f64, show: fn(f64) -> String| match g {
            Some(g) => {
                let v = g.deltas.as_ref().and_then(f);
                (v.map_or(DASH.into(), show), goal(v.map(|v| v <= limit), g.judged_deltas))
            }
            None => none(),
        };
        let kb = |v: f64| format!("{} KB", f1(Some(v / 1000.0)));
        let (ours, v) = walk(&aoi, |w| w.bytes_per_player_s, 5000.0, kb);
        rows.push(row(
            "bytes a player a second, 1,000 walkers, two shards + Redis, radius 4 cells",
            "50.0 KB",
            "≤ 5 KB",
            ours,
            v,
        ));
        let (ours, v) = walk(&whole, |w| w.bytes_per_player_s, 20000.0, kb);
        rows.push(row("the same, whole shard (no area of interest), 1,000", "197-204 KB", "≤ 20 KB", ours, v));
        let (ours, v) = walk(&aoi, |w| w.entry_bytes_per_visible, 1.0, |v| f2(Some(v)));
        rows.push(row("entry bytes per visible walking player per tick", "10", "≤ 1", ours, v));
        let (ours, v) = match &aoi {
            Some(g) => {
                let own = g.deltas.as_ref().and_then(|w| w.own_p95);
                let relayed = g.deltas.as_ref().and_then(|w| w.relayed_p95);
                let met = own.zip(relayed).map(|(o, r)| o <= 55.0 && r <= 55.0);
                let socket = g.deltas.as_ref().and_then(|w| w.socket_p95);
                let at_socket = socket.map_or(String::new(), |s| format!(" (own at the socket {} ms)", f1(Some(s))));
                (format!("{} / {} ms{at_socket}", f1(own), f1(relayed)), goal(met, g.judged_deltas))
            }
            None => none(),
        };
        rows.push(row("gap p95 own / relayed at 1,000", "53-54 ms", "≤ 55 ms", ours, v));
        let (ours, v) = match &crowd {
            Some(c) => {
                // Judged on the gap with the silent ticks out where the runs
                // have it and no shard skipped a tick: a standing crowd's
                // socket gets no frame when nothing changed (item 4), which
                // the raw gap counts; a skipped tick looks silent to a bot.
                let players = count(c.players as f64);
                let (judged, shown) = match (c.news_p95, c.skipped) {
                    (Some(n), Some(0)) => (
                        Some(n),
                        format!(
                            "{} ms with the silent ticks out ({} ms counting them; no tick skipped; {players} players)",
                            f1(Some(n)),
                            f1(c.own_p95),
                        ),
                    ),
                    (Some(n), skipped) => (
                        c.own_p95,
                        format!(
                            "{} ms ({} ms with the silent ticks out, not judged on: {}; {players} players)",
                            f1(c.own_p95),
                            f1(Some(n)),
                            match skipped {
                                Some(1) => "the shards skipped a tick after a stall, which looks silent".to_owned(),
                                Some(k) => format!("the shards skipped {k} ticks after stalls, which look silent"),
                                None => "the runs did not read the shards' skipped ticks".to_owned(),
                            },
                        ),
                    ),
                    (None, _) => (c.own_p95, format!("{} ms ({players} players)", f1(c.own_p95))),
                };
                let met = if c.players >= 2000 { judged.map(|g| g <= 60.0) } else { None };
                let v = if !c.judged.judgeable {
                    format!(
                        "{JUDGE_NOTE} (this machine did not run a crowd of {}: see the runs){}",
                        count(c.players as f64),
                        d.crowd_core.as_ref().map_or(String::new(), |core| format!("; {}", core_verdict(core))),
                    )
                } else if c.players < 2000 {
                    format!("{JUDGE_NOTE} (fewer than 2,000 players)")
                } else {
                    goal(met, c.judged)
                };
                (shown, v)
            }
            None => none(),
        };
        let ours = match &d.crowd_core {
            Some((deltas, full)) => format!(
                "{ours}; the shard core alone (offline, `delta_cost --scenario crowd`): {} ms (the control's {} ms)",
                f1(Some(deltas.gap_ms.p95)),
                f1(Some(full.gap_ms.p95))
            ),
            None => ours,
        };
        let how = match crowd.as_ref().map(|c| c.shuffle).filter(|&s| s > 0.0) {
            None => "standing".to_owned(),
            Some(shuffle) => format!("standing, {} % shuffling", general(f64::from(shuffle) * 100.0)),
        };
        rows.push(row(&format!("crowd of 2,000 in one cell ({how}): own gap p95"), "207 ms", "≤ 60 ms", ours, v));
        let (ours, v) = self.standing_15000();
        rows.push(row(
            "15,000 standing players, one shard, `--cell-size 125`, no other flag: connected / memory a socket / \
             CPU a tick",
            "5,609 / – / 42 ms (with `--keyframe-ticks 20`: 15,000 / 1.05 KB / 32.8 ms)",
            "15,000 / ≤ 1.3 KB / ≤ 5 ms",
            ours,
            v,
        ));
        let (ours, v) = match &aoi {
            Some(g) => {
                let dl = g.deltas.as_ref().and_then(|w| w.cpu_player_tick_us);
                let fl = g.full.as_ref().and_then(|w| w.cpu_player_tick_us);
                (
                    format!("{} µs against the control's {} µs", f2(dl), f2(fl)),
                    goal(dl.zip(fl).map(|(d, f)| d <= f), g.judged_deltas.and(g.judged_full)),
                )
            }
            None => none(),
        };
        rows.push(row("server CPU a player a tick, 1,000 walkers", "control row", "≤ the control's", ours, v));
        let (ours, v) = match &aoi {
            Some(g) => {
                let dl = g.deltas.as_ref().and_then(|w| w.cpu_frame_us);
                let fl = g.full.as_ref().and_then(|w| w.cpu_frame_us);
                (
                    format!("{} µs against the control's {} µs", f2(dl), f2(fl)),
                    match g.judged_deltas.and(g.judged_full) {
                        j if !j.judgeable => "not judgeable".into(),
                        j if j.saturated => "reported (machine saturated)".into(),
                        _ => "reported".into(),
                    },
                )
            }
            None => none(),
        };
        rows.push(row("server CPU per delivered frame, 1,000 walkers", "control row", "report it", ours, v));
        let (ours, v) = self.decode_browser();
        rows.push(row(
            "the browser's decode time for a tick's frames at ~165 in view (Chromium)",
            "control row",
            "report it",
            ours,
            v,
        ));
        out.extend(table(&["figure", "today", "goal", "ours", "verdict"], &rows));
        out.push(String::new());
        if let Some(t) = d.trace_walk.as_ref().and_then(DeltaTrace::chosen) {
            let framed = d
                .trace_walk
                .as_ref()
                .and_then(|w| w.rows.iter().find(|r| r.encoding == format!("{CHOSEN_ENCODING}, {PROTOCOL_5_FRAMING}")));
            out.push(format!(
                "The trace's estimate for the chosen encoding ({CHOSEN_ENCODING}) on the walk: {} entry bytes a \
                 player in view a tick, {} bytes a socket a second in all{}.",
                f2(Some(t.entry_bytes_per_player_tick)),
                count(t.bytes_per_socket_s),
                framed.map_or(String::new(), |r| format!(
                    "; with protocol 5's framing, {} ({:.2}x)",
                    count(r.bytes_per_socket_s),
                    r.bytes_per_socket_s / t.bytes_per_socket_s
                ))
            ));
            out.push(String::new());
        }
        // The cheapest next step the trace found, against the goal.
        let best = d.trace_walk.as_ref().and_then(|w| {
            w.rows
                .iter()
                .filter(|r| r.encoding.starts_with(CHOSEN_ENCODING))
                .min_by(|a, b| a.bytes_per_socket_s.total_cmp(&b.bytes_per_socket_s))
        });
        if let Some(best) = best.filter(|b| b.encoding != CHOSEN_ENCODING) {
            out.push(format!(
                "Its fewest bytes among the next steps: {} ({} entry bytes a player in view a tick, {} bytes a \
                 socket a second, {:.2}x the chosen encoding's on the trace; measured offline, not built).",
                best.encoding.trim_start_matches(CHOSEN_ENCODING).trim_start_matches(", "),
                f2(Some(best.entry_bytes_per_player_tick)),
                count(best.bytes_per_socket_s),
                d.trace_walk
                    .as_ref()
                    .and_then(DeltaTrace::chosen)
                    .map_or(f64::NAN, |c| best.bytes_per_socket_s / c.bytes_per_socket_s),
            ));
            out.push(String::new());
        }
        // What the real holdings allow: the handoff rows of both due rules.
        let handoff = |t: Option<&DeltaTrace>, framing: &str| {
            t.and_then(|t| t.rows.iter().find(|r| r.encoding.contains("handoff") && r.encoding.ends_with(framing)))
                .map(|r| count(r.bytes_per_socket_s))
        };
        let (walk, uniform) = (d.trace_walk.as_ref(), d.trace_walk_uniform.as_ref());
        if let (Some(a), Some(b), Some(c)) = (
            handoff(walk, PROTOCOL_5_FRAMING),
            handoff(uniform, PROTOCOL_5_FRAMING),
            handoff(uniform, "no item for an empty delta"),
        ) {
            out.push(format!(
                "With the views' real holdings (handoff, protocol 6): {a} bytes a socket a second with the due \
                 rule before it (phases spread), {b} with every cell of a period due on the same ticks (protocol 6, \
                 built), {c} with that and no item for an empty delta (measured offline, not built; a live run has \
                 added about 0.9 KB of framing to the trace's figure)."
            ));
            out.push(String::new());
        }
        out
    }
}

impl Report {
    /// Issue 25's browser decode figure, from `decode-browser.json`: the
    /// steady tick's deltas (walkers straight; one turning in 3 cells)
    /// against the full forms a client without deltas decodes every tick.
    fn decode_browser(&self) -> (String, String) {
        let Some(d) = &self.raw.decode_browser else {
            return (
                "not measured here (client-web: `npm run bench:decode:browser -- --json`)".into(),
                "not judgeable (not run)".into(),
            );
        };
        let us = |prefix: &str| d.case(prefix).map(|c| c.median_us);
        let (straight, turning, full) =
            (us("deltas: every walker going straight"), us("deltas: a walker turning"), us("full forms"));
        (
            format!(
                "{} players in {} cells, µs a tick's frame applied and read (median of {} rounds, Chromium {}): deltas {} \
                 (walkers straight) and {} (one turning in 3 cells) against the control's full forms {} ({})",
                d.players,
                d.cells,
                d.rounds,
                d.chromium,
                f2(straight),
                f2(turning),
                f2(full),
                ratio(straight, full)
            ),
            if straight.is_some() && full.is_some() { "reported".into() } else { "not judgeable (no figure)".into() },
        )
    }

    /// Issue 25's 15,000 standing players, from section 4's idle runs of
    /// that size (medians): connected, server memory a socket (RSS growth ÷
    /// connections) and server CPU a tick, with the verdict; not judgeable
    /// when none ran, or they ran with `--keyframe-ticks` (before protocol 4).
    fn standing_15000(&self) -> (String, String) {
        let runs: Vec<&IdleReport> = self.raw.idle.iter().map(|(r, _)| r).filter(|r| r.bots == 15_000).collect();
        if runs.is_empty() {
            return ("not measured here (section 4, idle)".into(), "not judgeable (not run)".into());
        }
        if self.raw.commands.iter().any(|(_, c)| c.contains("--keyframe-ticks")) {
            return (
                "not measured here (section 4, idle: its runs predate protocol 4)".into(),
                "not judgeable (not run)".into(),
            );
        }
        let med = |f: fn(&IdleReport) -> Option<f64>| median(runs.iter().map(|r| f(r)));
        let connected = med(|r| Some(r.measured.connected as f64));
        let memory = med(|r| r.server_bytes_per_connection.map(|v| v as f64));
        let tick = med(|r| r.server_cpu_per_tick_ms);
        let met = match (connected, memory, tick) {
            (Some(n), Some(m), Some(t)) => Some(n >= 15_000.0 && m <= 1300.0 && t <= 5.0),
            _ => None,
        };
        (
            format!(
                "{} / {} / {} ms (section 4, median of {})",
                connected.map_or(DASH.into(), count),
                kb(memory),
                f2(tick),
                runs.len()
            ),
            goal(met, Judged::of(runs.iter().map(|r| &r.measured))),
        )
    }
}

/// The deltas and control medians of a walking kind, and whether each
/// kind's runs were all judgeable.
struct WalkGoals {
    deltas: Option<Walk>,
    full: Option<Walk>,
    judged_deltas: Judged,
    judged_full: Judged,
}

/// The crowd's deltas median.
struct CrowdGoals {
    players: u64,
    own_p95: Option<f64>,
    /// The same with the silent ticks taken out (none in older raw files).
    news_p95: Option<f64>,
    /// Ticks the shards skipped after a stall over the deltas runs' holds
    /// (None: a run did not read them, as older raw files). The gap with
    /// the silent ticks out counts a skipped tick as silent, so it is judged
    /// on only where this is 0.
    skipped: Option<u64>,
    /// The share of the crowd that shuffled (`--shuffle`; 0: it stood).
    shuffle: f32,
    judged: Judged,
}

/// Where the observers' bytes of a tick went in the walk's runs, by part
/// (the loadgen's `parts_per_tick`): medians over each form's runs; nothing
/// when no run counted them (loadgens before it did).
fn parts_part(p: &FramesPair<WalkReport>) -> Vec<String> {
    type Part = fn(&PartsPerTick) -> f64;
    let columns: [(&str, Part); 13] = [
        ("framing (envelope, sections)", |p| p.framing),
        ("cells' references", |p| p.references),
        ("implied cells' blocks", |p| p.implied),
        ("full forms", |p| p.full_forms),
        ("deltas", |p| p.deltas),
        ("supplements", |p| p.supplements),
        ("forgets", |p| p.forgets),
        ("other messages", |p| p.other_messages),
        ("cells", |p| p.cells),
        ("of them empty deltas", |p| p.empty_deltas),
        ("implied cells", |p| p.implied_cells),
        ("players in supplements", |p| p.supplement_entries),
        ("of them held in another cell", |p| p.supplement_entries_held),
    ];
    let mut rows = Vec::new();
    for (label, runs) in [("deltas", &p.deltas), ("full (control)", &p.full)] {
        let parts: Vec<&PartsPerTick> = runs
            .iter()
            .filter_map(|(r, _)| r.measured.aoi.as_ref()?.observers.as_ref()?.parts_per_tick.as_ref())
            .collect();
        if parts.is_empty() {
            continue;
        }
        let mut row = vec![label.to_owned(), parts.len().to_string()];
        row.extend(columns.iter().map(|(_, f)| f1(median(parts.iter().map(|p| Some(f(p)))))));
        rows.push(row);
    }
    if rows.is_empty() {
        return Vec::new();
    }
    let mut head = vec!["frames", "runs"];
    head.extend(columns.iter().map(|(name, _)| *name));
    let mut out = vec![
        String::new(),
        "Where an observer's bytes of a tick go, by part (the loadgen's `aoi.observers.parts_per_tick`, medians \
         over the runs): the view frames' FlatBuffers envelopes and sections' headers, the cells' references \
         (an empty delta is its reference alone), the sections' blocks of implied cells (protocol 7: the view \
         named and a bit a cell due; 0 before it), the items by kind (tag, length and body), every other \
         message; then the cells a tick (implied cells apart, counted after them), the players in \
         supplements (entries of players that walked in from a cell the view does not advance with the one \
         they entered), and of those the players the observer \
         held in another cell of the shard before the frame (handed off over different spans: the rest came \
         into the view). Bytes a tick except the counts."
            .to_owned(),
        String::new(),
    ];
    out.extend(table(&head, &rows));
    out
}

/// The ticks a run's shards skipped after a stall over its hold (None: not
/// read, as in older raw files).
fn skipped(r: &CrowdReport) -> Option<u64> {
    r.late_ticks.as_ref().and_then(|l| l.skipped)
}

/// Whether the crowd was there to measure: at least 95 % of the bots
/// gathered at the start and at the end of the hold. On a machine that
/// cannot run the count, bots fail to connect or to reach the point, and the
/// figures describe the machine.
fn gathered(r: &CrowdReport) -> bool {
    let want = 0.95 * r.bots as f64;
    r.gathered as f64 >= want && r.gathered_at_end as f64 >= want
}

/// Whether a run in one process is not judgeable for the loadgen's CPU:
/// there, the loadgen's "not judgeable" means nothing else (over agents it
/// may also mean that no agent reported).
fn past_cpu_limit(r: &CrowdReport) -> bool {
    r.measured.agents.is_none() && verdict::of(&r.measured) == JUDGE_NOTE
}

/// A crowd run's verdict: the loadgen's (saying its CPU when that is why
/// the run is not judgeable), or not judgeable without the crowd.
fn crowd_verdict(r: &CrowdReport) -> String {
    if !gathered(r) {
        format!("{JUDGE_NOTE} (the crowd did not gather: {} of {})", count(r.gathered as f64), count(r.bots as f64))
    } else if past_cpu_limit(r) {
        format!("{JUDGE_NOTE} (the loadgen took {:.1} % of its cores, past its limit)", r.measured.loadgen_cpu_pct)
    } else {
        verdict::of(&r.measured).into()
    }
}

/// The crowd through the shard core alone (`deltas-crowd-core-*.json`):
/// a paragraph and a table, deltas and the control.
fn crowd_core_part((deltas, full): &(CrowdCore, CrowdCore)) -> Vec<String> {
    let mut out = vec![
        format!(
            "**The same crowd through the shard core alone** (`delta_cost --scenario crowd --players {} --shuffle {} \
             --frames deltas|full`, offline: the two shards' own ticks (`Shard::tick`, I/O-free) with every player \
             a socket, the crowd steered to the point by the loadgen's own steering from where the shards hold it, \
             their region bundles relayed to each other at the next tick as Redis would; no socket, bot or other \
             process): what the shards decide to send each socket, apart from a machine that may not carry the \
             bots. Gaps are between a socket's frames that carry a section of its own shard (the bots' own gap) \
             and of the other shard (relayed), in ticks of 50 ms, over {} ticks after {} of gathering; a crowd too big \
             for the view budget (`--view-budget-bytes`, 8,192 a tick) is sent its own cell less often. This is \
             the server's part of the live figure above, not the live figure: the sockets' writes, the relay \
             through Redis and the bots' reading add to it on a machine.",
            deltas.players,
            deltas.shuffle,
            count(deltas.ticks as f64),
            count(deltas.warmup as f64),
        ),
        String::new(),
    ];
    let rows: Vec<Vec<String>> = [("deltas", deltas), ("full (control)", full)]
        .iter()
        .map(|(label, c)| {
            vec![
                label.to_string(),
                format!(
                    "{} of {} (within {} units)",
                    count(f64::from(c.gathered)),
                    count(f64::from(c.players)),
                    general(f64::from(c.gather_radius))
                ),
                format!("{} / {} / {}", f1(Some(c.gap_ms.p50)), f1(Some(c.gap_ms.p95)), f1(Some(c.gap_ms.max))),
                f1(Some(c.relayed_gap_ms.p95)),
                f1(Some(c.bytes_per_socket_tick)),
                f2(Some(c.frames_per_socket_tick)),
                f2(Some(c.ms_per_tick)),
            ]
        })
        .collect();
    out.extend(table(
        &[
            "frames",
            "gathered",
            "own gap p50 / p95 / max ms",
            "relayed gap p95 ms",
            "view-frame bytes a socket a tick",
            "frames a socket a tick",
            "both shards' ticks, ms a tick",
        ],
        &rows,
    ));
    out.push(String::new());
    out
}

/// What the shard core alone says of the crowd's goal (own gap p95 at
/// most 60 ms with 2,000 players, at least 95 % of them gathered).
fn core_verdict((deltas, _): &(CrowdCore, CrowdCore)) -> String {
    let gathered = f64::from(deltas.gathered) >= 0.95 * f64::from(deltas.players);
    match (deltas.players >= 2000 && gathered, deltas.gap_ms.p95 <= 60.0) {
        (false, _) => "the shard core alone not judged (fewer than 2,000 players, or not gathered)".to_owned(),
        (true, true) => "the shard core alone meets it offline".to_owned(),
        (true, false) => "the shard core alone does not meet it offline".to_owned(),
    }
}

fn row(figure: &str, today: &str, goal: &str, ours: String, verdict: String) -> Vec<String> {
    vec![figure.to_owned(), today.to_owned(), goal.to_owned(), ours, verdict]
}
