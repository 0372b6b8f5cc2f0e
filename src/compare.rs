//! Every similarity ndup knows, for one pair of texts: what `ndup compare` prints.
//!
//! The shingle sets give the exact Jaccard similarity and both containments; the shingle bags
//! (each shingle as often as it occurs) give the two bag similarities of MMDS 3.1.3; the sketch
//! of the configuration gives the estimate a scan would see, with its standard error.

use serde::Serialize;

use crate::error::Result;
use crate::find::config::ScanConfig;
use crate::sim::{bag_jaccard_max, bag_jaccard_sum, containment, jaccard};
use crate::sketch::minhash::{Signer, estimate, standard_error};
use crate::sketch::sample::{SampleMatch, modulo_sample};
use crate::text::shingle::{ShingleKind, Shingler};

/// The parameters a comparison was made with.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CompareParams {
    /// The shingle kind.
    pub shingle: ShingleKind,
    /// k (char), w (word) or 3 (stopword).
    pub shingle_size: usize,
    /// Whether a custom stop-word list replaced the built-in one.
    pub custom_stopwords: bool,
    /// The normalization steps.
    pub normalize: String,
    /// The sketch behind the estimate.
    pub sketch: &'static str,
    /// Signature slots (signature sketches).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_perm: Option<usize>,
    /// The sampling modulus (sample sketches).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modulo: Option<u64>,
    /// The seed.
    pub seed: u64,
}

/// The similarities of two texts.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Comparison {
    /// The parameters.
    pub params: CompareParams,
    /// Distinct shingles of A.
    pub shingles_a: usize,
    /// Distinct shingles of B.
    pub shingles_b: usize,
    /// All shingles of A, repeats counted (the size of its bag).
    pub bag_size_a: usize,
    /// All shingles of B, repeats counted.
    pub bag_size_b: usize,
    /// Distinct shingles in both.
    pub shared: usize,
    /// Exact Jaccard similarity of the shingle sets.
    pub jaccard: f64,
    /// The sketch's estimate of the Jaccard similarity (`None` when a text is empty).
    pub estimate: Option<f64>,
    /// The samples the estimate rests on: signature slots, or sampled hashes of the union.
    pub estimate_samples: usize,
    /// The standard error of the estimate at the exact Jaccard, `sqrt(J (1 - J) / samples)`.
    pub estimate_se: Option<f64>,
    /// Share of A's shingles found in B.
    pub a_in_b: f64,
    /// Share of B's shingles found in A.
    pub b_in_a: f64,
    /// Bag similarity, intersection over the sum of the bag sizes (at most 1/2).
    pub bag_jaccard_sum: f64,
    /// Bag similarity, intersection over the max-union (1 for equal bags).
    pub bag_jaccard_max: f64,
}

impl Comparison {
    /// Compares `a` and `b` with the normalization, shingling and sketch of `config` (its
    /// threshold, banding and verification play no part, and are not checked). Their
    /// `ndup:ignore` regions are left out, as in a scan.
    pub fn of(a: &str, b: &str, config: &ScanConfig) -> Result<Comparison> {
        let shingler = Shingler::new(&config.shingle)?;
        let sig = config.signature_or_default();
        Signer::new(config.sketch_params())?;
        let sample = config.sample();
        if let Some(s) = sample {
            s.validate()?;
        }
        let bag = |text: &str| {
            let mut norm = String::new();
            crate::text::prepare_into(text, &config.normalize, &mut norm);
            let mut v = Vec::new();
            shingler.hashes_into(&norm, config.seed, &mut v);
            v.sort_unstable();
            v
        };
        let (bag_a, bag_b) = (bag(a), bag(b));
        let set = |bag: &[u64]| {
            let mut s = bag.to_vec();
            s.dedup();
            s
        };
        let (set_a, set_b) = (set(&bag_a), set(&bag_b));
        let j = jaccard(&set_a, &set_b);

        let (estimate, samples) = match sample {
            Some(s) => {
                let m = SampleMatch::of(
                    &modulo_sample(&set_a, s.modulo),
                    &modulo_sample(&set_b, s.modulo),
                );
                let est = (m.union() > 0).then(|| m.jaccard());
                (est, m.union())
            }
            None => {
                let signer = Signer::new(config.sketch_params())?;
                let est = (!set_a.is_empty() && !set_b.is_empty())
                    .then(|| estimate(&signer.sign(&set_a), &signer.sign(&set_b)));
                (est, sig.num_perm)
            }
        };
        Ok(Comparison {
            params: CompareParams {
                shingle: config.shingle.kind,
                shingle_size: config.shingle.size(),
                custom_stopwords: config.shingle.kind == ShingleKind::Stopword
                    && config.shingle.stopwords.is_some(),
                normalize: config.normalize.describe(),
                sketch: sample.map_or(sig.sketch.name(), |s| s.kind.name()),
                num_perm: sample.is_none().then_some(sig.num_perm),
                modulo: sample.map(|s| s.modulo),
                seed: config.seed,
            },
            shingles_a: set_a.len(),
            shingles_b: set_b.len(),
            bag_size_a: bag_a.len(),
            bag_size_b: bag_b.len(),
            shared: crate::sim::intersection_size(&set_a, &set_b),
            jaccard: j,
            estimate,
            estimate_samples: samples,
            estimate_se: (samples > 0).then(|| standard_error(j, samples)),
            a_in_b: containment(&set_a, &set_b),
            b_in_a: containment(&set_b, &set_a),
            bag_jaccard_sum: bag_jaccard_sum(&bag_a, &bag_b),
            bag_jaccard_max: bag_jaccard_max(&bag_a, &bag_b),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::normalize::NormalizeOptions;
    use crate::text::shingle::ShingleOptions;

    fn words(w: usize) -> ScanConfig {
        ScanConfig {
            shingle: ShingleOptions {
                kind: ShingleKind::Word,
                w,
                ..Default::default()
            },
            normalize: NormalizeOptions::default(),
            ..Default::default()
        }
    }

    #[test]
    fn jack_london_sentences() {
        let c = Comparison::of(
            "Jack London travelled to Oakland",
            "Jack London travelled to the city of Oakland",
            &words(2),
        )
        .unwrap();
        assert_eq!((c.shingles_a, c.shingles_b, c.shared), (4, 7, 3));
        assert_eq!(c.jaccard, 3.0 / 8.0);
        assert_eq!(c.a_in_b, 3.0 / 4.0);
        assert_eq!(c.b_in_a, 3.0 / 7.0);
        let est = c.estimate.unwrap();
        assert!((est - 0.375).abs() < 5.0 * c.estimate_se.unwrap(), "{est}");
    }

    #[test]
    fn bags_count_repeated_shingles() {
        // "a rose is a rose is a rose": 5 word 4-shingles, 3 distinct (the rose example).
        let c =
            Comparison::of("a rose is a rose is a rose", "a rose is a rose", &words(4)).unwrap();
        assert_eq!((c.bag_size_a, c.shingles_a), (5, 3));
        assert_eq!((c.bag_size_b, c.shingles_b), (2, 2));
        // Bag intersection: "a rose is a" once, "rose is a rose" once = 2; sum 7; max-union 5.
        assert_eq!(c.bag_jaccard_sum, 2.0 / 7.0);
        assert_eq!(c.bag_jaccard_max, 2.0 / 5.0);
        assert_eq!(c.jaccard, 2.0 / 3.0);
        assert_eq!(c.b_in_a, 1.0);
    }

    #[test]
    fn sample_sketches_and_empty_texts() {
        let config = ScanConfig::with_strategy(crate::find::config::StrategyConfig::Sample(
            crate::sketch::sample::SampleParams {
                modulo: 1,
                ..Default::default()
            },
        ));
        let c = Comparison::of("the same words here", "the same words here", &config).unwrap();
        assert_eq!(c.params.sketch, "modulo");
        assert_eq!(c.estimate, Some(1.0));
        assert_eq!(c.estimate_samples, c.shingles_a);
        let e = Comparison::of("", "text", &ScanConfig::default()).unwrap();
        assert_eq!(e.estimate, None);
        assert_eq!(e.jaccard, 0.0);
    }
}
