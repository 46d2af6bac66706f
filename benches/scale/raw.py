"""The raw results of one scale.sh run, loaded by section: each loadgen
report with its server-side analysis (analyze.py), the criterion estimates,
run.tsv and the commands each section ran. Missing sections load as empty.
"""

import glob
import json
import os

from figures import dig

HERE = os.path.dirname(os.path.abspath(__file__))
# scale.sh's sections, in the order it runs them.
SECTIONS = ("criterion", "steps", "control", "idle", "arrivals", "failover", "aoi", "crowd", "redis", "nginx")

def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def nginx_run_order(path):
    """run-N-KIND/summary.json in the order bench-nginx.sh ran them: by N, tcp before unix."""
    name = os.path.basename(os.path.dirname(path))  # run-N-KIND
    _, n, kind = name.split("-", 2)
    return int(n) if n.isdigit() else 0, kind


def info_lines(path):
    """run.tsv: `key<TAB>value` lines; repeated keys (binaries, reruns) kept in order."""
    try:
        with open(path) as f:
            return [tuple(line.rstrip("\n").split("\t", 1)) for line in f if "\t" in line]
    except OSError:
        return []


class Raw:
    """The raw results of a run, by section."""

    def __init__(self, raw_dir):
        self.dir = raw_dir
        self.original = read_json(os.path.join(HERE, "original.json"))
        self.one = self.steps("one-shard")
        self.two = self.steps("two-shards")
        self.control = {}  # players -> {"batched": runs, "unbatched": runs}
        for path in glob.glob(os.path.join(raw_dir, "control-*-batched-*.json")):
            n = int(os.path.basename(path).split("-")[1])
            self.control[n] = {m: self.runs(f"control-{n}-{m}-*") for m in ("batched", "unbatched")}
        self.idle = self.runs("idle-*")
        # The idle section's allocator comparison: the server without
        # jemalloc (glibc's malloc), at the largest size.
        self.idle_glibc = self.runs("malloc-glibc-*")
        self.arrivals = self.run("arrivals")
        self.failover = {a: read_json(os.path.join(raw_dir, f"failover-{a}.json")) for a in ("kill", "drain")}
        self.failover_totals = {a: dig(read_json(os.path.join(raw_dir, f"failover-{a}.server.json")), "totals")
                                for a in ("kill", "drain")}
        self.aoi = {}  # players -> {"on" | "on2" | "off": (report, window)}
        for path in glob.glob(os.path.join(raw_dir, "aoi-*-*.json")):
            label = os.path.basename(path)[:-5]
            parts = label.split("-")
            if label.endswith(".server") or len(parts) != 3 or parts[2] not in ("on", "on2", "off"):
                continue
            r = self.run(label)
            if r:
                self.aoi.setdefault(int(parts[1]), {})[parts[2]] = (r[0], r[1][0] if r[1] else None)
        self.crowd = {}  # bots -> (report, window)
        for path in glob.glob(os.path.join(raw_dir, "crowd-*.json")):
            label = os.path.basename(path)[:-5]
            if label.endswith(".server") or not label.split("-")[1].isdigit():
                continue
            r = self.run(label)
            if r:
                self.crowd[int(label.split("-")[1])] = (r[0], r[1][0] if r[1] else None)
        # Redis beyond one node (examples/redis_ha --json): failover runs by
        # mode, spread runs by player count, each a list of runs in order.
        self.redis_failover = {m: self.redis_runs(f"redis-failover-{m}-*-*") for m in ("cluster", "sentinel")}
        self.redis_spread = {}
        for r in self.redis_runs("redis-spread-*-*"):
            self.redis_spread.setdefault(r["bots"], []).append(r)
        # Through nginx (deploy/bench-nginx.sh): each run's summary in order, and the medians.
        self.nginx_runs = [r for r in (read_json(p) for p in sorted(
            glob.glob(os.path.join(raw_dir, "nginx", "run-*", "summary.json")), key=nginx_run_order)) if r]
        self.nginx = read_json(os.path.join(raw_dir, "nginx", "compare.json"))
        self.criterion = read_json(os.path.join(raw_dir, "criterion.json"))
        # The browser client's figures (client-web: the e2e tests with MINO_CLIENT_FIGURES, and
        # `npm run figure -- --json` before and after), when they were measured.
        self.client = read_json(os.path.join(raw_dir, "client.json"))
        self.client_behind = {w: [dig(read_json(p), "result")
                                  for p in sorted(glob.glob(os.path.join(raw_dir, f"client-behind-{w}*.json")))]
                              for w in ("before", "after")}
        self.info_lines = info_lines(os.path.join(raw_dir, "run.tsv"))
        self.run_info = dict(self.info_lines)
        self.commands = [c for s in SECTIONS for c in self.lines(f"commands-{s}.txt")]

    def lines(self, name):
        try:
            with open(os.path.join(self.dir, name)) as f:
                return [tuple(line.rstrip("\n").split("\t", 1)) for line in f if "\t" in line]
        except OSError:
            return []

    def text(self, name):
        try:
            with open(os.path.join(self.dir, name)) as f:
                return f.read().strip()
        except OSError:
            return ""

    def load_json(self, name):
        """A raw file by name (`None` if absent or unreadable)."""
        return read_json(os.path.join(self.dir, name))

    def run(self, label):
        """(loadgen report, server windows) of one sampled run, or None."""
        report = read_json(os.path.join(self.dir, f"{label}.json"))
        if report is None:
            return None
        server = read_json(os.path.join(self.dir, f"{label}.server.json")) or {"windows": []}
        return report, server["windows"]

    def steps(self, label):
        """[(loadgen step, server window or None)] of a steps run, or []."""
        r = self.run(label)
        if r is None:
            return []
        report, windows = r
        windows = windows + [None] * (len(report["steps"]) - len(windows))
        return list(zip(report["steps"], windows))

    def redis_runs(self, pattern):
        """The JSON objects examples/redis_ha wrote for `pattern`, by run
        number (the name's last part)."""
        paths = glob.glob(os.path.join(self.dir, pattern + ".json"))
        paths.sort(key=lambda p: int(os.path.basename(p)[:-5].rsplit("-", 1)[1]))
        return [r for r in (read_json(p) for p in paths) if r]

    def runs(self, pattern):
        """[(loadgen report, server window or None)] of repeated walk/idle runs."""
        out = []
        for path in sorted(glob.glob(os.path.join(self.dir, pattern + ".json"))):
            if path.endswith(".server.json"):
                continue
            r = self.run(os.path.basename(path)[:-5])
            if r:
                out.append((r[0], r[1][0] if r[1] else None))
        return out
