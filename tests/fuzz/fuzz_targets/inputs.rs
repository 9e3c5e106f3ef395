//! The scenario-input parsers: any JSON is either accepted as a valid input
//! or refused with an error; never a panic. Parameters a scenario's
//! declarations accept must build that scenario.
#![no_main]

use libfuzzer_sys::fuzz_target;
use replayground::{catalog, inputs, parameters};

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        let catalog = catalog::all();
        let entry = &catalog[data.len() % catalog.len()];
        if let Ok(params) = parameters::Params::parse(entry.id, entry.params, &value) {
            assert!(
                catalog::build_resolved(entry, params).is_ok(),
                "{}: accepted parameters that do not build",
                entry.id
            );
        }
        if let Ok(request) = inputs::request(&value) {
            assert!(request.quantity > 0 && !request.key.is_empty());
        }
        let _ = inputs::order(&value);
        let _ = inputs::delivery(&value);
    }
});
