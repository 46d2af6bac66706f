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
#   PROFILE=debug scripts/play.sh    # debug binaries (a faster first build)
# The first run builds the server, the bots and the client: about 5 to 7
# minutes on a fresh 2-core machine (README.md, "Play"); later runs take seconds.
# Ctrl-C stops everything. Exits non-zero, without starting anything, when a
# port is taken or a setting is wrong.
#
# Settings (environment): PORT (8080), ADMIN_PORT (9101, or off), BOTS (8),
# WEBTRANSPORT (on or off), PROFILE (release or debug), BIN_DIR
# (unset: cargo's target folder, then /PROFILE, built with cargo first; a
# folder given is used as it is), STATIC_DIR (client-web/dist) and
# CONSOLE_DIR (client-web/dist-admin): built with npm first when both are the
# defaults, else used as they are. Relative folders are from the repository's
# root.
set -euo pipefail
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$self")/.."
for arg in "$@"; do
  case "$arg" in
    -h | --help) sed -n '2,/^set -euo/p' "$self" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "play: unknown argument '$arg' (--help; settings go in the environment)" >&2; exit 1 ;;
  esac
done
PORT="${PORT:-8080}"
ADMIN_PORT="${ADMIN_PORT:-9101}"
BOTS="${BOTS:-8}"
WEBTRANSPORT="${WEBTRANSPORT:-on}"
PROFILE="${PROFILE:-release}"
# Without BIN_DIR: built here, where cargo builds (scripts/target-dir.sh:
# CARGO_TARGET_DIR, a cargo config's build.target-dir, else target/).
build_bins=""
if [ -z "${BIN_DIR:-}" ]; then
  BIN_DIR="$(bash scripts/target-dir.sh)/$PROFILE"
  build_bins=1
fi
STATIC_DIR="${STATIC_DIR:-client-web/dist}"
CONSOLE_DIR="${CONSOLE_DIR:-client-web/dist-admin}"
# The browsers with WebGPU, as the page's own "no WebGPU" message names them
# (client-web/src/render/gpu.ts; test/browsers.test.ts keeps them the same).
BROWSERS="Chrome or Edge 113+, Firefox 141+ or Safari 26+"

die() { echo "play: $*" >&2; exit 1; }
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# healthy PORT: 127.0.0.1:PORT answers GET /healthz with 200 (bash only: no curl needed).
healthy() {
  (
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf 'GET /healthz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
    IFS= read -r -t 2 status <&3 && [[ "$status" == "HTTP/1."?" 200"* ]]
  ) 2>/dev/null
}

# is_port VALUE: VALUE is a TCP port number, 1 to 65535. Checked first: a
# port out of range would otherwise fail only after the builds.
is_port() { [[ "$1" =~ ^[1-9][0-9]{0,4}$ ]] && [ "$1" -le 65535 ]; }
is_port "$PORT" || die "PORT must be a port number, 1 to 65535 (not '$PORT')"
[ "$ADMIN_PORT" = off ] || is_port "$ADMIN_PORT" || die "ADMIN_PORT must be a port number, 1 to 65535, or off (not '$ADMIN_PORT')"
[[ "$BOTS" =~ ^[0-9]{1,9}$ ]] || die "BOTS must be a number"
case "$PROFILE" in release | debug) ;; *) die "PROFILE must be release or debug" ;; esac
case "$WEBTRANSPORT" in on | off) ;; *) die "WEBTRANSPORT must be on or off" ;; esac
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
  admin=(--admin-listen "127.0.0.1:${ADMIN_PORT}")
fi
webtransport=()
case "$WEBTRANSPORT" in
  # Port 0: a free UDP port; the page learns it (and the self-signed
  # certificate's hash) from /webtransport.
  on) webtransport=(--webtransport-listen 127.0.0.1:0) ;;
  off) ;;
esac

if [ -n "$build_bins" ]; then
  if [ ! -x "$BIN_DIR/mino-server" ]; then
    echo "play: first run: building the server, the bots and the client takes about 5 to 7 minutes on 2 cores..."
  fi
  flag=(); [ "$PROFILE" = release ] && flag=(--release)
  # The same packages as deploy/local-cluster.sh (which says why).
  cargo build "${flag[@]}" -p mino-server -p mino-loadgen
fi
for bin in mino-server mino-loadgen; do
  [ -x "$BIN_DIR/$bin" ] || die "no $BIN_DIR/$bin (set BIN_DIR to the folder of the built binaries)"
done
if [ "$STATIC_DIR" = client-web/dist ] && [ "$CONSOLE_DIR" = client-web/dist-admin ]; then
  command -v npm >/dev/null 2>&1 || die "needs node and npm (to build the browser client)"
  (cd client-web && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm run build)
fi
[ -f "$STATIC_DIR/index.html" ] || die "no $STATIC_DIR/index.html (cd client-web && npm run build, or set STATIC_DIR)"
if [ ${#admin[@]} -gt 0 ]; then
  [ -f "$CONSOLE_DIR/index.html" ] || die "no $CONSOLE_DIR/index.html (cd client-web && npm run build, or set CONSOLE_DIR)"
  admin+=(--admin-console-dir "$CONSOLE_DIR")
fi

pids=()
# Runs once, at the exit however it comes (Ctrl-C: the INT trap exits). SIGINT
# is the server's "stop at once" (SIGTERM would drain first, and a second
# SIGTERM is taken for impatience).
cleanup() {
  trap - EXIT INT TERM
  kill -INT "${pids[@]}" 2>/dev/null || true
  # A child that has not installed its handler yet ignores SIGINT (started
  # with & and no job control): after 10 s, SIGKILL.
  for _ in $(seq 1 100); do
    running=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && running=1; done
    [ "$running" -eq 0 ] && break
    sleep 0.1
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$BIN_DIR/mino-server" --listen "127.0.0.1:${PORT}" --static-dir "$STATIC_DIR" "${admin[@]}" "${webtransport[@]}" &
server=$!
pids+=("$server")
# The probes are the admin listener's when there is one, else the players' port's.
probes="$PORT"; [ ${#admin[@]} -gt 0 ] && probes="$ADMIN_PORT"
up=0
for _ in $(seq 1 200); do
  if ! kill -0 "$server" 2>/dev/null; then break; fi
  if healthy "$probes"; then up=1; break; fi
  sleep 0.1
done
if [ "$up" -ne 1 ]; then
  if kill -0 "$server" 2>/dev/null; then
    die "mino-server did not answer http://127.0.0.1:${probes}/healthz within 20 s"
  fi
  die "mino-server stopped at its start (see its messages above)"
fi
if [ "$BOTS" -gt 0 ]; then
  # The bots' own lines (a load tester's: a Ctrl-C "marks the report
  # interrupted") go to a file of their own, out of the player's way.
  bots_log="${TMPDIR:-/tmp}/mino-play-bots.$$.log"
  "$BIN_DIR/mino-loadgen" --url "ws://127.0.0.1:${PORT}/ws" --bots "$BOTS" --ramp 4 --duration 24h --quiet >/dev/null 2>"$bots_log" &
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
if [ "$BOTS" -gt 0 ]; then
  echo "$BOTS bots walk the place (their log: $bots_log)."
fi
echo "Ctrl-C to stop."
wait "$server"
