//! The CLI test modules. See `util` for the harness.

#[macro_use]
mod util;

mod determinism;
mod errors;
mod flags;
mod input;
mod output;
mod regression;
mod security;
