//! The built-in scenarios are files, and they behave as the Rust step
//! machines they replaced did. `tests/builtin_figures.json` was recorded
//! from those step machines (commit 5f0c1e2 and before) for every built-in,
//! under its defaults, every value of each parameter and every pair of
//! values: the round-robin schedule and outcomes, and the exhaustive
//! search's runs, distinct states and shortest counterexample. The files
//! must give the same schedule, outcomes and counterexample. The search has
//! gained reductions since (partial-order reduction; a rollback journal's
//! random nonce no longer splits states), so its runs and distinct states
//! may only be fewer than recorded, except where explained below.

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

#[cfg(not(target_family = "wasm"))]
use replayground::params::{Kind, Param};
use replayground::scenarios;
use replayground::sim::scheduler::RoundRobin;
use replayground::sim::search;
use replayground::sim::search::{Explorer, RunResult};
use serde_json::{json, Value};

const FIGURES: &str = include_str!("builtin_figures.json");

/// An exhaustive search's (runs, distinct states).
type Figures = (u64, u64);

/// The built-ins whose search figures differ from the step machines', with
/// the recorded and the file's (runs, distinct states) at their defaults,
/// as the search counted them before its later reductions.
/// The relay's log of deliveries (its result, which outbox-redelivery
/// checks) is part of its state in a file; the step machine left it out,
/// merging paths that had delivered differently. More runs; the same
/// verdict and counterexample.
const EXPLAINED: &[(&str, Figures, Figures)] = &[
    ("outbox-two-relays", (57, 112), (76, 148)),
    ("outbox-two-relays-no-inbox", (53, 108), (54, 109)),
];

/// The values worth trying of one parameter: its marks or options, or its
/// ends and default when it has few values (for recording; natively only).
#[cfg(not(target_family = "wasm"))]
fn variants(param: &Param) -> Vec<Value> {
    match param.kind {
        Kind::Choice { options } => options.iter().map(|o| json!(o)).collect(),
        Kind::Whole { marks, .. } if !marks.is_empty() => marks.iter().map(|m| json!(m)).collect(),
        Kind::Whole { min, max, .. } if max - min <= 8 => (min..=max).map(|m| json!(m)).collect(),
        Kind::Whole { min, .. } => vec![json!(min), json!(min + 1)],
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
    // The step machines ran in rollback mode only: the journal parameter's
    // figures are tests/journal.rs's.
    let declared: Vec<&Param> = scenarios::entry(id)
        .unwrap()
        .params
        .iter()
        .filter(|p| p.name != replayground::format::JOURNAL_PARAM)
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
    let explorer = Explorer::new(scenarios::build_with(id, params).unwrap()).unwrap();
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

/// `REPLAYGROUND_BLESS=1` records the figures anew (only ever from the step
/// machines; kept for the record).
#[cfg(not(target_family = "wasm"))]
fn bless() {
    let all: Vec<Value> = scenarios::catalog()
        .iter()
        .flat_map(|e| cases(e.id, true).into_iter().map(|p| figures(e.id, &p)))
        .collect();
    std::fs::write(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/builtin_figures.json"),
        serde_json::to_string_pretty(&all).unwrap() + "\n",
    )
    .unwrap();
}

#[test]
fn every_builtin_behaves_as_the_step_machine_it_replaced() {
    #[cfg(not(target_family = "wasm"))]
    if std::env::var_os("REPLAYGROUND_BLESS").is_some() {
        bless();
    }
    let recorded: Vec<Value> = serde_json::from_str(FIGURES).unwrap();
    let mut compared = 0;
    for entry in scenarios::catalog() {
        // The recorded cases of this built-in: its defaults, each value and
        // (optimised builds) each pair. The cases are read from the record,
        // not generated from today's declarations: idem-race's attempts now
        // go to 16, the step machine's to 8.
        assert!(
            recorded
                .iter()
                .any(|r| r["id"] == entry.id && r["params"].is_null()),
            "no figures recorded for {}",
            entry.id
        );
        let cases = recorded.iter().filter(|r| {
            let keys = r["params"].as_object().map_or(0, |p| p.len());
            r["id"] == entry.id
                && (keys == 0 || (!cfg!(target_family = "wasm") && (keys == 1 || PAIRS)))
        });
        for before in cases {
            let params = &before["params"];
            let mut now = figures(entry.id, params);
            let pair = |v: &Value| (v["runs"].as_u64().unwrap(), v["states"].as_u64().unwrap());
            let (runs, states) = pair(&now);
            let (most_runs, most_states) = match EXPLAINED.iter().find(|(i, ..)| *i == entry.id) {
                // The file's relay keeps more state: more than recorded at most
                // in proportion (checked at the defaults).
                Some((_, was, is)) => {
                    let (b_runs, b_states) = pair(before);
                    (b_runs * is.0 / was.0 + 1, b_states * is.1 / was.1 + 1)
                }
                None => pair(before),
            };
            assert!(
                runs <= most_runs && states <= most_states,
                "{} {params}: {runs} runs and {states} states, recorded {}",
                entry.id,
                before
            );
            now["runs"] = before["runs"].clone();
            now["states"] = before["states"].clone();
            assert_eq!(&now, before, "{} {params}", entry.id);
            compared += 1;
        }
    }
    if PAIRS {
        assert_eq!(compared, recorded.len(), "every recorded case compared");
    }
}
