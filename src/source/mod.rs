//! Where documents come from: files found by walking paths, and JSON-lines records, plain or
//! compressed; each document keeps its [`Origin`], so it can be read again.

pub mod files;
pub mod records;

use std::path::PathBuf;
use std::sync::Arc;

use records::RecordSource;

/// Where the documents of a scan come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Files and directories (walked recursively), plus any `files_from` list of the input
    /// options.
    Files(Vec<PathBuf>),
    /// JSON-lines files, plain or compressed (`-` is standard input), one document per line.
    Records(Vec<PathBuf>),
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
}
