//! Exact mode: every document's shingle set, kept in memory, then the set-similarity join of
//! [`crate::join`].

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use crate::error::{Error, Result};
use crate::find::config::{ScanConfig, StrategyConfig};
use crate::find::read::{Corpus, Raw, Sketcher, Strategy};
use crate::find::{Pipeline, ScanReport, Scratch};
use crate::join::{JoinOptions, Threshold, dedup_hashes, join};
use crate::model::{Pair, Skip, Stats};
use crate::sim::Measure;
use crate::source::Document;

/// Every document read, with the shingle set of each non-empty one: exact mode's phase one.
#[derive(Debug, Clone, Default)]
pub(crate) struct ShingledCorpus {
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
    pub(crate) fn memory_estimate(&self, threads: u64) -> u64 {
        self.held_bytes + threads * self.largest_document_bytes
    }
}

/// Exact mode's strategy: each document's whole shingle set, sorted and distinct. Stops the
/// reading, with [`Error::TooLargeForExact`], as soon as the sets alone exceed
/// the exact strategy's `max_memory`.
pub(crate) struct Sets<'p> {
    p: &'p Pipeline,
    /// Bytes the sets hold so far.
    held: AtomicUsize,
    /// The most one document needed while it was shingled.
    largest: AtomicU64,
    limit: u64,
}

impl<'p> Sets<'p> {
    pub(crate) fn new(p: &'p Pipeline) -> Self {
        Sets {
            p,
            held: AtomicUsize::new(0),
            largest: AtomicU64::new(0),
            limit: max_memory(&p.config).unwrap_or(u64::MAX),
        }
    }
}

impl Sketcher for Sets<'_> {
    type Sketch = Vec<u64>;

    fn sketch(&self, s: &mut Scratch, raw: &Raw<'_>) -> Option<Vec<u64>> {
        let mut set = Vec::new();
        self.p
            .shingler
            .hashes_into(&s.text, self.p.config.seed, &mut set);
        if set.is_empty() {
            return None;
        }
        // The text and its normalized copy, the hashes (a vector grown by doubling, so up to
        // twice their size) and the sort's buffer or the table.
        let peak = 2 * raw.text.len() as u64 + 24 * set.len() as u64;
        self.largest.fetch_max(peak, Relaxed);
        dedup_hashes(&mut set);
        set.shrink_to_fit();
        self.held.fetch_add(set.len() * 8 + 24, Relaxed);
        Some(set)
    }

    fn halted(&self) -> Option<Error> {
        let needed = self.held.load(Relaxed) as u64;
        (needed > self.limit).then_some(Error::TooLargeForExact {
            needed,
            limit: self.limit,
        })
    }
}

impl Strategy for Sets<'_> {
    /// Joins the sets. Pairs carry their exact Jaccard in both `jaccard` and `estimate` (there
    /// is nothing to estimate), and with [`Measure::Containment`] both containments.
    fn pairs(&self, corpus: Corpus<Vec<u64>>, start: Instant) -> Result<ScanReport> {
        let corpus = ShingledCorpus {
            documents: corpus.documents,
            sets: corpus.sketches,
            set_doc: corpus.sketched,
            skipped: corpus.skipped,
            stats: corpus.stats,
            held_bytes: self.held.load(Relaxed) as u64,
            largest_document_bytes: self.largest.load(Relaxed),
        };
        finish(&self.p.config, corpus, start)
    }
}

/// The memory the join may use: exact mode's own limit.
fn max_memory(config: &ScanConfig) -> Option<u64> {
    match config.strategy {
        StrategyConfig::Exact(e) => e.max_memory,
        _ => None,
    }
}

/// Joins a [`ShingledCorpus`] and builds the report.
pub(crate) fn finish(
    config: &ScanConfig,
    corpus: ShingledCorpus,
    start: Instant,
) -> Result<ScanReport> {
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
        max_memory: max_memory(config),
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
