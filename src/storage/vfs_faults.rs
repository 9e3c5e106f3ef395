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

use std::collections::BTreeSet;

use rsqlite_vfs::{VfsError, VfsErrorCode};

use super::footprint;
use super::vfs_store::StoreInner;

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
    fn error(self) -> VfsError {
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

/// The faults pending in a store.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct Faults {
    /// Machines whose disk is full, by their databases' files (an empty
    /// set: every database).
    full: BTreeSet<Vec<String>>,
    /// The next call of each kind that fails, by machine.
    failing: BTreeSet<(Vec<String>, IoCall)>,
}

impl Faults {
    fn is_empty(&self) -> bool {
        self.full.is_empty() && self.failing.is_empty()
    }
}

/// Whether `file` is on the machine holding `databases`.
fn on(databases: &[String], file: &str) -> bool {
    databases.is_empty()
        || databases
            .iter()
            .any(|db| footprint::database_of(file) == db)
}

impl StoreInner {
    /// The disk of the machine holding `databases` (every database if empty)
    /// is full (`full`) or has room again.
    pub(crate) fn set_disk_full(&self, databases: &[String], full: bool) {
        footprint::global();
        let mut faults = self.faults.borrow_mut();
        if full {
            faults.full.insert(databases.to_vec());
        } else {
            faults.full.remove(databases);
        }
    }

    /// The next `call` on a file of the machine holding `databases` fails.
    pub(crate) fn fail_next(&self, databases: &[String], call: IoCall) {
        footprint::global();
        self.faults
            .borrow_mut()
            .failing
            .insert((databases.to_vec(), call));
    }

    /// The error a `call` on `file` meets now, if any: a pending failure
    /// (consumed), or for a write that grows the file (`grows`), a full disk.
    pub(super) fn fault(&self, file: &str, call: IoCall, grows: bool) -> Option<VfsError> {
        let mut faults = self.faults.borrow_mut();
        if faults.is_empty() {
            return None;
        }
        let pending = faults
            .failing
            .iter()
            .find(|(machine, c)| *c == call && on(machine, file))
            .cloned();
        if let Some(pending) = pending {
            faults.failing.remove(&pending);
            return Some(call.error());
        }
        if grows && faults.full.iter().any(|machine| on(machine, file)) {
            return Some(VfsError::new(
                VfsErrorCode::Full,
                "the disk is full (an injected fault)".into(),
            ));
        }
        None
    }

    /// The faults pending now, for a snapshot (`None`: none).
    pub(crate) fn faults(&self) -> Option<Faults> {
        let faults = self.faults.borrow();
        (!faults.is_empty()).then(|| faults.clone())
    }

    /// Puts the pending faults back to `faults` (`None`: none).
    pub(crate) fn restore_faults(&self, faults: Option<&Faults>) {
        *self.faults.borrow_mut() = faults.cloned().unwrap_or_default();
    }

    /// Hashes the pending faults, if there are any (a store without any
    /// hashes as it did before faults existed).
    pub(crate) fn hash_faults(&self, state: &mut dyn std::hash::Hasher) {
        let faults = self.faults.borrow();
        if faults.is_empty() {
            return;
        }
        let mut hasher = super::vfs_bytes::fixed_hasher();
        std::hash::Hash::hash(&*faults, &mut hasher);
        state.write_u64(std::hash::Hasher::finish(&hasher));
    }
}
