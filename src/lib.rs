//! ndup finds near-duplicate documents.
//!
//! The library is in layers, one folder each, that import only downward, in the order the data
//! flows:
//!
//! 1. [`model`]: the data every stage shares (pairs, counts, skipped documents), and [`error`];
//! 2. [`text`]: normalization, `ndup:ignore` markers, shingles hashed to 64 bits;
//! 3. [`sim`]: exact Jaccard, containment and bag similarity of shingle sets;
//! 4. [`sketch`]: MinHash signatures and the first seed's shingle samples;
//! 5. [`verify`]: how a candidate pair is judged (signature agreement, exact Jaccard near the
//!    threshold);
//! 6. [`candidates`]: banded LSH and the inverted index that propose pairs, and the tuner that
//!    chooses the banding;
//! 7. [`join`]: the exact set-similarity join (`--exact`), on any family of hash sets;
//! 8. [`source`]: where documents come from (files, JSON-lines records) and how they are read
//!    again;
//! 9. [`find`]: the pipeline that reads every document and turns the corpus into pairs, with its
//!    configuration;
//! 10. what is built on it: [`dedup`] keeps one document per cluster, [`compare`] shows every
//!     similarity of one pair, [`index`] keeps signatures in a persistent SQLite index, and
//!     [`accept`] holds the pairs a user accepted (baseline, `.ndupignore`);
//! 11. [`report`]: JSON lines, text, CSV, SARIF and GitHub reports.
//!
//! The library knows nothing of the command line: the `ndup` binary turns flags into a
//! [`find::config::ScanConfig`] and calls it.
//!
//! ```
//! use ndup::find::{Pipeline, config::ScanConfig};
//! let p = Pipeline::new(ScanConfig::default()).unwrap();
//! let a = p.signature("The quick brown fox jumps over the lazy dog").unwrap();
//! let b = p.signature("the quick brown fox jumps over the lazy dog!").unwrap();
//! assert!(ndup::sketch::minhash::estimate(&a, &b) > 0.8);
//! ```
//!
//! To sign and compare documents one at a time, the crate root holds a small API in the shape of
//! datasketch's: a [`MinHasher`] signs text exactly as a scan does (or your own tokens and
//! hashes), a [`Signature`] carries the parameters that made it, so that comparing signatures
//! made differently is an [`Error::Mismatch`], and [`MinHashLsh`] is an in-memory LSH index with
//! the scan's banding (insert, query, remove).

#![warn(missing_docs)]

pub mod accept;
pub mod candidates;
pub mod compare;
pub mod dedup;
pub mod error;
pub mod find;
pub mod index;
pub mod join;
pub mod model;
pub mod report;
pub mod sim;
pub mod sketch;
pub mod source;
pub mod text;
pub mod verify;

pub use error::{Error, Result};

pub use candidates::minhash_lsh::MinHashLsh;
pub use sketch::minhash::{SketchKind, SketchParams};
pub use sketch::signature::{MinHasher, MinHasherBuilder, Signature, SignatureBuilder};

pub use find::config::{ScanConfig, StrategyConfig};
pub use find::{Pipeline, ScanReport};
pub use source::Source;

/// Scans `source` with `config`: the strategy the configuration chooses (signatures, samples or
/// the exact join) on files or JSON-lines records, end to end.
///
/// ```no_run
/// let report = ndup::scan(ndup::ScanConfig::default(), &ndup::Source::Files(vec!["docs".into()]))?;
/// for p in &report.pairs {
///     println!("{} ~ {} ({:.2})", report.id(p.a), report.id(p.b), p.estimate);
/// }
/// # Ok::<(), ndup::Error>(())
/// ```
pub fn scan(config: ScanConfig, source: &Source) -> Result<ScanReport> {
    Pipeline::new(config)?.scan_source(source)
}

/// The README's Rust examples, compiled and run by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
