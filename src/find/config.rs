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

/// The version of the JSON report format. Bumped when a field changes meaning or disappears.
pub const FORMAT_VERSION: u32 = 1;

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

/// How the pairs are found: chosen once, from the configuration, by [`ScanConfig::strategy`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrategyConfig {
    /// MinHash signatures, banded LSH and verification (the default).
    Signatures,
    /// The first seed's shingle samples, an inverted index and verification (also what
    /// containment uses).
    Sample(SampleParams),
    /// Every shingle set, and the exact set-similarity join.
    Exact,
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
    /// The signature sketch.
    pub sketch: SketchKind,
    /// Slots per signature.
    pub num_perm: usize,
    /// LSH banding. [`ScanConfig::tuned`] chooses it for the threshold.
    pub lsh: LshParams,
    /// A shingle sample sketch (the first seed's modulo sampling or supershingles) instead of
    /// signatures: when set, `sketch`, `num_perm` and `lsh` are not used.
    pub sample: Option<SampleParams>,
    /// Seed for shingle hashing and every hash function.
    pub seed: u64,
    /// Similarity threshold in [0, 1].
    pub threshold: f64,
    /// What the threshold measures.
    pub measure: Measure,
    /// How candidates are verified.
    pub verify: VerifyMode,
    /// Largest bucket whose pairs are all enumerated.
    pub max_bucket: usize,
    /// Exact mode: a set-similarity join instead of MinHash and LSH.
    pub exact: bool,
    /// The memory exact mode may use, in bytes (`None`: no limit). Not part of [`Params`]: it
    /// decides whether a scan runs, never what it finds.
    pub max_memory: Option<u64>,
}

impl Default for ScanConfig {
    fn default() -> Self {
        ScanConfig {
            input: InputOptions::default(),
            normalize: NormalizeOptions::default(),
            shingle: ShingleOptions::default(),
            sketch: SketchKind::Fss,
            num_perm: 128,
            // What `tune` chooses for threshold 0.8 and 128 slots (checked by a test).
            lsh: LshParams { bands: 18, rows: 7 },
            sample: None,
            seed: DEFAULT_SEED,
            threshold: 0.8,
            measure: Measure::Jaccard,
            verify: VerifyMode::Auto,
            max_bucket: DEFAULT_MAX_BUCKET,
            exact: false,
            max_memory: None,
        }
    }
}

impl ScanConfig {
    /// This configuration with the banding the tuner chooses for its threshold and `num_perm`
    /// (see [`crate::candidates::tune`]). Use it after changing the threshold of [`ScanConfig::default`].
    pub fn tuned(self, weights: Weights) -> Result<Self> {
        let lsh =
            crate::candidates::tune::tune(self.threshold, self.num_perm, weights, None, None)?;
        Ok(ScanConfig { lsh, ..self })
    }

    /// The sample sketch the scan uses: the configured one, or modulo sampling with its defaults
    /// when the measure is containment (MinHash signatures estimate Jaccard, and LSH on them
    /// misses a document inside a much larger one).
    pub fn effective_sample(&self) -> Option<SampleParams> {
        match (self.sample, self.measure) {
            (Some(s), _) => Some(s),
            (None, Measure::Containment) => Some(SampleParams::default()),
            (None, Measure::Jaccard) => None,
        }
    }

    /// The strategy these parameters choose: exact mode, a sample sketch (or containment, which
    /// needs one), or signatures.
    pub fn strategy(&self) -> StrategyConfig {
        if self.exact {
            StrategyConfig::Exact
        } else if let Some(sample) = self.effective_sample() {
            StrategyConfig::Sample(sample)
        } else {
            StrategyConfig::Signatures
        }
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
        crate::sketch::minhash::Signer::new(self.sketch_params())?;
        if let Some(s) = self.sample {
            s.validate()?;
        }
        // Strategy rules, checked here so that a library caller gets them as the binary does.
        if let StrategyConfig::Sample(s) = self.strategy()
            && s.kind == SampleKind::Supershingle
            && self.measure == Measure::Containment
        {
            return Err(crate::invalid![
                "containment needs modulo sampling: supershingles miss a document inside a much \
                 larger one"
            ]);
        }
        self.lsh.validate(self.num_perm)
    }

    /// The signature parameters.
    pub fn sketch_params(&self) -> SketchParams {
        SketchParams {
            kind: self.sketch,
            num_perm: self.num_perm,
            seed: self.seed,
        }
    }

    /// The record of these parameters for reports.
    pub fn params(&self) -> Params {
        let used = self.lsh.bands * self.lsh.rows;
        let sample = self.effective_sample();
        Params {
            kind: "params",
            format_version: FORMAT_VERSION,
            ndup_version: env!("CARGO_PKG_VERSION"),
            mode: if self.exact {
                Mode::Exact
            } else {
                Mode::Minhash
            },
            shingle: self.shingle.kind,
            shingle_size: self.shingle.size(),
            custom_stopwords: self.shingle.kind == ShingleKind::Stopword
                && self.shingle.stopwords.is_some(),
            normalize: self.normalize.describe(),
            sketch: sample.map_or(self.sketch.name(), |s| s.kind.name()),
            modulo: sample.map(|s| s.modulo),
            supershingle_size: sample
                .filter(|s| s.kind == SampleKind::Supershingle)
                .map(|s| s.supershingle_size),
            num_perm: self.num_perm,
            bands: self.lsh.bands,
            rows: self.lsh.rows,
            lsh_threshold: self.lsh.threshold(),
            unbanded_slots: self.num_perm - used,
            seed: self.seed,
            threshold: self.threshold,
            measure: self.measure,
            verify: self.verify,
            max_bucket: self.max_bucket,
        }
    }
}

/// The parameters a report was made with (the first record of every JSON report).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Params {
    /// Always `"params"`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// [`FORMAT_VERSION`].
    pub format_version: u32,
    /// The version of ndup that made the report.
    pub ndup_version: &'static str,
    /// Which method found the pairs. In exact mode the signature and LSH parameters below are
    /// recorded but unused.
    pub mode: Mode,
    /// The shingle kind.
    pub shingle: ShingleKind,
    /// k (char), w (word) or 3 (stopword).
    pub shingle_size: usize,
    /// Whether a custom stop-word list replaced the built-in one.
    pub custom_stopwords: bool,
    /// The normalization steps, e.g. `nfkc+lowercase+whitespace+trim`.
    pub normalize: String,
    /// The sketch: `fss`, `oph`, `classic` (signatures), `modulo` or `supershingle` (samples).
    pub sketch: &'static str,
    /// With a sample sketch: shingle hashes that are 0 modulo this are kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modulo: Option<u64>,
    /// With `supershingle`: sampled hashes per supershingle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub supershingle_size: Option<usize>,
    /// Slots per signature (signature sketches only).
    pub num_perm: usize,
    /// LSH bands.
    pub bands: usize,
    /// Slots per band.
    pub rows: usize,
    /// `(1/bands)^(1/rows)`, where the S-curve crosses one half.
    pub lsh_threshold: f64,
    /// Slots not covered by any band: they still count in the signature estimate.
    pub unbanded_slots: usize,
    /// The seed.
    pub seed: u64,
    /// The similarity threshold.
    pub threshold: f64,
    /// What the threshold measures.
    pub measure: Measure,
    /// The verification mode.
    pub verify: VerifyMode,
    /// Buckets larger than this are linked as stars.
    pub max_bucket: usize,
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
            (128, 18, 7, 2)
        );
        // The default banding is the tuner's choice for the default threshold.
        assert_eq!(c.clone().tuned(Weights::default()).unwrap(), c);
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["type"], "params");
        assert_eq!(json["shingle"], "char");
        assert_eq!(json["verify"], "auto");
        assert_eq!(json["mode"], "minhash");
        let exact = ScanConfig {
            exact: true,
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_value(exact.params()).unwrap()["mode"],
            "exact"
        );
        assert_eq!(json["sketch"], "fss");
        assert!(json.get("modulo").is_none());
    }

    #[test]
    fn containment_compares_samples() {
        use crate::sketch::sample::{SampleKind, SampleParams};
        let c = ScanConfig {
            measure: Measure::Containment,
            ..Default::default()
        };
        assert_eq!(c.effective_sample(), Some(SampleParams::default()));
        let json = serde_json::to_value(c.params()).unwrap();
        assert_eq!(json["sketch"], "modulo");
        assert_eq!(json["modulo"], 16);
        assert_eq!(json["measure"], "containment");
        let c = ScanConfig {
            sample: Some(SampleParams {
                kind: SampleKind::Supershingle,
                modulo: 4,
                supershingle_size: 3,
            }),
            ..Default::default()
        };
        let json = serde_json::to_value(c.params()).unwrap();
        assert_eq!(json["sketch"], "supershingle");
        assert_eq!(json["supershingle_size"], 3);
        let bad = ScanConfig {
            sample: Some(SampleParams {
                modulo: 0,
                ..Default::default()
            }),
            ..Default::default()
        };
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
        let c = ScanConfig {
            lsh: LshParams { bands: 20, rows: 8 },
            ..Default::default()
        };
        assert!(c.validate().unwrap_err().to_string().contains("160"));
        // Containment needs modulo sampling: a library caller gets this rule too.
        let c = ScanConfig {
            measure: Measure::Containment,
            sample: Some(SampleParams {
                kind: SampleKind::Supershingle,
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(
            c.validate()
                .unwrap_err()
                .to_string()
                .contains("containment needs modulo sampling")
        );
    }
}
