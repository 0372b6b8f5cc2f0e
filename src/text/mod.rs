//! Text to sets: normalization, `ndup:ignore` markers, and shingles hashed to 64 bits.

pub mod markers;
pub mod normalize;
pub mod shingle;
