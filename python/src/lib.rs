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

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

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

/// How often a thread waiting for [`interruptible`] work looks for signals: often enough that
/// Ctrl-C feels immediate, seldom enough to cost nothing.
const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// Runs `work` on a thread of its own, without the GIL, while this thread waits and looks for
/// signals: when a signal handler raises (Ctrl-C's `KeyboardInterrupt`), the stop flag given to
/// `work` is set, the work winds down at its next document or batch, and the exception is
/// raised. Why a thread: Python runs signal handlers only on the main thread, and only when it
/// holds the GIL, so the thread that called must stay free to run them.
pub(crate) fn interruptible<T: Send>(
    py: Python<'_>,
    work: impl FnOnce(Arc<AtomicBool>) -> T + Send,
) -> PyResult<T> {
    let stop = Arc::new(AtomicBool::new(false));
    std::thread::scope(|scope| {
        let (done, finished) = mpsc::sync_channel::<()>(1);
        // In a mutex only to be shared with the thread that waits without the GIL.
        let finished = std::sync::Mutex::new(finished);
        let flag = Arc::clone(&stop);
        let worker = scope.spawn(move || {
            let out = work(flag);
            let _ = done.send(());
            out
        });
        loop {
            let over = py.detach(|| {
                !matches!(
                    finished
                        .lock()
                        .expect("only this thread waits")
                        .recv_timeout(SIGNAL_POLL),
                    Err(mpsc::RecvTimeoutError::Timeout)
                )
            });
            if over {
                return Ok(worker
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
            }
            if let Err(e) = py.check_signals() {
                stop.store(true, Ordering::Relaxed);
                // The result of stopped work is the interruption itself: dropped.
                let _ = py.detach(|| worker.join());
                return Err(e);
            }
        }
    })
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
