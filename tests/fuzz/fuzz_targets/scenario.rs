//! The scenario-file parser: any text is either a scenario or an error with
//! a line and column; never a panic. A file it accepts builds with its
//! default parameters and yields its attempts.
#![no_main]

use libfuzzer_sys::fuzz_target;
use replayground::file;
use replayground::catalog;

fuzz_target!(|data: &[u8]| {
    if let Ok(source) = std::str::from_utf8(data) {
        match catalog::parse(source, "fuzz") {
            Ok(file) => {
                let scenario = file
                    .build(&serde_json::Value::Null)
                    .expect("a file the parser accepts builds with its defaults");
                let attempts = scenario.attempts().expect("its attempts are made");
                assert!(!attempts.is_empty() && attempts.len() <= file::MAX_ATTEMPTS);
            }
            Err(error) => assert!(error.to_string().starts_with("invalid ")),
        }
    }
});
