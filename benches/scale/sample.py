#!/usr/bin/env python3
"""Samples shard metrics and process CPU while a load test runs.

Every INTERVAL seconds it scrapes each shard's Prometheus `/metrics` and reads
`/proc/PID/stat` and `/proc/PID/status` and the threads' `schedstat` of every watched process (the shards,
and Redis when clustered), and `redis-cli INFO stats cpu commandstats` of each
Redis, and appends one JSON line to OUT:

    {"t": wall seconds (float),
     "shards": {"NAME": {metric: value, ...} | null},   # null: scrape failed
     "procs": {"NAME": {"user_s": s, "sys_s": s, "rss": bytes,
                        "run_s": s, "wait_s": s} | null},   # run/wait: schedstat
     "redis_info": {"NAME": {field: value, ...} | null}}   # only with --redis

Counters keep their Prometheus names (`mino_ticks_total`, ...); labelled
series are keyed `name{labels}`; histogram buckets `name_bucket{le="x"}`.
Runs until SIGTERM or SIGINT; each line is flushed as written.

usage: sample.py OUT INTERVAL_S --shard NAME=HOST:PORT ... --proc NAME=PID ...
                 [--redis NAME=HOST:PORT ...]
"""

import argparse
import json
import os
import signal
import subprocess
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


# The INFO fields kept (stats, cpu, and the PUBLISH line of commandstats).
REDIS_KEEP = (
    "total_commands_processed",
    "total_net_input_bytes",
    "total_net_output_bytes",
    "used_cpu_sys",
    "used_cpu_user",
)


def redis_info(addr, timeout_s):
    """`redis-cli INFO stats cpu commandstats` of one Redis as {field: value}
    (PUBLISH calls as `publish_calls`), or None when it does not answer."""
    host, _, port = addr.rpartition(":")
    try:
        out = subprocess.run(["redis-cli", "-h", host, "-p", port, "INFO", "stats", "cpu", "commandstats"],
                             capture_output=True, text=True, timeout=timeout_s, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    info = {}
    for line in out.splitlines():
        key, _, value = line.strip().partition(":")
        if key in REDIS_KEEP:
            try:
                info[key] = float(value)
            except ValueError:
                continue
        elif key == "cmdstat_publish":
            calls = dict(kv.split("=", 1) for kv in value.split(",") if "=" in kv).get("calls")
            if calls is not None:
                info["publish_calls"] = float(calls)
    return info or None


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
    ap.add_argument("--redis", action="append", default=[], help="NAME=HOST:PORT (redis-cli INFO)")
    args = ap.parse_args()
    shards, procs, redis = pairs(args.shard), pairs(args.proc), pairs(args.redis)
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
            if redis:
                line["redis_info"] = {n: redis_info(a, args.interval) for n, a in redis.items()}
            out.write(json.dumps(line, separators=(",", ":")) + "\n")
            out.flush()
            next_at += args.interval
            time.sleep(max(0.0, next_at - time.monotonic()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
