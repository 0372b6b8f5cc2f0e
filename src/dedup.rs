//! Corpus deduplication: keep one document per cluster of near-duplicates.
//!
//! 1. **Exact duplicates first.** Each document is read, its `ndup:ignore` regions removed and
//!    its text normalized, and the normalized text is hashed (xxh3, 128 bits). A document whose
//!    hash was seen before is an exact duplicate of the first one with that hash: it is neither
//!    shingled nor signed, and does not enter LSH. This is cheap (a hash per document) and takes
//!    the bulk of the duplicates of a typical crawl out of the expensive path.
//! 2. **Near duplicates.** The first document of each distinct text is signed and goes through
//!    the same LSH and verification as `ndup scan` (so `--threshold` and `--verify` mean the
//!    same thing).
//! 3. **Clusters.** Exact-duplicate links and verified pairs are joined into connected components
//!    (union-find; near-duplication is treated as transitive, as `--clusters` does). Each
//!    component keeps one document, chosen by [`Keep`]; every other member is dropped, as an
//!    `exact` duplicate when its normalized text equals the kept one's, otherwise as a `near` one.
//!
//! The choice is deterministic: `first` keeps the earliest document in input order; `longest` and
//! `shortest` compare the length of the text as read (in characters), and break ties by the
//! smaller id, then by input order. Documents that are skipped (binary, unreadable, malformed) are
//! neither kept nor dropped: they are reported. Empty documents (no text after normalization)
//! are exact duplicates of one another, so one of them is kept.
//!
//! Ids need not be unique here (unlike `ndup scan`): a record is known by its position, and ids
//! only name documents in messages and break ties.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;
use xxhash_rust::xxh3::xxh3_128;

use crate::error::Result;
use crate::find::{Pipeline, ScanReport, Scratch, SignedCorpus};
use crate::model::cluster::UnionFind;
use crate::model::{Skip, SkipKind};
use crate::source::files as input;
use crate::source::files::Read;
use crate::source::records;
use crate::source::records::{Event, Ids, RecordSource, parse_record};
use crate::source::{Document, Origin};

/// Files read and hashed per parallel step: bounds the normalized text held at once.
const FILE_BATCH: usize = 1024;

/// Which document of a cluster is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Keep {
    /// The earliest in input order.
    First,
    /// The one with the longest text (ties: smaller id, then input order).
    Longest,
    /// The one with the shortest text (ties: smaller id, then input order).
    Shortest,
}

/// What happens to a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Kept: alone, or chosen for its cluster.
    Kept,
    /// Dropped: same normalized text as `kept`.
    Exact {
        /// The document kept instead.
        kept: u32,
    },
    /// Dropped: a near-duplicate of `kept` (directly or through other members of its cluster).
    Near {
        /// The document kept instead.
        kept: u32,
    },
}

/// What deduplication decided.
#[derive(Debug, Clone)]
pub struct DedupReport {
    /// The scan of the distinct texts: every document, the verified pairs, the skips, the counts.
    pub scan: ScanReport,
    /// One fate per document of `scan.documents`.
    pub fates: Vec<Fate>,
    /// Documents dropped as exact duplicates.
    pub exact_dropped: u64,
    /// Documents dropped as near duplicates.
    pub near_dropped: u64,
}

impl DedupReport {
    /// Number of documents kept.
    pub fn kept(&self) -> u64 {
        self.scan.documents.len() as u64 - self.exact_dropped - self.near_dropped
    }

    /// Writes the kept records of JSON-lines sources, in input order, each line as it was read
    /// (line ends become `\n`). Sources are read again (see [`crate::source::records`]).
    pub fn write_kept_records(&self, w: &mut dyn Write) -> io::Result<()> {
        // Kept line numbers, ascending, per source in order of first appearance.
        let mut per_source: Vec<(&Arc<RecordSource>, Vec<u64>)> = Vec::new();
        for (doc, fate) in self.scan.documents.iter().zip(&self.fates) {
            let Origin::Record { source, line, .. } = &doc.origin else {
                continue;
            };
            if per_source
                .last()
                .is_none_or(|(s, _)| !Arc::ptr_eq(s, source))
            {
                per_source.push((source, Vec::new()));
            }
            if *fate == Fate::Kept {
                per_source.last_mut().expect("pushed above").1.push(*line);
            }
        }
        for (source, lines) in per_source {
            if lines.is_empty() {
                continue;
            }
            let mut next = lines.iter().peekable();
            source
                .for_each_line(|number, _, bytes| {
                    if next.peek() == Some(&&number) {
                        next.next();
                        w.write_all(bytes)?;
                        w.write_all(b"\n")?;
                    }
                    Ok(next.peek().is_some())
                })
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", source.name())))?;
            if next.peek().is_some() {
                return Err(io::Error::other(format!(
                    "{}: the input is shorter than when it was read",
                    source.name()
                )));
            }
        }
        Ok(())
    }

    /// Writes one JSON line per document, in input order: `{"type":"keep","id":..}` or
    /// `{"type":"drop","id":..,"kept":..,"reason":"exact"|"near"}`.
    pub fn write_list(&self, w: &mut dyn Write) -> io::Result<()> {
        #[derive(Serialize)]
        struct Line<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            id: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            kept: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            reason: Option<&'static str>,
        }
        for (i, fate) in self.fates.iter().enumerate() {
            let id = self.scan.id(i as u32);
            let line = match *fate {
                Fate::Kept => Line {
                    kind: "keep",
                    id,
                    kept: None,
                    reason: None,
                },
                Fate::Exact { kept } | Fate::Near { kept } => Line {
                    kind: "drop",
                    id,
                    kept: Some(self.scan.id(kept)),
                    reason: Some(if matches!(fate, Fate::Exact { .. }) {
                        "exact"
                    } else {
                        "near"
                    }),
                },
            };
            serde_json::to_writer(&mut *w, &line)?;
            w.write_all(b"\n")?;
        }
        Ok(())
    }
}

/// A document read and normalized, waiting for its place in the corpus.
enum Prepared {
    Text {
        id: Option<String>,
        norm: String,
        hash: u128,
        chars: u64,
        bytes: u64,
    },
    Skipped(Skip),
}

/// Phase one of deduplication, built batch by batch.
struct Builder<'p> {
    pipeline: &'p Pipeline,
    corpus: SignedCorpus,
    chars: Vec<u64>,
    hashes: Vec<u128>,
    exact_of: Vec<u32>,
    first_of_hash: HashMap<u128, u32>,
}

impl<'p> Builder<'p> {
    fn new(pipeline: &'p Pipeline) -> Self {
        Builder {
            pipeline,
            corpus: SignedCorpus::default(),
            chars: Vec::new(),
            hashes: Vec::new(),
            exact_of: Vec::new(),
            first_of_hash: HashMap::new(),
        }
    }

    /// Normalizes and hashes `text`.
    fn prepare(&self, id: Option<String>, text: &str, s: &mut Scratch) -> Prepared {
        self.pipeline.normalize_into_scratch(text, s);
        let norm = std::mem::take(&mut s.text);
        Prepared::Text {
            id,
            hash: xxh3_128(norm.as_bytes()),
            norm,
            chars: text.chars().count() as u64,
            bytes: text.len() as u64,
        }
    }

    /// Adds a batch in input order (`origin(i)` and `name(i)` describe item `i`): exact
    /// duplicates are linked to their first occurrence, and the new distinct texts are signed in
    /// parallel.
    fn add(
        &mut self,
        items: Vec<Prepared>,
        mut place: impl FnMut(usize, Option<String>, &[Document]) -> (String, Origin),
    ) {
        let mut to_sign: Vec<(u32, String)> = Vec::new();
        let mut copies: Vec<u32> = Vec::new();
        for (i, item) in items.into_iter().enumerate() {
            let (id, norm, hash, chars, bytes) = match item {
                Prepared::Skipped(skip) => {
                    self.corpus.skipped.push(skip);
                    continue;
                }
                Prepared::Text {
                    id,
                    norm,
                    hash,
                    chars,
                    bytes,
                } => (id, norm, hash, chars, bytes),
            };
            let doc = self.corpus.documents.len() as u32;
            let (id, origin) = place(i, id, &self.corpus.documents);
            self.corpus.documents.push(Document {
                id,
                origin,
                empty: false,
            });
            self.corpus.stats.bytes += bytes;
            self.chars.push(chars);
            self.hashes.push(hash);
            match self.first_of_hash.get(&hash) {
                Some(&first) => {
                    self.exact_of.push(first);
                    copies.push(doc);
                }
                None => {
                    self.first_of_hash.insert(hash, doc);
                    self.exact_of.push(doc);
                    to_sign.push((doc, norm));
                }
            }
        }
        let pipeline = self.pipeline;
        let signed: Vec<(u32, Option<Vec<u32>>)> = to_sign
            .into_par_iter()
            .map_init(Scratch::default, |s, (doc, norm)| {
                s.text = norm;
                (doc, pipeline.sign_normalized(s))
            })
            .collect();
        for (doc, sig) in signed {
            match sig {
                Some(sig) => {
                    self.corpus.signatures.extend_from_slice(&sig);
                    self.corpus.signed.push(doc);
                }
                None => {
                    self.corpus.documents[doc as usize].empty = true;
                    self.corpus.stats.empty += 1;
                }
            }
        }
        for doc in copies {
            let first = self.exact_of[doc as usize] as usize;
            if self.corpus.documents[first].empty {
                self.corpus.documents[doc as usize].empty = true;
                self.corpus.stats.empty += 1;
            }
        }
    }

    /// Phase two and the choice of the kept documents.
    fn finish(mut self, keep: Keep, start: Instant) -> Result<DedupReport> {
        let stats = &mut self.corpus.stats;
        stats.documents = self.corpus.documents.len() as u64;
        for s in &self.corpus.skipped {
            stats.count_skip(s.kind);
        }
        let scan = self.pipeline.find_pairs(self.corpus, start)?;
        let n = scan.documents.len();
        let mut uf = UnionFind::new(n);
        for (d, &first) in self.exact_of.iter().enumerate() {
            uf.union(d as u32, first);
        }
        for p in &scan.pairs {
            uf.union(p.a, p.b);
        }
        // Is `x` a better keeper than `y`?
        let better = |x: u32, y: u32| -> bool {
            let by_id = || {
                (scan.id(x), x) < (scan.id(y), y) // ties: smaller id, then input order
            };
            let (lx, ly) = (self.chars[x as usize], self.chars[y as usize]);
            match keep {
                Keep::First => x < y,
                Keep::Longest => lx > ly || (lx == ly && by_id()),
                Keep::Shortest => lx < ly || (lx == ly && by_id()),
            }
        };
        let mut keeper = vec![u32::MAX; n];
        for d in 0..n as u32 {
            let r = uf.find(d) as usize;
            if keeper[r] == u32::MAX || better(d, keeper[r]) {
                keeper[r] = d;
            }
        }
        let (mut exact_dropped, mut near_dropped) = (0, 0);
        let fates = (0..n as u32)
            .map(|d| {
                let kept = keeper[uf.find(d) as usize];
                if kept == d {
                    Fate::Kept
                } else if self.hashes[d as usize] == self.hashes[kept as usize] {
                    exact_dropped += 1;
                    Fate::Exact { kept }
                } else {
                    near_dropped += 1;
                    Fate::Near { kept }
                }
            })
            .collect();
        Ok(DedupReport {
            scan,
            fates,
            exact_dropped,
            near_dropped,
        })
    }
}

/// Deduplicates the files under `paths` (walked as `ndup scan` walks them).
pub fn dedup_files(pipeline: &Pipeline, paths: &[PathBuf], keep: Keep) -> Result<DedupReport> {
    let start = Instant::now();
    let (entries, skipped) = input::collect(paths, &pipeline.config().input)?;
    pipeline.progress_total(entries.len() as u64);
    let mut b = Builder::new(pipeline);
    b.corpus.skipped = skipped;
    for chunk in entries.chunks(FILE_BATCH) {
        let items: Vec<Prepared> = chunk
            .par_iter()
            .map_init(Scratch::default, |s, e| {
                match input::read_document(&e.path) {
                    Err(err) => Prepared::Skipped(Skip::unreadable(e.id.clone(), &err)),
                    Ok(Read::Binary) => Prepared::Skipped(Skip::binary(e.id.clone())),
                    Ok(Read::Text(text)) => b.prepare(None, &text, s),
                }
            })
            .collect();
        b.add(items, |i, _, _| {
            (chunk[i].id.clone(), Origin::File(chunk[i].path.clone()))
        });
        pipeline.advance(chunk.len() as u64);
    }
    b.finish(keep, start)
}

/// Deduplicates JSON-lines sources (`-` is standard input, which is kept in a temporary file so
/// that the kept records can be written out).
pub fn dedup_records(pipeline: &Pipeline, inputs: &[PathBuf], keep: Keep) -> Result<DedupReport> {
    let start = Instant::now();
    let fields = pipeline.config().input.records.fields();
    let mut ids = Ids::new(inputs.len(), false);
    let mut b = Builder::new(pipeline);
    records::read_batches(inputs, true, |ev| match ev {
        Event::Skip(skip) => b.corpus.skipped.push(skip),
        Event::Batch(batch) => {
            let items: Vec<Prepared> = batch
                .lines
                .par_iter()
                .map_init(Scratch::default, |s, line| {
                    match parse_record(batch.bytes(line), &fields) {
                        Err(reason) => Prepared::Skipped(Skip {
                            id: format!("{}:{}", batch.source.name(), line.number),
                            kind: SkipKind::Malformed,
                            reason,
                        }),
                        Ok(rec) => b.prepare(rec.id, &rec.text, s),
                    }
                })
                .collect();
            // Items are one per line of the batch, skipped ones included.
            let lines = &batch.lines;
            b.add(items, |i, id, docs| {
                let line = &lines[i];
                let doc = docs.len() as u32;
                let id = ids
                    .assign(&batch.source, line.number, id, doc, |d| {
                        docs[d as usize].id.as_str()
                    })
                    .expect("ids need not be unique when deduplicating");
                (
                    id,
                    Origin::Record {
                        source: Arc::clone(&batch.source),
                        line: line.number,
                        offset: line.offset,
                    },
                )
            });
            pipeline.advance(lines.len() as u64);
        }
    })?;
    b.finish(keep, start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::find::config::ScanConfig;

    fn fates_of(texts: &[&str], keep: Keep) -> Vec<Fate> {
        let dir = tempfile::tempdir().unwrap();
        let lines: String = texts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                format!(
                    "{}\n",
                    serde_json::json!({"id": format!("d{i}"), "text": t})
                )
            })
            .collect();
        let path = dir.path().join("c.jsonl");
        std::fs::write(&path, lines).unwrap();
        let p = Pipeline::new(ScanConfig::default()).unwrap();
        dedup_records(&p, &[path], keep).unwrap().fates
    }

    const LONG: &str = "the quick brown fox jumps over the lazy dog near the river bank today, \
        while seven tired sailors mend their nets under a pale morning sky and count the gulls \
        that circle the harbour, waiting for the tide to turn before they set out again";

    #[test]
    fn exact_copies_are_found_by_hash_and_one_is_kept() {
        let f = fates_of(
            &[LONG, "other text entirely, nothing alike", LONG],
            Keep::First,
        );
        assert_eq!(f, [Fate::Kept, Fate::Kept, Fate::Exact { kept: 0 }]);
        // Normalization makes copies: case and white space.
        let loud = LONG.to_uppercase().replace(' ', "  ");
        let f = fates_of(&[LONG, &loud], Keep::Longest);
        assert_eq!(f, [Fate::Exact { kept: 1 }, Fate::Kept]);
    }

    #[test]
    fn keep_rules_and_ties() {
        let near = format!("{LONG} and more");
        let texts = [LONG, near.as_str()];
        assert_eq!(
            fates_of(&texts, Keep::First),
            [Fate::Kept, Fate::Near { kept: 0 }]
        );
        assert_eq!(
            fates_of(&texts, Keep::Longest),
            [Fate::Near { kept: 1 }, Fate::Kept]
        );
        assert_eq!(
            fates_of(&texts, Keep::Shortest),
            [Fate::Kept, Fate::Near { kept: 0 }]
        );
        // Same length: the smaller id wins (d0 < d1), whatever the rule.
        let same_length = LONG.replace("river", "ocean");
        let texts = [same_length.as_str(), LONG];
        for keep in [Keep::Longest, Keep::Shortest] {
            assert_eq!(
                fates_of(&texts, keep),
                [Fate::Kept, Fate::Near { kept: 0 }],
                "{keep:?}"
            );
        }
    }

    #[test]
    fn empty_documents_are_copies_of_each_other() {
        let f = fates_of(&["", LONG, "   "], Keep::First);
        assert_eq!(f, [Fate::Kept, Fate::Kept, Fate::Exact { kept: 0 }]);
    }
}
