//! The sample sketches' path: every document's sample, candidates from an inverted index, then
//! the same verification and report as the signature path.

use std::path::PathBuf;
use std::time::Instant;

use rayon::prelude::*;

use crate::candidates::inverted::InvertedIndex;
use crate::error::{Error, Result};
use crate::find::{Pipeline, ScanReport, TextPrints};
use crate::model::{Pair, Skip, Stats};
use crate::sim::Measure;
use crate::sketch::sample::{
    Flat, SampleKind, SampleMatch, SampleParams, modulo_sample, supershingles,
};
use crate::source::files::{self as input, Read};
use crate::source::{Document, Origin};
use crate::verify::Decision;

/// Every document read, with the samples of the non-empty ones: phase one of the sample path.
#[derive(Debug, Clone, Default)]
pub struct SampledCorpus {
    /// Every document read, in input order.
    pub documents: Vec<Document>,
    /// The sorted modulo sample of each non-empty document.
    pub samples: Flat,
    /// The index keys of each non-empty document: its supershingles, or (modulo) none, the
    /// sample itself being the keys.
    pub supershingles: Flat,
    /// For each sample, the index of its document in `documents`.
    pub signed: Vec<u32>,
    /// What was skipped.
    pub skipped: Vec<Skip>,
    /// Counts so far.
    pub stats: Stats,
}

enum Outcome {
    Sampled(Vec<u64>, Vec<u64>, u64),
    Empty(u64),
    Skipped(Skip),
}

/// Scans `paths` with the pipeline's normalization and shingling, comparing documents by their
/// samples. Called by [`Pipeline::scan`] when the configuration asks for a sample sketch or for
/// containment.
pub fn scan(p: &Pipeline, sample: SampleParams, paths: &[PathBuf]) -> Result<ScanReport> {
    let start = Instant::now();
    let corpus = sample_files(p, sample, paths)?;
    find_pairs(p, sample, corpus, start)
}

/// Phase one: reads, normalizes, shingles and samples every document, in parallel.
pub fn sample_files(
    p: &Pipeline,
    sample: SampleParams,
    paths: &[PathBuf],
) -> Result<SampledCorpus> {
    let (entries, mut skipped) = input::collect(paths, &p.config().input)?;
    let seed = p.config().seed;
    let outcomes: Vec<Outcome> = entries
        .par_iter()
        .map(|e| match input::read_document(&e.path) {
            Err(err) => Outcome::Skipped(Skip::unreadable(e.id.clone(), &err)),
            Ok(Read::Binary) => Outcome::Skipped(Skip::binary(e.id.clone())),
            Ok(Read::Text(text)) => {
                let set = p.shingle_set(&text);
                if set.is_empty() {
                    return Outcome::Empty(text.len() as u64);
                }
                let s = modulo_sample(&set, sample.modulo);
                let supers = match sample.kind {
                    SampleKind::Modulo => Vec::new(),
                    SampleKind::Supershingle => supershingles(&s, sample.supershingle_size, seed),
                };
                Outcome::Sampled(s, supers, text.len() as u64)
            }
        })
        .collect();

    let mut c = SampledCorpus::default();
    for (entry, outcome) in entries.into_iter().zip(outcomes) {
        let (bytes, empty) = match outcome {
            Outcome::Skipped(skip) => {
                skipped.push(skip);
                continue;
            }
            Outcome::Empty(bytes) => (bytes, true),
            Outcome::Sampled(s, supers, bytes) => {
                c.samples.push(&s);
                c.supershingles.push(&supers);
                c.signed.push(c.documents.len() as u32);
                (bytes, false)
            }
        };
        c.stats.bytes += bytes;
        c.stats.empty += empty as u64;
        c.documents.push(Document {
            id: entry.id,
            origin: Origin::File(entry.path),
            empty,
        });
    }
    c.stats.documents = c.documents.len() as u64;
    for s in &skipped {
        c.stats.count_skip(s.kind);
    }
    c.skipped = skipped;
    Ok(c)
}

/// Phase two: candidates from the inverted index, judged by their sample estimate, then the same
/// exact verification and report as the signature path.
pub fn find_pairs(
    p: &Pipeline,
    sample: SampleParams,
    corpus: SampledCorpus,
    start: Instant,
) -> Result<ScanReport> {
    let SampledCorpus {
        documents,
        samples,
        supershingles,
        signed,
        skipped,
        mut stats,
    } = corpus;
    if documents.is_empty() {
        return Err(Error::NoDocuments { skipped });
    }
    let config = p.config();
    let keys = match sample.kind {
        SampleKind::Modulo => &samples,
        SampleKind::Supershingle => &supershingles,
    };
    let index = InvertedIndex::build(keys);
    let max_bucket = config.max_bucket.max(2);
    let verifier = p.verifier();
    let measure = config.measure;
    let per_doc: Vec<(Vec<(Pair, bool)>, u64)> = (0..keys.len() as u32)
        .into_par_iter()
        .map(|a| {
            let (cands, oversized) = index.candidates_of(a, keys.get(a as usize), max_bucket);
            let mut kept = Vec::new();
            for &(b, count) in &cands {
                // The index counts are the sampled matches themselves for modulo sampling, unless
                // an oversized posting list left them short; otherwise compare the samples.
                let m = if sample.kind == SampleKind::Modulo && !oversized {
                    SampleMatch {
                        matched: count as usize,
                        a: samples.get(a as usize).len(),
                        b: samples.get(b as usize).len(),
                    }
                } else {
                    SampleMatch::of(samples.get(a as usize), samples.get(b as usize))
                };
                let (score, n) = m.score(measure);
                let decision = verifier.decide_estimate(score, n);
                if decision == Decision::Reject {
                    continue;
                }
                let contained = measure == Measure::Containment;
                kept.push((
                    Pair {
                        a: signed[a as usize],
                        b: signed[b as usize],
                        estimate: m.jaccard(),
                        jaccard: None,
                        a_in_b: contained.then(|| m.a_in_b()),
                        b_in_a: contained.then(|| m.b_in_a()),
                    },
                    decision == Decision::Exact,
                ));
            }
            (kept, cands.len() as u64)
        })
        .collect();
    let mut found = Vec::new();
    for (kept, considered) in per_doc {
        stats.candidates += considered;
        found.extend(kept);
    }
    stats.oversized_buckets = index.oversized(max_bucket);
    Ok(p.report(
        documents,
        found,
        skipped,
        stats,
        TextPrints::default(),
        start,
    ))
}
