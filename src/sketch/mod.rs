//! Sketches of shingle sets: MinHash signatures (fast similarity sketching, one permutation
//! hashing, k-permutation MinHash) and the first seed's samples (modulo sampling, supershingles).

pub mod minhash;
pub mod sample;
pub mod signature;
