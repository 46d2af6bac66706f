//! Readable text for each report: what a person running the loadgen sees.

use super::aoi::{AoiFigures, DensityFigures, ObserverFigures, Spread};
use super::crowd::CrowdReport;
use super::{
    ArrivalsReport, FailoverAction, FailoverReport, IdleReport, Measured, RunInfo, ServerFigures, StepsReport,
    WalkReport,
};
use crate::stats::Summary;
use mino_protocol::ShardId;
use std::fmt::Write;

/// `p50 / p95 / p99 / max` in ms, or "-" without samples.
pub fn summary(s: &Summary) -> String {
    if s.count == 0 {
        return "-".into();
    }
    format!("{:.1} / {:.1} / {:.1} / {:.1}", s.p50, s.p95, s.p99, s.max)
}

/// Bytes with a binary unit.
pub fn bytes(n: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

fn opt_bytes(n: Option<u64>) -> String {
    n.map_or_else(|| "-".into(), |n| bytes(n as f64))
}

fn header(out: &mut String, title: &str, info: &RunInfo) {
    let _ = writeln!(
        out,
        "{title} ({} profile, {}) -> {}",
        info.profile.as_str(),
        info.transport.label(),
        info.urls.join(", ")
    );
    if let Some(i) = &info.interrupted {
        let _ = writeln!(
            out,
            "  INTERRUPTED at {:.1} s: {}; a partial run: its figures are not a full run's",
            i.at_s, i.reason
        );
    }
    let _ = writeln!(out, "  {}", info.local_limits.describe());
}

fn server_lines(out: &mut String, s: &Option<ServerFigures>) {
    let Some(s) = s else { return };
    let f = &s.cpu_per_frame_us;
    // No frame delivered (an idle run): nothing per frame, not 0 µs.
    let per_frame = match f.total > 0.0 {
        true => format!("user {:.2} µs, sys {:.2} µs, total {:.2} µs", f.user, f.sys, f.total),
        false => "-".to_owned(),
    };
    let _ = writeln!(
        out,
        "  server {:?}: {:.2} cores (user {:.2} s, sys {:.2} s); per delivered frame {per_frame}",
        s.pids, s.cores, s.cpu_user_s, s.cpu_sys_s
    );
    let _ = writeln!(
        out,
        "  server rss {} ({} per player, peak {} over the process's life)",
        bytes(s.rss_bytes as f64),
        bytes(s.rss_per_player_bytes as f64),
        bytes(s.rss_peak_bytes as f64)
    );
}

/// The note under "gap, silent ticks out" (see `Metric::NewsGap`): a shard
/// numbers its ticks by the clock, so the ticks it skipped after a stall are
/// taken out like those that sent a socket nothing.
pub const NEWS_GAP_NOTE: &str = "^ takes out a stall's skipped ticks too (ticks go by the clock): read it beside \
     the shards' skipped ticks (mino_ticks_skipped_total; crowd reports them) and the longest freeze";

fn measured_lines(out: &mut String, m: &Measured) {
    // Refusals are said only when there were some ("busy 0 (0 refusals)" read as two counts of nothing).
    let refusals = if m.busy_refusals > 0 { format!(" ({} refusals)", m.busy_refusals) } else { String::new() };
    let _ = writeln!(
        out,
        "  connected {}, busy {}{refusals}, errors {}{}",
        m.connected,
        m.busy,
        m.errors,
        if m.error_kinds.is_empty() { String::new() } else { format!(" {:?}", m.error_kinds) }
    );
    let _ = writeln!(out, "  {:<22} p50 / p95 / p99 / max, ms", "");
    for (name, s) in [
        ("welcome", &m.welcome_ms),
        ("snapshot gap (own)", &m.snapshot_gap_ms),
        ("own gap at the socket", &m.socket_gap_ms),
        ("snapshot gap (relayed)", &m.relayed_snapshot_gap_ms),
        ("gap, silent ticks out", &m.news_gap_ms),
        ("longest freeze / 10 s", &m.longest_freeze_ms),
        ("snapshot age", &m.snapshot_age_ms),
        ("ping round trip", &m.rtt_ms),
    ] {
        let _ = writeln!(out, "  {name:<22} {}", summary(s));
        if std::ptr::eq(s, &m.news_gap_ms) && s.count > 0 {
            let _ = writeln!(out, "  {:<22} {NEWS_GAP_NOTE}", "");
        }
    }
    let _ = writeln!(
        out,
        "  received {} frames, {} in all (ramp and hold); {:.0} frames/s, {}/s; {:.2} ticks/s per bot over the {:.1} s hold",
        m.frames,
        bytes(m.bytes as f64),
        m.frames_per_s,
        bytes(m.bytes_per_s),
        m.ticks_per_s,
        m.seconds
    );
    let _ = writeln!(
        out,
        "  loadgen cpu {:.1} %, machine {:.1} %: {}",
        m.loadgen_cpu_pct,
        m.machine_cpu_pct,
        m.verdict.qualified(m.machine_cpu_pct)
    );
    super::transport::lines(out, m);
    server_lines(out, &m.server);
    if let Some(a) = &m.aoi {
        aoi_lines(out, a);
    }
    if let Some(d) = &m.density {
        density_line(out, d);
    }
    if let Some(agents) = &m.agents {
        super::fleet::agent_lines(out, agents);
    }
}

/// `mean / p50 / p95 / max` of a spread with `unit`, or "-" without bots.
pub fn spread(s: &Spread, unit: &str) -> String {
    if s.count == 0 {
        return "-".into();
    }
    format!("{:.0} / {:.0} / {:.0} / {:.0} {unit}", s.mean, s.p50, s.p95, s.max)
}

fn ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "-".into(), |r| format!("{r:.2}"))
}

fn aoi_lines(out: &mut String, a: &AoiFigures) {
    let _ = writeln!(out, "  area of interest        mean / p50 / p95 / max over bots");
    let _ = writeln!(out, "  {:<22} {}", "bytes per bot", spread(&a.bot_bytes_per_s, "B/s"));
    let _ = writeln!(out, "  {:<22} {}", "cell bytes per tick", spread(&a.cell_bytes_per_tick, "B"));
    let _ = writeln!(out, "  {:<22} p50 / p95 / p99 / max, ms", "");
    let _ = writeln!(out, "  {:<22} {}", "own-cell gap", summary(&a.own_cell_gap_ms));
    let _ = writeln!(out, "  {:<22} {}", "neighbour gap", summary(&a.neighbour_gap_ms));
    let _ = writeln!(
        out,
        "  {:.0} cells/s, {:.1} header bytes a cell; {} closed as too slow",
        a.cell_frames_per_s, a.header_bytes_per_frame, a.too_slow_closes
    );
    if let Some(o) = &a.observers {
        observer_lines(out, o);
    }
}

fn observer_lines(out: &mut String, o: &ObserverFigures) {
    let _ = writeln!(
        out,
        "  observers {} ({} ticks): {} view enters, {} unseen; pop-ins {}, blinks {}",
        o.observers, o.ticks, o.view_enters, o.view_enters_unseen, o.pop_ins, o.blinks
    );
    let _ = writeln!(out, "  {:<22} {}", "view enter, ms", summary(&o.view_enter_ms));
    let _ = writeln!(out, "  {:<22} {}", "view enter, ticks", summary(&o.view_enter_ticks));
    let _ = writeln!(
        out,
        "  a tick: {:.1} players in view, ideal {:.0} B; entries {:.0} B (crop {}), headers {:.0} B, all {:.0} B ({} x ideal)",
        o.players_in_view,
        o.ideal_bytes_per_tick,
        o.entry_bytes_per_tick,
        ratio(o.crop_ratio),
        o.header_bytes_per_tick,
        o.total_bytes_per_tick,
        ratio(o.total_vs_ideal)
    );
    if let Some(p) = &o.parts_per_tick {
        let _ = writeln!(
            out,
            "  a tick by part: framing {:.1} B, references {:.1} B ({:.1} cells, {:.1} of them empty deltas), \
             implied cells {:.1} B ({:.1} cells), \
             full forms {:.1} B, deltas {:.1} B, supplements {:.1} B ({:.1} players, {:.1} of them held in another cell), \
             forgets {:.1} B, other messages {:.1} B",
            p.framing,
            p.references,
            p.cells,
            p.empty_deltas,
            p.implied,
            p.implied_cells,
            p.full_forms,
            p.deltas,
            p.supplements,
            p.supplement_entries,
            p.supplement_entries_held,
            p.forgets,
            p.other_messages
        );
    }
}

fn density_line(out: &mut String, d: &DensityFigures) {
    let r = &d.region;
    let _ = writeln!(
        out,
        "  density {} a cell asked: region ({:.0}, {:.0})-({:.0}, {:.0}), {:.1} cells; {} of {} bots inside, {:.2} a cell",
        d.players_per_cell, r.min_x, r.min_y, r.max_x, r.max_y, d.region_cells, d.inside, d.connected, d.achieved_per_cell
    );
}

/// The walk summary.
pub fn walk(r: &WalkReport) -> String {
    let mut out = String::new();
    header(&mut out, &format!("walk: {} bots", r.bots), &r.info);
    measured_lines(&mut out, &r.measured);
    // Shard ids as the shards' logs write them (ShardId's Display: 8 lowercase hex digits).
    let ids: Vec<String> = r.shard_ids.iter().map(|id| ShardId(*id).to_string()).collect();
    let _ = writeln!(out, "  shards seen {} [{}]", r.shards_seen, ids.join(", "));
    out
}

/// The steps table: one row per step.
pub fn steps(r: &StepsReport) -> String {
    let mut out = String::new();
    header(&mut out, &format!("steps: {} steps", r.steps.len()), &r.info);
    let _ = writeln!(
        out,
        "{:>7} {:>6} {:>5} {:>5} | {:^27} | {:^27} | {:^27} | {:>8} {:>10} {:>6} {:>7} | {:>9} | verdict",
        "players",
        "conn",
        "busy",
        "err",
        "welcome ms p50/95/99/max",
        "own gap ms p50/95/99/max",
        "relayed gap ms p50/95/99/max",
        "frames/s",
        "bytes/s",
        "tick/s",
        "lg cpu",
        "srv µs/f"
    );
    for s in &r.steps {
        let m = &s.measured;
        let srv = m.server.as_ref().map_or_else(|| "-".into(), |f| format!("{:.2}", f.cpu_per_frame_us.total));
        let _ = writeln!(
            out,
            "{:>7} {:>6} {:>5} {:>5} | {:^27} | {:^27} | {:^27} | {:>8.0} {:>10} {:>6.2} {:>6.1}% | {:>9} | {}",
            s.players,
            m.connected,
            m.busy,
            m.errors,
            summary(&m.welcome_ms),
            summary(&m.snapshot_gap_ms),
            summary(&m.relayed_snapshot_gap_ms),
            m.frames_per_s,
            bytes(m.bytes_per_s),
            m.ticks_per_s,
            m.loadgen_cpu_pct,
            srv,
            m.verdict.label()
        );
    }
    if r.steps.iter().any(|s| s.measured.aoi.is_some()) {
        aoi_steps(&mut out, r);
    }
    // A mix: each step's transports apart, as walk gives them.
    for s in r.steps.iter().filter(|s| s.measured.transports.is_some()) {
        let _ = writeln!(out, "step of {} players:", s.players);
        super::transport::lines(&mut out, &s.measured);
    }
    let _ = writeln!(out, "shards seen {}", r.shards_seen);
    out
}

/// The area-of-interest columns of each step.
fn aoi_steps(out: &mut String, r: &StepsReport) {
    let _ = writeln!(
        out,
        "{:>7} | {:>11} {:>10} | {:>9} {:>9} | {:>11} {:>11} | {:>7} {:>6} {:>6} {:>7}",
        "players",
        "B/s/bot p50",
        "p95",
        "own p95ms",
        "nbr p95ms",
        "enter p95ms",
        "p95 ticks",
        "pop-ins",
        "blinks",
        "crop",
        "x ideal"
    );
    for s in &r.steps {
        let Some(a) = &s.measured.aoi else { continue };
        let o = a.observers.clone().unwrap_or_default();
        let _ = writeln!(
            out,
            "{:>7} | {:>11.0} {:>10.0} | {:>9.1} {:>9.1} | {:>11.1} {:>11.2} | {:>7} {:>6} {:>6} {:>7}",
            s.players,
            a.bot_bytes_per_s.p50,
            a.bot_bytes_per_s.p95,
            a.own_cell_gap_ms.p95,
            a.neighbour_gap_ms.p95,
            o.view_enter_ms.p95,
            o.view_enter_ticks.p95,
            o.pop_ins,
            o.blinks,
            ratio(o.crop_ratio),
            ratio(o.total_vs_ideal)
        );
    }
}

/// The idle summary.
pub fn idle(r: &IdleReport) -> String {
    let mut out = String::new();
    header(&mut out, &format!("idle: {} bots", r.bots), &r.info);
    measured_lines(&mut out, &r.measured);
    let _ = writeln!(
        out,
        "  server rss {} -> {}: {} per idle connection; kernel TCP memory {} per connection (both ends)",
        opt_bytes(r.server_rss_before_bytes),
        opt_bytes(r.server_rss_after_bytes),
        opt_bytes(r.server_bytes_per_connection),
        opt_bytes(r.kernel_tcp_bytes_per_connection)
    );
    if let Some(ms) = r.server_cpu_per_tick_ms {
        let _ = writeln!(out, "  server cpu per tick: {ms:.3} ms");
    }
    if let Some(c) = &r.chat_cost {
        let per = c.cpu_per_socket_us.map_or("-".to_owned(), |us| format!("{us:.2} µs"));
        let _ = writeln!(
            out,
            "  one chat line to all: {per} of server cpu a socket ({} lines, {} deliveries; cpu {:.3} s quiet, {:.3} s chatting)",
            c.lines, c.deliveries, c.quiet_cpu_s, c.chat_cpu_s
        );
    }
    out
}

/// The arrivals summary.
pub fn arrivals(r: &ArrivalsReport) -> String {
    let mut out = String::new();
    header(&mut out, &format!("arrivals: {} bots at {}/s", r.bots, r.rate_per_s), &r.info);
    let _ = writeln!(
        out,
        "  achieved {:.1}/s; admitted {}, joins timed out {}",
        r.achieved_rate_per_s, r.admitted, r.timed_out
    );
    measured_lines(&mut out, &r.measured);
    out
}

/// The crowd summary.
pub fn crowd(r: &CrowdReport) -> String {
    let mut out = String::new();
    let [x, y] = r.point;
    header(&mut out, &format!("crowd: {} bots at ({x:.0}, {y:.0})", r.bots), &r.info);
    let _ = writeln!(
        out,
        "  gathered within {:.0} units: {} when measuring started ({:.1} s), {} at the end",
        r.gather_radius, r.gathered, r.gather_s, r.gathered_at_end
    );
    if r.shuffle > 0.0 {
        let _ = writeln!(out, "  {:.0} % of the crowd stepping out every 1 to 3 s (--shuffle)", r.shuffle * 100.0);
    }
    measured_lines(&mut out, &r.measured);
    match &r.late_ticks {
        Some(l) => {
            let _ = writeln!(
                out,
                "  late ticks {} of {} ({:.1} %) on {} shard(s); ticks skipped after a stall {}",
                l.late,
                l.ticks,
                l.late_share * 100.0,
                l.shards,
                l.skipped.map_or_else(|| "-".into(), |n| n.to_string())
            );
        }
        None => {
            let _ = writeln!(out, "  late ticks: no shard metrics read (--metrics-url)");
        }
    }
    let server = r.too_slow.server.map_or_else(|| "-".into(), |n| n.to_string());
    let _ = writeln!(out, "  closed as too slow: {} seen by the bots, {server} by the shards", r.too_slow.bots);
    if let Some(b) = &r.budget {
        let srv = b.server_bytes_per_socket_tick.map_or_else(|| "-".into(), |v| format!("{v:.0} B"));
        let _ = writeln!(
            out,
            "  budget {} B a tick: cell bytes per bot per tick {} ({}); shards sent {srv} a socket a tick",
            b.budget_bytes,
            spread(&b.cell_bytes_per_tick, "B"),
            if b.within_budget {
                "every bot within budget".to_owned()
            } else {
                format!("{} bots OVER BUDGET", b.bots_over_budget)
            }
        );
    }
    for e in &r.scrape_errors {
        let _ = writeln!(out, "  metrics not read: {e}");
    }
    out
}

/// The failover summary.
pub fn failover(r: &FailoverReport) -> String {
    let mut out = String::new();
    header(&mut out, &format!("failover: {} pid {} with {} bots", r.action.label(), r.pid, r.bots), &r.info);
    let _ = writeln!(
        out,
        "  connected before {}, affected {}, lost {}, resumed {}, fresh rejoins {}, misplaced {} (max jump {:.2} units)",
        r.connected_before, r.affected, r.lost, r.resumed, r.fresh_rejoins, r.misplaced, r.max_resume_jump
    );
    let (shards, bots) = (r.dead_shards.join(", "), r.dead_shard_bots);
    let dead = match (r.dead_shards.is_empty(), r.dead_shard_given) {
        (true, _) => "unknown (no bot left its shard)".to_owned(),
        (false, true) if bots == 0 => format!("{shards} (given; no bot was on it: a wrong --shard-id?)"),
        (false, true) => format!("{shards} (given; {bots} bots on it at the signal)"),
        (false, false) => format!("{shards} (the shard most bots left; {bots} bots on it at the signal)"),
    };
    let _ = writeln!(out, "  the shard that died: {dead}");
    let _ = writeln!(out, "  {:<22} p50 / p95 / p99 / max, ms", "from socket close to");
    let _ = writeln!(out, "  {:<22} {}", "resumed welcome", summary(&r.resume_welcome_ms));
    let _ = writeln!(out, "  {:<22} {}", "back in place", summary(&r.back_in_place_ms));
    let ms = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{v:.0} ms"));
    // A kill's sockets close as the kernel resets them; a drain empties the shard.
    let emptied = match r.action {
        FailoverAction::Kill => "last affected socket closed",
        FailoverAction::Drain => "time to empty",
    };
    let _ = writeln!(
        out,
        "  {emptied} {}, process exit {}, connected after {}, failures after the signal {} {:?}",
        ms(r.time_to_empty_ms),
        ms(r.process_exit_ms),
        r.connected_after,
        r.errors,
        r.error_kinds
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Verdict;

    #[test]
    fn formats_summaries_and_bytes() {
        assert_eq!(summary(&Summary::default()), "-");
        let s = Summary { p50: 50.0, p95: 51.25, p99: 60.0, max: 99.0, count: 3 };
        assert_eq!(summary(&s), "50.0 / 51.2 / 60.0 / 99.0");
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(bytes(1536.0), "1.5 KiB");
        assert_eq!(bytes(3.0 * 1024.0 * 1024.0), "3.0 MiB");
    }

    #[test]
    fn a_measured_phase_on_a_saturated_machine_says_so() {
        let v = |verdict, machine| Verdict::qualified(verdict, machine);
        assert_eq!(v(Verdict::Measured, 94.9), "measured");
        assert_eq!(v(Verdict::Measured, 99.7), "measured (machine saturated)");
        // Only a measured phase is qualified: the others say more already.
        assert_eq!(v(Verdict::NotJudgeable, 99.7), "not judgeable");
        assert_eq!(v(Verdict::NoFrames, 100.0), "no frames");
    }
}
