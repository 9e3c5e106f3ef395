#!/usr/bin/env bash
# Writes the split's two lists again, then builds the split module with them:
# scripts/split/first-visit.txt, the functions a first visit of the
# playground runs, from a trace of a first visit with the whole module; and
# scripts/split/hot-calls.txt, the functions the benchmark's work calls most
# often from those or they from it, from the whole module's calls counted
# (replayground-split count, calls.mjs, hot.py). Run it when the benchmark
# reports that a first visit needed the module's rest (new code on a first
# visit's path goes to the rest until it is listed), or that the split module
# is slower than the whole one.
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
target/split-tool/release/replayground-split count target/split/whole.wasm "$tmp/counted.wasm" "$tmp/edges.tsv"
node scripts/split/calls.mjs "$tmp/counted.wasm" "$tmp/edges.tsv" www/pkg >"$tmp/counts.json"
python3 scripts/split/hot.py "$tmp/edges.tsv" "$tmp/counts.json" scripts/split/first-visit.txt >scripts/split/hot-calls.txt
echo "profile: $(wc -l <scripts/split/hot-calls.txt) names in scripts/split/hot-calls.txt"
scripts/build-wasm.sh
