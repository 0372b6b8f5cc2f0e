//! Text to sets: normalization, `ndup:ignore` markers, and shingles hashed to 64 bits.

pub(crate) mod markers;
pub mod normalize;
pub mod shingle;

/// `text` without a leading UTF-8 byte-order mark. Why: editors on some systems start files with
/// one, and it is not text: a JSON-lines record, an ignore rule or a stop word that began with it
/// would be misread.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// [`strip_bom`] for bytes not yet decoded.
pub fn strip_bom_bytes(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes)
}

/// A document's text as every stage compares it: its `ndup:ignore` regions left out, then
/// normalized into `out`. Scans, the index, [`MinHasher`](crate::MinHasher) and `ndup compare`
/// all prepare text here, so they agree on what a document says.
pub(crate) fn prepare_into(text: &str, opts: &normalize::NormalizeOptions, out: &mut String) {
    normalize::normalize_into(&markers::strip_ignored(text), opts, out);
}
