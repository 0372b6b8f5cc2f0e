//! Exact mode: every document's shingle set, kept in memory, then the set-similarity join of
//! [`crate::join`].

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

use crate::error::{Error, Result};
use crate::find::config::{ScanConfig, StrategyConfig};
use crate::find::read::{Corpus, Outcome, Raw, Sketcher, Strategy};
use crate::find::{Phase, Pipeline, ScanReport, Scratch};
use crate::join::{
    DEDUP_SORTS_FROM, JoinOptions, Threshold, dedup_hashes, heap_bytes, join_beside, set_bytes,
};
use crate::model::{Pair, Skip, Stats};
use crate::sim::Measure;
use crate::source::{Document, Origin};

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
    /// The most memory phase one held at once, by [`Sets`]'s account.
    pub peak_bytes: u64,
}

/// Bytes each document holds in phase one besides its set: its [`Document`], its slot in the
/// reader's outcomes and its entry, its set's `Vec` and index, and two small heap strings (its
/// id and path, or for a record its id and the reader's hash of it). The join's check counts
/// the documents exactly.
const PER_DOCUMENT: u64 = (size_of::<Document>()
    + size_of::<Option<Outcome<Vec<u64>>>>()
    + size_of::<crate::source::files::Entry>()
    + size_of::<Vec<u64>>()
    + size_of::<u32>()) as u64
    + 2 * heap_bytes(24);

/// A bound of the memory shingling a normalized text of `len` bytes needs at once, before it is
/// shingled: its hashes (at most one a byte, and a word-shingle vector grown by doubling holds
/// no more than that) and the buffer that makes them distinct (a sort's copy, or the small
/// sets' table of at most 2^15 slots).
fn shingling_bound(len: u64) -> u64 {
    let hashes = 8 * (len + 1);
    hashes + hashes.max((4 * hashes).min(8 << 15))
}

/// What shingling needed at once for `hashes` hashes in a vector of `capacity`: the vector and
/// the buffer of [`dedup_hashes`].
fn shingling_bytes(capacity: usize, hashes: usize) -> u64 {
    let buffer = if hashes >= DEDUP_SORTS_FROM {
        8 * hashes
    } else {
        8 * (2 * hashes).next_power_of_two()
    };
    (8 * capacity + buffer) as u64
}

/// Exact mode's strategy: each document's whole shingle set, sorted and distinct.
///
/// It keeps an account of what phase one holds: the sets and documents kept, and for each
/// document being shingled its text, its normalized copy and a bound of its hash buffers,
/// reserved before any is allocated. A document that would take the account over exact mode's
/// `max_memory` is not shingled, and reading stops with [`Error::TooLargeForExact`]. Why before:
/// one large document's buffers are many times its text, and all threads may hold one.
pub(crate) struct Sets<'p> {
    p: &'p Pipeline,
    /// Bytes kept: the sets, and each document's share.
    held: AtomicU64,
    /// Bytes reserved by the documents being shingled now.
    in_flight: AtomicU64,
    /// The most the account held at once, with what shingling really used.
    peak: AtomicU64,
    /// The account that would have passed the limit; 0 while none did.
    refused: AtomicU64,
    limit: u64,
}

impl<'p> Sets<'p> {
    pub(crate) fn new(p: &'p Pipeline) -> Self {
        Sets {
            p,
            held: AtomicU64::new(0),
            in_flight: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            limit: max_memory(&p.config).unwrap_or(u64::MAX),
        }
    }
}

impl Sketcher for Sets<'_> {
    type Sketch = Vec<u64>;

    fn sketch(&self, s: &mut Scratch, raw: &Raw<'_>) -> Option<Vec<u64>> {
        // The text and its normalized copy are in memory already; the hash buffers are not.
        let texts = (raw.text.len() + s.text.len()) as u64;
        let bound = texts + shingling_bound(s.text.len() as u64);
        let others = self.in_flight.fetch_add(bound, Relaxed);
        let need = self.held.load(Relaxed) + others + bound;
        if need > self.limit {
            self.in_flight.fetch_sub(bound, Relaxed);
            self.refused.fetch_max(need, Relaxed);
            return None;
        }
        let mut set = Vec::new();
        self.p
            .shingler
            .hashes_into(&s.text, self.p.config.seed, &mut set);
        let used = texts + shingling_bytes(set.capacity(), set.len());
        let kept = if set.is_empty() {
            PER_DOCUMENT
        } else {
            dedup_hashes(&mut set);
            set.shrink_to_fit();
            set_bytes(&set) + PER_DOCUMENT
        };
        let held = self.held.fetch_add(kept, Relaxed);
        let others = self.in_flight.fetch_sub(bound, Relaxed) - bound;
        self.peak.fetch_max(held + others + used.max(kept), Relaxed);
        (!set.is_empty()).then_some(set)
    }

    fn halted(&self) -> Option<Error> {
        let needed = self.refused.load(Relaxed);
        (needed > 0).then_some(Error::TooLargeForExact {
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
            peak_bytes: self.peak.load(Relaxed),
        };
        self.p.progress_phase(Phase::Candidates, None);
        finish(&self.p.config, corpus, start)
    }
}

/// The bytes the documents, the index from sets to documents and the skips hold while the sets
/// are joined.
fn beside_the_sets(documents: &[Document], set_doc: &[u32], skipped: &[Skip]) -> u64 {
    let strings = |s: &[&str]| s.iter().map(|s| heap_bytes(s.len() as u64)).sum::<u64>();
    let docs: u64 = documents
        .iter()
        .map(|d| {
            let origin = match &d.origin {
                Origin::File(path) => heap_bytes(path.as_os_str().len() as u64),
                Origin::Record { .. } | Origin::Text { .. } => 0,
            };
            size_of::<Document>() as u64 + strings(&[&d.id]) + origin
        })
        .sum();
    let skips: u64 = skipped
        .iter()
        .map(|s| size_of::<Skip>() as u64 + strings(&[&s.id, &s.reason]))
        .sum();
    docs + 4 * set_doc.len() as u64 + skips
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
    let ShingledCorpus {
        documents,
        sets,
        set_doc,
        skipped,
        mut stats,
        peak_bytes,
    } = corpus;
    if documents.is_empty() {
        return Err(Error::NoDocuments { skipped });
    }
    let opts = JoinOptions {
        threshold: Threshold::from_f64(config.threshold)?,
        measure: config.measure,
        max_memory: max_memory(config),
    };
    let beside = beside_the_sets(&documents, &set_doc, &skipped);
    // The join counts the pairs it finds against the limit, each with the `Pair` it becomes.
    let (out, _) = join_beside(sets, &opts, beside, size_of::<Pair>() as u64)?;
    stats.candidates = out.stats.candidates;
    stats.exact_checked = out.stats.candidates;
    // The peak of the three stages: reading, joining, and turning the matches into pairs (in
    // the join's estimate).
    stats.memory_estimate = Some(peak_bytes.max(beside + out.stats.memory_estimate));
    let containment = config.measure == Measure::Containment;
    // `into_iter`, so that the matches are freed once they are pairs.
    let pairs = out
        .matches
        .into_iter()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::find::config::ExactConfig;
    use crate::text::shingle::ShingleKind;

    fn exact(max_memory: Option<u64>, kind: ShingleKind) -> Pipeline {
        let mut config =
            ScanConfig::with_strategy(StrategyConfig::Exact(ExactConfig { max_memory }));
        config.shingle.kind = kind;
        Pipeline::new(config).unwrap()
    }

    /// `n` distinct words and a space after each.
    fn words(n: usize) -> String {
        (0..n).map(|i| format!("w{i} ")).collect()
    }

    #[test]
    fn the_shingling_bound_covers_what_shingling_uses() {
        for kind in [ShingleKind::Char, ShingleKind::Word, ShingleKind::Stopword] {
            let p = exact(None, kind);
            for n in [0, 1, 3, 100, 3_000, 20_000, 100_000] {
                let text = words(n);
                let mut hashes = Vec::new();
                p.shingler.hashes_into(&text, p.config.seed, &mut hashes);
                let used = shingling_bytes(hashes.capacity(), hashes.len());
                let bound = shingling_bound(text.len() as u64);
                assert!(used <= bound, "{kind:?} {n}: {used} > {bound}");
            }
        }
    }

    #[test]
    fn a_document_over_the_limit_is_refused_before_it_is_shingled() {
        let limit = 1 << 20;
        let p = exact(Some(limit), ShingleKind::Char);
        let sets = Sets::new(&p);
        let mut s = Scratch::default();
        let mut sketch = |text: &str| {
            s.text = text.to_string();
            sets.sketch(
                &mut s,
                &Raw {
                    text,
                    content: 0,
                    id_made_up: false,
                },
            )
        };
        // A small document is kept and counted, with what shingling it used at its peak.
        let small = words(500);
        let set = sketch(&small).unwrap();
        assert!(sets.halted().is_none());
        let held = sets.held.load(Relaxed);
        assert_eq!(held, set_bytes(&set) + PER_DOCUMENT);
        assert!(sets.peak.load(Relaxed) >= 2 * small.len() as u64 + 16 * set.len() as u64);
        // 70 KB of text: its hashes and the copy that sorts them alone pass 1 MiB. It is not
        // shingled, nothing of it is kept, and the reading stops with the account that
        // would have passed the limit.
        let large = words(10_000);
        assert!(sketch(&large).is_none());
        match sets.halted() {
            Some(Error::TooLargeForExact { needed, limit: l }) => {
                assert_eq!(l, limit);
                assert!(needed >= held + 18 * large.len() as u64, "{needed}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(sets.held.load(Relaxed), held);
        assert_eq!(sets.in_flight.load(Relaxed), 0);
        // Once halted, it stays so.
        sketch(&small);
        assert!(sets.halted().is_some());
    }
}
