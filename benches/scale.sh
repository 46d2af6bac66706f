#!/usr/bin/env bash
# benches/scale.sh: mino's scale runner. A thin wrapper: builds and runs the
# Rust runner (benches/src/bin/scale.rs, `cargo run --release -p
# mino-benches --bin scale`), which starts Redis, shard processes, nginx and
# the loadgen on this machine, measures, and writes benches/RESULTS.md plus
# the charts and the raw results under benches/results/. Every option is the
# runner's: benches/scale.sh --help. What each section measures:
# benches/README.md.
#
#   benches/scale.sh                    # full: all 13 sections, about an hour and a quarter on 2 cores
#   benches/scale.sh --quick            # the same sections once, short holds (untimed; benches/README.md, "How long")
#   benches/scale.sh --only peer        # one section again; the others' results are kept
#   benches/scale.sh --report-only      # rewrite RESULTS.md and the charts from results/raw
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec cargo run --quiet --release --manifest-path "$ROOT/Cargo.toml" -p mino-benches --bin scale -- "$@"
