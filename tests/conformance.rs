//! The conformance set: designs written as users would write them, each a
//! scenario file in tests/conformance/, each with its expected verdict
//! (`fails`) proved by the exhaustive explorer, natively and in Chromium.

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use replayground::catalog;
use replayground::search::Explorer;
use replayground::strategy::{Kind, Strategy};
use replayground::Bound;

mod common;
use common::DESIGNS;

#[test]
fn every_design_gets_its_expected_verdict_over_every_schedule() {
    assert!(DESIGNS.len() >= 10);
    for (name, source) in DESIGNS {
        let file = catalog::parse(source, name).unwrap_or_else(|e| panic!("{name}: {e}"));
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
                let schedule = replayground::Schedule::decode(&c.schedule).unwrap();
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

/// A verdict holds for every value of a small whole parameter (every
/// number of racing attempts), not only for the default.
#[test]
fn every_verdict_holds_across_each_small_parameter_range() {
    use replayground::parameters::Kind as ParamKind;
    let mut explored = 0;
    for (name, source) in DESIGNS {
        let file = catalog::parse(source, name).unwrap();
        for param in file.declared_params().unwrap() {
            let ParamKind::Whole { min, max, .. } = param.kind else {
                continue;
            };
            if max - min > 8 {
                continue;
            }
            for value in min..=max {
                let given = serde_json::json!({ param.name: value });
                let explorer = Explorer::new(file.build(&given).unwrap()).unwrap();
                let report = Strategy::of(Kind::Exhaustive)
                    .search()
                    .run_to_end(&explorer)
                    .unwrap();
                assert!(report.complete);
                if !file.fails {
                    assert!(
                        report.counterexample.is_none(),
                        "{name} with {} = {value}: {:?}",
                        param.name,
                        report.counterexample.map(|c| c.explanation)
                    );
                }
                explored += 1;
            }
        }
    }
    assert!(explored >= 12, "{explored} parameter values explored");
}

/// `after` makes a retry wait for the request whose reply was lost.
#[test]
fn a_retry_starts_only_after_the_lost_reply() {
    let (_, source) = DESIGNS
        .iter()
        .find(|(n, _)| *n == "lost-reply-no-key")
        .unwrap();
    let file = catalog::parse(source, "lost-reply-no-key").unwrap();
    let explorer = Explorer::new(file.build(&serde_json::Value::Null).unwrap()).unwrap();
    let run = explorer.start(false).unwrap();
    assert_eq!(run.runnable(), vec![0], "B waits for A");
    let bad = source.replace("after = \"request\"", "after = \"nobody\"");
    let error = catalog::parse(&bad, "x").unwrap_err().to_string();
    assert!(
        error.contains("must name the role or label of exactly one earlier attempt"),
        "{error}"
    );
}

#[test]
fn parameters_of_a_file_are_declared_once_and_checked() {
    let (_, source) = DESIGNS
        .iter()
        .find(|(n, _)| *n == "claim-on-conflict")
        .unwrap();
    let file = catalog::parse(source, "claim-on-conflict").unwrap();
    let scenario = file.build(&serde_json::json!({"attempts": 4})).unwrap();
    assert_eq!(scenario.attempts().unwrap().len(), 4);
    let error = file
        .build(&serde_json::json!({"attempts": 9}))
        .err()
        .unwrap()
        .to_string();
    assert_eq!(error, "invalid attempts: 9 is out of range (1 to 4)");
}

/// A hostile file is bounded: an endless query is stopped, a huge value is
/// refused, an endless loop of steps ends, and the engine goes on working.
#[test]
fn hostile_files_are_bounded_and_the_engine_goes_on() {
    // Some of these statements SQLite refuses to prepare: asked to run anyway.
    let source = r#"
title = "hostile"
allow-sql-errors = true
[databases.app]
schema = "CREATE TABLE t (x);"
[[attempts]]
steps = [ { name = "forever", sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c" } ]
[[attempts]]
steps = [ { name = "huge", sql = "SELECT length(randomblob(1000000000))" } ]
[[attempts]]
steps = [ { name = "loop", sql = "SELECT 1", on.rows = { goto = "loop" } } ]
[[attempts]]
steps = [ { name = "escape", sql = "ATTACH '/etc/passwd' AS p" } ]
[[attempts]]
steps = [ { name = "sleep on busy", sql = "PRAGMA busy_timeout = 100000" } ]
[[attempts]]
steps = [ { name = "take the lock for good", sql = "PRAGMA locking_mode = EXCLUSIVE" } ]
[[attempts]]
steps = [ { name = "rewrite the schema", sql = "PRAGMA writable_schema = ON" } ]
[[attempts]]
steps = [ { name = "extension", sql = "SELECT load_extension('/lib/x86_64-linux-gnu/libc.so.6')" } ]
[[attempts]]
steps = [ { name = "read a pragma", sql = "PRAGMA busy_timeout", on.rows = { finish = "read" } } ]
"#;
    let file = catalog::parse(source, "hostile").unwrap();
    let explorer = Explorer::new(file.build(&serde_json::Value::Null).unwrap()).unwrap();
    let run = explorer.run(&mut replayground::RoundRobin, false).unwrap();
    let failures: Vec<String> = run
        .statuses
        .iter()
        .map(|s| match s {
            replayground::Status::Failed { error, .. } => error.clone(),
            other => format!("{other:?}"),
        })
        .collect();
    assert!(
        failures[0].contains("more than 20000000 SQLite instructions"),
        "{failures:?}"
    );
    // The two loops are stopped by bounds, and the run does not complete.
    let bounds: Vec<Option<Bound>> = run
        .statuses
        .iter()
        .map(|s| match s {
            replayground::Status::Failed { bound, .. } => *bound,
            _ => None,
        })
        .collect();
    assert_eq!(bounds[0], Some(Bound::Instructions));
    assert_eq!(bounds[2], Some(Bound::Steps));
    assert!(bounds.iter().skip(3).all(Option::is_none), "{bounds:?}");
    assert!(!run.passed);
    assert!(
        run.checks[0]
            .actual
            .starts_with("stopped by a bound: A ran a statement of more than"),
        "{:?}",
        run.checks[0]
    );
    assert!(
        failures[1].contains("string or blob too big"),
        "{failures:?}"
    );
    assert!(
        failures[2].contains("took more than 1000 steps"),
        "{failures:?}"
    );
    assert!(
        failures[3].contains("unable to open database"),
        "{failures:?}"
    );
    for (i, pragma) in [
        (4, "busy_timeout"),
        (5, "locking_mode"),
        (6, "writable_schema"),
    ] {
        assert!(
            failures[i].contains(&format!("PRAGMA {pragma} may not be set in a scenario")),
            "{failures:?}"
        );
    }
    assert!(
        failures[7].contains("no such function: load_extension"),
        "{failures:?}"
    );
    // Reading a setting is fine.
    assert!(failures[8].contains("read"), "{failures:?}");
    // A schema that sets one is refused when the file is read (its setup
    // runs to prepare its statements), allowed SQL errors or not.
    let in_schema = r#"
title = "hostile schema"
allow-sql-errors = true
[databases.app]
schema = "PRAGMA journal_mode = OFF; CREATE TABLE t (x);"
[[attempts]]
steps = [ { name = "read", sql = "SELECT 1" } ]
"#;
    let error = catalog::parse(in_schema, "hostile-schema")
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        error.contains("PRAGMA journal_mode may not be set"),
        "{error}"
    );
    // The engine goes on: a good design runs right after.
    let (_, good) = DESIGNS.iter().find(|(n, _)| *n == "seat-unique").unwrap();
    let good = catalog::parse(good, "seat-unique").unwrap();
    let explorer = Explorer::new(good.build(&serde_json::Value::Null).unwrap()).unwrap();
    assert!(
        explorer
            .run(&mut replayground::RoundRobin, false)
            .unwrap()
            .passed
    );
}
