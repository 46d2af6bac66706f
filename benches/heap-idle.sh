#!/usr/bin/env bash
# benches/heap-idle.sh: a heap profile of idle websockets (issue 17). A thin
# wrapper of the benches' heap-idle binary (benches/src/heap.rs): runs
# mino-server under heaptrack with N idle bots (mino-loadgen idle), kills it
# with SIGKILL during the hold, so what heaptrack calls "leaked" is exactly
# what was live with every socket open, and prints the live heap per
# connection and its biggest allocation sites.
#
# usage: benches/heap-idle.sh [N] [BIN_DIR] [-- server flags...]
#   N        idle websockets (default 10000)
#   BIN_DIR  where mino-server (built with --no-default-features) and
#            mino-loadgen are (default: built into $CARGO_TARGET_DIR/heap/release, or target/heap/release)
#   flags    added to the server's (default: the idle section's, IDLE_FLAGS in benches/src/sections/idle.rs)
# Needs heaptrack (apt install heaptrack). Loopback only; stops by itself.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec cargo run --quiet --release --manifest-path "$ROOT/Cargo.toml" -p mino-benches --bin heap-idle -- "$@"
