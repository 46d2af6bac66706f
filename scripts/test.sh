#!/usr/bin/env bash
# Runs every test of mino: the layering of the crates' modules (layers.toml),
# formatting, lints, the Rust workspace (unit and integration tests against the
# real server, Redis, nginx), and the browser client (type check, lint, unit
# tests, end-to-end in real Chromium).
# It first installs what the tests need, when missing (scripts/setup.sh: on a
# fresh Debian 12 machine all of it but a Python 2.7 for the Autobahn suite,
# which MINO_SKIP_AUTOBAHN=1 goes without).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }
# First what the steps below run (python3 among them): a second or two when
# everything is installed already.
bash scripts/setup.sh
# What setup.sh put outside the system's folders (rustup's cargo, flatc):
# its PATH stayed in its own process.
# shellcheck source=scripts/tools-env.sh
. scripts/tools-env.sh
# Where cargo builds, as cargo resolves it (CARGO_TARGET_DIR, a cargo
# config's build.target-dir, else target/); the test kit finds its binaries
# from the running test's own path (testkit/src/shard.rs).
target="$(bash scripts/target-dir.sh)"

# Then, as it takes a second: no module imports from a layer above it.
step "layers (layers.toml)"
python3 scripts/layers_test.py
python3 scripts/layers.py

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

step "fuzz targets compile (fuzz/, a workspace of its own that cargo-fuzz runs)"
# Their checks run as tests (schema/tests/fuzz_corpus.rs); the targets
# themselves are built only by cargo-fuzz, so without this one could call an
# API long gone and nobody would know.
cargo check --manifest-path fuzz/Cargo.toml --bins

step "fail points: a panic in the shard core, ticks overrunning their period (feature failpoints)"
# The shard rebuilt with fail points, which only these tests set. First, in
# the shared target folder: the build of the next step puts the binary as
# shipped back in $target/debug (cargo rebuilds only mino-server and the few
# crates whose features differ), and everything after it (the workspace's
# tests, the browser's end-to-end tests, a later npm run e2e by hand) runs
# that one. (A target folder of its own built the whole dependency tree a
# second time at every CI run.)
cargo clippy -q -p mino-server --features failpoints --all-targets -- -D warnings
cargo test -p mino-server --features failpoints --test core_panics --test overrun

step "cargo build (binaries used by the tests)"
cargo build --workspace --bins

step "cargo test"
cargo test --workspace --exclude mino-deploy --no-fail-fast
# The deployment tests each run nginx, Redis, two shards and bots: one at a
# time, so two cores are not shared by several clusters at once.
cargo test -p mino-deploy --no-fail-fast -- --test-threads=1

step "Autobahn websocket test suite (scripts/autobahn.sh)"
# mino's own websocket layer with an echo in place of the game; fails unless
# every case passes. Needs the suite's Python 2.7 (scripts/setup.sh installs
# it); only MINO_SKIP_AUTOBAHN=1 skips it.
if [ "${MINO_SKIP_AUTOBAHN:-0}" = 1 ]; then
  echo "SKIPPED: MINO_SKIP_AUTOBAHN=1"
else
  bash scripts/autobahn.sh
fi

if [ -f client-web/package.json ]; then
  step "client-web: check, unit tests, build, end-to-end"
  (
    cd client-web
    npm run check
    npm test
    npm run build
    # The binary as shipped, from the build above.
    MINO_SERVER_BIN="$target/debug/mino-server" npm run e2e
    # Behind the test kit's lossy link (a private network namespace and a TUN
    # device: root), 2 % loss each way, 40 ms round trip: e2e/lossy/.
    MINO_SERVER_BIN="$target/debug/mino-server" npm run e2e:lossy
  )
fi

step "no Redis file left in the checkout"
# Every redis-server of the tests (the browser's too) works in its own
# temporary folder (--dir): a dump.rdb here means one was started from the
# checkout. Last, after everything that starts one.
stray="$(find . -path ./target -prune -o -path ./client-web/node_modules -prune -o \( -name dump.rdb -o -name 'appendonly*' -o -name 'nodes-*.conf' \) -print)"
if [ -n "$stray" ]; then
  printf 'Redis left files in the checkout:\n%s\n' "$stray" >&2
  exit 1
fi

step "all tests passed"
