//! The permalink parser: any query string is either read into a scenario,
//! parameters, a schedule and a step, or refused with an error; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use replayground::input;

fuzz_target!(|data: &[u8]| {
    if let Ok(query) = std::str::from_utf8(data) {
        if let Ok(link) = input::permalink(query) {
            if let Some(schedule) = &link.schedule {
                assert!(replayground::sim::Schedule::decode(schedule).is_ok());
            }
        }
    }
});
