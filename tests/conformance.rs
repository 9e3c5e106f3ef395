//! The conformance set: designs written as users would write them, each a
//! scenario file in tests/conformance/, each with its expected verdict
//! (`fails`) proved by the exhaustive explorer, natively and in Chromium.

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use replayground::format;
use replayground::sim::explore::Explorer;
use replayground::sim::strategy::{Kind, Strategy};

macro_rules! designs {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("conformance/", $name, ".toml")))),*]
    };
}

const DESIGNS: &[(&str, &str)] = designs![
    "claim-on-conflict",
    "counter-deferred",
    "counter-immediate",
    "seat-check-then-insert",
    "seat-unique",
    "outbox-mark-before-deliver",
    "inbox-shared-key",
    "inbox-per-consumer",
    "optimistic-version",
    "check-then-write",
    "receipt-in-one-transaction",
];

#[test]
fn every_design_gets_its_expected_verdict_over_every_schedule() {
    assert!(DESIGNS.len() >= 10);
    for (name, source) in DESIGNS {
        let file = format::parse(source, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let explorer = Explorer::new(file.build(&serde_json::Value::Null).unwrap()).unwrap();
        let report = Strategy::of(Kind::Exhaustive)
            .search()
            .run_to_end(&explorer)
            .unwrap();
        assert!(report.complete, "{name}: the search covers every schedule");
        match (&report.counterexample, file.fails) {
            (None, false) => {}
            (Some(c), true) => {
                // The counterexample replays to the same failure.
                let schedule = replayground::sim::Schedule::decode(&c.schedule).unwrap();
                assert!(!explorer.replay(&schedule, false).unwrap().passed, "{name}");
            }
            (None, true) => panic!("{name} is meant to fail, and every schedule passed"),
            (Some(c), false) => panic!(
                "{name} holds, yet {} fails: {:?}",
                c.schedule, c.explanation
            ),
        }
    }
}

#[test]
fn parameters_of_a_file_are_declared_once_and_checked() {
    let (_, source) = DESIGNS
        .iter()
        .find(|(n, _)| *n == "claim-on-conflict")
        .unwrap();
    let file = format::parse(source, "claim-on-conflict").unwrap();
    let scenario = file.build(&serde_json::json!({"attempts": 4})).unwrap();
    assert_eq!(scenario.attempts().unwrap().len(), 4);
    let error = file
        .build(&serde_json::json!({"attempts": 9}))
        .err()
        .unwrap()
        .to_string();
    assert_eq!(error, "invalid attempts: 9 is out of range (1 to 4)");
}
