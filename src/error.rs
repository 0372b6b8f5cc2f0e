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
    /// The parameters contradict each other or are out of range.
    #[error("invalid parameters: {0}")]
    InvalidConfig(String),
    /// Two sketches made with different parameters were compared.
    #[error("mismatched sketches: {0}")]
    Mismatch(String),
    /// Exact mode would need more memory than allowed.
    #[error(
        "exact mode needs at least {} for this corpus, more than --max-memory {}; \
         use MinHash mode (without --exact) or raise --max-memory",
        format_bytes(*needed),
        format_bytes(*limit)
    )]
    TooLargeForExact {
        /// The estimate, in bytes.
        needed: u64,
        /// The limit, in bytes.
        limit: u64,
    },
    /// Exact mode numbers shingles with 32 bits.
    #[error(
        "exact mode handles at most {max} shingles in all, and this corpus has {shingles}; \
         use MinHash mode (without --exact)"
    )]
    TooManyShingles {
        /// Shingles in the corpus.
        shingles: u64,
        /// The most exact mode handles.
        max: u64,
    },
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

/// A byte count for people, in binary units as `--max-memory` reads them: `512 B`, `1.5 KiB`,
/// `3.0 GiB`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_for_people() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(1536), "1.5 KiB");
        assert_eq!(format_bytes(3 << 30), "3.0 GiB");
    }
}
