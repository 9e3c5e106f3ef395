#!/usr/bin/env bash
# Quick start, command 2: the whole test suite.
#
#   formatting and lints (native and wasm32), native `cargo test`,
#   `wasm-pack test --headless --chrome`, and the page's end-to-end tests in
#   Debian's Chromium.
#
# Every step runs even if an earlier one failed, so one run shows everything;
# the output ends with each runner's summary and the exit status is non-zero
# if any step failed. Logs of each step: target/test-logs/.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
START=$(date +%s)
"$REPLAYGROUND_ROOT/scripts/setup.sh" || exit 1
load_replayground_env
cd "$REPLAYGROUND_ROOT"

LOGS="$REPLAYGROUND_ROOT/target/test-logs"
mkdir -p "$LOGS"
SUMMARY=()
FAILED=0

# run NAME COMMAND...: runs a step with its output shown and logged.
run() {
    local name=$1
    shift
    local log="$LOGS/$name.log"
    local t0=$(date +%s)
    printf '\n==> %s: %s\n' "$name" "$*"
    if "$@" 2>&1 | tee "$log"; then
        STATUS=ok
    else
        STATUS=FAILED
        FAILED=1
    fi
    ELAPSED=$(($(date +%s) - t0))
}

# cargo_counts LOG: totals of the "test result:" lines cargo's harness printed.
cargo_counts() {
    awk '/test result:/ {
            for (i = 1; i <= NF; i++) {
                if ($(i) ~ /^passed;?$/) p += $(i - 1);
                if ($(i) ~ /^failed;?$/) f += $(i - 1);
                if ($(i) ~ /^ignored;?$/) g += $(i - 1);
            }
            n++
        }
        END { printf "%d passed; %d failed; %d ignored (%d test binaries)", p, f, g, n }' "$1"
}

# node_counts LOG: the pass/fail totals node --test printed.
node_counts() {
    awk '/^# (pass|fail|cancelled) / { c[$2] = $3 }
        END { printf "%d passed; %d failed; %d cancelled", c["pass"], c["fail"], c["cancelled"] }' "$1"
}

record() { SUMMARY+=("$(printf '%-38s %-6s %4ss  %s' "$1" "$STATUS" "$ELAPSED" "${2:-}")"); }

# A fresh clone is built once: incremental compilation's caches would only
# take disk (about 700 MB for the two debug builds).
export CARGO_INCREMENTAL=0

# The whole run's build outputs reach about 1.5 GB (1,522 MB at their peak on
# a fresh clone, 2026-12-02). On a disk with less than PRUNE_BELOW_MB free at
# the start (a wide margin over that), each is removed once no later step
# needs it (the next run then builds it again).
PRUNE_BELOW_MB=${REPLAYGROUND_PRUNE_BELOW_MB:-12000}
FREE_MB=$(df -Pm "$REPLAYGROUND_ROOT" | awk 'NR == 2 { print $4 }')
# prune DIR...: removes build outputs no later step uses, when the disk is short.
prune() {
    [ "${FREE_MB:-0}" -lt "$PRUNE_BELOW_MB" ] || return 0
    local dir
    for dir; do
        printf '==> removing %s (%s MB were free at the start)\n' "${dir#"$REPLAYGROUND_ROOT"/}" "$FREE_MB"
        rm -rf "$dir"
    done
}

run fmt bash -c 'cargo fmt --all --check && cargo fmt --check --manifest-path scripts/split/Cargo.toml'
record "cargo fmt --check (the crate and scripts/split)"

run layers python3 scripts/layers.py --quiet
record "import graph (scripts/layers.py)"

run clippy-native cargo clippy --all-targets --locked -- -D warnings
record "cargo clippy (native)"

run clippy-wasm cargo clippy --all-targets --locked --target wasm32-unknown-unknown -- -D warnings
record "cargo clippy (wasm32)"

run clippy-split env CARGO_TARGET_DIR="$REPLAYGROUND_ROOT/target/split-tool" \
    cargo clippy --locked --manifest-path scripts/split/Cargo.toml -- -D warnings
record "cargo clippy (scripts/split, the module's splitter)"

run cargo-test cargo test --locked
record "cargo test (native)" "$(cargo_counts "$LOGS/cargo-test.log")"

# The page must report the same SQLite version as the native build.
NATIVE_SQLITE=$(cargo run -q --locked --bin replayground -- version --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["sqlite"])')
export REPLAYGROUND_EXPECT_SQLITE="$NATIVE_SQLITE"
prune "$REPLAYGROUND_ROOT/target/debug" "$REPLAYGROUND_ROOT/target/tmp"

run wasm-pack-test wasm-pack --log-level warn test --headless --chrome --chromedriver "$CHROMEDRIVER" --mode no-install -- --locked
record "wasm-pack test --headless --chrome" "$(cargo_counts "$LOGS/wasm-pack-test.log")"
prune "$REPLAYGROUND_ROOT/target/wasm32-unknown-unknown/debug"

run build-wasm scripts/build-wasm.sh
record "wasm-pack build --target web"

# The book (docs/, mdBook) into www/book/, which the end-to-end tests open;
# then its checks: the README's length, every link to a file of the repository.
run book scripts/build-book.sh
record "the book (mdbook build docs, scripts/book_check.py)"

# The page's scripts, type-checked from their JSDoc (TypeScript, from the
# end-to-end tests' packages); after the build: the worker imports the
# module's generated glue and its types.
run typecheck tests/e2e/node_modules/.bin/tsc -p www/jsconfig.json
record "JS type check (tsc, www/jsconfig.json)"

run e2e bash -c 'cd tests/e2e && node --test'
record "end-to-end (Chromium; Firefox smoke)" "$(node_counts "$LOGS/e2e.log")"

run fuzz scripts/fuzz.sh 10
record "cargo fuzz (10 s per target)" "$(grep -o '[0-9]* executions in all' "$LOGS/fuzz.log" || echo 'no summary')"
prune "$REPLAYGROUND_ROOT/tests/fuzz/target"

# The invariants over many schedules, on a small budget (replayground soak runs a million).
run soak cargo run -q --release --locked --bin replayground -- soak --runs 20000
record "replayground soak --runs 20000" "$(grep -o '[0-9]* schedules in [0-9.]* s' "$LOGS/soak.log" || echo 'no summary')"

# The conformance designs as a user's CI runs them: every verdict against its
# declaration (`fails`), exit 1 if any is not as declared.
run conformance env REPLAYGROUND_CHECK_RUNS=1 cargo run -q --release --locked --bin replayground -- test tests/conformance
record "replayground test tests/conformance" "$(grep -o '^[0-9]* passed, [0-9]* failed' "$LOGS/conformance.log" || echo 'no summary')"

# Release tests unwind, as every test does: with the release profile's
# panic = "abort", cargo builds the library twice (abort for the binary,
# unwind for the tests) into the same file (the cdylib and rlib outputs carry
# no hash; cargo warns of the collision), and a test may link the wrong one.
# The built-ins against their expected figures (tests/expected/), for every
# pair of parameter values too (the debug run above compares single values
# only).
run builtin-figures env CARGO_PROFILE_RELEASE_PANIC=unwind cargo test -q --release --locked --test builtin_files
record "built-ins against their expected figures, every pair of values (release)" "$(cargo_counts "$LOGS/builtin-figures.log")"

# The reductions of the exhaustive search against each other and against
# the unreduced search, on every built-in and design (the debug run above
# compares fewer configurations). Here and in `replayground test` above,
# every run a search ends is replayed from a fresh store and must end the
# same (REPLAYGROUND_CHECK_RUNS; always on in debug builds).
run reduction env CARGO_PROFILE_RELEASE_PANIC=unwind REPLAYGROUND_CHECK_RUNS=1 cargo test -q --release --locked --test reduction
record "search reductions change no verdict, final state or shortest counterexample (release)" "$(cargo_counts "$LOGS/reduction.log")"

# The search checks itself: random designs, each explored under every
# configuration and compared with the unreduced search (a fixed seed), every
# run replayed from a fresh store; and the fuzzer finds each soundness bug of
# issue 65 put back (a switch compiled into the library's unit tests only).
run fuzz-soundness env CARGO_PROFILE_RELEASE_PANIC=unwind cargo test -q --release --locked --lib fuzz::
record "soundness fuzzer: a slice agrees, each bug put back is found (release)" "$(cargo_counts "$LOGS/fuzz-soundness.log")"

run fuzz-designs env REPLAYGROUND_CHECK_RUNS=1 cargo run -q --release --locked --bin replayground -- fuzz --seed 1 --designs 400 --found target/fuzz-found.toml
record "replayground fuzz --seed 1 --designs 400" "$(grep -o '^fuzz --seed 1: [0-9]* designs in [0-9.]* s: [0-9]* compared' "$LOGS/fuzz-designs.log" || echo 'no summary')"

run crash-sweep cargo run -q --release --locked --bin replayground -- sweep --all
record "crash at every step of every scenario" "$(grep -o '[0-9]* crash points in [0-9]* scenarios, [0-9]* violations' "$LOGS/crash-sweep.log" || echo 'no summary')"

# A power loss after every step of every scenario, in both journal modes at
# every synchronous level: what SQLite documents holds, and the book's table
# (docs/src/power-loss.md) is the one the sweep prints.
run power-sweep bash -c 'cargo run -q --release --locked --bin replayground -- sweep --all --power-loss | tee "$0" && python3 scripts/table_check.py docs/src/power-loss.md "$0"' "$LOGS/power-sweep.table"
record "power loss at every step of every scenario" "$(grep -o '[0-9]* power losses in [0-9]* scenarios.*' "$LOGS/power-sweep.log" || echo 'no summary')"

# The benchmark must run and produce a well-formed report (a tiny budget:
# this checks the command, it does not measure anything).
run bench-quick bash -c 'scripts/bench.sh --quick && python3 scripts/bench_report.py --check target/bench/report.json'
record "benchmark (scripts/bench.sh --quick)" "$(grep -c '^| [a-z].*| [0-9]' target/bench/report.md 2>/dev/null || echo 0) operations reported"

printf '\n==================== replayground test summary (native SQLite %s)\n' "$NATIVE_SQLITE"
printf '%s\n' "${SUMMARY[@]}"
if [ "$FAILED" -eq 0 ]; then
    printf 'ALL PASSED in %ss\n' "$(($(date +%s) - START))"
else
    printf 'FAILED: see the steps marked FAILED above (logs in %s) after %ss\n' "$LOGS" "$(($(date +%s) - START))"
    exit 1
fi
