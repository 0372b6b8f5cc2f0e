//! The sample sketches' path: every document's sample, candidates from an inverted index, then
//! the same verification and report as the signature path.

use std::time::Instant;

use rayon::prelude::*;

use crate::candidates::inverted::InvertedIndex;
use crate::error::{Error, Result};
use crate::find::read::{Corpus, Raw, Sketcher, Strategy};
use crate::find::{Phase, Pipeline, ScanReport, Scratch, TextPrints};
use crate::model::{Pair, Skip, Stats};
use crate::sim::Measure;
use crate::sketch::sample::{
    Flat, SampleKind, SampleMatch, SampleParams, modulo_sample, supershingles,
};
use crate::source::Document;
use crate::verify::Decision;

/// Every document read, with the samples of the non-empty ones: phase one of the sample path.
#[derive(Debug, Clone, Default)]
pub(crate) struct SampledCorpus {
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

/// The sample strategy's strategy: each document's modulo sample, and its supershingles when
/// they are the index keys.
pub(crate) struct Samples<'p> {
    pub(crate) p: &'p Pipeline,
    pub(crate) params: SampleParams,
}

impl Sketcher for Samples<'_> {
    type Sketch = (Vec<u64>, Vec<u64>);

    fn sketch(&self, s: &mut Scratch, _raw: &Raw<'_>) -> Option<Self::Sketch> {
        let seed = self.p.config.seed;
        let set = self.p.shingler.hash_set_with(&s.text, seed, &mut s.set);
        if set.is_empty() {
            return None;
        }
        let sample = modulo_sample(&set, self.params.modulo);
        let supers = match self.params.kind {
            SampleKind::Modulo => Vec::new(),
            SampleKind::Supershingle => supershingles(&sample, self.params.supershingle_size, seed),
        };
        Some((sample, supers))
    }
}

impl Strategy for Samples<'_> {
    fn pairs(&self, corpus: Corpus<Self::Sketch>, start: Instant) -> Result<ScanReport> {
        let mut c = SampledCorpus {
            documents: corpus.documents,
            signed: corpus.sketched,
            skipped: corpus.skipped,
            stats: corpus.stats,
            ..SampledCorpus::default()
        };
        for (sample, supers) in &corpus.sketches {
            c.samples.push(sample);
            c.supershingles.push(supers);
        }
        self.p.progress_phase(Phase::Candidates, None);
        find_pairs(self.p, self.params, c, start)
    }
}

/// Phase two: candidates from the inverted index, judged by their sample estimate, then the same
/// exact verification and report as the signature path.
pub(crate) fn find_pairs(
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
    p.report(
        documents,
        found,
        skipped,
        stats,
        TextPrints::default(),
        start,
    )
}
