//! Section 2, the shards' CPU per delivered frame against players.

use super::fmt::{count, f1, f2, ratio, table};
use super::gap::by_players;
use super::verdict;
use super::Report;
use mino_loadgen::report::Measured;
use std::collections::{BTreeMap, BTreeSet};

/// `user / sys / **total**` µs a frame, or "not run".
fn cell(m: Option<&Measured>) -> String {
    match m.and_then(|m| m.server.as_ref()) {
        Some(s) => {
            let f = &s.cpu_per_frame_us;
            format!("{} / {} / **{}**", f2(Some(f.user)), f2(Some(f.sys)), f2(Some(f.total)))
        }
        None => "not run".into(),
    }
}

impl Report {
    pub(super) fn cpu_section(&mut self) -> Vec<String> {
        let orig = &self.raw.original.cpu_per_frame_us;
        let o: BTreeMap<u64, _> = orig.rows.iter().map(|r| (r.players, r)).collect();
        let (one, two) = (by_players(&self.raw.one), by_players(&self.raw.two));
        let mut rows = Vec::new();
        for n in o.keys().chain(one.keys()).chain(two.keys()).copied().collect::<BTreeSet<u64>>() {
            let orow = o.get(&n);
            let s1 = one.get(&n).map(|s| &s.0.measured);
            let s2 = two.get(&n).map(|s| &s.0.measured);
            let t2 = s2.and_then(|m| m.server.as_ref()).map(|s| s.cpu_per_frame_us.total);
            rows.push(vec![
                count(n as f64),
                f1(orow.map(|r| r.server_us)),
                f1(orow.map(|r| r.nginx_us)),
                cell(s1),
                s1.map_or(String::new(), |m| verdict::of(m).into()),
                cell(s2),
                s2.map_or(String::new(), |m| verdict::of(m).into()),
                ratio(t2, orow.map(|r| r.server_us)),
            ]);
        }
        let mut out = vec![
            "## 2. Server CPU per delivered frame".to_owned(),
            String::new(),
            "User and system CPU of the shard processes only (from `/proc/PID/stat` over each step's hold), divided \
             by the frames the bots received in that hold (the loadgen's count: own and relayed snapshots, pongs, \
             presence). On loopback the kernel work of the receiving side is largely charged to the sending \
             process's system time. The original's figure is the server process alone, with nginx (TLS) beside it."
                .into(),
            String::new(),
        ];
        out.extend(table(
            &[
                "players",
                "original server µs",
                "original nginx µs",
                "ours one shard user / sys / total µs",
                "verdict",
                "ours two shards user / sys / total µs",
                "verdict",
                "two shards total ÷ original server",
            ],
            &rows,
        ));
        out.push(String::new());
        let mut summary = Vec::new();
        if let Some((s, w)) = one.get(&1000).copied() {
            if let Some(server) = &s.measured.server {
                let f = &server.cpu_per_frame_us;
                let bpf = w.as_ref().and_then(|w| w.shards.get("a")).and_then(|a| a.bytes_per_frame);
                let per_player = bpf.filter(|b| *b != 0.0).map(|b| b / s.measured.connected as f64);
                let v = verdict::of(&s.measured);
                out.extend([
                    format!(
                        "One shard at 1,000 players (issue 2's goals: at most 3 µs user and 12 µs in all): **{} µs \
                         user, {} µs in all** ({v}); {}, {}. Mean frame payload {} bytes, {} bytes per player (a \
                         `PlayerState` is 10 bytes: u16-quantized position). With one shard every socket gets one \
                         frame a tick, so this is also the cost of one write.",
                        f2(Some(f.user)),
                        f2(Some(f.total)),
                        if f.user <= 3.0 { "user goal met" } else { "user goal not met" },
                        if f.total <= 12.0 { "total goal met" } else { "total goal not met" },
                        f1(bpf),
                        f2(per_player),
                    ),
                    String::new(),
                ]);
                summary.push([
                    "server CPU per delivered frame at 1,000 players, one process".to_owned(),
                    "6.6 µs (server)".into(),
                    format!("{} µs (user {})", f2(Some(f.total)), f2(Some(f.user))),
                    ratio(Some(f.total), Some(6.6)),
                    v.into(),
                ]);
            }
        }
        if let Some((s, w)) = two.get(&1000).copied() {
            if let Some(server) = &s.measured.server {
                let f = &server.cpu_per_frame_us;
                let per_shard = server.cores / 2.0;
                let c = &self.raw.original.cpu_per_frame_us.cores_at_1000;
                let v = verdict::of(&s.measured);
                out.extend([
                    format!(
                        "Two shards at 1,000 players: {} µs per delivered frame; each shard process {} cores on \
                         average (original: server {} cores and nginx {} cores per machine); Redis {} cores.",
                        f2(Some(f.total)),
                        f2(Some(per_shard)),
                        c.server,
                        c.nginx,
                        f2(w.as_ref().and_then(|w| w.redis.as_ref()).map(|r| r.cpu_cores)),
                    ),
                    String::new(),
                ]);
                summary.push([
                    "server CPU per delivered frame at 1,000 players, two processes".into(),
                    "6.6 µs".into(),
                    format!("{} µs", f2(Some(f.total))),
                    ratio(Some(f.total), Some(6.6)),
                    v.into(),
                ]);
                summary.push([
                    "cores per server process at 1,000 players (two processes)".into(),
                    "0.13".into(),
                    f2(Some(per_shard)),
                    ratio(Some(per_shard), Some(0.13)),
                    v.into(),
                ]);
            }
        }
        self.summary.extend(summary);
        out
    }
}
