//! The parameters that make signatures and band keys, recorded by the index and by signature
//! shards, and compared when signatures made apart are brought together.

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

use crate::error::{Param, Piece, Problem};
use crate::find::config::ScanConfig;
use crate::problem;
use crate::sketch::minhash::{SketchKind, SketchParams};
use crate::text::normalize::NormalizeOptions;
use crate::text::shingle::{ShingleKind, stopwords_digest};

/// The parameters that make signatures and band keys: two sets of signatures can be compared, or
/// share an index or a set of signature shards, only when these are equal. The threshold and the
/// verification mode judge pairs, and are not part of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SigningParams {
    /// The shingle kind.
    pub shingle: ShingleKind,
    /// k (char), w (word) or 3 (stopword).
    pub shingle_size: usize,
    /// For stop-word shingles with a custom list: a hash of the list (`None`: the built-in list).
    pub stopwords: Option<String>,
    /// The normalization steps.
    pub normalize: NormalizeOptions,
    /// The signature sketch.
    pub sketch: SketchKind,
    /// Slots per signature.
    pub num_perm: usize,
    /// LSH bands.
    pub bands: usize,
    /// Slots per band.
    pub rows: usize,
    /// The seed of every hash function.
    pub seed: u64,
    /// The text rules ([`crate::text::TEXT_RULES`]). Not written when 1, so that the
    /// parameters (and their fingerprint) of an index or shards made before the rules were
    /// recorded read back as they were written, and are then refused as made under other rules.
    #[serde(
        default = "text_rules_unrecorded",
        skip_serializing_if = "is_text_rules_unrecorded"
    )]
    pub text_rules: u32,
}

/// The text rules of parameters that do not record them.
fn text_rules_unrecorded() -> u32 {
    1
}

fn is_text_rules_unrecorded(rules: &u32) -> bool {
    *rules == text_rules_unrecorded()
}

impl SigningParams {
    /// The signing parameters of a scan configuration.
    pub fn from_config(config: &ScanConfig) -> Self {
        let sig = config.signature_or_default();
        let stopwords = match (&config.shingle.kind, &config.shingle.stopwords) {
            (ShingleKind::Stopword, Some(list)) => Some(stopwords_digest(list)),
            _ => None,
        };
        SigningParams {
            shingle: config.shingle.kind,
            shingle_size: config.shingle.size(),
            stopwords,
            normalize: config.normalize,
            sketch: sig.sketch,
            num_perm: sig.num_perm,
            bands: sig.lsh.bands,
            rows: sig.lsh.rows,
            seed: config.seed,
            text_rules: crate::text::TEXT_RULES,
        }
    }

    /// The normalization steps as the text rules name them: `lowercase` under rules 1, where
    /// the case step lowercased, `casefold` since.
    fn normalization(&self) -> String {
        let steps = self.normalize.describe();
        if self.text_rules < 2 {
            steps.replace("casefold", "lowercase")
        } else {
            steps
        }
    }

    /// The signature parameters.
    pub fn sketch_params(&self) -> SketchParams {
        SketchParams {
            kind: self.sketch,
            num_perm: self.num_perm,
            seed: self.seed,
        }
    }

    /// A short hash of the parameters, stored beside them.
    pub fn fingerprint(&self) -> String {
        let json = serde_json::to_string(self).expect("parameters serialize");
        format!("{:016x}", xxh3_64(json.as_bytes()))
    }

    /// Each parameter that differs, as `(what the index was built with, what this run uses)`.
    pub(crate) fn differences(&self, run: &SigningParams) -> Vec<(Problem, Problem)> {
        let mut d = Vec::new();
        if self.text_rules != run.text_rules {
            let rules = |p: &SigningParams| {
                let older = if p.text_rules < crate::text::TEXT_RULES {
                    " (an older ndup's: make it again with this one)"
                } else {
                    ""
                };
                problem![format!(
                    "normalization {} under text rules {}{older}",
                    p.normalization(),
                    p.text_rules
                )]
            };
            d.push((rules(self), rules(run)));
        }
        let mut value = |param: Param, built: String, now: String| {
            if built != now {
                d.push((problem![param, format!(" {built}")], problem![now]));
            }
        };
        value(
            Param::Shingle,
            self.shingle.name().into(),
            run.shingle.name().into(),
        );
        if self.shingle == run.shingle {
            let param = match self.shingle {
                ShingleKind::Char => Param::CharSize,
                ShingleKind::Word => Param::WordSize,
                ShingleKind::Stopword => Param::ShingleSize,
            };
            value(
                param,
                self.shingle_size.to_string(),
                run.shingle_size.to_string(),
            );
        }
        value(
            Param::Sketch,
            self.sketch.name().into(),
            run.sketch.name().into(),
        );
        value(
            Param::NumPerm,
            self.num_perm.to_string(),
            run.num_perm.to_string(),
        );
        value(Param::Bands, self.bands.to_string(), run.bands.to_string());
        value(Param::Rows, self.rows.to_string(), run.rows.to_string());
        value(Param::Seed, self.seed.to_string(), run.seed.to_string());
        if self.stopwords != run.stopwords {
            let list = |s: &Option<String>| match s {
                None => problem!["the built-in stop-word list"],
                Some(h) => problem!["a ", Param::StopwordsFile, format!(" list (hash {h})")],
            };
            d.push((list(&self.stopwords), list(&run.stopwords)));
        }
        let (a, b) = (&self.normalize, &run.normalize);
        for (step, off, built, now) in [
            ("NFKC normalization", Param::NoNfkc, a.nfkc, b.nfkc),
            ("case folding", Param::NoLowercase, a.lowercase, b.lowercase),
            (
                "white-space collapsing",
                Param::NoCollapseWhitespace,
                a.collapse_whitespace,
                b.collapse_whitespace,
            ),
            ("trimming", Param::NoTrim, a.trim, b.trim),
        ] {
            if built != now {
                // A step that is on is named; one that is off is named as what turned it off.
                let with = |on: bool| if on { problem![step] } else { problem![off] };
                d.push((with(built), with(now)));
            }
        }
        d
    }

    /// `Ok` when signatures made with `self` can be compared with those made with `other`;
    /// otherwise which parameters differ, as `LEAD value; with value, AGAINST value`: for the
    /// index, "index was built with num_perm 128, this run uses num_perm 256".
    pub fn check(
        &self,
        other: &SigningParams,
        lead: &str,
        against: &str,
    ) -> std::result::Result<(), Problem> {
        let d = self.differences(other);
        if d.is_empty() {
            return Ok(());
        }
        let mut pieces: Vec<Piece> = vec![lead.to_owned().into()];
        for (k, (built, now)) in d.into_iter().enumerate() {
            if k > 0 {
                pieces.push("; with ".into());
            }
            pieces.extend(built.into_pieces());
            pieces.push(against.to_owned().into());
            pieces.extend(now.into_pieces());
        }
        Err(Problem::new(pieces))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::find::config::{SignatureConfig, StrategyConfig};

    const LEAD: &str = "index was built with ";
    const AGAINST: &str = ", this run uses ";

    fn params_of(c: &ScanConfig) -> SigningParams {
        SigningParams::from_config(c)
    }

    #[test]
    fn differences_name_the_parameters() {
        let base = params_of(&ScanConfig::default());
        assert!(base.check(&base, LEAD, AGAINST).is_ok());
        let b = SignatureConfig::default().lsh.bands;
        let mut sig = SignatureConfig {
            num_perm: 256,
            ..Default::default()
        };
        sig.lsh.bands = 32;
        let c = ScanConfig::with_strategy(StrategyConfig::Signatures(sig));
        let msg = base
            .check(&params_of(&c), LEAD, AGAINST)
            .unwrap_err()
            .to_string();
        assert_eq!(
            msg,
            format!(
                "index was built with num_perm 128, this run uses 256; with bands {b}, this run uses 32"
            )
        );
        let mut c = ScanConfig::default();
        c.normalize.nfkc = false;
        let msg = base
            .check(&params_of(&c), LEAD, AGAINST)
            .unwrap_err()
            .to_string();
        assert_eq!(
            msg,
            "index was built with NFKC normalization, this run uses no NFKC normalization"
        );
        let mut c = ScanConfig::default();
        c.shingle.k = 5;
        assert_eq!(
            base.check(&params_of(&c), LEAD, AGAINST)
                .unwrap_err()
                .to_string(),
            "index was built with k 9, this run uses 5"
        );
    }

    /// The parameters of an index or shards made before the text rules were recorded (by an
    /// ndup that lowercased) read back as written, fingerprint included, and are refused with
    /// the normalization named.
    #[test]
    fn parameters_of_older_text_rules_are_refused() {
        let old = r#"{"shingle":"char","shingle_size":9,"stopwords":null,"normalize":{"nfkc":true,"lowercase":true,"collapse_whitespace":true,"trim":true},"sketch":"fss","num_perm":128,"bands":18,"rows":7,"seed":42}"#;
        let built: SigningParams = serde_json::from_str(old).unwrap();
        assert_eq!(built.text_rules, 1);
        assert_eq!(serde_json::to_string(&built).unwrap(), old);
        assert_eq!(built.fingerprint(), "999619aae29e3eb8");
        let run = params_of(&ScanConfig::default());
        assert_eq!(run.text_rules, crate::text::TEXT_RULES);
        assert!(
            serde_json::to_string(&run)
                .unwrap()
                .contains(r#""text_rules":2"#)
        );
        assert_ne!(run.fingerprint(), built.fingerprint());
        assert_eq!(
            built.check(&run, LEAD, AGAINST).unwrap_err().to_string(),
            "index was built with normalization nfkc+lowercase+whitespace+trim under text rules 1 \
             (an older ndup's: make it again with this one), this run uses normalization \
             nfkc+casefold+whitespace+trim under text rules 2"
        );
    }

    #[test]
    fn fingerprint_follows_the_parameters_that_matter() {
        let base = ScanConfig::default();
        let fp = params_of(&base).fingerprint();
        assert_eq!(fp.len(), 16);
        // The threshold and verification mode are per query: same fingerprint.
        let c = ScanConfig {
            threshold: 0.5,
            ..base.clone()
        };
        assert_eq!(params_of(&c).fingerprint(), fp);
        let c = ScanConfig {
            seed: 7,
            ..base.clone()
        };
        assert_ne!(params_of(&c).fingerprint(), fp);
        // A stop-word list is a set: order and case do not matter.
        let mut a = base.clone();
        a.shingle.kind = ShingleKind::Stopword;
        a.shingle.stopwords = Some(vec!["The".into(), "a".into()]);
        let mut b = a.clone();
        b.shingle.stopwords = Some(vec!["a".into(), "the".into()]);
        assert_eq!(params_of(&a), params_of(&b));
        b.shingle.stopwords = Some(vec!["an".into()]);
        assert!(
            params_of(&a)
                .check(&params_of(&b), LEAD, AGAINST)
                .unwrap_err()
                .params()
                .any(|p| p == Param::StopwordsFile)
        );
    }
}
