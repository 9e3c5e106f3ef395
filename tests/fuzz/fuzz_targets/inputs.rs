//! The scenario-input parsers: any JSON is either accepted as a valid input
//! or refused with an error; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use replayground::input;

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = input::params(&value);
        if let Ok(request) = input::request(&value) {
            assert!(request.quantity > 0 && !request.key.is_empty());
        }
        let _ = input::order(&value);
        let _ = input::delivery(&value);
    }
});
