//! Integration tests: the real `ndup` binary run on temporary trees.
//!
//! One test binary (linking is the slow part of building tests) whose modules live in `cli/`:
//! `util` is the harness (temporary trees, running the binary, parsing its JSON lines back,
//! generating corpora deterministically); each other module covers one area of behaviour, and
//! `regression` holds one test per bug fixed.

mod cli;
