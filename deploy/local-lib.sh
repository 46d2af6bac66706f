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

# mino_shard BIN ID REDIS [FLAG...]: a shard on 127.0.0.1 port 0; its
# address goes to MINO_SHARD_ADDRS, its pid to MINO_SHARD_PIDS. REDIS is a
# URL (--redis-url), or the flags MINO_REDIS_FLAGS holds (starting with --:
# --redis-cluster ..., --redis-sentinel ... --redis-master ...).
mino_shard() {
  local bin=$1 id=$2 redis=$3 out i addr="" redis_flags=()
  shift 3
  if [[ $redis == --* ]]; then read -ra redis_flags <<<"$redis"; else redis_flags=(--redis-url "$redis"); fi
  out="$MINO_WORK/shard-$id.out"
  MINO_LOG="${MINO_LOG:-info}" "$bin" --listen 127.0.0.1:0 --shard-id "$id" "${redis_flags[@]}" "$@" \
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

# mino_redis_cluster BASE_PORT: a six-node Redis Cluster (three primaries,
# three replicas) on 127.0.0.1:BASE_PORT to BASE_PORT+5 (cluster bus ports
# +10000), each node from deploy/redis/cluster/mino-redis-cluster.conf with
# its addresses and folder overridden, joined with redis-cli --cluster
# create. Sets MINO_REDIS_FLAGS (the shards' --redis-cluster) and
# MINO_REDIS_DESC.
mino_redis_cluster() {
  local base=$1 here i port nodes=() seeds=()
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  for i in 0 1 2 3 4 5; do
    port=$((base + i))
    mino_port_free "$port" && mino_port_free $((port + 10000)) || mino_die "port $port or $((port + 10000)) is in use (set REDIS_PORT)"
    mkdir -p "$MINO_WORK/redis-$port"
    # Each node runs from its own copy: Redis may rewrite its configuration
    # file (CONFIG REWRITE), and the shipped one must stay as shipped.
    cp "$here/redis/cluster/mino-redis-cluster.conf" "$MINO_WORK/redis-$port.conf"
    redis-server "$MINO_WORK/redis-$port.conf" --bind 127.0.0.1 --port "$port" \
      --dir "$MINO_WORK/redis-$port" --cluster-node-timeout 2000 --loglevel warning \
      --logfile "$MINO_WORK/redis-$port.log" &
    MINO_PIDS+=($!)
    mino_wait_port "$port" "$!" "redis-server (cluster node $port)"
    nodes+=("127.0.0.1:$port")
    seeds+=("redis://mino:change-this-password@127.0.0.1:$port")
  done
  redis-cli --user admin --pass change-this-admin-password --no-auth-warning \
    --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >"$MINO_WORK/cluster-create.log" 2>&1 \
    || mino_die "redis-cli --cluster create failed; see $MINO_WORK/cluster-create.log"
  for i in $(seq 1 100); do
    redis-cli --user admin --pass change-this-admin-password --no-auth-warning -p "$base" cluster info 2>/dev/null \
      | grep -q 'cluster_state:ok' && break
    sleep 0.1
  done
  MINO_REDIS_FLAGS="--redis-cluster $(IFS=,; echo "${seeds[*]}")"
  MINO_REDIS_DESC="a Redis Cluster of 6 nodes (3 primaries, 3 replicas) on 127.0.0.1:$base-$((base + 5))"
}

# mino_redis_sentinel PORT: mino's Redis primary on 127.0.0.1:PORT, its
# replica on PORT+1 (deploy/redis/mino-redis.conf), and three sentinels on
# PORT+2 to PORT+4 (deploy/redis/sentinel/mino-sentinel.conf, addresses
# rewritten for this machine). Sets MINO_REDIS_FLAGS (--redis-sentinel,
# --redis-master) and MINO_REDIS_DESC.
mino_redis_sentinel() {
  local port=$1 here i s urls=()
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  for i in 0 1; do
    mkdir -p "$MINO_WORK/redis-$((port + i))"
    local extra=()
    [ "$i" = 1 ] && extra=(--replicaof 127.0.0.1 "$port" --masteruser replication
      --masterauth change-this-replication-password --repl-diskless-sync-delay 0)
    # From a copy: the sentinels make each node rewrite its configuration
    # file (CONFIG REWRITE) when they reconfigure it; the shipped file must
    # stay as shipped.
    cp "$here/redis/mino-redis.conf" "$MINO_WORK/redis-$((port + i)).conf"
    redis-server "$MINO_WORK/redis-$((port + i)).conf" --bind 127.0.0.1 --port $((port + i)) \
      --dir "$MINO_WORK/redis-$((port + i))" --loglevel warning --logfile "$MINO_WORK/redis-$((port + i)).log" \
      "${extra[@]}" &
    MINO_PIDS+=($!)
    mino_wait_port $((port + i)) "$!" "redis-server ($((port + i)))"
  done
  for i in 2 3 4; do
    s=$((port + i))
    sed -e "s/^bind .*/bind 127.0.0.1/" -e "s/^port .*/port $s/" \
      -e "s/^sentinel monitor mino .*/sentinel monitor mino 127.0.0.1 $port 2/" \
      -e "s/^sentinel down-after-milliseconds mino .*/sentinel down-after-milliseconds mino 2000/" \
      "$here/redis/sentinel/mino-sentinel.conf" >"$MINO_WORK/sentinel-$s.conf"
    redis-sentinel "$MINO_WORK/sentinel-$s.conf" --dir "$MINO_WORK" --loglevel warning \
      --logfile "$MINO_WORK/sentinel-$s.log" &
    MINO_PIDS+=($!)
    mino_wait_port "$s" "$!" "redis-sentinel ($s)"
    urls+=("redis://mino:change-this-password@127.0.0.1:$s")
  done
  MINO_REDIS_FLAGS="--redis-sentinel $(IFS=,; echo "${urls[*]}") --redis-master mino"
  MINO_REDIS_DESC="Redis primary 127.0.0.1:$port, replica :$((port + 1)), sentinels :$((port + 2))-$((port + 4)) (master mino)"
}
