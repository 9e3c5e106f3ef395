#!/usr/bin/env bash
# Builds the wasm package the page loads into www/pkg (wasm-pack --target web).
# Assumes scripts/setup.sh has run; loads its environment.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
load_replayground_env
cd "$REPLAYGROUND_ROOT"
# --mode no-install: wasm-bindgen and wasm-opt come from PATH, never downloaded.
wasm-pack --log-level warn build --target web --release --out-dir www/pkg --mode no-install "$@"
