//! Stage 3: MinHash-style signatures of shingle-hash sets.
//!
//! Three sketches produce a signature of `num_perm` 32-bit slots whose fraction of equal slots
//! estimates the Jaccard similarity of two shingle sets:
//!
//! - [`SketchKind::Fss`] (default): *fast similarity sketching* (Dahlgaard, Knudsen and Thorup,
//!   FOCS 2017). In round `i < t` every shingle is thrown into one random slot with the value
//!   `i + r` (`r` random in [0, 1)); slots keep their minimum. Once every slot holds a value, later
//!   rounds cannot change anything (their values are all larger), so the sketch stops. Rounds
//!   `t..2t` then fill any slot still empty by sending every shingle to that one slot, which bounds
//!   the work on tiny documents. For each slot the winning shingle of the union of two sets is
//!   uniform over the union (every shingle's values are drawn the same way), so each slot agrees
//!   with probability exactly J: the estimator is unbiased, its variance is at most that of `t`
//!   independent permutations, and the cost is O(n + t log t) instead of O(n t). A large document
//!   almost always finishes after round 0, which is an xor, a shift and a compare per shingle.
//! - [`SketchKind::Oph`]: one permutation hashing with optimal densification (Shrivastava, ICML
//!   2017): round 0 of the above, then each empty slot copies the value of a non-empty slot chosen
//!   by a hash sequence shared by all documents. Unbiased, slightly noisier on very short documents.
//! - [`SketchKind::Classic`]: the seeds' k-permutation MinHash, `t` permutations
//!   `π_i(x) = a_i x + b_i mod 2^32` (`a_i` odd) of each shingle's 32-bit fingerprint, each
//!   applied to every shingle. O(n t), kept as the reference; eight slots per AVX2 instruction
//!   when the CPU has it, a portable loop otherwise.
//!
//! Why 32-bit slots: two different minima collide with probability 2^-32, far below the sampling
//! error of any practical signature, and half the width of 64-bit slots halves memory and the cost
//! of comparing signatures. All parameters derive from one `seed`, so runs are reproducible.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Param, Result};

/// Which signature sketch to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SketchKind {
    /// Fast similarity sketching (default).
    Fss,
    /// One permutation hashing with optimal densification.
    Oph,
    /// k-permutation MinHash.
    Classic,
}

impl SketchKind {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            SketchKind::Fss => "fss",
            SketchKind::Oph => "oph",
            SketchKind::Classic => "classic",
        }
    }
}

/// The parameters that make a signature. Two signatures are comparable only when these are equal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SketchParams {
    /// The sketch.
    pub kind: SketchKind,
    /// Slots per signature.
    pub num_perm: usize,
    /// The seed every hash function derives from.
    pub seed: u64,
}

/// The largest signature: FSS numbers its rounds in 16 bits and uses `2 * num_perm` rounds.
pub const MAX_NUM_PERM: usize = 1 << 14;

/// Round 0 of FSS and OPH, fed one hash at a time (see [`Signer::absorber`]). `POW2`: the
/// width is a power of two and the slot is the hash's top bits; otherwise Lemire's
/// multiply-shift range reduction of its top 32 bits picks it. A type parameter rather than a
/// field, so that each mapping gets its own loop wherever hashes are pushed, with no choice made
/// per hash: the compiler hoists such a choice out of a loop only sometimes, and the signing
/// loop runs once per shingle of every document.
#[derive(Debug)]
pub(crate) struct RoundZero<'a, const POW2: bool> {
    s0: u64,
    shift: u32,
    slots: &'a mut [u64],
}

impl<const POW2: bool> RoundZero<'_, POW2> {
    /// Takes one shingle hash into its slot.
    #[inline(always)]
    pub fn push(&mut self, x: u64) {
        let h = x ^ self.s0;
        let k = self.slots.len();
        let j = if POW2 {
            // The mask is a no-op (the shift leaves log2 k bits) that spares a bounds check.
            (h >> self.shift) as usize & (k - 1)
        } else {
            reduce(h, k)
        };
        // Branch-free: early in a document most hashes lower their slot, in no pattern.
        self.slots[j] = self.slots[j].min(h & VALUE_MASK);
    }
}

/// Round 0 with its slot mapping chosen once, for a whole document (see [`RoundZero`]).
#[derive(Debug)]
pub(crate) enum Absorber<'a> {
    /// A power-of-two width: the slot is the hash's top bits.
    PowerOfTwo(RoundZero<'a, true>),
    /// Any other width: the slot is a range reduction of the hash's top 32 bits.
    Other(RoundZero<'a, false>),
}

/// The slot of hash `h` among `k`: Lemire's multiply-shift range reduction of its top 32 bits.
#[inline(always)]
fn reduce(h: u64, k: usize) -> usize {
    (((h >> 32) * k as u64) >> 32) as usize
}

/// A slot that no shingle has reached yet.
const EMPTY: u64 = u64::MAX;
/// FSS slot values are `round << VALUE_BITS | random bits`, so a later round always loses.
const VALUE_BITS: u32 = 48;
const VALUE_MASK: u64 = (1 << VALUE_BITS) - 1;
/// An odd 64-bit constant (the golden ratio), for multiplicative mixing.
const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// The 64-bit finalizer of MurmurHash3: a bijection with full avalanche.
#[inline]
pub fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// Computes signatures. Built once per run and shared read-only by all threads.
#[derive(Debug, Clone)]
pub struct Signer {
    params: SketchParams,
    /// Seed of round 0 (FSS, OPH) mixed into each shingle hash.
    round0: u64,
    /// Base from which the seeds of later rounds are derived.
    round_base: u64,
    /// `log2(num_perm)` when it is a power of two: slot = top bits.
    shift: Option<u32>,
    /// Classic MinHash multipliers (odd) and offsets.
    a: Vec<u32>,
    b: Vec<u32>,
}

impl Signer {
    /// Builds a signer, checking `num_perm`.
    pub fn new(params: SketchParams) -> Result<Self> {
        let t = params.num_perm;
        if t == 0 || t > MAX_NUM_PERM {
            return Err(crate::invalid![
                Param::NumPerm,
                format!(" must be between 1 and {MAX_NUM_PERM}, not {t}")
            ]);
        }
        let mut rng = ChaCha8Rng::seed_from_u64(params.seed);
        let round0 = rng.next_u64();
        let round_base = rng.next_u64();
        let (a, b) = if params.kind == SketchKind::Classic {
            (0..t).map(|_| (rng.next_u32() | 1, rng.next_u32())).unzip()
        } else {
            (Vec::new(), Vec::new())
        };
        let shift = (t.is_power_of_two() && t > 1).then(|| 64 - t.trailing_zeros());
        Ok(Signer {
            params,
            round0,
            round_base,
            shift,
            a,
            b,
        })
    }

    /// The parameters this signer was built with.
    pub fn params(&self) -> SketchParams {
        self.params
    }

    /// Slots per signature.
    pub fn num_perm(&self) -> usize {
        self.params.num_perm
    }

    /// Signs a non-empty multiset of shingle hashes into `out` (`num_perm` slots). Repeated hashes
    /// are harmless. `scratch` is reused between calls to avoid allocating per document.
    ///
    /// The hashes must be uniform 64-bit values, as the [`Shingler`](crate::text::shingle::Shingler)'s
    /// are: FSS and OPH take a shingle's first slot and value from its hash's own bits. Hash raw
    /// integers or strings (with xxh3, say) before signing them.
    ///
    /// # Panics
    /// If `out` does not have `num_perm` slots or `hashes` is empty (an empty document has no
    /// signature: it is never paired).
    pub fn sign_into(&self, hashes: &[u64], out: &mut [u32], scratch: &mut Vec<u64>) {
        assert_eq!(out.len(), self.params.num_perm, "signature width");
        assert!(!hashes.is_empty(), "an empty shingle set has no signature");
        match self.params.kind {
            SketchKind::Fss => {
                self.fss(hashes, scratch);
                finish(scratch, out);
            }
            SketchKind::Oph => {
                self.oph(hashes, scratch);
                finish(scratch, out);
            }
            SketchKind::Classic => classic(&self.a, &self.b, hashes, out),
        }
    }

    /// Signs `hashes` into a new vector.
    pub fn sign(&self, hashes: &[u64]) -> Vec<u32> {
        let mut out = vec![0; self.params.num_perm];
        self.sign_into(hashes, &mut out, &mut Vec::new());
        out
    }

    /// Signs `hashes` into a [`MinHash`] that remembers its parameters.
    pub fn minhash(&self, hashes: &[u64]) -> MinHash {
        MinHash {
            params: self.params,
            values: self.sign(hashes),
        }
    }

    #[inline]
    fn slot_of(&self, h: u64) -> usize {
        match self.shift {
            Some(s) => (h >> s) as usize,
            None => reduce(h, self.params.num_perm),
        }
    }

    #[inline]
    fn round_seed(&self, round: usize) -> u64 {
        fmix64(self.round_base ^ (round as u64).wrapping_mul(GOLDEN))
    }

    /// Round 0 of FSS and OPH: every shingle to one slot. The input hashes are already uniform
    /// 64-bit values (the shingler's hash, itself seeded), so the slot comes straight from their
    /// top bits and the value from the low 48, after an xor with the round's seed. Why no
    /// multiply to re-mix them: this loop runs once per shingle of every document, where a
    /// multiply is a visible share of a scan. Later rounds, which only small documents reach, mix
    /// each hash fully with [`fmix64`].
    fn round_zero(&self, hashes: &[u64], slots: &mut Vec<u64>) {
        slots.clear();
        slots.resize(self.params.num_perm, EMPTY);
        self.round_zero_block(hashes, slots);
    }

    #[inline]
    fn round_zero_block(&self, hashes: &[u64], slots: &mut [u64]) {
        match self.round_zero_into(slots) {
            Absorber::PowerOfTwo(mut r) => hashes.iter().for_each(|&x| r.push(x)),
            Absorber::Other(mut r) => hashes.iter().for_each(|&x| r.push(x)),
        }
    }

    /// Round 0 into `slots`, with the slot mapping of this signer's width.
    fn round_zero_into<'a>(&self, slots: &'a mut [u64]) -> Absorber<'a> {
        let s0 = self.round0;
        match self.shift {
            Some(shift) => Absorber::PowerOfTwo(RoundZero { s0, shift, slots }),
            None => Absorber::Other(RoundZero {
                s0,
                shift: 0,
                slots,
            }),
        }
    }

    /// Starts signing a document whose hashes arrive in blocks (see [`absorb`](Self::absorb)).
    pub(crate) fn begin(&self, slots: &mut Vec<u64>) {
        slots.clear();
        slots.resize(self.params.num_perm, EMPTY);
    }

    /// Feeds one block of a document's hashes to a signature begun with
    /// [`begin`](Self::begin). For FSS and OPH this is round 0, which needs no other hash of
    /// the document: a large document is then signed without its hashes ever being stored.
    /// Classic MinHash does nothing here ([`finish`](Self::finish) returns `false`).
    #[cfg(test)]
    pub(crate) fn absorb(&self, block: &[u64], slots: &mut [u64]) {
        if self.params.kind != SketchKind::Classic {
            self.round_zero_block(block, slots);
        }
    }

    /// Feeds a signature begun with [`begin`](Self::begin) one hash at a time: what
    /// [`absorb`](Self::absorb) does for a block, for a producer such as
    /// [`Shingler::for_each_hash`](crate::text::shingle::Shingler::for_each_hash) that hands over each
    /// hash as it is made, so that no block is written and read back. `None` for classic
    /// MinHash, which needs the whole hash list.
    pub(crate) fn absorber<'a>(&self, slots: &'a mut [u64]) -> Option<Absorber<'a>> {
        assert_eq!(slots.len(), self.params.num_perm, "signature width");
        (self.params.kind != SketchKind::Classic).then(|| self.round_zero_into(slots))
    }

    /// Completes a signature fed by `absorb`, writing it to `out`, when round 0
    /// was enough: always for OPH (densification needs only round 0), for FSS when round 0
    /// filled every slot (a document of a few thousand shingles almost always does). Returns
    /// `false` otherwise; the caller then signs the document's full hash list with
    /// [`sign_into`](Self::sign_into), which gives the same signature.
    pub fn finish(&self, slots: &mut [u64], out: &mut [u32]) -> bool {
        assert_eq!(out.len(), self.params.num_perm, "signature width");
        match self.params.kind {
            SketchKind::Classic => false,
            SketchKind::Fss if slots.contains(&EMPTY) => false,
            SketchKind::Fss => {
                finish(slots, out);
                true
            }
            SketchKind::Oph => {
                if slots.iter().all(|&v| v == EMPTY) {
                    return false; // no hash at all
                }
                self.densify(slots);
                finish(slots, out);
                true
            }
        }
    }

    fn fss(&self, hashes: &[u64], slots: &mut Vec<u64>) {
        let t = self.params.num_perm;
        self.round_zero(hashes, slots);
        let mut empty = slots.iter().filter(|&&s| s == EMPTY).count();
        // Phase one: random slots, until every slot holds a value.
        let mut round = 1;
        while empty > 0 && round < t {
            let seed = self.round_seed(round);
            let tag = (round as u64) << VALUE_BITS;
            for &x in hashes {
                let h = fmix64(x ^ seed);
                let j = self.slot_of(h);
                let v = tag | (h & VALUE_MASK);
                if v < slots[j] {
                    if slots[j] == EMPTY {
                        empty -= 1;
                    }
                    slots[j] = v;
                }
            }
            round += 1;
        }
        // Phase two: round t + j sends every shingle to slot j, so each empty slot gets the
        // minimum of that round. Filled slots already hold smaller values and are skipped.
        if empty > 0 {
            for (j, slot) in slots.iter_mut().enumerate() {
                if *slot == EMPTY {
                    let r = t + j;
                    let seed = self.round_seed(r);
                    let tag = (r as u64) << VALUE_BITS;
                    *slot = hashes
                        .iter()
                        .map(|&x| tag | (fmix64(x ^ seed) & VALUE_MASK))
                        .min()
                        .expect("hashes is not empty");
                }
            }
        }
    }

    fn oph(&self, hashes: &[u64], slots: &mut Vec<u64>) {
        self.round_zero(hashes, slots);
        self.densify(slots);
    }

    fn densify(&self, slots: &mut [u64]) {
        if !slots.contains(&EMPTY) {
            return;
        }
        // Optimal densification: empty slot j probes slots h(j, 0), h(j, 1), ... and copies the
        // first non-empty one as it was after round 0. Every document probes the same sequence.
        let filled = slots.to_vec();
        for (j, slot) in slots.iter_mut().enumerate() {
            if *slot != EMPTY {
                continue;
            }
            let mut attempt = 0u64;
            loop {
                let h = fmix64(self.round_base ^ ((j as u64) << 32 | attempt));
                let src = filled[self.slot_of(h)];
                if src != EMPTY {
                    *slot = src;
                    break;
                }
                attempt += 1;
            }
        }
    }
}

/// Folds 64-bit slot values to the 32-bit signature.
fn finish(slots: &[u64], out: &mut [u32]) {
    for (o, &s) in out.iter_mut().zip(slots) {
        *o = fmix64(s) as u32;
    }
}

/// k-permutation MinHash: slot `i` holds the minimum of `a_i x + b_i mod 2^32` over the
/// document's 32-bit fingerprints `x` (each 64-bit shingle hash folded in half). With `a_i` odd
/// each function is a permutation of the 2^32 fingerprints, the seeds' `π_i`; the fingerprints
/// are already uniform, so the permutations only need to differ from slot to slot.
///
/// Why 32-bit arithmetic: AVX2 multiplies eight 32-bit lanes in one instruction but has no
/// 64-bit multiply, so `(a_i x + b_i mod 2^64) >> 32` would cost several instructions per
/// four slots. Hashes are folded a block at a time, then each group of 32 slots stays in
/// registers while every fingerprint of the block passes through it.
fn classic(a: &[u32], b: &[u32], hashes: &[u64], out: &mut [u32]) {
    out.fill(u32::MAX);
    let mut xs = [0u32; CLASSIC_BLOCK];
    for block in hashes.chunks(CLASSIC_BLOCK) {
        let xs = &mut xs[..block.len()];
        for (x, &h) in xs.iter_mut().zip(block) {
            *x = fold(h);
        }
        #[cfg(target_arch = "x86_64")]
        if classic_simd::available() {
            // SAFETY: the CPU supports AVX2 (checked).
            unsafe { classic_simd::update(a, b, xs, out) };
            continue;
        }
        classic_update(a, b, xs, out);
    }
}

/// Fingerprints folded and signed per block by [`classic`].
const CLASSIC_BLOCK: usize = 256;

/// A 64-bit shingle hash folded to the 32-bit fingerprint classic MinHash permutes.
#[inline(always)]
fn fold(h: u64) -> u32 {
    (h ^ (h >> 32)) as u32
}

/// Lowers `out[i]` to `a_i x + b_i mod 2^32` for every fingerprint `x`: the portable kernel,
/// and the reference the AVX2 one is tested against.
fn classic_update(a: &[u32], b: &[u32], xs: &[u32], out: &mut [u32]) {
    for ((o, &a), &b) in out.iter_mut().zip(a).zip(b) {
        for &x in xs {
            *o = (*o).min(a.wrapping_mul(x).wrapping_add(b));
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod classic_simd {
    use std::arch::x86_64::*;
    use std::sync::OnceLock;

    pub(super) fn available() -> bool {
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| is_x86_feature_detected!("avx2"))
    }

    /// [`super::classic_update`] with eight slots per register: groups of 32 slots (four
    /// registers each of `a`, `b` and minima, loaded once per block of fingerprints), then
    /// groups of eight, then the last few slots one at a time.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn update(a: &[u32], b: &[u32], xs: &[u32], out: &mut [u32]) {
        let n = out.len().min(a.len()).min(b.len());
        let mut i = 0;
        // SAFETY (all loads and stores below): `i + 32 <= n` or `i + 8 <= n`, and `n` is
        // within all three slices; unaligned access is allowed.
        unsafe {
            let load = |s: &[u32], i: usize| _mm256_loadu_si256(s.as_ptr().add(i).cast());
            while i + 32 <= n {
                let (a0, a1, a2, a3) =
                    (load(a, i), load(a, i + 8), load(a, i + 16), load(a, i + 24));
                let (b0, b1, b2, b3) =
                    (load(b, i), load(b, i + 8), load(b, i + 16), load(b, i + 24));
                let (mut m0, mut m1, mut m2, mut m3) = (
                    load(out, i),
                    load(out, i + 8),
                    load(out, i + 16),
                    load(out, i + 24),
                );
                for &x in xs {
                    let x = _mm256_set1_epi32(x as i32);
                    let h = |a, b| _mm256_add_epi32(_mm256_mullo_epi32(a, x), b);
                    m0 = _mm256_min_epu32(m0, h(a0, b0));
                    m1 = _mm256_min_epu32(m1, h(a1, b1));
                    m2 = _mm256_min_epu32(m2, h(a2, b2));
                    m3 = _mm256_min_epu32(m3, h(a3, b3));
                }
                let o = out.as_mut_ptr().add(i);
                _mm256_storeu_si256(o.cast(), m0);
                _mm256_storeu_si256(o.add(8).cast(), m1);
                _mm256_storeu_si256(o.add(16).cast(), m2);
                _mm256_storeu_si256(o.add(24).cast(), m3);
                i += 32;
            }
            while i + 8 <= n {
                let (a0, b0, mut m0) = (load(a, i), load(b, i), load(out, i));
                for &x in xs {
                    let x = _mm256_set1_epi32(x as i32);
                    m0 = _mm256_min_epu32(m0, _mm256_add_epi32(_mm256_mullo_epi32(a0, x), b0));
                }
                _mm256_storeu_si256(out.as_mut_ptr().add(i).cast(), m0);
                i += 8;
            }
        }
        super::classic_update(&a[i..n], &b[i..n], xs, &mut out[i..n]);
    }
}

/// Number of slots in which two signatures agree.
#[inline]
pub fn agreement(a: &[u32], b: &[u32]) -> usize {
    debug_assert_eq!(a.len(), b.len());
    // Sixteen lanes at a time with a branch-free sum, which the compiler turns into SIMD
    // compares; the plain filter-and-count loop stays scalar.
    let (ac, bc) = (a.chunks_exact(16), b.chunks_exact(16));
    let tail = ac
        .remainder()
        .iter()
        .zip(bc.remainder())
        .filter(|(x, y)| x == y)
        .count();
    let body: u32 = ac
        .zip(bc)
        .map(|(x, y)| {
            let mut n = 0u32;
            for i in 0..16 {
                n += (x[i] == y[i]) as u32;
            }
            n
        })
        .sum();
    body as usize + tail
}

/// The Jaccard estimate of two signatures of the same parameters: the fraction of equal slots.
/// Crate-internal: its callers pass two non-empty signatures of one signer. Outside the crate,
/// [`Signature::jaccard`](crate::Signature::jaccard) checks them.
#[inline]
pub(crate) fn estimate(a: &[u32], b: &[u32]) -> f64 {
    debug_assert!(!a.is_empty(), "a signature has at least one slot");
    agreement(a, b) as f64 / a.len() as f64
}

/// The standard error of a Jaccard estimate from `num_perm` slots at similarity `j`:
/// `sqrt(j (1 - j) / num_perm)`.
pub fn standard_error(j: f64, num_perm: usize) -> f64 {
    (j * (1.0 - j) / num_perm as f64).sqrt()
}

/// A signature together with the parameters that made it, so that comparing signatures made
/// differently is an error instead of a silently wrong number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MinHash {
    /// How the signature was made.
    pub params: SketchParams,
    /// The slots.
    pub values: Vec<u32>,
}

impl MinHash {
    /// Estimates the Jaccard similarity with `other`, refusing signatures made differently
    /// ([`Error::Mismatch`]), and a signature whose parameters no signer has or whose number of
    /// slots is not their `num_perm` ([`Error::InvalidConfig`]: the fields are public).
    pub fn jaccard(&self, other: &MinHash) -> Result<f64> {
        let (p, q) = (self.params, other.params);
        if p.kind != q.kind {
            return Err(Error::Mismatch(format!(
                "sketch {} vs {}",
                p.kind.name(),
                q.kind.name()
            )));
        }
        if p.num_perm != q.num_perm {
            return Err(Error::Mismatch(format!(
                "num-perm {} vs {}",
                p.num_perm, q.num_perm
            )));
        }
        if p.seed != q.seed {
            return Err(Error::Mismatch(format!("seed {} vs {}", p.seed, q.seed)));
        }
        let n = p.num_perm;
        if !(1..=MAX_NUM_PERM).contains(&n) {
            return Err(crate::invalid![
                Param::NumPerm,
                format!(" must be between 1 and {MAX_NUM_PERM}, not {n}")
            ]);
        }
        for m in [self, other] {
            if m.values.len() != n {
                return Err(crate::invalid![
                    "a signature of ",
                    Param::NumPerm,
                    format!(" {n} needs {n} slots, not {}", m.values.len())
                ]);
            }
        }
        Ok(estimate(&self.values, &other.values))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signer(kind: SketchKind, num_perm: usize) -> Signer {
        Signer::new(SketchParams {
            kind,
            num_perm,
            seed: 42,
        })
        .unwrap()
    }

    /// Two sets of `n` elements sharing exactly `shared`, so J = shared / (2n - shared).
    fn pair(n: u64, shared: u64, offset: u64) -> (Vec<u64>, Vec<u64>) {
        let h = |i: u64| fmix64(i.wrapping_add(offset.wrapping_mul(GOLDEN)));
        let a: Vec<u64> = (0..n).map(h).collect();
        let b: Vec<u64> = (0..shared).chain(n..2 * n - shared).map(h).collect();
        (a, b)
    }

    #[test]
    fn identical_sets_agree_everywhere_and_disjoint_sets_almost_nowhere() {
        for kind in [SketchKind::Fss, SketchKind::Oph, SketchKind::Classic] {
            for n in [1, 5, 100, 10_000] {
                let s = signer(kind, 128);
                let (a, _) = pair(n, 0, 1);
                let (c, _) = pair(n, 0, 2);
                assert_eq!(estimate(&s.sign(&a), &s.sign(&a)), 1.0);
                // Duplicates and order do not matter.
                let mut twice: Vec<u64> = a.iter().chain(a.iter()).rev().copied().collect();
                twice.rotate_left(1);
                assert_eq!(s.sign(&twice), s.sign(&a), "{kind:?} n={n}");
                // Disjoint sets agree only by 32-bit collision or densification of tiny sets.
                if n >= 100 {
                    assert!(estimate(&s.sign(&a), &s.sign(&c)) < 0.02, "{kind:?}");
                }
            }
        }
    }

    #[test]
    fn estimates_are_close_to_true_jaccard() {
        // 200 independent pairs per sketch at J = 1/3; the mean must sit within 5 standard
        // errors of the mean (fixed seeds: this cannot flake).
        for kind in [SketchKind::Fss, SketchKind::Oph, SketchKind::Classic] {
            let s = signer(kind, 128);
            let trials = 200;
            let mut sum = 0.0;
            for t in 0..trials {
                let (a, b) = pair(300, 150, t);
                sum += estimate(&s.sign(&a), &s.sign(&b));
            }
            let j = 150.0 / 450.0;
            let se = standard_error(j, 128) / (trials as f64).sqrt();
            let mean = sum / trials as f64;
            assert!((mean - j).abs() < 5.0 * se, "{kind:?}: mean {mean} vs {j}");
        }
    }

    #[test]
    fn fss_fills_every_slot_even_for_one_shingle() {
        let s = signer(SketchKind::Fss, 256);
        let mut scratch = Vec::new();
        let mut out = vec![0; 256];
        s.sign_into(&[7], &mut out, &mut scratch);
        assert!(scratch.iter().all(|&v| v != EMPTY));
    }

    #[test]
    fn non_power_of_two_widths_work() {
        for kind in [SketchKind::Fss, SketchKind::Oph, SketchKind::Classic] {
            let s = signer(kind, 100);
            let (a, b) = pair(1000, 1000, 3);
            assert_eq!(estimate(&s.sign(&a), &s.sign(&b)), 1.0);
        }
    }

    #[test]
    fn seeds_change_signatures() {
        let (a, _) = pair(100, 0, 9);
        let s1 = signer(SketchKind::Fss, 64);
        let s2 = Signer::new(SketchParams {
            kind: SketchKind::Fss,
            num_perm: 64,
            seed: 43,
        })
        .unwrap();
        assert_ne!(s1.sign(&a), s2.sign(&a));
    }

    #[test]
    fn comparing_mismatched_sketches_is_an_error() {
        let (a, _) = pair(100, 0, 9);
        let m1 = signer(SketchKind::Fss, 64).minhash(&a);
        let m2 = signer(SketchKind::Fss, 128).minhash(&a);
        let m3 = signer(SketchKind::Classic, 64).minhash(&a);
        assert!(
            m1.jaccard(&m2)
                .unwrap_err()
                .to_string()
                .contains("num-perm 64 vs 128")
        );
        assert!(
            m1.jaccard(&m3)
                .unwrap_err()
                .to_string()
                .contains("sketch fss vs classic")
        );
        assert_eq!(m1.jaccard(&m1).unwrap(), 1.0);
    }

    #[test]
    fn a_minhash_of_the_wrong_width_is_refused() {
        // The fields are public: slots of another number than `num_perm`, or no slot at all,
        // are refused rather than compared on a prefix (or divided by 0).
        let (a, _) = pair(100, 0, 9);
        let good = signer(SketchKind::Fss, 4).minhash(&a);
        let short = MinHash {
            values: vec![good.values[0]],
            ..good.clone()
        };
        let invalid = |r: Result<f64>| match r {
            Err(Error::InvalidConfig(p)) => p.to_string(),
            other => panic!("{other:?}"),
        };
        let why = "a signature of num_perm 4 needs 4 slots, not 1";
        assert_eq!(invalid(good.jaccard(&short)), why);
        assert_eq!(invalid(short.jaccard(&good)), why);
        let empty = MinHash {
            params: SketchParams {
                num_perm: 0,
                ..good.params
            },
            values: vec![],
        };
        assert_eq!(
            invalid(empty.jaccard(&empty)),
            format!("num_perm must be between 1 and {MAX_NUM_PERM}, not 0")
        );
    }

    #[test]
    fn num_perm_is_checked() {
        for bad in [0, MAX_NUM_PERM + 1] {
            let e = Signer::new(SketchParams {
                kind: SketchKind::Fss,
                num_perm: bad,
                seed: 0,
            });
            assert!(e.is_err());
        }
    }

    #[test]
    fn blocks_give_the_same_signature_as_the_whole_list() {
        for kind in [SketchKind::Fss, SketchKind::Oph, SketchKind::Classic] {
            for n in [1, 3, 50, 700, 5000] {
                for width in [128, 100] {
                    let s = signer(kind, width);
                    let (a, _) = pair(n, 0, 11);
                    let mut slots = Vec::new();
                    s.begin(&mut slots);
                    for block in a.chunks(64) {
                        s.absorb(block, &mut slots);
                    }
                    // One hash at a time, through the absorber, reaches the same slots
                    // (a power-of-two width takes the shift, 100 the multiply).
                    let mut each = Vec::new();
                    s.begin(&mut each);
                    match s.absorber(&mut each) {
                        Some(Absorber::PowerOfTwo(mut r)) if width == 128 => {
                            a.iter().for_each(|&h| r.push(h))
                        }
                        Some(Absorber::Other(mut r)) if width == 100 => {
                            a.iter().for_each(|&h| r.push(h))
                        }
                        None => assert_eq!(kind, SketchKind::Classic),
                        other => panic!("width {width}: {other:?}"),
                    }
                    if kind != SketchKind::Classic {
                        assert_eq!(each, slots, "{kind:?} n={n} width={width}");
                    }
                    let mut out = vec![0; width];
                    if s.finish(&mut slots, &mut out) {
                        assert_eq!(out, s.sign(&a), "{kind:?} n={n} width={width}");
                    } else {
                        // Only FSS with slots left empty, and classic, need the whole list.
                        assert!(kind == SketchKind::Classic || n < 1000, "{kind:?} n={n}");
                    }
                }
            }
        }
    }

    #[test]
    fn agreement_counts_equal_slots_at_any_width() {
        for n in 0..40u32 {
            let a: Vec<u32> = (0..n).collect();
            let b: Vec<u32> = (0..n).map(|i| if i % 3 == 0 { i } else { i + 1 }).collect();
            assert_eq!(agreement(&a, &b), n.div_ceil(3) as usize, "n={n}");
        }
    }

    #[test]
    fn avx2_and_portable_classic_agree() {
        // Widths that exercise the groups of 32, of 8 and the last few slots; lengths that
        // exercise whole and partial blocks of fingerprints.
        for t in [1, 7, 8, 32, 45, 128] {
            let s = signer(SketchKind::Classic, t);
            for n in [1, 255, 256, 700] {
                let (a, _) = pair(n, 0, 5);
                let mut p = vec![u32::MAX; t];
                let xs: Vec<u32> = a.iter().map(|&h| fold(h)).collect();
                classic_update(&s.a, &s.b, &xs, &mut p);
                assert_eq!(p, s.sign(&a), "t={t} n={n}");
            }
        }
    }

    #[test]
    fn classic_slots_are_the_seeds_permutations() {
        // Slot i is the minimum of a_i x + b_i mod 2^32 over the fingerprints, by definition.
        let s = signer(SketchKind::Classic, 16);
        let hashes = [1u64, 0x9e37_79b9_7f4a_7c15, u64::MAX, 1 << 40];
        let want: Vec<u32> = (0..16)
            .map(|i| {
                hashes
                    .iter()
                    .map(|&h| s.a[i].wrapping_mul(fold(h)).wrapping_add(s.b[i]))
                    .min()
                    .unwrap()
            })
            .collect();
        assert_eq!(s.sign(&hashes), want);
        assert!(s.a.iter().all(|a| a % 2 == 1));
    }
}
