//! Exact mode: every pair whose shingle sets reach the threshold, and no other pair, each with its
//! exact similarity.
//!
//! MinHash and LSH trade a small chance of missing a pair for speed. Exact mode does not: it runs
//! a set-similarity join of the AllPairs / PPJoin family (Bayardo, Ma, Srikant 2007; Xiao, Wang,
//! Lin, Yu, Wang 2011) over the documents' shingle sets, the same sets `--verify exact` compares.
//!
//! 1. **Tokens.** Every distinct shingle hash becomes a `u32` token; tokens are numbered by
//!    document frequency, rarest first (ties by hash), and each set is sorted by token. Any fixed
//!    global order keeps the join exact; rarest-first makes the prefixes below consist of rare
//!    shingles, so the inverted lists the join reads are short.
//! 2. **Identical sets** are grouped first and joined once: a thousand copies of a license cost
//!    one set in the join, and their pairs are written out at the end (Jaccard 1).
//! 3. **Prefix filter.** If `|x ∩ y| >= a` then the first `|x| - a + 1` tokens of `x` and the first
//!    `|y| - a + 1` tokens of `y` share a token (the `a - 1` tokens after a prefix cannot hold `a`
//!    common tokens). An inverted index holds the prefixes of the smaller sets; each set probes it
//!    with its own prefix. Tokens found in one set only (numbered first) are never common to two
//!    sets, so they get no list and probes skip them.
//! 4. **Size filter.** For Jaccard, `J(x, y) <= |y| / |x|` when `|y| <= |x|`, so sets smaller than
//!    `t |x|` are never looked at.
//! 5. **Positional filter** (PPJoin). When a probe meets a candidate at positions `i` and `j`, the
//!    overlap can be at most the common tokens seen so far, plus this one, plus
//!    `min(|x| - i - 1, |y| - j - 1)`; below the required overlap the candidate is dropped.
//! 6. **Verification.** Every surviving candidate is verified by merging the two sorted sets,
//!    starting after the last common token the probe found.
//!
//! Every bound is an integer computed from the threshold as an exact fraction (see [`Threshold`]),
//! rounded so that a filter may keep an extra candidate but can never drop a true pair; the final
//! test is an exact integer comparison, so a pair exactly at the threshold is reported.
//!
//! Probes run in parallel with rayon over a read-only index: the sets are sorted by size, the
//! index is built once, and each set probes only the sets before it (Jaccard) or after it
//! (containment) in that order, so every pair is considered once and the result does not depend
//! on the number of threads.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use crate::error::{Error, Result};
use crate::sim::Measure;

/// A similarity threshold as an exact fraction `num / den` (reduced, `0 <= num <= den`).
///
/// Thresholds are typed as decimals, and `0.8` as an `f64` is a little more than 4/5, so a
/// comparison in floating point would drop a pair whose Jaccard is exactly 4/5. The threshold is
/// therefore read back as the shortest decimal that gives the same `f64` (`0.8` -> 8/10 = 4/5), and
/// every comparison is made in integers. That decimal is the one typed when it has at most 15
/// significant digits; a longer one (`0.714285714285714285`) is read as the `f64` it parses to,
/// whose shortest decimal (`0.7142857142857143`) is the threshold.
///
/// This is the one definition of "similarity >= T": the join tests it on its integer counts
/// ([`Threshold::passes`]), and `--verify exact`, which only sees the similarity as an `f64`,
/// through [`Threshold::passes_rounded`], which agrees with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Threshold {
    num: u128,
    den: u128,
    /// The same fraction in `u64` when `den <= 2^30`, as it is for every threshold typed with up to
    /// nine decimals: products with sizes below 2^33 then fit in 64 bits, and the join's bounds
    /// avoid 128-bit division.
    small: Option<(u64, u64)>,
    /// The bits of the smallest `f64` that passes [`Threshold::passes_rounded`] (bits, so that
    /// the type stays `Eq`).
    cut: u64,
}

/// Smaller thresholds leave [`Threshold::passes_rounded`] a plain `f64` comparison: see
/// [`rounded_cut`].
const TINY_THRESHOLD: f64 = 1.0 / (1u64 << 40) as f64;

/// The most decimals a threshold keeps exactly; see [`Threshold::from_f64`].
const MAX_DECIMALS: usize = 27;

/// Total shingles a join accepts: positions and tokens are `u32`.
pub(crate) const MAX_TOTAL_TOKENS: u64 = u32::MAX as u64;

impl Threshold {
    /// The exact fraction of `t`, which must be in `[0, 1]`.
    ///
    /// An `f64`'s shortest decimal has at most 17 significant digits, so one with more than 27
    /// decimals is below 1e-11. Set sizes are below 2^32, so any two sets with a common shingle
    /// have a Jaccard of at least 1 / 2^33 > 1e-10, and sets without one have 0: such a threshold
    /// accepts exactly the pairs that 1e-11 accepts, and becomes 1e-11. The other fractions have a
    /// denominator of at most 10^27 < 2^90, which keeps every product below in `u128`.
    pub fn from_f64(t: f64) -> Result<Threshold> {
        if !(0.0..=1.0).contains(&t) {
            return Err(crate::invalid![
                crate::error::Param::Threshold,
                format!(" must be between 0 and 1, not {t}")
            ]);
        }
        // Rust prints floats without an exponent, as the shortest decimal that reads back the same
        // (and -0.0 as "-0", which is 0: adding 0.0 makes it +0.0).
        let s = format!("{}", t + 0.0);
        let (int, frac) = s.split_once('.').unwrap_or((&s, ""));
        let (num, den) = if frac.len() > MAX_DECIMALS {
            (1, 10u128.pow(11))
        } else {
            let den = 10u128.pow(frac.len() as u32);
            let int: u128 = int.parse().expect("digits");
            let frac: u128 = if frac.is_empty() {
                0
            } else {
                frac.parse().expect("digits")
            };
            (int * den + frac, den)
        };
        let g = gcd(num, den);
        let (num, den) = (num / g, den / g);
        let mut threshold = Threshold {
            num,
            den,
            small: (den <= 1 << 30).then_some((num as u64, den as u64)),
            cut: 0,
        };
        threshold.cut = rounded_cut(t, &threshold).to_bits();
        Ok(threshold)
    }

    /// The numerator.
    pub fn num(&self) -> u128 {
        self.num
    }

    /// The denominator.
    pub fn den(&self) -> u128 {
        self.den
    }

    /// True for a threshold of 0, which every pair passes.
    pub fn is_zero(&self) -> bool {
        self.num == 0
    }

    /// `ceil(t * x)`: for signatures of `x` slots, the fewest agreeing slots `m` with
    /// `m / x >= t`.
    pub(crate) fn ceil_of(&self, x: u64) -> u64 {
        match self.small {
            Some((n, d)) => (n * x).div_ceil(d),
            None => (self.num * x as u128).div_ceil(self.den) as u64,
        }
    }

    /// `ceil(2 t x / (1 + t))`, the overlap a set of size `x` needs with any set at least as
    /// large (see [`Threshold::jaccard_overlap`] with `a = b = x`).
    fn ceil_of_double(&self, x: u64) -> u64 {
        self.jaccard_overlap(x, x)
    }

    /// The smallest overlap that gives Jaccard >= t for sets of sizes `a` and `b`.
    ///
    /// `o / (a + b - o) >= num / den  <=>  o (num + den) >= num (a + b)`, and the overlap is an
    /// integer, so it must be at least `ceil(num (a + b) / (num + den))`: exact, not a bound.
    pub(crate) fn jaccard_overlap(&self, a: u64, b: u64) -> u64 {
        match self.small {
            Some((n, d)) => (n * (a + b)).div_ceil(n + d),
            None => (self.num * (a + b) as u128).div_ceil(self.num + self.den) as u64,
        }
    }

    /// The smallest overlap that gives containment >= t for sets of sizes `a` and `b`.
    ///
    /// `max(o / a, o / b) = o / min(a, b) >= num / den  <=>  o >= ceil(num min(a, b) / den)`.
    #[cfg(test)]
    pub(crate) fn containment_overlap(&self, a: u64, b: u64) -> u64 {
        self.ceil_of(a.min(b))
    }

    /// The smallest overlap that passes under `measure`.
    #[cfg(test)]
    pub(crate) fn required_overlap(&self, measure: Measure, a: u64, b: u64) -> u64 {
        match measure {
            Measure::Jaccard => self.jaccard_overlap(a, b),
            Measure::Containment => self.containment_overlap(a, b),
        }
    }

    /// Whether two non-empty sets of sizes `a` and `b` with `overlap` common shingles pass, by the
    /// cross-multiplied comparison (independent of `Threshold::required_overlap`, which the
    /// tests check against it).
    pub fn passes(&self, measure: Measure, a: u64, b: u64, overlap: u64) -> bool {
        let o = overlap as u128;
        match measure {
            // o / (a + b - o) >= num / den
            Measure::Jaccard => o * self.den >= self.num * (a + b - overlap) as u128,
            // o / min(a, b) >= num / den
            Measure::Containment => o * self.den >= self.num * a.min(b) as u128,
        }
    }

    /// Whether a similarity known only as an `f64` passes: `x` is taken to be the `f64` nearest
    /// a quotient `o / u` of integers (`o / u` as `o as f64 / u as f64` computes it), and passes
    /// when `o / u >= num / den`, the test of [`Threshold::passes`].
    ///
    /// Exact for every `u` below 2^26 (for a Jaccard, the union; for a containment, the smaller
    /// set). Rounding to nearest is monotone and this threshold's `f64`, `t`, is the one nearest
    /// `num / den` (but for the tiny thresholds read as 1e-11, which `rounded_cut` handles), so
    /// `x > t` implies `o / u >= num / den` and `x < t` implies `o / u < num / den`, whatever `u`. When `x == t`, `o / u` lies within half an ulp of `t`, an interval narrower
    /// than 2^-53, and two fractions with denominators below 2^26.5 differ by more than that: the
    /// simplest fraction in the interval is `o / u`, and `rounded_cut` compared it with the
    /// threshold once, beforehand.
    pub fn passes_rounded(&self, x: f64) -> bool {
        x >= f64::from_bits(self.cut)
    }
}

/// The cut of [`Threshold::passes_rounded`] for the threshold `th` read from `t`: `t` when the
/// simplest fraction that rounds to `t` passes, else the next `f64` above `t`.
fn rounded_cut(t: f64, th: &Threshold) -> f64 {
    // Below 2^-40 the only quotient with a denominator below 2^26 that is not above `t` is 0,
    // which passes only a threshold of 0; the others pass whatever the threshold, also one read
    // as 1e-11 (see `Threshold::from_f64`). The plain comparison with `t` decides the same.
    if t < TINY_THRESHOLD {
        return t;
    }
    // `t = m 2^e` with `m < 2^53` and `-92 <= e <= -52`; in units of 2^(e - 2), `t` is `4m`, and
    // the numbers that round to it lie strictly between the midpoints to its neighbours: `4m + 2`
    // above, `4m - 2` below (`4m - 1` when `t` is a power of two, whose neighbour below is half as
    // far). No fraction with a denominator below 2^53 is a midpoint.
    let bits = t.to_bits();
    let m = u128::from((bits & ((1 << 52) - 1)) | (1 << 52));
    let e = ((bits >> 52) & 0x7ff) as i32 - 1075;
    let den = 1u128 << (2 - e);
    let below = if bits & ((1 << 52) - 1) == 0 { 1 } else { 2 };
    let (p, q) = simplest_between((4 * m - below, den), (4 * m + 2, den));
    // p / q >= num / den, with products wider than 128 bits. A threshold read as 1e-11 from a
    // smaller `t` is above every fraction that rounds to `t`, and the cut is the next `f64`.
    if mul_wide(p, th.den) >= mul_wide(th.num, q) {
        t
    } else {
        t.next_up()
    }
}

/// The fraction with the smallest denominator strictly between `x` and `y` (`0 <= x < y`), as
/// `(numerator, denominator)`: the continued-fraction recursion of the Stern-Brocot tree.
fn simplest_between((a, b): (u128, u128), (c, d): (u128, u128)) -> (u128, u128) {
    let n = a / b;
    // The smallest integer above x, when it is below y.
    if (n + 1) * d < c {
        return (n + 1, 1);
    }
    // x and y are in [n, n + 1]: the answer is n + 1 / z, with z the simplest fraction between
    // 1 / (y - n) and 1 / (x - n).
    let (ra, rc) = (a - n * b, c - n * d);
    if ra == 0 {
        // x = n: n + 1 / k with the smallest k such that 1 / k < y - n.
        let k = d / rc + 1;
        return (n * k + 1, k);
    }
    let (p, q) = simplest_between((d, rc), (b, ra));
    (n * p + q, p)
}

/// `a b` as `(high, low)` 128-bit halves, which compare as the product does.
fn mul_wide(a: u128, b: u128) -> (u128, u128) {
    const LOW: u128 = u64::MAX as u128;
    let (a1, a0, b1, b0) = (a >> 64, a & LOW, b >> 64, b & LOW);
    let (p00, p01, p10, p11) = (a0 * b0, a0 * b1, a1 * b0, a1 * b1);
    let mid = (p00 >> 64) + (p01 & LOW) + (p10 & LOW);
    let low = (p00 & LOW) | (mid << 64);
    let high = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
    (high, low)
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.max(1)
}

/// A pair of sets that passed: indices into the input and the size of their intersection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Match {
    /// The first set (`a < b`).
    pub a: u32,
    /// The second set.
    pub b: u32,
    /// `|A|`.
    pub a_size: u32,
    /// `|B|`.
    pub b_size: u32,
    /// `|A ∩ B|`.
    pub overlap: u32,
}

impl Match {
    /// `|A ∩ B| / |A ∪ B|`.
    pub fn jaccard(&self) -> f64 {
        let union = self.a_size as u64 + self.b_size as u64 - self.overlap as u64;
        self.overlap as f64 / union as f64
    }

    /// `|A ∩ B| / |A|`: how much of `a` is found in `b`.
    pub fn a_in_b(&self) -> f64 {
        self.overlap as f64 / self.a_size as f64
    }

    /// `|A ∩ B| / |B|`: how much of `b` is found in `a`.
    pub fn b_in_a(&self) -> f64 {
        self.overlap as f64 / self.b_size as f64
    }
}

/// Counts from a join.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JoinStats {
    /// Non-empty sets joined.
    pub sets: u64,
    /// Sets left after grouping identical ones.
    pub distinct_sets: u64,
    /// Shingles in the distinct sets.
    pub tokens: u64,
    /// Distinct shingles.
    pub distinct_tokens: u64,
    /// Entries in the inverted index.
    pub index_entries: u64,
    /// Candidate pairs that survived the filters and were verified by a merge.
    pub candidates: u64,
    /// The join's memory estimate at its peak, in bytes, with the pairs it found (and, in exact
    /// mode's scan, the records they become). The refusal is decided on the same estimate:
    /// before the join, with the pairs known then (all of them at threshold 0, those of
    /// identical sets otherwise), then as the join finds the others.
    pub memory_estimate: u64,
}

/// What a join found.
#[derive(Debug, Clone, Default)]
pub struct JoinOutput {
    /// Every passing pair, sorted by `(a, b)`.
    pub matches: Vec<Match>,
    /// Counts.
    pub stats: JoinStats,
}

/// The options of a join.
#[derive(Debug, Clone, Copy)]
pub struct JoinOptions {
    /// The threshold.
    pub threshold: Threshold,
    /// What it measures.
    pub measure: Measure,
    /// Refuse to start when the join's memory estimate exceeds this many bytes.
    pub max_memory: Option<u64>,
}

/// glibc gives an allocation of at least this size a mapping of its own, handed back to the
/// system as soon as it is freed (32 MiB is as far as its adaptive threshold goes on 64-bit
/// systems). A smaller one comes from the heap, and once freed it stays resident: later small
/// allocations reuse it, but it is rarely returned.
pub(crate) const MAPPED_ALONE: u64 = 32 << 20;

/// The bytes a heap allocation of `bytes` takes: glibc adds an 8-byte header, rounds up to 16 and
/// serves at least 32.
pub(crate) const fn heap_bytes(bytes: u64) -> u64 {
    if bytes == 0 {
        0
    } else if bytes + 8 <= 32 {
        32
    } else {
        (bytes + 8).next_multiple_of(16)
    }
}

/// The bytes a set's vector takes, as allocated.
pub(crate) fn set_bytes(s: &Vec<u64>) -> u64 {
    let bytes = 8 * s.capacity() as u64;
    if bytes >= MAPPED_ALONE {
        bytes.next_multiple_of(4096)
    } else {
        heap_bytes(bytes)
    }
}

/// What a join's memory follows: the sets' sizes, their grouping into identical sets, the
/// threshold and the number of threads, all known before the join builds anything; and the
/// pairs, those of identical sets as soon as they are grouped, the others as the join finds them.
///
/// Why a model of each stage rather than bytes per shingle: the peak moves from one structure to
/// another with the corpus (many small sets, a few huge ones, identical copies, threshold 0), and
/// a refusal is only worth something if it comes before the allocations it is about.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct JoinShape {
    /// Sets given, empty ones included (a size is kept for each).
    inputs: u64,
    /// Non-empty sets given, identical ones included.
    sets: u64,
    /// Bytes the given sets take in the heap: the join frees them, but they stay resident.
    heap: u64,
    /// Bytes of the given sets mapped alone: handed back as the join frees them.
    mapped: u64,
    /// Of `mapped`, the bytes of the distinct sets (the others are freed before numbering).
    distinct_mapped: u64,
    /// Non-empty sets left after grouping identical ones.
    distinct_sets: u64,
    /// Shingles in the distinct sets.
    tokens: u64,
    /// At most this many entries in the inverted index.
    index_entries: u64,
    /// Containment: a mark per shared shingle says which ones are probed.
    containment: bool,
    /// Pairs of distinct sets known before the join (all of them at threshold 0), then found.
    distinct_pairs: u64,
    /// The same for all sets: the matches returned. Known before the join for the pairs of
    /// identical sets (and for every pair at threshold 0).
    pairs: u64,
    /// Bytes the caller holds for each pair after the join, beside the match (its record of it).
    record: u64,
    /// Worker threads, each with its own buffers.
    threads: u64,
}

impl JoinShape {
    /// The shape of `sets` before grouping; [`join_beside`] fills in the rest.
    fn of_input(sets: &[Vec<u64>], threads: u64) -> JoinShape {
        let mut shape = JoinShape {
            inputs: sets.len() as u64,
            threads,
            ..JoinShape::default()
        };
        for s in sets.iter().filter(|s| !s.is_empty()) {
            shape.sets += 1;
            let bytes = set_bytes(s);
            if bytes >= MAPPED_ALONE {
                shape.mapped += bytes;
            } else {
                shape.heap += bytes;
            }
        }
        shape
    }

    /// The groups of identical sets: the outer vector (24 a group) and each group's members (a
    /// heap chunk of at least 32 bytes; 4 a member beyond the first).
    fn groups(&self) -> u64 {
        56 * self.distinct_sets + 4 * (self.sets - self.distinct_sets)
    }

    /// Grouping the identical sets: the sets, a size (4) and a fingerprint (16) per set, a slot
    /// in the sort per non-empty set (4), and the groups.
    fn grouping(&self) -> u64 {
        self.heap + self.mapped + 20 * self.inputs + 4 * self.sets + self.groups()
    }

    /// [`grouping`](Self::grouping) before the groups are known: with all the sets identical,
    /// so that it never exceeds what grouping will need.
    fn before_grouping(&self) -> u64 {
        JoinShape {
            distinct_sets: self.sets.min(1),
            ..*self
        }
        .grouping()
    }

    /// The join's peak, in bytes: the largest of its stages, each with what is alive during it.
    fn peak(&self) -> u64 {
        let JoinShape {
            inputs,
            sets,
            heap,
            distinct_mapped,
            distinct_sets: r,
            tokens: t,
            index_entries: e,
            containment,
            distinct_pairs,
            pairs,
            record,
            threads,
            ..
        } = *self;
        // Pairs may be counted by the billion (every pair of a million copies): their bytes
        // saturate rather than wrap, so that such a count is refused, not let through.
        let per_pair = |n: u64, bytes: u64| n.saturating_mul(bytes);
        // Alive from the grouping to the end: the sets' heap bytes (freed, still resident), the
        // sizes and the groups.
        let kept = heap + 4 * inputs + self.groups();
        // Numbering (`TokenSets::from_hash_sets`): the distinct sets (24) and their offsets (8);
        // every hash copied into its bucket (8) with its position (4), in two vectors mapped
        // alone, while the sets are freed as they are copied (the mapped ones handed back); the
        // frequencies and then the tokens take the positions' place. In the heap the sets
        // left: a counter per possible frequency (4 per set) and the copy of a bucket (16 a
        // hash) in each worker that has a bucket.
        let buckets = 1u64 << bucket_bits(t as usize);
        let small = 4 * sets + threads.min(buckets) * 16 * t.div_ceil(buckets);
        let numbering = 32 * r + distinct_mapped.max(12 * t) + small.saturating_sub(heap);
        // Probing: the tokens (4), offsets (8) and size order (8); the inverted index's entries
        // (8) and its two arrays over the shared shingles (4 each; a shingle is shared by two sets
        // at least, so there are at most t / 2), with containment a mark per shared shingle;
        // a candidate slot per set in each worker (16) and a list of pairs per set (24).
        let shared = t / 2;
        let probing = 4 * t
            + 16 * r
            + 8 * e
            + 8 * shared
            + if containment { shared } else { 0 }
            + threads.min(r) * 16 * r
            + 24 * r;
        // Every pair of distinct sets (12) at threshold 0, or those the probes found, gathered
        // from the workers' pieces into one vector (so twice, at the end).
        let all_pairs = (4 * t + 16 * r).saturating_add(per_pair(distinct_pairs, 24));
        // The result: the pairs of distinct sets (12) and every pair of sets (20).
        let output = (4 * t + 8 * r)
            .saturating_add(per_pair(distinct_pairs, 12))
            .saturating_add(per_pair(pairs, 20));
        // After the join, while the caller turns the matches into its records: the sets' heap
        // bytes, still resident, the matches and the records.
        let reporting = heap.saturating_add(per_pair(pairs, 20 + record));
        let join = numbering.max(probing).max(all_pairs).max(output);
        self.grouping()
            .max(kept.saturating_add(join))
            .max(reporting)
    }

    /// [`peak`](Self::peak) with `found` more pairs of distinct sets, standing for `pairs` more
    /// pairs of sets.
    fn peak_with(&self, found: u64, pairs: u64) -> u64 {
        JoinShape {
            distinct_pairs: self.distinct_pairs.saturating_add(found),
            pairs: self.pairs.saturating_add(pairs),
            ..*self
        }
        .peak()
    }
}

/// The memory limit while the join runs: each probe's pairs are counted as soon as it has
/// found them, with the pairs of sets they stand for (one for each member of one group with
/// each member of the other), and once the estimate with them passes the limit the probes left
/// are skipped. Why during the join: near-identical documents pair quadratically, and the
/// matches and records of pairs found in thousands of groups dwarf everything the sets' sizes
/// predict.
struct Budget<'a> {
    /// The join's shape with the pairs known before it.
    shape: JoinShape,
    /// What the caller holds beside the join.
    beside: u64,
    /// No limit, no accounting.
    limit: Option<u64>,
    /// The members of each group, by distinct set.
    groups: &'a [Vec<u32>],
    /// Whether some group has more than one member (else a pair found is one pair of sets).
    copies: bool,
    /// Pairs of distinct sets found so far.
    found: AtomicU64,
    /// The pairs of sets they stand for.
    pairs: AtomicU64,
    /// The estimate that passed the limit; 0 while none did.
    over: AtomicU64,
}

impl<'a> Budget<'a> {
    fn new(shape: JoinShape, beside: u64, limit: Option<u64>, groups: &'a [Vec<u32>]) -> Self {
        Budget {
            shape,
            beside,
            limit,
            groups,
            copies: groups.iter().any(|g| g.len() > 1),
            found: AtomicU64::new(0),
            pairs: AtomicU64::new(0),
            over: AtomicU64::new(0),
        }
    }

    /// Whether the limit was passed: the probes left have nothing to do.
    fn spent(&self) -> bool {
        self.over.load(Relaxed) != 0
    }

    /// Counts the pairs `out` of one probe, as `(rank, rank, overlap)` with `order` from ranks
    /// to distinct sets. Each total is its counter's value after this probe's addition, never
    /// more than the final count, so a refusal is never spurious; what a race between two
    /// probes leaves uncounted here, the check after the join counts.
    fn charge(&self, out: &[(u32, u32, u32)], order: &[u32]) {
        let Some(limit) = self.limit else { return };
        let pairs = if self.copies {
            let members = |rank: u32| self.groups[order[rank as usize] as usize].len() as u64;
            out.iter().map(|&(x, y, _)| members(x) * members(y)).sum()
        } else {
            out.len() as u64
        };
        let found = self.found.fetch_add(out.len() as u64, Relaxed) + out.len() as u64;
        let pairs = self.pairs.fetch_add(pairs, Relaxed) + pairs;
        let needed = self
            .beside
            .saturating_add(self.shape.peak_with(found, pairs));
        if needed > limit {
            self.over.fetch_max(needed, Relaxed);
        }
    }

    /// The refusal, when the limit was passed.
    fn refusal(&self) -> Result<()> {
        match (self.over.load(Relaxed), self.limit) {
            (needed, Some(limit)) if needed > 0 => Err(Error::TooLargeForExact { needed, limit }),
            _ => Ok(()),
        }
    }
}

/// Joins `sets` (each of distinct hashes, in any order; [`crate::text::shingle::Shingler::hash_set`]
/// gives them sorted): every pair `a < b` of non-empty sets whose similarity under
/// `opts.measure` is at least `opts.threshold`. Empty sets are never paired. At threshold 0 every
/// pair of non-empty sets passes (every similarity is at least 0) and all of them are returned.
///
/// Identical sets are recognized when their hashes come in the same order, as they do for
/// identical documents; sets equal in another order are joined like any two sets.
pub fn join(sets: Vec<Vec<u64>>, opts: &JoinOptions) -> Result<JoinOutput> {
    join_beside(sets, opts, 0, 0).map(|(out, _)| out)
}

/// [`join`] in a process that holds `beside` bytes of its own during the join, and `record`
/// bytes for each pair once it is over (while it turns the matches into its own records): the
/// memory limit applies to all of it together. The estimate is checked, and the join refused
/// with [`Error::TooLargeForExact`], before anything big is allocated: once before grouping the
/// identical sets (a lower bound), once after, from the distinct sets' sizes and the pairs of
/// identical sets; then as the probes find pairs, each probe's as soon as it is done (the
/// probes left are skipped once the limit is passed); and last with every pair counted, before
/// the matches are written out. Returns the join's shape too, with the pairs found.
pub(crate) fn join_beside(
    sets: Vec<Vec<u64>>,
    opts: &JoinOptions,
    beside: u64,
    record: u64,
) -> Result<(JoinOutput, JoinShape)> {
    let mut shape = JoinShape::of_input(&sets, rayon::current_num_threads() as u64);
    shape.containment = opts.measure == Measure::Containment;
    shape.record = record;
    let refuse = |needed: u64| match opts.max_memory {
        Some(limit) if needed > limit => Err(Error::TooLargeForExact { needed, limit }),
        _ => Ok(()),
    };
    refuse(beside + shape.before_grouping())?;
    let sizes: Vec<u32> = sets.iter().map(|s| s.len() as u32).collect();
    let groups = group_identical(&sets);
    let mut stats = JoinStats {
        sets: shape.sets,
        distinct_sets: groups.len() as u64,
        ..Default::default()
    };
    // Keep one set per group, in group order.
    let mut sets = sets;
    let reps: Vec<Vec<u64>> = groups
        .iter()
        .map(|g| std::mem::take(&mut sets[g[0] as usize]))
        .collect();
    drop(sets);
    stats.tokens = reps.iter().map(|s| s.len() as u64).sum();
    if stats.tokens > MAX_TOTAL_TOKENS {
        return Err(Error::TooManyShingles {
            shingles: stats.tokens,
            max: MAX_TOTAL_TOKENS,
        });
    }
    shape.distinct_sets = stats.distinct_sets;
    shape.tokens = stats.tokens;
    shape.distinct_mapped = reps
        .iter()
        .map(set_bytes)
        .filter(|&b| b >= MAPPED_ALONE)
        .sum();
    shape.index_entries = match opts.measure {
        // The index prefixes, from the sizes alone (the shingles of one set only are left out
        // of the index, so it may hold fewer).
        Measure::Jaccard => reps
            .iter()
            .map(|s| s.len() as u64 - opts.threshold.ceil_of_double(s.len() as u64) + 1)
            .sum(),
        Measure::Containment => stats.tokens,
    };
    // The pairs of each group's members are known now, whatever the threshold.
    let members = |g: &Vec<u32>| g.len() as u64;
    let copies: u64 = groups
        .iter()
        .map(|g| members(g) * (members(g) - 1) / 2)
        .sum();
    shape.pairs = copies;
    if opts.threshold.is_zero() {
        let d = stats.distinct_sets;
        shape.distinct_pairs = d * d.saturating_sub(1) / 2;
        // Each group's own pairs, and every pair across groups.
        shape.pairs = stats.sets * stats.sets.saturating_sub(1) / 2;
    }
    refuse(beside.saturating_add(shape.peak()))?;

    let tokens = TokenSets::from_hash_sets(reps);
    stats.distinct_tokens = tokens.distinct as u64;
    let found = if opts.threshold.is_zero() {
        let all = all_pairs_of(&tokens);
        stats.candidates = all.len() as u64;
        all
    } else {
        let budget = Budget::new(shape, beside, opts.max_memory, &groups);
        let (found, index_entries, candidates) = match opts.measure {
            Measure::Jaccard => jaccard_join(&tokens, opts.threshold, &budget),
            Measure::Containment => containment_join(&tokens, opts.threshold, &budget),
        };
        budget.refusal()?;
        stats.index_entries = index_entries;
        stats.candidates = candidates;
        found
    };

    // Every pair counted, before the matches are allocated: each pair of groups stands for all
    // pairs of their members.
    let across: u64 = found
        .iter()
        .map(|&(gx, gy, _)| members(&groups[gx as usize]) * members(&groups[gy as usize]))
        .sum();
    shape.distinct_pairs = found.len() as u64;
    shape.pairs = copies + across;
    refuse(beside.saturating_add(shape.peak()))?;

    // Back from groups to the input sets: each pair of groups stands for all pairs of their
    // members, and the members of one group are pairwise identical.
    let mut matches = Vec::with_capacity(shape.pairs as usize);
    let mut push = |x: u32, y: u32, overlap: u32| {
        let (a, b) = if x < y { (x, y) } else { (y, x) };
        matches.push(Match {
            a,
            b,
            a_size: sizes[a as usize],
            b_size: sizes[b as usize],
            overlap,
        });
    };
    for g in &groups {
        let size = sizes[g[0] as usize];
        for (i, &x) in g.iter().enumerate() {
            for &y in &g[i + 1..] {
                push(x, y, size);
            }
        }
    }
    for (gx, gy, overlap) in found {
        for &x in &groups[gx as usize] {
            for &y in &groups[gy as usize] {
                push(x, y, overlap);
            }
        }
    }
    matches.par_sort_unstable();
    debug_assert_eq!(matches.len() as u64, shape.pairs);
    stats.memory_estimate = shape.peak();
    Ok((JoinOutput { matches, stats }, shape))
}

/// The reference: every pair of non-empty sets (each sorted and distinct) compared by merging,
/// with the same exact test. Quadratic; for tests and benchmarks.
pub fn brute_force(sets: &[Vec<u64>], threshold: Threshold, measure: Measure) -> Vec<Match> {
    let mut out = Vec::new();
    for (a, x) in sets.iter().enumerate() {
        for (b, y) in sets.iter().enumerate().skip(a + 1) {
            if x.is_empty() || y.is_empty() {
                continue;
            }
            let o = crate::sim::intersection_size(x, y) as u64;
            if threshold.passes(measure, x.len() as u64, y.len() as u64, o) {
                out.push(Match {
                    a: a as u32,
                    b: b as u32,
                    a_size: x.len() as u32,
                    b_size: y.len() as u32,
                    overlap: o as u32,
                });
            }
        }
    }
    out
}

/// Groups the non-empty sets that are identical. Each group lists its members in increasing
/// order; groups are ordered by their first member.
fn group_identical(sets: &[Vec<u64>]) -> Vec<Vec<u32>> {
    let keys: Vec<(usize, u64)> = sets
        .par_iter()
        .map(|s| (s.len(), xxh3_64(bytemuck::cast_slice(s))))
        .collect();
    let mut by_key: Vec<u32> = (0..sets.len() as u32)
        .filter(|&i| !sets[i as usize].is_empty())
        .collect();
    by_key.par_sort_unstable_by_key(|&i| (keys[i as usize], i));
    let mut groups: Vec<Vec<u32>> = Vec::new();
    let mut run_start = 0;
    for k in 1..=by_key.len() {
        if k < by_key.len() && keys[by_key[k] as usize] == keys[by_key[run_start] as usize] {
            continue;
        }
        // Equal fingerprints: compare the sets themselves, so that a collision of the 64-bit
        // fingerprint cannot merge two different sets.
        let first = groups.len();
        for &i in &by_key[run_start..k] {
            match groups[first..]
                .iter_mut()
                .find(|g| sets[g[0] as usize] == sets[i as usize])
            {
                Some(g) => g.push(i),
                None => groups.push(vec![i]),
            }
        }
        run_start = k;
    }
    groups.sort_unstable_by_key(|g| g[0]);
    groups
}

/// Every pair of sets with its overlap: the answer at threshold 0.
fn all_pairs_of(sets: &TokenSets) -> Vec<(u32, u32, u32)> {
    (0..sets.len())
        .into_par_iter()
        .flat_map_iter(|a| {
            (a + 1..sets.len()).map(move |b| {
                let o = overlap_at_least(sets.set(a), sets.set(b), 0, 0).unwrap_or(0);
                (a as u32, b as u32, o)
            })
        })
        .collect()
}

/// Sets of `u32` tokens numbered by document frequency (rarest first), each sorted.
#[derive(Debug, Clone, Default)]
pub struct TokenSets {
    tokens: Vec<u32>,
    offsets: Vec<usize>,
    distinct: usize,
    /// Tokens below this number occur in one set only.
    shared_from: u32,
}

/// Aim for buckets of at least this many hashes. Tiny in tests, so that small inputs go through
/// every bucket, part and chunk of the scatter.
const BUCKET_TARGET: usize = if cfg!(test) { 1 << 5 } else { 1 << 15 };
/// Chunks of sets scattered in parallel.
const CHUNKS: usize = 64;

/// The top bits of a hash that choose its bucket, for `total` hashes.
fn bucket_bits(total: usize) -> usize {
    (total / BUCKET_TARGET).max(1).ilog2().min(8) as usize
}

impl TokenSets {
    /// Numbers the distinct hashes of `sets` by document frequency and rewrites every set in
    /// tokens. `sets` are consumed and freed as they are read.
    ///
    /// The hashes are random, so their top bits cut them into buckets of even size. The sets are
    /// cut into chunks; every chunk copies each of its hashes, with its position, into the
    /// chunk's own range of the hash's bucket (a counting sort, the chunks in parallel). Each
    /// bucket then finds its distinct hashes and their document frequencies with a small hash
    /// table (each set holds a hash once, so a hash's count is its frequency). Token numbers
    /// follow the frequency, ties broken by bucket and then by first appearance in the bucket, an
    /// order fixed by the input alone. Last, each chunk writes the tokens of its own sets back.
    pub fn from_hash_sets(mut sets: Vec<Vec<u64>>) -> TokenSets {
        let n = sets.len();
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0usize);
        for s in &sets {
            offsets.push(offsets.last().unwrap() + s.len());
        }
        let total = offsets[n];
        assert!(total as u64 <= MAX_TOTAL_TOKENS, "checked by the caller");
        // At most 256 buckets: every chunk writes to two streams per bucket, and more streams
        // than the TLB can map would make the scatter miss on nearly every write.
        let bits = bucket_bits(total);
        let nb = 1usize << bits;
        let bucket = move |h: u64| {
            if bits == 0 {
                0
            } else {
                (h >> (64 - bits)) as usize
            }
        };

        // Chunks of consecutive sets with about equal shingle counts.
        let chunk_target = total.div_ceil(CHUNKS).max(BUCKET_TARGET);
        let mut bounds = vec![0usize];
        for i in 1..n {
            if offsets[i] - offsets[*bounds.last().unwrap()] >= chunk_target {
                bounds.push(i);
            }
        }
        bounds.push(n);
        let chunks: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
        let hists: Vec<Vec<u32>> = chunks
            .par_iter()
            .map(|&(s, e)| {
                let mut h = vec![0u32; nb];
                for set in &sets[s..e] {
                    for &x in set {
                        h[bucket(x)] += 1;
                    }
                }
                h
            })
            .collect();
        // The bucketed arrays are laid out bucket by bucket, and within a bucket chunk by chunk:
        // `cells[b * chunks + c]` is where chunk c's hashes of bucket b go.
        let nc = chunks.len();
        let mut cells = Vec::with_capacity(nb * nc + 1);
        cells.push(0usize);
        for b in 0..nb {
            for h in &hists {
                cells.push(cells.last().unwrap() + h[b] as usize);
            }
        }
        drop(hists);

        // Scatter. Each chunk gets its own cell of every bucket as a `&mut` slice, so the chunks
        // write in parallel without sharing anything.
        let mut hashes = vec![0u64; total];
        let mut origins = vec![0u32; total];
        let mut hash_cells: Vec<Vec<&mut [u64]>> = (0..nc).map(|_| Vec::new()).collect();
        for (k, cell) in split_by(&mut hashes, &cells).into_iter().enumerate() {
            hash_cells[k % nc].push(cell);
        }
        let mut origin_cells: Vec<Vec<&mut [u32]>> = (0..nc).map(|_| Vec::new()).collect();
        for (k, cell) in split_by(&mut origins, &cells).into_iter().enumerate() {
            origin_cells[k % nc].push(cell);
        }
        let mut pieces = Vec::with_capacity(nc);
        let mut rest = sets.as_mut_slice();
        for &(s, e) in &chunks {
            let (head, tail) = rest.split_at_mut(e - s);
            pieces.push((head, offsets[s] as u32));
            rest = tail;
        }
        pieces
            .into_par_iter()
            .zip(hash_cells)
            .zip(origin_cells)
            .for_each(|(((piece, mut origin), mut hs), mut os)| {
                let mut fill = vec![0usize; nb];
                for set in piece {
                    // Freed as soon as it is copied, so the peak is not two full copies.
                    for h in std::mem::take(set) {
                        let b = bucket(h);
                        hs[b][fill[b]] = h;
                        os[b][fill[b]] = origin;
                        fill[b] += 1;
                        origin += 1;
                    }
                }
            });
        drop(sets);

        // Each bucket: distinct hashes and their frequencies. The hash array is reused to hold,
        // for each entry, its distinct number within the bucket (high half) and its position
        // (low half); the bucket's frequencies then go in the first slots of its part of the
        // positions' array, which has one slot per entry and at most as many distinct hashes.
        let bucket_bounds: Vec<usize> = (0..=nb).map(|b| cells[b * nc]).collect();
        let distinct_in: Vec<usize> = split_by(&mut hashes, &bucket_bounds)
            .into_par_iter()
            .zip(split_by(&mut origins, &bucket_bounds))
            .map_init(GroupScratch::default, |scratch, (hs, os)| {
                group_bucket(hs, os, bits, scratch)
            })
            .collect();
        let dfs = |b: usize| bucket_bounds[b]..bucket_bounds[b] + distinct_in[b];

        // Token numbers: a counting sort on the frequency, in bucket order.
        let max_df = (0..nb)
            .flat_map(|b| origins[dfs(b)].iter().copied())
            .max()
            .unwrap_or(0) as usize;
        let mut next = vec![0u32; max_df + 2];
        for b in 0..nb {
            for &df in &origins[dfs(b)] {
                next[df as usize + 1] += 1;
            }
        }
        for d in 1..next.len() {
            next[d] += next[d - 1];
        }
        let distinct = next[max_df + 1] as usize;
        // Tokens of frequency 1 are numbered first: 0 .. shared_from.
        let shared_from = next.get(2).copied().unwrap_or(0);
        // In place: each frequency becomes its token number.
        for b in 0..nb {
            for df in &mut origins[dfs(b)] {
                let r = next[*df as usize];
                next[*df as usize] += 1;
                *df = r;
            }
        }
        drop(next);
        // Each entry's distinct number becomes its token, so that the positions' array is free.
        split_by(&mut hashes, &bucket_bounds)
            .into_par_iter()
            .enumerate()
            .for_each(|(b, hs)| {
                let ranks = &origins[dfs(b)];
                for e in hs {
                    *e = (ranks[(*e >> 32) as usize] as u64) << 32 | *e & 0xffff_ffff;
                }
            });

        // Each chunk writes its own sets' tokens, reading its cell of every bucket, into the
        // positions' array: every position gets one token. Why reuse it: the numbering is the
        // join's peak, and a fresh array here (with the frequencies, 4 bytes per distinct
        // shingle, which the memory estimate cannot know in advance) raised it.
        let mut tokens = origins;
        let mut token_pieces = Vec::with_capacity(nc);
        let mut rest = tokens.as_mut_slice();
        for &(s, e) in &chunks {
            let (head, tail) = rest.split_at_mut(offsets[e] - offsets[s]);
            token_pieces.push((head, offsets[s]));
            rest = tail;
        }
        token_pieces
            .into_par_iter()
            .enumerate()
            .for_each(|(c, (out, base))| {
                for b in 0..nb {
                    let cell = cells[b * nc + c]..cells[b * nc + c + 1];
                    for &e in &hashes[cell] {
                        out[e as u32 as usize - base] = (e >> 32) as u32;
                    }
                }
            });
        drop(hashes);
        split_by(&mut tokens, &offsets)
            .into_par_iter()
            .for_each(|s| s.sort_unstable());
        TokenSets {
            tokens,
            offsets,
            distinct,
            shared_from,
        }
    }

    /// Tokens numbered below this occur in one set only: they never make a pair.
    pub fn shared_from(&self) -> u32 {
        self.shared_from
    }

    /// Number of sets.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// True when there are no sets.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Set `i`, sorted by token.
    pub fn set(&self, i: usize) -> &[u32] {
        &self.tokens[self.offsets[i]..self.offsets[i + 1]]
    }

    /// Number of distinct tokens.
    pub fn distinct(&self) -> usize {
        self.distinct
    }
}

/// Buffers of [`group_bucket`], kept by each worker from one bucket to the next (allocating
/// them for each bucket cost more than the work, in page faults).
#[derive(Default)]
struct GroupScratch {
    local: Vec<(u64, u32)>,
    table: Vec<u32>,
    seen: Vec<u64>,
}

/// Finds the distinct hashes of one bucket and counts them: replaces each hash by its distinct
/// number (high half) and its position `os[k]` (low half), writes the counts over the start of
/// `os`, in the order of the distinct numbers, and returns how many there are.
///
/// The bucket is split once more on the next bits of the hash (a local counting sort, through
/// few enough streams to stay fast), so that each part's hash table fits in the cache; numbers
/// are given part by part, in order of first appearance: an order fixed by the input alone.
fn group_bucket(hs: &mut [u64], os: &mut [u32], bits: usize, scratch: &mut GroupScratch) -> usize {
    let sub_bits = (hs.len() / BUCKET_TARGET).max(1).ilog2().min(8) as usize;
    let nsub = 1usize << sub_bits;
    let shift = 64 - bits - sub_bits;
    let part = |h: u64| {
        if sub_bits == 0 {
            0
        } else {
            (h >> shift) as usize & (nsub - 1)
        }
    };
    let mut start = vec![0usize; nsub + 1];
    for &h in hs.iter() {
        start[part(h) + 1] += 1;
    }
    for p in 1..=nsub {
        start[p] += start[p - 1];
    }
    let mut at = start.clone();
    // (hash, index in the bucket), part by part; the positions move into the hash array, and
    // `os` is free for the counts.
    let GroupScratch { local, table, seen } = scratch;
    local.clear();
    local.resize(hs.len(), (0, 0));
    for (k, (h, &o)) in hs.iter_mut().zip(os.iter()).enumerate() {
        let p = part(*h);
        local[at[p]] = (*h, k as u32);
        at[p] += 1;
        *h = o as u64;
    }
    let mut distinct = 0usize;
    for p in 0..nsub {
        let entries = &local[start[p]..start[p + 1]];
        let mask = (entries.len() * 2).next_power_of_two() - 1;
        // Slot -> (number within the part + 1); 0 is empty. The hashes are random, so their low
        // bits index the table directly.
        table.clear();
        table.resize(mask + 1, 0);
        seen.clear();
        let first = distinct;
        for &(h, k) in entries {
            let mut slot = h as usize & mask;
            let id = loop {
                match table[slot] {
                    0 => {
                        seen.push(h);
                        os[distinct] = 0;
                        distinct += 1;
                        table[slot] = seen.len() as u32;
                        break seen.len() - 1;
                    }
                    t if seen[t as usize - 1] == h => break t as usize - 1,
                    _ => slot = (slot + 1) & mask,
                }
            } + first;
            os[id] += 1;
            hs[k as usize] |= (id as u64) << 32;
        }
    }
    distinct
}

/// Cuts `v` at `bounds` (`bounds[0] = 0`, last = `v.len()`).
fn split_by<'a, T>(v: &'a mut [T], bounds: &[usize]) -> Vec<&'a mut [T]> {
    let mut out = Vec::with_capacity(bounds.len().saturating_sub(1));
    let mut rest = v;
    for w in bounds.windows(2) {
        let (head, tail) = rest.split_at_mut(w[1] - w[0]);
        out.push(head);
        rest = tail;
    }
    out
}

/// An entry of the inverted index: a set (by its place in size order) and the token's position
/// in it.
#[derive(Debug, Clone, Copy)]
struct Posting {
    rank: u32,
    pos: u32,
}

/// Inverted lists in one array (CSR): the list of token `w` is
/// `entries[start[w - base]..start[w - base + 1]]`, sorted by rank. Tokens below `base` occur in
/// one set only and have no list: they can never make a pair.
struct Index {
    base: u32,
    start: Vec<u32>,
    entries: Vec<Posting>,
}

impl Index {
    /// Indexes, in rank order, the tokens `keep(w)` among the first `len(r)` tokens of the set
    /// of rank `r`.
    fn build(
        sets: &TokenSets,
        order: &[u32],
        len: impl Fn(usize) -> usize,
        keep: impl Fn(u32) -> bool,
    ) -> Index {
        let base = sets.shared_from();
        let shared = |r: usize| {
            let s = &sets.set(order[r] as usize)[..len(r)];
            let from = s.partition_point(|&w| w < base);
            s[from..]
                .iter()
                .enumerate()
                .map(move |(k, &w)| (from + k, w))
        };
        let mut start = vec![0u32; sets.distinct() - base as usize + 1];
        for r in 0..order.len() {
            for (_, w) in shared(r) {
                if keep(w) {
                    start[(w - base) as usize + 1] += 1;
                }
            }
        }
        for w in 1..start.len() {
            start[w] += start[w - 1];
        }
        let mut fill = start.clone();
        let mut entries = vec![Posting { rank: 0, pos: 0 }; *start.last().unwrap() as usize];
        for r in 0..order.len() {
            for (pos, w) in shared(r) {
                if keep(w) {
                    let f = &mut fill[(w - base) as usize];
                    entries[*f as usize] = Posting {
                        rank: r as u32,
                        pos: pos as u32,
                    };
                    *f += 1;
                }
            }
        }
        Index {
            base,
            start,
            entries,
        }
    }

    fn list(&self, w: u32) -> &[Posting] {
        if w < self.base {
            return &[];
        }
        let k = (w - self.base) as usize;
        &self.entries[self.start[k] as usize..self.start[k + 1] as usize]
    }
}

/// Candidate state of one set during one probe.
#[derive(Debug, Clone, Copy, Default)]
struct Cand {
    /// Common tokens found so far, or [`PRUNED`].
    count: u32,
    /// The overlap the pair needs; 0 while the set has not been met.
    need: u32,
    /// Positions of the last common token found, in the probe and in the candidate.
    last_i: u32,
    last_j: u32,
}

const PRUNED: u32 = u32::MAX;

/// A worker's candidate table, reused from probe to probe.
struct Scratch {
    cands: Vec<Cand>,
    touched: Vec<u32>,
}

impl Scratch {
    fn new(n: usize) -> Self {
        Scratch {
            cands: vec![Cand::default(); n],
            touched: Vec::new(),
        }
    }

    /// Records that the probe (size `sx`) and candidate `y` (size `sy`) share the token at
    /// positions `i` and `j`, and drops the candidate when even the best case cannot reach its
    /// required overlap (positional filter). `need` gives the required overlap on first contact.
    #[inline]
    fn meet(&mut self, y: u32, i: u32, j: u32, sx: u32, sy: u32, need: impl Fn() -> u32) {
        let c = &mut self.cands[y as usize];
        if c.need == 0 {
            c.need = need();
            self.touched.push(y);
        }
        if c.count == PRUNED {
            return;
        }
        // The common tokens before these positions were all seen (both sets are in one global
        // order, and every earlier common token of the probe's prefix lies in the candidate's
        // indexed prefix); after them, at most min(sx - i - 1, sy - j - 1) more.
        let best = c.count as u64 + 1 + (sx - i - 1).min(sy - j - 1) as u64;
        if best < c.need as u64 {
            c.count = PRUNED;
        } else {
            c.count += 1;
            c.last_i = i;
            c.last_j = j;
        }
    }
}

/// `|x ∩ y|` when it is at least `need` (counting `have` already found), `None` as soon as the
/// rest cannot make up the difference. Gallops through the larger set when the sizes differ a lot.
fn overlap_at_least(x: &[u32], y: &[u32], have: u32, need: u32) -> Option<u32> {
    let (small, large) = if x.len() <= y.len() { (x, y) } else { (y, x) };
    let mut o = have;
    if small.len() * 4 < large.len() {
        // Galloping: an exponential search from the last place for each token of the small set,
        // O(|small| log(|large| / |small|)) instead of a walk through the large one.
        let mut rest = large;
        for (k, &w) in small.iter().enumerate() {
            if o as usize + small.len() - k < need as usize {
                return None;
            }
            let mut step = 1;
            while step < rest.len() && rest[step - 1] < w {
                step *= 2;
            }
            let lo = step / 2;
            let hi = step.min(rest.len());
            let p = lo + rest[lo..hi].partition_point(|&v| v < w);
            if p < rest.len() && rest[p] == w {
                o += 1;
                rest = &rest[p + 1..];
            } else {
                rest = &rest[p..];
            }
        }
    } else {
        let (mut i, mut j) = (0, 0);
        while i < x.len() && j < y.len() {
            if (o as usize) + (x.len() - i).min(y.len() - j) < need as usize {
                return None;
            }
            match x[i].cmp(&y[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    o += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
    }
    (o >= need).then_some(o)
}

/// The sets of non-zero size in increasing size order (ties by index), and their sizes.
fn size_order(sets: &TokenSets) -> (Vec<u32>, Vec<u32>) {
    let mut order: Vec<u32> = (0..sets.len() as u32)
        .filter(|&s| !sets.set(s as usize).is_empty())
        .collect();
    order.sort_unstable_by_key(|&s| (sets.set(s as usize).len(), s));
    let sizes = order
        .iter()
        .map(|&s| sets.set(s as usize).len() as u32)
        .collect();
    (order, sizes)
}

/// Pairs as `(set, set, overlap)`: ranks in a probe's, indices of sets once gathered.
type Pairs = Vec<(u32, u32, u32)>;

/// Runs `probe` for every rank in parallel with a per-worker [`Scratch`], and returns each
/// rank's pairs (as ranks) and the number of verified candidates. Each probe's pairs are charged
/// to `budget` as soon as it is done; once it is spent, the probes left do nothing.
fn run_probes<F>(n: usize, order: &[u32], budget: &Budget<'_>, probe: F) -> (Vec<Pairs>, u64)
where
    F: Fn(usize, &mut Scratch, &mut Pairs) -> u64 + Sync,
{
    let candidates = AtomicU64::new(0);
    let found: Vec<Pairs> = (0..n)
        .into_par_iter()
        .map_init(
            || Scratch::new(n),
            |scratch, r| {
                let mut out = Vec::new();
                if budget.spent() {
                    return out;
                }
                candidates.fetch_add(probe(r, scratch, &mut out), Relaxed);
                if !out.is_empty() {
                    budget.charge(&out, order);
                }
                out
            },
        )
        .collect();
    (found, candidates.into_inner())
}

/// The probes' pairs in one vector, as set indices; each piece is freed as it is copied.
fn gather(found: Vec<Pairs>, order: &[u32]) -> Pairs {
    let mut pairs = Vec::with_capacity(found.iter().map(Vec::len).sum());
    for piece in found {
        pairs.extend(
            piece
                .into_iter()
                .map(|(x, y, o)| (order[x as usize], order[y as usize], o)),
        );
    }
    pairs
}

/// Jaccard join. Returns the pairs (set indices and overlap), the index size and the number of
/// verified candidates.
///
/// Bounds, for a pair with `|y| <= |x|` (y is indexed, x probes), `t = num / den`:
/// - the pair needs `o >= a = ceil(t (|x| + |y|) / (1 + t))` ([`Threshold::jaccard_overlap`]);
/// - size: `J <= |y| / |x|`, so `|y| >= ceil(t |x|)`; smaller sets are skipped;
/// - probe prefix: `J >= t` gives `o >= t |x ∪ y| >= t |x|`, so `a >= ceil(t |x|)` and a prefix of
///   `|x| - ceil(t |x|) + 1` tokens is at least as long as the principle asks;
/// - index prefix: `|x| >= |y|` gives `a >= ceil(2t |y| / (1 + t))`, so `y` indexes
///   `|y| - ceil(2 num |y| / (num + den)) + 1` tokens.
///
/// Each prefix is computed from a lower bound of the true required overlap, rounded up only
/// where the overlap is an integer anyway, so each is at least as long as needed: the filters can
/// keep extra candidates, never lose a pair.
fn jaccard_join(
    sets: &TokenSets,
    t: Threshold,
    budget: &Budget<'_>,
) -> (Vec<(u32, u32, u32)>, u64, u64) {
    let (order, sizes) = size_order(sets);
    let n = order.len();
    let index_len = |s: u32| (s as u64 - t.ceil_of_double(s as u64) + 1) as usize;
    let index = Index::build(sets, &order, |r| index_len(sizes[r]), |_| true);
    let entries = index.entries.len() as u64;
    let (found, candidates) = run_probes(n, &order, budget, |r, scratch, out| {
        let x = sets.set(order[r] as usize);
        let sx = x.len() as u32;
        let min_size = t.ceil_of(sx as u64) as u32;
        let lo = sizes[..r].partition_point(|&s| s < min_size) as u32;
        if lo as usize >= r {
            return 0;
        }
        let probe_len = (sx - min_size + 1) as usize;
        // Tokens of one set only come first and have no list.
        let first = x[..probe_len].partition_point(|&w| w < index.base);
        for (i, &w) in x.iter().enumerate().take(probe_len).skip(first) {
            let list = index.list(w);
            // Only the sets before this one in size order, and no smaller than min_size.
            let from = list.partition_point(|p| p.rank < lo);
            let to = list.partition_point(|p| (p.rank as usize) < r);
            for p in &list[from..to] {
                let sy = sizes[p.rank as usize];
                scratch.meet(p.rank, i as u32, p.pos, sx, sy, || {
                    t.jaccard_overlap(sx as u64, sy as u64) as u32
                });
            }
        }
        // After the whole prefix (PPJoin): with wx and wy the last prefix tokens of x and y, if
        // wx < wy every common token up to wx lies in both prefixes and was counted, and the rest
        // lies in x's suffix; otherwise the same holds with the roles swapped.
        let wx = x[probe_len - 1];
        verify(scratch, x, sets, &order, r, out, |c, y| {
            let py = index_len(y.len() as u32);
            c.count as usize
                + if wx < y[py - 1] {
                    x.len() - probe_len
                } else {
                    y.len() - py
                }
        })
    });
    // The index is freed before the pieces are gathered.
    drop(index);
    (gather(found, &order), entries, candidates)
}

/// Containment join: pairs with `max(|x ∩ y| / |x|, |x ∩ y| / |y|) >= t`.
///
/// Containment is measured against the smaller set, so a small set can be contained in a set of
/// any larger size: there is no size filter, and the larger set's prefix would have to be almost
/// all of it. The roles are therefore reversed: each set probes, with its prefix, the sets after
/// it in size order (as large or larger), which are indexed whole.
/// - the pair needs `o >= a = ceil(t |y|)` for the smaller `y` ([`Threshold::containment_overlap`]);
/// - probe prefix of `y`: `|y| - a + 1` tokens, the prefix principle with the exact `a`;
/// - the larger set is indexed whole (only the tokens that occur in some probe prefix, since no
///   other list is ever read), so the principle needs nothing from its side.
fn containment_join(
    sets: &TokenSets,
    t: Threshold,
    budget: &Budget<'_>,
) -> (Vec<(u32, u32, u32)>, u64, u64) {
    let (order, sizes) = size_order(sets);
    let n = order.len();
    let probe_len = |s: u32| (s - t.ceil_of(s as u64) as u32 + 1) as usize;
    // Tokens read by some probe; only their lists are built.
    let base = sets.shared_from();
    let mut read = vec![false; sets.distinct() - base as usize];
    for (&s, &size) in order.iter().zip(&sizes) {
        for &w in &sets.set(s as usize)[..probe_len(size)] {
            if w >= base {
                read[(w - base) as usize] = true;
            }
        }
    }
    let index = Index::build(
        sets,
        &order,
        |r| sizes[r] as usize,
        |w| read[(w - base) as usize],
    );
    drop(read);
    let entries = index.entries.len() as u64;
    let (found, candidates) = run_probes(n, &order, budget, |r, scratch, out| {
        let y = sets.set(order[r] as usize);
        let sy = y.len() as u32;
        let need = t.ceil_of(sy as u64) as u32;
        let len = probe_len(sy);
        let first = y[..len].partition_point(|&w| w < base);
        for (i, &w) in y.iter().enumerate().take(len).skip(first) {
            let list = index.list(w);
            let from = list.partition_point(|p| p.rank as usize <= r);
            for p in &list[from..] {
                scratch.meet(p.rank, i as u32, p.pos, sy, sizes[p.rank as usize], || need);
            }
        }
        // Every common token in y's prefix was counted (the larger sets are indexed whole); at
        // most the tokens after the prefix remain.
        let rest = (sy as usize) - probe_len(sy);
        verify(scratch, y, sets, &order, r, out, |c, _| {
            c.count as usize + rest
        })
    });
    // The index is freed before the pieces are gathered.
    drop(index);
    (gather(found, &order), entries, candidates)
}

/// Verifies the candidates left in `scratch` by the probe of rank `r` (set `x`), pushes the pairs
/// that pass as `(rank, rank, overlap)`, clears the table, and returns the number verified by a
/// merge. `bound(c, y)` is an upper bound of the overlap with `y` once the prefix is scanned;
/// candidates below their required overlap by it are dropped unmerged.
fn verify(
    scratch: &mut Scratch,
    x: &[u32],
    sets: &TokenSets,
    order: &[u32],
    r: usize,
    out: &mut Vec<(u32, u32, u32)>,
    bound: impl Fn(&Cand, &[u32]) -> usize,
) -> u64 {
    let mut verified = 0;
    for &yr in &scratch.touched {
        let c = std::mem::take(&mut scratch.cands[yr as usize]);
        if c.count == PRUNED {
            continue;
        }
        let y = sets.set(order[yr as usize] as usize);
        if bound(&c, y) < c.need as usize {
            continue;
        }
        verified += 1;
        // Every common token up to the last one found was counted: merge only what follows.
        let rest_x = &x[c.last_i as usize + 1..];
        let rest_y = &y[c.last_j as usize + 1..];
        if let Some(o) = overlap_at_least(rest_x, rest_y, c.count, c.need) {
            out.push((r as u32, yr, o));
        }
    }
    scratch.touched.clear();
    verified
}

/// From this many hashes on, [`dedup_hashes`] sorts them instead of using a table.
pub(crate) const DEDUP_SORTS_FROM: usize = 1 << 14;

/// Removes repeated hashes, making a document's shingle hashes a set for [`join`]. A small
/// document's hashes go through a hash table that fits in the cache and keep the order of their
/// first appearance (faster than sorting them on documents of a few kilobytes); a large one's are
/// sorted by [`sort_dedup`]. Either way the result depends only on the hashes, so identical
/// documents give identical sets.
pub(crate) fn dedup_hashes(v: &mut Vec<u64>) {
    if v.len() >= DEDUP_SORTS_FROM {
        return sort_dedup(v);
    }
    let mask = (v.len() * 2).next_power_of_two() - 1;
    // 0 marks an empty slot; a hash of 0 is tracked apart.
    let mut table = vec![0u64; mask + 1];
    let mut zero = false;
    v.retain(|&h| {
        if h == 0 {
            return !std::mem::replace(&mut zero, true);
        }
        // The hashes are random: their low bits index the table directly.
        let mut slot = h as usize & mask;
        loop {
            match table[slot] {
                0 => {
                    table[slot] = h;
                    return true;
                }
                t if t == h => return false,
                _ => slot = (slot + 1) & mask,
            }
        }
    });
}

/// Sorts `v` and removes repeats. A large document's hashes are first split on their top byte
/// into `buf` (one counting pass; the hashes are uniform, so the 256 parts are even), and each
/// part is sorted while it fits in the cache. Why: one `sort_unstable` over the whole works
/// out of cache, and an LSD radix sort's eight passes over 64-bit keys cost more still.
fn sort_dedup(v: &mut Vec<u64>) {
    if v.len() < 1 << 14 {
        v.sort_unstable();
    } else {
        // A fresh buffer each time: keeping the largest one per thread would hold memory for
        // nothing once the large documents are done.
        let mut buf = Vec::new();
        let mut start = [0usize; 257];
        for &h in v.iter() {
            start[(h >> 56) as usize + 1] += 1;
        }
        for b in 1..257 {
            start[b] += start[b - 1];
        }
        buf.resize(v.len(), 0);
        let mut at = start;
        for &h in v.iter() {
            let b = (h >> 56) as usize;
            buf[at[b]] = h;
            at[b] += 1;
        }
        for b in 0..256 {
            buf[start[b]..start[b + 1]].sort_unstable();
        }
        *v = buf;
    }
    v.dedup();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::minhash::fmix64;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    const THRESHOLDS: [f64; 6] = [0.3, 0.5, 0.8, 0.95, 1.0, 0.0];

    fn run(sets: &[Vec<u64>], t: f64, m: Measure) -> Vec<Match> {
        let opts = JoinOptions {
            threshold: Threshold::from_f64(t).unwrap(),
            measure: m,
            max_memory: None,
        };
        join(sets.to_vec(), &opts).unwrap().matches
    }

    fn hashed(tokens: impl IntoIterator<Item = u64>) -> Vec<u64> {
        let mut v: Vec<u64> = tokens.into_iter().map(fmix64).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Families of sets built around a base with a few shingles removed and added, so that many
    /// pairs fall on or next to the usual thresholds; with identical copies, subsets, supersets,
    /// one-shingle and empty sets, and a pool of common shingles that most sets share.
    fn near_threshold_corpus(seed: u64, families: usize) -> Vec<Vec<u64>> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut below = move |n: u64| rng.next_u64() % n;
        let mut fresh = 1_000u64;
        let mut sets = Vec::new();
        for _ in 0..families {
            let size = 1 + below(40);
            let mut base: Vec<u64> = (0..size)
                .map(|_| {
                    if below(4) == 0 {
                        below(30)
                    } else {
                        fresh += 1;
                        fresh
                    }
                })
                .collect();
            base.sort_unstable();
            base.dedup();
            sets.push(hashed(base.iter().copied()));
            for _ in 0..1 + below(5) {
                let mut v = base.clone();
                match below(6) {
                    0 => {}
                    1 => v.truncate(1 + below(v.len() as u64) as usize),
                    2 => v.extend((0..1 + below(8)).map(|_| {
                        fresh += 1;
                        fresh
                    })),
                    _ => {
                        for _ in 0..below(1 + v.len() as u64 / 4) {
                            v.remove(below(v.len() as u64) as usize);
                            if v.is_empty() {
                                break;
                            }
                        }
                        for _ in 0..below(1 + base.len() as u64 / 4) {
                            fresh += 1;
                            v.push(fresh);
                        }
                    }
                }
                sets.push(hashed(v));
            }
        }
        // Empty sets, one-shingle sets (two of them equal), and pairs exactly at each threshold:
        // 3 of 10, 1 of 2, 4 of 5, 19 of 20 in the union.
        sets.extend([vec![], vec![], hashed([7]), hashed([7]), hashed([8])]);
        for (common, extra) in [(3, 7), (1, 1), (4, 1), (19, 1)] {
            let c: Vec<u64> = (0..common)
                .map(|_| {
                    fresh += 1;
                    fresh
                })
                .collect();
            let e: Vec<u64> = (0..extra)
                .map(|_| {
                    fresh += 1;
                    fresh
                })
                .collect();
            sets.push(hashed(c.iter().copied()));
            sets.push(hashed(c.iter().chain(&e).copied()));
            // Containment common / (common + extra) of a small set in a large one.
            let big: Vec<u64> = (0..50)
                .map(|_| {
                    fresh += 1;
                    fresh
                })
                .collect();
            sets.push(hashed(c.iter().chain(&big).copied()));
        }
        sets
    }

    #[test]
    fn join_equals_brute_force_on_near_threshold_corpora() {
        for seed in 0..3 {
            let sets = near_threshold_corpus(seed, 60);
            for t in THRESHOLDS {
                let th = Threshold::from_f64(t).unwrap();
                for m in [Measure::Jaccard, Measure::Containment] {
                    let expect = brute_force(&sets, th, m);
                    let got = run(&sets, t, m);
                    assert_eq!(got, expect, "seed {seed}, t {t}, {m:?}");
                    if t > 0.0 && t < 1.0 {
                        // Ties exist, so the exact comparison is really tested.
                        let ties = expect
                            .iter()
                            .filter(|p| {
                                !th.passes(
                                    m,
                                    p.a_size as u64,
                                    p.b_size as u64,
                                    p.overlap as u64 - 1,
                                )
                            })
                            .filter(|p| {
                                let (n, d) = (th.num(), th.den());
                                let o = p.overlap as u128;
                                let whole = match m {
                                    Measure::Jaccard => (p.a_size + p.b_size - p.overlap) as u128,
                                    Measure::Containment => p.a_size.min(p.b_size) as u128,
                                };
                                o * d == n * whole
                            })
                            .count();
                        assert!(ties > 0, "no pair exactly at {t} ({m:?})");
                    }
                }
            }
        }
    }

    #[test]
    fn empty_one_shingle_and_identical_sets() {
        let sets = vec![
            vec![],
            hashed([1]),
            hashed([1]),
            vec![],
            hashed([1, 2, 3]),
            hashed([1, 2, 3]),
            hashed([2]),
        ];
        let got = run(&sets, 1.0, Measure::Jaccard);
        let pairs: Vec<(u32, u32)> = got.iter().map(|m| (m.a, m.b)).collect();
        assert_eq!(pairs, [(1, 2), (4, 5)]);
        assert!(got.iter().all(|m| m.jaccard() == 1.0));
        // {1} is a third of {1,2,3}; {2} too.
        let got = run(&sets, 0.3, Measure::Jaccard);
        assert_eq!(got.len(), 2 + 4 + 2);
        // Contained: {1} and {2} in {1,2,3}, with containment 1 from the small side.
        let got = run(&sets, 1.0, Measure::Containment);
        let m = got.iter().find(|m| (m.a, m.b) == (1, 4)).unwrap();
        assert_eq!((m.a_in_b(), m.b_in_a()), (1.0, 1.0 / 3.0));
        assert_eq!(got.len(), 2 + 4 + 2);
    }

    #[test]
    fn threshold_zero_pairs_every_non_empty_set() {
        let sets = vec![hashed([1]), vec![], hashed([2]), hashed([3, 4])];
        for m in [Measure::Jaccard, Measure::Containment] {
            let got = run(&sets, 0.0, m);
            let pairs: Vec<(u32, u32, u32)> = got.iter().map(|m| (m.a, m.b, m.overlap)).collect();
            assert_eq!(pairs, [(0, 2, 0), (0, 3, 0), (2, 3, 0)]);
        }
    }

    #[test]
    fn a_small_document_inside_a_large_one_is_found_by_containment() {
        let small = hashed(0..10);
        let large = hashed(0..1000);
        let sets = vec![large, small];
        assert!(run(&sets, 0.5, Measure::Jaccard).is_empty());
        let got = run(&sets, 0.9, Measure::Containment);
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].a_in_b(), got[0].b_in_a()), (0.01, 1.0));
        assert_eq!(got[0].jaccard(), 0.01);
    }

    #[test]
    fn tokens_are_numbered_rarest_first() {
        // 5 is in every set, 1 in one: sorted by frequency, 1's token comes first.
        let sets = vec![hashed([1, 5]), hashed([2, 5]), hashed([2, 5, 3])];
        let t = TokenSets::from_hash_sets(sets);
        assert_eq!(t.distinct(), 4);
        assert_eq!(t.set(0).len(), 2);
        // The most frequent token (5) is the last in every set and has the largest number.
        let last = t.set(0)[1];
        assert!((0..3).all(|i| *t.set(i).last().unwrap() == last));
        assert_eq!(last, 3);
        // 2 is in two sets: after 1 and 3, before 5.
        assert_eq!(t.set(1), [2, 3]);
    }

    #[test]
    fn many_buckets_and_chunks_give_the_same_tokens() {
        // Enough shingles for several buckets and chunks of the scatter.
        let sets: Vec<Vec<u64>> = (0..300u64)
            .map(|d| hashed((0..400).map(|k| (d * 131 + k * 7) % 20_000)))
            .collect();
        let t = TokenSets::from_hash_sets(sets.clone());
        assert_eq!(t.len(), 300);
        for (i, s) in sets.iter().enumerate() {
            assert_eq!(t.set(i).len(), s.len());
            assert!(t.set(i).windows(2).all(|w| w[0] < w[1]));
        }
        // Token sets have the same overlaps as the hash sets.
        for (a, b) in [(0, 1), (5, 200), (17, 18)] {
            let x: Vec<u64> = t.set(a).iter().map(|&w| w as u64).collect();
            let y: Vec<u64> = t.set(b).iter().map(|&w| w as u64).collect();
            assert_eq!(
                crate::sim::intersection_size(&x, &y),
                crate::sim::intersection_size(&sets[a], &sets[b])
            );
        }
        for t in [0.3, 0.8] {
            let th = Threshold::from_f64(t).unwrap();
            assert_eq!(
                run(&sets, t, Measure::Jaccard),
                brute_force(&sets, th, Measure::Jaccard)
            );
        }
    }

    #[test]
    fn a_memory_limit_refuses_the_join_before_it_starts() {
        let sets = vec![hashed(0..100), hashed(0..90)];
        let opts = JoinOptions {
            threshold: Threshold::from_f64(0.8).unwrap(),
            measure: Measure::Jaccard,
            max_memory: Some(1000),
        };
        let err = join(sets.clone(), &opts).unwrap_err();
        assert!(
            matches!(err, Error::TooLargeForExact { limit: 1000, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("MinHash"));
        let opts = JoinOptions {
            max_memory: Some(1 << 30),
            ..opts
        };
        assert_eq!(join(sets, &opts).unwrap().matches.len(), 1);
    }

    fn at(t: f64, max_memory: Option<u64>) -> JoinOptions {
        JoinOptions {
            threshold: Threshold::from_f64(t).unwrap(),
            measure: Measure::Jaccard,
            max_memory,
        }
    }

    /// `n` sets of `size` hashes, no two sharing one.
    fn disjoint(n: u64, size: u64) -> Vec<Vec<u64>> {
        (0..n)
            .map(|d| hashed((0..size).map(|k| d * 1_000_000 + k)))
            .collect()
    }

    #[test]
    fn heap_bytes_follow_glibc_chunks() {
        let sizes = [
            (0, 0),
            (1, 32),
            (24, 32),
            (25, 48),
            (40, 48),
            (41, 64),
            (1000, 1008),
        ];
        for (asked, taken) in sizes {
            assert_eq!(heap_bytes(asked), taken, "{asked}");
        }
        assert_eq!(set_bytes(&Vec::with_capacity(100)), 816);
    }

    #[test]
    fn the_estimate_counts_the_sets_and_the_numbering() {
        // 300 sets of 400 shingles: the sets (8 bytes a shingle, in the heap) stay resident
        // while every shingle is copied with its position (8 + 4): 20 bytes a shingle, and
        // little else (in tests the buckets are tiny, so each worker's copy of one is too).
        let sets = disjoint(300, 400);
        let t = 300 * 400;
        let (out, shape) = join_beside(sets, &at(0.8, None), 0, 0).unwrap();
        assert!(out.matches.is_empty());
        let estimate = out.stats.memory_estimate;
        assert_eq!(estimate, shape.peak());
        assert!(estimate >= 20 * t, "{estimate}");
        assert!(estimate <= 20 * t + 300 * 200, "{estimate} {shape:?}");
        assert_eq!(shape.tokens, t);
        assert_eq!(shape.heap, 300 * heap_bytes(8 * 400));
    }

    #[test]
    fn a_join_over_the_limit_is_refused_with_its_estimate() {
        let sets = disjoint(50, 200);
        let (out, _) = join_beside(sets.clone(), &at(0.8, None), 0, 0).unwrap();
        // No pair passes, so the estimate checked before the join is the one reported after.
        let estimate = out.stats.memory_estimate;
        let err = join_beside(sets.clone(), &at(0.8, Some(estimate - 1)), 0, 0).unwrap_err();
        assert!(
            matches!(err, Error::TooLargeForExact { needed, limit }
                if needed == estimate && limit == estimate - 1),
            "{err}"
        );
        assert!(join_beside(sets.clone(), &at(0.8, Some(estimate)), 0, 0).is_ok());
        // What the caller holds beside the sets counts against the same limit.
        let err = join_beside(sets.clone(), &at(0.8, Some(estimate)), 1000, 0).unwrap_err();
        assert!(
            matches!(err, Error::TooLargeForExact { needed, .. } if needed == estimate + 1000),
            "{err}"
        );
        // A limit the sets alone pass is refused before they are even grouped.
        let err = join_beside(sets, &at(0.8, Some(1000)), 0, 0).unwrap_err();
        assert!(
            matches!(err, Error::TooLargeForExact { needed, .. } if needed < estimate / 2),
            "{err}"
        );
    }

    #[test]
    fn at_threshold_zero_every_pair_is_counted_in_advance() {
        // 200 sets, two of them identical: 19,900 pairs, 19,701 of them of distinct sets.
        let mut sets = disjoint(199, 3);
        sets.push(sets[0].clone());
        let (above, _) = join_beside(sets.clone(), &at(0.8, None), 0, 0).unwrap();
        assert_eq!(above.matches.len(), 1);
        let (every, shape) = join_beside(sets.clone(), &at(0.0, None), 0, 0).unwrap();
        assert_eq!(every.matches.len(), 19_900);
        assert_eq!((shape.pairs, shape.distinct_pairs), (19_900, 19_701));
        // The matches (20 bytes) and the pairs of distinct sets (12) at least.
        let estimate = every.stats.memory_estimate;
        assert!(estimate >= 20 * 19_900 + 12 * 19_701, "{estimate}");
        assert!(estimate > above.stats.memory_estimate);
        // Known before the join, so a limit below them refuses it.
        let limit = Some(every.stats.memory_estimate - 1);
        assert!(join_beside(sets, &at(0.0, limit), 0, 0).is_err());
    }

    #[test]
    fn identical_sets_are_numbered_once() {
        // A hundred copies of one set: all of them in memory, one of them numbered.
        let one = disjoint(1, 1000).pop().unwrap();
        let copies = vec![one; 100];
        let (out, shape) = join_beside(copies, &at(0.8, None), 0, 0).unwrap();
        assert_eq!(out.matches.len(), 100 * 99 / 2);
        assert_eq!((shape.distinct_sets, shape.tokens), (1, 1000));
        let estimate = out.stats.memory_estimate;
        assert!(estimate >= shape.heap + 12 * 1000, "{estimate}");
        assert!(estimate < shape.heap + 12 * 100 * 1000, "{estimate}");
    }

    /// The estimate of `TooLargeForExact`, or a panic.
    fn refused(r: Result<(JoinOutput, JoinShape)>) -> (u64, u64) {
        match r {
            Err(Error::TooLargeForExact { needed, limit }) => (needed, limit),
            Err(e) => panic!("{e}"),
            Ok((out, _)) => panic!("not refused: {:?}", out.stats),
        }
    }

    #[test]
    fn the_pairs_of_identical_sets_are_counted_before_the_join() {
        // 300 copies of one set: 44,850 pairs, known as soon as the copies are grouped, each a
        // match (20 bytes) and then the caller's record (64 here).
        let one = disjoint(1, 50).pop().unwrap();
        let copies = vec![one; 300];
        let pairs = 300 * 299 / 2;
        let (out, shape) = join_beside(copies.clone(), &at(0.8, None), 0, 64).unwrap();
        assert_eq!(out.matches.len() as u64, pairs);
        assert_eq!((shape.distinct_pairs, shape.pairs), (0, pairs));
        let estimate = out.stats.memory_estimate;
        assert!(estimate >= 84 * pairs, "{estimate}");
        assert_eq!(estimate, shape.peak());
        // Every pair is known before the join, so a limit just below the estimate is refused
        // with all of it.
        let (needed, limit) = refused(join_beside(
            copies.clone(),
            &at(0.8, Some(estimate - 1)),
            0,
            64,
        ));
        assert_eq!((needed, limit), (estimate, estimate - 1));
        // The records count: without them the same limit is plenty.
        let (out, _) = join_beside(copies, &at(0.8, Some(estimate - 1)), 0, 0).unwrap();
        assert!(out.stats.memory_estimate < 25 * pairs + shape.heap);
    }

    #[test]
    fn the_pairs_the_join_finds_are_charged_as_they_are_found() {
        // 200 distinct sets, each 100 common shingles and one of its own: every pair has a
        // Jaccard (and a containment) of 100/101 or more, 19,900 pairs that the sets' sizes do
        // not announce.
        let sets: Vec<Vec<u64>> = (0..200u64)
            .map(|d| hashed((0..100).chain([1000 + d])))
            .collect();
        let pairs = 19_900;
        for measure in [Measure::Jaccard, Measure::Containment] {
            let opts = |max_memory| JoinOptions {
                measure,
                ..at(0.8, max_memory)
            };
            let (out, shape) = join_beside(sets.clone(), &opts(None), 0, 64).unwrap();
            assert_eq!(out.matches.len() as u64, pairs);
            assert_eq!((shape.distinct_pairs, shape.pairs), (pairs, pairs));
            let full = out.stats.memory_estimate;
            assert!(full >= 84 * pairs, "{full}");
            // What the check before the join saw: no pair.
            let before = JoinShape {
                distinct_pairs: 0,
                pairs: 0,
                ..shape
            }
            .peak();
            assert!(before < full / 2, "{before} {full}");
            // Halfway: the probes stop once their pairs pass the limit, and the refusal names
            // what was counted by then, over the limit and short of the whole.
            let half = (before + full) / 2;
            let (needed, limit) = refused(join_beside(sets.clone(), &opts(Some(half)), 0, 64));
            assert_eq!(limit, half);
            assert!(
                needed > half && needed < full,
                "{needed} {half} {full} {measure:?}"
            );
            // Just below the whole: refused, by the last probes or by the check after them,
            // never with more than the whole.
            let (needed, _) = refused(join_beside(sets.clone(), &opts(Some(full - 1)), 0, 64));
            assert_eq!(needed, full);
            let (out, _) = join_beside(sets.clone(), &opts(Some(full)), 0, 64).unwrap();
            assert_eq!(out.matches.len() as u64, pairs);
        }
    }

    #[test]
    fn a_pair_of_groups_is_charged_for_every_pair_of_their_members() {
        // 30 copies of one set and 40 of another close to it: 435 + 780 pairs within the groups,
        // and 1,200 across them from the one pair of distinct sets the join finds.
        let (a, b) = (hashed(0..100), hashed(0..101));
        let sets = [vec![a; 30], vec![b; 40]].concat();
        let (out, shape) = join_beside(sets.clone(), &at(0.8, None), 0, 64).unwrap();
        assert_eq!(out.matches.len(), 2415);
        assert_eq!((shape.distinct_pairs, shape.pairs), (1, 2415));
        let full = out.stats.memory_estimate;
        let copies = JoinShape {
            distinct_pairs: 0,
            pairs: 435 + 780,
            ..shape
        }
        .peak();
        assert!(full > copies && full >= 84 * 2415, "{copies} {full}");
        // The groups' own pairs pass before the join, the pair it finds does not: refused with
        // all 2,415.
        let (needed, _) = refused(join_beside(sets.clone(), &at(0.8, Some(full - 1)), 0, 64));
        assert_eq!(needed, full);
        // Below the groups' own pairs: refused before the join, with them.
        let (needed, _) = refused(join_beside(sets, &at(0.8, Some(copies - 1)), 0, 64));
        assert_eq!(needed, copies);
    }

    #[test]
    fn counts_of_pairs_too_large_to_hold_saturate() {
        // Every pair of three billion copies: more bytes than a u64 counts, refused whatever
        // the limit rather than wrapped around to a small number.
        let shape = JoinShape {
            pairs: u64::MAX / 2,
            distinct_pairs: u64::MAX / 2,
            record: 64,
            ..JoinShape::default()
        };
        assert_eq!(shape.peak(), u64::MAX);
        assert_eq!(shape.peak_with(u64::MAX, u64::MAX), u64::MAX);
    }

    #[test]
    fn sets_mapped_alone_are_handed_back_while_they_are_copied() {
        // Four sets of 40 million shingles, each mapped alone: freed as they are copied, they
        // are not resident beside the copy, as sets in the heap would be.
        let t = 160_000_000;
        let mapped = JoinShape {
            inputs: 4,
            sets: 4,
            mapped: 8 * t,
            distinct_mapped: 8 * t,
            distinct_sets: 4,
            tokens: t,
            threads: 2,
            ..JoinShape::default()
        };
        let heap = JoinShape {
            heap: 8 * t,
            mapped: 0,
            distinct_mapped: 0,
            ..mapped
        };
        assert!(
            mapped.peak() >= 12 * t && mapped.peak() < 13 * t,
            "{}",
            mapped.peak()
        );
        assert!(
            heap.peak() >= 20 * t && heap.peak() < 21 * t,
            "{}",
            heap.peak()
        );
        // More threads, more buffers (when the heap the sets left does not hold them).
        let more = JoinShape {
            threads: 8,
            ..mapped
        };
        assert!(more.peak() > mapped.peak());
    }

    #[test]
    fn sort_dedup_splits_large_inputs_and_agrees_with_sort() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for len in [0, 10, 1 << 14, 50_000] {
            let mut v: Vec<u64> = (0..len).map(|_| rng.next_u64() % 40_000).collect();
            v.extend((0..len / 3).map(|_| rng.next_u64()));
            let mut expect = v.clone();
            expect.sort_unstable();
            expect.dedup();
            sort_dedup(&mut v);
            assert_eq!(v, expect);
        }
    }

    #[test]
    fn dedup_keeps_first_appearances_of_small_sets() {
        let mut v = vec![5, 0, 9, 5, 0, 7, 9, u64::MAX, 7];
        dedup_hashes(&mut v);
        assert_eq!(v, [5, 0, 9, 7, u64::MAX]);
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let mut big: Vec<u64> = (0..40_000).map(|_| rng.next_u64() % 30_000).collect();
        let mut expect = big.clone();
        expect.sort_unstable();
        expect.dedup();
        dedup_hashes(&mut big);
        assert_eq!(big, expect);
    }

    #[test]
    fn unsorted_sets_join_like_sorted_ones() {
        let sorted = near_threshold_corpus(11, 30);
        let mut shuffled = sorted.clone();
        for s in &mut shuffled {
            s.reverse();
        }
        for m in [Measure::Jaccard, Measure::Containment] {
            assert_eq!(run(&shuffled, 0.5, m), run(&sorted, 0.5, m));
            assert_eq!(run(&shuffled, 0.0, m), run(&sorted, 0.0, m));
        }
    }

    #[test]
    fn overlap_merges_and_gallops_with_early_exit() {
        let small = [3u32, 50, 51, 900];
        let large: Vec<u32> = (0..1000).filter(|v| v % 3 == 0).collect();
        // 3 and 51 and 900 are multiples of 3; 50 is not.
        assert_eq!(overlap_at_least(&small, &large, 0, 1), Some(3));
        assert_eq!(overlap_at_least(&large, &small, 2, 5), Some(5));
        assert_eq!(overlap_at_least(&small, &large, 0, 4), None);
        let a = [1u32, 2, 3, 4, 5];
        let b = [2u32, 4, 6, 8];
        assert_eq!(overlap_at_least(&a, &b, 0, 2), Some(2));
        assert_eq!(overlap_at_least(&a, &b, 0, 3), None);
        assert_eq!(overlap_at_least(&[], &b, 1, 1), Some(1));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn join_equals_brute_force_on_random_families(
            family in prop::collection::vec(prop::collection::btree_set(0u64..24, 0..12), 0..24),
            t in prop::sample::select(vec![0.0, 0.1, 0.3, 0.5, 2.0 / 3.0, 0.8, 0.95, 1.0]),
            containment in any::<bool>(),
        ) {
            let sets: Vec<Vec<u64>> = family.into_iter().map(hashed).collect();
            let m = if containment { Measure::Containment } else { Measure::Jaccard };
            let th = Threshold::from_f64(t).unwrap();
            prop_assert_eq!(run(&sets, t, m), brute_force(&sets, th, m));
        }
    }

    // The thresholds are written with as many digits as a user may type, more than an f64 holds.
    #[allow(clippy::excessive_precision)]
    #[test]
    fn thresholds_are_read_as_the_decimals_typed() {
        let t = |x: f64| {
            let t = Threshold::from_f64(x).unwrap();
            (t.num(), t.den())
        };
        assert_eq!(t(0.8), (4, 5));
        assert_eq!(t(0.95), (19, 20));
        assert_eq!(t(0.3), (3, 10));
        assert_eq!(t(1.0), (1, 1));
        assert_eq!(t(0.0), (0, 1));
        assert_eq!(t(-0.0), (0, 1), "-0 is 0, not an error or a panic");
        assert_eq!(t(0.125), (1, 8));
        assert_eq!(t(1e-7), (1, 10_000_000));
        // 1/3 typed in full keeps all its digits.
        assert_eq!(t(1.0 / 3.0), (3333333333333333, 10u128.pow(16)));
        // A decimal longer than an f64 holds is read as the shortest decimal of its f64: just
        // above 5/7 here, though the digits typed are just below it.
        assert_eq!(t(0.714285714285714285), (7142857142857143, 10u128.pow(16)));
        // Below 1e-11 every threshold acts like 1e-11 (any common shingle passes).
        assert_eq!(t(1e-30), (1, 10u128.pow(11)));
        assert!(Threshold::from_f64(1.5).is_err());
        assert!(Threshold::from_f64(f64::NAN).is_err());
    }

    #[test]
    fn a_pair_exactly_at_the_threshold_passes() {
        let t = Threshold::from_f64(0.8).unwrap();
        // 8 common of 10 in the union: J = 0.8 exactly (0.8_f64 is a little more than 4/5).
        assert!(t.passes(Measure::Jaccard, 9, 9, 8));
        assert_eq!(t.jaccard_overlap(9, 9), 8);
        assert!(!t.passes(Measure::Jaccard, 9, 10, 8));
        // Containment 4/5 exactly.
        assert!(t.passes(Measure::Containment, 5, 100, 4));
        assert!(!t.passes(Measure::Containment, 5, 100, 3));
        assert_eq!(t.containment_overlap(100, 5), 4);
    }

    // The thresholds are written with as many digits as a user may type, more than an f64 holds.
    #[allow(clippy::excessive_precision)]
    #[test]
    fn a_pair_just_below_a_threshold_typed_with_many_digits_fails() {
        // 5 of 7: J = 5/7 = 0.714285714285714285714...
        let just_above = Threshold::from_f64(0.714285714285714285).unwrap();
        assert!(!just_above.passes(Measure::Jaccard, 5, 7, 5));
        assert!(!just_above.passes_rounded(5.0 / 7.0));
        let just_below = Threshold::from_f64(0.7142857142857142).unwrap();
        assert!(just_below.passes(Measure::Jaccard, 5, 7, 5));
        assert!(just_below.passes_rounded(5.0 / 7.0));
        // 2/3 as an f64 is 0.66666666666666663, whose shortest decimal is below 2/3; the next
        // f64 up reads as 0.6666666666666667, above it.
        let below = Threshold::from_f64(2.0 / 3.0).unwrap();
        assert!(below.passes(Measure::Jaccard, 2, 3, 2) && below.passes_rounded(2.0 / 3.0));
        let above = Threshold::from_f64(0.6666666666666667).unwrap();
        assert!(!above.passes(Measure::Jaccard, 2, 3, 2) && !above.passes_rounded(2.0 / 3.0));
        // Exactly at the threshold, the f64 of the quotient passes too.
        let t = Threshold::from_f64(0.8).unwrap();
        assert!(t.passes_rounded(8.0 / 10.0) && t.passes_rounded(4.0 / 5.0));
        assert!(!t.passes_rounded((0.8f64).next_down()));
    }

    #[test]
    fn simplest_fractions_between_two_numbers() {
        assert_eq!(simplest_between((33, 100), (34, 100)), (1, 3));
        assert_eq!(simplest_between((6, 10), (7, 10)), (2, 3));
        assert_eq!(simplest_between((0, 1), (3, 10)), (1, 4));
        assert_eq!(simplest_between((1, 2), (1, 1)), (2, 3));
        assert_eq!(simplest_between((3, 2), (5, 2)), (2, 1));
        assert_eq!(simplest_between((1, 1), (3, 2)), (4, 3));
        let x = (1u128 << 100) + 12345;
        assert_eq!(
            mul_wide(x, x),
            ((1 << 72), 2 * 12345 * (1 << 100) + 12345 * 12345)
        );
    }

    // The thresholds are written with as many digits as a user may type, more than an f64 holds.
    #[allow(clippy::excessive_precision)]
    #[test]
    fn rounded_similarities_pass_as_their_fractions_do() {
        // Thresholds at, just above and just below the f64 of every small fraction, and a few
        // typed with more digits than an f64 holds.
        let mut ts = vec![1e-12, 1e-7, 0.714285714285714285, 0.90909090909090906];
        for u in 1..=24u64 {
            for o in 0..=u {
                let x = o as f64 / u as f64;
                ts.extend([x, x.next_up(), x.next_down()]);
            }
        }
        ts.retain(|t| (0.0..=1.0).contains(t));
        for &t in &ts {
            let th = Threshold::from_f64(t).unwrap();
            for u in 1..=80u64 {
                for o in 0..=u {
                    let x = o as f64 / u as f64;
                    assert_eq!(
                        th.passes_rounded(x),
                        th.passes(Measure::Jaccard, o, u, o),
                        "{t} {o}/{u}"
                    );
                }
            }
        }
        // Large unions, with the threshold's f64 equal to the similarity's or next to it, where
        // only the fraction can decide.
        let mut rng = ChaCha8Rng::seed_from_u64(17);
        for _ in 0..20_000 {
            let u = rng.random_range(1..1u64 << 26);
            let o = rng.random_range(0..=u);
            let x = o as f64 / u as f64;
            for t in [x, x.next_up(), x.next_down()] {
                if let Ok(th) = Threshold::from_f64(t) {
                    assert_eq!(
                        th.passes_rounded(x),
                        th.passes(Measure::Jaccard, o, u, o),
                        "{t} {o}/{u}"
                    );
                }
            }
        }
    }

    #[test]
    fn required_overlap_agrees_with_the_cross_multiplied_test() {
        for x in [0.0, 0.1, 1.0 / 3.0, 0.5, 0.8, 0.95, 0.99, 1.0] {
            let t = Threshold::from_f64(x).unwrap();
            for m in [Measure::Jaccard, Measure::Containment] {
                for a in 1..40u64 {
                    for b in 1..40u64 {
                        let need = t.required_overlap(m, a, b);
                        for o in 0..=a.min(b) {
                            assert_eq!(t.passes(m, a, b, o), o >= need, "{x} {m:?} {a} {b} {o}");
                        }
                    }
                }
            }
        }
    }
}
