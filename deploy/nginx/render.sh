#!/usr/bin/env bash
# Renders deploy/nginx/mino.conf.template into an nginx configuration on
# stdout. Every setting is an environment variable; unset ones take the
# defaults below, which are the paths documented in deploy/README.md (the
# shipped deploy/nginx/mino.conf is exactly this script's output with no
# variable set, and a test keeps it so).
#
#   deploy/nginx/render.sh > /etc/mino/nginx/mino.conf
#   MINO_SHARDS="10.0.0.11:8080 10.0.0.12:8080 10.0.0.13:8080" \
#   MINO_SERVER_NAME=play.example.com deploy/nginx/render.sh > mino.conf
#   MINO_SHARDS="unix:/run/mino/shard-1.sock unix:/run/mino/shard-2.sock" \
#   deploy/nginx/render.sh > mino.conf   # shards on this machine, over Unix sockets
#   deploy/nginx/render.sh --check       # render the defaults and diff with mino.conf
#
# Needs bash and envsubst (Debian: gettext-base).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

# Shard processes, separated by spaces: "HOST:PORT", or "unix:PATH" for a
# shard on this machine listening on a Unix socket (mino-server --listen
# unix:PATH; cheaper per frame than loopback TCP). Each becomes one server of
# the upstream, with passive health checks (MAX_FAILS failed attempts within
# FAIL_TIMEOUT mark a shard down for FAIL_TIMEOUT).
# The default only when unset: set and empty is a mistake, refused below.
: "${MINO_SHARDS=127.0.0.1:8081 127.0.0.1:8082}"
: "${MINO_UPSTREAM_MAX_FAILS:=1}"
: "${MINO_UPSTREAM_FAIL_TIMEOUT:=5s}"

: "${MINO_SERVER_NAME:=mino.example.com}"
: "${MINO_HTTPS_LISTEN:=443}"
: "${MINO_HTTP_LISTEN:=80}"
# The https port browsers reach, for the plain-http redirect: by default the
# port of MINO_HTTPS_LISTEN (a port forward in front may change it).
: "${MINO_HTTPS_PUBLIC_PORT:=}"
: "${MINO_TLS_CERT:=/etc/mino/tls/fullchain.pem}"
: "${MINO_TLS_KEY:=/etc/mino/tls/privkey.pem}"
: "${MINO_STATIC_ROOT:=/usr/share/mino/client}"
# Served on plain http at /.well-known/acme-challenge/ for certificate renewals.
: "${MINO_ACME_ROOT:=/var/lib/mino/acme}"

# Websocket silence allowed each way; above the shards' ping interval (5 s).
: "${MINO_PROXY_TIMEOUT:=20s}"

: "${MINO_NGINX_USER:=www-data}"
: "${MINO_NGINX_WORKERS:=auto}"
# worker_connections per worker (two per player); the descriptor limit must
# cover them.
: "${MINO_NGINX_CONNECTIONS:=32768}"
: "${MINO_NGINX_NOFILE:=65536}"
: "${MINO_NGINX_SHUTDOWN_TIMEOUT:=60s}"
: "${MINO_NGINX_PID:=/run/mino-nginx.pid}"
: "${MINO_NGINX_ERROR_LOG:=/var/log/nginx/mino-error.log}"
: "${MINO_NGINX_ACCESS_LOG:=/var/log/nginx/mino-access.log}"
: "${MINO_NGINX_TEMP:=/var/lib/nginx}"

check=0
case "${1:-}" in
  --check) check=1 ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

command -v envsubst >/dev/null 2>&1 || { echo "render.sh: needs envsubst (apt-get install gettext-base)" >&2; exit 1; }

# Each shard is listed twice: as a primary server with the passive health
# check, and as a backup without one (see the template for why).
primaries=""
backups=""
for shard in $MINO_SHARDS; do
  if ! [[ "$shard" =~ ^[A-Za-z0-9._-]+:[0-9]{1,5}$|^\[[0-9A-Fa-f:]+\]:[0-9]{1,5}$|^unix:/[A-Za-z0-9._/@+-]+$ ]]; then
    echo "render.sh: MINO_SHARDS entry '$shard' is not HOST:PORT or unix:/PATH" >&2
    exit 1
  fi
  port="${shard##*:}"
  if [[ "$shard" != unix:* ]] && { [ "$((10#$port))" -lt 1 ] || [ "$((10#$port))" -gt 65535 ]; }; then
    echo "render.sh: MINO_SHARDS entry '$shard': port $port is not 1 to 65535" >&2
    exit 1
  fi
  primaries+="        server ${shard} max_fails=${MINO_UPSTREAM_MAX_FAILS} fail_timeout=${MINO_UPSTREAM_FAIL_TIMEOUT};"$'\n'
  backups+="        server ${shard} backup max_fails=0;"$'\n'
done
[ -n "$primaries" ] || { echo "render.sh: MINO_SHARDS is empty" >&2; exit 1; }
MINO_UPSTREAM_SERVERS="${primaries}${backups%$'\n'}"

# The redirect names the https port unless it is https's own (443).
https_port="$MINO_HTTPS_PUBLIC_PORT"
if [ -z "$https_port" ]; then
  listen_addr="${MINO_HTTPS_LISTEN%% *}"
  https_port="${listen_addr##*:}"
fi
if ! [[ "$https_port" =~ ^[0-9]{1,5}$ ]]; then
  echo "render.sh: no https port in MINO_HTTPS_LISTEN '$MINO_HTTPS_LISTEN' (set MINO_HTTPS_PUBLIC_PORT)" >&2
  exit 1
fi
MINO_HTTPS_REDIRECT_PORT=""
[ "$https_port" = 443 ] || MINO_HTTPS_REDIRECT_PORT=":$https_port"

vars=(MINO_UPSTREAM_SERVERS MINO_HTTPS_REDIRECT_PORT MINO_SERVER_NAME MINO_HTTPS_LISTEN MINO_HTTP_LISTEN MINO_TLS_CERT MINO_TLS_KEY
  MINO_STATIC_ROOT MINO_ACME_ROOT MINO_PROXY_TIMEOUT MINO_NGINX_USER MINO_NGINX_WORKERS MINO_NGINX_CONNECTIONS
  MINO_NGINX_NOFILE MINO_NGINX_SHUTDOWN_TIMEOUT MINO_NGINX_PID MINO_NGINX_ERROR_LOG MINO_NGINX_ACCESS_LOG
  MINO_NGINX_TEMP)
shell_format=""
for v in "${vars[@]}"; do
  export "${v?}"
  shell_format+="\${$v} "
done

if [ "$check" = 1 ]; then
  diff -u "$here/mino.conf" <(envsubst "$shell_format" < "$here/mino.conf.template") \
    && echo "render.sh: mino.conf is the template rendered with the defaults"
else
  envsubst "$shell_format" < "$here/mino.conf.template"
fi
