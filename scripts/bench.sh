#!/usr/bin/env bash
# The benchmark command: measures the engine natively and in headless Chromium
# in one run and writes target/bench/report.json and report.md (a table with
# native, wasm and their ratio, and the machine it ran on).
#
#   scripts/bench.sh            full budget (15 rounds x 2000 operations)
#   scripts/bench.sh --quick    a tiny budget, to check that it runs
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ROUNDS=15
ITERATIONS=2000
if [ "${1:-}" = "--quick" ]; then ROUNDS=2; ITERATIONS=20; fi
"$REPLAYGROUND_ROOT/scripts/setup.sh"
load_replayground_env
cd "$REPLAYGROUND_ROOT"
OUT="$REPLAYGROUND_ROOT/target/bench"
mkdir -p "$OUT"
cargo build -q --release --locked --bin replayground
scripts/build-wasm.sh
# SQLite alone (scripts/sqlite-alone): the floor of the module's size and start.
ALONE="$REPLAYGROUND_ROOT/target/sqlite-alone"
(cd scripts/sqlite-alone && CARGO_TARGET_DIR="$ALONE" wasm-pack --log-level warn build --target web --release \
  --out-dir "$ALONE/pkg" --mode no-install -- --locked)
echo "bench: native ($ROUNDS rounds x $ITERATIONS)" >&2
target/release/replayground bench --json --rounds "$ROUNDS" --iterations "$ITERATIONS" >"$OUT/native.json"
# The whole module the split one was cut from, with the same glue: the
# browser side measures the split against it.
mkdir -p "$OUT/whole"
cp www/pkg/replayground.js "$OUT/whole/"
cp target/split/whole.wasm "$OUT/whole/replayground_bg.wasm"
echo "bench: headless Chromium ($ROUNDS rounds x $ITERATIONS)" >&2
(cd tests/e2e && node bench.mjs "$ROUNDS" "$ITERATIONS") >"$OUT/wasm.json"
WASM=www/pkg/replayground_bg.wasm
# brotli -q 11 of files concatenated: a module and the JS glue that loads it.
br() { cat "$@" | brotli -q 11 -c | wc -c; }
PEERS=tests/e2e/node_modules
# The module is split (scripts/split): $WASM is what a page loads first; its
# rest is fetched after the start, in a file of its own.
REST=www/pkg/replayground_rest.wasm
printf '{"raw": %s, "gzip": %s, "brotli": %s, "restRaw": %s, "restBrotli": %s, "withGlueBrotli": {"replayground": %s, "SQLite alone": %s, "@sqlite.org/sqlite-wasm": %s, "sql.js": %s}}\n' \
  "$(stat -c %s "$WASM")" "$(gzip -9 -c "$WASM" | wc -c)" "$(br "$WASM")" "$(stat -c %s "$REST")" "$(br "$REST")" \
  "$(br "$WASM" www/pkg/replayground.js)" \
  "$(br "$ALONE/pkg/sqlite_alone_bg.wasm" "$ALONE/pkg/sqlite_alone.js")" \
  "$(br "$PEERS/@sqlite.org/sqlite-wasm/dist/sqlite3.wasm" "$PEERS/@sqlite.org/sqlite-wasm/dist/index.mjs")" \
  "$(br "$PEERS/sql.js/dist/sql-wasm-browser.wasm" "$PEERS/sql.js/dist/sql-wasm-browser.js")" >"$OUT/size.json"
# Where the module's bytes go, from the linked module before wasm-opt (it has names).
python3 scripts/wasm_sizes.py target/wasm32-unknown-unknown/release/replayground.wasm >"$OUT/breakdown.json"
python3 scripts/bench_report.py "$OUT/native.json" "$OUT/wasm.json" "$OUT"
cat "$OUT/report.md"
