//! The library's error type. Every message is written for a person and names the file or the
//! parameter at fault; the binary maps these to exit codes in one place.

use std::path::PathBuf;

/// Everything that can go wrong inside the library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A path given by the user does not exist (checked before any work starts).
    #[error("{path}: no such file or directory")]
    MissingPath {
        /// The path as the user wrote it.
        path: PathBuf,
    },
    /// A file or stream could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file that failed.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// An input that exists but cannot be used as given.
    #[error("{path}: {reason}")]
    BadInput {
        /// The path as the user wrote it.
        path: PathBuf,
        /// Why it cannot be used.
        reason: String,
    },
    /// The parameters contradict each other or are out of range.
    #[error("invalid parameters: {0}")]
    InvalidConfig(String),
    /// Two sketches made with different parameters were compared.
    #[error("mismatched sketches: {0}")]
    Mismatch(String),
    /// Nothing could be read, so there is nothing to compare.
    #[error("no document could be read")]
    NoDocuments,
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Builds an [`Error::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
