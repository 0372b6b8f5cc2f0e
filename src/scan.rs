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
use crate::verify::{Decision, Verifier, jaccard_at_least};

/// Pairs verified exactly per batch: bounds the shingle sets held at once.
const EXACT_BATCH_PAIRS: usize = 1 << 16;

/// Shingle hashes per block when a document is signed as it is hashed: 8 KiB, well inside the
/// L1 data cache.
const HASH_BLOCK: usize = 1024;

/// Documents of at least this many bytes per signature slot are signed block by block. With 32
/// shingles per slot, round 0 of FSS leaves a slot empty with probability about e^-32, so the
/// fallback (hashing again) practically never runs; smaller documents keep their hashes, which
/// fit in the cache anyway.
const STREAM_MIN_SHINGLES_PER_SLOT: usize = 32;

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
    /// The file as read.
    file: Vec<u8>,
    /// The normalized text.
    text: String,
    hashes: Vec<u64>,
    slots: Vec<u64>,
}

/// What happened to one entry.
enum Outcome {
    /// Signed into its row of the flat signature array; the document's length in bytes.
    Signed(u64),
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
        let mut sig = vec![0u32; self.signer.num_perm()];
        self.sign_text_into(text, s, &mut sig).then_some(sig)
    }

    /// Normalizes, shingles and signs `text` into `sig`; false for an empty document.
    ///
    /// A large document is signed as its hashes are made, a cache-sized block at a time
    /// ([`Signer::absorb`]), so its hashes are never stored; when round 0 is not enough (FSS on
    /// a document with few distinct shingles) the hashes are made again and signed whole.
    fn sign_text_into(&self, text: &str, s: &mut Scratch, sig: &mut [u32]) -> bool {
        normalize_into(text, &self.config.normalize, &mut s.text);
        let seed = self.config.seed;
        s.hashes.clear();
        if s.text.len() >= STREAM_MIN_SHINGLES_PER_SLOT * self.signer.num_perm() {
            self.signer.begin(&mut s.slots);
            let (signer, slots) = (&self.signer, &mut s.slots);
            let n = self
                .shingler
                .hash_blocks(&s.text, seed, &mut s.hashes, HASH_BLOCK, |b| {
                    signer.absorb(b, slots)
                });
            self.signer.absorb(&s.hashes, &mut s.slots);
            if n == 0 {
                return false;
            }
            if self.signer.finish(&mut s.slots, sig) {
                return true;
            }
            s.hashes.clear();
        }
        self.shingler.hashes_into(&s.text, seed, &mut s.hashes);
        if s.hashes.is_empty() {
            return false;
        }
        self.signer.sign_into(&s.hashes, sig, &mut s.slots);
        true
    }

    fn process(&self, entry: &Entry, s: &mut Scratch, sig: &mut [u32]) -> Outcome {
        let mut file = std::mem::take(&mut s.file);
        let outcome = match input::read_document_into(&entry.path, &mut file) {
            Err(e) => Outcome::Skipped(Skip {
                id: entry.id.clone(),
                kind: SkipKind::Unreadable,
                reason: input::io_reason(&e),
            }),
            Ok(None) => Outcome::Skipped(Skip {
                id: entry.id.clone(),
                kind: SkipKind::Binary,
                reason: "binary file (NUL byte in the first 8 KiB)".into(),
            }),
            Ok(Some(text)) => {
                let bytes = text.len() as u64;
                if self.sign_text_into(&text, s, sig) {
                    Outcome::Signed(bytes)
                } else {
                    Outcome::Empty(bytes)
                }
            }
        };
        s.file = file;
        outcome
    }

    /// Scans the files and directories in `paths`.
    pub fn scan(&self, paths: &[PathBuf]) -> Result<ScanReport> {
        let start = Instant::now();
        let corpus = self.sign_files(paths)?;
        self.find_pairs(corpus, start)
    }

    /// Phase one: finds, reads, normalizes, shingles and signs every document, in parallel.
    pub fn sign_files(&self, paths: &[PathBuf]) -> Result<SignedCorpus> {
        let (entries, mut skipped) = input::collect(paths, &self.config.input)?;
        // Each document signs straight into its row of one flat array (no vector per
        // document); rows of skipped and empty documents are squeezed out afterwards.
        let k = self.signer.num_perm();
        let mut sigs = vec![0u32; entries.len() * k];
        let outcomes: Vec<Outcome> = entries
            .par_iter()
            .zip(sigs.par_chunks_mut(k))
            .map_init(Scratch::default, |s, (e, sig)| self.process(e, s, sig))
            .collect();

        let mut stats = Stats::default();
        let mut documents = Vec::with_capacity(entries.len());
        // signature index -> document index
        let mut signed: Vec<u32> = Vec::new();
        for (row, (entry, outcome)) in entries.into_iter().zip(outcomes).enumerate() {
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
                Outcome::Signed(bytes) => {
                    stats.bytes += bytes;
                    let to = signed.len() * k;
                    sigs.copy_within(row * k..(row + 1) * k, to);
                    signed.push(doc);
                    documents.push(Document {
                        id: entry.id,
                        origin: Origin::File(entry.path),
                        empty: false,
                    });
                }
            }
        }
        sigs.truncate(signed.len() * k);
        sigs.shrink_to_fit();
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
        skipped.sort_by(|x, y| x.id.cmp(&y.id));

        // a's id before b's, then sorted: the output order depends only on the ids.
        for p in &mut pairs {
            if documents[p.a as usize].id > documents[p.b as usize].id {
                std::mem::swap(&mut p.a, &mut p.b);
                std::mem::swap(&mut p.a_in_b, &mut p.b_in_a);
            }
        }
        pairs.sort_by(|p, q| {
            (&documents[p.a as usize].id, &documents[p.b as usize].id)
                .cmp(&(&documents[q.a as usize].id, &documents[q.b as usize].id))
        });
        stats.pairs = pairs.len() as u64;
        stats.elapsed = start.elapsed();
        Ok(ScanReport {
            params: self.config.params(),
            documents,
            pairs,
            skipped,
            stats,
        })
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
            // The exact Jaccards in parallel; the decisions below stay in pair order.
            // Outer `None`: a document could not be read again; inner `None`: below the
            // threshold.
            let exact: Vec<Option<Option<f64>>> = batch
                .par_iter()
                .map(|p| match (&sets[&p.a], &sets[&p.b]) {
                    // Pairs below the threshold are dropped, so their merge may stop early.
                    (Ok(x), Ok(y)) => Some(jaccard_at_least(x, y, self.verifier.threshold())),
                    _ => None,
                })
                .collect();
            for (p, j) in batch.iter().zip(exact) {
                match j {
                    Some(j) => {
                        if let Some(j) = j.filter(|&j| self.verifier.accept_exact(j)) {
                            kept.push(Pair {
                                jaccard: Some(j),
                                ..*p
                            });
                        }
                    }
                    None => {
                        let ((Err(e), _) | (_, Err(e))) = (&sets[&p.a], &sets[&p.b]) else {
                            unreachable!("a set is missing only when a reload failed")
                        };
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

/// Scans `paths` with `config`: the library's one-call entry point.
pub fn scan(paths: &[PathBuf], config: &ScanConfig) -> Result<ScanReport> {
    Pipeline::new(config.clone())?.scan(paths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::minhash::SketchKind;
    use crate::normalize::normalize;

    /// The signature of the pipeline (streamed in blocks for large documents) is exactly the
    /// signer's signature of the document's full hash list.
    #[test]
    fn streamed_signatures_equal_whole_list_signatures() {
        let big: String = (0..800)
            .map(|i| format!("Line {i} of a long document, with words. "))
            .collect();
        // Few distinct shingles in a long text: FSS round 0 leaves slots empty and the
        // pipeline must fall back to the whole list.
        let repetitive = "ab ".repeat(3000);
        for kind in [SketchKind::Fss, SketchKind::Oph, SketchKind::Classic] {
            let config = ScanConfig {
                sketch: kind,
                ..Default::default()
            };
            let p = Pipeline::new(config.clone()).unwrap();
            let shingler = Shingler::new(&config.shingle).unwrap();
            let signer = Signer::new(config.sketch_params()).unwrap();
            for text in [big.as_str(), repetitive.as_str(), "short text"] {
                let mut hashes = Vec::new();
                shingler.hashes_into(
                    &normalize(text, &config.normalize),
                    config.seed,
                    &mut hashes,
                );
                assert_eq!(
                    p.signature(text).unwrap(),
                    signer.sign(&hashes),
                    "{kind:?} {}",
                    &text[..10]
                );
            }
            assert_eq!(p.signature("  \n "), None);
        }
    }
}
