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

use rustc_hash::FxHashMap;
use std::fmt::Debug;
use std::hash::Hash;

use crate::candidates::lsh::{LshParams, band_hash};
use crate::candidates::tune::{Weights, tune};
use crate::error::{Error, Param, Result};
use crate::sketch::minhash::{MAX_NUM_PERM, SketchParams};
use crate::sketch::signature::{Signature, ensure_same_params};

/// An in-memory banded LSH index from keys to [`Signature`]s.
///
/// Keys are generic, so that a caller keys documents by what it already has (a `u64` row id, a
/// `String` URL, a `PathBuf`) without converting. The bounds say what the index does with them:
/// `Eq + Hash` to find a key's entry for [`remove`](Self::remove) and
/// [`contains`](Self::contains), `Ord` so that [`query`](Self::query) returns its candidates
/// sorted, the same order whatever the order of insertions and removals, `Clone` to hand keys
/// back from a query, `Debug` to name a key refused as a duplicate. Each key is stored once;
/// the buckets hold small integers.
///
/// Every signature must have the same parameters: the first one inserted fixes them (and
/// [`new`](Self::new) fixes `num_perm`); a signature of other parameters is refused with
/// [`Error::Mismatch`], by [`insert`](Self::insert) and [`query`](Self::query) alike.
#[derive(Debug, Clone)]
pub struct MinHashLsh<K> {
    lsh: LshParams,
    /// The width given to [`new`](Self::new), before any signature fixes `sketch`.
    num_perm: Option<usize>,
    /// The parameters of the first signature inserted.
    sketch: Option<SketchParams>,
    /// Entries by number; `None` for a removed one, whose number is in `free`.
    entries: Vec<Option<Entry<K>>>,
    free: Vec<u32>,
    numbers: HashMap<K, u32>,
    /// For each band, the entries by band hash. The band hashes are already uniform 64-bit
    /// values: Fx hashing them is enough, and SipHash would cost more than the rest of a query.
    buckets: Vec<FxHashMap<u64, Vec<u32>>>,
}

#[derive(Debug, Clone)]
struct Entry<K> {
    key: K,
    /// The band hashes of its signature, to find its buckets again on removal.
    bands: Box<[u64]>,
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
            entries: Vec::new(),
            free: Vec::new(),
            numbers: HashMap::new(),
            buckets: vec![FxHashMap::default(); lsh.bands],
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
        if self.numbers.contains_key(&key) {
            return Err(Error::DuplicateKey {
                key: format!("{key:?}"),
            });
        }
        let number = match self.free.pop() {
            Some(n) => n,
            None => u32::try_from(self.entries.len())
                .map_err(|_| crate::invalid!["an LSH index holds at most 2^32 keys"])?,
        };
        let bands = self.band_hashes(signature);
        for (bucket, &h) in self.buckets.iter_mut().zip(bands.iter()) {
            bucket.entry(h).or_default().push(number);
        }
        let entry = Some(Entry {
            key: key.clone(),
            bands,
        });
        match self.entries.get_mut(number as usize) {
            Some(slot) => *slot = entry,
            None => self.entries.push(entry),
        }
        self.numbers.insert(key, number);
        self.sketch = Some(signature.params());
        Ok(())
    }

    /// The keys whose signatures share at least one band with `signature`, sorted, each once
    /// (a key indexed with this very signature among them). [`Error::Mismatch`] when the
    /// signature's parameters differ from the index's.
    pub fn query(&self, signature: &Signature) -> Result<Vec<K>> {
        self.check(signature)?;
        if self.is_empty() {
            return Ok(Vec::new());
        }
        let mut found: Vec<u32> = Vec::new();
        for (bucket, h) in self.buckets.iter().zip(self.band_hashes(signature)) {
            if let Some(members) = bucket.get(&h) {
                found.extend_from_slice(members);
            }
        }
        found.sort_unstable();
        found.dedup();
        let mut keys: Vec<K> = found
            .into_iter()
            .map(|n| self.entry(n).key.clone())
            .collect();
        keys.sort_unstable();
        Ok(keys)
    }

    /// Removes `key` (or a borrowed form of it); false when it was not indexed.
    pub fn remove<Q: Hash + Eq + ?Sized>(&mut self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        let Some(number) = self.numbers.remove(key) else {
            return false;
        };
        let entry = self.entries[number as usize]
            .take()
            .expect("an indexed key has an entry");
        for (bucket, h) in self.buckets.iter_mut().zip(entry.bands.iter()) {
            let members = bucket.get_mut(h).expect("an entry is in its buckets");
            let at = members
                .iter()
                .position(|&m| m == number)
                .expect("an entry is in its buckets");
            members.swap_remove(at);
            if members.is_empty() {
                bucket.remove(h);
            }
        }
        self.free.push(number);
        true
    }

    fn entry(&self, number: u32) -> &Entry<K> {
        self.entries[number as usize]
            .as_ref()
            .expect("buckets hold only live entries")
    }

    /// Checks `signature` against the index's parameters (or, before the first insertion,
    /// against the width and banding).
    fn check(&self, signature: &Signature) -> Result<()> {
        if let Some(p) = self.sketch {
            return ensure_same_params(p, signature.params());
        }
        let n = signature.num_perm();
        match self.num_perm {
            Some(m) if m != n => Err(Error::Mismatch(format!("num-perm {m} vs {n}"))),
            _ => self.lsh.validate(n),
        }
    }

    fn band_hashes(&self, signature: &Signature) -> Box<[u64]> {
        signature
            .slots()
            .chunks_exact(self.lsh.rows)
            .take(self.lsh.bands)
            .map(band_hash)
            .collect()
    }
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
        assert!(
            lsh.buckets.iter().all(|b| b.is_empty()),
            "no empty bucket left"
        );
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
}
