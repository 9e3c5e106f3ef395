#!/usr/bin/env bash
# Builds the book (docs/, mdBook) into www/book/, where scripts/serve.sh serves
# it at /book/ beside the playground. Expects scripts/setup.sh to have run.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
load_replayground_env
cd "$REPLAYGROUND_ROOT"
# The preprocessor that turns `replayground` blocks into live players, and
# checks their designs, is the command line's `book-preprocess`.
cargo build -q --release --locked --bin replayground
export PATH="$REPLAYGROUND_ROOT/target/release:$PATH"
# Quiet unless it fails: then again, with mdBook's and the preprocessor's words.
mdbook build docs >/dev/null 2>&1 || mdbook build docs
python3 scripts/book_check.py
