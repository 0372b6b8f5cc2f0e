//! Signature shards: the map stage of a scan, written to Parquet so that the rest of the work can
//! be done elsewhere (by `ndup scan --signatures`, or by a Spark job grouping band keys).
//!
//! [`sign`] reads a corpus by the one document loop of [`crate::find`] and writes one row per
//! document, in input order, into `part-00000.parquet`, `part-00001.parquet`... of a directory:
//!
//! | column | type | what |
//! | --- | --- | --- |
//! | `doc` | int64 | the document's position in the input, from 0 (empty documents count) |
//! | `id` | string | its id, as a scan reports it (or as read, with [`IdRule::AsRead`]) |
//! | `id_made_up` | bool | true when the record had no id (or a null one), and is named by its line |
//! | `source` | string | the file, or the JSON-lines source it came from |
//! | `line` | int64, null for files | the record's line number, from 1 |
//! | `chars` | int64 | the length of its text as read, in characters (for `--keep longest`) |
//! | `fingerprint` | fixed_size_binary(16) | xxh3-128 of the normalized text, big-endian: equal for exact duplicates |
//! | `signature` | list\<int32\>, null when empty | the MinHash slots, each u32 stored by its bits |
//! | `bands` | list\<int64\>, null when empty | the LSH key of each band, each u64 stored by its bits |
//!
//! The file's key-value metadata holds `ndup.format_version`, `ndup.ids` (the [`IdRule`]) and
//! `ndup.params`, the [`SigningParams`] as JSON: shards are read together only when those agree,
//! and a scan of them only with the same parameters, so that a key of one shard means what it
//! means in another.
//!
//! [`scan_signatures`] reads shards back and runs phase two of a scan (LSH, verification by
//! signature agreement, clusters): the same pairs as a scan of the corpus with
//! `--verify signature`. The texts are not in the shards, so nothing can verify exactly.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use arrow_array::builder::{
    BooleanBuilder, FixedSizeBinaryBuilder, Int32Builder, Int64Builder, ListBuilder, StringBuilder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use xxhash_rust::xxh3::xxh3_128;

use crate::candidates::lsh::band_hash;
use crate::error::{Error, Result};
use crate::find::params::SigningParams;
use crate::find::read::{Raw, Sketcher};
use crate::find::{Pipeline, ScanReport, Scratch, SignedCorpus};
use crate::model::{Skip, Stats};
use crate::source::records::Ids;
use crate::source::texts::{SharedTexts, Texts};
use crate::source::{Document, Origin, Source};
use crate::verify::VerifyMode;

/// The shard format; bumped when a column changes meaning.
pub const SHARD_FORMAT_VERSION: u32 = 1;

/// Rows per shard file by default.
pub const DEFAULT_SHARD_ROWS: usize = 1_000_000;

/// Rows per Parquet row group, and per batch when reading.
const BATCH_ROWS: usize = 65_536;

const META_VERSION: &str = "ndup.format_version";
const META_PARAMS: &str = "ndup.params";
const META_IDS: &str = "ndup.ids";

/// How [`sign`] names records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum IdRule {
    /// As a scan names documents: a record whose id an earlier one has is skipped, and a
    /// made-up id (a line number) gives way to a real one.
    #[default]
    Unique,
    /// Every record, named as [`crate::dedup`] names it: duplicate ids kept, line numbers as they
    /// are. For a job that signs a corpus in slices and decides uniqueness over all of them
    /// (`id_made_up` tells it which names are line numbers of the slice).
    AsRead,
}

impl IdRule {
    fn name(self) -> &'static str {
        match self {
            IdRule::Unique => "unique",
            IdRule::AsRead => "as-read",
        }
    }
}

/// How [`sign`] writes its shards.
#[derive(Debug, Clone, Copy)]
pub struct SignOptions {
    /// Rows per shard file, at least 1.
    pub shard_rows: usize,
    /// How records are named.
    pub ids: IdRule,
}

impl Default for SignOptions {
    fn default() -> Self {
        SignOptions {
            shard_rows: DEFAULT_SHARD_ROWS,
            ids: IdRule::Unique,
        }
    }
}

/// What [`sign`] did.
#[derive(Debug, Clone, Default)]
pub struct SignReport {
    /// The shard files written, in order.
    pub shards: Vec<PathBuf>,
    /// Documents written (empty ones included).
    pub documents: u64,
    /// Documents with no text after normalization (a row with no signature).
    pub empty: u64,
    /// What was skipped (binary, unreadable, malformed...), not written.
    pub skipped: Vec<Skip>,
}

/// What the sign stage keeps of a document.
struct Signed {
    id_made_up: bool,
    chars: u64,
    print: u128,
    signature: Option<Vec<u32>>,
}

struct SignSketcher<'a>(&'a Pipeline, IdRule);

impl Sketcher for SignSketcher<'_> {
    type Sketch = Signed;

    // Never `None`: an empty document still has a row (and a fingerprint).
    fn sketch(&self, s: &mut Scratch, raw: &Raw<'_>) -> Option<Signed> {
        Some(Signed {
            id_made_up: raw.id_made_up,
            chars: crate::text::strip_bom(raw.text).chars().count() as u64,
            print: xxh3_128(s.text.as_bytes()),
            signature: self.0.sign_normalized(s),
        })
    }

    fn unique_ids(&self) -> bool {
        self.1 == IdRule::Unique
    }
}

fn schema() -> SchemaRef {
    let item = |t: DataType| Arc::new(Field::new("item", t, true));
    Arc::new(Schema::new(vec![
        Field::new("doc", DataType::Int64, false),
        Field::new("id", DataType::Utf8, false),
        Field::new("id_made_up", DataType::Boolean, false),
        Field::new("source", DataType::Utf8, false),
        Field::new("line", DataType::Int64, true),
        Field::new("chars", DataType::Int64, false),
        Field::new("fingerprint", DataType::FixedSizeBinary(16), false),
        Field::new("signature", DataType::List(item(DataType::Int32)), true),
        Field::new("bands", DataType::List(item(DataType::Int64)), true),
    ]))
}

fn parquet_error(path: &Path) -> impl Fn(parquet::errors::ParquetError) -> Error + '_ {
    move |e| Error::Io {
        path: path.to_path_buf(),
        source: parquet_io(e),
    }
}

fn arrow_error(path: &Path) -> impl Fn(arrow_schema::ArrowError) -> Error + '_ {
    move |e| Error::Io {
        path: path.to_path_buf(),
        source: arrow_io(e),
    }
}

/// The I/O error inside `e` when a write or read failed (its kind intact: a closed pipe is
/// `BrokenPipe`, which the binary takes for a reader that has seen enough), else `e` as text.
fn arrow_io(e: arrow_schema::ArrowError) -> io::Error {
    use arrow_schema::ArrowError;
    match e {
        ArrowError::IoError(_, e) => e,
        ArrowError::ExternalError(inner) => external_io(inner),
        e => io::Error::other(e.to_string()),
    }
}

/// [`arrow_io`] for a Parquet error.
fn parquet_io(e: parquet::errors::ParquetError) -> io::Error {
    match e {
        parquet::errors::ParquetError::External(inner) => external_io(inner),
        e => io::Error::other(e.to_string()),
    }
}

/// The I/O error an error boxed by Arrow or Parquet is, or wraps.
fn external_io(inner: Box<dyn std::error::Error + Send + Sync>) -> io::Error {
    let inner = match inner.downcast::<io::Error>() {
        Ok(e) => return *e,
        Err(inner) => inner,
    };
    let inner = match inner.downcast::<arrow_schema::ArrowError>() {
        Ok(e) => return arrow_io(*e),
        Err(inner) => inner,
    };
    match inner.downcast::<parquet::errors::ParquetError>() {
        Ok(e) => parquet_io(*e),
        Err(inner) => io::Error::other(inner.to_string()),
    }
}

fn io_error(path: &Path) -> impl Fn(io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The shard files of `dir`, sorted by name.
fn shard_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).map_err(io_error(dir))? {
        let path = entry.map_err(io_error(dir))?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with("part-") && name.ends_with(".parquet") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// The signature configuration of `pipeline`; an error naming `out` when it uses another
/// sketch.
fn signature_config<'a>(
    pipeline: &'a Pipeline,
    out: &Path,
) -> Result<&'a crate::find::config::SignatureConfig> {
    pipeline
        .config()
        .signatures()
        .ok_or_else(|| Error::BadInput {
            path: out.to_path_buf(),
            reason: "signature shards hold MinHash signatures: sign with a signature sketch".into(),
        })
}

/// The documents signed for shards, and how to turn them into batches.
struct Signing {
    corpus: crate::find::read::Corpus<Signed>,
    num_perm: usize,
    lsh: crate::candidates::lsh::LshParams,
    metadata: Vec<(String, String)>,
}

impl Signing {
    /// Reads and signs every document of `source`; the pipeline must use signatures.
    fn run(pipeline: &Pipeline, source: &Source, ids: IdRule, out: &Path) -> Result<Signing> {
        let config = pipeline.config();
        let sig = signature_config(pipeline, out)?;
        let params = serde_json::to_string(&SigningParams::from_config(config))
            .expect("parameters serialize");
        let corpus = pipeline.read(source, &SignSketcher(pipeline, ids))?;
        Ok(Signing {
            corpus,
            num_perm: sig.num_perm,
            lsh: sig.lsh,
            metadata: vec![
                (META_VERSION.into(), SHARD_FORMAT_VERSION.to_string()),
                (META_IDS.into(), ids.name().to_owned()),
                (META_PARAMS.into(), params),
            ],
        })
    }

    /// Every document with its sketch (`SignSketcher` gives every one a sketch), in input order.
    fn rows(&self) -> Vec<(&Document, &Signed)> {
        self.corpus
            .sketched
            .iter()
            .map(|&d| &self.corpus.documents[d as usize])
            .zip(&self.corpus.sketches)
            .collect()
    }

    fn report(self, shards: Vec<PathBuf>) -> SignReport {
        let rows = self.corpus.sketches.len() as u64;
        let empty = self
            .corpus
            .sketches
            .iter()
            .filter(|s| s.signature.is_none())
            .count() as u64;
        SignReport {
            shards,
            documents: rows,
            empty,
            skipped: self.corpus.skipped,
        }
    }
}

/// Signs every document of `source` with `pipeline` (which must use signatures) and writes the
/// shards into `dir`, made if missing; a directory that already holds shards is refused rather
/// than mixed with.
pub fn sign(
    pipeline: &Pipeline,
    source: &Source,
    dir: &Path,
    options: &SignOptions,
) -> Result<SignReport> {
    let shard_rows = options.shard_rows.max(1);
    // Checked before the directory is made.
    signature_config(pipeline, dir)?;
    fs::create_dir_all(dir).map_err(io_error(dir))?;
    if let Some(old) = shard_files(dir)?.first() {
        return Err(Error::BadInput {
            path: dir.to_path_buf(),
            reason: format!(
                "the directory already holds signature shards ({}); remove them or sign into \
                 another directory",
                old.file_name().unwrap_or_default().to_string_lossy()
            ),
        });
    }
    let signing = Signing::run(pipeline, source, options.ids, dir)?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(BATCH_ROWS))
        .set_key_value_metadata(Some(
            signing
                .metadata
                .iter()
                .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
                .collect(),
        ))
        .build();
    let mut shards = Vec::new();
    let docs = signing.rows();
    // Nothing signed still gives a shard, of no rows but with the parameters: a corpus signed
    // in slices, one of them empty, is then scanned like any other (`--signatures` refuses a
    // directory without shards, a likely typo).
    let mut chunks: Vec<&[(&Document, &Signed)]> = docs.chunks(shard_rows).collect();
    if chunks.is_empty() {
        chunks.push(&[]);
    }
    for (n, chunk) in chunks.into_iter().enumerate() {
        let path = dir.join(format!("part-{n:05}.parquet"));
        // Written under a temporary name and renamed, so a shard that exists is whole.
        let mut builder = tempfile::Builder::new();
        builder.prefix(".part-").suffix(".tmp");
        // What open(2) gives any new file, 0666 less the umask, not tempfile's private 0600:
        // shards are made to be read by other jobs, often other users'.
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
        let mut tmp = builder.tempfile_in(dir).map_err(io_error(dir))?;
        let file = tmp.as_file_mut().try_clone().map_err(io_error(&path))?;
        let mut writer = ArrowWriter::try_new(file, schema(), Some(props.clone()))
            .map_err(parquet_error(&path))?;
        let first = n * shard_rows;
        for (b, batch) in chunk.chunks(BATCH_ROWS).enumerate() {
            let batch = to_batch(
                batch,
                first + b * BATCH_ROWS,
                signing.num_perm,
                signing.lsh,
                &path,
            )?;
            writer.write(&batch).map_err(parquet_error(&path))?;
        }
        writer.close().map_err(parquet_error(&path))?;
        tmp.persist(&path).map_err(|e| io_error(&path)(e.error))?;
        shards.push(path);
    }
    drop(docs);
    Ok(signing.report(shards))
}

/// [`sign`] into one Arrow IPC stream written to `out` (`name` names it in errors) instead of
/// shard files: the same schema, the same rows, and the shards' key-value metadata as the
/// schema's metadata. For a program that reads the signatures from a pipe
/// (`pyarrow.ipc.open_stream`), with no file in between.
pub fn sign_stream(
    pipeline: &Pipeline,
    source: &Source,
    out: &mut dyn io::Write,
    name: &Path,
    ids: IdRule,
) -> Result<SignReport> {
    let signing = Signing::run(pipeline, source, ids, name)?;
    let schema = Arc::new(
        schema().as_ref().clone().with_metadata(
            signing
                .metadata
                .iter()
                .cloned()
                .collect::<std::collections::HashMap<_, _>>(),
        ),
    );
    let mut writer =
        arrow_ipc::writer::StreamWriter::try_new(out, &schema).map_err(arrow_error(name))?;
    let docs = signing.rows();
    for (b, batch) in docs.chunks(BATCH_ROWS).enumerate() {
        let batch = to_batch(batch, b * BATCH_ROWS, signing.num_perm, signing.lsh, name)?
            .with_schema(Arc::clone(&schema))
            .map_err(arrow_error(name))?;
        writer.write(&batch).map_err(arrow_error(name))?;
    }
    writer.finish().map_err(arrow_error(name))?;
    drop(docs);
    Ok(signing.report(Vec::new()))
}

fn to_batch(
    rows: &[(&Document, &Signed)],
    first: usize,
    num_perm: usize,
    lsh: crate::candidates::lsh::LshParams,
    path: &Path,
) -> Result<RecordBatch> {
    let n = rows.len();
    let mut doc = Int64Builder::with_capacity(n);
    let mut id = StringBuilder::with_capacity(n, n * 16);
    let mut made_up = BooleanBuilder::with_capacity(n);
    let mut source = StringBuilder::with_capacity(n, n * 16);
    let mut line = Int64Builder::with_capacity(n);
    let mut chars = Int64Builder::with_capacity(n);
    let mut print = FixedSizeBinaryBuilder::with_capacity(n, 16);
    let mut sigs = ListBuilder::with_capacity(Int32Builder::with_capacity(n * num_perm), n);
    let mut bands = ListBuilder::with_capacity(Int64Builder::with_capacity(n * lsh.bands), n);
    for (i, (d, s)) in rows.iter().enumerate() {
        doc.append_value((first + i) as i64);
        id.append_value(&d.id);
        made_up.append_value(s.id_made_up);
        match &d.origin {
            Origin::File(p) => {
                source.append_value(p.to_string_lossy());
                line.append_null();
            }
            Origin::Record {
                source: src,
                line: l,
                ..
            } => {
                source.append_value(src.name());
                line.append_value(*l as i64);
            }
            Origin::Text { .. } => {
                source.append_value("");
                line.append_null();
            }
        }
        chars.append_value(s.chars as i64);
        print
            .append_value(s.print.to_be_bytes())
            .map_err(arrow_error(path))?;
        match &s.signature {
            Some(sig) => {
                sigs.values()
                    .append_slice(bytemuck::cast_slice::<u32, i32>(sig));
                sigs.append(true);
                for b in 0..lsh.bands {
                    let key = band_hash(&sig[b * lsh.rows..(b + 1) * lsh.rows]);
                    bands.values().append_value(key as i64);
                }
                bands.append(true);
            }
            None => {
                sigs.append_null();
                bands.append_null();
            }
        }
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(doc.finish()),
        Arc::new(id.finish()),
        Arc::new(made_up.finish()),
        Arc::new(source.finish()),
        Arc::new(line.finish()),
        Arc::new(chars.finish()),
        Arc::new(print.finish()),
        Arc::new(sigs.finish()),
        Arc::new(bands.finish()),
    ];
    RecordBatch::try_new(schema(), columns).map_err(arrow_error(path))
}

/// The documents of shards: their texts were not kept, so none can be read again (exact
/// verification and reports that show texts have nothing to read).
#[derive(Debug)]
struct TextsNotKept(usize);

impl Texts for TextsNotKept {
    fn len(&self) -> usize {
        self.0
    }

    fn id(&self, i: usize) -> std::borrow::Cow<'_, str> {
        i.to_string().into()
    }

    fn text(&self, _i: usize) -> Option<&str> {
        None
    }
}

/// Reads the shards of `dirs` (directories of `part-*.parquet`, or shard files), in order, as
/// the signed corpus of a scan with `run`'s parameters. Shards made with other parameters than
/// the first, or than `run`, are refused with a message naming what differs.
pub fn read_shards(dirs: &[PathBuf], run: &SigningParams) -> Result<SignedCorpus> {
    let mut files = Vec::new();
    for d in dirs {
        if d.is_dir() {
            let found = shard_files(d)?;
            if found.is_empty() {
                return Err(Error::BadInput {
                    path: d.clone(),
                    reason: "no signature shards (part-*.parquet) in this directory".into(),
                });
            }
            files.extend(found);
        } else {
            crate::source::files::check_exists(d)?;
            files.push(d.clone());
        }
    }
    let mut corpus = SignedCorpus::default();
    let mut first: Option<(PathBuf, SigningParams)> = None;
    let num_perm = run.num_perm;
    let mut rows = Rows {
        // Replaced by the texts of every document once they are all read.
        texts: SharedTexts::new(TextsNotKept(0)),
        ids: Ids::new(1, true),
        several_sources: several_sources(&files),
        sources: Vec::new(),
        places: Vec::new(),
    };
    for path in &files {
        // Its footer checked first: a stranger's schema could overflow the stack.
        let builder = crate::source::parquet::open_reader_builder(path)?;
        let params = shard_params(
            path,
            builder.metadata().file_metadata().key_value_metadata(),
        )?;
        let name = |p: &Path| {
            p.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        };
        match &first {
            None => {
                params
                    .check(run, "signed with ", ", this run uses ")
                    .map_err(|differences| Error::ShardParams {
                        path: path.clone(),
                        differences,
                    })?;
                first = Some((path.clone(), params));
            }
            Some((first_path, first_params)) => {
                params
                    .check(
                        first_params,
                        "signed with ",
                        &format!(", {} with ", name(first_path)),
                    )
                    .map_err(|differences| Error::ShardParams {
                        path: path.clone(),
                        differences,
                    })?;
            }
        }
        let reader = builder
            .with_batch_size(BATCH_ROWS)
            .build()
            .map_err(parquet_error(path))?;
        for batch in reader {
            let batch = batch.map_err(arrow_error(path))?;
            read_batch(&batch, path, num_perm, &mut corpus, &mut rows)?;
        }
    }
    let texts = SharedTexts::new(TextsNotKept(corpus.documents.len()));
    for d in &mut corpus.documents {
        if let Origin::Text { texts: t, .. } = &mut d.origin {
            *t = texts.clone();
        }
    }
    corpus.stats = Stats {
        documents: corpus.documents.len() as u64,
        empty: corpus.documents.iter().filter(|d| d.empty).count() as u64,
        ..Stats::default()
    };
    for skip in &corpus.skipped {
        corpus.stats.count_skip(skip.kind);
    }
    Ok(corpus)
}

fn shard_params(path: &Path, meta: Option<&Vec<KeyValue>>) -> Result<SigningParams> {
    let get = |key: &str| {
        meta.and_then(|m| m.iter().find(|kv| kv.key == key))
            .and_then(|kv| kv.value.clone())
    };
    let not_shard = |why: &str| Error::BadInput {
        path: path.to_path_buf(),
        reason: format!("not an ndup signature shard ({why}); make shards with `ndup sign`"),
    };
    match get(META_VERSION) {
        None => return Err(not_shard("no ndup.format_version")),
        Some(v) if v != SHARD_FORMAT_VERSION.to_string() => {
            return Err(not_shard(&format!(
                "format version {v}, this ndup reads version {SHARD_FORMAT_VERSION}"
            )));
        }
        Some(_) => {}
    }
    let params = get(META_PARAMS).ok_or_else(|| not_shard("no ndup.params"))?;
    serde_json::from_str(&params).map_err(|e| not_shard(&format!("bad ndup.params: {e}")))
}

/// True when the rows of `files` come from more than one source. Files that cannot be read are
/// passed over here: reading them for their rows says what is wrong with them.
fn several_sources(files: &[PathBuf]) -> bool {
    let mut first: Option<String> = None;
    for path in files {
        let Ok(builder) = crate::source::parquet::open_reader_builder(path) else {
            continue;
        };
        let only_source = ProjectionMask::columns(builder.parquet_schema(), ["source"]);
        let Ok(reader) = builder
            .with_projection(only_source)
            .with_batch_size(BATCH_ROWS)
            .build()
        else {
            continue;
        };
        for batch in reader {
            let Some(sources) = batch.ok().and_then(|b| b.column_by_name("source").cloned()) else {
                break;
            };
            let Some(sources) = sources.as_string_opt::<i32>() else {
                break;
            };
            for s in sources.iter().flatten() {
                match &first {
                    None => first = Some(s.to_owned()),
                    Some(f) if f != s => return true,
                    Some(_) => {}
                }
            }
        }
    }
    false
}

/// What reading rows keeps besides the corpus: the ids given so far, and where each document
/// came from, so that shards signed with [`IdRule::AsRead`], or signed one source at a time, get
/// the ids a scan would give.
struct Rows {
    texts: SharedTexts,
    ids: Ids,
    /// The rows come from more than one source. A scan of several sources names a record without
    /// an id `source:line`, a scan of one source by its line alone: shards signed a source at a
    /// time hold the bare line, to be named as a scan of all their sources names it.
    several_sources: bool,
    sources: Vec<String>,
    /// For each document: its source (in `sources`) and its line (0 for a file).
    places: Vec<(u32, u64)>,
}

fn read_batch(
    batch: &RecordBatch,
    path: &Path,
    num_perm: usize,
    corpus: &mut SignedCorpus,
    rows: &mut Rows,
) -> Result<()> {
    let bad = |reason: String| Error::BadInput {
        path: path.to_path_buf(),
        reason,
    };
    let column = |name: &str| {
        batch
            .column_by_name(name)
            .ok_or_else(|| bad(format!("no `{name}` column")))
    };
    let ids = column("id")?
        .as_string_opt::<i32>()
        .ok_or_else(|| bad("`id` is not a string column".into()))?;
    // Shards signed before the column existed have only real or already settled ids.
    let made_up = match batch.column_by_name("id_made_up") {
        None => None,
        Some(c) => Some(
            c.as_boolean_opt()
                .ok_or_else(|| bad("`id_made_up` is not a bool column".into()))?,
        ),
    };
    let sources = column("source")?
        .as_string_opt::<i32>()
        .ok_or_else(|| bad("`source` is not a string column".into()))?;
    let lines = column("line")?
        .as_primitive_opt::<Int64Type>()
        .ok_or_else(|| bad("`line` is not an int64 column".into()))?;
    let sigs = column("signature")?
        .as_list_opt::<i32>()
        .ok_or_else(|| bad("`signature` is not a list column".into()))?;
    for row in 0..batch.num_rows() {
        if ids.is_null(row) {
            return Err(bad(format!("row {row} has no id")));
        }
        let source = sources.value(row);
        if rows.sources.last().is_none_or(|s| s != source) {
            rows.sources.push(source.to_owned());
        }
        let line = if lines.is_null(row) {
            0
        } else {
            lines.value(row) as u64
        };
        let id_made_up = made_up.is_some_and(|m| !m.is_null(row) && m.value(row));
        let id = if id_made_up && rows.several_sources {
            format!("{source}:{line}")
        } else {
            ids.value(row).to_owned()
        };
        let (places, names) = (&rows.places, &rows.sources);
        let id = rows.ids.settle(
            source,
            line,
            id,
            id_made_up,
            &mut corpus.documents,
            |d| match &d.origin {
                Origin::Text { index, .. } => {
                    let (s, line) = places[*index];
                    (names[s as usize].clone(), line)
                }
                Origin::File(_) | Origin::Record { .. } => unreachable!("shards hold texts"),
            },
        );
        let id = match id {
            Ok(id) => id,
            Err(skip) => {
                corpus.skipped.push(skip);
                continue;
            }
        };
        let doc = corpus.documents.len() as u32;
        rows.places.push((rows.sources.len() as u32 - 1, line));
        let empty = sigs.is_null(row);
        corpus.documents.push(Document {
            id,
            origin: Origin::Text {
                texts: rows.texts.clone(),
                index: doc as usize,
            },
            empty,
        });
        if empty {
            continue;
        }
        let sig = sigs.value(row);
        let sig = sig
            .as_primitive_opt::<Int32Type>()
            .ok_or_else(|| bad("`signature` items are not int32".into()))?;
        if sig.len() != num_perm || sig.null_count() > 0 {
            return Err(bad(format!(
                "the signature of `{}` has {} slots, not {num_perm}",
                ids.value(row),
                sig.len()
            )));
        }
        corpus
            .signatures
            .extend(sig.values().iter().map(|&v| v as u32));
        corpus.signed.push(doc);
    }
    Ok(())
}

/// Phase two of a scan on signature shards: LSH, verification by signature agreement, the
/// report. `pipeline` must have the shards' parameters; its verification must not need the
/// texts (`signature` or `none`).
pub fn scan_signatures(pipeline: &Pipeline, dirs: &[PathBuf]) -> Result<ScanReport> {
    let config = pipeline.config();
    if matches!(config.verify, VerifyMode::Auto | VerifyMode::Exact) {
        return Err(Error::InvalidConfig(crate::problem![
            "signature shards hold no text: verify by signature (or none), not exactly"
        ]));
    }
    let start = Instant::now();
    let corpus = read_shards(dirs, &SigningParams::from_config(config))?;
    pipeline.find_pairs(corpus, start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::ArrowError;
    use parquet::errors::ParquetError;

    /// A closed pipe stays `BrokenPipe` however the writers wrap it, so that the binary can tell
    /// a reader that has seen enough from a failure.
    #[test]
    fn an_io_error_keeps_its_kind_through_arrow_and_parquet() {
        let pipe = || io::Error::from(io::ErrorKind::BrokenPipe);
        let kind = |e: Error| match e {
            Error::Io { source, .. } => source.kind(),
            e => panic!("{e}"),
        };
        let path = Path::new("-");
        for e in [
            ArrowError::from(pipe()),
            ArrowError::ExternalError(Box::new(pipe())),
            ArrowError::ExternalError(Box::new(ParquetError::from(pipe()))),
        ] {
            assert_eq!(kind(arrow_error(path)(e)), io::ErrorKind::BrokenPipe);
        }
        for e in [
            ParquetError::from(pipe()),
            ParquetError::External(Box::new(ArrowError::from(pipe()))),
        ] {
            assert_eq!(kind(parquet_error(path)(e)), io::ErrorKind::BrokenPipe);
        }
        // Anything else is its message.
        let other = kind(arrow_error(path)(ArrowError::DivideByZero));
        assert_eq!(other, io::ErrorKind::Other);
        let e = parquet_error(path)(ParquetError::General("bad".into()));
        assert!(e.to_string().ends_with("Parquet error: bad"), "{e}");
    }
}
