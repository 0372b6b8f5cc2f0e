//! The first seed's sketches: a sample of each document's shingles, and supershingles.
//!
//! - **Modulo sampling** (`--sketch modulo --modulo M`): a document keeps the shingle hashes that
//!   are 0 modulo `M`. The shingle hashes are uniform (see
//!   [`char_shingle_hash`](crate::shingle::char_shingle_hash)), so each shingle is kept with
//!   probability `1/M`, and a shingle kept by one document is kept by every document that has it.
//!   The samples of two documents therefore compare like the documents: among the sampled shingles
//!   of `A ∪ B`, each is in `A ∩ B` with probability `J`, so
//!   `|S(A) ∩ S(B)| / |S(A) ∪ S(B)|` estimates the Jaccard similarity without bias, with the
//!   standard error `sqrt(J (1 - J) / n)` of `n` sampled union shingles; and `matched / available`,
//!   `|S(A) ∩ S(B)| / |S(A)|`, the seed's query score, estimates the containment of `A` in `B`.
//!   Candidates come from an inverted index from sampled hash to documents: the documents that
//!   share at least one sampled shingle with a document, each with its count of matches.
//!   Unlike a MinHash signature, the sample grows with the document (`shingles / M` hashes), which
//!   makes the estimate of long documents precise and lets a short document be found inside a
//!   long one (`--containment`). A document with no shingle that is 0 modulo `M` (fewer than about
//!   `M` shingles) has an empty sample and is never paired.
//! - **Supershingles** (`--sketch supershingle`): the sorted sample is shingled again, each window
//!   of `--supershingle-size` consecutive sampled hashes hashed into one supershingle, and two
//!   documents are candidates when they share a supershingle (the seed's extension, from Broder et
//!   al.'s "syntactic clustering of the web"). A shared supershingle needs a run of that many
//!   consecutive sampled hashes of the union all in both documents, which happens with
//!   probability about `J^size` per run, so the chance of becoming a candidate behaves like an
//!   S-curve with `size` rows and one band per sampled hash. Short documents have few runs and are
//!   missed unless nearly identical; when one document is much longer, its extra hashes break the
//!   runs of the shorter one, so a document inside a much larger one is missed (use
//!   `--containment`). Verification uses the same sample estimate as modulo sampling.
//!
//! Both share input, normalization, verification and output with the default path: the
//! candidates found here become the same [`Pair`]s and go through the same exact verification.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::config::Measure;
use crate::error::{Error, Result};
use crate::input::{self, Read, Skip};
use crate::scan::{Document, Origin, Pair, Pipeline, ScanReport, Stats, TextPrints};
use crate::verify::{Decision, intersection_size};

/// The modulus used when none is given: one shingle in 16 is kept.
pub const DEFAULT_MODULO: u64 = 16;
/// Sampled hashes per supershingle when none is given.
pub const DEFAULT_SUPERSHINGLE_SIZE: usize = 4;

/// Which sample sketch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SampleKind {
    /// Shingle hashes that are 0 modulo M; candidates share a sampled hash.
    Modulo,
    /// Candidates share a supershingle (a run of consecutive sorted sampled hashes).
    Supershingle,
}

impl SampleKind {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            SampleKind::Modulo => "modulo",
            SampleKind::Supershingle => "supershingle",
        }
    }
}

/// The parameters of a sample sketch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SampleParams {
    /// Which sketch.
    pub kind: SampleKind,
    /// Keep the shingle hashes that are 0 modulo this.
    pub modulo: u64,
    /// Sampled hashes per supershingle.
    pub supershingle_size: usize,
}

impl Default for SampleParams {
    fn default() -> Self {
        SampleParams {
            kind: SampleKind::Modulo,
            modulo: DEFAULT_MODULO,
            supershingle_size: DEFAULT_SUPERSHINGLE_SIZE,
        }
    }
}

impl SampleParams {
    /// Checks the ranges.
    pub fn validate(&self) -> Result<()> {
        if self.modulo == 0 {
            return Err(Error::InvalidConfig("--modulo must be at least 1".into()));
        }
        if self.supershingle_size == 0 {
            return Err(Error::InvalidConfig(
                "--supershingle-size must be at least 1".into(),
            ));
        }
        Ok(())
    }
}

/// The shingle hashes of a sorted, distinct set that are 0 modulo `m` (still sorted).
pub fn modulo_sample(set: &[u64], m: u64) -> Vec<u64> {
    set.iter().copied().filter(|h| h % m == 0).collect()
}

/// The supershingles of a sorted sample: the hash of each window of `size` consecutive hashes,
/// sorted and distinct. A non-empty sample shorter than `size` gives one supershingle, the hash
/// of the whole sample, as a short document gives one shingle.
pub fn supershingles(sample: &[u64], size: usize, seed: u64) -> Vec<u64> {
    let hash = |w: &[u64]| xxh3_64_with_seed(bytemuck::cast_slice(w), seed);
    let mut out: Vec<u64> = if sample.is_empty() {
        Vec::new()
    } else if sample.len() < size {
        vec![hash(sample)]
    } else {
        sample.windows(size).map(hash).collect()
    };
    out.sort_unstable();
    out.dedup();
    out
}

/// What two samples say about two documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SampleMatch {
    /// Sampled hashes in both.
    pub matched: usize,
    /// Sampled hashes of the first document.
    pub a: usize,
    /// Sampled hashes of the second document.
    pub b: usize,
}

impl SampleMatch {
    /// Compares two sorted samples.
    pub fn of(a: &[u64], b: &[u64]) -> SampleMatch {
        SampleMatch {
            matched: intersection_size(a, b),
            a: a.len(),
            b: b.len(),
        }
    }

    /// Sampled hashes in either: the number of samples behind the Jaccard estimate.
    pub fn union(&self) -> usize {
        self.a + self.b - self.matched
    }

    /// The Jaccard estimate `matched / union` (0 when both samples are empty).
    pub fn jaccard(&self) -> f64 {
        ratio(self.matched, self.union())
    }

    /// The seed's score with `a` as the query: `matched / available` estimates the containment of
    /// the first document in the second.
    pub fn a_in_b(&self) -> f64 {
        ratio(self.matched, self.a)
    }

    /// The containment estimate of the second document in the first.
    pub fn b_in_a(&self) -> f64 {
        ratio(self.matched, self.b)
    }

    /// The estimate the threshold applies to under `measure`, and the number of samples it rests
    /// on. For containment that is the larger of the two directions, resting on the smaller
    /// sample.
    pub fn score(&self, measure: Measure) -> (f64, usize) {
        match measure {
            Measure::Jaccard => (self.jaccard(), self.union()),
            Measure::Containment => (self.a_in_b().max(self.b_in_a()), self.a.min(self.b)),
        }
    }
}

fn ratio(x: usize, y: usize) -> f64 {
    if y == 0 { 0.0 } else { x as f64 / y as f64 }
}

/// Many small sorted vectors in one allocation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flat {
    data: Vec<u64>,
    ends: Vec<usize>,
}

impl Flat {
    /// Appends one vector.
    pub fn push(&mut self, v: &[u64]) {
        self.data.extend_from_slice(v);
        self.ends.push(self.data.len());
    }

    /// Vector `i`.
    pub fn get(&self, i: usize) -> &[u64] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.data[start..self.ends[i]]
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when there is no vector.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

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

/// An inverted index from key (sampled hash or supershingle) to the documents that have it.
pub struct InvertedIndex {
    /// `(key, document)`, sorted.
    entries: Vec<(u64, u32)>,
}

impl InvertedIndex {
    /// Indexes the keys of every document.
    pub fn build(keys: &Flat) -> InvertedIndex {
        let mut entries: Vec<(u64, u32)> = (0..keys.len())
            .flat_map(|d| keys.get(d).iter().map(move |&k| (k, d as u32)))
            .collect();
        entries.par_sort_unstable();
        InvertedIndex { entries }
    }

    /// The documents that have `key`, in increasing order.
    pub fn postings(&self, key: u64) -> impl ExactSizeIterator<Item = u32> + '_ {
        let lo = self.entries.partition_point(|&(k, _)| k < key);
        let hi = lo + self.entries[lo..].partition_point(|&(k, _)| k == key);
        self.entries[lo..hi].iter().map(|&(_, d)| d)
    }

    /// The candidates of document `a` among the documents after it: each with the number of its
    /// keys that `a` shares, counted over postings of at most `max_bucket` documents. A larger
    /// posting list (boilerplate, thousands of copies) is linked as a star around its first
    /// document, as LSH buckets are, so its cost stays linear. Also returns whether `a` met such
    /// a list, in which case the counts are only lower bounds. Sorted by document.
    pub fn candidates_of(
        &self,
        a: u32,
        keys: &[u64],
        max_bucket: usize,
    ) -> (Vec<(u32, u32)>, bool) {
        let mut counts: HashMap<u32, u32> = HashMap::new();
        let mut oversized = false;
        for &k in keys {
            let mut list = self.postings(k);
            if list.len() > max_bucket {
                oversized = true;
                if list.next() == Some(a) {
                    for d in list {
                        counts.entry(d).or_insert(0);
                    }
                }
                continue;
            }
            for d in list.filter(|&d| d > a) {
                *counts.entry(d).or_insert(0) += 1;
            }
        }
        let mut out: Vec<(u32, u32)> = counts.into_iter().collect();
        out.sort_unstable();
        (out, oversized)
    }

    /// Number of posting lists longer than `max_bucket`.
    pub fn oversized(&self, max_bucket: usize) -> u64 {
        self.entries
            .chunk_by(|x, y| x.0 == y.0)
            .filter(|c| c.len() > max_bucket)
            .count() as u64
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::minhash::fmix64;

    /// Two sets of `n` uniform hashes sharing exactly `shared`.
    fn pair(n: u64, shared: u64, offset: u64) -> (Vec<u64>, Vec<u64>) {
        let h = |i: u64| fmix64(i ^ (offset << 40));
        let mut a: Vec<u64> = (0..n).map(h).collect();
        let mut b: Vec<u64> = (0..shared).chain(n..2 * n - shared).map(h).collect();
        a.sort_unstable();
        b.sort_unstable();
        (a, b)
    }

    #[test]
    fn modulo_keeps_the_same_shingles_in_every_document() {
        let (a, b) = pair(1000, 1000, 1);
        let sa = modulo_sample(&a, 8);
        assert_eq!(sa, modulo_sample(&b, 8));
        assert!(sa.iter().all(|h| h % 8 == 0));
        // About one in eight is kept (binomial sd ~ 10.5).
        assert!((sa.len() as i64 - 125).abs() < 55, "{}", sa.len());
        assert_eq!(modulo_sample(&a, 1), a);
    }

    #[test]
    fn sample_scores_follow_their_definitions() {
        let m = SampleMatch {
            matched: 3,
            a: 4,
            b: 12,
        };
        assert_eq!(m.union(), 13);
        assert_eq!(m.jaccard(), 3.0 / 13.0);
        assert_eq!(m.a_in_b(), 0.75);
        assert_eq!(m.b_in_a(), 0.25);
        assert_eq!(m.score(Measure::Containment), (0.75, 4));
        assert_eq!(m.score(Measure::Jaccard), (3.0 / 13.0, 13));
        let none = SampleMatch {
            matched: 0,
            a: 0,
            b: 0,
        };
        assert_eq!(none.jaccard(), 0.0);
        assert_eq!(none.score(Measure::Containment), (0.0, 0));
    }

    #[test]
    fn supershingles_of_short_and_equal_samples() {
        assert!(supershingles(&[], 4, 0).is_empty());
        assert_eq!(supershingles(&[5, 9], 4, 0).len(), 1);
        let s: Vec<u64> = (0..10).collect();
        assert_eq!(supershingles(&s, 4, 0).len(), 7);
        assert_eq!(supershingles(&s, 4, 0), supershingles(&s, 4, 0));
        assert_ne!(supershingles(&s, 4, 0), supershingles(&s, 4, 1));
    }

    #[test]
    fn supershingles_miss_a_document_inside_a_much_larger_one() {
        // A is entirely inside B, which is 8 times larger: B's extra sampled hashes fall between
        // A's, so almost no run of 4 of A's hashes stays consecutive in B.
        let (a, _) = pair(4000, 0, 2);
        let extra: Vec<u64> = (0..28_000u64).map(|i| fmix64(i ^ (3 << 40))).collect();
        let mut b: Vec<u64> = a.iter().copied().chain(extra).collect();
        b.sort_unstable();
        let (sa, sb) = (modulo_sample(&a, 16), modulo_sample(&b, 16));
        let (xa, xb) = (supershingles(&sa, 4, 0), supershingles(&sb, 4, 0));
        let shared = intersection_size(&xa, &xb);
        // Expected about 250 * (1/8)^3 < 1 shared supershingle; the sample still sees A in B.
        assert!(shared <= 3, "{shared}");
        assert_eq!(SampleMatch::of(&sa, &sb).a_in_b(), 1.0);
    }

    #[test]
    fn inverted_index_counts_shared_keys_and_stars_big_lists() {
        let mut keys = Flat::default();
        keys.push(&[1, 2, 3]); // doc 0
        keys.push(&[2, 3, 4]); // doc 1
        keys.push(&[3, 9]); // doc 2
        keys.push(&[7]); // doc 3
        let idx = InvertedIndex::build(&keys);
        assert_eq!(idx.postings(3).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(
            idx.candidates_of(0, keys.get(0), 10),
            (vec![(1, 2), (2, 1)], false)
        );
        assert_eq!(idx.candidates_of(1, keys.get(1), 10), (vec![(2, 1)], false));
        assert!(idx.candidates_of(3, keys.get(3), 10).0.is_empty());
        // With lists of at most 2, key 3 (3 documents) becomes a star around document 0.
        assert_eq!(
            idx.candidates_of(0, keys.get(0), 2),
            (vec![(1, 1), (2, 0)], true)
        );
        assert_eq!(idx.candidates_of(1, keys.get(1), 2), (vec![], true));
        assert_eq!(idx.oversized(2), 1);
    }
}
