//! ndup finds near-duplicate documents.
//!
//! The pipeline, one module per stage, in the order the data flows:
//!
//! 1. [`input`]: walk paths, read files, skip binary and unreadable ones; [`records`]: JSON-lines
//!    corpora, plain or compressed, from files or standard input;
//! 2. [`normalize`]: NFKC, lowercase, collapse white space, trim;
//! 3. [`shingle`]: character, word or stop-word shingles, hashed to 64 bits;
//! 4. [`minhash`]: signatures (fast similarity sketching by default), in parallel;
//! 5. [`lsh`]: banded locality-sensitive hashing into candidate pairs;
//! 6. [`verify`]: signature agreement and exact Jaccard;
//! 7. [`cluster`]: connected components of the pairs;
//! 8. [`output`]: JSON lines, text, CSV, SARIF and GitHub reports.
//!
//! [`exact`] replaces stages 4 to 6 with an exact set-similarity join (`--exact`).
//!
//! [`markers`] leave regions of a document out; [`ndupignore`] and [`baseline`] accept pairs.
//!
//! [`scan`] ties them together and [`dedup`] keeps one document per cluster; [`sample`] holds
//! the first seed's shingle-sample sketches (modulo sampling, supershingles), [`tune`] chooses
//! and explains the banding, [`compare`] shows every similarity of one pair, and [`index`] keeps
//! signatures in a persistent SQLite index. [`config::ScanConfig`] holds every knob. The
//! library knows nothing of the command line: the
//! `ndup` binary turns flags into a config and calls it.
//!
//! ```
//! use ndup::{config::ScanConfig, scan::Pipeline};
//! let p = Pipeline::new(ScanConfig::default()).unwrap();
//! let a = p.signature("The quick brown fox jumps over the lazy dog").unwrap();
//! let b = p.signature("the quick brown fox jumps over the lazy dog!").unwrap();
//! assert!(ndup::minhash::estimate(&a, &b) > 0.8);
//! ```

#![warn(missing_docs)]

pub(crate) mod arena;
pub mod baseline;
pub mod cluster;
pub mod compare;
pub mod config;
pub mod dedup;
pub mod error;
pub mod exact;
pub mod index;
pub mod input;
pub mod lsh;
pub mod markers;
pub mod minhash;
pub mod ndupignore;
pub mod normalize;
pub mod output;
pub mod records;
pub mod sample;
pub mod scan;
pub mod shingle;
pub mod tune;
pub mod verify;

pub use error::{Error, Result};
