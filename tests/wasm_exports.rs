//! The JavaScript exports themselves, in the browser: what a page gets back,
//! and that a wrong type becomes an `Error` with a sentence, not a panic.
#![cfg(all(target_family = "wasm", target_os = "unknown"))]

use js_sys::Reflect;
use replayground::storage::SQLITE_VERSION;
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
