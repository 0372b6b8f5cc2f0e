//! The first seed's sketches: a sample of each document's shingles, and supershingles.
//!
//! - **Modulo sampling** (`--sketch modulo --modulo M`): a document keeps the shingle hashes that
//!   are 0 modulo `M`. The shingle hashes are uniform (see [`shingle`](crate::text::shingle)),
//!   so each shingle is kept with probability `1/M`, and a shingle kept by one document is kept
//!   by every document that has it.
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
//! candidates found here become the same [`Pair`](crate::model::Pair)s and go through the same
//! exact verification.

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::error::{Param, Result};
use crate::sim::{Measure, intersection_size};

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
            return Err(crate::invalid![Param::Modulo, " must be at least 1"]);
        }
        if self.supershingle_size == 0 {
            return Err(crate::invalid![
                Param::SupershingleSize,
                " must be at least 1"
            ]);
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
pub(crate) struct Flat {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::minhash::fmix64;

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
}
