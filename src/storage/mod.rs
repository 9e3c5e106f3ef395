//! Opening SQLite connections that share one in-memory database.
//!
//! Every connection is independent, as the reference programs' connections
//! to one database file are: each has its own `sqlite3*` handle and sees the
//! others' work only once it is committed.

use std::sync::atomic::{AtomicU32, Ordering};

use rusqlite::{Connection, OpenFlags};
use serde::Serialize;

use crate::{Error, Result};

/// The SQLite release both targets are built from: rusqlite's bundled
/// amalgamation natively and sqlite-wasm-rs's in wasm. A test on each target
/// checks the running library against it, so the two cannot drift apart.
pub const SQLITE_VERSION: &str = "3.54.1";

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

/// A named in-memory database that any number of connections can open.
///
/// It uses SQLite's `memdb` VFS with a name starting with `/`, which SQLite
/// shares between all connections of the process. The database lives as long
/// as one connection is open, so the store keeps one of its own.
pub struct SharedMemory {
    uri: String,
    _keeper: Connection,
}

static NEXT_STORE: AtomicU32 = AtomicU32::new(1);

impl SharedMemory {
    /// Creates a new, empty database with a name no other store uses.
    pub fn create(label: &str) -> Result<Self> {
        if label.is_empty() || !label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return Err(Error::invalid(
                "label",
                "use 1 or more ASCII letters, digits or '-'",
            ));
        }
        let id = NEXT_STORE.fetch_add(1, Ordering::Relaxed);
        let uri = format!("file:/{label}-{id}?vfs=memdb");
        let keeper = open_uri(&uri)?;
        Ok(SharedMemory {
            uri,
            _keeper: keeper,
        })
    }

    /// Opens a new, independent connection to this database.
    pub fn connect(&self) -> Result<Connection> {
        open_uri(&self.uri)
    }
}

fn open_uri(uri: &str) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    Ok(Connection::open_with_flags(uri, flags)?)
}

/// What [`round_trip`] wrote through one connection and read through another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoundTrip {
    /// The SQLite version that ran it.
    pub sqlite_version: &'static str,
    /// The row id connection A's insert got.
    pub written_id: i64,
    /// What connection B read before A wrote.
    pub read_before_write: Vec<String>,
    /// What connection B read after A committed.
    pub read_after_commit: Vec<String>,
}

/// The longest note [`round_trip`] accepts, in characters.
pub const MAX_NOTE_CHARS: usize = 1000;

/// Writes `note` through connection A and reads it back through connection B
/// of a fresh shared database: B sees no rows before A writes and the note
/// once A has committed.
pub fn round_trip(note: &str) -> Result<RoundTrip> {
    let chars = note.chars().count();
    if chars == 0 || chars > MAX_NOTE_CHARS {
        return Err(Error::invalid(
            "note",
            format!("use 1 to {MAX_NOTE_CHARS} characters (got {chars})"),
        ));
    }
    let store = SharedMemory::create("round-trip")?;
    let a = store.connect()?;
    let b = store.connect()?;
    a.execute_batch("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")?;

    let read_before_write = read_notes(&b)?;
    a.execute_batch("BEGIN IMMEDIATE")?;
    a.execute("INSERT INTO notes (body) VALUES (?1)", [note])?;
    let written_id = a.last_insert_rowid();
    a.execute_batch("COMMIT")?;
    let read_after_commit = read_notes(&b)?;

    Ok(RoundTrip {
        sqlite_version: sqlite_version(),
        written_id,
        read_before_write,
        read_after_commit,
    })
}

fn read_notes(connection: &Connection) -> Result<Vec<String>> {
    let mut statement = connection.prepare("SELECT body FROM notes ORDER BY id")?;
    let rows = statement.query_map([], |row| row.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}
