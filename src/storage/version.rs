//! Versions: the SQLite release both targets are built from, the versions
//! this build runs (as the page and `replayground version` report them), and
//! the bytes SQLite holds.

use rusqlite::Connection;
use serde::Serialize;

/// The SQLite release both targets are built from: rusqlite's bundled
/// amalgamation natively and sqlite-wasm-rs's in wasm. A test on each target
/// checks the running library against it, so the two cannot drift apart.
pub const SQLITE_VERSION: &str = "3.54.1";

/// The bytes SQLite holds now, every connection together
/// (`sqlite3_memory_used`; its heap is limited to
/// [`vfs::SQLITE_HEAP_LIMIT`](super::vfs::SQLITE_HEAP_LIMIT)).
pub fn sqlite_memory_used() -> i64 {
    // SAFETY: a plain call that reads a counter.
    unsafe { rusqlite::ffi::sqlite3_memory_used() }
}

/// The version of the SQLite library actually linked into this build.
pub fn sqlite_version() -> &'static str {
    rusqlite::version()
}

/// Crate and SQLite versions, as reported by the page and `replayground version`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Versions {
    /// This crate's version.
    pub replayground: &'static str,
    /// The running SQLite library's version.
    pub sqlite: &'static str,
    /// The running SQLite library's source id (check-in and date).
    pub sqlite_source_id: String,
}

impl Versions {
    /// The versions of this build.
    pub fn current() -> Self {
        let source_id = Connection::open_in_memory()
            .and_then(|c| c.query_row("SELECT sqlite_source_id()", [], |row| row.get(0)))
            .unwrap_or_else(|e| format!("unavailable ({e})"));
        Versions {
            replayground: crate::CRATE_VERSION,
            sqlite: sqlite_version(),
            sqlite_source_id: source_id,
        }
    }
}
