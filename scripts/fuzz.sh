#!/usr/bin/env bash
# Coverage-guided fuzzing (cargo fuzz / libFuzzer) of the schedule decoder,
# the input parsers behind permalinks, the page and the JS exports, and the
# scenario-file parser; and designs that run (the design target builds
# generated designs and runs them under the engine's budgets).
#
#   scripts/fuzz.sh          5 minutes per target (the longer run)
#   scripts/fuzz.sh 10       10 seconds per target (what the test suite runs)
#
# Crashes are saved under tests/fuzz/artifacts/; each one found becomes a
# regression test in src/input.rs or src/sim/schedule.rs.
# cargo fuzz needs -Z flags: RUSTC_BOOTSTRAP=1 lets the stable compiler take
# them; -s none skips the sanitizer (its runtime ships with nightly only).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
SECONDS_PER_TARGET=${1:-300}
load_replayground_env
cd "$REPLAYGROUND_ROOT"
total=0
for target in schedule inputs permalink scenario design; do
    log=$(mktemp)
    # The scenario parser starts from the conformance set's files.
    if [ "$target" = scenario ]; then
        mkdir -p tests/fuzz/corpus/scenario
        cp tests/conformance/*.toml tests/fuzz/corpus/scenario/
    fi
    # Designs start from choices of every length (fixed seeds): a few bytes
    # choose little more than one attempt of one step.
    if [ "$target" = design ]; then
        mkdir -p tests/fuzz/corpus/design
        python3 -c '
import random, sys
for seed in range(16):
    r = random.Random(seed)
    with open(f"tests/fuzz/corpus/design/seed-{seed}", "wb") as f:
        f.write(bytes(r.randrange(256) for _ in range(16 + 8 * seed)))
'
    fi
    RUSTC_BOOTSTRAP=1 cargo fuzz run --fuzz-dir tests/fuzz "$target" -s none -- \
        -max_total_time="$SECONDS_PER_TARGET" -print_final_stats=1 2>&1 | tee "$log" | grep -E '^(Done|==|#[0-9]+ +(INITED|DONE))' || true
    runs=$(awk '/^Done [0-9]+ runs/ {print $2}' "$log")
    rm -f "$log"
    if [ -z "$runs" ]; then
        echo "fuzz: target $target did not finish" >&2
        exit 1
    fi
    echo "fuzz: $target: $runs executions, no crash"
    total=$((total + runs))
done
echo "fuzz: $total executions in all, no crash"
