//! Library tests: the layers called directly, no binary involved.
//!
//! One test binary whose modules live in `lib/`: `golden` (the seeds' worked examples, and
//! MinHash and LSH keeping their statistical promises) and `accuracy` (every sketch's estimator,
//! the S-curve, and whole scans against brute force on generated corpora). The generated text
//! comes from `common/corpus.rs`, shared with the CLI tests (`tests.rs`).

#[path = "common/corpus.rs"]
mod corpus;

#[path = "lib/accuracy.rs"]
mod accuracy;
#[path = "lib/golden.rs"]
mod golden;
