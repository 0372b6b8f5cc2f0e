//! Stage 5: verification of candidate pairs.
//!
//! LSH only proposes pairs. Each candidate is then judged:
//! - `signature`: keep it when the signatures agree in at least `T` of their slots (MMDS 3.4.3
//!   step 6);
//! - `exact`: compute the exact Jaccard similarity of the two shingle sets and keep it when that is
//!   at least `T` (step 7). Candidates whose estimate is more than four standard errors below `T`
//!   are dropped without reading the documents again: a pair at exactly `T` falls there less than
//!   once in 30,000;
//! - `auto` (default): the signature decides when it is clear, more than three standard errors
//!   from `T`, and the exact Jaccard decides the rest. With 128 slots the estimate of a pair at
//!   0.85 has a standard error near 0.03, so a plain signature test at 0.8 would drop about 6% of
//!   such pairs; `auto` drops fewer than 1 in 700 of the pairs at `T` itself, at the cost of
//!   re-reading only the pairs near the threshold;
//! - `none`: keep every candidate.
//!
//! Bag (multiset) similarities in both definitions of MMDS 3.1.3 are here too, for
//! `ndup compare`.
//!
//! The exact measures work on sorted, distinct shingle hashes (see
//! [`Shingler::hash_set`](crate::text::shingle::Shingler::hash_set)).

use serde::{Deserialize, Serialize};

use crate::join::Threshold;
use crate::sketch::minhash::standard_error;

/// How candidate pairs are verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "pipeline", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum VerifyMode {
    /// Signature when decisive, exact Jaccard near the threshold.
    Auto,
    /// Signature agreement only.
    Signature,
    /// Exact Jaccard of the shingle sets.
    Exact,
    /// Every candidate is reported.
    None,
}

impl VerifyMode {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            VerifyMode::Auto => "auto",
            VerifyMode::Signature => "signature",
            VerifyMode::Exact => "exact",
            VerifyMode::None => "none",
        }
    }
}

/// What the signature says about a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Report the pair.
    Accept,
    /// Drop the pair.
    Reject,
    /// The exact Jaccard must decide.
    Exact,
}

/// Decides candidates from the number of agreeing slots.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Verifier {
    mode: VerifyMode,
    threshold: f64,
    /// The same threshold as an exact fraction: what "at least T" means, here as in `--exact`.
    exact: Threshold,
    num_perm: usize,
    /// Agreeing slots needed for an estimate >= threshold.
    at_threshold: usize,
    /// At or above: accepted without exact check (auto).
    sure_accept: usize,
    /// Below: rejected without exact check (auto, exact).
    sure_reject: usize,
}

/// Standard errors between the threshold and a decision the signature may take alone in `auto`.
pub(crate) const AUTO_Z: f64 = 3.0;
/// Standard errors below the threshold under which `exact` skips the exact check.
pub(crate) const EXACT_PREFILTER_Z: f64 = 4.0;

impl Verifier {
    /// A verifier for `threshold` with signatures of `num_perm` slots.
    pub fn new(mode: VerifyMode, threshold: f64, num_perm: usize) -> Self {
        let k = num_perm as f64;
        // Thresholds are validated before a verifier is made; one outside [0, 1] is clamped so
        // that making one cannot fail.
        let exact = Threshold::from_f64(threshold).unwrap_or_else(|_| {
            Threshold::from_f64(if threshold < 0.0 { 0.0 } else { 1.0 }).expect("in range")
        });
        // The smallest count m with m / k >= threshold, in integers like every other test of the
        // threshold (0.8 is 4/5: 102.4 slots of 128, so 103).
        let at_threshold = exact.ceil_of(num_perm as u64) as usize;
        // One slot of slack: the error of a 0/1 average is never finer than 1/k.
        let se = standard_error(threshold, num_perm).max(1.0 / k);
        let count = |s: f64| ((s * k) - 1e-9).ceil().clamp(0.0, k + 1.0) as usize;
        let sure_accept = count(threshold + AUTO_Z * se);
        let sure_reject = match mode {
            VerifyMode::Exact => count(threshold - EXACT_PREFILTER_Z * se),
            _ => count(threshold - AUTO_Z * se),
        };
        Verifier {
            mode,
            threshold,
            exact,
            num_perm,
            at_threshold,
            sure_accept,
            sure_reject,
        }
    }

    /// The threshold.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    /// Judges a candidate whose signatures agree in `matches` slots.
    pub fn decide(&self, matches: usize) -> Decision {
        debug_assert!(matches <= self.num_perm);
        match self.mode {
            VerifyMode::None => Decision::Accept,
            VerifyMode::Signature if matches >= self.at_threshold => Decision::Accept,
            VerifyMode::Signature => Decision::Reject,
            VerifyMode::Exact if matches < self.sure_reject => Decision::Reject,
            VerifyMode::Exact => Decision::Exact,
            VerifyMode::Auto if matches >= self.sure_accept => Decision::Accept,
            VerifyMode::Auto if matches < self.sure_reject => Decision::Reject,
            VerifyMode::Auto => Decision::Exact,
        }
    }

    /// The fewest agreeing slots a candidate can have and still be reported (below it the
    /// signature rejects the pair without an exact check).
    pub(crate) fn min_matches(&self) -> usize {
        match self.mode {
            VerifyMode::None => 0,
            VerifyMode::Signature => self.at_threshold,
            VerifyMode::Exact | VerifyMode::Auto => self.sure_reject,
        }
    }

    /// Judges a candidate from an estimate made of `n` independent samples, for sketches whose
    /// sample size varies from pair to pair (the shingle samples of [`crate::sketch::sample`]). The same
    /// rules as [`Verifier::decide`], with the standard error of `n` samples.
    pub(crate) fn decide_estimate(&self, estimate: f64, n: usize) -> Decision {
        let n = n.max(1) as f64;
        let se = (self.threshold * (1.0 - self.threshold) / n)
            .sqrt()
            .max(1.0 / n);
        let eps = 1e-9;
        match self.mode {
            VerifyMode::None => Decision::Accept,
            VerifyMode::Signature if self.accept_exact(estimate) => Decision::Accept,
            VerifyMode::Signature => Decision::Reject,
            VerifyMode::Exact if estimate < self.threshold - EXACT_PREFILTER_Z * se - eps => {
                Decision::Reject
            }
            VerifyMode::Exact => Decision::Exact,
            VerifyMode::Auto if estimate >= self.threshold + AUTO_Z * se - eps => Decision::Accept,
            VerifyMode::Auto if estimate < self.threshold - AUTO_Z * se - eps => Decision::Reject,
            VerifyMode::Auto => Decision::Exact,
        }
    }

    /// Whether an exact similarity (a quotient of shingle counts, as an `f64`) passes: the test
    /// `--exact` makes on the counts themselves, with no slack either way (see
    /// [`Threshold::passes_rounded`]), so that both modes keep the same pairs.
    pub(crate) fn accept_exact(&self, similarity: f64) -> bool {
        self.exact.passes_rounded(similarity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_decisions_widen_with_fewer_samples() {
        let v = Verifier::new(VerifyMode::Auto, 0.8, 128);
        assert_eq!(v.decide_estimate(0.95, 1000), Decision::Accept);
        // With 20 samples, 0.95 is within three standard errors (0.27) of 0.8.
        assert_eq!(v.decide_estimate(0.95, 20), Decision::Exact);
        assert_eq!(v.decide_estimate(0.5, 1000), Decision::Reject);
        assert_eq!(v.decide_estimate(0.5, 10), Decision::Exact);
        let s = Verifier::new(VerifyMode::Signature, 0.8, 128);
        assert_eq!(s.decide_estimate(0.8, 5), Decision::Accept);
        assert_eq!(s.decide_estimate(0.79, 5000), Decision::Reject);
        assert_eq!(
            Verifier::new(VerifyMode::None, 0.8, 1).decide_estimate(0.0, 0),
            Decision::Accept
        );
        assert_eq!(
            Verifier::new(VerifyMode::Exact, 0.8, 1).decide_estimate(0.2, 1000),
            Decision::Reject
        );
    }

    #[test]
    fn min_matches_is_the_rejection_boundary() {
        for mode in [VerifyMode::Auto, VerifyMode::Signature, VerifyMode::Exact] {
            let v = Verifier::new(mode, 0.8, 128);
            let m = v.min_matches();
            assert_ne!(v.decide(m), Decision::Reject, "{mode:?}");
            assert_eq!(v.decide(m - 1), Decision::Reject, "{mode:?}");
        }
        assert_eq!(Verifier::new(VerifyMode::None, 0.8, 128).min_matches(), 0);
    }

    #[test]
    fn signature_mode_needs_the_rounded_up_count() {
        let v = Verifier::new(VerifyMode::Signature, 0.8, 128);
        assert_eq!(v.decide(103), Decision::Accept);
        assert_eq!(v.decide(102), Decision::Reject);
        let v = Verifier::new(VerifyMode::Signature, 0.75, 128);
        assert_eq!(v.decide(96), Decision::Accept);
    }

    #[test]
    fn signature_counts_are_exact_at_many_digits() {
        // 100 of 128 slots is 0.78125, just below this threshold: 101 are needed.
        let v = Verifier::new(VerifyMode::Signature, 0.781250000001, 128);
        assert_eq!(v.decide(100), Decision::Reject);
        assert_eq!(v.decide(101), Decision::Accept);
        let v = Verifier::new(VerifyMode::Signature, 0.78125, 128);
        assert_eq!(v.decide(100), Decision::Accept);
        assert_eq!(v.decide(99), Decision::Reject);
    }

    // The thresholds are written with as many digits as a user may type, more than an f64 holds.
    #[allow(clippy::excessive_precision)]
    #[test]
    fn exact_verification_agrees_with_the_join_at_the_threshold() {
        let judge = |t: f64, overlap: u64, union: u64| {
            let v = Verifier::new(VerifyMode::Exact, t, 128);
            let th = Threshold::from_f64(t).unwrap();
            let joined = th.passes(crate::sim::Measure::Jaccard, overlap, union, overlap);
            let verified = v.accept_exact(overlap as f64 / union as f64);
            assert_eq!(verified, joined, "{t} {overlap}/{union}");
            verified
        };
        // Exactly at the threshold: accepted.
        assert!(judge(0.8, 4, 5));
        assert!(judge(0.8, 8, 10));
        assert!(judge(0.75, 3, 4));
        // 2/3 against the f64 just above 2/3's (0.6666666666666667): rejected, with no slack.
        assert!(!judge(0.6666666666666667, 2, 3));
        assert!(judge(0.6666666666666666, 2, 3));
        assert!(judge(2.0 / 3.0, 2, 3));
        // 5/7 just below a threshold typed with 18 digits, read as 0.7142857142857143.
        assert!(!judge(0.714285714285714285, 5, 7));
        assert!(judge(0.7142857142857142, 5, 7));
        // 10/11 likewise.
        assert!(!judge(0.90909090909090906, 10, 11));
        assert!(judge(0.909090909090909, 10, 11));
        // The ends.
        assert!(judge(0.0, 0, 7));
        assert!(judge(1.0, 7, 7));
        assert!(!judge(1.0, 6, 7));
        // Sample estimates in signature mode meet the same test.
        let s = Verifier::new(VerifyMode::Signature, 0.6666666666666667, 128);
        assert_eq!(s.decide_estimate(2.0 / 3.0, 30), Decision::Reject);
        let s = Verifier::new(VerifyMode::Signature, 2.0 / 3.0, 128);
        assert_eq!(s.decide_estimate(2.0 / 3.0, 30), Decision::Accept);
    }

    #[test]
    fn auto_sends_only_the_uncertain_band_to_exact() {
        let v = Verifier::new(VerifyMode::Auto, 0.8, 128);
        // sigma at 0.8 with 128 slots is about 0.035: the band is about 0.69..0.91.
        assert_eq!(v.decide(128), Decision::Accept);
        assert_eq!(v.decide(102), Decision::Exact);
        assert_eq!(v.decide(90), Decision::Exact);
        assert_eq!(v.decide(80), Decision::Reject);
        assert_eq!(v.decide(117), Decision::Accept);
    }

    #[test]
    fn exact_and_none_modes() {
        let v = Verifier::new(VerifyMode::Exact, 0.8, 128);
        assert_eq!(v.decide(128), Decision::Exact);
        assert_eq!(v.decide(50), Decision::Reject);
        assert!(v.accept_exact(0.8));
        assert!(!v.accept_exact(0.79));
        assert_eq!(
            Verifier::new(VerifyMode::None, 0.8, 128).decide(0),
            Decision::Accept
        );
    }
}
