//! Whole corpora: `scan` over paths or Python texts, and `dedup_arrow` over an Arrow table read
//! in place through the Arrow C stream interface.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, LargeStringArray, RecordBatch, StringArray, StringViewArray};
use arrow_schema::DataType;
use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3_arrow::PyTable;

use ndup::dedup::{Fate, Keep, dedup_texts};
use ndup::find::config::{ExactConfig, ScanConfig, SignatureConfig, StrategyConfig};
use ndup::find::{Pipeline, ScanReport};
use ndup::sim::Measure;
use ndup::sketch::sample::{DEFAULT_MODULO, DEFAULT_SUPERSHINGLE_SIZE, SampleKind, SampleParams};
use ndup::source::files::InputOptions;
use ndup::source::records::{RecordOptions, looks_like_records};
use ndup::source::texts::{SharedTexts, Texts};
use ndup::source::{Origin, Source};
use ndup::text::normalize::NormalizeOptions;
use ndup::{Error, SketchKind};

use crate::lsh::{resolve_banding, verify_mode};
use crate::signature::{count, seed, shingle_options, sketch_kind};
use crate::{OrPy, interruptible};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(scan_texts, m)?)?;
    m.add_function(wrap_pyfunction!(scan_paths, m)?)?;
    m.add_function(wrap_pyfunction!(dedup_arrow, m)?)?;
    Ok(())
}

/// The options of `ndup.scan` and `ndup.dedup_arrow`, every one given (the Python wrapper holds
/// the defaults, in one place with its signature and docstring).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct Options {
    threshold: f64,
    verify: String,
    exact: bool,
    containment: bool,
    num_perm: Option<i64>,
    bands: Option<i64>,
    rows: Option<i64>,
    seed: i128,
    sketch: Option<String>,
    modulo: Option<i64>,
    supershingle_size: Option<i64>,
    shingle: String,
    k: i64,
    w: i64,
    stopwords: Option<Vec<String>>,
    nfkc: bool,
    lowercase: bool,
    collapse_whitespace: bool,
    trim: bool,
    max_bucket: i64,
    fp_weight: f64,
    fn_weight: f64,
    max_memory: Option<u64>,
    glob: Vec<String>,
    exclude: Vec<String>,
    hidden: bool,
    no_ignore: bool,
    follow_links: bool,
    max_filesize: Option<u64>,
    id_field: String,
    text_field: String,
}

impl Options {
    /// The signature sketch, and the sample sketch when one is asked for, as `ndup scan`
    /// chooses them (with `containment`, modulo sampling is the default and the only one).
    fn sketches(&self) -> PyResult<(SketchKind, Option<SampleParams>)> {
        let modulo = self.modulo.map(|m| count("modulo", m)).transpose()?;
        let size = self
            .supershingle_size
            .map(|s| count("supershingle_size", s))
            .transpose()?;
        let sample = |kind| SampleParams {
            kind,
            modulo: modulo.map_or(DEFAULT_MODULO, |m| m as u64),
            supershingle_size: size.unwrap_or(DEFAULT_SUPERSHINGLE_SIZE),
        };
        let bad = |m: &str| Err(PyValueError::new_err(m.to_string()));
        let chosen = match (self.sketch.as_deref(), self.containment) {
            (None, true) | (Some("modulo"), _) => Some(sample(SampleKind::Modulo)),
            (Some("supershingle"), false) => Some(sample(SampleKind::Supershingle)),
            (Some("supershingle"), true) => {
                return bad(
                    "containment needs sketch='modulo': supershingles miss a document inside a \
                     much larger one",
                );
            }
            (Some(_), true) => {
                return bad(
                    "containment compares shingle samples, not signatures: use sketch='modulo' \
                     (the default with containment=True)",
                );
            }
            (_, false) => None,
        };
        if chosen.is_none() && modulo.is_some() {
            return bad("modulo applies only to sketch='modulo' or 'supershingle'");
        }
        if chosen.map(|s| s.kind) != Some(SampleKind::Supershingle) && size.is_some() {
            return bad("supershingle_size applies only to sketch='supershingle'");
        }
        let kind = match self.sketch.as_deref() {
            None | Some("modulo" | "supershingle") => SketchKind::Fss,
            Some(name) => sketch_kind(name)?,
        };
        if let Some(s) = chosen {
            s.validate().or_py()?;
        }
        Ok((kind, chosen))
    }

    /// The configuration of a scan (`dedup`: of deduplication, which needs signatures), as
    /// the command line makes it from the same flags.
    fn config(&self, dedup: bool) -> PyResult<ScanConfig> {
        let (sketch, sample) = self.sketches()?;
        if let Some(s) = sample {
            let shaped = self.bands.is_some() || self.rows.is_some() || self.num_perm.is_some();
            if dedup {
                return Err(PyValueError::new_err(format!(
                    "deduplication needs a signature sketch (fss, oph or classic), not \
                     sketch='{}'",
                    s.kind.name()
                )));
            }
            if shaped && !self.exact {
                return Err(PyValueError::new_err(format!(
                    "num_perm, bands and rows apply to signature sketches, not to sketch='{}'",
                    s.kind.name()
                )));
            }
        }
        if dedup && self.exact {
            return Err(PyValueError::new_err(
                "deduplication signs documents: exact=True does not apply",
            ));
        }
        let weights = ndup::candidates::tune::Weights {
            fp: self.fp_weight,
            fn_: self.fn_weight,
        };
        let (num_perm, lsh) = resolve_banding(
            self.num_perm,
            self.bands,
            self.rows,
            self.threshold,
            weights,
        )?;
        let strategy = if self.exact {
            StrategyConfig::Exact(ExactConfig {
                max_memory: self.max_memory.or_else(default_max_memory),
            })
        } else if let Some(s) = sample {
            StrategyConfig::Sample(s)
        } else {
            StrategyConfig::Signatures(SignatureConfig {
                sketch,
                num_perm,
                lsh,
            })
        };
        let config = ScanConfig {
            input: InputOptions {
                follow_links: self.follow_links,
                hidden: self.hidden,
                no_ignore: self.no_ignore,
                globs: self.glob.clone(),
                excludes: self.exclude.clone(),
                max_filesize: self.max_filesize,
                records: RecordOptions {
                    id_field: self.id_field.clone(),
                    text_field: self.text_field.clone(),
                    ..RecordOptions::default()
                },
                ..InputOptions::default()
            },
            normalize: NormalizeOptions {
                nfkc: self.nfkc,
                lowercase: self.lowercase,
                collapse_whitespace: self.collapse_whitespace,
                trim: self.trim,
            },
            shingle: shingle_options(&self.shingle, self.k, self.w, self.stopwords.clone())?,
            strategy,
            seed: seed(self.seed)?,
            threshold: self.threshold,
            measure: if self.containment {
                Measure::Containment
            } else {
                Measure::Jaccard
            },
            verify: verify_mode(&self.verify)?,
            max_bucket: count("max_bucket", self.max_bucket)?,
        };
        config.validate().or_py()?;
        Ok(config)
    }
}

/// Three quarters of the physical memory, as the command line's default `--max-memory`, so that
/// an exact scan too large for the machine stops with a message instead of swapping.
fn default_max_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024 / 4 * 3)
}

/// Scans texts: `ids[i]` names `texts[i]`. Pairs, clusters and skips name documents by their
/// position in the lists.
#[pyfunction(name = "_scan_texts")]
fn scan_texts<'py>(
    py: Python<'py>,
    ids: Vec<String>,
    texts: Vec<Option<String>>,
    clusters: bool,
    options: Options,
) -> PyResult<Bound<'py, PyDict>> {
    if ids.len() != texts.len() {
        return Err(PyValueError::new_err("one id per text"));
    }
    let pipeline = Pipeline::new(options.config(false)?).or_py()?;
    let texts: Vec<(String, Option<String>)> = ids.into_iter().zip(texts).collect();
    let source = Source::Texts(SharedTexts::new(texts));
    let report =
        interruptible(py, |stop| pipeline.with_stop(stop).scan_source(&source))?.or_py()?;
    report_to_py(py, &report, clusters)
}

/// Scans files and directories, or records (when every path is a JSON-lines or Parquet file, or
/// a directory of Parquet shards). Pairs, clusters and skips name documents by their ids.
#[pyfunction(name = "_scan_paths")]
fn scan_paths<'py>(
    py: Python<'py>,
    paths: Vec<PathBuf>,
    clusters: bool,
    options: Options,
) -> PyResult<Bound<'py, PyDict>> {
    let records = paths.iter().filter(|p| looks_like_records(p)).count();
    let source = if records == 0 {
        Source::Files(paths)
    } else if records == paths.len() {
        Source::Records(paths)
    } else {
        return Err(PyValueError::new_err(
            "give either records (JSON-lines files: .jsonl, .ndjson, optionally .gz or .zst; \
             Parquet files and directories of them) or other files and directories, not both",
        ));
    };
    let pipeline = Pipeline::new(options.config(false)?).or_py()?;
    let report =
        interruptible(py, |stop| pipeline.with_stop(stop).scan_source(&source))?.or_py()?;
    report_to_py(py, &report, clusters)
}

/// How a report names document `d` to Python: its position among texts in memory, otherwise
/// its id.
fn doc_ref<'py>(py: Python<'py>, report: &ScanReport, d: u32) -> PyResult<Bound<'py, PyAny>> {
    let doc = &report.documents[d as usize];
    Ok(match &doc.origin {
        Origin::Text { index, .. } => index.into_pyobject(py)?.into_any(),
        _ => doc.id.as_str().into_pyobject(py)?.into_any(),
    })
}

/// The report as plain Python values, for the wrapper to dress: `params` (what the command
/// line's first JSON record holds), `pairs` as tuples, `clusters`, `skipped`, `stats`.
fn report_to_py<'py>(
    py: Python<'py>,
    report: &ScanReport,
    clusters: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    let json = py.import("json")?;
    let params =
        serde_json::to_string(&report.params).map_err(|e| PyValueError::new_err(e.to_string()))?;
    out.set_item("params", json.call_method1("loads", (params,))?)?;
    let pairs = PyList::empty(py);
    for p in &report.pairs {
        pairs.append((
            doc_ref(py, report, p.a)?,
            doc_ref(py, report, p.b)?,
            p.estimate,
            p.jaccard,
            p.a_in_b,
            p.b_in_a,
        ))?;
    }
    out.set_item("pairs", pairs)?;
    if clusters {
        let groups = PyList::empty(py);
        for g in report.clusters() {
            let members: Vec<Bound<'py, PyAny>> = g
                .iter()
                .map(|&d| doc_ref(py, report, d))
                .collect::<PyResult<_>>()?;
            groups.append(members)?;
        }
        out.set_item("clusters", groups)?;
    } else {
        out.set_item("clusters", py.None())?;
    }
    out.set_item("skipped", skips_to_py(py, &report.skipped)?)?;
    let s = &report.stats;
    let stats = PyDict::new(py);
    for (name, v) in [
        ("documents", s.documents),
        ("empty", s.empty),
        ("skipped_binary", s.skipped_binary),
        ("skipped_unreadable", s.skipped_unreadable),
        ("skipped_malformed", s.skipped_malformed),
        ("skipped_too_large", s.skipped_too_large),
        ("bytes", s.bytes),
        ("candidates", s.candidates),
        ("exact_checked", s.exact_checked),
        ("oversized_buckets", s.oversized_buckets),
        ("pairs", s.pairs),
    ] {
        stats.set_item(name, v)?;
    }
    stats.set_item("elapsed", s.elapsed.as_secs_f64())?;
    out.set_item("stats", stats)?;
    Ok(out)
}

fn skips_to_py<'py>(
    py: Python<'py>,
    skipped: &[ndup::model::Skip],
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for s in skipped {
        list.append((s.id.as_str(), s.kind.name(), s.reason.as_str()))?;
    }
    Ok(list)
}

/// A string column of one record batch, read in place.
#[derive(Debug)]
enum Strings {
    Utf8(StringArray),
    Large(LargeStringArray),
    View(StringViewArray),
    /// A dictionary-encoded column (a pandas or Polars categorical): each row's value is read
    /// through its key, so a column whose few values repeat over many rows is never expanded.
    Dict {
        /// Each row's value, as a position in `values`.
        keys: Vec<usize>,
        /// The column itself, for the rows whose key is null.
        column: ArrayRef,
        values: Box<Strings>,
    },
    /// Every value missing.
    Null,
}

impl Strings {
    /// The column as strings: string columns (plain or dictionary-encoded) as they are, without
    /// a copy; `cast` says whether other types are converted to strings (ids) or refused (texts).
    fn of(column: &ArrayRef, name: &str, cast: bool) -> PyResult<Strings> {
        Ok(match column.data_type() {
            DataType::Utf8 => Strings::Utf8(column.as_string::<i32>().clone()),
            DataType::LargeUtf8 => Strings::Large(column.as_string::<i64>().clone()),
            DataType::Utf8View => Strings::View(column.as_string_view().clone()),
            DataType::Null => Strings::Null,
            DataType::Dictionary(_, _) => {
                let dict = column.as_any_dictionary();
                let values = dict.values();
                if values.is_empty() {
                    // No value to point to: every key is null (or the column is empty).
                    return Ok(Strings::Null);
                }
                let values = Strings::of(values, name, cast).map_err(|e| match cast {
                    true => e,
                    false => PyTypeError::new_err(format!(
                        "column '{name}' holds {}, not strings",
                        column.data_type()
                    )),
                })?;
                Strings::Dict {
                    keys: dict.normalized_keys(),
                    column: Arc::clone(column),
                    values: Box::new(values),
                }
            }
            other if cast => Strings::of(&to_utf8(column, name)?, name, false).map_err(|_| {
                PyTypeError::new_err(format!("column '{name}' ({other}) cannot be read as ids"))
            })?,
            other => {
                return Err(PyTypeError::new_err(format!(
                    "column '{name}' holds {other}, not strings"
                )));
            }
        })
    }

    fn get(&self, row: usize) -> Option<&str> {
        fn at<A: Array>(a: &A, row: usize, value: impl Fn(&A) -> &str) -> Option<&str> {
            (!a.is_null(row)).then(|| value(a))
        }
        match self {
            Strings::Utf8(a) => at(a, row, |a| a.value(row)),
            Strings::Large(a) => at(a, row, |a| a.value(row)),
            Strings::View(a) => at(a, row, |a| a.value(row)),
            Strings::Dict {
                keys,
                column,
                values,
            } => match column.is_null(row) {
                true => None,
                false => values.get(keys[row]),
            },
            Strings::Null => None,
        }
    }
}

fn to_utf8(column: &ArrayRef, name: &str) -> PyResult<ArrayRef> {
    arrow_cast::cast(column, &DataType::Utf8).map_err(|e| {
        PyTypeError::new_err(format!("column '{name}' cannot be read as strings: {e}"))
    })
}

/// The rows of an Arrow table as [`Texts`], read in place: each batch's text column (and id
/// column) as Arrow holds it. A row without an id is named by its number from 1, as `ndup
/// dedup` names a record without one by its line.
#[derive(Debug)]
struct ArrowTexts {
    /// The first row of each batch, and the number of rows after the last.
    starts: Vec<usize>,
    texts: Vec<Strings>,
    ids: Option<Vec<Strings>>,
}

impl ArrowTexts {
    fn locate(&self, i: usize) -> (usize, usize) {
        let b = self.starts.partition_point(|&s| s <= i) - 1;
        (b, i - self.starts[b])
    }
}

impl Texts for ArrowTexts {
    fn len(&self) -> usize {
        *self.starts.last().expect("starts ends with the row count")
    }

    fn id(&self, i: usize) -> Cow<'_, str> {
        let (b, row) = self.locate(i);
        match self.ids.as_ref().and_then(|ids| ids[b].get(row)) {
            Some(id) => Cow::Borrowed(id),
            None => Cow::Owned((i + 1).to_string()),
        }
    }

    fn text(&self, i: usize) -> Option<&str> {
        let (b, row) = self.locate(i);
        self.texts[b].get(row)
    }
}

/// Deduplicates the rows of `table` by the texts of `text_column`, as `ndup dedup` deduplicates
/// the same records: the kept rows, in order, as a pyarrow Table made of slices of the input
/// (no text is copied), and a summary.
#[pyfunction(name = "_dedup_arrow")]
fn dedup_arrow<'py>(
    py: Python<'py>,
    table: PyTable,
    text_column: &str,
    id_column: Option<&str>,
    keep: &str,
    options: Options,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyDict>)> {
    let keep = match keep {
        "first" => Keep::First,
        "longest" => Keep::Longest,
        "shortest" => Keep::Shortest,
        other => {
            return Err(PyValueError::new_err(format!(
                "keep must be 'first', 'longest' or 'shortest', not '{other}'"
            )));
        }
    };
    let config = options.config(true)?;
    let (batches, schema) = table.into_inner();
    let column = |name: &str| {
        schema.index_of(name).map_err(|_| {
            let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            PyKeyError::new_err(format!(
                "no column '{name}' (the columns: {})",
                names.join(", ")
            ))
        })
    };
    let text_index = column(text_column)?;
    // A table without the id column is numbered, as records without an id field are.
    let id_index = id_column.and_then(|name| schema.index_of(name).ok());
    let mut starts = vec![0];
    let mut texts = Vec::with_capacity(batches.len());
    let mut ids = id_index.map(|_| Vec::with_capacity(batches.len()));
    for batch in &batches {
        starts.push(starts.last().expect("starts with 0") + batch.num_rows());
        texts.push(Strings::of(batch.column(text_index), text_column, false)?);
        if let (Some(ids), Some(i), Some(name)) = (&mut ids, id_index, id_column) {
            ids.push(Strings::of(batch.column(i), name, true)?);
        }
    }
    let rows = *starts.last().expect("starts with 0");
    let summary = PyDict::new(py);
    if rows == 0 {
        for (name, v) in [
            ("documents", 0u64),
            ("kept", 0),
            ("exact_dropped", 0),
            ("near_dropped", 0),
        ] {
            summary.set_item(name, v)?;
        }
        summary.set_item("skipped", PyList::empty(py))?;
        let empty = PyTable::try_new(batches, schema)?;
        return Ok((empty.into_pyarrow(py)?, summary));
    }
    let arrow_texts = ArrowTexts { starts, texts, ids };
    let pipeline = Pipeline::new(config).or_py()?;
    let texts = SharedTexts::new(arrow_texts);
    let report = interruptible(py, |stop| {
        dedup_texts(&pipeline.with_stop(stop), texts, keep)
    })?
    .map_err(|e| match e {
        Error::NoDocuments { .. } => {
            PyValueError::new_err(format!("no row has a text in column '{text_column}' ({e})"))
        }
        other => crate::to_py(other),
    })?;
    let mut kept = vec![false; rows];
    for (doc, fate) in report.scan.documents.iter().zip(&report.fates) {
        if let (Origin::Text { index, .. }, Fate::Kept) = (&doc.origin, fate) {
            kept[*index] = true;
        }
    }
    let out = kept_slices(&batches, &kept);
    for (name, v) in [
        ("documents", report.scan.documents.len() as u64),
        ("kept", report.kept()),
        ("exact_dropped", report.exact_dropped),
        ("near_dropped", report.near_dropped),
    ] {
        summary.set_item(name, v)?;
    }
    summary.set_item("skipped", skips_to_py(py, &report.scan.skipped)?)?;
    let table = PyTable::try_new(out, schema)?;
    Ok((table.into_pyarrow(py)?, summary))
}

/// The kept rows of `batches` as slices: each run of kept rows is one zero-copy slice of its
/// batch, so a batch with nothing dropped comes out whole.
fn kept_slices(batches: &[RecordBatch], kept: &[bool]) -> Vec<RecordBatch> {
    let mut out = Vec::new();
    let mut start = 0;
    for batch in batches {
        let flags = &kept[start..start + batch.num_rows()];
        let mut row = 0;
        while row < flags.len() {
            if !flags[row] {
                row += 1;
                continue;
            }
            let run = flags[row..].iter().take_while(|&&k| k).count();
            out.push(batch.slice(row, run));
            row += run;
        }
        start += batch.num_rows();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_rows_are_runs_of_slices() {
        let column: ArrayRef = Arc::new(StringArray::from(vec!["a", "b", "c", "d", "e"]));
        let batch = RecordBatch::try_from_iter([("text", column)]).unwrap();
        let batches = [batch.clone(), batch.slice(0, 2)];
        let kept = [true, true, false, true, false, false, true];
        let out = kept_slices(&batches, &kept);
        let rows: Vec<Vec<&str>> = out
            .iter()
            .map(|b| {
                b.column(0)
                    .as_string::<i32>()
                    .iter()
                    .map(|v| v.unwrap())
                    .collect()
            })
            .collect();
        assert_eq!(rows, [vec!["a", "b"], vec!["d"], vec!["b"]]);
    }
}
