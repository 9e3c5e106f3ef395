//! The JavaScript exports themselves, in the browser: what a page gets back,
//! and that a wrong type becomes an `Error` with a sentence, not a panic.
#![cfg(all(target_family = "wasm", target_os = "unknown"))]

use js_sys::Reflect;
use replayground::store::SQLITE_VERSION;
use replayground::wasm;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

fn field(object: &JsValue, name: &str) -> JsValue {
    Reflect::get(object, &JsValue::from_str(name)).expect("readable property")
}

fn message(error: wasm_bindgen::JsError) -> String {
    let value = JsValue::from(error);
    js_sys::Error::from(value).message().into()
}

#[wasm_bindgen_test]
fn versions_is_a_plain_object_with_the_pinned_sqlite() {
    let versions = wasm::versions().expect("versions");
    assert_eq!(
        field(&versions, "sqlite").as_string().as_deref(),
        Some(SQLITE_VERSION)
    );
    assert_eq!(
        field(&versions, "replayground").as_string().as_deref(),
        Some(env!("CARGO_PKG_VERSION"))
    );
}

#[wasm_bindgen_test]
fn round_trip_returns_plain_arrays_and_numbers() {
    let trip = wasm::round_trip(JsValue::from_str("note")).expect("round trip");
    assert_eq!(field(&trip, "writtenId").as_f64(), Some(1.0));
    let after = field(&trip, "readAfterCommit");
    assert!(js_sys::Array::is_array(&after));
    assert_eq!(
        js_sys::Array::from(&after).get(0).as_string().as_deref(),
        Some("note")
    );
}

#[wasm_bindgen_test]
fn round_trip_rejects_values_that_are_not_strings() {
    let wrong = [
        JsValue::UNDEFINED,
        JsValue::NULL,
        JsValue::from_f64(f64::NAN),
        JsValue::from_f64(5.0),
        JsValue::from_bool(true),
        js_sys::Object::new().into(),
    ];
    for value in wrong {
        let error = wasm::round_trip(value).expect_err("must be rejected");
        assert_eq!(message(error), "invalid note: expected a string");
    }
}

fn object(pairs: &[(&str, JsValue)]) -> JsValue {
    let o = js_sys::Object::new();
    for (k, v) in pairs {
        Reflect::set(&o, &JsValue::from_str(k), v).unwrap();
    }
    o.into()
}

#[wasm_bindgen_test]
fn js_values_json_cannot_hold_are_refused() {
    use replayground::wasm::js_to_json;
    let lone = js_sys::JsString::from_char_code1(0xD800);
    let cases: Vec<(JsValue, &str)> = vec![
        (
            JsValue::from_f64(f64::NAN),
            "numbers must be finite (got NaN)",
        ),
        (
            JsValue::from_f64(f64::INFINITY),
            "numbers must be finite (got inf)",
        ),
        (lone.into(), "lone surrogate"),
        (js_sys::Function::new_no_args("return 1").into(), "function"),
        (js_sys::BigInt::from(5u32).into(), "BigInt"),
    ];
    for (value, expected) in cases {
        let error = js_to_json(&value).unwrap_err().to_string();
        assert!(error.contains(expected), "{error}");
    }
    let mut deep = JsValue::from_f64(1.0);
    for _ in 0..20 {
        deep = object(&[("x", deep)]);
    }
    assert!(js_to_json(&deep)
        .unwrap_err()
        .to_string()
        .contains("nested more than 8 levels"));
    assert_eq!(
        js_to_json(&JsValue::from_f64(2.0)).unwrap(),
        serde_json::json!(2)
    );
}

#[wasm_bindgen_test]
fn the_catalog_and_a_scenario_run_cross_as_plain_objects() {
    let catalog = js_sys::Array::from(&wasm::scenario_catalog().unwrap());
    assert!(catalog.length() >= 11);
    let first = catalog.get(0);
    assert_eq!(
        field(&first, "id").as_string().as_deref(),
        Some("idem-race")
    );
    let result = wasm::run_scenario(JsValue::from_str("idem-race"), JsValue::UNDEFINED).unwrap();
    assert_eq!(field(&result, "passed").as_bool(), Some(true));
    let trace = js_sys::Array::from(&field(&result, "trace"));
    assert!(trace.length() > 8);
}

#[wasm_bindgen_test]
fn a_session_refuses_bad_requests_and_writes_nothing() {
    let mut session = wasm::IdempotencySession::new().unwrap();
    let good = || {
        object(&[
            ("tenant", "north".into()),
            ("operation", "web-order".into()),
            ("key", "k".into()),
            ("quantity", JsValue::from_f64(2.0)),
            ("now", JsValue::from_f64(0.0)),
        ])
    };
    let created = session.execute(good()).unwrap();
    assert_eq!(
        field(&field(&created, "outcome"), "kind")
            .as_string()
            .as_deref(),
        Some("created")
    );
    let before = session.database_bytes();
    let with = |name: &str, value: JsValue| {
        let o = good();
        Reflect::set(&o, &JsValue::from_str(name), &value).unwrap();
        o
    };
    let bad = vec![
        with("quantity", JsValue::from_f64(0.0)),
        with("quantity", JsValue::from_f64(-1.0)),
        with("quantity", JsValue::from_f64(2.5)),
        with("quantity", JsValue::from_f64(f64::NAN)),
        with("quantity", JsValue::from_str("2")),
        with("quantity", JsValue::from_f64(9_007_199_254_740_992.0)),
        with("key", JsValue::from_str("")),
        with("key", JsValue::from_str(&"k".repeat(256))),
        with("tenant", JsValue::UNDEFINED),
        with("tenant", JsValue::from_f64(1.0)),
        JsValue::NULL,
        JsValue::from_str("north"),
    ];
    for value in bad {
        let error = session.execute(value).expect_err("must be refused");
        assert!(message(error).starts_with("invalid "));
    }
    assert_eq!(session.database_bytes(), before, "nothing was written");
}

/// What `step()` returns is the state a fresh replay of the schedule shows
/// (it is computed from the run that took the step, not replayed again);
/// so is what `setSchedule()` returns.
#[wasm_bindgen_test]
fn a_step_returns_what_a_replay_of_its_schedule_shows() {
    let json = |v: &JsValue| String::from(js_sys::JSON::stringify(v).expect("stringify"));
    let options = js_sys::JSON::parse(r#"{"params":{"attempts":2}}"#).unwrap();
    let mut stepper =
        wasm::Stepper::new(JsValue::from_str("idem-race"), options.clone()).expect("stepper");
    let mut steps = 0;
    loop {
        let state = stepper.state().expect("state");
        let runnable = js_sys::Array::from(&field(&state, "runnable"));
        if runnable.length() == 0 {
            break;
        }
        // Alternate between the attempts that can run.
        let pick = runnable.get(steps % runnable.length());
        let stepped = stepper.step(pick).expect("step");
        assert_eq!(json(&stepped), json(&stepper.state().expect("state")));
        steps += 1;
    }
    assert!(steps > 4, "the race took {steps} steps");
    let end = stepper.state().expect("state");
    let schedule = field(&end, "schedule");
    let mut fresh = wasm::Stepper::new(JsValue::from_str("idem-race"), options).expect("stepper");
    assert_eq!(
        json(&fresh.set_schedule(schedule).expect("schedule")),
        json(&end)
    );
}

#[wasm_bindgen_test]
fn a_check_answers_a_mistake_with_its_line_and_column_as_data() {
    let source = |text: &str| object(&[("source", JsValue::from_str(text))]);
    // A right file: its entry.
    let right = wasm::scenario_source(JsValue::from_str("idem-race")).expect("source");
    let checked = wasm::check_scenario(source(&right)).expect("a check");
    assert_eq!(
        field(&field(&checked, "entry"), "id")
            .as_string()
            .as_deref(),
        Some("idem-race")
    );
    assert!(field(&checked, "error").is_undefined());
    // A mistake at line 2, column 7: its place as numbers, its words as text.
    let wrong = "title = \"t\"\nfails = \"often\"\n";
    let checked = wasm::check_scenario(source(wrong)).expect("a check");
    assert!(field(&checked, "entry").is_undefined());
    assert_eq!(field(&checked, "line").as_f64(), Some(2.0));
    assert_eq!(field(&checked, "column").as_f64(), Some(9.0));
    let error = field(&checked, "error")
        .as_string()
        .expect("the error's words");
    assert!(
        error.starts_with("invalid scenario: line 2, column 9: "),
        "{error}"
    );
    // describeScenario throws the same words.
    let thrown = message(wasm::describe_scenario(source(wrong)).expect_err("a mistake"));
    assert_eq!(thrown, error);
    // Not a scenario's text: an Error, as every export's bad argument.
    let refused = message(wasm::check_scenario(JsValue::from_str("idem-race")).expect_err("no"));
    assert!(refused.contains("expected { source, name? }"), "{refused}");
}
