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
//! [`ScanConfig`] and calls [`scan`].
//!
//! To sign and compare documents one at a time, the crate root holds a small API in the shape of
//! datasketch's: a [`MinHasher`] signs text exactly as a scan does (or your own tokens and
//! hashes), a [`Signature`] carries the parameters that made it, so that comparing signatures
//! made differently is an [`Error::Mismatch`], and [`MinHashLsh`] is an in-memory LSH index with
//! the scan's banding (insert, query, remove).
//!
//! ```
//! use ndup::{MinHashLsh, MinHasher};
//! let hasher = MinHasher::new(128)?;
//! let a = hasher.sign("The quick brown fox jumps over the lazy dog").unwrap();
//! let b = hasher.sign("the quick brown fox jumps over the lazy dog!").unwrap();
//! assert!(a.jaccard(&b)? > 0.8);
//! let mut lsh = MinHashLsh::new(0.8, 128)?;
//! lsh.insert("a", &a)?;
//! assert_eq!(lsh.query(&b)?, ["a"]);
//! # Ok::<(), ndup::Error>(())
//! ```
//!
//! # Features
//!
//! - Without default features (`default-features = false`) the crate is the core: `model`,
//!   `error`, `text`, `sim`, `sketch`, `verify`, `candidates` and `join`, with small pure-Rust
//!   dependencies (rayon, xxhash-rust, rustc-hash, the unicode crates, serde, thiserror, rand, bytemuck,
//!   memchr).
//! - `pipeline`: reading corpora (walking trees, JSON lines, gzip and zstd), the scan with every
//!   strategy, dedup, compare, the SQLite index (bundled), accepted pairs and every report format.
//! - `cli` (the default): the `ndup` binary.
//!
// Without `pipeline`, the modules and items it adds do not exist: their names above link here.
#![cfg_attr(
    not(feature = "pipeline"),
    doc = "This documentation was built without `pipeline`: the names above of what it adds \
           lead to this list.",
    doc = "",
    doc = "[`find`]: #features",
    doc = "[`source`]: #features",
    doc = "[`dedup`]: #features",
    doc = "[`compare`]: #features",
    doc = "[`index`]: #features",
    doc = "[`accept`]: #features",
    doc = "[`report`]: #features",
    doc = "[`ScanConfig`]: #features",
    doc = "[`scan`]: #features"
)]
#![warn(missing_docs)]
// Without `pipeline`, some crate-internal helpers of the core (the inverted index, union-find,
// `Flat`, parts of `Verifier`...) have no user: they serve the pipeline only.
#![cfg_attr(not(feature = "pipeline"), allow(dead_code, unused_imports))]

#[cfg(feature = "pipeline")]
pub mod accept;
pub mod candidates;
#[cfg(feature = "pipeline")]
pub mod compare;
#[cfg(feature = "pipeline")]
pub mod dedup;
pub mod error;
#[cfg(feature = "pipeline")]
pub mod find;
#[cfg(feature = "pipeline")]
pub mod index;
pub mod join;
pub mod model;
#[cfg(feature = "pipeline")]
pub mod report;
#[cfg(feature = "parquet")]
pub mod shards;
pub mod sim;
pub mod sketch;
#[cfg(feature = "pipeline")]
pub mod source;
pub mod text;
pub mod verify;

pub use error::{Error, Result};

pub use candidates::minhash_lsh::{MinHashLsh, QueryBatch};
pub use sketch::minhash::{SketchKind, SketchParams};
pub use sketch::signature::{MinHasher, MinHasherBuilder, Signature, SignatureBuilder};

#[cfg(feature = "pipeline")]
pub use find::config::{ScanConfig, StrategyConfig};
#[cfg(feature = "pipeline")]
pub use find::{Pipeline, ScanReport};
#[cfg(feature = "pipeline")]
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
#[cfg(feature = "pipeline")]
pub fn scan(config: ScanConfig, source: &Source) -> Result<ScanReport> {
    Pipeline::new(config)?.scan_source(source)
}

/// The README's Rust examples, compiled and run by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
