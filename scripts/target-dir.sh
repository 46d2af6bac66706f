#!/usr/bin/env bash
# Prints the folder cargo builds this workspace into, as cargo resolves it
# (CARGO_TARGET_DIR, a cargo config's `build.target-dir`, else target/ at
# the workspace's root), as an absolute path: where the scripts find the
# binaries a build made.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo metadata --format-version 1 --no-deps \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])'
