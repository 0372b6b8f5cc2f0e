//! Corpus deduplication: keep one document per cluster of near-duplicates.
//!
//! 1. **Exact duplicates first.** Each document is read by the one loop of `crate::find::read`
//!    (its `ndup:ignore` regions removed and its text normalized), and the normalized text is
//!    hashed (xxh3, 128 bits). Each distinct text is shingled and signed once, by whichever
//!    worker meets it first; every other document with that hash is an exact duplicate of the
//!    first one in input order, and does not enter LSH. This is cheap (a hash per document) and
//!    takes the bulk of the duplicates of a typical crawl out of the expensive path.
//! 2. **Near duplicates.** The first document of each distinct text, with its text's signature,
//!    goes through the same LSH and verification as `ndup scan` (so `--threshold` and `--verify`
//!    mean the same thing).
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

use std::collections::{HashMap, HashSet};
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;
use xxhash_rust::xxh3::xxh3_128;

use crate::error::Result;
use crate::find::read::{Corpus, Raw, Sketcher};
use crate::find::{Pipeline, ScanReport, Scratch, SignedCorpus};
use crate::model::cluster::UnionFind;
use crate::source::records::RecordSource;
use crate::source::texts::SharedTexts;
use crate::source::{Origin, Source};

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
            // A failed write is the output's, not named after the source being read.
            let mut unwritten = None;
            source
                .for_each_line(|number, _, bytes| {
                    if next.peek() == Some(&&number) {
                        next.next();
                        if let Err(e) = w.write_all(bytes).and_then(|()| w.write_all(b"\n")) {
                            unwritten = Some(e);
                            return Ok(false);
                        }
                    }
                    Ok(next.peek().is_some())
                })
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", source.name())))?;
            if let Some(e) = unwritten {
                return Err(e);
            }
            if next.peek().is_some() {
                return Err(io::Error::other(format!(
                    "{}: the input is shorter than when it was read",
                    source.name()
                )));
            }
        }
        Ok(())
    }
}

#[cfg(feature = "parquet")]
impl DedupReport {
    /// True when the documents are rows of Parquet files: [`write_kept_parquet`] writes them.
    ///
    /// [`write_kept_parquet`]: Self::write_kept_parquet
    pub fn is_parquet(&self) -> bool {
        self.scan
            .documents
            .iter()
            .any(|d| matches!(&d.origin, Origin::Record { source, .. } if source.is_parquet()))
    }

    /// Writes the kept rows of Parquet sources as one Parquet file: every column of each kept
    /// row, in input order, with the schema of the first source (see
    /// [`crate::source::parquet::write_kept`]).
    pub fn write_kept_parquet(&self, w: &mut (dyn Write + Send)) -> crate::error::Result<()> {
        let mut files: Vec<std::path::PathBuf> = Vec::new();
        let mut kept: Vec<Vec<u64>> = Vec::new();
        let mut last: Option<&Arc<RecordSource>> = None;
        for (doc, fate) in self.scan.documents.iter().zip(&self.fates) {
            let Origin::Record { source, line, .. } = &doc.origin else {
                continue;
            };
            if last.is_none_or(|s| !Arc::ptr_eq(s, source)) {
                files.push(
                    source
                        .path()
                        .unwrap_or(std::path::Path::new("-"))
                        .to_path_buf(),
                );
                kept.push(Vec::new());
                last = Some(source);
            }
            if *fate == Fate::Kept {
                kept.last_mut().expect("pushed above").push(*line);
            }
        }
        crate::source::parquet::write_kept(&files, |n, row| kept[n].binary_search(&row).is_ok(), w)
    }
}

/// Shards of the set of texts already signed: workers rarely wait for one another.
const SIGNED_SHARDS: usize = 64;

/// What deduplication keeps of a document.
struct Hashed {
    /// The hash of its normalized text.
    hash: u128,
    /// The length of its text as read, in characters (0 unless `--keep` compares lengths).
    chars: u64,
    /// For the one document of its text that was signed, the signature (`None`: no shingle).
    signed: Option<Option<Vec<u32>>>,
}

/// Deduplication's sketcher: every document's [`Hashed`], signed only for the first document of
/// each text that a worker meets.
struct Dedup<'p> {
    pipeline: &'p Pipeline,
    chars: bool,
    signed: Vec<Mutex<HashSet<u128>>>,
}

impl Sketcher for Dedup<'_> {
    type Sketch = Hashed;

    /// Never `None`: an empty document is a text like any other, and its copies are exact
    /// duplicates of it.
    fn sketch(&self, s: &mut Scratch, raw: &Raw<'_>) -> Option<Hashed> {
        let hash = xxh3_128(s.text.as_bytes());
        let shard = &self.signed[(hash % SIGNED_SHARDS as u128) as usize];
        let first = shard.lock().expect("never poisoned").insert(hash);
        Some(Hashed {
            hash,
            chars: if self.chars {
                crate::text::strip_bom(raw.text).chars().count() as u64
            } else {
                0
            },
            signed: first.then(|| self.pipeline.sign_normalized(s)),
        })
    }

    fn rereads(&self) -> bool {
        true
    }

    fn unique_ids(&self) -> bool {
        false
    }
}

/// Deduplicates the files under `paths` (walked as `ndup scan` walks them).
pub fn dedup_files(pipeline: &Pipeline, paths: &[PathBuf], keep: Keep) -> Result<DedupReport> {
    dedup_source(pipeline, &Source::Files(paths.to_vec()), keep)
}

/// Deduplicates JSON-lines sources (`-` is standard input, which is kept in a temporary file so
/// that the kept records can be written out).
pub fn dedup_records(pipeline: &Pipeline, inputs: &[PathBuf], keep: Keep) -> Result<DedupReport> {
    dedup_source(pipeline, &Source::Records(inputs.to_vec()), keep)
}

/// Deduplicates texts already in memory (see [`crate::source::texts`]): the same decisions as
/// [`dedup_records`] on records with the same ids and texts, in the same order.
pub fn dedup_texts(pipeline: &Pipeline, texts: SharedTexts, keep: Keep) -> Result<DedupReport> {
    dedup_source(pipeline, &Source::Texts(texts), keep)
}

/// Deduplicates `source`, whatever it is (the functions above name the common cases).
pub fn dedup_source(pipeline: &Pipeline, source: &Source, keep: Keep) -> Result<DedupReport> {
    let start = Instant::now();
    let dedup = Dedup {
        pipeline,
        chars: keep != Keep::First,
        signed: (0..SIGNED_SHARDS).map(|_| Mutex::default()).collect(),
    };
    let Corpus {
        mut documents,
        sketches: mut copies,
        skipped,
        mut stats,
        ..
    } = pipeline.read(source, &dedup)?;
    debug_assert_eq!(copies.len(), documents.len(), "every document has its copy");

    // Each document's first copy in input order, which takes its text's signature.
    let mut first_of_hash: HashMap<u128, u32> = HashMap::new();
    let exact_of: Vec<u32> = (0..copies.len())
        .map(|d| *first_of_hash.entry(copies[d].hash).or_insert(d as u32))
        .collect();
    drop(first_of_hash);
    for d in 0..copies.len() {
        let first = exact_of[d] as usize;
        if first != d && copies[d].signed.is_some() {
            copies[first].signed = copies[d].signed.take();
        }
    }
    let mut corpus = SignedCorpus::default();
    for d in 0..copies.len() {
        let first = exact_of[d] as usize;
        let empty = if first == d {
            let signed = copies[d].signed.take();
            match signed.expect("one document of each text was signed") {
                Some(sig) => {
                    corpus.signatures.extend_from_slice(&sig);
                    corpus.signed.push(d as u32);
                    false
                }
                None => true,
            }
        } else {
            documents[first].empty
        };
        if empty {
            documents[d].empty = true;
            stats.empty += 1;
        }
    }
    corpus.documents = documents;
    corpus.skipped = skipped;
    corpus.stats = stats;
    choose(
        pipeline.find_pairs(corpus, start)?,
        &copies,
        &exact_of,
        keep,
    )
}

/// The kept documents: exact-duplicate links and verified pairs joined into clusters, and the
/// best document of each kept.
fn choose(
    scan: ScanReport,
    copies: &[Hashed],
    exact_of: &[u32],
    keep: Keep,
) -> Result<DedupReport> {
    let n = scan.documents.len();
    let mut uf = UnionFind::new(n);
    for (d, &first) in exact_of.iter().enumerate() {
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
        let (lx, ly) = (copies[x as usize].chars, copies[y as usize].chars);
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
            } else if copies[d as usize].hash == copies[kept as usize].hash {
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
        // Same length: the smaller id wins (d0 < d1), whatever the rule. A leading byte-order
        // mark is not text, so it does not make its copy the longer.
        let same_length = LONG.replace("river", "ocean");
        let bom = format!("\u{feff}{LONG}");
        for texts in [[same_length.as_str(), LONG], [LONG, bom.as_str()]] {
            for keep in [Keep::Longest, Keep::Shortest] {
                assert_eq!(
                    fates_of(&texts, keep)[0],
                    Fate::Kept,
                    "{keep:?} {:?}",
                    &texts[1][..3]
                );
            }
        }
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
    fn texts_in_memory_get_the_fates_of_the_same_records() {
        let near = format!("{LONG} and more");
        let shorter = LONG.replace("river bank", "bank");
        let texts = [
            LONG,
            "unrelated words here",
            &near,
            LONG,
            "",
            &shorter,
            "  ",
        ];
        let pairs: Vec<(String, String)> = texts
            .iter()
            .enumerate()
            // Ids that sort otherwise than positions, and one repeated: ties are broken by id.
            .map(|(i, t)| (format!("d{}", (7 - i) % 4), t.to_string()))
            .collect();
        let p = Pipeline::new(ScanConfig::default()).unwrap();
        for keep in [Keep::First, Keep::Longest, Keep::Shortest] {
            let dir = tempfile::tempdir().unwrap();
            let lines: String = pairs
                .iter()
                .map(|(id, t)| format!("{}\n", serde_json::json!({"id": id, "text": t})))
                .collect();
            let path = dir.path().join("c.jsonl");
            std::fs::write(&path, lines).unwrap();
            let records = dedup_records(&p, &[path], keep).unwrap();
            let texts = dedup_texts(&p, SharedTexts::new(pairs.clone()), keep).unwrap();
            assert_eq!(texts.fates, records.fates, "{keep:?}");
            assert_eq!(texts.kept(), 3, "{keep:?}");
        }
    }

    #[test]
    fn empty_documents_are_copies_of_each_other() {
        let f = fates_of(&["", LONG, "   "], Keep::First);
        assert_eq!(f, [Fate::Kept, Fate::Kept, Fate::Exact { kept: 0 }]);
    }
}
