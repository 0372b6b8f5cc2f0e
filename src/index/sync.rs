//! The writing commands: build, add, update, remove, and the scan cache. Each runs in one
//! `IMMEDIATE` transaction: files are stat'ed, only the changed ones read and signed (by the one
//! loop of [`crate::find::read`], in parallel, a chunk at a time), and the rows written as the
//! chunks complete.

use std::collections::{BTreeSet, HashMap, HashSet};
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
use crate::source::{Document, Origin, Source};

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

/// Where a row's document is, as change detection and reading it again need.
struct Place {
    /// The file, or a record's file, absolute (see [`crate::source::files::display_id`]).
    path: String,
    size: u64,
    mtime_ns: i64,
    /// A record's line (or row) and offset (see [`crate::source::Origin::Record`]).
    record: Option<(u64, u64)>,
}

impl Place {
    fn of_file(path: &Path, size: u64, mtime_ns: i64) -> Self {
        Place {
            path: crate::source::files::display_id(&absolute(path)),
            size,
            mtime_ns,
            record: None,
        }
    }
}

/// A row to write.
struct NewDoc {
    place: Place,
    kind: Kind,
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

/// Band rows held before they are inserted, sorted (24 bytes each): the longer the sorted run,
/// the more of the band table's B-tree pages it fills in order rather than at random.
const PENDING_BAND_ROWS: usize = 1 << 22;

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

    /// Inserts the pending band rows once there are [`PENDING_BAND_ROWS`] of them.
    fn flush_when_full(&mut self) -> Result<()> {
        match self.pending.len() >= PENDING_BAND_ROWS {
            true => self.flush(),
            false => Ok(()),
        }
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

    /// Inserts or replaces the row of the document `id`.
    fn put(&mut self, id: &str, old: Option<i64>, d: &NewDoc) -> Result<()> {
        let bands = d
            .signature
            .as_ref()
            .map(|s| bands_of(s, self.params.bands, self.params.rows));
        let sig = d.signature.as_deref().map(sig_to_blob);
        let band_blob = bands.as_deref().map(bands_to_blob);
        let (line, offset) = record_columns(&d.place);
        let values = params![
            d.place.path,
            d.kind.name(),
            d.place.size as i64,
            d.place.mtime_ns,
            self.now,
            &d.hash[..],
            d.text_bytes as i64,
            sig,
            band_blob,
            line,
            offset,
        ];
        let doc = match old {
            Some(rowid) => {
                self.delete_bands(rowid)?;
                let mut st = self
                    .tx
                    .prepare_cached(
                        "UPDATE doc SET path = ?1, kind = ?2, size = ?3, mtime_ns = ?4,
                         indexed_ns = ?5, content_hash = ?6, text_bytes = ?7, signature = ?8,
                         bands = ?9, record_line = ?10, record_offset = ?11 WHERE id = ?12",
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
                         text_bytes, signature, bands, record_line, record_offset, name)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                    )
                    .map_err(db(self.path))?;
                let mut v: Vec<&dyn rusqlite::ToSql> = values.to_vec();
                v.push(&id);
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

    /// Records that the document was looked at again and found unchanged, at `place` (a record
    /// may have moved within its file, or to another).
    fn touch(&mut self, rowid: i64, place: &Place) -> Result<()> {
        let (line, offset) = record_columns(place);
        self.tx
            .prepare_cached(
                "UPDATE doc SET path = ?1, size = ?2, mtime_ns = ?3, indexed_ns = ?4,
                 record_line = ?5, record_offset = ?6 WHERE id = ?7",
            )
            .and_then(|mut st| {
                st.execute(params![
                    place.path,
                    place.size as i64,
                    place.mtime_ns,
                    self.now,
                    line,
                    offset,
                    rowid
                ])
            })
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

/// The `record_line` and `record_offset` of a row at `place`.
fn record_columns(place: &Place) -> (Option<i64>, Option<i64>) {
    match place.record {
        Some((line, offset)) => (Some(line as i64), Some(offset as i64)),
        None => (None, None),
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
        "SELECT id, name, kind, size, mtime_ns, indexed_ns, content_hash, text_bytes, signature,
         path, record_line IS NOT NULL FROM doc"
    } else {
        "SELECT id, name, kind, size, mtime_ns, indexed_ns, content_hash, text_bytes, NULL,
         path, record_line IS NOT NULL FROM doc"
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
            path: r.get(9).map_err(&err)?,
            record: r.get(10).map_err(&err)?,
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

/// What a sync read of its inputs, before the transaction: files found by the walk, or the
/// JSON-lines and Parquet files of records.
enum Inputs {
    Files(Vec<Entry>, Vec<Skip>),
    /// The record files, and those refused (a tree's link out of the working directory).
    Records(Vec<PathBuf>, Vec<Skip>),
}

/// What the two kinds of input leave to the end of a sync, besides the rows they wrote.
struct Synced {
    /// Rows to remove in [`Mode::Update`], by name.
    gone: Vec<(String, i64)>,
    /// The scan cache's corpus.
    corpus: Option<SignedCorpus>,
}

impl Index {
    /// Indexes the documents of `source` (files, or JSON-lines and Parquet records), replacing
    /// everything the index held (and its parameters), in one transaction.
    pub fn build(&mut self, pipeline: &Pipeline, source: &Source) -> Result<SyncReport> {
        Ok(self.sync(pipeline, source, Mode::Build)?.0)
    }

    /// Adds the documents of `source`, or updates them when they changed; nothing is removed.
    pub fn add(&mut self, pipeline: &Pipeline, source: &Source) -> Result<SyncReport> {
        Ok(self.sync(pipeline, source, Mode::Add)?.0)
    }

    /// Brings the index in line with the documents of `source`: new ones are added, changed
    /// ones signed again, and indexed documents that no longer exist are removed (files under
    /// the given paths; records of the given files, or of the Parquet files of a given
    /// directory). Only files whose size or mtime changed are read.
    pub fn update(&mut self, pipeline: &Pipeline, source: &Source) -> Result<SyncReport> {
        Ok(self.sync(pipeline, source, Mode::Update)?.0)
    }

    /// Phase one of a scan with the index as a cache: the same [`SignedCorpus`] as
    /// [`Pipeline::sign_files`], but unchanged documents take their signature from the index,
    /// and the documents signed are written back to it. `stats.signed` and `stats.cached` say
    /// how many of each.
    pub fn sign_files(&mut self, pipeline: &Pipeline, paths: &[PathBuf]) -> Result<SignedCorpus> {
        let source = Source::Files(paths.to_vec());
        let (_, corpus) = self.sync(pipeline, &source, Mode::Cache)?;
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
            let rowid = rowid.ok_or_else(|| Error::NotIndexed {
                id: id.clone(),
                path: path.clone(),
            })?;
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
        source: &Source,
        mode: Mode,
    ) -> Result<(SyncReport, Option<SignedCorpus>)> {
        let start = Instant::now();
        // Missing paths are reported before any work.
        let inputs = match source {
            Source::Files(paths) => {
                let (entries, skips) = input::collect(paths, &pipeline.config().input)?;
                Inputs::Files(entries, skips)
            }
            Source::Records(inputs) => {
                let follow = pipeline.config().input.follow_links;
                let (files, refused) =
                    crate::source::records::confine(record_files(inputs)?, follow);
                Inputs::Records(files, refused)
            }
            Source::Texts(_) => return Err(texts_refused()),
        };
        let run = SigningParams::from_config(pipeline.config());
        let fields = match source {
            Source::Records(_) => Some(RecordFields::of(&pipeline.config().input.records)),
            _ => None,
        };
        if mode != Mode::Build {
            self.require(&run)?;
            if let (Some(built), Some(now)) = (&self.records, &fields) {
                built.require(&self.path, now)?;
            }
        }
        let path = self.path.clone();
        let now = now_ns();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(db(&path))?;
        let mut report = SyncReport::default();
        // Another process may have rebuilt the index since it was opened: check again under
        // the write lock.
        let meta = read_meta(&tx, &path, INDEX_FORMAT_VERSION)?;
        let mut records = meta.records.clone();
        let mut duplicates = meta.duplicates.clone();
        let stored = if mode == Mode::Build {
            report.removed = count_docs(&tx, &path)?;
            tx.execute_batch(
                "DELETE FROM band; DELETE FROM doc; \
                 DELETE FROM meta WHERE key IN ('records', 'duplicate_ids_in');",
            )
            .map_err(db(&path))?;
            duplicates.clear();
            write_meta(&tx, &path, &run)?;
            records = None;
            HashMap::new()
        } else {
            require_params(&path, &meta.params, &run)?;
            if let (Some(built), Some(now)) = (&records, &fields) {
                built.require(&path, now)?;
            }
            load_stored(&tx, &path, &run, mode == Mode::Cache)?
        };
        if let Some(fields) = &fields
            && records.is_none()
        {
            let json = serde_json::to_string(fields).expect("record fields serialize");
            set_meta(&tx, &path, &[("records", json)])?;
            records = Some(fields.clone());
        }
        tx.pragma_update(None, "cache_size", -WRITER_CACHE_KIB)
            .map_err(db(&path))?;
        let mut w = Writer::new(&tx, &path, &run, now);
        let mut skipped = Vec::new();
        let synced = match (inputs, source) {
            (Inputs::Files(entries, walk_skips), Source::Files(paths)) => sync_files(
                pipeline,
                &mut w,
                &stored,
                mode,
                (entries, walk_skips, paths),
                &mut report,
                &mut skipped,
            )?,
            (Inputs::Records(files, refused), Source::Records(given)) => {
                skipped.extend(refused);
                let synced = sync_records(
                    pipeline,
                    &mut w,
                    &stored,
                    mode,
                    (&files, given),
                    &mut duplicates,
                    &mut report,
                    &mut skipped,
                )?;
                if duplicates != meta.duplicates {
                    let json = serde_json::to_string(&duplicates).expect("names serialize");
                    set_meta(&tx, &path, &[(DUPLICATES_KEY, json)])?;
                }
                synced
            }
            _ => unreachable!("inputs are read from the source"),
        };
        if mode == Mode::Update {
            let mut gone = synced.gone;
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
        self.records = records;

        skipped.sort_by(|x, y| x.id.cmp(&y.id));
        for s in &skipped {
            match s.kind {
                SkipKind::Binary => report.skipped_binary += 1,
                SkipKind::Unreadable => report.skipped_unreadable += 1,
                SkipKind::Malformed => report.skipped_malformed += 1,
                SkipKind::TooLarge => report.skipped_too_large += 1,
            }
        }
        report.elapsed = start.elapsed();
        let corpus = synced.corpus.map(|mut c| {
            c.skipped = skipped.clone();
            c.stats.skipped_binary = report.skipped_binary;
            c.stats.skipped_unreadable = report.skipped_unreadable;
            c
        });
        report.skipped = skipped;
        Ok((report, corpus))
    }
}

/// Fails unless `source` can be indexed: its paths exist, and it is not standard input (which
/// has no file to read a record again from, nor a modification time) or texts in memory. The
/// writing commands check it first; a caller may check it before it opens the index.
pub fn check_source(source: &Source) -> Result<()> {
    match source {
        Source::Files(paths) => paths.iter().try_for_each(|p| input::check_exists(p)),
        Source::Records(inputs) => record_files(inputs).map(drop),
        Source::Texts(_) => Err(texts_refused()),
    }
}

fn texts_refused() -> Error {
    crate::invalid![
        "an index reads its documents again from their files: texts in memory cannot be indexed"
    ]
}

/// The files of record inputs (a directory of Parquet shards is its files).
fn record_files(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    if let Some(p) = inputs.iter().find(|p| crate::source::records::is_stdin(p)) {
        return Err(Error::BadInput {
            path: p.clone(),
            reason: "standard input cannot be indexed: the index reads records again from \
                     their file; save them to a file and index that"
                .into(),
        });
    }
    let files = crate::source::records::expand_datasets(inputs);
    crate::source::records::check_inputs(&files)?;
    Ok(files)
}

/// Syncs files found by the walk: each stat'ed, and only the changed ones read and signed.
fn sync_files(
    pipeline: &Pipeline,
    w: &mut Writer<'_>,
    stored: &HashMap<String, Stored>,
    mode: Mode,
    (entries, walk_skips, paths): (Vec<Entry>, Vec<Skip>, &[PathBuf]),
    report: &mut SyncReport,
    skipped: &mut Vec<Skip>,
) -> Result<Synced> {
    // Stat everything; only what changed is read.
    report.seen = entries.len() as u64;
    skipped.extend(walk_skips.iter().cloned());
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
                    Some(s) if !s.record && s.fresh(size, mtime) => {
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
        let rows = Rows { pipeline, stored };
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
                let place = Place::of_file(&e.path, size, mtime_ns);
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
                        w.touch(s.rowid, &place)?;
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
                    place,
                    kind,
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
                w.put(&e.id, old.map(|s| s.rowid), &d)?;
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
            w.flush_when_full()?;
        }
        w.flush()
    })?;

    // What disappeared under the given paths goes, except under directories that could not be
    // read this time.
    let gone = if mode == Mode::Update {
        let seen: HashSet<&str> = entries.iter().map(|e| e.id.as_str()).collect();
        stored
            .iter()
            .filter(|(name, s)| !s.record && !seen.contains(name.as_str()))
            .filter(|(name, _)| {
                let p = input::path_of_id(name);
                paths.iter().any(|root| p.starts_with(root))
                    && !walk_skips
                        .iter()
                        .any(|s| p.starts_with(input::path_of_id(&s.id)))
            })
            .map(|(name, s)| (name.clone(), s.rowid))
            .collect()
    } else {
        Vec::new()
    };

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
    Ok(Synced { gone, corpus })
}

/// What the index keeps of a record it reads: its text's hash and length, and its signature
/// unless the index holds a row with the same text (whose signature it then reuses).
struct RecordRow {
    hash: [u8; 16],
    text_bytes: u64,
    /// `None`: a row with this text is indexed; `Some(None)`: no shingle.
    signature: Option<Option<Vec<u32>>>,
}

/// The index's sketcher for records: a text the index holds already is not signed again.
struct RecordRows<'a> {
    pipeline: &'a Pipeline,
    /// The content hash of every text or empty row.
    texts: &'a HashSet<[u8; 16]>,
}

impl Sketcher for RecordRows<'_> {
    type Sketch = RecordRow;

    /// Never `None`: an empty record is kept as a row.
    fn sketch(&self, s: &mut Scratch, raw: &Raw<'_>) -> Option<RecordRow> {
        Some(RecordRow {
            hash: raw.content.to_be_bytes(),
            text_bytes: raw.text.len() as u64,
            signature: Some(self.pipeline.sign_normalized(s)),
        })
    }

    /// A record's hash is its text's.
    fn content_hashes(&self) -> bool {
        true
    }

    fn known_record(&self, raw: &Raw<'_>) -> Option<RecordRow> {
        let hash = raw.content.to_be_bytes();
        self.texts.contains(&hash).then_some(RecordRow {
            hash,
            text_bytes: raw.text.len() as u64,
            signature: None,
        })
    }

    /// Names must not depend on which files changed.
    fn names_by_source(&self) -> bool {
        true
    }
}

/// Syncs the records of JSON-lines and Parquet files: a file whose size and mtime match all its
/// rows is not read; any other is read whole, and each record's row kept, moved, rewritten or
/// added by its id and the hash of its text.
///
/// Ids are unique in an index, as in a scan: of two records with one id, the one of the earlier
/// input file is indexed and the other skipped. A file not read this time still holds the
/// records of its rows, so a record read now whose id a row of such a file has is kept or
/// skipped by the order of the two files; and `duplicates` (the files whose last read skipped a
/// duplicate id) are read again when an update loses a record, whose id one of them may hold.
#[allow(clippy::too_many_arguments)]
fn sync_records(
    pipeline: &Pipeline,
    w: &mut Writer<'_>,
    stored: &HashMap<String, Stored>,
    mode: Mode,
    (files, given): (&[PathBuf], &[PathBuf]),
    duplicates: &mut BTreeSet<String>,
    report: &mut SyncReport,
    skipped: &mut Vec<Skip>,
) -> Result<Synced> {
    let mut rows_of: HashMap<&str, Vec<&Stored>> = HashMap::new();
    for s in stored.values().filter(|s| s.record) {
        rows_of.entry(s.path.as_str()).or_default().push(s);
    }
    // Each file's place (absolute, as rows name it), its stat, and its rank in input order.
    let places: Vec<String> = files
        .iter()
        .map(|f| crate::source::files::display_id(&absolute(f)))
        .collect();
    let rank: HashMap<&str, usize> = places
        .iter()
        .enumerate()
        .map(|(i, at)| (at.as_str(), i))
        .collect();
    let mut stat_of: HashMap<String, (u64, i64)> = HashMap::new();
    let mut fresh: HashSet<String> = HashSet::new();
    let mut kept: HashSet<String> = HashSet::new();
    // The name a file's skips carry, to its place.
    let mut place_of_name: HashMap<String, String> = HashMap::new();
    for (f, at) in files.iter().zip(&places) {
        place_of_name.insert(crate::source::files::display_id(f), at.clone());
        match fs::metadata(f) {
            Err(e) => {
                skipped.push(Skip::unreadable(crate::source::files::display_id(f), &e));
                kept.insert(at.clone());
            }
            Ok(md) => {
                let (size, mtime) = (md.len(), mtime_ns(&md));
                // Every row, not some: a file read in part keeps rows of its older version.
                if rows_of
                    .get(at.as_str())
                    .is_some_and(|rows| rows.iter().all(|s| s.fresh(size, mtime)))
                {
                    fresh.insert(at.clone());
                }
                stat_of.insert(at.clone(), (size, mtime));
            }
        }
    }

    pipeline.progress_phase(Phase::Indexing, None);
    let texts: HashSet<[u8; 16]> = stored
        .values()
        .filter(|s| s.kind != Kind::Binary)
        .map(|s| s.hash)
        .collect();
    let sketcher = RecordRows {
        pipeline,
        texts: &texts,
    };
    let corpus = loop {
        let read: Vec<PathBuf> = files
            .iter()
            .zip(&places)
            .filter(|(_, at)| stat_of.contains_key(*at) && !fresh.contains(*at))
            .map(|(f, _)| f.clone())
            .collect();
        let corpus = if read.is_empty() {
            Default::default()
        } else {
            pipeline.read(&Source::Records(read), &sketcher)?
        };
        if mode != Mode::Update {
            break corpus;
        }
        let again: Vec<String> = duplicates
            .iter()
            .filter(|d| fresh.contains(*d))
            .cloned()
            .collect();
        let ids: HashSet<&str> = corpus.documents.iter().map(|d| d.id.as_str()).collect();
        let loses = || {
            stored.iter().any(|(name, s)| {
                s.record
                    && !fresh.contains(&s.path)
                    && !kept.contains(&s.path)
                    && !ids.contains(name.as_str())
            })
        };
        if again.is_empty() || !loses() {
            break corpus;
        }
        for d in again {
            fresh.remove(&d);
        }
    };
    for at in &fresh {
        let rows = rows_of.get(at.as_str()).map_or(0, Vec::len) as u64;
        report.seen += rows;
        report.unchanged += rows;
    }
    let read: HashSet<&str> = stat_of
        .keys()
        .filter(|at| !fresh.contains(*at))
        .map(String::as_str)
        .collect();
    duplicates.retain(|d| !read.contains(d.as_str()));
    if mode == Mode::Update {
        // The files of the corpus, the rest are gone.
        duplicates.retain(|d| rank.contains_key(d.as_str()));
    }
    // The file of a skip: its name, or the name before a record's `:line`.
    let file_of = |id: &str| -> Option<String> {
        place_of_name
            .get(id)
            .or_else(|| place_of_name.get(id.rsplit_once(':')?.0))
            .cloned()
    };
    for s in &corpus.skipped {
        // A file that could not be read to its end keeps the rows of the records not read.
        if let Some(at) = place_of_name.get(&s.id) {
            kept.insert(at.clone());
        }
        if records::is_duplicate_id(s)
            && let Some(at) = file_of(&s.id)
        {
            duplicates.insert(at);
        }
    }
    skipped.extend(corpus.skipped);
    report.seen += corpus.documents.len() as u64;
    report.read += corpus.documents.len() as u64;

    // The signatures of texts already indexed, read before any row is rewritten.
    let reused: HashSet<[u8; 16]> = corpus
        .sketches
        .iter()
        .filter(|r| r.signature.is_none())
        .map(|r| r.hash)
        .collect();
    let mut signature_of: HashMap<[u8; 16], Option<Vec<u32>>> = HashMap::new();
    if !reused.is_empty() {
        let params = w.params;
        let mut fetch =
            w.tx.prepare_cached("SELECT signature FROM doc WHERE id = ?1")
                .map_err(db(w.path))?;
        for (name, s) in stored {
            if reused.contains(&s.hash)
                && s.kind != Kind::Binary
                && !signature_of.contains_key(&s.hash)
            {
                let blob: Option<Vec<u8>> = fetch
                    .query_row([s.rowid], |r| r.get(0))
                    .map_err(db(w.path))?;
                let sig = match (s.kind, blob) {
                    (Kind::Text, Some(blob)) => Some(check_sig(w.path, name, &blob, params)?),
                    _ => None,
                };
                signature_of.insert(s.hash, sig);
            }
        }
    }

    let mut seen: HashSet<&str> = HashSet::new();
    for (doc, row) in corpus.documents.iter().zip(corpus.sketches) {
        let Origin::Record {
            source,
            line,
            offset,
            ..
        } = &doc.origin
        else {
            unreachable!("records are read as records")
        };
        let file = source.path().expect("index inputs are files");
        let at = crate::source::files::display_id(&absolute(file));
        let (size, mtime_ns) = stat_of[&at];
        let place = Place {
            path: at,
            size,
            mtime_ns,
            record: Some((*line, *offset)),
        };
        let old = stored.get(&doc.id);
        // The id's row is in an input file not read this time, which still holds its record.
        if let Some(s) = old
            && s.record
            && s.path != place.path
            && !seen.contains(doc.id.as_str())
            && !read.contains(s.path.as_str())
            && let (Some(&theirs), Some(&ours)) =
                (rank.get(s.path.as_str()), rank.get(place.path.as_str()))
        {
            if theirs < ours {
                skipped.push(records::duplicate_id(source.name(), *line, &doc.id));
                report.seen -= 1;
                report.read -= 1;
                duplicates.insert(place.path.clone());
                continue;
            }
            duplicates.insert(s.path.clone());
        }
        seen.insert(doc.id.as_str());
        if let Some(s) = old
            && s.hash == row.hash
            && s.kind != Kind::Binary
        {
            // The same text: the row keeps its signature, wherever the record now is.
            if s.record && s.path == place.path {
                report.unchanged += 1;
            } else {
                report.updated += 1;
            }
            w.touch(s.rowid, &place)?;
        } else {
            let signature = match row.signature {
                Some(sig) => {
                    report.signed += 1;
                    sig
                }
                None => signature_of
                    .get(&row.hash)
                    .cloned()
                    .expect("a known text has an indexed row"),
            };
            let d = NewDoc {
                place,
                kind: if signature.is_some() {
                    Kind::Text
                } else {
                    Kind::Empty
                },
                hash: row.hash,
                text_bytes: row.text_bytes,
                signature,
            };
            if old.is_some() {
                report.updated += 1;
            } else {
                report.added += 1;
            }
            w.put(&doc.id, old.map(|s| s.rowid), &d)?;
        }
        w.flush_when_full()?;
    }
    w.flush()?;

    // In an update, a record not seen goes when its file was read whole, and when it was a
    // Parquet file gone from a given directory.
    let gone = if mode == Mode::Update {
        let roots: Vec<PathBuf> = given
            .iter()
            .filter(|p| p.is_dir())
            .map(|p| absolute(p))
            .collect();
        stored
            .iter()
            .filter(|(name, s)| {
                s.record && !kept.contains(&s.path) && !seen.contains(name.as_str())
            })
            .filter(|(_, s)| match stat_of.get(&s.path) {
                Some(_) => !fresh.contains(&s.path),
                None => {
                    let p = crate::source::files::path_of_id(&s.path);
                    roots.iter().any(|root| p.starts_with(root))
                }
            })
            .map(|(name, s)| (name.clone(), s.rowid))
            .collect()
    } else {
        Vec::new()
    };
    Ok(Synced { gone, corpus: None })
}
