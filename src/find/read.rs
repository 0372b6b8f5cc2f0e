//! The one loop that reads every document, for every strategy and every source.
//!
//! A document is read (a file, a JSON-lines record, or a text in memory), skipped with its reason when it cannot be
//! used, stripped of its `ndup:ignore` regions, normalized, fingerprinted when exact verification
//! may read it again, and handed to a `Sketcher`, which keeps what its user compares: a
//! signature, a shingle sample, the whole shingle set, or what deduplication and the index keep.
//! Skips, counts, progress and ids are decided here once, so every mode treats a document alike.
//!
//! `Pipeline::read` reads a whole [`Source`] into a [`Corpus`]; `Pipeline::read_entries`
//! reads files already found (the index reads only the files whose metadata changed), and
//! `Pipeline::read_text` one text already in memory (standard input given to `ndup query`).

use std::borrow::{Borrow, Cow};
use std::collections::HashSet;
use std::mem::take;
use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_128;

use crate::error::{Error, Result};
use crate::find::{Pipeline, ScanReport, Scratch};
use crate::model::{Skip, SkipKind, Stats};
use crate::source::files::Entry;
use crate::source::records::{self, Batch, Ids, parse_record};
use crate::source::texts::SharedTexts;
use crate::source::{Document, Origin, Source, files};

/// What is kept of each document: made in parallel, by the one loop, from its normalized text.
/// The strategies of a scan, deduplication, the index and queries implement it.
pub(crate) trait Sketcher: Sync {
    /// What is kept of one document.
    type Sketch: Send;

    /// The sketch of the normalized text in `s.text`; `raw` is the document as read. `None` when
    /// the text has no shingle, which makes the document empty (never paired).
    fn sketch(&self, s: &mut Scratch, raw: &Raw<'_>) -> Option<Self::Sketch>;

    /// True when each document's text fingerprint is wanted (see [`Corpus::fingerprints`]).
    fn fingerprints(&self) -> bool {
        false
    }

    /// True when each document's content hash is wanted: the 128-bit hash of a file's bytes as
    /// read, or of a record's text, given to [`known`](Self::known) and in [`Raw::content`].
    fn content_hashes(&self) -> bool {
        false
    }

    /// With content hashes: a file's sketch from its entry and content hash alone, when that is
    /// enough, before its text is decoded (`binary` says whether it looks binary). The file is
    /// then neither normalized nor sketched, and counts no text. The index keeps the row of a
    /// file whose content did not change, and a row for a binary file. By default nothing is
    /// known: a binary file is skipped, the others read on.
    fn known(&self, _entry: &Entry, _content: u128, _binary: bool) -> Option<Self::Sketch> {
        None
    }

    /// A record's sketch from its text alone, when that is enough, before the text is
    /// normalized (it then counts its bytes all the same): the index keeps the signature of a
    /// text it holds already. By default nothing is known.
    fn known_record(&self, _raw: &Raw<'_>) -> Option<Self::Sketch> {
        None
    }

    /// Sketches of a fixed number of `u32`s (signatures) give that number: the loop then has
    /// each file's sketch written straight into its row of one flat array ([`Corpus::rows`]),
    /// with no allocation per document. Why: a vector per document, concatenated at the end,
    /// held every signature twice at the end of phase one. 0 (the default): one sketch each.
    fn row_width(&self) -> usize {
        0
    }

    /// With a [`row_width`](Self::row_width): the sketch of the normalized text in `s.text`,
    /// written into `row`; false when the text has no shingle.
    fn sketch_row(&self, _s: &mut Scratch, _raw: &Raw<'_>, _row: &mut [u32]) -> bool {
        unreachable!("sketch_row is called only for a sketcher with a row width")
    }

    /// Why reading must stop early, if it must: the documents not yet read are then passed
    /// over, and the loop returns this error. Once it says so, it must keep saying so.
    fn halted(&self) -> Option<Error> {
        None
    }

    /// True when the caller reads the records again whatever the verification (deduplication
    /// writes the kept ones out): standard input is then kept in a temporary file.
    fn rereads(&self) -> bool {
        false
    }

    /// True when two records may not share an id, which is then skipped as malformed: a report
    /// naming two documents alike would be ambiguous. Deduplication knows records by position.
    fn unique_ids(&self) -> bool {
        true
    }

    /// True when a record without an id is named `source:line` even when one source is read:
    /// the index reads the sources that changed, and a record's name must not depend on them.
    fn names_by_source(&self) -> bool {
        false
    }
}

/// A document as read, before it is normalized: what a sketcher may keep besides what it makes
/// of the normalized text.
pub(crate) struct Raw<'a> {
    /// The text as read (lossily decoded when a file is not valid UTF-8).
    pub(crate) text: &'a str,
    /// A file's or a record's content hash, when the sketcher asks for it
    /// ([`Sketcher::content_hashes`]); 0 otherwise, and for text in memory.
    pub(crate) content: u128,
    /// True for a record without an id, which is then named by its line number.
    #[cfg_attr(not(feature = "parquet"), allow(dead_code))]
    pub(crate) id_made_up: bool,
}

/// A way to find the pairs: a [`Sketcher`], and how it turns the corpus of its sketches into
/// verified pairs. The signature, sample and exact strategies implement it; the mode is chosen
/// once, by [`ScanConfig::strategy`](crate::find::config::ScanConfig::strategy).
pub(crate) trait Strategy: Sketcher {
    /// Phase two: the pairs of `corpus`, verified, in the report's order. `start` is when the
    /// scan began.
    fn pairs(&self, corpus: Corpus<Self::Sketch>, start: Instant) -> Result<ScanReport>;
}

/// Every document read, with the sketch of each non-empty one: phase one of every strategy.
#[derive(Debug)]
pub(crate) struct Corpus<S> {
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
    /// For a sketcher with a row width, the sketches of the files read, flat, one row each in
    /// the order of `sketched` (before them come those of `sketches`, which holds the rest).
    pub rows: Vec<u32>,
}

impl<S> Default for Corpus<S> {
    fn default() -> Self {
        Corpus {
            documents: Vec::new(),
            rows: Vec::new(),
            sketches: Vec::new(),
            sketched: Vec::new(),
            skipped: Vec::new(),
            stats: Stats::default(),
            fingerprints: Vec::new(),
        }
    }
}

/// What became of one document.
pub(crate) enum Outcome<S> {
    /// Its sketch, its text's length in bytes and its text's fingerprint (0 when not wanted).
    Sketched(S, u64, u128),
    /// No shingle: its text's length in bytes.
    Empty(u64),
    /// Skipped, and why.
    Skipped(Skip),
}

impl<S> Corpus<S> {
    /// Adds what became of a document, and the document itself (made by `doc`) unless it was
    /// skipped.
    fn push(&mut self, outcome: Outcome<S>, fingerprints: bool, doc: impl FnOnce() -> Document) {
        match outcome {
            Outcome::Skipped(skip) => {
                self.skipped.push(skip);
                return;
            }
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
    pub(crate) fn read<K: Sketcher>(
        &self,
        source: &Source,
        sketcher: &K,
    ) -> Result<Corpus<K::Sketch>> {
        let corpus = match source {
            Source::Files(paths) => self.read_files(paths, sketcher)?,
            Source::Records(inputs) => self.read_records(inputs, sketcher)?,
            Source::Texts(texts) => self.read_texts(texts, sketcher)?,
        };
        match self.halted(sketcher) {
            Some(err) => Err(err),
            None => Ok(corpus.finish()),
        }
    }

    /// Reads the files of `entries`, already found, in parallel: what became of each, in order.
    /// The caller tells the progress observer how many there are, if it wants a total.
    pub(crate) fn read_entries<E, K>(
        &self,
        entries: &[E],
        sketcher: &K,
    ) -> Result<Vec<Outcome<K::Sketch>>>
    where
        E: Borrow<Entry> + Sync,
        K: Sketcher,
    {
        // `None`: passed over, once reading is halted.
        let outcomes: Vec<Option<Outcome<K::Sketch>>> = entries
            .par_iter()
            .map_init(Scratch::default, |s, e| {
                if self.halted(sketcher).is_some() {
                    return None;
                }
                let outcome = self.read_entry(e.borrow(), sketcher, s);
                s.release_large();
                self.advance(1);
                Some(outcome)
            })
            .collect();
        match self.halted(sketcher) {
            Some(err) => Err(err),
            None => Ok(outcomes
                .into_iter()
                .map(|o| o.expect("documents are passed over only once reading is halted"))
                .collect()),
        }
    }

    /// Sketches one text already in memory, as the loop sketches a document it read (there is no
    /// file: no binary check and no content hash).
    pub(crate) fn read_text<K: Sketcher>(&self, text: &str, sketcher: &K) -> Outcome<K::Sketch> {
        let raw = Raw {
            text,
            content: 0,
            id_made_up: false,
        };
        let outcome = self.prepare(&raw, sketcher, &mut Scratch::default());
        self.advance(1);
        outcome
    }

    /// One document's text to its outcome.
    fn prepare<K: Sketcher>(
        &self,
        raw: &Raw<'_>,
        sketcher: &K,
        s: &mut Scratch,
    ) -> Outcome<K::Sketch> {
        let bytes = raw.text.len() as u64;
        self.normalize_into_scratch(raw.text, s);
        match sketcher.sketch(s, raw) {
            Some(sketch) => {
                let print = if sketcher.fingerprints() {
                    xxh3_128(s.text.as_bytes())
                } else {
                    0
                };
                Outcome::Sketched(sketch, bytes, print)
            }
            None => Outcome::Empty(bytes),
        }
    }

    /// Reads one file and hands its text on.
    fn read_entry<K: Sketcher>(
        &self,
        e: &Entry,
        sketcher: &K,
        s: &mut Scratch,
    ) -> Outcome<K::Sketch> {
        let hashes = sketcher.content_hashes();
        let content = |bytes: &[u8]| if hashes { xxh3_128(bytes) } else { 0 };
        let mut file = take(&mut s.file);
        let outcome = match files::read_entry_into(e, &mut file, self.config.input.max_filesize) {
            Err(err) => Outcome::Skipped(Skip::unreadable(e.id.clone(), &err)),
            Ok(None) => match hashes.then(|| sketcher.known(e, content(&file), true)) {
                Some(Some(sketch)) => Outcome::Sketched(sketch, 0, 0),
                _ => Outcome::Skipped(Skip::binary(e.id.clone())),
            },
            Ok(Some(Cow::Borrowed(text))) => {
                let raw = Raw {
                    text,
                    content: content(text.as_bytes()),
                    id_made_up: false,
                };
                self.read_on(e, &raw, sketcher, s)
            }
            // Not valid UTF-8: the content hash is the bytes', not the decoded text's.
            Ok(Some(Cow::Owned(text))) => {
                let raw = Raw {
                    text: &text,
                    content: content(&file),
                    id_made_up: false,
                };
                self.read_on(e, &raw, sketcher, s)
            }
        };
        s.file = file;
        outcome
    }

    /// A text file's outcome: known from its content hash, or sketched.
    fn read_on<K: Sketcher>(
        &self,
        e: &Entry,
        raw: &Raw<'_>,
        sketcher: &K,
        s: &mut Scratch,
    ) -> Outcome<K::Sketch> {
        if sketcher.content_hashes()
            && let Some(sketch) = sketcher.known(e, raw.content, false)
        {
            return Outcome::Sketched(sketch, 0, 0);
        }
        self.prepare(raw, sketcher, s)
    }

    fn read_files<K: Sketcher>(
        &self,
        paths: &[std::path::PathBuf],
        sketcher: &K,
    ) -> Result<Corpus<K::Sketch>> {
        let (entries, skipped) = files::collect(paths, &self.config.input)?;
        self.progress_total(entries.len() as u64);
        let width = sketcher.row_width();
        if width > 0 && !sketcher.content_hashes() {
            return self.read_file_rows(entries, skipped, sketcher, width);
        }
        let outcomes = self.read_entries(&entries, sketcher)?;
        let fingerprints = sketcher.fingerprints();
        let mut corpus = Corpus {
            skipped,
            ..Corpus::default()
        };
        corpus.documents.reserve(entries.len());
        for (entry, outcome) in entries.into_iter().zip(outcomes) {
            let empty = matches!(outcome, Outcome::Empty(_));
            corpus.push(outcome, fingerprints, || entry.into_document(empty));
        }
        Ok(corpus)
    }

    /// [`read_files`](Self::read_files) for a sketcher with a row width: each file's sketch is
    /// written into its row of one array sized for every file; the rows of skipped and empty
    /// files are squeezed out afterwards.
    fn read_file_rows<K: Sketcher>(
        &self,
        entries: Vec<Entry>,
        skipped: Vec<Skip>,
        sketcher: &K,
        width: usize,
    ) -> Result<Corpus<K::Sketch>> {
        let mut rows = vec![0u32; entries.len() * width];
        let outcomes: Vec<Option<Outcome<()>>> = entries
            .par_iter()
            .zip(rows.par_chunks_mut(width))
            .map_init(Scratch::default, |s, (e, row)| {
                if self.halted(sketcher).is_some() {
                    return None;
                }
                let mut file = take(&mut s.file);
                let outcome =
                    match files::read_entry_into(e, &mut file, self.config.input.max_filesize) {
                        Err(err) => Outcome::Skipped(Skip::unreadable(e.id.clone(), &err)),
                        Ok(None) => Outcome::Skipped(Skip::binary(e.id.clone())),
                        Ok(Some(text)) => {
                            let raw = Raw {
                                text: &text,
                                content: 0,
                                id_made_up: false,
                            };
                            let bytes = text.len() as u64;
                            self.normalize_into_scratch(raw.text, s);
                            if sketcher.sketch_row(s, &raw, row) {
                                let print = if sketcher.fingerprints() {
                                    xxh3_128(s.text.as_bytes())
                                } else {
                                    0
                                };
                                Outcome::Sketched((), bytes, print)
                            } else {
                                Outcome::Empty(bytes)
                            }
                        }
                    };
                s.file = file;
                s.release_large();
                self.advance(1);
                Some(outcome)
            })
            .collect();
        if let Some(err) = self.halted(sketcher) {
            return Err(err);
        }
        let fingerprints = sketcher.fingerprints();
        let mut corpus = Corpus {
            skipped,
            ..Corpus::default()
        };
        corpus.documents.reserve(entries.len());
        for (r, (entry, outcome)) in entries.into_iter().zip(outcomes).enumerate() {
            let outcome = outcome.expect("documents are passed over only once reading is halted");
            let empty = matches!(outcome, Outcome::Empty(_));
            let outcome = match outcome {
                Outcome::Sketched((), bytes, print) => {
                    // Row r moves down to the next free row, in place.
                    let to = corpus.sketched.len() * width;
                    rows.copy_within(r * width..(r + 1) * width, to);
                    corpus.stats.bytes += bytes;
                    corpus.sketched.push(corpus.documents.len() as u32);
                    if fingerprints {
                        corpus.fingerprints.push(print);
                    }
                    corpus.documents.push(entry.into_document(false));
                    continue;
                }
                Outcome::Empty(bytes) => Outcome::Empty(bytes),
                Outcome::Skipped(skip) => Outcome::Skipped(skip),
            };
            corpus.push(outcome, fingerprints, || entry.into_document(empty));
        }
        rows.truncate(corpus.sketched.len() * width);
        rows.shrink_to_fit();
        corpus.rows = rows;
        Ok(corpus)
    }

    /// JSON-lines records, read in batches and sketched a batch at a time in parallel, keeping
    /// only ids, origins and sketches, so millions of records never sit in memory at once. A
    /// record whose id was already used is skipped as malformed when the sketcher wants unique
    /// ids (see [`Sketcher::unique_ids`]).
    fn read_records<K: Sketcher>(
        &self,
        inputs: &[std::path::PathBuf],
        sketcher: &K,
    ) -> Result<Corpus<K::Sketch>> {
        // A directory of Parquet shards is its files, each a source of its own; a tree's link
        // out of the working directory is none.
        let (inputs, refused) = records::confine(
            records::expand_datasets(inputs),
            self.config.input.follow_links,
        );
        let inputs = &inputs;
        let fields = self.config.input.records.fields();
        let mut ids = Ids::new(inputs.len(), sketcher.unique_ids());
        if sketcher.names_by_source() {
            ids = ids.named_by_source();
        }
        let mut corpus = Corpus::default();
        corpus.skipped.extend(refused);
        let fingerprints = sketcher.fingerprints();
        let spool = self.may_reload() || sketcher.rereads();
        records::read_batches(inputs, spool, &self.config.input.records, |ev| match ev {
            records::Event::Skip(skip) => corpus.skipped.push(skip),
            records::Event::Batch(batch) => {
                let outcomes: Vec<RecordRead<K::Sketch>> = batch
                    .lines
                    .par_iter()
                    .map_init(Scratch::default, |s, line| {
                        if self.halted(sketcher).is_some() {
                            return None;
                        }
                        Some(match parse_record(batch.bytes(line), &fields) {
                            Err(reason) => {
                                (None, Outcome::Skipped(malformed(&batch, line, reason)))
                            }
                            Ok(rec) => {
                                let raw = Raw {
                                    text: &rec.text,
                                    content: match sketcher.content_hashes() {
                                        true => xxh3_128(rec.text.as_bytes()),
                                        false => 0,
                                    },
                                    id_made_up: rec.id.is_none(),
                                };
                                let outcome = match sketcher.known_record(&raw) {
                                    Some(known) => {
                                        Outcome::Sketched(known, raw.text.len() as u64, 0)
                                    }
                                    None => self.prepare(&raw, sketcher, s),
                                };
                                (rec.id, outcome)
                            }
                        })
                    })
                    .collect();
                merge_batch(&batch, outcomes, &mut ids, &mut corpus, fingerprints);
                self.advance(batch.lines.len() as u64);
            }
        })?;
        Ok(corpus)
    }

    /// Texts already in memory, sketched in parallel: there is nothing to read, so each text
    /// goes straight to [`prepare`](Self::prepare). A text that is missing (`None`) is skipped
    /// as malformed, and so is one whose id was already used when the sketcher wants unique
    /// ids (see [`Sketcher::unique_ids`]), as records are.
    fn read_texts<K: Sketcher>(
        &self,
        texts: &SharedTexts,
        sketcher: &K,
    ) -> Result<Corpus<K::Sketch>> {
        self.progress_total(texts.len() as u64);
        let outcomes: Vec<Option<Outcome<K::Sketch>>> = (0..texts.len())
            .into_par_iter()
            .map_init(Scratch::default, |s, i| {
                if self.halted(sketcher).is_some() {
                    return None;
                }
                let outcome = match texts.text(i) {
                    None => Outcome::Skipped(Skip {
                        id: texts.id(i).into_owned(),
                        kind: SkipKind::Malformed,
                        reason: "no text (null)".into(),
                    }),
                    Some(text) => self.prepare(
                        &Raw {
                            text,
                            content: 0,
                            id_made_up: false,
                        },
                        sketcher,
                        s,
                    ),
                };
                s.release_large();
                self.advance(1);
                Some(outcome)
            })
            .collect();
        if let Some(err) = self.halted(sketcher) {
            return Err(err);
        }
        let fingerprints = sketcher.fingerprints();
        let unique = sketcher.unique_ids();
        let mut seen: HashSet<Cow<'_, str>> = HashSet::new();
        let mut corpus = Corpus::default();
        corpus.documents.reserve(texts.len());
        for (index, outcome) in outcomes.into_iter().enumerate() {
            let outcome = outcome.expect("documents are passed over only once reading is halted");
            let id = texts.id(index);
            let outcome = match outcome {
                Outcome::Skipped(_) => outcome,
                _ if unique && seen.contains(&id) => Outcome::Skipped(Skip {
                    id: id.clone().into_owned(),
                    kind: SkipKind::Malformed,
                    reason: format!("duplicate id `{id}` (an earlier text has it)"),
                }),
                _ => {
                    if unique {
                        seen.insert(id.clone());
                    }
                    outcome
                }
            };
            let empty = matches!(outcome, Outcome::Empty(_));
            corpus.push(outcome, fingerprints, || Document {
                id: id.into_owned(),
                origin: Origin::Text {
                    texts: texts.clone(),
                    index,
                },
                empty,
            });
        }
        Ok(corpus)
    }
}

/// A record's id field and outcome; `None` when it was passed over, once reading was halted.
type RecordRead<S> = Option<(Option<String>, Outcome<S>)>;

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
    outcomes: Vec<RecordRead<S>>,
    ids: &mut Ids,
    corpus: &mut Corpus<S>,
    fingerprints: bool,
) {
    for (line, read) in batch.lines.iter().zip(outcomes) {
        let Some((id, outcome)) = read else { continue };
        if let Outcome::Skipped(skip) = outcome {
            corpus.skipped.push(skip);
            continue;
        }
        let id = match ids.assign(&batch.source, line.number, id, &mut corpus.documents) {
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

#[cfg(test)]
mod tests {

    use crate::find::config::{ExactConfig, ScanConfig, StrategyConfig};
    use crate::find::{Pipeline, ScanReport};
    use crate::model::SkipKind;
    use crate::sim::Measure;
    use crate::source::texts::SharedTexts;
    use crate::source::{Origin, Source};
    use crate::verify::VerifyMode;

    fn words(seed: u64, n: usize) -> String {
        (0..n as u64)
            .map(|i| {
                let h = crate::sketch::minhash::fmix64(seed * 1_000_003 + i);
                format!("w{}", h % 5000)
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Nine near copies (more than a small component holds), a lone near pair, two exact
    /// copies, an empty text and an unrelated one.
    fn corpus() -> Vec<(String, String)> {
        let base = words(1, 400);
        let mut texts: Vec<(String, String)> = (0..9)
            .map(|i| (format!("nine-{i}"), format!("{base} {}", words(10 + i, 4))))
            .collect();
        let lone = words(2, 300);
        texts.push(("lone-a".into(), lone.clone()));
        texts.push(("lone-b".into(), format!("{lone} and a tail")));
        let copy = words(3, 200);
        texts.push(("copy-a".into(), copy.clone()));
        texts.push(("copy-b".into(), copy.to_uppercase()));
        texts.push(("empty".into(), "   ".into()));
        texts.push(("other".into(), words(4, 300)));
        texts
    }

    fn scan_both(config: ScanConfig, texts: &[(String, String)]) -> (ScanReport, ScanReport) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let lines: String = texts
            .iter()
            .map(|(id, text)| format!("{}\n", serde_json::json!({"id": id, "text": text})))
            .collect();
        std::fs::write(&path, lines).unwrap();
        let p = Pipeline::new(config).unwrap();
        let in_memory = p
            .scan_source(&Source::Texts(SharedTexts::new(texts.to_vec())))
            .unwrap();
        let records = p.scan_source(&Source::Records(vec![path])).unwrap();
        (in_memory, records)
    }

    /// A pair's ids and the bits of its estimate, Jaccard and containment.
    type Found = (String, String, u64, Option<u64>, Option<u64>);

    /// What a report says, without where its documents came from.
    fn found(r: &ScanReport) -> Vec<Found> {
        r.pairs
            .iter()
            .map(|p| {
                (
                    r.id(p.a).to_string(),
                    r.id(p.b).to_string(),
                    p.estimate.to_bits(),
                    p.jaccard.map(f64::to_bits),
                    p.a_in_b.map(f64::to_bits),
                )
            })
            .collect()
    }

    /// Texts in memory are read by the same loop as records and read again for exact
    /// verification from memory: every strategy finds the same pairs, to the bit.
    #[test]
    fn texts_in_memory_scan_as_the_same_records() {
        let texts = corpus();
        let configs = [
            ScanConfig::default(),
            ScanConfig {
                verify: VerifyMode::Exact,
                threshold: 0.5,
                ..ScanConfig::default()
            },
            ScanConfig::with_strategy(StrategyConfig::Exact(ExactConfig::default())),
            ScanConfig {
                measure: Measure::Containment,
                ..ScanConfig::with_strategy(StrategyConfig::Sample(Default::default()))
            },
        ];
        for config in configs {
            let (in_memory, records) = scan_both(config.clone(), &texts);
            assert!(in_memory.pairs.len() >= 36 + 2, "{:?}", config.strategy);
            assert_eq!(found(&in_memory), found(&records), "{:?}", config.strategy);
            assert!(in_memory.skipped.is_empty(), "{:?}", in_memory.skipped);
            assert_eq!(in_memory.stats.documents, texts.len() as u64);
            assert_eq!(in_memory.stats.empty, 1);
            let exact = config.verify == VerifyMode::Exact;
            if exact {
                assert!(in_memory.pairs.iter().all(|p| p.jaccard.is_some()));
            }
        }
    }

    #[test]
    fn missing_texts_and_repeated_ids_are_skipped_as_records_are() {
        let base = words(5, 300);
        // Texts some of which are missing, as nulls in a column are.
        let column: Vec<(String, Option<String>)> = vec![
            ("a".into(), Some(base.clone())),
            ("gone".into(), None),
            ("a".into(), Some(base.clone())),
            ("b".into(), Some(format!("{base} and more"))),
        ];
        let p = Pipeline::new(ScanConfig::default()).unwrap();
        let r = p
            .scan_source(&Source::Texts(SharedTexts::new(column)))
            .unwrap();
        let skipped: Vec<(&str, SkipKind, &str)> = r
            .skipped
            .iter()
            .map(|s| (s.id.as_str(), s.kind, s.reason.as_str()))
            .collect();
        assert_eq!(
            skipped,
            [
                (
                    "a",
                    SkipKind::Malformed,
                    "duplicate id `a` (an earlier text has it)"
                ),
                ("gone", SkipKind::Malformed, "no text (null)"),
            ]
        );
        assert_eq!(r.documents.len(), 2);
        let indexes: Vec<usize> = r
            .documents
            .iter()
            .map(|d| match d.origin {
                Origin::Text { index, .. } => index,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(indexes, [0, 3]);
        assert_eq!(found(&r).len(), 1);
    }
}
