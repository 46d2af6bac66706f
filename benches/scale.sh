#!/usr/bin/env bash
# benches/scale.sh: mino's scale runner. Starts Redis, shard processes and the
# loadgen on this machine, measures, and writes benches/RESULTS.md (our figures
# beside the original's published ones) plus SVG plots and the raw JSON under
# benches/results/. See benches/README.md for what each section measures.
#
# usage: benches/scale.sh [--quick] [--skip-build] [--skip-criterion] [--repeat N]
#                         [--only SECTION,..] [--report-only] [--results DIR]
#                         [--aoi-players N,..] [--aoi-density D]
#                         [--redis-spread N,..]
#   --quick           about 3 minutes: fewer steps, short holds, no repeats
#   --skip-build      use the release binaries already in target/release
#   --skip-criterion  leave out the criterion micro-benchmarks
#   --repeat N        runs of the control and idle rows (median reported);
#                     default 3 (1 with --quick)
#   --only LIST       run only these sections (criterion, steps, control, idle,
#                     arrivals, failover, aoi, crowd, redis, nginx), keep the other
#                     sections' raw results, and rewrite RESULTS.md from all of
#                     them
#   --report-only     only rewrite RESULTS.md and the charts from results/raw
#   --results DIR     write RESULTS.md, the charts and raw/ under DIR instead of
#                     benches/ and benches/results/ (smoke runs: --results /tmp/x)
#   --aoi-players L   the area-of-interest section's player counts, e.g. 200
#                     (default 1000,2500,5000,7500,10000; quick 1000,2500)
#   --aoi-density D   its players per cell (default 4)
#   --redis-spread L  the Redis section's player counts for the load on each
#                     cluster primary (default 1000,5000; quick 1000)
#
# Needs: cargo, redis-server, redis-cli, redis-sentinel, python3, curl; the
# nginx section also nginx, openssl and envsubst. Runs on loopback only.
# Every process it starts is stopped by pid on exit; nothing else is touched.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BENCHES="$ROOT/benches"
BIN="$ROOT/target/release"
PY="$BENCHES/scale"

QUICK=0
BUILD=1
CRITERION=1
REPEAT=""
ONLY=""
REPORT_ONLY=0
RESULTS_DIR=""
AOI_PLAYERS_ARG=""
AOI_DENSITY=4
REDIS_SPREAD_ARG=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --skip-build) BUILD=0 ;;
    --skip-criterion) CRITERION=0 ;;
    --repeat) REPEAT="$2"; shift ;;
    --only) ONLY=",$2,"; shift ;;
    --report-only) REPORT_ONLY=1 ;;
    --results) RESULTS_DIR="$2"; shift ;;
    --aoi-players) AOI_PLAYERS_ARG="${2//,/ }"; shift ;;
    --aoi-density) AOI_DENSITY="$2"; shift ;;
    --redis-spread) REDIS_SPREAD_ARG="${2//,/ }"; shift ;;
    -h|--help) sed -n '2,32p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "scale.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

# Where the results go: benches/ (RESULTS.md) and benches/results/, or --results DIR.
if [[ -n $RESULTS_DIR ]]; then
  mkdir -p "$RESULTS_DIR"
  OUT="$(cd "$RESULTS_DIR" && pwd)"; RESULTS_MD="$OUT/RESULTS.md"
else
  OUT="$BENCHES/results"; RESULTS_MD="$BENCHES/RESULTS.md"
fi
RAW="$OUT/raw"

# ---- plan: what each mode runs --------------------------------------------
if [[ $QUICK == 1 ]]; then
  MODE=quick
  REPEAT="${REPEAT:-1}"
  ONE_STEPS="100,500,1000"            # one shard
  TWO_STEPS="100,500,1000"            # two shards + Redis
  HOLD=6s; SETTLE=2s; RAMP=250        # per step; ramp in bots/s
  CONTROL_BOTS="1000"; CONTROL_HOLD=6s  # players; each a batched/unbatched pair
  IDLE_SIZES="1000"; IDLE_HOLD=5s
  FAILOVER_BOTS=500; FAILOVER_OBSERVE=10s
  ARRIVALS_BOTS=1000; ARRIVALS_RATE=250
  AOI_PLAYERS="1000 2500"; AOI_OFF_MAX=1000; AOI_HOLD=6s
  CROWD_BOTS=500; CROWD_HOLD=6s
  NGINX_BOTS=1000; NGINX_HOLD=10        # seconds; each a tcp/unix pair
  REDIS_FAILOVER_BOTS=500; REDIS_SPREAD="1000"
  CRITERION_ARGS=(--warm-up-time 0.5 --measurement-time 1 --sample-size 10)
else
  MODE=full
  REPEAT="${REPEAT:-3}"
  ONE_STEPS="100,250,500,1000,1500,2000,2500,3000"
  TWO_STEPS="100,250,500,1000,1500,2000"
  HOLD=15s; SETTLE=2s; RAMP=250
  CONTROL_BOTS="1000 2000"; CONTROL_HOLD=12s
  IDLE_SIZES="2000 15000"; IDLE_HOLD=8s
  FAILOVER_BOTS=500; FAILOVER_OBSERVE=15s
  ARRIVALS_BOTS=2500; ARRIVALS_RATE=280
  AOI_PLAYERS="1000 2500 5000 7500 10000"; AOI_OFF_MAX=2000; AOI_HOLD=15s
  CROWD_BOTS=2000; CROWD_HOLD=20s
  NGINX_BOTS=1000; NGINX_HOLD=30
  REDIS_FAILOVER_BOTS=1000; REDIS_SPREAD="1000 5000"
  CRITERION_ARGS=(--warm-up-time 1 --measurement-time 3)
fi
# Area of interest: cells of 100 units and a view radius of AOI_RADIUS_CELLS
# cells (the server's default: at 2 cells whole cells make a socket 2.3x the
# players within its radius; at 4, about 1.2x), the world sized for
# AOI_DENSITY players a cell at each count; at 1,000 players also a run at a
# radius of 2 cells (mode on2); the control rows (whole-shard snapshots, every
# socket gets every player) run only up to AOI_OFF_MAX players, past which
# they cannot run on one machine (10,000 players would be 2 GB/s of snapshots).
AOI_PLAYERS="${AOI_PLAYERS_ARG:-$AOI_PLAYERS}"
REDIS_SPREAD="${REDIS_SPREAD_ARG:-$REDIS_SPREAD}"
AOI_CELL=100
AOI_RADIUS_CELLS=4
# Every capacity run switches the busy rule off, as the original's one-machine
# figures did: we want to see where a process stops, not where it says no.
SHARD_FLAGS=(--busy-lateness-ms 0)
SAMPLE_INTERVAL=0.5

# ---- bookkeeping -------------------------------------------------------------
TMP="$(mktemp -d /tmp/mino-scale.XXXXXX)"
STARTED_PIDS=()
# Every command a section runs, for RESULTS.md; one file per section.
COMMANDS="$RAW/commands-build.txt"
T0=$(date +%s)

log() { printf '[scale %4ds] %s\n' "$(( $(date +%s) - T0 ))" "$*" >&2; }

# The binaries are copied here after the build, so a rebuild by someone else
# during the run cannot change what is measured half-way.
RUNBIN="$TMP/bin"
# The server binary start_shard runs, in RUNBIN.
SERVER_BIN=mino-server
# The server built without jemalloc, for the idle section's comparison.
GLIBC_BIN="$ROOT/target/heap/release/mino-server"

# A command line as RESULTS.md shows it: the run's copies named by their source.
shown() {
  local line="$*"
  line="${line//$RUNBIN/target/release}"
  printf '%s' "${line//$ROOT\//}"
}

# Records a command line (for RESULTS.md) and runs it.
run_logged() {
  local label="$1"; shift
  printf '%s\t%s\n' "$label" "$(shown "$@")" >>"$COMMANDS"
  "$@"
}

cleanup() {
  local pid
  for pid in "${STARTED_PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${STARTED_PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Stops one process we started (SIGTERM, then SIGKILL after 8 s) and forgets it.
stop_pid() {
  local pid="$1" i
  kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 80); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  local kept=()
  for i in "${STARTED_PIDS[@]}"; do [[ $i == "$pid" ]] || kept+=("$i"); done
  STARTED_PIDS=("${kept[@]+"${kept[@]}"}")
}

# ---- Redis, shards, sampler ---------------------------------------------------
REDIS_PID=""; REDIS_URL=""; REDIS_PORT=""
start_redis() {
  local port dir
  port="$(free_port)"; dir="$TMP/redis-$port"; mkdir -p "$dir"
  printf 'redis\t%s\n' "redis-server --port $port --bind 127.0.0.1 --save '' --appendonly no --dir TMP" >>"$COMMANDS"
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --dir "$dir" --logfile "$dir/redis.log" --daemonize no &
  REDIS_PID=$!; STARTED_PIDS+=("$REDIS_PID")
  for _ in $(seq 50); do
    [[ "$(redis-cli -p "$port" ping 2>/dev/null)" == PONG ]] && break
    sleep 0.1
  done
  REDIS_URL="redis://127.0.0.1:$port"; REDIS_PORT="$port"
}

declare -A SHARD_PID SHARD_ADDR
# start_shard NAME FLAGS..: a mino-server on a free port; waits for its address and /readyz.
start_shard() {
  local name="$1"; shift
  local out="$TMP/$name.out" err="$TMP/$name.log"
  printf 'shard %s\t%s\n' "$name" "$(shown "$RUNBIN/$SERVER_BIN" --listen 127.0.0.1:0 "$@")" >>"$COMMANDS"
  "$RUNBIN/$SERVER_BIN" --listen 127.0.0.1:0 "$@" >"$out" 2>"$err" &
  local pid=$!; STARTED_PIDS+=("$pid")
  local addr=""
  for _ in $(seq 100); do
    addr="$(sed -n 's/.*listening on http:\/\/\([0-9.:]*\).*/\1/p' "$out" | head -1)"
    [[ -n $addr ]] && break
    kill -0 "$pid" 2>/dev/null || { cat "$err" >&2; echo "shard $name exited" >&2; exit 1; }
    sleep 0.1
  done
  [[ -n $addr ]] || { echo "shard $name printed no address" >&2; exit 1; }
  for _ in $(seq 100); do
    curl -fs "http://$addr/readyz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  SHARD_PID[$name]=$pid; SHARD_ADDR[$name]=$addr
}

# Waits until every clustered shard sees the others (mino_cluster_shards).
wait_cluster() {
  local want="$1" name ok
  for _ in $(seq 100); do
    ok=1
    for name in "${!SHARD_ADDR[@]}"; do
      local n
      n="$(curl -fs "http://${SHARD_ADDR[$name]}/metrics" 2>/dev/null | awk '$1 == "mino_cluster_shards" {print $2}')" || n=0
      [[ "${n:-0}" -ge "$want" ]] || ok=0
    done
    [[ $ok == 1 ]] && return 0
    sleep 0.1
  done
  log "warning: shards did not all see $want other shard(s) within 10 s"
}

# One standalone shard, or two shards sharing a fresh Redis. Extra flags follow.
one_shard() { SHARD_PID=(); SHARD_ADDR=(); REDIS_PID=""; start_shard a --shard-id 1 "${SHARD_FLAGS[@]}" "$@"; }
two_shards() {
  SHARD_PID=(); SHARD_ADDR=()
  start_redis
  start_shard a --shard-id 1 --redis-url "$REDIS_URL" "${SHARD_FLAGS[@]}" "$@"
  start_shard b --shard-id 2 --redis-url "$REDIS_URL" "${SHARD_FLAGS[@]}" "$@"
  wait_cluster 1
}
# The last loadgen run's label: stop_all keeps the shards' logs under it.
LABEL=setup
stop_all() {
  local name
  for name in "${!SHARD_PID[@]}"; do stop_pid "${SHARD_PID[$name]}"; done
  mkdir -p "$RAW/logs"
  for name in "${!SHARD_PID[@]}"; do
    tail -c 1000000 "$TMP/$name.log" >"$RAW/logs/$LABEL-shard-$name.log" 2>/dev/null || true
  done
  if [[ -n $REDIS_PID ]]; then stop_pid "$REDIS_PID"; fi
  SHARD_PID=(); SHARD_ADDR=(); REDIS_PID=""; REDIS_PORT=""
}

SAMPLER_PID=""
start_sampler() {
  local file="$1" args=() name
  for name in "${!SHARD_ADDR[@]}"; do
    args+=(--shard "$name=${SHARD_ADDR[$name]}" --proc "$name=${SHARD_PID[$name]}")
  done
  if [[ -n $REDIS_PID ]]; then args+=(--proc "redis=$REDIS_PID" --redis "redis=127.0.0.1:$REDIS_PORT"); fi
  : >"$file"
  python3 "$PY/sample.py" "$file" "$SAMPLE_INTERVAL" "${args[@]}" &
  SAMPLER_PID=$!; STARTED_PIDS+=("$SAMPLER_PID")
}
stop_sampler() {
  if [[ -n $SAMPLER_PID ]]; then stop_pid "$SAMPLER_PID"; fi
  SAMPLER_PID=""
}

# The loadgen's target and server flags for the shards up now (a, then b).
targets() {
  local name
  for name in a b; do
    if [[ -n ${SHARD_ADDR[$name]:-} ]]; then
      printf -- '--url\nws://%s/ws\n--server-pid\n%s\n' "${SHARD_ADDR[$name]}" "${SHARD_PID[$name]}"
    fi
  done
}

# loadgen LABEL SCENARIO ARGS..: runs mino-loadgen quietly against the shards up now.
loadgen() {
  local label="$1"; shift
  local sub="$1"; shift
  local tg; mapfile -t tg < <(targets)
  LABEL="$label"
  log "$label: mino-loadgen $sub $*"
  run_logged "$label" "$RUNBIN/mino-loadgen" "$sub" "${tg[@]}" "$@" -q \
    || log "$label: loadgen exited with $? (its JSON, if written, is still used)"
}

# measured LABEL SCENARIO ARGS..: loadgen with the sampler around it, then the server-side analysis.
measured() {
  local label="$1"; shift
  start_sampler "$RAW/$label.samples.jsonl"
  sleep 1
  loadgen "$label" "$@" --json "$RAW/$label.json"
  sleep 1
  stop_sampler
  if [[ -s "$RAW/$label.json" ]]; then
    python3 "$PY/analyze.py" "$RAW/$label.json" "$RAW/$label.samples.jsonl" "$RAW/$label.server.json"
  fi
}

# ---- sections ------------------------------------------------------------------
# Raw files each section writes: a rerun of the section replaces them all.
declare -A SECTION_FILES=(
  [criterion]="criterion.*"
  [steps]="one-shard.* two-shards.* logs/one-shard-* logs/two-shards-*"
  [control]="control-* logs/control-*"
  [idle]="idle-* malloc-* logs/idle-* logs/malloc-*"
  [arrivals]="arrivals.* logs/arrivals-*"
  [failover]="failover-* logs/failover-*"
  [aoi]="aoi-* logs/aoi-*"
  [crowd]="crowd-* logs/crowd-*"
  [redis]="redis-* logs/redis-*"
  [nginx]="nginx"
)
begin_section() {
  local pattern
  for pattern in ${SECTION_FILES[$1]}; do rm -rf "$RAW"/$pattern; done
  COMMANDS="$RAW/commands-$1.txt"
  : >"$COMMANDS"
}
section_build() {
  if [[ $BUILD == 1 ]]; then
    log "building release binaries"
    (cd "$ROOT" && cargo build --release -p mino-server -p mino-loadgen)
    if wanted idle; then
      # The idle section's allocator comparison: the same server with
      # glibc's malloc (no jemalloc feature), in a target folder of its own.
      log "building mino-server without jemalloc (target/heap)"
      (cd "$ROOT" && cargo build --release -p mino-server --no-default-features --target-dir target/heap)
    fi
  fi
  mkdir -p "$RUNBIN"
  local b
  for b in mino-server mino-loadgen; do
    cp "$BIN/$b" "$RUNBIN/$b"
    printf '%sbinary %s\t%s built %s\n' "${ONLY:+rerun }" "$b" "$(sha256sum "$RUNBIN/$b" | cut -c1-12)" \
      "$(date -u -r "$BIN/$b" +%Y-%m-%dT%H:%M:%SZ)" >>"$RAW/run.tsv"
  done
  if [[ -x $GLIBC_BIN ]]; then
    cp "$GLIBC_BIN" "$RUNBIN/mino-server-glibc"
    printf '%sbinary %s\t%s built %s\n' "${ONLY:+rerun }" mino-server-glibc \
      "$(sha256sum "$RUNBIN/mino-server-glibc" | cut -c1-12)" "$(date -u -r "$GLIBC_BIN" +%Y-%m-%dT%H:%M:%SZ)" \
      >>"$RAW/run.tsv"
  fi
}

# True when section $1 runs in this invocation.
wanted() { [[ -z $ONLY || $ONLY == *",$1,"* ]]; }

section_criterion() {
  [[ $CRITERION == 1 ]] || return 0
  log "criterion micro-benchmarks"
  local started; started=$(date +%s)
  (cd "$ROOT" && run_logged criterion cargo bench -p mino-benches --benches -- "${CRITERION_ARGS[@]}") \
    >"$RAW/criterion.txt" 2>&1 || log "criterion failed: see $RAW/criterion.txt"
  python3 "$PY/criterion.py" "$ROOT/target/criterion" "$started" >"$RAW/criterion.json"
}

section_steps() {
  log "one shard: steps $ONE_STEPS"
  one_shard
  measured one-shard steps --steps "$ONE_STEPS" --hold "$HOLD" --settle "$SETTLE" --ramp "$RAMP" \
    --plot "$OUT/gap-one-shard.svg"
  stop_all

  log "two shards + Redis: steps $TWO_STEPS"
  two_shards
  measured two-shards steps --steps "$TWO_STEPS" --hold "$HOLD" --settle "$SETTLE" --ramp "$RAMP" \
    --plot "$OUT/gap-two-shards.svg"
  stop_all
}

# Batched and unbatched writes alternate (B U, U B, B U, ..) so drift in the
# machine's load falls on both.
section_control() {
  local n i order mode
  for n in $CONTROL_BOTS; do
    for i in $(seq "$REPEAT"); do
      if (( i % 2 )); then order="batched unbatched"; else order="unbatched batched"; fi
      for mode in $order; do
        log "control $n/$i: $mode writes, two shards, $n bots"
        if [[ $mode == unbatched ]]; then two_shards --unbatched-writes; else two_shards; fi
        measured "control-$n-$mode-$i" walk --bots "$n" --ramp "$RAMP" --duration "$CONTROL_HOLD"
        stop_all
      done
    done
  done
}

# Idle websockets: standing players on a world of about one player per cell
# of 125 units (so each sees few others), keyframes every 20 ticks (a
# standing player's socket is written once a second), the busy rule off as in
# every section (SHARD_FLAGS): this measures memory and CPU per socket, not
# admission.
section_idle() {
  local i n world
  for n in $IDLE_SIZES; do
    world="$(python3 -c "import math; print(max(1000, round(math.sqrt($n) * 125)))")"
    for i in $(seq "$REPEAT"); do
      log "idle $n/$i: $n idle websockets on one shard, world $world"
      one_shard --world-size "$world" --cell-size 125 --view-radius 250 --keyframe-ticks 20 \
        --max-players "$((n + 100))" --max-connections "$((n + 200))"
      measured "idle-$n-$i" idle --bots "$n" --ramp 1000 --hold "$IDLE_HOLD"
      stop_all
    done
  done
  # The allocator: the largest size again with glibc's malloc in place of
  # jemalloc (the same code otherwise), runs interleaved with nothing else.
  n="${IDLE_SIZES##* }"
  world="$(python3 -c "import math; print(max(1000, round(math.sqrt($n) * 125)))")"
  if [[ ! -x $RUNBIN/mino-server-glibc ]]; then
    log "idle: no server without jemalloc ($GLIBC_BIN): the allocator comparison is not run"
    return 0
  fi
  for i in $(seq "$REPEAT"); do
    log "idle $n/$i with glibc malloc: $n idle websockets on one shard, world $world"
    SERVER_BIN=mino-server-glibc one_shard --world-size "$world" --cell-size 125 --view-radius 250 --keyframe-ticks 20 \
      --max-players "$((n + 100))" --max-connections "$((n + 200))"
    measured "malloc-glibc-$n-$i" idle --bots "$n" --ramp 1000 --hold "$IDLE_HOLD" --no-chat-cost
    stop_all
  done
}

section_arrivals() {
  log "arrivals: $ARRIVALS_BOTS at $ARRIVALS_RATE/s on one shard"
  one_shard
  measured arrivals arrivals --bots "$ARRIVALS_BOTS" --rate "$ARRIVALS_RATE" --hold 5s
  stop_all
}

# Failover runs on the default config (busy rule on): it is about resume, not capacity.
section_failover() {
  local action flag
  for action in kill drain; do
    flag="--$action-pid"
    log "failover: $action shard b with $FAILOVER_BOTS bots on two shards"
    local saved=("${SHARD_FLAGS[@]}"); SHARD_FLAGS=()
    two_shards
    SHARD_FLAGS=("${saved[@]}")
    measured "failover-$action" failover --bots "$FAILOVER_BOTS" --ramp 200 --warmup 5s \
      "$flag" "${SHARD_PID[b]}" --observe "$FAILOVER_OBSERVE"
    if [[ $action == kill ]]; then log "(a 'Killed' notice from bash above is shard b, killed by the loadgen on purpose)"; fi
    stop_all
  done
}

# Area of interest: two shards + Redis at each of AOI_PLAYERS, the world sized
# so the players make AOI_DENSITY a cell (the loadgen's --density keeps them
# spread over it), and the same world without area of interest as the control
# row up to AOI_OFF_MAX players.
section_aoi() {
  local n side
  for n in $AOI_PLAYERS; do
    side="$(python3 -c "import math; print(math.ceil(math.sqrt($n / $AOI_DENSITY)) * $AOI_CELL)")"
    log "area of interest: $n players on two shards, world $side units, $AOI_DENSITY a cell"
    two_shards --cell-size "$AOI_CELL" --view-radius $((AOI_CELL * AOI_RADIUS_CELLS)) --world-size "$side" \
      --max-players "$n"
    measured "aoi-$n-on" walk --bots "$n" --ramp "$RAMP" --duration "$AOI_HOLD" --density "$AOI_DENSITY"
    stop_all
    if (( n == 1000 )); then
      log "area of interest at a view radius of 2 cells: $n players on two shards"
      two_shards --cell-size "$AOI_CELL" --view-radius $((AOI_CELL * 2)) --world-size "$side" --max-players "$n"
      measured "aoi-$n-on2" walk --bots "$n" --ramp "$RAMP" --duration "$AOI_HOLD" --density "$AOI_DENSITY"
      stop_all
    fi
    if (( n <= AOI_OFF_MAX )); then
      log "area of interest off (control): $n players on two shards, world $side units"
      two_shards --world-size "$side" --max-players "$n"
      measured "aoi-$n-off" walk --bots "$n" --ramp "$RAMP" --duration "$AOI_HOLD"
      stop_all
    fi
  done
}

# A crowd (area of interest): CROWD_BOTS bots on two shards + Redis all walk
# to the middle of one cell and stay there for CROWD_HOLD; the view
# budget (the server's default, --view-budget-bytes 8192) against what each
# socket got, late ticks, sockets closed as too slow.
section_crowd() {
  local side=2000
  # The middle of the cell just past the world's centre: the world's centre
  # itself is a corner of four cells.
  local point=$((side / 2 + AOI_CELL / 2))
  log "crowd: $CROWD_BOTS players on two shards walk to ($point, $point), one cell of a $side-unit world"
  two_shards --cell-size "$AOI_CELL" --world-size "$side" --max-players "$CROWD_BOTS" \
    --max-connections $((CROWD_BOTS + 100))
  measured "crowd-$CROWD_BOTS" crowd --bots "$CROWD_BOTS" --ramp "$RAMP" --hold "$CROWD_HOLD" \
    --point "$point,$point"
  stop_all
}

# Redis beyond one node (examples/redis_ha, which starts its own Redis Cluster
# or Sentinel, two shards and the bots in one process): a Redis primary killed
# under REDIS_FAILOVER_BOTS bots, on a six-node cluster and under Sentinel; the
# load on each of three cluster primaries with the place's region channels
# spread over them, at each of REDIS_SPREAD players. REPEAT runs of each,
# interleaved so the machine's drift falls on all; medians in RESULTS.md.
section_redis() {
  if [[ $BUILD == 1 ]]; then
    log "building the redis_ha example"
    (cd "$ROOT" && cargo build --release -p mino-server --example redis_ha)
  fi
  mkdir -p "$RUNBIN/examples" "$RAW/logs"
  cp "$BIN/examples/redis_ha" "$RUNBIN/examples/redis_ha"
  local i name n run a
  local runs=("failover cluster $REDIS_FAILOVER_BOTS" "failover sentinel $REDIS_FAILOVER_BOTS")
  for n in $REDIS_SPREAD; do runs+=("spread $n"); done
  for ((i = 1; i <= REPEAT; i++)); do
    for run in "${runs[@]}"; do
      read -r -a a <<<"$run"
      name="redis-${a[0]}-$([[ ${a[0]} == failover ]] && echo "${a[1]}-${a[2]}" || echo "${a[1]}")-$i"
      log "redis: $run (run $i of $REPEAT)"
      (cd "$ROOT" && run_logged "$name" "$RUNBIN/examples/redis_ha" "${a[@]}" "$RUNBIN/mino-server" --json "$RAW/$name.json") \
        >"$RAW/logs/$name.log" 2>&1 || log "redis: $run failed: see $RAW/logs/$name.log"
    done
  done
}

# Through nginx with TLS, shards on loopback TCP and on Unix sockets, runs
# alternating (deploy/bench-nginx.sh, which starts its own Redis, two shards
# and nginx from the shipped template): CPU per delivered frame of the shards
# and of nginx. Its folder per run (summary.json, loadgen.json) and
# compare.json go to raw/nginx/.
section_nginx() {
  log "through nginx (TLS): $NGINX_BOTS bots, loopback TCP vs Unix sockets, $REPEAT run(s) each"
  run_logged nginx env BOTS="$NGINX_BOTS" HOLD="$NGINX_HOLD" REPEAT="$REPEAT" UPSTREAM=both \
    BIN_DIR="$RUNBIN" OUT="$RAW/nginx" "$ROOT/deploy/bench-nginx.sh" \
    || log "nginx: bench-nginx.sh exited with $? (the runs it finished are still used)"
  # Only the figures are kept: the logs stay out of results/.
  rm -f "$RAW"/nginx/run-*/*.log "$RAW"/nginx/run-*/loadgen.out "$RAW"/nginx/run-*/loadgen.err
}

# The commit measured: HEAD, "+dirty" when the crates that make the binaries have local changes.
commit() {
  local dirty=""
  git -C "$ROOT" diff --quiet HEAD -- server loadgen schema Cargo.toml Cargo.lock 2>/dev/null || dirty="+dirty"
  printf '%s%s' "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)" "$dirty"
}

section_report() {
  log "writing RESULTS.md"
  python3 "$PY/report.py" --raw "$RAW" --out "$RESULTS_MD" --svg-dir "$OUT"
}

main() {
  if [[ $REPORT_ONLY == 1 ]]; then
    section_report
    return
  fi
  mkdir -p "$OUT"
  if [[ -z $ONLY ]]; then rm -rf "$RAW"; fi
  mkdir -p "$RAW"
  if [[ -z $ONLY ]]; then
    printf 'started\t%s\nmode\t%s\ncommit\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$MODE" "$(commit)" >"$RAW/run.tsv"
  else
    local only="${ONLY#,}"; only="${only%,}"
    printf 'rerun\t%s at %s (%s mode, commit %s)\n' "${only//,/, }" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$MODE" \
      "$(commit)" >>"$RAW/run.tsv"
  fi
  # A partial rerun keeps the full run's load averages and records its own.
  if [[ -z $ONLY ]]; then uptime >"$RAW/load-before.txt"; else printf 'rerun load before\t%s\n' "$(uptime)" >>"$RAW/run.tsv"; fi
  printf '%smachine\t%s\n' "${ONLY:+rerun }" "$(python3 "$PY/figures.py" --machine)" >>"$RAW/run.tsv"
  section_build
  local s
  for s in criterion steps control idle arrivals failover aoi crowd redis nginx; do
    if wanted "$s"; then
      begin_section "$s"
      "section_$s"
    fi
  done
  if [[ -z $ONLY ]]; then uptime >"$RAW/load-after.txt"; else printf 'rerun load after\t%s\n' "$(uptime)" >>"$RAW/run.tsv"; fi
  if [[ -z $ONLY ]]; then
    printf 'finished\t%s\nseconds\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(( $(date +%s) - T0 ))" >>"$RAW/run.tsv"
  fi
  section_report
  log "done: $RESULTS_MD"
}

main
