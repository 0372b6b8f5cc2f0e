//! `ndup._ndup`, the extension module behind the `ndup` Python package: MinHash signatures
//! ([`signature`]), the in-memory LSH index and the tuner ([`lsh`]), and whole corpora, from
//! paths, Python texts or Arrow tables ([`corpus`]).
//!
//! Everything here is a thin layer over the `ndup` crate: the library signs, bands, scans and
//! deduplicates; this crate converts arguments, releases the GIL around the work, and turns
//! library errors into Python exceptions (never a panic).

mod corpus;
mod lsh;
mod signature;

use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyValueError};
use pyo3::prelude::*;

use ndup::error::{Error, Param};

/// The Python exception of a library error: `OSError` (or `FileNotFoundError`) for input that
/// could not be read, `ValueError` for everything the caller can fix by passing other values.
pub(crate) fn to_py(e: Error) -> PyErr {
    match e {
        Error::MissingPath { .. } => PyFileNotFoundError::new_err(e.to_string()),
        Error::Io { .. } | Error::IncompleteInput { .. } => PyOSError::new_err(e.to_string()),
        Error::InvalidConfig(problem) => PyValueError::new_err(format!(
            "invalid parameters: {}",
            problem.render(|p| python_name(p).to_string())
        )),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// A library parameter as the Python API names it (its keyword argument).
fn python_name(p: Param) -> &'static str {
    match p {
        Param::NoNfkc => "nfkc=False",
        Param::NoLowercase => "lowercase=False",
        Param::NoCollapseWhitespace => "collapse_whitespace=False",
        Param::NoTrim => "trim=False",
        Param::ShingleSize => "shingle size",
        Param::Stopwords | Param::StopwordsFile => "stopwords",
        other => other.name(),
    }
}

/// Library results as Python results.
pub(crate) trait OrPy<T> {
    /// The value, or the library error as a Python exception.
    fn or_py(self) -> PyResult<T>;
}

impl<T> OrPy<T> for ndup::Result<T> {
    fn or_py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

#[pymodule]
fn _ndup(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "DEFAULT_MAX_FILESIZE",
        ndup::source::files::DEFAULT_MAX_FILESIZE,
    )?;
    signature::register(m)?;
    lsh::register(m)?;
    corpus::register(m)?;
    Ok(())
}
