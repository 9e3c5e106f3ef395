//! The smallest demonstration of the storage: a note written through one
//! connection and read through another, before and after the commit.

use serde::Serialize;

use super::conn::Conn;
use super::locks::LevelName;
use super::sql::SqlValue;
use super::store::Store;
use super::version::sqlite_version;
use crate::{Error, Result};

/// What [`round_trip`] saw through connection B around connection A's write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoundTrip {
    /// The SQLite version that ran it.
    pub sqlite_version: &'static str,
    /// The row id connection A's insert got.
    pub written_id: i64,
    /// What B read while A's transaction was open and uncommitted.
    pub read_during_write: Vec<String>,
    /// A's lock while its transaction was open.
    pub writer_lock: String,
    /// What B read after A committed.
    pub read_after_commit: Vec<String>,
}

/// The longest note [`round_trip`] accepts, in characters.
pub const MAX_NOTE_CHARS: usize = 1000;

/// Writes `note` through connection A and reads through connection B of a
/// fresh store: while A's transaction is open B still reads the old rows
/// (none), and once A has committed B reads the note.
pub fn round_trip(note: &str) -> Result<RoundTrip> {
    let chars = note.chars().count();
    if chars == 0 || chars > MAX_NOTE_CHARS {
        return Err(Error::invalid(
            "note",
            format!("use 1 to {MAX_NOTE_CHARS} characters (got {chars})"),
        ));
    }
    let store = Store::new("round-trip")?;
    let a = store.connect("notes.db", "A")?;
    let b = store.connect("notes.db", "B")?;
    a.execute(
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)",
        &[],
    )?;
    a.execute("BEGIN IMMEDIATE", &[])?;
    let inserted = a.execute("INSERT INTO notes (body) VALUES (?1)", &[note.into()])?;
    let writer_lock = a.lock_level().name().to_string();
    let read_during_write = read_notes(&b)?;
    a.execute("COMMIT", &[])?;
    let read_after_commit = read_notes(&b)?;
    Ok(RoundTrip {
        sqlite_version: sqlite_version(),
        written_id: inserted.last_insert_rowid,
        read_during_write,
        writer_lock,
        read_after_commit,
    })
}

fn read_notes(connection: &Conn) -> Result<Vec<String>> {
    let rows = connection.execute("SELECT body FROM notes ORDER BY id", &[])?;
    Ok(rows
        .rows
        .into_iter()
        .map(|row| match row.into_iter().next() {
            Some(SqlValue::Text(text)) => text,
            other => format!("{other:?}"),
        })
        .collect())
}
