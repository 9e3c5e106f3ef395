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
    /// A scenario file has a mistake, at its place in the file (both from 1):
    /// the editor puts the caret there.
    #[error("invalid scenario: line {line}, column {column}: {message}")]
    Mistake {
        /// The line.
        line: usize,
        /// The column, in characters.
        column: usize,
        /// What is wrong there.
        message: String,
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
    /// A store, a connection or a run was used in a way it refuses (the
    /// caller's mistake: restoring a snapshot while connections are open,
    /// finishing a run that can still step); the text says why.
    #[error("{0}")]
    Refused(String),
    /// A run went past a bound of the engine: its budget of bytes, or the
    /// most steps any run may take. The text names the bound.
    #[error("{0}")]
    OverBudget(String),
    /// A run the engine makes of its own did not end as it must: a
    /// scenario run before another, a request run alone, a crashed attempt
    /// run to its end. The text says how it ended.
    #[error("{0}")]
    Run(String),
    /// The machine, or SQLite, refused what the engine needs: a thread, its
    /// VFS, a file control, an authorizer.
    #[error("{0}")]
    System(String),
    /// A value could not be written as JSON.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// A defect of the engine (or of a scenario written in Rust): something
    /// that always holds did not. The text says what.
    #[error("{0}")]
    Defect(String),
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

    /// Whether SQLite refused a statement for a constraint (UNIQUE, NOT
    /// NULL, CHECK, FOREIGN KEY): what a step's `on = "constraint"` meets.
    pub fn is_constraint(&self) -> bool {
        self.sqlite_code()
            .is_some_and(|c| c & 0xff == rusqlite::ffi::SQLITE_CONSTRAINT)
    }

    /// The same error again, for a trace that shows it while the run goes
    /// on (errors are not `Clone`: SQLite's and JSON's are kept whole where
    /// they can be, and otherwise as their text, a [`Error::Run`]).
    pub fn duplicate(&self) -> Error {
        match self {
            Error::InvalidInput { field, reason } => Error::InvalidInput {
                field,
                reason: reason.clone(),
            },
            Error::Sqlite(rusqlite::Error::SqliteFailure(code, message)) => {
                Error::Sqlite(rusqlite::Error::SqliteFailure(*code, message.clone()))
            }
            Error::Mistake {
                line,
                column,
                message,
            } => Error::Mistake {
                line: *line,
                column: *column,
                message: message.clone(),
            },
            Error::Dead { connection } => Error::Dead {
                connection: connection.clone(),
            },
            Error::Refused(text) => Error::Refused(text.clone()),
            Error::OverBudget(text) => Error::OverBudget(text.clone()),
            Error::Run(text) => Error::Run(text.clone()),
            Error::System(text) => Error::System(text.clone()),
            Error::Defect(text) => Error::Defect(text.clone()),
            Error::Interrupted => Error::Interrupted,
            other @ (Error::Sqlite(_) | Error::Json(_)) => Error::Run(other.to_string()),
        }
    }

    /// An [`Error::InvalidInput`] for `field`.
    pub fn invalid(field: &'static str, reason: impl fmt::Display) -> Self {
        Error::InvalidInput {
            field,
            reason: reason.to_string(),
        }
    }
}
