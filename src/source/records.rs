//! JSON-lines corpora: one document per line, read from files or standard input, in bounded
//! batches.
//!
//! Each line is a JSON object; the document's text is the string at `text_field` and its id the
//! value at `id_field` (both dotted paths into nested objects, `meta.id`; a segment that is a
//! number indexes an array). A string id is used as is, a number or a boolean as printed; a
//! record without an id (or with a `null` one) is named by its line number, prefixed with the
//! source's name (`a.jsonl:7`) when several sources are read. Blank lines are not records.
//!
//! Gzip and zstd streams are recognised by their magic bytes, whatever the file is called, and
//! decompressed on the fly (concatenated gzip members and zstd frames included).
//!
//! A line that is not a JSON object with a string text, or whose id is an object or an array, is
//! *malformed*: it becomes a [`Skip`] named `source:line` and the rest of the source is read.
//!
//! **Reading a record again.** Exact verification and `ndup dedup` read records a second time.
//! A record's [`Origin`] holds its source, its line number and the byte
//! offset of the line in the decompressed stream. An uncompressed file is read again by seeking to
//! that offset. A compressed file is decompressed again and read forward to the wanted lines (one
//! pass per batch of records, sorted by offset): this costs CPU time but no disk space, and
//! decompression is fast next to shingling. Standard input cannot be read twice, nor can a pipe or
//! a FIFO named as a file (`ndup scan --jsonl <(zcat x.gz)`), so when a second reading may be
//! needed such a stream is copied, decompressed, to an anonymous temporary file (the *spool*)
//! while it is read; the spool is deleted when the last document that refers to it is dropped.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::sync_channel;

use serde::Serialize;
use serde_json::Value;
use xxhash_rust::xxh3::xxh3_64;

use crate::error::{Error, Result};
use crate::model::{Skip, SkipKind, io_reason};
use crate::source::{Document, Origin};

/// The path that means standard input.
pub(crate) const STDIN: &str = "-";

/// The name standard input is given in ids and messages.
pub(crate) const STDIN_NAME: &str = "stdin";

/// A batch is sent for processing when it holds this many records...
const BATCH_LINES: usize = 16 * 1024;
/// ... or this many bytes, whichever comes first: a batch bounds the text held at once.
const BATCH_BYTES: usize = 8 << 20;

/// The longest JSON line read as a record by default; a longer one is a skipped record, so that a
/// file without newlines cannot take all memory.
pub const DEFAULT_MAX_LINE_BYTES: u64 = 64 << 20;

/// How JSON-lines sources are read: which fields of a record hold the id and the text, and what
/// a damaged source may cost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordOptions {
    /// Dotted path of the id (default `id`).
    pub id_field: String,
    /// Dotted path of the text (default `text`).
    pub text_field: String,
    /// A line longer than this many bytes is a skipped record, never held in memory.
    pub max_line_bytes: u64,
    /// A source that ends in a read error (a truncated or corrupt `.gz`/`.zst`, an I/O error)
    /// keeps the records before it, reported as a skip. Otherwise the scan fails
    /// ([`Error::IncompleteInput`]): a result that silently lacks records is worse than none.
    pub partial: bool,
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions {
            id_field: "id".into(),
            text_field: "text".into(),
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            partial: false,
        }
    }
}

impl RecordOptions {
    /// Checks that both paths are well formed (no empty segment).
    pub fn validate(&self) -> Result<()> {
        for (flag, path) in [
            (crate::error::Param::IdField, &self.id_field),
            (crate::error::Param::TextField, &self.text_field),
        ] {
            if path.split('.').any(str::is_empty) {
                return Err(crate::invalid![
                    flag,
                    format!(" `{path}` is not a dotted path of field names")
                ]);
            }
        }
        Ok(())
    }

    /// The two paths as JSON pointers, ready for [`parse_record`].
    pub(crate) fn fields(&self) -> Fields {
        Fields {
            id: pointer(&self.id_field),
            id_name: self.id_field.clone(),
            text: pointer(&self.text_field),
            text_name: self.text_field.clone(),
        }
    }
}

/// The id and text paths, compiled to JSON pointers.
#[derive(Debug, Clone)]
pub(crate) struct Fields {
    id: String,
    id_name: String,
    text: String,
    text_name: String,
}

/// `meta.id` -> `/meta/id`, escaping `~` and `/` as RFC 6901 asks.
fn pointer(dotted: &str) -> String {
    dotted
        .split('.')
        .map(|seg| format!("/{}", seg.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// One record's id (when it has one) and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The id field as a string, `None` when missing or `null`.
    pub id: Option<String>,
    /// The text field.
    pub text: String,
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parses one line. The error is a one-line reason for a person.
pub(crate) fn parse_record(line: &[u8], fields: &Fields) -> std::result::Result<Record, String> {
    // Only a source's first line can start with a byte-order mark; it is not part of the JSON.
    let line = crate::text::strip_bom_bytes(line);
    let mut value: Value = serde_json::from_slice(line).map_err(|e| {
        // serde_json appends "at line 1 column N"; inside one record only the column matters.
        let msg = e.to_string();
        let msg = msg.rfind(" at line ").map_or(&msg[..], |i| &msg[..i]);
        format!("malformed JSON at column {}: {msg}", e.column())
    })?;
    if !value.is_object() {
        return Err(format!("not a JSON object but {}", kind_of(&value)));
    }
    let text = match value.pointer_mut(&fields.text) {
        None => return Err(format!("no field `{}`", fields.text_name)),
        Some(Value::String(s)) => std::mem::take(s),
        Some(other) => {
            return Err(format!(
                "field `{}` is {}, not a string",
                fields.text_name,
                kind_of(other)
            ));
        }
    };
    let id = match value.pointer_mut(&fields.id) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => {
            check_id_len(s)?;
            Some(std::mem::take(s))
        }
        Some(Value::Number(n)) => {
            // Every digit is kept (`arbitrary_precision`): a number is as long as it is written.
            let n = n.to_string();
            check_id_len(&n)?;
            Some(n)
        }
        Some(Value::Bool(b)) => Some(b.to_string()),
        Some(other) => {
            return Err(format!(
                "field `{}` is {}, not a string or a number",
                fields.id_name,
                kind_of(other)
            ));
        }
    };
    Ok(Record { id, text })
}

/// The longest id a record may have, in bytes (4 KiB).
///
/// An id is a name: printed in every report line that names its document, and kept for every
/// document of a scan, while the rest of a record is kept as a signature of a few hundred
/// bytes. Without a bound, ids cost what the corpus holds rather than what it counts: 100
/// records with 50 MB ids, a 165 KB zstd file, took 5.4 GB. 4 KiB is Linux's `PATH_MAX`, so no
/// file's id (its path) is longer, and a URL as an id (`--id-field meta.url`) rarely comes
/// near it (browsers and servers keep to about 2 to 8 KiB).
pub(crate) const MAX_ID_BYTES: usize = 4096;

/// Refuses an id longer than [`MAX_ID_BYTES`], with the reason its record is skipped as
/// malformed. [`parse_record`] calls it for every record, a Parquet row's included (a row is
/// judged as the JSON line it stands for).
pub(crate) fn check_id_len(id: &str) -> std::result::Result<(), String> {
    match id.len() > MAX_ID_BYTES {
        true => Err(format!("id longer than {MAX_ID_BYTES} bytes")),
        false => Ok(()),
    }
}

/// True for `-`, standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN
}

/// True when the file name says JSON lines: `.jsonl` or `.ndjson`, optionally followed by `.gz`,
/// `.zst` or `.zstd`.
pub fn is_jsonl_path(path: &Path) -> bool {
    let Some(name) = path.file_name() else {
        return false;
    };
    let name = name.to_string_lossy().to_ascii_lowercase();
    let base = [".gz", ".zst", ".zstd"]
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .unwrap_or(&name);
    base.ends_with(".jsonl") || base.ends_with(".ndjson")
}

/// True when `path` is read as records by its looks alone: a JSON-lines file by its name (see
/// [`is_jsonl_path`]), and, with Parquet, a `.parquet` file or a directory of Parquet shards.
pub fn looks_like_records(path: &Path) -> bool {
    #[cfg(feature = "parquet")]
    if crate::source::parquet::dataset_files(path).is_some() {
        return true;
    }
    is_jsonl_path(path)
}

/// How a stream is compressed, recognised from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// Plain text.
    None,
    /// Gzip (RFC 1952), possibly several members.
    Gzip,
    /// Zstandard, possibly several frames.
    Zstd,
    /// A Parquet file: rows rather than lines (see [`crate::source::parquet`]). Each row is
    /// handed on as the JSON line `{id field: id, text field: text}`, so that it is parsed, named,
    /// read again and reported as a JSON-lines record is.
    #[cfg(feature = "parquet")]
    Parquet,
}

impl Compression {
    /// The compression a stream starting with `head` uses.
    pub(crate) fn sniff(head: &[u8]) -> Compression {
        #[cfg(feature = "parquet")]
        if head.starts_with(b"PAR1") {
            return Compression::Parquet;
        }
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }
}

type DynBufRead = Box<dyn BufRead + Send>;

/// Wraps `r` in the decoder its first bytes call for.
fn decode(mut r: Box<dyn Read + Send>) -> io::Result<(Compression, DynBufRead)> {
    // Read the magic bytes fully: a pipe may hand them over one at a time.
    let mut head = [0u8; 4];
    let mut n = 0;
    while n < head.len() {
        match r.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let c = Compression::sniff(&head[..n]);
    let whole = BufReader::with_capacity(1 << 16, io::Cursor::new(head[..n].to_vec()).chain(r));
    let out: DynBufRead = match c {
        Compression::None => Box::new(whole),
        Compression::Gzip => Box::new(BufReader::with_capacity(
            1 << 16,
            flate2::bufread::MultiGzDecoder::new(whole),
        )),
        Compression::Zstd => Box::new(BufReader::with_capacity(
            1 << 16,
            zstd::stream::read::Decoder::with_buffer(whole)?,
        )),
        // Read by rows, never as a stream (see `read_source`).
        #[cfg(feature = "parquet")]
        Compression::Parquet => Box::new(whole),
    };
    Ok((c, out))
}

/// Where records were read from: enough to read any of them again.
#[derive(Debug)]
pub struct RecordSource {
    name: String,
    path: Option<PathBuf>,
    compression: Compression,
    spool: Option<tempfile::TempPath>,
    reopened: AtomicUsize,
    /// The longest line kept when lines are read again (`--max-line-length`): a file changed
    /// since into one endless line costs no memory.
    max_line: usize,
    /// For a Parquet source, the columns of the id and the text.
    #[cfg_attr(not(feature = "parquet"), allow(dead_code))]
    columns: Option<Box<RecordOptions>>,
}

impl PartialEq for RecordSource {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.path == other.path
            && self.compression == other.compression
            && self.spool.as_deref() == other.spool.as_deref()
    }
}

impl Eq for RecordSource {}

impl RecordSource {
    /// A source named `name` with nothing behind it, for tests of what holds records.
    #[cfg(test)]
    pub(crate) fn named(name: &str) -> RecordSource {
        RecordSource {
            name: name.into(),
            path: None,
            compression: Compression::None,
            spool: None,
            reopened: AtomicUsize::new(0),
            max_line: usize::MAX,
            columns: None,
        }
    }

    /// The source in the file `path`, to read records of it again by offset (the index keeps
    /// each record's offset, not the source it was read from): its compression is sniffed
    /// from its first bytes, as when it was read.
    pub(crate) fn for_file(path: &Path, opts: &RecordOptions) -> io::Result<RecordSource> {
        // Opening a FIFO or a device could block or never end.
        if !std::fs::metadata(path)?.is_file() {
            return Err(io::Error::other("not a regular file"));
        }
        let (compression, _) = decode(Box::new(File::open(path)?))?;
        Ok(RecordSource {
            name: crate::source::files::display_id(path),
            path: Some(path.to_path_buf()),
            compression,
            spool: None,
            reopened: AtomicUsize::new(0),
            max_line: max_line(opts),
            #[cfg(feature = "parquet")]
            columns: (compression == Compression::Parquet).then(|| Box::new(opts.clone())),
            #[cfg(not(feature = "parquet"))]
            columns: {
                let _ = opts;
                None
            },
        })
    }

    /// The name used in ids and messages: the path as given, or `stdin`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file, `None` for standard input.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// True for a Parquet file, whose rows are the records.
    #[cfg(feature = "parquet")]
    pub fn is_parquet(&self) -> bool {
        self.compression == Compression::Parquet
    }

    /// How the stream was compressed.
    #[cfg(test)]
    pub(crate) fn compression(&self) -> Compression {
        self.compression
    }

    /// The plain (uncompressed) file holding the lines at their recorded offsets, if any.
    fn plain_file(&self) -> Option<&Path> {
        match (&self.spool, &self.path) {
            (Some(spool), _) => Some(spool),
            (None, Some(path)) if self.compression == Compression::None => Some(path),
            _ => None,
        }
    }

    /// Whether a line can be read again by seeking to its offset (a plain file, or standard
    /// input kept in one), rather than by decompressing the stream from its start.
    pub(crate) fn seekable(&self) -> bool {
        self.plain_file().is_some()
    }

    /// How many times the stream was decompressed again from its start (a diagnostic: exact
    /// verification should do it once per batch of pairs, not once per record).
    #[cfg(test)]
    pub(crate) fn times_reopened(&self) -> usize {
        self.reopened.load(Ordering::Relaxed)
    }

    /// Opens the stream again from its start, decompressed.
    fn reopen(&self) -> io::Result<DynBufRead> {
        self.reopened.fetch_add(1, Ordering::Relaxed);
        let path = match (&self.spool, &self.path) {
            (Some(spool), _) => spool.to_path_buf(),
            // Opening a pipe again would wait for a writer that is gone.
            (None, Some(path)) if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) => {
                return Err(io::Error::other(
                    "not a regular file: it is read only once (it was not kept)",
                ));
            }
            (None, Some(path)) => path.clone(),
            (None, None) => {
                return Err(io::Error::other(
                    "standard input is read only once (it was not kept)",
                ));
            }
        };
        let file = crate::source::files::open_unblocked(&path)?;
        Ok(decode(Box::new(crate::source::files::Waiting(file)))?.1)
    }

    /// Reads the next line into `line`; one longer than `max_line` is consumed but left empty
    /// (it was no record when first read). Returns the bytes consumed (0 at the end) and
    /// whether the line was kept.
    fn next_line(&self, r: &mut dyn BufRead, line: &mut Vec<u8>) -> io::Result<(usize, bool)> {
        read_line_capped(r, line, self.max_line, None).map_err(|e| match e {
            LineError::Read(e) | LineError::Spool(e) => e,
        })
    }

    /// Reads the lines that start at `offsets` (ascending, distinct), without their line end.
    pub(crate) fn read_at(&self, offsets: &[u64]) -> io::Result<Vec<Vec<u8>>> {
        debug_assert!(offsets.windows(2).all(|w| w[0] < w[1]));
        let mut out = Vec::with_capacity(offsets.len());
        #[cfg(feature = "parquet")]
        if let (Some(columns), Some(path)) = (&self.columns, &self.path) {
            // A row's offset is its number.
            crate::source::parquet::read_rows_at(path, columns, offsets, |_, record| {
                out.push(row_line(&record, columns))
            })
            .map_err(|e| io::Error::other(e.to_string()))?;
            return Ok(out);
        }
        if let Some(path) = self.plain_file() {
            let mut r = BufReader::new(File::open(path)?);
            for &off in offsets {
                r.seek(SeekFrom::Start(off))?;
                let mut line = Vec::new();
                if !self.next_line(&mut r, &mut line)?.1 {
                    // The file changed: no indexed record was ever so long.
                    return Err(io::Error::other(format!(
                        "the line at byte {off} is longer than {} bytes",
                        self.max_line
                    )));
                }
                trim_line_end(&mut line);
                out.push(line);
            }
            return Ok(out);
        }
        let mut wanted = offsets.iter().peekable();
        self.for_each_line(|_, off, line| {
            if wanted.peek() == Some(&&off) {
                wanted.next();
                out.push(line.to_vec());
            }
            Ok(wanted.peek().is_some())
        })?;
        if out.len() != offsets.len() {
            return Err(io::Error::other(
                "the file is shorter than when it was read",
            ));
        }
        Ok(out)
    }

    /// Reads the whole stream again, calling `f(line number, offset, line)` for every line (blank
    /// ones included, line ends removed) until it returns `false`.
    pub(crate) fn for_each_line(
        &self,
        mut f: impl FnMut(u64, u64, &[u8]) -> io::Result<bool>,
    ) -> io::Result<()> {
        #[cfg(feature = "parquet")]
        if let (Some(columns), Some(path)) = (&self.columns, &self.path) {
            let mut result = Ok(true);
            crate::source::parquet::read_rows(path, columns, |first, records| {
                for (i, record) in records.iter().enumerate() {
                    if matches!(result, Ok(true)) {
                        let row = first + i as u64;
                        result = f(row, row, &row_line(record, columns));
                    }
                }
            })
            .map_err(|e| io::Error::other(e.to_string()))?;
            return result.map(|_| ());
        }
        let mut r = self.reopen()?;
        let mut line = Vec::new();
        let (mut number, mut offset) = (0u64, 0u64);
        loop {
            line.clear();
            let (n, _) = self.next_line(&mut r, &mut line)?;
            if n == 0 {
                return Ok(());
            }
            number += 1;
            let at = offset;
            offset += n as u64;
            trim_line_end(&mut line);
            if !f(number, at, &line)? {
                return Ok(());
            }
        }
    }
}

/// `line` without its line end: every `\n` and `\r` it ends with (JSON has no use for them
/// outside strings), so that a line read again is the line first read, whatever its end.
fn without_line_end(line: &[u8]) -> &[u8] {
    let end = line
        .iter()
        .rposition(|&b| b != b'\n' && b != b'\r')
        .map_or(0, |i| i + 1);
    &line[..end]
}

fn trim_line_end(line: &mut Vec<u8>) {
    let end = without_line_end(line).len();
    line.truncate(end);
}

/// A line of a batch: its number (from 1), its offset in the decompressed stream, and where its
/// bytes are in the batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    /// Line number, counting from 1.
    pub number: u64,
    /// Byte offset of the line's start in the decompressed stream.
    pub offset: u64,
    start: usize,
    end: usize,
}

/// Consecutive non-blank lines of one source.
#[derive(Debug)]
pub(crate) struct Batch {
    /// Where the lines come from.
    pub source: Arc<RecordSource>,
    /// The lines, in order.
    pub lines: Vec<Line>,
    buf: Vec<u8>,
}

impl Batch {
    /// The bytes of `line` (without its line end).
    pub fn bytes(&self, line: &Line) -> &[u8] {
        &self.buf[line.start..line.end]
    }
}

/// What reading the sources produces, in order.
#[derive(Debug)]
pub(crate) enum Event {
    /// A batch of lines.
    Batch(Batch),
    /// A source (or the rest of one) that could not be read.
    Skip(Skip),
}

/// A source and some of its records, as `(offset, document)` pairs.
pub(crate) type SourceRecords<'a> = (&'a Arc<RecordSource>, Vec<(u64, u32)>);

/// The records among `docs[needed]`, grouped by source (in order of first appearance), each
/// with its `(offset, document)` pairs: what reading them again takes, a pass per source.
pub(crate) fn by_source(
    docs: &[Document],
    needed: impl IntoIterator<Item = u32>,
) -> Vec<SourceRecords<'_>> {
    let mut out: Vec<SourceRecords> = Vec::new();
    for d in needed {
        if let Origin::Record { source, offset, .. } = &docs[d as usize].origin {
            match out.iter_mut().find(|(s, _)| Arc::ptr_eq(s, source)) {
                Some((_, v)) => v.push((*offset, d)),
                None => out.push((source, vec![(*offset, d)])),
            }
        }
    }
    out
}

/// Checks the inputs before any work: each is `-` (at most once) or an existing file.
pub(crate) fn check_inputs(inputs: &[PathBuf]) -> Result<()> {
    let mut stdin = false;
    for p in inputs {
        if is_stdin(p) {
            if stdin {
                return Err(Error::BadInput {
                    path: p.clone(),
                    reason: "standard input can be read only once".into(),
                });
            }
            stdin = true;
            continue;
        }
        match std::fs::metadata(p) {
            Err(_) if std::fs::symlink_metadata(p).is_err() => {
                crate::source::files::check_exists(p)?;
            }
            Ok(m) if m.is_dir() => {
                #[cfg(feature = "parquet")]
                if crate::source::parquet::dataset_files(p).is_some() {
                    return Err(Error::BadInput {
                        path: p.clone(),
                        reason: "a Parquet dataset with no shard outside the directories named \
                                 `_*` or `.*`, which are left out (a `_temporary` holds a job's \
                                 unfinished output)"
                            .into(),
                    });
                }
                return Err(Error::BadInput {
                    path: p.clone(),
                    reason: "is a directory; JSON-lines input must be a file or -".into(),
                });
            }
            // A dangling link or an unreadable file is reported when read, as for files.
            _ => {}
        }
    }
    Ok(())
}

/// Reads every input in order, in batches, on a separate thread, and hands each batch to
/// `on_event` on the calling thread (which processes it, typically in parallel) while the next
/// one is read and decompressed. With `spool`, standard input and any other input that is not a
/// regular file (a pipe, a FIFO) are copied to a temporary file so that their records can be
/// read again.
pub(crate) fn read_batches(
    inputs: &[PathBuf],
    spool: bool,
    opts: &RecordOptions,
    mut on_event: impl FnMut(Event),
) -> Result<()> {
    check_inputs(inputs)?;
    std::thread::scope(|scope| {
        // Two batches in flight: the reader stays one step ahead without holding more text.
        let (tx, rx) = sync_channel::<Event>(1);
        let reader = scope.spawn(move || -> Result<()> {
            for input in inputs {
                read_source(input, spool, opts, &mut |ev| tx.send(ev).is_ok())?;
            }
            Ok(())
        });
        for ev in rx {
            on_event(ev);
        }
        reader.join().expect("the record reader panicked")
    })
}

/// What a stream's copy is called in an error about it.
fn spool_name(name: &str) -> String {
    if name == STDIN_NAME {
        "temporary copy of standard input".into()
    } else {
        format!("temporary copy of {name}")
    }
}

/// Reads one source, sending batches and skips through `send` (which returns false when nobody
/// listens any more).
fn read_source(
    input: &Path,
    spool_streams: bool,
    opts: &RecordOptions,
    send: &mut dyn FnMut(Event) -> bool,
) -> Result<()> {
    let stdin = is_stdin(input);
    let name = if stdin {
        STDIN_NAME.to_string()
    } else {
        crate::source::files::display_id(input)
    };
    let skip = |id: String, reason: String| {
        Event::Skip(Skip {
            id,
            kind: SkipKind::Unreadable,
            reason,
        })
    };
    // A stream can be read only once: standard input, or a named pipe or FIFO.
    let mut stream = stdin;
    let raw: Box<dyn Read + Send> = if stdin {
        Box::new(io::stdin())
    } else {
        // A FIFO nobody writes to reads as empty instead of blocking the scan in `open`.
        match crate::source::files::open_unblocked(input) {
            Ok(f) => {
                stream = !f.metadata().is_ok_and(|m| m.is_file());
                Box::new(crate::source::files::Waiting(f))
            }
            Err(e) => {
                send(skip(name, io_reason(&e)));
                return Ok(());
            }
        }
    };
    let (compression, mut reader) = match decode(raw) {
        Ok(x) => x,
        Err(e) => {
            send(skip(name, io_reason(&e)));
            return Ok(());
        }
    };
    // A `.parquet` file is read as Parquet whatever it holds, so that one that is not is
    // named so rather than read as JSON lines.
    #[cfg(feature = "parquet")]
    if compression == Compression::Parquet
        || (!stdin && crate::source::parquet::is_parquet_path(input))
    {
        drop(reader);
        if stdin {
            send(skip(
                name,
                "Parquet is read from a file, not from standard input".into(),
            ));
            return Ok(());
        }
        return read_parquet_source(input, name, opts, send);
    }
    let (spool_path, mut spool) = if stream && spool_streams {
        let (file, path) = tempfile::NamedTempFile::new()
            .map_err(|e| Error::io(spool_name(&name), e))?
            .into_parts();
        (Some(path), Some(BufWriter::new(file)))
    } else {
        (None, None)
    };
    let source = Arc::new(RecordSource {
        name: name.clone(),
        path: (!stdin).then(|| input.to_path_buf()),
        compression,
        spool: spool_path,
        reopened: AtomicUsize::new(0),
        max_line: max_line(opts),
        columns: None,
    });
    let new_batch = || Batch {
        source: Arc::clone(&source),
        lines: Vec::new(),
        buf: Vec::new(),
    };
    let mut batch = new_batch();
    let (mut number, mut offset) = (0u64, 0u64);
    let max = max_line(opts);
    loop {
        let start = batch.buf.len();
        let read = read_line_capped(&mut reader, &mut batch.buf, max, spool.as_mut());
        let (n, whole) = match read {
            Ok(x) => x,
            Err(LineError::Spool(e)) => {
                return Err(Error::io(spool_name(&name), e));
            }
            Err(LineError::Read(e)) => {
                batch.buf.truncate(start);
                if !opts.partial {
                    return Err(Error::IncompleteInput {
                        path: name,
                        unit: "line",
                        line: number,
                        reason: io_reason(&e),
                    });
                }
                let reason = format!("read error after line {number}: {}", io_reason(&e));
                if !batch.lines.is_empty() && !send(Event::Batch(batch)) {
                    return Ok(());
                }
                send(skip(name, reason));
                break;
            }
        };
        if n == 0 {
            if !batch.lines.is_empty() {
                send(Event::Batch(batch));
            }
            break;
        }
        number += 1;
        if !whole {
            offset += n as u64;
            let too_long = Event::Skip(Skip {
                id: format!("{}:{number}", source.name()),
                kind: SkipKind::TooLarge,
                reason: format!(
                    "a line of {n} bytes, longer than the limit of {} bytes",
                    opts.max_line_bytes
                ),
            });
            if !send(too_long) {
                return Ok(());
            }
            continue;
        }
        let end = start + without_line_end(&batch.buf[start..]).len();
        if batch.buf[start..end].iter().all(u8::is_ascii_whitespace) {
            batch.buf.truncate(start);
        } else {
            batch.lines.push(Line {
                number,
                offset,
                start,
                end,
            });
        }
        offset += n as u64;
        if batch.lines.len() >= BATCH_LINES || batch.buf.len() >= BATCH_BYTES {
            let full = std::mem::replace(&mut batch, new_batch());
            if !send(Event::Batch(full)) {
                return Ok(());
            }
        }
    }
    if let Some(mut w) = spool {
        w.flush()
            .map_err(|e| Error::io("temporary copy of standard input", e))?;
    }
    Ok(())
}

/// Reads a Parquet source a batch of rows at a time; a file that cannot be read as the options
/// ask (not Parquet, no such column, not strings) is skipped whole, with the reason. A damaged
/// one fails the read ([`Error::IncompleteInput`]) unless partial input is allowed, when the
/// rows before the damage are kept and the rest of the file is reported as skipped, as for a
/// truncated compressed stream. A row longer than `max_line_bytes` is a skipped record
/// (`too-large`), as a line is.
#[cfg(feature = "parquet")]
fn read_parquet_source(
    input: &Path,
    name: String,
    opts: &RecordOptions,
    send: &mut dyn FnMut(Event) -> bool,
) -> Result<()> {
    let source = Arc::new(RecordSource {
        name: name.clone(),
        path: Some(input.to_path_buf()),
        compression: Compression::Parquet,
        spool: None,
        reopened: AtomicUsize::new(0),
        max_line: max_line(opts),
        columns: Some(Box::new(opts.clone())),
    });
    let mut listening = true;
    let read = crate::source::parquet::read_row_batches(input, opts, |first, rows| {
        if !listening {
            return;
        }
        let mut batch = Batch {
            source: Arc::clone(&source),
            lines: Vec::with_capacity(rows.len()),
            buf: Vec::new(),
        };
        for (i, row) in rows.iter().enumerate() {
            let number = first + i as u64;
            if let Err(crate::source::parquet::RowError::TooLarge(reason)) = row {
                let too_large = Event::Skip(Skip {
                    id: format!("{}:{number}", source.name()),
                    kind: SkipKind::TooLarge,
                    reason: reason.clone(),
                });
                if !send(too_large) {
                    listening = false;
                    return;
                }
                continue;
            }
            let start = batch.buf.len();
            batch.buf.extend_from_slice(&row_line(row, opts));
            // A row's offset is its number: rows are read again by number.
            batch.lines.push(Line {
                number,
                offset: number,
                start,
                end: batch.buf.len(),
            });
        }
        listening = batch.lines.is_empty() || send(Event::Batch(batch));
    });
    let reason = match read {
        Ok(()) => return Ok(()),
        Err(e @ Error::IncompleteInput { .. }) if !opts.partial => return Err(e),
        Err(Error::IncompleteInput { line, reason, .. }) => {
            format!("read error after row {line}: {reason}")
        }
        Err(Error::BadInput { reason, .. }) => reason,
        Err(e) => e.to_string(),
    };
    send(Event::Skip(Skip {
        id: name,
        kind: SkipKind::Unreadable,
        reason,
    }));
    Ok(())
}

/// The JSON line a Parquet row stands for: its id and text at the options' dotted paths, or a
/// null text for a row without one (which parsing then reports).
#[cfg(feature = "parquet")]
fn row_line<E>(record: &std::result::Result<Record, E>, opts: &RecordOptions) -> Vec<u8> {
    fn put(obj: &mut serde_json::Map<String, Value>, dotted: &str, v: Value) {
        match dotted.split_once('.') {
            None => {
                obj.insert(dotted.to_owned(), v);
            }
            Some((head, rest)) => {
                let inner = obj
                    .entry(head.to_owned())
                    .or_insert_with(|| Value::Object(Default::default()));
                if let Value::Object(inner) = inner {
                    put(inner, rest, v);
                }
            }
        }
    }
    let mut obj = serde_json::Map::new();
    match record {
        Ok(r) => {
            if let Some(id) = &r.id {
                put(&mut obj, &opts.id_field, Value::String(id.clone()));
            }
            put(&mut obj, &opts.text_field, Value::String(r.text.clone()));
        }
        Err(_) => put(&mut obj, &opts.text_field, Value::Null),
    }
    serde_json::to_vec(&Value::Object(obj)).expect("a JSON object serializes")
}

/// The inputs with each Parquet dataset directory replaced by its files, in order.
#[cfg(feature = "parquet")]
pub fn expand_datasets(inputs: &[PathBuf]) -> Vec<PathBuf> {
    once_each(inputs.iter().flat_map(|p| {
        match p.is_dir() {
            // A dataset with no shard stays a directory, for `check_inputs` to refuse by name.
            true => crate::source::parquet::dataset_files(p)
                .filter(|files| !files.is_empty())
                .unwrap_or_else(|| vec![p.clone()]),
            false => vec![p.clone()],
        }
    }))
}

/// The files in order, each once: a file given twice (`x.jsonl ./x.jsonl`, or a shard and its
/// directory) is one source, as a file reached twice in a tree is one document; the first name
/// given keeps it.
fn once_each(files: impl Iterator<Item = PathBuf>) -> Vec<PathBuf> {
    let mut seen = std::collections::HashSet::new();
    files
        .filter(|f| {
            is_stdin(f) || crate::source::files::file_key(f).is_none_or(|key| seen.insert(key))
        })
        .collect()
}

/// The inputs as given (without the `parquet` feature there are no datasets to expand).
#[cfg(not(feature = "parquet"))]
pub fn expand_datasets(inputs: &[PathBuf]) -> Vec<PathBuf> {
    once_each(inputs.iter().cloned())
}

/// `inputs` less those a tree's link takes out of the working directory (unless `follow_links`),
/// each refused one an unreadable skip with its reason: a record file named or listed is read
/// under the rule that holds for files (see [`crate::source::files`]), so that a tree cannot
/// make a scan read a file outside it by a link named `x.jsonl`.
pub(crate) fn confine(inputs: Vec<PathBuf>, follow_links: bool) -> (Vec<PathBuf>, Vec<Skip>) {
    if follow_links {
        return (inputs, Vec::new());
    }
    let mut confinement = crate::source::files::Confinement::new();
    let mut skips = Vec::new();
    let kept = inputs
        .into_iter()
        .filter(|p| {
            let refused = (!is_stdin(p)).then(|| confinement.refusal(p)).flatten();
            if let Some(reason) = &refused {
                skips.push(Skip {
                    id: crate::source::files::display_id(p),
                    kind: SkipKind::Unreadable,
                    reason: reason.clone(),
                });
            }
            refused.is_none()
        })
        .collect();
    (kept, skips)
}

/// Why [`read_line_capped`] stopped.
enum LineError {
    /// Reading the source failed.
    Read(io::Error),
    /// Copying it to the spool file failed.
    Spool(io::Error),
}

/// Reads the next line, newline included, onto the end of `buf`, copying every byte read to
/// `spool` when there is one. A line longer than `max` bytes is consumed but not kept (`buf` is
/// left as it was), so one endless line costs no memory. Returns the bytes consumed (0 at the
/// end) and whether the line was kept.
fn read_line_capped(
    r: &mut dyn BufRead,
    buf: &mut Vec<u8>,
    max: usize,
    mut spool: Option<&mut BufWriter<File>>,
) -> std::result::Result<(usize, bool), LineError> {
    let start = buf.len();
    let (mut consumed, mut kept) = (0usize, true);
    loop {
        let available = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(LineError::Read(e)),
        };
        if available.is_empty() {
            return Ok((consumed, kept));
        }
        let (chunk, done) = match memchr::memchr(b'\n', available) {
            Some(i) => (&available[..=i], true),
            None => (available, false),
        };
        if let Some(w) = spool.as_deref_mut() {
            w.write_all(chunk).map_err(LineError::Spool)?;
        }
        if kept {
            if buf.len() - start + chunk.len() <= max {
                buf.extend_from_slice(chunk);
            } else {
                kept = false;
                buf.truncate(start);
            }
        }
        let len = chunk.len();
        r.consume(len);
        consumed += len;
        if done {
            return Ok((consumed, kept));
        }
    }
}

/// Gives records their ids: the id field when present, otherwise the line number (prefixed with
/// the source's name when several sources are read); optionally refuses an id already given.
#[derive(Debug, Default)]
pub struct Ids {
    prefixed: bool,
    unique: bool,
    // Hash of each id -> its document. Only hashes are kept, so the ids are not stored twice; a
    // hash shared by two different ids (about one chance in 10^7 for ten million ids) falls back
    // to `collided`.
    first: HashMap<u64, u32>,
    collided: HashMap<String, u32>,
    // Bit per document: its id was made up from its line, so it gives way to a real id.
    made_up: Vec<u64>,
}

impl Ids {
    /// Ids for `sources` inputs; `unique` refuses an id seen before.
    pub fn new(sources: usize, unique: bool) -> Self {
        Ids {
            prefixed: sources > 1,
            unique,
            ..Default::default()
        }
    }

    /// Names a record without an id `source:line` even when one source is read (the index
    /// reads some sources at a time, and a name must not depend on which).
    pub(crate) fn named_by_source(mut self) -> Self {
        self.prefixed = true;
        self
    }

    /// The id of the record on `line` of `source`, to be the next of `docs`. A refused duplicate
    /// is returned as a malformed-record [`Skip`].
    ///
    /// A record without an id is named by its line number (`source:line` with several inputs).
    /// With unique ids, a real id always wins over a made-up one: a made-up name already taken
    /// becomes `source:line` (then `source:line#2`, ...), and an earlier record whose made-up name
    /// a later real id claims is renamed the same way, so no record is lost to a line number.
    pub(crate) fn assign(
        &mut self,
        source: &RecordSource,
        line: u64,
        id: Option<String>,
        docs: &mut [Document],
    ) -> std::result::Result<String, Skip> {
        let (id, made_up) = match id {
            Some(id) => (id, false),
            None if self.prefixed => (format!("{}:{line}", source.name()), true),
            None => (line.to_string(), true),
        };
        self.settle(source.name(), line, id, made_up, docs, |d| {
            match &d.origin {
                Origin::Record { source, line, .. } => (source.name().to_owned(), *line),
                Origin::File(_) | Origin::Text { .. } => {
                    unreachable!("only records get made-up ids")
                }
            }
        })
    }

    /// [`assign`](Self::assign) for a record whose id is already decided, as read (`made_up` when
    /// it is the record's line number): the next of `docs`, from `line` of the source named
    /// `source`. `place` gives the source's name and the line of a document of `docs` with a
    /// made-up id, to rename it when a real id claims its name.
    pub(crate) fn settle(
        &mut self,
        source: &str,
        line: u64,
        id: String,
        made_up: bool,
        docs: &mut [Document],
        place: impl Fn(&Document) -> (String, u64),
    ) -> std::result::Result<String, Skip> {
        let doc = docs.len() as u32;
        if !self.unique {
            return Ok(id);
        }
        let id = match self.holder(&id, docs) {
            None => id,
            Some(_) if made_up => self.free_name(source, line, docs),
            Some(prev) if self.is_made_up(prev) => {
                // The earlier record gives its made-up name to this real id.
                let (prev_source, prev_line) = place(&docs[prev as usize]);
                let renamed = self.free_name(&prev_source, prev_line, docs);
                self.insert(xxh3_64(renamed.as_bytes()), &renamed, prev, docs);
                docs[prev as usize].id = renamed;
                self.repoint(&id, doc);
                return Ok(id);
            }
            Some(_) => return Err(duplicate_id(source, line, &id)),
        };
        self.insert(xxh3_64(id.as_bytes()), &id, doc, docs);
        if made_up {
            self.mark_made_up(doc);
        }
        Ok(id)
    }

    /// The document that has `id`, if any.
    fn holder(&self, id: &str, docs: &[Document]) -> Option<u32> {
        match self.first.get(&xxh3_64(id.as_bytes())) {
            None => None,
            Some(&d) if docs.get(d as usize).is_some_and(|x| x.id == id) => Some(d),
            Some(_) => self.collided.get(id).copied(),
        }
    }

    fn insert(&mut self, h: u64, id: &str, doc: u32, docs: &[Document]) {
        match self.first.get(&h) {
            Some(&d) if docs.get(d as usize).is_some_and(|x| x.id != id) => {
                self.collided.insert(id.to_owned(), doc);
            }
            _ => {
                self.first.insert(h, doc);
            }
        }
    }

    /// Hands `id` to `doc` (not yet in the documents), whose entry is where the old holder's was.
    fn repoint(&mut self, id: &str, doc: u32) {
        if let Some(d) = self.collided.get_mut(id) {
            *d = doc;
        } else {
            self.first.insert(xxh3_64(id.as_bytes()), doc);
        }
    }

    /// The first of `source:line`, `source:line#2`, ... that no document has.
    fn free_name(&self, source: &str, line: u64, docs: &[Document]) -> String {
        let base = format!("{source}:{line}");
        let mut name = base.clone();
        let mut n = 1;
        while self.holder(&name, docs).is_some() {
            n += 1;
            name = format!("{base}#{n}");
        }
        name
    }

    fn is_made_up(&self, doc: u32) -> bool {
        let (word, bit) = (doc as usize / 64, doc % 64);
        self.made_up.get(word).is_some_and(|w| w >> bit & 1 == 1)
    }

    fn mark_made_up(&mut self, doc: u32) {
        let (word, bit) = (doc as usize / 64, doc % 64);
        if self.made_up.len() <= word {
            self.made_up.resize(word + 1, 0);
        }
        self.made_up[word] |= 1 << bit;
    }
}

/// The skip of the record at `line` of `source` whose `id` an earlier record has.
pub(crate) fn duplicate_id(source: &str, line: u64, id: &str) -> Skip {
    Skip {
        id: format!("{source}:{line}"),
        kind: SkipKind::Malformed,
        reason: format!("{DUPLICATE_ID} `{id}` (an earlier record has it)"),
    }
}

/// True for a skip made by [`duplicate_id`].
pub(crate) fn is_duplicate_id(skip: &Skip) -> bool {
    skip.kind == SkipKind::Malformed && skip.reason.starts_with(DUPLICATE_ID)
}

const DUPLICATE_ID: &str = "duplicate id";

/// The longest line `opts` keep, line end included.
fn max_line(opts: &RecordOptions) -> usize {
    usize::try_from(opts.max_line_bytes).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(id: &str, text: &str) -> Fields {
        RecordOptions {
            id_field: id.into(),
            text_field: text.into(),
            ..Default::default()
        }
        .fields()
    }

    #[test]
    fn a_line_over_the_limit_is_skipped_without_being_held() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let long = format!("{{\"text\": \"{}\"}}\n", "x".repeat(5000));
        std::fs::write(
            &path,
            format!("{{\"text\": \"a\"}}\n{long}{{\"text\": \"b\"}}\n"),
        )
        .unwrap();
        let opts = RecordOptions {
            max_line_bytes: 1000,
            ..Default::default()
        };
        let (mut lines, mut skips) = (Vec::new(), Vec::new());
        read_batches(&[path], false, &opts, |ev| match ev {
            Event::Batch(b) => lines.extend(b.lines.iter().map(|l| (l.number, l.offset))),
            Event::Skip(s) => skips.push(s),
        })
        .unwrap();
        // The lines around it keep their numbers and offsets (read again by offset later).
        assert_eq!(lines, [(1, 0), (3, 14 + long.len() as u64)]);
        assert_eq!(skips.len(), 1);
        assert_eq!(skips[0].kind, SkipKind::TooLarge);
        assert!(skips[0].id.ends_with("c.jsonl:2"), "{:?}", skips[0]);
    }

    #[test]
    fn parses_ids_texts_and_nested_paths() {
        let f = fields("id", "text");
        let r = parse_record(br#"{"id": 7, "text": "hello"}"#, &f).unwrap();
        assert_eq!(r.id.as_deref(), Some("7"));
        assert_eq!(r.text, "hello");
        let r = parse_record(br#"{"text": "x", "id": null}"#, &f).unwrap();
        assert_eq!(r.id, None);
        let f = fields("meta.doc.key", "body.parts.1");
        let r = parse_record(
            br#"{"meta": {"doc": {"key": "k-1"}}, "body": {"parts": ["a", "b"]}}"#,
            &f,
        )
        .unwrap();
        assert_eq!((r.id.as_deref(), r.text.as_str()), (Some("k-1"), "b"));
    }

    #[test]
    fn an_id_longer_than_the_limit_makes_the_record_malformed() {
        let f = fields("id", "text");
        let line = |id: &str| format!(r#"{{"id": {id}, "text": "t"}}"#);
        let at_limit = "x".repeat(MAX_ID_BYTES);
        let r = parse_record(line(&format!("\"{at_limit}\"")).as_bytes(), &f).unwrap();
        assert_eq!(r.id.as_deref(), Some(at_limit.as_str()));
        // Bytes, not characters: 2,049 two-byte characters are too many.
        for id in [
            format!("\"{at_limit}y\""),
            format!("\"{}\"", "é".repeat(MAX_ID_BYTES / 2 + 1)),
            // A number keeps every digit.
            "7".repeat(MAX_ID_BYTES + 1),
        ] {
            assert_eq!(
                parse_record(line(&id).as_bytes(), &f).unwrap_err(),
                "id longer than 4096 bytes"
            );
        }
        assert_eq!(check_id_len(&at_limit), Ok(()));
    }

    #[test]
    fn malformed_records_say_why() {
        let f = fields("id", "text");
        let e = parse_record(br#"{"id": 1, "text": "x""#, &f).unwrap_err();
        assert!(e.starts_with("malformed JSON at column"), "{e}");
        assert!(!e.contains("line 1"), "{e}");
        assert_eq!(
            parse_record(br#"{"id": 1}"#, &f).unwrap_err(),
            "no field `text`"
        );
        assert_eq!(
            parse_record(br#"{"text": 3}"#, &f).unwrap_err(),
            "field `text` is a number, not a string"
        );
        assert_eq!(
            parse_record(br#"{"text": "t", "id": {"a": 1}}"#, &f).unwrap_err(),
            "field `id` is an object, not a string or a number"
        );
        assert_eq!(
            parse_record(b"[1, 2]", &f).unwrap_err(),
            "not a JSON object but an array"
        );
    }

    #[test]
    fn jsonl_names_and_magic_bytes() {
        for yes in [
            "a.jsonl",
            "B.NDJSON",
            "x.jsonl.gz",
            "x.ndjson.zst",
            "d/x.jsonl.zstd",
        ] {
            assert!(is_jsonl_path(Path::new(yes)), "{yes}");
        }
        for no in ["a.json", "a.txt", "jsonl", "a.gz", "-"] {
            assert!(!is_jsonl_path(Path::new(no)), "{no}");
        }
        assert_eq!(Compression::sniff(&[0x1f, 0x8b, 8, 0]), Compression::Gzip);
        assert_eq!(
            Compression::sniff(&[0x28, 0xb5, 0x2f, 0xfd]),
            Compression::Zstd
        );
        assert_eq!(Compression::sniff(b"{\"a"), Compression::None);
        assert_eq!(Compression::sniff(b""), Compression::None);
    }

    #[test]
    fn bad_field_paths_are_rejected() {
        let o = RecordOptions {
            id_field: "a..b".into(),
            ..Default::default()
        };
        assert!(o.validate().unwrap_err().to_string().contains("id_field"));
        assert_eq!(pointer("a/b.c~d"), "/a~1b/c~0d");
    }

    type NumberedLines = Vec<(u64, u64, Vec<u8>)>;

    fn read_all(path: &Path) -> (NumberedLines, Arc<RecordSource>) {
        let mut lines = Vec::new();
        let mut source = None;
        read_batches(
            &[path.to_path_buf()],
            false,
            &Default::default(),
            |ev| match ev {
                Event::Batch(b) => {
                    for l in &b.lines {
                        lines.push((l.number, l.offset, b.bytes(l).to_vec()));
                    }
                    source = Some(Arc::clone(&b.source));
                }
                Event::Skip(s) => panic!("{s:?}"),
            },
        )
        .unwrap();
        (lines, source.unwrap())
    }

    #[test]
    fn reads_plain_gzip_and_zstd_and_reads_lines_again() {
        let dir = tempfile::tempdir().unwrap();
        let text = b"{\"text\":\"a\"}\r\n\n  \n{\"text\":\"b\"}\n{\"text\":\"c\"}";
        let plain = dir.path().join("c.jsonl");
        std::fs::write(&plain, text).unwrap();
        let gz = dir.path().join("c.jsonl.gz");
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(text).unwrap();
        std::fs::write(&gz, enc.finish().unwrap()).unwrap();
        let zst = dir.path().join("c.jsonl.zst");
        std::fs::write(&zst, zstd::encode_all(&text[..], 3).unwrap()).unwrap();

        let (want, _) = read_all(&plain);
        assert_eq!(
            want,
            vec![
                (1, 0, b"{\"text\":\"a\"}".to_vec()),
                (4, 18, b"{\"text\":\"b\"}".to_vec()),
                (5, 31, b"{\"text\":\"c\"}".to_vec()),
            ]
        );
        for (path, c) in [
            (&plain, Compression::None),
            (&gz, Compression::Gzip),
            (&zst, Compression::Zstd),
        ] {
            let (got, source) = read_all(path);
            assert_eq!(got, want, "{}", path.display());
            assert_eq!(source.compression(), c);
            let again = source.read_at(&[18, 31]).unwrap();
            assert_eq!(again, vec![want[1].2.clone(), want[2].2.clone()]);
        }
    }

    #[test]
    fn a_line_read_again_is_the_line_first_read_whatever_its_end() {
        let dir = tempfile::tempdir().unwrap();
        // `\r\r\n`, then a last line ending in a lone `\r`.
        let text = b"{\"text\":\"a\"}\r\r\n{\"text\":\"b\"}\r";
        let path = dir.path().join("c.jsonl");
        std::fs::write(&path, text).unwrap();
        let (first, source) = read_all(&path);
        let lines: Vec<Vec<u8>> = first.iter().map(|l| l.2.clone()).collect();
        assert_eq!(
            lines,
            [b"{\"text\":\"a\"}".to_vec(), b"{\"text\":\"b\"}".to_vec()]
        );
        assert_eq!(source.read_at(&[first[0].1, first[1].1]).unwrap(), lines);
        let mut again = Vec::new();
        source
            .for_each_line(|_, _, line| {
                again.push(line.to_vec());
                Ok(true)
            })
            .unwrap();
        assert_eq!(again, lines);
    }

    #[test]
    fn a_corrupt_stream_keeps_the_records_before_the_damage() {
        let dir = tempfile::tempdir().unwrap();
        let lines: String = (0..2000)
            .map(|i| format!("{}\n", serde_json::json!({"text": format!("record {i}")})))
            .collect();
        let mut gz = {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            enc.write_all(lines.as_bytes()).unwrap();
            enc.finish().unwrap()
        };
        gz.truncate(gz.len() * 2 / 3);
        let path = dir.path().join("cut.jsonl.gz");
        std::fs::write(&path, gz).unwrap();
        let (mut read, mut skips) = (0, Vec::new());
        let partial = RecordOptions {
            partial: true,
            ..Default::default()
        };
        let e = read_batches(
            std::slice::from_ref(&path),
            false,
            &Default::default(),
            |_| {},
        )
        .unwrap_err();
        assert!(
            matches!(e, Error::IncompleteInput { .. }),
            "without partial input, a damaged source fails the scan: {e}"
        );
        read_batches(&[path], false, &partial, |ev| match ev {
            Event::Batch(b) => read += b.lines.len(),
            Event::Skip(s) => skips.push(s),
        })
        .unwrap();
        assert!(read > 0 && read < 2000, "{read}");
        assert_eq!(skips.len(), 1);
        assert_eq!(skips[0].kind, SkipKind::Unreadable);
        assert!(
            skips[0]
                .reason
                .starts_with(&format!("read error after line {read}")),
            "{:?}",
            skips[0]
        );
    }

    /// Scans `lines` as a zstd-compressed JSON-lines file, verifying pairs exactly at
    /// `threshold`; returns the pairs found, whether each has its exact Jaccard, and the source.
    fn scan_compressed_exactly(lines: &str, threshold: f64) -> (usize, bool, Arc<RecordSource>) {
        use crate::find::Pipeline;
        use crate::find::config::ScanConfig;
        use crate::source::Origin;
        use crate::verify::VerifyMode;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl.zst");
        std::fs::write(&path, zstd::encode_all(lines.as_bytes(), 3).unwrap()).unwrap();
        let config = ScanConfig {
            verify: VerifyMode::Exact,
            threshold,
            ..Default::default()
        };
        let report = Pipeline::new(config)
            .unwrap()
            .scan_records(&[path])
            .unwrap();
        let Origin::Record { source, .. } = &report.documents[0].origin else {
            panic!("a record");
        };
        let exact = report.pairs.iter().all(|p| p.jaccard.is_some());
        (report.pairs.len(), exact, source.clone())
    }

    /// Exact verification decompresses a compressed source once per batch of pairs, not once
    /// per record (which would be quadratic).
    #[test]
    fn exact_verification_decompresses_once_per_batch() {
        let base = "a long enough sentence about rivers, stones and the gardens by the harbour";
        let lines: String = (0..30)
            .map(|i| {
                format!(
                    "{}\n",
                    serde_json::json!({"text": format!("{base} {}", i % 3)})
                )
            })
            .collect();
        let (pairs, exact, source) = scan_compressed_exactly(&lines, 0.5);
        assert!(pairs > 100, "{pairs}");
        assert!(exact);
        assert_eq!(source.times_reopened(), 1);
    }

    /// A batch large and dense enough for a core (see `Core`) samples no compressed record to
    /// find it: that would decompress the stream once more.
    #[test]
    fn a_dense_batch_of_compressed_records_is_decompressed_once() {
        // 26 groups of 20 near copies with one boilerplate: 520 records, 4,940 pairs.
        let words = |seed: u64, n: u64| {
            (0..n)
                .map(|i| {
                    format!(
                        "w{}",
                        crate::sketch::minhash::fmix64(seed * 1_000_003 + i) % 5000
                    )
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        let boilerplate = words(50, 150);
        let mut lines = String::new();
        for group in 0..26 {
            let body = words(100 + group, 250);
            for i in 0..20 {
                let text = format!("{boilerplate} {body} {}", words(10_000 + group * 20 + i, 4));
                lines += &format!("{}\n", serde_json::json!({ "text": text }));
            }
        }
        let (pairs, exact, source) = scan_compressed_exactly(&lines, 0.5);
        assert_eq!(pairs, 26 * 190);
        assert!(exact);
        assert_eq!(source.times_reopened(), 1);
    }

    /// Exact verification reads plain sources in batches of about a thousand documents; a
    /// compressed one would be decompressed again for each, so it gets one batch.
    #[test]
    fn exact_verification_decompresses_once_past_a_batch_of_documents() {
        // 600 pairs of near-duplicates, unlike each other: 1,200 documents in 600 components.
        let mut x = 7u64;
        let mut word = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            format!("w{}", (x >> 33) % 100_000)
        };
        let mut lines = String::new();
        for _ in 0..600 {
            let words: Vec<String> = (0..40).map(|_| word()).collect();
            let mut copy = words.clone();
            copy[20] = "changed".into();
            for w in [words, copy] {
                lines += &format!("{}\n", serde_json::json!({"text": w.join(" ")}));
            }
        }
        let (pairs, exact, source) = scan_compressed_exactly(&lines, 0.7);
        assert_eq!(pairs, 600);
        assert!(exact);
        assert!(!source.seekable());
        assert_eq!(source.times_reopened(), 1);
    }

    #[test]
    fn directories_and_missing_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let e = check_inputs(&[dir.path().to_path_buf()]).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        let e = check_inputs(&[dir.path().join("nope.jsonl")]).unwrap_err();
        assert!(matches!(e, Error::MissingPath { .. }));
        let e = check_inputs(&["-".into(), "-".into()]).unwrap_err();
        assert!(e.to_string().contains("only once"), "{e}");
    }

    #[derive(Default)]
    struct Count(std::sync::atomic::AtomicU64, std::sync::atomic::AtomicU64);

    impl crate::find::Progress for Count {
        fn total(&self, n: u64) {
            self.0.store(n, std::sync::atomic::Ordering::Relaxed);
        }
        fn advance(&self, n: u64) {
            self.1.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        }
    }

    #[test]
    fn signing_records_reports_progress_and_keeps_input_order() {
        use crate::find::Pipeline;
        use std::sync::atomic::Ordering::Relaxed;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let lines: String = (0..40)
            .map(|i| {
                format!(
                    "{}\n",
                    serde_json::json!({"text": format!("document number {i}")})
                )
            })
            .collect();
        std::fs::write(&path, format!("{lines}not json\n")).unwrap();
        let count = Arc::new(Count::default());
        let p = Pipeline::new(Default::default())
            .unwrap()
            .with_progress(count.clone());
        let corpus = p.sign_records(&[path]).unwrap();
        assert_eq!(count.1.load(Relaxed), 41);
        assert_eq!(count.0.load(Relaxed), 0, "no total is known for records");
        let ids: Vec<&str> = corpus.documents.iter().map(|d| d.id.as_str()).collect();
        let want: Vec<String> = (1..=40).map(|i| i.to_string()).collect();
        assert_eq!(ids, want);
        assert_eq!(corpus.signed.len(), 40);
        assert_eq!(corpus.stats.skipped_malformed, 1);

        let count = Arc::new(Count::default());
        let p = Pipeline::new(Default::default())
            .unwrap()
            .with_progress(count.clone());
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        p.sign_files(&[dir.path().to_path_buf()]).unwrap();
        assert_eq!((count.0.load(Relaxed), count.1.load(Relaxed)), (2, 2));
    }

    fn record_source(name: &str) -> Arc<RecordSource> {
        Arc::new(RecordSource {
            name: name.into(),
            path: Some(name.into()),
            compression: Compression::None,
            spool: None,
            reopened: AtomicUsize::new(0),
            max_line: usize::MAX,
            columns: None,
        })
    }

    /// Gives ids to `(line, id field)` records of one source; a refused record shows as
    /// `refused NAME`.
    fn assign_all(
        ids: &mut Ids,
        source: &Arc<RecordSource>,
        records: &[(u64, Option<&str>)],
    ) -> Vec<String> {
        let mut docs: Vec<Document> = Vec::new();
        let mut refused = Vec::new();
        for &(line, id) in records {
            match ids.assign(source, line, id.map(String::from), &mut docs) {
                Ok(id) => docs.push(Document {
                    id,
                    origin: Origin::Record {
                        source: Arc::clone(source),
                        line,
                        offset: 0,
                    },
                    empty: false,
                }),
                Err(skip) => {
                    assert_eq!(skip.kind, SkipKind::Malformed);
                    refused.push(format!("refused {}", skip.id));
                }
            }
        }
        docs.into_iter().map(|d| d.id).chain(refused).collect()
    }

    #[test]
    fn ids_fall_back_to_line_numbers_and_duplicates_are_refused() {
        let source = record_source("a.jsonl");
        let given = assign_all(
            &mut Ids::new(1, true),
            &source,
            &[(1, Some("x")), (2, None), (3, Some("x"))],
        );
        assert_eq!(given, ["x", "2", "refused a.jsonl:3"]);
        let mut ids = Ids::new(2, false);
        assert_eq!(ids.assign(&source, 9, None, &mut []).unwrap(), "a.jsonl:9");
    }

    #[test]
    fn a_real_id_wins_over_a_line_number_whichever_comes_first() {
        let source = record_source("a.jsonl");
        // Line 2 has no id and a later record claims "2": line 2 becomes `a.jsonl:2`, and
        // again `a.jsonl:2#2` when line 7 claims that. Line 6 has no id, and both "6" and
        // `a.jsonl:6` are taken. Line 5's "5" is claimed later by line 8. Nothing is lost.
        let given = assign_all(
            &mut Ids::new(1, true),
            &source,
            &[
                (1, Some("a.jsonl:6")),
                (2, None),
                (3, Some("2")),
                (4, Some("6")),
                (5, None),
                (6, None),
                (7, Some("a.jsonl:2")),
                (8, Some("5")),
            ],
        );
        assert_eq!(
            given,
            [
                "a.jsonl:6",
                "a.jsonl:2#2",
                "2",
                "6",
                "a.jsonl:5",
                "a.jsonl:6#2",
                "a.jsonl:2",
                "5"
            ]
        );
        // Without uniqueness (dedup keeps every record) nothing is renamed.
        let given = assign_all(
            &mut Ids::new(1, false),
            &source,
            &[(1, Some("2")), (2, None)],
        );
        assert_eq!(given, ["2", "2"]);
    }
}
