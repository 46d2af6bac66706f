#!/usr/bin/env bash
# Two shards behind nginx with TLS, N bots playing over wss through it:
# snapshot gap p95 (own shard and relayed), and the CPU that nginx and the
# shards spend per frame delivered to the bots; nginx reaching the shards
# over loopback TCP, and over Unix sockets, alternating. A thin wrapper: the
# scale runner's nginx section (benches/src/sections/nginx.rs, which says
# how it measures), alone, written under OUT.
#
#   deploy/bench-nginx.sh                      # 1000 bots, TCP then Unix, 3 times each, 30 s each
#   UPSTREAM=tcp deploy/bench-nginx.sh         # one kind only (tcp or unix), REPEAT times
#   BOTS=500 HOLD=20 REPEAT=1 deploy/bench-nginx.sh
#   DIRECT=1 UPSTREAM=tcp deploy/bench-nginx.sh  # control: bots straight to the shards (ws://)
#
# Settings (environment): BOTS (1000), HOLD (30 s), REPEAT (3 runs of each
# kind), UPSTREAM (both; tcp or unix for one kind), DIRECT (0; 1: the bots
# connect to the shards over plain ws, nginx idles), OUT
# (target/bench-nginx: RESULTS.md, and raw/nginx/ with a folder per run,
# loadgen.json and summary.json, and compare.json: each kind's runs and
# medians, the ratio unix / tcp, and whether the kinds' runs overlap).
# Builds the release binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${UPSTREAM:-both}" in
  both) upstream=tcp,unix ;;
  tcp | unix) upstream="$UPSTREAM" ;;
  *) echo "bench-nginx.sh: UPSTREAM must be tcp, unix or both" >&2; exit 2 ;;
esac
args=(--only nginx --nginx-bots "${BOTS:-1000}" --nginx-hold "${HOLD:-30}" --repeat "${REPEAT:-3}"
  --nginx-upstream "$upstream" --results "${OUT:-target/bench-nginx}")
[ "${DIRECT:-0}" != 1 ] || args+=(--nginx-direct)
exec benches/scale.sh "${args[@]}"
