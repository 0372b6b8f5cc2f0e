//! The whole pipeline: input -> normalize -> shingle -> sign (in parallel) -> LSH -> verify.
//!
//! Documents are streamed: each worker reads, normalizes, shingles and signs one document with
//! reusable buffers and keeps only its signature, so memory grows with the number of documents,
//! not with the size of the corpus. Exact verification reads the documents of the uncertain pairs
//! again, in bounded batches, instead of keeping every shingle set.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use serde::Serialize;

use crate::config::{Params, ScanConfig};
use crate::error::{Error, Result};
use crate::input::{self, Entry, Read, Skip, SkipKind};
use crate::lsh::LshIndex;
use crate::minhash::{Signer, agreement};
use crate::normalize::normalize_into;
use crate::shingle::Shingler;
use crate::verify::{Decision, Verifier, jaccard};

/// Pairs verified exactly per batch: bounds the shingle sets held at once.
const EXACT_BATCH_PAIRS: usize = 1 << 16;

/// A document that was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// The id shown in reports.
    pub id: String,
    /// Where it was read from, to read it again for exact verification.
    pub origin: Origin,
    /// True when normalization left no text (never paired).
    pub empty: bool,
}

/// Where a document's text can be found again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A whole file.
    File(PathBuf),
}

/// A reported pair. `a` and `b` index [`ScanReport::documents`]; `a`'s id sorts before `b`'s.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Pair {
    /// The first document.
    pub a: u32,
    /// The second document.
    pub b: u32,
    /// The signature estimate of the Jaccard similarity.
    pub estimate: f64,
    /// The exact Jaccard similarity, when it was computed.
    pub jaccard: Option<f64>,
    /// With `Measure::Containment`: the share of `a`'s shingles found in `b`.
    pub a_in_b: Option<f64>,
    /// With `Measure::Containment`: the share of `b`'s shingles found in `a`.
    pub b_in_a: Option<f64>,
}

/// Counts for the summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Documents read (including empty ones).
    pub documents: u64,
    /// Documents with no text after normalization.
    pub empty: u64,
    /// Binary files skipped.
    pub skipped_binary: u64,
    /// Files or directories that could not be read.
    pub skipped_unreadable: u64,
    /// Bytes of text read.
    pub bytes: u64,
    /// Distinct candidate pairs considered.
    pub candidates: u64,
    /// Candidate pairs whose exact Jaccard was computed.
    pub exact_checked: u64,
    /// Buckets linked as stars because they exceeded `max_bucket`.
    pub oversized_buckets: u64,
    /// Pairs reported.
    pub pairs: u64,
    /// Exact mode: the memory estimate checked before the join, in bytes. It counts one
    /// candidate table per worker thread, so it is left out of the JSON report, which must not
    /// depend on the thread count.
    pub memory_estimate: Option<u64>,
    /// Wall time of the scan.
    #[serde(serialize_with = "as_secs")]
    pub elapsed: Duration,
}

fn as_secs<S: serde::Serializer>(d: &Duration, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_f64((d.as_secs_f64() * 1e6).round() / 1e6)
}

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

    /// Clusters: connected components of the pairs, each sorted by id, ordered by first id.
    pub fn clusters(&self) -> Vec<Vec<u32>> {
        let mut groups =
            crate::cluster::components(self.documents.len(), self.pairs.iter().map(|p| (p.a, p.b)));
        for g in &mut groups {
            g.sort_by(|&x, &y| self.id(x).cmp(self.id(y)));
        }
        groups.sort_by(|g, h| self.id(g[0]).cmp(self.id(h[0])));
        groups
    }
}

/// Every document read, with the signatures of the non-empty ones: the result of phase one.
#[derive(Debug, Clone, Default)]
pub struct SignedCorpus {
    /// Every document read, in input order.
    pub documents: Vec<Document>,
    /// Signatures, flat, `num_perm` slots each, one per non-empty document.
    pub signatures: Vec<u32>,
    /// For each signature, the index of its document in `documents`.
    pub signed: Vec<u32>,
    /// What was skipped.
    pub skipped: Vec<Skip>,
    /// Counts so far.
    pub stats: Stats,
}

/// Per-thread buffers reused from one document to the next.
#[derive(Default)]
struct Scratch {
    text: String,
    hashes: Vec<u64>,
    slots: Vec<u64>,
}

/// What happened to one entry.
enum Outcome {
    Signed(Vec<u32>, u64),
    Empty(u64),
    Skipped(Skip),
}

/// The pipeline's stages, built once from a validated config.
pub struct Pipeline {
    config: ScanConfig,
    shingler: Shingler,
    signer: Signer,
    verifier: Verifier,
}

impl Pipeline {
    /// Validates `config` and builds the stages.
    pub fn new(config: ScanConfig) -> Result<Self> {
        config.validate()?;
        Ok(Pipeline {
            shingler: Shingler::new(&config.shingle)?,
            signer: Signer::new(config.sketch_params())?,
            verifier: Verifier::new(config.verify, config.threshold, config.num_perm),
            config,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ScanConfig {
        &self.config
    }

    /// Normalizes `text` and returns its sorted, distinct shingle hashes.
    pub fn shingle_set(&self, text: &str) -> Vec<u64> {
        let mut norm = String::new();
        normalize_into(text, &self.config.normalize, &mut norm);
        self.shingler.hash_set(&norm, self.config.seed)
    }

    /// Normalizes and shingles `text`, and signs it (`None` for an empty document).
    pub fn signature(&self, text: &str) -> Option<Vec<u32>> {
        let mut s = Scratch::default();
        self.sign_text(text, &mut s)
    }

    fn sign_text(&self, text: &str, s: &mut Scratch) -> Option<Vec<u32>> {
        normalize_into(text, &self.config.normalize, &mut s.text);
        s.hashes.clear();
        self.shingler
            .hashes_into(&s.text, self.config.seed, &mut s.hashes);
        if s.hashes.is_empty() {
            return None;
        }
        let mut sig = vec![0u32; self.signer.num_perm()];
        self.signer.sign_into(&s.hashes, &mut sig, &mut s.slots);
        Some(sig)
    }

    fn process(&self, entry: &Entry, s: &mut Scratch) -> Outcome {
        match input::read_document(&entry.path) {
            Err(e) => Outcome::Skipped(Skip {
                id: entry.id.clone(),
                kind: SkipKind::Unreadable,
                reason: input::io_reason(&e),
            }),
            Ok(Read::Binary) => Outcome::Skipped(Skip {
                id: entry.id.clone(),
                kind: SkipKind::Binary,
                reason: "binary file (NUL byte in the first 8 KiB)".into(),
            }),
            Ok(Read::Text(text)) => {
                let bytes = text.len() as u64;
                match self.sign_text(&text, s) {
                    Some(sig) => Outcome::Signed(sig, bytes),
                    None => Outcome::Empty(bytes),
                }
            }
        }
    }

    /// Scans the files and directories in `paths`.
    pub fn scan(&self, paths: &[PathBuf]) -> Result<ScanReport> {
        let start = Instant::now();
        if self.config.exact {
            return crate::exact::scan_files(&self.config, paths, start);
        }
        let corpus = self.sign_files(paths)?;
        self.find_pairs(corpus, start)
    }

    /// Phase one: finds, reads, normalizes, shingles and signs every document, in parallel.
    pub fn sign_files(&self, paths: &[PathBuf]) -> Result<SignedCorpus> {
        let (entries, mut skipped) = input::collect(paths, &self.config.input)?;
        let outcomes: Vec<Outcome> = entries
            .par_iter()
            .map_init(Scratch::default, |s, e| self.process(e, s))
            .collect();

        let mut stats = Stats::default();
        let mut documents = Vec::with_capacity(entries.len());
        let mut sigs: Vec<u32> = Vec::new();
        // signature index -> document index
        let mut signed: Vec<u32> = Vec::new();
        for (entry, outcome) in entries.into_iter().zip(outcomes) {
            let doc = documents.len() as u32;
            match outcome {
                Outcome::Skipped(skip) => skipped.push(skip),
                Outcome::Empty(bytes) => {
                    stats.bytes += bytes;
                    stats.empty += 1;
                    documents.push(Document {
                        id: entry.id,
                        origin: Origin::File(entry.path),
                        empty: true,
                    });
                }
                Outcome::Signed(sig, bytes) => {
                    stats.bytes += bytes;
                    sigs.extend_from_slice(&sig);
                    signed.push(doc);
                    documents.push(Document {
                        id: entry.id,
                        origin: Origin::File(entry.path),
                        empty: false,
                    });
                }
            }
        }
        stats.documents = documents.len() as u64;
        for s in &skipped {
            match s.kind {
                SkipKind::Binary => stats.skipped_binary += 1,
                SkipKind::Unreadable => stats.skipped_unreadable += 1,
            }
        }
        Ok(SignedCorpus {
            documents,
            signatures: sigs,
            signed,
            skipped,
            stats,
        })
    }

    /// Phase two: LSH candidates, verification, and the sorted report. `start` is when the scan
    /// began, for the elapsed time.
    pub fn find_pairs(&self, corpus: SignedCorpus, start: Instant) -> Result<ScanReport> {
        let k = self.signer.num_perm();
        let SignedCorpus {
            documents,
            signatures: sigs,
            signed,
            mut skipped,
            mut stats,
        } = corpus;
        skipped.sort_by(|x, y| x.id.cmp(&y.id));
        if documents.is_empty() {
            return Err(Error::NoDocuments);
        }

        // Candidates, verified by signature as they are found.
        let index = LshIndex::build(&sigs, k, self.config.lsh)?;
        let sig_of = |i: u32| &sigs[i as usize * k..(i as usize + 1) * k];
        let (found, cstats) = index.candidates(self.config.max_bucket, |a, b| {
            let m = agreement(sig_of(a), sig_of(b));
            match self.verifier.decide(m) {
                Decision::Reject => None,
                d => Some((a, b, m, d == Decision::Exact)),
            }
        });
        stats.candidates = cstats.candidates;
        stats.oversized_buckets = cstats.oversized_buckets;

        let mut pairs = Vec::with_capacity(found.len());
        let mut uncertain = Vec::new();
        for (a, b, m, exact) in found {
            let p = Pair {
                a: signed[a as usize],
                b: signed[b as usize],
                estimate: m as f64 / k as f64,
                jaccard: None,
                a_in_b: None,
                b_in_a: None,
            };
            if exact {
                uncertain.push(p);
            } else {
                pairs.push(p);
            }
        }
        stats.exact_checked = uncertain.len() as u64;
        let (kept, reload_skips) = self.verify_exact(&documents, uncertain);
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

    /// Computes the exact Jaccard of each pair, reading the documents again in bounded batches.
    /// A document that can no longer be read falls back to the signature decision.
    fn verify_exact(&self, docs: &[Document], pairs: Vec<Pair>) -> (Vec<Pair>, Vec<Skip>) {
        let mut kept = Vec::new();
        let mut skips = Vec::new();
        for batch in pairs.chunks(EXACT_BATCH_PAIRS) {
            let mut needed: Vec<u32> = batch.iter().flat_map(|p| [p.a, p.b]).collect();
            needed.sort_unstable();
            needed.dedup();
            let sets: HashMap<u32, std::result::Result<Vec<u64>, Skip>> = needed
                .par_iter()
                .map(|&d| (d, self.reload(&docs[d as usize])))
                .collect();
            for p in batch {
                match (&sets[&p.a], &sets[&p.b]) {
                    (Ok(x), Ok(y)) => {
                        let j = jaccard(x, y);
                        if self.verifier.accept_exact(j) {
                            kept.push(Pair {
                                jaccard: Some(j),
                                ..*p
                            });
                        }
                    }
                    (Err(e), _) | (_, Err(e)) => {
                        if !skips.contains(e) {
                            skips.push(e.clone());
                        }
                        if self.verifier.accept_exact(p.estimate) {
                            kept.push(*p);
                        }
                    }
                }
            }
        }
        (kept, skips)
    }

    fn reload(&self, doc: &Document) -> std::result::Result<Vec<u64>, Skip> {
        let fail = |reason: String| Skip {
            id: doc.id.clone(),
            kind: SkipKind::Unreadable,
            reason: format!("could not be read again for exact verification: {reason}"),
        };
        let Origin::File(path) = &doc.origin;
        match input::read_document(path) {
            Ok(Read::Text(t)) => Ok(self.shingle_set(&t)),
            Ok(Read::Binary) => Err(fail("it is binary now".into())),
            Err(e) => Err(fail(input::io_reason(&e))),
        }
    }
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
