//! Where documents come from: files found by walking paths, JSON-lines records, plain or
//! compressed, and texts already in memory; each document keeps its [`Origin`], so it can be
//! read again.

pub mod files;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod records;
pub mod texts;

use std::path::PathBuf;
use std::sync::Arc;

use records::RecordSource;
use texts::SharedTexts;

/// Where the documents of a scan come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Files and directories (walked recursively), plus any `files_from` list of the input
    /// options.
    Files(Vec<PathBuf>),
    /// JSON-lines files, plain or compressed (`-` is standard input), one document per line.
    Records(Vec<PathBuf>),
    /// Texts already in memory, each with its id (see [`texts`]).
    Texts(SharedTexts),
}

/// A document that was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// The id shown in reports.
    pub id: String,
    /// Where it was read from, to read it again for exact verification.
    pub origin: Origin,
    /// True when normalization left no text (never paired).
    pub empty: bool,
}

/// Where a document's text can be found again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A whole file.
    File(PathBuf),
    /// One line of a JSON-lines source (see [`crate::source::records`] for how it is read again).
    Record {
        /// The source.
        source: Arc<RecordSource>,
        /// The line number, from 1.
        line: u64,
        /// The byte offset of the line in the decompressed stream.
        offset: u64,
    },
    /// A text in memory, read again by asking its [`Texts`](texts::Texts) for it.
    Text {
        /// The texts.
        texts: SharedTexts,
        /// Its position among them.
        index: usize,
    },
}
