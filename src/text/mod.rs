//! Text to sets: normalization, `ndup:ignore` markers, and shingles hashed to 64 bits.

pub(crate) mod markers;
pub mod normalize;
pub mod shingle;

/// The version of the text rules: how a document's text becomes shingles, beyond what the
/// options name ([`normalize::NormalizeOptions`], [`shingle::ShingleOptions`]). Signatures made
/// under different rules do not compare, so the index and signature shards record the version
/// (`text_rules` in their parameters) and are refused by an ndup of other rules.
///
/// - 1 (not recorded; an index or shards without it): each character lowercased on its own, a
///   leading byte-order mark read as text, and a word or stop-word document too short for a
///   shingle (or, for stop-word shingles, without a stop word) one shingle of its whole text,
///   punctuation included.
/// - 2: Unicode full case folding ([`normalize`]); a leading byte-order mark dropped
///   ([`prepare_into`]); such a document's one shingle made of its words, and a stop-word
///   document without a stop-word shingle shingled by its word 3-shingles ([`shingle`]).
pub const TEXT_RULES: u32 = 2;

/// `text` without a leading UTF-8 byte-order mark. Why: editors on some systems start files with
/// one, and it is not text: a JSON-lines record, an ignore rule or a stop word that began with it
/// would be misread, and a document that began with it would differ from its copy without one.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// [`strip_bom`] for bytes not yet decoded.
pub fn strip_bom_bytes(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes)
}

/// A document's text as every stage compares it: a leading byte-order mark dropped (see
/// [`strip_bom`]: a copy of a file saved with one is the same text), its `ndup:ignore` regions
/// left out, then normalized into `out`. Scans, dedup's exact-duplicate hashes, exact
/// verification, the index, [`MinHasher`](crate::MinHasher) and `ndup compare` all prepare text
/// here, so they agree on what a document says.
pub(crate) fn prepare_into(text: &str, opts: &normalize::NormalizeOptions, out: &mut String) {
    normalize::normalize_into(&markers::strip_ignored(strip_bom(text)), opts, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use normalize::NormalizeOptions;

    /// A leading byte-order mark is not text, whatever the normalization; one elsewhere is.
    #[test]
    fn documents_are_prepared_without_a_leading_byte_order_mark() {
        let prepared = |t: &str, o: &NormalizeOptions| {
            let mut out = String::new();
            prepare_into(t, o, &mut out);
            out
        };
        for o in [NormalizeOptions::default(), NormalizeOptions::none()] {
            assert_eq!(prepared("\u{feff}OK\n", &o), prepared("OK\n", &o), "{o:?}");
            assert_eq!(prepared("\u{feff}", &o), "", "{o:?}");
            assert_eq!(
                prepared("\u{feff}a\nndup:ignore-start\nb\nndup:ignore-end\nc", &o),
                prepared("a\nc", &o)
            );
            assert!(prepared("a\u{feff}b", &o).contains('\u{feff}'), "{o:?}");
        }
        // Only one mark is dropped: a second is text.
        assert_eq!(
            prepared("\u{feff}\u{feff}ok", &NormalizeOptions::none()),
            "\u{feff}ok"
        );
    }
}
