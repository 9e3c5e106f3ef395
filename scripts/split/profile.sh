#!/usr/bin/env bash
# Writes scripts/split/first-visit.txt again: the functions a first visit of
# the playground runs, from a trace of a first visit with the whole module.
# Run it when the benchmark reports that a first visit needed the module's
# rest (new code on a first visit's path goes to the rest until it is listed).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../common.sh"
load_replayground_env
cd "$REPLAYGROUND_ROOT"
scripts/build-wasm.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -rL www "$tmp/www"
cp target/split/whole.wasm "$tmp/www/pkg/replayground_bg.wasm"
node scripts/split/profile.mjs "$tmp/www" >"$tmp/indices.json"
python3 scripts/split/names.py target/split/whole.wasm "$tmp/indices.json" >scripts/split/first-visit.txt
echo "profile: $(wc -l <scripts/split/first-visit.txt) names in scripts/split/first-visit.txt"
