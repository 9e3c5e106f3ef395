//! replayground: SQLite in the browser that shows how idempotency keys, the
//! transactional outbox and the idempotent inbox survive retries, races and
//! crashes.
//!
//! The core is plain Rust and compiles and tests natively; `wasm` is the only
//! module that knows about JavaScript.

/// Benchmarks of the engine, the same code natively and in the browser.
pub mod bench;
/// The error every fallible function of the crate returns.
pub mod error;
/// A run taken home: a script that replays it on real SQLite files.
pub mod export;
/// Scenarios as data: scenario files a person writes, and the engine that runs them.
pub mod format;
/// Checking what callers send, with a sentence for anything wrong.
pub mod input;
/// Scenario parameters, declared once: what the format and the catalog read.
pub mod params;
/// Idempotency receipts, outbox and inbox: a request or event run alone, counts.
pub mod patterns;
/// The catalog of built-in scenarios (scenario files), the crash sweep.
pub mod scenarios;
/// Attempts as step machines, schedulers, schedules and the search.
pub mod sim;
/// SQLite stores with real locking, connections that can be killed, snapshots.
pub mod storage;
/// The only module with `#[wasm_bindgen]`: the exports the page calls.
#[cfg(target_family = "wasm")]
pub mod wasm;

pub use error::{Error, Result};

/// The crate's version, as the page and the command line report it.
pub const CRATE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// A whole number's digits with thousands separators, as the project shows
/// counts ("16,000,000").
pub(crate) fn grouped(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
