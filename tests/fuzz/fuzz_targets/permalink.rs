//! The permalink parser: any query string is either read into a scenario,
//! parameters, a schedule and a step (dropping and naming bad parts), or
//! refused with an error; never a panic. What it keeps must be usable.
#![no_main]

use libfuzzer_sys::fuzz_target;
use replayground::{catalog, inputs};

fuzz_target!(|data: &[u8]| {
    if let Ok(query) = std::str::from_utf8(data) {
        if let Ok(link) = inputs::permalink(query) {
            if let Some(schedule) = &link.schedule {
                assert!(replayground::Schedule::decode(schedule).is_ok());
            }
            match &link.scenario {
                Some(id) => assert!(
                    catalog::build_with(id, &serde_json::Value::Object(link.params.clone()))
                        .is_ok(),
                    "{query:?}: the link's parameters do not build {id}"
                ),
                None => assert!(link.params.is_empty()),
            }
        }
    }
});
