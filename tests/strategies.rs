//! One (scenario, strategy, seed) gives one schedule everywhere: the library
//! natively and in Chromium, the JS export `runScenario` in Chromium, and the
//! command line (tests/cli.rs) all match the recording in
//! `strategy_schedules.json`. `REPLAYGROUND_BLESS=1 cargo test --test
//! strategies` re-records it from the library natively.

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use replayground::catalog;
use replayground::search::Explorer;
use replayground::strategy::{Kind, Strategy};
use serde_json::{json, Value};

const RECORDING: &str = include_str!("strategy_schedules.json");

/// The cases: PCT's step estimate and the seed arithmetic both matter.
fn cases() -> Vec<(&'static str, Kind, u64, Value)> {
    vec![
        ("idem-race", Kind::RoundRobin, 1, json!({"attempts": 3})),
        ("idem-race", Kind::Random, 7, json!({"attempts": 3})),
        ("idem-race", Kind::Pct, 7, json!({"attempts": 3})),
        ("idem-race", Kind::Pct, 12345, json!({})),
        ("idem-check-then-write", Kind::Random, 3, json!({})),
        ("idem-check-then-write", Kind::Pct, 99, json!({})),
        ("outbox-two-relays", Kind::Pct, 5, json!({})),
        ("inbox-retention", Kind::Random, 11, json!({"window": 600})),
    ]
}

fn schedule_of(scenario: &str, kind: Kind, seed: u64, params: &Value) -> String {
    let explorer = Explorer::new(catalog::build_with(scenario, params).unwrap()).unwrap();
    let strategy = Strategy {
        seed,
        ..Strategy::of(kind)
    };
    let mut scheduler = strategy.scheduler(0).unwrap();
    explorer.run(scheduler.as_mut(), false).unwrap().schedule
}

fn computed() -> Vec<Value> {
    cases()
        .into_iter()
        .map(|(scenario, kind, seed, params)| {
            json!({
                "scenario": scenario, "strategy": kind.name(), "seed": seed, "params": params,
                "schedule": schedule_of(scenario, kind, seed, &params),
            })
        })
        .collect()
}

#[test]
fn the_library_gives_the_recorded_schedules() {
    let computed = computed();
    #[cfg(not(target_family = "wasm"))]
    if std::env::var_os("REPLAYGROUND_BLESS").is_some() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/strategy_schedules.json");
        std::fs::write(
            path,
            serde_json::to_string_pretty(&computed).unwrap() + "\n",
        )
        .unwrap();
        return;
    }
    let recorded: Vec<Value> = serde_json::from_str(RECORDING).unwrap();
    assert_eq!(computed, recorded);
}

/// The JS export takes the same options the page sends and gives the same runs.
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
#[test]
fn the_js_export_gives_the_recorded_schedules() {
    use wasm_bindgen::JsValue;
    let recorded: Vec<Value> = serde_json::from_str(RECORDING).unwrap();
    for case in recorded {
        let options = json!({
            "strategy": case["strategy"], "seed": case["seed"], "params": case["params"],
        });
        let options = js_sys::JSON::parse(&options.to_string()).unwrap();
        let result = replayground::wasm::run_scenario(
            JsValue::from_str(case["scenario"].as_str().unwrap()),
            options,
        )
        .unwrap_or_else(|_| panic!("{case}"));
        let schedule = js_sys::Reflect::get(&result, &JsValue::from_str("schedule")).unwrap();
        assert_eq!(
            schedule.as_string().as_deref(),
            case["schedule"].as_str(),
            "{case}"
        );
    }
}
