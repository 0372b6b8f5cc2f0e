//! Integration tests: the real `ndup` binary run on temporary trees.
//!
//! One test binary (linking is the slow part of building tests) whose modules live in `cli/`:
//! `util` is the harness (temporary trees, running the binary, parsing its output back); each
//! other module covers one area of behaviour, and `regression` holds one test per bug fixed.
//! The generated text comes from `common/corpus.rs`, shared with the library tests (`lib.rs`).

#[path = "common/corpus.rs"]
mod corpus;

mod cli;
