//! The one loop that reads every document, for every strategy and every source.
//!
//! A document is read (a file, or a JSON-lines record), skipped with its reason when it cannot be
//! used, stripped of its `ndup:ignore` regions, normalized, fingerprinted when exact verification
//! may read it again, and handed to a [`Strategy`], which keeps what its strategy compares:
//! a signature, a shingle sample, or the whole shingle set. Skips, counts, progress and ids are
//! decided here once, so every mode treats a document alike.

use std::mem::take;
use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::find::{Pipeline, ScanReport, Scratch};
use crate::model::{Skip, SkipKind, Stats};
use crate::source::records::{self, Batch, Ids, parse_record};
use crate::source::{Document, Origin, Source, files};

/// A way to find the pairs: what it keeps of each document (made in parallel from its normalized
/// text, by the one loop of [`Pipeline::read`]), and how it turns the corpus of those sketches
/// into verified pairs. The signature, sample and exact strategies implement it; the mode is
/// chosen once, by [`ScanConfig::strategy`](crate::find::config::ScanConfig::strategy).
pub(crate) trait Strategy: Sync {
    /// What is kept of one document.
    type Sketch: Send;

    /// The sketch of the normalized text in `s.text` (`raw_len` bytes before normalization);
    /// `None` when the text has no shingle, which makes the document empty (never paired).
    fn sketch(&self, s: &mut Scratch, raw_len: u64) -> Option<Self::Sketch>;

    /// True when each document's text fingerprint is wanted (see [`Corpus::fingerprints`]).
    fn fingerprints(&self) -> bool {
        false
    }

    /// Why reading must stop early, if it must: the documents not yet read are then passed
    /// over, and [`Pipeline::read`] returns this error.
    fn halted(&self) -> Option<Error> {
        None
    }

    /// Phase two: the pairs of `corpus`, verified, in the report's order. `start` is when the
    /// scan began.
    fn pairs(&self, corpus: Corpus<Self::Sketch>, start: Instant) -> Result<ScanReport>;
}

/// Every document read, with the sketch of each non-empty one: phase one of every strategy.
#[derive(Debug)]
pub struct Corpus<S> {
    /// Every document read, in input order.
    pub documents: Vec<Document>,
    /// The sketches of the non-empty documents, in input order.
    pub sketches: Vec<S>,
    /// For each sketch, the index of its document in `documents`.
    pub sketched: Vec<u32>,
    /// What was skipped, in input order.
    pub skipped: Vec<Skip>,
    /// Counts so far.
    pub stats: Stats,
    /// For each sketch, a 128-bit hash of its document's normalized text, when the strategy
    /// asked for them (empty otherwise): documents with equal text have equal shingle sets, so
    /// exact verification gives them Jaccard 1 without reading them again.
    pub fingerprints: Vec<u128>,
}

impl<S> Default for Corpus<S> {
    fn default() -> Self {
        Corpus {
            documents: Vec::new(),
            sketches: Vec::new(),
            sketched: Vec::new(),
            skipped: Vec::new(),
            stats: Stats::default(),
            fingerprints: Vec::new(),
        }
    }
}

/// What happened to one document.
enum Outcome<S> {
    /// Its sketch, its length in bytes and its text's fingerprint (0 when not wanted).
    Sketched(S, u64, u128),
    Empty(u64),
    Skipped(Skip),
    /// Passed over: reading was halted.
    Halted,
}

impl<S> Corpus<S> {
    /// Adds what became of a document, and the document itself (made by `doc`) unless it was
    /// skipped or passed over.
    fn push(&mut self, outcome: Outcome<S>, fingerprints: bool, doc: impl FnOnce() -> Document) {
        match outcome {
            Outcome::Skipped(skip) => {
                self.skipped.push(skip);
                return;
            }
            Outcome::Halted => return,
            Outcome::Empty(bytes) => {
                self.stats.bytes += bytes;
                self.stats.empty += 1;
            }
            Outcome::Sketched(sketch, bytes, print) => {
                self.stats.bytes += bytes;
                self.sketched.push(self.documents.len() as u32);
                self.sketches.push(sketch);
                if fingerprints {
                    self.fingerprints.push(print);
                }
            }
        }
        self.documents.push(doc());
    }

    /// Counts the documents and skips once everything is read.
    fn finish(mut self) -> Self {
        self.stats.documents = self.documents.len() as u64;
        for s in &self.skipped {
            self.stats.count_skip(s.kind);
        }
        self
    }
}

impl Pipeline {
    /// Runs `strategy` on `source`: the one loop, then the strategy's phase two.
    pub(crate) fn run<K: Strategy>(&self, source: &Source, strategy: &K) -> Result<ScanReport> {
        let start = Instant::now();
        let corpus = self.read(source, strategy)?;
        strategy.pairs(corpus, start)
    }

    /// Phase one: reads, normalizes and sketches every document of `source` in parallel.
    pub(crate) fn read<K: Strategy>(
        &self,
        source: &Source,
        strategy: &K,
    ) -> Result<Corpus<K::Sketch>> {
        let corpus = match source {
            Source::Files(paths) => self.read_files(paths, strategy)?,
            Source::Records(inputs) => self.read_records(inputs, strategy)?,
        };
        match strategy.halted() {
            Some(err) => Err(err),
            None => Ok(corpus.finish()),
        }
    }

    /// One document's text to its outcome.
    fn prepare<K: Strategy>(
        &self,
        text: &str,
        strategy: &K,
        s: &mut Scratch,
    ) -> Outcome<K::Sketch> {
        let bytes = text.len() as u64;
        self.normalize_into_scratch(text, s);
        match strategy.sketch(s, bytes) {
            Some(sketch) => {
                let print = if strategy.fingerprints() {
                    xxhash_rust::xxh3::xxh3_128(s.text.as_bytes())
                } else {
                    0
                };
                Outcome::Sketched(sketch, bytes, print)
            }
            None => Outcome::Empty(bytes),
        }
    }

    fn read_files<K: Strategy>(
        &self,
        paths: &[std::path::PathBuf],
        strategy: &K,
    ) -> Result<Corpus<K::Sketch>> {
        let (entries, skipped) = files::collect(paths, &self.config.input)?;
        self.progress_total(entries.len() as u64);
        let outcomes: Vec<Outcome<K::Sketch>> = entries
            .par_iter()
            .map_init(Scratch::default, |s, e| {
                if strategy.halted().is_some() {
                    return Outcome::Halted;
                }
                let mut file = take(&mut s.file);
                let outcome = match files::read_document_into(&e.path, &mut file) {
                    Err(err) => Outcome::Skipped(Skip::unreadable(e.id.clone(), &err)),
                    Ok(None) => Outcome::Skipped(Skip::binary(e.id.clone())),
                    Ok(Some(text)) => self.prepare(&text, strategy, s),
                };
                s.file = file;
                s.release_large();
                self.advance(1);
                outcome
            })
            .collect();
        let fingerprints = strategy.fingerprints();
        let mut corpus = Corpus {
            skipped,
            ..Corpus::default()
        };
        corpus.documents.reserve(entries.len());
        for (entry, outcome) in entries.into_iter().zip(outcomes) {
            let empty = matches!(outcome, Outcome::Empty(_));
            corpus.push(outcome, fingerprints, || Document {
                id: entry.id,
                origin: Origin::File(entry.path),
                empty,
            });
        }
        Ok(corpus)
    }

    /// JSON-lines records, read in batches and sketched a batch at a time in parallel, keeping
    /// only ids, origins and sketches, so millions of records never sit in memory at once. A
    /// record whose id was already used is skipped as malformed: a report naming two documents
    /// alike would be ambiguous.
    fn read_records<K: Strategy>(
        &self,
        inputs: &[std::path::PathBuf],
        strategy: &K,
    ) -> Result<Corpus<K::Sketch>> {
        let fields = self.config.input.records.fields();
        let mut ids = Ids::new(inputs.len(), true);
        let mut corpus = Corpus::default();
        let fingerprints = strategy.fingerprints();
        records::read_batches(inputs, self.may_reload(), |ev| match ev {
            records::Event::Skip(skip) => corpus.skipped.push(skip),
            records::Event::Batch(batch) => {
                let outcomes: Vec<(Option<String>, Outcome<K::Sketch>)> = batch
                    .lines
                    .par_iter()
                    .map_init(Scratch::default, |s, line| {
                        if strategy.halted().is_some() {
                            return (None, Outcome::Halted);
                        }
                        match parse_record(batch.bytes(line), &fields) {
                            Err(reason) => {
                                (None, Outcome::Skipped(malformed(&batch, line, reason)))
                            }
                            Ok(rec) => (rec.id, self.prepare(&rec.text, strategy, s)),
                        }
                    })
                    .collect();
                merge_batch(&batch, outcomes, &mut ids, &mut corpus, fingerprints);
                self.advance(batch.lines.len() as u64);
            }
        })?;
        Ok(corpus)
    }
}

fn malformed(batch: &Batch, line: &records::Line, reason: String) -> Skip {
    Skip {
        id: format!("{}:{}", batch.source.name(), line.number),
        kind: SkipKind::Malformed,
        reason,
    }
}

/// Adds a sketched batch to the corpus, in input order, giving each record its id.
fn merge_batch<S>(
    batch: &Batch,
    outcomes: Vec<(Option<String>, Outcome<S>)>,
    ids: &mut Ids,
    corpus: &mut Corpus<S>,
    fingerprints: bool,
) {
    for (line, (id, outcome)) in batch.lines.iter().zip(outcomes) {
        if matches!(outcome, Outcome::Skipped(_) | Outcome::Halted) {
            corpus.push(outcome, fingerprints, || unreachable!("not kept"));
            continue;
        }
        let doc = corpus.documents.len() as u32;
        let docs = &corpus.documents;
        let id = match ids.assign(&batch.source, line.number, id, doc, |d| {
            docs[d as usize].id.as_str()
        }) {
            Ok(id) => id,
            Err(skip) => {
                corpus.skipped.push(skip);
                continue;
            }
        };
        let empty = matches!(outcome, Outcome::Empty(_));
        corpus.push(outcome, fingerprints, || Document {
            id,
            origin: Origin::Record {
                source: Arc::clone(&batch.source),
                line: line.number,
                offset: line.offset,
            },
            empty,
        });
    }
}
