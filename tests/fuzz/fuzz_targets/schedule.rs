//! The schedule decoder: any text either decodes to a schedule that encodes
//! back to an equivalent string, or is refused with an error; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use replayground::Schedule;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(schedule) = Schedule::decode(text) {
            let again = Schedule::decode(&schedule.encode()).expect("an encoded schedule decodes");
            assert_eq!(again, schedule);
        }
    }
});
