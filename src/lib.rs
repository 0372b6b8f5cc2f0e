//! ndup finds near-duplicate documents.
//!
//! The pipeline, one module per stage, in the order the data flows:
//!
//! 1. [`input`]: walk paths, read files, skip binary and unreadable ones;
//! 2. [`normalize`]: NFKC, lowercase, collapse white space, trim;
//! 3. [`shingle`]: character, word or stop-word shingles, hashed to 64 bits with xxh3;
//! 4. [`minhash`]: signatures (fast similarity sketching by default), in parallel;
//! 5. [`lsh`]: banded locality-sensitive hashing into candidate pairs;
//! 6. [`verify`]: signature agreement and exact Jaccard;
//! 7. [`cluster`]: connected components of the pairs;
//! 8. [`output`]: JSON lines and text reports.
//!
//! [`exact`] replaces stages 4 to 6 with an exact set-similarity join (`--exact`).
//!
//! [`scan`] ties them together; [`config::ScanConfig`] holds every knob. The library knows
//! nothing of the command line: the `ndup` binary turns flags into a config and calls it.
//!
//! ```
//! use ndup::{config::ScanConfig, scan::Pipeline};
//! let p = Pipeline::new(ScanConfig::default()).unwrap();
//! let a = p.signature("The quick brown fox jumps over the lazy dog").unwrap();
//! let b = p.signature("the quick brown fox jumps over the lazy dog!").unwrap();
//! assert!(ndup::minhash::estimate(&a, &b) > 0.8);
//! ```

#![warn(missing_docs)]

pub mod cluster;
pub mod config;
pub mod error;
pub mod exact;
pub mod input;
pub mod lsh;
pub mod minhash;
pub mod normalize;
pub mod output;
pub mod scan;
pub mod shingle;
pub mod verify;

pub use error::{Error, Result};
