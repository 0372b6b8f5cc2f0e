//! Candidate pairs from sketches: banded LSH over signatures, an inverted index over samples,
//! and the tuner that chooses the banding for a threshold.

pub(crate) mod inverted;
pub mod lsh;
pub mod minhash_lsh;
pub mod tune;
