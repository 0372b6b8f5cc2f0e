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
//! order) are `.parquet` files, apart from the `_SUCCESS` and `.crc` files Spark and Hadoop
//! leave beside them (any name starting with `_` or `.`).

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, StructArray};
use arrow_schema::DataType;
use parquet::arrow::ArrowWriter;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReaderBuilder, RowSelection, RowSelector};
use parquet::file::properties::WriterProperties;

use crate::error::{Error, Result};
use crate::source::records::{Record, RecordOptions};

/// Rows per batch read: bounds the text held at once (with the row group's pages).
pub(crate) const BATCH_ROWS: usize = 8192;

/// True when `path` names a Parquet file by its extension.
pub fn is_parquet_path(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

/// The Parquet files of `path`: itself when it is a `.parquet` file; for a directory, the files
/// under it when it is a Parquet dataset (see the module's documentation), sorted; `None`
/// otherwise.
pub fn dataset_files(path: &Path) -> Option<Vec<PathBuf>> {
    // `-` is standard input, whatever the current directory holds.
    if crate::source::records::is_stdin(path) {
        return None;
    }
    if !path.is_dir() {
        return is_parquet_path(path).then(|| vec![path.to_path_buf()]);
    }
    // Walked by hand (symbolic links not followed), stopping at the first file that is not
    // Parquet: deciding costs next to nothing for an ordinary tree of documents.
    let mut files = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(t) if t.is_file() => {
                    let entry = e.path();
                    let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    if name.starts_with('.') || name.starts_with('_') {
                        continue;
                    }
                    if !is_parquet_path(&entry) {
                        return None;
                    }
                    files.push(entry);
                }
                _ => {}
            }
        }
    }
    files.sort();
    (!files.is_empty()).then_some(files)
}

fn bad(path: &Path, reason: String) -> Error {
    Error::BadInput {
        path: path.to_path_buf(),
        reason,
    }
}

fn open(path: &Path) -> Result<ParquetRecordBatchReaderBuilder<File>> {
    let file = File::open(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| bad(path, format!("not a readable Parquet file ({e})")))
}

/// Which leaf columns to read: the text's and the id's (when the file has it).
fn projection(
    builder: &ParquetRecordBatchReaderBuilder<File>,
    opts: &RecordOptions,
    path: &Path,
) -> Result<(ProjectionMask, bool)> {
    let schema = builder.parquet_schema();
    let leaf = |dotted: &str| {
        (0..schema.num_columns()).find(|&i| schema.column(i).path().string() == dotted)
    };
    let Some(text) = leaf(&opts.text_field) else {
        let columns: Vec<String> = (0..schema.num_columns())
            .map(|i| schema.column(i).path().string())
            .collect();
        return Err(bad(
            path,
            format!(
                "no column `{}` for the text (the columns: {}); choose one with --text-field",
                opts.text_field,
                columns.join(", ")
            ),
        ));
    };
    let id = leaf(&opts.id_field);
    let leaves: Vec<usize> = std::iter::once(text).chain(id).collect();
    Ok((ProjectionMask::leaves(schema, leaves), id.is_some()))
}

/// The array at `dotted` in `batch` (through nested structs).
fn column<'a>(batch: &'a RecordBatch, dotted: &str) -> Option<&'a ArrayRef> {
    let mut parts = dotted.split('.');
    let mut array = batch.column_by_name(parts.next()?)?;
    for part in parts {
        let s: &StructArray = array.as_struct_opt()?;
        array = s.column_by_name(part)?;
    }
    Some(array)
}

/// The string at row `i` of a text column, `None` when null; an error for a column that is not
/// made of strings.
fn string_at(array: &dyn Array, i: usize) -> std::result::Result<Option<&str>, String> {
    if array.is_null(i) {
        return Ok(None);
    }
    if let Some(a) = array.as_string_opt::<i32>() {
        return Ok(Some(a.value(i)));
    }
    if let Some(a) = array.as_string_opt::<i64>() {
        return Ok(Some(a.value(i)));
    }
    if let Some(a) = array.as_string_view_opt() {
        return Ok(Some(a.value(i)));
    }
    Err(format!("is {}, not strings", array.data_type()))
}

/// The id at row `i` of an id column: a string as is, an integer as printed.
fn id_at(array: &dyn Array, i: usize) -> std::result::Result<Option<String>, String> {
    if array.is_null(i) {
        return Ok(None);
    }
    macro_rules! int {
        ($($t:ty),*) => {
            $(if let Some(a) = array.as_primitive_opt::<$t>() {
                return Ok(Some(a.value(i).to_string()));
            })*
        };
    }
    int!(
        Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type
    );
    match array.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            string_at(array, i).map(|s| s.map(str::to_owned))
        }
        t => Err(format!("is {t}, not strings or integers")),
    }
}

/// The records of one batch, the row number of its first row being `first` (from 1).
fn records(
    batch: &RecordBatch,
    opts: &RecordOptions,
    has_id: bool,
    path: &Path,
) -> Result<Vec<std::result::Result<Record, String>>> {
    let text = column(batch, &opts.text_field)
        .ok_or_else(|| bad(path, format!("no column `{}`", opts.text_field)))?;
    let id = if has_id {
        column(batch, &opts.id_field)
    } else {
        None
    };
    // A column of the wrong type is the file's fault, not one row's.
    if batch.num_rows() > 0 {
        let probe = (0..batch.num_rows())
            .find(|&i| !text.is_null(i))
            .unwrap_or(0);
        if let Err(why) = string_at(text.as_ref(), probe) {
            return Err(bad(path, format!("column `{}` {why}", opts.text_field)));
        }
        if let Some(id) = id {
            let probe = (0..batch.num_rows()).find(|&i| !id.is_null(i)).unwrap_or(0);
            if let Err(why) = id_at(id.as_ref(), probe) {
                return Err(bad(path, format!("column `{}` {why}", opts.id_field)));
            }
        }
    }
    Ok((0..batch.num_rows())
        .map(|i| {
            let id = match id {
                Some(a) => id_at(a.as_ref(), i)?,
                None => None,
            };
            match string_at(text.as_ref(), i)? {
                Some(t) => Ok(Record {
                    id,
                    text: t.to_owned(),
                }),
                None => Err(format!("column `{}` is null", opts.text_field)),
            }
        })
        .collect())
}

/// Reads the rows of the Parquet file `path` in batches, calling `f(first_row, records)` with the
/// row number of each batch's first row (from 1) and what each row holds: a record, or why it
/// is malformed. Only the text and id columns are read.
pub fn read_rows(
    path: &Path,
    opts: &RecordOptions,
    mut f: impl FnMut(u64, Vec<std::result::Result<Record, String>>),
) -> Result<()> {
    let builder = open(path)?;
    let (mask, has_id) = projection(&builder, opts, path)?;
    let reader = builder
        .with_projection(mask)
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| bad(path, e.to_string()))?;
    let mut next = 1u64;
    for batch in reader {
        let batch = batch.map_err(|e| bad(path, format!("after row {}: {e}", next - 1)))?;
        let n = batch.num_rows() as u64;
        f(next, records(&batch, opts, has_id, path)?);
        next += n;
    }
    Ok(())
}

/// The selection of `rows` (row numbers from 1, sorted and distinct) among `total`.
fn selection(rows: &[u64], total: u64) -> RowSelection {
    let mut selectors = Vec::new();
    let mut at = 0u64; // rows before `at` (0-based) are covered
    for &r in rows {
        let r = r - 1;
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
/// `f(row, record)` for each in order: only the pages that hold them are decoded.
pub fn read_rows_at(
    path: &Path,
    opts: &RecordOptions,
    rows: &[u64],
    mut f: impl FnMut(u64, std::result::Result<Record, String>),
) -> Result<()> {
    let builder = open(path)?;
    let total = builder.metadata().file_metadata().num_rows() as u64;
    if rows.first() == Some(&0) {
        return Err(bad(path, "rows are numbered from 1, not 0".into()));
    }
    if rows.last().is_some_and(|&r| r > total) {
        return Err(bad(
            path,
            "the file has fewer rows than when it was read".into(),
        ));
    }
    let (mask, has_id) = projection(&builder, opts, path)?;
    let reader = builder
        .with_projection(mask)
        .with_row_selection(selection(rows, total))
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| bad(path, e.to_string()))?;
    let mut wanted = rows.iter();
    for batch in reader {
        let batch = batch.map_err(|e| bad(path, e.to_string()))?;
        for record in records(&batch, opts, has_id, path)? {
            let row = *wanted.next().expect("as many rows as selected");
            f(row, record);
        }
    }
    Ok(())
}

/// Writes the rows of the Parquet files `inputs` (read in order, rows numbered from 1 in each)
/// for which `keep(input, row)` holds to `out`, with every column and the schema (and key-value
/// metadata) of the first input; inputs with another schema are refused.
pub fn write_kept<W: std::io::Write + Send>(
    inputs: &[PathBuf],
    keep: impl Fn(usize, u64) -> bool,
    out: W,
) -> Result<()> {
    let Some(first) = inputs.first() else {
        return Ok(());
    };
    let schema = open(first)?.schema().clone();
    let mut writer = ArrowWriter::try_new(out, schema.clone(), Some(WriterProperties::default()))
        .map_err(|e| bad(first, e.to_string()))?;
    for (n, path) in inputs.iter().enumerate() {
        let builder = open(path)?;
        if builder.schema().fields() != schema.fields() {
            return Err(bad(
                path,
                format!(
                    "its columns differ from those of {}: deduplicate them separately",
                    first.display()
                ),
            ));
        }
        let reader = builder
            .with_batch_size(BATCH_ROWS)
            .build()
            .map_err(|e| bad(path, e.to_string()))?;
        let mut next = 1u64;
        for batch in reader {
            let batch = batch.map_err(|e| bad(path, e.to_string()))?;
            let mask: BooleanArray = (0..batch.num_rows() as u64)
                .map(|i| Some(keep(n, next + i)))
                .collect();
            next += batch.num_rows() as u64;
            let kept = arrow_select::filter::filter_record_batch(&batch, &mask)
                .map_err(|e| bad(path, e.to_string()))?;
            let kept = RecordBatch::try_new(schema.clone(), kept.columns().to_vec())
                .map_err(|e| bad(path, e.to_string()))?;
            writer.write(&kept).map_err(|e| bad(path, e.to_string()))?;
        }
    }
    writer.close().map_err(|e| bad(first, e.to_string()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::{Field, Fields, Schema};
    use std::sync::Arc;

    fn opts(id: &str, text: &str) -> RecordOptions {
        RecordOptions {
            id_field: id.into(),
            text_field: text.into(),
            ..Default::default()
        }
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
        let batch =
            RecordBatch::try_new(schema.clone(), vec![Arc::new(meta), Arc::new(texts)]).unwrap();
        let props = WriterProperties::builder()
            .set_max_row_group_row_count(Some(row_group))
            .build();
        let mut w = ArrowWriter::try_new(File::create(path).unwrap(), schema, Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
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
            open(&kept).unwrap().schema().fields(),
            open(&path).unwrap().schema().fields()
        );
    }

    #[test]
    fn a_directory_is_a_dataset_when_it_holds_parquet_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("data/b")).unwrap();
        for f in [
            "data/b/1.parquet",
            "data/0.parquet",
            "data/_SUCCESS",
            "data/.0.parquet.crc",
        ] {
            std::fs::write(d.join(f), "").unwrap();
        }
        assert_eq!(
            dataset_files(&d.join("data")).unwrap(),
            [d.join("data/0.parquet"), d.join("data/b/1.parquet")]
        );
        std::fs::write(d.join("data/notes.md"), "").unwrap();
        assert_eq!(dataset_files(&d.join("data")), None);
        assert_eq!(dataset_files(&d.join("x.jsonl")), None);
    }
}
