#!/usr/bin/env bash
# Builds and starts mino standalone (no Redis): the server with the browser
# client on http://127.0.0.1:8080/, the admin console on
# http://127.0.0.1:9101/admin/ (loopback only), plus a few walking bots for
# company.
#   scripts/play.sh                  # server + client + console + 8 bots
#   BOTS=0 scripts/play.sh           # no bots
#   PORT=9000 scripts/play.sh
#   ADMIN_PORT=9200 scripts/play.sh  # the console elsewhere; ADMIN_PORT=off: none
#   WEBTRANSPORT=off scripts/play.sh # websocket only (by default the server also
#                                    # takes WebTransport on a free loopback UDP
#                                    # port, and the page uses it where it can)
# The first run builds the server, the bots and the client: about 5 to 7
# minutes on a fresh 2-core machine (README.md, "Play"); later runs take seconds.
# Ctrl-C stops everything. Exits non-zero, without starting anything, when a
# port is taken.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${PORT:-8080}"
ADMIN_PORT="${ADMIN_PORT:-9101}"
BOTS="${BOTS:-8}"
WEBTRANSPORT="${WEBTRANSPORT:-on}"
# The browsers with WebGPU, as the page's own "no WebGPU" message names them
# (client-web/src/render/gpu.ts; test/browsers.test.ts keeps them the same).
BROWSERS="Chrome or Edge 113+, Firefox 141+ or Safari 26+"

port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

command -v npm >/dev/null 2>&1 || { echo "play: needs node and npm" >&2; exit 1; }
if port_taken "$PORT"; then
  echo "play: port ${PORT} is taken (another mino, or another program); choose another: PORT=9000 scripts/play.sh" >&2
  exit 1
fi
admin=()
if [ "$ADMIN_PORT" != off ]; then
  if [ "$ADMIN_PORT" = "$PORT" ] || port_taken "$ADMIN_PORT"; then
    echo "play: port ${ADMIN_PORT} for the admin console is taken (or is PORT); choose another: ADMIN_PORT=9200 scripts/play.sh (or ADMIN_PORT=off)" >&2
    exit 1
  fi
  # Loopback only: the console needs no token there (beyond loopback it must have --admin-token-file).
  admin=(--admin-listen "127.0.0.1:${ADMIN_PORT}" --admin-console-dir client-web/dist-admin)
fi
webtransport=()
case "$WEBTRANSPORT" in
  # Port 0: a free UDP port; the page learns it (and the self-signed
  # certificate's hash) from /webtransport.
  on) webtransport=(--webtransport-listen 127.0.0.1:0) ;;
  off) ;;
  *) echo "play: WEBTRANSPORT must be on or off" >&2; exit 1 ;;
esac
if [ ! -x target/release/mino-server ] || [ ! -d client-web/dist ]; then
  echo "play: first run: building the server, the bots and the client takes about 5 to 7 minutes on 2 cores..."
fi
cargo build --release -p mino-server -p mino-loadgen
(cd client-web && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm run build)

pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM

target/release/mino-server --listen "127.0.0.1:${PORT}" --static-dir client-web/dist "${admin[@]}" "${webtransport[@]}" &
server=$!
pids+=("$server")
up=0
for _ in $(seq 1 100); do
  if ! kill -0 "$server" 2>/dev/null; then break; fi
  if curl -fs "http://127.0.0.1:${PORT}/healthz" >/dev/null 2>&1; then up=1; break; fi
  sleep 0.1
done
if [ "$up" -ne 1 ]; then
  if port_taken "$PORT"; then
    echo "play: port ${PORT} is taken (another program got it first); choose another: PORT=9000 scripts/play.sh" >&2
  else
    echo "play: mino-server did not start on port ${PORT} (see its messages above)" >&2
  fi
  exit 1
fi
if [ "$BOTS" -gt 0 ]; then
  target/release/mino-loadgen --url "ws://127.0.0.1:${PORT}/ws" --bots "$BOTS" --ramp 4 --duration 24h --quiet >/dev/null &
  pids+=($!)
fi
echo
echo "mino is running: open http://127.0.0.1:${PORT}/ in a browser with WebGPU (${BROWSERS})."
if [ ${#webtransport[@]} -gt 0 ]; then
  echo "The page plays over WebTransport where the browser has it (the HUD says which), else over the websocket."
fi
if [ ${#admin[@]} -gt 0 ]; then
  echo "The admin console (shards, players, kicks, drains): http://127.0.0.1:${ADMIN_PORT}/admin/"
fi
echo "Ctrl-C to stop."
wait "$server"
