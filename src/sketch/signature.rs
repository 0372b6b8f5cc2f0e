//! The library's MinHash signature: [`Signature`], a signature that carries the parameters that
//! made it, and [`MinHasher`], which makes one from text (normalize, shingle, sign, exactly as
//! `ndup scan` does) or from 64-bit hashes of the caller's own tokens.
//!
//! ```
//! use ndup::{MinHasher, SketchKind};
//! let hasher = MinHasher::builder().kind(SketchKind::Fss).num_perm(128).seed(42).build()?;
//! let a = hasher.sign("The quick brown fox jumps over the lazy dog").unwrap();
//! let b = hasher.sign("the quick brown fox jumps over the lazy dog!").unwrap();
//! assert!(a.jaccard(&b)? > 0.8);
//! // A signature made with another seed is refused, not compared.
//! let other = MinHasher::builder().seed(7).build()?.sign("the quick brown fox").unwrap();
//! assert!(matches!(a.jaccard(&other), Err(ndup::Error::Mismatch(_))));
//! # Ok::<(), ndup::Error>(())
//! ```

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::error::{Error, Param, Result};
use crate::sketch::minhash::{Absorber, MAX_NUM_PERM, Signer, SketchKind, SketchParams, estimate};
use crate::text::normalize::NormalizeOptions;
use crate::text::shingle::{ShingleOptions, Shingler, stopwords_digest};

/// A MinHash signature with the parameters that made it (sketch kind, `num_perm`, seed) and,
/// when it was signed from text, how the text was shingled and normalized.
///
/// Two signatures are comparable only when their parameters are equal, and their shingling
/// when both know theirs: [`jaccard`](Self::jaccard) returns [`Error::Mismatch`] otherwise,
/// instead of a number that would mean nothing. Equality and hashing are those of the
/// parameters and the slots.
#[derive(Debug, Clone)]
pub struct Signature {
    params: SketchParams,
    slots: Vec<u32>,
    shingling: Option<Arc<str>>,
}

impl PartialEq for Signature {
    fn eq(&self, other: &Self) -> bool {
        self.params == other.params && self.slots == other.slots
    }
}

impl Eq for Signature {}

impl Hash for Signature {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.params.hash(state);
        self.slots.hash(state);
    }
}

impl Signature {
    /// A signature from slots computed elsewhere (a row of a scan's signed corpus, a signature
    /// read back from storage) and the parameters that made them. Refuses
    /// ([`Error::InvalidConfig`]) a `num_perm` no signer has (0, or above [`MAX_NUM_PERM`]), and
    /// slots whose number is not `num_perm`.
    pub fn from_parts(params: SketchParams, slots: Vec<u32>) -> Result<Self> {
        let n = params.num_perm;
        if !(1..=MAX_NUM_PERM).contains(&n) {
            return Err(crate::invalid![
                Param::NumPerm,
                format!(" must be between 1 and {MAX_NUM_PERM}, not {n}")
            ]);
        }
        if slots.len() != params.num_perm {
            return Err(crate::invalid![
                "a signature of ",
                Param::NumPerm,
                format!(
                    " {} needs {} slots, not {}",
                    params.num_perm,
                    params.num_perm,
                    slots.len()
                )
            ]);
        }
        Ok(Signature {
            params,
            slots,
            shingling: None,
        })
    }

    /// The same signature, saying how its text was shingled and normalized (as
    /// [`shingling`](Self::shingling) words it), e.g. when read back from storage.
    pub fn with_shingling(mut self, shingling: Option<&str>) -> Self {
        self.shingling = shingling.map(Arc::from);
        self
    }

    /// How the text was shingled and normalized, when the signature was signed from text
    /// ([`MinHasher::sign`]): `char 9-shingles, nfkc+casefold+whitespace+trim`. `None` for a
    /// signature of the caller's hashes or tokens, or of slots from elsewhere.
    pub fn shingling(&self) -> Option<&str> {
        self.shingling.as_deref()
    }

    /// The parameters that made this signature.
    pub fn params(&self) -> SketchParams {
        self.params
    }

    /// Slots in the signature (`params().num_perm`).
    pub fn num_perm(&self) -> usize {
        self.slots.len()
    }

    /// The slots.
    pub fn slots(&self) -> &[u32] {
        &self.slots
    }

    /// The slots, without the parameters.
    pub fn into_slots(self) -> Vec<u32> {
        self.slots
    }

    /// Checks that `other` was made with the same parameters (and from text shingled alike, when
    /// both say), naming every one that differs (`Error::Mismatch("num-perm 64 vs 128, seed 1
    /// vs 2")`).
    pub fn ensure_comparable(&self, other: &Signature) -> Result<()> {
        ensure_like(self.params, self.shingling.as_deref(), other)
    }

    /// The shingling, shared rather than copied by whoever keeps it.
    pub(crate) fn shingling_shared(&self) -> Option<&Arc<str>> {
        self.shingling.as_ref()
    }

    /// The estimated Jaccard similarity of the two documents' shingle sets: the fraction of
    /// equal slots, with standard error `sqrt(J (1 - J) / num_perm)` (see
    /// [`standard_error`](crate::sketch::minhash::standard_error)). [`Error::Mismatch`] when the
    /// signatures were made with different parameters.
    pub fn jaccard(&self, other: &Signature) -> Result<f64> {
        self.ensure_comparable(other)?;
        Ok(estimate(&self.slots, &other.slots))
    }
}

/// `Ok` when `other` may be compared with signatures of parameters `p` whose text was shingled
/// as `shingling` says (`None`: not known), else [`Error::Mismatch`] naming each difference.
pub(crate) fn ensure_like(
    p: SketchParams,
    shingling: Option<&str>,
    other: &Signature,
) -> Result<()> {
    let params = ensure_same_params(p, other.params);
    match (shingling, other.shingling.as_deref()) {
        (Some(a), Some(b)) if a != b => {
            let shingling = format!("shingling `{a}` vs `{b}`");
            Err(Error::Mismatch(match params {
                Ok(()) => shingling,
                Err(Error::Mismatch(d)) => format!("{d}, {shingling}"),
                Err(e) => return Err(e),
            }))
        }
        _ => params,
    }
}

/// `Ok` when `p` and `q` are equal, else [`Error::Mismatch`] naming each difference.
pub(crate) fn ensure_same_params(p: SketchParams, q: SketchParams) -> Result<()> {
    let mut diffs = Vec::new();
    if p.kind != q.kind {
        diffs.push(format!("sketch {} vs {}", p.kind.name(), q.kind.name()));
    }
    if p.num_perm != q.num_perm {
        diffs.push(format!("num-perm {} vs {}", p.num_perm, q.num_perm));
    }
    if p.seed != q.seed {
        diffs.push(format!("seed {} vs {}", p.seed, q.seed));
    }
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(Error::Mismatch(diffs.join(", ")))
    }
}

/// Makes [`Signature`]s: normalization, shingling and a signer, built once and shared (it is
/// `Send + Sync`; signing takes `&self`).
///
/// [`sign`](Self::sign) does what `ndup scan` does to each document: it removes the
/// `ndup:ignore` regions, normalizes, shingles and signs, so with the same options and seed a
/// signature's slots are bit for bit those of the scan. The one seed seeds both the shingle
/// hashes and the sketch, as in the scan.
#[derive(Debug, Clone)]
pub struct MinHasher {
    normalize: NormalizeOptions,
    shingler: Shingler,
    signer: Signer,
    shingling: Arc<str>,
}

/// Documents of at least this many bytes per slot are signed as their hashes are made, without
/// storing them. With 32 shingles per slot, round 0 of FSS leaves a slot empty with probability
/// about e^-32, so the fallback (hashing again) practically never runs; smaller documents keep
/// their hashes, which fit in the cache anyway. Either way the signature is the same.
const STREAM_MIN_BYTES_PER_SLOT: usize = 32;

/// Buffers [`sign_normalized_into`] reuses from one document to the next.
#[derive(Debug, Default)]
pub(crate) struct Buffers {
    /// The document's shingle hashes, when they are kept.
    pub(crate) hashes: Vec<u64>,
    /// The signer's working slots.
    pub(crate) slots: Vec<u64>,
}

/// Shingles and signs the normalized `text` into `sig`; false for a text with no shingle. The
/// one signing routine of the crate: `ndup scan`, the index and [`MinHasher::sign`] all sign
/// through it, so their slots agree bit for bit.
///
/// A large document is signed as its hashes are made, each taken into its slot straight from a
/// register ([`Signer::absorber`]), so its hashes are never stored; when round 0 is not enough
/// (FSS on a document with few distinct shingles) the hashes are made again and signed whole.
/// Classic MinHash, which needs the whole list, goes straight there.
pub(crate) fn sign_normalized_into(
    signer: &Signer,
    shingler: &Shingler,
    seed: u64,
    text: &str,
    b: &mut Buffers,
    sig: &mut [u32],
) -> bool {
    b.hashes.clear();
    let mut repeats = false;
    if text.len() >= STREAM_MIN_BYTES_PER_SLOT * signer.num_perm() {
        signer.begin(&mut b.slots);
        if let Some(round0) = signer.absorber(&mut b.slots) {
            // One loop per slot mapping (see `RoundZero`).
            let n = match round0 {
                Absorber::PowerOfTwo(mut r) => shingler.for_each_hash(text, seed, |h| r.push(h)),
                Absorber::Other(mut r) => shingler.for_each_hash(text, seed, |h| r.push(h)),
            };
            if n == 0 {
                return false;
            }
            if signer.finish(&mut b.slots, sig) {
                return true;
            }
            // So many shingles left a slot empty: few of them are distinct (a repeated line, a
            // run of one character), and each later round goes over every hash again. Only the
            // set counts in a signature, so the repeats are dropped first.
            repeats = true;
        }
    }
    if repeats {
        let mut distinct = rustc_hash::FxHashSet::default();
        shingler.for_each_hash(text, seed, |h| {
            distinct.insert(h);
        });
        b.hashes.extend(distinct);
    } else {
        shingler.hashes_into(text, seed, &mut b.hashes);
    }
    if b.hashes.is_empty() {
        return false;
    }
    signer.sign_into(&b.hashes, sig, &mut b.slots);
    true
}

impl MinHasher {
    /// The scan's defaults with `num_perm` slots: FSS, seed 42, the default normalization and
    /// 9-character shingles. Fails when `num_perm` is 0 or above
    /// [`MAX_NUM_PERM`].
    pub fn new(num_perm: usize) -> Result<Self> {
        MinHasher::builder().num_perm(num_perm).build()
    }

    /// A builder that starts from the scan's defaults.
    pub fn builder() -> MinHasherBuilder {
        MinHasherBuilder::default()
    }

    /// The parameters of every signature this makes.
    pub fn params(&self) -> SketchParams {
        self.signer.params()
    }

    /// Signs `text` as the scan signs a document (see [`MinHasher`]). `None` when it has no
    /// shingle (empty after normalization): the scan never pairs such a document.
    pub fn sign(&self, text: &str) -> Option<Signature> {
        let mut normalized = String::new();
        crate::text::prepare_into(text, &self.normalize, &mut normalized);
        let mut sig = vec![0u32; self.signer.num_perm()];
        let signed = sign_normalized_into(
            &self.signer,
            &self.shingler,
            self.params().seed,
            &normalized,
            &mut Buffers::default(),
            &mut sig,
        );
        signed.then(|| Signature {
            shingling: Some(Arc::clone(&self.shingling)),
            ..self.signature(sig)
        })
    }

    /// Signs precomputed 64-bit shingle hashes (repeats and order do not matter); `None` when
    /// there are none. The hashes must be uniform 64-bit values: hash raw tokens first, or feed
    /// them to [`update`](SignatureBuilder::update), which does.
    pub fn sign_hashes(&self, hashes: &[u64]) -> Option<Signature> {
        (!hashes.is_empty()).then(|| self.signature(self.signer.sign(hashes)))
    }

    /// Starts a signature fed token by token or hash by hash, as datasketch's `MinHash.update`
    /// and rensa's `RMinHash.update` are.
    pub fn begin(&self) -> SignatureBuilder<'_> {
        SignatureBuilder {
            hasher: self,
            hashes: Vec::new(),
        }
    }

    fn signature(&self, slots: Vec<u32>) -> Signature {
        Signature {
            params: self.params(),
            slots,
            shingling: None,
        }
    }

    /// How this hasher shingles and normalizes text, as its signatures of text say it
    /// ([`Signature::shingling`]).
    pub fn shingling(&self) -> &str {
        &self.shingling
    }
}

/// Builds a [`MinHasher`], starting from the scan's defaults (those of `ndup scan` without
/// flags: FSS, 128 slots, seed 42, NFKC + case folding + white space collapsed + trimmed,
/// 9-character shingles).
#[derive(Debug, Clone)]
pub struct MinHasherBuilder {
    params: SketchParams,
    normalize: NormalizeOptions,
    shingle: ShingleOptions,
}

impl Default for MinHasherBuilder {
    fn default() -> Self {
        MinHasherBuilder {
            params: SketchParams {
                kind: SketchKind::Fss,
                num_perm: 128,
                seed: 42,
            },
            normalize: NormalizeOptions::default(),
            shingle: ShingleOptions::default(),
        }
    }
}

impl MinHasherBuilder {
    /// The sketch (`--sketch`).
    pub fn kind(mut self, kind: SketchKind) -> Self {
        self.params.kind = kind;
        self
    }

    /// Slots per signature (`--num-perm`), 1 to
    /// [`MAX_NUM_PERM`].
    pub fn num_perm(mut self, num_perm: usize) -> Self {
        self.params.num_perm = num_perm;
        self
    }

    /// The seed of the shingle hashes and of the sketch (`--seed`).
    pub fn seed(mut self, seed: u64) -> Self {
        self.params.seed = seed;
        self
    }

    /// Sketch kind, `num_perm` and seed at once, e.g. a scan's (`ScanConfig::sketch_params`).
    pub fn params(mut self, params: SketchParams) -> Self {
        self.params = params;
        self
    }

    /// Text normalization.
    pub fn normalize(mut self, normalize: NormalizeOptions) -> Self {
        self.normalize = normalize;
        self
    }

    /// Shingling.
    pub fn shingles(mut self, shingle: ShingleOptions) -> Self {
        self.shingle = shingle;
        self
    }

    /// Checks the options ([`Error::InvalidConfig`]: `num_perm` out of range, a shingle size of
    /// 0, an empty stop-word list) and builds the hasher.
    pub fn build(self) -> Result<MinHasher> {
        Ok(MinHasher {
            normalize: self.normalize,
            shingler: Shingler::new(&self.shingle)?,
            signer: Signer::new(self.params)?,
            shingling: describe_shingling(&self.shingle, &self.normalize).into(),
        })
    }
}

/// `char 9-shingles, nfkc+casefold+whitespace+trim`; a custom stop-word list is named by a
/// hash of its case-folded words, as the shard and index parameters name it.
fn describe_shingling(shingle: &ShingleOptions, normalize: &NormalizeOptions) -> String {
    let stopwords = match (shingle.kind, &shingle.stopwords) {
        (crate::text::shingle::ShingleKind::Stopword, Some(list)) => {
            format!(" (stop words {})", stopwords_digest(list))
        }
        _ => String::new(),
    };
    format!(
        "{} {}-shingles{stopwords}, {}",
        shingle.kind.name(),
        shingle.size(),
        normalize.describe()
    )
}

/// A signature fed incrementally (see [`MinHasher::begin`]). The hashes are kept until
/// [`finish`](Self::finish), which signs them all at once: the signature is the one
/// [`MinHasher::sign_hashes`] gives for the same hashes, whatever the order of the updates.
#[derive(Debug, Clone)]
pub struct SignatureBuilder<'a> {
    hasher: &'a MinHasher,
    hashes: Vec<u64>,
}

impl SignatureBuilder<'_> {
    /// Adds a token (a word, a shingle, any bytes), hashed with the seeded 64-bit xxh3 that
    /// the scan uses for word shingles: when the hasher shingles by words, updating with each
    /// word shingle of a normalized text (as [`Shingler::shingles`] lists them) gives
    /// [`sign`](MinHasher::sign)'s signature of that text.
    pub fn update(&mut self, token: impl AsRef<[u8]>) -> &mut Self {
        let seed = self.hasher.params().seed;
        self.hashes.push(xxh3_64_with_seed(token.as_ref(), seed));
        self
    }

    /// Adds a precomputed 64-bit hash (it must be uniform: see [`MinHasher::sign_hashes`]).
    pub fn update_hash(&mut self, hash: u64) -> &mut Self {
        self.hashes.push(hash);
        self
    }

    /// Adds precomputed 64-bit hashes.
    pub fn update_hashes(&mut self, hashes: &[u64]) -> &mut Self {
        self.hashes.extend_from_slice(hashes);
        self
    }

    /// True when nothing has been added yet.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// The signature of everything added; `None` when nothing was.
    pub fn finish(&self) -> Option<Signature> {
        self.hasher.sign_hashes(&self.hashes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::normalize::normalize;
    use crate::text::shingle::ShingleKind;

    fn hasher(kind: SketchKind, num_perm: usize, seed: u64) -> MinHasher {
        MinHasher::builder()
            .kind(kind)
            .num_perm(num_perm)
            .seed(seed)
            .build()
            .unwrap()
    }

    /// A long text of distinct words, so that large documents take the streaming path.
    fn long_text(words: usize, salt: u64) -> String {
        (0..words as u64)
            .map(|i| {
                format!(
                    "w{:x}",
                    crate::sketch::minhash::fmix64(i ^ salt) % 1_000_003
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The promise of this module: a [`MinHasher`] built from a scan's configuration gives the
    /// scan's signature, bit for bit. The one test here that reaches up to `find`: it is the
    /// pipeline the promise is about.
    #[test]
    fn signatures_of_texts_shingled_otherwise_are_refused_and_hashes_are_not() {
        let k = |k: usize| {
            MinHasher::builder()
                .shingles(ShingleOptions {
                    k,
                    ..ShingleOptions::default()
                })
                .build()
                .unwrap()
        };
        let text = "the same text, shingled two ways";
        let (nine, five) = (k(9).sign(text).unwrap(), k(5).sign(text).unwrap());
        assert_eq!(
            nine.shingling(),
            Some("char 9-shingles, nfkc+casefold+whitespace+trim")
        );
        let Err(Error::Mismatch(why)) = nine.jaccard(&five) else {
            panic!("k 9 and k 5 compared")
        };
        assert_eq!(
            why,
            "shingling `char 9-shingles, nfkc+casefold+whitespace+trim` vs \
             `char 5-shingles, nfkc+casefold+whitespace+trim`"
        );
        // Hashes given by the caller say nothing of how they were made: comparable.
        let hashes = k(5).sign_hashes(&[1, 2, 3]).unwrap();
        assert_eq!(hashes.shingling(), None);
        assert!(nine.jaccard(&hashes).is_ok());
        // Equality is that of the slots and parameters.
        let bare = Signature::from_parts(nine.params(), nine.slots().to_vec()).unwrap();
        assert_eq!(bare, nine);
        let told = bare.with_shingling(Some("word 5-shingles, none"));
        assert!(told.jaccard(&nine).is_err());
    }

    #[test]
    #[cfg(feature = "pipeline")]
    fn slots_are_the_pipelines() {
        use crate::find::config::{SignatureConfig, StrategyConfig};
        use crate::find::{Pipeline, config::ScanConfig};
        let texts = [
            String::new(),
            " \n\t ".into(),
            "a".into(),
            "The quick brown fox jumps over the lazy dog".into(),
            "ＦＵＬＬ width and ligatures: ﬁne\r\nkeep ndup:ignore-start\nhidden\nndup:ignore-end\nshown"
                .into(),
            long_text(3000, 1),
            // Few distinct shingles in a long text: FSS's round 0 leaves slots empty.
            "ab".repeat(5000),
        ];
        let configs = [
            ScanConfig::default(),
            ScanConfig {
                seed: 9,
                ..ScanConfig::with_strategy(StrategyConfig::Signatures(SignatureConfig {
                    sketch: SketchKind::Oph,
                    num_perm: 100,
                    lsh: crate::candidates::lsh::LshParams { bands: 20, rows: 5 },
                }))
            },
            ScanConfig {
                strategy: StrategyConfig::Signatures(SignatureConfig {
                    sketch: SketchKind::Classic,
                    num_perm: 64,
                    lsh: crate::candidates::lsh::LshParams { bands: 8, rows: 8 },
                }),
                shingle: ShingleOptions {
                    kind: ShingleKind::Word,
                    ..ShingleOptions::default()
                },
                normalize: NormalizeOptions::none(),
                ..ScanConfig::default()
            },
        ];
        for config in configs {
            let h = MinHasher::builder()
                .params(config.sketch_params())
                .normalize(config.normalize)
                .shingles(config.shingle.clone())
                .build()
                .unwrap();
            let p = Pipeline::new(config.clone()).unwrap();
            for t in &texts {
                let ours = h.sign(t);
                assert_eq!(
                    ours.as_ref().map(Signature::slots),
                    p.signature(t).as_deref(),
                    "{:?} on {:.40?}",
                    config.sketch_params(),
                    t
                );
                if let Some(s) = ours {
                    assert_eq!(s.params(), config.sketch_params());
                }
            }
        }
        // The builder's defaults are the scan's.
        assert_eq!(
            MinHasher::builder().build().unwrap().params(),
            ScanConfig::default().sketch_params()
        );
    }

    #[test]
    fn comparing_signatures_of_other_parameters_is_a_mismatch() {
        let text = "the quick brown fox jumps over the lazy dog";
        let a = hasher(SketchKind::Fss, 64, 1).sign(text).unwrap();
        let cases = [
            (hasher(SketchKind::Fss, 128, 1), "num-perm 64 vs 128"),
            (hasher(SketchKind::Fss, 64, 2), "seed 1 vs 2"),
            (hasher(SketchKind::Classic, 64, 1), "sketch fss vs classic"),
            (
                hasher(SketchKind::Oph, 32, 3),
                "sketch fss vs oph, num-perm 64 vs 32, seed 1 vs 3",
            ),
        ];
        for (h, want) in cases {
            let b = h.sign(text).unwrap();
            match a.jaccard(&b) {
                Err(Error::Mismatch(m)) => assert_eq!(m, want),
                other => panic!("{want}: {other:?}"),
            }
        }
        assert_eq!(a.jaccard(&a).unwrap(), 1.0);
    }

    #[test]
    fn near_duplicates_estimate_high_and_unrelated_texts_low() {
        let h = MinHasher::new(128).unwrap();
        let a = h.sign(&long_text(400, 5)).unwrap();
        let mut edited = long_text(400, 5);
        edited.push_str(" and a few more words at the end");
        let b = h.sign(&edited).unwrap();
        let c = h.sign(&long_text(400, 6)).unwrap();
        assert!(a.jaccard(&b).unwrap() > 0.9);
        assert!(a.jaccard(&c).unwrap() < 0.1);
    }

    #[test]
    fn updates_give_the_signature_of_the_same_hashes() {
        let h = hasher(SketchKind::Fss, 64, 3);
        let hashes: Vec<u64> = (0..500).map(crate::sketch::minhash::fmix64).collect();
        let mut b = h.begin();
        assert!(b.is_empty() && b.finish().is_none());
        for chunk in hashes.chunks(7).rev() {
            b.update_hashes(chunk);
        }
        b.update_hash(hashes[0]);
        assert_eq!(b.finish(), h.sign_hashes(&hashes));
        assert!(h.sign_hashes(&[]).is_none());
    }

    /// A long text of few distinct shingles leaves FSS slots empty after round 0, and its
    /// repeats are dropped before the later rounds: the signature is still that of every hash.
    #[test]
    fn repeats_dropped_leave_the_signature_as_it_is() {
        for sketch in [SketchKind::Fss, SketchKind::Oph] {
            let h = hasher(sketch, 128, 7);
            for text in ["ab".repeat(5000), "the same line, again\n".repeat(400)] {
                let normalized = normalize(&text, &h.normalize);
                let mut hashes = Vec::new();
                h.shingler.hashes_into(&normalized, 7, &mut hashes);
                assert!(text.len() >= STREAM_MIN_BYTES_PER_SLOT * 128);
                assert_eq!(h.sign(&text), h.sign_hashes(&hashes), "{sketch:?}");
            }
        }
    }

    #[test]
    fn token_updates_of_word_shingles_give_the_texts_signature() {
        let words = ShingleOptions {
            kind: ShingleKind::Word,
            ..ShingleOptions::default()
        };
        let h = MinHasher::builder()
            .shingles(words.clone())
            .build()
            .unwrap();
        let text = "The quick brown fox jumps over the lazy dog, twice: the quick brown fox!";
        let normalized = normalize(text, &NormalizeOptions::default());
        let mut b = h.begin();
        for s in Shingler::new(&words).unwrap().shingles(&normalized) {
            b.update(s);
        }
        assert_eq!(b.finish(), h.sign(text));
    }

    #[test]
    fn from_parts_checks_the_width() {
        let h = MinHasher::new(16).unwrap();
        let s = h.sign("some text").unwrap();
        let again = Signature::from_parts(s.params(), s.slots().to_vec()).unwrap();
        assert_eq!(again, s);
        assert!(Signature::from_parts(s.params(), vec![0; 15]).is_err());
        assert_eq!(again.into_slots().len(), 16);
    }

    #[test]
    fn from_parts_refuses_a_width_no_signer_has() {
        // num_perm 0 would make every estimate 0 / 0; above the maximum no signer signs.
        for n in [0, MAX_NUM_PERM + 1] {
            let params = SketchParams {
                kind: SketchKind::Fss,
                num_perm: n,
                seed: 1,
            };
            match Signature::from_parts(params, vec![0; n]) {
                Err(Error::InvalidConfig(p)) => assert_eq!(
                    p.to_string(),
                    format!("num_perm must be between 1 and {MAX_NUM_PERM}, not {n}")
                ),
                other => panic!("{n}: {other:?}"),
            }
        }
        let one = SketchParams {
            kind: SketchKind::Fss,
            num_perm: 1,
            seed: 1,
        };
        let s = Signature::from_parts(one, vec![3]).unwrap();
        assert_eq!(s.jaccard(&s).unwrap(), 1.0);
    }

    #[test]
    fn hashers_and_signatures_cross_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<MinHasher>();
        send_sync::<Signature>();
    }

    #[test]
    fn bad_options_are_refused() {
        assert!(MinHasher::new(0).is_err());
        assert!(MinHasher::new(MAX_NUM_PERM + 1).is_err());
        let zero = ShingleOptions {
            k: 0,
            ..ShingleOptions::default()
        };
        assert!(MinHasher::builder().shingles(zero).build().is_err());
    }
}
