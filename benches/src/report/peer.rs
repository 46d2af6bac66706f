//! Section 14, the peer: the same walking game on Colyseus, side by side
//! with mino on the same machine, run alternately; medians of the runs, the
//! ratios Colyseus ÷ mino where both were judgeable, and each run.

use super::fmt::{count, f1, f2, fixed, kb, median, ratio, table, DASH};
use super::verdict::{judge, of_verdicts, JUDGE_NOTE};
use super::Report;
use crate::raw::{PeerRun, PeerServer};
use std::collections::BTreeMap;

/// One verdict for repeated runs, as for mino's repeated rows.
fn verdicts(runs: &[&PeerRun]) -> String {
    let v: Vec<&str> = runs.iter().map(|r| judge(r.verdict(), r.machine_cpu_pct)).collect();
    of_verdicts(&v)
}

/// The median of a figure over runs.
fn med(runs: &[&PeerRun], f: impl Fn(&PeerRun) -> Option<f64>) -> Option<f64> {
    median(runs.iter().map(|r| f(r)))
}

/// Updates a client received a second.
fn update_rate(r: &PeerRun) -> Option<f64> {
    (r.connected > 0 && r.seconds > 0.0).then(|| r.updates as f64 / r.connected as f64 / r.seconds)
}

impl Report {
    pub(super) fn peer_section(&self) -> Vec<String> {
        if self.raw.peer.is_empty() {
            return Vec::new();
        }
        let mut by: BTreeMap<(u64, PeerServer), Vec<&PeerRun>> = BTreeMap::new();
        for r in &self.raw.peer {
            by.entry((r.players, r.server)).or_default().push(r);
        }
        let first = |s: PeerServer| self.raw.peer.iter().find(|r| r.server == s);
        let version = |s: PeerServer| first(s).map_or(DASH.into(), |r| r.version.clone());
        let tester = |s: PeerServer| first(s).map_or(DASH.into(), |r| r.tester.clone());
        let repeats = by.values().map(Vec::len).max().unwrap_or(0);
        let mut out = vec![
            "## 14. The peer: Colyseus side by side".to_owned(),
            String::new(),
            format!(
                "The same walking game on [Colyseus](https://colyseus.io) ({}, from the npm registry; \
                 `benches/peer/colyseus/`), the server most browser games use, and on mino (commit `{}`), on this \
                 machine, alternating (mino then Colyseus, then the other way round) at each count, {repeats} run(s) \
                 each; medians. Colyseus: one room in one Node process, its own schema (a `MapSchema` of players, \
                 `x`, `y` and `heading` as `float32`), the simulation stepping at 20 Hz, patches at its default patch \
                 rate (20 Hz), its usual websocket transport (`@colyseus/ws-transport`); its clients: {}. mino: one \
                 shard (whole-shard snapshots: every socket gets every player, as the room sends every player to every \
                 client), the busy rule off; its clients: {}. Both: a 1,000-unit world, 120 units a second, every \
                 player turning every 1 to 3 s. CPU per delivered update: the server process's user + system time \
                 over the hold (`/proc/PID/stat`) ÷ the state updates (mino's snapshots, Colyseus's patches) its \
                 clients received in it; memory per player: the server's RSS growth from before the first player to \
                 the end of the hold ÷ players; bytes: websocket payloads a client received a second (every \
                 message); gap: between consecutive updates of a client. A tester past 70 % of the cores it may use \
                 makes its run not judgeable, as mino's loadgen does.",
                version(PeerServer::Colyseus),
                version(PeerServer::Mino),
                tester(PeerServer::Colyseus),
                tester(PeerServer::Mino),
            ),
            String::new(),
        ];
        let mut rows = Vec::new();
        let mut ratios = Vec::new();
        let counts: Vec<u64> =
            by.keys().map(|(n, _)| *n).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
        for n in counts {
            let runs = |s: PeerServer| by.get(&(n, s)).cloned().unwrap_or_default();
            let (m, c) = (runs(PeerServer::Mino), runs(PeerServer::Colyseus));
            for (s, rs) in [(PeerServer::Mino, &m), (PeerServer::Colyseus, &c)] {
                if rs.is_empty() {
                    continue;
                }
                rows.push(vec![
                    count(n as f64),
                    s.label().into(),
                    rs.len().to_string(),
                    f2(med(rs, PeerRun::cpu_per_update_us)),
                    kb(med(rs, PeerRun::memory_per_player)),
                    med(rs, PeerRun::bytes_per_client_per_s).map_or(DASH.into(), count),
                    f1(med(rs, update_rate)),
                    format!("{} / {}", f1(med(rs, |r| Some(r.gap_ms.p95))), f1(med(rs, |r| Some(r.gap_ms.p99)))),
                    format!("{} %", fixed(med(rs, |r| Some(r.tester_cpu_pct)).unwrap_or(0.0), 0)),
                    verdicts(rs),
                ]);
            }
            let judged = |rs: &[&PeerRun]| !rs.is_empty() && !verdicts(rs).starts_with(JUDGE_NOTE);
            if judged(&m) && judged(&c) {
                let r = |f: fn(&PeerRun) -> Option<f64>| ratio(med(&c, f), med(&m, f));
                ratios.push(vec![
                    count(n as f64),
                    r(PeerRun::cpu_per_update_us),
                    r(PeerRun::memory_per_player),
                    r(PeerRun::bytes_per_client_per_s),
                    r(|x| Some(x.gap_ms.p95)),
                    r(|x| Some(x.gap_ms.p99)),
                ]);
            } else if !m.is_empty() && !c.is_empty() {
                ratios.push(vec![
                    count(n as f64),
                    "not judgeable: a tester passed its CPU limit".into(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                ]);
            }
        }
        out.extend(table(
            &[
                "players",
                "server",
                "runs",
                "server CPU per delivered update, µs",
                "server memory per player",
                "bytes a client a second",
                "updates a client a second",
                "gap p95 / p99 ms",
                "tester CPU",
                "verdict",
            ],
            &rows,
        ));
        out.extend(["", "Colyseus ÷ mino (medians; above 1× Colyseus costs more):", ""].map(String::from));
        out.extend(table(
            &[
                "players",
                "CPU per delivered update",
                "memory per player",
                "bytes a client a second",
                "gap p95",
                "gap p99",
            ],
            &ratios,
        ));
        out.extend([
            String::new(),
            "Comparable: the game, the world, the walkers, the tick and patch rates, one server process each, the \
             machine and the moment (the runs alternate), and how server CPU, memory and bytes are counted. Not \
             comparable: the wire formats (mino's bots take protocol 4's shared delta frames, each cell a delta \
             against its previous frame with residuals against a prediction both ends compute, section 15; runs \
             taken before protocol 4, by the commit above, got each player's whole state, quantized, 10 bytes, in \
             every snapshot; Colyseus sends only the fields that changed since its last patch, as float32s, in its schema's \
             encoding); the runtimes (Rust against Node's V8 and its garbage collector: Colyseus's RSS includes a \
             heap that grows and is collected); the testers (mino's bots verify every frame; a sample of Colyseus's \
             clients decode and apply every patch, the others read its protocol code: jobs of the testers, not the \
             servers); and what a \
             production deployment adds in front of either (TLS, a proxy). mino's snapshots go out on the tick; \
             Colyseus's patches on a Node timer, which a busy machine delays (its gap shows it). Rerun with \
             `benches/scale.sh --only peer` (it installs the Colyseus project's locked packages with `npm ci` when \
             they are missing)."
                .into(),
            String::new(),
            "Each run, in the order run:".into(),
            String::new(),
        ]);
        let mut in_order: Vec<&PeerRun> = self.raw.peer.iter().collect();
        // Odd runs measured mino first, even runs Colyseus first.
        in_order.sort_by_key(|r| (r.run, r.players, (r.server == PeerServer::Mino) == (r.run % 2 == 0)));
        let each: Vec<Vec<String>> = in_order
            .iter()
            .map(|r| {
                vec![
                    r.run.to_string(),
                    count(r.players as f64),
                    r.server.label().into(),
                    count(r.connected as f64),
                    f2(r.cpu_per_update_us()),
                    kb(r.memory_per_player()),
                    r.bytes_per_client_per_s().map_or(DASH.into(), count),
                    format!("{} / {} / {}", f1(Some(r.gap_ms.p50)), f1(Some(r.gap_ms.p95)), f1(Some(r.gap_ms.p99))),
                    format!("{:.0} %", r.tester_cpu_pct),
                    format!("{:.0} %", r.machine_cpu_pct),
                    judge(r.verdict(), r.machine_cpu_pct).into(),
                ]
            })
            .collect();
        out.extend(table(
            &[
                "run",
                "players",
                "server",
                "connected",
                "CPU µs / update",
                "memory / player",
                "bytes / client / s",
                "gap p50 / p95 / p99 ms",
                "tester CPU",
                "machine CPU",
                "verdict",
            ],
            &each,
        ));
        out.push(String::new());
        out
    }
}
