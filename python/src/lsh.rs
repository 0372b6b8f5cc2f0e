//! `LSH`, the in-memory banded index in the shape of datasketch's `MinHashLSH`, and `tune`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;

use ndup::candidates::lsh::LshParams;
use ndup::candidates::tune::{self, Tuning, Weights};
use ndup::verify::VerifyMode;
use ndup::{MinHashLsh, Signature};

use crate::OrPy;
use crate::signature::{count, with_signature};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLsh>()?;
    m.add_function(wrap_pyfunction!(py_tune, m)?)?;
    Ok(())
}

/// The verification mode named `name`.
pub(crate) fn verify_mode(name: &str) -> PyResult<VerifyMode> {
    match name {
        "auto" => Ok(VerifyMode::Auto),
        "signature" => Ok(VerifyMode::Signature),
        "exact" => Ok(VerifyMode::Exact),
        "none" => Ok(VerifyMode::None),
        other => Err(PyValueError::new_err(format!(
            "verify must be 'auto', 'signature', 'exact' or 'none', not '{other}'"
        ))),
    }
}

/// `num_perm`, bands and rows resolved as `ndup tune` and `ndup scan` resolve them: `num_perm`
/// defaults to 128, or to bands x rows when both are given; whatever of bands and rows is not
/// given, the tuner chooses for `threshold`. `strict`: all three given must agree, as on the
/// command line; otherwise bands x rows may leave slots unbanded, as datasketch's `params`
/// may.
pub(crate) fn resolve_banding(
    num_perm: Option<i64>,
    bands: Option<i64>,
    rows: Option<i64>,
    threshold: f64,
    weights: Weights,
    strict: bool,
) -> PyResult<(usize, LshParams)> {
    let mut given = [None; 3];
    for (i, (name, v)) in [("num_perm", num_perm), ("bands", bands), ("rows", rows)]
        .into_iter()
        .enumerate()
    {
        if let Some(v) = v {
            if v < 1 {
                return Err(PyValueError::new_err(format!(
                    "{name} must be at least 1, not {v}"
                )));
            }
            given[i] = Some(count(name, v)?);
        }
    }
    let [num_perm, bands, rows] = given;
    let product = |b: usize, r: usize| {
        b.checked_mul(r)
            .ok_or_else(|| PyValueError::new_err(format!("bands {b} x rows {r} is too large")))
    };
    let n = match (num_perm, bands, rows) {
        (Some(n), _, _) => n,
        (None, Some(b), Some(r)) => product(b, r)?,
        _ => 128,
    };
    for (name, v) in [("bands", bands), ("rows", rows)] {
        if let Some(v) = v.filter(|&v| v > n) {
            return Err(PyValueError::new_err(format!(
                "{name} {v} is too large for num_perm {n}"
            )));
        }
    }
    if let (Some(b), Some(r), Some(_)) = (bands, rows, num_perm) {
        let used = product(b, r)?;
        if used > n || (strict && used != n) {
            return Err(PyValueError::new_err(format!(
                "bands {b} x rows {r} = {used} but num_perm is {n}"
            )));
        }
    }
    let lsh = tune::tune(threshold, n, weights, bands, rows).or_py()?;
    Ok((n, lsh))
}

/// What `ndup tune --format json` prints for these arguments, as a dict: the banding chosen
/// for `threshold` (or the one given), its S-curve, the expected share of pairs lost at T and
/// T + 0.05, and the memory per million documents.
#[pyfunction(name = "tune")]
#[pyo3(signature = (threshold=0.8, num_perm=None, *, bands=None, rows=None, fp_weight=tune::DEFAULT_FP_WEIGHT, fn_weight=tune::DEFAULT_FN_WEIGHT, verify="auto"))]
#[allow(clippy::too_many_arguments)]
fn py_tune<'py>(
    py: Python<'py>,
    threshold: f64,
    num_perm: Option<i64>,
    bands: Option<i64>,
    rows: Option<i64>,
    fp_weight: f64,
    fn_weight: f64,
    verify: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let weights = Weights {
        fp: fp_weight,
        fn_: fn_weight,
    };
    let verify = verify_mode(verify)?;
    let (n, lsh) = resolve_banding(num_perm, bands, rows, threshold, weights, true)?;
    let tuned = bands.is_none() || rows.is_none();
    let t = Tuning::explain(threshold, n, lsh, weights, verify, tuned);
    let mut out = Vec::new();
    ndup::report::explain::write_tune(&t, &mut out)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let text = String::from_utf8(out).map_err(|e| PyValueError::new_err(e.to_string()))?;
    py.import("json")?.call_method1("loads", (text,))
}

/// An in-memory LSH index of signatures, in the shape of datasketch's `MinHashLSH`.
///
/// `LSH(threshold, num_perm)` bands signatures as `ndup scan --threshold T` does (the tuner's
/// choice, which favours finding every pair at or above T); `params=(bands, rows)` or
/// `bands=`/`rows=` fix the banding instead, and `weights=(fp, fn)` weigh the tuner's false
/// positives and false negatives. Keys are any hashable Python objects (as in datasketch); each
/// is indexed once. Every signature must have the index's num_perm, and the first one inserted
/// fixes the seed and sketch: another is refused with a ValueError. A query returns the keys
/// that share a band with the signature, in insertion order; they are candidates, to be checked
/// with `Signature.jaccard`.
#[pyclass(name = "LSH", module = "ndup")]
pub(crate) struct PyLsh {
    lsh: MinHashLsh<u64>,
    num_perm: usize,
    threshold: f64,
    /// Each key's number in `lsh`; numbers grow with each insertion, so sorting by number is
    /// insertion order.
    numbers: Py<PyDict>,
    /// The key of each number, `None` once removed. Why a vector: a query maps every candidate
    /// back to its key, and indexing is cheaper than hashing; a removed key leaves 8 bytes.
    keys: Vec<Option<Py<PyAny>>>,
    /// Keys indexed.
    len: usize,
}

impl PyLsh {
    /// `f` of the signature of `m` (a Signature or a MinHash), refused unless it has the
    /// index's width (the library index checks the rest).
    fn with_signature<R>(
        &self,
        m: &Bound<'_, PyAny>,
        f: impl FnOnce(&Signature) -> PyResult<R>,
    ) -> PyResult<R> {
        with_signature(m, |sig| {
            if sig.num_perm() != self.num_perm {
                return Err(PyValueError::new_err(format!(
                    "mismatched sketches: num-perm {} vs {}",
                    self.num_perm,
                    sig.num_perm()
                )));
            }
            f(sig)
        })
    }

    fn key_list(&self, py: Python<'_>, numbers: Vec<u64>) -> Vec<Py<PyAny>> {
        numbers
            .into_iter()
            .map(|n| {
                self.keys[n as usize]
                    .as_ref()
                    .expect("the index holds only live numbers")
                    .clone_ref(py)
            })
            .collect()
    }
}

#[pymethods]
impl PyLsh {
    #[new]
    #[pyo3(signature = (threshold=0.8, num_perm=128, weights=None, params=None, *, bands=None, rows=None))]
    fn new(
        py: Python<'_>,
        threshold: f64,
        num_perm: i64,
        weights: Option<(f64, f64)>,
        params: Option<(i64, i64)>,
        bands: Option<i64>,
        rows: Option<i64>,
    ) -> PyResult<Self> {
        let (bands, rows) = match params {
            Some(_) if bands.is_some() || rows.is_some() => {
                return Err(PyValueError::new_err(
                    "give the banding either as params=(bands, rows) or as bands= and rows=",
                ));
            }
            Some((b, r)) => (Some(b), Some(r)),
            None => (bands, rows),
        };
        let weights = weights.map_or_else(Weights::default, |(fp, fn_)| Weights { fp, fn_ });
        let (num_perm, lsh) =
            resolve_banding(Some(num_perm), bands, rows, threshold, weights, false)?;
        Ok(PyLsh {
            lsh: MinHashLsh::with_bands(lsh.bands, lsh.rows).or_py()?,
            num_perm,
            threshold,
            numbers: PyDict::new(py).unbind(),
            keys: Vec::new(),
            len: 0,
        })
    }

    /// Indexes `minhash` (a Signature or a MinHash) under `key`. A key already indexed is a
    /// ValueError, as in datasketch (`check_duplication` is accepted for compatibility; the
    /// check is always made, and costs nothing).
    #[pyo3(signature = (key, minhash, check_duplication=true))]
    fn insert(
        &mut self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        minhash: &Bound<'_, PyAny>,
        check_duplication: bool,
    ) -> PyResult<()> {
        let _ = check_duplication;
        let numbers = self.numbers.bind(py);
        // Also raises TypeError for an unhashable key, before anything changes.
        if numbers.contains(key)? {
            return Err(PyValueError::new_err(format!(
                "the key {} is already in the index (remove it first)",
                key.repr()?
            )));
        }
        let n = self.keys.len() as u64;
        let lsh = &mut self.lsh;
        // The width is checked against `num_perm`, copied out: `self` is borrowed by `lsh`.
        let width = self.num_perm;
        with_signature(minhash, |sig| {
            if sig.num_perm() != width {
                return Err(PyValueError::new_err(format!(
                    "mismatched sketches: num-perm {width} vs {}",
                    sig.num_perm()
                )));
            }
            lsh.insert(n, sig).or_py()
        })?;
        numbers.set_item(key, n)?;
        self.keys.push(Some(key.clone().unbind()));
        self.len += 1;
        Ok(())
    }

    /// The keys whose signatures share a band with `minhash`, in insertion order (each once).
    fn query(&self, py: Python<'_>, minhash: &Bound<'_, PyAny>) -> PyResult<Vec<Py<PyAny>>> {
        let found = self.with_signature(minhash, |sig| self.lsh.query(sig).or_py())?;
        Ok(self.key_list(py, found))
    }

    /// `query` for each of `minhashes`, on every core with the GIL released.
    fn query_batch(
        &self,
        py: Python<'_>,
        minhashes: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<Vec<Py<PyAny>>>> {
        let mut sigs = Vec::new();
        for m in minhashes.try_iter()? {
            sigs.push(self.with_signature(&m?, |s| Ok(s.clone()))?);
        }
        let lsh = &self.lsh;
        let found: Vec<ndup::Result<Vec<u64>>> =
            py.detach(|| sigs.par_iter().map(|s| lsh.query(s)).collect());
        found
            .into_iter()
            .map(|f| f.or_py().map(|numbers| self.key_list(py, numbers)))
            .collect()
    }

    /// Removes `key`; a key not in the index is a ValueError, as in datasketch.
    fn remove(&mut self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let numbers = self.numbers.bind(py);
        let Some(n) = numbers.get_item(key)? else {
            return Err(PyValueError::new_err(format!(
                "the key {} is not in the index",
                key.repr()?
            )));
        };
        let n: u64 = n.extract()?;
        numbers.del_item(key)?;
        self.keys[n as usize] = None;
        self.len -= 1;
        self.lsh.remove(&n);
        Ok(())
    }

    /// The keys, in insertion order.
    fn keys(&self, py: Python<'_>) -> Vec<Py<PyAny>> {
        self.keys
            .iter()
            .flatten()
            .map(|k| k.clone_ref(py))
            .collect()
    }

    /// True when no key is indexed.
    fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// This index, for `with lsh.insertion_session() as session: session.insert(...)`, as in
    /// datasketch (every insertion is immediate anyway).
    fn insertion_session(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        false
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.numbers.bind(py).contains(key)
    }

    fn __len__(&self) -> usize {
        self.len
    }

    /// Bands of the banding.
    #[getter]
    fn bands(&self) -> usize {
        self.lsh.bands().bands
    }

    /// Rows (slots) per band.
    #[getter]
    fn rows(&self) -> usize {
        self.lsh.bands().rows
    }

    /// `(bands, rows)`, as datasketch's `MinHashLSH.b` and `.r`.
    #[getter]
    fn params(&self) -> (usize, usize) {
        (self.bands(), self.rows())
    }

    /// Slots per signature.
    #[getter]
    fn num_perm(&self) -> usize {
        self.num_perm
    }

    /// The threshold the banding was tuned for.
    #[getter]
    fn threshold(&self) -> f64 {
        self.threshold
    }

    fn __repr__(&self) -> String {
        format!(
            "LSH(threshold={}, num_perm={}, bands={}, rows={}) with {} keys",
            self.threshold,
            self.num_perm,
            self.bands(),
            self.rows(),
            self.len
        )
    }

    /// Not picklable: the index keeps band hashes, not the signatures it would need.
    fn __reduce__(&self) -> PyResult<()> {
        Err(pyo3::exceptions::PyTypeError::new_err(
            "an LSH index cannot be pickled: pickle its signatures and insert them again",
        ))
    }
}
