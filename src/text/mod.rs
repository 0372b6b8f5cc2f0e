//! Text to sets: normalization, `ndup:ignore` markers, and shingles hashed to 64 bits.

pub(crate) mod markers;
pub mod normalize;
pub mod shingle;

/// A document's text as every stage compares it: its `ndup:ignore` regions left out, then
/// normalized into `out`. Scans, the index, [`MinHasher`](crate::MinHasher) and `ndup compare`
/// all prepare text here, so they agree on what a document says.
pub(crate) fn prepare_into(text: &str, opts: &normalize::NormalizeOptions, out: &mut String) {
    normalize::normalize_into(&markers::strip_ignored(text), opts, out);
}
