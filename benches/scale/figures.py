"""Formatting and reading of figures for RESULTS.md: numbers with units,
ratios, Markdown tables, medians, verdicts, per-shard sums of a server
window, the machine's description.
"""

import os
import platform
import statistics
import subprocess

JUDGE_NOTE = "not judgeable"
MEASURED = "measured"

def f1(v, unit=""):
    return "–" if v is None else f"{v:,.1f}{unit}"


def f2(v, unit=""):
    return "–" if v is None else f"{v:,.2f}{unit}"


def kib(n):
    return "–" if n is None else f"{n / 1024:,.1f} KiB"


def kb(n):
    """Bytes as decimal kilobytes, the unit the original published."""
    return "–" if n is None else f"{n / 1000:,.1f} KB"


def mb(n):
    return "–" if n is None else f"{n / 1e6:,.1f} MB"


def ratio(ours, theirs):
    if ours is None or theirs in (None, 0):
        return "–"
    return f"{ours / theirs:.2f}×"


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def median(values):
    v = [x for x in values if x is not None]
    return statistics.median(v) if v else None


def dig(d, *keys):
    for k in keys:
        if d is None:
            return None
        d = d.get(k) if isinstance(d, dict) else None
    return d


# Machine busy share (all cores, percent) from which a measured figure is qualified.
SATURATED_PCT = 95


def verdict(m):
    """The loadgen's verdict, qualified when the whole machine was saturated while
    the loadgen itself stayed under its limit (the shards then competed for CPU)."""
    if not m:
        return "not run"
    v = m.get("verdict", MEASURED)
    if v == MEASURED and m.get("machine_cpu_pct", 0) >= SATURATED_PCT:
        return "measured (machine saturated)"
    return v


def pct(share):
    return "–" if share is None else f"{100 * share:.0f} %"


def shard_sum(window, key):
    if not window:
        return None
    v = [s.get(key) for s in window["shards"].values()]
    return None if any(x is None for x in v) else sum(v)


def shard_mean(window, key):
    if not window:
        return None
    v = [s.get(key) for s in window["shards"].values() if s.get(key) is not None]
    return sum(v) / len(v) if v else None


def shard_max(window, key, sub=None):
    if not window:
        return None
    v = [s.get(key) if sub is None else dig(s, key, sub) for s in window["shards"].values()]
    v = [x for x in v if x is not None]
    return max(v) if v else None


def other_load(m, window, cores):
    """Cores busy with neither the loadgen, the shards nor Redis during the hold: the shared machine's noise."""
    if not m or "machine_cpu_pct" not in m:
        return None
    busy = (m["machine_cpu_pct"] - m["loadgen_cpu_pct"]) / 100 * cores
    busy -= dig(m, "server", "cores") or 0
    busy -= dig(window, "redis", "cpu_cores") or 0
    return max(0.0, busy)


def gap(m, key="snapshot_gap_ms", p="p95"):
    s = m.get(key) if m else None
    return s[p] if s and s.get("count") else None


def machine():
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), model)
    except OSError:
        pass
    mem = None
    try:
        with open("/proc/meminfo") as f:
            mem = int(next(l.split()[1] for l in f if l.startswith("MemTotal:"))) * 1024
    except (OSError, StopIteration):
        pass
    return {"cores": os.cpu_count() or 1, "model": model, "mem": mem, "kernel": platform.release()}


def describe(m):
    """The machine as RESULTS.md's header shows it."""
    mem = "?" if not m["mem"] else f"{m['mem'] / 2**30:.1f} GiB"
    return f"{m['cores']} cores (`nproc`), {m['model']}, {mem} memory, Linux {m['kernel']}"


def tool_version(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"


if __name__ == "__main__":
    import sys

    # `figures.py --machine`: this machine's description, recorded in run.tsv
    # by scale.sh so that a report written later names the machine measured.
    if sys.argv[1:] == ["--machine"]:
        print(describe(machine()))
    else:
        sys.exit("usage: figures.py --machine")
