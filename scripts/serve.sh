#!/usr/bin/env bash
# Quick start, command 1: set up the machine, build the wasm package and the
# book, and serve the playground page on 127.0.0.1 (PORT, default 8080), the
# book at /book/. Prints the URL.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$REPLAYGROUND_ROOT/scripts/setup.sh"
"$REPLAYGROUND_ROOT/scripts/build-wasm.sh"
"$REPLAYGROUND_ROOT/scripts/build-book.sh"
exec python3 "$REPLAYGROUND_ROOT/scripts/serve.py" --port "${PORT:-8080}" "$@"
