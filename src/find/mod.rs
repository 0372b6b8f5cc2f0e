//! The whole pipeline: input -> normalize -> shingle -> sign (in parallel) -> LSH -> verify.
//!
//! Documents are streamed: each worker reads, normalizes, shingles and signs one document with
//! reusable buffers and keeps only its signature, so memory grows with the number of documents,
//! not with the size of the corpus. Exact verification reads the documents of the uncertain pairs
//! again, in bounded batches, instead of keeping every shingle set.

pub(crate) mod arena;
pub mod config;
pub(crate) mod exact;
pub mod params;
pub(crate) mod read;
pub(crate) mod sample;

use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rayon::prelude::*;

use crate::candidates::lsh::LshIndex;
use crate::error::{Error, Result};
use crate::find::arena::SetArena;
use crate::find::config::{Params, ScanConfig, StrategyConfig};
use crate::find::read::{Corpus, Raw, Sketcher, Strategy};
use crate::model::{Pair, Skip, SkipKind, Stats};
use crate::sim::Measure;
use crate::sim::{
    Core, EXACT_SCREEN_Z, MAX_SETS, Overlap, OverlapTable, SKETCH_BINS, SKETCH_MIN_SET, Split,
    bin_sketch, containment, jaccard, jaccard_screened_split, members_of, sketch_rejects,
};
use crate::sketch::minhash::{Signer, SketchParams, agreement};
use crate::sketch::signature::ensure_same_params;
use crate::source::files as input;
use crate::source::records::parse_record;
use crate::source::{Document, Origin, Source};
use crate::text::shingle::{Shingler, dedup_into};
use crate::verify::{Decision, Verifier, VerifyMode};

/// Pairs verified exactly per batch. Every document of a batch is read and shingled once, so a
/// batch should hold whole clusters of pairs (a document in two batches is read twice); the
/// bound keeps the pair records and sets of one batch in memory at once.
const EXACT_BATCH_PAIRS: usize = 1 << 22;

/// Documents read again per batch of exact verification, unless one connected component of
/// the pairs has more (see [`exact_batches`]). Why: only one batch's sets are held at once, so
/// peak memory follows the largest batch (usually the largest component), not the whole run's
/// sets.
const EXACT_BATCH_DOCS: usize = 1 << 10;

/// [`EXACT_BATCH_DOCS`] for a batch that reads from a compressed source, which is decompressed
/// again from its start for each batch: fewer, larger batches, but bounded, so that a corpus
/// whose documents are nearly all in uncertain pairs does not hold every shingle set at once.
const EXACT_BATCH_DOCS_COMPRESSED: usize = 1 << 16;

/// Pairs per document a batch of exact verification needs before its sets are sketched
/// ([`bin_sketch`]). Why: making a sketch costs about as much as merging a few thousand
/// elements, and each hopeless pair it rejects saves the start of a merge, so a set must serve
/// several pairs to repay its sketch; in sparser batches sketching costs more than it saves
/// (measured in docs/design-notes.md).
const SKETCH_MIN_PAIRS_PER_SET: usize = 8;

/// The fewest documents read in a batch before its core (see [`Core`]) is worth finding: the
/// sample costs [`CORE_SAMPLE`] reads and sorts, and every set a pass over its elements.
const CORE_MIN_DOCS: usize = 512;

/// The sets a batch's core is found in, spread evenly over its documents.
const CORE_SAMPLE: usize = 64;

/// The share of the sample's sets an element must be in to be in the core: one in ten. Why:
/// a lower share grows the core with elements few sets hold, for little more of the batch's
/// elements; the merges are about as fast over a wide range of shares.
const CORE_MIN_SHARE: usize = 10;

/// The fewest elements a core needs to be kept: a smaller one saves less than the pass that
/// splits the sets costs.
const CORE_MIN_ELEMENTS: usize = 256;

/// The most normalized text, in bytes, of a small component whose overlaps are counted in an
/// [`OverlapTable`]; a larger one builds its documents' sorted sets instead. Why: the table takes
/// up to 36 bytes a distinct hash, against 8 for a sorted set, and a few near copies share most
/// of their hashes, but documents that share few could grow it past the sets' size.
const TABLE_MAX_BYTES: usize = 1 << 22;

/// What a scan found.
#[derive(Debug, Clone)]
pub struct ScanReport {
    /// The parameters.
    pub params: Params,
    /// Every document read, in walk order.
    pub documents: Vec<Document>,
    /// The pairs, sorted by (a's id, b's id).
    pub pairs: Vec<Pair>,
    /// What was skipped, sorted by id.
    pub skipped: Vec<Skip>,
    /// Counts.
    pub stats: Stats,
}

impl ScanReport {
    /// The id of document `i`.
    pub fn id(&self, i: u32) -> &str {
        &self.documents[i as usize].id
    }

    /// Removes the pairs `accepted` says yes to (given both ids) and returns how many went.
    pub fn remove_pairs(&mut self, accepted: impl Fn(&str, &str) -> bool) -> u64 {
        let before = self.pairs.len();
        let docs = &self.documents;
        self.pairs
            .retain(|p| !accepted(&docs[p.a as usize].id, &docs[p.b as usize].id));
        self.stats.pairs = self.pairs.len() as u64;
        (before - self.pairs.len()) as u64
    }

    /// Clusters: connected components of the pairs, each sorted by id, ordered by first id.
    pub fn clusters(&self) -> Vec<Vec<u32>> {
        let mut groups = crate::model::cluster::components(
            self.documents.len(),
            self.pairs.iter().map(|p| (p.a, p.b)),
        );
        for g in &mut groups {
            g.sort_by(|&x, &y| self.id(x).cmp(self.id(y)));
        }
        groups.sort_by(|g, h| self.id(g[0]).cmp(self.id(h[0])));
        groups
    }
}

/// Every document read, with the signatures of the non-empty ones: the result of phase one
/// ([`Pipeline::sign`]), which [`Pipeline::find_pairs`] turns into pairs. It is read-only
/// outside the crate, so that its parts always agree with each other, and it records the
/// parameters it was signed with, so that a pipeline that signs otherwise refuses it.
#[derive(Debug, Clone, Default)]
pub struct SignedCorpus {
    /// Every document read, in input order.
    pub(crate) documents: Vec<Document>,
    /// Signatures, flat, `num_perm` slots each, one per non-empty document.
    pub(crate) signatures: Vec<u32>,
    /// For each signature, the index of its document in `documents`, increasing.
    pub(crate) signed: Vec<u32>,
    /// What was skipped.
    pub(crate) skipped: Vec<Skip>,
    /// Counts so far.
    pub(crate) stats: Stats,
    /// For each signature, a 128-bit hash of its document's normalized text, kept when exact
    /// verification may follow (empty otherwise): documents with equal text have equal shingle
    /// sets, so their Jaccard is 1 without reading them again, and exact verification reads
    /// and shingles only one of them.
    pub(crate) fingerprints: Vec<u128>,
    /// The parameters of the signatures, when recorded: [`Pipeline::sign`] records its own; a
    /// corpus assembled elsewhere in the crate (from an index, shards, dedup's copies) was
    /// signed by the pipeline it is handed to, and its width is checked all the same.
    pub(crate) params: Option<SketchParams>,
}

impl SignedCorpus {
    /// Every document read, in input order.
    pub fn documents(&self) -> &[Document] {
        &self.documents
    }

    /// The signatures, flat, [`num_perm`](SketchParams::num_perm) slots each, one per non-empty
    /// document: row `i` is the signature of document [`signed`](Self::signed)`()[i]`.
    pub fn signatures(&self) -> &[u32] {
        &self.signatures
    }

    /// For each signature, the index of its document in [`documents`](Self::documents),
    /// increasing.
    pub fn signed(&self) -> &[u32] {
        &self.signed
    }

    /// What was skipped.
    pub fn skipped(&self) -> &[Skip] {
        &self.skipped
    }

    /// Counts so far.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// For each signature, a 128-bit hash of its document's normalized text, when exact
    /// verification may follow (empty otherwise).
    pub fn fingerprints(&self) -> &[u128] {
        &self.fingerprints
    }

    /// The parameters the signatures were made with, when the corpus records them (a corpus
    /// of [`Pipeline::sign`] does).
    pub fn sketch_params(&self) -> Option<SketchParams> {
        self.params
    }
}

/// Per-thread buffers reused from one document to the next.
#[derive(Default)]
pub(crate) struct Scratch {
    /// The file as read, reused so each document does not fault in fresh pages.
    file: Vec<u8>,
    /// The normalized text of the current document.
    pub(crate) text: String,
    /// The signer's buffers.
    sign: crate::sketch::signature::Buffers,
    /// Buffers for building exact shingle sets.
    set: crate::text::shingle::SetScratch,
    /// The table that counts a small component's overlaps.
    overlap: OverlapTable,
}

/// One [`Scratch`] per thread of the pool, kept from batch to batch of exact verification.
/// Why: rayon's `map_init` makes a fresh one for each piece of work it splits off, far more
/// than there are threads, and each would grow its buffers again, zeroing and faulting in
/// fresh memory.
struct Scratches(Vec<Mutex<Scratch>>);

impl Scratches {
    fn new() -> Self {
        let threads = rayon::current_num_threads().max(1);
        Scratches((0..threads).map(|_| Mutex::default()).collect())
    }

    /// Runs `f` with the current thread's scratch, or a fresh one if that one is in use (a
    /// thread outside the pool, or one that took on more work while `f` ran).
    fn with<R>(&self, f: impl FnOnce(&mut Scratch) -> R) -> R {
        let slot = rayon::current_thread_index().unwrap_or(0) % self.0.len();
        match self.0[slot].try_lock() {
            Ok(mut s) => f(&mut s),
            Err(_) => f(&mut Scratch::default()),
        }
    }
}

/// The largest buffer a [`Scratch`] keeps from one document to the next.
const SCRATCH_KEEP_BYTES: usize = 1 << 20;

impl Scratch {
    /// Frees the buffers that a large document grew. Why: otherwise each thread keeps its
    /// largest document's file, text and shingles to the end of the run, and peak memory
    /// counts every thread's largest document, not only the ones being read. Growing them
    /// again costs little next to reading and shingling a document that large.
    fn release_large(&mut self) {
        use crate::text::shingle::release_large;
        release_large(&mut self.file, SCRATCH_KEEP_BYTES);
        if self.text.capacity() > SCRATCH_KEEP_BYTES {
            self.text = String::new();
        }
        release_large(&mut self.sign.hashes, SCRATCH_KEEP_BYTES);
        self.set.release_large(SCRATCH_KEEP_BYTES);
        self.overlap.release_large(SCRATCH_KEEP_BYTES);
    }
}

/// The signature strategy's strategy: each document's MinHash signature.
struct Signatures<'p>(&'p Pipeline);

impl Sketcher for Signatures<'_> {
    type Sketch = Vec<u32>;

    fn sketch(&self, s: &mut Scratch, _raw: &Raw<'_>) -> Option<Vec<u32>> {
        self.0.sign_normalized(s)
    }

    fn fingerprints(&self) -> bool {
        self.0.may_reload()
    }

    fn row_width(&self) -> usize {
        self.0.signer.num_perm()
    }

    fn sketch_row(&self, s: &mut Scratch, _raw: &Raw<'_>, row: &mut [u32]) -> bool {
        self.0.sign_normalized_into(s, row)
    }
}

impl Strategy for Signatures<'_> {
    fn pairs(&self, corpus: Corpus<Vec<u32>>, start: Instant) -> Result<ScanReport> {
        self.0.find_pairs(self.0.signed_corpus(corpus), start)
    }
}

impl From<Corpus<Vec<u32>>> for SignedCorpus {
    fn from(c: Corpus<Vec<u32>>) -> Self {
        SignedCorpus {
            documents: c.documents,
            // Files come as rows, records as one vector each (in input order either way: a
            // corpus is all files or all records).
            signatures: if c.sketches.is_empty() {
                c.rows
            } else {
                c.sketches.concat()
            },
            signed: c.sketched,
            skipped: c.skipped,
            stats: c.stats,
            fingerprints: c.fingerprints,
            params: None,
        }
    }
}

/// The pipeline's stages, built once from a validated config.
pub struct Pipeline {
    config: ScanConfig,
    shingler: Shingler,
    signer: Signer,
    verifier: Verifier,
    progress: Option<Arc<dyn Progress>>,
    stop: Option<Arc<AtomicBool>>,
}

/// A stage of the work that a [`Progress`] observer is told about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Phase {
    /// Reading and signing documents (counted in documents). Every run starts here.
    Reading,
    /// Pairing candidates by LSH (counted in bands).
    Candidates,
    /// Exact verification of the uncertain pairs (counted in pairs).
    Verifying,
    /// Reading, signing and writing documents into an index (counted in documents).
    Indexing,
}

impl Phase {
    /// What the phase does and what it counts, for a progress line.
    pub fn describe(self) -> (&'static str, &'static str) {
        match self {
            Phase::Reading => ("reading", "documents"),
            Phase::Candidates => ("pairing candidates", "bands"),
            Phase::Verifying => ("verifying", "pairs"),
            Phase::Indexing => ("indexing", "documents"),
        }
    }
}

/// Told how far the work has got: the binary draws a progress bar with it. Called from worker
/// threads, so it must be cheap.
pub trait Progress: Send + Sync {
    /// A new phase begins (the first is always [`Phase::Reading`]), with `total` units of work
    /// when known in advance.
    fn phase(&self, _phase: Phase, _total: Option<u64>) {}
    /// The number of units of the current phase, once known (the documents of a file tree are
    /// known only after the walk).
    fn total(&self, _units: u64) {}
    /// `units` more of the current phase are done (documents read and signed or skipped, bands
    /// paired, pairs verified).
    fn advance(&self, units: u64);
}

impl Pipeline {
    /// Validates `config` and builds the stages.
    pub fn new(config: ScanConfig) -> Result<Self> {
        config.validate()?;
        Ok(Pipeline {
            shingler: Shingler::new(&config.shingle)?,
            signer: Signer::new(config.sketch_params())?,
            verifier: Verifier::new(
                config.verify,
                config.threshold,
                config.signature_or_default().num_perm,
            ),
            config,
            progress: None,
            stop: None,
        })
    }

    /// Reports the progress of every phase to `progress`.
    pub fn with_progress(mut self, progress: Arc<dyn Progress>) -> Self {
        self.progress = Some(progress);
        self
    }

    /// Stops a run when `stop` becomes true: it then returns [`Error::Interrupted`] after the
    /// document, or the batch of verified pairs, at hand (an interrupt handler, a deadline or
    /// a cancel button sets it from another thread).
    pub fn with_stop(mut self, stop: Arc<AtomicBool>) -> Self {
        self.stop = Some(stop);
        self
    }

    /// [`Error::Interrupted`] once the stop flag is set.
    pub(crate) fn stopped(&self) -> Option<Error> {
        self.stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
            .then_some(Error::Interrupted)
    }

    /// Why reading must stop: the sketcher's reason, or the stop flag.
    pub(crate) fn halted<K: Sketcher>(&self, sketcher: &K) -> Option<Error> {
        sketcher.halted().or_else(|| self.stopped())
    }

    /// Tells the progress observer, if any, that `n` more documents were handled.
    pub(crate) fn advance(&self, n: u64) {
        if let Some(p) = &self.progress {
            p.advance(n);
        }
    }

    /// Tells the progress observer, if any, how many documents there are.
    pub(crate) fn progress_total(&self, n: u64) {
        if let Some(p) = &self.progress {
            p.total(n);
        }
    }

    /// Tells the progress observer, if any, that `phase` begins.
    pub(crate) fn progress_phase(&self, phase: Phase, total: Option<u64>) {
        if let Some(p) = &self.progress {
            p.phase(phase, total);
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ScanConfig {
        &self.config
    }

    /// The verifier of candidate pairs.
    pub(crate) fn verifier(&self) -> &Verifier {
        &self.verifier
    }

    /// Normalizes `text` and returns its sorted, distinct shingle hashes.
    pub fn shingle_set(&self, text: &str) -> Vec<u64> {
        self.shingle_set_with(text, &mut Scratch::default())
    }

    /// [`shingle_set`](Self::shingle_set) with the buffers of `s`.
    fn shingle_set_with(&self, text: &str, s: &mut Scratch) -> Vec<u64> {
        self.normalize_into_scratch(text, s);
        self.shingler
            .hash_set_with(&s.text, self.config.seed, &mut s.set)
    }

    /// The shingle hashes of `text`, sorted, handed to `store`, which keeps the distinct ones
    /// (repeats may be left in: see [`Shingler::sorted_hashes_in`]).
    fn store_shingle_set<T>(&self, text: &str, s: &mut Scratch, store: impl Fn(&[u64]) -> T) -> T {
        self.normalize_into_scratch(text, s);
        store(
            self.shingler
                .sorted_hashes_in(&s.text, self.config.seed, &mut s.set),
        )
    }

    /// Normalizes and shingles `text`, and signs it (`None` for an empty document).
    pub fn signature(&self, text: &str) -> Option<Vec<u32>> {
        let mut s = Scratch::default();
        self.sign_text(text, &mut s)
    }

    fn sign_text(&self, text: &str, s: &mut Scratch) -> Option<Vec<u32>> {
        self.normalize_into_scratch(text, s);
        self.sign_normalized(s)
    }

    /// Removes the `ndup:ignore` regions of `text` and normalizes it into `s.text`.
    pub(crate) fn normalize_into_scratch(&self, text: &str, s: &mut Scratch) {
        self.normalize_to(text, &mut s.text);
    }

    /// Removes the `ndup:ignore` regions of `text` and normalizes it into `out`.
    fn normalize_to(&self, text: &str, out: &mut String) {
        crate::text::prepare_into(text, &self.config.normalize, out);
    }

    /// Shingles and signs the normalized text in `s.text` (`None` when it has no shingle).
    pub(crate) fn sign_normalized(&self, s: &mut Scratch) -> Option<Vec<u32>> {
        let mut sig = vec![0u32; self.signer.num_perm()];
        self.sign_normalized_into(s, &mut sig).then_some(sig)
    }

    /// Shingles and signs the normalized text in `s.text` into `sig`; false for a document with
    /// no shingle (see [`crate::sketch::signature::sign_normalized_into`]).
    fn sign_normalized_into(&self, s: &mut Scratch, sig: &mut [u32]) -> bool {
        crate::sketch::signature::sign_normalized_into(
            &self.signer,
            &self.shingler,
            self.config.seed,
            &s.text,
            &mut s.sign,
            sig,
        )
    }

    /// Scans the files and directories in `paths`.
    pub fn scan(&self, paths: &[PathBuf]) -> Result<ScanReport> {
        self.scan_source(&Source::Files(paths.to_vec()))
    }

    /// Scans JSON-lines corpora (`-` is standard input).
    pub fn scan_records(&self, inputs: &[PathBuf]) -> Result<ScanReport> {
        self.scan_source(&Source::Records(inputs.to_vec()))
    }

    /// Scans `source` with the strategy the configuration chooses (see
    /// [`ScanConfig::strategy`]): phase one reads and sketches every document, phase two turns
    /// the sketches into verified pairs.
    pub fn scan_source(&self, source: &Source) -> Result<ScanReport> {
        match self.config.strategy {
            StrategyConfig::Exact(_) => self.run(source, &exact::Sets::new(self)),
            StrategyConfig::Sample(params) => {
                self.run(source, &sample::Samples { p: self, params })
            }
            StrategyConfig::Signatures(_) => self.run(source, &Signatures(self)),
        }
    }

    /// Phase one of the signature strategy: every document read and signed, in parallel. The
    /// corpus records this pipeline's signature parameters.
    pub fn sign(&self, source: &Source) -> Result<SignedCorpus> {
        Ok(self.signed_corpus(self.read(source, &Signatures(self))?))
    }

    /// `corpus`, signed by this pipeline, with its parameters.
    fn signed_corpus(&self, corpus: Corpus<Vec<u32>>) -> SignedCorpus {
        SignedCorpus {
            params: Some(self.signer.params()),
            ..corpus.into()
        }
    }

    /// [`sign`](Self::sign) for files and directories.
    pub fn sign_files(&self, paths: &[PathBuf]) -> Result<SignedCorpus> {
        self.sign(&Source::Files(paths.to_vec()))
    }

    /// [`sign`](Self::sign) for JSON-lines corpora.
    pub fn sign_records(&self, inputs: &[PathBuf]) -> Result<SignedCorpus> {
        self.sign(&Source::Records(inputs.to_vec()))
    }

    /// True when phase two may read documents again (exact verification).
    fn may_reload(&self) -> bool {
        matches!(self.config.strategy, StrategyConfig::Exact(_))
            || matches!(self.config.verify, VerifyMode::Auto | VerifyMode::Exact)
    }

    /// Phase two: LSH candidates, verification, and the sorted report. `start` is when the scan
    /// began, for the elapsed time. [`Error::Mismatch`] when `corpus` was signed with other
    /// parameters than this pipeline's (sketch, `num_perm`, seed).
    pub fn find_pairs(&self, corpus: SignedCorpus, start: Instant) -> Result<ScanReport> {
        let k = self.signer.num_perm();
        let SignedCorpus {
            documents,
            signatures: sigs,
            signed,
            skipped,
            mut stats,
            fingerprints,
            params,
        } = corpus;
        let mismatch = |d: String| Error::Mismatch(format!("signed corpus vs pipeline: {d}"));
        if let Some(p) = params {
            ensure_same_params(p, self.signer.params()).map_err(|e| match e {
                Error::Mismatch(d) => mismatch(d),
                e => e,
            })?;
        }
        // A corpus that does not record its parameters is checked for its width at least.
        if Some(sigs.len()) != signed.len().checked_mul(k) {
            return Err(mismatch(match sigs.len().checked_div(signed.len()) {
                Some(w) if w * signed.len() == sigs.len() => format!("num-perm {w} vs {k}"),
                _ => format!(
                    "{} slots in {} signatures vs num-perm {k}",
                    sigs.len(),
                    signed.len()
                ),
            }));
        }
        debug_assert!(
            signed.windows(2).all(|w| w[0] < w[1])
                && signed
                    .last()
                    .is_none_or(|&d| (d as usize) < documents.len()),
            "signatures of documents of the corpus, in order"
        );
        if documents.is_empty() {
            return Err(Error::NoDocuments { skipped });
        }

        // Candidates, verified by signature as they are found.
        let lsh = self.config.signature_or_default().lsh;
        let index = LshIndex::build(&sigs, k, lsh)?;
        let sig_of = |i: u32| &sigs[i as usize * k..(i as usize + 1) * k];
        self.progress_phase(Phase::Candidates, Some(lsh.bands as u64));
        let (found, cstats) = index.candidates_observed(
            self.config.max_bucket,
            |a, b| {
                let m = agreement(sig_of(a), sig_of(b));
                match self.verifier.decide(m) {
                    Decision::Reject => None,
                    d => Some((a, b, m, d == Decision::Exact)),
                }
            },
            || self.advance(1),
        );
        if let Some(e) = self.stopped() {
            return Err(e);
        }
        stats.candidates = cstats.candidates;
        stats.oversized_buckets = cstats.oversized_buckets;
        // Equal texts have equal shingle sets: the exact measures are 1 without a re-read (only
        // pairs whose every slot agrees can be such).
        let same_text = |a: u32, b: u32| {
            fingerprints.len() == signed.len()
                && fingerprints[a as usize] == fingerprints[b as usize]
        };
        let mut identical = 0;
        let found = found
            .into_iter()
            .map(|(a, b, m, exact)| {
                let mut p = Pair {
                    a: signed[a as usize],
                    b: signed[b as usize],
                    estimate: m as f64 / k as f64,
                    jaccard: None,
                    a_in_b: None,
                    b_in_a: None,
                };
                if exact && m == k && same_text(a, b) {
                    identical += 1;
                    p.jaccard = Some(1.0);
                    if self.config.measure == Measure::Containment {
                        (p.a_in_b, p.b_in_a) = (Some(1.0), Some(1.0));
                    }
                    return (p, false);
                }
                (p, exact)
            })
            .collect();
        stats.exact_checked = identical;
        let prints = TextPrints {
            signed: &signed,
            prints: &fingerprints,
        };
        self.report(documents, found, skipped, stats, prints, start)
    }

    /// The end of phase two, shared by every sketch: exact verification of the pairs marked
    /// uncertain, then the report in its deterministic order; [`Error::Interrupted`] when the
    /// stop flag was set meanwhile.
    pub(crate) fn report(
        &self,
        documents: Vec<Document>,
        found: Vec<(Pair, bool)>,
        mut skipped: Vec<Skip>,
        mut stats: Stats,
        prints: TextPrints,
        start: Instant,
    ) -> Result<ScanReport> {
        let mut pairs = Vec::with_capacity(found.len());
        let mut uncertain = Vec::new();
        for (p, exact) in found {
            if exact {
                uncertain.push(p);
            } else {
                pairs.push(p);
            }
        }
        stats.exact_checked += uncertain.len() as u64;
        if !uncertain.is_empty() {
            self.progress_phase(Phase::Verifying, Some(uncertain.len() as u64));
        }
        let (kept, reload_skips) = self.verify_exact(&documents, uncertain, prints);
        if let Some(e) = self.stopped() {
            return Err(e);
        }
        pairs.extend(kept);
        skipped.extend(reload_skips);
        Ok(report(
            &self.config,
            documents,
            pairs,
            skipped,
            stats,
            start,
        ))
    }

    /// Computes the exact Jaccard (and, for containment, both containments) of each pair, reading
    /// the documents again in bounded batches. A document that can no longer be read falls back
    /// to the estimate.
    fn verify_exact(
        &self,
        docs: &[Document],
        pairs: Vec<Pair>,
        prints: TextPrints,
    ) -> (Vec<Pair>, Vec<Skip>) {
        let mut kept = Vec::new();
        let mut skips = Vec::new();
        let scratches = Scratches::new();
        let (small, pairs) = small_components(docs, pairs);
        let counted: Vec<_> = small
            .par_iter()
            .map(|c| scratches.with(|s| self.count_small(docs, c, prints, s)))
            .collect();
        self.advance(small.iter().map(|c| c.pairs.len() as u64).sum());
        for (c, (overlaps, errors)) in small.iter().zip(counted) {
            // A small component's documents are in no other pair, so their skips are new.
            skips.extend(errors);
            for (p, overlap) in c.pairs.iter().zip(overlaps) {
                // Without an overlap (a document could not be read again), the estimate judges.
                let p = overlap.map_or(*p, |o| self.with_overlap(p, o));
                if self.verifier.accept_exact(self.score(&p)) {
                    kept.push(p);
                }
            }
        }
        // A compressed source is decompressed again from its start for each batch that reads
        // from it, so it gets fewer, larger batches.
        let compressed = |d: u32| match &docs[d as usize].origin {
            Origin::Record { source, .. } => !source.seekable(),
            Origin::File(_) | Origin::Text { .. } => false,
        };
        let max_docs = if pairs.iter().any(|p| compressed(p.a) || compressed(p.b)) {
            EXACT_BATCH_DOCS_COMPRESSED
        } else {
            EXACT_BATCH_DOCS
        };
        let mut pairs = pairs;
        let mut arena = SetArena::default();
        for range in exact_batches(docs.len(), &mut pairs, max_docs) {
            let batch = &pairs[range];
            let mut needed: Vec<u32> = batch.iter().flat_map(|p| [p.a, p.b]).collect();
            needed.par_sort_unstable();
            needed.dedup();
            // Documents with equal text have equal sets, so each text is read and shingled once.
            // Why: a text copied many times beside an edited copy would otherwise be read
            // again once per copy.
            let mut first_with: HashMap<u128, u32> = HashMap::default();
            let mut copies: Vec<(u32, u32)> = Vec::new();
            needed.retain(|&d| {
                let Some(print) = prints.of(d) else {
                    return true;
                };
                let first = *first_with.entry(print).or_insert(d);
                if first != d {
                    copies.push((d, first));
                }
                first == d
            });
            // Sketches of the larger sets, to drop hopeless pairs before their merge, where a
            // sketch serves enough pairs to repay its making (see `SKETCH_MIN_PAIRS_PER_SET`);
            // and there, when the batch is large, its core (see `Core`).
            let sketching = self.config.measure == Measure::Jaccard
                && batch.len() >= SKETCH_MIN_PAIRS_PER_SET * (needed.len() + copies.len());
            let core = if sketching && needed.len() >= CORE_MIN_DOCS {
                self.batch_core(docs, &needed, &scratches)
            } else {
                Core::default()
            };
            let words = core.words();
            // Each set is stored as its core bits, then the rest of its elements.
            let store = |sorted: &[u64]| {
                let mut sketch = None;
                let set = arena.store_with(words + sorted.len(), |room| {
                    let (bits, rest) = room.split_at_mut(words);
                    let len = core.split_into(sorted, rest, bits);
                    let split = Split {
                        bits,
                        rest: &rest[..len],
                    };
                    if sketching && split.len() >= SKETCH_MIN_SET {
                        // Repeats in `sorted` make no difference to the sketch.
                        let mut s = vec![0; SKETCH_BINS];
                        bin_sketch(sorted, &mut s);
                        sketch = Some(s);
                    }
                    words + len
                });
                (set, sketch)
            };
            let mut refs = self.reload_many(docs, &needed, &store, &scratches);
            // A copy whose first could not be read again is read itself.
            let mut unread = Vec::new();
            for &(copy, first) in &copies {
                match refs[&first].as_ref().ok().cloned() {
                    Some(set) => {
                        refs.insert(copy, Ok(set));
                    }
                    None => unread.push(copy),
                }
            }
            refs.extend(self.reload_many(docs, &unread, &store, &scratches));
            let stored = arena.finish();
            type Measured<'a> = std::result::Result<(Split<'a>, Option<&'a [u8]>), &'a Skip>;
            let sets: HashMap<u32, Measured> = refs
                .iter()
                .map(|(&d, r)| {
                    let set = r.as_ref().map(|(r, sketch)| {
                        let (bits, rest) = stored.get(*r).split_at(words);
                        (Split { bits, rest }, sketch.as_deref())
                    });
                    (d, set)
                })
                .collect();
            // The exact measures in parallel; the decisions below stay in pair order. `None`: a
            // document could not be read again; `Some(None)`: below the threshold.
            let threshold = self.verifier.threshold();
            let exact: Vec<Option<Option<Pair>>> = batch
                .par_iter()
                .map(|p| match (sets[&p.a], sets[&p.b]) {
                    (Ok((x, sx)), Ok((y, sy))) => Some(match self.config.measure {
                        // Pairs below the threshold are dropped, so their merge may stop early.
                        Measure::Jaccard => {
                            let hopeless = match (sx, sy) {
                                (Some(sa), Some(sb)) => {
                                    sketch_rejects(sa, sb, threshold, EXACT_SCREEN_Z)
                                }
                                _ => false,
                            };
                            if hopeless {
                                None
                            } else {
                                jaccard_screened_split(x, y, threshold, EXACT_SCREEN_Z).map(|j| {
                                    Pair {
                                        jaccard: Some(j),
                                        ..*p
                                    }
                                })
                            }
                        }
                        // No core without sketches, and no sketches for containment.
                        Measure::Containment => Some(Pair {
                            jaccard: Some(jaccard(x.rest, y.rest)),
                            a_in_b: Some(containment(x.rest, y.rest)),
                            b_in_a: Some(containment(y.rest, x.rest)),
                            ..*p
                        }),
                    }),
                    _ => None,
                })
                .collect();
            for (p, exact) in batch.iter().zip(exact) {
                match exact {
                    Some(exact) => {
                        if let Some(exact) =
                            exact.filter(|e| self.verifier.accept_exact(self.score(e)))
                        {
                            kept.push(exact);
                        }
                    }
                    None => {
                        // Both, when neither could be read again.
                        for e in [sets[&p.a], sets[&p.b]].into_iter().filter_map(|r| r.err()) {
                            if !skips.contains(e) {
                                skips.push(e.clone());
                            }
                        }
                        if self.verifier.accept_exact(self.score(p)) {
                            kept.push(*p);
                        }
                    }
                }
            }
            drop(sets);
            arena = stored.recycle();
            self.advance(batch.len() as u64);
            // The caller returns the error: the rest is not worth verifying.
            if self.stopped().is_some() {
                break;
            }
        }
        (kept, skips)
    }

    /// `p` with the exact measures of its `overlap`.
    fn with_overlap(&self, p: &Pair, overlap: Overlap) -> Pair {
        let containment = self.config.measure == Measure::Containment;
        Pair {
            jaccard: Some(overlap.jaccard()),
            a_in_b: containment.then(|| overlap.a_in_b()),
            b_in_a: containment.then(|| overlap.b_in_a()),
            ..*p
        }
    }

    /// Reads the files of a small component again and counts each pair's overlap as the hashes
    /// are made (see [`OverlapTable`]), with no set sorted or stored: each pair's overlap, or
    /// none when one of its documents could not be read again, whose reasons come second. Files
    /// with equal text are read once. A component of more than [`TABLE_MAX_BYTES`] of text
    /// builds sorted sets instead.
    fn count_small(
        &self,
        docs: &[Document],
        c: &Small,
        prints: TextPrints,
        s: &mut Scratch,
    ) -> (Vec<Option<Overlap>>, Vec<Skip>) {
        // The component's documents (by their place in `c.docs`) grouped by equal text.
        let mut groups: Vec<(Option<u128>, Vec<usize>)> = Vec::new();
        for (m, &d) in c.docs.iter().enumerate() {
            let print = prints.of(d);
            match groups
                .iter_mut()
                .find(|(p, _)| print.is_some() && *p == print)
            {
                Some((_, members)) => members.push(m),
                None => groups.push((print, vec![m])),
            }
        }
        let groups: Vec<Vec<usize>> = groups.into_iter().map(|(_, g)| g).collect();
        let seed = self.config.seed;
        // Each pair's overlap, given the documents read (bit `m` for `c.docs[m]`).
        let each_pair = |read: u8, overlap: &dyn Fn(usize, usize) -> Overlap| {
            let member = |d: u32| c.docs.iter().position(|&x| x == d).expect("a member");
            c.pairs
                .iter()
                .map(|p| {
                    let (i, j) = (member(p.a), member(p.b));
                    (read >> i & read >> j & 1 == 1).then(|| overlap(i, j))
                })
                .collect()
        };
        let Scratch {
            file,
            text,
            overlap,
            set,
            ..
        } = &mut *s;
        let mut bytes = 0;
        let mut first = true;
        let counted = self.read_groups(docs, c, &groups, file, text, |members, text| {
            bytes += text.len();
            if bytes > TABLE_MAX_BYTES {
                return false;
            }
            if std::mem::take(&mut first) {
                // A char shingle starts at each byte at most, and near copies share most of
                // their shingles: twice the first text's length is room for them all.
                overlap.start(2 * text.len() + 2);
            }
            overlap.add_set(members, |f| {
                self.shingler.for_each_hash(text, seed, |h| f.add(h));
            });
            true
        });
        let counted = match counted {
            Some((read, skips)) => (each_pair(read, &|i, j| overlap.overlap(i, j)), skips),
            None => {
                // Too much text for the table: each text's sorted set, and a merge for each
                // pair.
                let mut of_member = [usize::MAX; MAX_SETS];
                let mut sets: Vec<Vec<u64>> = Vec::new();
                let (read, skips) = self
                    .read_groups(docs, c, &groups, file, text, |members, text| {
                        for m in members_of(members) {
                            of_member[m] = sets.len();
                        }
                        sets.push(self.shingler.hash_set_with(text, seed, set));
                        true
                    })
                    .expect("never stopped");
                let of_sets =
                    |i: usize, j: usize| Overlap::of_sets(&sets[of_member[i]], &sets[of_member[j]]);
                (each_pair(read, &of_sets), skips)
            }
        };
        s.release_large();
        counted
    }

    /// The core of a batch (see [`Core`]): the elements in at least one in [`CORE_MIN_SHARE`]
    /// of the sets of [`CORE_SAMPLE`] of its documents, spread evenly over `needed`; none
    /// when that is fewer than [`CORE_MIN_ELEMENTS`]. A sampled document that cannot be read
    /// is left out here; the batch reports it. Records of a compressed source are not sampled:
    /// reading one again decompresses the stream from its start, which the batch does once.
    fn batch_core(&self, docs: &[Document], needed: &[u32], scratches: &Scratches) -> Core {
        let cheap = |&d: &u32| match &docs[d as usize].origin {
            Origin::File(_) | Origin::Text { .. } => true,
            Origin::Record { source, .. } => source.seekable(),
        };
        let needed: Vec<u32> = needed.iter().copied().filter(cheap).collect();
        let step = needed.len().div_ceil(CORE_SAMPLE).max(1);
        let sample: Vec<u32> = needed.iter().step_by(step).copied().collect();
        let distinct = |sorted: &[u64]| {
            let mut set = vec![0; sorted.len()];
            let len = dedup_into(sorted, &mut set);
            set.truncate(len);
            set
        };
        let sets = self.reload_many(docs, &sample, &distinct, scratches);
        let read = sets.values().filter(|s| s.is_ok()).count();
        let mut all: Vec<u64> = sets.into_values().flatten().flatten().collect();
        let core = Core::from_sample(&mut all, (read / CORE_MIN_SHARE).max(2));
        if core.elements().len() < CORE_MIN_ELEMENTS {
            Core::default()
        } else {
            core
        }
    }

    /// Reads each group of equal texts of a small component once and hands `each` the group's
    /// members read (bit `m` for `c.docs[m]`) and their normalized text: the first file of a
    /// group that can be read again stands for the rest, and a file that cannot is skipped.
    /// Returns the members read and the skips, or `None` as soon as `each` returns false.
    fn read_groups(
        &self,
        docs: &[Document],
        c: &Small,
        groups: &[Vec<usize>],
        file: &mut Vec<u8>,
        text: &mut String,
        mut each: impl FnMut(u8, &str) -> bool,
    ) -> Option<(u8, Vec<Skip>)> {
        let mut read = 0u8;
        let mut skips = Vec::new();
        for group in groups {
            for (k, &m) in group.iter().enumerate() {
                match self.reload_text(&docs[c.docs[m] as usize], file, text) {
                    Ok(()) => {
                        let members = group[k..].iter().fold(0u8, |b, &m| b | 1 << m);
                        if !each(members, text) {
                            return None;
                        }
                        read |= members;
                        break;
                    }
                    Err(skip) => skips.push(skip),
                }
            }
        }
        Some((read, skips))
    }

    /// Reads a file or a text in memory again and leaves its normalized text in `text`.
    fn reload_text(
        &self,
        doc: &Document,
        file: &mut Vec<u8>,
        text: &mut String,
    ) -> std::result::Result<(), Skip> {
        let path = match &doc.origin {
            Origin::File(path) => path,
            Origin::Text { texts, index } => {
                return match texts.text(*index) {
                    Some(t) => {
                        self.normalize_to(t, text);
                        Ok(())
                    }
                    None => Err(reload_failure(doc, "its text is gone".into())),
                };
            }
            Origin::Record { .. } => unreachable!("records are read again by source"),
        };
        match input::read_document_into(path, file, self.config.input.max_filesize) {
            Ok(Some(t)) => {
                self.normalize_to(&t, text);
                Ok(())
            }
            Ok(None) => Err(reload_failure(doc, "it is binary now".into())),
            Err(e) => Err(reload_failure(doc, crate::model::io_reason(&e))),
        }
    }

    /// What the threshold applies to: the Jaccard (exact when known) or the larger containment.
    fn score(&self, p: &Pair) -> f64 {
        match self.config.measure {
            Measure::Jaccard => p.jaccard.unwrap_or(p.estimate),
            Measure::Containment => p.a_in_b.unwrap_or(0.0).max(p.b_in_a.unwrap_or(0.0)),
        }
    }

    fn reload<T>(
        &self,
        doc: &Document,
        s: &mut Scratch,
        store: impl Fn(&[u64]) -> T,
    ) -> std::result::Result<T, Skip> {
        let fail = |reason: String| reload_failure(doc, reason);
        match &doc.origin {
            Origin::File(_) | Origin::Text { .. } => {
                let set = self.reload_text(doc, &mut s.file, &mut s.text).map(|()| {
                    store(
                        self.shingler
                            .sorted_hashes_in(&s.text, self.config.seed, &mut s.set),
                    )
                });
                s.release_large();
                set
            }
            Origin::Record { source, offset, .. } => match source.read_at(&[*offset]) {
                Ok(lines) => self.record_shingle_set(&lines[0], s, store).map_err(fail),
                Err(e) => Err(fail(crate::model::io_reason(&e))),
            },
        }
    }

    /// The shingle set of a record's line read again.
    fn record_shingle_set<T>(
        &self,
        line: &[u8],
        s: &mut Scratch,
        store: impl Fn(&[u64]) -> T,
    ) -> std::result::Result<T, String> {
        let fields = self.config.input.records.fields();
        parse_record(line, &fields).map(|r| self.store_shingle_set(&r.text, s, store))
    }

    /// Reads the documents in `needed` again and hands each one's sorted shingle hashes to
    /// `store` (which keeps the distinct ones), returning what it made of them: files and texts
    /// in parallel, records with one pass per source in offset order, so that a compressed
    /// source is decompressed once per batch rather than once per record.
    fn reload_many<T: Send>(
        &self,
        docs: &[Document],
        needed: &[u32],
        store: &(impl Fn(&[u64]) -> T + Sync),
        scratches: &Scratches,
    ) -> HashMap<u32, std::result::Result<T, Skip>> {
        let mut sets: HashMap<u32, std::result::Result<T, Skip>> = needed
            .par_iter()
            .filter(|&&d| !matches!(docs[d as usize].origin, Origin::Record { .. }))
            .map(|&d| {
                (
                    d,
                    scratches.with(|s| self.reload(&docs[d as usize], s, store)),
                )
            })
            .collect();
        let by_source = crate::source::records::by_source(docs, needed.iter().copied());
        for (source, mut items) in by_source {
            items.sort_unstable();
            let offsets: Vec<u64> = items.iter().map(|&(o, _)| o).collect();
            let fail = |d: u32, reason: String| Skip {
                id: docs[d as usize].id.clone(),
                kind: SkipKind::Unreadable,
                reason: format!("could not be read again for exact verification: {reason}"),
            };
            match source.read_at(&offsets) {
                Ok(lines) => {
                    let got: Vec<_> = items
                        .par_iter()
                        .zip(lines.par_iter())
                        .map(|(&(_, d), line)| {
                            let set = scratches.with(|s| self.record_shingle_set(line, s, store));
                            (d, set.map_err(|r| fail(d, r)))
                        })
                        .collect();
                    sets.extend(got);
                }
                Err(e) => {
                    let reason = crate::model::io_reason(&e);
                    sets.extend(
                        items
                            .iter()
                            .map(|&(_, d)| (d, Err(fail(d, reason.clone())))),
                    );
                }
            }
        }
        sets
    }
}

/// The skip of a document that could not be read again, for `reason`.
fn reload_failure(doc: &Document, reason: String) -> Skip {
    Skip {
        id: doc.id.clone(),
        kind: SkipKind::Unreadable,
        reason: format!("could not be read again for exact verification: {reason}"),
    }
}

/// The connected components of `pairs`, numbered in order of their first pair: each of the
/// `documents`' component (`u32::MAX` for one in no pair), and how many there are.
fn pair_components(documents: usize, pairs: &[Pair]) -> (Vec<u32>, usize) {
    let mut uf = crate::model::cluster::UnionFind::new(documents);
    for p in pairs {
        uf.union(p.a, p.b);
    }
    let mut of_root = vec![u32::MAX; documents];
    let mut of_doc = vec![u32::MAX; documents];
    let mut count = 0;
    for p in pairs {
        let root = uf.find(p.a) as usize;
        if of_root[root] == u32::MAX {
            of_root[root] = count;
            count += 1;
        }
        for d in [p.a, p.b] {
            of_doc[d as usize] = of_root[root];
        }
    }
    (of_doc, count as usize)
}

/// A connected component of the pairs to verify exactly, small enough for one
/// [`OverlapTable`]: at most [`MAX_SETS`] documents, every one a file or a text in memory.
#[derive(Debug, PartialEq)]
struct Small {
    /// Its documents, in order of first appearance in its pairs.
    docs: Vec<u32>,
    /// Its pairs, in their order.
    pairs: Vec<Pair>,
}

/// Splits the pairs to verify exactly into the small components (see [`Small`]) and the rest.
/// Why: a document in many pairs is best read once, its sorted set kept and merged with each;
/// in a small component each set would be sorted, stored and merged once or twice, and counting
/// all its overlaps in one table as the hashes are made costs far less (see [`OverlapTable`]),
/// with nothing stored. Most components are small (lone pairs, a few near copies of one text),
/// so this path carries much of the text read again. Records are left to the batches, which
/// read each source once per batch in offset order.
fn small_components(docs: &[Document], pairs: Vec<Pair>) -> (Vec<Small>, Vec<Pair>) {
    let (component, count) = pair_components(docs.len(), &pairs);
    // Each component's documents, until it proves too large or holds a record.
    let mut members: Vec<Option<Vec<u32>>> = vec![Some(Vec::new()); count];
    for p in &pairs {
        let c = component[p.a as usize] as usize;
        let Some(docs_of) = &mut members[c] else {
            continue;
        };
        for d in [p.a, p.b] {
            if !docs_of.contains(&d) {
                docs_of.push(d);
            }
        }
        let is_record = |d: u32| matches!(docs[d as usize].origin, Origin::Record { .. });
        if docs_of.len() > MAX_SETS || is_record(p.a) || is_record(p.b) {
            members[c] = None;
        }
    }
    let mut small: Vec<Option<Small>> = members
        .into_iter()
        .map(|m| {
            m.map(|docs| Small {
                docs,
                pairs: Vec::new(),
            })
        })
        .collect();
    let mut rest = Vec::new();
    for p in pairs {
        match &mut small[component[p.a as usize] as usize] {
            Some(c) => c.pairs.push(p),
            None => rest.push(p),
        }
    }
    (small.into_iter().flatten().collect(), rest)
}

/// The fingerprints of a signed corpus's texts, looked up by document (see
/// [`SignedCorpus::fingerprints`]); none when they were not kept.
#[derive(Clone, Copy, Default)]
pub(crate) struct TextPrints<'a> {
    /// For each signature, its document, in increasing order.
    pub signed: &'a [u32],
    /// For each signature, its text's fingerprint (or empty).
    pub prints: &'a [u128],
}

impl TextPrints<'_> {
    /// The fingerprint of document `doc`'s text, if it was signed and fingerprints were kept.
    fn of(&self, doc: u32) -> Option<u128> {
        if self.prints.len() != self.signed.len() {
            return None;
        }
        let i = self.signed.binary_search(&doc).ok()?;
        Some(self.prints[i])
    }
}

/// Orders the pairs to verify exactly into batches whose documents are read once each and held
/// together, and returns the batches' ranges: whole connected components of the pair graph, in
/// order of first appearance (pairs keep their order within one), gathered until a batch has
/// `max_docs` documents (a larger component is a batch of its own, split only past
/// [`EXACT_BATCH_PAIRS`] pairs). `documents` bounds the pairs' document indices. Why: the sets
/// of one batch are built, merged while still in the cache, and their memory is filled again
/// by the next batch, instead of every set of the run being held, and faulted in, at once.
fn exact_batches(documents: usize, pairs: &mut [Pair], max_docs: usize) -> Vec<Range<usize>> {
    let (component_of_doc, count) = pair_components(documents, pairs);
    let mut docs_in = vec![0usize; count];
    for &c in component_of_doc.iter().filter(|&&c| c != u32::MAX) {
        docs_in[c as usize] += 1;
    }
    // Stable: pairs keep their order within a component.
    pairs.par_sort_by_key(|p| component_of_doc[p.a as usize]);
    let mut batches: Vec<Range<usize>> = Vec::new();
    let (mut start, mut docs_in_last) = (0, 0usize);
    for (c, docs) in docs_in.into_iter().enumerate() {
        let len = pairs[start..].partition_point(|p| component_of_doc[p.a as usize] == c as u32);
        let end = start + len;
        let mut from = start;
        while from < end {
            let to = (from + EXACT_BATCH_PAIRS).min(end);
            match batches.last_mut() {
                Some(last)
                    if docs_in_last.saturating_add(docs) <= max_docs
                        && to - last.start <= EXACT_BATCH_PAIRS =>
                {
                    last.end = to;
                    docs_in_last += docs;
                }
                _ => {
                    batches.push(from..to);
                    docs_in_last = docs;
                }
            }
            from = to;
        }
        start = end;
    }
    batches
}

/// Scans JSON-lines corpora with `config` (`-` is standard input).
pub fn scan_records(inputs: &[PathBuf], config: &ScanConfig) -> Result<ScanReport> {
    Pipeline::new(config.clone())?.scan_records(inputs)
}

/// Puts a report in its deterministic order: in each pair `a`'s id before `b`'s, pairs sorted by
/// those ids, skips by id; and fills the last counts. Shared by both modes.
pub(crate) fn report(
    config: &ScanConfig,
    documents: Vec<Document>,
    mut pairs: Vec<Pair>,
    mut skipped: Vec<Skip>,
    mut stats: Stats,
    start: Instant,
) -> ScanReport {
    skipped.sort_by(|x, y| x.id.cmp(&y.id));
    for p in &mut pairs {
        if documents[p.a as usize].id > documents[p.b as usize].id {
            std::mem::swap(&mut p.a, &mut p.b);
            std::mem::swap(&mut p.a_in_b, &mut p.b_in_a);
        }
    }
    pairs.par_sort_unstable_by(|p, q| {
        (&documents[p.a as usize].id, &documents[p.b as usize].id)
            .cmp(&(&documents[q.a as usize].id, &documents[q.b as usize].id))
    });
    stats.pairs = pairs.len() as u64;
    stats.elapsed = start.elapsed();
    ScanReport {
        params: config.params(),
        documents,
        pairs,
        skipped,
        stats,
    }
}

/// Scans `paths` with `config`: the library's one-call entry point.
pub fn scan(paths: &[PathBuf], config: &ScanConfig) -> Result<ScanReport> {
    Pipeline::new(config.clone())?.scan(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(a: u32, b: u32) -> Pair {
        Pair {
            a,
            b,
            estimate: 0.8,
            jaccard: None,
            a_in_b: None,
            b_in_a: None,
        }
    }

    /// The batches of `exact_batches`, as the pairs' documents.
    fn batches(documents: usize, mut pairs: Vec<Pair>, max_docs: usize) -> Vec<Vec<(u32, u32)>> {
        let ranges = exact_batches(documents, &mut pairs, max_docs);
        assert_eq!(ranges.last().map_or(0, |r| r.end), pairs.len());
        ranges
            .into_iter()
            .map(|r| pairs[r].iter().map(|p| (p.a, p.b)).collect())
            .collect()
    }

    #[test]
    fn exact_batches_keep_components_whole_and_gather_them_up_to_the_bound() {
        let pairs = || vec![pair(0, 1), pair(2, 3), pair(1, 4), pair(5, 6)];
        // {0, 1, 4} fills a batch of three documents; {2, 3} and {5, 6} do not fit together.
        assert_eq!(
            batches(7, pairs(), 3),
            [vec![(0, 1), (1, 4)], vec![(2, 3)], vec![(5, 6)]]
        );
        // With room for four, the two small components share a batch.
        assert_eq!(
            batches(7, pairs(), 4),
            [vec![(0, 1), (1, 4)], vec![(2, 3), (5, 6)]]
        );
        // No bound: one batch, in the original order within components.
        assert_eq!(
            batches(7, pairs(), usize::MAX),
            [vec![(0, 1), (1, 4), (2, 3), (5, 6)]]
        );
    }

    #[test]
    fn a_component_larger_than_a_batch_is_not_split() {
        let chain: Vec<Pair> = (0..9).map(|i| pair(i, i + 1)).collect();
        let want: Vec<(u32, u32)> = (0..9).map(|i| (i, i + 1)).collect();
        assert_eq!(batches(10, chain, 2), [want]);
    }

    #[test]
    fn exact_batches_read_each_document_in_one_batch_only() {
        let mut x = 12345u64;
        let mut next = |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) % n) as u32
        };
        let pairs: Vec<Pair> = (0..300)
            .map(|_| (next(400), next(400)))
            .filter(|(a, b)| a != b)
            .map(|(a, b)| pair(a.min(b), a.max(b)))
            .collect();
        let batches = batches(400, pairs.clone(), 20);
        assert!(batches.len() > 1);
        let mut batch_of = HashMap::<u32, usize>::new();
        for (i, batch) in batches.iter().enumerate() {
            for &(a, b) in batch {
                for d in [a, b] {
                    assert_eq!(*batch_of.entry(d).or_insert(i), i, "document {d}");
                }
            }
        }
        let mut all: Vec<(u32, u32)> = batches.concat();
        let mut want: Vec<(u32, u32)> = pairs.iter().map(|p| (p.a, p.b)).collect();
        all.sort_unstable();
        want.sort_unstable();
        assert_eq!(all, want, "every pair once");
    }

    #[test]
    fn scratch_lets_go_of_a_large_documents_buffers_and_keeps_small_ones() {
        let mut s = Scratch::default();
        s.file
            .extend(std::iter::repeat_n(b'a', 2 * SCRATCH_KEEP_BYTES));
        s.text.push_str(&"b".repeat(1000));
        s.sign
            .hashes
            .extend(std::iter::repeat_n(7u64, SCRATCH_KEEP_BYTES));
        s.release_large();
        assert_eq!(s.file.capacity(), 0);
        assert_eq!(s.sign.hashes.capacity(), 0);
        assert!(
            s.text.capacity() >= 1000,
            "a small buffer is kept for the next document"
        );
    }

    fn words(seed: u64, n: usize) -> String {
        (0..n as u64)
            .map(|i| format!("w{}", fmix(seed * 1_000_003 + i) % 5000))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn fmix(x: u64) -> u64 {
        crate::sketch::minhash::fmix64(x)
    }

    #[test]
    fn small_components_have_at_most_eight_documents_all_files() {
        let file = |i: u32| Document {
            id: format!("f{i}"),
            origin: Origin::File(PathBuf::from(format!("f{i}"))),
            empty: false,
        };
        let mut docs: Vec<Document> = (0..24).map(file).collect();
        docs.push(Document {
            id: "r24".into(),
            origin: Origin::Record {
                source: Arc::new(crate::source::records::RecordSource::named("stdin")),
                line: 1,
                offset: 0,
            },
            empty: false,
        });
        // A lone pair, a chain of three, a star of nine, a star of eight whose pairs come
        // between another component's, and a pair with a record.
        let mut pairs = vec![pair(0, 1), pair(2, 3), pair(4, 3)];
        pairs.extend((6..14).map(|i| pair(5, i)));
        pairs.extend([pair(14, 15), pair(22, 23), pair(14, 16)]);
        pairs.extend((17..21).map(|i| pair(i, 14)));
        pairs.extend([pair(21, 14), pair(23, 24)]);
        let (small, rest) = small_components(&docs, pairs);
        let ends = |v: &[Pair]| v.iter().map(|p| (p.a, p.b)).collect::<Vec<_>>();
        type Ends = Vec<(u32, u32)>;
        let got: Vec<(Vec<u32>, Ends)> = small
            .iter()
            .map(|c| (c.docs.clone(), ends(&c.pairs)))
            .collect();
        let star: Vec<(u32, u32)> = [(14, 15), (14, 16)]
            .into_iter()
            .chain((17..22).map(|i| (i, 14)))
            .collect();
        assert_eq!(
            got,
            [
                (vec![0, 1], vec![(0, 1)]),
                (vec![2, 3, 4], vec![(2, 3), (4, 3)]),
                ((14..22).collect(), star),
            ]
        );
        // Nine documents are too many; 24 is a record, read again with its source's records.
        let mut want: Vec<(u32, u32)> = (6..14).map(|i| (5, i)).collect();
        want.extend([(22, 23), (23, 24)]);
        assert_eq!(ends(&rest), want);
    }

    /// Scans `dir` with exact verification by `measure`, removing `gone` between the phases.
    fn scan_exact(
        dir: &std::path::Path,
        measure: Measure,
        gone: &[&str],
    ) -> (Pipeline, ScanReport) {
        let mut p = Pipeline::new(ScanConfig {
            verify: VerifyMode::Exact,
            threshold: 0.5,
            ..Default::default()
        })
        .unwrap();
        // Containment takes samples in a scan; its exact settling is the same code on
        // signature candidates, tested here directly.
        p.config.measure = measure;
        let corpus = p.sign_files(&[dir.to_path_buf()]).unwrap();
        for name in gone {
            std::fs::remove_file(dir.join(name)).unwrap();
        }
        let report = p.find_pairs(corpus, Instant::now()).unwrap();
        (p, report)
    }

    /// Nine near copies of one text, `{prefix}{i}.txt`: a component too large for one
    /// [`OverlapTable`], verified in a batch of sorted sets.
    fn nine_near_copies(prefix: &str, seed: u64) -> Vec<(String, String)> {
        let base = words(seed, 500);
        (0..9)
            .map(|i| {
                (
                    format!("{prefix}{i}.txt"),
                    format!("{base} {}", words(seed + 1 + i, 3)),
                )
            })
            .collect()
    }

    #[test]
    fn small_components_measure_to_the_bit_what_batched_pairs_do() {
        let dir = tempfile::tempdir().unwrap();
        let base = words(7, 600);
        let mut texts = vec![
            // A lone pair...
            ("lone-a.txt".to_string(), base.clone()),
            (
                "lone-b.txt".to_string(),
                format!("{base} and a tail of words at the end"),
            ),
            // ... a chain of three...
            ("chain-a.txt".to_string(), words(8, 500)),
            (
                "chain-b.txt".to_string(),
                format!("{} one more", words(8, 500)),
            ),
            (
                "chain-c.txt".to_string(),
                format!("{} one more and another", words(8, 500)),
            ),
        ];
        // ... and nine near copies, whose sets are built once each and merged.
        texts.extend(nine_near_copies("nine-", 20));
        for (name, text) in &texts {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        for measure in [Measure::Jaccard, Measure::Containment] {
            let (p, report) = scan_exact(dir.path(), measure, &[]);
            let text_of = |i: u32| {
                let id = &report.documents[i as usize].id;
                &texts.iter().find(|t| id.ends_with(&t.0)).unwrap().1
            };
            assert_eq!(
                report.pairs.len(),
                1 + 3 + 36,
                "{measure:?}: 1 lone pair, 3 in the chain, 36 among the nine"
            );
            for q in &report.pairs {
                let (x, y) = (p.shingle_set(text_of(q.a)), p.shingle_set(text_of(q.b)));
                assert_eq!(q.jaccard.map(f64::to_bits), Some(jaccard(&x, &y).to_bits()));
                let contained = (measure == Measure::Containment)
                    .then(|| (containment(&x, &y).to_bits(), containment(&y, &x).to_bits()));
                assert_eq!(
                    q.a_in_b.map(f64::to_bits).zip(q.b_in_a.map(f64::to_bits)),
                    contained
                );
            }
        }
    }

    #[test]
    fn a_large_batch_splits_its_sets_by_its_core_and_measures_to_the_bit() {
        // 26 groups of 20 near copies: 520 documents and 4,940 pairs in one batch, enough for
        // sketches and a core. Every text has the same boilerplate (the core), its group's
        // text and a few words of its own.
        let dir = tempfile::tempdir().unwrap();
        let boilerplate = words(50, 150);
        let mut texts = Vec::new();
        for group in 0..26 {
            let body = words(100 + group, 250);
            for i in 0..20 {
                let own = words(10_000 + group * 20 + i, 4);
                texts.push((
                    format!("g{group:02}-{i:02}.txt"),
                    format!("{boilerplate} {body} {own}"),
                ));
            }
        }
        for (name, text) in &texts {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let (p, report) = scan_exact(dir.path(), Measure::Jaccard, &[]);
        assert_eq!(report.pairs.len(), 26 * 190);
        let text_of = |i: u32| {
            let id = &report.documents[i as usize].id;
            &texts.iter().find(|t| id.ends_with(&t.0)).unwrap().1
        };
        let mut sets = HashMap::<u32, Vec<u64>>::new();
        let mut set = |i: u32| -> Vec<u64> {
            sets.entry(i)
                .or_insert_with(|| p.shingle_set(text_of(i)))
                .clone()
        };
        for q in &report.pairs {
            let want = jaccard(&set(q.a), &set(q.b));
            assert_eq!(q.jaccard.map(f64::to_bits), Some(want.to_bits()), "{q:?}");
        }
        // The batch's core holds the boilerplate's shingles (and others common in the text).
        let needed: Vec<u32> = (0..report.documents.len() as u32).collect();
        let core = p.batch_core(&report.documents, &needed, &Scratches::new());
        let boilerplate_set = p.shingle_set(&boilerplate);
        assert!(
            core.elements().len() >= CORE_MIN_ELEMENTS,
            "{}",
            core.elements().len()
        );
        let in_boilerplate = core
            .elements()
            .iter()
            .filter(|h| boilerplate_set.binary_search(h).is_ok())
            .count();
        assert_eq!(in_boilerplate, boilerplate_set.len());
    }

    #[test]
    fn a_small_component_too_large_for_the_table_is_measured_by_its_sorted_sets() {
        let dir = tempfile::tempdir().unwrap();
        // Three texts of over 1.3 MiB each: more than `TABLE_MAX_BYTES` together, but not the
        // first two.
        let base = words(9, 250_000);
        let texts = [
            base.clone(),
            format!("{base} and a tail of words at the end"),
            format!("{base} and another tail of words"),
        ];
        assert!(texts[0].len() + texts[1].len() <= TABLE_MAX_BYTES);
        assert!(texts.iter().map(String::len).sum::<usize>() > TABLE_MAX_BYTES);
        for (i, text) in texts.iter().enumerate() {
            std::fs::write(dir.path().join(format!("{i}.txt")), text).unwrap();
        }
        let (p, report) = scan_exact(dir.path(), Measure::Jaccard, &[]);
        assert_eq!(report.pairs.len(), 3);
        for q in &report.pairs {
            let name = |i: u32| report.documents[i as usize].id.rsplit('/').next().unwrap();
            let text = |i: u32| &texts[name(i)[..1].parse::<usize>().unwrap()];
            let (x, y) = (p.shingle_set(text(q.a)), p.shingle_set(text(q.b)));
            let want = jaccard(&x, &y);
            assert!(want > 0.99 && want < 1.0, "{want}");
            assert_eq!(q.jaccard.map(f64::to_bits), Some(want.to_bits()));
        }
    }

    #[test]
    fn every_file_of_a_pair_that_cannot_be_read_again_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        for (name, seed) in [
            ("a.txt", 1),
            ("b.txt", 1),
            ("c.txt", 2),
            ("d.txt", 2),
            ("e.txt", 2),
        ] {
            let text = format!("{} {name}", words(seed, 400));
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        for (name, text) in nine_near_copies("nine-", 30) {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        // Both files of the lone pair a-b, two of the chain c-d-e, and two of the nine (a
        // batch) are gone.
        let (_, report) = scan_exact(
            dir.path(),
            Measure::Jaccard,
            &[
                "a.txt",
                "b.txt",
                "c.txt",
                "d.txt",
                "nine-0.txt",
                "nine-1.txt",
            ],
        );
        let mut gone: Vec<&str> = report
            .skipped
            .iter()
            .map(|s| s.id.rsplit('/').next().unwrap())
            .collect();
        gone.sort_unstable();
        assert_eq!(
            gone,
            [
                "a.txt",
                "b.txt",
                "c.txt",
                "d.txt",
                "nine-0.txt",
                "nine-1.txt"
            ]
        );
        assert!(report.skipped.iter().all(|s| {
            s.kind == SkipKind::Unreadable
                && s.reason
                    .starts_with("could not be read again for exact verification")
        }));
        // Every pair is still judged, those with a file gone on their estimate (each is far
        // above the threshold), the others exactly.
        assert_eq!(report.pairs.len(), 4 + 36);
        let name = |i: u32| report.documents[i as usize].id.rsplit('/').next().unwrap();
        for q in &report.pairs {
            let read = |i: u32| !gone.contains(&name(i));
            assert_eq!(q.jaccard.is_some(), read(q.a) && read(q.b), "{q:?}");
        }
        assert_eq!(
            report.pairs.iter().filter(|q| q.jaccard.is_some()).count(),
            21
        );
    }

    #[test]
    fn a_stopped_pipeline_returns_interrupted_and_a_running_one_its_report() {
        let texts: Vec<(String, String)> = (0..200)
            .map(|i| (i.to_string(), words(i % 20, 200)))
            .collect();
        let source = Source::Texts(crate::source::texts::SharedTexts::new(texts));
        for strategy in [None, Some("exact")] {
            let config = || ScanConfig {
                strategy: match strategy {
                    None => ScanConfig::default().strategy,
                    Some(_) => StrategyConfig::Exact(Default::default()),
                },
                ..Default::default()
            };
            let stop = Arc::new(AtomicBool::new(false));
            let running = Pipeline::new(config())
                .unwrap()
                .with_stop(Arc::clone(&stop));
            assert!(!running.scan_source(&source).unwrap().pairs.is_empty());
            stop.store(true, Ordering::Relaxed);
            assert!(matches!(
                running.scan_source(&source),
                Err(Error::Interrupted)
            ));
            let dedup = crate::dedup::dedup_source(&running, &source, crate::dedup::Keep::First);
            assert!(matches!(dedup, Err(Error::Interrupted)), "{dedup:?}");
        }
    }

    #[test]
    fn equal_texts_get_jaccard_one_without_being_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let text = words(1, 400);
        // Equal after normalization (case and white space differ), so equal shingle sets.
        std::fs::write(dir.path().join("a.txt"), &text).unwrap();
        std::fs::write(
            dir.path().join("b.txt"),
            text.to_uppercase().replace(' ', "  \n"),
        )
        .unwrap();
        // A near copy: must still be read again and measured.
        let mut near = text.clone();
        near.push_str(" tail words here");
        std::fs::write(dir.path().join("c.txt"), &near).unwrap();
        let p = Pipeline::new(ScanConfig {
            verify: VerifyMode::Exact,
            ..Default::default()
        })
        .unwrap();
        let corpus = p.sign_files(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!(corpus.fingerprints.len(), 3);
        // b.txt disappears between the phases: its pair with a.txt needs no second read.
        std::fs::remove_file(dir.path().join("b.txt")).unwrap();
        let report = p.find_pairs(corpus, Instant::now()).unwrap();
        let id = |i: u32| {
            report.documents[i as usize]
                .id
                .rsplit('/')
                .next()
                .unwrap()
                .to_string()
        };
        let found: Vec<(String, String, Option<f64>)> = report
            .pairs
            .iter()
            .map(|q| (id(q.a), id(q.b), q.jaccard))
            .collect();
        assert!(
            found.contains(&("a.txt".into(), "b.txt".into(), Some(1.0))),
            "{found:?}"
        );
        let ac = found
            .iter()
            .find(|f| f.0 == "a.txt" && f.1 == "c.txt")
            .unwrap();
        assert!(ac.2.unwrap() > 0.9 && ac.2.unwrap() < 1.0, "{ac:?}");
        // Only the pairs with b.txt that needed a merge failed to re-read it.
        assert!(report.skipped.iter().all(|s| s.id.ends_with("b.txt")));
        assert_eq!(report.stats.exact_checked, 3);
    }

    #[test]
    fn copies_of_a_text_share_one_read_and_a_copy_is_read_when_its_first_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let text = words(3, 400);
        let mut near = text.clone();
        near.push_str(" and a few more words at the end");
        for name in ["a.txt", "b.txt", "c.txt"] {
            std::fs::write(dir.path().join(name), &text).unwrap();
        }
        std::fs::write(dir.path().join("d.txt"), &near).unwrap();
        let p = Pipeline::new(ScanConfig {
            verify: VerifyMode::Exact,
            ..Default::default()
        })
        .unwrap();
        let shingler = Shingler::new(&p.config.shingle).unwrap();
        let set = |t: &str| {
            let mut norm = String::new();
            crate::text::normalize::normalize_into(t, &p.config.normalize, &mut norm);
            shingler.hash_set(&norm, p.config.seed)
        };
        let want = jaccard(&set(&text), &set(&near));
        let measured = |gone: Option<&str>| {
            let corpus = p.sign_files(&[dir.path().to_path_buf()]).unwrap();
            if let Some(gone) = gone {
                std::fs::remove_file(dir.path().join(gone)).unwrap();
            }
            let report = p.find_pairs(corpus, Instant::now()).unwrap();
            let name = |i: u32| report.documents[i as usize].id.rsplit('/').next().unwrap();
            let with_d: Vec<(&str, Option<f64>)> = report
                .pairs
                .iter()
                .filter(|q| name(q.b) == "d.txt")
                .map(|q| (name(q.a), q.jaccard))
                .collect();
            (
                with_d
                    .iter()
                    .map(|&(a, j)| (a.to_string(), j))
                    .collect::<Vec<_>>(),
                report.skipped,
            )
        };
        // Read once for all three copies: each pair with the near copy has the exact value.
        let (with_d, skipped) = measured(None);
        assert_eq!(
            with_d,
            [
                ("a.txt".into(), Some(want)),
                ("b.txt".into(), Some(want)),
                ("c.txt".into(), Some(want))
            ]
        );
        assert!(skipped.is_empty());
        // The copy read for the others is gone: the next copy is read in its place, and only
        // the gone one's own pair falls back to its estimate.
        let (with_d, skipped) = measured(Some("a.txt"));
        assert_eq!(
            with_d[1..],
            [("b.txt".into(), Some(want)), ("c.txt".into(), Some(want))]
        );
        assert_eq!(with_d[0].0, "a.txt");
        assert_eq!(skipped.len(), 1);
        assert!(skipped[0].id.ends_with("a.txt"), "{skipped:?}");
    }

    #[test]
    fn fingerprints_are_kept_only_when_exact_verification_may_follow() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), words(2, 50)).unwrap();
        let sign = |verify| {
            let p = Pipeline::new(ScanConfig {
                verify,
                ..Default::default()
            })
            .unwrap();
            p.sign_files(&[dir.path().to_path_buf()])
                .unwrap()
                .fingerprints
                .len()
        };
        assert_eq!(sign(VerifyMode::Auto), 1);
        assert_eq!(sign(VerifyMode::Signature), 0);
    }

    /// Records go through the strategy the configuration chooses, as files do: exact mode
    /// and the sample sketches apply to them, and the report's parameters say which ran.
    #[test]
    fn records_are_scanned_by_the_strategy_the_config_chooses() {
        let dir = tempfile::tempdir().unwrap();
        let base = words(11, 400);
        let lines: String = [
            base.clone(),
            format!("{base} a few more words"),
            words(12, 300),
        ]
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{}\n", serde_json::json!({"id": i, "text": t})))
        .collect();
        let path = dir.path().join("c.jsonl");
        std::fs::write(&path, lines).unwrap();
        let scan = |config: ScanConfig| {
            Pipeline::new(config)
                .unwrap()
                .scan_records(std::slice::from_ref(&path))
                .unwrap()
        };
        let exact = scan(ScanConfig::with_strategy(StrategyConfig::Exact(
            Default::default(),
        )));
        assert_eq!(exact.params.mode, crate::find::config::Mode::Exact);
        assert_eq!(exact.pairs.len(), 1);
        // Exact mode has nothing to estimate: the estimate is the exact Jaccard.
        assert_eq!(Some(exact.pairs[0].estimate), exact.pairs[0].jaccard);
        let sampled = scan(ScanConfig::with_strategy(StrategyConfig::Sample(
            Default::default(),
        )));
        assert_eq!(sampled.params.sketch, Some("modulo"));
        assert_eq!(sampled.pairs.len(), 1);
        let signed = scan(ScanConfig::default());
        assert_eq!(signed.params.mode, crate::find::config::Mode::Minhash);
        assert_eq!(signed.pairs.len(), 1);
    }

    /// Files are signed straight into rows of one array, skipped and empty ones squeezed out:
    /// each row is the document's own signature.
    #[test]
    fn files_signed_into_rows_are_their_own_signatures() {
        let dir = tempfile::tempdir().unwrap();
        let texts = [
            words(31, 300),
            String::new(),
            words(32, 40),
            "\0binary".into(),
            words(33, 9),
        ];
        for (i, t) in texts.iter().enumerate() {
            std::fs::write(dir.path().join(format!("{i}.txt")), t).unwrap();
        }
        let p = Pipeline::new(ScanConfig::default()).unwrap();
        let c = p.sign_files(&[dir.path().to_path_buf()]).unwrap();
        let k = 128;
        assert_eq!(c.signed.len(), 3);
        assert_eq!(c.signatures.len(), 3 * k);
        for (row, &d) in c.signed.iter().enumerate() {
            let i: usize = c.documents[d as usize].id.rsplit('/').next().unwrap()[..1]
                .parse()
                .unwrap();
            let own = p.signature(&texts[i]).unwrap();
            assert_eq!(&c.signatures[row * k..(row + 1) * k], &own[..], "{i}.txt");
        }
    }

    /// A corpus signed by one pipeline is refused by a pipeline that signs otherwise, instead of
    /// being paired with the wrong width (or seed, or sketch).
    #[test]
    fn a_corpus_signed_otherwise_is_a_mismatch() {
        let texts: Vec<(String, String)> = (0..20)
            .map(|i| (format!("d{i}"), words(40 + i / 2, 200)))
            .collect();
        let source = Source::Texts(crate::source::texts::SharedTexts::new(texts));
        let with = |num_perm, seed| {
            let mut c = ScanConfig::with_strategy(StrategyConfig::Signatures(
                crate::find::config::SignatureConfig {
                    num_perm,
                    lsh: crate::candidates::lsh::LshParams { bands: 16, rows: 4 },
                    ..Default::default()
                },
            ));
            c.seed = seed;
            Pipeline::new(c).unwrap()
        };
        let (p64, p128, seeded) = (with(64, 42), with(128, 42), with(64, 7));
        let corpus = p64.sign(&source).unwrap();
        assert_eq!(corpus.sketch_params(), Some(p64.config().sketch_params()));
        assert_eq!(corpus.signatures().len(), corpus.signed().len() * 64);
        let refused = |p: &Pipeline, c: SignedCorpus| match p.find_pairs(c, Instant::now()) {
            Err(Error::Mismatch(m)) => m,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            refused(&p128, corpus.clone()),
            "signed corpus vs pipeline: num-perm 64 vs 128"
        );
        assert_eq!(
            refused(&seeded, corpus.clone()),
            "signed corpus vs pipeline: seed 42 vs 7"
        );
        // A corpus that does not record its parameters (assembled in the crate) is checked for
        // its width.
        let unrecorded = SignedCorpus {
            params: None,
            ..corpus.clone()
        };
        assert_eq!(
            refused(&p128, unrecorded.clone()),
            "signed corpus vs pipeline: num-perm 64 vs 128"
        );
        // The pipeline that signed it pairs it as its own scan does.
        let own = p64.find_pairs(corpus, Instant::now()).unwrap();
        let scan = p64.scan_source(&source).unwrap();
        assert_eq!(own.pairs, scan.pairs);
        assert!(!own.pairs.is_empty());
        assert_eq!(
            p64.find_pairs(unrecorded, Instant::now()).unwrap().pairs,
            scan.pairs
        );
    }
}
