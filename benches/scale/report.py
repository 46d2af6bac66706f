#!/usr/bin/env python3
"""Writes benches/RESULTS.md from the raw results of one scale.sh run: our
figures beside the original's published ones (scale/original.json), every
figure marked measured, not judgeable or not measured, plus comparison SVGs.

usage: report.py --raw DIR --out RESULTS.md --svg-dir DIR [--mode full|quick] [--commit REV]
(mode and commit default to what run.tsv recorded at the start of the run)

Reads from DIR whatever sections ran (missing ones are reported as not run;
see raw.py): one-shard / two-shards (steps), control-N-{batched,unbatched}-K,
idle-K, arrivals, failover-{kill,drain}, aoi-N-{on,off}: each the loadgen's JSON plus
NAME.server.json from analyze.py; redis-failover-{cluster,sentinel}-N-K and
redis-spread-N-K (examples/redis_ha --json); criterion.json; run.tsv; commands-*.txt.
Modules: raw (loading), figures (formatting, verdicts), chart (SVG).
"""

import argparse
import os
import re
from datetime import datetime, timezone

import chart
from figures import (JUDGE_NOTE, MEASURED, SATURATED_PCT, describe, dig, f1, f2, gap, kb, kib, machine, mb, median, other_load, pct,
                     ratio, shard_max, shard_mean, shard_sum, table, tool_version, verdict)
from raw import Raw


def nginx_verdict(r):
    """A bench-nginx.sh run's verdict: the loadgen's own judgement, qualified
    when the whole machine was saturated."""
    if not r.get("judgeable", True):
        return JUDGE_NOTE
    if r.get("machine_busy_pct", 0) >= SATURATED_PCT:
        return "measured (machine saturated)"
    return MEASURED


# ---- sections -------------------------------------------------------------------------
class Report:
    """RESULTS.md's sections, each a method returning Markdown lines; the
    sections also add rows to the ratio table (`summary`) shown first."""

    def __init__(self, raw, args):
        self.raw, self.args = raw, args
        self.m = machine()
        self.orig = raw.original
        self.summary = []  # rows of the ratio table: figure, original, ours, ratio, note

    def one_by_players(self):
        return {s["players"]: (s, w) for s, w in self.raw.one}

    def two_by_players(self):
        return {s["players"]: (s, w) for s, w in self.raw.two}

    # 1 ------------------------------------------------------------------------------------
    def gap_section(self):
        o = {r["players"]: r for r in self.orig["gap_p95_ms"]["rows"]}
        one, two = self.one_by_players(), self.two_by_players()
        players = sorted(set(o) | set(one) | set(two))
        rows = []
        for n in players:
            orow = o.get(n)
            theirs = "– (invalid, not published)" if orow is None and n > 2000 else (
                "–" if orow is None else f"{orow['p95_ms']:g}" + ("" if orow["judgeable"] else f" ({JUDGE_NOTE})"))
            s1 = one.get(n, (None, None))[0]
            s2 = two.get(n, (None, None))[0]
            rows.append([
                f"{n:,}", theirs,
                f"{f1(gap(s1))} / {f1(gap(s1, p='p99'))}" if s1 else "not run", verdict(s1) if s1 else "",
                f"{f1(gap(s2))} / {f1(gap(s2, 'relayed_snapshot_gap_ms'))}" if s2 else "not run",
                verdict(s2) if s2 else "",
                ratio(gap(s2), orow and orow["p95_ms"]) if s2 and orow else "–",
            ])
            if n == 1000 and s2 and orow:
                self.summary.append(["snapshot gap p95 at 1,000 players, two processes", "58 ms", f"{f1(gap(s2))} ms",
                                     ratio(gap(s2), 58), verdict(s2)])
        out = ["## 1. Snapshot gap p95 against players", "",
               "The gap between consecutive snapshots a bot receives; 50 ms is one tick at 20 Hz. "
               "Ours: one shard alone, and two shards sharing the place through Redis with the bots split evenly "
               "(own = the bot's shard, relayed = the other shard's snapshots forwarded through Redis). "
               f"Original: {self.orig['gap_p95_ms']['setup']}.", ""]
        out += table(["players", "original p95 ms", "ours one shard p95 / p99 ms", "verdict",
                      "ours two shards own p95 / relayed p95 ms", "verdict", "two shards ÷ original"], rows)
        out += ["", "![snapshot gap p95, ours and the original](results/gap-vs-original.svg)", "",
                "The loadgen's own plots of each run: [one shard](results/gap-one-shard.svg), "
                "[two shards + Redis](results/gap-two-shards.svg).", ""]
        out += self.step_detail("One shard, per step", self.raw.one, clustered=False)
        out += self.step_detail("Two shards + Redis, per step (server figures summed or worst of the two shards)",
                                self.raw.two, clustered=True)
        return out

    def step_detail(self, title, steps, clustered):
        if not steps:
            return [f"**{title}**: not run.", ""]
        head = ["players", "connected", "busy", "errors", "own gap p50 / p95 / p99 / max ms", "bots' ticks/s",
                "server ticks/s", "late ticks", "writes / socket / tick", "server cores", "RSS / player",
                "loadgen CPU", "machine CPU", "other load, cores", "shard run-queue wait", "verdict"]
        if clustered:
            head[5:5] = ["relayed gap p95 ms", "relay lag p50 / p99 ms", "Redis cores"]
        rows = []
        for s, w in steps:
            g = s["snapshot_gap_ms"]
            row = [f"{s['players']:,}", s["connected"], s["busy"], s["errors"],
                   f"{f1(g['p50'])} / {f1(g['p95'])} / {f1(g['p99'])} / {f1(g['max'])}",
                   f2(s["ticks_per_s"]), f2(shard_mean(w, "ticks_per_s")),
                   "–" if w is None else f"{shard_sum(w, 'ticks_late')} of {shard_sum(w, 'ticks')}",
                   f2(shard_mean(w, "writes_per_socket_tick")),
                   f2(dig(s, "server", "cores")), kib(dig(s, "server", "rss_per_player_bytes")),
                   f"{s['loadgen_cpu_pct']:.0f} %", f"{s['machine_cpu_pct']:.0f} %",
                   f2(other_load(s, w, self.m["cores"])), pct(shard_max(w, "runqueue_wait_share")), verdict(s)]
            if clustered:
                row[5:5] = [f1(gap(s, "relayed_snapshot_gap_ms")),
                            f"{f1(shard_max(w, 'relay_lag_ms', 'p50'))} / {f1(shard_max(w, 'relay_lag_ms', 'p99'))}",
                            f2(dig(w, "redis", "cpu_cores"))]
            rows.append(row)
        return [f"**{title}**", ""] + table(head, rows) + [""]

    # 2 ------------------------------------------------------------------------------------
    def cpu_section(self):
        o = {r["players"]: r for r in self.orig["cpu_per_frame_us"]["rows"]}
        one, two = self.one_by_players(), self.two_by_players()
        rows = []

        def cell(s):
            f = dig(s, "server", "cpu_per_frame_us")
            return "not run" if not f else f"{f2(f['user'])} / {f2(f['sys'])} / **{f2(f['total'])}**"

        for n in sorted(set(o) | set(one) | set(two)):
            orow = o.get(n) or {}
            s1, s2 = one.get(n, (None,))[0], two.get(n, (None,))[0]
            t2 = dig(s2, "server", "cpu_per_frame_us", "total")
            rows.append([f"{n:,}", f1(orow.get("server_us")), f1(orow.get("nginx_us")),
                         cell(s1), verdict(s1) if s1 else "", cell(s2), verdict(s2) if s2 else "",
                         ratio(t2, orow.get("server_us"))])
        out = ["## 2. Server CPU per delivered frame", "",
               "User and system CPU of the shard processes only (from `/proc/PID/stat` over each step's hold), "
               "divided by the frames the bots received in that hold (the loadgen's count: own and relayed "
               "snapshots, pongs, presence). On loopback the kernel work of the receiving side is largely charged "
               "to the sending process's system time. The original's figure is the server process alone, "
               "with nginx (TLS) beside it.", ""]
        out += table(["players", "original server µs", "original nginx µs", "ours one shard user / sys / total µs",
                      "verdict", "ours two shards user / sys / total µs", "verdict", "two shards total ÷ original server"],
                     rows)
        out += [""]
        s1 = one.get(1000, (None, None))
        if s1[0] and dig(s1[0], "server"):
            f = s1[0]["server"]["cpu_per_frame_us"]
            bpf = dig(s1[1], "shards", "a", "bytes_per_frame")
            per_player = None if not bpf else bpf / s1[0]["connected"]
            out += [f"One shard at 1,000 players (issue 2's goals: at most 3 µs user and 12 µs in all): "
                    f"**{f2(f['user'])} µs user, {f2(f['total'])} µs in all** ({verdict(s1[0])}); "
                    f"{'user goal met' if f['user'] <= 3 else 'user goal not met'}, "
                    f"{'total goal met' if f['total'] <= 12 else 'total goal not met'}. "
                    f"Mean frame payload {f1(bpf)} bytes, {f2(per_player)} bytes per player (a `PlayerState` is "
                    "10 bytes: u16-quantized position). With one shard every socket gets one frame a tick, so this "
                    "is also the cost of one write.", ""]
            self.summary.append(["server CPU per delivered frame at 1,000 players, one process", "6.6 µs (server)",
                                 f"{f2(f['total'])} µs (user {f2(f['user'])})", ratio(f["total"], 6.6), verdict(s1[0])])
        s2, w2 = two.get(1000, (None, None))
        if s2 and dig(s2, "server"):
            f = s2["server"]["cpu_per_frame_us"]
            per_shard = s2["server"]["cores"] / 2
            c = self.orig["cpu_per_frame_us"]["cores_at_1000"]
            out += [f"Two shards at 1,000 players: {f2(f['total'])} µs per delivered frame; "
                    f"each shard process {f2(per_shard)} cores on average (original: server {c['server']} cores and "
                    f"nginx {c['nginx']} cores per machine); Redis {f2(dig(w2, 'redis', 'cpu_cores'))} cores.", ""]
            self.summary.append(["server CPU per delivered frame at 1,000 players, two processes", "6.6 µs",
                                 f"{f2(f['total'])} µs", ratio(f["total"], 6.6), verdict(s2)])
            self.summary.append(["cores per server process at 1,000 players (two processes)", "0.13",
                                 f2(per_shard), ratio(per_shard, 0.13), verdict(s2)])
        return out

    # 3 ------------------------------------------------------------------------------------
    def ticks_section(self):
        o = {r["players"]: r for r in self.orig["ticks_per_s"]["rows"]}
        one = self.one_by_players()
        players = sorted(set(o) | {n for n in one if n >= 1000})
        rows = []
        for n in players:
            orow = o.get(n) or {}
            s, w = one.get(n, (None, None))
            sh = dig(w, "shards", "a")
            late = "–" if not sh else f"{sh['ticks_late']} ({100 * sh['ticks_late'] / max(1, sh['ticks']):.1f} %)"
            rows.append([f"{n:,}", f1(orow.get("loopback_tcp")), f1(orow.get("unix_socket")),
                         f"**{f2(dig(sh, 'ticks_per_s'))}**" if sh else "not run", late,
                         dig(sh, "ticks_skipped") if sh else "–", f2(dig(sh, "tick_ms_mean")),
                         f2(s["ticks_per_s"]) if s else "–", f2(dig(sh, "cpu_cores")),
                         pct(dig(sh, "runqueue_wait_share")),
                         f"{s['loadgen_cpu_pct']:.0f} %" if s else "–", f"{s['machine_cpu_pct']:.0f} %" if s else "–",
                         verdict(s) if s else "", ratio(dig(sh, "ticks_per_s"), orow.get("loopback_tcp"))])
            if sh and orow:
                self.summary.append([f"ticks per second at {n:,} players, one process, loopback",
                                     f1(orow["loopback_tcp"]), f2(sh["ticks_per_s"]),
                                     ratio(sh["ticks_per_s"], orow["loopback_tcp"]), verdict(s)])
        out = ["## 3. Ticks per second at the highest counts", "",
               "One shard process, busy rule off. Server ticks/s from `mino_ticks_total` deltas over the hold; "
               "late ticks: started more than a fifth of a period late (`mino_ticks_late_total`); skipped: "
               "scheduled ticks dropped after a stall (never replayed). Bots' ticks/s: own-shard snapshots each "
               f"bot received per second. Original: {self.orig['ticks_per_s']['setup']}. "
               "Here the loadgen shares the same two cores, so past the point where it passes 70 % CPU "
               "the figures say more about the machine than about the server.", ""]
        out += table(["players", "original loopback TCP", "original Unix socket", "ours server ticks/s",
                      "late ticks", "skipped", "mean tick work ms", "bots' ticks/s", "shard cores",
                      "shard run-queue wait", "loadgen CPU", "machine CPU", "verdict", "ours ÷ original (TCP)"], rows)
        return out + ["", "![ticks per second](results/ticks-vs-original.svg)", ""]

    # 4 ------------------------------------------------------------------------------------
    def idle_section(self):
        oi = self.orig["idle"]
        out = ["## 4. Memory and CPU per idle websocket", ""]
        if not self.raw.idle:
            return out + ["Not run.", ""]
        sizes = {}
        for r, w in self.raw.idle:
            sizes.setdefault(r["bots"], []).append((r, w))
        o_lo = oi["broadcast_core_s_low"] / oi["connections"] * 1e6
        o_hi = oi["broadcast_core_s_high"] / oi["connections"] * 1e6
        rows, kern_all, best = [], [], None
        for bots in sorted(sizes):
            runs = [r for r, _ in sizes[bots]]
            n = median([r["connected"] for r in runs])
            proc = median([r.get("server_bytes_per_connection") for r in runs])
            kern = median([r.get("kernel_tcp_bytes_per_connection") for r in runs])
            kern_all += [r["kernel_tcp_bytes_per_connection"] for r in runs
                         if r.get("kernel_tcp_bytes_per_connection") is not None]
            tick = median([r.get("server_cpu_per_tick_ms") for r in runs])
            chat = median([dig(r, "chat_cost", "cpu_per_socket_us") for r in runs])
            v = self.verdicts(runs)
            rows.append([f"{bots:,}", f"{n:,.0f}", kb(proc), ratio(proc, oi["process_bytes_per_conn"]),
                         f"{kb(None if kern is None else kern / 2)} per end", f"{f2(tick)} ms",
                         f"{f2(chat)} µs", f"{ratio(chat, o_hi)} to {ratio(chat, o_lo)}", v])
            best = (bots, proc, chat, v)
        out += [f"`mino-loadgen idle`: websockets that say Hello and then only answer pings, on a fresh shard each "
                f"run (median of {self.repeat_count(sizes)} run(s) a size). Every mino connection is a player standing "
                "still: a world of about one player per 125-unit cell (area of interest), keyframes every 20 ticks "
                "(`--keyframe-ticks 20`: a standing player's socket is written about once a second, not every "
                "tick), the busy rule off. \"One chat line to all\" is the server's extra CPU while 20 speakers "
                "take turns saying a line every tick, divided by the lines the idle sockets received "
                "(`chat_cost` in the JSON). The original: "
                f"{oi['connections']:,} idle websockets on one process and one core, {kb(oi['process_bytes_per_conn'])} "
                f"each, one message to all {oi['broadcast_core_s_low']} to {oi['broadcast_core_s_high']} s of a core "
                f"({o_lo:.1f} to {o_hi:.1f} µs a socket).", ""]
        out += table(["idle websockets", "connected", "server memory per websocket (RSS growth ÷ connections)",
                      "÷ original 1.3 KB", "kernel TCP memory", "server CPU per tick", "one chat line to all, CPU per socket",
                      "÷ original", "verdict"], rows)
        if kern_all:
            out += ["", "The kernel figure is the growth of the TCP memory in `/proc/net/sockstat` (both ends are on "
                        "this kernel, halved here): buffers holding data in flight at that instant, not the sockets' "
                        f"fixed structures, so it swings between runs ({', '.join(kb(k) for k in kern_all)} both ends "
                        "here). The original's 2.7 to 4 KB likely counts those structures too."]
        heap = self.raw.load_json("heap-idle-10000.json")
        if heap:
            b, a = heap["runs"]["before"], heap["runs"]["after"]
            out += ["", f"**Heap profile** (heaptrack, {heap['connections']:,} idle websockets, `{heap['command']}`): "
                        f"live heap {kb(b['live_heap_bytes_per_connection'])} a connection before ({b['what']}), "
                        f"{kb(a['live_heap_bytes_per_connection'])} after ({a['what']}). Biggest sites after: "
                        + ", ".join(f"{site} {n} B" for site, n in a["top"][:8])
                        + ". Before, the session task and its tracker alone held "
                        + f"{sum(n for site, n in b['top'] if 'task' in site or 'try_with' in site):,} B a connection. "
                        "The RSS above adds what the allocator keeps beyond the live heap: with jemalloc (the "
                        "server's allocator since issue 17) size-class rounding and partly used slabs; glibc's malloc "
                        "adds a header per allocation and the holes the handshakes' transient buffers leave (see "
                        "the allocator comparison below). The profile is of a server built without jemalloc, as "
                        "heaptrack sees malloc's callers only."]
        glibc = [r for r, _ in self.raw.idle_glibc]
        if glibc:
            n = glibc[0]["bots"]
            jem = [r for r, _ in sizes.get(n, [])]
            g = [r.get("server_bytes_per_connection") for r in glibc]
            j = [r.get("server_bytes_per_connection") for r in jem]
            out += ["", f"**The allocator** (`mino-server` built with `--no-default-features`, glibc's malloc, "
                        f"against the default jemalloc build of the same commit; {n:,} idle websockets, the runs "
                        f"`malloc-glibc-*` and `idle-{n}-*`): server memory per websocket "
                        f"{kb(median(g))} with glibc ({', '.join(f'{v:,}' for v in g)} B) against "
                        f"{kb(median(j)) if j else '–'} with jemalloc ({', '.join(f'{v:,}' for v in j)} B), "
                        f"{ratio(median(j), median(g)) if j else '–'}."]
        slab = self.raw.load_json("kernel-slab-idle-10000.json")
        if slab:
            out += ["", f"**The kernel's own cost per connection**, apart: the kernel's slab memory grew by "
                        f"{kb(slab['bytes_per_connection_both_ends'])} a connection with {slab['connections']:,} idle "
                        f"websockets open, {kb(slab['bytes_per_end'])} per socket end (both ends are on this kernel: "
                        "socket, TCP state, file, epoll entry); the original reports 2.7 to 4 KB in the kernel. "
                        f"({slab['command']}.)"]
        if best:
            bots, proc, chat, v = best
            self.summary.append([f"server memory per idle websocket ({bots:,})", "1.3 KB", kb(proc), ratio(proc, 1300), v])
            self.summary.append([f"CPU of one chat line to all, per socket ({bots:,})", f"{o_lo:.1f}–{o_hi:.1f} µs",
                                 f"{f2(chat)} µs", f"{ratio(chat, o_hi)}–{ratio(chat, o_lo)}", v])
        return out + [""]

    def repeat_count(self, sizes):
        return max(len(v) for v in sizes.values())

    # 5 ------------------------------------------------------------------------------------
    def arrivals_section(self):
        out = ["## 5. Arrivals", ""]
        if not self.raw.arrivals:
            return out + ["Not run.", ""]
        r, w = self.raw.arrivals
        oa = self.orig["arrivals"]
        m = dict(r, verdict=verdict(r))
        peak = dig(m, "server", "rss_peak_bytes")
        wl = m["welcome_ms"]
        out += [f"`mino-loadgen arrivals`: {r['bots']:,} players arriving at {r['rate_per_s']:g}/s on one shard "
                "(busy rule off), one join attempt each. A join that gets no Welcome, Busy or Error within the "
                "10 s join timeout counts as timed out.", ""]
        rows = [
            ["arrivals", f"{oa['players']:,} at about {oa['rate_per_s']}/s", f"{r['bots']:,} at {r['achieved_rate_per_s']:g}/s achieved", "", ""],
            ["joins timed out", f"{oa['timed_out_before']} before the fix, {oa['timed_out_after']} after", f"**{r['timed_out']}**", "", m["verdict"]],
            ["admitted", "all", f"{r['admitted']:,}", "", m["verdict"]],
            ["welcome latency p50 / p95 / p99 / max", "–", f"{f1(wl['p50'])} / {f1(wl['p95'])} / {f1(wl['p99'])} / {f1(wl['max'])} ms", "", m["verdict"]],
            ["server memory (peak RSS)", f"{oa['memory_before_mb']} MB before, {oa['memory_after_mb']} MB after",
             "–" if peak is None else f"{peak / 1e6:,.0f} MB", ratio(peak and peak / 1e6, oa["memory_after_mb"]), m["verdict"]],
            ["snapshot gap p95 after the arrivals", "–", f"{f1(gap(m))} ms", "", m["verdict"]],
        ]
        out += table(["figure", "original", "ours", "ours ÷ original", "verdict"], rows)
        self.summary.append([f"joins timed out, players arriving (original {oa['players']:,} at ~{oa['rate_per_s']}/s; "
                             f"ours {r['bots']:,} at {r['rate_per_s']:g}/s)", "0", str(r["timed_out"]), "–", m["verdict"]])
        self.summary.append(["server memory after those arrivals (ours: peak RSS)", f"{oa['memory_after_mb']} MB",
                             "–" if peak is None else f"{peak / 1e6:,.0f} MB (peak)",
                             ratio(peak and peak / 1e6, oa["memory_after_mb"]), m["verdict"]])
        return out + [""]

    # 6 ------------------------------------------------------------------------------------
    @staticmethod
    def failover_status(r):
        if r is None:
            return "not run"
        if r["lost"] > 0 and r["resumed"] == 0:
            return "not measured (resume not available)"
        return MEASURED

    def refusals(self, action):
        t = dig(self.raw.failover_totals[action], "a")
        if t is None:
            return "–"
        n = sum(t["busy_refusals"].values())
        return str(n) if not n else f"{n} ({', '.join(f'{k} {v}' for k, v in t['busy_refusals'].items())})"

    def late(self, action):
        t = dig(self.raw.failover_totals[action], "a")
        return "–" if t is None else f"{t['ticks_late']} of {t['ticks']}"

    def failover_section(self):
        of = self.orig["failover"]
        out = ["## 6. Failover", "",
               "`mino-loadgen failover`: two shards + Redis (default configuration, busy rule on), bots split "
               "evenly; after a warm-up one shard is killed (SIGKILL) or drained (SIGTERM). Each affected bot is "
               "timed from its socket close to the Welcome that resumed it and to its first snapshot back in "
               f"place. Original: {of['setup']}.", ""]
        k, d = self.raw.failover["kill"], self.raw.failover["drain"]
        sk, sd = self.failover_status(k), self.failover_status(d)

        def summ(r, key):
            s = r and r.get(key)
            if not s or not s.get("count"):
                return "–"
            text = f"{f1(s['p50'])} / {f1(s['p95'])} / {f1(s['p99'])} / {f1(s['max'])}"
            if key == "back_in_place_ms" and s["count"] < r["resumed"]:
                text += f" (partial: {s['count']} of {r['resumed']} bots)"
            return text

        def ms(v):
            return "–" if v is None else f"{v:,.0f} ms"

        rows = [
            ["status", "measured", sk, sd],
            ["bots connected before / affected", "–", f"{k['connected_before']} / {k['affected']}" if k else "–",
             f"{d['connected_before']} / {d['affected']}" if d else "–"],
            ["resumed as the same player", "yes", k["resumed"] if k else "–", d["resumed"] if d else "–"],
            ["came back as new players", "–", k["fresh_rejoins"] if k else "–", d["fresh_rejoins"] if d else "–"],
            ["lost (not back as the same player)", "–", k["lost"] if k else "–", d["lost"] if d else "–"],
            ["misplaced on resume (> 3 ticks of walking)", "–", k["misplaced"] if k else "–", d["misplaced"] if d else "–"],
            ["close → resumed Welcome p50 / p95 / p99 / max ms", f"{of['welcome_ms']} (one player)", summ(k, "resume_welcome_ms"), summ(d, "resume_welcome_ms")],
            ["close → back in place p50 / p95 / p99 / max ms", f"{of['back_in_place_ms']} (one player)", summ(k, "back_in_place_ms"), summ(d, "back_in_place_ms")],
            ["signal → last socket closed", "–", ms(k and k["time_to_empty_ms"]), ms(d and d["time_to_empty_ms"])],
            ["signal → process exit", "–", ms(k and k["process_exit_ms"]), ms(d and d["process_exit_ms"])],
            ["surviving shard: busy refusals (retry-after 2 to 3 s)", "–", self.refusals("kill"), self.refusals("drain")],
            ["surviving shard: late ticks", "–", self.late("kill"), self.late("drain")],
        ]
        out += table(["figure", "original", "ours: kill", "ours: drain"], rows)
        partial = [r for r in (k, d) if r and dig(r, "back_in_place_ms", "count") is not None
                   and r["back_in_place_ms"]["count"] < r["resumed"]]
        if partial:
            out += ["", "\"Partial\": the loadgen stops observing once every bot is welcomed again as the same "
                        "player, so bots whose first snapshot had not arrived by then are missing from \"back in "
                        "place\" (and from the misplaced check): its upper percentiles are low."]
        if MEASURED not in (sk, sd) and k:
            out += ["", "Every affected bot reconnected, but as a new player: the shards of this build do not "
                        "resume a player from another shard yet (issue 4). The timings above are therefore not "
                        "comparable with the original's and are left out; rerun `benches/scale.sh --only failover` "
                        "once resume lands."]
        for action, r, st in (("kill", k, sk), ("drain", d, sd)):
            if st == MEASURED and dig(r, "resume_welcome_ms", "count"):
                self.summary.append([f"failover ({action}): close → resumed Welcome, p50", f"{of['welcome_ms']} ms",
                                     f"{f1(r['resume_welcome_ms']['p50'])} ms",
                                     ratio(r["resume_welcome_ms"]["p50"], of["welcome_ms"]), st])
                bp = r["back_in_place_ms"]
                partial = "" if bp["count"] >= r["resumed"] else f" (partial: {bp['count']} of {r['resumed']} bots)"
                self.summary.append([f"failover ({action}): close → back in place, p50", f"{of['back_in_place_ms']} ms",
                                     f"{f1(bp['p50'])} ms{partial}", ratio(bp["p50"], of["back_in_place_ms"]), st])
            elif r:
                self.summary.append([f"failover ({action}): close → resumed Welcome", f"{of['welcome_ms']} ms", "–", "–", st])
        return out + [""]

    # 7 ------------------------------------------------------------------------------------
    def control_section(self):
        out = ["## 7. Control: writes batched vs one write per frame", ""]
        if not self.raw.control:
            return out + ["Not run.", ""]
        ob = self.orig["batching"]
        counts = sorted(self.raw.control)
        repeats = max(len(self.raw.control[n]["batched"]) for n in counts)
        out += [f"The same two-shard run at {' and '.join(f'{n:,}' for n in counts)} players, {repeats} time(s) each "
                "with every shard writing a socket's frames of a tick in one vectored write (batched, the default) "
                "and with `--unbatched-writes` (one write per frame), alternating B U, U B, ... so the machine's "
                "drift falls on both; medians. With two shards every socket gets two snapshots a tick (its own "
                "shard's and the relayed one), so unbatched means about two writes a socket a tick. Original: "
                f"{ob['note']}; they admitted {ob['admitted_batched']:,} players instead of "
                f"{ob['admitted_unbatched']:,} on {ob['cores_batched']} cores instead of {ob['cores_unbatched']}.", ""]
        for n in counts:
            out += self.control_table(n, self.raw.control[n]["batched"], self.raw.control[n]["unbatched"])
        return out

    def control_table(self, n, b, u):
        ob = self.orig["batching"]
        out = [f"**{n:,} players**", ""]
        if not b or not u:
            return out + ["Incomplete: a mode did not run.", ""]

        def med(runs, f):
            return median([f(r, w) for r, w in runs])

        def verdicts(runs):
            return self.verdicts([r for r, _ in runs])

        figures = [
            ("writes per socket per tick (server)", lambda r, w: shard_mean(w, "writes_per_socket_tick"), f2),
            ("frames per socket per tick (server)", lambda r, w: shard_mean(w, "frames_per_socket_tick"), f2),
            ("server CPU per delivered frame, user µs", lambda r, w: dig(r, "server", "cpu_per_frame_us", "user"), f2),
            ("server CPU per delivered frame, sys µs", lambda r, w: dig(r, "server", "cpu_per_frame_us", "sys"), f2),
            ("server CPU per delivered frame, total µs", lambda r, w: dig(r, "server", "cpu_per_frame_us", "total"), f2),
            ("server cores, both shards", lambda r, w: dig(r, "server", "cores"), f2),
            ("own snapshot gap p95 ms", lambda r, w: gap(r), f1),
            ("relayed snapshot gap p95 ms", lambda r, w: gap(r, "relayed_snapshot_gap_ms"), f1),
            ("connected", lambda r, w: r["connected"], lambda v: f"{v:,.0f}"),
            ("loadgen CPU %", lambda r, w: r["loadgen_cpu_pct"], f1),
            ("machine CPU %", lambda r, w: r["machine_cpu_pct"], f1),
            ("other load on the machine, cores", lambda r, w: other_load(r, w, self.m["cores"]), f2),
            ("shard run-queue wait (worst shard), share of a core", lambda r, w: shard_max(w, "runqueue_wait_share"), pct),
        ]
        rows = []
        for name, f, fmt_ in figures:
            vb, vu = med(b, f), med(u, f)
            orig = ""
            if name.startswith("server cores"):
                orig = (f"{ob['cores_batched']} batched, {ob['cores_unbatched']} unbatched: "
                        f"{ob['cores_unbatched'] / ob['cores_batched']:.2f}×")
            rows.append([name, fmt_(vb) if vb is not None else "–", fmt_(vu) if vu is not None else "–",
                         ratio(vu, vb), orig])
        rows.append(["verdict", verdicts(b), verdicts(u), "", ""])
        out += table(["figure", "batched (median)", "unbatched (median)", "unbatched ÷ batched", "original"], rows)
        vb = med(b, lambda r, w: dig(r, "server", "cpu_per_frame_us", "total"))
        vu = med(u, lambda r, w: dig(r, "server", "cpu_per_frame_us", "total"))
        cb, cu = med(b, lambda r, w: dig(r, "server", "cores")), med(u, lambda r, w: dig(r, "server", "cores"))
        self.summary.append([f"gain from batching writes at {n:,} players: unbatched ÷ batched",
                             f"{ob['cores_unbatched'] / ob['cores_batched']:.2f}× in cores (0.97 ÷ 0.65)",
                             f"{ratio(vu, vb)} in CPU per frame; {ratio(cu, cb)} in cores ({f2(cu)} ÷ {f2(cb)})",
                             "–", f"{verdicts(b)} / {verdicts(u)}"])
        out += ["", "Each run:", ""]
        each = []
        for mode, runs in (("batched", b), ("unbatched", u)):
            for i, (r, w) in enumerate(runs, 1):
                f = dig(r, "server", "cpu_per_frame_us") or {}
                each.append([mode, i, f2(shard_mean(w, "writes_per_socket_tick")), f2(f.get("total")),
                             f2(dig(r, "server", "cores")), f1(gap(r)), f1(gap(r, "relayed_snapshot_gap_ms")),
                             f2(other_load(r, w, self.m["cores"])), verdict(r)])
        out += table(["writes", "run", "writes / socket / tick", "CPU µs / frame", "server cores", "own gap p95",
                      "relayed gap p95", "other load, cores", "verdict"], each)
        return out + [""]

    # 8 ------------------------------------------------------------------------------------
    def criterion_section(self):
        out = ["## 8. Micro-benchmarks (criterion)", ""]
        benches = dig(self.raw.criterion, "benchmarks")
        if not benches:
            return out + ["Not run (or `--skip-criterion`).", ""]
        rows = []
        for b in benches:
            per = "–" if not b.get("elements") else f"{b['median_ns'] / b['elements']:.2f} ns"
            ci = b["mean_ci_ns"]
            rows.append([f"`{b['id']}`", self.ns(b["median_ns"]),
                         f"{self.ns(b['mean_ns'])} ({self.ns(ci[0])} to {self.ns(ci[1])})", per])
        out += ["`cargo bench -p mino-benches`: snapshot encode at 100, 1,000 and 5,000 players; client message "
                "decode with verification; snapshot header verify of a 1,000-player frame; one shard tick (move "
                "everyone, encode, stage presence); with area of interest, every cell's entries of a shard encoded "
                "and one shard tick at 1,000, 5,000 and 10,000 players at 4 a cell (flat per player: linear). "
                "Times per iteration; the original published none.", ""]
        out += table(["benchmark", "median", "mean (95 % CI)", "per player"], rows)
        return out + [""]

    # 9 ------------------------------------------------------------------------------------
    def aoi_section(self):
        out = ["## 9. Area of interest", ""]
        if not self.raw.aoi:
            return out + ["Not run.", ""]
        counts = sorted(self.raw.aoi)
        out += ["`mino-loadgen walk --density D` on two shards + Redis with `--cell-size 100 --view-radius 400` "
                "(a radius of 4 cells), the world sized so the players make D a cell at each count (the loadgen "
                "keeps them spread over it), against the same world without area of interest (whole-shard "
                "snapshots: every socket gets every player) as the control, where that still runs; at 1,000 "
                "players also at a radius of 2 cells (200 units; the server's default before it was 4), where "
                "whole cells bring a socket more players beyond its radius. Each socket gets one view frame a shard a tick (a 52-byte "
                "header, 6 bytes a cell, 10 a player; `schema/src/cell.rs`). Bytes a player a second are what the bots received; server CPU a "
                "player a tick is both shards' user + system time over the hold, over players times ticks; Redis "
                "from `redis-cli INFO stats cpu commandstats` sampled with the shards (PUBLISH calls, every "
                "command, the CPU Redis reports for itself); gaps are own-shard (first frame of a tick) and, with "
                "area of interest, own-cell (frames listing the bot).", ""]
        rows = []
        labels = {"on": "area of interest", "on2": "area of interest, radius 2 cells", "off": "off (control)"}
        for n in counts:
            for mode in ("on", "on2", "off"):
                run = self.raw.aoi[n].get(mode)
                label = labels[mode]
                if run is None and mode == "on2":
                    continue
                if run is None:
                    if mode == "off":
                        rows.append([f"{n:,}", label, "not run (too many bytes for one machine)"] + [""] * 9)
                    continue
                rows.append(self.aoi_row(n, label, *run))
        out += table(["players", "mode", "bytes / player / s", "server CPU / player / tick", "own gap p95 ms",
                      "own-cell gap p95 ms", "relayed gap p95 ms", "late ticks", "Redis PUBLISH / s",
                      "Redis commands / s", "Redis CPU, cores", "verdict"], rows)
        out += ["", "Observers (a sample of the bots, `--observers`, 5 % or at least 20) with area of interest:", ""]
        orows = []
        for n, mode in [(n, mode) for n in counts for mode in ("on", "on2")]:
            o = dig(self.aoi_report(n, mode), "aoi", "observers")
            if not o:
                continue
            e_ms, e_t = o["view_enter_ms"], o["view_enter_ticks"]
            orows.append([f"{n:,}" + (" (radius 2 cells)" if mode == "on2" else ""), o["observers"], f"{o['players_in_view']:.1f}",
                          f"{f1(e_ms['p50'])} / {f1(e_ms['p95'])}", f"{f2(e_t['p50'])} / {f2(e_t['p95'])}",
                          f"{o['view_enters']:,} ({o['view_enters_unseen']} unseen)", o["pop_ins"], o["blinks"],
                          f2(o["crop_ratio"]), f1(o["header_bytes_per_tick"]), f2(o["total_vs_ideal"])])
        out += table(["players", "observers", "players in view", "view enter p50 / p95 ms",
                      "view enter p50 / p95 ticks", "entries", "pop-ins", "blinks", "crop (entries ÷ ideal)",
                      "header bytes / tick", "all bytes ÷ ideal"], orows)
        out += self.crowd_part()
        on, off = self.aoi_report(1000, "on"), self.aoi_report(1000, "off")
        if on and off and on.get("connected") and off.get("connected"):
            b_on, b_off = on["bytes_per_s"] / on["connected"], off["bytes_per_s"] / off["connected"]
            self.summary.append(["bytes a player a second at 1,000 players, area of interest ÷ off", "–",
                                 f"{b_on:,.0f} B/s ÷ {b_off:,.0f} B/s", ratio(b_on, b_off), verdict(on)])
        return out + [""]

    # 12 -----------------------------------------------------------------------------------
    def nginx_section(self):
        out = ["## 12. Through nginx with TLS: loopback TCP against Unix sockets", ""]
        runs, cmp_ = self.raw.nginx_runs, self.raw.nginx
        if not runs or not cmp_:
            return out + ["Not run.", ""]
        o = self.orig["unix_socket"]
        bots = runs[0]["bots"]
        out += [f"`deploy/bench-nginx.sh`: Redis, two shards and nginx as shipped (the template rendered by "
                f"`deploy/nginx/render.sh`, TLS with a self-signed certificate, `worker_processes "
                f"{runs[0]['nginx_workers']}`), {bots:,} walker bots over `wss://` through nginx; nginx reaches the "
                "shards over 127.0.0.1 TCP in one kind of run and over Unix sockets (`--listen unix:PATH`, "
                "`server unix:PATH` upstreams) in the other, the kinds alternating so the machine's other load "
                "falls on both. CPU per delivered frame: user + system time of the shard processes, and of the "
                "nginx workers, over the hold (`/proc/PID/stat`), divided by the frames the bots received in it. "
                "The load average (`uptime`, 1 / 5 / 15 min) is taken before and after each run. "
                f"Original: {o['setup']}; {o['note']}.", ""]
        rows = []
        for r in runs:
            rows.append([r["upstream"], f"{r['connected']:,}", f"{r['frames_per_s_delivered']:,.0f}",
                         f"{f2(r['shards']['user_us_per_frame'])} / {f2(r['shards']['sys_us_per_frame'])} / "
                         f"**{f2(r['shards']['us_per_frame'])}**",
                         f"{f2(r['nginx']['user_us_per_frame'])} / {f2(r['nginx']['sys_us_per_frame'])} / "
                         f"**{f2(r['nginx']['us_per_frame'])}**",
                         f2(r["shards"]["cores"]), f2(r["nginx"]["cores"]),
                         f1(r["snapshot_gap_ms"]["p95"]), f1(r["relayed_snapshot_gap_ms"]["p95"]),
                         f"{r['loadgen_cpu_pct']:.0f} %", f"{r['machine_busy_pct']:.0f} %",
                         f"{r.get('load_average_before', '–')} → {r.get('load_average_after', '–')}",
                         nginx_verdict(r)])
        out += ["Each run, in the order run:", ""]
        out += table(["upstream", "bots connected", "frames / s delivered", "shards user / sys / total µs a frame",
                      "nginx user / sys / total µs a frame", "shard cores", "nginx cores", "own gap p95 ms",
                      "relayed gap p95 ms", "loadgen CPU", "machine busy", "load average before → after", "verdict"],
                     rows)
        ratio_ = cmp_.get("unix_over_tcp", {})
        # The runs of one kind spread over the other's: noise moved the figure as much as the upstream did.
        overlap = {name: min(cmp_["tcp"][name]["runs"]) <= max(cmp_["unix"][name]["runs"])
                   and min(cmp_["unix"][name]["runs"]) <= max(cmp_["tcp"][name]["runs"])
                   for name in ("shard_us_per_frame", "nginx_us_per_frame")}
        mrows = []
        for name, label in (("shard_us_per_frame", "shards, µs a frame"), ("nginx_us_per_frame", "nginx, µs a frame")):
            t, u = cmp_["tcp"][name], cmp_["unix"][name]
            mrows.append([label, f"{f2(t['median'])} ({', '.join(f2(v) for v in t['runs'])})",
                          f"{f2(u['median'])} ({', '.join(f2(v) for v in u['runs'])})",
                          f"{ratio_[name]:.2f}×" if name in ratio_ else "–",
                          f"{o['server_cpu_per_frame_ratio']:.2f}× (about 30 % less)" if name.startswith("shard") else
                          "– (not published)",
                          "yes: the machine's noise is as large as the difference" if overlap.get(name) else "no"])
        for name, label in (("shard_user_us_per_frame", "shards, user µs a frame"),
                            ("shard_sys_us_per_frame", "shards, system µs a frame"),
                            ("nginx_user_us_per_frame", "nginx, user µs a frame"),
                            ("nginx_sys_us_per_frame", "nginx, system µs a frame")):
            t, u = cmp_["tcp"][name]["median"], cmp_["unix"][name]["median"]
            mrows.append([label, f2(t), f2(u), ratio(u, t), "–", ""])
        out += ["", "Medians (each run in brackets):", ""]
        out += table(["CPU per delivered frame", "loopback TCP", "Unix socket", "Unix ÷ TCP", "original Unix ÷ TCP",
                      "runs of the two kinds overlap"], mrows)
        if "shard_us_per_frame" in ratio_:
            self.summary.append([f"server CPU per delivered frame, Unix socket ÷ loopback TCP, through nginx (TLS), "
                                 f"{bots:,} players", f"{o['server_cpu_per_frame_ratio']:.2f}× (no nginx)",
                                 f"{ratio_['shard_us_per_frame']:.2f}× ({f2(cmp_['unix']['shard_us_per_frame']['median'])}"
                                 f" ÷ {f2(cmp_['tcp']['shard_us_per_frame']['median'])} µs)",
                                 ratio(ratio_["shard_us_per_frame"], o["server_cpu_per_frame_ratio"]),
                                 "measured (runs overlap: noise)" if overlap.get("shard_us_per_frame") else MEASURED])
        return out + [""]

    def crowd_part(self):
        """The crowd rows of section 9: everyone in one cell, against the view budget."""
        if not self.raw.crowd:
            return ["", "Crowd: not run.", ""]
        first = self.raw.crowd[min(self.raw.crowd)][0]
        point = first.get("point") or [0, 0]
        radius = first.get("gather_radius", 0)
        out = ["", f"**Crowd** (`mino-loadgen crowd`): on two shards + Redis with area of interest, every bot walks "
                   f"to ({point[0]:,.0f}, {point[1]:,.0f}) and stands within {radius:g} units of it for the hold, "
                   "all in one cell (`scale.sh` puts the point in the middle of the cell next to the world's "
                   "centre, so the cell holds the whole crowd). The issue's goals: late ticks under 1 %, no socket "
                   "closed as too slow, each socket's view-frame bytes within the view budget, which is an average "
                   "(the server's default `--view-budget-bytes`, 8,192 bytes a tick): the byte figures are each "
                   "socket's mean over the hold, p50 / p95 / max across sockets. When the crowd's own cell alone "
                   "comes to more than the budget, the budget's ladder sends even that cell less often (never "
                   "below every 8th tick; `server/src/shard/interest.rs`): the own gap below shows it.", ""]
        rows = []
        for n in sorted(self.raw.crowd):
            r, w = self.raw.crowd[n]
            late, slow, budget = r.get("late_ticks") or {}, r.get("too_slow") or {}, r.get("budget") or {}
            per_tick = budget.get("cell_bytes_per_tick") or {}
            met = (late.get("late_share", 1) < 0.01 and slow.get("bots", 1) == 0 and slow.get("server") == 0
                   and budget.get("within_budget"))
            rows.append([f"{n:,}", f"{r.get('admitted', 0):,}", f"{r.get('gathered', 0):,} / {r.get('gathered_at_end', 0):,}",
                         f"{late.get('late', '–')} of {late.get('ticks', '–')} ({100 * late.get('late_share', 0):.1f} %)",
                         f"{slow.get('bots', '–')} / {slow.get('server', '–')}",
                         f"{f1(per_tick.get('p50'))} / {f1(per_tick.get('p95'))} / {f1(per_tick.get('max'))}",
                         f"{budget['budget_bytes']:,}" if budget.get("budget_bytes") is not None else "–",
                         f"{budget.get('bots_over_budget', '–')}", f1(budget.get("server_bytes_per_socket_tick")),
                         f1(gap(r)), f"{verdict(r)}; goals {'met' if met else 'not met'}"])
        out += table(["bots", "admitted", "gathered at start / end of hold", "late ticks",
                      "closed as too slow (bots / server)", "cell bytes a socket a tick (its mean) p50 / p95 / max",
                      "budget bytes", "bots over budget", "bytes the shards wrote a socket a tick", "own gap p95 ms",
                      "verdict"], rows)
        return out

    def aoi_report(self, n, mode):
        """The loadgen report of the area-of-interest run at `n` players in `mode`, or None."""
        run = self.raw.aoi.get(n, {}).get(mode)
        return run[0] if run else None

    def aoi_row(self, n, label, r, w):
        connected = r.get("connected") or 0
        per_player = r["bytes_per_s"] / connected if connected else None
        cpu = dig(r, "server")
        ticks = (r.get("ticks_per_s") or 0) * (r.get("seconds") or 0)
        cpu_us = (cpu["cpu_user_s"] + cpu["cpu_sys_s"]) * 1e6 / (connected * ticks) if cpu and connected and ticks else None
        late, all_ticks = shard_sum(w, "ticks_late"), shard_sum(w, "ticks")
        redis = dig(w, "redis") or {}
        redis_cpu = redis.get("info_cpu_cores", redis.get("cpu_cores"))
        return [f"{n:,}", label, "–" if per_player is None else f"{per_player:,.0f}", f1(cpu_us, " µs"), f1(gap(r)),
                f1(gap(dig(r, "aoi"), "own_cell_gap_ms")), f1(gap(r, "relayed_snapshot_gap_ms")),
                "–" if late is None else f"{late} of {all_ticks}", f1(redis.get("publishes_per_s")),
                f1(redis.get("commands_per_s")), f2(redis_cpu), verdict(r)]
    def client_section(self):
        """The browser client: the own player's answer to a key (prediction), its error behind a
        delayed link, a standalone restart, and a page that falls behind the network."""
        out = ["## 10. Browser client", ""]
        c = self.raw.client or {}
        if not c and not any(self.raw.client_behind.values()):
            return out + ["Not measured in this run (see client-web/e2e/README.md).", ""]
        out += ["Real Chromium (SwiftShader WebGPU) against the real server on loopback, measured by the "
                "client's end-to-end tests with `MINO_CLIENT_FIGURES=benches/results/raw/client.json` "
                "(`cd client-web && npm run e2e`). Keydown → own label moving: the time from a key's "
                "`keydown` event to the frame that moves the own player's name label (a MutationObserver), "
                "11 presses; before prediction it was 97 ms median on loopback (issue 18), plus the round "
                "trip over a real network. The 100 ms round trip is a loopback proxy holding every websocket "
                "message 50 ms ±10 % each way (`e2e/harness/delay-proxy.ts`). Prediction error: how far each "
                "authoritative sample moved the predicted position while walking about for 12 s (world "
                "units; one step is 6 at 120 units/s and 20 Hz).", ""]
        rows = []
        for key, label in (("keydownLoopback", "keydown → own player moving, loopback"),
                           ("keydownRtt100", "keydown → own player moving, 100 ms RTT ±10 %")):
            v = c.get(key)
            if v:
                rows.append([label, f"{v['medianMs']:.1f} ms median", f"{len(v['samplesMs'])} presses: "
                             + ", ".join(f"{x:.0f}" for x in v["samplesMs"]) + " ms", "≤ 50 ms"])
        e = c.get("predictionErrorRtt100")
        if e:
            rows.append(["prediction error, 100 ms RTT ±10 %",
                         f"p50 {e['p50']:.3f}, p95 {e['p95']:.2f}, max {e['max']:.2f} world units",
                         f"{e['samples']} samples, {e['snaps']} snaps"
                         + (f"; uplink delay spread {e['upSpreadMs']:.1f} ms" if "upSpreadMs" in e else ""),
                         f"p95 ≤ {e['bound']:.2f}: a step plus the walk over the uplink's spread" if "bound" in e
                         else f"p95 ≤ one step ({e['stepUnits']})"])
        if "restartBackMs" in c:
            rows.append(["standalone restart (SIGTERM, 1012): live again after the server is back",
                         f"{c['restartBackMs']:.0f} ms", "as a new player, same name", "≤ 3 s"])
        sp = c.get("slowPage")
        if sp:
            rows.append([f"page too slow for its frames ({sp['burnMsPerFrame']} ms of work a frame)",
                         f"{sp['skipped']} snapshots skipped in 2 s; drawn {sp['renderLagMs']:.0f} ms from the "
                         f"newest snapshot (negative: up to a tick past it), ping {sp['pingMs']:.0f} ms", f"current again {sp['currentAgainMs']:.0f} ms after",
                         "< 1 s"])
        out += table(["figure", "ours", "detail", "bound"], rows) + [""]
        b = self.raw.client_behind
        if any(b.values()):
            out += ["**Falling behind.** `npm run figure -- --bots N --seconds S --cpu-throttle T --json ...`: "
                    "N walking bots (`mino-loadgen walk`) on one release shard, the page's main thread slowed T "
                    "times by Chromium, sampled once a second; *before* is main's client (served with "
                    "`MINO_E2E_DIST`), *after* this one. Ping is the page's own (its pongs wait behind every "
                    "frame it handles); \"drawn behind\" is the newest snapshot's server time minus the time drawn. "
                    "The machine was shared and saturated by other work (load average on 2 cores), so these are "
                    "indicative; the slow-page row above is the controlled figure.", ""]
            rows = []
            runs = max(len(b["before"]), len(b["after"]))
            for i, w in ((i, w) for i in range(runs) for w in ("before", "after")):
                r = b[w][i] if i < len(b[w]) else None
                if not r:
                    continue
                skipped = r.get("framesSkipped")
                rows.append([f"{w} (run {i + 1})", f"{r['bots']:,}", f"{r['cpuThrottle']}×",
                             f"{r['pingMsMedian']:.0f} / {r['pingMsMax']:.0f} ms",
                             f"{r['renderLagMsMedian']:.0f} / {r['renderLagMsP95']:.0f} ms",
                             f"{r['interpDelayMsMedian']:.0f} ms", f"{r['fpsMedian']:.1f}",
                             "–" if skipped is None or skipped != skipped else f"{skipped:,.0f}",
                             "–" if r.get("hudCatchingUpShare") is None else pct(r["hudCatchingUpShare"]),
                             "–" if r.get("loadAverage") is None else f"{r['loadAverage']:.1f}"])
            out += table(["client", "bots", "CPU throttle", "ping median / max", "drawn behind median / p95",
                          "HUD delay", "fps", "snapshots skipped", "HUD said catching up", "load average"], rows) + [""]
        return out

    # 11 -----------------------------------------------------------------------------------
    def redis_section(self):
        """Redis beyond one node (issue 13): a Redis primary killed under bots on a Redis
        Cluster and under Sentinel; the load on each of three cluster primaries."""
        out = ["## 11. Redis beyond one node", ""]
        fo, sp = self.raw.redis_failover, self.raw.redis_spread
        if not any(fo.values()) and not sp:
            return out + ["Not run.", ""]
        out += ["`examples/redis_ha` (server crate): the real `mino-server` binaries on a Redis started for the "
                "run, the bots (loadgen's walkers) in the example's process. **Failover**: a six-node Redis "
                "Cluster (three primaries, three replicas, `cluster-node-timeout` 2 s) or Sentinel (a primary, a "
                "replica, three sentinels, `down-after-milliseconds` 2000); two shards, the bots split over them; "
                "after 7 s of play the primary holding the place's slot (the sentinels' primary) is killed with "
                "SIGKILL. Players lost: bots not in their session at the end; local play: each bot's gap between "
                "its own shard's snapshots from the kill until relay was back (15 s at least); relay: a watcher on "
                "each shard times the longest stop of the other shard's snapshots and when they flowed again, from "
                "the kill. "
                "**Spread**: two shards with area of interest (`--world-size 4000 --cell-size 125 --view-radius "
                "250`: the place's region channels carry their own hash tags, so they spread over the three "
                "primaries); over 20 s, each primary's CPU (`/proc/PID/stat`), `SPUBLISH` calls and every command "
                "(`INFO commandstats`, `INFO stats`), and bytes sent (the frames times their subscribers). Runs "
                "are interleaved (cluster, sentinel, spread at each count; again), medians of the runs with each "
                "run's value after it; the load average is `uptime`'s, before each run. Rerun with "
                "`benches/scale.sh --only redis` (it builds the example unless `--skip-build`).", ""]

        def runs_of(values, fmt):
            v = [x for x in values if x is not None]
            if not v:
                return "–"
            return f"{fmt(median(v))}" + (f" ({', '.join(fmt(x) for x in v)})" if len(v) > 1 else "")

        def load1(r):
            return (r.get("load_before") or [None])[0]

        def s2(v):
            return "not back within 90 s" if v == float("inf") else f"{v:.2f} s"

        def whole(v):
            return f"{v:,.0f}"

        if any(fo.values()):
            modes = [m for m in ("cluster", "sentinel") if fo.get(m)]
            rows = []
            spec = [
                ("runs", lambda r: None, None),
                ("bots", lambda r: r["bots"], whole),
                ("players lost (bots not in their first session at the end)", lambda r: r["players_lost"], whole),
                ("bots that had to reconnect", lambda r: r["reconnected"], whole),
                ("kill → replica promoted", lambda r: r["promoted_s"], s2),
                ("local play: own-snapshot gap p95 from the kill until relay was back", lambda r: dig(r, "own_gap_ms", "p95"),
                 lambda v: f"{v:.1f} ms"),
                ("local play: own-snapshot gap p99 / max", None, None),
                ("relayed snapshots: longest stop (the longer of the two watchers)", lambda r: max(r["relay_stop_s"]), s2),
                ("relayed snapshots flowing again, from the kill (the later watcher)",
                 lambda r: float("inf") if None in r["relay_back_s"] else max(r["relay_back_s"]), s2),
                ("load average (1 min) before the run", load1, lambda v: f"{v:.1f}"),
            ]
            for label, get, fmt in spec:
                row = [label]
                for m in modes:
                    rs = fo[m]
                    if label == "runs":
                        row.append(str(len(rs)))
                    elif get is None:
                        row.append(runs_of([dig(r, "own_gap_ms", "p99") for r in rs], lambda v: f"{v:.1f}") + " / "
                                   + runs_of([dig(r, "own_gap_ms", "max") for r in rs], lambda v: f"{v:.1f} ms"))
                    else:
                        row.append(runs_of([get(r) for r in rs], fmt))
                rows.append(row)
            verdicts = []
            for m in modes:
                short = [r for r in fo[m] if r["bots_connected"] < r["bots"]]
                verdicts.append("measured" if not short else
                                f"{len(short)} run(s) short of bots (joined {', '.join(whole(r['bots_connected']) for r in short)})")
            rows.append(["verdict"] + verdicts)
            out += table(["Redis primary killed", *[f"{m} ({whole(fo[m][0]['bots'])} bots)" for m in modes]], rows) + [""]

        if sp:
            rows = []
            for n in sorted(sp):
                rs = sp[n]
                # Each run's primaries, busiest (SPUBLISH/s) first: the ranks are compared across runs.
                ranked = [sorted(r["primaries"], key=lambda p: -p["spublish_per_s"]) for r in rs]
                joined = runs_of([r["bots_connected"] for r in rs], whole)
                note = "measured" if all(r["bots_connected"] >= r["bots"] for r in rs) else \
                    f"not reached: bots joined {joined} of {whole(n)}"
                for k in range(max(len(x) for x in ranked)):
                    nodes = [x[k] for x in ranked if k < len(x)]
                    rows.append([whole(n) if k == 0 else "", f"{k + 1}",
                                 runs_of([p["cpu_pct"] for p in nodes], lambda v: f"{v:.1f} %"),
                                 runs_of([p["spublish_per_s"] for p in nodes], whole),
                                 runs_of([p["commands_per_s"] for p in nodes], whole),
                                 runs_of([p["sent_mb_per_s"] for p in nodes], lambda v: f"{v:.2f}"),
                                 runs_of([load1(r) for r in rs], lambda v: f"{v:.1f}") if k == 0 else "",
                                 note if k == 0 else ""])
                tot = [sum(p["cpu_pct"] for p in r["primaries"]) for r in rs]
                rows.append(["", "all three", runs_of(tot, lambda v: f"{v:.1f} %"),
                             runs_of([sum(p["spublish_per_s"] for p in r["primaries"]) for r in rs], whole),
                             runs_of([sum(p["commands_per_s"] for p in r["primaries"]) for r in rs], whole),
                             runs_of([sum(p["sent_mb_per_s"] for p in r["primaries"]) for r in rs], lambda v: f"{v:.2f}"),
                             "", ""])
            out += ["Load on each cluster primary, the place spread over three (primaries ranked by SPUBLISH/s "
                    "within each run):", ""]
            out += table(["players", "primary", "CPU (% of a core)", "SPUBLISH / s", "commands / s",
                          "sent MB / s", "load average (1 min)", "verdict"], rows) + [""]
            out += ["SPUBLISH a second is set by the regions the players occupy, the shards and the tick rate (a "
                    "bundle a region a shard a tick: this world's 16 regions × 2 shards × 20 Hz = 640 a second once "
                    "every region has players), not by the player count; the bytes sent grow with the players in "
                    "each view. The primary holding the place's slot (`{main}`) also serves the heartbeats, "
                    "rosters, sessions and chat, hence its higher command rate."]
            short = [n for n in sorted(sp) if any(r["bots_connected"] < r["bots"] for r in sp[n])]
            if short:
                out += ["", f"**Not reached on this machine: {', '.join(whole(n) for n in short)} players.** The "
                        "bots, both shards and the six Redis nodes share its two cores (with other sessions' work): "
                        "not every bot joined within 60 s, Redis commands timed out, the shards fenced themselves "
                        "and their publishing fell to a few frames a second, so those rows describe a saturated "
                        "machine, not Redis. Measure them with the bots on other machines."]
            out += [""]
        return out

    @staticmethod
    def verdicts(reports):
        """One verdict for repeated runs: all measured, or how many were not judgeable."""
        v = [verdict(r) for r in reports]
        bad = sum(1 for x in v if x == JUDGE_NOTE)
        if bad:
            return f"{JUDGE_NOTE} ({bad} of {len(v)} runs)"
        sat = sum(1 for x in v if x != MEASURED)
        return MEASURED if not sat else f"measured ({sat} of {len(v)} runs on a saturated machine)"

    @staticmethod
    def ns(v):
        if v >= 1e6:
            return f"{v / 1e6:.2f} ms"
        if v >= 1e3:
            return f"{v / 1e3:.2f} µs"
        return f"{v:.1f} ns"

    # charts ---------------------------------------------------------------------------------
    def charts(self):
        svg = self.args.svg_dir
        og = self.orig["gap_p95_ms"]["rows"]
        chart.line_chart(
            os.path.join(svg, "gap-vs-original.svg"), "snapshot gap p95 against players", "players",
            "snapshot gap p95, ms",
            [chart.Series("original: two c7a.large (AWS)", "#888", [(r["players"], r["p95_ms"], r["judgeable"]) for r in og], True),
             chart.Series("ours: one shard", "#1f77b4", [(s["connected"], gap(s), s["judgeable"]) for s, _ in self.raw.one if gap(s)]),
             chart.Series("ours: two shards + Redis, own", "#d62728", [(s["connected"], gap(s), s["judgeable"]) for s, _ in self.raw.two if gap(s)]),
             chart.Series("ours: two shards + Redis, relayed", "#ff9896",
                          [(s["connected"], gap(s, "relayed_snapshot_gap_ms"), s["judgeable"]) for s, _ in self.raw.two
                           if gap(s, "relayed_snapshot_gap_ms")])],
            [(50, "one tick, 50 ms")])
        ot = self.orig["ticks_per_s"]["rows"]
        chart.line_chart(
            os.path.join(svg, "ticks-vs-original.svg"), "ticks per second, one process", "players", "ticks per second",
            [chart.Series("original: loopback TCP (desktop)", "#888", [(r["players"], r["loopback_tcp"], True) for r in ot], True),
             chart.Series("original: Unix socket (desktop)", "#bbb", [(r["players"], r["unix_socket"], True) for r in ot], True),
             chart.Series("ours: loopback TCP, one shard", "#1f77b4",
                          [(s["players"], dig(w, "shards", "a", "ticks_per_s"), s["judgeable"]) for s, w in self.raw.one
                           if dig(w, "shards", "a", "ticks_per_s") is not None])],
            [(20, "the tick rate, 20 a second")], legend_at="bottom")
        oc = self.orig["cpu_per_frame_us"]["rows"]
        chart.line_chart(
            os.path.join(svg, "cpu-per-frame-vs-original.svg"), "server CPU per delivered frame", "players", "µs per frame",
            [chart.Series("original: server (AWS)", "#888", [(r["players"], r["server_us"], True) for r in oc], True),
             chart.Series("original: nginx (AWS)", "#bbb", [(r["players"], r["nginx_us"], True) for r in oc], True),
             chart.Series("ours: one shard, user + sys", "#1f77b4",
                          [(s["connected"], dig(s, "server", "cpu_per_frame_us", "total"), s["judgeable"]) for s, _ in self.raw.one
                           if dig(s, "server", "cpu_per_frame_us", "total")]),
             chart.Series("ours: two shards, user + sys", "#d62728",
                          [(s["connected"], dig(s, "server", "cpu_per_frame_us", "total"), s["judgeable"]) for s, _ in self.raw.two
                           if dig(s, "server", "cpu_per_frame_us", "total")])])

    # whole document ---------------------------------------------------------------------------
    def header(self):
        info = self.raw.run_info
        m = self.m
        started = info.get("started", datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
        secs = info.get("seconds")
        return [
            "# mino scale results", "",
            f"Generated by `benches/scale.sh{' --quick' if self.args.mode == 'quick' else ''}` "
            f"({self.args.mode} mode){'' if not secs else f' in {int(secs) // 60} min {int(secs) % 60} s'}. "
            "Do not edit by hand: rerun the script. How to run and read it: [README.md](README.md).", "",
            "| | |", "|---|---|",
            f"| date (UTC) | {started} |",
            f"| commit | `{self.args.commit}` |",
            # As scale.sh recorded it; a run older than that record: this machine, said so.
            f"| machine | {info.get('machine') or describe(m) + ' (where the report was written)'} |",
            f"| tools | {tool_version(['rustc', '--version'])}; {tool_version(['redis-server', '--version'])} |",
            f"| binaries (sha256 prefix, build time) | "
            f"{'; '.join(k.split(' ', 1)[1] + ' ' + v for k, v in self.raw.info_lines if k.startswith('binary ')) or '–'} |",
            f"| load average before / after | {self.load('load-before.txt')} / {self.load('load-after.txt')} |",
            *[f"| partial rerun | {v} |" if k == "rerun" else f"| rerun's {k[6:]} | {v} |"
              for k, v in self.raw.info_lines if k.startswith("rerun")],
            "", "**Read this first.** Everything runs on this one shared 2-core machine: Redis, every shard "
            "process and the loadgen, over loopback without TLS, while other sessions use the same cores. "
            "The original ran on separate AWS machines (server, nginx with TLS, load generator apart) and on a "
            "desktop with pinned cores, so ratios against it are indicative, not a contest. Each figure carries a "
            "verdict as the original's did: **measured**; **not judgeable** when the loadgen's own CPU passed "
            "70 % of the cores during that step (it then measures itself more than the server); **not measured** "
            "with the reason. Where the loadgen stayed under its limit but the whole machine was at least "
            f"{SATURATED_PCT} % busy, the verdict reads **measured (machine saturated)**: the shards then competed "
            "for the cores. \"Other load\" is the cores busy with none of our processes during a hold (other "
            "sessions' builds and tests); \"run-queue wait\" is the share of a core a shard's threads spent "
            "runnable but waiting for a CPU (`/proc/PID/task/*/schedstat`): what that noise cost the shard. "
            "Repeated rows (control, idle) are medians.", ""]

    def load(self, name):
        t = self.raw.text(name)
        mm = re.search(r"load average:\s*(.*)$", t)
        return mm.group(1) if mm else "–"

    def observations(self):
        """Notes the figures call for, found in the data (not written by hand)."""
        notes = []
        for s, w in self.raw.two:
            if not w:
                continue
            for name, sh in sorted(w["shards"].items()):
                fps = sh.get("frames_per_socket_tick")
                if fps is not None and fps < 1.95:
                    lag = dig(sh, "relay_lag_ms", "p99")
                    notes.append(
                        f"Two shards at {s['players']:,} players: shard {name}'s sockets got {fps:.2f} frames a tick "
                        f"instead of about 2.02 (own + relayed + pongs). Relayed snapshots reached it late (relay lag "
                        f"p99 {f1(lag)} ms, above one tick), and a shard keeps only the newest relayed snapshot of "
                        f"each shard until its next tick, so late ones are replaced, uncounted: "
                        f"`mino_relay_dropped_total` rose by {sh.get('relay_dropped', 0)}. Relayed gap p95 "
                        f"{f1(gap(s, 'relayed_snapshot_gap_ms'))} ms against {f1(gap(s))} ms for own snapshots.")
        first_late = next(((s, w) for s, w in self.raw.one
                           if dig(w, "shards", "a", "ticks") and dig(w, "shards", "a", "ticks_late") / w["shards"]["a"]["ticks"] > 0.05), None)
        if first_late:
            s, w = first_late
            sh = w["shards"]["a"]
            notes.append(
                f"One shard starts ticking late at {s['players']:,} players ({sh['ticks_late']} of {sh['ticks']} ticks late, "
                f"{sh['ticks_per_s']:.2f} ticks/s) while it uses {f2(sh['cpu_cores'])} of a core: the machine is "
                f"{s['machine_cpu_pct']:.0f} % busy with the loadgen at {s['loadgen_cpu_pct']:.0f} %, and the shard "
                f"waits for a CPU {pct(sh.get('runqueue_wait_share'))} of the time, so the two cores, not the shard's "
                "own work, set this limit here.")
        if not notes:
            return []
        return ["## Observations", ""] + [f"- {n}" for n in notes] + [""]

    def ratios(self):
        out = ["## Ratios against the original's published figures", "",
               "Ours ÷ original; below 1× is better for times and costs, and for ticks per second 1× is "
               "20 a second.", ""]
        return out + table(["figure", "original", "ours", "ours ÷ original", "verdict"], self.summary) + [""]

    def commands(self):
        out = ["## Exact commands", "",
               "As run (ports and pids are those of this run; every shard listens on 127.0.0.1 port 0 and "
               "prints its address). Redis: `redis-server --port P --bind 127.0.0.1 --save '' --appendonly no`. "
               "Server-side counters come from sampling each shard's `/metrics` and `/proc/PID/stat` every "
               "0.5 s (`benches/scale/sample.py`), matched to the loadgen's holds (`benches/scale/analyze.py`). "
               "Raw JSON of every run is in [results/raw/](results/raw/).", "", "```"]
        out += [f"# {label}\n{cmd}" for label, cmd in self.raw.commands]
        return out + ["```", ""]

    def write(self):
        body = []
        for section in (self.gap_section, self.cpu_section, self.ticks_section, self.idle_section,
                        self.arrivals_section, self.failover_section, self.control_section, self.criterion_section,
                        self.aoi_section, self.client_section, self.redis_section, self.nginx_section):
            body += section()
        self.charts()
        doc = self.header() + self.ratios() + self.observations() + body + self.commands()
        with open(self.args.out, "w") as f:
            f.write("\n".join(doc).rstrip() + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--svg-dir", required=True)
    ap.add_argument("--mode", help="default: the mode run.tsv recorded")
    ap.add_argument("--commit", help="default: the commit run.tsv recorded at the start of the run")
    args = ap.parse_args()
    raw = Raw(args.raw)
    args.commit = args.commit or raw.run_info.get("commit", "unknown")
    args.mode = args.mode or raw.run_info.get("mode", "full")
    Report(raw, args).write()


if __name__ == "__main__":
    main()
