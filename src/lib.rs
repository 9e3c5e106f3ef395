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
/// Scenarios as data: scenario files a person writes, and the engine that runs them.
pub mod format;
/// Checking what callers send, with a sentence for anything wrong.
pub mod input;
/// Idempotency receipts, outbox and inbox: their SQL, rules and steps.
pub mod patterns;
/// The catalog of scenarios: setup, attempts, checks and explanation.
pub mod scenarios;
/// Attempts as step machines, schedulers, schedules and the explorer.
pub mod sim;
/// SQLite stores with real locking, connections that can be killed, snapshots.
pub mod storage;
/// The only module with `#[wasm_bindgen]`: the exports the page calls.
#[cfg(target_family = "wasm")]
pub mod wasm;

pub use error::{Error, Result};

/// The crate's version, as the page and the command line report it.
pub const CRATE_VERSION: &str = env!("CARGO_PKG_VERSION");
