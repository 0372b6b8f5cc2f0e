//! Parquet corpora: one document per row, the text and the id read from two columns (dotted
//! paths into nested structs, `meta.id`), streamed a row group at a time so that a shard of any
//! size is read in bounded memory, whatever compression the writer used.
//!
//! A row is a record as a JSON line is: its id is the id column's value (a string as is, an
//! integer as printed), or its row number (from 1, as a line number) when the column is null or
//! missing; a null text makes the row malformed, and it is skipped and reported. Rows are read
//! again by their position ([`read_rows_at`]) for exact verification and for `ndup dedup`, which
//! writes the kept rows with every column and the input's schema ([`write_kept`]).
//!
//! A directory is a Parquet dataset when the files under it (walked recursively, in sorted
//! order) are `.parquet` files. As Spark, Hive and pyarrow do, the walk leaves out every file
//! and directory whose name starts with `_` or `.`: the `_SUCCESS` and `.crc` files Spark and
//! Hadoop leave beside the shards, and the `_temporary` directory of a job still writing (or
//! one that failed), whose shards would be read twice once the job commits them.
//!
//! **Files from strangers.** Every file is checked before the Parquet crate decodes it: the
//! `PAR1` magic at both ends, a footer no longer than the file (and [`MAX_FOOTER_BYTES`]), a
//! schema nested at most [`MAX_NESTING`] levels deep (the crate builds the schema tree
//! recursively, so a deeper one would overflow the stack), list lengths and row group counts
//! the footer can hold, column chunks that lie inside the file. A file that is not Parquet, or
//! that ndup cannot read as asked (deep schema, no text column, a column of the wrong type), is
//! [`Error::BadInput`]: skipped with the reason. A file whose footer or pages are damaged is
//! [`Error::IncompleteInput`], after the rows read before the damage were handed on: the caller
//! fails unless partial input is allowed, as for a truncated gzip stream.
//!
//! **Memory.** Rows are read a row group at a time, in batches of a number of rows chosen from
//! the row group's metadata so that a batch holds about [`BATCH_BYTES`] of decoded text (a
//! dictionary page counting as the size of one row, since any row may repeat its longest
//! value); the text and string ids are read as 64-bit-offset strings, so no batch overflows. A
//! row whose text and id together exceed [`RecordOptions::max_line_bytes`] is
//! [`RowError::TooLarge`] and its text is never copied.

use std::fs::File;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema};
use parquet::arrow::ArrowWriter;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader,
    ParquetRecordBatchReaderBuilder, RowSelection, RowSelector,
};
use parquet::basic::{Compression, Encoding};
use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData, ParquetMetaDataReader};
use parquet::file::properties::WriterProperties;

use crate::error::{Error, Result};
use crate::source::records::{Record, RecordOptions};

/// The most rows in a read batch (and in a batch of records handed on).
pub(crate) const BATCH_ROWS: usize = 8192;

/// About this many bytes of decoded column data per read batch (see the module's
/// documentation); a batch holds at least one row.
pub const BATCH_BYTES: u64 = 64 << 20;

/// Records are handed on once they hold this much text and ids (or [`BATCH_ROWS`] rows).
const HAND_ON_BYTES: usize = 8 << 20;

/// The deepest schema read: a column at most this many levels down (`meta.id` is 2).
pub const MAX_NESTING: usize = 64;

/// The longest footer read: real ones are kilobytes, or a few megabytes for thousands of
/// columns.
pub const MAX_FOOTER_BYTES: u64 = 128 << 20;

/// The most row groups a file may have (the format numbers them with 16-bit ordinals).
const MAX_ROW_GROUPS: u64 = 1 << 15;

/// `ndup dedup` writes a row group once this many bytes of it are buffered.
const WRITE_FLUSH_BYTES: usize = 64 << 20;

/// Why a row is not a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowError {
    /// A malformed row (its text is null): the reason.
    Malformed(String),
    /// A row longer than the limit, skipped as too large: the reason.
    TooLarge(String),
}

impl std::fmt::Display for RowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RowError::Malformed(why) | RowError::TooLarge(why) => f.write_str(why),
        }
    }
}

/// What a row holds: a record, or why it is not one.
pub type Row = std::result::Result<Record, RowError>;

/// True when `path` names a Parquet file by its extension.
pub fn is_parquet_path(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

/// The Parquet files of `path`: itself when it is a `.parquet` file; for a directory, the files
/// under it when it is a Parquet dataset (see the module's documentation), sorted; `None`
/// otherwise. A directory whose only shards lie under names left out (a `_temporary` of a job
/// still writing) is a dataset with no files: `Some` of none, for the caller to refuse by name
/// rather than read it as a tree of documents.
pub fn dataset_files(path: &Path) -> Option<Vec<PathBuf>> {
    // `-` is standard input, whatever the current directory holds.
    if crate::source::records::is_stdin(path) {
        return None;
    }
    if !path.is_dir() {
        return is_parquet_path(path).then(|| vec![path.to_path_buf()]);
    }
    let left_out = |name: &str| name.starts_with('.') || name.starts_with('_');
    // Walked by hand (symbolic links not followed), stopping at the first file that is not
    // Parquet: deciding costs next to nothing for an ordinary tree of documents.
    let mut files = Vec::new();
    let mut skipped_dirs = Vec::new();
    let mut shard_left_out = false;
    let mut stack = vec![path.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let entry = e.path();
            let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or("");
            match e.file_type() {
                Ok(t) if t.is_dir() && left_out(name) => skipped_dirs.push(entry),
                Ok(t) if t.is_dir() => stack.push(entry),
                Ok(t) if t.is_file() && left_out(name) => {
                    shard_left_out |= is_parquet_path(&entry);
                }
                Ok(t) if t.is_file() => {
                    if !is_parquet_path(&entry) {
                        return None;
                    }
                    files.push(entry);
                }
                _ => {}
            }
        }
    }
    if files.is_empty() {
        // Nothing but names left out: a dataset when some of them hold shards.
        return (shard_left_out || skipped_dirs.iter().any(|d| holds_parquet(d))).then(Vec::new);
    }
    files.sort();
    Some(files)
}

/// True when a `.parquet` file lies under `dir` (links not followed).
fn holds_parquet(dir: &Path) -> bool {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(t) if t.is_file() && is_parquet_path(&e.path()) => return true,
                _ => {}
            }
        }
    }
    false
}

/// A file that cannot be read as asked: skipped whole.
fn bad(path: &Path, reason: String) -> Error {
    Error::BadInput {
        path: path.to_path_buf(),
        reason,
    }
}

/// A damaged file, `rows` rows of which were read (and handed on) before the damage.
fn damaged(path: &Path, rows: u64, reason: String) -> Error {
    Error::IncompleteInput {
        path: crate::source::files::display_id(path),
        unit: "row",
        line: rows,
        reason,
    }
}

/// The Parquet and Arrow crates' message without their prefixes (`Parquet argument error:
/// Parquet error: ...`).
fn clean(message: impl ToString) -> String {
    let mut s = message.to_string();
    for prefix in ["Parquet argument error: ", "Parquet error: ", "External: "] {
        while let Some(rest) = s.strip_prefix(prefix) {
            s = rest.to_string();
        }
    }
    s
}

/// Runs `f`, a step of the Parquet or Arrow crates on a stranger's bytes, turning its error, or
/// its panic (a bug of theirs that such bytes could reach), into a reason.
fn guarded<T, E: ToString>(
    f: impl FnOnce() -> std::result::Result<T, E>,
) -> std::result::Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r.map_err(clean),
        Err(panic) => {
            let why = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("a panic");
            Err(format!("the Parquet reader failed: {why}"))
        }
    }
}

/// Reads `buf.len()` bytes of `file` at `offset`, or fewer at its end; returns how many.
fn read_at(file: &File, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        #[cfg(unix)]
        let k = std::os::unix::fs::FileExt::read_at(file, &mut buf[n..], offset + n as u64);
        #[cfg(windows)]
        let k = std::os::windows::fs::FileExt::seek_read(file, &mut buf[n..], offset + n as u64);
        #[cfg(not(any(unix, windows)))]
        let k = {
            use std::io::{Read, Seek, SeekFrom};
            let mut f = file.try_clone()?;
            f.seek(SeekFrom::Start(offset + n as u64))?;
            f.read(&mut buf[n..])
        };
        match k {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// A Parquet file whose footer was checked and decoded.
struct Shard {
    file: File,
    meta: ArrowReaderMetadata,
}

impl Shard {
    fn metadata(&self) -> &ParquetMetaData {
        self.meta.metadata()
    }

    /// The rows of row group `rg` (checked not negative when the file was opened).
    fn rows_in(&self, rg: usize) -> u64 {
        self.metadata().row_group(rg).num_rows() as u64
    }

    fn total_rows(&self) -> u64 {
        (0..self.metadata().num_row_groups())
            .map(|rg| self.rows_in(rg))
            .fold(0, u64::saturating_add)
    }
}

/// Opens the Parquet file `path`, checking it before the Parquet crate decodes its footer (see
/// the module's documentation).
fn open(path: &Path) -> Result<Shard> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let footer = read_footer(&file, len, path)?;
    match skim_footer(&footer) {
        Ok(()) => {}
        Err(Skimmed::TooDeep) => {
            return Err(bad(
                path,
                format!("schema nested deeper than {MAX_NESTING} levels"),
            ));
        }
        Err(Skimmed::TooManyRowGroups(n)) => {
            return Err(bad(
                path,
                format!("{n} row groups, more than the {MAX_ROW_GROUPS} Parquet allows"),
            ));
        }
        Err(Skimmed::Damaged(why)) => {
            return Err(damaged(path, 0, format!("its footer is damaged ({why})")));
        }
    }
    let metadata = guarded(|| ParquetMetaDataReader::decode_metadata(&footer))
        .map_err(|why| damaged(path, 0, format!("its footer is damaged ({why})")))?;
    check_chunks(&metadata, len).map_err(|why| damaged(path, 0, why))?;
    let meta = guarded(|| ArrowReaderMetadata::try_new(Arc::new(metadata), Default::default()))
        .map_err(|why| bad(path, format!("its schema cannot be read ({why})")))?;
    Ok(Shard { file, meta })
}

/// A reader of the Parquet file `path` (all its columns, with the schema its writer gave), its
/// footer checked as every file ndup reads is (see the module's documentation): what reading a
/// stranger's file calls for rather than [`ParquetRecordBatchReaderBuilder::try_new`], whose
/// schema conversion recursion a deep schema overflows.
pub fn open_reader_builder(path: &Path) -> Result<ParquetRecordBatchReaderBuilder<File>> {
    let shard = open(path)?;
    Ok(ParquetRecordBatchReaderBuilder::new_with_metadata(
        shard.file, shard.meta,
    ))
}

/// The footer's bytes, after checking the magic at both ends.
fn read_footer(file: &File, len: u64, path: &Path) -> Result<Vec<u8>> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    if len == 0 {
        return Err(bad(path, "empty file".into()));
    }
    let mut head = [0u8; 4];
    let n = read_at(file, 0, &mut head).map_err(io)?;
    if head[..n] != *b"PAR1" {
        return Err(bad(path, "not a Parquet file (no PAR1 magic)".into()));
    }
    let truncated = || {
        damaged(
            path,
            0,
            "no Parquet footer at its end: the file is truncated or damaged".into(),
        )
    };
    if len < 12 {
        return Err(truncated());
    }
    let mut tail = [0u8; 8];
    if read_at(file, len - 8, &mut tail).map_err(io)? != 8 {
        return Err(truncated());
    }
    match &tail[4..] {
        b"PAR1" => {}
        b"PARE" => {
            return Err(bad(
                path,
                "an encrypted Parquet file, which ndup cannot read".into(),
            ));
        }
        _ => return Err(truncated()),
    }
    let footer_len = u64::from(u32::from_le_bytes(tail[..4].try_into().expect("4 bytes")));
    if footer_len > len - 12 {
        return Err(damaged(
            path,
            0,
            format!("its footer length ({footer_len} bytes) is larger than the file"),
        ));
    }
    if footer_len > MAX_FOOTER_BYTES {
        return Err(bad(
            path,
            format!("a footer of {footer_len} bytes, more than the {MAX_FOOTER_BYTES} ndup reads"),
        ));
    }
    let mut footer = vec![0u8; footer_len as usize];
    if read_at(file, len - 8 - footer_len, &mut footer).map_err(io)? != footer.len() {
        return Err(truncated());
    }
    Ok(footer)
}

/// Checks the row groups and column chunks the Parquet crate trusts: rows not negative, chunks
/// inside the file (a negative offset or length makes it panic).
fn check_chunks(metadata: &ParquetMetaData, len: u64) -> std::result::Result<(), String> {
    for (g, rg) in metadata.row_groups().iter().enumerate() {
        if rg.num_rows() < 0 {
            return Err(format!("row group {g} has {} rows", rg.num_rows()));
        }
        for (c, col) in rg.columns().iter().enumerate() {
            let start = col
                .dictionary_page_offset()
                .unwrap_or(col.data_page_offset());
            let inside = start >= 0
                && col.data_page_offset() >= 0
                && col.compressed_size() >= 0
                && (start as u64)
                    .checked_add(col.compressed_size() as u64)
                    .is_some_and(|end| end <= len);
            if !inside {
                return Err(format!(
                    "column {c} of row group {g} does not lie inside the file"
                ));
            }
        }
    }
    Ok(())
}

/// What [`skim_footer`] found wrong.
#[derive(Debug, PartialEq, Eq)]
enum Skimmed {
    TooDeep,
    TooManyRowGroups(u64),
    Damaged(String),
}

impl From<String> for Skimmed {
    fn from(why: String) -> Skimmed {
        Skimmed::Damaged(why)
    }
}

/// Walks the footer (a Thrift `FileMetaData`) as far as its row groups' count, as the Parquet
/// crate's decoder will, building nothing: the schema's depth computed from the flat list of its
/// elements, the number of row groups (the crate makes room for them before reading any).
///
/// The crate reads a field it knows as the type it expects, whatever type the bytes declare, and
/// skips some values otherwise than Thrift's specification says: so that a footer cannot be
/// read one way here and another way there, anything this walk might read otherwise than the
/// crate (a field of another type than expected, the fields out of their order, booleans in a
/// list, an integer of more than 10 bytes) is refused as damaged.
fn skim_footer(footer: &[u8]) -> std::result::Result<(), Skimmed> {
    let mut t = Compact::new(footer);
    let mut last = 0;
    let out_of_order = |id: i16| Skimmed::Damaged(format!("its field {id} is out of order"));
    // `version` (1), then the `schema` (2): the crate converts the first one it meets.
    loop {
        match t.field(&mut last)? {
            // No schema: the crate refuses the footer.
            None => return Ok(()),
            Some((1, compact::I32)) => {
                t.int()?;
            }
            Some((2, compact::LIST)) => break,
            Some((id, _)) => return Err(out_of_order(id)),
        }
    }
    skim_schema(&mut t)?;
    // `num_rows` (3), then the `row_groups` (4).
    loop {
        match t.field(&mut last)? {
            None => return Ok(()),
            Some((3, compact::I64)) => {
                t.int()?;
            }
            Some((4, compact::LIST)) => {
                let (n, _) = t.list()?;
                return match n > MAX_ROW_GROUPS {
                    true => Err(Skimmed::TooManyRowGroups(n)),
                    false => Ok(()),
                };
            }
            Some((id, _)) => return Err(out_of_order(id)),
        }
    }
}

/// The schema: a list of `SchemaElement`s in depth-first order, each group followed by its
/// `num_children` (field 5) children.
fn skim_schema(t: &mut Compact) -> std::result::Result<(), Skimmed> {
    let (n, element) = t.list()?;
    if n > 0 && element != compact::STRUCT {
        return Err(Skimmed::Damaged(
            "a schema that is not a list of elements".into(),
        ));
    }
    // The children still to come of each group on the path to the current element.
    let mut open: Vec<u64> = Vec::new();
    for i in 0..n {
        let children = t.schema_element()?;
        // The root is level 0, its columns level 1.
        if open.len() > MAX_NESTING {
            return Err(Skimmed::TooDeep);
        }
        if let Some(left) = open.last_mut() {
            *left -= 1;
        }
        // The crate makes room for the children before finding them missing.
        if children < 0 || children as u64 > n - i - 1 {
            return Err(Skimmed::Damaged(format!(
                "a schema element with {children} children"
            )));
        }
        if children > 0 {
            open.push(children as u64);
        }
        while open.last() == Some(&0) {
            open.pop();
        }
    }
    Ok(())
}

/// The uncompressed size of the dictionary page that starts the column chunk `col`, 0 when it
/// starts with a data page: the longest value any row of the chunk can hold, however few bytes
/// the chunk takes (a row is a key into the dictionary). [`BATCH_BYTES`] when unknown.
fn dictionary_bytes(file: &File, col: &ColumnChunkMetaData) -> u64 {
    let dictionary_encoded = col.dictionary_page_offset().is_some()
        || col
            .encodings()
            .any(|e| matches!(e, Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY));
    if !dictionary_encoded {
        return 0;
    }
    // A page header starts with its type (field 1) and uncompressed size (field 2).
    let mut head = [0u8; 64];
    let Ok(n) = read_at(file, col.byte_range().0, &mut head) else {
        return BATCH_BYTES;
    };
    let mut t = Compact::new(&head[..n]);
    let (mut kind, mut size) = (None, None);
    let mut last = 0;
    while kind.is_none() || size.is_none() {
        match t.field(&mut last) {
            Ok(Some((1, compact::I32))) => kind = t.int().ok(),
            Ok(Some((2, compact::I32))) => size = t.int().ok(),
            Ok(Some((_, ty))) if t.skip(ty, 1, false).is_ok() => {}
            _ => break,
        }
    }
    const DICTIONARY_PAGE: i64 = 2;
    match (kind, size) {
        (Some(DICTIONARY_PAGE), Some(size)) => size.max(0) as u64,
        (Some(_), Some(_)) => 0,
        _ => BATCH_BYTES,
    }
}

/// Rows per read batch for row group `rg` reading the leaf columns `leaves`: about
/// [`BATCH_BYTES`] of decoded data, from the sizes its metadata gives.
fn batch_rows(shard: &Shard, rg: usize, leaves: &[usize]) -> usize {
    let group = shard.metadata().row_group(rg);
    let rows = (group.num_rows().max(1)) as u64;
    let per_row: u64 = leaves
        .iter()
        .map(|&c| {
            let col = group.column(c);
            let bytes = col
                .uncompressed_size()
                .max(col.unencoded_byte_array_data_bytes().unwrap_or(0))
                .max(0) as u64;
            bytes.div_ceil(rows).max(dictionary_bytes(&shard.file, col))
        })
        .fold(1, u64::saturating_add);
    (BATCH_BYTES / per_row).clamp(1, BATCH_ROWS as u64) as usize
}

/// The codecs the Parquet crate cannot decompress: refused before any row is read, as what ndup
/// cannot read rather than damage.
fn check_codecs(shard: &Shard, leaves: &[usize], path: &Path) -> Result<()> {
    for rg in shard.metadata().row_groups() {
        for &c in leaves {
            if let Compression::LZO = rg.column(c).compression() {
                return Err(bad(
                    path,
                    format!(
                        "column `{}` is compressed with LZO, which ndup cannot read",
                        rg.column(c).column_path()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The text and id columns of a file, and how to read them.
struct Columns {
    /// The file's metadata with the two columns' types replaced by the ones ndup reads them as.
    meta: ArrowReaderMetadata,
    leaves: Vec<usize>,
    text: Vec<String>,
    id: Option<Vec<String>>,
}

/// The type a text column is read as, `None` when it does not hold strings: 64-bit offsets, so
/// that no batch overflows, and dictionaries (pandas' categoricals) read as their values.
fn text_type(t: &DataType) -> Option<DataType> {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Some(DataType::LargeUtf8),
        DataType::Dictionary(_, values) => text_type(values),
        _ => None,
    }
}

/// The type an id column is read as, `None` when it holds neither strings nor integers.
fn id_type(t: &DataType) -> Option<DataType> {
    match t {
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64 => Some(t.clone()),
        DataType::Dictionary(_, values) => id_type(values),
        t => text_type(t),
    }
}

/// The field at `parts` among `fields`, through structs.
fn field_at<'a>(fields: &'a Fields, parts: &[String]) -> Option<&'a Field> {
    let (first, rest) = parts.split_first()?;
    let field = fields.iter().find(|f| f.name() == first)?;
    match (rest.is_empty(), field.data_type()) {
        (true, _) => Some(field),
        (false, DataType::Struct(children)) => field_at(children, rest),
        _ => None,
    }
}

/// `fields` with the type of the field at `parts` (through structs) replaced by `to`.
fn with_type(fields: &Fields, parts: &[String], to: &DataType) -> Fields {
    fields
        .iter()
        .map(|f| {
            if Some(f.name()) != parts.first() {
                return f.clone();
            }
            let t = match (parts.len(), f.data_type()) {
                (1, _) => to.clone(),
                (_, DataType::Struct(children)) => {
                    DataType::Struct(with_type(children, &parts[1..], to))
                }
                (_, t) => t.clone(),
            };
            Arc::new(f.as_ref().clone().with_data_type(t))
        })
        .collect()
}

impl Columns {
    /// The columns `opts` names in `shard`: an error for a file without the text column, or with
    /// a text or id column ndup cannot read.
    fn resolve(shard: &Shard, opts: &RecordOptions, path: &Path) -> Result<Columns> {
        let schema = shard.meta.parquet_schema();
        let fields = shard.meta.schema().fields();
        // The leaf column at `dotted`, or the type of the group (a struct, a list) there.
        let find = |dotted: &str| -> (Option<usize>, Option<DataType>) {
            let mut group = None;
            for i in 0..schema.num_columns() {
                let column = schema.column(i);
                let path = column.path();
                if path.string() == dotted {
                    return (Some(i), None);
                }
                if group.is_none() && path.string().starts_with(&format!("{dotted}.")) {
                    let parts = path.parts();
                    group = (1..parts.len())
                        .find(|&k| parts[..k].join(".") == dotted)
                        .and_then(|k| field_at(fields, &parts[..k]))
                        .map(|f| f.data_type().clone());
                }
            }
            (None, group)
        };
        let type_at = |leaf: usize| {
            let column = schema.column(leaf);
            let parts = column.path().parts().to_vec();
            let t = field_at(fields, &parts).map(|f| f.data_type().clone());
            (parts, t)
        };
        let wrong = |column: &str, t: &DataType, want: &str| {
            bad(path, format!("column `{column}` is {t}, not {want}"))
        };
        let text_leaf = match find(&opts.text_field) {
            (Some(leaf), _) => leaf,
            (None, Some(t)) => return Err(wrong(&opts.text_field, &t, "strings")),
            (None, None) => {
                let columns: Vec<String> = (0..schema.num_columns())
                    .map(|i| schema.column(i).path().string())
                    .collect();
                return Err(bad(
                    path,
                    format!(
                        "no column `{}` for the text (the columns: {}); choose one with \
                         --text-field",
                        opts.text_field,
                        columns.join(", ")
                    ),
                ));
            }
        };
        let (text, t) = type_at(text_leaf);
        let t = t.ok_or_else(|| bad(path, format!("no column `{}`", opts.text_field)))?;
        let text_as = text_type(&t).ok_or_else(|| wrong(&opts.text_field, &t, "strings"))?;
        let mut hinted = with_type(fields, &text, &text_as);
        let mut leaves = vec![text_leaf];
        let id = match find(&opts.id_field) {
            (Some(leaf), _) if leaf != text_leaf => {
                let (id, t) = type_at(leaf);
                let t = t.ok_or_else(|| bad(path, format!("no column `{}`", opts.id_field)))?;
                let id_as =
                    id_type(&t).ok_or_else(|| wrong(&opts.id_field, &t, "strings or integers"))?;
                hinted = with_type(&hinted, &id, &id_as);
                leaves.push(leaf);
                Some(id)
            }
            // The text is its own id.
            (Some(_), _) => Some(text.clone()),
            (None, Some(t)) => return Err(wrong(&opts.id_field, &t, "strings or integers")),
            (None, None) => None,
        };
        check_codecs(shard, &leaves, path)?;
        let schema = Arc::new(Schema::new_with_metadata(
            hinted,
            shard.meta.schema().metadata().clone(),
        ));
        let meta = guarded(|| {
            ArrowReaderMetadata::try_new(
                Arc::clone(shard.meta.metadata()),
                ArrowReaderOptions::new().with_schema(schema),
            )
        })
        .map_err(|why| bad(path, format!("its columns cannot be read ({why})")))?;
        Ok(Columns {
            meta,
            leaves,
            text,
            id,
        })
    }

    /// A reader of row group `rg` (of the rows `selection` picks in it, if any).
    fn reader(
        &self,
        shard: &Shard,
        rg: usize,
        selection: Option<RowSelection>,
    ) -> std::result::Result<ParquetRecordBatchReader, String> {
        let file = shard.file.try_clone().map_err(|e| e.to_string())?;
        let mask = ProjectionMask::leaves(self.meta.parquet_schema(), self.leaves.iter().copied());
        let mut builder =
            ParquetRecordBatchReaderBuilder::new_with_metadata(file, self.meta.clone())
                .with_projection(mask)
                .with_row_groups(vec![rg])
                .with_batch_size(batch_rows(shard, rg, &self.leaves));
        if let Some(selection) = selection {
            builder = builder.with_row_selection(selection);
        }
        guarded(|| builder.build())
    }

    /// The rows of `batch`.
    fn rows(&self, batch: &RecordBatch, opts: &RecordOptions) -> Vec<Row> {
        let text = column(batch, &self.text);
        let id = self.id.as_ref().and_then(|id| column(batch, id));
        (0..batch.num_rows())
            .map(|i| {
                let id = id.and_then(|a| id_at(a.as_ref(), i));
                let Some(text) = text.and_then(|a| string_at(a.as_ref(), i)) else {
                    return Err(RowError::Malformed(format!(
                        "column `{}` is null",
                        opts.text_field
                    )));
                };
                let bytes = text.len() as u64 + id.as_ref().map_or(0, |id| id.len() as u64);
                if bytes > opts.max_line_bytes {
                    return Err(RowError::TooLarge(format!(
                        "a row of {bytes} bytes, longer than the limit of {} bytes",
                        opts.max_line_bytes
                    )));
                }
                Ok(Record {
                    id,
                    text: text.to_owned(),
                })
            })
            .collect()
    }
}

/// The array at `parts` in `batch` (through nested structs).
fn column<'a>(batch: &'a RecordBatch, parts: &[String]) -> Option<&'a ArrayRef> {
    let (first, rest) = parts.split_first()?;
    let mut array = batch.column_by_name(first)?;
    for part in rest {
        let s: &StructArray = array.as_struct_opt()?;
        array = s.column_by_name(part)?;
    }
    Some(array)
}

/// The string at row `i` of a text column, `None` when null (or not strings: the column's type
/// was checked when the file was opened).
fn string_at(array: &dyn Array, i: usize) -> Option<&str> {
    if array.is_null(i) {
        return None;
    }
    if let Some(a) = array.as_string_opt::<i64>() {
        return Some(a.value(i));
    }
    if let Some(a) = array.as_string_opt::<i32>() {
        return Some(a.value(i));
    }
    array.as_string_view_opt().map(|a| a.value(i))
}

/// The id at row `i` of an id column: a string as is, an integer as printed.
fn id_at(array: &dyn Array, i: usize) -> Option<String> {
    if array.is_null(i) {
        return None;
    }
    macro_rules! int {
        ($($t:ty),*) => {
            $(if let Some(a) = array.as_primitive_opt::<$t>() {
                return Some(a.value(i).to_string());
            })*
        };
    }
    int!(
        Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type
    );
    string_at(array, i).map(str::to_owned)
}

/// The next batch of `reader`, its error (or panic) as a reason.
fn next_batch(
    reader: &mut ParquetRecordBatchReader,
) -> Option<std::result::Result<RecordBatch, String>> {
    match catch_unwind(AssertUnwindSafe(|| reader.next())) {
        Ok(next) => next.map(|b| b.map_err(clean)),
        Err(_) => Some(Err("the Parquet reader failed on its data".into())),
    }
}

/// Rows waiting to be handed on, with the number of the first.
struct HandOn<F: FnMut(u64, Vec<Row>)> {
    f: F,
    rows: Vec<Row>,
    bytes: usize,
    first: u64,
}

impl<F: FnMut(u64, Vec<Row>)> HandOn<F> {
    fn push(&mut self, row: Row) {
        self.bytes += row
            .as_ref()
            .map_or(0, |r| r.text.len() + r.id.as_ref().map_or(0, String::len));
        self.rows.push(row);
        if self.rows.len() >= BATCH_ROWS || self.bytes >= HAND_ON_BYTES {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if !self.rows.is_empty() {
            let rows = std::mem::take(&mut self.rows);
            self.first += rows.len() as u64;
            self.bytes = 0;
            (self.f)(self.first - rows.len() as u64, rows);
        }
    }
}

/// Reads the rows of the Parquet file `path` in batches, calling `f(first_row, rows)` with the
/// row number of each batch's first row (from 1) and what each row holds. Only the text and id
/// columns are read.
///
/// A file that cannot be read as asked is [`Error::BadInput`] before any row is handed on; a
/// damaged one is [`Error::IncompleteInput`] after the rows before the damage were.
pub fn read_row_batches(
    path: &Path,
    opts: &RecordOptions,
    f: impl FnMut(u64, Vec<Row>),
) -> Result<()> {
    let shard = open(path)?;
    let columns = Columns::resolve(&shard, opts, path)?;
    let mut out = HandOn {
        f,
        rows: Vec::new(),
        bytes: 0,
        first: 1,
    };
    let read = (|| {
        let mut before = 0u64; // rows of the row groups before
        for rg in 0..shard.metadata().num_row_groups() {
            let rows = shard.rows_in(rg);
            if rows == 0 {
                continue;
            }
            let at = |got: u64, why: String| {
                damaged(
                    path,
                    before.saturating_add(got),
                    format!("in row group {rg}: {why}"),
                )
            };
            let mut reader = columns.reader(&shard, rg, None).map_err(|why| at(0, why))?;
            // Rows past the number the metadata gives are not handed on: rows are numbered,
            // and read again, by that number.
            let mut got = 0u64;
            while let Some(batch) = next_batch(&mut reader) {
                let batch = batch.map_err(|why| at(got.min(rows), why))?;
                let wanted = rows.saturating_sub(got) as usize;
                got += batch.num_rows() as u64;
                for row in columns.rows(&batch, opts).into_iter().take(wanted) {
                    out.push(row);
                }
            }
            if got != rows {
                return Err(at(
                    got.min(rows),
                    format!("{got} rows where its metadata gives {rows}"),
                ));
            }
            before = before.saturating_add(rows);
        }
        Ok(())
    })();
    out.flush();
    read
}

/// [`read_row_batches`] with each row's error as a reason (a row too large and a malformed one
/// alike).
pub fn read_rows(
    path: &Path,
    opts: &RecordOptions,
    mut f: impl FnMut(u64, Vec<std::result::Result<Record, String>>),
) -> Result<()> {
    read_row_batches(path, opts, |first, rows| {
        f(
            first,
            rows.into_iter()
                .map(|r| r.map_err(|e| e.to_string()))
                .collect(),
        )
    })
}

/// The selection of `rows` (0-based, sorted and distinct) among `total`.
fn selection(rows: &[u64], total: u64) -> RowSelection {
    let mut selectors = Vec::new();
    let mut at = 0u64; // rows before `at` are covered
    for &r in rows {
        if r > at {
            selectors.push(RowSelector::skip((r - at) as usize));
        }
        selectors.push(RowSelector::select(1));
        at = r + 1;
    }
    if total > at {
        selectors.push(RowSelector::skip((total - at) as usize));
    }
    RowSelection::from(selectors)
}

/// Reads again the rows numbered `rows` (from 1, sorted and distinct) of `path`, calling
/// `f(row, record)` for each in order: only the row groups, and the pages, that hold them are
/// decoded.
pub fn read_rows_at(
    path: &Path,
    opts: &RecordOptions,
    rows: &[u64],
    mut f: impl FnMut(u64, std::result::Result<Record, String>),
) -> Result<()> {
    let shard = open(path)?;
    let total = shard.total_rows();
    if rows.first() == Some(&0) {
        return Err(bad(path, "rows are numbered from 1, not 0".into()));
    }
    if rows.last().is_some_and(|&r| r > total) {
        return Err(bad(
            path,
            "the file has fewer rows than when it was read".into(),
        ));
    }
    let columns = Columns::resolve(&shard, opts, path)?;
    let mut wanted = rows;
    let mut before = 0u64;
    for rg in 0..shard.metadata().num_row_groups() {
        let count = shard.rows_in(rg);
        let n = wanted.partition_point(|&r| r <= before.saturating_add(count));
        let (here, rest) = wanted.split_at(n);
        wanted = rest;
        if !here.is_empty() {
            let picked: Vec<u64> = here.iter().map(|&r| r - 1 - before).collect();
            let at = |why: String| damaged(path, before, format!("in row group {rg}: {why}"));
            let mut reader = columns
                .reader(&shard, rg, Some(selection(&picked, count)))
                .map_err(at)?;
            let mut rows = here.iter();
            while let Some(batch) = next_batch(&mut reader) {
                for record in columns.rows(&batch.map_err(at)?, opts) {
                    let Some(&row) = rows.next() else {
                        return Err(at("more rows than selected".into()));
                    };
                    f(row, record.map_err(|e| e.to_string()));
                }
            }
            if rows.next().is_some() {
                return Err(at("fewer rows than its metadata gives".into()));
            }
        }
        before = before.saturating_add(count);
    }
    Ok(())
}

/// Writes the rows of the Parquet files `inputs` (read in order, rows numbered from 1 in each)
/// for which `keep(input, row)` holds to `out`, with every column and the schema (and key-value
/// metadata) of the first input, dictionaries' keys widened to 32 bits (a row group's
/// dictionary can hold more values than narrower keys number); inputs with another schema are
/// refused. Row groups without a kept row are not read; a file damaged where no later row is
/// kept (read with partial input) is read up to the damage.
pub fn write_kept<W: std::io::Write + Send>(
    inputs: &[PathBuf],
    keep: impl Fn(usize, u64) -> bool,
    out: W,
) -> Result<()> {
    let Some(first) = inputs.first() else {
        return Ok(());
    };
    let given = open(first)?.meta.schema().clone();
    let schema = Arc::new(Schema::new_with_metadata(
        given
            .fields()
            .iter()
            .map(|f| Arc::new(f.as_ref().clone().with_data_type(wide_keys(f.data_type()))))
            .collect::<Fields>(),
        given.metadata().clone(),
    ));
    let mut writer = ArrowWriter::try_new(out, schema.clone(), Some(WriterProperties::default()))
        .map_err(|e| bad(first, clean(e)))?;
    for (n, path) in inputs.iter().enumerate() {
        let shard = open(path)?;
        if shard.meta.schema().fields() != given.fields() {
            return Err(bad(
                path,
                format!(
                    "its columns differ from those of {}: deduplicate them separately",
                    first.display()
                ),
            ));
        }
        let total = shard.total_rows();
        let all: Vec<usize> = (0..shard.meta.parquet_schema().num_columns()).collect();
        let mut before = 0u64;
        'groups: for rg in 0..shard.metadata().num_row_groups() {
            let count = shard.rows_in(rg);
            let last = before.saturating_add(count);
            if any_kept(before.saturating_add(1)..=last, |row| keep(n, row)) == Some(false) {
                before = last;
                continue;
            }
            let mut next = before.saturating_add(1);
            // Damage matters only when a row after it is kept.
            let at = |next: u64, why: String| -> Result<()> {
                match any_kept(next..=total, |row| keep(n, row)) {
                    Some(false) => Ok(()),
                    _ => Err(damaged(path, next - 1, format!("in row group {rg}: {why}"))),
                }
            };
            let file = shard.file.try_clone().map_err(|source| Error::Io {
                path: path.clone(),
                source,
            })?;
            let reader = guarded(|| {
                let meta = ArrowReaderMetadata::try_new(
                    Arc::clone(shard.meta.metadata()),
                    ArrowReaderOptions::new().with_schema(schema.clone()),
                )?;
                ParquetRecordBatchReaderBuilder::new_with_metadata(file, meta)
                    .with_row_groups(vec![rg])
                    .with_batch_size(batch_rows(&shard, rg, &all))
                    .build()
            });
            let mut reader = match reader {
                Ok(r) => r,
                Err(why) => {
                    at(next, why)?;
                    break 'groups;
                }
            };
            while let Some(batch) = next_batch(&mut reader) {
                let batch = match batch {
                    Ok(b) => b,
                    Err(why) => {
                        at(next, why)?;
                        break 'groups;
                    }
                };
                // Rows past the number the metadata gives were not read by the scan.
                let mask: BooleanArray = (next..next.saturating_add(batch.num_rows() as u64))
                    .map(|row| Some(row <= last && keep(n, row)))
                    .collect();
                next = next.saturating_add(batch.num_rows() as u64);
                let kept = arrow_select::filter::filter_record_batch(&batch, &mask)
                    .map_err(|e| bad(path, clean(e)))?;
                let kept = RecordBatch::try_new(schema.clone(), kept.columns().to_vec())
                    .map_err(|e| bad(path, clean(e)))?;
                writer.write(&kept).map_err(|e| bad(path, clean(e)))?;
                if writer.in_progress_size() >= WRITE_FLUSH_BYTES {
                    writer.flush().map_err(|e| bad(path, clean(e)))?;
                }
            }
            if next != last.saturating_add(1) {
                at(
                    next.min(last.saturating_add(1)),
                    format!(
                        "{} rows where its metadata gives {count}",
                        next - before - 1
                    ),
                )?;
                break 'groups;
            }
            before = last;
        }
    }
    writer.close().map_err(|e| bad(first, clean(e)))?;
    Ok(())
}

/// Whether `keep` holds for a row of `rows`; `None` when there are too many rows to ask about
/// each (a row group's count is its writer's word).
fn any_kept(rows: std::ops::RangeInclusive<u64>, keep: impl Fn(u64) -> bool) -> Option<bool> {
    const MAX_ASKED: u64 = 1 << 26;
    match rows.end().saturating_sub(*rows.start()) < MAX_ASKED {
        true => Some(rows.into_iter().any(keep)),
        false => None,
    }
}

/// `t` with its dictionaries' keys (and those of the types inside it) 32 bits wide at least: a
/// row group's dictionary can hold more values than the narrower keys of the schema its writer
/// stored can number (pyarrow writes pandas' categoricals with the keys each batch needed),
/// which the Parquet crate cannot read.
fn wide_keys(t: &DataType) -> DataType {
    let wide =
        |f: &Arc<Field>| Arc::new(f.as_ref().clone().with_data_type(wide_keys(f.data_type())));
    match t {
        DataType::Dictionary(keys, values) => {
            let keys = match keys.as_ref() {
                DataType::Int8 | DataType::Int16 | DataType::UInt8 | DataType::UInt16 => {
                    DataType::Int32
                }
                k => k.clone(),
            };
            DataType::Dictionary(Box::new(keys), Box::new(wide_keys(values)))
        }
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(wide).collect()),
        DataType::List(f) => DataType::List(wide(f)),
        DataType::LargeList(f) => DataType::LargeList(wide(f)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(wide(f), *n),
        DataType::Map(f, sorted) => DataType::Map(wide(f), *sorted),
        t => t.clone(),
    }
}

/// As much of Thrift's compact protocol as checking a footer takes, read as the Parquet crate
/// reads it (see [`skim_footer`]): field headers, integers, list headers, the schema's elements,
/// and skipping the rest, every length checked against the bytes left and every nesting
/// bounded. What the crate could read otherwise is an error.
mod compact {
    pub const TRUE: u8 = 1;
    pub const FALSE: u8 = 2;
    pub const I8: u8 = 3;
    pub const I16: u8 = 4;
    pub const I32: u8 = 5;
    pub const I64: u8 = 6;
    pub const DOUBLE: u8 = 7;
    pub const BINARY: u8 = 8;
    pub const LIST: u8 = 9;
    pub const SET: u8 = 10;
    pub const MAP: u8 = 11;
    pub const STRUCT: u8 = 12;
    /// Not a Thrift type: the `TimeUnit` union of a time's logical type.
    const TIME_UNIT: u8 = 100;

    /// Deeper nesting than Parquet's metadata ever has (and the Parquet crate's own limit).
    const MAX_DEPTH: usize = 64;

    type R<T> = std::result::Result<T, String>;

    pub struct Compact<'a> {
        buf: &'a [u8],
        at: usize,
    }

    impl<'a> Compact<'a> {
        pub fn new(buf: &'a [u8]) -> Self {
            Compact { buf, at: 0 }
        }

        fn left(&self) -> u64 {
            (self.buf.len() - self.at) as u64
        }

        fn byte(&mut self) -> R<u8> {
            let b = *self
                .buf
                .get(self.at)
                .ok_or("it ends in the middle of a value")?;
            self.at += 1;
            Ok(b)
        }

        fn advance(&mut self, n: u64) -> R<()> {
            if n > self.left() {
                return Err("a value longer than the bytes left".into());
            }
            self.at += n as usize;
            Ok(())
        }

        fn varint(&mut self) -> R<u64> {
            let mut v = 0u64;
            for shift in (0..64).step_by(7) {
                let b = self.byte()?;
                v |= u64::from(b & 0x7f) << shift;
                if b & 0x80 == 0 {
                    return Ok(v);
                }
            }
            Err("an integer longer than 10 bytes".into())
        }

        /// A zigzag-encoded integer.
        pub fn int(&mut self) -> R<i64> {
            let v = self.varint()?;
            Ok((v >> 1) as i64 ^ -((v & 1) as i64))
        }

        /// The next field of a struct, `(id, type)`; `None` at its end, which the crate takes
        /// any byte whose low 4 bits are 0 for.
        pub fn field(&mut self, last: &mut i16) -> R<Option<(i16, u8)>> {
            let b = self.byte()?;
            let (delta, ty) = (b >> 4, b & 0x0f);
            if ty == 0 {
                return Ok(None);
            }
            if ty > STRUCT {
                return Err(format!("a field of type {ty}"));
            }
            let id = match delta {
                0 => i16::try_from(self.int()?).map_err(|_| "a field id out of range")?,
                d => last
                    .checked_add(i16::from(d))
                    .ok_or("a field id out of range")?,
            };
            *last = id;
            Ok(Some((id, ty)))
        }

        /// A list (or set) header: its length, checked against the bytes left (each element
        /// takes one at least), and its elements' type.
        pub fn list(&mut self) -> R<(u64, u8)> {
            let b = self.byte()?;
            if b == 0 {
                return Ok((0, 0));
            }
            let ty = b & 0x0f;
            if ty == 0 || ty > STRUCT {
                return Err(format!("a list of elements of type {ty}"));
            }
            let n = match b >> 4 {
                15 => self.varint()?,
                n => u64::from(n),
            };
            if n > self.left() {
                return Err(format!("a list of {n} elements in {} bytes", self.left()));
            }
            Ok((n, ty))
        }

        fn expect(ty: u8, want: u8) -> R<()> {
            let ok = match want {
                TRUE => ty == TRUE || ty == FALSE,
                TIME_UNIT => ty == STRUCT,
                want => ty == want,
            };
            match ok {
                true => Ok(()),
                false => Err(format!("a field of type {ty} where {want} is due")),
            }
        }

        /// Skips a value of type `ty`, `depth` levels down; a boolean takes a byte only as an
        /// `element` of a list or map (a field's is in its header), which the crate does not
        /// skip: refused.
        pub fn skip(&mut self, ty: u8, depth: usize, element: bool) -> R<()> {
            if depth > MAX_DEPTH {
                return Err(format!("values nested more than {MAX_DEPTH} deep"));
            }
            match ty {
                TRUE | FALSE if element => Err("booleans in a list".into()),
                TRUE | FALSE => Ok(()),
                I8 => self.advance(1),
                I16 | I32 | I64 => self.varint().map(|_| ()),
                DOUBLE => self.advance(8),
                BINARY => {
                    let n = self.varint()?;
                    self.advance(n)
                }
                LIST | SET => {
                    let (n, element) = self.list()?;
                    for _ in 0..n {
                        self.skip(element, depth + 1, true)?;
                    }
                    Ok(())
                }
                MAP => {
                    let n = self.varint()?;
                    if n == 0 {
                        return Ok(());
                    }
                    if n.saturating_mul(2) > self.left() {
                        return Err(format!("a map of {n} entries in {} bytes", self.left()));
                    }
                    let types = self.byte()?;
                    for _ in 0..n {
                        self.skip(types >> 4, depth + 1, true)?;
                        self.skip(types & 0x0f, depth + 1, true)?;
                    }
                    Ok(())
                }
                STRUCT => {
                    let mut last = 0;
                    while let Some((_, ty)) = self.field(&mut last)? {
                        self.skip(ty, depth + 1, false)?;
                    }
                    Ok(())
                }
                _ => Err(format!("an unknown value type {ty}")),
            }
        }

        /// An empty struct, as the crate reads one: a single 0.
        fn empty_struct(&mut self) -> R<()> {
            match self.byte()? {
                0 => Ok(()),
                _ => Err("an empty struct with fields".into()),
            }
        }

        /// A struct whose fields `known` (id, type) the crate reads as that type, skipping the
        /// others.
        fn fields(&mut self, known: &[(i16, u8)]) -> R<()> {
            let mut last = 0;
            while let Some((id, ty)) = self.field(&mut last)? {
                match known.iter().find(|(k, _)| *k == id) {
                    None => self.skip(ty, 2, false)?,
                    Some(&(_, want)) => {
                        Self::expect(ty, want)?;
                        match want {
                            TIME_UNIT => self.union(|t, id, ty| match id {
                                1..=3 => {
                                    Self::expect(ty, STRUCT)?;
                                    t.empty_struct()
                                }
                                _ => Err(format!("an unknown time unit {id}")),
                            })?,
                            TRUE => {}
                            I8 | I32 | BINARY => self.skip(want, 2, false)?,
                            _ => unreachable!("no other types are known"),
                        }
                    }
                }
            }
            Ok(())
        }

        /// A union: one field, read by `variant(id, type)`, then the end.
        fn union(&mut self, variant: impl FnOnce(&mut Self, i16, u8) -> R<()>) -> R<()> {
            let mut last = 0;
            let (id, ty) = self.field(&mut last)?.ok_or("an empty union")?;
            variant(self, id, ty)?;
            match self.field(&mut last)? {
                None => Ok(()),
                Some(_) => Err("a union of two fields".into()),
            }
        }

        /// A `SchemaElement`, read as the crate reads one: its `num_children` (field 5) as the
        /// crate takes it (the last one given, truncated to 32 bits), 0 when there is none.
        pub fn schema_element(&mut self) -> R<i64> {
            let mut children = 0i64;
            let mut last = 0;
            while let Some((id, ty)) = self.field(&mut last)? {
                match id {
                    1 | 2 | 3 | 6 | 7 | 8 | 9 => {
                        Self::expect(ty, I32)?;
                        self.int()?;
                    }
                    5 => {
                        Self::expect(ty, I32)?;
                        children = i64::from(self.int()? as i32);
                    }
                    4 => {
                        Self::expect(ty, BINARY)?;
                        self.skip(BINARY, 1, false)?;
                    }
                    10 => {
                        Self::expect(ty, STRUCT)?;
                        self.logical_type()?;
                    }
                    _ => self.skip(ty, 1, false)?,
                }
            }
            Ok(children)
        }

        /// The `LogicalType` union.
        fn logical_type(&mut self) -> R<()> {
            self.union(|t, id, ty| {
                let known: &[(i16, u8)] = match id {
                    1 | 2 | 3 | 4 | 6 | 11..=15 => {
                        Self::expect(ty, STRUCT)?;
                        return t.empty_struct();
                    }
                    5 => &[(1, I32), (2, I32)],
                    7 | 8 => &[(1, TRUE), (2, TIME_UNIT)],
                    10 => &[(1, I8), (2, TRUE)],
                    16 => &[(1, I8)],
                    17 => &[(1, BINARY)],
                    18 => &[(1, BINARY), (2, I32)],
                    // A logical type the crate does not know: skipped by the type given.
                    _ => return t.skip(ty, 2, false),
                };
                Self::expect(ty, STRUCT)?;
                t.fields(known)
            })
        }
    }
}

use compact::Compact;

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::types::Int32Type;
    use arrow_array::{DictionaryArray, Float64Array, Int64Array, StringArray};
    use arrow_schema::{Field, Fields, Schema};
    use std::sync::Arc;

    fn opts(id: &str, text: &str) -> RecordOptions {
        RecordOptions {
            id_field: id.into(),
            text_field: text.into(),
            ..Default::default()
        }
    }

    fn write_batch(path: &Path, batch: &RecordBatch, props: WriterProperties) {
        let mut w =
            ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), Some(props)).unwrap();
        w.write(batch).unwrap();
        w.close().unwrap();
    }

    /// A file of `n` rows: `meta.id` (nested, null every 7th row) and `body` (null every 11th).
    fn write_nested(path: &Path, n: usize, row_group: usize) {
        let ids: Int64Array = (0..n)
            .map(|i| (i % 7 != 3).then_some(1000 + i as i64))
            .collect();
        let texts: StringArray = (0..n)
            .map(|i| (i % 11 != 5).then(|| format!("text number {i}")))
            .collect();
        let meta = StructArray::from(vec![(
            Arc::new(Field::new("id", DataType::Int64, true)),
            Arc::new(ids) as ArrayRef,
        )]);
        let schema = Arc::new(Schema::new(vec![
            Field::new(
                "meta",
                DataType::Struct(Fields::from(vec![Field::new("id", DataType::Int64, true)])),
                false,
            ),
            Field::new("body", DataType::Utf8, true),
        ]));
        let batch = RecordBatch::try_new(schema, vec![Arc::new(meta), Arc::new(texts)]).unwrap();
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(row_group))
            .build();
        write_batch(path, &batch, props);
    }

    /// Every row of `path` as read, numbered.
    fn all_rows(path: &Path, opts: &RecordOptions) -> (Vec<(u64, Row)>, Result<()>) {
        let mut seen = Vec::new();
        let read = read_row_batches(path, opts, |first, rows| {
            seen.extend(
                rows.into_iter()
                    .enumerate()
                    .map(|(i, r)| (first + i as u64, r)),
            )
        });
        (seen, read)
    }

    fn reason(e: Error) -> String {
        match e {
            Error::BadInput { reason, .. } => reason,
            e => panic!("not BadInput: {e}"),
        }
    }

    /// `(rows read before the damage, reason)`.
    fn damage(e: Error) -> (u64, String) {
        match e {
            Error::IncompleteInput { line, reason, .. } => (line, reason),
            e => panic!("not IncompleteInput: {e}"),
        }
    }

    #[test]
    fn rows_stream_in_batches_with_nested_ids_and_null_texts_reported() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        // One row group larger than a read batch.
        write_nested(&path, 20_000, 20_000);
        let mut seen = Vec::new();
        read_rows(&path, &opts("meta.id", "body"), |first, recs| {
            assert!(recs.len() <= BATCH_ROWS);
            seen.extend(
                recs.into_iter()
                    .enumerate()
                    .map(|(i, r)| (first + i as u64, r)),
            );
        })
        .unwrap();
        assert_eq!(seen.len(), 20_000);
        assert_eq!(
            seen[0],
            (
                1,
                Ok(Record {
                    id: Some("1000".into()),
                    text: "text number 0".into()
                })
            )
        );
        assert_eq!(seen[3].1.as_ref().unwrap().id, None);
        assert_eq!(seen[5].1, Err("column `body` is null".into()));
        let again_rows = [2u64, 3000, 3001, 19_999];
        let mut again = Vec::new();
        read_rows_at(&path, &opts("meta.id", "body"), &again_rows, |row, r| {
            again.push((row, r))
        })
        .unwrap();
        let want: Vec<_> = again_rows
            .iter()
            .map(|&r| seen[r as usize - 1].clone())
            .collect();
        assert_eq!(again, want);
        // Rows that are not in the file, as a tampered index or a JSON-lines offset could ask.
        for rows in [[0u64, 1], [1, 20_001]] {
            let err = read_rows_at(&path, &opts("meta.id", "body"), &rows, |_, _| {});
            assert!(err.is_err(), "{rows:?}");
        }
        let err = read_rows(&path, &opts("id", "text"), |_, _| {}).unwrap_err();
        assert!(err.to_string().contains("no column `text`"), "{err}");
        assert!(err.to_string().contains("meta.id, body"), "{err}");
    }

    #[test]
    fn rows_are_read_again_across_row_groups() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        write_nested(&path, 100, 30);
        let (seen, read) = all_rows(&path, &opts("meta.id", "body"));
        read.unwrap();
        assert_eq!(seen.len(), 100);
        let rows = [1u64, 30, 31, 60, 61, 99, 100];
        let mut again = Vec::new();
        read_rows_at(&path, &opts("meta.id", "body"), &rows, |row, r| {
            again.push((row, r))
        })
        .unwrap();
        let want: Vec<_> = rows
            .iter()
            .map(|&r| {
                let (n, row) = &seen[r as usize - 1];
                (*n, row.clone().map_err(|e| e.to_string()))
            })
            .collect();
        assert_eq!(again, want);
    }

    #[test]
    fn kept_rows_keep_every_column_and_the_schema() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        write_nested(&path, 100, 30);
        let mut out = Vec::new();
        write_kept(
            std::slice::from_ref(&path),
            |_, row| row % 10 == 1,
            &mut out,
        )
        .unwrap();
        let kept = dir.path().join("kept.parquet");
        std::fs::write(&kept, out).unwrap();
        let mut ids = Vec::new();
        read_rows(&kept, &opts("meta.id", "body"), |_, recs| {
            ids.extend(recs.into_iter().map(|r| r.map(|r| r.id)))
        })
        .unwrap();
        assert_eq!(ids.len(), 10);
        assert_eq!(ids[0], Ok(Some("1000".into())));
        assert_eq!(
            open(&kept).unwrap().meta.schema().fields(),
            open(&path).unwrap().meta.schema().fields()
        );
    }

    #[test]
    fn a_directory_is_a_dataset_when_it_holds_parquet_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for sub in ["data/b", "data/_temporary/0", "data/.hidden"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        // What a Spark job leaves, and what one still writing (or failed) does: not read.
        for f in [
            "data/b/1.parquet",
            "data/0.parquet",
            "data/_SUCCESS",
            "data/.0.parquet.crc",
            "data/_temporary/0/part-0.parquet",
            "data/_temporary/0/notes.md",
            "data/.hidden/2.parquet",
        ] {
            std::fs::write(d.join(f), "").unwrap();
        }
        assert_eq!(
            dataset_files(&d.join("data")).unwrap(),
            [d.join("data/0.parquet"), d.join("data/b/1.parquet")]
        );
        std::fs::write(d.join("data/notes.md"), "").unwrap();
        assert_eq!(dataset_files(&d.join("data")), None);
        // Shards only where they are left out: a dataset of no files, not a tree of documents.
        let only = d.join("only");
        std::fs::create_dir_all(only.join("_temporary/0")).unwrap();
        std::fs::write(only.join("_SUCCESS"), "").unwrap();
        assert_eq!(dataset_files(&only), None);
        std::fs::write(only.join("_temporary/0/part-0.parquet"), "").unwrap();
        assert_eq!(dataset_files(&only), Some(vec![]));
        assert_eq!(dataset_files(&d.join("x.jsonl")), None);
    }

    // Thrift compact encoding, to write footers by hand.
    fn varint(mut n: u64, out: &mut Vec<u8>) {
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }

    fn zigzag(n: i64) -> u64 {
        ((n << 1) ^ (n >> 63)) as u64
    }

    fn list_header(n: u64, element: u8, out: &mut Vec<u8>) {
        if n < 15 {
            out.push((n as u8) << 4 | element);
        } else {
            out.push(0xf0 | element);
            varint(n, out);
        }
    }

    /// A `SchemaElement`: a group when `children` is given, else a UTF8 BYTE_ARRAY leaf.
    fn schema_element(name: &str, children: Option<i64>, out: &mut Vec<u8>) {
        if children.is_none() {
            out.push(0x10 | compact::I32); // 1: type
            varint(zigzag(6), out);
            out.push(0x20 | compact::I32); // 3: repetition
        } else {
            out.push(0x30 | compact::I32);
        }
        varint(zigzag(1), out);
        out.push(0x10 | compact::BINARY); // 4: name
        varint(name.len() as u64, out);
        out.extend_from_slice(name.as_bytes());
        match children {
            Some(c) => {
                out.push(0x10 | compact::I32); // 5: num_children
                varint(zigzag(c), out);
            }
            None => {
                out.push(0x20 | compact::I32); // 6: converted_type UTF8
                varint(zigzag(0), out);
            }
        }
        out.push(0);
    }

    /// A Parquet file without rows whose schema is `levels` nested groups around a column
    /// `text` (what a stranger can write in a few kilobytes); `root_children` overrides the
    /// root's count and `row_groups` is the count of (empty) row groups declared.
    fn footer_file(levels: usize, root_children: Option<i64>, row_groups: (u64, u64)) -> Vec<u8> {
        let mut meta = vec![0x10 | compact::I32]; // 1: version
        varint(zigzag(1), &mut meta);
        meta.push(0x10 | compact::LIST); // 2: schema
        list_header(levels as u64 + 2, compact::STRUCT, &mut meta);
        schema_element("schema", Some(root_children.unwrap_or(1)), &mut meta);
        for _ in 0..levels {
            schema_element("a", Some(1), &mut meta);
        }
        schema_element("text", None, &mut meta);
        meta.push(0x10 | compact::I64); // 3: num_rows
        varint(0, &mut meta);
        meta.push(0x10 | compact::LIST); // 4: row_groups (declared, written)
        list_header(row_groups.0, compact::STRUCT, &mut meta);
        meta.extend(std::iter::repeat_n(0u8, row_groups.1 as usize));
        meta.push(0);
        let mut file = b"PAR1".to_vec();
        file.extend_from_slice(&meta);
        file.extend_from_slice(&(meta.len() as u32).to_le_bytes());
        file.extend_from_slice(b"PAR1");
        file
    }

    #[test]
    fn a_schema_too_deep_is_refused_before_the_parquet_crate_recurses_into_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep.parquet");
        let text = |levels: usize| vec!["a"; levels].join(".") + ".text";
        // 64 levels: 63 groups and the column.
        std::fs::write(&path, footer_file(63, None, (0, 0))).unwrap();
        let (rows, read) = all_rows(&path, &opts("id", &text(63)));
        read.unwrap();
        assert!(rows.is_empty());
        // 65 levels, and the 1,500 that overflowed the stack.
        for groups in [64, 1500, 100_000] {
            std::fs::write(&path, footer_file(groups, None, (0, 0))).unwrap();
            let err = read_rows(&path, &opts("id", &text(groups)), |_, _| {}).unwrap_err();
            assert_eq!(reason(err), "schema nested deeper than 64 levels");
            let err = open_reader_builder(&path).unwrap_err();
            assert_eq!(reason(err), "schema nested deeper than 64 levels");
        }
    }

    #[test]
    fn footers_that_lie_about_sizes_are_refused_without_allocating_for_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lies.parquet");
        // A root claiming 2^31 - 1 children.
        std::fs::write(&path, footer_file(0, Some(i32::MAX as i64), (0, 0))).unwrap();
        let (_, why) = damage(open(&path).err().unwrap());
        assert!(why.contains("footer is damaged"), "{why}");
        // 2^31 - 1 row groups declared, none written.
        std::fs::write(&path, footer_file(0, None, (i32::MAX as u64, 0))).unwrap();
        let (_, why) = damage(open(&path).err().unwrap());
        assert!(why.contains("a list of 2147483647 elements"), "{why}");
        // More row groups than Parquet numbers.
        std::fs::write(&path, footer_file(0, None, (40_000, 40_000))).unwrap();
        let why = reason(open(&path).err().unwrap());
        assert!(why.starts_with("40000 row groups"), "{why}");
        // A footer longer than the file.
        let mut file = footer_file(0, None, (0, 0));
        let n = file.len();
        file[n - 8..n - 4].copy_from_slice(&1_000_000u32.to_le_bytes());
        std::fs::write(&path, file).unwrap();
        let (rows, why) = damage(open(&path).err().unwrap());
        assert_eq!(rows, 0);
        assert!(why.contains("larger than the file"), "{why}");
    }

    #[test]
    fn footers_the_parquet_crate_could_read_otherwise_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("odd.parquet");
        let file = footer_file(2, None, (0, 0));
        let footer = &file[4..file.len() - 8];
        assert_eq!(skim_footer(footer), Ok(()));
        let refused = |footer: &[u8]| match skim_footer(footer) {
            Err(Skimmed::Damaged(why)) => why,
            other => panic!("{other:?}"),
        };
        // The root's name declared an integer: the crate reads a string whatever the type
        // says, so the two would part ways.
        let mut odd = footer.to_vec();
        let name = odd.windows(2).position(|w| w == [0x18, 6]).unwrap();
        odd[name] = 0x10 | compact::I32;
        assert!(
            refused(&odd).contains("type 5 where 8 is due"),
            "{}",
            refused(&odd)
        );
        // Booleans in a list, which the crate skips as if they took no bytes.
        let mut odd = footer.to_vec();
        let end = odd.iter().position(|&b| b == 0).unwrap(); // the root element's end
        odd.splice(end..end, [0x79, 0x21, 1, 1]); // field 11: a list of 2 booleans
        assert_eq!(refused(&odd), "booleans in a list");
        // The number of rows before the schema.
        let mut odd = vec![0x30 | compact::I64, 0];
        odd.extend_from_slice(&footer[2..]);
        assert_eq!(refused(&odd), "its field 3 is out of order");
        std::fs::write(&path, footer_file(0, Some(-1), (0, 0))).unwrap();
        let (_, why) = damage(open(&path).err().unwrap());
        assert!(why.contains("-1 children"), "{why}");
    }

    #[test]
    fn files_that_are_not_parquet_are_named_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.parquet");
        let good = dir.path().join("good.parquet");
        write_nested(&good, 10, 10);
        let bytes = std::fs::read(&good).unwrap();
        for (content, want) in [
            (&b""[..], "empty file"),
            (
                b"{\"id\": 1, \"text\": \"hello\"}\n",
                "not a Parquet file (no PAR1 magic)",
            ),
            (&bytes[4..], "not a Parquet file (no PAR1 magic)"),
        ] {
            std::fs::write(&path, content).unwrap();
            let err = read_rows(&path, &opts("meta.id", "body"), |_, _| {}).unwrap_err();
            assert_eq!(err.to_string(), format!("{}: {want}", path.display()));
            assert_eq!(reason(err), want);
        }
        let mut encrypted = bytes.clone();
        let n = encrypted.len();
        encrypted[n - 4..].copy_from_slice(b"PARE");
        std::fs::write(&path, encrypted).unwrap();
        let why = reason(open(&path).err().unwrap());
        assert!(why.contains("encrypted"), "{why}");
    }

    #[test]
    fn damage_hands_on_the_rows_before_it_then_says_where() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.parquet");
        // Row groups of 30, 30, 30 and 10 rows.
        write_nested(&good, 100, 30);
        let bytes = std::fs::read(&good).unwrap();
        let path = dir.path().join("bad.parquet");

        // Cut short: no footer, no row.
        std::fs::write(&path, &bytes[..bytes.len() - 100]).unwrap();
        let (rows, read) = all_rows(&path, &opts("meta.id", "body"));
        assert!(rows.is_empty());
        let (before, why) = damage(read.unwrap_err());
        assert_eq!(before, 0);
        assert!(why.contains("truncated"), "{why}");
        std::fs::write(&path, b"PAR1 and nothing else").unwrap();
        let (before, _) = damage(open(&path).err().unwrap());
        assert_eq!(before, 0);

        // The text column of the third row group overwritten: the first two are read.
        let meta = open(&good).unwrap().meta.metadata().clone();
        let start = meta.row_group(2).column(1).byte_range().0 as usize;
        let mut broken = bytes.clone();
        broken[start..start + 8].fill(0xff);
        std::fs::write(&path, &broken).unwrap();
        let (rows, read) = all_rows(&path, &opts("meta.id", "body"));
        let (before, why) = damage(read.unwrap_err());
        assert_eq!((rows.len(), before), (60, 60), "{why}");
        assert!(why.starts_with("in row group 2: "), "{why}");
        assert_eq!(rows[58].1.as_ref().unwrap().id.as_deref(), Some("1058"));

        // Rows before the damage are written again; a kept row after it is an error.
        let mut out = Vec::new();
        write_kept(std::slice::from_ref(&path), |_, row| row <= 60, &mut out).unwrap();
        let kept = dir.path().join("kept.parquet");
        std::fs::write(&kept, &out).unwrap();
        assert_eq!(all_rows(&kept, &opts("meta.id", "body")).0.len(), 60);
        let err = write_kept(std::slice::from_ref(&path), |_, row| row == 70, Vec::new());
        assert_eq!(damage(err.unwrap_err()).0, 60);
        // Rows are read again from the good row groups only.
        let mut again = Vec::new();
        read_rows_at(&path, &opts("meta.id", "body"), &[1, 60], |row, _| {
            again.push(row)
        })
        .unwrap();
        assert_eq!(again, [1, 60]);
        assert!(read_rows_at(&path, &opts("meta.id", "body"), &[61], |_, _| {}).is_err());
    }

    #[test]
    fn a_row_longer_than_the_limit_is_too_large_and_never_copied() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let texts = StringArray::from(vec!["short", &"x".repeat(5000), "also short"]);
        let ids = StringArray::from(vec!["a", "b", &"c".repeat(996)]);
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Utf8, true),
            Field::new("text", DataType::Utf8, true),
        ]));
        let batch = RecordBatch::try_new(schema, vec![Arc::new(ids), Arc::new(texts)]).unwrap();
        write_batch(&path, &batch, WriterProperties::default());
        let limited = RecordOptions {
            max_line_bytes: 1005,
            ..opts("id", "text")
        };
        let (rows, read) = all_rows(&path, &limited);
        read.unwrap();
        assert_eq!(rows[0].1.as_ref().unwrap().text, "short");
        assert_eq!(
            rows[1].1,
            Err(RowError::TooLarge(
                "a row of 5001 bytes, longer than the limit of 1005 bytes".into()
            ))
        );
        // The id counts too, as it does in a JSON line.
        assert_eq!(
            rows[2].1,
            Err(RowError::TooLarge(
                "a row of 1006 bytes, longer than the limit of 1005 bytes".into()
            ))
        );
    }

    #[test]
    fn batches_hold_about_batch_bytes_of_text_read_with_64_bit_offsets() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let schema = Arc::new(Schema::new(vec![Field::new("text", DataType::Utf8, true)]));
        // 48 rows of 2 MiB, written plain: about 32 rows a batch.
        let big = "y".repeat(2 << 20);
        let texts = StringArray::from(vec![big.as_str(); 48]);
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(texts)]).unwrap();
        let plain = WriterProperties::builder()
            .set_dictionary_enabled(false)
            .set_compression(parquet::basic::Compression::SNAPPY)
            .build();
        write_batch(&path, &batch, plain);
        let shard = open(&path).unwrap();
        let columns = Columns::resolve(&shard, &opts("id", "text"), &path).unwrap();
        let rows = batch_rows(&shard, 0, &columns.leaves);
        assert!((16..=32).contains(&rows), "{rows}");
        assert_eq!(
            columns.meta.schema().field(0).data_type(),
            &DataType::LargeUtf8
        );
        let (seen, read) = all_rows(&path, &opts("id", "text"));
        read.unwrap();
        assert_eq!(seen.len(), 48);
        // A 256 KiB value in a dictionary, repeated: the chunk is small, but any row may
        // hold the value, so 256 rows a batch at most.
        let value = "z".repeat(256 << 10);
        let texts = StringArray::from(vec![value.as_str(); 1000]);
        let batch = RecordBatch::try_new(schema, vec![Arc::new(texts)]).unwrap();
        write_batch(&path, &batch, WriterProperties::default());
        let shard = open(&path).unwrap();
        let chunk = shard.metadata().row_group(0).column(0);
        assert!(chunk.uncompressed_size() < 1 << 20, "{chunk:?}");
        assert!(batch_rows(&shard, 0, &[0]) <= 256);
    }

    #[test]
    fn dictionary_columns_are_read_through_their_values() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        // As pandas writes categoricals.
        let texts: DictionaryArray<Int32Type> = vec!["one text", "another text", "one text"]
            .into_iter()
            .collect();
        let ids: DictionaryArray<arrow_array::types::Int8Type> =
            vec!["a", "b", "c"].into_iter().collect();
        let batch = RecordBatch::try_from_iter([
            ("id", Arc::new(ids) as ArrayRef),
            ("text", Arc::new(texts)),
        ])
        .unwrap();
        write_batch(&path, &batch, WriterProperties::default());
        let (rows, read) = all_rows(&path, &opts("id", "text"));
        read.unwrap();
        let rows: Vec<(Option<String>, String)> = rows
            .into_iter()
            .map(|(_, r)| r.map(|r| (r.id, r.text)).unwrap())
            .collect();
        assert_eq!(
            rows,
            [
                (Some("a".into()), "one text".into()),
                (Some("b".into()), "another text".into()),
                (Some("c".into()), "one text".into())
            ]
        );
    }

    #[test]
    fn id_columns_of_other_types_are_refused_by_name_and_type() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let texts = Arc::new(StringArray::from(vec!["a text", "b text"])) as ArrayRef;
        let struct_id = StructArray::from(vec![(
            Arc::new(Field::new("n", DataType::Int64, true)),
            Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef,
        )]);
        let list_id = arrow_array::ListArray::from_iter_primitive::<Int64Type, _, _>(vec![
            Some(vec![Some(1)]),
            Some(vec![Some(2)]),
        ]);
        let cases: [(ArrayRef, &str); 4] = [
            (Arc::new(Float64Array::from(vec![1.5, 2.5])), "Float64"),
            (Arc::new(BooleanArray::from(vec![true, false])), "Boolean"),
            (Arc::new(struct_id), "Struct(\"n\": Int64)"),
            (Arc::new(list_id), "List(Int64)"),
        ];
        for (id, ty) in cases {
            let batch = RecordBatch::try_from_iter([("id", id), ("text", texts.clone())]).unwrap();
            write_batch(&path, &batch, WriterProperties::default());
            let err = read_rows(&path, &opts("id", "text"), |_, _| {}).unwrap_err();
            let why = reason(err);
            assert!(why.starts_with("column `id` is "), "{why}");
            assert!(why.ends_with(", not strings or integers"), "{why}");
            assert!(why.contains(&ty[..4]), "{why} for {ty}");
        }
        // A text column of integers, or of lists, is refused as well.
        let batch = RecordBatch::try_from_iter([(
            "text",
            Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef,
        )])
        .unwrap();
        write_batch(&path, &batch, WriterProperties::default());
        let err = read_rows(&path, &opts("id", "text"), |_, _| {}).unwrap_err();
        assert_eq!(reason(err), "column `text` is Int64, not strings");
    }
}
