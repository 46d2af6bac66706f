#!/usr/bin/env bash
# Two shards behind nginx with TLS, N bots playing over wss through it:
# snapshot gap p95 (own shard and relayed), and the CPU that nginx and the
# shards spend per frame delivered to the bots. Side by side in one run:
# nginx reaching the shards over loopback TCP, and over Unix sockets.
#
#   deploy/bench-nginx.sh                      # 1000 bots, TCP then Unix, 3 times each, 30 s each
#   UPSTREAM=tcp deploy/bench-nginx.sh         # one kind only (tcp or unix), REPEAT times
#   BOTS=500 HOLD=20 REPEAT=1 deploy/bench-nginx.sh
#   DIRECT=1 UPSTREAM=tcp deploy/bench-nginx.sh  # control: bots straight to the shards (ws://)
#
# How it measures, for each run: Redis, SHARDS shard processes and nginx (the
# shipped template, WORKERS workers) start on 127.0.0.1 (deploy/local-lib.sh),
# the shards listening on 127.0.0.1 ports (tcp) or on Unix sockets (unix),
# then `mino-loadgen walk` joins BOTS walker bots through nginx at RAMP per
# second. Once the shards hold every bot, after SETTLE seconds, the script
# reads /proc/PID/stat (utime, stime) of every nginx worker and every shard,
# and the shards' mino_frames_sent_total, waits HOLD seconds and reads them
# again. Frames delivered in that window = the loadgen's frames_per_s
# (measured by the bots over their hold, which spans the window) x the
# window's length. CPU per frame = CPU seconds in the window / those frames.
# The loadgen's own per-frame figure for the shards (--server-pid, over its
# hold) is reported beside it as a cross-check. With UPSTREAM=both the runs
# alternate (tcp, unix, tcp, unix, ...) so that the machine's other load
# falls on both alike; the summary gives each kind's median and the ratio
# unix / tcp.
#
# Settings (environment): BOTS (1000), SHARDS (2), RAMP (100 per s), SETTLE
# (3 s), HOLD (30 s), WORKERS (nginx worker_processes, auto), UPSTREAM (both;
# tcp or unix for one kind), REPEAT (3 runs of each kind), SHARD_FLAGS
# (--busy-lateness-ms 0: the busy rule off, as in the original measurements,
# so that a machine shared with the load generator admits every bot), PROFILE
# (release), BIN_DIR (target/PROFILE: where mino-server and mino-loadgen
# are; benches/scale.sh passes its own copies), DIRECT (0; 1: the bots
# connect to the shards over plain ws, nginx idles: the same run without the
# proxy; tcp only), OUT (target/bench-nginx: a folder per run with
# loadgen.json, summary.json and the logs, and compare.json).
# Every run records the machine's load average (`uptime`) before and after
# it; compare.json gives each kind's runs and medians, the ratio, and whether
# the runs of the two kinds overlap (then the machine's noise is larger than
# the difference measured).
# Builds the release binaries when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=deploy/local-lib.sh
. deploy/local-lib.sh

BOTS="${BOTS:-1000}"
SHARDS="${SHARDS:-2}"
RAMP="${RAMP:-100}"
SETTLE="${SETTLE:-3}"
HOLD="${HOLD:-30}"
WORKERS="${WORKERS:-auto}"
PROFILE="${PROFILE:-release}"
SHARD_FLAGS="${SHARD_FLAGS:---busy-lateness-ms 0}"
DIRECT="${DIRECT:-0}"
UPSTREAM="${UPSTREAM:-both}"
REPEAT="${REPEAT:-3}"
OUT="${OUT:-target/bench-nginx}"

case "$UPSTREAM" in
  both) kinds=(tcp unix) ;;
  tcp | unix) kinds=("$UPSTREAM") ;;
  *) mino_die "UPSTREAM must be tcp, unix or both" ;;
esac
[[ "$REPEAT" =~ ^[1-9][0-9]*$ ]] || mino_die "REPEAT must be a positive number"
[ "$DIRECT" != 1 ] || [ "$UPSTREAM" = tcp ] || mino_die "DIRECT=1 needs UPSTREAM=tcp (the bots connect over ws://)"

mino_need redis-server nginx openssl envsubst curl python3
if [ -n "${BIN_DIR:-}" ] && { [ ! -x "$BIN_DIR/mino-server" ] || [ ! -x "$BIN_DIR/mino-loadgen" ]; }; then
  mino_die "BIN_DIR=$BIN_DIR lacks mino-server or mino-loadgen"
fi
bin="${BIN_DIR:-target/$PROFILE}"
if [ -z "${BIN_DIR:-}" ] && { [ ! -x "$bin/mino-server" ] || [ ! -x "$bin/mino-loadgen" ]; }; then
  flag=(); [ "$PROFILE" = release ] && flag=(--release)
  cargo build "${flag[@]}" -p mino-server -p mino-loadgen
fi
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
MINO_WORK=""
cleanup() {
  trap - EXIT
  mino_stop_all
  [ -z "$MINO_WORK" ] || rm -rf "$MINO_WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

players() {
  local a n total=0
  for a in "${MINO_SHARD_ADMIN[@]}"; do
    n=$(curl -fs "http://$a/metrics" | awk '$1 == "mino_players" {print int($2)}')
    total=$((total + ${n:-0}))
  done
  echo "$total"
}
frames_sent() {
  local a
  for a in "${MINO_SHARD_ADMIN[@]}"; do curl -fs "http://$a/metrics"; done \
    | awk '$1 == "mino_frames_sent_total" {s += $2} END {printf "%d\n", s}'
}
# cpu PIDS...: "user_ticks sys_ticks" summed (fields 14 and 15 of /proc/PID/stat).
cpu() {
  local p
  for p in "$@"; do cat "/proc/$p/stat" 2>/dev/null; done | sed 's/^.*) //' | awk '{u += $12; s += $13} END {print u + 0, s + 0}'
}
rss_kb() {
  local p
  for p in "$@"; do awk '/^VmRSS:/ {print $2}' "/proc/$p/status" 2>/dev/null; done | awk '{s += $1} END {print s + 0}'
}
# The 1, 5 and 15 minute load averages, as uptime prints them: "0.52, 0.61, 0.70".
load_average() { uptime | sed 's/.*load average: *//'; }
machine() { awk '/^cpu / {idle = $5 + $6; t = 0; for (i = 2; i <= NF; i++) t += $i; print t, idle}' /proc/stat; }

# run KIND DIR: one measured run with the shards on KIND (tcp or unix);
# writes DIR/loadgen.json, DIR/summary.json and DIR's logs, and prints the
# run's figures.
run() {
  local kind=$1 dir=$2 redis_port="" https_port="" p id listen
  mkdir -p "$dir"
  local load_before load_after
  load_before=$(load_average)
  MINO_WORK="$(mktemp -d -t mino-bench-XXXXXX)"
  MINO_PIDS=() MINO_SHARD_PIDS=() MINO_SHARD_ADDRS=() MINO_SHARD_ADMIN=()
  for p in $(seq 26379 26479); do mino_port_free "$p" && { redis_port=$p; break; }; done
  for p in $(seq 28443 28543); do mino_port_free "$p" && mino_port_free $((p + 1000)) && { https_port=$p; break; }; done
  [ -n "$redis_port" ] && [ -n "$https_port" ] || mino_die "no free ports"

  mino_cert "$MINO_WORK/tls"
  mkdir -p "$MINO_WORK/client" && echo '<!doctype html><title>mino bench</title>' >"$MINO_WORK/client/index.html"
  mino_redis "$redis_port"
  for id in $(seq 1 "$SHARDS"); do
    listen=127.0.0.1:0
    [ "$kind" = unix ] && listen="unix:$MINO_WORK/shard-$id.sock"
    # shellcheck disable=SC2086 # SHARD_FLAGS is a list of flags
    MINO_LOG=warn mino_shard "$bin/mino-server" "$id" "redis://127.0.0.1:$redis_port" "$listen" 127.0.0.1:0 $SHARD_FLAGS
  done
  local connections=$((BOTS * 2 + 1024))
  mino_nginx "$https_port" $((https_port + 1000)) "$MINO_WORK/client" "$WORKERS" "$connections"

  local pid_args=() urls=(--url "wss://127.0.0.1:$https_port/ws" --ca-file "$MINO_WORK/tls/cert.pem")
  for p in "${MINO_SHARD_PIDS[@]}"; do pid_args+=(--server-pid "$p"); done
  if [ "$DIRECT" = 1 ]; then
    urls=()
    for p in "${MINO_SHARD_ADDRS[@]}"; do urls+=(--url "ws://$p/ws"); done
  fi
  local loadgen_cmd=("$bin/mino-loadgen" walk "${urls[@]}"
    --bots "$BOTS" --ramp "$RAMP" --duration "$((SETTLE + HOLD + 5))s" "${pid_args[@]}" --json "$dir/loadgen.json" --quiet)
  echo "bench-nginx: $kind upstream, $BOTS bots, $SHARDS shards ($SHARD_FLAGS), nginx workers: $WORKERS; ${loadgen_cmd[*]}"
  "${loadgen_cmd[@]}" >"$dir/loadgen.out" 2>"$dir/loadgen.err" &
  local loadgen_pid=$!
  MINO_PIDS+=("$loadgen_pid")

  local deadline=$((SECONDS + BOTS / RAMP + 60))
  until [ "$(players)" -ge "$BOTS" ]; do
    mino_alive "$loadgen_pid" || mino_die "the loadgen ended before all bots joined ($(players) of $BOTS); see $dir/loadgen.json"
    [ "$SECONDS" -lt "$deadline" ] || mino_die "only $(players) of $BOTS players joined"
    sleep 0.5
  done
  sleep "$SETTLE"
  local workers n_u0 n_s0 s_u0 s_s0 m_t0 m_i0 f0 t0 n_u1 n_s1 s_u1 s_s1 m_t1 m_i1 f1 t1 nginx_rss shard_rss
  workers=$(pgrep -P "$MINO_NGINX_PID" | tr '\n' ' ')
  # shellcheck disable=SC2086 # one pid a word
  read -r n_u0 n_s0 <<<"$(cpu $workers)"
  read -r s_u0 s_s0 <<<"$(cpu "${MINO_SHARD_PIDS[@]}")"
  read -r m_t0 m_i0 <<<"$(machine)"
  f0=$(frames_sent)
  t0=$(date +%s.%N)
  sleep "$HOLD"
  # shellcheck disable=SC2086
  read -r n_u1 n_s1 <<<"$(cpu $workers)"
  read -r s_u1 s_s1 <<<"$(cpu "${MINO_SHARD_PIDS[@]}")"
  read -r m_t1 m_i1 <<<"$(machine)"
  f1=$(frames_sent)
  t1=$(date +%s.%N)
  # shellcheck disable=SC2086
  nginx_rss=$(rss_kb $workers)
  shard_rss=$(rss_kb "${MINO_SHARD_PIDS[@]}")
  wait "$loadgen_pid" || mino_die "the loadgen failed: $(cat "$dir/loadgen.err")"
  load_after=$(load_average)

  python3 - "$dir/loadgen.json" "$dir/summary.json" <<EOF
import json, sys
tck = $(getconf CLK_TCK)
window = $t1 - $t0
m = json.load(open(sys.argv[1]))  # the walk report: its measured figures are at the top level
frames = m["frames_per_s"] * window
def per_frame(user_ticks, sys_ticks):
    u, s = user_ticks / tck, sys_ticks / tck
    return {"cpu_s": round(u + s, 3), "cores": round((u + s) / window, 3),
            "us_per_frame": round((u + s) * 1e6 / frames, 2),
            "user_us_per_frame": round(u * 1e6 / frames, 2), "sys_us_per_frame": round(s * 1e6 / frames, 2)}
busy = 1 - ($m_i1 - $m_i0) / max($m_t1 - $m_t0, 1)
summary = {
    "upstream": "$kind", "bots": $BOTS, "shard_processes": $SHARDS, "nginx_workers": "$WORKERS",
    "through_nginx": "$DIRECT" != "1", "connected": m["connected"],
    "window_s": round(window, 2),
    "snapshot_gap_ms": m["snapshot_gap_ms"], "relayed_snapshot_gap_ms": m["relayed_snapshot_gap_ms"],
    "frames_per_s_delivered": m["frames_per_s"], "frames_per_s_sent_by_shards": round(($f1 - $f0) / window, 1),
    "bytes_per_s_delivered": m["bytes_per_s"],
    "nginx": dict(per_frame($n_u1 - $n_u0, $n_s1 - $n_s0), rss_bytes_per_player=round($nginx_rss * 1024 / $BOTS)),
    "shards": dict(per_frame($s_u1 - $s_u0, $s_s1 - $s_s0), rss_bytes_per_player=round($shard_rss * 1024 / $BOTS)),
    "shards_by_loadgen": m.get("server"),
    "loadgen_machine_busy_pct": m["machine_cpu_pct"],
    "loadgen_cpu_pct": m["loadgen_cpu_pct"], "judgeable": m["judgeable"],
    "machine_busy_pct": round(100 * busy, 1), "errors": m["errors"], "error_kinds": m["error_kinds"],
    "load_average_before": "$load_before", "load_average_after": "$load_after",
}
json.dump(summary, open(sys.argv[2], "w"), indent=2)
g, rg = m["snapshot_gap_ms"], m["relayed_snapshot_gap_ms"]
route = f"behind nginx TLS, {summary['upstream']} upstream" if summary["through_nginx"] else "direct (ws://, nginx idle)"
print(f"bots {m['connected']}/{$BOTS} over {$SHARDS} shards {route} ({summary['nginx_workers']} nginx workers), {window:.1f} s window")
print(f"snapshot gap ms   own: p50 {g['p50']} p95 {g['p95']} p99 {g['p99']}   relayed: p50 {rg['p50']} p95 {rg['p95']} p99 {rg['p99']}")
print(f"frames delivered  {m['frames_per_s']:.0f}/s ({m['bytes_per_s'] / 1e6:.1f} MB/s); shards sent {summary['frames_per_s_sent_by_shards']:.0f}/s")
for k in ("nginx", "shards"):
    x = summary[k]
    print(f"{k:<7} {x['us_per_frame']:>6} us/frame (user {x['user_us_per_frame']}, sys {x['sys_us_per_frame']}), {x['cores']} cores, {x['rss_bytes_per_player']} B RSS/player")
if summary["shards_by_loadgen"]:
    print(f"shards (loadgen's own window): {summary['shards_by_loadgen']['cpu_per_frame_us']['total']} us/frame")
print(f"loadgen CPU {m['loadgen_cpu_pct']}% (judgeable: {m['judgeable']}), machine busy {summary['machine_busy_pct']}%, errors {m['errors']}")
print(f"load average before {summary['load_average_before']}, after {summary['load_average_after']}")
EOF
  mino_stop_all
  cp "$MINO_WORK"/*.log "$MINO_WORK"/logs/error.log "$dir/" 2>/dev/null || true
  rm -rf "$MINO_WORK"
  MINO_WORK=""
}

runs=()
for i in $(seq 1 "$REPEAT"); do
  for kind in "${kinds[@]}"; do
    dir="$OUT/run-$i-$kind"
    rm -rf "$dir"
    echo
    run "$kind" "$dir"
    runs+=("$dir/summary.json")
  done
done

python3 - "$OUT/compare.json" "${runs[@]}" <<'EOF'
import json, statistics, sys
out, paths = sys.argv[1], sys.argv[2:]
runs = [json.load(open(p)) for p in paths]
kinds = [k for k in ("tcp", "unix") if any(r["upstream"] == k for r in runs)]
def med(kind, *path):
    values = []
    for r in runs:
        if r["upstream"] != kind:
            continue
        v = r
        for key in path:
            v = v[key]
        values.append(v)
    return {"median": round(statistics.median(values), 2), "runs": values}
figures = {
    "shard_us_per_frame": ("shards", "us_per_frame"),
    "shard_user_us_per_frame": ("shards", "user_us_per_frame"),
    "shard_sys_us_per_frame": ("shards", "sys_us_per_frame"),
    "nginx_us_per_frame": ("nginx", "us_per_frame"),
    "nginx_user_us_per_frame": ("nginx", "user_us_per_frame"),
    "nginx_sys_us_per_frame": ("nginx", "sys_us_per_frame"),
    "frames_per_s_delivered": ("frames_per_s_delivered",),
    "snapshot_gap_p95_ms": ("snapshot_gap_ms", "p95"),
    "relayed_snapshot_gap_p95_ms": ("relayed_snapshot_gap_ms", "p95"),
    "machine_busy_pct": ("machine_busy_pct",),
}
compare = {k: {name: med(k, *path) for name, path in figures.items()} for k in kinds}
for k in kinds:
    compare[k]["load_average"] = [[r["load_average_before"], r["load_average_after"]] for r in runs if r["upstream"] == k]
if len(kinds) == 2:
    compared = [name for name in ("shard_us_per_frame", "nginx_us_per_frame") if compare["tcp"][name]["median"]]
    compare["unix_over_tcp"] = {
        name: round(compare["unix"][name]["median"] / compare["tcp"][name]["median"], 3) for name in compared
    }
    # The runs of one kind spread over those of the other: the machine's
    # other load moved the figure more than the upstream did.
    def overlap(name):
        t, u = compare["tcp"][name]["runs"], compare["unix"][name]["runs"]
        return min(t) <= max(u) and min(u) <= max(t)
    compare["runs_overlap"] = {name: overlap(name) for name in compared}
json.dump(compare, open(out, "w"), indent=2)
print()
print(f"{len(runs)} runs, medians (each run's figure in brackets):")
for name in figures:
    row = "  ".join(f"{k} {compare[k][name]['median']:>8} {compare[k][name]['runs']}" for k in kinds)
    print(f"  {name:<30} {row}")
if "unix_over_tcp" in compare:
    r = compare["unix_over_tcp"]
    print(f"unix / tcp: shard CPU per frame x{r.get('shard_us_per_frame')}, nginx CPU per frame x{r.get('nginx_us_per_frame')}"
          " (the original write-up: the server about x0.7 over a Unix socket)")
    noisy = [name for name, o in compare["runs_overlap"].items() if o]
    if noisy:
        print(f"the runs of tcp and unix overlap for {', '.join(noisy)}: the machine's noise is as large as the difference")
print(f"file: {out}")
EOF
