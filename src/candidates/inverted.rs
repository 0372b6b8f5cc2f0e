//! An inverted index from sampled hash (or supershingle) to documents: the candidates of the
//! sample sketches.

use std::collections::HashMap;

use rayon::prelude::*;

use crate::sketch::sample::Flat;

/// An inverted index from key (sampled hash or supershingle) to the documents that have it.
pub(crate) struct InvertedIndex {
    /// `(key, document)`, sorted.
    entries: Vec<(u64, u32)>,
}

impl InvertedIndex {
    /// Indexes the keys of every document.
    pub fn build(keys: &Flat) -> InvertedIndex {
        let mut entries: Vec<(u64, u32)> = (0..keys.len())
            .flat_map(|d| keys.get(d).iter().map(move |&k| (k, d as u32)))
            .collect();
        entries.par_sort_unstable();
        InvertedIndex { entries }
    }

    /// The documents that have `key`, in increasing order.
    pub fn postings(&self, key: u64) -> impl ExactSizeIterator<Item = u32> + '_ {
        let lo = self.entries.partition_point(|&(k, _)| k < key);
        let hi = lo + self.entries[lo..].partition_point(|&(k, _)| k == key);
        self.entries[lo..hi].iter().map(|&(_, d)| d)
    }

    /// The candidates of document `a` among the documents after it: each with the number of its
    /// keys that `a` shares, counted over postings of at most `max_bucket` documents. A larger
    /// posting list (boilerplate, thousands of copies) is linked as a star around its first
    /// document, as LSH buckets are, so its cost stays linear. Also returns whether `a` met such
    /// a list, in which case the counts are only lower bounds. Sorted by document.
    pub(crate) fn candidates_of(
        &self,
        a: u32,
        keys: &[u64],
        max_bucket: usize,
    ) -> (Vec<(u32, u32)>, bool) {
        let mut counts: HashMap<u32, u32> = HashMap::new();
        let mut oversized = false;
        for &k in keys {
            let mut list = self.postings(k);
            if list.len() > max_bucket {
                oversized = true;
                if list.next() == Some(a) {
                    for d in list {
                        counts.entry(d).or_insert(0);
                    }
                }
                continue;
            }
            for d in list.filter(|&d| d > a) {
                *counts.entry(d).or_insert(0) += 1;
            }
        }
        let mut out: Vec<(u32, u32)> = counts.into_iter().collect();
        out.sort_unstable();
        (out, oversized)
    }

    /// Number of posting lists longer than `max_bucket`.
    pub(crate) fn oversized(&self, max_bucket: usize) -> u64 {
        self.entries
            .chunk_by(|x, y| x.0 == y.0)
            .filter(|c| c.len() > max_bucket)
            .count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverted_index_counts_shared_keys_and_stars_big_lists() {
        let mut keys = Flat::default();
        keys.push(&[1, 2, 3]); // doc 0
        keys.push(&[2, 3, 4]); // doc 1
        keys.push(&[3, 9]); // doc 2
        keys.push(&[7]); // doc 3
        let idx = InvertedIndex::build(&keys);
        assert_eq!(idx.postings(3).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(
            idx.candidates_of(0, keys.get(0), 10),
            (vec![(1, 2), (2, 1)], false)
        );
        assert_eq!(idx.candidates_of(1, keys.get(1), 10), (vec![(2, 1)], false));
        assert!(idx.candidates_of(3, keys.get(3), 10).0.is_empty());
        // With lists of at most 2, key 3 (3 documents) becomes a star around document 0.
        assert_eq!(
            idx.candidates_of(0, keys.get(0), 2),
            (vec![(1, 1), (2, 0)], true)
        );
        assert_eq!(idx.candidates_of(1, keys.get(1), 2), (vec![], true));
        assert_eq!(idx.oversized(2), 1);
    }
}
