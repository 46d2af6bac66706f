#!/usr/bin/env python3
"""Criterion's results of one `cargo bench` run, as one JSON document on stdout.

Reads every `CRITERION_DIR/**/new/benchmark.json` written at or after
STARTED (unix seconds, so results of older runs are left out) with its
`estimates.json` beside it, and prints:

    {"benchmarks": [{"id": "snapshot_encode/1000", "median_ns": f, "mean_ns": f,
      "mean_ci_ns": [lower, upper], "elements": n | null}, ...]}

sorted by id. Times are nanoseconds per iteration; `elements` is the
throughput element count the bench declared (players), when it did.

usage: criterion.py CRITERION_DIR STARTED
"""

import json
import os
import sys


def results(root, started):
    for dirpath, _, files in os.walk(root):
        if os.path.basename(dirpath) != "new" or "benchmark.json" not in files:
            continue
        bench_path = os.path.join(dirpath, "benchmark.json")
        est_path = os.path.join(dirpath, "estimates.json")
        if not os.path.exists(est_path) or os.path.getmtime(est_path) < started:
            continue
        with open(bench_path) as f:
            bench = json.load(f)
        with open(est_path) as f:
            est = json.load(f)
        throughput = bench.get("throughput") or {}
        ci = est["mean"]["confidence_interval"]
        yield {
            "id": bench["full_id"],
            "median_ns": round(est["median"]["point_estimate"], 1),
            "mean_ns": round(est["mean"]["point_estimate"], 1),
            "mean_ci_ns": [round(ci["lower_bound"], 1), round(ci["upper_bound"], 1)],
            "elements": throughput.get("Elements"),
        }


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    found = sorted(results(argv[1], float(argv[2])), key=lambda r: r["id"])
    json.dump({"benchmarks": found}, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
