#!/usr/bin/env bash
# Prints the folder cargo builds this workspace into, as cargo resolves it
# (CARGO_TARGET_DIR, a cargo config's `build.target-dir`, else target/ at
# the workspace's root), as an absolute path: where the scripts find the
# binaries a build made.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null 2>&1 || {
  echo "target-dir: no cargo on the PATH (scripts/setup.sh installs it; then . scripts/tools-env.sh)" >&2
  exit 1
}
# cargo metadata's one line of JSON: its "target_directory".
dir="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
[ -n "$dir" ] || { echo "target-dir: cargo metadata named no target directory" >&2; exit 1; }
echo "$dir"
