//! Every built-in scenario gives its expected figures: under its defaults,
//! every value of each parameter and every pair of values, the round-robin
//! schedule and outcomes, and the exhaustive search's runs, distinct states
//! and shortest counterexample. They are kept per scenario in
//! `tests/expected/<id>.json`, written by
//! `REPLAYGROUND_BLESS=1 cargo test --release --test builtin_files` and
//! reviewed as a diff, as PostgreSQL's isolation tester keeps its
//! `expected/*.out`: a change that moves a figure (a new reduction, a new
//! parameter) is seen in the diff, and a new built-in is its file, its line
//! in the catalog and its generated expectations.
//!
//! The first expectations (2026-12-05) were generated from the engine that
//! matched the record of the Rust step machines the files replaced (commit
//! 5f0c1e2 and before): the same schedules, outcomes and counterexamples in
//! all 301 recorded cases, and runs and distinct states no more than
//! recorded, or, for the two relays, in proportion to the state the file's
//! relay keeps (its log of deliveries).

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use replayground::catalog;
#[cfg(not(target_family = "wasm"))]
use replayground::parameters::{Kind, Param};
use replayground::search;
use replayground::search::{Explorer, RunResult};
use replayground::RoundRobin;
use serde_json::{json, Value};

/// The expected figures of every built-in, by id (generated with them).
mod expected {
    include!("expected/index.rs");
}

/// Where the expectations are written.
#[cfg(not(target_family = "wasm"))]
const EXPECTED_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/expected");

/// The command that writes them.
const BLESS: &str = "REPLAYGROUND_BLESS=1 cargo test --release --test builtin_files";

/// The values worth trying of one parameter: its marks or options, or its
/// first eight whole numbers (the step machines' figures covered
/// idem-race's 1 to 8 attempts, its range then).
#[cfg(not(target_family = "wasm"))]
fn variants(param: &Param) -> Vec<Value> {
    match param.kind {
        Kind::Choice { options } => options.iter().map(|o| json!(o)).collect(),
        Kind::Whole { marks, .. } if !marks.is_empty() => marks.iter().map(|m| json!(m)).collect(),
        Kind::Whole { min, max, .. } => (min..=max.min(min + 7)).map(|m| json!(m)).collect(),
        Kind::Text { .. } => vec![json!("x"), json!("intent-b")],
    }
}

/// Whether every pair of parameter values is compared too: in optimised
/// builds (`scripts/test.sh` runs this file with `--release`); a debug build
/// compares the defaults and every single value.
const PAIRS: bool = cfg!(not(debug_assertions));

/// Every parameter set the figures cover, for scenario `id`.
#[cfg(not(target_family = "wasm"))]
fn cases(id: &str, pairs: bool) -> Vec<Value> {
    // In the rollback journal at SQLite's default `synchronous`: the journal
    // parameter's figures are tests/journal.rs's, and a level changes what
    // a power loss keeps, which tests/power_loss.rs covers.
    let declared: Vec<&Param> = catalog::entry(id)
        .unwrap()
        .params
        .iter()
        .filter(|p| !replayground::file::ENGINE_PARAMS.contains(&p.name))
        .collect();
    let mut all = vec![Value::Null];
    for (i, a) in declared.iter().enumerate() {
        for va in variants(a) {
            all.push(json!({ a.name: va }));
            if !pairs {
                continue;
            }
            for b in &declared[i + 1..] {
                for vb in variants(b) {
                    all.push(json!({ a.name: va, b.name: vb }));
                }
            }
        }
    }
    all
}

/// What one scenario does with one parameter set.
fn figures(id: &str, params: &Value) -> Value {
    let explorer = Explorer::new(catalog::build_with(id, params).unwrap()).unwrap();
    let run = explorer.run(&mut RoundRobin, true).unwrap();
    let steps = |r: &RunResult| -> Vec<String> {
        r.trace
            .iter()
            .flatten()
            .map(|s| format!("{}: {}", s.label, s.report.name))
            .collect()
    };
    let report = explorer
        .exhaustive(search::Options::default(), 1000, |_| true)
        .unwrap();
    // Recorded in the attempts' own letters (the step machines had no
    // labels to write schedules in).
    let own = |shown: &str| explorer.parse_schedule(shown).unwrap().encode();
    let mut out = json!({
        "id": id,
        "params": params,
        "schedule": own(&run.schedule),
        "statuses": serde_json::to_value(&run.statuses).unwrap(),
        "passed": run.passed,
        "runs": report.stats.runs,
        "states": report.stats.distinct_states,
        "counterexample": report.counterexample.as_ref().map(|c| own(&c.schedule)),
    });
    if params.is_null() {
        out["steps"] = json!(steps(&run));
    }
    out
}

/// Writes every built-in's expectations, and the index that embeds them,
/// anew (`REPLAYGROUND_BLESS=1`); removes those of built-ins that are gone.
#[cfg(not(target_family = "wasm"))]
fn bless() {
    let dir = std::path::Path::new(EXPECTED_DIR);
    std::fs::create_dir_all(dir).unwrap();
    for old in std::fs::read_dir(dir).unwrap() {
        let path = old.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            std::fs::remove_file(path).unwrap();
        }
    }
    let mut index = String::from(
        "// Generated with the expectations by `REPLAYGROUND_BLESS=1 cargo test --release\n\
         // --test builtin_files`; do not edit by hand.\n\n\
         /// Each built-in's expected figures (JSON), by id.\n\
         pub const EXPECTED: &[(&str, &str)] = &[\n",
    );
    for entry in catalog::all() {
        let all: Vec<Value> = cases(entry.id, true)
            .iter()
            .map(|p| figures(entry.id, p))
            .collect();
        std::fs::write(
            dir.join(format!("{}.json", entry.id)),
            serde_json::to_string_pretty(&all).unwrap() + "\n",
        )
        .unwrap();
        index.push_str(&format!(
            "    ({:?}, include_str!(\"{}.json\")),\n",
            entry.id, entry.id
        ));
    }
    index.push_str("];\n");
    std::fs::write(dir.join("index.rs"), index).unwrap();
}

#[test]
fn every_builtin_gives_its_expected_figures() {
    #[cfg(not(target_family = "wasm"))]
    if std::env::var_os("REPLAYGROUND_BLESS").is_some() {
        bless();
        return;
    }
    let mut compared = 0;
    for entry in catalog::all() {
        let Some((_, text)) = expected::EXPECTED.iter().find(|(id, _)| *id == entry.id) else {
            panic!("no expected figures for {}: run {BLESS}", entry.id);
        };
        let expected: Vec<Value> = serde_json::from_str(text).unwrap();
        // The cases are today's declarations' (a changed parameter needs
        // its expectations generated again).
        #[cfg(not(target_family = "wasm"))]
        assert_eq!(
            cases(entry.id, true),
            expected
                .iter()
                .map(|e| e["params"].clone())
                .collect::<Vec<_>>(),
            "the parameters of {} changed since its expectations were written: run {BLESS}",
            entry.id
        );
        // Its defaults, each value and (optimised builds) each pair; in the
        // browser, its defaults.
        let cases = expected.iter().filter(|e| {
            let keys = e["params"].as_object().map_or(0, |p| p.len());
            keys == 0 || (!cfg!(target_family = "wasm") && (keys == 1 || PAIRS))
        });
        for case in cases {
            let now = figures(entry.id, &case["params"]);
            assert_eq!(
                &now, case,
                "{} {}: the figures changed; if that is meant, run {BLESS} and review the diff",
                entry.id, case["params"]
            );
            compared += 1;
        }
    }
    assert!(compared >= catalog::all().len());
}
