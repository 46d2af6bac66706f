# shellcheck shell=bash
# Functions of deploy/local-cluster.sh: start
# Redis, shards and nginx (with a self-signed certificate) as children of the
# calling script, under one work folder (MINO_WORK), on 127.0.0.1 and Unix
# sockets only. Source it; every started process's pid is in MINO_PIDS (a
# restarted one replaces its predecessor there), and mino_stop_all stops them.

MINO_PIDS=()
MINO_NGINX_PID=""
MINO_REDIS_PID=""
# By shard index (id - 1): pid, the upstream entry nginx names (127.0.0.1:PORT
# or unix:PATH) and the admin listener's address (/metrics, /readyz, /admin/).
MINO_SHARD_PIDS=()
MINO_SHARD_ADDRS=()
MINO_SHARD_ADMIN=()

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

# mino_forget_pid PID: takes PID out of MINO_PIDS (it exited; a restart adds
# its successor).
mino_forget_pid() {
  local p kept=()
  for p in "${MINO_PIDS[@]}"; do [ "$p" = "$1" ] || kept+=("$p"); done
  MINO_PIDS=("${kept[@]}")
}

# mino_port_free PORT: true when nothing listens on 127.0.0.1:PORT.
mino_port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# mino_port_setting NAME [SPAN [ALSO]]: exits with a message unless the
# setting NAME holds a port number whose SPAN ports above it are ports too
# (1 to 65535 in all): checked before anything is built or started. ALSO
# names what else the setting may be, for the message.
mino_port_setting() {
  local name=$1 span=${2:-0} also=${3:+", or $3"} value=${!1}
  if [[ "$value" =~ ^[1-9][0-9]{0,4}$ ]] && [ $((value + span)) -le 65535 ]; then return 0; fi
  if [ "$span" -gt 0 ]; then
    mino_die "$name must be a port number, 1 to $((65535 - span))$also (ports up to $name+$span are used; not '$value')"
  fi
  mino_die "$name must be a port number, 1 to 65535$also (not '$value')"
}

# mino_await_port PORT PID: waits up to 15 s for PORT to accept while PID
# lives; status 0 when it does, 1 when PID exited, 2 when time ran out.
mino_await_port() {
  local i
  for i in $(seq 1 150); do
    mino_port_free "$1" || return 0
    mino_alive "$2" || return 1
    sleep 0.1
  done
  return 2
}

# mino_wait_port PORT PID WHAT: mino_await_port, or dies saying why.
mino_wait_port() {
  local st=0
  mino_await_port "$1" "$2" || st=$?
  case "$st" in
    0) ;;
    1) mino_die "$3 exited; see its log in $MINO_WORK" ;;
    *) mino_die "$3 does not listen on 127.0.0.1:$1" ;;
  esac
}

# mino_cert DIR: a self-signed ECDSA certificate for localhost and 127.0.0.1
# (DIR/cert.pem, DIR/key.pem), valid 30 days (self-signed-cert.sh).
mino_cert() {
  bash "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/self-signed-cert.sh" "$1" 30 \
    || mino_die "openssl could not make a certificate"
}

# mino_redis_spawn PORT: starts redis-server on 127.0.0.1:PORT, no persistence
# (MINO_REDIS_PID; its log appended to MINO_WORK/redis.log), without waiting.
mino_redis_spawn() {
  mkdir -p "$MINO_WORK/redis"
  redis-server --port "$1" --bind 127.0.0.1 --save "" --appendonly no --dir "$MINO_WORK/redis" \
    --loglevel warning --logfile "$MINO_WORK/redis.log" &
  MINO_REDIS_PID=$!
  MINO_PIDS+=("$MINO_REDIS_PID")
}

# mino_redis PORT: mino_redis_spawn, then waits until it accepts.
mino_redis() {
  mino_redis_spawn "$1"
  mino_wait_port "$1" "$MINO_REDIS_PID" redis-server
}

# mino_shard_spawn BIN ID REDIS LISTEN ADMIN [FLAG...]: starts shard ID
# listening on LISTEN (127.0.0.1:PORT, port 0 for any, or unix:PATH) with its
# admin listener on ADMIN (127.0.0.1:PORT), clustered over REDIS, without
# waiting. REDIS is a URL (--redis-url), or the flags MINO_REDIS_FLAGS holds
# (starting with --: --redis-cluster ..., --redis-sentinel ... --redis-master ...). Its stderr is appended to MINO_WORK/shard-ID.log (a restart adds to
# the same log). Sets index ID-1 of MINO_SHARD_PIDS.
mino_shard_spawn() {
  local bin=$1 id=$2 redis=$3 listen=$4 admin_at=$5 redis_flags=()
  shift 5
  if [[ $redis == --* ]]; then read -ra redis_flags <<<"$redis"; else redis_flags=(--redis-url "$redis"); fi
  # Made here: the child opens it only once forked, after mino_shard_await may look.
  : >"$MINO_WORK/shard-$id.out"
  MINO_LOG="${MINO_LOG:-info}" "$bin" --listen "$listen" --admin-listen "$admin_at" --shard-id "$id" \
    "${redis_flags[@]}" "$@" >>"$MINO_WORK/shard-$id.out" 2>>"$MINO_WORK/shard-$id.log" &
  MINO_SHARD_PIDS[id - 1]=$!
  MINO_PIDS+=("$!")
}

# mino_shard_await ID: waits up to 15 s each for shard ID's ready lines and
# its /readyz; sets index ID-1 of MINO_SHARD_ADDRS (the upstream entry) and
# MINO_SHARD_ADMIN. Status 0 when ready, else 1 with MINO_ERROR saying why.
mino_shard_await() {
  local id=$1 pid=${MINO_SHARD_PIDS[$1 - 1]} out="$MINO_WORK/shard-$1.out" i addr="" admin=""
  for i in $(seq 1 150); do
    addr=$(sed -n -e 's/.*listening on http:\/\///p' -e 's/.*listening on \(unix:.*\)/\1/p' "$out" | head -n1)
    admin=$(sed -n 's/.*admin on http:\/\///p' "$out" | head -n1)
    [ -n "$addr" ] && [ -n "$admin" ] && break
    mino_alive "$pid" || { MINO_ERROR="shard $id exited; see $MINO_WORK/shard-$id.log"; return 1; }
    sleep 0.1
  done
  [ -n "$addr" ] && [ -n "$admin" ] || { MINO_ERROR="shard $id printed no address"; return 1; }
  for i in $(seq 1 150); do
    curl -fs "http://$admin/readyz" >/dev/null 2>&1 && break
    mino_alive "$pid" || { MINO_ERROR="shard $id exited; see $MINO_WORK/shard-$id.log"; return 1; }
    sleep 0.1
  done
  curl -fs "http://$admin/readyz" >/dev/null 2>&1 || { MINO_ERROR="shard $id is not ready (Redis?)"; return 1; }
  MINO_SHARD_ADDRS[id - 1]=$addr
  MINO_SHARD_ADMIN[id - 1]=$admin
}

# mino_shard BIN ID REDIS LISTEN ADMIN [FLAG...]: mino_shard_spawn, then
# mino_shard_await, or dies saying why.
mino_shard() {
  mino_shard_spawn "$@"
  mino_shard_await "$2" || mino_die "$MINO_ERROR"
}

# mino_nginx HTTPS_PORT HTTP_PORT STATIC_ROOT WORKERS CONNECTIONS: renders
# deploy/nginx/mino.conf.template for the shards started so far (their
# MINO_SHARD_ADDRS) into MINO_WORK/nginx.conf and runs it (mino_nginx_run).
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
  mino_nginx_run "$1"
}

# mino_nginx_spawn: starts nginx with MINO_WORK/nginx.conf in the foreground
# as a child (MINO_NGINX_PID), without waiting (a pid file left by one killed
# is removed first: mino_nginx_await waits for the new one's).
mino_nginx_spawn() {
  rm -f "$MINO_WORK/nginx.pid"
  "$(mino_nginx_bin)" -p "$MINO_WORK" -c "$MINO_WORK/nginx.conf" -g "daemon off;" &
  MINO_NGINX_PID=$!
  MINO_PIDS+=("$MINO_NGINX_PID")
}

# mino_nginx_await HTTPS_PORT PID: returns 0 once nginx (PID) is up: the port
# accepts and nginx wrote its pid file, which it does only once every
# listener is bound (with one port taken by another process, nginx retries
# for a few seconds with the others already accepting, then exits); 1 if it
# exited, 2 if neither within 15 s (as mino_await_port).
mino_nginx_await() {
  local i
  mino_await_port "$1" "$2" || return $?
  for i in $(seq 1 150); do
    [ -s "$MINO_WORK/nginx.pid" ] && return 0
    mino_alive "$2" || return 1
    sleep 0.1
  done
  return 2
}

# mino_nginx_run HTTPS_PORT: mino_nginx_spawn, then waits until nginx is up
# (mino_nginx_await), or dies saying why.
mino_nginx_run() {
  local st=0
  mino_nginx_spawn
  mino_nginx_await "$1" "$MINO_NGINX_PID" || st=$?
  case "$st" in
    0) ;;
    1) mino_die "nginx exited; see $MINO_WORK/logs/error.log" ;;
    *) mino_die "nginx did not start listening on 127.0.0.1:$1 within 15 s" ;;
  esac
}

# mino_stop_all: stops everything started: SIGINT to the shards (they close
# their sockets at once: with every shard stopping, a drain has nowhere to
# send players), SIGTERM to the rest, up to 10 s, then SIGKILL.
mino_stop_all() {
  local i p left
  [ ${#MINO_PIDS[@]} -gt 0 ] || return 0
  for p in "${MINO_SHARD_PIDS[@]}"; do kill -INT "$p" 2>/dev/null || true; done
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
