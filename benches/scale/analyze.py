#!/usr/bin/env python3
"""Server-side figures of a load-test run, from the samples `sample.py` took.

The loadgen's JSON says what the bots measured over each step's hold; the
shards' counters (ticks, late ticks, writes, frames sent, relay lag) and the
CPU of Redis come from the samples. This finds each step's hold in the
samples as the plateau where the shards' summed `mino_players` sits at the
count the loadgen reported connected, ending where the next ramp (players
rise) or the shutdown (connections fall) moves it, and takes counter deltas
over the last HOLD seconds of it.

usage: analyze.py LOADGEN.json SAMPLES.jsonl OUT.json

A failover run has no plateau: OUT.json is then {"totals": {NAME: {busy_refusals,
sockets_closed, relay_dropped (each {reason: n}), ticks_late, ticks}}} over the
whole run, from each shard's first to its last answered scrape.

Otherwise OUT.json: {"windows": [one per step (walk/idle/arrivals: one) or null when no
plateau was found: {"players": n, "seconds": s, "shards": {NAME: {...}},
"redis": {...} | null}]}. Per shard: ticks_per_s, ticks, ticks_late,
ticks_skipped, players (mean), writes_per_socket_tick, frames_per_socket_tick,
frames_sent, sent_bytes_per_s, bytes_per_frame, tick_ms_mean, cpu_cores, cpu_user_us_per_frame_sent,
cpu_sys_us_per_frame_sent, relay_lag_ms {p50, p99} (interpolated in the
histogram's buckets, null without relayed frames), relay_dropped, sockets_closed,
rss_bytes, runqueue_wait_share (seconds its threads waited for a CPU per
second: what the other processes on the machine cost it). Redis: cpu_cores,
user_s, sys_s (from /proc), and with `redis-cli INFO` samples commands_per_s,
publishes_per_s, net_in_bytes_per_s, net_out_bytes_per_s, info_cpu_cores.
"""

import json
import sys

# How far the players gauge may stray from the loadgen's count inside a plateau.
TOLERANCE_SHARE = 0.02
TOLERANCE_MIN = 3


def read_rows(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def load_samples(path):
    """Samples in which every shard answered."""
    return [r for r in read_rows(path) if all(v is not None for v in r["shards"].values())]


def players(sample):
    return sum(m.get("mino_players", 0.0) for m in sample["shards"].values())


def connections(sample):
    """Open websockets: they drop at once when the bots leave, players only at the next tick."""
    return sum(m.get("mino_connections", 0.0) for m in sample["shards"].values())


def steps_of(report):
    """(connected, hold seconds) per measured phase of a loadgen report."""
    if report.get("scenario") == "steps":
        return [(s["connected"], s["seconds"]) for s in report["steps"]]
    return [(report["connected"], report["seconds"])]


def plateaus(samples, steps):
    """(i0, i1) sample indexes of each step's hold, or None."""
    out, cursor = [], 0
    for connected, hold in steps:
        tol = max(TOLERANCE_MIN, TOLERANCE_SHARE * connected)
        start = next((i for i in range(cursor, len(samples)) if players(samples[i]) >= connected - tol), None)
        if start is None or connected == 0:
            out.append(None)
            continue
        leave = next(
            (j for j in range(start + 1, len(samples))
             if players(samples[j]) > connected + tol
             or min(players(samples[j]), connections(samples[j])) < 0.5 * connected),
            len(samples),
        )
        i1 = leave - 1
        t_from = samples[i1]["t"] - hold
        i0 = next(i for i in range(start, i1 + 1) if samples[i]["t"] >= t_from)
        out.append((i0, i1) if i1 > i0 else None)
        cursor = leave
    return out


def delta(a, b, key):
    return b.get(key, 0.0) - a.get(key, 0.0)


def bucket_quantile(a, b, family, q):
    """Quantile q (ms) of the window's observations in a Prometheus histogram,
    interpolated linearly inside its bucket as `histogram_quantile` does; None
    without observations. Beyond the last finite bucket: that bucket's bound."""
    buckets = []
    for key, v in b.items():
        if key.startswith(family + "_bucket{le="):
            le = key[len(family) + len('_bucket{le="'):-2]
            bound = float("inf") if le == "+Inf" else float(le)
            buckets.append((bound, v - a.get(key, 0.0)))
    buckets.sort()
    total = buckets[-1][1] if buckets else 0
    if total <= 0:
        return None
    rank = q * total
    lower, below = 0.0, 0.0
    for bound, cum in buckets:
        if cum >= rank:
            if bound == float("inf"):
                return round(lower * 1000, 1)
            share = (rank - below) / (cum - below) if cum > below else 1.0
            return round((lower + (bound - lower) * share) * 1000, 1)
        lower, below = bound, cum
    return None


def labelled_sum(a, b, family):
    return sum(v - a.get(k, 0.0) for k, v in b.items() if k.startswith(family + "{"))


def shard_figures(samples, i0, i1, name):
    a, b = samples[i0]["shards"][name], samples[i1]["shards"][name]
    dt = samples[i1]["t"] - samples[i0]["t"]
    ticks = delta(a, b, "mino_ticks_total")
    mean_players = sum(s["shards"][name].get("mino_players", 0) for s in samples[i0:i1 + 1]) / (i1 - i0 + 1)
    per_socket_tick = ticks * mean_players
    frames = delta(a, b, "mino_frames_sent_total")
    fig = {
        "ticks_per_s": round(ticks / dt, 2),
        "ticks": int(ticks),
        "ticks_late": int(delta(a, b, "mino_ticks_late_total")),
        "ticks_skipped": int(delta(a, b, "mino_ticks_skipped_total")),
        "players": round(mean_players, 1),
        "writes_per_socket_tick": round(delta(a, b, "mino_writes_total") / per_socket_tick, 3) if per_socket_tick else None,
        "frames_per_socket_tick": round(frames / per_socket_tick, 3) if per_socket_tick else None,
        "frames_sent": int(frames),
        "sent_bytes_per_s": round(delta(a, b, "mino_sent_bytes_total") / dt),
        "bytes_per_frame": round(delta(a, b, "mino_sent_bytes_total") / frames, 1) if frames else None,
        "tick_ms_mean": round(1000 * delta(a, b, "mino_tick_duration_seconds_sum")
                              / max(1.0, delta(a, b, "mino_tick_duration_seconds_count")), 3),
        "relay_lag_ms": {
            "p50": bucket_quantile(a, b, "mino_relay_lag_seconds", 0.50),
            "p99": bucket_quantile(a, b, "mino_relay_lag_seconds", 0.99),
        },
        "relay_dropped": int(labelled_sum(a, b, "mino_relay_dropped_total")),
        "sockets_closed": int(labelled_sum(a, b, "mino_sockets_closed_total")),
    }
    pa, pb = samples[i0]["procs"].get(name), samples[i1]["procs"].get(name)
    if pa and pb:
        user, sys_ = pb["user_s"] - pa["user_s"], pb["sys_s"] - pa["sys_s"]
        fig["cpu_cores"] = round((user + sys_) / dt, 3)
        fig["cpu_user_us_per_frame_sent"] = round(user * 1e6 / frames, 2) if frames else None
        fig["cpu_sys_us_per_frame_sent"] = round(sys_ * 1e6 / frames, 2) if frames else None
        fig["rss_bytes"] = pb["rss"]
        if pa.get("wait_s") is not None and pb.get("wait_s") is not None:
            fig["runqueue_wait_share"] = round((pb["wait_s"] - pa["wait_s"]) / dt, 3)
    return fig


def redis_figures(samples, i0, i1):
    pa, pb = samples[i0]["procs"].get("redis"), samples[i1]["procs"].get("redis")
    if not (pa and pb):
        return None
    dt = samples[i1]["t"] - samples[i0]["t"]
    user, sys_ = pb["user_s"] - pa["user_s"], pb["sys_s"] - pa["sys_s"]
    fig = {"cpu_cores": round((user + sys_) / dt, 3), "user_s": round(user, 2), "sys_s": round(sys_, 2)}
    fig.update(redis_info_figures(samples, i0, i1, dt))
    return fig


def redis_info_figures(samples, i0, i1, dt):
    """Rates from `redis-cli INFO` over the window (empty without INFO samples):
    commands and PUBLISHes a second, network bytes a second, and the CPU Redis
    reports for itself (used_cpu_user + used_cpu_sys), in cores."""
    ia = (samples[i0].get("redis_info") or {}).get("redis")
    ib = (samples[i1].get("redis_info") or {}).get("redis")
    if not (ia and ib):
        return {}

    def rate(key, digits=1):
        return round((ib.get(key, 0.0) - ia.get(key, 0.0)) / dt, digits)

    cpu = (ib.get("used_cpu_user", 0.0) + ib.get("used_cpu_sys", 0.0)
           - ia.get("used_cpu_user", 0.0) - ia.get("used_cpu_sys", 0.0))
    return {
        "commands_per_s": rate("total_commands_processed"),
        "publishes_per_s": rate("publish_calls"),
        "net_in_bytes_per_s": rate("total_net_input_bytes", 0),
        "net_out_bytes_per_s": rate("total_net_output_bytes", 0),
        "info_cpu_cores": round(cpu / dt, 3),
    }


def labelled(a, b, family):
    """{label value: delta} of a labelled counter family."""
    out = {}
    for k, v in b.items():
        if k.startswith(family + "{"):
            label = k[k.index('"') + 1:k.rindex('"')]
            out[label] = int(v - a.get(k, 0.0))
    return {k: v for k, v in out.items() if v}


def totals(rows):
    """Per shard, over the whole run (first to last answered scrape): refusals,
    closes and drops by reason. For runs with no plateau, such as failover."""
    out = {}
    for name in sorted({n for r in rows for n in r["shards"]}):
        seen = [r["shards"][name] for r in rows if r["shards"].get(name)]
        if len(seen) < 2:
            continue
        a, b = seen[0], seen[-1]
        out[name] = {
            "busy_refusals": labelled(a, b, "mino_busy_refusals_total"),
            "sockets_closed": labelled(a, b, "mino_sockets_closed_total"),
            "relay_dropped": labelled(a, b, "mino_relay_dropped_total"),
            "ticks_late": int(delta(a, b, "mino_ticks_late_total")),
            "ticks": int(delta(a, b, "mino_ticks_total")),
        }
    return out


def analyze(report, samples):
    windows = []
    for (connected, _), span in zip(steps_of(report), plateaus(samples, steps_of(report))):
        if span is None:
            windows.append(None)
            continue
        i0, i1 = span
        names = sorted(samples[i1]["shards"])
        windows.append({
            "players": connected,
            "seconds": round(samples[i1]["t"] - samples[i0]["t"], 2),
            "shards": {n: shard_figures(samples, i0, i1, n) for n in names},
            "redis": redis_figures(samples, i0, i1),
        })
    return {"windows": windows}


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        report = json.load(f)
    if report.get("scenario") == "failover":
        result = {"totals": totals(read_rows(argv[2]))}
    else:
        result = analyze(report, load_samples(argv[2]))
    with open(argv[3], "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
