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
}

impl Error {
    /// An [`Error::InvalidInput`] for `field`.
    pub fn invalid(field: &'static str, reason: impl fmt::Display) -> Self {
        Error::InvalidInput {
            field,
            reason: reason.to_string(),
        }
    }
}
