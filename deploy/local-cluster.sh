#!/usr/bin/env bash
# mino on one machine the way it is deployed: Redis, N shard processes
# clustered over it, and nginx with TLS (a self-signed certificate made here)
# in front, serving the browser client. Everything runs under one temporary
# folder and on 127.0.0.1 only. Prints the URL to open; Ctrl-C stops it all.
#
#   deploy/local-cluster.sh                    # 2 shards at https://localhost:8443/
#   SHARDS=3 HTTPS_PORT=9443 deploy/local-cluster.sh
#   BOTS=50 deploy/local-cluster.sh            # and 50 walking bots through nginx
#   PROFILE=debug deploy/local-cluster.sh      # target/debug binaries
#
# Settings (environment): SHARDS (2), HTTPS_PORT (8443), HTTP_PORT (8080,
# redirects to https), REDIS_PORT (6399), BOTS (0), PROFILE (release),
# STATIC_DIR (client-web/dist, built with npm when missing and npm exists).
# Needs redis-server, nginx, openssl, envsubst, curl (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=deploy/local-lib.sh
. deploy/local-lib.sh

SHARDS="${SHARDS:-2}"
HTTPS_PORT="${HTTPS_PORT:-8443}"
HTTP_PORT="${HTTP_PORT:-8080}"
REDIS_PORT="${REDIS_PORT:-6399}"
BOTS="${BOTS:-0}"
PROFILE="${PROFILE:-release}"
STATIC_DIR="${STATIC_DIR:-client-web/dist}"

mino_need redis-server nginx openssl envsubst curl
[[ "$SHARDS" =~ ^[1-9][0-9]*$ ]] || mino_die "SHARDS must be a positive number"
for p in "$HTTPS_PORT" "$HTTP_PORT" "$REDIS_PORT"; do
  mino_port_free "$p" || mino_die "port $p is in use (set HTTPS_PORT, HTTP_PORT or REDIS_PORT)"
done

bin="target/$PROFILE"
flag=(); [ "$PROFILE" = release ] && flag=(--release)
pkgs=(-p mino-server); [ "$BOTS" -gt 0 ] && pkgs+=(-p mino-loadgen)
if [ ! -x "$bin/mino-server" ] || { [ "$BOTS" -gt 0 ] && [ ! -x "$bin/mino-loadgen" ]; }; then
  cargo build "${flag[@]}" "${pkgs[@]}"
fi

if [ ! -f "$STATIC_DIR/index.html" ] && [ "$STATIC_DIR" = client-web/dist ] && command -v npm >/dev/null 2>&1; then
  (cd client-web && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm run build)
fi
[ -f "$STATIC_DIR/index.html" ] || mino_die "no $STATIC_DIR/index.html: build the client (cd client-web && npm run build) or set STATIC_DIR"
STATIC_DIR="$(cd "$STATIC_DIR" && pwd)"

MINO_WORK="$(mktemp -d -t mino-local-XXXXXX)"
cleanup() {
  trap - EXIT INT TERM
  echo
  echo "stopping (logs were in $MINO_WORK)"
  mino_stop_all
  rm -rf "$MINO_WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mino_cert "$MINO_WORK/tls"
mino_redis "$REDIS_PORT"
for id in $(seq 1 "$SHARDS"); do
  mino_shard "$bin/mino-server" "$id" "redis://127.0.0.1:$REDIS_PORT"
done
mino_nginx "$HTTPS_PORT" "$HTTP_PORT" "$STATIC_DIR" 1 4096

if [ "$BOTS" -gt 0 ]; then
  "$bin/mino-loadgen" --url "wss://127.0.0.1:$HTTPS_PORT/ws" --ca-file "$MINO_WORK/tls/cert.pem" \
    --bots "$BOTS" --ramp 20 --duration 24h --quiet >/dev/null 2>"$MINO_WORK/loadgen.log" &
  MINO_PIDS+=($!)
fi

cat <<EOF

mino is running: $SHARDS shards (${MINO_SHARD_ADDRS[*]}), Redis on 127.0.0.1:$REDIS_PORT, nginx in front.

  open   https://localhost:$HTTPS_PORT/   (self-signed certificate: accept the browser's warning,
         or start Chromium with --ignore-certificate-errors; WebGPU needs the https page)
  bots   $bin/mino-loadgen --url wss://127.0.0.1:$HTTPS_PORT/ws --ca-file $MINO_WORK/tls/cert.pem --bots 20
  shards curl http://${MINO_SHARD_ADDRS[0]}/metrics   (not reachable through nginx)
  logs   $MINO_WORK

Ctrl-C stops everything.
EOF

# Until Ctrl-C, or until one of the processes ends by itself.
set +e
wait -n "${MINO_PIDS[@]}"
echo "$(basename "$0"): a process exited; stopping the rest" >&2
