//! Every parameter of every scenario, set to a value other than its default
//! through each entry point the core offers (JSON as the JS exports, the
//! embeds and `--params` give it; a permalink's text), must reach the run:
//! the run reports the value, and the run differs from the default run.
//! The page's controls and the embed attribute are covered end to end in
//! tests/e2e/params.test.mjs; the command line below.

#[cfg(all(target_family = "wasm", target_os = "unknown"))]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(all(target_family = "wasm", target_os = "unknown"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use replayground::catalog;
use replayground::inputs;
use replayground::parameters::{Kind, Param};
use replayground::search::{Explorer, RunResult};
use replayground::RoundRobin;
use serde_json::{json, Value};

/// A valid value other than the default.
fn other_value(param: &Param) -> Value {
    let default = param.default_value();
    match param.kind {
        Kind::Whole {
            max, multiple_of, ..
        } => {
            let d = default.as_i64().unwrap();
            if d + multiple_of <= max {
                json!(d + multiple_of)
            } else {
                json!(d - multiple_of)
            }
        }
        Kind::Text { .. } => json!("zeta"),
        Kind::Choice { options } => json!(options.iter().find(|o| **o != default).unwrap()),
    }
}

/// The link text of a value.
fn link_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn run(id: &str, given: &Value) -> RunResult {
    let explorer = Explorer::new(catalog::build_with(id, given).unwrap()).unwrap();
    explorer.run(&mut RoundRobin, true).unwrap()
}

/// What a run did, without the parameter echo.
fn behaviour(result: &RunResult) -> Value {
    let mut value = serde_json::to_value(result).unwrap();
    value.as_object_mut().unwrap().remove("params");
    value
}

#[test]
fn every_parameter_reaches_the_run_from_json_and_from_a_link() {
    let mut checked = 0;
    for entry in catalog::all() {
        let baseline = run(entry.id, &Value::Null);
        for param in entry.params {
            assert_eq!(
                baseline.params[param.name],
                param.default_value(),
                "{} {}",
                entry.id,
                param.name
            );
            let value = other_value(param);
            // JSON: the JS exports, the embed attribute and --params.
            let given = json!({ param.name: value.clone() });
            let result = run(entry.id, &given);
            assert_eq!(
                result.params[param.name], value,
                "{} {}",
                entry.id, param.name
            );
            assert_ne!(
                behaviour(&result),
                behaviour(&baseline),
                "{} ran the same with {} = {value}",
                entry.id,
                param.name
            );
            // A permalink gives text; it parses to the same value.
            let query = format!(
                "?s={}&{}={}",
                entry.id,
                param.name,
                js_encode(&link_text(&value))
            );
            let link = inputs::permalink(&query).unwrap();
            assert!(link.problems.is_empty(), "{query}: {:?}", link.problems);
            assert_eq!(link.params[param.name], value, "{query}");
            let from_link = run(entry.id, &Value::Object(link.params.clone()));
            assert_eq!(behaviour(&from_link), behaviour(&result), "{query}");
            checked += 1;
        }
    }
    // attempts, tenant, key, quantity; quantity; clock; quantity; crashPoint;
    // profile, clock; profile; crashPoint; crashPoint; window, delay; window,
    // delay; onCommitError; and every scenario's journal and synchronous.
    assert_eq!(checked, 18 + 2 * catalog::all().len());
}

/// A scenario refuses a parameter it does not declare, on every path.
#[test]
fn a_parameter_a_scenario_does_not_take_is_refused_by_name() {
    let error = catalog::build_with("idem-race", &json!({"window": 600}))
        .err()
        .unwrap()
        .to_string();
    assert_eq!(
        error,
        "invalid params: scenario idem-race has no parameter \"window\"; it takes attempts, tenant, key, quantity, journal, synchronous"
    );
    let link = inputs::permalink("?s=idem-race&window=600").unwrap();
    assert!(link.params.is_empty());
    assert_eq!(link.problems.len(), 1, "{:?}", link.problems);
}

/// A link is read with the one scenario it names (the page draws it before
/// the engine reads the rest of the catalog); a parameter the scenario does
/// not take makes it look through the catalog, to say whose it is.
#[cfg(not(target_family = "wasm"))]
#[test]
fn a_link_reads_only_the_scenario_it_names() {
    std::thread::spawn(|| {
        let link = inputs::permalink("?s=outbox-two-relays&schedule=AB").unwrap();
        assert_eq!(link.scenario.as_deref(), Some("outbox-two-relays"));
        assert_eq!(catalog::parsed_builtins(), 1);
        let link = inputs::permalink("?schedule=AB").unwrap();
        assert_eq!(link.problems.len(), 1, "{:?}", link.problems);
        assert_eq!(
            catalog::parsed_builtins(),
            2,
            "and the catalog's first, which it opens"
        );
        inputs::permalink("?s=outbox-two-relays&window=600").unwrap();
        assert_eq!(catalog::parsed_builtins(), catalog::all().len());
    })
    .join()
    .unwrap();
}

fn js_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The command line takes the same JSON and runs with it.
#[cfg(not(target_family = "wasm"))]
#[test]
fn the_command_line_passes_every_parameter_to_the_run() {
    let mut checked = 0;
    for entry in catalog::all() {
        for param in entry.params {
            let value = other_value(param);
            let given = json!({ param.name: value.clone() }).to_string();
            let output = std::process::Command::new(env!("CARGO_BIN_EXE_replayground"))
                .args(["run", entry.id, "--params", &given, "--json"])
                .output()
                .unwrap();
            let stdout = String::from_utf8(output.stdout).unwrap();
            let result: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
                panic!(
                    "{} {given}: not one JSON document ({e}): {stdout}",
                    entry.id
                )
            });
            assert_eq!(result["params"][param.name], value, "{} {given}", entry.id);
            checked += 1;
        }
    }
    assert_eq!(checked, 18 + 2 * catalog::all().len());
}

#[test]
fn a_repeated_name_keeps_its_first_value_and_says_so() {
    // As URLSearchParams.get, which the page uses for every other part.
    let link = inputs::permalink("?s=idem-race&journal=wal&journal=rollback&attempts=2&attempts=3")
        .unwrap();
    assert_eq!(link.params["journal"], serde_json::json!("wal"));
    assert_eq!(link.params["attempts"], serde_json::json!(2));
    assert_eq!(link.problems.len(), 2, "{:?}", link.problems);
    assert!(
        link.problems[0].contains("\"journal\" was given more than once"),
        "{:?}",
        link.problems
    );
}

/// `synchronous` reaches every attempt's connection (its own SQL reads it
/// back), a file can set its default, and a design's own SQL cannot change
/// it: the engine keeps it.
#[test]
fn the_synchronous_level_is_each_connection_s_and_only_the_engine_sets_it() {
    let design = |head: &str, sql: &str| {
        format!(
            r#"title = "level"
{head}
[databases.app]
schema = "CREATE TABLE t (x);"
[[attempts]]
steps = [ {{ name = "read", sql = "{sql}", capture = ["level"], on.ok = {{ finish = "done", result = ":level" }} }} ]
"#
        )
    };
    let result = |source: &str, params: Value| {
        let file = catalog::parse(source, "design").unwrap();
        let run = Explorer::new(file.build(&params).unwrap())
            .unwrap()
            .run(&mut RoundRobin, false)
            .unwrap();
        serde_json::to_value(&run.statuses).unwrap()[0]["outcome"]["result"].clone()
    };
    let read = design("", "PRAGMA synchronous");
    // SQLite's numbers: 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA.
    assert_eq!(result(&read, Value::Null), json!("2"));
    for (level, number) in [("off", "0"), ("normal", "1"), ("full", "2"), ("extra", "3")] {
        assert_eq!(
            result(&read, json!({ "synchronous": level })),
            json!(number)
        );
    }
    let normal = design("synchronous = \"normal\"", "PRAGMA synchronous");
    assert_eq!(result(&normal, Value::Null), json!("1"));
    let bad = design("synchronous = \"sometimes\"", "PRAGMA synchronous");
    let error = catalog::parse(&bad, "design")
        .and_then(|f| f.build(&Value::Null).map(|_| ()))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("is not a synchronous level; use off or normal or full or extra"),
        "{error}"
    );
    let set = design("", "PRAGMA synchronous = OFF");
    let file = catalog::parse(&set, "design");
    let refused = match file {
        Err(e) => e.to_string(),
        Ok(f) => {
            let run = Explorer::new(f.build(&Value::Null).unwrap())
                .unwrap()
                .run(&mut RoundRobin, false)
                .unwrap();
            serde_json::to_string(&run.statuses).unwrap()
        }
    };
    assert!(refused.contains("synchronous"), "{refused}");
}
