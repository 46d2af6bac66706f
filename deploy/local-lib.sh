# shellcheck shell=bash
# Functions shared by deploy/local-cluster.sh and deploy/bench-nginx.sh: start
# Redis, shards and nginx (with a self-signed certificate) as children of the
# calling script, under one work folder, on 127.0.0.1 only. Source it; every
# started process's pid is appended to MINO_PIDS, and mino_stop_all stops them.

MINO_PIDS=()
MINO_NGINX_PID=""
MINO_SHARD_PIDS=()
MINO_SHARD_ADDRS=()

mino_die() { echo "$(basename "$0"): $*" >&2; exit 1; }

# mino_need TOOL...: fails with a hint when a tool is missing.
mino_need() {
  local t
  for t in "$@"; do
    command -v "$t" >/dev/null 2>&1 || [ -x "/usr/sbin/$t" ] \
      || mino_die "needs $t (scripts/setup.sh installs redis-server, nginx, openssl; envsubst is in gettext-base)"
  done
}

mino_nginx_bin() { command -v nginx 2>/dev/null || echo /usr/sbin/nginx; }

# mino_alive PID: true while the process runs (a zombie that exited is not).
mino_alive() { [ -r "/proc/$1/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

# mino_port_free PORT: true when nothing listens on 127.0.0.1:PORT.
mino_port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# mino_wait_port PORT PID WHAT: waits up to 15 s for PORT to accept, while PID lives.
mino_wait_port() {
  local i
  for i in $(seq 1 150); do
    mino_port_free "$1" || return 0
    mino_alive "$2" || mino_die "$3 exited; see its log in $MINO_WORK"
    sleep 0.1
  done
  mino_die "$3 does not listen on 127.0.0.1:$1"
}

# mino_cert DIR: a self-signed ECDSA certificate for localhost and 127.0.0.1
# (DIR/cert.pem, DIR/key.pem), valid 30 days (self-signed-cert.sh).
mino_cert() {
  bash "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/self-signed-cert.sh" "$1" 30 \
    || mino_die "openssl could not make a certificate"
}

# mino_redis PORT: redis-server on 127.0.0.1:PORT, no persistence.
mino_redis() {
  mkdir -p "$MINO_WORK/redis"
  redis-server --port "$1" --bind 127.0.0.1 --save "" --appendonly no --dir "$MINO_WORK/redis" \
    --loglevel warning --logfile "$MINO_WORK/redis.log" &
  MINO_PIDS+=($!)
  mino_wait_port "$1" "$!" redis-server
}

# mino_shard BIN ID REDIS_URL [FLAG...]: a shard on 127.0.0.1 port 0; its
# address goes to MINO_SHARD_ADDRS, its pid to MINO_SHARD_PIDS.
mino_shard() {
  local bin=$1 id=$2 redis=$3 out i addr=""
  shift 3
  out="$MINO_WORK/shard-$id.out"
  MINO_LOG="${MINO_LOG:-info}" "$bin" --listen 127.0.0.1:0 --shard-id "$id" --redis-url "$redis" "$@" \
    >"$out" 2>"$MINO_WORK/shard-$id.log" &
  local pid=$!
  MINO_PIDS+=("$pid")
  MINO_SHARD_PIDS+=("$pid")
  for i in $(seq 1 150); do
    addr=$(sed -n 's/.*listening on http:\/\///p' "$out" | head -n1)
    [ -n "$addr" ] && break
    mino_alive "$pid" || mino_die "shard $id exited; see $MINO_WORK/shard-$id.log"
    sleep 0.1
  done
  [ -n "$addr" ] || mino_die "shard $id printed no address"
  for i in $(seq 1 150); do
    curl -fs "http://$addr/readyz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  curl -fs "http://$addr/readyz" >/dev/null 2>&1 || mino_die "shard $id is not ready (Redis?)"
  MINO_SHARD_ADDRS+=("$addr")
}

# mino_nginx HTTPS_PORT HTTP_PORT STATIC_ROOT WORKERS CONNECTIONS: renders
# deploy/nginx/mino.conf.template for the shards started so far and runs
# nginx in the foreground as a child (MINO_NGINX_PID).
mino_nginx() {
  local here
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  mkdir -p "$MINO_WORK/logs" "$MINO_WORK/temp"
  MINO_SHARDS="${MINO_SHARD_ADDRS[*]}" \
  MINO_SERVER_NAME=localhost \
  MINO_HTTPS_LISTEN="127.0.0.1:$1" \
  MINO_HTTP_LISTEN="127.0.0.1:$2" \
  MINO_TLS_CERT="$MINO_WORK/tls/cert.pem" \
  MINO_TLS_KEY="$MINO_WORK/tls/key.pem" \
  MINO_STATIC_ROOT="$3" \
  MINO_NGINX_USER="$(id -un)" \
  MINO_NGINX_WORKERS="$4" \
  MINO_NGINX_CONNECTIONS="$5" \
  MINO_NGINX_NOFILE="$(($5 * 2))" \
  MINO_NGINX_PID="$MINO_WORK/nginx.pid" \
  MINO_NGINX_ERROR_LOG="$MINO_WORK/logs/error.log" \
  MINO_NGINX_ACCESS_LOG="$MINO_WORK/logs/access.log" \
  MINO_NGINX_TEMP="$MINO_WORK/temp" \
    bash "$here/nginx/render.sh" >"$MINO_WORK/nginx.conf"
  "$(mino_nginx_bin)" -t -q -p "$MINO_WORK" -c "$MINO_WORK/nginx.conf" \
    || mino_die "nginx refused $MINO_WORK/nginx.conf"
  "$(mino_nginx_bin)" -p "$MINO_WORK" -c "$MINO_WORK/nginx.conf" -g "daemon off;" &
  MINO_NGINX_PID=$!
  MINO_PIDS+=("$MINO_NGINX_PID")
  mino_wait_port "$1" "$MINO_NGINX_PID" nginx
}

# mino_stop_all: SIGTERM to everything started (shards drain, nginx and Redis
# stop), up to 10 s, then SIGKILL.
mino_stop_all() {
  local i p left
  [ ${#MINO_PIDS[@]} -gt 0 ] || return 0
  kill -TERM "${MINO_PIDS[@]}" 2>/dev/null || true
  for i in $(seq 1 100); do
    left=0
    for p in "${MINO_PIDS[@]}"; do mino_alive "$p" && left=1; done
    [ "$left" = 0 ] && break
    sleep 0.1
  done
  kill -KILL "${MINO_PIDS[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
  MINO_PIDS=()
}
