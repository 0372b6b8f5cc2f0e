//! Exact mode: every document's shingle set, kept in memory, then the set-similarity join of
//! [`crate::join`].

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::find::ScanReport;
use crate::find::config::ScanConfig;
use crate::join::{JoinOptions, Threshold, dedup_hashes, join};
use crate::model::{Pair, Skip, Stats};
use crate::sim::Measure;
use crate::source::files::{self as input, Read};
use crate::source::{Document, Origin};
use crate::text::normalize::normalize_into;
use crate::text::shingle::Shingler;

/// Every document read, with the shingle set of each non-empty one: exact mode's phase one.
#[derive(Debug, Clone, Default)]
pub struct ShingledCorpus {
    /// Every document read, in input order.
    pub documents: Vec<Document>,
    /// The sorted, distinct shingle hashes of each non-empty document.
    pub sets: Vec<Vec<u64>>,
    /// For each set, the index of its document in `documents`.
    pub set_doc: Vec<u32>,
    /// What was skipped.
    pub skipped: Vec<Skip>,
    /// Counts so far.
    pub stats: Stats,
    /// Bytes the sets hold (8 per shingle, 24 per set).
    pub held_bytes: u64,
    /// The most memory one document needed while it was shingled: its text twice (read and
    /// normalized) and its shingle hashes three times (a growing vector and the sort's buffer).
    pub largest_document_bytes: u64,
}

impl ShingledCorpus {
    /// Phase one's peak: the sets, plus the largest document in each of `threads` workers.
    pub fn memory_estimate(&self, threads: u64) -> u64 {
        self.held_bytes + threads * self.largest_document_bytes
    }
}

enum Outcome {
    /// The set, the document's bytes, and what shingling it took at its peak.
    Set(Vec<u64>, u64, u64),
    Empty(u64),
    Skipped(Skip),
    Aborted,
}

/// Phase one of exact mode: finds, reads, normalizes and shingles every document in parallel and
/// keeps each shingle set. Stops early, with [`Error::TooLargeForExact`], as soon as the sets
/// alone exceed `config.max_memory`.
pub fn shingle_files(config: &ScanConfig, paths: &[PathBuf]) -> Result<ShingledCorpus> {
    let shingler = Shingler::new(&config.shingle)?;
    let (entries, mut skipped) = input::collect(paths, &config.input)?;
    let held = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let limit = config.max_memory.unwrap_or(u64::MAX);
    let outcomes: Vec<Outcome> = entries
        .par_iter()
        .map_init(String::new, |norm, e| {
            if stop.load(Relaxed) {
                return Outcome::Aborted;
            }
            match input::read_document(&e.path) {
                Err(err) => Outcome::Skipped(Skip::unreadable(e.id.clone(), &err)),
                Ok(Read::Binary) => Outcome::Skipped(Skip::binary(e.id.clone())),
                Ok(Read::Text(text)) => {
                    let bytes = text.len() as u64;
                    // `ndup:ignore` regions are left out here as in every other mode.
                    normalize_into(
                        &crate::text::markers::strip_ignored(&text),
                        &config.normalize,
                        norm,
                    );
                    drop(text);
                    let mut set = Vec::new();
                    shingler.hashes_into(norm, config.seed, &mut set);
                    if set.is_empty() {
                        return Outcome::Empty(bytes);
                    }
                    // The text and its normalized copy, the hashes (a vector grown by doubling,
                    // so up to twice their size) and the sort's buffer or the table.
                    let peak = 2 * bytes + 24 * set.len() as u64;
                    dedup_hashes(&mut set);
                    set.shrink_to_fit();
                    let now = held.fetch_add(set.len() * 8 + 24, Relaxed) + set.len() * 8 + 24;
                    if now as u64 > limit {
                        stop.store(true, Relaxed);
                    }
                    Outcome::Set(set, bytes, peak)
                }
            }
        })
        .collect();
    if stop.into_inner() {
        return Err(Error::TooLargeForExact {
            needed: held.into_inner() as u64,
            limit,
        });
    }

    let mut stats = Stats::default();
    let mut documents = Vec::with_capacity(entries.len());
    let mut sets = Vec::new();
    let mut set_doc = Vec::new();
    let mut largest_document_bytes = 0;
    for (entry, outcome) in entries.into_iter().zip(outcomes) {
        let doc = documents.len() as u32;
        let empty = match outcome {
            Outcome::Skipped(skip) => {
                skipped.push(skip);
                continue;
            }
            Outcome::Aborted => unreachable!("an aborted scan returns above"),
            Outcome::Empty(bytes) => {
                stats.bytes += bytes;
                stats.empty += 1;
                true
            }
            Outcome::Set(set, bytes, peak) => {
                stats.bytes += bytes;
                largest_document_bytes = largest_document_bytes.max(peak);
                sets.push(set);
                set_doc.push(doc);
                false
            }
        };
        documents.push(Document {
            id: entry.id,
            origin: Origin::File(entry.path),
            empty,
        });
    }
    stats.documents = documents.len() as u64;
    for s in &skipped {
        stats.count_skip(s.kind);
    }
    Ok(ShingledCorpus {
        documents,
        sets,
        set_doc,
        skipped,
        stats,
        held_bytes: held.into_inner() as u64,
        largest_document_bytes,
    })
}

/// Exact mode end to end: [`shingle_files`], then [`join`], then the sorted report. Pairs carry
/// their exact Jaccard in both `jaccard` and `estimate` (there is nothing to estimate), and with
/// [`Measure::Containment`] both containments.
pub fn scan_files(config: &ScanConfig, paths: &[PathBuf], start: Instant) -> Result<ScanReport> {
    let corpus = shingle_files(config, paths)?;
    finish(config, corpus, start)
}

/// Joins a [`ShingledCorpus`] and builds the report.
pub fn finish(config: &ScanConfig, corpus: ShingledCorpus, start: Instant) -> Result<ScanReport> {
    let phase_one = corpus.memory_estimate(rayon::current_num_threads() as u64);
    let ShingledCorpus {
        documents,
        sets,
        set_doc,
        skipped,
        mut stats,
        ..
    } = corpus;
    if documents.is_empty() {
        return Err(Error::NoDocuments { skipped });
    }
    let opts = JoinOptions {
        threshold: Threshold::from_f64(config.threshold)?,
        measure: config.measure,
        max_memory: config.max_memory,
    };
    let out = join(sets, &opts)?;
    stats.candidates = out.stats.candidates;
    stats.exact_checked = out.stats.candidates;
    stats.memory_estimate = Some(phase_one.max(out.stats.memory_estimate));
    let containment = config.measure == Measure::Containment;
    let pairs = out
        .matches
        .iter()
        .map(|m| {
            let j = m.jaccard();
            Pair {
                a: set_doc[m.a as usize],
                b: set_doc[m.b as usize],
                estimate: j,
                jaccard: Some(j),
                a_in_b: containment.then(|| m.a_in_b()),
                b_in_a: containment.then(|| m.b_in_a()),
            }
        })
        .collect();
    Ok(crate::find::report(
        config, documents, pairs, skipped, stats, start,
    ))
}
