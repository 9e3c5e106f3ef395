#!/usr/bin/env bash
# Builds the book (docs/, mdBook) into www/book/, where scripts/serve.sh serves
# it at /book/ beside the playground. Expects scripts/setup.sh to have run.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
load_replayground_env
cd "$REPLAYGROUND_ROOT"
mdbook build docs >/dev/null 2>&1 || mdbook build docs
python3 scripts/book_check.py
