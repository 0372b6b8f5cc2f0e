//! Documents already in memory: a caller's own texts (a Python list, the string column of an
//! Arrow table), each with its id.
//!
//! [`Texts`] is a trait rather than a vector so that a caller keeps its texts where they are:
//! a column of an Arrow table is read in place, with no copy. The documents are read by the
//! same loop as files and records, and exact verification reads a text again by asking the
//! [`Texts`] once more (see [`Origin::Text`](crate::source::Origin::Text)), so nothing is
//! copied to be kept either.
//!
//! ```
//! use ndup::source::texts::SharedTexts;
//! let texts = SharedTexts::new(vec![
//!     ("a".to_string(), "The quick brown fox jumps over the lazy dog".to_string()),
//!     ("b".to_string(), "the quick brown fox jumps over the lazy dog!".to_string()),
//! ]);
//! let report = ndup::scan(ndup::ScanConfig::default(), &ndup::Source::Texts(texts))?;
//! assert_eq!((report.id(report.pairs[0].a), report.id(report.pairs[0].b)), ("a", "b"));
//! # Ok::<(), ndup::Error>(())
//! ```

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// Documents held in memory, by position `0..len()`.
///
/// A scan names each document by its [`id`](Self::id) and, as it does for JSON-lines records,
/// skips a second document with an id already used (deduplication does not: it knows documents
/// by position). A document without text ([`text`](Self::text) is `None`, a null in a column)
/// is skipped as malformed, as a record without its text field is.
pub trait Texts: Send + Sync + fmt::Debug {
    /// Number of documents.
    fn len(&self) -> usize;

    /// True when there is no document.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The id of document `i` (`i < len()`).
    fn id(&self, i: usize) -> Cow<'_, str>;

    /// The text of document `i` (`i < len()`), `None` when it has none. It must be the same
    /// each time it is asked for: exact verification reads it again.
    fn text(&self, i: usize) -> Option<&str>;
}

/// `(id, text)` pairs.
impl Texts for Vec<(String, String)> {
    fn len(&self) -> usize {
        self.as_slice().len()
    }

    fn id(&self, i: usize) -> Cow<'_, str> {
        Cow::Borrowed(&self[i].0)
    }

    fn text(&self, i: usize) -> Option<&str> {
        Some(&self[i].1)
    }
}

/// `(id, text)` pairs where a text may be missing (a null in a column, `None` from Python).
impl Texts for Vec<(String, Option<String>)> {
    fn len(&self) -> usize {
        self.as_slice().len()
    }

    fn id(&self, i: usize) -> Cow<'_, str> {
        Cow::Borrowed(&self[i].0)
    }

    fn text(&self, i: usize) -> Option<&str> {
        self[i].1.as_deref()
    }
}

/// A shared handle to [`Texts`]: what a [`Source::Texts`](crate::source::Source::Texts) holds,
/// and what each document's [`Origin`](crate::source::Origin) keeps to read its text again.
/// Cloning it clones the handle, not the texts; two handles are equal when they share the texts.
#[derive(Clone)]
pub struct SharedTexts(Arc<dyn Texts>);

impl SharedTexts {
    /// Shares `texts`.
    pub fn new(texts: impl Texts + 'static) -> Self {
        SharedTexts(Arc::new(texts))
    }

    /// Shares texts already behind an [`Arc`].
    pub fn from_arc(texts: Arc<dyn Texts>) -> Self {
        SharedTexts(texts)
    }
}

impl Deref for SharedTexts {
    type Target = dyn Texts;

    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl PartialEq for SharedTexts {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::addr_eq(Arc::as_ptr(&self.0), Arc::as_ptr(&other.0))
    }
}

impl Eq for SharedTexts {}

/// The number of texts only: a report's every document holds a handle, and printing the texts
/// with each would bury everything else.
impl fmt::Debug for SharedTexts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SharedTexts({} texts)", self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_share_and_compare_by_identity() {
        let pairs = vec![("x".to_string(), "some text".to_string())];
        let a = SharedTexts::new(pairs.clone());
        let b = a.clone();
        let c = SharedTexts::new(pairs);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(
            (a.len(), a.id(0), a.text(0)),
            (1, "x".into(), Some("some text"))
        );
        assert!(!a.is_empty());
        assert_eq!(format!("{a:?}"), "SharedTexts(1 texts)");
    }
}
