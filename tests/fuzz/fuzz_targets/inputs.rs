//! The scenario-input parsers: any JSON is either accepted as a valid input
//! or refused with an error; never a panic. Parameters a scenario's
//! declarations accept must build that scenario.
#![no_main]

use libfuzzer_sys::fuzz_target;
use replayground::{input, params, scenarios};

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        let catalog = scenarios::catalog();
        let entry = &catalog[data.len() % catalog.len()];
        if let Ok(params) = params::Params::parse(entry.id, entry.params, &value) {
            assert!(
                scenarios::build_resolved(entry, params).is_ok(),
                "{}: accepted parameters that do not build",
                entry.id
            );
        }
        if let Ok(request) = input::request(&value) {
            assert!(request.quantity > 0 && !request.key.is_empty());
        }
        let _ = input::order(&value);
        let _ = input::delivery(&value);
    }
});
