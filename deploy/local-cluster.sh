#!/usr/bin/env bash
# mino on one machine the way it is deployed: Redis, N shard processes
# clustered over it, and nginx with TLS (a self-signed certificate made here)
# in front, reaching the shards over Unix sockets, serving the browser client.
# Everything runs under one folder and on 127.0.0.1 only. Prints the URLs to
# open; Ctrl-C stops it all.
#
#   deploy/local-cluster.sh                    # 2 shards at https://localhost:8443/
#   deploy/local-cluster.sh --restart          # and restart whatever dies (as systemd would)
#   SHARDS=3 HTTPS_PORT=9443 deploy/local-cluster.sh
#   BOTS=50 deploy/local-cluster.sh            # and 50 walking bots through nginx
#   UPSTREAM=tcp deploy/local-cluster.sh       # shards on loopback TCP ports instead
#   PROFILE=debug deploy/local-cluster.sh      # debug binaries
#   REDIS=cluster deploy/local-cluster.sh      # on a 6-node Redis Cluster
#   REDIS=sentinel deploy/local-cluster.sh     # primary, replica, 3 sentinels
#
# It is there to show failover: kill -9 a shard (its pid is printed) and its
# players resume on the others while the rest keeps running. The script says
# which process died and how, where its log is, and how to restart it:
# `kill -USR1 <the script's pid>` restarts every process that died, and with
# --restart (or RESTART=1) each is restarted by itself after a second (at
# most 5 times a minute, then it says so and leaves it stopped). Logs are kept
# when it stops.
#
# Settings (environment): SHARDS (2), HTTPS_PORT (8443), HTTP_PORT (8080,
# redirects to https on HTTPS_PORT), REDIS (node, cluster or sentinel),
# REDIS_PORT (6399; the first of 6 with cluster, of 5 with sentinel),
# ADMIN_PORT (9100: shard N's admin listener on 127.0.0.1:ADMIN_PORT+N),
# UPSTREAM (unix: shard N on WORK/shard-N.sock; tcp: on
# 127.0.0.1:SHARD_PORT+N), SHARD_PORT (8100), BOTS (0), PROFILE (release),
# BIN_DIR (unset: cargo's target folder, then /PROFILE, built with cargo at
# every start; a folder given is used as it is), STATIC_DIR
# (client-web/dist, built with npm at every start when npm exists),
# CONSOLE_DIR (client-web/dist-admin: the admin console each admin listener
# serves at /admin/; built with the client),
# RESTART (0), WORK (a new folder under the temporary folder: logs, sockets,
# certificate, configuration), WEBTRANSPORT (on: each shard also takes
# WebTransport sessions on a loopback UDP port, which the page learns from
# /webtransport through nginx and then reaches directly; off: websocket
# only), WEBTRANSPORT_PORT (0: a free UDP port for each shard, printed; else
# shard N on UDP 127.0.0.1:WEBTRANSPORT_PORT+N). A port setting out of
# range is refused before anything is built.
# With REDIS=cluster or sentinel the Redis nodes are not watched nor
# restarted: a Redis node killed is the Redis failover to show.
# Needs redis-server, nginx, openssl, envsubst, curl (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=deploy/local-lib.sh
. deploy/local-lib.sh

for arg in "$@"; do
  case "$arg" in
    --restart) RESTART=1 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) mino_die "unknown argument '$arg' (--restart, --help)" ;;
  esac
done

SHARDS="${SHARDS:-2}"
HTTPS_PORT="${HTTPS_PORT:-8443}"
HTTP_PORT="${HTTP_PORT:-8080}"
REDIS="${REDIS:-node}"
REDIS_PORT="${REDIS_PORT:-6399}"
ADMIN_PORT="${ADMIN_PORT:-9100}"
UPSTREAM="${UPSTREAM:-unix}"
SHARD_PORT="${SHARD_PORT:-8100}"
BOTS="${BOTS:-0}"
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
RESTART="${RESTART:-0}"
WEBTRANSPORT="${WEBTRANSPORT:-on}"
WEBTRANSPORT_PORT="${WEBTRANSPORT_PORT:-0}"

mino_need redis-server redis-cli nginx openssl envsubst curl
case "$REDIS" in
  node | cluster) ;;
  sentinel) mino_need redis-sentinel ;;
  *) mino_die "REDIS must be node, cluster or sentinel" ;;
esac
[[ "$SHARDS" =~ ^[1-9][0-9]{0,3}$ ]] || mino_die "SHARDS must be a positive number"
[[ "$BOTS" =~ ^[0-9]{1,9}$ ]] || mino_die "BOTS must be a number"
case "$UPSTREAM" in unix | tcp) ;; *) mino_die "UPSTREAM must be unix or tcp" ;; esac
case "$WEBTRANSPORT" in on | off) ;; *) mino_die "WEBTRANSPORT must be on or off" ;; esac
# Every port setting, with the ports above it that are used too: a port
# out of range would otherwise fail only after the builds.
mino_port_setting HTTPS_PORT
mino_port_setting HTTP_PORT
case "$REDIS" in
  node) mino_port_setting REDIS_PORT ;;
  # 6 nodes, each with its cluster bus port 10000 above.
  cluster) mino_port_setting REDIS_PORT 10005 ;;
  sentinel) mino_port_setting REDIS_PORT 4 ;;
esac
mino_port_setting ADMIN_PORT "$SHARDS"
mino_port_setting SHARD_PORT "$SHARDS"
[ "$WEBTRANSPORT_PORT" = 0 ] || mino_port_setting WEBTRANSPORT_PORT "$SHARDS" "0 (a free port each)"
ports=("$HTTPS_PORT" "$HTTP_PORT" "$REDIS_PORT")
for id in $(seq 1 "$SHARDS"); do
  ports+=($((ADMIN_PORT + id)))
  [ "$UPSTREAM" = tcp ] && ports+=($((SHARD_PORT + id)))
done
for p in "${ports[@]}"; do
  mino_port_free "$p" || mino_die "port $p is in use (set HTTPS_PORT, HTTP_PORT, REDIS_PORT, ADMIN_PORT or SHARD_PORT)"
done

flag=(); [ "$PROFILE" = release ] && flag=(--release)
# The default folders are built every time, as scripts/play.sh does (cargo and
# vite do nothing much when nothing changed): binaries or a page left from an
# older checkout would speak another protocol than each other (4004). Folders
# given are taken as they are. The same packages as scripts/play.sh, bots or
# none: cargo unifies the features of the packages built together (the
# loadgen's turn on more of tokio-tungstenite and nix), so another set would
# make another mino-server, and each script would rebuild it after the other
# (minutes).
if [ -n "$build_bins" ]; then
  cargo build "${flag[@]}" -p mino-server -p mino-loadgen
fi
for bin in mino-server $([ "$BOTS" -gt 0 ] && echo mino-loadgen); do
  [ -x "$BIN_DIR/$bin" ] || mino_die "no $BIN_DIR/$bin (set BIN_DIR to the folder of the built binaries)"
done

if [ "$STATIC_DIR" = client-web/dist ] || [ "$CONSOLE_DIR" = client-web/dist-admin ]; then
  if command -v npm >/dev/null 2>&1; then
    (cd client-web && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm run build)
  fi
fi
[ -f "$STATIC_DIR/index.html" ] || mino_die "no $STATIC_DIR/index.html: build the client (cd client-web && npm run build) or set STATIC_DIR"
STATIC_DIR="$(cd "$STATIC_DIR" && pwd)"
console_flags=()
if [ -f "$CONSOLE_DIR/index.html" ]; then
  CONSOLE_DIR="$(cd "$CONSOLE_DIR" && pwd)"
  console_flags=(--admin-console-dir "$CONSOLE_DIR")
else
  echo "$(basename "$0"): no admin console in $CONSOLE_DIR (cd client-web && npm run build:admin); the admin API still answers" >&2
fi

if [ -n "${WORK:-}" ]; then
  mkdir -p "$WORK"
  MINO_WORK="$(cd "$WORK" && pwd)"
else
  MINO_WORK="$(mktemp -d -t mino-local-XXXXXX)"
fi
cleanup() {
  trap - EXIT INT TERM USR1
  echo
  echo "$(basename "$0"): stopping; logs kept in $MINO_WORK"
  mino_stop_all
  rm -rf "$MINO_WORK/temp" "$MINO_WORK/redis"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
restart_asked=0
trap 'restart_asked=1' USR1

# spawn_shard ID: starts shard ID on its socket (or port) and admin port,
# the same ones after a restart, so nginx's upstream still names it.
spawn_shard() {
  local id=$1 listen="unix:$MINO_WORK/shard-$1.sock"
  [ "$UPSTREAM" = tcp ] && listen="127.0.0.1:$((SHARD_PORT + id))"
  local wt=()
  if [ "$WEBTRANSPORT" = on ]; then
    local udp=0
    [ "$WEBTRANSPORT_PORT" -gt 0 ] && udp=$((WEBTRANSPORT_PORT + id))
    wt=(--webtransport-listen "127.0.0.1:$udp")
  fi
  mino_shard_spawn "$BIN_DIR/mino-server" "$id" "$MINO_REDIS_FLAGS" "$listen" "127.0.0.1:$((ADMIN_PORT + id))" \
    "${console_flags[@]}" "${wt[@]}"
}

# webtransport_of ID: shard ID's WebTransport address as it printed it (empty: none).
webtransport_of() {
  sed -n 's/.*webtransport on https:\/\///p' "$MINO_WORK/shard-$1.out" 2>/dev/null | tail -n1
}

# spawn_bots: BOTS walking bots through nginx (MINO_BOTS_PID).
MINO_BOTS_PID=""
spawn_bots() {
  "$BIN_DIR/mino-loadgen" --url "wss://127.0.0.1:$HTTPS_PORT/ws" --ca-file "$MINO_WORK/tls/cert.pem" \
    --bots "$BOTS" --ramp 20 --duration 24h --quiet >/dev/null 2>>"$MINO_WORK/loadgen.log" &
  MINO_BOTS_PID=$!
  MINO_PIDS+=("$MINO_BOTS_PID")
}

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
  spawn_shard "$id"
  mino_shard_await "$id" || mino_die "$MINO_ERROR"
done
mino_nginx "$HTTPS_PORT" "$HTTP_PORT" "$STATIC_DIR" 1 4096
[ "$BOTS" -gt 0 ] && spawn_bots

# The processes watched: role -> pid ("" once dead and not restarted).
declare -A pid_of=([nginx]="$MINO_NGINX_PID")
[ "$REDIS" = node ] && pid_of[redis]="$MINO_REDIS_PID"
for id in $(seq 1 "$SHARDS"); do pid_of["shard-$id"]="${MINO_SHARD_PIDS[id - 1]}"; done
[ "$BOTS" -gt 0 ] && pid_of[bots]="$MINO_BOTS_PID"
# The roles in the order they are restarted (Redis before the shards; one
# Redis node only: a Redis Cluster or Sentinel fails over by itself).
roles=()
[ "$REDIS" = node ] && roles+=(redis)
for id in $(seq 1 "$SHARDS"); do roles+=("shard-$id"); done
roles+=(nginx)
[ "$BOTS" -gt 0 ] && roles+=(bots)
# role -> the times (s since the script started) of its recent automatic restarts.
declare -A restarts_of=()

shard_lines() {
  local id
  for id in $(seq 1 "$SHARDS"); do
    local wt
    wt=$(webtransport_of "$id")
    printf '  shard %s  pid %-7s %s   admin http://%s/%s\n' "$id" "${pid_of[shard-$id]:-(stopped)}" \
      "${MINO_SHARD_ADDRS[id - 1]}" "${MINO_SHARD_ADMIN[id - 1]}" "${wt:+   webtransport udp $wt}"
  done
}

# How to run WebTransport bots: they read each shard's /webtransport at its
# own ws:// address (nginx carries no WebTransport), so only over TCP.
wt_bots=""
if [ "$WEBTRANSPORT" = on ] && [ "$UPSTREAM" = tcp ]; then
  wt_urls=""
  for addr in "${MINO_SHARD_ADDRS[@]}"; do wt_urls+=" --url ws://$addr/ws"; done
  wt_bots="
         $BIN_DIR/mino-loadgen$wt_urls --transport webtransport --bots 20   # or --transport mix"
elif [ "$WEBTRANSPORT" = on ]; then
  wt_bots="
         WebTransport bots (--transport webtransport or mix) need each shard's own ws:// URL: start with UPSTREAM=tcp"
fi

# How to show a Redis failover, with more than one Redis node.
redis_fail=""
case "$REDIS" in
  cluster) redis_fail="
  fail   kill -9 the primary of the place: redis-cli --user admin --pass change-this-admin-password -p $REDIS_PORT cluster nodes" ;;
  sentinel) redis_fail="
  fail   kill -9 the primary: redis-cli --user mino --pass change-this-password -p $((REDIS_PORT + 2)) sentinel get-master-addr-by-name mino" ;;
esac

cat <<EOF

mino is running: $SHARDS shards behind nginx (upstream over $UPSTREAM), $MINO_REDIS_DESC${MINO_REDIS_PID:+ (pid $MINO_REDIS_PID)}, nginx pid $MINO_NGINX_PID.

$(shard_lines)

  open   https://localhost:$HTTPS_PORT/   (self-signed certificate: accept the browser's warning,
         or start Chromium with --ignore-certificate-errors; WebGPU needs the https page)
         http://localhost:$HTTP_PORT/ redirects there
  admin  http://${MINO_SHARD_ADMIN[0]}/admin/   (the admin console: every shard, drains, kicks; any shard's admin port serves it)
  bots   $BIN_DIR/mino-loadgen --url wss://127.0.0.1:$HTTPS_PORT/ws --ca-file $MINO_WORK/tls/cert.pem --bots 20$wt_bots
  shards curl http://${MINO_SHARD_ADMIN[0]}/metrics   (admin listeners: not reachable through nginx)
  logs   $MINO_WORK
  fail   kill -9 <a shard's pid>: its players resume on the others; this script says so and keeps the rest running$redis_fail
  script pid $$ (kill -USR1 $$ restarts whatever died)$([ "$RESTART" = 1 ] && echo "; --restart: restarted by itself")

Ctrl-C stops everything.
EOF

# describe STATUS: how a process ended, from its wait status.
describe() {
  if [ "$1" -gt 128 ]; then
    echo "was killed by SIG$(kill -l $(($1 - 128)) 2>/dev/null || echo "$(($1 - 128))")"
  else
    echo "exited with status $1"
  fi
}

# consequence ROLE: what its death means for the rest.
consequence() {
  case "$1" in
    shard-*) echo "Redis, nginx and the other shards keep running; its players resume on the other shards" ;;
    redis) echo "the shards keep serving their own players but not each other's until Redis is back" ;;
    nginx) echo "the shards keep running, but nobody reaches them through https until nginx is back" ;;
    bots) echo "the bots are gone; the cluster keeps running" ;;
  esac
}

# log_of ROLE: the file its output goes to.
log_of() {
  case "$1" in
    redis) echo "$MINO_WORK/redis.log" ;;
    nginx) echo "$MINO_WORK/logs/error.log" ;;
    bots) echo "$MINO_WORK/loadgen.log" ;;
    *) echo "$MINO_WORK/$1.log" ;;
  esac
}

# restart ROLE: starts ROLE again on its port or socket and waits until it
# serves; says how it went. Never exits the script.
restart() {
  local role=$1 st=0 pid
  case "$role" in
    shard-*)
      spawn_shard "${role#shard-}"
      pid=${MINO_SHARD_PIDS[${role#shard-} - 1]}
      pid_of[$role]=$pid
      mino_shard_await "${role#shard-}" || st=1
      ;;
    redis)
      mino_redis_spawn "$REDIS_PORT"
      pid=$MINO_REDIS_PID
      pid_of[$role]=$pid
      mino_await_port "$REDIS_PORT" "$pid" || st=1
      MINO_ERROR="Redis did not come back; see $(log_of redis)"
      ;;
    nginx)
      mino_nginx_spawn
      pid=$MINO_NGINX_PID
      pid_of[$role]=$pid
      mino_nginx_await "$HTTPS_PORT" "$pid" || st=1
      MINO_ERROR="nginx did not come back; see $(log_of nginx)"
      ;;
    bots)
      spawn_bots
      pid=$MINO_BOTS_PID
      pid_of[$role]=$pid
      ;;
  esac
  if [ "$st" = 0 ]; then
    echo "$(basename "$0"): $role restarted (pid $pid)"
  else
    echo "$(basename "$0"): $role did not come back: $MINO_ERROR"
  fi
}

# may_restart ROLE: true when ROLE restarted fewer than 5 times in the last 60 s
# (and records this restart).
may_restart() {
  local role=$1 t kept=()
  for t in ${restarts_of[$role]:-}; do [ $((SECONDS - t)) -lt 60 ] && kept+=("$t"); done
  [ "${#kept[@]}" -lt 5 ] || return 1
  kept+=("$SECONDS")
  restarts_of[$role]="${kept[*]}"
}

# Watch until Ctrl-C: report each process that ends, restart on request.
# pid_of[ROLE] is "" for a process that died and awaits a restart, "-" for one
# left stopped after too many automatic restarts. Its stderr goes nowhere:
# bash's own notice of a child killed by a signal would repeat what the
# report says.
set +e
watch() {
while :; do
  sleep 0.5
  for role in "${roles[@]}"; do
    pid=${pid_of[$role]}
    case "$pid" in "" | -) continue ;; esac
    mino_alive "$pid" && continue
    wait "$pid" 2>/dev/null
    status=$?
    pid_of[$role]=""
    mino_forget_pid "$pid"
    echo
    echo "$(basename "$0"): $role (pid $pid) $(describe "$status")."
    echo "  $(consequence "$role")."
    echo "  log      $(log_of "$role")"
    if [ "$RESTART" = 1 ]; then
      echo "  restart  in 1 s (--restart)"
    else
      echo "  restart  kill -USR1 $$   (restarts every process that died; or start this script with --restart)"
    fi
  done
  for role in "${roles[@]}"; do
    case "${pid_of[$role]}" in
      "") [ "$restart_asked" = 1 ] || [ "$RESTART" = 1 ] || continue ;;
      -) [ "$restart_asked" = 1 ] || continue ;;
      *) continue ;;
    esac
    if [ "$restart_asked" != 1 ]; then
      if ! may_restart "$role"; then
        echo "$(basename "$0"): $role died 5 times within a minute; left stopped (kill -USR1 $$ to try again)"
        pid_of[$role]="-"
        continue
      fi
      sleep 1
    fi
    restart "$role"
  done
  restart_asked=0
done
}
watch 2>/dev/null
