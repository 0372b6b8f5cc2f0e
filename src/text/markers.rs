//! `ndup:ignore-start` / `ndup:ignore-end`: regions of a document left out of the comparison.
//!
//! A line containing `ndup:ignore-start` (in whatever comment syntax the file uses:
//! `<!-- ndup:ignore-start -->`, `# ndup:ignore-start`) opens a region and a line containing
//! `ndup:ignore-end` closes it; both marker lines and everything between them are removed before
//! normalization, so a licence header or a generated table shared by many documents does not make
//! them near-duplicates. A region left open runs to the end of the document; regions do not nest
//! (a start inside a region changes nothing). A document without markers is not copied.

use std::borrow::Cow;

/// Opens an ignored region.
pub(crate) const IGNORE_START: &str = "ndup:ignore-start";
/// Closes an ignored region.
pub(crate) const IGNORE_END: &str = "ndup:ignore-end";

/// `text` without its ignored regions (borrowed when it has no marker).
pub(crate) fn strip_ignored(text: &str) -> Cow<'_, str> {
    // One SIMD scan for the common prefix decides the common case: no marker at all.
    if memchr::memmem::find(text.as_bytes(), b"ndup:ignore-").is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        if line.contains(IGNORE_START) {
            inside = true;
        } else if line.contains(IGNORE_END) {
            inside = false;
        } else if !inside {
            out.push_str(line);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_and_marker_lines_are_removed() {
        let t = "keep 1\n<!-- ndup:ignore-start -->\ndrop\n# ndup:ignore-start\ndrop\n\
                 <!-- ndup:ignore-end -->\nkeep 2\nndup:ignore-end stray\nkeep 3";
        assert_eq!(strip_ignored(t), "keep 1\nkeep 2\nkeep 3");
        assert_eq!(strip_ignored("a\nndup:ignore-start\nb\nc"), "a\n");
        assert!(matches!(strip_ignored("plain text"), Cow::Borrowed(_)));
        assert!(matches!(strip_ignored("ndup:ignore-x"), Cow::Owned(_)));
    }
}
