//! I/O faults a scenario injects where SQLite really meets them, as
//! SQLite's own `ioerr` tests and Turso's simulator do: a machine's disk
//! that is full (a write that would grow a file fails with `SQLITE_FULL`,
//! as `unixWrite` answers `ENOSPC`), and the next write or sync of a
//! machine's files failing (`SQLITE_IOERR_WRITE`, `SQLITE_IOERR_FSYNC`).
//!
//! A machine is a set of databases (their files: the database, its journal,
//! its log), named by database file (`app.db`); an empty set is every
//! database of the store. What is pending is part of the store's state:
//! hashed with it (when there is any) and kept by its snapshots.

use rsqlite_vfs::{VfsError, VfsErrorCode};

use super::footprint;

/// A file operation that can be made to fail once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IoCall {
    /// `xWrite`: `SQLITE_IOERR_WRITE`.
    Write,
    /// `xSync`: `SQLITE_IOERR_FSYNC`.
    Sync,
}

impl IoCall {
    /// Every call, by name (as a scenario file writes them).
    pub const NAMES: &'static [&'static str] = &["write", "sync"];

    /// The call named `name`.
    pub fn parse(name: &str) -> Option<IoCall> {
        match name {
            "write" => Some(IoCall::Write),
            "sync" => Some(IoCall::Sync),
            _ => None,
        }
    }

    /// The error SQLite gets.
    pub(super) fn error(self) -> VfsError {
        match self {
            IoCall::Write => VfsError::new(
                VfsErrorCode::IoWrite,
                "an injected I/O error: the write failed".into(),
            ),
            IoCall::Sync => VfsError::new(
                VfsErrorCode::IoSync,
                "an injected I/O error: the sync failed".into(),
            ),
        }
    }
}

/// The faults pending in a store (its methods are in `vfs_faults.rs`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct Faults {
    /// Machines whose disk is full, by their databases' files (an empty
    /// list: every database), each once, in the order they filled up.
    pub(super) full: Vec<Vec<String>>,
    /// The next call of each kind that fails, by machine, each once.
    pub(super) failing: Vec<(Vec<String>, IoCall)>,
}

impl Faults {
    pub(super) fn is_empty(&self) -> bool {
        self.full.is_empty() && self.failing.is_empty()
    }
}

/// Whether `file` is on the machine holding `databases`.
pub(super) fn on(databases: &[String], file: &str) -> bool {
    databases.is_empty()
        || databases
            .iter()
            .any(|db| footprint::database_of(file) == db)
}

/// What dies at an armed sync ([`super::Store::arm`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Death {
    /// The process of the connection running the statement: its locks
    /// vanish, and nothing it writes from then on lands.
    Process,
    /// The power of the machine holding these database files (every
    /// database if empty).
    Power(Vec<String>),
}

/// A death armed for one statement: at the `left`th sync of connection
/// `conn` (of any connection: `None`).
#[derive(Debug, Clone)]
pub(crate) struct Armed {
    pub(super) conn: Option<u64>,
    /// The sync it was armed at.
    pub(super) at: u32,
    pub(super) left: u32,
    pub(super) death: Death,
}
