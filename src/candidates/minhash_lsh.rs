//! [`MinHashLsh`]: an in-memory LSH index of [`Signature`]s that grows and shrinks one key at a
//! time, in the shape of datasketch's `MinHashLSH`: insert, query, remove.
//!
//! It bands signatures as the scan does ([`LshIndex`](crate::candidates::lsh::LshIndex)): band
//! `b` is slots `b * rows .. (b + 1) * rows`, hashed with `band_hash`, and two signatures are
//! candidates when they share a band. So for the same signatures and banding, a query returns the
//! keys the scan would pair with it (the scan also links buckets of more than `--max-bucket`
//! members as stars, which this index does not). Candidates are not verified: compare them with
//! [`Signature::jaccard`], or exactly.
//!
//! ```
//! use ndup::{MinHashLsh, MinHasher};
//! let hasher = MinHasher::new(128)?;
//! let mut lsh = MinHashLsh::new(0.8, 128)?;
//! let doc = "The quick brown fox jumps over the lazy dog, and the dog does not mind at all.";
//! lsh.insert("a", &hasher.sign(doc).unwrap())?;
//! lsh.insert("b", &hasher.sign("Something else entirely.").unwrap())?;
//! let q = hasher.sign("the quick brown fox jumps over the lazy dog, and the dog does not mind at all!").unwrap();
//! assert_eq!(lsh.query(&q)?, ["a"]);
//! # Ok::<(), ndup::Error>(())
//! ```

use std::borrow::Borrow;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::Arc;

use rayon::prelude::*;

use crate::candidates::lsh::{LshParams, band_hash};
use crate::candidates::tune::{Weights, tune};
use crate::error::{Error, Param, Result};
use crate::sketch::minhash::{MAX_NUM_PERM, SketchParams};
use crate::sketch::signature::{Signature, ensure_like};

/// The end of a bucket's chain, and a vacant slot's head.
const NIL: u32 = u32::MAX;

/// An in-memory banded LSH index from keys to [`Signature`]s.
///
/// Keys are generic, so that a caller keys documents by what it already has (a `u64` row id, a
/// `String` URL, a `PathBuf`) without converting. The bounds say what the index does with them:
/// `Eq + Hash` to find a key's entry for [`remove`](Self::remove) and
/// [`contains`](Self::contains), `Ord` so that [`query`](Self::query) returns its candidates
/// sorted, the same order whatever the order of insertions and removals, `Clone` to hand keys
/// back from a query, `Debug` to name a key refused as a duplicate. Each key is stored once in
/// the buckets' place: the buckets hold small integers, the entry numbers.
///
/// Every signature must have the same parameters: the first one inserted fixes them (and
/// [`new`](Self::new) fixes `num_perm`); a signature of other parameters is refused with
/// [`Error::Mismatch`], by [`insert`](Self::insert) and [`query`](Self::query) alike.
///
/// The layout, so that an insertion allocates nothing (amortized) and a query nothing but its
/// result: each band has one open-addressing table from band hash to the first entry of its
/// bucket, and the rest of a bucket is a chain through `next`, one `u32` per entry and band. An
/// insertion is one table probe per band; removing an entry walks each of its buckets to unlink
/// it, so it costs the size of those buckets.
#[derive(Debug, Clone)]
pub struct MinHashLsh<K> {
    lsh: LshParams,
    /// The width given to [`new`](Self::new), before any signature fixes `sketch`.
    num_perm: Option<usize>,
    /// The parameters of the first signature inserted.
    sketch: Option<SketchParams>,
    /// How the text of the signatures was shingled, once one signed from text was inserted:
    /// a signature of text shingled otherwise is refused as one of other parameters.
    shingling: Option<Arc<str>>,
    /// The key of each entry number; `None` for a removed one, whose number is in `free`.
    keys: Vec<Option<K>>,
    free: Vec<u32>,
    numbers: HashMap<K, u32>,
    /// The band hashes of entry `n`, at `n * bands ..`: to find its buckets again on removal.
    hashes: Vec<u64>,
    /// `next[n * bands + b]`: the entry after `n` in its bucket of band `b`, or `NIL`. Entry-major,
    /// because a query's hits are mostly a few entries met in many bands: their links share a
    /// cache line.
    next: Vec<u32>,
    /// For each band, the first entry of each bucket.
    heads: Vec<Heads>,
}

/// A band's buckets: band hash to the first entry of the bucket, open addressing with linear
/// probing in a power-of-two table. The band hashes are already uniform 64-bit values, so their
/// low bits are the slot; no second hash.
#[derive(Debug, Clone, Default)]
struct Heads {
    slots: Vec<Slot>,
    /// Occupied slots.
    len: usize,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    hash: u64,
    /// `NIL` when vacant.
    head: u32,
}

const VACANT: Slot = Slot { hash: 0, head: NIL };

impl Heads {
    /// The slot holding `hash`, if any.
    #[inline]
    fn find(&self, hash: u64) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let s = self.slots[i];
            if s.head == NIL {
                return None;
            }
            if s.hash == hash {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Starts loading the cache line where `hash` would be. A band's lookup is a cache miss
    /// in a large index; asking for every band's line before using any overlaps the misses.
    #[inline]
    fn prefetch(&self, hash: u64) {
        if !self.slots.is_empty() {
            prefetch(&self.slots[hash as usize & (self.slots.len() - 1)]);
        }
    }

    /// The first entry of the bucket of `hash`, or `NIL`.
    #[inline]
    fn head(&self, hash: u64) -> u32 {
        self.find(hash).map_or(NIL, |i| self.slots[i].head)
    }

    /// Makes `number` the first entry of the bucket of `hash`; returns the entry it goes before
    /// (`NIL` for a new bucket).
    #[inline]
    fn push(&mut self, hash: u64, number: u32) -> u32 {
        self.reserve(1);
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let s = &mut self.slots[i];
            if s.head == NIL {
                *s = Slot { hash, head: number };
                self.len += 1;
                return NIL;
            }
            if s.hash == hash {
                return std::mem::replace(&mut s.head, number);
            }
            i = (i + 1) & mask;
        }
    }

    /// Room for `more` buckets at a load of at most three quarters: linear probing degrades
    /// quickly above it, and a sparser table costs memory, which a batch insertion spends
    /// mostly in page faults.
    fn reserve(&mut self, more: usize) {
        let want = self.len + more;
        if want * 4 <= self.slots.len() * 3 {
            return;
        }
        let capacity = (want * 4 / 3 + 1).next_power_of_two().max(16);
        let old = std::mem::replace(&mut self.slots, vec![VACANT; capacity]);
        let mask = capacity - 1;
        for s in old.into_iter().filter(|s| s.head != NIL) {
            let mut i = s.hash as usize & mask;
            while self.slots[i].head != NIL {
                i = (i + 1) & mask;
            }
            self.slots[i] = s;
        }
    }

    /// Empties slot `i`, moving later slots of its probe run back so that every lookup still
    /// finds them (backward-shift deletion: no tombstones to accumulate).
    fn vacate(&mut self, mut i: usize) {
        let mask = self.slots.len() - 1;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let s = self.slots[j];
            if s.head == NIL {
                break;
            }
            // The slot at `j` may move to `i` unless its home lies cyclically in `(i, j]`.
            let home = s.hash as usize & mask;
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(i) & mask) {
                self.slots[i] = s;
                i = j;
            }
        }
        self.slots[i] = VACANT;
        self.len -= 1;
    }
}

/// What an index holds, less its signatures (it keeps only their band hashes): enough to save
/// an index and build it again with [`MinHashLsh::from_parts`], as pickling does in Python.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LshParts<K> {
    /// The banding.
    pub lsh: LshParams,
    /// The width every signature must have, when the index was made for one
    /// ([`MinHashLsh::new`]).
    pub num_perm: Option<usize>,
    /// The parameters of the signatures, once one was inserted.
    pub sketch: Option<SketchParams>,
    /// How their text was shingled, once a signature of text was inserted.
    pub shingling: Option<String>,
    /// Each key with the band hashes of its signature, in the order of their entries (the
    /// order of insertion when nothing was removed).
    pub entries: Vec<(K, Vec<u64>)>,
}

/// The results of [`MinHashLsh::query_batch`]: the candidates of every query, in one vector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryBatch<K> {
    keys: Vec<K>,
    /// Where the candidates of each query end in `keys`.
    ends: Vec<usize>,
}

impl<K> QueryBatch<K> {
    /// Number of queries.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when there was no query.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The candidates of query `i`, sorted.
    pub fn get(&self, i: usize) -> &[K] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.keys[start..self.ends[i]]
    }

    /// The candidates of each query, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[K]> {
        (0..self.len()).map(|i| self.get(i))
    }
}

/// Queries per task of a batch: enough to amortize a task, few enough to share the work out.
const QUERY_CHUNK: usize = 256;

/// Bands hashed and prefetched at once, before their lookups.
const BATCH: usize = 16;

/// How many entries ahead a batch insertion prefetches a band's slot.
const PREFETCH_AHEAD: usize = 8;

#[inline(always)]
fn prefetch<T>(p: &T) {
    // SAFETY: SSE is part of x86_64, and a prefetch never faults, whatever the address.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (p as *const T).cast(),
        )
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Marks of the entries a query has met, so that it keeps each once: `stamps[n] == round` when
/// entry `n` was met by the current query. One per thread (queries run on many threads at once
/// in a batch), shared by every index, which is safe because each query takes a new round.
struct Seen {
    round: u32,
    stamps: Vec<u32>,
}

thread_local! {
    static SEEN: std::cell::RefCell<Seen> = const {
        std::cell::RefCell::new(Seen { round: 0, stamps: Vec::new() })
    };
}

impl Seen {
    /// Starts a query over entries `0..entries`.
    fn start(&mut self, entries: usize) {
        if self.stamps.len() < entries {
            self.stamps.resize(entries, 0);
        }
        self.round = self.round.wrapping_add(1);
        if self.round == 0 {
            // After 2^32 queries a stamp could equal the new round by age alone.
            self.stamps.fill(0);
            self.round = 1;
        }
    }

    /// True the first time `n` is met in this query.
    #[inline]
    fn first(&mut self, n: u32) -> bool {
        let s = &mut self.stamps[n as usize];
        let new = *s != self.round;
        *s = self.round;
        new
    }
}

impl<K: Eq + Hash + Clone + Ord + Debug> MinHashLsh<K> {
    /// An index for signatures of `num_perm` slots, with the banding the scan would choose for
    /// `threshold` (the tuner of [`crate::candidates::tune`] with its default weights, which
    /// favour finding every pair above the threshold over fewer false candidates).
    pub fn new(threshold: f64, num_perm: usize) -> Result<Self> {
        if num_perm > MAX_NUM_PERM {
            return Err(crate::invalid![
                Param::NumPerm,
                format!(" must be between 1 and {MAX_NUM_PERM}, not {num_perm}")
            ]);
        }
        let lsh = tune(threshold, num_perm, Weights::default(), None, None)?;
        let mut index = Self::with_lsh(lsh);
        index.num_perm = Some(num_perm);
        Ok(index)
    }

    /// An index with `bands` bands of `rows` slots; the first signature inserted must have at
    /// least `bands * rows` slots.
    pub fn with_bands(bands: usize, rows: usize) -> Result<Self> {
        let lsh = LshParams { bands, rows };
        if bands > 0 && rows > 0 && bands.checked_mul(rows).is_none_or(|n| n > MAX_NUM_PERM) {
            return Err(crate::invalid![
                Param::Bands,
                format!(" {bands} x "),
                Param::Rows,
                format!(" {rows} is more than the widest signature, {MAX_NUM_PERM} slots"),
            ]);
        }
        lsh.validate(MAX_NUM_PERM)?;
        Ok(Self::with_lsh(lsh))
    }

    fn with_lsh(lsh: LshParams) -> Self {
        MinHashLsh {
            lsh,
            num_perm: None,
            sketch: None,
            shingling: None,
            keys: Vec::new(),
            free: Vec::new(),
            numbers: HashMap::new(),
            hashes: Vec::new(),
            next: Vec::new(),
            heads: vec![Heads::default(); lsh.bands],
        }
    }

    /// The banding.
    pub fn bands(&self) -> LshParams {
        self.lsh
    }

    /// The parameters every signature must have, once one has been inserted.
    pub fn sketch_params(&self) -> Option<SketchParams> {
        self.sketch
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.numbers.len()
    }

    /// True when no key is indexed.
    pub fn is_empty(&self) -> bool {
        self.numbers.is_empty()
    }

    /// True when `key` is indexed (any borrowed form of the key: `&str` for `String` keys).
    pub fn contains<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.numbers.contains_key(key)
    }

    /// Indexes `signature` under `key`. Refuses a key already indexed (remove it first) with
    /// [`Error::DuplicateKey`], and a signature whose parameters differ from the index's with
    /// [`Error::Mismatch`] (or [`Error::InvalidConfig`] when the first one is narrower than the
    /// banding of [`with_bands`](Self::with_bands)); the index is unchanged on error.
    pub fn insert(&mut self, key: K, signature: &Signature) -> Result<()> {
        self.check(signature)?;
        let number = match self.free.last() {
            Some(&n) => n,
            None => self.new_number(1)?,
        };
        let key = match self.numbers.entry(key) {
            Entry::Occupied(e) => {
                return Err(Error::DuplicateKey {
                    key: format!("{:?}", e.key()),
                });
            }
            Entry::Vacant(e) => e.insert_entry(number).key().clone(),
        };
        if self.free.last() == Some(&number) {
            self.free.pop();
        }
        self.place(number);
        let LshParams { bands, rows } = self.lsh;
        let at = number as usize * bands;
        for (b, (h, band)) in self.hashes[at..at + bands]
            .iter_mut()
            .zip(band_hashes(signature, bands, rows))
            .enumerate()
        {
            *h = band;
            self.heads[b].prefetch(band);
        }
        for b in 0..bands {
            self.next[at + b] = self.heads[b].push(self.hashes[at + b], number);
        }
        self.keys[number as usize] = Some(key);
        self.sketch = Some(signature.params());
        if self.shingling.is_none() {
            self.shingling = signature.shingling_shared().cloned();
        }
        Ok(())
    }

    /// What the index holds, to build it again with [`from_parts`](Self::from_parts).
    pub fn to_parts(&self) -> LshParts<K> {
        let bands = self.lsh.bands;
        let entries = self
            .keys
            .iter()
            .enumerate()
            .filter_map(|(n, k)| {
                let k = k.as_ref()?;
                Some((k.clone(), self.hashes[n * bands..(n + 1) * bands].to_vec()))
            })
            .collect();
        LshParts {
            lsh: self.lsh,
            num_perm: self.num_perm,
            sketch: self.sketch,
            shingling: self.shingling.as_deref().map(str::to_owned),
            entries,
        }
    }

    /// The index that [`to_parts`](Self::to_parts) described. Refuses parts that no index
    /// could have, as [`new`](Self::new), [`with_bands`](Self::with_bands) and
    /// [`insert`](Self::insert) would: a banding out of range ([`Error::InvalidConfig`]), a
    /// width (`num_perm`, or the sketch's) outside 1 to [`MAX_NUM_PERM`] or narrower than the
    /// banding ([`Error::InvalidConfig`]), a sketch of another width than `num_perm`
    /// ([`Error::Mismatch`]), a shingling or entries without the signature parameters
    /// ([`Error::InvalidConfig`]), band hashes of another number of bands
    /// ([`Error::InvalidConfig`]), a duplicate key ([`Error::DuplicateKey`]).
    pub fn from_parts(parts: LshParts<K>) -> Result<Self> {
        let LshParts {
            lsh,
            num_perm,
            sketch,
            shingling,
            entries,
        } = parts;
        let mut index = Self::with_bands(lsh.bands, lsh.rows)?;
        for n in num_perm.into_iter().chain(sketch.map(|p| p.num_perm)) {
            if !(1..=MAX_NUM_PERM).contains(&n) {
                return Err(crate::invalid![
                    Param::NumPerm,
                    format!(" must be between 1 and {MAX_NUM_PERM}, not {n}")
                ]);
            }
            lsh.validate(n)?;
        }
        if let (Some(m), Some(p)) = (num_perm, sketch)
            && m != p.num_perm
        {
            return Err(Error::Mismatch(format!("num-perm {m} vs {}", p.num_perm)));
        }
        if shingling.is_some() && sketch.is_none() {
            return Err(crate::invalid![
                "an LSH index that knows the shingling of its signatures has their parameters"
            ]);
        }
        index.num_perm = num_perm;
        index.sketch = sketch;
        index.shingling = shingling.map(Arc::from);
        if !entries.is_empty() && sketch.is_none() {
            return Err(crate::invalid![
                "an LSH index with entries has their signature parameters"
            ]);
        }
        index.new_number(entries.len())?;
        let bands = lsh.bands;
        for (n, (key, hashes)) in entries.into_iter().enumerate() {
            if hashes.len() != bands {
                return Err(crate::invalid![format!(
                    "an entry of an index of {bands} bands has {} band hashes",
                    hashes.len()
                )]);
            }
            let number = n as u32;
            if index.numbers.insert(key.clone(), number).is_some() {
                return Err(Error::DuplicateKey {
                    key: format!("{key:?}"),
                });
            }
            index.place(number);
            let at = n * bands;
            index.hashes[at..at + bands].copy_from_slice(&hashes);
            for (b, &h) in hashes.iter().enumerate() {
                index.next[at + b] = index.heads[b].push(h, number);
            }
            index.keys[n] = Some(key);
        }
        Ok(index)
    }

    /// Indexes every `(key, signature)` of `entries`, as [`insert`](Self::insert) would one at a
    /// time, but hashing the bands on every core and filling one band's table at a time (which
    /// then stays in cache). All or nothing: a duplicate key (indexed already, or twice in
    /// `entries`) or a signature of other parameters is refused as by `insert`, and the index is
    /// unchanged.
    pub fn insert_batch<S>(&mut self, entries: impl IntoIterator<Item = (K, S)>) -> Result<()>
    where
        S: Borrow<Signature> + Sync,
    {
        let (keys, sigs): (Vec<K>, Vec<S>) = entries.into_iter().unzip();
        let Some(first) = sigs.first() else {
            return Ok(());
        };
        let first = first.borrow().params();
        self.check(sigs[0].borrow())?;
        let shingling = self.shingling.clone().or_else(|| {
            sigs.iter()
                .find_map(|s| s.borrow().shingling_shared().cloned())
        });
        for s in &sigs[1..] {
            ensure_like(first, shingling.as_deref(), s.borrow())?;
        }
        // Numbers: the free ones first, in the order `insert` would take them, then new ones.
        let reused = self.free.len().min(keys.len());
        self.new_number(keys.len() - reused)?;
        let fresh = self.keys.len() as u32;
        let numbers: Vec<u32> = (0..keys.len())
            .map(|i| match i < reused {
                true => self.free[self.free.len() - 1 - i],
                false => fresh + (i - reused) as u32,
            })
            .collect();
        for (i, (key, &n)) in keys.iter().zip(&numbers).enumerate() {
            if let Some(old) = self.numbers.insert(key.clone(), n) {
                // Undo: put the old number back, then take out the keys of this batch (the
                // key itself among them when it is twice in the batch).
                self.numbers.insert(key.clone(), old);
                for k in &keys[..i] {
                    self.numbers.remove(k);
                }
                return Err(Error::DuplicateKey {
                    key: format!("{key:?}"),
                });
            }
        }
        self.free.truncate(self.free.len() - reused);
        let LshParams { bands, rows } = self.lsh;
        let mut hashes = vec![0u64; sigs.len() * bands];
        hashes
            .par_chunks_mut(bands)
            .zip(sigs.par_iter())
            .with_min_len(256)
            .for_each(|(out, s)| {
                for (h, band) in out.iter_mut().zip(band_hashes(s.borrow(), bands, rows)) {
                    *h = band;
                }
            });
        if let Some(&last) = numbers.iter().max() {
            self.place(last);
        }
        for (key, (&n, h)) in keys
            .into_iter()
            .zip(numbers.iter().zip(hashes.chunks(bands)))
        {
            let at = n as usize * bands;
            self.hashes[at..at + bands].copy_from_slice(h);
            self.keys[n as usize] = Some(key);
        }
        // One band's table per task; each records the links it makes, set in `next` below
        // (`next` is entry-major, so the bands' links are interleaved there).
        let links: Vec<Vec<u32>> = self
            .heads
            .par_iter_mut()
            .enumerate()
            .map(|(b, heads)| {
                heads.reserve(numbers.len());
                let band = |i: usize| hashes[i * bands + b];
                let mut links = Vec::with_capacity(numbers.len());
                for (i, &n) in numbers.iter().enumerate() {
                    // The slot a few entries ahead starts loading while this one is placed: the
                    // table is larger than the cache, and each placement a miss otherwise.
                    if i + PREFETCH_AHEAD < numbers.len() {
                        heads.prefetch(band(i + PREFETCH_AHEAD));
                    }
                    links.push(heads.push(band(i), n));
                }
                links
            })
            .collect();
        for (i, &n) in numbers.iter().enumerate() {
            let at = n as usize * bands;
            for (b, links) in links.iter().enumerate() {
                self.next[at + b] = links[i];
            }
        }
        self.sketch = Some(first);
        self.shingling = shingling;
        Ok(())
    }

    /// The keys whose signatures share at least one band with `signature`, sorted, each once
    /// (a key indexed with this very signature among them). [`Error::Mismatch`] when the
    /// signature's parameters differ from the index's.
    pub fn query(&self, signature: &Signature) -> Result<Vec<K>> {
        let mut keys = Vec::new();
        self.query_into(signature, &mut keys)?;
        Ok(keys)
    }

    /// [`query`](Self::query) into `out` (cleared first), so that a caller running many
    /// queries reuses one vector.
    pub fn query_into(&self, signature: &Signature, out: &mut Vec<K>) -> Result<()> {
        self.check(signature)?;
        out.clear();
        if self.is_empty() {
            return Ok(());
        }
        SEEN.with_borrow_mut(|seen| self.collect(signature, seen, out));
        Ok(())
    }

    /// The candidates of `signature`, sorted, into `out`.
    fn collect(&self, signature: &Signature, seen: &mut Seen, out: &mut Vec<K>) {
        seen.start(self.keys.len());
        let LshParams { bands, rows } = self.lsh;
        let slots = signature.slots();
        let mut hashes = [0u64; BATCH];
        for first in (0..bands).step_by(BATCH) {
            let m = BATCH.min(bands - first);
            for (i, h) in hashes[..m].iter_mut().enumerate() {
                let b = first + i;
                *h = band_hash(&slots[b * rows..(b + 1) * rows]);
                self.heads[b].prefetch(*h);
            }
            for (i, &h) in hashes[..m].iter().enumerate() {
                let b = first + i;
                let mut n = self.heads[b].head(h);
                while n != NIL {
                    if seen.first(n) {
                        out.push(
                            self.keys[n as usize]
                                .clone()
                                .expect("buckets hold only live entries"),
                        );
                    }
                    n = self.next[n as usize * bands + b];
                }
            }
        }
        out.sort_unstable();
    }

    /// [`query`](Self::query) for each of `signatures`, on every core: the candidates of
    /// `signatures[i]` are [`QueryBatch::get`]`(i)`, all in one vector. [`Error::Mismatch`]
    /// when any signature's parameters differ from the index's.
    pub fn query_batch<S>(&self, signatures: &[S]) -> Result<QueryBatch<K>>
    where
        S: Borrow<Signature> + Sync,
        K: Send + Sync,
    {
        for s in signatures {
            self.check(s.borrow())?;
        }
        let mut batch = QueryBatch {
            keys: Vec::new(),
            ends: Vec::with_capacity(signatures.len()),
        };
        if self.is_empty() {
            batch.ends.resize(signatures.len(), 0);
            return Ok(batch);
        }
        let parts: Vec<(Vec<K>, Vec<usize>)> = signatures
            .par_chunks(QUERY_CHUNK)
            .map(|chunk| {
                SEEN.with_borrow_mut(|seen| {
                    let (mut keys, mut ends, mut out) = (Vec::new(), Vec::new(), Vec::new());
                    for s in chunk {
                        out.clear();
                        self.collect(s.borrow(), seen, &mut out);
                        keys.append(&mut out);
                        ends.push(keys.len());
                    }
                    (keys, ends)
                })
            })
            .collect();
        batch.keys.reserve(parts.iter().map(|(k, _)| k.len()).sum());
        for (keys, ends) in parts {
            let base = batch.keys.len();
            batch.keys.extend(keys);
            batch.ends.extend(ends.into_iter().map(|e| base + e));
        }
        Ok(batch)
    }

    /// Removes `key` (or a borrowed form of it); false when it was not indexed.
    pub fn remove<Q: Hash + Eq + ?Sized>(&mut self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        let Some(number) = self.numbers.remove(key) else {
            return false;
        };
        self.keys[number as usize] = None;
        let bands = self.lsh.bands;
        let at = number as usize * bands;
        for (b, heads) in self.heads.iter_mut().enumerate() {
            let slot = heads
                .find(self.hashes[at + b])
                .expect("an entry is in its buckets");
            let after = self.next[at + b];
            let head = heads.slots[slot].head;
            if head == number {
                match after {
                    NIL => heads.vacate(slot),
                    _ => heads.slots[slot].head = after,
                }
            } else {
                let mut before = head as usize;
                while self.next[before * bands + b] != number {
                    before = self.next[before * bands + b] as usize;
                    assert!(before != NIL as usize, "an entry is in its buckets");
                }
                self.next[before * bands + b] = after;
            }
        }
        self.free.push(number);
        true
    }

    /// Checks that `more` new entry numbers fit in a `u32` (`NIL` excluded); returns the first.
    fn new_number(&self, more: usize) -> Result<u32> {
        match self.keys.len().checked_add(more) {
            Some(n) if n <= NIL as usize => Ok(self.keys.len() as u32),
            _ => Err(crate::invalid!["an LSH index holds fewer than 2^32 keys"]),
        }
    }

    /// Grows the per-entry arrays to hold entry `number`.
    fn place(&mut self, number: u32) {
        let n = number as usize + 1;
        if self.keys.len() < n {
            self.keys.resize(n, None);
            self.hashes.resize(n * self.lsh.bands, 0);
            self.next.resize(n * self.lsh.bands, NIL);
        }
    }

    /// Checks `signature` against the index's parameters (or, before the first insertion,
    /// against the width and banding).
    fn check(&self, signature: &Signature) -> Result<()> {
        if let Some(p) = self.sketch {
            let alike = match (&self.shingling, signature.shingling_shared()) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
                _ => true,
            };
            if p == signature.params() && alike {
                return Ok(());
            }
            return ensure_like(p, self.shingling.as_deref(), signature);
        }
        let n = signature.num_perm();
        match self.num_perm {
            Some(m) if m != n => Err(Error::Mismatch(format!("num-perm {m} vs {n}"))),
            _ => self.lsh.validate(n),
        }
    }
}

/// The hashes of the first `bands` bands of `rows` slots of `signature`.
fn band_hashes(signature: &Signature, bands: usize, rows: usize) -> impl Iterator<Item = u64> + '_ {
    signature
        .slots()
        .chunks_exact(rows)
        .take(bands)
        .map(band_hash)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidates::lsh::LshIndex;
    use crate::sketch::minhash::{SketchKind, fmix64};
    use crate::sketch::signature::MinHasher;

    fn hasher(num_perm: usize, seed: u64) -> MinHasher {
        MinHasher::builder()
            .num_perm(num_perm)
            .seed(seed)
            .build()
            .unwrap()
    }

    /// A set of `n` hashes, of which the first `shared` are common to every `t`.
    fn set(n: u64, shared: u64, t: u64) -> Vec<u64> {
        (0..shared)
            .map(fmix64)
            .chain((shared..n).map(|i| fmix64(i ^ ((t + 1) << 40))))
            .collect()
    }

    const DOC: &str = "Near-duplicate detection compares what a reader sees, not how it was \
                       typed, so by default the text is put in Unicode NFKC form, lowercased, \
                       and every run of white space becomes one space.";

    #[test]
    fn an_index_built_again_from_its_parts_answers_alike() {
        let hasher = MinHasher::new(64).unwrap();
        let sigs: Vec<Signature> = (0..300)
            .map(|i| {
                let text = format!(
                    "family {} member {} {}",
                    i % 30,
                    i % 7,
                    "x y z ".repeat(i % 5)
                );
                hasher.sign(&text).unwrap()
            })
            .collect();
        let mut lsh = MinHashLsh::new(0.5, 64).unwrap();
        for (i, s) in sigs.iter().enumerate() {
            lsh.insert(i as u32, s).unwrap();
        }
        for i in (0..300).step_by(3) {
            assert!(lsh.remove(&i));
        }
        let parts = lsh.to_parts();
        assert_eq!(parts.entries.len(), 200);
        assert!(parts.shingling.is_some());
        let again = MinHashLsh::from_parts(parts.clone()).unwrap();
        assert_eq!(again.to_parts(), parts);
        assert_eq!(again.len(), lsh.len());
        for s in &sigs {
            assert_eq!(again.query(s).unwrap(), lsh.query(s).unwrap());
        }
        // What no index could hold is refused.
        let mut bad = parts.clone();
        bad.entries[1].0 = bad.entries[0].0;
        assert!(matches!(
            MinHashLsh::from_parts(bad),
            Err(Error::DuplicateKey { .. })
        ));
        let mut bad = parts.clone();
        bad.entries[0].1.pop();
        assert!(MinHashLsh::from_parts(bad).is_err());
        let mut bad = parts;
        bad.sketch = None;
        assert!(MinHashLsh::from_parts(bad).is_err());
    }

    #[test]
    fn parts_no_index_could_hold_are_refused() {
        let params = |num_perm| SketchParams {
            kind: SketchKind::Fss,
            num_perm,
            seed: 42,
        };
        let parts = |lsh: (usize, usize), num_perm, sketch: Option<usize>| LshParts::<u32> {
            lsh: LshParams {
                bands: lsh.0,
                rows: lsh.1,
            },
            num_perm,
            sketch: sketch.map(params),
            shingling: None,
            entries: vec![],
        };
        let invalid = |p: LshParts<u32>| match MinHashLsh::from_parts(p) {
            Err(Error::InvalidConfig(p)) => p.to_string(),
            other => panic!("{other:?}"),
        };
        // A sketch narrower than the banding: a later query would slice past its slots.
        assert_eq!(
            invalid(parts((8, 8), None, Some(16))),
            "bands 8 x rows 8 = 64 is more than num_perm 16"
        );
        assert_eq!(
            invalid(parts((8, 8), Some(16), None)),
            "bands 8 x rows 8 = 64 is more than num_perm 16"
        );
        // Widths no signature has.
        let range = |n| format!("num_perm must be between 1 and {MAX_NUM_PERM}, not {n}");
        assert_eq!(invalid(parts((1, 1), None, Some(0))), range(0));
        assert_eq!(invalid(parts((1, 1), Some(0), None)), range(0));
        let wide = MAX_NUM_PERM + 1;
        assert_eq!(invalid(parts((1, 1), Some(wide), Some(wide))), range(wide));
        // A width fixed by `new` that its signatures' parameters contradict.
        assert!(matches!(
            MinHashLsh::from_parts(parts((8, 8), Some(64), Some(128))),
            Err(Error::Mismatch(m)) if m == "num-perm 64 vs 128"
        ));
        // A shingling, or entries, without the parameters of the signatures.
        let mut p = parts((8, 8), None, None);
        p.shingling = Some("char 9-shingles, nfkc".into());
        invalid(p);
        let mut p = parts((2, 2), None, None);
        p.entries = vec![(1, vec![5, 6])];
        invalid(p);
        // Band hashes of another number of bands, wherever the entry is.
        let mut p = parts((2, 2), None, Some(4));
        p.entries = vec![(1, vec![5, 6]), (2, vec![5])];
        assert_eq!(
            invalid(p),
            "an entry of an index of 2 bands has 1 band hashes"
        );
        // What an index holds is accepted, and answers as that index would.
        let h = hasher(16, 42);
        let s = h.sign_hashes(&[1, 2, 3]).unwrap();
        let mut lsh = MinHashLsh::new(0.5, 16).unwrap();
        lsh.insert(7u32, &s).unwrap();
        let again = MinHashLsh::from_parts(lsh.to_parts()).unwrap();
        assert_eq!(again.query(&s).unwrap(), [7]);
        let b = lsh.bands();
        let mut p = parts((b.bands, b.rows), Some(16), Some(16));
        p.entries = vec![(7, lsh.to_parts().entries[0].1.clone())];
        assert!(MinHashLsh::from_parts(p).is_ok_and(|l| l.query(&s).unwrap() == [7]));
    }

    #[test]
    fn signatures_of_text_shingled_otherwise_are_refused() {
        let k = |k: usize| {
            MinHasher::builder()
                .shingles(crate::text::shingle::ShingleOptions {
                    k,
                    ..Default::default()
                })
                .build()
                .unwrap()
        };
        let text = "a text long enough to be shingled in more than one way";
        let (nine, five) = (k(9).sign(text).unwrap(), k(5).sign(text).unwrap());
        let hashes = k(5).sign_hashes(&[1, 2, 3]).unwrap();
        let mut lsh = MinHashLsh::new(0.5, 128).unwrap();
        // Hashes say nothing of their text: they fix no shingling.
        lsh.insert(0u32, &hashes).unwrap();
        lsh.insert(1, &nine).unwrap();
        let refused = |r: Result<()>| match r {
            Err(Error::Mismatch(why)) => assert!(why.contains("shingling"), "{why}"),
            other => panic!("{other:?}"),
        };
        refused(lsh.insert(2, &five));
        refused(lsh.query(&five).map(drop));
        refused(lsh.insert_batch([(3, &hashes), (4, &five)]));
        assert_eq!(lsh.len(), 2, "a refused batch leaves the index as it was");
        assert_eq!(lsh.query(&nine).unwrap(), [1]);
        // A fresh index learns the shingling from a batch, whichever of its signatures has it.
        let mut fresh = MinHashLsh::new(0.5, 128).unwrap();
        refused(fresh.insert_batch([(0u32, &hashes), (1, &nine), (2, &five)]));
        fresh.insert_batch([(0u32, &hashes), (1, &nine)]).unwrap();
        refused(fresh.insert(2, &five));
    }

    #[test]
    fn query_finds_a_near_duplicate_and_not_an_unrelated_text() {
        let h = MinHasher::new(128).unwrap();
        let mut lsh = MinHashLsh::new(0.8, 128).unwrap();
        assert_eq!(lsh.bands(), LshParams { bands: 18, rows: 7 });
        lsh.insert("doc".to_string(), &h.sign(DOC).unwrap())
            .unwrap();
        lsh.insert(
            "other".to_string(),
            &h.sign("Exit codes: 0 when no pair was found, 1 when one was, 2 on error.")
                .unwrap(),
        )
        .unwrap();
        let near = h.sign(&DOC.replace("lowercased", "lower-cased")).unwrap();
        assert_eq!(lsh.query(&near).unwrap(), ["doc"]);
        assert!(lsh.contains("doc") && !lsh.contains("near"));
        let far = h
            .sign("A completely different sentence about the weather in spring.")
            .unwrap();
        assert!(lsh.query(&far).unwrap().is_empty());
    }

    #[test]
    fn a_duplicate_key_is_refused_and_the_index_is_unchanged() {
        let h = hasher(64, 1);
        let mut lsh = MinHashLsh::with_bands(8, 8).unwrap();
        let a = h.sign("first text").unwrap();
        let b = h.sign("second text").unwrap();
        lsh.insert(7u64, &a).unwrap();
        match lsh.insert(7, &b) {
            Err(Error::DuplicateKey { key }) => assert_eq!(key, "7"),
            other => panic!("{other:?}"),
        }
        assert_eq!(lsh.len(), 1);
        assert_eq!(lsh.query(&a).unwrap(), [7]);
        assert!(lsh.query(&b).unwrap().is_empty());
    }

    #[test]
    fn signatures_of_other_parameters_are_a_mismatch() {
        let text = "some text to sign";
        let mut lsh = MinHashLsh::new(0.5, 64).unwrap();
        // Before any insertion the width is already fixed by `new`.
        let wide = hasher(128, 1).sign(text).unwrap();
        assert!(matches!(lsh.query(&wide), Err(Error::Mismatch(m)) if m == "num-perm 64 vs 128"));
        assert!(matches!(lsh.insert(1, &wide), Err(Error::Mismatch(_))));
        lsh.insert(1, &hasher(64, 1).sign(text).unwrap()).unwrap();
        // Then the first signature fixes the seed and the sketch too.
        let seeded = hasher(64, 2).sign(text).unwrap();
        assert!(matches!(lsh.insert(2, &seeded), Err(Error::Mismatch(m)) if m == "seed 1 vs 2"));
        let oph = MinHasher::builder()
            .kind(SketchKind::Oph)
            .num_perm(64)
            .seed(1)
            .build()
            .unwrap()
            .sign(text)
            .unwrap();
        assert!(matches!(lsh.query(&oph), Err(Error::Mismatch(m)) if m == "sketch fss vs oph"));
        assert_eq!(lsh.len(), 1);
        // A banding wider than the first signature is refused as invalid.
        let mut wide_bands = MinHashLsh::with_bands(20, 5).unwrap();
        assert!(matches!(
            wide_bands.insert(1, &hasher(64, 1).sign(text).unwrap()),
            Err(Error::InvalidConfig(_))
        ));
        assert!(MinHashLsh::<u32>::with_bands(0, 5).is_err());
        assert!(MinHashLsh::<u32>::new(1.5, 128).is_err());
        assert!(MinHashLsh::<u32>::new(0.5, 0).is_err());
        assert!(MinHashLsh::<u32>::new(0.5, MAX_NUM_PERM + 1).is_err());
        assert!(MinHashLsh::<u32>::with_bands(usize::MAX, 2).is_err());
    }

    #[test]
    fn remove_then_query() {
        let h = hasher(64, 3);
        let mut lsh = MinHashLsh::with_bands(16, 4).unwrap();
        let s = h.sign_hashes(&set(300, 300, 0)).unwrap();
        for k in ["a", "b", "c"] {
            lsh.insert(k, &s).unwrap();
        }
        assert!(lsh.remove(&"b"));
        assert!(!lsh.remove(&"b"));
        assert!(!lsh.contains(&"b") && lsh.contains(&"a"));
        assert_eq!(lsh.len(), 2);
        assert_eq!(lsh.query(&s).unwrap(), ["a", "c"]);
        // A removed key's number is reused, and a key can come back.
        lsh.insert("d", &s).unwrap();
        lsh.insert("b", &s).unwrap();
        assert_eq!(lsh.query(&s).unwrap(), ["a", "b", "c", "d"]);
        for k in ["a", "b", "c", "d"] {
            assert!(lsh.remove(&k));
        }
        assert!(lsh.is_empty());
        assert!(lsh.query(&s).unwrap().is_empty());
        assert!(lsh.heads.iter().all(|b| b.len == 0), "no empty bucket left");
    }

    #[test]
    fn query_order_is_sorted_whatever_the_history() {
        let h = hasher(32, 4);
        let s = h.sign_hashes(&set(100, 100, 0)).unwrap();
        let keys = [5u32, 3, 9, 1, 7];
        let mut one = MinHashLsh::with_bands(4, 8).unwrap();
        let mut two = MinHashLsh::with_bands(4, 8).unwrap();
        for &k in &keys {
            one.insert(k, &s).unwrap();
        }
        // Another order, with removals that shuffle the entry numbers.
        for &k in keys.iter().rev() {
            two.insert(k + 100, &s).unwrap();
            two.insert(k, &s).unwrap();
        }
        for &k in &keys {
            two.remove(&(k + 100));
        }
        assert_eq!(one.query(&s).unwrap(), [1, 3, 5, 7, 9]);
        assert_eq!(two.query(&s).unwrap(), one.query(&s).unwrap());
    }

    #[test]
    fn candidates_are_the_batch_indexs() {
        // 60 documents in 20 groups of near copies (J about 0.6): every pair the scan's
        // LshIndex proposes is a query result, and no other.
        let h = hasher(64, 5);
        let lsh_params = LshParams { bands: 16, rows: 4 };
        let sigs: Vec<Signature> = (0..60u64)
            .map(|d| {
                let group = d / 3;
                let own: Vec<u64> = (0..80)
                    .map(|i| fmix64(i ^ (group << 20) ^ (d << 40)))
                    .collect();
                let shared: Vec<u64> = (0..200).map(|i| fmix64(i ^ (group << 20))).collect();
                h.sign_hashes(&[shared, own].concat()).unwrap()
            })
            .collect();
        let flat: Vec<u32> = sigs.iter().flat_map(|s| s.slots().to_vec()).collect();
        let batch = LshIndex::build(&flat, 64, lsh_params).unwrap();
        let (mut want, _) = batch.candidates(usize::MAX, |a, b| Some((a, b)));
        want.sort_unstable();
        let mut lsh = MinHashLsh::with_bands(16, 4).unwrap();
        for (d, s) in sigs.iter().enumerate() {
            lsh.insert(d as u32, s).unwrap();
        }
        let mut got = Vec::new();
        for (d, s) in sigs.iter().enumerate() {
            let d = d as u32;
            got.extend(
                lsh.query(s)
                    .unwrap()
                    .into_iter()
                    .filter(|&k| k > d)
                    .map(|k| (d, k)),
            );
        }
        assert!(want.len() > 20, "{} pairs", want.len());
        assert_eq!(got, want);
    }

    /// The keys of `reference` sharing a whole band with `slots`, sorted.
    fn brute_force(
        reference: &std::collections::BTreeMap<u32, Vec<u32>>,
        slots: &[u32],
        p: LshParams,
    ) -> Vec<u32> {
        let band = |s: &[u32], b: usize| s[b * p.rows..(b + 1) * p.rows].to_vec();
        reference
            .iter()
            .filter(|(_, s)| (0..p.bands).any(|b| band(s, b) == band(slots, b)))
            .map(|(&k, _)| k)
            .collect()
    }

    #[test]
    fn inserts_batches_removes_and_queries_match_a_brute_force_reference() {
        use rand::{Rng, SeedableRng};
        use rand_chacha::ChaCha8Rng;
        let params = SketchParams {
            kind: SketchKind::Fss,
            num_perm: 12,
            seed: 7,
        };
        // Slots from a small alphabet make long chains (many signatures per bucket); from a
        // large one, many buckets, which grow the tables and stretch their probe runs.
        for (p, alphabet) in [
            (LshParams { bands: 6, rows: 2 }, 3u32),
            (LshParams { bands: 4, rows: 3 }, 1 << 20),
            (LshParams { bands: 1, rows: 1 }, 40),
        ] {
            let mut rng = ChaCha8Rng::seed_from_u64(alphabet as u64 + p.bands as u64);
            let random_sig = |rng: &mut ChaCha8Rng| {
                let slots: Vec<u32> = (0..12)
                    .map(|_| (rng.next_u64() % alphabet as u64) as u32)
                    .collect();
                Signature::from_parts(params, slots).unwrap()
            };
            let mut lsh = MinHashLsh::with_bands(p.bands, p.rows).unwrap();
            let mut reference = std::collections::BTreeMap::new();
            for step in 0..3000 {
                let key = (rng.next_u64() % 400) as u32;
                match rng.next_u64() % 10 {
                    0..4 => {
                        let s = random_sig(&mut rng);
                        let fresh = !reference.contains_key(&key);
                        assert_eq!(lsh.insert(key, &s).is_ok(), fresh, "step {step}");
                        reference.entry(key).or_insert_with(|| s.slots().to_vec());
                    }
                    4..7 => {
                        assert_eq!(lsh.remove(&key), reference.remove(&key).is_some());
                    }
                    7 => {
                        // A batch: all of it goes in, or none of it when one key is taken.
                        let batch: Vec<(u32, Signature)> = (0..rng.next_u64() % 20)
                            .map(|_| ((rng.next_u64() % 400) as u32, random_sig(&mut rng)))
                            .collect();
                        let mut keys: Vec<u32> = batch.iter().map(|(k, _)| *k).collect();
                        keys.sort_unstable();
                        keys.dedup();
                        let fresh = keys.len() == batch.len()
                            && keys.iter().all(|k| !reference.contains_key(k));
                        let before = lsh.len();
                        let result = lsh.insert_batch(batch.iter().map(|(k, s)| (*k, s)));
                        assert_eq!(result.is_ok(), fresh, "step {step}");
                        if fresh {
                            for (k, s) in &batch {
                                reference.insert(*k, s.slots().to_vec());
                            }
                        } else {
                            assert!(matches!(result, Err(Error::DuplicateKey { .. })));
                            assert_eq!(lsh.len(), before);
                        }
                    }
                    _ => {
                        let s = random_sig(&mut rng);
                        assert_eq!(
                            lsh.query(&s).unwrap(),
                            brute_force(&reference, s.slots(), p)
                        );
                    }
                }
                assert_eq!(lsh.len(), reference.len());
            }
            assert!(reference.keys().all(|k| lsh.contains(k)));
            let queries: Vec<Signature> = (0..50).map(|_| random_sig(&mut rng)).collect();
            let batch = lsh.query_batch(&queries).unwrap();
            assert_eq!(batch.len(), queries.len());
            for (s, got) in queries.iter().zip(batch.iter()) {
                assert_eq!(got, brute_force(&reference, s.slots(), p));
            }
            let keys: Vec<u32> = reference.keys().copied().collect();
            for k in keys {
                assert!(lsh.remove(&k));
            }
            assert!(lsh.heads.iter().all(|h| h.len == 0));
            assert!(lsh.query(&random_sig(&mut rng)).unwrap().is_empty());
        }
    }

    #[test]
    fn a_batch_of_other_parameters_changes_nothing() {
        let h = hasher(64, 1);
        let mut lsh = MinHashLsh::with_bands(8, 8).unwrap();
        let a = h.sign("first text").unwrap();
        lsh.insert_batch([("a".to_string(), &a)]).unwrap();
        let other = hasher(64, 2).sign("second text").unwrap();
        let b = h.sign("second text").unwrap();
        assert!(matches!(
            lsh.insert_batch([("b".to_string(), &b), ("c".to_string(), &other)]),
            Err(Error::Mismatch(_))
        ));
        assert!(matches!(
            lsh.query_batch(&[&a, &other]),
            Err(Error::Mismatch(_))
        ));
        assert_eq!(lsh.len(), 1);
        assert!(!lsh.contains("b"));
        lsh.insert_batch(Vec::<(String, &Signature)>::new())
            .unwrap();
        let batch = lsh.query_batch(&[&a, &b]).unwrap();
        assert_eq!(batch.get(0), ["a"]);
        assert!(batch.get(1).is_empty());
        assert!(
            MinHashLsh::<u8>::with_bands(8, 8)
                .unwrap()
                .query_batch(&[&a])
                .unwrap()
                .get(0)
                .is_empty()
        );
    }
}
