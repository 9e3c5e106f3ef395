//! How a database is stored: its journal mode, and how much SQLite waits
//! for the disk (`synchronous`): the two settings every scenario takes as
//! parameters.

use serde::Serialize;

/// The options SQLite runs a scenario's databases with: the two settings
/// every scenario takes as parameters, as one typed value. A scenario reads
/// them from its parameters once, when it is built, and a sweep hands them
/// over typed; nothing reads them back from text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct EngineOptions {
    /// The journal mode of every database.
    pub journal: Journal,
    /// `PRAGMA synchronous` on every connection.
    pub synchronous: Synchronous,
}

/// How a database keeps its transactions atomic: SQLite's rollback journal
/// (the default, as the reference programs run) or its write-ahead log.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Journal {
    /// `journal_mode = DELETE`: a writer locks readers out while it commits.
    #[default]
    Rollback,
    /// `journal_mode = WAL`: readers keep a snapshot beside one writer.
    Wal,
}

impl Journal {
    /// Every mode, by name (the order the page offers them in).
    pub const NAMES: &'static [&'static str] = &["rollback", "wal"];

    /// Its name in files, links and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Journal::Rollback => "rollback",
            Journal::Wal => "wal",
        }
    }

    /// The mode named `name`, if it is one.
    pub fn parse(name: &str) -> Option<Journal> {
        match name {
            "rollback" => Some(Journal::Rollback),
            "wal" => Some(Journal::Wal),
            _ => None,
        }
    }

    /// The PRAGMA that puts a database in this mode (it persists in the
    /// file, so every connection opened later uses it).
    pub fn pragma(self) -> &'static str {
        match self {
            Journal::Rollback => "PRAGMA journal_mode = DELETE",
            Journal::Wal => "PRAGMA journal_mode = WAL",
        }
    }
}
/// How much SQLite waits for the disk (`PRAGMA synchronous`): which of the
/// files it writes it syncs, and so what a power loss keeps (see
/// `vfs_durable.rs`). Set per connection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Synchronous {
    /// No sync at all: a power loss may lose anything, or corrupt the database.
    Off,
    /// Syncs at the critical moments only: in WAL mode, not at commit (a
    /// power loss may lose the last transactions, never consistency).
    Normal,
    /// SQLite's default: syncs at every commit.
    #[default]
    Full,
    /// As FULL, and in rollback mode the directory after the journal is
    /// deleted, so that a commit is durable when it returns.
    Extra,
}

impl Synchronous {
    /// Every level, by name, weakest first.
    pub const NAMES: &'static [&'static str] = &["off", "normal", "full", "extra"];

    /// Its name in files, links and JSON.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The level named `name`, if it is one.
    pub fn parse(name: &str) -> Option<Synchronous> {
        const ALL: [Synchronous; 4] = [
            Synchronous::Off,
            Synchronous::Normal,
            Synchronous::Full,
            Synchronous::Extra,
        ];
        Self::NAMES.iter().position(|n| *n == name).map(|i| ALL[i])
    }

    /// The PRAGMA that sets it on a connection.
    pub fn pragma(self) -> String {
        format!("PRAGMA synchronous = {}", self.name().to_ascii_uppercase())
    }
}
