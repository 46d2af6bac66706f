#!/usr/bin/env bash
# Runs the Autobahn test suite's fuzzing client (wstest) against mino's own
# websocket layer: server/examples/ws_echo.rs, the shard's handshake, hub,
# frame reader, limits and closes with an echo in place of the game (see
# server/src/echo.rs). Prints the count of cases per behavior and exits
# non-zero unless every case passed (scripts/autobahn_summary.py: an
# allow-list of outcomes, itself tested first) or if the suite could not run.
#
#   scripts/autobahn.sh            # every case but 12.* and 13.* (compression)
#   CASES='5.*' scripts/autobahn.sh
#   CASES='1.*,2.*,7.13.*' scripts/autobahn.sh   # several patterns, comma-separated
#
# The suite is Python 2 (wstest 25.10.1 runs on Python 2.7 only):
# scripts/setup.sh installs it in a virtualenv, $AUTOBAHN_VENV
# (~/.cache/mino/autobahn-venv). The report (HTML and JSON a case) goes to
# target/autobahn/report. Everything it starts is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

# The gate first: a summary that let a bad outcome through would make the
# whole run meaningless.
python3 scripts/autobahn_summary.py --self-test

venv="${AUTOBAHN_VENV:-$HOME/.cache/mino/autobahn-venv}"
wstest="$venv/bin/wstest"
if [ ! -x "$wstest" ]; then
  wstest="$(command -v wstest || true)"
fi
if [ -z "$wstest" ] || ! "$wstest" --autobahnversion >/dev/null 2>&1; then
  echo "autobahn: no working wstest (scripts/setup.sh installs it under $venv)" >&2
  exit 2
fi

cases="${CASES:-*}"
# As a JSON list: each comma-separated pattern quoted.
cases_json="\"${cases//,/\",\"}\""
# No permessage-deflate is negotiated. The 9.* performance cases (up to
# 16 MiB messages) stay in: about 6 s here, even in a debug build.
exclude='"12.*", "13.*"'
cargo build -q -p mino-server --example ws_echo
# Where that build put it (scripts/target-dir.sh: as cargo resolves it).
bin="$(bash scripts/target-dir.sh)/debug/examples/ws_echo"

out=target/autobahn
rm -rf "$out"
mkdir -p "$out"
echo_pid=""
cleanup() {
  if [ -n "$echo_pid" ] && kill -0 "$echo_pid" 2>/dev/null; then
    kill -TERM "$echo_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$echo_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$echo_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT

# Made first: the echo's redirections happen after the fork, maybe after the
# first look for its address.
: >"$out/echo.out"
: >"$out/echo.log"
MINO_LOG="${MINO_LOG:-warn}" "$bin" 127.0.0.1:0 >"$out/echo.out" 2>"$out/echo.log" &
echo_pid=$!
addr=""
for _ in $(seq 100); do
  addr="$(sed -n 's|^ws_echo listening on http://||p' "$out/echo.out")"
  [ -n "$addr" ] && break
  kill -0 "$echo_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$addr" ]; then
  echo "autobahn: the echo did not start:" >&2
  cat "$out/echo.log" >&2
  exit 1
fi

cat >"$out/spec.json" <<EOF
{
  "outdir": "$PWD/$out/report",
  "servers": [{"agent": "mino", "url": "ws://$addr/ws"}],
  "cases": [$cases_json],
  "exclude-cases": [$exclude],
  "exclude-agent-cases": {}
}
EOF

echo "autobahn: wstest -m fuzzingclient against ws://$addr/ws (cases $cases, excluded $exclude)"
started=$SECONDS
# wstest writes its progress to stdout; it is kept in the folder.
(cd "$out" && timeout "${AUTOBAHN_TIMEOUT:-900}" "$wstest" -m fuzzingclient -s spec.json >wstest.log 2>&1) || {
  echo "autobahn: wstest failed or timed out (exit $?); the end of target/autobahn/wstest.log:" >&2
  tail -20 "$out/wstest.log" >&2
  exit 1
}
echo "autobahn: ran in $((SECONDS - started)) s"
if ! kill -0 "$echo_pid" 2>/dev/null; then
  echo "autobahn: the echo died during the run:" >&2
  tail -20 "$out/echo.log" >&2
  exit 1
fi

python3 scripts/autobahn_summary.py "$out/report/index.json"
