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
    /// Nothing could be read, so there is nothing to compare. Carries what was skipped, so the
    /// message can say why (otherwise `ndup scan broken-link` would never name the problem).
    #[error("no document could be read{}", skip_reasons(skipped))]
    NoDocuments {
        /// The files and directories that were skipped, with their reasons.
        skipped: Vec<crate::input::Skip>,
    },
}

/// `": a: reason; b: reason"`, the first few skips of a failed scan, for its one-line error.
fn skip_reasons(skipped: &[crate::input::Skip]) -> String {
    const SHOWN: usize = 3;
    let mut s = String::new();
    for (i, skip) in skipped.iter().take(SHOWN).enumerate() {
        s += if i == 0 { ": " } else { "; " };
        s += &format!("{}: {}", skip.id, skip.reason);
    }
    if skipped.len() > SHOWN {
        s += &format!("; and {} more", skipped.len() - SHOWN);
    }
    s
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{Skip, SkipKind};

    #[test]
    fn no_documents_names_the_first_skips() {
        let skip = |id: &str| Skip {
            id: id.into(),
            kind: SkipKind::Unreadable,
            reason: "No such file or directory".into(),
        };
        let none = Error::NoDocuments { skipped: vec![] };
        assert_eq!(none.to_string(), "no document could be read");
        let one = Error::NoDocuments {
            skipped: vec![skip("a")],
        };
        assert_eq!(
            one.to_string(),
            "no document could be read: a: No such file or directory"
        );
        let five = Error::NoDocuments {
            skipped: ["a", "b", "c", "d", "e"].map(skip).to_vec(),
        };
        assert!(
            five.to_string()
                .ends_with("c: No such file or directory; and 2 more")
        );
    }
}
