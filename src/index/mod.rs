//! A persistent index of signed documents in one SQLite file, so a corpus is signed once and
//! then kept up to date: new documents are checked against it ([`Index::query`]), a re-run signs
//! only what changed ([`Index::update`]), and a scan can use it as a cache of signatures
//! ([`Index::sign_files`]).
//!
//! Why SQLite: it is durable and transactional, needs no server, and the file can be inspected
//! with the `sqlite3` shell. The schema:
//!
//! - `meta(key, value)`: `format_version`, `ndup_version`, `params` (the JSON of
//!   [`SigningParams`]), `fingerprint` (a hash of those parameters) and, once records are
//!   indexed, `records` (the JSON of the id and text fields they were read with) and
//!   `duplicate_ids_in` (the JSON array of the record files whose last read skipped a record
//!   for an id that an earlier one has);
//! - `doc`: one row per document: `name` (its id), `path` (absolute, to read it again for exact
//!   verification: the file, or the JSON-lines or Parquet file of a record), `kind` (`text`,
//!   `empty` or `binary`), `size`, `mtime_ns` (of the file), `indexed_ns` (when it was last looked
//!   at), `content_hash` (xxh3-128 of a file's raw bytes, of a record's text), `text_bytes`,
//!   `signature` (little-endian u32 slots), `bands` (its little-endian u64 band hashes), and for a
//!   record `record_line` (its line, or row, from 1) and `record_offset` (the byte offset of its
//!   line in the decompressed stream, or its row number), both null for a file;
//! - `band(band, hash, doc)`: the LSH buckets, keyed for lookup by `(band, hash)`.
//!
//! The header's `application_id` is "ndup" and its `user_version` the format version, so a foreign
//! SQLite file is recognized before anything is read or written; a file that is not SQLite at all
//! or is damaged is a typed error, never a panic.
//!
//! Safety: the database runs in WAL mode, so readers (queries) keep working, on the last committed
//! state, while a writer runs. Every command that writes does so in one `IMMEDIATE` transaction:
//! killed at any point, it leaves the previous state intact. Readers never write, and also work
//! where the index's file or directory is read-only ([`Index::open_read_only`]).
//!
//! Change detection is that of `git` and `rsync`: a file whose size and modification time match
//! its row is unchanged and not even read; otherwise its content hash decides whether it must be
//! signed again. A JSON-lines or Parquet file is read again whole unless the size and mtime of
//! every one of its rows match, and each of its records is then kept, moved, rewritten or added
//! by its id and the hash of its text. Ids are unique, as in a scan: of two records with one id,
//! the one in the earlier input file is indexed, whichever of the two files was read.
//! A file modified within `RACY_WINDOW_NS` of the moment it was indexed could have
//! changed again within the same clock tick, so it is always re-hashed (git's "racily clean"
//! entries).

mod query;
mod sync;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, params};
use serde::Serialize;

use crate::candidates::lsh::band_hash;
use crate::error::{Error, Result};
use crate::error::{Param, Piece, Problem};
pub use crate::find::params::SigningParams;
use crate::model::Skip;
use crate::source::records::{self, RecordOptions};

pub use query::{Match, QueryDoc, QueryReport, QuerySource, QueryStats};
pub use sync::check_source;

/// `PRAGMA application_id` of an ndup index: the bytes "ndup".
pub(crate) const APPLICATION_ID: i32 = 0x6E64_7570;

/// The index format (`PRAGMA user_version` and `meta.format_version`). Bumped when the schema or
/// the meaning of a column changes. 2: FSS and OPH signatures take round 0 from the shingle
/// hashes' own bits, and classic MinHash permutes 32-bit fingerprints, so signatures stored by
/// format 1 no longer match new ones. 3: records, with the `record_line` and `record_offset`
/// columns; a format 2 index is read as it is and upgraded by the first command that writes it.
pub(crate) const INDEX_FORMAT_VERSION: i64 = 3;

/// The oldest format read: format 2 lacks only the record columns, which it would hold as null.
const OLDEST_READ: i64 = 2;

/// A file modified less than this before it was indexed is re-hashed on every update, because a
/// second change within the file system's timestamp granularity would not show in its mtime.
/// Two seconds covers the coarsest common file systems (FAT).
pub(crate) const RACY_WINDOW_NS: i64 = 2_000_000_000;

/// How long a writer waits for another writer to finish before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Documents signed in parallel and then written per step: bounds the signatures held in memory
/// while a large corpus is indexed.
const CHUNK: usize = 2048;

/// Candidate pairs verified exactly per batch: bounds the shingle sets held at once.
const EXACT_BATCH: usize = 4096;

/// [`EXACT_BATCH`] when an indexed record lies in a compressed file, which is decompressed again
/// from its start for each batch: fewer, larger batches, still bounded.
const EXACT_BATCH_COMPRESSED: usize = 1 << 14;

/// Page cache of a writer (in KiB): band rows arrive in hash order, i.e. at random places of the
/// band table, and a larger cache keeps those B-tree pages in memory during a big transaction.
const WRITER_CACHE_KIB: i64 = 64 * 1024;

const SCHEMA: &str = "
CREATE TABLE meta (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE doc (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    path         TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('text', 'empty', 'binary')),
    size         INTEGER NOT NULL,
    mtime_ns     INTEGER NOT NULL,
    indexed_ns   INTEGER NOT NULL,
    content_hash BLOB NOT NULL,
    text_bytes   INTEGER NOT NULL,
    signature    BLOB,
    bands        BLOB,
    record_line   INTEGER,
    record_offset INTEGER
);
CREATE TABLE band (
    band INTEGER NOT NULL,
    hash INTEGER NOT NULL,
    doc  INTEGER NOT NULL,
    PRIMARY KEY (band, hash, doc)
) WITHOUT ROWID;
";

/// What a stored document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Empty,
    Binary,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Empty => "empty",
            Kind::Binary => "binary",
        }
    }

    fn parse(s: &str) -> Option<Kind> {
        match s {
            "text" => Some(Kind::Text),
            "empty" => Some(Kind::Empty),
            "binary" => Some(Kind::Binary),
            _ => None,
        }
    }
}

/// A document's row, as far as change detection needs it.
#[derive(Debug, Clone)]
struct Stored {
    rowid: i64,
    /// Where it was read: the file, or a record's file (see [`crate::source::files::display_id`]).
    path: String,
    /// True for a record of a JSON-lines or Parquet file.
    record: bool,
    kind: Kind,
    size: u64,
    mtime_ns: i64,
    indexed_ns: i64,
    hash: [u8; 16],
    text_bytes: u64,
    /// Loaded only when the caller needs signatures (the scan cache).
    signature: Option<Vec<u32>>,
}

impl Stored {
    fn known(&self) -> Known {
        Known {
            kind: self.kind,
            text_bytes: self.text_bytes,
            signature: self.signature.clone(),
        }
    }

    /// Unchanged without reading it: same size, same mtime, and not modified so close to the
    /// moment it was indexed that a later change could hide in the same clock tick.
    fn fresh(&self, size: u64, mtime_ns: i64) -> bool {
        self.size == size
            && self.mtime_ns == mtime_ns
            && self.mtime_ns.saturating_add(RACY_WINDOW_NS) <= self.indexed_ns
    }
}

/// What an index command did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SyncReport {
    /// Documents in the index afterwards (binary files included: they are remembered so they are
    /// not read again).
    pub documents: u64,
    /// Documents found in the given paths.
    pub seen: u64,
    /// Documents new to the index.
    pub added: u64,
    /// Documents whose content changed.
    pub updated: u64,
    /// Documents found unchanged (by size and mtime, or by content hash after a read).
    pub unchanged: u64,
    /// Documents removed from the index.
    pub removed: u64,
    /// Documents read (and hashed) because they were new or their file's size or mtime changed:
    /// files, and every record of such a JSON-lines or Parquet file.
    pub read: u64,
    /// Documents normalized, shingled and signed (a record whose text is indexed already takes
    /// that row's signature).
    pub signed: u64,
    /// Binary files met among the files read.
    pub skipped_binary: u64,
    /// Files that could not be read (they keep their previous row, if any).
    pub skipped_unreadable: u64,
    /// Records skipped as malformed (not JSON, no text, a duplicate id).
    pub skipped_malformed: u64,
    /// Records longer than the line limit.
    pub skipped_too_large: u64,
    /// What was skipped, sorted by id.
    #[serde(skip)]
    pub skipped: Vec<Skip>,
    /// Wall time.
    #[serde(skip)]
    pub elapsed: Duration,
}

/// Which writing command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Replace everything.
    Build,
    /// Add and update, never delete.
    Add,
    /// Add, update, and delete what disappeared under the given paths.
    Update,
    /// Add and update, and return every signature (the scan cache).
    Cache,
}

/// An open index.
pub struct Index {
    conn: Connection,
    path: PathBuf,
    params: SigningParams,
    fingerprint: String,
    /// The format of the file: older than the current one only when opened for reading.
    format: i64,
    /// The fields its records were read with, once it holds records.
    records: Option<RecordFields>,
}

/// Maps a SQLite error to the library's error for the index at `path`.
fn db(path: &Path) -> impl Fn(rusqlite::Error) -> Error + '_ {
    move |e| {
        let path = path.to_path_buf();
        match e.sqlite_error_code() {
            Some(ErrorCode::NotADatabase) => Error::NotAnIndex {
                path,
                reason: "not a SQLite database".into(),
            },
            Some(ErrorCode::DatabaseCorrupt) => Error::IndexCorrupt {
                path,
                reason: e.to_string(),
            },
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => Error::IndexBusy { path },
            Some(ErrorCode::ReadOnly) => Error::IndexDb {
                path,
                reason: format!("cannot write the index, its file or directory is read-only ({e})"),
            },
            _ => match e {
                // A value of the wrong type or encoding where ndup wrote its own: damage, not a
                // bug to report with SQLite's words alone.
                rusqlite::Error::Utf8Error(..) => Error::IndexCorrupt {
                    path,
                    reason: "a stored text is not valid UTF-8".into(),
                },
                rusqlite::Error::FromSqlConversionFailure(..)
                | rusqlite::Error::InvalidColumnType(..)
                | rusqlite::Error::IntegralValueOutOfRange(..) => Error::IndexCorrupt {
                    path,
                    reason: format!("unexpected value in the database: {e}"),
                },
                _ => Error::IndexDb {
                    path,
                    reason: e.to_string(),
                },
            },
        }
    }
}

fn corrupt(path: &Path, reason: impl Into<String>) -> Error {
    Error::IndexCorrupt {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// What the header of a SQLite file says it is.
enum Header {
    /// No schema at all: a new or empty file, ready to become an index.
    Blank,
    /// An ndup index, of this format.
    Ndup(i64),
}

fn inspect(conn: &Connection, path: &Path) -> Result<Header> {
    // One statement, so one snapshot: another process may be creating the index meanwhile.
    let (app, version, objects): (i32, i64, i64) = conn
        .query_row(
            "SELECT (SELECT application_id FROM pragma_application_id), \
                    (SELECT user_version FROM pragma_user_version), \
                    (SELECT count(*) FROM sqlite_schema)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .map_err(db(path))?;
    if app == APPLICATION_ID {
        if !(OLDEST_READ..=INDEX_FORMAT_VERSION).contains(&version) {
            return Err(Error::IndexVersion {
                path: path.to_path_buf(),
                found: version,
                supported: INDEX_FORMAT_VERSION,
            });
        }
        return Ok(Header::Ndup(version));
    }
    if app == 0 && version == 0 && objects == 0 {
        return Ok(Header::Blank);
    }
    Err(Error::NotAnIndex {
        path: path.to_path_buf(),
        reason: if app == 0 {
            "a SQLite database of another application".into()
        } else {
            format!("a SQLite database of another application (application_id {app:#x})")
        },
    })
}

/// What the `meta` table says.
struct Meta {
    params: SigningParams,
    fingerprint: String,
    records: Option<RecordFields>,
    /// The record files whose last read skipped a record for an id an earlier one has.
    duplicates: BTreeSet<String>,
}

/// The `meta` key of [`Meta::duplicates`], a JSON array of file names.
const DUPLICATES_KEY: &str = "duplicate_ids_in";

/// Reads and checks the `meta` table of an index of format `version`.
fn read_meta(conn: &Connection, path: &Path, version: i64) -> Result<Meta> {
    check_tables(conn, path, version)?;
    let find = |key: &str| -> Result<Option<String>> {
        conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(db(path))
    };
    let get = |key: &str| -> Result<String> {
        find(key)?.ok_or_else(|| corrupt(path, format!("meta has no {key}")))
    };
    let stored = get("format_version")?;
    if stored != version.to_string() {
        return Err(corrupt(
            path,
            format!("meta format_version {stored} does not match the file header"),
        ));
    }
    let params: SigningParams = serde_json::from_str(&get("params")?)
        .map_err(|e| corrupt(path, format!("unreadable parameters: {e}")))?;
    let fingerprint = get("fingerprint")?;
    if fingerprint != params.fingerprint() {
        return Err(corrupt(
            path,
            "the parameters do not match their fingerprint",
        ));
    }
    let records = find("records")?
        .map(|json| {
            serde_json::from_str(&json)
                .map_err(|e| corrupt(path, format!("unreadable record fields: {e}")))
        })
        .transpose()?;
    let duplicates = find(DUPLICATES_KEY)?
        .map(|json| {
            serde_json::from_str(&json)
                .map_err(|e| corrupt(path, format!("unreadable {DUPLICATES_KEY}: {e}")))
        })
        .transpose()?
        .unwrap_or_default();
    Ok(Meta {
        params,
        fingerprint,
        records,
        duplicates,
    })
}

/// The fields the records of an index were read with: kept with it, to read them again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub(crate) struct RecordFields {
    id_field: String,
    text_field: String,
}

impl RecordFields {
    fn of(opts: &RecordOptions) -> Self {
        RecordFields {
            id_field: opts.id_field.clone(),
            text_field: opts.text_field.clone(),
        }
    }

    /// The options that read the records again.
    fn options(&self) -> RecordOptions {
        RecordOptions {
            id_field: self.id_field.clone(),
            text_field: self.text_field.clone(),
            ..RecordOptions::default()
        }
    }

    /// Fails with [`Error::IndexParams`] unless `run` reads records as the index at `path` did.
    fn require(&self, path: &Path, run: &RecordFields) -> Result<()> {
        let mut pieces: Vec<Piece> = Vec::new();
        for (param, built, now) in [
            (Param::IdField, &self.id_field, &run.id_field),
            (Param::TextField, &self.text_field, &run.text_field),
        ] {
            if built != now {
                let lead = if pieces.is_empty() {
                    "records were indexed with "
                } else {
                    "; with "
                };
                pieces.extend([
                    lead.into(),
                    param.into(),
                    format!(" `{built}`, this run uses ").into(),
                    param.into(),
                    format!(" `{now}`").into(),
                ]);
            }
        }
        if pieces.is_empty() {
            return Ok(());
        }
        Err(Error::IndexParams {
            path: path.to_path_buf(),
            differences: Problem::new(pieces),
        })
    }
}

/// The columns format 3 added at the end of the `doc` table.
const RECORD_COLUMNS: [&str; 2] = ["record_line", "record_offset"];

/// The columns of each table, as [`SCHEMA`] creates them (but for [`RECORD_COLUMNS`]).
const TABLES: [(&str, &[&str]); 3] = [
    ("meta", &["key", "value"]),
    (
        "doc",
        &[
            "id",
            "name",
            "path",
            "kind",
            "size",
            "mtime_ns",
            "indexed_ns",
            "content_hash",
            "text_bytes",
            "signature",
            "bands",
        ],
    ),
    ("band", &["band", "hash", "doc"]),
];

/// Checks that the tables the commands use are there with their columns, so a damaged or
/// tampered schema is reported as such when the index is opened, not as an SQL error in the
/// middle of a command.
fn check_tables(conn: &Connection, path: &Path, version: i64) -> Result<()> {
    let mut st = conn
        .prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")
        .map_err(db(path))?;
    for (table, expected) in TABLES {
        let columns = st
            .query_map([table], |r| r.get::<_, String>(0))
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<String>>>())
            .map_err(db(path))?;
        if columns.is_empty() {
            return Err(corrupt(path, format!("the {table} table is missing")));
        }
        let mut expected = expected.to_vec();
        if table == "doc" && version >= 3 {
            expected.extend(RECORD_COLUMNS);
        }
        if columns != expected {
            return Err(corrupt(
                path,
                format!("the {table} table does not have the columns ndup writes"),
            ));
        }
    }
    Ok(())
}

fn write_meta(conn: &Connection, path: &Path, params: &SigningParams) -> Result<()> {
    set_meta(
        conn,
        path,
        &[
            ("format_version", INDEX_FORMAT_VERSION.to_string()),
            ("ndup_version", env!("CARGO_PKG_VERSION").to_string()),
            (
                "params",
                serde_json::to_string(params).expect("parameters serialize"),
            ),
            ("fingerprint", params.fingerprint()),
        ],
    )
}

/// Writes these `meta` entries.
fn set_meta(conn: &Connection, path: &Path, entries: &[(&str, String)]) -> Result<()> {
    for (k, v) in entries {
        conn.execute(
            "INSERT INTO meta(key, value) VALUES (?1, ?2)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            params![k, v],
        )
        .map_err(db(path))?;
    }
    Ok(())
}

/// Runs `f` in an `IMMEDIATE` transaction: committed when it succeeds, rolled back otherwise.
fn immediately(conn: &Connection, path: &Path, f: impl FnOnce() -> Result<()>) -> Result<()> {
    conn.execute_batch("BEGIN IMMEDIATE").map_err(db(path))?;
    match f() {
        Ok(()) => conn.execute_batch("COMMIT").map_err(db(path)),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

/// Brings an index of an older format to the current one, unless another process did it first:
/// format 2 gets the record columns, null for the files it holds.
fn upgrade(conn: &Connection, path: &Path) -> Result<()> {
    immediately(conn, path, || {
        let Header::Ndup(version) = inspect(conn, path)? else {
            return Ok(());
        };
        if version == INDEX_FORMAT_VERSION {
            return Ok(());
        }
        read_meta(conn, path, version)?;
        for column in RECORD_COLUMNS {
            conn.execute_batch(&format!("ALTER TABLE doc ADD COLUMN {column} INTEGER"))
                .map_err(db(path))?;
        }
        conn.pragma_update(None, "user_version", INDEX_FORMAT_VERSION)
            .map_err(db(path))?;
        set_meta(
            conn,
            path,
            &[
                ("format_version", INDEX_FORMAT_VERSION.to_string()),
                ("ndup_version", env!("CARGO_PKG_VERSION").to_string()),
            ],
        )
    })
}

fn connect(path: &Path, flags: OpenFlags) -> Result<Connection> {
    let conn = Connection::open_with_flags(path, flags | OpenFlags::SQLITE_OPEN_NO_MUTEX).map_err(
        |e| Error::IndexDb {
            path: path.to_path_buf(),
            reason: format!("cannot open the index: {e}"),
        },
    )?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(db(path))?;
    Ok(conn)
}

fn not_a_directory(path: &Path) -> Result<()> {
    let reason = match fs::metadata(path) {
        // Not `NotAnIndex`: its advice (remove the file and rebuild) is wrong for a directory,
        // which is most likely a corpus given in the index's place.
        Ok(m) if m.is_dir() => "not an ndup index (a directory)",
        // Opening a FIFO would wait for a writer forever; SQLite cannot use a device.
        Ok(m) if !m.is_file() => "not an ndup index (not a regular file)",
        _ => return Ok(()),
    };
    Err(Error::BadInput {
        path: path.to_path_buf(),
        reason: reason.into(),
    })
}

/// Fails with the operating system's reason when `path` exists but cannot be read, which
/// SQLite would only call "unable to open database file".
fn readable(path: &Path) -> Result<()> {
    match fs::File::open(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::IndexDb {
            path: path.to_path_buf(),
            reason: format!("cannot read the index: {}", crate::model::io_reason(&e)),
        }),
        _ => Ok(()),
    }
}

/// Opens `path` for reading only, even where SQLite cannot create the `-wal` and `-shm` files a
/// WAL database needs beside it (a read-only directory, or a file another user owns in one).
///
/// A plain read-only connection comes first: it shares the writers' locks, so a query sees one
/// committed state while a writer works. Only when its first read fails because those files
/// cannot be made is the file opened as immutable, which reads the main file alone, without
/// locks. That is right for what it serves, an index nobody writes (a directory the reader
/// cannot write is one where at most another user writes); a writer of that other user copying
/// its log into the file at that very moment could disturb the read, a risk the plain
/// connection avoids wherever it can work. A `-wal` that holds transactions not yet copied into
/// the main file forbids the immutable read: the index would silently be read as it was before
/// them.
fn connect_read_only(path: &Path) -> Result<Connection> {
    let conn = connect(path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let probe = conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| {
        r.get::<_, i64>(0)
    });
    match probe {
        Ok(_) => return Ok(conn),
        Err(e)
            if matches!(
                e.sqlite_error_code(),
                Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen)
            ) => {}
        Err(e) => return Err(db(path)(e)),
    }
    drop(conn);
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    if fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
        return Err(Error::IndexDb {
            path: path.to_path_buf(),
            reason: format!(
                "cannot read the index: its write-ahead log {} holds changes that cannot be read \
                 without creating a -shm file beside it, and its directory is read-only; make \
                 the directory writable, or run a command that writes the index once, which \
                 merges the log into it",
                Path::new(&wal).display()
            ),
        });
    }
    let conn = connect(
        Path::new(&immutable_uri(path)),
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
    )
    .map_err(|e| match e {
        Error::IndexDb { reason, .. } => Error::IndexDb {
            path: path.to_path_buf(),
            reason,
        },
        other => other,
    })?;
    Ok(conn)
}

/// The `file:` URI that opens `path` read-only and immutable. Every byte outside a safe set is
/// percent-encoded, so `?`, `#` and `%` in a file name stay part of the name. An empty
/// authority (`file://` then an absolute path) keeps a path that starts with `//` a path.
fn immutable_uri(path: &Path) -> String {
    let abs = absolute(path);
    #[cfg(unix)]
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(abs.as_os_str()).to_vec();
    #[cfg(not(unix))]
    let bytes = abs.to_string_lossy().replace('\\', "/").into_bytes();
    let mut uri = String::from("file://");
    if !bytes.starts_with(b"/") {
        // A Windows path (`C:/...`) is written after a slash.
        uri.push('/');
    }
    for b in bytes {
        if b.is_ascii_alphanumeric() || b"/-._~:".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str("?mode=ro&immutable=1");
    uri
}

fn now_ns() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i64,
        Err(e) => -(e.duration().as_nanos() as i64),
    }
}

fn mtime_ns(md: &fs::Metadata) -> i64 {
    match md.modified() {
        Ok(t) => match t.duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_nanos() as i64,
            Err(e) => -(e.duration().as_nanos() as i64),
        },
        // No mtime on this platform: the largest time is always within the racy window, which
        // forces a content-hash check every time.
        Err(_) => i64::MAX,
    }
}

fn sig_to_blob(sig: &[u32]) -> Vec<u8> {
    sig.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn blob_to_sig(blob: &[u8]) -> Vec<u32> {
    blob.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect()
}

fn bands_of(sig: &[u32], bands: usize, rows: usize) -> Vec<u64> {
    (0..bands)
        .map(|b| band_hash(&sig[b * rows..(b + 1) * rows]))
        .collect()
}

fn bands_to_blob(bands: &[u64]) -> Vec<u8> {
    bands.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn blob_to_bands(blob: &[u8]) -> Vec<u64> {
    blob.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}

/// What the scan cache knows of a document once it is up to date.
#[derive(Debug, Clone)]
struct Known {
    kind: Kind,
    text_bytes: u64,
    signature: Option<Vec<u32>>,
}

fn binary_skip(id: &str) -> Skip {
    Skip::binary(id.to_string())
}

/// The absolute form of a path, without resolving symbolic links (the file is read through the
/// same path later).
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

fn check_sig(path: &Path, name: &str, blob: &[u8], params: &SigningParams) -> Result<Vec<u32>> {
    if blob.len() != params.num_perm * 4 {
        return Err(corrupt(
            path,
            format!(
                "{name}: signature of {} bytes, expected {}",
                blob.len(),
                params.num_perm * 4
            ),
        ));
    }
    Ok(blob_to_sig(blob))
}

impl Index {
    /// Opens an existing index for reading and writing. Any parameters are accepted: commands
    /// that sign check them with [`Index::require`].
    pub fn open(path: &Path) -> Result<Index> {
        Self::open_with(path, Some(OpenFlags::SQLITE_OPEN_READ_WRITE))
    }

    /// Opens an existing index for reading only (queries). It never writes, and works on a
    /// read-only file and in a read-only directory.
    pub fn open_read_only(path: &Path) -> Result<Index> {
        Self::open_with(path, None)
    }

    fn open_with(path: &Path, flags: Option<OpenFlags>) -> Result<Index> {
        if !path.exists() {
            return Err(Error::NoIndex {
                path: path.to_path_buf(),
            });
        }
        not_a_directory(path)?;
        readable(path)?;
        let conn = match flags {
            Some(flags) => connect(path, flags)?,
            None => connect_read_only(path)?,
        };
        let mut format = match inspect(&conn, path)? {
            Header::Ndup(format) => format,
            Header::Blank => {
                return Err(Error::NotAnIndex {
                    path: path.to_path_buf(),
                    reason: "an empty file".into(),
                });
            }
        };
        if flags.is_some() && format < INDEX_FORMAT_VERSION {
            upgrade(&conn, path)?;
            format = INDEX_FORMAT_VERSION;
        }
        Self::with_meta(conn, path, format)
    }

    fn with_meta(conn: Connection, path: &Path, format: i64) -> Result<Index> {
        let meta = read_meta(&conn, path, format)?;
        Ok(Index {
            conn,
            path: path.to_path_buf(),
            params: meta.params,
            fingerprint: meta.fingerprint,
            format,
            records: meta.records,
        })
    }

    /// Opens the index at `path`, creating it with `params` when the file does not exist or is
    /// empty. An existing index keeps its own parameters (see [`Index::require`]); a file that is
    /// not an index is an error and is left untouched.
    pub fn open_or_create(path: &Path, params: &SigningParams) -> Result<Index> {
        not_a_directory(path)?;
        readable(path)?;
        let conn = connect(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        )?;
        if let Header::Blank = inspect(&conn, path)? {
            // WAL is a property of the file: set once, it lets readers work beside a writer.
            // Setting it does not wait for the busy timeout when another process holds the
            // file, so this waits as a write would.
            let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
            let mode: String = loop {
                match conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0)) {
                    Err(e)
                        if e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy)
                            && std::time::Instant::now() < deadline =>
                    {
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    r => break r.map_err(db(path))?,
                }
            };
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(Error::IndexDb {
                    path: path.to_path_buf(),
                    reason: format!("cannot use write-ahead logging (journal mode {mode})"),
                });
            }
            Self::create_schema(&conn, path, params)?;
        }
        if matches!(inspect(&conn, path)?, Header::Ndup(v) if v < INDEX_FORMAT_VERSION) {
            upgrade(&conn, path)?;
        }
        Self::with_meta(conn, path, INDEX_FORMAT_VERSION)
    }

    /// Writes the schema in one transaction, unless another process did it first.
    fn create_schema(conn: &Connection, path: &Path, params: &SigningParams) -> Result<()> {
        immediately(conn, path, || {
            // Another process may have created the index while this one waited for the lock.
            if let Header::Ndup(_) = inspect(conn, path)? {
                return Ok(());
            }
            conn.pragma_update(None, "application_id", APPLICATION_ID)
                .map_err(db(path))?;
            conn.pragma_update(None, "user_version", INDEX_FORMAT_VERSION)
                .map_err(db(path))?;
            conn.execute_batch(SCHEMA).map_err(db(path))?;
            write_meta(conn, path, params)
        })
    }

    /// The index file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The parameters the index was built with.
    pub fn params(&self) -> &SigningParams {
        &self.params
    }

    /// The fingerprint of [`Index::params`].
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// Number of documents in the index.
    pub fn len(&self) -> Result<u64> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM doc", [], |r| r.get(0))
            .map_err(db(&self.path))?;
        Ok(n as u64)
    }

    /// True when the index holds no document.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Fails with [`Error::IndexParams`], naming what differs, unless the index was built with
    /// `run`'s parameters.
    pub fn require(&self, run: &SigningParams) -> Result<()> {
        require_params(&self.path, &self.params, run)
    }
}

/// Fails with [`Error::IndexParams`], naming what differs, unless the index at `path`, built with
/// `built`, can serve a run with `run`.
pub(crate) fn require_params(
    path: &Path,
    built: &SigningParams,
    run: &SigningParams,
) -> Result<()> {
    built
        .check(run, "index was built with ", ", this run uses ")
        .map_err(|differences| Error::IndexParams {
            path: path.to_path_buf(),
            differences,
        })
}

fn count_docs(conn: &Connection, path: &Path) -> Result<u64> {
    let n: i64 = conn
        .query_row("SELECT count(*) FROM doc", [], |r| r.get(0))
        .map_err(db(path))?;
    Ok(n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::find::Pipeline;
    use crate::find::config::ScanConfig;
    use crate::find::config::SignatureConfig;
    use crate::sim::jaccard;
    use crate::source::Source;
    use std::time::Duration;

    /// Deterministic text of `n` words from a vocabulary of made-up words.
    fn text(seed: u64, n: usize) -> String {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                format!("w{}", x % 5000)
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Writes a file and dates it an hour back, out of the racy window.
    fn write_old(path: &Path, content: &str) {
        fs::write(path, content).unwrap();
        let f = fs::File::options().write(true).open(path).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(3600))
            .unwrap();
    }

    fn pipeline() -> Pipeline {
        Pipeline::new(ScanConfig::default()).unwrap()
    }

    fn params_of(c: &ScanConfig) -> SigningParams {
        SigningParams::from_config(c)
    }

    #[test]
    fn blobs_round_trip() {
        let sig = vec![0u32, 1, u32::MAX, 0xDEAD_BEEF];
        assert_eq!(blob_to_sig(&sig_to_blob(&sig)), sig);
        let bands = vec![0u64, u64::MAX, 42];
        assert_eq!(blob_to_bands(&bands_to_blob(&bands)), bands);
    }

    #[test]
    fn foreign_and_blank_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = params_of(&ScanConfig::default());
        // An empty file becomes an index.
        let blank = dir.path().join("blank.db");
        fs::write(&blank, b"").unwrap();
        let idx = Index::open_or_create(&blank, &p).unwrap();
        assert_eq!(idx.len().unwrap(), 0);
        assert_eq!(idx.params(), &p);
        drop(idx);
        assert!(Index::open_read_only(&blank).is_ok());
        // Another application's database is refused and left alone.
        let foreign = dir.path().join("foreign.db");
        Connection::open(&foreign)
            .unwrap()
            .execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
            .unwrap();
        let before = fs::read(&foreign).unwrap();
        let e = Index::open_or_create(&foreign, &p).err().unwrap();
        assert!(matches!(e, Error::NotAnIndex { .. }), "{e}");
        assert_eq!(fs::read(&foreign).unwrap(), before);
        // Not SQLite at all.
        let text = dir.path().join("notes.txt");
        fs::write(&text, "just some notes\n").unwrap();
        let e = Index::open(&text).err().unwrap();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: not an ndup index (not a SQLite database), so it is left untouched; use \
                 another file, or remove this one and rebuild the index",
                text.display()
            )
        );
        // A newer format.
        let newer = dir.path().join("newer.db");
        drop(Index::open_or_create(&newer, &p).unwrap());
        Connection::open(&newer)
            .unwrap()
            .pragma_update(None, "user_version", 99)
            .unwrap();
        assert!(matches!(
            Index::open(&newer).err().unwrap(),
            Error::IndexVersion { found: 99, .. }
        ));
        assert!(matches!(
            Index::open(&dir.path().join("none.db")).err().unwrap(),
            Error::NoIndex { .. }
        ));
    }

    #[test]
    fn a_damaged_index_is_corrupt_when_opened() {
        let dir = tempfile::tempdir().unwrap();
        let p = params_of(&ScanConfig::default());
        let damages = [
            (
                "UPDATE meta SET value = CAST(x'7bff' AS TEXT) WHERE key = 'params'",
                "a stored text is not valid UTF-8",
            ),
            (
                "ALTER TABLE doc DROP COLUMN bands",
                "the doc table does not have the columns",
            ),
            ("DROP TABLE band", "the band table is missing"),
            ("DROP TABLE meta", "the meta table is missing"),
        ];
        for (k, (sql, reason)) in damages.into_iter().enumerate() {
            let file = dir.path().join(format!("i{k}.db"));
            drop(Index::open_or_create(&file, &p).unwrap());
            Connection::open(&file).unwrap().execute_batch(sql).unwrap();
            for e in [
                Index::open(&file).err().unwrap(),
                Index::open_read_only(&file).err().unwrap(),
                Index::open_or_create(&file, &p).err().unwrap(),
            ] {
                assert!(matches!(e, Error::IndexCorrupt { .. }), "{sql}: {e}");
                let msg = e.to_string();
                assert!(msg.contains(reason), "{sql}: {msg}");
                assert!(msg.ends_with("remove it and rebuild it"), "{msg}");
            }
        }
    }

    #[test]
    fn the_immutable_uri_keeps_every_file_name() {
        assert_eq!(
            immutable_uri(Path::new("/tmp/a b?c#d%e.db")),
            "file:///tmp/a%20b%3Fc%23d%25e.db?mode=ro&immutable=1"
        );
        // SQLite reads the name back as it was written.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("we?ird #%20name é.db");
        let p = params_of(&ScanConfig::default());
        drop(Index::open_or_create(&file, &p).unwrap());
        let conn = connect(
            Path::new(&immutable_uri(&file)),
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
        )
        .unwrap();
        assert_eq!(
            read_meta(&conn, &file, INDEX_FORMAT_VERSION)
                .unwrap()
                .params,
            p
        );
        // And writes nothing.
        assert!(conn.execute_batch("CREATE TABLE t(x)").is_err());
    }

    #[test]
    fn update_reads_and_signs_only_what_changed() {
        let dir = tempfile::tempdir().unwrap();
        let corpus = dir.path().join("c");
        fs::create_dir(&corpus).unwrap();
        for i in 0..5 {
            write_old(&corpus.join(format!("d{i}.txt")), &text(i, 200));
        }
        let pipe = pipeline();
        let db = dir.path().join("i.db");
        let mut idx = Index::open_or_create(&db, &params_of(pipe.config())).unwrap();
        let paths = Source::Files(vec![corpus.clone()]);
        let r = idx.build(&pipe, &paths).unwrap();
        assert_eq!((r.added, r.read, r.signed, r.documents), (5, 5, 5, 5));

        // Nothing changed: nothing is read.
        let r = idx.update(&pipe, &paths).unwrap();
        assert_eq!((r.unchanged, r.read, r.signed), (5, 0, 0));

        // A new mtime with the same content: read and hashed, not signed.
        write_old(&corpus.join("d0.txt"), &text(0, 200));
        let f = fs::File::options()
            .write(true)
            .open(corpus.join("d0.txt"))
            .unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(1800))
            .unwrap();
        let r = idx.update(&pipe, &paths).unwrap();
        assert_eq!((r.unchanged, r.read, r.signed, r.updated), (5, 1, 0, 0));

        // One edit, one deletion, one addition.
        write_old(&corpus.join("d1.txt"), &text(100, 200));
        fs::remove_file(corpus.join("d2.txt")).unwrap();
        write_old(&corpus.join("d9.txt"), &text(9, 200));
        let r = idx.update(&pipe, &paths).unwrap();
        assert_eq!(
            (r.added, r.updated, r.removed, r.read, r.signed, r.documents),
            (1, 1, 1, 2, 2, 5)
        );

        // `add` never removes; `remove` does, all or nothing.
        let id = |n: &str| corpus.join(n).to_string_lossy().into_owned();
        let e = idx.remove(&[id("d0.txt"), id("nope.txt")]).unwrap_err();
        assert!(matches!(e, Error::NotIndexed { .. }));
        assert_eq!(idx.len().unwrap(), 5);
        let r = idx.remove(&[id("d0.txt")]).unwrap();
        assert_eq!((r.removed, r.documents), (1, 4));
        let band_rows: i64 = idx
            .conn
            .query_row("SELECT count(*) FROM band", [], |r| r.get(0))
            .unwrap();
        assert_eq!(band_rows, 4 * SignatureConfig::default().lsh.bands as i64);
    }

    #[test]
    fn a_racy_file_is_hashed_again() {
        let dir = tempfile::tempdir().unwrap();
        let doc = dir.path().join("new.txt");
        // Written just now: within the racy window of the moment it is indexed.
        fs::write(&doc, text(1, 50)).unwrap();
        let pipe = pipeline();
        let mut idx =
            Index::open_or_create(&dir.path().join("i.db"), &params_of(pipe.config())).unwrap();
        let doc = Source::Files(vec![doc]);
        idx.add(&pipe, &doc).unwrap();
        let r = idx.add(&pipe, &doc).unwrap();
        assert_eq!((r.read, r.signed, r.unchanged), (1, 0, 1));
    }

    #[test]
    fn the_cache_gives_the_same_corpus_as_signing() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..4 {
            write_old(&dir.path().join(format!("d{i}.txt")), &text(i, 100));
        }
        write_old(&dir.path().join("empty.txt"), "  ");
        fs::write(dir.path().join("bin.dat"), b"a\0b").unwrap();
        let pipe = pipeline();
        let paths = [dir.path().to_path_buf()];
        let plain = pipe.sign_files(&paths).unwrap();
        let db = tempfile::tempdir().unwrap();
        let mut idx =
            Index::open_or_create(&db.path().join("i.db"), &params_of(pipe.config())).unwrap();
        for (signed, cached) in [(5, 0), (0, 5)] {
            let c = idx.sign_files(&pipe, &paths).unwrap();
            assert_eq!(c.documents, plain.documents);
            assert_eq!(c.signatures, plain.signatures);
            assert_eq!(c.signed, plain.signed);
            assert_eq!(c.skipped, plain.skipped);
            assert_eq!(
                (c.stats.signed, c.stats.cached),
                (Some(signed), Some(cached))
            );
            assert_eq!(
                (
                    c.stats.documents,
                    c.stats.empty,
                    c.stats.bytes,
                    c.stats.skipped_binary
                ),
                (
                    plain.stats.documents,
                    plain.stats.empty,
                    plain.stats.bytes,
                    plain.stats.skipped_binary
                )
            );
        }
    }

    #[test]
    fn query_finds_near_duplicates_and_not_itself() {
        let dir = tempfile::tempdir().unwrap();
        let base = text(7, 300);
        write_old(&dir.path().join("orig.txt"), &base);
        // Two words of 300 changed: Jaccard near 0.95.
        let edited = base.replacen("w", "x", 2);
        write_old(&dir.path().join("copy.txt"), &edited);
        write_old(&dir.path().join("other.txt"), &text(8, 300));
        let config = ScanConfig {
            verify: crate::verify::VerifyMode::Exact,
            ..Default::default()
        };
        let pipe = Pipeline::new(config).unwrap();
        let db = dir.path().join("i.db");
        let mut idx = Index::open_or_create(&db, &params_of(pipe.config())).unwrap();
        idx.build(&pipe, &Source::Files(vec![dir.path().to_path_buf()]))
            .unwrap();
        let idx = Index::open_read_only(&db).unwrap();
        let q = |id: &str, source: QuerySource| QueryDoc {
            id: id.into(),
            source,
        };
        let orig = dir.path().join("orig.txt");
        let docs = [
            q(&orig.to_string_lossy(), QuerySource::File(orig.clone())),
            q("-", QuerySource::Text(edited.clone())),
        ];
        let r = idx.query(&pipe, &docs, None).unwrap();
        assert_eq!(r.queries.len(), 2);
        let name = |f: &str| dir.path().join(f).to_string_lossy().into_owned();
        // The file itself is not its own match; the edited copy is, with its exact Jaccard.
        let m0: Vec<_> = r.matches.iter().filter(|m| m.query == 0).collect();
        assert_eq!(m0.len(), 1);
        assert_eq!(m0[0].indexed, name("copy.txt"));
        let exact = jaccard(&pipe.shingle_set(&base), &pipe.shingle_set(&edited));
        assert_eq!(m0[0].jaccard, Some(exact));
        // Standard input matching both the copy (identical) and the original.
        let m1: Vec<_> = r.matches.iter().filter(|m| m.query == 1).collect();
        assert_eq!(m1.len(), 2);
        assert_eq!(m1[0].indexed, name("copy.txt"));
        assert_eq!(m1[0].jaccard, Some(1.0));
        let top = idx.query(&pipe, &docs[1..], Some(1)).unwrap();
        assert_eq!(top.matches.len(), 1);
        assert_eq!(top.matches[0].indexed, name("copy.txt"));
    }

    /// A JSON-lines corpus of records `r{i}`, one per line, dated an hour back.
    fn write_records(path: &Path, texts: &[(String, String)]) {
        let lines: Vec<String> = texts
            .iter()
            .map(|(id, t)| serde_json::json!({"id": id, "text": t}).to_string() + "\n")
            .collect();
        write_old(path, &lines.concat());
    }

    fn records_config(verify: crate::verify::VerifyMode) -> Pipeline {
        Pipeline::new(ScanConfig {
            verify,
            ..Default::default()
        })
        .unwrap()
    }

    #[test]
    fn records_are_indexed_and_updated_by_id_and_text() {
        let dir = tempfile::tempdir().unwrap();
        let corpus = dir.path().join("c.jsonl");
        let mut texts: Vec<(String, String)> =
            (0..10).map(|i| (format!("r{i}"), text(i, 150))).collect();
        write_records(&corpus, &texts);
        let pipe = pipeline();
        let mut idx =
            Index::open_or_create(&dir.path().join("i.db"), &params_of(pipe.config())).unwrap();
        let source = Source::Records(vec![corpus.clone()]);
        let r = idx.build(&pipe, &source).unwrap();
        assert_eq!((r.added, r.read, r.signed, r.documents), (10, 10, 10, 10));
        // The file did not change: not read.
        let r = idx.update(&pipe, &source).unwrap();
        assert_eq!((r.unchanged, r.read, r.signed, r.seen), (10, 0, 0, 10));

        // One record edited, one deleted, one appended: the file is read, and only the two new
        // texts are signed.
        texts[3].1 = text(103, 150);
        texts.remove(5);
        texts.push(("r10".into(), text(10, 150)));
        write_records(&corpus, &texts);
        let r = idx.update(&pipe, &source).unwrap();
        assert_eq!(
            (r.added, r.updated, r.unchanged, r.removed, r.read, r.signed),
            (1, 1, 8, 1, 10, 2)
        );
        assert_eq!(r.documents, 10);

        // The rows are those of a fresh build, where each record now is.
        let rows = |idx: &Index| -> Vec<(String, i64, Vec<u8>)> {
            let mut st = idx
                .conn
                .prepare("SELECT name, record_line, signature FROM doc ORDER BY name")
                .unwrap();
            st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .unwrap()
                .map(|r| r.unwrap())
                .collect()
        };
        let mut fresh =
            Index::open_or_create(&dir.path().join("j.db"), &params_of(pipe.config())).unwrap();
        fresh.build(&pipe, &source).unwrap();
        assert_eq!(rows(&idx), rows(&fresh));

        // A text moved to a new id takes the signature already indexed: nothing is signed.
        texts[0].0 = "renamed".into();
        write_records(&corpus, &texts);
        let r = idx.update(&pipe, &source).unwrap();
        assert_eq!((r.added, r.removed, r.signed), (1, 1, 0));
    }

    #[test]
    fn records_are_read_again_for_exact_verification() {
        let dir = tempfile::tempdir().unwrap();
        let corpus = dir.path().join("c.jsonl");
        let base = text(7, 300);
        let texts = vec![
            ("a".to_string(), base.clone()),
            ("b".to_string(), text(8, 300)),
        ];
        write_records(&corpus, &texts);
        let pipe = records_config(crate::verify::VerifyMode::Exact);
        let db = dir.path().join("i.db");
        let mut idx = Index::open_or_create(&db, &params_of(pipe.config())).unwrap();
        idx.build(&pipe, &Source::Records(vec![corpus.clone()]))
            .unwrap();
        let edited = base.replacen("w", "x", 2);
        let q = [QueryDoc {
            id: "q".into(),
            source: QuerySource::Text(edited.clone()),
        }];
        let idx = Index::open_read_only(&db).unwrap();
        let r = idx.query(&pipe, &q, None).unwrap();
        assert_eq!(r.matches.len(), 1, "{:?}", r.matches);
        assert_eq!(r.matches[0].indexed, "a");
        let exact = jaccard(&pipe.shingle_set(&base), &pipe.shingle_set(&edited));
        assert_eq!(r.matches[0].jaccard, Some(exact));
        assert!(r.skipped.is_empty());

        // Record a's text changed since: the estimate decides, and the skip says why.
        let moved = vec![
            ("b".to_string(), text(8, 300)),
            ("a".to_string(), text(9, 300)),
        ];
        write_records(&corpus, &moved);
        let r = idx.query(&pipe, &q, None).unwrap();
        assert_eq!(r.matches[0].jaccard, None);
        assert_eq!(r.skipped.len(), 1);
        assert!(
            r.skipped[0].reason.contains("changed since it was indexed"),
            "{:?}",
            r.skipped
        );
    }

    #[test]
    fn records_need_the_fields_they_were_indexed_with_and_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let corpus = dir.path().join("c.jsonl");
        write_records(&corpus, &[("a".into(), text(1, 50))]);
        let pipe = pipeline();
        let mut idx =
            Index::open_or_create(&dir.path().join("i.db"), &params_of(pipe.config())).unwrap();
        let source = Source::Records(vec![corpus.clone()]);
        idx.build(&pipe, &source).unwrap();
        let mut config = ScanConfig::default();
        config.input.records.text_field = "body".into();
        let other = Pipeline::new(config).unwrap();
        let e = idx.add(&other, &source).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: records were indexed with text_field `text`, this run uses text_field \
                 `body`; use the same parameters, or build the index again",
                dir.path().join("i.db").display()
            )
        );
        // A build starts afresh, with the new fields.
        assert!(idx.build(&other, &source).is_ok());
        let e = idx
            .add(&pipe, &Source::Records(vec![PathBuf::from("-")]))
            .unwrap_err();
        assert!(
            e.to_string().contains("standard input cannot be indexed"),
            "{e}"
        );
    }

    #[test]
    fn a_format_2_index_is_read_and_upgraded_by_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let doc = dir.path().join("d.txt");
        write_old(&doc, &text(3, 100));
        let pipe = pipeline();
        let db = dir.path().join("i.db");
        let mut idx = Index::open_or_create(&db, &params_of(pipe.config())).unwrap();
        idx.build(&pipe, &Source::Files(vec![doc.clone()])).unwrap();
        drop(idx);
        // What format 2 wrote.
        Connection::open(&db)
            .unwrap()
            .execute_batch(
                "ALTER TABLE doc DROP COLUMN record_line; ALTER TABLE doc DROP COLUMN record_offset;
                 PRAGMA user_version = 2; UPDATE meta SET value = '2' WHERE key = 'format_version';",
            )
            .unwrap();
        let q = [QueryDoc {
            id: "-".into(),
            source: QuerySource::Text(text(3, 100)),
        }];
        let read = Index::open_read_only(&db).unwrap();
        assert_eq!(read.format, 2);
        assert_eq!(read.query(&pipe, &q, None).unwrap().matches.len(), 1);
        drop(read);
        let mut idx = Index::open(&db).unwrap();
        assert_eq!(idx.format, INDEX_FORMAT_VERSION);
        let r = idx.update(&pipe, &Source::Files(vec![doc])).unwrap();
        assert_eq!((r.unchanged, r.read), (1, 0));
        let version: i64 = idx
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(version, INDEX_FORMAT_VERSION);
    }
}
