//! The server side of a load-test run, from the samples
//! ([`crate::sampler`]): the loadgen says what the bots measured over each
//! phase's hold; the shards' counters (ticks, late ticks, writes, frames,
//! relay lag) and Redis's CPU come from the samples. Each hold is found as
//! the plateau where the shards' summed `mino_players` sits at the count the
//! loadgen reported connected, ending where the next ramp (players rise) or
//! the shutdown (connections fall) moves it; counter deltas are taken over
//! its last hold-length. A failover run has no plateau: each shard's totals
//! over the whole run instead.

use crate::raw::{Labelled, Quantiles, RedisWindow, ShardTotals, ShardWindow, Spread, Totals, Window, Windows};
use crate::sampler::{Sample, Series};
use std::collections::{BTreeMap, BTreeSet};

/// How far the players gauge may stray from the loadgen's count inside a
/// plateau: this share of it, at least [`TOLERANCE_MIN`].
const TOLERANCE_SHARE: f64 = 0.02;

/// The least tolerance, players.
const TOLERANCE_MIN: f64 = 3.0;

/// `v` rounded to `digits` decimals, half to even on the binary value (as
/// the analysis always rounded).
pub fn round(v: f64, digits: usize) -> f64 {
    format!("{v:.digits$}").parse().unwrap_or(v)
}

/// One measured phase of a loadgen report: bots connected, hold seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Phase {
    /// Bots connected at its end.
    pub connected: usize,
    /// Its hold, s.
    pub seconds: f64,
}

fn players(s: &Sample) -> f64 {
    s.shards.values().flatten().map(|m| m.get("mino_players").copied().unwrap_or(0.0)).sum()
}

/// Open websockets: they drop at once when the bots leave, players only at
/// the next tick.
fn connections(s: &Sample) -> f64 {
    s.shards.values().flatten().map(|m| m.get("mino_connections").copied().unwrap_or(0.0)).sum()
}

/// Each phase's hold as (first, last) sample indexes, None where no plateau
/// was found.
fn plateaus(samples: &[Sample], phases: &[Phase]) -> Vec<Option<(usize, usize)>> {
    let mut out = Vec::new();
    let mut cursor = 0;
    for p in phases {
        let connected = p.connected as f64;
        let tol = TOLERANCE_MIN.max(TOLERANCE_SHARE * connected);
        let start = (cursor..samples.len()).find(|i| players(&samples[*i]) >= connected - tol);
        let Some(start) = start.filter(|_| p.connected > 0) else {
            out.push(None);
            continue;
        };
        let leave = (start + 1..samples.len())
            .find(|j| {
                let s = &samples[*j];
                players(s) > connected + tol || players(s).min(connections(s)) < 0.5 * connected
            })
            .unwrap_or(samples.len());
        let i1 = leave - 1;
        let from = samples[i1].t - p.seconds;
        let i0 = (start..=i1).find(|i| samples[*i].t >= from).unwrap_or(i1);
        out.push((i1 > i0).then_some((i0, i1)));
        cursor = leave;
    }
    out
}

fn delta(a: &Series, b: &Series, key: &str) -> f64 {
    b.get(key).copied().unwrap_or(0.0) - a.get(key).copied().unwrap_or(0.0)
}

/// Quantile `q` (ms) of the window's observations in a Prometheus
/// histogram, interpolated linearly inside its bucket as
/// `histogram_quantile` does; None without observations. Beyond the last
/// finite bucket: that bucket's bound.
pub fn bucket_quantile(a: &Series, b: &Series, family: &str, q: f64) -> Option<f64> {
    let prefix = format!("{family}_bucket{{le=\"");
    let mut buckets: Vec<(f64, f64)> = b
        .iter()
        .filter_map(|(k, v)| {
            let le = k.strip_prefix(&prefix)?.strip_suffix("\"}")?;
            let bound = if le == "+Inf" { f64::INFINITY } else { le.parse().ok()? };
            Some((bound, v - a.get(k).copied().unwrap_or(0.0)))
        })
        .collect();
    buckets.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.total_cmp(&y.1)));
    let total = buckets.last().map_or(0.0, |b| b.1);
    if total <= 0.0 {
        return None;
    }
    let rank = q * total;
    let (mut lower, mut below) = (0.0, 0.0);
    for (bound, cum) in buckets {
        if cum >= rank {
            if bound == f64::INFINITY {
                return Some(round(lower * 1000.0, 1));
            }
            let share = if cum > below { (rank - below) / (cum - below) } else { 1.0 };
            return Some(round((lower + (bound - lower) * share) * 1000.0, 1));
        }
        (lower, below) = (bound, cum);
    }
    None
}

/// The delta of every series of a labelled counter family.
fn labelled_sum(a: &Series, b: &Series, family: &str) -> f64 {
    let prefix = format!("{family}{{");
    b.iter().filter(|(k, _)| k.starts_with(&prefix)).map(|(k, v)| v - a.get(k).copied().unwrap_or(0.0)).sum()
}

/// `{label value: delta}` of a labelled counter family, zeros left out, by
/// its last label's value (a reason or a kind), summed over the labels
/// before it (`mino_sockets_closed_total`'s transport).
fn labelled(a: &Series, b: &Series, family: &str) -> Labelled {
    let prefix = format!("{family}{{");
    let mut counts: Vec<(String, u64)> = Vec::new();
    for (k, v) in b.iter().filter(|(k, _)| k.starts_with(&prefix)) {
        let Some(label) = last_label(k) else { continue };
        let n = (v - a.get(k).copied().unwrap_or(0.0)) as u64;
        match counts.iter_mut().find(|(l, _)| l == label) {
            Some((_, sum)) => *sum += n,
            None => counts.push((label.to_owned(), n)),
        }
    }
    counts.retain(|(_, n)| *n > 0);
    Labelled(counts)
}

/// The value of a series' last label, as printed (`too_slow` of
/// `…{transport="websocket",reason="too_slow"}`).
fn last_label(series: &str) -> Option<&str> {
    let end = series.rfind('"')?;
    let start = series[..end].rfind('"')? + 1;
    Some(&series[start..end])
}

fn shard_window(samples: &[Sample], i0: usize, i1: usize, name: &str) -> Option<ShardWindow> {
    let a = samples[i0].shards.get(name)?.as_ref()?;
    let b = samples[i1].shards.get(name)?.as_ref()?;
    let dt = samples[i1].t - samples[i0].t;
    let ticks = delta(a, b, "mino_ticks_total");
    let held: Vec<f64> = samples[i0..=i1]
        .iter()
        .map(|s| {
            s.shards.get(name).and_then(Option::as_ref).and_then(|m| m.get("mino_players").copied()).unwrap_or(0.0)
        })
        .collect();
    let mean_players = held.iter().sum::<f64>() / held.len() as f64;
    let per_socket_tick = ticks * mean_players;
    let frames = delta(a, b, "mino_frames_sent_total");
    let sent = delta(a, b, "mino_sent_bytes_total");
    let per = |x: f64, d: usize| (per_socket_tick != 0.0).then(|| round(x / per_socket_tick, d));
    let mut w = ShardWindow {
        ticks_per_s: round(ticks / dt, 2),
        ticks: ticks as u64,
        ticks_late: delta(a, b, "mino_ticks_late_total") as u64,
        ticks_skipped: delta(a, b, "mino_ticks_skipped_total") as u64,
        players: round(mean_players, 1),
        writes_per_socket_tick: per(delta(a, b, "mino_writes_total"), 3),
        frames_per_socket_tick: per(frames, 3),
        frames_sent: frames as u64,
        sent_bytes_per_s: round(sent / dt, 0),
        bytes_per_frame: (frames != 0.0).then(|| round(sent / frames, 1)),
        tick_ms_mean: round(
            1000.0 * delta(a, b, "mino_tick_duration_seconds_sum")
                / delta(a, b, "mino_tick_duration_seconds_count").max(1.0),
            3,
        ),
        tick_deliver_ms: (|| {
            let q = |q| bucket_quantile(a, b, "mino_tick_deliver_seconds", q);
            Some(Spread { p5: q(0.05)?, p50: q(0.50)?, p95: q(0.95)? })
        })(),
        relay_lag_ms: Quantiles {
            p50: bucket_quantile(a, b, "mino_relay_lag_seconds", 0.50),
            p99: bucket_quantile(a, b, "mino_relay_lag_seconds", 0.99),
        },
        relay_dropped: labelled_sum(a, b, "mino_relay_dropped_total") as u64,
        sockets_closed: labelled_sum(a, b, "mino_sockets_closed_total") as u64,
        cpu_cores: None,
        cpu_user_us_per_frame_sent: None,
        cpu_sys_us_per_frame_sent: None,
        rss_bytes: None,
        runqueue_wait_share: None,
    };
    let pa = samples[i0].procs.get(name).copied().flatten();
    let pb = samples[i1].procs.get(name).copied().flatten();
    if let (Some(pa), Some(pb)) = (pa, pb) {
        let (user, sys) = (pb.user_s - pa.user_s, pb.sys_s - pa.sys_s);
        w.cpu_cores = Some(round((user + sys) / dt, 3));
        w.cpu_user_us_per_frame_sent = (frames != 0.0).then(|| round(user * 1e6 / frames, 2));
        w.cpu_sys_us_per_frame_sent = (frames != 0.0).then(|| round(sys * 1e6 / frames, 2));
        w.rss_bytes = Some(pb.rss);
        if let (Some(wa), Some(wb)) = (pa.wait_s, pb.wait_s) {
            w.runqueue_wait_share = Some(round((wb - wa) / dt, 3));
        }
    }
    Some(w)
}

fn redis_window(samples: &[Sample], i0: usize, i1: usize) -> Option<RedisWindow> {
    let pa = samples[i0].procs.get("redis").copied().flatten()?;
    let pb = samples[i1].procs.get("redis").copied().flatten()?;
    let dt = samples[i1].t - samples[i0].t;
    let (user, sys) = (pb.user_s - pa.user_s, pb.sys_s - pa.sys_s);
    let mut w = RedisWindow {
        cpu_cores: round((user + sys) / dt, 3),
        user_s: round(user, 2),
        sys_s: round(sys, 2),
        commands_per_s: None,
        publishes_per_s: None,
        net_in_bytes_per_s: None,
        net_out_bytes_per_s: None,
        info_cpu_cores: None,
    };
    let ia = samples[i0].redis_info.get("redis").copied().flatten();
    let ib = samples[i1].redis_info.get("redis").copied().flatten();
    if let (Some(ia), Some(ib)) = (ia, ib) {
        w.commands_per_s = Some(round((ib.total_commands_processed - ia.total_commands_processed) / dt, 1));
        w.publishes_per_s = Some(round((ib.publish_calls - ia.publish_calls) / dt, 1));
        w.net_in_bytes_per_s = Some(round((ib.total_net_input_bytes - ia.total_net_input_bytes) / dt, 0));
        w.net_out_bytes_per_s = Some(round((ib.total_net_output_bytes - ia.total_net_output_bytes) / dt, 0));
        let cpu = ib.used_cpu_user + ib.used_cpu_sys - ia.used_cpu_user - ia.used_cpu_sys;
        w.info_cpu_cores = Some(round(cpu / dt, 3));
    }
    Some(w)
}

/// The windows of `phases` in `samples` (samples where a shard did not
/// answer are left out).
pub fn windows(phases: &[Phase], samples: &[Sample]) -> Windows {
    let samples: Vec<Sample> = samples.iter().filter(|s| s.shards.values().all(Option::is_some)).cloned().collect();
    let windows = phases
        .iter()
        .zip(plateaus(&samples, phases))
        .map(|(p, span)| {
            let (i0, i1) = span?;
            let shards: BTreeMap<String, ShardWindow> = samples[i1]
                .shards
                .keys()
                .filter_map(|n| Some((n.clone(), shard_window(&samples, i0, i1, n)?)))
                .collect();
            Some(Window {
                players: p.connected as u64,
                seconds: round(samples[i1].t - samples[i0].t, 2),
                shards,
                redis: redis_window(&samples, i0, i1),
            })
        })
        .collect();
    Windows { windows }
}

/// Each shard over a whole run (its first to its last answered scrape):
/// refusals, closes and drops by reason, ticks and late ticks.
pub fn totals(samples: &[Sample]) -> Totals {
    let names: BTreeSet<&String> = samples.iter().flat_map(|s| s.shards.keys()).collect();
    let mut totals = BTreeMap::new();
    for name in names {
        let seen: Vec<&Series> = samples.iter().filter_map(|s| s.shards.get(name)?.as_ref()).collect();
        let (Some(a), Some(b)) = (seen.first(), seen.last()) else { continue };
        if seen.len() < 2 {
            continue;
        }
        totals.insert(
            name.clone(),
            ShardTotals {
                busy_refusals: labelled(a, b, "mino_busy_refusals_total"),
                sockets_closed: labelled(a, b, "mino_sockets_closed_total"),
                relay_dropped: labelled(a, b, "mino_relay_dropped_total"),
                ticks_late: delta(a, b, "mino_ticks_late_total") as u64,
                ticks: delta(a, b, "mino_ticks_total") as u64,
            },
        );
    }
    Totals { totals }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampler::Proc;

    fn series(pairs: &[(&str, f64)]) -> Series {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    /// A sample at `t` s of one shard `a` with `players` and `ticks` so far.
    fn at(t: f64, players: f64, ticks: f64) -> Sample {
        let m = series(&[
            ("mino_players", players),
            ("mino_connections", players),
            ("mino_ticks_total", ticks),
            ("mino_frames_sent_total", ticks * players),
            ("mino_sent_bytes_total", ticks * players * 10.0),
        ]);
        let proc = Proc { user_s: t / 10.0, sys_s: t / 20.0, rss: 1000, run_s: Some(t), wait_s: Some(t / 100.0) };
        Sample {
            t,
            shards: [("a".to_owned(), Some(m))].into(),
            procs: [("a".to_owned(), Some(proc))].into(),
            redis_info: BTreeMap::new(),
        }
    }

    #[test]
    fn a_hold_is_the_plateau_at_the_connected_count() {
        // Ramp to 100 over 2 s, hold 100 for 10 s at 20 ticks a second, leave.
        let mut samples: Vec<Sample> = (0..4).map(|i| at(i as f64 * 0.5, i as f64 * 33.0, i as f64 * 10.0)).collect();
        samples.extend((4..25).map(|i| at(i as f64 * 0.5, 100.0, i as f64 * 10.0)));
        samples.push(at(12.5, 0.0, 250.0));
        let w = windows(&[Phase { connected: 100, seconds: 5.0 }], &samples);
        let w = w.windows[0].as_ref().expect("a plateau");
        assert_eq!((w.players, w.seconds), (100, 5.0));
        let a = &w.shards["a"];
        assert_eq!((a.ticks_per_s, a.ticks, a.frames_per_socket_tick), (20.0, 100, Some(1.0)));
        assert_eq!((a.bytes_per_frame, a.cpu_cores, a.runqueue_wait_share), (Some(10.0), Some(0.15), Some(0.01)));
        assert_eq!(windows(&[Phase { connected: 500, seconds: 5.0 }], &samples).windows, [None]);
    }

    #[test]
    fn quantiles_interpolate_in_buckets() {
        let fam = "mino_relay_lag_seconds";
        let a = series(&[]);
        let b = series(&[
            (&format!("{fam}_bucket{{le=\"0.05\"}}"), 50.0),
            (&format!("{fam}_bucket{{le=\"0.1\"}}"), 100.0),
            (&format!("{fam}_bucket{{le=\"+Inf\"}}"), 100.0),
        ]);
        assert_eq!(bucket_quantile(&a, &b, fam, 0.5), Some(50.0));
        assert_eq!(bucket_quantile(&a, &b, fam, 0.75), Some(75.0));
        assert_eq!(bucket_quantile(&a, &a, fam, 0.5), None);
        assert_eq!(round(2.675, 2), 2.67);
    }

    #[test]
    fn totals_count_labels_from_the_first_to_the_last_answer() {
        let closed = |n: f64| {
            series(&[
                ("mino_sockets_closed_total{transport=\"websocket\",reason=\"too_slow\"}", n),
                ("mino_sockets_closed_total{transport=\"webtransport\",reason=\"too_slow\"}", 2.0 * n),
                ("mino_ticks_total", n),
            ])
        };
        let s = |t: f64, m: Option<Series>| Sample { t, shards: [("a".to_owned(), m)].into(), ..Sample::default() };
        let t = totals(&[s(0.0, Some(closed(1.0))), s(1.0, Some(closed(4.0))), s(2.0, None)]);
        assert_eq!(t.totals["a"].sockets_closed.0, [("too_slow".to_owned(), 9)], "both transports");
        assert_eq!(t.totals["a"].ticks, 3);
    }
}
