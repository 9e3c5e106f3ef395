//! SQLite storage: stores of in-memory database files with SQLite's real
//! locking, and independent connections to them that can be killed.
//!
//! Every connection is independent, as the reference programs' connections
//! to one database file are: each has its own `sqlite3*` handle, takes
//! SQLite's locks through the [`vfs`], and sees the others' work only once it
//! is committed.
//!
//! Its files:
//!
//! - the VFS, in-memory files with SQLite's real locking:
//!   [`vfs`](crate::storage::vfs) (its face: the registration, and the names
//!   the rest of the crate uses), with `vfs_bytes.rs` (a file's bytes, their
//!   versions and hashes), `vfs_durable.rs` (what is synced, which a power
//!   loss keeps, and the file operations logged), `vfs_faults.rs` (a full
//!   disk, a failing write or sync, met by the files; what is pending, in
//!   `faults.rs`), `vfs_store.rs` (a store's shared state: its
//!   connections, handles and locks), `vfs_snapshot.rs` (its files as a
//!   whole: listed, hashed, copied and put back), `vfs_file.rs` (a file
//!   handle: its reads, writes and locks), `vfs_shm.rs` (the shared-memory
//!   methods of WAL mode) and `vfs_methods.rs` (what SQLite calls on the VFS:
//!   open, close, access, names, time and randomness); beneath them
//!   [`locks`](crate::storage::locks) (the file locks),
//!   [`shm`](crate::storage::shm) (the WAL's shared memory and its locks) and
//!   [`footprint`](crate::storage::footprint) (what a step reads and writes);
//! - `sql.rs`: the values SQLite stores, and one statement run to its rows;
//! - `bounds.rs`: what SQL a caller wrote may cost (the budgets, the
//!   caller's interrupt) and may set (the PRAGMAs refused);
//! - `local.rs`: what a statement may leave in, or read from, its
//!   connection rather than the files (the rule the search's state keeps);
//! - `conn.rs`: a connection (opened, pooled, killed) and what it runs;
//!   `conn_locks.rs`: the locks it holds and the snapshot it reads;
//! - `store.rs`: a store, and the snapshots of its files;
//! - `round_trip.rs`: two connections around one write, the smallest
//!   demonstration;
//! - `version.rs`: the SQLite release, the crate's and SQLite's versions,
//!   and SQLite's memory in use;
//! - `modes.rs`: the journal modes and `synchronous` levels;
//! - this file: SQLite's answer to a stale snapshot's
//!   write, and every name used from outside the module, re-exported (no
//!   file of the module uses this one).

mod bounds;
mod conn;
mod conn_locks;
mod faults;
pub(crate) mod footprint;
mod local;
pub(crate) mod locks;
mod modes;
mod round_trip;
pub(crate) mod shm;
mod sql;
mod store;
mod version;
pub(crate) mod vfs;
mod vfs_bytes;
mod vfs_durable;
mod vfs_faults;
mod vfs_file;
mod vfs_methods;
mod vfs_shm;
mod vfs_snapshot;
mod vfs_store;

use crate::Error;

#[cfg(target_family = "wasm")]
pub(crate) use bounds::interrupt_asked;
pub(crate) use bounds::interrupt_due;
#[cfg(target_family = "wasm")]
pub(crate) use bounds::set_interrupt;
pub(crate) use bounds::{
    charge_bytes, is_interrupt, message_and_offset, refusal, run_budget_out, take_interrupted,
    with_budget, with_run_budget, RunBudget, DENIED_PRAGMAS,
};
pub(crate) use conn::{Change, Counters};
pub use conn::{ChangeOp, Conn};
pub use faults::{Death, IoCall};
pub(crate) use local::{local_use, LocalUse};
pub(crate) use locks::LevelName;
pub use locks::LockLevel;
pub use modes::{EngineOptions, Journal, Synchronous};
pub use round_trip::{round_trip, RoundTrip, MAX_NOTE_CHARS};
pub(crate) use shm::ShmLocks;
pub(crate) use sql::Rows;
pub use sql::{run_sql, SqlValue};
pub(crate) use store::Snapshot;
pub use store::Store;
pub use version::{sqlite_memory_used, sqlite_version, Versions, SQLITE_VERSION};
pub use vfs_durable::seeded_tearing;

/// What `SQLITE_BUSY_SNAPSHOT` means, for people.
pub(crate) const BUSY_SNAPSHOT: &str = "SQLITE_BUSY_SNAPSHOT: its read snapshot is older than the last commit, so it may not write; waiting cannot help, only ROLLBACK and a new transaction";

/// Whether SQLite answered `SQLITE_BUSY_SNAPSHOT`: in WAL mode, a read
/// transaction tried to write after another connection committed. Its
/// primary code is `SQLITE_BUSY`, but no lock release will let it through.
pub(crate) fn is_busy_snapshot(error: &Error) -> bool {
    error.sqlite_code() == Some(rusqlite::ffi::SQLITE_BUSY_SNAPSHOT)
}

/// The PRAGMA that gives a scenario's database its page size, run when the
/// database is created (before its journal mode and schema). Scenario
/// tables hold a few rows, and a search handles whole pages of them: it
/// copies every file at a checkpoint, hashes the changed ones at every
/// state, and a connection whose cache went stale reads its pages again.
/// SQLite's smallest page, 512 bytes, holds them as well as 4096 did, in an
/// eighth of the bytes: the search of three producers and two relays took
/// 14.1 instead of 18.1 billion instructions, with the same states.
pub(crate) const SCENARIO_PAGE_SIZE: &str = "PRAGMA page_size = 512";
