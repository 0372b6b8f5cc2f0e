//! Queries: new documents checked against the index by band-hash lookup, then verified.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;
use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use xxhash_rust::xxh3::xxh3_128;

use super::*;
use crate::find::config::{Params, ScanConfig};
use crate::find::read::{Outcome, Raw, Sketcher};
use crate::find::{Pipeline, Scratch};
use crate::model::{Skip, SkipKind};
use crate::sim::jaccard;
use crate::sketch::minhash::agreement;
use crate::source::files::{self as input, Entry};
use crate::source::records::{RecordOptions, RecordSource, parse_record};
use crate::verify::{Decision, Verifier};

/// Where a query document's text comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuerySource {
    /// A file, read when the query runs (and again for exact verification).
    File(PathBuf),
    /// Text already in memory, such as standard input.
    Text(String),
}

/// A document to check against the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryDoc {
    /// The id shown in reports.
    pub id: String,
    /// Its text.
    pub source: QuerySource,
}

impl QueryDoc {
    /// The query documents under `paths` (files, and directories walked as in a scan), in order.
    pub fn from_paths(
        paths: &[PathBuf],
        config: &ScanConfig,
    ) -> Result<(Vec<QueryDoc>, Vec<Skip>)> {
        let (entries, skips) = input::collect(paths, &config.input)?;
        let docs = entries
            .into_iter()
            .map(|e| QueryDoc {
                source: match e.kept_text() {
                    // A stream: its text was read, and cannot be read again.
                    Some(text) => QuerySource::Text(text.to_string()),
                    None => QuerySource::File(e.path),
                },
                id: e.id,
            })
            .collect();
        Ok((docs, skips))
    }
}

impl QueryDoc {
    /// The query documents of JSON-lines and Parquet inputs (`-` is standard input), one per
    /// record, in order, named as the index names records (one without an id is `file:line`,
    /// so a query of an indexed file does not match its own records); and what was skipped.
    pub fn from_records(
        pipeline: &Pipeline,
        inputs: &[PathBuf],
    ) -> Result<(Vec<QueryDoc>, Vec<Skip>)> {
        let corpus = pipeline.read(&crate::source::Source::Records(inputs.to_vec()), &Texts)?;
        let docs = corpus
            .documents
            .into_iter()
            .zip(corpus.sketches)
            .map(|(d, text)| QueryDoc {
                id: d.id,
                source: QuerySource::Text(text),
            })
            .collect();
        Ok((docs, corpus.skipped))
    }
}

/// Keeps each record's text as read: the query signs it, and may read it for exact
/// verification.
struct Texts;

impl Sketcher for Texts {
    type Sketch = String;

    /// Never `None`: an empty record is a query document too.
    fn sketch(&self, _s: &mut Scratch, raw: &Raw<'_>) -> Option<String> {
        Some(raw.text.to_owned())
    }

    fn names_by_source(&self) -> bool {
        true
    }
}

/// An indexed document similar to a query document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Match {
    /// The query document, an index into [`QueryReport::queries`].
    pub query: u32,
    /// The indexed document's id.
    pub indexed: String,
    /// The signature estimate of their Jaccard similarity.
    pub estimate: f64,
    /// The exact Jaccard similarity, when it was computed.
    pub jaccard: Option<f64>,
}

impl Match {
    /// The best measure available: exact when computed, else the estimate.
    pub fn score(&self) -> f64 {
        self.jaccard.unwrap_or(self.estimate)
    }
}

/// Counts of a query.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct QueryStats {
    /// Query documents read (including empty ones).
    pub queries: u64,
    /// Query documents with no text after normalization.
    pub empty: u64,
    /// Binary query files skipped.
    pub skipped_binary: u64,
    /// Query files that could not be read.
    pub skipped_unreadable: u64,
    /// Query records skipped as malformed (not JSON, no text, a duplicate id).
    pub skipped_malformed: u64,
    /// Query records longer than the line limit.
    pub skipped_too_large: u64,
    /// Bytes of query text.
    pub bytes: u64,
    /// Documents in the index.
    pub indexed: u64,
    /// Distinct (query, indexed document) candidates found by the band lookups.
    pub candidates: u64,
    /// Candidates whose exact Jaccard was computed.
    pub exact_checked: u64,
    /// Matches reported.
    pub matches: u64,
    /// Query documents signed.
    pub signed: u64,
    /// Wall time.
    #[serde(skip)]
    pub elapsed: Duration,
}

/// What a query found.
#[derive(Debug, Clone)]
pub struct QueryReport {
    /// The parameters of the run.
    pub params: Params,
    /// The index's parameter fingerprint.
    pub fingerprint: String,
    /// The ids of the query documents read, in the order given.
    pub queries: Vec<String>,
    /// Matches, grouped by query document in order, best first within each.
    pub matches: Vec<Match>,
    /// What was skipped, sorted by id.
    pub skipped: Vec<Skip>,
    /// Counts.
    pub stats: QueryStats,
}

struct Candidate {
    name: String,
    path: PathBuf,
    hash: [u8; 16],
    signature: Vec<u32>,
    /// For a record of a JSON-lines or Parquet file, its offset there.
    offset: Option<u64>,
}

impl Index {
    /// Finds, for each query document, the indexed documents similar to it: candidates by
    /// band-hash lookup, then verified as `pipeline`'s configuration says (signature, exact
    /// Jaccard when the indexed file is still there and unchanged, or none). An indexed document
    /// with the query's own id or path (its earlier version) is not reported. `top` keeps the
    /// best `top` matches of each query document.
    ///
    /// The query reads one consistent snapshot: a writer working at the same time is not seen.
    pub fn query(
        &self,
        pipeline: &Pipeline,
        docs: &[QueryDoc],
        top: Option<usize>,
    ) -> Result<QueryReport> {
        let start = Instant::now();
        let config = pipeline.config();
        self.require(&SigningParams::from_config(config))?;
        let path = &self.path;
        let err = db(path);
        let (bands, rows) = (self.params.bands, self.params.rows);
        let verifier = Verifier::new(config.verify, config.threshold, self.params.num_perm);

        let outcomes = read_queries(pipeline, docs)?;

        let tx = self.conn.unchecked_transaction().map_err(&err)?;
        let mut stats = QueryStats {
            indexed: count_docs(&tx, path)?,
            ..Default::default()
        };
        let mut skipped = Vec::new();
        let mut queries: Vec<String> = Vec::new();
        // For each query, the index of its document in `docs`.
        let mut query_doc: Vec<usize> = Vec::new();
        let mut matches: Vec<Match> = Vec::new();
        // (query, candidate, estimate) pairs the exact Jaccard must decide.
        let mut uncertain: Vec<(u32, usize, f64)> = Vec::new();
        let mut candidates: Vec<Candidate> = Vec::new();
        let mut by_rowid: HashMap<i64, usize> = HashMap::new();
        {
            let mut lookup = tx
                .prepare_cached("SELECT doc FROM band WHERE band = ?1 AND hash = ?2")
                .map_err(&err)?;
            // Format 2 has no records.
            let fetch_sql = if self.format >= 3 {
                "SELECT name, path, content_hash, signature, record_offset FROM doc WHERE id = ?1"
            } else {
                "SELECT name, path, content_hash, signature, NULL FROM doc WHERE id = ?1"
            };
            let mut fetch = tx.prepare_cached(fetch_sql).map_err(&err)?;
            for (di, (d, outcome)) in docs.iter().zip(outcomes).enumerate() {
                let (sig, bytes) = match outcome {
                    Outcome::Skipped(skip) => {
                        skipped.push(skip);
                        continue;
                    }
                    Outcome::Empty(bytes) => {
                        stats.bytes += bytes;
                        stats.empty += 1;
                        queries.push(d.id.clone());
                        query_doc.push(di);
                        continue;
                    }
                    Outcome::Sketched(sig, bytes, _) => (sig, bytes),
                };
                let q = queries.len() as u32;
                queries.push(d.id.clone());
                query_doc.push(di);
                stats.bytes += bytes;
                stats.signed += 1;
                let own_path = match &d.source {
                    QuerySource::File(p) => Some(absolute(p)),
                    QuerySource::Text(_) => None,
                };
                // This query's matches accepted by their signatures start here.
                let first = matches.len();
                let mut found: BTreeSet<i64> = BTreeSet::new();
                for (b, h) in bands_of(&sig, bands, rows).into_iter().enumerate() {
                    let rows = lookup
                        .query_map(params![b as i64, h as i64], |r| r.get::<_, i64>(0))
                        .map_err(&err)?;
                    for r in rows {
                        found.insert(r.map_err(&err)?);
                    }
                }
                for rowid in found {
                    let c = match by_rowid.get(&rowid) {
                        Some(&c) => c,
                        None => {
                            let cand = fetch
                                .query_row([rowid], |r| {
                                    Ok((
                                        r.get::<_, String>(0)?,
                                        r.get::<_, String>(1)?,
                                        r.get::<_, Vec<u8>>(2)?,
                                        r.get::<_, Option<Vec<u8>>>(3)?,
                                        r.get::<_, Option<i64>>(4)?,
                                    ))
                                })
                                .optional()
                                .map_err(&err)?;
                            let (name, file, hash, sig, offset) = cand.ok_or_else(|| {
                                corrupt(
                                    path,
                                    format!("band rows point at missing document {rowid}"),
                                )
                            })?;
                            let hash: [u8; 16] = hash.try_into().map_err(|_| {
                                corrupt(path, format!("{name}: content hash is not 16 bytes"))
                            })?;
                            let sig = sig.ok_or_else(|| {
                                corrupt(
                                    path,
                                    format!("{name}: in the band table but has no signature"),
                                )
                            })?;
                            let signature = check_sig(path, &name, &sig, &self.params)?;
                            if offset.is_some() && self.records.is_none() {
                                return Err(corrupt(
                                    path,
                                    format!("{name}: a record, but meta has no record fields"),
                                ));
                            }
                            candidates.push(Candidate {
                                name,
                                path: crate::source::files::path_of_id(&file),
                                hash,
                                signature,
                                offset: offset.map(|o| o as u64),
                            });
                            by_rowid.insert(rowid, candidates.len() - 1);
                            candidates.len() - 1
                        }
                    };
                    let cand = &candidates[c];
                    if cand.name == d.id
                        || (cand.offset.is_none()
                            && own_path.as_deref() == Some(cand.path.as_path()))
                    {
                        continue;
                    }
                    stats.candidates += 1;
                    let m = agreement(&sig, &cand.signature);
                    let estimate = m as f64 / self.params.num_perm as f64;
                    match verifier.decide(m) {
                        Decision::Reject => {}
                        Decision::Accept => matches.push(Match {
                            query: q,
                            indexed: cand.name.clone(),
                            estimate,
                            jaccard: None,
                        }),
                        Decision::Exact => uncertain.push((q, c, estimate)),
                    }
                }
                // With `top`, the query's best `top` accepted now are all it can keep of them
                // (the uncertain ones compete with these at the end): a query of boilerplate
                // that meets a million indexed copies holds `top` matches, not a million.
                if let Some(top) = top
                    && matches.len() - first > top
                {
                    matches[first..].sort_by(best_first);
                    matches.truncate(first + top);
                }
            }
        }
        drop(tx);

        stats.exact_checked = uncertain.len() as u64;
        let batch_len = if self.reads_compressed(&candidates, &uncertain) {
            EXACT_BATCH_COMPRESSED
        } else {
            EXACT_BATCH
        };
        for batch in uncertain.chunks(batch_len) {
            let mut qs: Vec<u32> = batch.iter().map(|p| p.0).collect();
            qs.sort_unstable();
            qs.dedup();
            let mut cs: Vec<usize> = batch.iter().map(|p| p.1).collect();
            cs.sort_unstable();
            cs.dedup();
            let q_sets: HashMap<u32, std::result::Result<Vec<u64>, Skip>> = qs
                .par_iter()
                .map(|&q| {
                    let d = &docs[query_doc[q as usize]];
                    let set = query_text(d, pipeline.config().input.max_filesize)
                        .map(|t| pipeline.shingle_set(&t))
                        .map_err(|s| reload_skip(s.id, s.reason));
                    (q, set)
                })
                .collect();
            let (records, files): (Vec<usize>, Vec<usize>) = cs
                .into_iter()
                .partition(|&c| candidates[c].offset.is_some());
            let mut c_sets: HashMap<usize, std::result::Result<Vec<u64>, Skip>> = files
                .par_iter()
                .map(|&c| (c, reload_indexed(pipeline, &candidates[c])))
                .collect();
            if let Some(fields) = &self.records {
                // This run's line limit bounds what is read again, too.
                let opts = RecordOptions {
                    max_line_bytes: pipeline.config().input.records.max_line_bytes,
                    ..fields.options()
                };
                c_sets.extend(reload_records(pipeline, &opts, &candidates, records));
            }
            for &(q, c, estimate) in batch {
                match (&q_sets[&q], &c_sets[&c]) {
                    (Ok(x), Ok(y)) => {
                        let j = jaccard(x, y);
                        if verifier.accept_exact(j) {
                            matches.push(Match {
                                query: q,
                                indexed: candidates[c].name.clone(),
                                estimate,
                                jaccard: Some(j),
                            });
                        }
                    }
                    (Err(e), _) | (_, Err(e)) => {
                        if !skipped.contains(e) {
                            skipped.push(e.clone());
                        }
                        // As in a scan: without the text, the signature decides.
                        if verifier.accept_exact(estimate) {
                            matches.push(Match {
                                query: q,
                                indexed: candidates[c].name.clone(),
                                estimate,
                                jaccard: None,
                            });
                        }
                    }
                }
            }
        }

        matches.sort_by(best_first);
        if let Some(top) = top {
            let mut kept = 0;
            let mut last = None;
            matches.retain(|m| {
                if last != Some(m.query) {
                    last = Some(m.query);
                    kept = 0;
                }
                kept += 1;
                kept <= top
            });
        }
        stats.queries = queries.len() as u64;
        stats.matches = matches.len() as u64;
        stats.elapsed = start.elapsed();
        let mut report = QueryReport {
            params: config.params(),
            fingerprint: self.fingerprint.clone(),
            queries,
            matches,
            skipped: Vec::new(),
            stats,
        };
        report.add_skipped(skipped);
        Ok(report)
    }
}

impl QueryReport {
    /// Adds what was skipped, counted by reason and kept sorted by id: the query's own skips,
    /// and the caller's while it found the query documents.
    pub fn add_skipped(&mut self, skipped: Vec<Skip>) {
        for s in &skipped {
            let count = match s.kind {
                SkipKind::Binary => &mut self.stats.skipped_binary,
                SkipKind::Unreadable => &mut self.stats.skipped_unreadable,
                SkipKind::Malformed => &mut self.stats.skipped_malformed,
                SkipKind::TooLarge => &mut self.stats.skipped_too_large,
            };
            *count += 1;
        }
        self.skipped.extend(skipped);
        self.skipped.sort_by(|x, y| x.id.cmp(&y.id));
    }
}

/// The query documents' signatures: one per document, through the one loop of
/// [`crate::find::read`], files read in parallel and texts in memory sketched as they are.
fn read_queries(pipeline: &Pipeline, docs: &[QueryDoc]) -> Result<Vec<Outcome<Vec<u32>>>> {
    let sketcher = Signer(pipeline);
    let files: Vec<Entry> = docs
        .iter()
        .filter_map(|d| match &d.source {
            QuerySource::File(path) => Some(Entry::new(d.id.clone(), path.clone())),
            QuerySource::Text(_) => None,
        })
        .collect();
    let mut files = pipeline.read_entries(&files, &sketcher)?.into_iter();
    let texts: Vec<_> = docs
        .par_iter()
        .filter_map(|d| match &d.source {
            QuerySource::Text(text) => Some(pipeline.read_text(text, &sketcher)),
            QuerySource::File(_) => None,
        })
        .collect();
    let mut texts = texts.into_iter();
    Ok(docs
        .iter()
        .map(|d| match d.source {
            QuerySource::File(_) => files.next(),
            QuerySource::Text(_) => texts.next(),
        })
        .map(|o| o.expect("one outcome per document"))
        .collect())
}

/// A query document's signature.
struct Signer<'p>(&'p Pipeline);

impl Sketcher for Signer<'_> {
    type Sketch = Vec<u32>;

    fn sketch(&self, s: &mut Scratch, _raw: &Raw<'_>) -> Option<Vec<u32>> {
        self.0.sign_normalized(s)
    }
}

/// The text of a query document, or why it has none (to read it again for exact
/// verification).
fn query_text(
    d: &QueryDoc,
    limit: Option<u64>,
) -> std::result::Result<std::borrow::Cow<'_, str>, Skip> {
    match &d.source {
        QuerySource::Text(t) => Ok(std::borrow::Cow::Borrowed(t)),
        QuerySource::File(p) => match input::read_document(p, limit) {
            Ok(input::Read::Text(t)) => Ok(std::borrow::Cow::Owned(t)),
            Ok(input::Read::Binary) => Err(binary_skip(&d.id)),
            Err(e) => Err(Skip::unreadable(d.id.clone(), &e)),
        },
    }
}

fn reload_skip(id: String, reason: String) -> Skip {
    Skip {
        id,
        kind: SkipKind::Unreadable,
        reason: format!("could not be read again for exact verification: {reason}"),
    }
}

/// The shingle sets of the indexed records `wanted` among `candidates`, read again with one
/// pass per file; only those whose text is still the one indexed.
/// By query in the order given, best first, then by id: deterministic, and a total order (an
/// indexed id is matched at most once per query).
fn best_first(a: &Match, b: &Match) -> std::cmp::Ordering {
    a.query
        .cmp(&b.query)
        .then(b.score().total_cmp(&a.score()))
        .then(b.estimate.total_cmp(&a.estimate))
        .then_with(|| a.indexed.cmp(&b.indexed))
}

impl Index {
    /// True when some of the `uncertain` pairs' indexed records lie in a file that cannot be
    /// read at an offset (compressed): one whose records are read forward from its start.
    fn reads_compressed(&self, candidates: &[Candidate], uncertain: &[(u32, usize, f64)]) -> bool {
        let Some(fields) = &self.records else {
            return false;
        };
        let mut paths: Vec<&Path> = uncertain
            .iter()
            .map(|&(_, c, _)| &candidates[c])
            .filter(|c| c.offset.is_some())
            .map(|c| c.path.as_path())
            .collect();
        paths.sort_unstable();
        paths.dedup();
        let opts = fields.options();
        paths
            .into_iter()
            .any(|p| RecordSource::for_file(p, &opts).is_ok_and(|source| !source.seekable()))
    }
}

fn reload_records(
    pipeline: &Pipeline,
    opts: &RecordOptions,
    candidates: &[Candidate],
    mut wanted: Vec<usize>,
) -> Vec<(usize, std::result::Result<Vec<u64>, Skip>)> {
    wanted.sort_by_key(|&c| (&candidates[c].path, candidates[c].offset));
    let fields = opts.fields();
    let mut out = Vec::with_capacity(wanted.len());
    for group in wanted.chunk_by(|&a, &b| candidates[a].path == candidates[b].path) {
        let offsets: Vec<u64> = group
            .iter()
            .map(|&c| candidates[c].offset.expect("a record has an offset"))
            .collect();
        let lines = RecordSource::for_file(&candidates[group[0]].path, opts)
            .and_then(|source| source.read_at(&offsets));
        match lines {
            Err(e) => out.extend(group.iter().map(|&c| {
                let reason = crate::model::io_reason(&e);
                (c, Err(reload_skip(candidates[c].name.clone(), reason)))
            })),
            Ok(lines) => out.par_extend(group.par_iter().zip(lines).map(|(&c, line)| {
                let cand = &candidates[c];
                let set = match parse_record(&line, &fields) {
                    Err(reason) => Err(reload_skip(cand.name.clone(), reason)),
                    Ok(r) if xxh3_128(r.text.as_bytes()).to_be_bytes() != cand.hash => Err(
                        reload_skip(cand.name.clone(), "it changed since it was indexed".into()),
                    ),
                    Ok(r) => Ok(pipeline.shingle_set(&r.text)),
                };
                (c, set)
            })),
        }
    }
    out
}

/// The shingle set of an indexed document, read again from its file; only when the file still
/// has the content that was indexed, else the exact Jaccard would describe another text.
fn reload_indexed(pipeline: &Pipeline, c: &Candidate) -> std::result::Result<Vec<u64>, Skip> {
    let limit = pipeline.config().input.max_filesize.unwrap_or(u64::MAX);
    let bytes = fs::metadata(&c.path)
        .and_then(|md| match md.is_file() {
            // Opening a FIFO or a device could block or never end.
            true => fs::File::open(&c.path),
            false => Err(std::io::Error::other("not a regular file")),
        })
        .and_then(|f| input::read_capped(f, limit))
        .map_err(|e| reload_skip(c.name.clone(), crate::model::io_reason(&e)))?;
    if xxh3_128(&bytes).to_be_bytes() != c.hash {
        return Err(reload_skip(
            c.name.clone(),
            "it changed since it was indexed".into(),
        ));
    }
    let text = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    Ok(pipeline.shingle_set(&text))
}
