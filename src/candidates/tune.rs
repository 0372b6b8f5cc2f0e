//! Choosing bands and rows, and explaining the choice.
//!
//! A pair of Jaccard similarity `s` becomes an LSH candidate with probability
//! `P(s) = 1 - (1 - s^r)^b` (the S-curve, MMDS 3.4.2). For a threshold `T`, the area under `P`
//! left of `T` measures false positives (candidates that verification must throw away) and the
//! area under `1 - P` right of `T` measures false negatives (pairs lost for good: no later stage
//! can bring back a pair that never became a candidate). [`tune`] picks the `(b, r)` with
//! `b * r <= num_perm` that minimizes `fp_weight * FP + fn_weight * FN`.
//!
//! The default weights, 1 and 100, say that a lost pair costs a hundred times what a wasted
//! candidate costs. That is what a user means by `--threshold T` ("find the pairs with Jaccard
//! at least T"): a false candidate costs one signature comparison, a false negative is a wrong answer.
//! With 128 slots these weights keep the candidate-stage loss at `T + 0.05` under 0.4% for every
//! `T` from 0.1 to 0.95 (a unit test checks it), so the S-curve sits well left of `T`; the
//! default `auto` verification then removes the extra candidates by signature, or by the exact
//! Jaccard near `T`.
//!
//! [`Tuning`] explains a banding: the curve, the expected false-negative rate of the candidate
//! stage and of verification, and the memory it needs.

use serde::Serialize;

use crate::candidates::lsh::LshParams;
use crate::error::{Param, Result};
use crate::sketch::minhash::MAX_NUM_PERM;
use crate::verify::{Verifier, VerifyMode};

/// Default weight of the false-positive area.
pub const DEFAULT_FP_WEIGHT: f64 = 1.0;
/// Default weight of the false-negative area.
pub const DEFAULT_FN_WEIGHT: f64 = 100.0;

/// Simpson intervals per integral: the curve is a smooth polynomial, so 256 intervals give the
/// areas to far better than the differences between neighbouring bandings.
const INTERVALS: usize = 256;

/// How much a false positive and a false negative weigh.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "pipeline", derive(schemars::JsonSchema))]
pub struct Weights {
    /// Weight of the area under the S-curve below the threshold.
    pub fp: f64,
    /// Weight of the area above the S-curve above the threshold.
    #[serde(rename = "fn")]
    pub fn_: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            fp: DEFAULT_FP_WEIGHT,
            fn_: DEFAULT_FN_WEIGHT,
        }
    }
}

/// Simpson's rule for `f` on `[a, b]`.
fn integrate(f: impl Fn(f64) -> f64, a: f64, b: f64) -> f64 {
    if b <= a {
        return 0.0;
    }
    let h = (b - a) / INTERVALS as f64;
    let mut sum = f(a) + f(b);
    for i in 1..INTERVALS {
        let w = if i % 2 == 1 { 4.0 } else { 2.0 };
        sum += w * f(a + i as f64 * h);
    }
    sum * h / 3.0
}

/// The area under the S-curve for `s < threshold`: how many dissimilar pairs become candidates.
pub(crate) fn false_positive_area(p: LshParams, threshold: f64) -> f64 {
    integrate(|s| p.candidate_probability(s), 0.0, threshold)
}

/// The area above the S-curve for `s >= threshold`: how many similar pairs are missed.
pub(crate) fn false_negative_area(p: LshParams, threshold: f64) -> f64 {
    integrate(|s| 1.0 - p.candidate_probability(s), threshold, 1.0)
}

/// The weighted cost the tuner minimizes.
pub fn cost(p: LshParams, threshold: f64, w: Weights) -> f64 {
    w.fp * false_positive_area(p, threshold) + w.fn_ * false_negative_area(p, threshold)
}

/// Checks what [`tune`] and [`Tuning::explain`] are given, besides the banding: a threshold in
/// [0, 1], weights that are numbers >= 0 and not both 0, and 1 to [`MAX_NUM_PERM`] slots.
fn check(threshold: f64, num_perm: usize, weights: Weights) -> Result<()> {
    if !(0.0..=1.0).contains(&threshold) {
        return Err(crate::invalid![
            Param::Threshold,
            format!(" must be between 0 and 1, not {threshold}")
        ]);
    }
    for (name, w) in [
        (Param::FpWeight, weights.fp),
        (Param::FnWeight, weights.fn_),
    ] {
        if !(w.is_finite() && w >= 0.0) {
            return Err(crate::invalid![
                name,
                format!(" must be a number >= 0, not {w}")
            ]);
        }
    }
    if weights.fp == 0.0 && weights.fn_ == 0.0 {
        return Err(crate::invalid![
            Param::FpWeight,
            " and ",
            Param::FnWeight,
            " cannot both be 0"
        ]);
    }
    if num_perm == 0 {
        return Err(crate::invalid![Param::NumPerm, " must be at least 1"]);
    }
    // Checked before any work: the tables of the tuner and of [`Tuning`] grow with it.
    if num_perm > MAX_NUM_PERM {
        return Err(crate::invalid![
            Param::NumPerm,
            format!(" must be between 1 and {MAX_NUM_PERM}, not {num_perm}")
        ]);
    }
    Ok(())
}

/// Chooses bands and rows for `threshold` and `num_perm` slots by minimizing [`cost`] over every
/// `b * r <= num_perm`. A fixed `bands` or `rows` is kept and only the other one is chosen; when
/// both are fixed they are returned as they are (after validation). Ties go to the banding that
/// uses more slots, then to more rows, so the result is deterministic.
pub fn tune(
    threshold: f64,
    num_perm: usize,
    weights: Weights,
    bands: Option<usize>,
    rows: Option<usize>,
) -> Result<LshParams> {
    check(threshold, num_perm, weights)?;
    if let (Some(b), Some(r)) = (bands, rows) {
        let p = LshParams { bands: b, rows: r };
        p.validate(num_perm)?;
        return Ok(p);
    }
    let mut best: Option<(f64, LshParams)> = None;
    let bs: Vec<usize> = match bands {
        Some(b) => vec![b],
        None => (1..=num_perm).collect(),
    };
    for b in bs {
        let rs: Vec<usize> = match rows {
            Some(r) => vec![r],
            None => (1..=num_perm / b.max(1)).collect(),
        };
        for r in rs {
            let p = LshParams { bands: b, rows: r };
            if p.validate(num_perm).is_err() {
                continue;
            }
            let c = cost(p, threshold, weights);
            let better = match best {
                None => true,
                Some((bc, bp)) => {
                    c < bc - 1e-12
                        || (c <= bc + 1e-12 && (b * r, r) > (bp.bands * bp.rows, bp.rows))
                }
            };
            if better {
                best = Some((c, p));
            }
        }
    }
    match best {
        Some((_, p)) => Ok(p),
        None => {
            // Only when a fixed bands or rows leaves no room: report it as validation would.
            LshParams {
                bands: bands.unwrap_or(1),
                rows: rows.unwrap_or(1),
            }
            .validate(num_perm)?;
            Err(crate::invalid![
                "no banding fits in ",
                Param::NumPerm,
                format!(" {num_perm}")
            ])
        }
    }
}

/// Slots of a signature that no LSH band covers, and why: they do not help find candidates but
/// still count in the signature estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unbanded {
    /// Slots per signature.
    pub num_perm: usize,
    /// The banding.
    pub lsh: LshParams,
    /// Why the banding leaves them out.
    pub reason: UnbandedReason,
}

/// Why a banding leaves slots out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnbandedReason {
    /// The bands and rows were given, not tuned.
    Given,
    /// `num_perm` is not a multiple of the rows the tuner chose.
    NotAMultiple,
    /// One more band would add more false candidates than it saves false negatives.
    NotWorthABand,
}

impl Unbanded {
    /// The unbanded slots of `lsh` over `num_perm` slots, or `None` when every slot is banded.
    /// `tuned` says whether the tuner chose the banding (otherwise it was given).
    /// [`Error::InvalidConfig`](crate::Error::InvalidConfig) for a banding that does not fit
    /// ([`LshParams::validate`]).
    pub fn of(num_perm: usize, lsh: LshParams, tuned: bool) -> Result<Option<Unbanded>> {
        lsh.validate(num_perm)?;
        let used = lsh.bands * lsh.rows;
        if used == num_perm {
            return Ok(None);
        }
        let reason = if !tuned {
            UnbandedReason::Given
        } else if lsh.bands == num_perm / lsh.rows {
            UnbandedReason::NotAMultiple
        } else {
            UnbandedReason::NotWorthABand
        };
        Ok(Some(Unbanded {
            num_perm,
            lsh,
            reason,
        }))
    }

    /// The explanation, with `given` naming how bands and rows were given and `tuner` how to see
    /// the tuner's trade-off (the binary names its flags and command; [`Display`] does not).
    ///
    /// [`Display`]: std::fmt::Display
    ///
    /// Its fields are public, so it may hold a banding [`of`](Self::of) would refuse: the words
    /// are then wrong, but it does not panic.
    pub fn explain(&self, given: &str, tuner: &str) -> String {
        let (num_perm, lsh) = (self.num_perm, self.lsh);
        let used = lsh.bands.saturating_mul(lsh.rows);
        let slots = if num_perm.saturating_sub(used) == 1 {
            format!("slot {used} is")
        } else {
            format!("slots {used}..{} are", num_perm.saturating_sub(1))
        };
        let why = match self.reason {
            UnbandedReason::Given => format!("{given} were given so"),
            UnbandedReason::NotAMultiple => format!(
                "{num_perm} is not a multiple of the {} rows chosen for this threshold",
                lsh.rows
            ),
            UnbandedReason::NotWorthABand => format!(
                "more bands of {} rows would add more false candidates than they save false \
                 negatives at this threshold (see {tuner})",
                lsh.rows
            ),
        };
        format!(
            "{slots} in no LSH band ({} bands x {} rows = {used} of {num_perm} slots) because {why}; \
             they do not help find candidates but still count in the signature estimate",
            lsh.bands, lsh.rows
        )
    }
}

impl std::fmt::Display for Unbanded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.explain("the bands and rows", "the tuner's cost"))
    }
}

/// The chance that a pair of similarity `s` is lost, split by stage.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "pipeline", derive(schemars::JsonSchema))]
pub struct Loss {
    /// The similarity.
    pub s: f64,
    /// Probability of never becoming a candidate: `(1 - s^r)^b`.
    pub candidate: f64,
    /// Probability of becoming a candidate and then being rejected by the signature.
    pub verification: f64,
    /// The sum: the expected false-negative rate for pairs at `s`.
    pub total: f64,
}

/// The expected loss of pairs with Jaccard exactly `s >= threshold`, computed exactly under the
/// MinHash model: each slot agrees with probability `s`, independently. (FSS and OPH slots are
/// slightly negatively correlated, which only narrows the estimate.) A pair is reported when some
/// band agrees in all its rows and the verifier does not reject its agreement count; above the
/// threshold the exact Jaccard never rejects, so the verifier loses only the pairs whose count
/// falls below [`Verifier::min_matches`].
pub(crate) fn expected_loss(s: f64, num_perm: usize, lsh: LshParams, verifier: &Verifier) -> Loss {
    let min = verifier.min_matches();
    let candidate = (1.0 - s.powi(lsh.rows as i32)).powi(lsh.bands as i32);
    // dist[m][full]: probability of m agreeing slots so far, and whether some band agreed fully.
    let mut dist = vec![[0.0f64; 2]; num_perm + 1];
    dist[0][0] = 1.0;
    let mut top = 0;
    let band = binomial(lsh.rows, s);
    for _ in 0..lsh.bands {
        let mut next = vec![[0.0f64; 2]; num_perm + 1];
        for (m, d) in dist.iter().enumerate().take(top + 1) {
            for (k, &pk) in band.iter().enumerate() {
                let full = (k == lsh.rows) as usize;
                next[m + k][1] += d[1] * pk;
                next[m + k][full] += d[0] * pk;
            }
        }
        dist = next;
        top += lsh.rows;
    }
    let rest = binomial(num_perm - lsh.bands * lsh.rows, s);
    let mut rejected = 0.0;
    for (m, d) in dist.iter().enumerate().take(top + 1) {
        for (k, &pk) in rest.iter().enumerate() {
            if m + k < min {
                rejected += d[1] * pk;
            }
        }
    }
    Loss {
        s,
        candidate,
        verification: rejected,
        total: candidate + rejected,
    }
}

/// The binomial distribution of `n` trials of probability `p`.
fn binomial(n: usize, p: f64) -> Vec<f64> {
    let mut d = vec![0.0; n + 1];
    d[0] = 1.0;
    for i in 0..n {
        for k in (0..=i + 1).rev() {
            let stay = d[k] * (1.0 - p);
            let moved = if k > 0 { d[k - 1] * p } else { 0.0 };
            d[k] = stay + moved;
        }
    }
    d
}

/// Memory an `ndup scan` needs per million documents with the default sketches, by structure.
/// The figures follow the data structures of the scan and of [`crate::candidates::lsh`]: one
/// `u32` per signature slot, one `u64` band hash per band in
/// [`crate::candidates::lsh::LshIndex`], and, while candidates are enumerated, every band sorted
/// as `(u64 hash, u32 document)` entries (16 bytes with padding).
/// Document records are an estimate: the id and the path are kept (two strings of the id's
/// length plus their headers).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "pipeline", derive(schemars::JsonSchema))]
pub struct Memory {
    /// Signatures: `4 * num_perm` bytes per document.
    pub signatures: u64,
    /// Band hashes of the LSH index: `8 * bands` bytes per document.
    pub band_hashes: u64,
    /// Sorted band buckets while candidates are enumerated: `16 * bands` bytes per document.
    pub band_buckets: u64,
    /// Document records (id, path, index), assuming ids of `ASSUMED_ID_BYTES` bytes.
    pub documents: u64,
    /// The sum.
    pub total: u64,
}

/// The average id (path) length assumed by [`Memory`].
pub(crate) const ASSUMED_ID_BYTES: u64 = 40;

impl Memory {
    /// The estimate for one million documents.
    pub(crate) fn per_million(num_perm: usize, lsh: LshParams) -> Memory {
        const N: u64 = 1_000_000;
        let signatures = N * 4 * num_perm as u64;
        let band_hashes = N * 8 * lsh.bands as u64;
        let band_buckets = N * 16 * lsh.bands as u64;
        // Two Strings (24-byte headers) of the id's length, the `empty` flag padded to 8, and the
        // u32 that maps a signature back to its document.
        let documents = N * (2 * (24 + ASSUMED_ID_BYTES) + 8 + 4);
        Memory {
            signatures,
            band_hashes,
            band_buckets,
            documents,
            total: signatures + band_hashes + band_buckets + documents,
        }
    }
}

/// One point of the S-curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "pipeline", derive(schemars::JsonSchema))]
pub struct CurvePoint {
    /// Jaccard similarity.
    pub s: f64,
    /// Probability of becoming a candidate.
    pub p: f64,
}

/// Everything `ndup tune` shows about a banding.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "pipeline", derive(schemars::JsonSchema))]
pub struct Tuning {
    /// The threshold the banding is for.
    pub threshold: f64,
    /// Slots per signature.
    pub num_perm: usize,
    /// Bands.
    pub bands: usize,
    /// Rows per band.
    pub rows: usize,
    /// Slots in no band.
    pub unbanded_slots: usize,
    /// Why slots are unbanded, when some are.
    pub unbanded_note: Option<String>,
    /// The same, typed (for a caller that words it its own way).
    #[serde(skip)]
    #[cfg_attr(feature = "pipeline", schemars(skip))]
    pub unbanded: Option<Unbanded>,
    /// Whether the tuner chose the banding (false: bands and rows were given).
    pub tuned: bool,
    /// `(1/b)^(1/r)`, the usual approximation of the S-curve's threshold (a pair this similar
    /// becomes a candidate with probability a little above one half).
    pub lsh_threshold: f64,
    /// The similarity at which a pair becomes a candidate with probability exactly one half.
    pub half_point: f64,
    /// The weights of the tuner.
    pub weights: Weights,
    /// The weighted cost of this banding.
    pub cost: f64,
    /// The verification mode the loss figures assume.
    pub verify: VerifyMode,
    /// `P(candidate)` at s = 0.1, 0.2, ..., 1.0.
    pub curve: Vec<CurvePoint>,
    /// Expected false-negative rates at `T` and at `T + 0.05` (when at most 1).
    pub false_negatives: Vec<Loss>,
    /// Memory per million documents.
    pub memory_per_million: Memory,
}

impl Tuning {
    /// Explains `lsh` for `threshold` with `num_perm` slots and the given verification.
    /// [`Error::InvalidConfig`](crate::Error::InvalidConfig) for what [`tune`] would refuse: a
    /// threshold outside [0, 1], weights that are negative or both 0, `num_perm` outside 1 to
    /// [`MAX_NUM_PERM`], or a banding wider than `num_perm` slots.
    pub fn explain(
        threshold: f64,
        num_perm: usize,
        lsh: LshParams,
        weights: Weights,
        verify: VerifyMode,
        tuned: bool,
    ) -> Result<Tuning> {
        check(threshold, num_perm, weights)?;
        // Validates the banding.
        let unbanded = Unbanded::of(num_perm, lsh, tuned)?;
        let verifier = Verifier::new(verify, threshold, num_perm);
        let curve = (1..=10)
            .map(|i| {
                let s = i as f64 / 10.0;
                CurvePoint {
                    s,
                    p: lsh.candidate_probability(s),
                }
            })
            .collect();
        let mut points = vec![threshold];
        if threshold + 0.05 <= 1.0 + 1e-9 {
            // Rounded to 12 decimals: 0.8 + 0.05 is 0.8500000000000001 in binary, and the
            // point is printed (JSON) for a reader who asked about T + 0.05.
            points.push((((threshold + 0.05) * 1e12).round() / 1e12).min(1.0));
        }
        let false_negatives = points
            .into_iter()
            .map(|s| expected_loss(s, num_perm, lsh, &verifier))
            .collect();
        Ok(Tuning {
            threshold,
            num_perm,
            bands: lsh.bands,
            rows: lsh.rows,
            unbanded_slots: num_perm - lsh.bands * lsh.rows,
            unbanded_note: unbanded.map(|u| u.to_string()),
            unbanded,
            tuned,
            lsh_threshold: lsh.threshold(),
            half_point: lsh.half_point(),
            weights,
            cost: cost(lsh, threshold, weights),
            verify,
            curve,
            false_negatives,
            memory_per_million: Memory::per_million(num_perm, lsh),
        })
    }

    /// A text plot of the S-curve: `height` rows for P from 1 down to 0, `width` columns for s
    /// from 0 to 1, the threshold marked with `|`. Either size is at least 2 (the two ends of
    /// its scale): a smaller one is taken as 2.
    pub fn plot(&self, width: usize, height: usize) -> String {
        let (width, height) = (width.max(2), height.max(2));
        let lsh = LshParams {
            bands: self.bands,
            rows: self.rows,
        };
        // Clamped for a hand-made `Tuning` whose threshold is outside [0, 1].
        let t_col = ((self.threshold * (width - 1) as f64).round() as usize).min(width - 1);
        let mut grid = vec![vec![' '; width]; height];
        for row in grid.iter_mut() {
            row[t_col] = '|';
        }
        for (col, _) in (0..width).enumerate() {
            let s = col as f64 / (width - 1) as f64;
            let p = lsh.candidate_probability(s);
            let row = (((1.0 - p) * (height - 1) as f64).round() as usize).min(height - 1);
            grid[row][col] = '*';
        }
        let mut out = String::new();
        for (i, row) in grid.iter().enumerate() {
            let label = match i {
                0 => "1.0",
                _ if i == height - 1 => "0.0",
                _ if i == (height - 1) / 2 && (height - 1).is_multiple_of(2) => "0.5",
                _ => "   ",
            };
            out += &format!("{label} +{}\n", row.iter().collect::<String>().trim_end());
        }
        out += &format!("     {}\n", "-".repeat(width));
        let mut axis = vec![' '; width];
        for (i, lbl) in ["0", ".2", ".4", ".6", ".8", "1"].iter().enumerate() {
            let col = (i as f64 * 0.2 * (width - 1) as f64).round() as usize;
            for (j, c) in lbl.chars().enumerate() {
                if col + j < width {
                    axis[col + j] = c;
                }
            }
        }
        out += &format!("     {}   s\n", axis.iter().collect::<String>().trim_end());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lsh(bands: usize, rows: usize) -> LshParams {
        LshParams { bands, rows }
    }

    /// The objective computed independently, with a fine midpoint sum.
    fn brute_cost(p: LshParams, t: f64, w: Weights) -> f64 {
        let n = 20_000;
        let mut fp = 0.0;
        let mut fneg = 0.0;
        for i in 0..n {
            let s = (i as f64 + 0.5) / n as f64;
            let c = p.candidate_probability(s);
            if s < t {
                fp += c;
            } else {
                fneg += 1.0 - c;
            }
        }
        (w.fp * fp + w.fn_ * fneg) / n as f64
    }

    #[test]
    fn areas_match_closed_forms() {
        // b = r = 1: P(s) = s, so FP = T^2/2 and FN = (1-T)^2/2.
        let p = lsh(1, 1);
        assert!((false_positive_area(p, 0.6) - 0.18).abs() < 1e-12);
        assert!((false_negative_area(p, 0.6) - 0.08).abs() < 1e-12);
        // b = 1, r = 2: FP = T^3/3.
        assert!((false_positive_area(lsh(1, 2), 0.9) - 0.243).abs() < 1e-12);
    }

    #[test]
    fn tuner_agrees_with_a_brute_force_grid_search() {
        for &(t, n, w) in &[
            (0.5, 128, Weights::default()),
            (0.8, 128, Weights::default()),
            (0.9, 128, Weights::default()),
            (0.8, 64, Weights { fp: 1.0, fn_: 1.0 }),
            (0.3, 100, Weights { fp: 2.0, fn_: 5.0 }),
        ] {
            let chosen = tune(t, n, w, None, None).unwrap();
            let mut best = f64::INFINITY;
            for b in 1..=n {
                for r in 1..=n / b {
                    best = best.min(brute_cost(lsh(b, r), t, w));
                }
            }
            let c = brute_cost(chosen, t, w);
            assert!(
                c <= best * (1.0 + 1e-3) + 1e-9,
                "T={t} n={n}: chose {chosen:?} cost {c}, grid minimum {best}"
            );
        }
    }

    #[test]
    fn default_choices_for_common_thresholds() {
        let t = |x| tune(x, 128, Weights::default(), None, None).unwrap();
        assert_eq!(t(0.5), lsh(39, 3));
        assert_eq!(t(0.8), lsh(18, 7));
        assert_eq!(t(0.9), lsh(11, 11));
    }

    #[test]
    fn default_weights_lose_under_half_a_percent_at_t_plus_0_05() {
        // The guarantee the accuracy targets rest on, for every threshold a user might pick.
        for i in 2..=19 {
            let t = i as f64 * 0.05;
            let p = tune(t, 128, Weights::default(), None, None).unwrap();
            let miss = 1.0 - p.candidate_probability((t + 0.05).min(1.0));
            assert!(miss < 0.004, "T={t}: {p:?} misses {miss}");
        }
    }

    #[test]
    fn fixed_bands_or_rows_are_kept() {
        let w = Weights::default();
        assert_eq!(tune(0.8, 128, w, Some(16), Some(8)).unwrap(), lsh(16, 8));
        let p = tune(0.8, 128, w, Some(20), None).unwrap();
        assert_eq!(p.bands, 20);
        assert!(p.rows * 20 <= 128);
        let p = tune(0.8, 128, w, None, Some(4)).unwrap();
        assert_eq!(p.rows, 4);
        assert!(tune(0.8, 128, w, Some(200), None).is_err());
        assert!(tune(0.8, 128, w, Some(16), Some(9)).is_err());
        assert!(tune(1.5, 128, w, None, None).is_err());
        assert!(tune(0.8, 128, Weights { fp: -1.0, fn_: 1.0 }, None, None).is_err());
        assert!(tune(0.8, 128, Weights { fp: 0.0, fn_: 0.0 }, None, None).is_err());
    }

    #[test]
    fn higher_fn_weight_moves_the_curve_left() {
        let loose = tune(0.8, 128, Weights { fp: 1.0, fn_: 1.0 }, None, None).unwrap();
        let strict = tune(0.8, 128, Weights::default(), None, None).unwrap();
        assert!(strict.threshold() < loose.threshold());
    }

    #[test]
    fn unbanded_slots_are_explained() {
        let unbanded_note = |n, l, tuned| Unbanded::of(n, l, tuned).unwrap().map(|u| u.to_string());
        assert_eq!(unbanded_note(128, lsh(16, 8), true), None);
        let note = unbanded_note(128, lsh(18, 7), true).unwrap();
        assert!(
            note.starts_with("slots 126..127 are in no LSH band"),
            "{note}"
        );
        assert!(
            note.contains("128 is not a multiple of the 7 rows"),
            "{note}"
        );
        assert!(note.contains("still count in the signature estimate"));
        let note = unbanded_note(128, lsh(39, 3), true).unwrap();
        assert!(note.contains("slots 117..127") && note.contains("more bands of 3 rows"));
        let note = unbanded_note(128, lsh(15, 8), false).unwrap();
        assert!(note.contains("slots 120..127") && note.contains("the bands and rows were given"));
        let given = Unbanded::of(128, lsh(15, 8), false).unwrap().unwrap();
        assert_eq!(given.reason, UnbandedReason::Given);
        assert!(
            given
                .explain("B and R", "T")
                .contains("because B and R were given so")
        );
        assert!(
            unbanded_note(9, lsh(4, 2), true)
                .unwrap()
                .starts_with("slot 8 is")
        );
    }

    #[test]
    fn loss_model_matches_the_s_curve_and_the_verifier() {
        let p = lsh(18, 7);
        let none = Verifier::new(VerifyMode::None, 0.8, 128);
        let l = expected_loss(0.85, 128, p, &none);
        assert!((l.candidate - (1.0 - p.candidate_probability(0.85))).abs() < 1e-15);
        assert_eq!(l.verification, 0.0);
        // Signature verification at T loses about half of the pairs at exactly T.
        let sig = Verifier::new(VerifyMode::Signature, 0.8, 128);
        let l = expected_loss(0.8, 128, p, &sig);
        assert!(l.verification > 0.3 && l.verification < 0.6, "{l:?}");
        // auto loses almost nothing at T + 0.05.
        let auto = Verifier::new(VerifyMode::Auto, 0.8, 128);
        let l = expected_loss(0.85, 128, p, &auto);
        assert!(l.verification < 1e-5, "{l:?}");
        assert!(l.total < 0.002, "{l:?}");
    }

    #[test]
    fn binomial_sums_to_one() {
        let d = binomial(10, 0.3);
        assert!((d.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((d[0] - 0.7f64.powi(10)).abs() < 1e-15);
    }

    #[test]
    fn memory_follows_the_data_structures() {
        let m = Memory::per_million(128, lsh(16, 8));
        assert_eq!(m.signatures, 512_000_000);
        assert_eq!(m.band_hashes, 128_000_000);
        assert_eq!(m.band_buckets, 256_000_000);
        assert_eq!(
            m.total,
            m.signatures + m.band_hashes + m.band_buckets + m.documents
        );
    }

    #[test]
    fn explanation_and_plot() {
        let t = Tuning::explain(
            0.8,
            128,
            lsh(18, 7),
            Weights::default(),
            VerifyMode::Auto,
            true,
        )
        .unwrap();
        assert_eq!(t.curve.len(), 10);
        assert_eq!(t.curve[9].p, 1.0);
        assert_eq!(t.false_negatives.len(), 2);
        assert!((t.false_negatives[1].s - 0.85).abs() < 1e-12);
        assert_eq!(t.unbanded_slots, 2);
        let plot = t.plot(41, 11);
        assert_eq!(plot.lines().count(), 13);
        assert!(plot.lines().next().unwrap().starts_with("1.0 +"));
        assert!(plot.contains('*') && plot.contains('|'));
        // T = 1.0 has no T + 0.05 point.
        let t = Tuning::explain(
            1.0,
            128,
            lsh(8, 16),
            Weights::default(),
            VerifyMode::Auto,
            true,
        )
        .unwrap();
        assert_eq!(t.false_negatives.len(), 1);
    }

    /// The `InvalidConfig` problem of `r`, as the library words it.
    fn problem<T: std::fmt::Debug>(r: Result<T>) -> String {
        match r {
            Err(crate::Error::InvalidConfig(p)) => p.to_string(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_banding_too_large_for_a_usize_is_refused() {
        // bands x rows overflows: refused as a banding wider than num_perm. With one of them
        // fixed, the search meets products that overflow (2 x usize::MAX) and skips them.
        let w = Weights::default();
        assert_eq!(
            problem(tune(0.5, 128, w, Some(usize::MAX), Some(2))),
            format!("bands {} x rows 2 is more than num_perm 128", usize::MAX)
        );
        assert_eq!(
            problem(tune(0.5, 128, w, None, Some(usize::MAX))),
            format!(
                "bands 1 x rows {} = {} is more than num_perm 128",
                usize::MAX,
                usize::MAX
            )
        );
        assert_eq!(
            problem(tune(0.5, 128, w, Some(usize::MAX), None)),
            format!(
                "bands {} x rows 1 = {} is more than num_perm 128",
                usize::MAX,
                usize::MAX
            )
        );
    }

    #[test]
    fn unbanded_of_refuses_a_banding_that_does_not_fit() {
        assert_eq!(
            problem(Unbanded::of(128, lsh(1, 0), true)),
            "bands and rows must be at least 1"
        );
        assert_eq!(
            problem(Unbanded::of(64, lsh(10, 10), false)),
            "bands 10 x rows 10 = 100 is more than num_perm 64"
        );
        assert_eq!(
            problem(Unbanded::of(128, lsh(usize::MAX, 2), true)),
            format!("bands {} x rows 2 is more than num_perm 128", usize::MAX)
        );
        // A hand-made one, wider than its slots, is worded wrongly but does not panic.
        let odd = Unbanded {
            num_perm: 0,
            lsh: lsh(usize::MAX, 2),
            reason: UnbandedReason::Given,
        };
        assert!(odd.to_string().contains("were given"));
    }

    #[test]
    fn explain_refuses_what_tune_refuses() {
        let explain =
            |t, n, l| Tuning::explain(t, n, l, Weights::default(), VerifyMode::Auto, false);
        assert_eq!(
            problem(explain(0.5, 64, lsh(10, 10))),
            "bands 10 x rows 10 = 100 is more than num_perm 64"
        );
        assert_eq!(
            problem(explain(0.5, 128, lsh(usize::MAX, 2))),
            format!("bands {} x rows 2 is more than num_perm 128", usize::MAX)
        );
        assert_eq!(
            problem(explain(0.5, 0, lsh(1, 1))),
            "num_perm must be at least 1"
        );
        assert_eq!(
            problem(explain(0.5, MAX_NUM_PERM + 1, lsh(1, 1))),
            format!(
                "num_perm must be between 1 and {MAX_NUM_PERM}, not {}",
                MAX_NUM_PERM + 1
            )
        );
        assert_eq!(
            problem(explain(f64::NAN, 128, lsh(16, 8))),
            "threshold must be between 0 and 1, not NaN"
        );
        assert_eq!(
            problem(Tuning::explain(
                0.5,
                128,
                lsh(16, 8),
                Weights { fp: -1.0, fn_: 1.0 },
                VerifyMode::Auto,
                false
            )),
            "fp_weight must be a number >= 0, not -1"
        );
        assert_eq!(explain(0.5, 64, lsh(8, 8)).unwrap().unbanded_slots, 0);
    }

    #[test]
    fn a_plot_is_at_least_two_by_two() {
        let t = Tuning::explain(
            0.5,
            128,
            lsh(39, 3),
            Weights::default(),
            VerifyMode::Auto,
            true,
        )
        .unwrap();
        let two = t.plot(2, 2);
        for (w, h) in [(0, 0), (1, 1), (0, 2), (2, 0)] {
            assert_eq!(t.plot(w, h), two, "{w} x {h}");
        }
        // Two rows and the axis; the curve starts at 0 and ends at 1.
        assert_eq!(two.lines().count(), 4, "{two}");
        assert_eq!(t.plot(10, 0).lines().count(), 4);
        assert_eq!(t.plot(0, 5).lines().count(), 7);
        // A hand-made tuning with a threshold out of range: the mark is kept in the plot.
        let odd = Tuning {
            threshold: 7.0,
            ..t
        };
        assert_eq!(odd.plot(5, 3).lines().nth(1), Some("0.5 + *  |"));
    }
}
