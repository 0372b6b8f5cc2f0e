//! `LSH`, the in-memory banded index in the shape of datasketch's `MinHashLSH`, and `tune`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use ndup::candidates::lsh::LshParams;
use ndup::candidates::minhash_lsh::LshParts;
use ndup::candidates::tune::{self, Tuning, Weights};
use ndup::verify::VerifyMode;
use ndup::{MinHashLsh, Signature};

use crate::signature::{PySignature, count, params_of, with_signature};
use crate::{OrPy, to_py};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLsh>()?;
    m.add_function(wrap_pyfunction!(lsh_from_state, m)?)?;
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
/// with `Signature.jaccard`. `insert_batch` and `query_batch` do many at once, on every core
/// with the GIL released. An index pickles (its keys and their band hashes).
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

thread_local! {
    /// The numbers a query returns, reused from one `query` call to the next.
    static FOUND: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A signature borrowed from its Python object, or made from a `MinHash`.
enum Sig<'py> {
    Borrowed(Bound<'py, PySignature>),
    Made(Signature),
}

impl Sig<'_> {
    fn get(&self) -> &Signature {
        match self {
            Sig::Borrowed(s) => &s.get().inner,
            Sig::Made(s) => s,
        }
    }
}

impl PyLsh {
    /// The signature of `m` (a Signature or a MinHash), refused unless it has the index's
    /// width (the library index checks the rest).
    fn signature<'py>(&self, m: &Bound<'py, PyAny>) -> PyResult<Sig<'py>> {
        let sig = match m.cast::<PySignature>() {
            Ok(s) => Sig::Borrowed(s.clone()),
            Err(_) => Sig::Made(with_signature(m, |s| Ok(s.clone()))?),
        };
        let n = sig.get().num_perm();
        if n != self.num_perm {
            return Err(PyValueError::new_err(format!(
                "mismatched sketches: num-perm {} vs {n}",
                self.num_perm
            )));
        }
        Ok(sig)
    }

    /// The keys of `numbers`, as a list.
    fn key_list<'py>(&self, py: Python<'py>, numbers: &[u64]) -> PyResult<Bound<'py, PyList>> {
        PyList::new(
            py,
            numbers.iter().map(|&n| {
                self.keys[n as usize]
                    .as_ref()
                    .expect("the index holds only live numbers")
                    .bind(py)
            }),
        )
    }

    /// Records `key` under `n` unless it is already a key: one dict lookup, where `in` and
    /// then a store would make two. `Ok(false)` for a key already there.
    fn claim(&self, py: Python<'_>, key: &Bound<'_, PyAny>, n: u64) -> PyResult<bool> {
        let value = n.into_pyobject(py)?;
        // SAFETY: the three pointers are live objects, held by this frame; the result is a
        // borrowed reference (or NULL with an exception set), only compared, never used.
        let stored = unsafe {
            pyo3::ffi::PyDict_SetDefault(self.numbers.as_ptr(), key.as_ptr(), value.as_ptr())
        };
        if stored.is_null() {
            return Err(PyErr::fetch(py));
        }
        Ok(stored == value.as_ptr())
    }

    fn duplicate(key: &Bound<'_, PyAny>) -> PyErr {
        match key.repr() {
            Ok(r) => PyValueError::new_err(format!(
                "the key {r} is already in the index (remove it first)"
            )),
            Err(e) => e,
        }
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
        let sig = self.signature(minhash)?;
        let n = self.keys.len() as u64;
        self.lsh.insert(n, sig.get()).or_py()?;
        // The key last: a duplicate or unhashable key (TypeError) is rare, and undoing the
        // insertion then is cheaper than looking the key up twice every time.
        match self.claim(py, key, n) {
            Ok(true) => {}
            Ok(false) => {
                self.lsh.remove(&n);
                return Err(Self::duplicate(key));
            }
            Err(e) => {
                self.lsh.remove(&n);
                return Err(e);
            }
        }
        self.keys.push(Some(key.clone().unbind()));
        self.len += 1;
        Ok(())
    }

    /// Indexes each `minhashes[i]` under `keys[i]` (two iterables of the same length), as many
    /// `insert` calls would, with the bands hashed on every core and the GIL released. All or
    /// nothing: a key already indexed or twice in `keys`, or a signature of other parameters, is
    /// a ValueError and the index is unchanged.
    fn insert_batch(
        &mut self,
        py: Python<'_>,
        keys: &Bound<'_, PyAny>,
        minhashes: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let first = self.keys.len() as u64;
        let mut claimed: Vec<Bound<'_, PyAny>> = Vec::new();
        let mut sigs: Vec<Sig<'_>> = Vec::new();
        let undo = |claimed: &[Bound<'_, PyAny>], e: PyErr| -> PyErr {
            let numbers = self.numbers.bind(py);
            for k in claimed {
                // Cannot fail: each was stored by this call.
                let _ = numbers.del_item(k);
            }
            e
        };
        let mut ms = minhashes.try_iter()?;
        for key in keys.try_iter()? {
            let step = (|| {
                let key = key?;
                let Some(m) = ms.next() else {
                    return Err(PyValueError::new_err(
                        "keys and minhashes have different lengths",
                    ));
                };
                sigs.push(self.signature(&m?)?);
                match self.claim(py, &key, first + claimed.len() as u64)? {
                    true => Ok(key),
                    false => Err(Self::duplicate(&key)),
                }
            })();
            match step {
                Ok(key) => claimed.push(key),
                Err(e) => return Err(undo(&claimed, e)),
            }
        }
        if ms.next().is_some() {
            return Err(undo(
                &claimed,
                PyValueError::new_err("keys and minhashes have different lengths"),
            ));
        }
        let refs: Vec<(u64, &Signature)> = sigs
            .iter()
            .enumerate()
            .map(|(i, s)| (first + i as u64, s.get()))
            .collect();
        let lsh = &mut self.lsh;
        if let Err(e) = py.detach(|| lsh.insert_batch(refs)) {
            return Err(undo(&claimed, to_py(e)));
        }
        self.len += claimed.len();
        self.keys
            .extend(claimed.into_iter().map(|k| Some(k.unbind())));
        Ok(())
    }

    /// The keys whose signatures share a band with `minhash`, in insertion order (each once).
    fn query<'py>(
        &self,
        py: Python<'py>,
        minhash: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let sig = self.signature(minhash)?;
        FOUND.with_borrow_mut(|found| {
            self.lsh.query_into(sig.get(), found).or_py()?;
            self.key_list(py, found)
        })
    }

    /// `query` for each of `minhashes`, on every core with the GIL released.
    fn query_batch<'py>(
        &self,
        py: Python<'py>,
        minhashes: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut sigs = Vec::new();
        for m in minhashes.try_iter()? {
            sigs.push(self.signature(&m?)?);
        }
        let refs: Vec<&Signature> = sigs.iter().map(Sig::get).collect();
        let lsh = &self.lsh;
        let found = py.detach(|| lsh.query_batch(&refs)).or_py()?;
        let lists = found
            .iter()
            .map(|numbers| self.key_list(py, numbers))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, lists)
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

    /// Pickles as its parameters, its keys in insertion order and the band hashes of their
    /// signatures (the index keeps no more of them): the index unpickled answers every query
    /// as this one does.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let mut parts = self.lsh.to_parts();
        parts.entries.sort_unstable_by_key(|(n, _)| *n);
        let keys = PyList::new(
            py,
            parts.entries.iter().map(|(n, _)| {
                self.keys[*n as usize]
                    .as_ref()
                    .expect("the index holds only live numbers")
                    .bind(py)
            }),
        )?;
        let hashes: Vec<u8> = parts
            .entries
            .iter()
            .flat_map(|(_, h)| h.iter().flat_map(|x| x.to_le_bytes()))
            .collect();
        let sketch = parts.sketch.map(|p| (p.kind.name(), p.seed));
        let state = (
            self.threshold,
            self.num_perm,
            parts.lsh.bands,
            parts.lsh.rows,
            sketch,
            parts.shingling,
            keys,
            PyBytes::new(py, &hashes),
        );
        let make = py.import("ndup._ndup")?.getattr("_lsh_from_state")?;
        (make, state).into_pyobject(py)
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
}

/// Rebuilds a pickled `LSH` (see `LSH.__reduce__`).
#[pyfunction]
#[pyo3(name = "_lsh_from_state")]
#[allow(clippy::too_many_arguments)]
fn lsh_from_state(
    py: Python<'_>,
    threshold: f64,
    num_perm: usize,
    bands: usize,
    rows: usize,
    sketch: Option<(String, u64)>,
    shingling: Option<String>,
    keys: Vec<Py<PyAny>>,
    hashes: &[u8],
) -> PyResult<PyLsh> {
    if hashes.len() != keys.len() * bands * 8 {
        return Err(PyValueError::new_err(
            "a pickled LSH holds 8 bytes per band of each key",
        ));
    }
    let sketch = match sketch {
        Some((name, seed)) => Some(params_of(&name, num_perm, seed)?),
        None => None,
    };
    let entries = hashes
        .chunks_exact(bands.max(1) * 8)
        .take(keys.len())
        .enumerate()
        .map(|(n, chunk)| {
            let h = chunk
                .chunks_exact(8)
                .map(|b| u64::from_le_bytes(b.try_into().expect("chunks of 8")))
                .collect();
            (n as u64, h)
        })
        .collect();
    let lsh = MinHashLsh::from_parts(LshParts {
        lsh: LshParams { bands, rows },
        num_perm: None,
        sketch,
        shingling,
        entries,
    })
    .or_py()?;
    let numbers = PyDict::new(py);
    for (n, key) in keys.iter().enumerate() {
        if numbers.contains(key)? {
            return Err(PyValueError::new_err(format!(
                "a pickled LSH has the key {} twice",
                key.bind(py).repr()?
            )));
        }
        numbers.set_item(key, n)?;
    }
    Ok(PyLsh {
        lsh,
        num_perm,
        threshold,
        numbers: numbers.unbind(),
        len: keys.len(),
        keys: keys.into_iter().map(Some).collect(),
    })
}
