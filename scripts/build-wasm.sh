#!/usr/bin/env bash
# Builds the wasm package the page loads into www/pkg (wasm-pack --target web),
# then splits its module in two (scripts/split): replayground_bg.wasm, the code
# a first visit runs and the functions the benchmark's work calls most often
# from it, and replayground_rest.wasm, the rest, which the glue fetches after
# the start. The whole module stays in target/split/whole.wasm
# (with names: scripts/split/profile.sh reads it).
# Assumes scripts/setup.sh has run; loads its environment.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
load_replayground_env
cd "$REPLAYGROUND_ROOT"
# --mode no-install: wasm-bindgen and wasm-opt come from PATH, never downloaded.
wasm-pack --log-level warn build --target web --release --out-dir www/pkg --mode no-install "$@"
CARGO_TARGET_DIR="$REPLAYGROUND_ROOT/target/split-tool" \
  cargo build -q --release --locked --manifest-path scripts/split/Cargo.toml
mkdir -p target/split
mv www/pkg/replayground_bg.wasm target/split/whole.wasm
target/split-tool/release/replayground-split target/split/whole.wasm \
  www/pkg/replayground_bg.wasm www/pkg/replayground_rest.wasm target/split/names.json \
  scripts/split/first-visit.txt scripts/split/hot-calls.txt
python3 scripts/split/patch_glue.py www/pkg target/split/names.json
