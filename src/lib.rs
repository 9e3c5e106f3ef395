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
/// SQLite connections: the version in use and shared in-memory databases.
pub mod storage;
/// The only module with `#[wasm_bindgen]`: the exports the page calls.
#[cfg(target_family = "wasm")]
pub mod wasm;

pub use error::{Error, Result};

/// The crate's version, as the page and the command line report it.
pub const CRATE_VERSION: &str = env!("CARGO_PKG_VERSION");
