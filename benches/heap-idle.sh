#!/usr/bin/env bash
# benches/heap-idle.sh: a heap profile of idle websockets (issue 17). Runs
# mino-server under heaptrack with N idle bots (mino-loadgen idle), kills it
# with SIGKILL during the hold, so what heaptrack calls "leaked" is exactly
# what was live with every socket open, and prints the live heap per
# connection and its biggest allocation sites.
#
# heaptrack sees malloc's callers only: mino-server's default allocator is
# jemalloc (feature `jemalloc`), so without BIN_DIR this builds a server
# without it into target/heap (the live bytes a call site holds are the same
# under either allocator; what each allocator adds on top shows in the RSS of
# benches/scale.sh's idle section).
#
# usage: benches/heap-idle.sh [N] [BIN_DIR] [server flags...]
#   N        idle websockets (default 10000)
#   BIN_DIR  where mino-server (built with --no-default-features) and
#            mino-loadgen are (default: built into target/heap/release)
#   flags    added to the server's (default: --keyframe-ticks 20)
# Needs heaptrack (apt install heaptrack). Loopback only; stops by itself.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
N="${1:-10000}"; BIN="${2:-}"; shift $(( $# > 2 ? 2 : $# ))
if [[ -z $BIN ]]; then
  cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml" --target-dir "$ROOT/target/heap" \
    -p mino-server --no-default-features
  cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml" -p mino-loadgen
  mkdir -p "$ROOT/target/heap/bin"
  ln -sf "$ROOT/target/heap/release/mino-server" "$ROOT/target/release/mino-loadgen" "$ROOT/target/heap/bin/"
  BIN="$ROOT/target/heap/bin"
fi
# A server with jemalloc inside would show heaptrack almost nothing.
if nm "$BIN/mino-server" 2>/dev/null | grep -q '_rjem_malloc'; then
  echo "heap-idle.sh: $BIN/mino-server is built with jemalloc, which heaptrack cannot see;" \
    "build it with --no-default-features (or give no BIN_DIR)" >&2
  exit 2
fi
FLAGS=("$@"); [[ ${#FLAGS[@]} -gt 0 ]] || FLAGS=(--keyframe-ticks 20)
command -v heaptrack >/dev/null || { echo "heap-idle.sh: needs heaptrack (apt install heaptrack)" >&2; exit 2; }
WORK="$(mktemp -d /tmp/mino-heap.XXXXXX)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
# Both processes hold N descriptors: raise the soft limit to the hard one.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
(( $(ulimit -n) > N + 100 )) || { echo "heap-idle.sh: $N sockets need more descriptors than ulimit -n $(ulimit -n)" >&2; exit 2; }
WORLD="$(python3 -c "import math; print(max(1000, round(math.sqrt($N) * 125)))")"
heaptrack -o "$WORK/heap" "$BIN/mino-server" --listen 127.0.0.1:0 --world-size "$WORLD" --cell-size 125 --view-radius 250 \
  --max-players $((N + 100)) --max-connections $((N + 200)) --busy-lateness-ms 0 "${FLAGS[@]}" >"$WORK/out" 2>"$WORK/err" &
HT=$!; PIDS+=("$HT")
for _ in $(seq 200); do grep -q "listening on" "$WORK/out" 2>/dev/null && break; sleep 0.1; done
ADDR="$(sed -n 's/.*listening on http:\/\/\([0-9.:]*\).*/\1/p' "$WORK/out" | head -1)"
[[ -n $ADDR ]] || { cat "$WORK/err" >&2; echo "heap-idle.sh: the server printed no address" >&2; exit 1; }
SPID="$(pgrep -P "$HT" -f mino-server | head -1 || true)"; SPID="${SPID:-$(pgrep -n -f "mino-server --listen 127.0.0.1:0 --world-size $WORLD")}"
"$BIN/mino-loadgen" idle --url "ws://$ADDR/ws" --server-pid "$SPID" --bots "$N" --ramp 1000 --hold 30s --no-chat-cost -q \
  --json "$WORK/idle.json" >/dev/null 2>&1 &
LG=$!; PIDS+=("$SPID" "$LG")
sleep $(( N / 1000 + 12 ))
# The sockets open at the kill (the listener and a few others aside).
sockets() { find "/proc/$SPID/fd" -lname 'socket:*' 2>/dev/null | wc -l; }
OPEN="$(sockets)"
kill -KILL "$SPID"; wait "$HT" || true; wait "$LG" || true
CONNECTED=$(( OPEN > 4 ? OPEN - 4 : 0 ))
(( CONNECTED * 10 >= N * 9 )) || echo "heap-idle.sh: only about $CONNECTED of $N websockets were open; per connection is over those" >&2
(( CONNECTED > 0 )) || { echo "heap-idle.sh: no websocket open" >&2; exit 1; }
heaptrack_print -F "$WORK/stacks" --flamegraph-cost-type leaked "$WORK"/heap.*zst >/dev/null 2>&1
echo "heap-idle.sh: $CONNECTED idle websockets open, server flags: ${FLAGS[*]}"
python3 "$ROOT/benches/scale/heap_summary.py" "$WORK/stacks" "$CONNECTED"
