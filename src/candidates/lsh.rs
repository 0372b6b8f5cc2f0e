//! Stage 4: banded locality-sensitive hashing (MMDS 3.4).
//!
//! Each signature is cut into `bands` bands of `rows` slots; each band is hashed, and documents
//! whose band hashes are equal in at least one band become a candidate pair. A pair of Jaccard
//! similarity `s` becomes a candidate with probability `1 - (1 - s^rows)^bands` (the S-curve).
//!
//! How it stays fast and bounded:
//! - Buckets are found by sorting each band's flat `(hash, document)` array, not by a hash map of
//!   vectors; one band at a time, with every core sorting and enumerating it, so that only one
//!   band's array is held.
//! - A pair that shares several bands is considered only in the first band it shares: when band
//!   `b` meets a pair, it checks the pair's band hashes for `0..b` (a few integer compares), so no
//!   global list of candidates is ever built.
//! - A bucket with more than `max_bucket` members (boilerplate, thousands of exact copies) would
//!   cost quadratic time; it is linked as a star around its first member instead, which keeps the
//!   cost linear and keeps every member in the same cluster.

use std::collections::HashMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use crate::error::{Param, Result};

/// Bands and rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LshParams {
    /// Number of bands.
    pub bands: usize,
    /// Slots per band.
    pub rows: usize,
}

impl LshParams {
    /// Checks the banding against the signature width.
    pub fn validate(&self, num_perm: usize) -> Result<()> {
        if self.bands == 0 || self.rows == 0 {
            return Err(crate::invalid![
                Param::Bands,
                " and ",
                Param::Rows,
                " must be at least 1"
            ]);
        }
        match self.bands.checked_mul(self.rows) {
            Some(used) if used <= num_perm => Ok(()),
            Some(used) => Err(crate::invalid![
                Param::Bands,
                format!(" {} x ", self.bands),
                Param::Rows,
                format!(" {} = {used} is more than ", self.rows),
                Param::NumPerm,
                format!(" {num_perm}"),
            ]),
            // Too large for a `usize`, so more than any `num_perm` too.
            None => Err(crate::invalid![
                Param::Bands,
                format!(" {} x ", self.bands),
                Param::Rows,
                format!(" {} is more than ", self.rows),
                Param::NumPerm,
                format!(" {num_perm}"),
            ]),
        }
    }

    /// `(1/b)^(1/r)`, the usual approximation of the S-curve's threshold (MMDS 3.4.3): a pair
    /// this similar becomes a candidate with probability a little above one half (0.64 for
    /// 18 bands of 7 rows). [`half_point`](Self::half_point) is the exact one-half point.
    pub fn threshold(&self) -> f64 {
        (1.0 / self.bands as f64).powf(1.0 / self.rows as f64)
    }

    /// The similarity at which a pair becomes a candidate with probability exactly one half:
    /// `1 - (1 - s^r)^b = 1/2` gives `s = (1 - 2^(-1/b))^(1/r)`.
    pub fn half_point(&self) -> f64 {
        (-(-std::f64::consts::LN_2 / self.bands as f64).exp_m1()).powf(1.0 / self.rows as f64)
    }

    /// The probability that a pair of similarity `s` becomes a candidate: `1 - (1 - s^r)^b`.
    pub fn candidate_probability(&self, s: f64) -> f64 {
        1.0 - (1.0 - s.powi(self.rows as i32)).powi(self.bands as i32)
    }
}

/// Counts from candidate generation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CandidateStats {
    /// Distinct pairs considered (each pair once, whatever the number of bands it shares).
    pub candidates: u64,
    /// Buckets larger than `max_bucket`, linked as stars.
    pub oversized_buckets: u64,
}

/// The band hashes of a set of signatures, ready to enumerate candidate pairs.
pub struct LshIndex {
    params: LshParams,
    n: usize,
    /// Band hashes, document-major: `hashes[doc * bands + band]`.
    hashes: Vec<u64>,
}

/// The hash of one band of one signature.
#[inline]
pub(crate) fn band_hash(band: &[u32]) -> u64 {
    xxh3_64(bytemuck::cast_slice(band))
}

impl LshIndex {
    /// Hashes the bands of `signatures` (flat, `num_perm` slots each) in parallel.
    pub fn build(signatures: &[u32], num_perm: usize, params: LshParams) -> Result<Self> {
        params.validate(num_perm)?;
        let n = signatures.len() / num_perm;
        let mut hashes = vec![0u64; n * params.bands];
        hashes
            .par_chunks_mut(params.bands)
            .zip(signatures.par_chunks(num_perm))
            .for_each(|(out, sig)| {
                for (b, h) in out.iter_mut().enumerate() {
                    *h = band_hash(&sig[b * params.rows..(b + 1) * params.rows]);
                }
            });
        Ok(LshIndex { params, n, hashes })
    }

    /// Number of documents indexed.
    pub fn len(&self) -> usize {
        self.n
    }

    /// True when no document is indexed.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Calls `verify(a, b)` once for every candidate pair (`a < b`, indices into the signatures)
    /// in parallel, and returns what it kept. Buckets above `max_bucket` members are linked as a
    /// star around their smallest member.
    ///
    /// The bands are taken one after another, each sorted and enumerated with every core, so
    /// only one band's `(hash, document)` array (16 bytes a document) exists at a time; what a
    /// later band needs of the earlier ones is the band hashes and the star centers.
    pub fn candidates<T, F>(&self, max_bucket: usize, verify: F) -> (Vec<T>, CandidateStats)
    where
        T: Send,
        F: Fn(u32, u32) -> Option<T> + Sync,
    {
        self.candidates_observed(max_bucket, verify, || {})
    }

    /// [`candidates`](Self::candidates), calling `band_done` after each band (to show progress).
    pub fn candidates_observed<T, F>(
        &self,
        max_bucket: usize,
        verify: F,
        band_done: impl Fn(),
    ) -> (Vec<T>, CandidateStats)
    where
        T: Send,
        F: Fn(u32, u32) -> Option<T> + Sync,
    {
        let bands = self.params.bands;
        let max_bucket = max_bucket.max(2);
        // Per band, the centers of the buckets linked as stars, by band hash.
        let mut stars: Vec<HashMap<u64, u32>> = Vec::with_capacity(bands);
        let mut entries: Vec<(u64, u32)> = Vec::with_capacity(self.n);
        let mut stats = CandidateStats::default();
        let mut out = Vec::new();
        for band in 0..bands {
            // Sort (hash, doc) and find the buckets with two or more members.
            entries.clear();
            entries.extend((0..self.n).map(|d| (self.hashes[d * bands + band], d as u32)));
            entries.par_sort_unstable();
            let mut groups = Vec::new();
            let mut band_stars = HashMap::new();
            let mut start = 0;
            while start < entries.len() {
                let h = entries[start].0;
                let mut end = start + 1;
                while end < entries.len() && entries[end].0 == h {
                    end += 1;
                }
                if end - start >= 2 {
                    groups.push((start, end));
                    if end - start > max_bucket {
                        band_stars.insert(h, entries[start].1);
                    }
                }
                start = end;
            }
            stars.push(band_stars);

            // Was the pair (a, b) already met in band `b2`, an earlier band they share?
            let met_in = |a: u32, b: u32, b2: usize| -> bool {
                let (ha, hb) = (
                    self.hashes[a as usize * bands + b2],
                    self.hashes[b as usize * bands + b2],
                );
                if ha != hb {
                    return false;
                }
                match stars[b2].get(&ha) {
                    Some(&center) => a == center || b == center,
                    None => true,
                }
            };
            let first_meeting = |a: u32, b: u32| !(0..band).any(|b2| met_in(a, b, b2));

            // Every bucket of the band, in parallel.
            let results: Vec<(Vec<T>, u64, bool)> = groups
                .par_iter()
                .map(|&(s, e)| {
                    let members = &entries[s..e];
                    let mut kept = Vec::new();
                    let mut considered = 0u64;
                    let mut consider = |x: u32, y: u32| {
                        let (a, b) = if x < y { (x, y) } else { (y, x) };
                        if first_meeting(a, b) {
                            considered += 1;
                            if let Some(t) = verify(a, b) {
                                kept.push(t);
                            }
                        }
                    };
                    let oversized = members.len() > max_bucket;
                    if oversized {
                        let center = members[0].1;
                        for &(_, d) in &members[1..] {
                            consider(center, d);
                        }
                    } else {
                        for i in 0..members.len() {
                            for j in i + 1..members.len() {
                                consider(members[i].1, members[j].1);
                            }
                        }
                    }
                    (kept, considered, oversized)
                })
                .collect();
            for (kept, considered, oversized) in results {
                stats.candidates += considered;
                stats.oversized_buckets += oversized as u64;
                out.extend(kept);
            }
            band_done();
        }
        (out, stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::minhash::{Signer, SketchKind, SketchParams, fmix64};
    use std::sync::atomic::{AtomicU64, Ordering};

    /// The half point is where the S-curve is one half; `(1/b)^(1/r)` only approximates it,
    /// from above (the seeds' 20 x 5 example: 0.549, where P is 0.64; P is one half at 0.509).
    #[test]
    fn the_half_point_is_where_the_curve_is_one_half() {
        for bands in [1, 2, 5, 11, 18, 20, 39, 128] {
            for rows in [1, 2, 3, 5, 7, 11, 16] {
                let lsh = LshParams { bands, rows };
                let half = lsh.half_point();
                let p = lsh.candidate_probability(half);
                assert!((p - 0.5).abs() < 1e-12, "{bands} x {rows}: P({half}) = {p}");
                assert!(half <= lsh.threshold() + 1e-12, "{bands} x {rows}");
            }
        }
        assert_eq!(LshParams { bands: 1, rows: 1 }.half_point(), 0.5);
    }

    #[test]
    fn threshold_and_s_curve_match_mmds() {
        let p = LshParams { bands: 20, rows: 5 };
        // MMDS example 3.11: s = 0.8 gives 0.99965.
        assert!((p.candidate_probability(0.8) - 0.99965).abs() < 1e-5);
        assert!((p.threshold() - (1.0f64 / 20.0).powf(0.2)).abs() < 1e-12);
        assert_eq!(p.candidate_probability(0.0), 0.0);
        assert_eq!(p.candidate_probability(1.0), 1.0);
    }

    #[test]
    fn validation_rejects_too_many_slots() {
        let p = LshParams { bands: 16, rows: 9 };
        assert!(p.validate(128).unwrap_err().to_string().contains("144"));
        assert!(LshParams { bands: 0, rows: 8 }.validate(128).is_err());
        assert!(LshParams { bands: 15, rows: 8 }.validate(128).is_ok());
    }

    #[test]
    fn validation_refuses_a_product_that_overflows() {
        // `bands * rows` overflows a usize: refused, not a panic (debug) or a wrapped product
        // that passes (release: 2^63 x 2 is 0).
        for (bands, rows) in [(usize::MAX, 2), (1 << 63, 2), (2, usize::MAX)] {
            match (LshParams { bands, rows }).validate(128) {
                Err(crate::Error::InvalidConfig(p)) => {
                    assert_eq!(
                        p.to_string(),
                        format!("bands {bands} x rows {rows} is more than num_perm 128")
                    );
                    assert_eq!(
                        p.params().collect::<Vec<_>>(),
                        [Param::Bands, Param::Rows, Param::NumPerm]
                    );
                }
                other => panic!("{bands} x {rows}: {other:?}"),
            }
        }
    }

    fn sigs_of(sets: &[Vec<u64>], num_perm: usize) -> Vec<u32> {
        let s = Signer::new(SketchParams {
            kind: SketchKind::Fss,
            num_perm,
            seed: 1,
        })
        .unwrap();
        sets.iter().flat_map(|x| s.sign(x)).collect()
    }

    #[test]
    fn each_candidate_is_considered_once() {
        // Three identical documents share every band: three pairs, each considered once.
        let set: Vec<u64> = (0..50).map(fmix64).collect();
        let other: Vec<u64> = (100..150).map(fmix64).collect();
        let sigs = sigs_of(&[set.clone(), other, set.clone(), set], 64);
        let idx = LshIndex::build(&sigs, 64, LshParams { bands: 8, rows: 8 }).unwrap();
        let calls = AtomicU64::new(0);
        let (mut pairs, stats) = idx.candidates(100, |a, b| {
            calls.fetch_add(1, Ordering::Relaxed);
            Some((a, b))
        });
        pairs.sort();
        assert_eq!(pairs, [(0, 2), (0, 3), (2, 3)]);
        assert_eq!(stats.candidates, 3);
        assert_eq!(calls.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn oversized_buckets_become_stars() {
        let set: Vec<u64> = (0..50).map(fmix64).collect();
        let sets = vec![set; 500];
        let sigs = sigs_of(&sets, 32);
        let idx = LshIndex::build(&sigs, 32, LshParams { bands: 4, rows: 8 }).unwrap();
        let (pairs, stats) = idx.candidates(100, |a, b| Some((a, b)));
        // 499 star edges, not 124,750 pairs, found once across the four bands.
        assert_eq!(pairs.len(), 499);
        assert!(pairs.iter().all(|&(a, _)| a == 0));
        assert_eq!(stats.oversized_buckets, 4);
    }

    #[test]
    fn candidate_rate_follows_the_s_curve_for_b20_r5() {
        // Pairs of known Jaccard s; the observed candidate rate must be within 5 binomial
        // standard errors of 1 - (1 - s^5)^20.
        let p = LshParams { bands: 20, rows: 5 };
        let trials = 400u64;
        for &(n, shared) in &[(200u64, 100u64), (200, 130), (200, 160)] {
            let s = shared as f64 / (2 * n - shared) as f64;
            let mut sets = Vec::new();
            for t in 0..trials {
                let h = |i: u64| fmix64(i ^ (t << 40));
                sets.push((0..n).map(h).collect::<Vec<_>>());
                sets.push((0..shared).chain(n..2 * n - shared).map(h).collect());
            }
            let sigs = sigs_of(&sets, 100);
            let idx = LshIndex::build(&sigs, 100, p).unwrap();
            let (pairs, _) = idx.candidates(1000, |a, b| (b == a + 1 && a % 2 == 0).then_some(()));
            let rate = pairs.len() as f64 / trials as f64;
            let expect = p.candidate_probability(s);
            let se = (expect * (1.0 - expect) / trials as f64).sqrt().max(1e-3);
            assert!(
                (rate - expect).abs() < 5.0 * se,
                "s={s:.3}: rate {rate} vs {expect}"
            );
        }
    }
}
