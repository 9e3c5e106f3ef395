use std::fmt;

/// Result with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong, each with a sentence a person can act on.
///
/// It crosses the wasm boundary as a JavaScript `Error` (through
/// `wasm_bindgen::JsError`'s `From<E: std::error::Error>`), so its `Display`
/// text is what a user of the page reads.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A caller-supplied value was rejected before anything was written.
    #[error("invalid {field}: {reason}")]
    InvalidInput {
        /// The name of the field, as the caller spelled it.
        field: &'static str,
        /// Why it was rejected and what would be accepted.
        reason: String,
    },
    /// SQLite answered with an error.
    #[error("SQLite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A killed connection was used again.
    #[error("connection {connection} is dead (it was killed); open a new connection to continue")]
    Dead {
        /// The connection's label.
        connection: String,
    },
    /// A store was used in a way it refuses; the text says why.
    #[error("{0}")]
    Store(String),
    /// The caller asked the engine to stop (`setInterrupt`): the run under
    /// way was abandoned, and nothing of it counts.
    #[error(
        "interrupted: the caller asked the engine to stop, and the run under way was abandoned"
    )]
    Interrupted,
}

impl Error {
    /// The SQLite extended result code, if SQLite produced this error.
    pub fn sqlite_code(&self) -> Option<i32> {
        match self {
            Error::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => Some(e.extended_code),
            _ => None,
        }
    }

    /// Whether SQLite answered `SQLITE_BUSY`: a lock is held by another connection.
    pub fn is_busy(&self) -> bool {
        self.sqlite_code()
            .is_some_and(|c| c & 0xff == rusqlite::ffi::SQLITE_BUSY)
    }

    /// An [`Error::InvalidInput`] for `field`.
    pub fn invalid(field: &'static str, reason: impl fmt::Display) -> Self {
        Error::InvalidInput {
            field,
            reason: reason.to_string(),
        }
    }
}
