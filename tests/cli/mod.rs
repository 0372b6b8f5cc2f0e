//! The CLI test modules. See `util` for the harness.

#[macro_use]
mod util;

mod bounds;
mod compare;
mod config;
mod dedup;
mod determinism;
mod errors;
mod exact;
mod exact_memory;
mod flags;
mod formats;
mod fuzz;
mod gates;
mod html;
mod index;
mod index_safety;
mod input;
mod jsonl;
mod output;
mod parquet;
mod regression;
mod sarif;
mod scale;
mod schema;
mod security;
mod shell;
mod sign;
mod sketch;
mod text_rules;
mod tree;
mod tune;
