//! `LSH`, the in-memory banded index in the shape of datasketch's `MinHashLSH`, and `tune`.

use std::cell::{Cell, RefCell};
use std::ops::{Deref, DerefMut};
use std::sync::{LockResult, RwLock, RwLockReadGuard, RwLockWriteGuard, TryLockError};

use pyo3::PyTraverseError;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::sync::RwLockExt;
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
/// given, the tuner chooses for `threshold`. All three given, bands x rows may leave slots
/// unbanded (as the tuner's own 18 x 7 of 128 does, and datasketch's `params` may), but not
/// exceed `num_perm`.
pub(crate) fn resolve_banding(
    num_perm: Option<i64>,
    bands: Option<i64>,
    rows: Option<i64>,
    threshold: f64,
    weights: Weights,
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
        if used > n {
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
    let (n, lsh) = resolve_banding(num_perm, bands, rows, threshold, weights)?;
    let tuned = bands.is_none() || rows.is_none();
    let t = Tuning::explain(threshold, n, lsh, weights, verify, tuned).or_py()?;
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
/// with the GIL released. An index may be shared between threads: queries run side by side,
/// and a change waits for them (and they for it). An index pickles (its keys and their band
/// hashes).
#[pyclass(name = "LSH", module = "ndup", frozen)]
pub(crate) struct PyLsh {
    num_perm: usize,
    threshold: f64,
    banding: LshParams,
    /// The library index, keyed by entry numbers; numbers grow with each insertion, so sorting
    /// by number is insertion order. Its lock also guards the contents of `numbers` and `keys`,
    /// which change only under its write lock.
    index: RwLock<MinHashLsh<u64>>,
    /// Each key's number. The two containers stay the same objects for the index's lifetime
    /// (only their contents change), so that the garbage collector reaches the keys through
    /// them without taking `index`'s lock: a lock another thread can take in the middle of a
    /// collection would make two traversals of one collection disagree.
    numbers: Py<PyDict>,
    /// The key of each number (None once removed); the next number is its length. Why a list:
    /// a query maps every candidate back to its key, and indexing is cheaper than hashing.
    keys: Py<PyList>,
}

thread_local! {
    /// The numbers a query returns, reused from one `query` call to the next (taken out while
    /// in use: building the result runs Python code, which may query again).
    static FOUND: Cell<Vec<u64>> = const { Cell::new(Vec::new()) };
    /// The indexes whose lock this thread holds. Python code run under the lock (a key's
    /// `__hash__` or `__eq__`, a finalizer the garbage collector calls) may call back into the
    /// same index, which would then wait forever for its own thread: such a call raises
    /// instead.
    static HELD: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// A guard of an index's lock, registered in [`HELD`] while it lives.
struct Locked<G> {
    guard: G,
    index: usize,
}

impl<G: Deref> Deref for Locked<G> {
    type Target = G::Target;

    fn deref(&self) -> &G::Target {
        &self.guard
    }
}

impl<G: DerefMut> DerefMut for Locked<G> {
    fn deref_mut(&mut self) -> &mut G::Target {
        &mut self.guard
    }
}

impl<G> Drop for Locked<G> {
    fn drop(&mut self) {
        HELD.with_borrow_mut(|held| {
            if let Some(i) = held.iter().rposition(|&x| x == self.index) {
                held.swap_remove(i);
            }
        });
    }
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
    fn new_index(banding: LshParams) -> PyResult<MinHashLsh<u64>> {
        MinHashLsh::with_bands(banding.bands, banding.rows).or_py()
    }

    /// Takes the index's lock with `take`, unless this thread holds it already.
    fn lock<'a, G>(
        &'a self,
        take: impl FnOnce(&'a RwLock<MinHashLsh<u64>>) -> LockResult<G>,
    ) -> PyResult<Locked<G>> {
        let index = self as *const Self as usize;
        if HELD.with_borrow(|held| held.contains(&index)) {
            return Err(PyRuntimeError::new_err(
                "this LSH is already in use by this thread: a key's __hash__ or __eq__, or a \
                 finalizer, called it while it was being used",
            ));
        }
        let guard = take(&self.index).map_err(|_| {
            PyRuntimeError::new_err(
                "this LSH is unusable: a change to it was interrupted by an internal error \
                 (build the index again)",
            )
        })?;
        HELD.with_borrow_mut(|held| held.push(index));
        Ok(Locked { guard, index })
    }

    /// The index for reading, waiting (with the interpreter detached) while a change runs.
    fn read(&self, py: Python<'_>) -> PyResult<Locked<RwLockReadGuard<'_, MinHashLsh<u64>>>> {
        self.lock(|l| l.read_py_attached(py))
    }

    /// The index for changing, waiting (with the interpreter detached) for every other use.
    fn write(&self, py: Python<'_>) -> PyResult<Locked<RwLockWriteGuard<'_, MinHashLsh<u64>>>> {
        self.lock(|l| l.write_py_attached(py))
    }

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

    /// The keys of `numbers`, as a list (under a lock of the index).
    fn key_list<'py>(&self, py: Python<'py>, numbers: &[u64]) -> PyResult<Bound<'py, PyList>> {
        let keys = self.keys.bind(py);
        let found = numbers
            .iter()
            .map(|&n| keys.get_item(n as usize))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, found)
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

    fn missing(key: &Bound<'_, PyAny>) -> PyErr {
        match key.repr() {
            Ok(r) => PyValueError::new_err(format!("the key {r} is not in the index")),
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
        let (num_perm, banding) = resolve_banding(Some(num_perm), bands, rows, threshold, weights)?;
        Ok(PyLsh {
            num_perm,
            threshold,
            banding,
            index: RwLock::new(Self::new_index(banding)?),
            numbers: PyDict::new(py).unbind(),
            keys: PyList::empty(py).unbind(),
        })
    }

    /// Indexes `minhash` (a Signature or a MinHash) under `key`. A key already indexed is a
    /// ValueError, as in datasketch (`check_duplication` is accepted for compatibility; the
    /// check is always made, and costs nothing). A refused insertion leaves the index as it
    /// was, the parameters a first signature fixes included.
    #[pyo3(signature = (key, minhash, check_duplication=true))]
    fn insert(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        minhash: &Bound<'_, PyAny>,
        check_duplication: bool,
    ) -> PyResult<()> {
        let _ = check_duplication;
        let sig = self.signature(minhash)?;
        let mut index = self.write(py)?;
        let keys = self.keys.bind(py);
        let n = keys.len() as u64;
        // The key first: an unhashable or duplicate key must not reach the library index, whose
        // first insertion fixes the signature parameters for good.
        if !self.claim(py, key, n)? {
            drop(index);
            return Err(Self::duplicate(key));
        }
        let numbers = self.numbers.bind(py);
        if let Err(e) = keys.append(key) {
            // Cannot fail: stored by this call.
            let _ = numbers.del_item(key);
            return Err(e);
        }
        if let Err(e) = index.insert(n, sig.get()) {
            // Cannot fail: both were stored by this call.
            let _ = numbers.del_item(key);
            let _ = keys.del_item(n as usize);
            return Err(to_py(e));
        }
        Ok(())
    }

    /// Indexes each `minhashes[i]` under `keys[i]` (two iterables of the same length), as many
    /// `insert` calls would, with the bands hashed on every core and the GIL released. All or
    /// nothing: a key already indexed or twice in `keys`, or a signature of other parameters, is
    /// a ValueError and the index is unchanged.
    fn insert_batch(
        &self,
        py: Python<'_>,
        keys: &Bound<'_, PyAny>,
        minhashes: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        // Both iterables are read before the index is locked: iterating runs the caller's code,
        // which may use this index.
        let mut batch: Vec<Bound<'_, PyAny>> = Vec::new();
        let mut sigs: Vec<Sig<'_>> = Vec::new();
        let mut ms = minhashes.try_iter()?;
        let uneven = || PyValueError::new_err("keys and minhashes have different lengths");
        for key in keys.try_iter()? {
            let key = key?;
            let m = ms.next().ok_or_else(uneven)??;
            sigs.push(self.signature(&m)?);
            batch.push(key);
        }
        if ms.next().is_some() {
            return Err(uneven());
        }
        let mut index = self.write(py)?;
        let numbers = self.numbers.bind(py);
        let list = self.keys.bind(py);
        let first = list.len() as u64;
        let undo = |claimed: usize| {
            for k in &batch[..claimed] {
                // Cannot fail: each was stored by this call.
                let _ = numbers.del_item(k);
            }
        };
        for (i, key) in batch.iter().enumerate() {
            match self.claim(py, key, first + i as u64) {
                Ok(true) => {}
                Ok(false) => {
                    undo(i);
                    drop(index);
                    return Err(Self::duplicate(key));
                }
                Err(e) => {
                    undo(i);
                    return Err(e);
                }
            }
        }
        let refs: Vec<(u64, &Signature)> = sigs
            .iter()
            .enumerate()
            .map(|(i, s)| (first + i as u64, s.get()))
            .collect();
        let lsh: &mut MinHashLsh<u64> = &mut index;
        // The library checks every signature before it changes anything: on error, only the
        // keys claimed above are to be undone.
        if let Err(e) = py.detach(|| lsh.insert_batch(refs)) {
            undo(batch.len());
            return Err(to_py(e));
        }
        for key in &batch {
            list.append(key)?;
        }
        Ok(())
    }

    /// The keys whose signatures share a band with `minhash`, in insertion order (each once).
    fn query<'py>(
        &self,
        py: Python<'py>,
        minhash: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let sig = self.signature(minhash)?;
        let index = self.read(py)?;
        let mut found = FOUND.take();
        let keys = index
            .query_into(sig.get(), &mut found)
            .or_py()
            .and_then(|()| self.key_list(py, &found));
        FOUND.set(found);
        keys
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
        let index = self.read(py)?;
        let lsh: &MinHashLsh<u64> = &index;
        let found = py.detach(|| lsh.query_batch(&refs)).or_py()?;
        let lists = found
            .iter()
            .map(|numbers| self.key_list(py, numbers))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, lists)
    }

    /// Removes `key`; a key not in the index is a ValueError, as in datasketch.
    fn remove(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut index = self.write(py)?;
        let numbers = self.numbers.bind(py);
        let Some(n) = numbers.get_item(key)? else {
            drop(index);
            return Err(Self::missing(key));
        };
        let n: u64 = n.extract()?;
        let keys = self.keys.bind(py);
        // Held until the lock is released: the last reference to the stored key (which may be
        // another object than `key`, equal to it) runs its finalizer when it goes.
        let stored = keys.get_item(n as usize)?;
        numbers.del_item(key)?;
        keys.set_item(n as usize, py.None())?;
        index.remove(&n);
        drop(index);
        drop(stored);
        Ok(())
    }

    /// The keys, in insertion order.
    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let index = self.read(py)?;
        let mut out = Vec::with_capacity(index.len());
        for (n, key) in self.keys.bind(py).iter().enumerate() {
            // A removed key's slot holds None, which is also a key one may index.
            if index.contains(&(n as u64)) {
                out.push(key);
            }
        }
        Ok(out)
    }

    /// True when no key is indexed.
    fn is_empty(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.read(py)?.is_empty())
    }

    /// This index, for `with lsh.insertion_session() as session: session.insert(...)`, as in
    /// datasketch (every insertion is immediate: `buffer_size` is accepted and ignored).
    #[pyo3(signature = (buffer_size=50_000))]
    fn insertion_session(slf: Bound<'_, Self>, buffer_size: i64) -> Bound<'_, Self> {
        let _ = buffer_size;
        slf
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, PyTuple>) -> bool {
        false
    }

    /// Pickles as its parameters, its keys in insertion order and the band hashes of their
    /// signatures (the index keeps no more of them): the index unpickled answers every query
    /// as this one does.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let index = self.read(py)?;
        let mut parts = index.to_parts();
        parts.entries.sort_unstable_by_key(|(n, _)| *n);
        let numbers: Vec<u64> = parts.entries.iter().map(|(n, _)| *n).collect();
        let keys = self.key_list(py, &numbers)?;
        drop(index);
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
        let _index = self.read(py)?;
        self.numbers.bind(py).contains(key)
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.read(py)?.len())
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.numbers)?;
        visit.call(&self.keys)
    }

    /// Empties the index, which then holds no Python object (the collector breaks a cycle
    /// through it here). The library index is emptied too, so that what remains is a valid
    /// empty index should a finalizer still use it.
    fn __clear__(&self) {
        let mut index = match self.index.try_write() {
            Ok(index) => index,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            // In use: then the index is reachable, and the collector does not clear it.
            Err(TryLockError::WouldBlock) => return,
        };
        let Ok(empty) = MinHashLsh::with_bands(self.banding.bands, self.banding.rows) else {
            return;
        };
        *index = empty;
        self.index.clear_poison();
        Python::attach(|py| {
            let numbers = self.numbers.bind(py);
            let keys = self.keys.bind(py);
            // Moved out first, and released with the lock: releasing a key may run its
            // finalizer, which may use this index.
            let old = (numbers.copy(), keys.get_slice(0, keys.len()));
            numbers.clear();
            let _ = keys.del_slice(0, keys.len());
            drop(index);
            drop(old);
        });
    }

    /// Bands of the banding.
    #[getter]
    fn bands(&self) -> usize {
        self.banding.bands
    }

    /// Rows (slots) per band.
    #[getter]
    fn rows(&self) -> usize {
        self.banding.rows
    }

    /// `(bands, rows)`, as datasketch's `MinHashLSH.b` and `.r`.
    #[getter]
    fn params(&self) -> (usize, usize) {
        (self.banding.bands, self.banding.rows)
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

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "LSH(threshold={}, num_perm={}, bands={}, rows={}) with {} keys",
            self.threshold,
            self.num_perm,
            self.banding.bands,
            self.banding.rows,
            self.read(py)?.len()
        ))
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
        num_perm,
        threshold,
        banding: LshParams { bands, rows },
        index: RwLock::new(lsh),
        numbers: numbers.unbind(),
        keys: PyList::new(py, keys)?.unbind(),
    })
}
