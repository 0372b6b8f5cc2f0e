//! The data every stage shares: pairs, counts, and documents skipped with their reasons. It
//! depends on nothing else in the crate.

pub(crate) mod cluster;

use std::time::Duration;

use serde::Serialize;

/// Why a document was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SkipKind {
    /// A NUL byte in the first 8 KiB.
    Binary,
    /// The file or directory could not be read.
    Unreadable,
    /// A JSON-lines record that is not a usable document (bad JSON, no text, a duplicate id).
    Malformed,
    /// A file larger than `max_filesize`.
    TooLarge,
}

impl SkipKind {
    /// A short name for summaries.
    pub fn name(self) -> &'static str {
        match self {
            SkipKind::Binary => "binary",
            SkipKind::Unreadable => "unreadable",
            SkipKind::Malformed => "malformed",
            SkipKind::TooLarge => "too-large",
        }
    }
}

/// A document (or directory) that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skip {
    /// The path or id.
    pub id: String,
    /// The kind of problem.
    pub kind: SkipKind,
    /// A one-line reason for a person.
    pub reason: String,
}

/// The reason given for a binary file, everywhere one is skipped.
pub const BINARY_REASON: &str = "binary file (NUL byte in the first 8 KiB)";

impl Skip {
    /// `id` could not be read: the operating system's reason.
    pub fn unreadable(id: impl Into<String>, err: &std::io::Error) -> Skip {
        Skip {
            id: id.into(),
            // A reader that stops at a size limit says so with this kind (a file given by name
            // may be a device with no size to check first).
            kind: if err.kind() == std::io::ErrorKind::FileTooLarge {
                SkipKind::TooLarge
            } else {
                SkipKind::Unreadable
            },
            reason: io_reason(err),
        }
    }

    /// `id` looks binary (a NUL byte in its first 8 KiB).
    pub fn binary(id: impl Into<String>) -> Skip {
        Skip {
            id: id.into(),
            kind: SkipKind::Binary,
            reason: BINARY_REASON.into(),
        }
    }
}

/// The operating system's reason without Rust's "(os error N)" suffix.
pub fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// A reported pair. `a` and `b` index
/// `ScanReport::documents`; `a`'s id sorts before `b`'s.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Pair {
    /// The first document.
    pub a: u32,
    /// The second document.
    pub b: u32,
    /// The signature estimate of the Jaccard similarity.
    pub estimate: f64,
    /// The exact Jaccard similarity, when it was computed.
    pub jaccard: Option<f64>,
    /// With `Measure::Containment`: the share of `a`'s shingles found in `b`.
    pub a_in_b: Option<f64>,
    /// With `Measure::Containment`: the share of `b`'s shingles found in `a`.
    pub b_in_a: Option<f64>,
}

/// Counts for the summary.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Documents read (including empty ones).
    pub documents: u64,
    /// Documents with no text after normalization.
    pub empty: u64,
    /// Binary files skipped.
    pub skipped_binary: u64,
    /// Files or directories that could not be read.
    pub skipped_unreadable: u64,
    /// JSON-lines records that were not usable documents.
    pub skipped_malformed: u64,
    /// Files larger than the size limit.
    pub skipped_too_large: u64,
    /// Bytes of text read.
    pub bytes: u64,
    /// Distinct candidate pairs considered.
    pub candidates: u64,
    /// Candidate pairs whose exact Jaccard was computed.
    pub exact_checked: u64,
    /// Buckets linked as stars because they exceeded `max_bucket`.
    pub oversized_buckets: u64,
    /// Pairs reported.
    pub pairs: u64,
    /// Pairs accepted by `.ndupignore` rules, not reported.
    pub ignored_pairs: u64,
    /// Pairs accepted by the baseline, not reported.
    pub baseline_pairs: u64,
    /// With an index as cache (`scan --index`): documents signed in this run.
    pub signed: Option<u64>,
    /// With an index as cache: documents whose signature came from the index.
    pub cached: Option<u64>,
    /// Exact mode: the memory estimate checked before the join, in bytes. It counts one
    /// candidate table per worker thread, so it is left out of the JSON report, which must not
    /// depend on the thread count.
    pub memory_estimate: Option<u64>,
    /// Wall time of the scan.
    pub elapsed: Duration,
}

impl Stats {
    /// Counts one skipped document under its kind.
    pub(crate) fn count_skip(&mut self, kind: SkipKind) {
        match kind {
            SkipKind::Binary => self.skipped_binary += 1,
            SkipKind::Unreadable => self.skipped_unreadable += 1,
            SkipKind::Malformed => self.skipped_malformed += 1,
            SkipKind::TooLarge => self.skipped_too_large += 1,
        }
    }
}
