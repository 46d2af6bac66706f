#!/usr/bin/env python3
"""Samples shard metrics and process CPU while a load test runs.

Every INTERVAL seconds it scrapes each shard's Prometheus `/metrics` and reads
`/proc/PID/stat` and `/proc/PID/status` and the threads' `schedstat` of every watched process (the shards,
and Redis when clustered), and appends one JSON line to OUT:

    {"t": wall seconds (float),
     "shards": {"NAME": {metric: value, ...} | null},   # null: scrape failed
     "procs": {"NAME": {"user_s": s, "sys_s": s, "rss": bytes,
                        "run_s": s, "wait_s": s} | null}}   # run/wait: schedstat

Counters keep their Prometheus names (`mino_ticks_total`, ...); labelled
series are keyed `name{labels}`; histogram buckets `name_bucket{le="x"}`.
Runs until SIGTERM or SIGINT; each line is flushed as written.

usage: sample.py OUT INTERVAL_S --shard NAME=HOST:PORT ... --proc NAME=PID ...
"""

import argparse
import json
import os
import signal
import sys
import time
import urllib.request

CLK_TCK = os.sysconf("SC_CLK_TCK")

# Only these metric families are kept (the rest is not read by the report).
KEEP = (
    "mino_players",
    "mino_connections",
    "mino_ticks_total",
    "mino_ticks_late_total",
    "mino_ticks_skipped_total",
    "mino_frames_sent_total",
    "mino_sent_bytes_total",
    "mino_writes_total",
    "mino_relay_frames_total",
    "mino_relay_lag_seconds",
    "mino_relay_dropped_total",
    "mino_busy_refusals_total",
    "mino_sockets_closed_total",
    "mino_tick_duration_seconds_sum",
    "mino_tick_duration_seconds_count",
    "mino_redis_publish_failures_total",
    "mino_redis_reconnects_total",
)


def parse_prometheus(text):
    """Prometheus text format -> {series: float}, comments and unkept families dropped."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        series, _, value = line.rpartition(" ")
        if not series.startswith(KEEP):
            continue
        try:
            out[series] = float(value)
        except ValueError:
            continue
    return out


def scrape(addr, timeout_s):
    """One shard's kept metrics, or None when it does not answer."""
    try:
        with urllib.request.urlopen(f"http://{addr}/metrics", timeout=timeout_s) as r:
            return parse_prometheus(r.read().decode("utf-8", "replace"))
    except (OSError, ValueError):
        return None


def read_proc(pid):
    """CPU user/sys seconds and RSS bytes of a process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
        with open(f"/proc/{pid}/status") as f:
            status = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    if fields[0] == "Z":
        return None
    rss = 0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) * 1024
    run_s, wait_s = schedstat(pid)
    return {"user_s": int(fields[11]) / CLK_TCK, "sys_s": int(fields[12]) / CLK_TCK, "rss": rss,
            "run_s": run_s, "wait_s": wait_s}


def schedstat(pid):
    """Seconds on a CPU and seconds runnable but waiting for one, summed over the
    process's threads (`/proc/PID/task/*/schedstat`); (None, None) if unreadable.
    The wait is what other processes on a shared machine cost it."""
    run = wait = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                r, w, _ = f.read().split()
            run, wait = run + int(r), wait + int(w)
    except (OSError, ValueError):
        return None, None
    return run / 1e9, wait / 1e9


def pairs(items):
    """["a=1", ...] -> {"a": "1", ...}."""
    return dict(i.split("=", 1) for i in items)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("interval", type=float)
    ap.add_argument("--shard", action="append", default=[], help="NAME=HOST:PORT")
    ap.add_argument("--proc", action="append", default=[], help="NAME=PID")
    args = ap.parse_args()
    shards, procs = pairs(args.shard), pairs(args.proc)
    running = [True]

    def stop(*_):
        running[0] = False

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    with open(args.out, "a") as out:
        next_at = time.monotonic()
        while running[0]:
            line = {
                "t": time.time(),
                "shards": {n: scrape(a, args.interval) for n, a in shards.items()},
                "procs": {n: read_proc(p) for n, p in procs.items()},
            }
            out.write(json.dumps(line, separators=(",", ":")) + "\n")
            out.flush()
            next_at += args.interval
            time.sleep(max(0.0, next_at - time.monotonic()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
