//! The writing commands: build, add, update, remove, and the scan cache. Each runs in one
//! `IMMEDIATE` transaction: files are stat'ed, only the changed ones read and signed (by the one
//! loop of [`crate::find::read`], in parallel, a chunk at a time), and the rows written as the
//! chunks complete.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::*;
use crate::find::read::{Outcome, Raw, Sketcher};
use crate::find::{Phase, Pipeline, Scratch, SignedCorpus};
use crate::model::SkipKind;
use crate::source::files as input;
use crate::source::files::Entry;
use crate::source::{Document, Origin};

/// What the index keeps of a file it reads, by the one loop of [`crate::find::read`].
enum Fresh {
    /// Same content as the stored row: only the size and mtime are refreshed.
    Same,
    /// New or changed content, binary: a row with no text.
    Binary([u8; 16]),
    /// New or changed text, and its signature (`None`: no shingle).
    Text([u8; 16], Option<Vec<u32>>),
}

/// The index's sketcher: a file whose content hash equals its stored row's is not signed again,
/// a binary file is kept as a row, and any other file is signed.
struct Rows<'a> {
    pipeline: &'a Pipeline,
    stored: &'a HashMap<String, Stored>,
}

impl Sketcher for Rows<'_> {
    type Sketch = Fresh;

    /// Never `None`: an empty document is kept as a row.
    fn sketch(&self, s: &mut Scratch, raw: &Raw<'_>) -> Option<Fresh> {
        let sig = self.pipeline.sign_normalized(s);
        Some(Fresh::Text(raw.content.to_be_bytes(), sig))
    }

    fn content_hashes(&self) -> bool {
        true
    }

    fn known(&self, entry: &Entry, content: u128, binary: bool) -> Option<Fresh> {
        let hash = content.to_be_bytes();
        if self.stored.get(&entry.id).is_some_and(|s| s.hash == hash) {
            Some(Fresh::Same)
        } else {
            binary.then_some(Fresh::Binary(hash))
        }
    }
}

/// A row to write.
struct NewDoc {
    kind: Kind,
    size: u64,
    mtime_ns: i64,
    hash: [u8; 16],
    text_bytes: u64,
    signature: Option<Vec<u32>>,
}

/// Test hook: in debug builds, `NDUP_DEBUG_PAUSE_AFTER_WRITES=N` makes a writer stop after it has
/// written N documents inside its open transaction, say so on stderr, and wait to be killed. The
/// crash-safety tests use it to kill a writer mid-transaction at a known point.
#[derive(Debug, Clone, Copy)]
struct PauseHook(Option<u64>);

impl PauseHook {
    fn from_env() -> Self {
        #[cfg(debug_assertions)]
        {
            PauseHook(
                std::env::var("NDUP_DEBUG_PAUSE_AFTER_WRITES")
                    .ok()
                    .and_then(|v| v.parse().ok()),
            )
        }
        #[cfg(not(debug_assertions))]
        {
            PauseHook(None)
        }
    }

    fn after(&self, written: u64) {
        if self.0 == Some(written) {
            eprintln!("ndup: debug: paused after writing {written} documents");
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
    }
}

/// Writes document rows and their band rows inside one transaction.
struct Writer<'a> {
    tx: &'a Connection,
    path: &'a Path,
    params: &'a SigningParams,
    now: i64,
    written: u64,
    hook: PauseHook,
    /// Band rows not yet inserted: they are inserted in key order by [`Writer::flush`], which
    /// keeps the band table's B-tree pages hot instead of visiting a random page per row.
    pending: Vec<(i64, i64, i64)>,
}

/// Band rows per multi-row `INSERT`: fewer statement executions per row.
const BAND_ROWS_PER_INSERT: usize = 32;

impl<'a> Writer<'a> {
    fn new(tx: &'a Connection, path: &'a Path, params: &'a SigningParams, now: i64) -> Self {
        Writer {
            tx,
            path,
            params,
            now,
            written: 0,
            hook: PauseHook::from_env(),
            pending: Vec::new(),
        }
    }

    fn insert_bands(&mut self, doc: i64, bands: &[u64]) {
        self.pending.extend(
            bands
                .iter()
                .enumerate()
                .map(|(b, &h)| (b as i64, h as i64, doc)),
        );
    }

    /// Inserts the pending band rows, sorted.
    fn flush(&mut self) -> Result<()> {
        let mut rows = std::mem::take(&mut self.pending);
        rows.sort_unstable();
        let many = format!(
            "INSERT INTO band(band, hash, doc) VALUES {}",
            vec!["(?, ?, ?)"; BAND_ROWS_PER_INSERT].join(", ")
        );
        let mut chunks = rows.chunks_exact(BAND_ROWS_PER_INSERT);
        {
            let mut st = self.tx.prepare_cached(&many).map_err(db(self.path))?;
            for chunk in &mut chunks {
                let values: Vec<&dyn rusqlite::ToSql> = chunk
                    .iter()
                    .flat_map(|(b, h, d)| [b as &dyn rusqlite::ToSql, h, d])
                    .collect();
                st.execute(values.as_slice()).map_err(db(self.path))?;
            }
        }
        let mut st = self
            .tx
            .prepare_cached("INSERT INTO band(band, hash, doc) VALUES (?1, ?2, ?3)")
            .map_err(db(self.path))?;
        for (b, h, d) in chunks.remainder() {
            st.execute(params![b, h, d]).map_err(db(self.path))?;
        }
        Ok(())
    }

    fn delete_bands(&self, doc: i64) -> Result<()> {
        let blob: Option<Vec<u8>> = self
            .tx
            .prepare_cached("SELECT bands FROM doc WHERE id = ?1")
            .and_then(|mut st| st.query_row([doc], |r| r.get(0)))
            .map_err(db(self.path))?;
        let Some(blob) = blob else { return Ok(()) };
        let mut st = self
            .tx
            .prepare_cached("DELETE FROM band WHERE band = ?1 AND hash = ?2 AND doc = ?3")
            .map_err(db(self.path))?;
        for (b, h) in blob_to_bands(&blob).into_iter().enumerate() {
            st.execute(params![b as i64, h as i64, doc])
                .map_err(db(self.path))?;
        }
        Ok(())
    }

    /// Inserts or replaces the row of `entry`.
    fn put(&mut self, entry: &Entry, old: Option<i64>, d: &NewDoc) -> Result<()> {
        let bands = d
            .signature
            .as_ref()
            .map(|s| bands_of(s, self.params.bands, self.params.rows));
        let path = crate::source::files::display_id(&absolute(&entry.path));
        let sig = d.signature.as_deref().map(sig_to_blob);
        let band_blob = bands.as_deref().map(bands_to_blob);
        let values = params![
            path,
            d.kind.name(),
            d.size as i64,
            d.mtime_ns,
            self.now,
            &d.hash[..],
            d.text_bytes as i64,
            sig,
            band_blob,
        ];
        let doc = match old {
            Some(rowid) => {
                self.delete_bands(rowid)?;
                let mut st = self
                    .tx
                    .prepare_cached(
                        "UPDATE doc SET path = ?1, kind = ?2, size = ?3, mtime_ns = ?4,
                         indexed_ns = ?5, content_hash = ?6, text_bytes = ?7, signature = ?8,
                         bands = ?9 WHERE id = ?10",
                    )
                    .map_err(db(self.path))?;
                let mut v: Vec<&dyn rusqlite::ToSql> = values.to_vec();
                v.push(&rowid);
                st.execute(v.as_slice()).map_err(db(self.path))?;
                rowid
            }
            None => {
                let mut st = self
                    .tx
                    .prepare_cached(
                        "INSERT INTO doc(path, kind, size, mtime_ns, indexed_ns, content_hash,
                         text_bytes, signature, bands, name)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                    )
                    .map_err(db(self.path))?;
                let mut v: Vec<&dyn rusqlite::ToSql> = values.to_vec();
                v.push(&entry.id);
                st.execute(v.as_slice()).map_err(db(self.path))?;
                self.tx.last_insert_rowid()
            }
        };
        if let Some(bands) = &bands {
            self.insert_bands(doc, bands);
        }
        self.wrote();
        Ok(())
    }

    /// Records that the file was looked at again and found unchanged.
    fn touch(&mut self, rowid: i64, size: u64, mtime_ns: i64) -> Result<()> {
        self.tx
            .prepare_cached(
                "UPDATE doc SET size = ?1, mtime_ns = ?2, indexed_ns = ?3 WHERE id = ?4",
            )
            .and_then(|mut st| st.execute(params![size as i64, mtime_ns, self.now, rowid]))
            .map_err(db(self.path))?;
        self.wrote();
        Ok(())
    }

    fn delete(&mut self, rowid: i64) -> Result<()> {
        self.delete_bands(rowid)?;
        self.tx
            .prepare_cached("DELETE FROM doc WHERE id = ?1")
            .and_then(|mut st| st.execute([rowid]))
            .map_err(db(self.path))?;
        self.wrote();
        Ok(())
    }

    fn wrote(&mut self) {
        self.written += 1;
        self.hook.after(self.written);
    }
}

/// Loads every row's change-detection data, keyed by id.
fn load_stored(
    conn: &Connection,
    path: &Path,
    params: &SigningParams,
    with_signatures: bool,
) -> Result<HashMap<String, Stored>> {
    let sql = if with_signatures {
        "SELECT id, name, kind, size, mtime_ns, indexed_ns, content_hash, text_bytes, signature FROM doc"
    } else {
        "SELECT id, name, kind, size, mtime_ns, indexed_ns, content_hash, text_bytes, NULL FROM doc"
    };
    let err = db(path);
    let mut st = conn.prepare(sql).map_err(&err)?;
    let mut rows = st.query([]).map_err(&err)?;
    let mut out = HashMap::new();
    while let Some(r) = rows.next().map_err(&err)? {
        let name: String = r.get(1).map_err(&err)?;
        let kind: String = r.get(2).map_err(&err)?;
        let kind = Kind::parse(&kind)
            .ok_or_else(|| corrupt(path, format!("{name}: unknown kind {kind:?}")))?;
        let hash: Vec<u8> = r.get(6).map_err(&err)?;
        let hash: [u8; 16] = hash
            .try_into()
            .map_err(|_| corrupt(path, format!("{name}: content hash is not 16 bytes")))?;
        let signature = if with_signatures && kind == Kind::Text {
            let blob: Vec<u8> = r.get(8).map_err(&err)?;
            Some(check_sig(path, &name, &blob, params)?)
        } else {
            None
        };
        let stored = Stored {
            rowid: r.get(0).map_err(&err)?,
            kind,
            size: r.get::<_, i64>(3).map_err(&err)? as u64,
            mtime_ns: r.get(4).map_err(&err)?,
            indexed_ns: r.get(5).map_err(&err)?,
            hash,
            text_bytes: r.get::<_, i64>(7).map_err(&err)? as u64,
            signature,
        };
        out.insert(name, stored);
    }
    Ok(out)
}

impl Index {
    /// Indexes the documents under `paths`, replacing everything the index held (and its
    /// parameters), in one transaction.
    pub fn build(&mut self, pipeline: &Pipeline, paths: &[PathBuf]) -> Result<SyncReport> {
        Ok(self.sync(pipeline, paths, Mode::Build)?.0)
    }

    /// Adds the documents under `paths`, or updates them when they changed; nothing is removed.
    pub fn add(&mut self, pipeline: &Pipeline, paths: &[PathBuf]) -> Result<SyncReport> {
        Ok(self.sync(pipeline, paths, Mode::Add)?.0)
    }

    /// Brings the index in line with the documents under `paths`: new ones are added, changed
    /// ones signed again, and indexed documents under `paths` that no longer exist are removed.
    /// Only files whose size or mtime changed are read.
    pub fn update(&mut self, pipeline: &Pipeline, paths: &[PathBuf]) -> Result<SyncReport> {
        Ok(self.sync(pipeline, paths, Mode::Update)?.0)
    }

    /// Phase one of a scan with the index as a cache: the same [`SignedCorpus`] as
    /// [`Pipeline::sign_files`], but unchanged documents take their signature from the index,
    /// and the documents signed are written back to it. `stats.signed` and `stats.cached` say
    /// how many of each.
    pub fn sign_files(&mut self, pipeline: &Pipeline, paths: &[PathBuf]) -> Result<SignedCorpus> {
        let (_, corpus) = self.sync(pipeline, paths, Mode::Cache)?;
        Ok(corpus.expect("the cache mode returns the corpus"))
    }

    /// Removes the documents with these ids, all or none: an id the index does not hold is an
    /// error and nothing is removed.
    pub fn remove(&mut self, ids: &[String]) -> Result<SyncReport> {
        let start = Instant::now();
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(db(&path))?;
        let mut w = Writer::new(&tx, &path, &self.params, now_ns());
        let mut report = SyncReport::default();
        let mut done = HashSet::new();
        for id in ids {
            if !done.insert(id) {
                continue;
            }
            let rowid: Option<i64> = tx
                .query_row("SELECT id FROM doc WHERE name = ?1", [id], |r| r.get(0))
                .optional()
                .map_err(db(&path))?;
            let rowid = rowid.ok_or_else(|| Error::NotIndexed { id: id.clone() })?;
            w.delete(rowid)?;
            report.removed += 1;
        }
        report.documents = count_docs(&tx, &path)?;
        tx.commit().map_err(db(&path))?;
        report.elapsed = start.elapsed();
        Ok(report)
    }

    fn sync(
        &mut self,
        pipeline: &Pipeline,
        paths: &[PathBuf],
        mode: Mode,
    ) -> Result<(SyncReport, Option<SignedCorpus>)> {
        let start = Instant::now();
        let run = SigningParams::from_config(pipeline.config());
        if mode != Mode::Build {
            self.require(&run)?;
        }
        // Missing paths are reported before any work.
        let (entries, walk_skips) = input::collect(paths, &pipeline.config().input)?;
        let path = self.path.clone();
        let now = now_ns();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(db(&path))?;
        let mut report = SyncReport::default();
        // Another process may have rebuilt the index since it was opened: check again under
        // the write lock.
        let (stored_params, _) = read_meta(&tx, &path)?;
        let stored = if mode == Mode::Build {
            report.removed = count_docs(&tx, &path)?;
            tx.execute_batch("DELETE FROM band; DELETE FROM doc;")
                .map_err(db(&path))?;
            write_meta(&tx, &path, &run)?;
            HashMap::new()
        } else {
            require_params(&path, &stored_params, &run)?;
            load_stored(&tx, &path, &run, mode == Mode::Cache)?
        };
        tx.pragma_update(None, "cache_size", -WRITER_CACHE_KIB)
            .map_err(db(&path))?;
        let mut w = Writer::new(&tx, &path, &run, now);

        // Stat everything; only what changed is read.
        report.seen = entries.len() as u64;
        let mut skipped = walk_skips.clone();
        let mut work: Vec<(usize, u64, i64)> = Vec::new();
        // Per entry, for the scan cache: its kind, text bytes and signature.
        let keep = mode == Mode::Cache;
        let mut results: Vec<Option<Known>> = vec![None; entries.len()];
        // Per entry: was it signed in this run (rather than taken from the index)?
        let mut signed_now = vec![false; entries.len()];
        let stats: Vec<std::io::Result<fs::Metadata>> =
            entries.par_iter().map(|e| fs::metadata(&e.path)).collect();
        for (i, (e, md)) in entries.iter().zip(stats).enumerate() {
            match md {
                Err(err) => skipped.push(Skip::unreadable(e.id.clone(), &err)),
                Ok(md) => {
                    let (size, mtime) = (md.len(), mtime_ns(&md));
                    match stored.get(&e.id) {
                        Some(s) if s.fresh(size, mtime) => {
                            report.unchanged += 1;
                            if keep {
                                results[i] = Some(s.known());
                            }
                        }
                        _ => work.push((i, size, mtime)),
                    }
                }
            }
        }
        // Signing (in parallel, a chunk at a time) overlaps with writing the previous chunk,
        // which SQLite does on this thread.
        pipeline.progress_phase(Phase::Indexing, Some(work.len() as u64));
        std::thread::scope(|scope| -> Result<()> {
            let (send, receive) = std::sync::mpsc::sync_channel::<Vec<Outcome<Fresh>>>(1);
            let (work, entries) = (&work, &entries);
            let rows = Rows {
                pipeline,
                stored: &stored,
            };
            scope.spawn(move || {
                for chunk in work.chunks(CHUNK) {
                    let chunk: Vec<&Entry> = chunk.iter().map(|&(i, _, _)| &entries[i]).collect();
                    let read = pipeline
                        .read_entries(&chunk, &rows)
                        .expect("the index never halts reading");
                    // The writer stopped on an error: nothing more to do.
                    if send.send(read).is_err() {
                        break;
                    }
                }
            });
            for (chunk, read) in work.chunks(CHUNK).zip(receive) {
                for (&(i, size, mtime_ns), outcome) in chunk.iter().zip(read) {
                    let e = &entries[i];
                    let old = stored.get(&e.id);
                    let (fresh, text_bytes) = match outcome {
                        Outcome::Skipped(skip) => {
                            skipped.push(skip);
                            continue;
                        }
                        Outcome::Sketched(fresh, text_bytes, _) => (fresh, text_bytes),
                        Outcome::Empty(_) => unreachable!("the index keeps every text as a row"),
                    };
                    let (kind, hash, signature) = match fresh {
                        Fresh::Same => {
                            let s = old.expect("only a stored row can be the same");
                            report.read += 1;
                            report.unchanged += 1;
                            w.touch(s.rowid, size, mtime_ns)?;
                            if keep {
                                results[i] = Some(s.known());
                            }
                            continue;
                        }
                        Fresh::Binary(hash) => (Kind::Binary, hash, None),
                        Fresh::Text(hash, None) => (Kind::Empty, hash, None),
                        Fresh::Text(hash, sig) => (Kind::Text, hash, sig),
                    };
                    let d = NewDoc {
                        kind,
                        size,
                        mtime_ns,
                        hash,
                        text_bytes,
                        signature,
                    };
                    report.read += 1;
                    if d.kind != Kind::Binary {
                        report.signed += 1;
                        signed_now[i] = true;
                    }
                    if old.is_some() {
                        report.updated += 1;
                    } else {
                        report.added += 1;
                    }
                    w.put(e, old.map(|s| s.rowid), &d)?;
                    // The scan cache reports every binary file below, read or not.
                    if d.kind == Kind::Binary && !keep {
                        skipped.push(binary_skip(&e.id));
                    }
                    if keep {
                        results[i] = Some(Known {
                            kind: d.kind,
                            text_bytes: d.text_bytes,
                            signature: d.signature,
                        });
                    }
                }
                w.flush()?;
            }
            Ok(())
        })?;

        if mode == Mode::Update {
            // What disappeared under the given paths goes, except under directories that could
            // not be read this time.
            let seen: HashSet<&str> = entries.iter().map(|e| e.id.as_str()).collect();
            let mut gone: Vec<(&String, i64)> = stored
                .iter()
                .filter(|(name, _)| !seen.contains(name.as_str()))
                .filter(|(name, _)| {
                    let p = Path::new(name.as_str());
                    paths.iter().any(|root| p.starts_with(root))
                        && !walk_skips.iter().any(|s| p.starts_with(&s.id))
                })
                .map(|(name, s)| (name, s.rowid))
                .collect();
            gone.sort();
            for (_, rowid) in gone {
                w.delete(rowid)?;
                report.removed += 1;
            }
        }
        report.documents = count_docs(&tx, &path)?;
        tx.commit().map_err(db(&path))?;
        self.params = run;
        self.fingerprint = self.params.fingerprint();

        let corpus = keep.then(|| {
            let mut corpus = SignedCorpus::default();
            let (mut signed, mut cached) = (0u64, 0u64);
            for (i, (e, r)) in entries.into_iter().zip(results).enumerate() {
                let Some(Known {
                    kind,
                    text_bytes,
                    signature: sig,
                }) = r
                else {
                    continue;
                };
                let doc = corpus.documents.len() as u32;
                match kind {
                    Kind::Binary => {
                        skipped.push(binary_skip(&e.id));
                        continue;
                    }
                    Kind::Empty => corpus.stats.empty += 1,
                    Kind::Text => {
                        corpus
                            .signatures
                            .extend_from_slice(sig.as_deref().expect("a text row has a signature"));
                        corpus.signed.push(doc);
                    }
                }
                corpus.stats.bytes += text_bytes;
                corpus.documents.push(Document {
                    id: e.id,
                    origin: Origin::File(e.path),
                    empty: kind == Kind::Empty,
                });
                if signed_now[i] {
                    signed += 1;
                } else {
                    cached += 1;
                }
            }
            corpus.stats.documents = corpus.documents.len() as u64;
            corpus.stats.signed = Some(signed);
            corpus.stats.cached = Some(cached);
            corpus
        });

        skipped.sort_by(|x, y| x.id.cmp(&y.id));
        for s in &skipped {
            // Index inputs are files without size limits or records: every skip that is not
            // binary is an unreadable file.
            match s.kind {
                SkipKind::Binary => report.skipped_binary += 1,
                SkipKind::Unreadable | SkipKind::Malformed | SkipKind::TooLarge => {
                    report.skipped_unreadable += 1
                }
            }
        }
        report.elapsed = start.elapsed();
        let corpus = corpus.map(|mut c| {
            c.skipped = skipped.clone();
            c.stats.skipped_binary = report.skipped_binary;
            c.stats.skipped_unreadable = report.skipped_unreadable;
            c
        });
        report.skipped = skipped;
        Ok((report, corpus))
    }
}
