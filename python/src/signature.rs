//! `MinHasher`, `Signature` and `MinHash`: the library's signatures, and a datasketch-shaped
//! incremental builder.

use std::sync::OnceLock;

use numpy::ndarray::ArrayView1;
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};
use rayon::prelude::*;
use xxhash_rust::xxh3::xxh3_64_with_seed;

use ndup::sketch::minhash::MAX_NUM_PERM;
use ndup::text::normalize::NormalizeOptions;
use ndup::text::shingle::{ShingleKind, ShingleOptions};
use ndup::{MinHasher, Signature, SketchKind, SketchParams};

use crate::OrPy;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyMinHasher>()?;
    m.add_class::<PySignature>()?;
    m.add_class::<PyMinHash>()?;
    m.add_function(wrap_pyfunction!(signature_from_state, m)?)?;
    Ok(())
}

/// Texts of at least this many bytes are signed without the GIL. Why: signing a text of a few
/// kilobytes takes microseconds, less than handing the GIL from one waiting thread to another,
/// so releasing it for each short text slows every thread down; a long text leaves other Python
/// threads free to run (or to sign on another core) for as long as it takes.
const DETACH_MIN_BYTES: usize = 16 << 10;

/// The sketch named `name`.
pub(crate) fn sketch_kind(name: &str) -> PyResult<SketchKind> {
    match name {
        "fss" => Ok(SketchKind::Fss),
        "oph" => Ok(SketchKind::Oph),
        "classic" => Ok(SketchKind::Classic),
        other => Err(PyValueError::new_err(format!(
            "sketch must be 'fss', 'oph' or 'classic', not '{other}'"
        ))),
    }
}

/// The shingle kind named `name`.
pub(crate) fn shingle_kind(name: &str) -> PyResult<ShingleKind> {
    match name {
        "char" => Ok(ShingleKind::Char),
        "word" => Ok(ShingleKind::Word),
        "stopword" => Ok(ShingleKind::Stopword),
        other => Err(PyValueError::new_err(format!(
            "shingle must be 'char', 'word' or 'stopword', not '{other}'"
        ))),
    }
}

fn shingle_name(kind: ShingleKind) -> &'static str {
    match kind {
        ShingleKind::Char => "char",
        ShingleKind::Word => "word",
        ShingleKind::Stopword => "stopword",
    }
}

/// A count given from Python (`k`, `num_perm`...): negative values are a `ValueError` naming the
/// argument, not an `OverflowError`.
pub(crate) fn count(name: &str, v: i64) -> PyResult<usize> {
    // Only the sign is checked here: each count has its own range, checked where it is used.
    usize::try_from(v)
        .map_err(|_| PyValueError::new_err(format!("{name} must not be negative, not {v}")))
}

/// The most threads a call starts, as the command line's `--threads`.
const MAX_THREADS: usize = 1024;

/// Refuses a lone `str` or `bytes` where an iterable of items is taken: iterating it would
/// split one item into characters (or bytes), which is never what is meant.
pub(crate) fn not_lone(name: &str, what: &str, v: &Bound<'_, PyAny>) -> PyResult<()> {
    if v.is_instance_of::<PyString>() || v.is_instance_of::<PyBytes>() {
        let kind = v.get_type().name().map_or("?".into(), |n| n.to_string());
        return Err(PyTypeError::new_err(format!(
            "{name} takes an iterable of {what}, not a single {kind} (write [{}])",
            v.repr().map_or("...".into(), |r| r.to_string())
        )));
    }
    Ok(())
}

/// Shingle options, refusing a size of 0 by the argument's name (`k` or `w`).
pub(crate) fn shingle_options(
    kind: &str,
    k: i64,
    w: i64,
    stopwords: Option<Vec<String>>,
) -> PyResult<ShingleOptions> {
    let options = ShingleOptions {
        kind: shingle_kind(kind)?,
        k: count("k", k)?,
        w: count("w", w)?,
        stopwords,
    };
    match options.kind {
        ShingleKind::Char if options.k == 0 => Err(PyValueError::new_err("k must be at least 1")),
        ShingleKind::Word if options.w == 0 => Err(PyValueError::new_err("w must be at least 1")),
        _ => Ok(options),
    }
}

/// A seed given from Python: any integer from 0 to 2**64 - 1.
pub(crate) fn seed(v: i128) -> PyResult<u64> {
    u64::try_from(v).map_err(|_| {
        PyValueError::new_err(format!("seed must be between 0 and 2**64 - 1, not {v}"))
    })
}

/// Makes MinHash signatures of texts, exactly as `ndup scan` signs documents.
///
/// The text is stripped of a leading byte-order mark and its `ndup:ignore` regions, normalized
/// (NFKC, Unicode case folding (`lowercase`), white space collapsed, trimmed: each can be turned
/// off), cut into shingles (runs of `k` characters, of `w` words, or stop-word shingles) hashed
/// with `seed`, and signed with `num_perm` slots by the `sketch` ('fss', 'oph' or 'classic').
/// With the same options, a signature's slots are bit for bit those of the command line.
#[pyclass(name = "MinHasher", module = "ndup", frozen)]
pub(crate) struct PyMinHasher {
    hasher: MinHasher,
    shingle: ShingleOptions,
    normalize: NormalizeOptions,
}

#[pymethods]
impl PyMinHasher {
    #[new]
    #[pyo3(signature = (num_perm=128, k=9, shingle="char", seed=42, sketch="fss", *, w=5, stopwords=None, nfkc=true, lowercase=true, collapse_whitespace=true, trim=true))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        num_perm: i64,
        k: i64,
        shingle: &str,
        seed: i128,
        sketch: &str,
        w: i64,
        stopwords: Option<&Bound<'_, PyAny>>,
        nfkc: bool,
        lowercase: bool,
        collapse_whitespace: bool,
        trim: bool,
    ) -> PyResult<Self> {
        let stopwords = match stopwords {
            Some(list) => {
                not_lone("stopwords", "str", list)?;
                Some(
                    list.extract::<Vec<String>>()
                        .map_err(|_| PyTypeError::new_err("stopwords takes a list of str"))?,
                )
            }
            None => None,
        };
        let shingle = shingle_options(shingle, k, w, stopwords)?;
        let normalize = NormalizeOptions {
            nfkc,
            lowercase,
            collapse_whitespace,
            trim,
        };
        let hasher = MinHasher::builder()
            .kind(sketch_kind(sketch)?)
            .num_perm(count("num_perm", num_perm)?)
            .seed(self::seed(seed)?)
            .normalize(normalize)
            .shingles(shingle.clone())
            .build()
            .or_py()?;
        Ok(PyMinHasher {
            hasher,
            shingle,
            normalize,
        })
    }

    /// The signature of `text`, or None when it has no shingle (nothing left after
    /// normalization, as for "" or white space alone): such a text is never paired by a scan.
    /// A text shorter than one shingle (`k` characters, `w` words) is one shingle, the whole
    /// text (its words, for word and stop-word shingles), and has a signature, as the scan signs
    /// it.
    fn sign(&self, py: Python<'_>, text: &str) -> Option<PySignature> {
        let signed = if text.len() >= DETACH_MIN_BYTES {
            py.detach(|| self.hasher.sign(text))
        } else {
            self.hasher.sign(text)
        };
        signed.map(PySignature::from)
    }

    /// The signatures of `texts` (any iterable of str), in order, None for a text without a
    /// shingle. The texts are signed with the GIL released, so other Python threads run
    /// meanwhile: on every core (rayon's pool: `RAYON_NUM_THREADS` sets its size), or on
    /// `threads` threads (1: the calling thread alone, for callers that run their own threads).
    #[pyo3(signature = (texts, *, threads=None))]
    fn sign_batch(
        &self,
        py: Python<'_>,
        texts: &Bound<'_, PyAny>,
        threads: Option<i64>,
    ) -> PyResult<Vec<Option<PySignature>>> {
        let threads = match threads {
            Some(n) if n < 1 => {
                return Err(PyValueError::new_err(format!(
                    "threads must be at least 1, not {n}"
                )));
            }
            Some(n) if n as u64 > MAX_THREADS as u64 => {
                return Err(PyValueError::new_err(format!(
                    "threads must be at most {MAX_THREADS}, not {n}"
                )));
            }
            Some(n) => Some(count("threads", n)?),
            None => None,
        };
        not_lone("sign_batch", "str", texts)?;
        // Strong references keep every text alive (and its UTF-8 in place) while the GIL is
        // released, whatever another thread does to the caller's list.
        let mut held: Vec<Bound<'_, PyString>> = Vec::new();
        for (i, item) in texts.try_iter()?.enumerate() {
            let item = item?;
            let s = item.cast_into::<PyString>().map_err(|e| {
                PyTypeError::new_err(format!(
                    "sign_batch takes str texts; item {i} is {}",
                    e.into_inner()
                        .get_type()
                        .name()
                        .map_or("?".into(), |n| n.to_string())
                ))
            })?;
            held.push(s);
        }
        let strs: Vec<&str> = held.iter().map(|s| s.to_str()).collect::<PyResult<_>>()?;
        let hasher = &self.hasher;
        let sign_all = || -> Vec<Option<Signature>> {
            strs.par_iter()
                .with_min_len(4)
                .map(|t| hasher.sign(t))
                .collect()
        };
        let signed = py
            .detach(|| match threads {
                None => Ok(sign_all()),
                Some(1) => Ok(strs.iter().map(|t| hasher.sign(t)).collect()),
                Some(n) => rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .build()
                    .map(|pool| pool.install(sign_all))
                    .map_err(|e| format!("cannot start {n} threads: {e}")),
            })
            .map_err(PyValueError::new_err)?;
        Ok(signed
            .into_iter()
            .map(|s| s.map(PySignature::from))
            .collect())
    }

    /// The signature of precomputed 64-bit hashes (any order, repeats allowed), or None when
    /// there are none. The hashes must be uniform: hash raw tokens first, or use `sign_tokens`.
    fn sign_hashes(&self, hashes: &Bound<'_, PyAny>) -> PyResult<Option<PySignature>> {
        // A list or a NumPy array at once; any other iterable item by item.
        let hashes: Vec<u64> = match hashes.extract() {
            Ok(v) => v,
            Err(_) => {
                not_lone("sign_hashes", "int", hashes)?;
                let mut v = Vec::new();
                for h in hashes.try_iter()? {
                    v.push(h?.extract::<u64>()?);
                }
                v
            }
        };
        Ok(self.hasher.sign_hashes(&hashes).map(PySignature::from))
    }

    /// The signature of your own tokens (str or bytes, e.g. word shingles), each hashed with
    /// the seeded 64-bit xxh3 that `MinHash.update` uses; None when there are none.
    fn sign_tokens(&self, tokens: &Bound<'_, PyAny>) -> PyResult<Option<PySignature>> {
        not_lone("sign_tokens", "str or bytes", tokens)?;
        let seed = self.hasher.params().seed;
        let mut hashes = Vec::new();
        for t in tokens.try_iter()? {
            hashes.push(token_hash(&t?, seed)?);
        }
        Ok(self.hasher.sign_hashes(&hashes).map(PySignature::from))
    }

    /// Slots per signature.
    #[getter]
    fn num_perm(&self) -> usize {
        self.hasher.params().num_perm
    }

    /// The seed of the shingle hashes and of the sketch.
    #[getter]
    fn seed(&self) -> u64 {
        self.hasher.params().seed
    }

    /// The sketch: 'fss', 'oph' or 'classic'.
    #[getter]
    fn sketch(&self) -> &'static str {
        self.hasher.params().kind.name()
    }

    /// The shingle kind: 'char', 'word' or 'stopword'.
    #[getter]
    fn shingle(&self) -> &'static str {
        shingle_name(self.shingle.kind)
    }

    /// Characters per char shingle.
    #[getter]
    fn k(&self) -> usize {
        self.shingle.k
    }

    /// Words per word shingle.
    #[getter]
    fn w(&self) -> usize {
        self.shingle.w
    }

    fn __repr__(&self) -> String {
        let p = self.hasher.params();
        format!(
            "MinHasher(num_perm={}, k={}, shingle='{}', seed={}, sketch='{}', w={}, normalize='{}')",
            p.num_perm,
            self.shingle.k,
            shingle_name(self.shingle.kind),
            p.seed,
            p.kind.name(),
            self.shingle.w,
            self.normalize.describe()
        )
    }

    /// Pickles as the arguments that make it again.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let me = slf.get();
        let p = me.hasher.params();
        let kwargs = PyDict::new(py);
        kwargs.set_item("num_perm", p.num_perm)?;
        kwargs.set_item("k", me.shingle.k)?;
        kwargs.set_item("shingle", shingle_name(me.shingle.kind))?;
        kwargs.set_item("seed", p.seed)?;
        kwargs.set_item("sketch", p.kind.name())?;
        kwargs.set_item("w", me.shingle.w)?;
        kwargs.set_item("stopwords", me.shingle.stopwords.clone())?;
        kwargs.set_item("nfkc", me.normalize.nfkc)?;
        kwargs.set_item("lowercase", me.normalize.lowercase)?;
        kwargs.set_item("collapse_whitespace", me.normalize.collapse_whitespace)?;
        kwargs.set_item("trim", me.normalize.trim)?;
        // `functools.partial(MinHasher, **kwargs)()` rebuilds it: pickle's protocol passes
        // only positional arguments to the callable.
        let partial = py.import("functools")?.getattr("partial")?;
        let make = partial.call((slf.get_type(),), Some(&kwargs))?;
        (make, PyTuple::empty(py)).into_pyobject(py)
    }
}

/// The hash of one token, as `SignatureBuilder::update` hashes it.
fn token_hash(token: &Bound<'_, PyAny>, seed: u64) -> PyResult<u64> {
    if let Ok(s) = token.cast::<PyString>() {
        return Ok(xxh3_64_with_seed(s.to_str()?.as_bytes(), seed));
    }
    if let Ok(b) = token.cast::<PyBytes>() {
        return Ok(xxh3_64_with_seed(b.as_bytes(), seed));
    }
    Err(PyTypeError::new_err(format!(
        "a token is str or bytes, not {}",
        token.get_type().name()?
    )))
}

/// A MinHash signature and the parameters that made it (sketch, num_perm, seed) and, when it
/// was signed from text, how the text was shingled and normalized (`shingling`).
///
/// `jaccard` refuses a signature made with other parameters, or from text shingled otherwise (a
/// `ValueError` naming each difference): the number would mean nothing. Signatures are immutable, hashable, compare
/// equal slot for slot, pickle, and convert to and from NumPy arrays of uint32.
#[pyclass(name = "Signature", module = "ndup", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct PySignature {
    pub(crate) inner: Signature,
}

impl From<Signature> for PySignature {
    fn from(inner: Signature) -> Self {
        PySignature { inner }
    }
}

/// `f` of the signature of a `Signature` or of a `MinHash` (borrowed, not copied).
pub(crate) fn with_signature<R>(
    obj: &Bound<'_, PyAny>,
    f: impl FnOnce(&Signature) -> PyResult<R>,
) -> PyResult<R> {
    if let Ok(s) = obj.cast::<PySignature>() {
        return f(&s.get().inner);
    }
    if let Ok(m) = obj.cast::<PyMinHash>() {
        return f(m.borrow().signature());
    }
    Err(PyTypeError::new_err(format!(
        "expected a Signature or a MinHash, not {}",
        obj.get_type().name()?
    )))
}

/// `Ok` when `p` and `q` are equal, else the library's `ValueError` naming each difference.
fn same_params(p: SketchParams, q: SketchParams) -> PyResult<()> {
    // Empty signatures of each: the library compares parameters only on signatures.
    let of = |p: SketchParams| Signature::from_parts(p, vec![0; p.num_perm]).or_py();
    of(p)?.ensure_comparable(&of(q)?).or_py()
}

pub(crate) fn params_of(sketch: &str, num_perm: usize, seed: u64) -> PyResult<SketchParams> {
    if !(1..=MAX_NUM_PERM).contains(&num_perm) {
        return Err(PyValueError::new_err(format!(
            "a signature has 1 to {MAX_NUM_PERM} slots, not {num_perm}"
        )));
    }
    Ok(SketchParams {
        kind: sketch_kind(sketch)?,
        num_perm,
        seed,
    })
}

#[pymethods]
impl PySignature {
    /// The estimated Jaccard similarity of the two texts' shingle sets: the share of equal
    /// slots. Raises ValueError when `other` was made with other parameters.
    fn jaccard(&self, other: &Bound<'_, PyAny>) -> PyResult<f64> {
        with_signature(other, |other| self.inner.jaccard(other).or_py())
    }

    /// A read-only NumPy view of the slots (uint32), sharing this signature's memory.
    fn to_numpy<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let view = ArrayView1::from(slf.get().inner.slots());
        // SAFETY: the slots belong to this signature, which is immutable (frozen) and which the
        // array keeps alive as its base object, so the memory stays valid and unchanged for as
        // long as the array lives; the array is made read-only below.
        let array = unsafe { PyArray1::borrow_from_array(&view, slf.clone().into_any()) };
        array.getattr("flags")?.setattr("writeable", false)?;
        Ok(array)
    }

    /// `numpy.asarray(signature)`: the slots, as `to_numpy` gives them, or converted to `dtype`.
    /// As NumPy 2 asks: `copy=True` always copies, `copy=None` copies only for another dtype,
    /// and `copy=False` raises ValueError when a copy would be needed.
    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        slf: &Bound<'py, Self>,
        dtype: Option<Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let array = Self::to_numpy(slf)?.into_any();
        let own = array.getattr("dtype")?;
        let wanted = match dtype {
            Some(d) => slf.py().import("numpy")?.getattr("dtype")?.call1((d,))?,
            None => own.clone(),
        };
        let same = wanted.eq(&own)?;
        match copy {
            Some(false) if !same => Err(PyValueError::new_err(format!(
                "a Signature's slots are uint32: as {wanted} they need a copy, which \
                 copy=False forbids"
            ))),
            Some(true) => array.call_method1("astype", (wanted,)),
            _ if same => Ok(array),
            _ => array.call_method1("astype", (wanted,)),
        }
    }

    /// A signature from slots computed elsewhere (a row of an array, a signature stored
    /// earlier): a 1-d array of uint32 whose length is num_perm, and the parameters that made
    /// them. The slots are copied into the signature.
    #[staticmethod]
    #[pyo3(signature = (slots, *, seed=42, sketch="fss", shingling=None))]
    fn from_numpy(
        slots: &Bound<'_, PyAny>,
        seed: i128,
        sketch: &str,
        shingling: Option<&str>,
    ) -> PyResult<Self> {
        let array: PyReadonlyArray1<'_, u32> = slots.extract().map_err(|_| {
            PyTypeError::new_err(
                "from_numpy takes a 1-d NumPy array of uint32 (convert with .astype(numpy.uint32))",
            )
        })?;
        let slots = array.as_array().to_vec();
        let params = params_of(sketch, slots.len(), self::seed(seed)?)?;
        Ok(Signature::from_parts(params, slots)
            .or_py()?
            .with_shingling(shingling)
            .into())
    }

    /// The slots, as a copy in a new NumPy array (datasketch's `MinHash.digest`).
    fn digest<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        PyArray1::from_slice(py, self.inner.slots())
    }

    /// Slots in the signature.
    #[getter]
    fn num_perm(&self) -> usize {
        self.inner.num_perm()
    }

    /// The seed that made it.
    #[getter]
    fn seed(&self) -> u64 {
        self.inner.params().seed
    }

    /// The sketch that made it: 'fss', 'oph' or 'classic'.
    #[getter]
    fn sketch(&self) -> &'static str {
        self.inner.params().kind.name()
    }

    /// How its text was shingled and normalized ('char 9-shingles,
    /// nfkc+casefold+whitespace+trim'), or None when it was made from tokens, hashes or slots.
    #[getter]
    fn shingling(&self) -> Option<&str> {
        self.inner.shingling()
    }

    fn __len__(&self) -> usize {
        self.inner.num_perm()
    }

    fn __repr__(&self) -> String {
        let p = self.inner.params();
        let shingling = match self.inner.shingling() {
            Some(s) => format!(", shingling='{s}'"),
            None => String::new(),
        };
        format!(
            "Signature(num_perm={}, seed={}, sketch='{}'{shingling})",
            p.num_perm,
            p.seed,
            p.kind.name()
        )
    }

    /// Pickles as its parameters and its slots (little-endian uint32).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let make = py.import("ndup._ndup")?.getattr("_signature_from_state")?;
        let bytes: Vec<u8> = self
            .inner
            .slots()
            .iter()
            .flat_map(|s| s.to_le_bytes())
            .collect();
        let p = self.inner.params();
        let state = (
            p.kind.name(),
            p.seed,
            PyBytes::new(py, &bytes),
            self.inner.shingling(),
        );
        (make, state).into_pyobject(py)
    }
}

/// Rebuilds a pickled signature.
#[pyfunction]
#[pyo3(name = "_signature_from_state", signature = (sketch, seed, slots, shingling=None))]
fn signature_from_state(
    sketch: &str,
    seed: u64,
    slots: &[u8],
    shingling: Option<&str>,
) -> PyResult<PySignature> {
    if slots.is_empty() || !slots.len().is_multiple_of(4) {
        return Err(PyValueError::new_err(
            "a pickled signature holds whole uint32 slots",
        ));
    }
    let slots: Vec<u32> = slots
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("chunks of 4")))
        .collect();
    let params = params_of(sketch, slots.len(), seed)?;
    Ok(Signature::from_parts(params, slots)
        .or_py()?
        .with_shingling(shingling)
        .into())
}

/// A signature fed token by token, as datasketch's `MinHash` is: `update(b"token")`,
/// `update_batch(tokens)`, `jaccard(other)`, `digest()`, `merge(other)`.
///
/// Each token (str or bytes) is hashed with the seeded 64-bit xxh3; the signature is made from
/// the set of them when it is asked for, so it depends neither on the order of the updates nor
/// on repeats, and it is kept until the next change. The parameters are those of `MinHasher`
/// (num_perm, seed, sketch); `signature()` gives the `Signature` that `LSH` and
/// `Signature.jaccard` take. An empty MinHash has datasketch's signature of nothing: every slot
/// 0xFFFFFFFF (the minimum over an empty set).
#[pyclass(name = "MinHash", module = "ndup")]
pub(crate) struct PyMinHash {
    hasher: MinHasher,
    /// The token hashes, each at least once. Repeats are dropped when the vector has doubled
    /// since they last were (sorting it), so that memory follows the distinct tokens at an
    /// amortized cost per update; every sketch is a function of the set of hashes (a minimum
    /// per slot), so the repeats never change a signature.
    hashes: Vec<u64>,
    /// The length of `hashes` after repeats were last dropped.
    distinct: usize,
    /// The signature of `hashes`, made on first use after a change.
    signature: OnceLock<Signature>,
}

/// Below this many hashes, repeats are left in place: sorting a handful often costs more than
/// it saves.
const COMPACT_MIN: usize = 64;

/// Tokens `update_batch` hashes between two additions: the MinHash is not borrowed while the
/// caller's iterator runs, which may use it.
const UPDATE_CHUNK: usize = 4096;

impl PyMinHash {
    fn with_hashes(hasher: MinHasher, hashes: Vec<u64>) -> Self {
        let mut m = PyMinHash {
            hasher,
            hashes,
            distinct: 0,
            signature: OnceLock::new(),
        };
        m.compact();
        m
    }

    /// The signature of every token added (of none: every slot `u32::MAX`).
    pub(crate) fn signature(&self) -> &Signature {
        self.signature.get_or_init(|| {
            self.hasher.sign_hashes(&self.hashes).unwrap_or_else(|| {
                let p = self.hasher.params();
                Signature::from_parts(p, vec![u32::MAX; p.num_perm])
                    .expect("a signature of num_perm slots")
            })
        })
    }

    /// Adds token hashes.
    fn add(&mut self, hashes: impl IntoIterator<Item = u64>) {
        self.hashes.extend(hashes);
        self.signature.take();
        if self.hashes.len() >= 2 * self.distinct.max(COMPACT_MIN) {
            self.compact();
        }
    }

    fn compact(&mut self) {
        self.hashes.sort_unstable();
        self.hashes.dedup();
        self.distinct = self.hashes.len();
    }
}

#[pymethods]
impl PyMinHash {
    #[new]
    #[pyo3(signature = (num_perm=128, seed=42, sketch="fss"))]
    fn new(num_perm: i64, seed: i128, sketch: &str) -> PyResult<Self> {
        let hasher = MinHasher::builder()
            .kind(sketch_kind(sketch)?)
            .num_perm(count("num_perm", num_perm)?)
            .seed(self::seed(seed)?)
            .build()
            .or_py()?;
        Ok(PyMinHash::with_hashes(hasher, Vec::new()))
    }

    /// Adds one token (str or bytes).
    fn update(&mut self, token: &Bound<'_, PyAny>) -> PyResult<()> {
        let h = token_hash(token, self.hasher.params().seed)?;
        self.add([h]);
        Ok(())
    }

    /// Adds every token of an iterable (those before an invalid one stay added).
    fn update_batch(slf: &Bound<'_, Self>, tokens: &Bound<'_, PyAny>) -> PyResult<()> {
        let seed = slf.borrow().hasher.params().seed;
        let mut chunk = Vec::with_capacity(UPDATE_CHUNK);
        for t in tokens.try_iter()? {
            match t.and_then(|t| token_hash(&t, seed)) {
                Ok(h) => chunk.push(h),
                Err(e) => {
                    slf.borrow_mut().add(chunk);
                    return Err(e);
                }
            }
            if chunk.len() == UPDATE_CHUNK {
                slf.borrow_mut().add(chunk.drain(..));
            }
        }
        slf.borrow_mut().add(chunk);
        Ok(())
    }

    /// Adds every token of `other` (same parameters): this becomes the MinHash of the union.
    fn merge(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<()> {
        let other = other
            .cast::<PyMinHash>()
            .map_err(|_| PyTypeError::new_err("merge takes another MinHash"))?;
        if other.is(slf) {
            // The union with itself: nothing to add (the parameters are its own).
            return Ok(());
        }
        let theirs = {
            let o = other.borrow();
            same_params(slf.borrow().hasher.params(), o.hasher.params())?;
            o.hashes.clone()
        };
        slf.borrow_mut().add(theirs);
        Ok(())
    }

    /// The estimated Jaccard similarity with another MinHash or a Signature (same parameters).
    fn jaccard(&self, other: &Bound<'_, PyAny>) -> PyResult<f64> {
        let mine = self.signature();
        with_signature(other, |other| mine.jaccard(other).or_py())
    }

    /// The signature of every token added; of an empty MinHash, every slot is 0xFFFFFFFF.
    #[pyo3(name = "signature")]
    fn py_signature(&self) -> PySignature {
        self.signature().clone().into()
    }

    /// The slots of the signature, in a new NumPy array (uint32).
    fn digest<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u32>> {
        PyArray1::from_slice(py, self.signature().slots())
    }

    /// True when no token has been added.
    fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// A copy, to update separately.
    fn copy(&self) -> Self {
        PyMinHash {
            hasher: self.hasher.clone(),
            hashes: self.hashes.clone(),
            distinct: self.distinct,
            signature: self.signature.clone(),
        }
    }

    /// Forgets every token.
    fn clear(&mut self) {
        self.hashes = Vec::new();
        self.distinct = 0;
        self.signature.take();
    }

    /// Equal, as in datasketch, when the parameters (seed, num_perm, sketch) and the slots are.
    fn __eq__(&self, other: PyRef<'_, Self>) -> bool {
        self.hasher.params() == other.hasher.params() && self.signature() == other.signature()
    }

    /// Unhashable, as datasketch's MinHash: it changes with each update.
    #[classattr]
    const __hash__: Option<Py<PyAny>> = None;

    /// Slots per signature.
    #[getter]
    fn num_perm(&self) -> usize {
        self.hasher.params().num_perm
    }

    /// The seed.
    #[getter]
    fn seed(&self) -> u64 {
        self.hasher.params().seed
    }

    /// The sketch.
    #[getter]
    fn sketch(&self) -> &'static str {
        self.hasher.params().kind.name()
    }

    fn __len__(&self) -> usize {
        self.hasher.params().num_perm
    }

    /// Names the number of distinct tokens added.
    fn __repr__(&mut self) -> String {
        self.compact();
        let p = self.hasher.params();
        format!(
            "MinHash(num_perm={}, seed={}, sketch='{}') with {} distinct tokens",
            p.num_perm,
            p.seed,
            p.kind.name(),
            self.hashes.len()
        )
    }

    /// Pickles as its parameters and its distinct token hashes.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let mut me = slf.borrow_mut();
        me.compact();
        let p = me.hasher.params();
        let bytes: Vec<u8> = me.hashes.iter().flat_map(|h| h.to_le_bytes()).collect();
        (
            slf.get_type(),
            (p.num_perm, p.seed, p.kind.name()),
            PyBytes::new(slf.py(), &bytes),
        )
            .into_pyobject(slf.py())
    }

    fn __setstate__(&mut self, state: &[u8]) -> PyResult<()> {
        if !state.len().is_multiple_of(8) {
            return Err(PyValueError::new_err(
                "a pickled MinHash holds whole uint64 hashes",
            ));
        }
        self.hashes.clear();
        self.distinct = 0;
        self.add(
            state
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("chunks of 8"))),
        );
        Ok(())
    }
}
