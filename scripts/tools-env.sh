# Sourced, not run (scripts/setup.sh, scripts/test.sh): puts on the PATH the
# tools scripts/setup.sh installs outside the system's folders, rustup's cargo
# (CARGO_HOME/bin, ~/.cargo/bin) and flatc (a virtualenv of its own, linked
# from MINO_TOOLS/bin, ~/.cache/mino/bin), for this shell and what it starts:
# a script run as a child cannot hand its PATH back. A folder already on the
# PATH, or not there at all, is left alone: where the tools are installed
# already, nothing changes.
MINO_TOOLS="${MINO_TOOLS:-$HOME/.cache/mino}"
for mino_dir in "${CARGO_HOME:-$HOME/.cargo}/bin" "$MINO_TOOLS/bin"; do
  case ":$PATH:" in
    *":$mino_dir:"*) ;;
    *) if [ -d "$mino_dir" ]; then PATH="$mino_dir:$PATH"; fi ;;
  esac
done
unset mino_dir
export PATH MINO_TOOLS
