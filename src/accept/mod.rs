//! Pairs a user has accepted: a baseline of known pairs, and `.ndupignore` rules.

pub mod baseline;
pub mod ndupignore;
