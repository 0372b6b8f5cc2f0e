//! The knobs of a scan, gathered in one plain struct, validated once and then passed down
//! read-only. [`Params`] is the record of them that every report starts with, so any result can be
//! reproduced.

use serde::{Deserialize, Serialize};

use crate::candidates::lsh::LshParams;
use crate::candidates::tune::Weights;
use crate::error::{Param, Result};
use crate::sim::Measure;
use crate::sketch::minhash::{SketchKind, SketchParams};
use crate::sketch::sample::{SampleKind, SampleParams};
use crate::source::files::InputOptions;
use crate::text::normalize::NormalizeOptions;
use crate::text::shingle::{ShingleKind, ShingleOptions};
use crate::verify::VerifyMode;

/// The version of the JSON report format. Bumped when a field changes meaning or disappears
/// (2: the params record holds only the sketch and banding fields of the strategy used).
pub const FORMAT_VERSION: u32 = 2;

/// The seed used when none is given, so that runs are reproducible by default.
pub const DEFAULT_SEED: u64 = 42;

/// Buckets with more members than this are linked as stars (see [`crate::candidates::lsh`]).
pub const DEFAULT_MAX_BUCKET: usize = 1000;

/// Which method finds the pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// MinHash signatures, LSH candidates and verification (default).
    Minhash,
    /// An exact set-similarity join (see [`crate::join`]).
    Exact,
}

/// The signature strategy's own parameters: the sketch, its width and the LSH banding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignatureConfig {
    /// The signature sketch.
    pub sketch: SketchKind,
    /// Slots per signature.
    pub num_perm: usize,
    /// LSH banding. [`ScanConfig::tuned`] chooses it for the threshold.
    pub lsh: LshParams,
}

impl Default for SignatureConfig {
    fn default() -> Self {
        SignatureConfig {
            sketch: SketchKind::Fss,
            num_perm: 128,
            // What `tune` chooses for threshold 0.8 and 128 slots (checked by a test).
            lsh: LshParams { bands: 18, rows: 7 },
        }
    }
}

/// The exact strategy's own parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExactConfig {
    /// The memory the join may use, in bytes (`None`: no limit). Not part of [`Params`]: it
    /// decides whether a scan runs, never what it finds.
    pub max_memory: Option<u64>,
}

/// How the pairs are found, and the parameters only that way uses. Chosen once, by whoever
/// builds the [`ScanConfig`]; [`ScanConfig::validate`] checks it against the measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrategyConfig {
    /// MinHash signatures, banded LSH and verification (the default).
    Signatures(SignatureConfig),
    /// The first seed's shingle samples, an inverted index and verification (what containment
    /// needs: signatures estimate Jaccard, and LSH on them misses a document inside a much
    /// larger one).
    Sample(SampleParams),
    /// Every shingle set, and the exact set-similarity join.
    Exact(ExactConfig),
}

impl Default for StrategyConfig {
    fn default() -> Self {
        StrategyConfig::Signatures(SignatureConfig::default())
    }
}

impl StrategyConfig {
    /// The mode a report records.
    pub fn mode(&self) -> Mode {
        match self {
            StrategyConfig::Exact(_) => Mode::Exact,
            _ => Mode::Minhash,
        }
    }
}

/// Everything a scan needs to know.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanConfig {
    /// Where documents come from.
    pub input: InputOptions,
    /// Text normalization.
    pub normalize: NormalizeOptions,
    /// Shingling.
    pub shingle: ShingleOptions,
    /// How pairs are found, with that strategy's own parameters.
    pub strategy: StrategyConfig,
    /// Seed for shingle hashing and every hash function.
    pub seed: u64,
    /// Similarity threshold in [0, 1].
    pub threshold: f64,
    /// What the threshold measures.
    pub measure: Measure,
    /// How candidates are verified (signatures and samples; the exact join needs none).
    pub verify: VerifyMode,
    /// Largest bucket or posting list whose pairs are all enumerated (signatures and samples).
    pub max_bucket: usize,
}

impl Default for ScanConfig {
    fn default() -> Self {
        ScanConfig {
            input: InputOptions::default(),
            normalize: NormalizeOptions::default(),
            shingle: ShingleOptions::default(),
            strategy: StrategyConfig::default(),
            seed: DEFAULT_SEED,
            threshold: 0.8,
            measure: Measure::Jaccard,
            verify: VerifyMode::Auto,
            max_bucket: DEFAULT_MAX_BUCKET,
        }
    }
}

impl ScanConfig {
    /// The default configuration with `strategy`: for containment, pass a
    /// [`StrategyConfig::Sample`] and set `measure`.
    pub fn with_strategy(strategy: StrategyConfig) -> Self {
        ScanConfig {
            strategy,
            ..ScanConfig::default()
        }
    }

    /// This configuration with the banding the tuner chooses for its threshold and `num_perm`
    /// (see [`crate::candidates::tune`]). Use it after changing the threshold of
    /// [`ScanConfig::default`]. Other strategies have no banding and are returned unchanged.
    pub fn tuned(self, weights: Weights) -> Result<Self> {
        let StrategyConfig::Signatures(sig) = self.strategy else {
            return Ok(self);
        };
        let lsh = crate::candidates::tune::tune(self.threshold, sig.num_perm, weights, None, None)?;
        Ok(ScanConfig {
            strategy: StrategyConfig::Signatures(SignatureConfig { lsh, ..sig }),
            ..self
        })
    }

    /// The signature parameters, when the strategy is signatures.
    pub fn signatures(&self) -> Option<&SignatureConfig> {
        match &self.strategy {
            StrategyConfig::Signatures(s) => Some(s),
            _ => None,
        }
    }

    /// The sample sketch, when the strategy is samples.
    pub fn sample(&self) -> Option<SampleParams> {
        match self.strategy {
            StrategyConfig::Sample(s) => Some(s),
            _ => None,
        }
    }

    /// The signature parameters of the commands that always sign (dedup, index, the signing
    /// stage of a pipeline): the strategy's own, or the defaults for the other strategies, which
    /// never read them.
    pub(crate) fn signature_or_default(&self) -> SignatureConfig {
        self.signatures().copied().unwrap_or_default()
    }

    /// Checks ranges and the consistency of the parameters.
    pub fn validate(&self) -> Result<()> {
        if !(0.0..=1.0).contains(&self.threshold) || self.threshold.is_nan() {
            return Err(crate::invalid![
                Param::Threshold,
                format!(" must be between 0 and 1, not {}", self.threshold)
            ]);
        }
        if self.max_bucket < 2 {
            return Err(crate::invalid![Param::MaxBucket, " must be at least 2"]);
        }
        self.input.records.validate()?;
        crate::text::shingle::Shingler::new(&self.shingle)?;
        match &self.strategy {
            StrategyConfig::Signatures(sig) => {
                if self.measure == Measure::Containment {
                    return Err(crate::invalid![
                        "containment compares shingle samples, not signatures: MinHash \
                         estimates Jaccard, and LSH on it misses a document inside a much \
                         larger one"
                    ]);
                }
                crate::sketch::minhash::Signer::new(self.sketch_params())?;
                sig.lsh.validate(sig.num_perm)
            }
            StrategyConfig::Sample(s) => {
                s.validate()?;
                if s.kind == SampleKind::Supershingle && self.measure == Measure::Containment {
                    return Err(crate::invalid![
                        "containment needs modulo sampling: supershingles miss a document \
                         inside a much larger one"
                    ]);
                }
                Ok(())
            }
            StrategyConfig::Exact(_) => Ok(()),
        }
    }

    /// The parameters of the signer of the signature strategy (the defaults for the others),
    /// with this configuration's seed: those of the signatures a scan with this configuration
    /// makes, to sign the same way with a [`MinHasher`](crate::MinHasher)
    /// ([`MinHasherBuilder::params`](crate::MinHasherBuilder::params)) or to compare a scan's
    /// signatures as [`Signature`](crate::Signature)s.
    pub fn sketch_params(&self) -> SketchParams {
        let sig = self.signature_or_default();
        SketchParams {
            kind: sig.sketch,
            num_perm: sig.num_perm,
            seed: self.seed,
        }
    }

    /// The record of these parameters for reports. It does not validate them (see
    /// [`validate`](Self::validate)): of a banding wider than `num_perm`, `unbanded_slots` is 0.
    pub fn params(&self) -> Params {
        let sig = self.signatures();
        let sample = self.sample();
        let exact = matches!(self.strategy, StrategyConfig::Exact(_));
        Params {
            kind: "params",
            format_version: FORMAT_VERSION,
            ndup_version: env!("CARGO_PKG_VERSION"),
            mode: self.strategy.mode(),
            shingle: self.shingle.kind,
            shingle_size: self.shingle.size(),
            custom_stopwords: self.shingle.kind == ShingleKind::Stopword
                && self.shingle.stopwords.is_some(),
            normalize: self.normalize.describe(),
            sketch: match self.strategy {
                StrategyConfig::Signatures(s) => Some(s.sketch.name()),
                StrategyConfig::Sample(s) => Some(s.kind.name()),
                StrategyConfig::Exact(_) => None,
            },
            modulo: sample.map(|s| s.modulo),
            supershingle_size: sample
                .filter(|s| s.kind == SampleKind::Supershingle)
                .map(|s| s.supershingle_size),
            num_perm: sig.map(|s| s.num_perm),
            bands: sig.map(|s| s.lsh.bands),
            rows: sig.map(|s| s.lsh.rows),
            lsh_threshold: sig.map(|s| s.lsh.threshold()),
            unbanded_slots: sig.map(|s| {
                s.num_perm
                    .saturating_sub(s.lsh.bands.saturating_mul(s.lsh.rows))
            }),
            seed: self.seed,
            threshold: self.threshold,
            measure: self.measure,
            // Exact mode joins sets: nothing to verify, no buckets.
            verify: (!exact).then_some(self.verify),
            max_bucket: (!exact).then_some(self.max_bucket),
        }
    }
}

/// The parameters a report was made with (the first record of every JSON report). The sketch
/// and banding fields are those of the strategy used, and absent for the others.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Params {
    /// Always `"params"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// [`FORMAT_VERSION`].
    pub format_version: u32,
    /// The version of ndup that made the report.
    pub ndup_version: &'static str,
    /// Which method found the pairs.
    pub mode: Mode,
    /// The shingle kind.
    pub shingle: ShingleKind,
    /// k (char), w (word) or 3 (stopword).
    pub shingle_size: usize,
    /// Whether a custom stop-word list replaced the built-in one.
    pub custom_stopwords: bool,
    /// The normalization steps, e.g. `nfkc+casefold+whitespace+trim`.
    pub normalize: String,
    /// The sketch: `fss`, `oph`, `classic` (signatures), `modulo` or `supershingle` (samples);
    /// none in exact mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sketch: Option<&'static str>,
    /// With a sample sketch: shingle hashes that are 0 modulo this are kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modulo: Option<u64>,
    /// With `supershingle`: sampled hashes per supershingle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supershingle_size: Option<usize>,
    /// Slots per signature (signature sketches only, as are the banding fields below).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_perm: Option<usize>,
    /// LSH bands.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bands: Option<usize>,
    /// Slots per band.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<usize>,
    /// `(1/bands)^(1/rows)`, where the S-curve crosses one half.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lsh_threshold: Option<f64>,
    /// Slots not covered by any band: they still count in the signature estimate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unbanded_slots: Option<usize>,
    /// The seed.
    pub seed: u64,
    /// The similarity threshold.
    pub threshold: f64,
    /// What the threshold measures.
    pub measure: Measure,
    /// The verification mode (none in exact mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifyMode>,
    /// Buckets larger than this are linked as stars (none in exact mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_bucket: Option<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_described() {
        let c = ScanConfig::default();
        c.validate().unwrap();
        let p = c.params();
        assert_eq!(
            (p.num_perm, p.bands, p.rows, p.unbanded_slots),
            (Some(128), Some(18), Some(7), Some(2))
        );
        // The default banding is the tuner's choice for the default threshold.
        assert_eq!(c.clone().tuned(Weights::default()).unwrap(), c);
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["type"], "params");
        assert_eq!(json["shingle"], "char");
        assert_eq!(json["verify"], "auto");
        assert_eq!(json["mode"], "minhash");
        let exact = ScanConfig::with_strategy(StrategyConfig::Exact(ExactConfig::default()));
        let exact = serde_json::to_value(exact.params()).unwrap();
        assert_eq!(exact["mode"], "exact");
        // Only the strategy's own parameters are recorded.
        for absent in [
            "sketch",
            "num_perm",
            "bands",
            "rows",
            "lsh_threshold",
            "modulo",
        ] {
            assert!(exact.get(absent).is_none(), "{absent}");
        }
        assert_eq!(json["sketch"], "fss");
        assert!(json.get("modulo").is_none());
    }

    #[test]
    fn the_record_of_an_invalid_banding_does_not_panic() {
        // params() does not validate: a banding wider than num_perm, or one whose product
        // overflows, has no unbanded slot (validate refuses both).
        for lsh in [
            LshParams { bands: 8, rows: 8 },
            LshParams {
                bands: usize::MAX,
                rows: 2,
            },
        ] {
            let c = ScanConfig::with_strategy(StrategyConfig::Signatures(SignatureConfig {
                num_perm: 16,
                lsh,
                ..Default::default()
            }));
            assert_eq!(c.params().unbanded_slots, Some(0));
            assert!(matches!(
                c.validate(),
                Err(crate::Error::InvalidConfig(p)) if p.to_string().contains("more than num_perm 16")
            ));
        }
    }

    #[test]
    fn containment_compares_samples() {
        use crate::sketch::sample::{SampleKind, SampleParams};
        let c = ScanConfig {
            measure: Measure::Containment,
            ..ScanConfig::with_strategy(StrategyConfig::Sample(SampleParams::default()))
        };
        c.validate().unwrap();
        let json = serde_json::to_value(c.params()).unwrap();
        assert_eq!(json["sketch"], "modulo");
        assert_eq!(json["modulo"], 16);
        assert_eq!(json["measure"], "containment");
        assert!(json.get("num_perm").is_none());
        let c = ScanConfig::with_strategy(StrategyConfig::Sample(SampleParams {
            kind: SampleKind::Supershingle,
            modulo: 4,
            supershingle_size: 3,
        }));
        let json = serde_json::to_value(c.params()).unwrap();
        assert_eq!(json["sketch"], "supershingle");
        assert_eq!(json["supershingle_size"], 3);
        let bad = ScanConfig::with_strategy(StrategyConfig::Sample(SampleParams {
            modulo: 0,
            ..Default::default()
        }));
        assert!(
            bad.validate()
                .unwrap_err()
                .to_string()
                .contains("modulo must be at least 1")
        );
    }

    #[test]
    fn contradictions_are_rejected() {
        let c = ScanConfig {
            threshold: 1.5,
            ..Default::default()
        };
        assert!(
            c.validate()
                .unwrap_err()
                .to_string()
                .contains("threshold must be between 0 and 1")
        );
        let c = ScanConfig::with_strategy(StrategyConfig::Signatures(SignatureConfig {
            lsh: LshParams { bands: 20, rows: 8 },
            ..Default::default()
        }));
        assert!(c.validate().unwrap_err().to_string().contains("160"));
        // Containment needs modulo sampling: a library caller gets this rule too.
        let c = ScanConfig {
            measure: Measure::Containment,
            ..ScanConfig::with_strategy(StrategyConfig::Sample(SampleParams {
                kind: SampleKind::Supershingle,
                ..Default::default()
            }))
        };
        assert!(
            c.validate()
                .unwrap_err()
                .to_string()
                .contains("containment needs modulo sampling")
        );
        // And it compares samples, never signatures.
        let c = ScanConfig {
            measure: Measure::Containment,
            ..Default::default()
        };
        assert!(
            c.validate()
                .unwrap_err()
                .to_string()
                .contains("containment compares shingle samples")
        );
    }
}
