//! Similarity of shingle sets and bags, computed exactly: Jaccard, containment, the bag measures
//! of MMDS 3.1.3, and the merges behind them (with early exits for a threshold).
//!
//! The measures work on sorted, distinct shingle hashes (see
//! [`Shingler::hash_set`](crate::text::shingle::Shingler::hash_set)).

pub mod overlap;
pub use overlap::{Filler, Overlap, OverlapTable};
pub(crate) use overlap::{MAX_SETS, members_of};

use serde::{Deserialize, Serialize};

/// Standard errors below the threshold under which exact verification stops a merge on the
/// shingles merged so far ([`jaccard_screened`]): stricter than the signature prefilter, whose
/// sample is far smaller.
pub const EXACT_SCREEN_Z: f64 = 5.0;

/// What the threshold measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "pipeline", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Measure {
    /// Jaccard similarity of the shingle sets (default).
    Jaccard,
    /// Containment: a pair is reported when `max(|A∩B|/|A|, |A∩B|/|B|) >= threshold`, so a
    /// document found inside a larger one is reported even though their Jaccard is low.
    Containment,
}

/// Size of the intersection of two sorted, distinct slices.
pub(crate) fn intersection_size(a: &[u64], b: &[u64]) -> usize {
    merge(a, b, usize::MAX).2
}

/// Merges two sorted, distinct slices until `a`'s position reaches `a_end` (or either ends);
/// returns the positions reached in `a` and `b` and the matches counted on the way. Every match
/// with a position before the ones returned has been counted, and none after them, so a merge
/// can stop and resume: what [`jaccard_at_least`] does to check its bound.
#[inline]
fn merge(a: &[u64], b: &[u64], a_end: usize) -> (usize, usize, usize) {
    let a_end = a_end.min(a.len());
    let (mut i, mut j, mut n) = (0, 0, 0);
    #[cfg(target_arch = "x86_64")]
    if simd::available() {
        // SAFETY: the CPU has AVX2 (checked).
        (i, j, n) = unsafe { simd::merge_blocks(&a[..a_end], b) };
    }
    // A branch-free merge: which side advances depends on data the branch predictor cannot
    // guess, so both indices move by comparison results instead of by jumps.
    while i < a_end && j < b.len() {
        let (x, y) = (a[i], b[j]);
        n += (x == y) as usize;
        i += (x <= y) as usize;
        j += (y <= x) as usize;
    }
    (i, j, n)
}

/// The merge four elements at a time with AVX2.
///
/// Why: the scalar merge is one long dependency chain (load, compare, advance, load again) per
/// step, and exact verification is mostly merging. Here a block of four from each side is
/// compared all against all (three rotations), and the block with the smaller last
/// element moves on (both when equal). A match lies in blocks that meet: when a block moves on,
/// every element of the other side equal to one of its own is in the other's current block.
#[cfg(target_arch = "x86_64")]
mod simd {
    use std::arch::x86_64::*;
    use std::hint::select_unpredictable;
    use std::sync::OnceLock;

    pub(super) fn available() -> bool {
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| is_x86_feature_detected!("avx2"))
    }

    /// How many of the four elements of `va` are among the four of `vb` (all against all:
    /// three rotations of `vb`).
    #[inline]
    #[target_feature(enable = "avx2,popcnt")]
    fn block_matches(va: __m256i, vb: __m256i) -> usize {
        let r1 = _mm256_permute4x64_epi64::<0b00_11_10_01>(vb);
        let r2 = _mm256_permute4x64_epi64::<0b01_00_11_10>(vb);
        let r3 = _mm256_permute4x64_epi64::<0b10_01_00_11>(vb);
        let eq = _mm256_or_si256(
            _mm256_or_si256(_mm256_cmpeq_epi64(va, vb), _mm256_cmpeq_epi64(va, r1)),
            _mm256_or_si256(_mm256_cmpeq_epi64(va, r2), _mm256_cmpeq_epi64(va, r3)),
        );
        (_mm256_movemask_pd(_mm256_castsi256_pd(eq)) as u32).count_ones() as usize
    }

    /// [`super::sketch_counts`] 32 bins at a time. Why by hand: the compiler vectorizes the
    /// plain loop only for the baseline x86-64 (16 bytes at a time), and not in every build.
    ///
    /// # Safety
    /// The CPU must support AVX2; `a` and `b` have the same length, a multiple of 32.
    #[target_feature(enable = "avx2,popcnt")]
    pub(super) unsafe fn sketch_counts(a: &[u8], b: &[u8]) -> (u32, u32) {
        let zero = _mm256_setzero_si256();
        let (mut filled, mut agree) = (0u32, 0u32);
        for k in (0..a.len()).step_by(32) {
            // SAFETY: `k + 32 <= a.len() == b.len()`; unaligned loads are allowed.
            let (x, y) = unsafe {
                (
                    _mm256_loadu_si256(a.as_ptr().add(k).cast()),
                    _mm256_loadu_si256(b.as_ptr().add(k).cast()),
                )
            };
            let empty = _mm256_cmpeq_epi8(_mm256_or_si256(x, y), zero);
            let same = _mm256_andnot_si256(_mm256_cmpeq_epi8(x, zero), _mm256_cmpeq_epi8(x, y));
            filled += 32 - (_mm256_movemask_epi8(empty) as u32).count_ones();
            agree += (_mm256_movemask_epi8(same) as u32).count_ones();
        }
        (filled, agree)
    }

    /// The positions and blocks' last elements after a step: the block with the smaller last
    /// element moves on (both when equal), and its next block's last element becomes current,
    /// without a branch.
    #[inline(always)]
    fn advance(
        (i, j): (usize, usize),
        (amax, bmax): (u64, u64),
        (a_next, b_next): (u64, u64),
    ) -> (usize, usize, u64, u64) {
        let (a_moves, b_moves) = (amax <= bmax, bmax <= amax);
        (
            i + 4 * a_moves as usize,
            j + 4 * b_moves as usize,
            select_unpredictable(a_moves, a_next, amax),
            select_unpredictable(b_moves, b_next, bmax),
        )
    }

    /// Merges whole blocks of four of `a` and `b` (sorted, distinct) while both have one;
    /// returns the positions reached and the matches counted, as [`super::merge`] does.
    ///
    /// The last elements of the blocks after the current ones are loaded ahead, and the one
    /// that becomes current is picked without a branch (which side moves on is a coin toss the
    /// predictor loses half the time). So the step-to-step chain is compare and select, not
    /// load, compare and advance. Pairs whose blocks move on unpredictably (Jaccard well below
    /// 1) gain the most; two nearly equal sets, whose blocks move in lockstep, gain nothing.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2,popcnt")]
    pub(super) unsafe fn merge_blocks(a: &[u64], b: &[u64]) -> (usize, usize, usize) {
        let (mut i, mut j, mut n) = (0usize, 0usize, 0usize);
        if a.len() < 4 || b.len() < 4 {
            return (i, j, n);
        }
        let (a_last, b_last) = (a.len() - 1, b.len() - 1);
        let (mut amax, mut bmax) = (a[3], b[3]);
        // While the next blocks are whole, their last elements need no clamping: two steps
        // fewer in the chain from one step to the next. The loop after this one finishes the
        // last blocks.
        while i + 8 <= a.len() && j + 8 <= b.len() {
            // SAFETY: both blocks, and the next ones, lie within their slices.
            let (va, vb, a_next, b_next) = unsafe {
                (
                    _mm256_loadu_si256(a.as_ptr().add(i).cast()),
                    _mm256_loadu_si256(b.as_ptr().add(j).cast()),
                    *a.get_unchecked(i + 7),
                    *b.get_unchecked(j + 7),
                )
            };
            n += block_matches(va, vb);
            (i, j, amax, bmax) = advance((i, j), (amax, bmax), (a_next, b_next));
        }
        while i + 4 <= a.len() && j + 4 <= b.len() {
            // SAFETY: both blocks lie within their slices; unaligned loads are allowed.
            let (va, vb) = unsafe {
                (
                    _mm256_loadu_si256(a.as_ptr().add(i).cast()),
                    _mm256_loadu_si256(b.as_ptr().add(j).cast()),
                )
            };
            // The next blocks' last elements (clamped: past the end the loop stops anyway).
            let (a_next, b_next) = (a[(i + 7).min(a_last)], b[(j + 7).min(b_last)]);
            n += block_matches(va, vb);
            (i, j, amax, bmax) = advance((i, j), (amax, bmax), (a_next, b_next));
        }
        (i, j, n)
    }
}

/// Exact Jaccard similarity of two sorted, distinct slices (0 when both are empty).
pub fn jaccard(a: &[u64], b: &[u64]) -> f64 {
    Overlap::of_sets(a, b).jaccard()
}

/// The exact Jaccard similarity of two sorted, distinct slices when it is at least `t`, `None`
/// when it is below. Faster than [`jaccard`] for pairs that fail: the merge stops as soon as
/// the shingles left cannot lift the similarity to `t`, and sizes too different to reach `t`
/// are rejected without a merge.
pub fn jaccard_at_least(a: &[u64], b: &[u64], t: f64) -> Option<f64> {
    merge_at_least(a, b, t, None).0
}

/// The fewest union elements a merge's sample must hold before [`jaccard_screened`] judges it.
pub(crate) const SCREEN_MIN_SAMPLE: usize = 256;

/// Like [`jaccard_at_least`], and it also stops a merge that is statistically hopeless: when the
/// shingles merged so far put the Jaccard more than `z` standard errors below `t`.
///
/// Why this is sound: the sets are sorted by hash, so the union's elements below any hash value
/// are a uniform random sample of the union, and the share of them in both sets estimates the
/// Jaccard with standard error at most sqrt(t(1-t)/u) for a union sample of u (the same
/// estimator as a MinHash signature's, with thousands of samples in place of 128). A pair is
/// judged only once its sample holds `SCREEN_MIN_SAMPLE` elements. Why it matters: the pairs
/// exact verification rejects lie mostly between 0.6 and 0.8, and the exact bound (the shingles
/// left could all match) stops their merges only after two thirds of their elements; the sample
/// stops most of them within the first thousand or two. A pair that passes is always merged in
/// full, so every Jaccard returned is exact.
///
/// The cost in recall: a merge is judged many times, and where it stops depends on the data,
/// so a pair exactly at the threshold is dropped more often than by one normal test at z = 5
/// (3e-7), but still far less often than by the signature prefilter before it (128 slots at
/// four standard errors).
pub fn jaccard_screened(a: &[u64], b: &[u64], t: f64, z: f64) -> Option<f64> {
    merge_at_least(a, b, t, Some(z)).0
}

/// A set split by a [`core`](Core): which of the core's elements it holds, one bit each
/// (bit `i % 64` of word `i / 64` for `core[i]`), and the rest of its elements, sorted.
#[derive(Debug, Clone, Copy)]
pub struct Split<'a> {
    /// The core's elements held.
    pub bits: &'a [u64],
    /// The other elements, sorted and distinct.
    pub rest: &'a [u64],
}

impl Split<'_> {
    /// The core's elements held.
    pub fn held(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The set's size.
    pub fn len(&self) -> usize {
        self.held() + self.rest.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The elements shared by many sets of a batch, which [`Core::split_into`] takes out of each set
/// as bits.
///
/// Why: in a batch of many documents of one kind (a program's manual pages, one site's pages),
/// boilerplate makes up much of every set, and each merge goes through it again. Held as bits,
/// that part of an overlap is a few `and`s and popcounts, and the sets stored are smaller. In
/// such a batch a few thousand shared hashes can make up most of every set's elements.
#[derive(Debug, Clone, Default)]
pub struct Core {
    /// The core's elements, sorted: element `i` is bit `i`.
    elements: Vec<u64>,
    /// An open-addressing table of the elements (linear probing on the top bits), for
    /// [`Core::split_into`]'s lookups, with each slot's element number plus one (0: empty).
    keys: Vec<u64>,
    numbers: Vec<u32>,
    shift: u32,
}

impl Core {
    /// The elements in at least `min_count` (at least 1) of the sorted, distinct sets whose
    /// elements are all in `sample`, in any order (it is sorted in place).
    pub fn from_sample(sample: &mut [u64], min_count: usize) -> Core {
        sample.sort_unstable();
        let elements: Vec<u64> = sample
            .chunk_by(|x, y| x == y)
            .filter(|run| run.len() >= min_count.max(1))
            .map(|run| run[0])
            .collect();
        // At most a quarter full: nearly every lookup ends at its first slot.
        let log2 = (elements.len() * 4)
            .max(16)
            .next_power_of_two()
            .trailing_zeros();
        let (mut keys, mut numbers) = (vec![0; 1 << log2], vec![0u32; 1 << log2]);
        let mask = (1usize << log2) - 1;
        for (i, &h) in elements.iter().enumerate() {
            let mut s = (h >> (64 - log2)) as usize;
            while numbers[s] != 0 {
                s = (s + 1) & mask;
            }
            keys[s] = h;
            numbers[s] = i as u32 + 1;
        }
        Core {
            elements,
            keys,
            numbers,
            shift: 64 - log2,
        }
    }

    /// The core's elements, sorted.
    pub fn elements(&self) -> &[u64] {
        &self.elements
    }

    /// The 64-bit words of a set's bits.
    pub fn words(&self) -> usize {
        self.elements.len().div_ceil(64)
    }

    /// The number of `h` in the core plus one, or 0 when it is not there.
    #[inline(always)]
    fn number(&self, h: u64) -> usize {
        let mask = self.keys.len() - 1;
        // The first slot settles nearly every lookup (the table is at most a quarter full), so
        // it is judged without a branch; only a slot held by another element goes on.
        let mut s = (h >> self.shift) as usize & mask;
        let (n, k) = (self.numbers[s], self.keys[s]);
        if n == 0 || k == h {
            return n as usize * usize::from(k == h);
        }
        loop {
            s = (s + 1) & mask;
            match self.numbers[s] {
                0 => return 0,
                n if self.keys[s] == h => return n as usize,
                _ => {}
            }
        }
    }

    /// Splits the sorted `sorted` (repeats allowed): sets the bit of each core element it
    /// holds in `bits` ([`words`](Self::words) long, cleared here), writes its other distinct
    /// elements to the front of `out` (which has room for all of `sorted`), in order, and
    /// returns how many they are.
    pub fn split_into(&self, sorted: &[u64], out: &mut [u64], bits: &mut [u64]) -> usize {
        bits.fill(0);
        if self.elements.is_empty() {
            return crate::text::shingle::dedup_into(sorted, out);
        }
        let Some(&first) = sorted.first() else {
            return 0;
        };
        let out = &mut out[..sorted.len()];
        let (mut rest, mut last) = (0, !first);
        for &h in sorted {
            // Written either way, kept only when new and not in the core, and the bit set
            // either way (bit 0 of word 0 with nothing in it when not): no branch on either.
            // `rest` never passes the position of `h`, so the slot is in bounds.
            out[rest.min(sorted.len() - 1)] = h;
            let n = self.number(h);
            let i = n.saturating_sub(1);
            bits[i / 64] |= u64::from(n != 0) << (i % 64);
            rest += usize::from(n == 0 && h != last);
            last = h;
        }
        rest
    }
}

/// [`jaccard_screened`] of two sets split by the same core: the exact Jaccard when it is at least
/// `t`, `None` when it is below (or, rarely, when the screen at `z` judges it hopeless).
pub fn jaccard_screened_split(a: Split, b: Split, t: f64, z: f64) -> Option<f64> {
    assert_eq!(a.bits.len(), b.bits.len(), "sets split by one core");
    let both: usize = a
        .bits
        .iter()
        .zip(b.bits)
        .map(|(x, y)| (x & y).count_ones() as usize)
        .sum();
    let base = Base {
        both,
        a: a.held(),
        b: b.held(),
    };
    merge_from(a.rest, b.rest, base, t, Some(z)).0
}

/// What a merge starts from: the overlap and the sizes of parts of the two sets counted already
/// (the core's, for a [`Split`]).
#[derive(Debug, Clone, Copy, Default)]
struct Base {
    both: usize,
    a: usize,
    b: usize,
}

/// [`jaccard_at_least`], screened when `z` is given, and how many elements of the two sets
/// were merged before it decided (what the tests check the early stops by).
fn merge_at_least(a: &[u64], b: &[u64], t: f64, z: Option<f64>) -> (Option<f64>, usize) {
    merge_from(a, b, Base::default(), t, z)
}

/// [`merge_at_least`] of two sets of which `base` was counted already, and `a` and `b` are the
/// rest.
fn merge_from(a: &[u64], b: &[u64], base: Base, t: f64, z: Option<f64>) -> (Option<f64>, usize) {
    let total = (base.a + base.b + a.len() + b.len()) as f64;
    // The best case: every shingle of the smaller set is in the larger one.
    let max_j = |inter: usize| inter as f64 / (total - inter as f64);
    // The screen judges the share of the rest's union in both, against the share the rest needs
    // for the pair to reach `t`: with no base, that share is `t` itself. Its variance is the
    // larger of that share's and the threshold's, so that a share near 0 or 1, where the normal
    // approximation is poor, gets no less slack than the threshold's (the worst case of a pair
    // that should pass).
    let rest = (a.len() + b.len()) as f64;
    let need = t / (1.0 + t) * total - base.both as f64;
    let share = if base.both == 0 && base.a + base.b == 0 {
        t
    } else {
        need / (rest - need)
    };
    let var = (share * (1.0 - share)).max(t * (1.0 - t));
    let screen = share > 0.0;
    // A little slack, so that rounding never drops a pair `jaccard` would keep.
    let t = t - 1e-9;
    let share = share - 1e-9;
    if max_j(base.both + a.len().min(b.len())) < t {
        return (None, 0);
    }
    let (mut i, mut j, mut n) = (0, 0, base.both);
    while i < a.len() && j < b.len() {
        // Check the bounds once per stretch of 512 elements of `a`, not on every step; of 128
        // at first, so that the screen judges a hopeless pair soon after its sample is large
        // enough, when most failing pairs can be stopped.
        let stride = if i < 2048 { 128 } else { 512 };
        let (di, dj, dn) = merge(&a[i..], &b[j..], stride);
        (i, j, n) = (i + di, j + dj, n + dn);
        if max_j(n + (a.len() - i).min(b.len() - j)) < t {
            return (None, i + j);
        }
        if let Some(z) = z
            && screen
            && i < a.len()
            && j < b.len()
        {
            // The sample: the rest's union elements below the next unmerged one, v. Every
            // match counted is below v and every match below v is counted; a block merge may
            // have passed elements of one side above v, so those are left out.
            let v = a[i].min(b[j]);
            let below = |s: &[u64]| s.partition_point(|&x| x < v);
            let matched = n - base.both;
            let u = below(&a[..i]) + below(&b[..j]) - matched;
            if u >= SCREEN_MIN_SAMPLE
                && (matched as f64) < u as f64 * share - z * (var * u as f64).sqrt()
            {
                return (None, i + j);
            }
        }
    }
    let union = total - n as f64;
    let jac = if union == 0.0 { 0.0 } else { n as f64 / union };
    ((jac >= t).then_some(jac), i + j)
}

/// Bins of a [`bin_sketch`]: 2,048 (2 KiB a set).
pub const SKETCH_BINS: usize = 1 << SKETCH_BITS;
const SKETCH_BITS: u32 = 11;

/// The smallest sets, in elements, that get a sketch: a smaller set fills too few of its bins for
/// the sketch to judge much, and its merges are short anyway.
pub(crate) const SKETCH_MIN_SET: usize = 1024;

/// A one-permutation sketch of the sorted, distinct hashes `set`, written to `out`
/// ([`SKETCH_BINS`] bytes): for each range of hashes that share their top 11 bits, one byte of
/// the smallest hash in it (never 0), or 0 when the set has none there.
///
/// Why: [`jaccard_screened`] stops a hopeless merge once its sample is large enough, but a pair
/// just below the threshold still merges that sample first. Two sketches are compared in far
/// less time, with a sample of up to 2,048 union elements: see [`sketch_rejects`].
pub fn bin_sketch(set: &[u64], out: &mut [u8]) {
    out.fill(0);
    // From the largest down, so that what stays in each bin is its smallest hash; no branch.
    for &h in set.iter().rev() {
        out[(h >> (64 - SKETCH_BITS)) as usize] = ((h >> 8) as u8).max(1);
    }
}

/// Whether two [`bin_sketch`]es put their sets' Jaccard more than `z` standard errors below
/// `t`, as [`jaccard_screened`]'s sample does.
///
/// Why this is sound: in each bin that either set fills, the union's smallest hash there is in
/// both sets exactly when the two bins hold the same hash, and then the same byte. Those
/// smallest hashes are a uniform random sample of the union (one per filled bin, the hash
/// function deciding which), so the share of bins that agree estimates the Jaccard with the
/// standard error of [`jaccard_screened`]'s sample of the same size. Different hashes whose
/// bytes agree (about 1 in 256) only raise the estimate, which can keep a hopeless pair for the
/// merge to judge but never drop a passing one. The test is made once, at `z` (5 in `exact`
/// verification: about 3e-7 of the pairs exactly at `t`).
pub fn sketch_rejects(a: &[u8], b: &[u8], t: f64, z: f64) -> bool {
    let (filled, agree) = sketch_counts(a, b);
    let (n, m) = (f64::from(filled), f64::from(agree));
    filled as usize >= SCREEN_MIN_SAMPLE && m < n * t - z * (t * (1.0 - t) * n).sqrt()
}

/// The bins of two sketches that either fills, and those that both fill with the same byte.
fn sketch_counts(a: &[u8], b: &[u8]) -> (u32, u32) {
    #[cfg(target_arch = "x86_64")]
    if simd::available() && a.len() == b.len() && a.len().is_multiple_of(32) {
        // SAFETY: the CPU has AVX2 (checked).
        return unsafe { simd::sketch_counts(a, b) };
    }
    let (mut filled, mut agree) = (0u32, 0u32);
    for (&x, &y) in a.iter().zip(b) {
        filled += u32::from((x | y) != 0);
        agree += u32::from(x == y && x != 0);
    }
    (filled, agree)
}

/// Containment of `a` in `b`: the share of `a`'s shingles found in `b` (0 when `a` is empty).
pub fn containment(a: &[u64], b: &[u64]) -> f64 {
    Overlap::of_sets(a, b).a_in_b()
}

/// Counts of a sorted multiset: `(element, count)` runs.
fn runs(bag: &[u64]) -> impl Iterator<Item = (u64, usize)> + '_ {
    bag.chunk_by(|x, y| x == y).map(|c| (c[0], c.len()))
}

/// `(intersection, sum of sizes, max-union)` of two sorted multisets: an element counts
/// `min(m, n)` times in the intersection and `max(m, n)` times in the max-union.
fn bag_counts(a: &[u64], b: &[u64]) -> (usize, usize, usize) {
    let (mut ra, mut rb) = (runs(a).peekable(), runs(b).peekable());
    let (mut inter, mut max_union) = (0, 0);
    loop {
        match (ra.peek().copied(), rb.peek().copied()) {
            (Some((x, m)), Some((y, n))) if x == y => {
                inter += m.min(n);
                max_union += m.max(n);
                ra.next();
                rb.next();
            }
            (Some((x, m)), Some((y, _))) if x < y => {
                max_union += m;
                ra.next();
            }
            (Some(_), Some((_, n))) => {
                max_union += n;
                rb.next();
            }
            (Some((_, m)), None) => {
                max_union += m;
                ra.next();
            }
            (None, Some((_, n))) => {
                max_union += n;
                rb.next();
            }
            (None, None) => break,
        }
    }
    (inter, a.len() + b.len(), max_union)
}

/// Bag (multiset) Jaccard similarity as MMDS 3.1.3 defines it: an element counts `min(m, n)`
/// times in the intersection and the union is the sum of the two sizes, so the maximum is 1/2
/// (a bag against itself). Both inputs are sorted, repeats kept. 0 when both are empty.
pub fn bag_jaccard_sum(a: &[u64], b: &[u64]) -> f64 {
    let (inter, sum, _) = bag_counts(a, b);
    if sum == 0 {
        0.0
    } else {
        inter as f64 / sum as f64
    }
}

/// Bag Jaccard similarity with the union of MMDS 3.1.3's footnote: each element counts
/// `max(m, n)` times, so a bag against itself scores 1. Sorted inputs, repeats kept.
pub fn bag_jaccard_max(a: &[u64], b: &[u64]) -> f64 {
    let (inter, _, max_union) = bag_counts(a, b);
    if max_union == 0 {
        0.0
    } else {
        inter as f64 / max_union as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mmds_exercise_3_1_1_jaccard_of_small_sets() {
        let s1 = [1, 2, 3, 4];
        let s2 = [2, 3, 5, 7];
        let s3 = [2, 4, 6];
        assert_eq!(jaccard(&s1, &s2), 2.0 / 6.0);
        assert_eq!(jaccard(&s1, &s3), 2.0 / 5.0);
        assert_eq!(jaccard(&s2, &s3), 1.0 / 6.0);
        assert_eq!(jaccard(&[], &[]), 0.0);
    }

    #[test]
    fn mmds_example_3_2_bag_similarity() {
        // {a,a,a,b} vs {a,a,b,b,c}: intersection a twice and b once = 3, union 4 + 5 = 9.
        let (a, b, c) = (1, 2, 3);
        let x = [a, a, a, b];
        let y = [a, a, b, b, c];
        assert_eq!(bag_jaccard_sum(&x, &y), 1.0 / 3.0);
        // The max-union: a 3 times, b twice, c once = 6.
        assert_eq!(bag_jaccard_max(&x, &y), 3.0 / 6.0);
        assert_eq!(bag_jaccard_sum(&x, &x), 0.5);
        assert_eq!(bag_jaccard_max(&x, &x), 1.0);
        assert_eq!(bag_jaccard_sum(&[], &[]), 0.0);
        assert_eq!(bag_jaccard_max(&[], &[]), 0.0);
    }

    #[test]
    fn mmds_exercise_3_1_2_bag_similarities() {
        let b1 = [1, 1, 1, 2];
        let b2 = [1, 1, 2, 2, 3];
        let b3 = [1, 2, 3, 4];
        // Sum-union (the chapter's definition).
        assert_eq!(bag_jaccard_sum(&b1, &b2), 3.0 / 9.0);
        assert_eq!(bag_jaccard_sum(&b1, &b3), 2.0 / 8.0);
        assert_eq!(bag_jaccard_sum(&b2, &b3), 3.0 / 9.0);
        // Max-union (the footnote's).
        assert_eq!(bag_jaccard_max(&b1, &b2), 3.0 / 6.0);
        assert_eq!(bag_jaccard_max(&b1, &b3), 2.0 / 6.0);
        assert_eq!(bag_jaccard_max(&b2, &b3), 3.0 / 6.0);
    }

    proptest::proptest! {
        #[test]
        fn bag_measures_are_symmetric_and_bounded(
            mut x in proptest::collection::vec(0u64..6, 0..20),
            mut y in proptest::collection::vec(0u64..6, 0..20),
        ) {
            x.sort_unstable();
            y.sort_unstable();
            let (s, m) = (bag_jaccard_sum(&x, &y), bag_jaccard_max(&x, &y));
            proptest::prop_assert_eq!(s, bag_jaccard_sum(&y, &x));
            proptest::prop_assert_eq!(m, bag_jaccard_max(&y, &x));
            proptest::prop_assert!((0.0..=0.5).contains(&s));
            proptest::prop_assert!((0.0..=1.0).contains(&m));
            // The max-union is never larger than the sum, so the second measure dominates.
            proptest::prop_assert!(m >= s);
            // On sets (no repeats) the max-union measure is the set Jaccard.
            let (mut xs, mut ys) = (x.clone(), y.clone());
            xs.dedup();
            ys.dedup();
            proptest::prop_assert!((bag_jaccard_max(&xs, &ys) - jaccard(&xs, &ys)).abs() < 1e-12);
        }
    }

    proptest::proptest! {
        /// The block merge (AVX2 where present) counts what a plain set intersection counts,
        /// whatever the lengths (tails shorter than a block) and however the values interleave;
        /// values span the whole range, so a signed comparison would be caught.
        #[test]
        fn merge_counts_the_set_intersection(
            x in proptest::collection::btree_set(proptest::prop_oneof![0u64..64, proptest::num::u64::ANY], 0..1200),
            y in proptest::collection::btree_set(proptest::prop_oneof![0u64..64, proptest::num::u64::ANY], 0..1200),
            t in 0.0f64..=1.0,
        ) {
            let (a, b): (Vec<u64>, Vec<u64>) = (x.iter().copied().collect(), y.iter().copied().collect());
            let n = x.intersection(&y).count();
            proptest::prop_assert_eq!(intersection_size(&a, &b), n);
            proptest::prop_assert_eq!(intersection_size(&b, &a), n);
            let j = jaccard(&a, &b);
            let union = x.union(&y).count();
            if union > 0 {
                proptest::prop_assert_eq!(j, n as f64 / union as f64);
            }
            proptest::prop_assert_eq!(jaccard_at_least(&a, &b, t), (j >= t).then_some(j));
            // The screen may only drop a pair, never change a Jaccard or invent one.
            let screened = jaccard_screened(&a, &b, t, EXACT_SCREEN_Z);
            proptest::prop_assert!(screened.is_none() || screened == (j >= t).then_some(j));
        }
    }

    #[test]
    fn intersection_of_interleaved_sets() {
        let evens: Vec<u64> = (0..100).map(|i| 2 * i).collect();
        let threes: Vec<u64> = (0..70).map(|i| 3 * i).collect();
        // Multiples of 6 below 198 and 207: 0, 6, ..., 198 -> 34.
        assert_eq!(intersection_size(&evens, &threes), 34);
        assert_eq!(intersection_size(&threes, &evens), 34);
        assert_eq!(intersection_size(&evens, &[]), 0);
    }

    /// Two sorted sets of uniform hashes with `common` shared elements and `only` in each alone:
    /// Jaccard common / (common + 2 only).
    fn pair_with(seed: u64, common: u64, only: u64) -> (Vec<u64>, Vec<u64>) {
        let h = |i: u64| {
            let mut x = i.wrapping_add(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            x ^ (x >> 31)
        };
        let mut a: Vec<u64> = (0..common + only).map(h).collect();
        let mut b: Vec<u64> = (0..common)
            .chain(common + only..common + 2 * only)
            .map(h)
            .collect();
        a.sort_unstable();
        b.sort_unstable();
        (a, b)
    }

    #[test]
    fn the_screen_stops_hopeless_merges_early_and_never_a_passing_one() {
        // Jaccard 0.7 against a threshold of 0.8: the exact bound stops the merge only after most
        // of the elements; the screen stops it within the first tenth.
        let (a, b) = pair_with(1, 14_000, 3_000);
        assert!((jaccard(&a, &b) - 0.7).abs() < 1e-12);
        let total = a.len() + b.len();
        let (bound, merged_bound) = merge_at_least(&a, &b, 0.8, None);
        let (screen, merged_screen) = merge_at_least(&a, &b, 0.8, Some(EXACT_SCREEN_Z));
        assert_eq!((bound, screen), (None, None));
        assert!(merged_bound > total / 2, "{merged_bound} of {total}");
        assert!(merged_screen < total / 10, "{merged_screen} of {total}");
        // Pairs exactly at the threshold, over many hash seeds and sizes: never stopped, and
        // their Jaccard is exact.
        for seed in 0..300 {
            let only = 60 + seed * 97 % 2_500;
            let (a, b) = pair_with(seed, 8 * only, only);
            let j = jaccard(&a, &b);
            assert_eq!(j, 0.8);
            assert_eq!(
                jaccard_screened(&a, &b, 0.8, EXACT_SCREEN_Z),
                Some(j),
                "seed {seed}"
            );
        }
    }

    /// A [`Split`] of owned bits and rest.
    fn view((bits, rest): &(Vec<u64>, Vec<u64>)) -> Split<'_> {
        Split { bits, rest }
    }

    /// `set` split by `core`, as owned bits and rest.
    fn split_by(core: &Core, sorted: &[u64]) -> (Vec<u64>, Vec<u64>) {
        let mut bits = vec![u64::MAX; core.words()];
        let mut rest = vec![0; sorted.len()];
        let len = core.split_into(sorted, &mut rest, &mut bits);
        rest.truncate(len);
        (bits, rest)
    }

    #[test]
    fn a_core_holds_the_elements_of_enough_sets_and_splits_sets_by_them() {
        // 0 and u64::MAX in three sets, 7 in two, the rest in one.
        let sets: [&[u64]; 3] = [&[0, 7, 9, u64::MAX], &[0, 7, u64::MAX], &[0, 5, u64::MAX]];
        let mut sample: Vec<u64> = sets.iter().flat_map(|s| s.iter().copied()).collect();
        let core = Core::from_sample(&mut sample, 2);
        assert_eq!(core.elements(), [0, 7, u64::MAX]);
        assert_eq!(core.words(), 1);
        // Repeats in the input count once; 0 is a core element like any other.
        let (bits, rest) = split_by(&core, &[0, 0, 3, 7, 8, 8, 9]);
        assert_eq!((bits, rest), (vec![0b011], vec![3, 8, 9]));
        let (bits, rest) = split_by(&core, &[1, u64::MAX]);
        assert_eq!((bits, rest), (vec![0b100], vec![1]));
        assert_eq!(split_by(&core, &[]), (vec![0], vec![]));
        // No core: the set, without its repeats, and no bits.
        let none = Core::default();
        assert_eq!(none.words(), 0);
        assert_eq!(split_by(&none, &[2, 2, 3]), (vec![], vec![2, 3]));
    }

    proptest::proptest! {
        /// A split set is its core bits and its rest, and two split sets measure the Jaccard of
        /// the whole sets to the bit (with the screen off: `z` so large it never judges).
        #[test]
        fn split_sets_measure_what_whole_sets_do(
            x in proptest::collection::btree_set(proptest::prop_oneof![0u64..400, proptest::num::u64::ANY], 0..700),
            y in proptest::collection::btree_set(proptest::prop_oneof![0u64..400, proptest::num::u64::ANY], 0..700),
            sample in proptest::collection::vec(0u64..400, 0..800),
            min_count in 1usize..4,
            t in 0.0f64..=1.0,
        ) {
            let (a, b): (Vec<u64>, Vec<u64>) = (x.iter().copied().collect(), y.iter().copied().collect());
            let mut sample = sample;
            let core = Core::from_sample(&mut sample, min_count);
            let (split_a, split_b) = (split_by(&core, &a), split_by(&core, &b));
            let (ab, ar) = &split_a;
            let whole = |bits: &[u64], rest: &[u64]| {
                let mut v: Vec<u64> = rest.to_vec();
                v.extend(core.elements().iter().enumerate().filter(|(i, _)| bits[i / 64] >> (i % 64) & 1 == 1).map(|(_, &h)| h));
                v.sort_unstable();
                v
            };
            proptest::prop_assert_eq!(whole(ab, ar), a.clone());
            proptest::prop_assert!(ar.windows(2).all(|w| w[0] < w[1]));
            let (sa, sb) = (view(&split_a), view(&split_b));
            proptest::prop_assert_eq!(sa.len(), a.len());
            let j = jaccard(&a, &b);
            let got = jaccard_screened_split(sa, sb, t, 1e9);
            proptest::prop_assert_eq!(got.map(f64::to_bits), (j >= t - 1e-9).then_some(j.to_bits()));
            // Screened, it may only drop a pair, never change a Jaccard or invent one.
            let screened = jaccard_screened_split(sa, sb, t, EXACT_SCREEN_Z);
            proptest::prop_assert!(screened.is_none() || screened == got);
        }
    }

    #[test]
    fn the_screen_of_split_sets_never_stops_a_passing_pair() {
        // Pairs exactly at the threshold, with a core of many shared elements and of some held
        // by one side only, over many hash seeds and sizes: never stopped, their Jaccard exact.
        for seed in 0..200 {
            let only = 60 + seed * 97 % 2_500;
            let (a, b) = pair_with(seed, 8 * only, only);
            assert_eq!(jaccard(&a, &b), 0.8);
            // The core: every third element of `a` (shared or not), and some of `b`'s own.
            let mut sample: Vec<u64> = a
                .iter()
                .step_by(3)
                .chain(b.iter().step_by(7))
                .copied()
                .collect();
            let core = Core::from_sample(&mut sample, 1);
            let (sa, sb) = (split_by(&core, &a), split_by(&core, &b));
            assert_eq!(
                jaccard_screened_split(view(&sa), view(&sb), 0.8, EXACT_SCREEN_Z),
                Some(0.8),
                "seed {seed}"
            );
        }
        // And a hopeless pair is still stopped early: Jaccard 0.7, half its shared elements in
        // the core.
        let (a, b) = pair_with(1, 14_000, 3_000);
        let shared: Vec<u64> = a
            .iter()
            .filter(|h| b.binary_search(h).is_ok())
            .step_by(2)
            .copied()
            .collect();
        let mut sample = shared.clone();
        let core = Core::from_sample(&mut sample, 1);
        let (sa, sb) = (split_by(&core, &a), split_by(&core, &b));
        let (ar, br) = (&sa.1, &sb.1);
        let base = Base {
            both: shared.len(),
            a: shared.len(),
            b: shared.len(),
        };
        let (got, merged) = merge_from(ar, br, base, 0.8, Some(EXACT_SCREEN_Z));
        assert_eq!(got, None);
        assert!(
            merged < (ar.len() + br.len()) / 5,
            "{merged} of {}",
            ar.len() + br.len()
        );
        assert_eq!(
            jaccard_screened_split(view(&sa), view(&sb), 0.8, EXACT_SCREEN_Z),
            None
        );
    }

    #[test]
    fn a_bin_sketch_holds_each_bins_smallest_hash() {
        let bin = |b: u64| b << (64 - SKETCH_BITS);
        // Bin 0 holds three hashes, bin 5 one whose byte is 0, bin 2047 one; the rest none.
        let set = [
            bin(0) | 0x300,
            bin(0) | 0x7700,
            bin(0) | 0x9900,
            bin(5),
            bin(2047) | 0xab00,
        ];
        let mut sketch = vec![9; SKETCH_BINS];
        bin_sketch(&set, &mut sketch);
        assert_eq!((sketch[0], sketch[5], sketch[2047]), (3, 1, 0xab));
        assert_eq!(sketch.iter().filter(|&&x| x != 0).count(), 3);
    }

    #[test]
    fn the_sketch_rejects_hopeless_pairs_and_never_a_passing_one() {
        let sketch = |set: &[u64]| {
            let mut s = vec![0; SKETCH_BINS];
            bin_sketch(set, &mut s);
            s
        };
        // Pairs exactly at the threshold, over many hash seeds and sizes: never rejected.
        for seed in 0..400 {
            let only = 150 + seed * 97 % 2_500;
            let (a, b) = pair_with(seed, 8 * only, only);
            assert_eq!(jaccard(&a, &b), 0.8);
            assert!(
                !sketch_rejects(&sketch(&a), &sketch(&b), 0.8, EXACT_SCREEN_Z),
                "seed {seed}"
            );
        }
        // Jaccard 0.7 with sets of a few thousand: rejected, as the merge would be.
        for seed in 0..50 {
            let (a, b) = pair_with(seed, 7_000, 1_500);
            assert!((jaccard(&a, &b) - 0.7).abs() < 1e-12);
            assert!(sketch_rejects(
                &sketch(&a),
                &sketch(&b),
                0.8,
                EXACT_SCREEN_Z
            ));
            assert_eq!(jaccard_screened(&a, &b, 0.8, EXACT_SCREEN_Z), None);
        }
        // Too small a sample to judge: kept for the merge.
        let (a, b) = pair_with(7, 70, 15);
        assert!(!sketch_rejects(
            &sketch(&a),
            &sketch(&b),
            0.8,
            EXACT_SCREEN_Z
        ));
    }

    #[test]
    fn jaccard_at_least_agrees_with_jaccard() {
        let a: Vec<u64> = (0..3000).collect();
        for (lo, hi) in [
            (0, 3000),
            (100, 3100),
            (600, 3000),
            (1000, 5000),
            (2999, 9000),
        ] {
            let b: Vec<u64> = (lo..hi).collect();
            let j = jaccard(&a, &b);
            for t in [0.0, 0.5, 0.8, j, 0.95, 1.0] {
                let got = jaccard_at_least(&a, &b, t);
                if j >= t {
                    assert_eq!(got, Some(j), "{lo}..{hi} t={t}");
                } else {
                    assert_eq!(got, None, "{lo}..{hi} t={t}");
                }
            }
        }
    }

    #[test]
    fn containment_is_directional() {
        let small = [1, 2];
        let big = [1, 2, 3, 4];
        assert_eq!(containment(&small, &big), 1.0);
        assert_eq!(containment(&big, &small), 0.5);
    }
}
