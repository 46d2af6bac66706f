#!/usr/bin/env bash
# Builds and starts mino standalone (no Redis): the server with the browser
# client on http://127.0.0.1:8080/, plus a few walking bots for company.
#   scripts/play.sh            # server + client + 8 bots
#   BOTS=0 scripts/play.sh     # no bots
#   PORT=9000 scripts/play.sh
# Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${PORT:-8080}"
BOTS="${BOTS:-8}"

command -v npm >/dev/null 2>&1 || { echo "play: needs node and npm"; exit 1; }
cargo build --release -p mino-server -p mino-loadgen
(cd client-web && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm run build)

pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM

target/release/mino-server --listen "127.0.0.1:${PORT}" --static-dir client-web/dist &
pids+=($!)
for _ in $(seq 1 50); do
  curl -fs "http://127.0.0.1:${PORT}/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done
if [ "$BOTS" -gt 0 ]; then
  target/release/mino-loadgen --url "ws://127.0.0.1:${PORT}/ws" --bots "$BOTS" --ramp 4 --duration 24h --quiet >/dev/null &
  pids+=($!)
fi
echo
echo "mino is running: open http://127.0.0.1:${PORT}/ in a browser with WebGPU (Chrome, Edge, Firefox 141+)."
echo "Ctrl-C to stop."
wait "${pids[0]}"
