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
#   REDIS=cluster deploy/local-cluster.sh      # on a 6-node Redis Cluster
#   REDIS=sentinel deploy/local-cluster.sh     # primary, replica, 3 sentinels
#
# Settings (environment): SHARDS (2), HTTPS_PORT (8443), HTTP_PORT (8080,
# redirects to https), REDIS (node, cluster or sentinel), REDIS_PORT (6399;
# the first of 6 with cluster, of 5 with sentinel), BOTS (0), PROFILE (release),
# STATIC_DIR (client-web/dist, built with npm when missing and npm exists).
# Needs redis-server, nginx, openssl, envsubst, curl (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=deploy/local-lib.sh
. deploy/local-lib.sh

SHARDS="${SHARDS:-2}"
HTTPS_PORT="${HTTPS_PORT:-8443}"
HTTP_PORT="${HTTP_PORT:-8080}"
REDIS="${REDIS:-node}"
REDIS_PORT="${REDIS_PORT:-6399}"
BOTS="${BOTS:-0}"
PROFILE="${PROFILE:-release}"
STATIC_DIR="${STATIC_DIR:-client-web/dist}"

mino_need redis-server redis-cli nginx openssl envsubst curl
case "$REDIS" in
  node | cluster) ;;
  sentinel) mino_need redis-sentinel ;;
  *) mino_die "REDIS must be node, cluster or sentinel" ;;
esac
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
case "$REDIS" in
  node)
    mino_redis "$REDIS_PORT"
    MINO_REDIS_FLAGS="redis://127.0.0.1:$REDIS_PORT"
    MINO_REDIS_DESC="Redis on 127.0.0.1:$REDIS_PORT"
    ;;
  cluster) mino_redis_cluster "$REDIS_PORT" ;;
  sentinel) mino_redis_sentinel "$REDIS_PORT" ;;
esac
for id in $(seq 1 "$SHARDS"); do
  mino_shard "$bin/mino-server" "$id" "$MINO_REDIS_FLAGS"
done
mino_nginx "$HTTPS_PORT" "$HTTP_PORT" "$STATIC_DIR" 1 4096

if [ "$BOTS" -gt 0 ]; then
  "$bin/mino-loadgen" --url "wss://127.0.0.1:$HTTPS_PORT/ws" --ca-file "$MINO_WORK/tls/cert.pem" \
    --bots "$BOTS" --ramp 20 --duration 24h --quiet >/dev/null 2>"$MINO_WORK/loadgen.log" &
  MINO_PIDS+=($!)
fi

cat <<EOF

mino is running: $SHARDS shards (${MINO_SHARD_ADDRS[*]}), $MINO_REDIS_DESC, nginx in front.

  open   https://localhost:$HTTPS_PORT/   (self-signed certificate: accept the browser's warning,
         or start Chromium with --ignore-certificate-errors; WebGPU needs the https page)
  bots   $bin/mino-loadgen --url wss://127.0.0.1:$HTTPS_PORT/ws --ca-file $MINO_WORK/tls/cert.pem --bots 20
  shards curl http://${MINO_SHARD_ADDRS[0]}/metrics   (not reachable through nginx)
  logs   $MINO_WORK

Ctrl-C stops everything.
EOF

# Until Ctrl-C, or until one of the processes ends by itself. With a Redis
# Cluster or Sentinel, a Redis node killed is the failover the cluster is
# there to show: only a shard or nginx ending stops the rest.
set +e
case "$REDIS" in
  node) wait -n "${MINO_PIDS[@]}" ;;
  *)
    [ "$REDIS" = cluster ] && echo "  fail   kill -9 the primary of the place: redis-cli --user admin --pass change-this-admin-password -p $REDIS_PORT cluster nodes"
    [ "$REDIS" = sentinel ] && echo "  fail   kill -9 the primary: redis-cli --user mino --pass change-this-password -p $((REDIS_PORT + 2)) sentinel get-master-addr-by-name mino"
    wait -n "${MINO_SHARD_PIDS[@]}" "$MINO_NGINX_PID"
    ;;
esac
echo "$(basename "$0"): a process exited; stopping the rest" >&2
