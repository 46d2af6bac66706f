//! Section 11, Redis beyond one node: a primary killed on a Redis Cluster
//! and under Sentinel, and the load on each cluster primary.

use super::fmt::{count, median, table, DASH};
use super::Report;
use crate::raw::{OutageGap, Primary, RedisFailover, RedisSpread};

/// The median of the values with each run's value after it, when more than
/// one: `3.88 s (3.82 s, 4.58 s, 3.88 s)`.
fn runs_of(values: impl IntoIterator<Item = Option<f64>>, fmt: impl Fn(f64) -> String) -> String {
    let v: Vec<f64> = values.into_iter().flatten().collect();
    let Some(m) = median(v.iter().copied().map(Some)) else { return DASH.into() };
    if v.len() > 1 {
        let each: Vec<String> = v.iter().map(|x| fmt(*x)).collect();
        format!("{} ({})", fmt(m), each.join(", "))
    } else {
        fmt(m)
    }
}

/// The 1-minute load average before a run.
fn load1(before: &[f64]) -> Option<f64> {
    before.first().copied()
}

/// Seconds, or "not back within 90 s".
fn s2(v: f64) -> String {
    if v == f64::INFINITY {
        "not back within 90 s".into()
    } else {
        format!("{v:.2} s")
    }
}

/// The relayed gaps from the kill to the promotion of the watcher whose
/// relayed shard publishes on a healthy primary (or on the killed one).
fn outage_gap(r: &RedisFailover, healthy: bool, figure: fn(&OutageGap) -> Option<f64>) -> Option<f64> {
    r.outage_relayed_gap_ms.iter().find(|g| g.healthy_primary == healthy).and_then(figure)
}

/// Milliseconds to a tenth.
fn ms1(v: f64) -> String {
    format!("{v:.1} ms")
}

/// A failover figure: its label, how it is read, how it is written.
type FailoverFigure = (&'static str, fn(&RedisFailover) -> Option<f64>, fn(f64) -> String);

const FAILOVER: [FailoverFigure; 11] = [
    ("bots", |r| Some(r.bots as f64), count),
    ("players lost (bots not in their first session at the end)", |r| Some(r.players_lost as f64), count),
    ("bots that had to reconnect", |r| Some(r.reconnected as f64), count),
    ("kill → replica promoted", |r| Some(r.promoted_s), s2),
    (
        "local play: own-snapshot gap p95 from the kill until relay was back",
        |r| Some(r.own_gap_ms.p95),
        |v| format!("{v:.1} ms"),
    ),
    (
        "relayed snapshots: longest stop (the longer of the two watchers)",
        |r| r.relay_stop_s.iter().copied().reduce(f64::max),
        s2,
    ),
    (
        "relayed snapshots flowing again, from the kill (the later watcher)",
        |r| {
            if r.relay_back_s.contains(&None) {
                Some(f64::INFINITY)
            } else {
                r.relay_back_s.iter().flatten().copied().reduce(f64::max)
            }
        },
        s2,
    ),
    (
        "relayed gap p95 from the kill to the promotion, the shard's channel on a healthy primary",
        |r| outage_gap(r, true, |g| g.p95),
        ms1,
    ),
    (
        "relayed gap max from the kill to the promotion, the shard's channel on a healthy primary",
        |r| outage_gap(r, true, |g| g.max),
        ms1,
    ),
    (
        "relayed gap p95 from the kill to the promotion, the shard's channel on the killed primary",
        |r| outage_gap(r, false, |g| g.p95),
        ms1,
    ),
    ("load average (1 min) before the run", |r| load1(&r.load_before), |v| format!("{v:.1}")),
];

impl Report {
    pub(super) fn redis_section(&self) -> Vec<String> {
        let mut out = vec!["## 11. Redis beyond one node".to_owned(), String::new()];
        let modes: Vec<(&str, &Vec<RedisFailover>)> =
            [("cluster", &self.raw.redis_cluster), ("sentinel", &self.raw.redis_sentinel)]
                .into_iter()
                .filter(|(_, runs)| !runs.is_empty())
                .collect();
        let spread = &self.raw.redis_spread;
        if modes.is_empty() && spread.is_empty() {
            out.extend(["Not run.".to_owned(), String::new()]);
            return out;
        }
        out.extend([
            "`examples/redis_ha` (server crate): the real `mino-server` binaries on a Redis started for the run, \
             the bots (loadgen's walkers) in the example's process. **Failover**: a six-node Redis Cluster (three \
             primaries, three replicas, `cluster-node-timeout` 2 s) or Sentinel (a primary, a replica, three \
             sentinels, `down-after-milliseconds` 2000); two shards, the bots split over them; after 7 s of play the \
             primary holding the place's slot (the sentinels' primary) is killed with SIGKILL. Players lost: bots \
             not in their session at the end; local play: each bot's gap between its own shard's snapshots from the \
             kill until relay was back (15 s at least); relay: a watcher on each shard times the longest stop of the \
             other shard's snapshots and when they flowed again, from the kill, and on a cluster the gaps between \
             them from the kill to the promotion, by where the relayed shard's cells channel lives (the example picks \
             the two shard ids so that the first's channel is on another primary than the place's slot and the \
             second's on the killed one, by the server's own names, `mino_server::Keys`; on Sentinel every channel \
             is on the killed primary). With the publisher's writes in lanes, one a slot (issue 24), a shard whose \
             channel is on a healthy primary keeps publishing every tick through the outage; before, every tick's \
             publish waited on its write to the dead slot (a command timeout, 1 s), so its snapshots arrived about \
             once a second until the promotion (at 200 bots, relayed gap p95 1,051.5 ms before and 58.6 ms after, \
             `benches/results/raw/issue24/`). Until 2026-12-04 the example chose by a channel name from before \
             regions (`mino:{main.sN}:snapshots`), so its 'killed primary' column was in fact a second shard on a \
             healthy primary, and the claim then made here that such a shard kept relaying was unfounded. The \
             subscriber too now waits on no dead primary: at a node's loss it rebuilt its whole subscription, all \
             channels or none, so a subscribe to a channel on the dead primary could stop the relay of every \
             channel for 1.2 s (3 of 10 runs of the cluster test) or cost a few frames (a gap of 100 to 150 ms); \
             each channel's command now runs on its own beside the reading. At 200 bots, the same runs with the \
             server before (commit 721e26b) and after, interleaved (`benches/results/raw/subscriber/`, \
             `target/release/examples/redis_ha failover cluster 200 BIN`): the healthy shard's longest relayed gap \
             from the kill to the promotion 102.7 ms before (102.7, 147.8, 100.3) and 55.1 ms after (71.7, 55.1, \
             52.3). A shard whose channel is on the killed primary stops for one command timeout, 1.05 s (its \
             publisher's write to the dead node times out), then relays again before the promotion: a replica \
             serves its primary's sharded pub/sub (`SPUBLISH`, `SSUBSCRIBE`). Sentinel has one primary for \
             everything: its relay stops until the promotion either way (before: 5.53, 3.83, 3.56 s for \
             promotions after 3.68, 3.15, 2.90 s). \
             **Spread**: two shards with area of interest (`--world-size 4000 --cell-size 125 --view-radius 250`: \
             the place's region channels carry their own hash tags, so they spread over the three primaries); over 20 s, each primary's CPU \
             (`/proc/PID/stat`), `SPUBLISH` calls and every command (`INFO commandstats`, `INFO stats`), and bytes \
             sent (the frames times their subscribers). Runs are interleaved (cluster, sentinel, spread at each \
             count; again), medians of the runs with each run's value after it; the load average is `uptime`'s, \
             before each run. Rerun with `benches/scale.sh --only redis` (it builds the example unless \
             `--skip-build`)."
                .to_owned(),
            String::new(),
        ]);
        if !modes.is_empty() {
            out.extend(failover_table(&modes));
        }
        if !spread.is_empty() {
            out.extend(spread_table(spread));
        }
        out
    }
}

fn failover_table(modes: &[(&str, &Vec<RedisFailover>)]) -> Vec<String> {
    let mut rows = vec![std::iter::once("runs".to_owned())
        .chain(modes.iter().map(|(_, rs)| rs.len().to_string()))
        .collect::<Vec<_>>()];
    for (i, (label, get, fmt)) in FAILOVER.iter().enumerate() {
        if i == 5 {
            let mut row = vec!["local play: own-snapshot gap p99 / max".to_owned()];
            for (_, rs) in modes {
                row.push(format!(
                    "{} / {}",
                    runs_of(rs.iter().map(|r| Some(r.own_gap_ms.p99)), |v| format!("{v:.1}")),
                    runs_of(rs.iter().map(|r| Some(r.own_gap_ms.max)), |v| format!("{v:.1} ms"))
                ));
            }
            rows.push(row);
        }
        let mut row = vec![(*label).to_owned()];
        row.extend(modes.iter().map(|(_, rs)| runs_of(rs.iter().map(get), fmt)));
        rows.push(row);
    }
    let mut verdicts = vec!["verdict".to_owned()];
    for (_, rs) in modes {
        let short: Vec<&RedisFailover> = rs.iter().filter(|r| r.bots_connected < r.bots).collect();
        verdicts.push(if short.is_empty() {
            "measured".into()
        } else {
            let joined: Vec<String> = short.iter().map(|r| count(r.bots_connected as f64)).collect();
            format!("{} run(s) short of bots (joined {})", short.len(), joined.join(", "))
        });
    }
    rows.push(verdicts);
    let head: Vec<String> = std::iter::once("Redis primary killed".to_owned())
        .chain(modes.iter().map(|(m, rs)| format!("{m} ({} bots)", count(rs[0].bots as f64))))
        .collect();
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    let mut out = table(&head, &rows);
    out.push(String::new());
    out
}

fn spread_table(spread: &std::collections::BTreeMap<u64, Vec<RedisSpread>>) -> Vec<String> {
    let (pct1, mb2) = (|v: f64| format!("{v:.1} %"), |v: f64| format!("{v:.2}"));
    let mut rows = Vec::new();
    for (n, rs) in spread {
        let ranked: Vec<Vec<&Primary>> = rs
            .iter()
            .map(|r| {
                let mut p: Vec<&Primary> = r.primaries.iter().collect();
                p.sort_by(|a, b| b.spublish_per_s.total_cmp(&a.spublish_per_s));
                p
            })
            .collect();
        let joined = runs_of(rs.iter().map(|r| Some(r.bots_connected as f64)), count);
        let note = if rs.iter().all(|r| r.bots_connected >= r.bots) {
            "measured".to_owned()
        } else {
            format!("not reached: bots joined {joined} of {}", count(*n as f64))
        };
        for k in 0..ranked.iter().map(Vec::len).max().unwrap_or(0) {
            let nodes: Vec<&Primary> = ranked.iter().filter_map(|x| x.get(k).copied()).collect();
            let of = |f: fn(&Primary) -> f64| nodes.iter().map(move |p| Some(f(p)));
            rows.push(vec![
                if k == 0 { count(*n as f64) } else { String::new() },
                (k + 1).to_string(),
                runs_of(of(|p| p.cpu_pct), pct1),
                runs_of(of(|p| p.spublish_per_s), count),
                runs_of(of(|p| p.commands_per_s), count),
                runs_of(of(|p| p.sent_mb_per_s), mb2),
                if k == 0 {
                    runs_of(rs.iter().map(|r| load1(&r.load_before)), |v| format!("{v:.1}"))
                } else {
                    String::new()
                },
                if k == 0 { note.clone() } else { String::new() },
            ]);
        }
        let total = |f: fn(&Primary) -> f64| rs.iter().map(move |r| Some(r.primaries.iter().map(f).sum::<f64>()));
        rows.push(vec![
            String::new(),
            "all three".into(),
            runs_of(total(|p| p.cpu_pct), pct1),
            runs_of(total(|p| p.spublish_per_s), count),
            runs_of(total(|p| p.commands_per_s), count),
            runs_of(total(|p| p.sent_mb_per_s), mb2),
            String::new(),
            String::new(),
        ]);
    }
    let mut out = vec![
        "Load on each cluster primary, the place spread over three (primaries ranked by SPUBLISH/s within each run):"
            .to_owned(),
        String::new(),
    ];
    out.extend(table(
        &[
            "players",
            "primary",
            "CPU (% of a core)",
            "SPUBLISH / s",
            "commands / s",
            "sent MB / s",
            "load average (1 min)",
            "verdict",
        ],
        &rows,
    ));
    out.push(String::new());
    out.push(
        "SPUBLISH a second is set by the regions the players occupy, the shards and the tick rate (a bundle a region \
         a shard a tick: this world's 16 regions × 2 shards × 20 Hz = 640 a second once every region has players), \
         not by the player count; the bytes sent grow with the players in each view. The primary holding the place's \
         slot (`{main}`) also serves the heartbeats, rosters, sessions and chat, hence its higher command rate."
            .into(),
    );
    let short: Vec<String> = spread
        .iter()
        .filter(|(_, rs)| rs.iter().any(|r| r.bots_connected < r.bots))
        .map(|(n, _)| count(*n as f64))
        .collect();
    if !short.is_empty() {
        out.extend([
            String::new(),
            format!(
                "**Not reached on this machine: {} players.** The bots, both shards and the six Redis nodes share its \
                 two cores (with other sessions' work): not every bot joined within 60 s, Redis commands timed out, \
                 the shards fenced themselves and their publishing fell to a few frames a second, so those rows \
                 describe a saturated machine, not Redis. Measure them with the bots on other machines.",
                short.join(", ")
            ),
        ]);
    }
    out.push(String::new());
    out
}
