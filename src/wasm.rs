//! The JavaScript face of the crate: every `#[wasm_bindgen]` export lives here.
//!
//! Exports take `JsValue` and validate it themselves, so a wrong type from
//! JavaScript becomes a clear `Error`, never a panic or a silent coercion.
//! Results cross as plain JSON-compatible objects.

use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::storage;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &str = r#"
/** Versions of this build, as `versions()` returns them. */
export interface Versions {
  replayground: string;
  sqlite: string;
  sqliteSourceId: string;
}
/** What `roundTrip()` wrote through connection A and read through connection B. */
export interface RoundTrip {
  sqliteVersion: string;
  writtenId: number;
  readDuringWrite: string[];
  writerLock: string;
  readAfterCommit: string[];
}
"#;

#[wasm_bindgen]
extern "C" {
    /// `performance.now()`: a monotonic clock in milliseconds, in pages and workers.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// Installs the panic hook, so a panic (a bug) reaches the console with its message.
#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

/// The crate and SQLite versions of this module.
#[wasm_bindgen(js_name = versions, unchecked_return_type = "Versions")]
pub fn versions() -> Result<JsValue, JsError> {
    to_js(&storage::Versions::current())
}

/// Writes `note` through one SQLite connection and reads it through another.
#[wasm_bindgen(js_name = roundTrip, unchecked_return_type = "RoundTrip")]
pub fn round_trip(
    #[wasm_bindgen(unchecked_param_type = "string")] note: JsValue,
) -> Result<JsValue, JsError> {
    let note = note
        .as_string()
        .ok_or_else(|| JsError::new("invalid note: expected a string"))?;
    to_js(&storage::round_trip(&note)?)
}

/// Measures the engine in this browser: `rounds` timed rounds of `iterations`
/// operations per measurement.
#[wasm_bindgen(js_name = benchEngine)]
pub fn bench_engine(
    #[wasm_bindgen(unchecked_param_type = "number")] rounds: JsValue,
    #[wasm_bindgen(unchecked_param_type = "number")] iterations: JsValue,
) -> Result<JsValue, JsError> {
    let budget = crate::bench::Budget {
        rounds: whole_number("rounds", &rounds)?,
        iterations: whole_number("iterations", &iterations)?,
    };
    to_js(&crate::bench::engine(budget, &performance_now)?)
}

/// A whole number from 0 to 2^32 - 1, or an error naming `field`.
fn whole_number(field: &'static str, value: &JsValue) -> Result<u32, JsError> {
    match value.as_f64() {
        Some(n) if n.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&n) => Ok(n as u32),
        _ => Err(crate::Error::invalid(field, "expected a whole number").into()),
    }
}

fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsError> {
    let serializer = serde_wasm_bindgen::Serializer::json_compatible();
    value
        .serialize(&serializer)
        .map_err(|e| JsError::new(&format!("cannot convert the result for JavaScript: {e}")))
}
