//! Stage 2: shingling, and hashing each shingle to 64 bits.
//!
//! Three kinds of shingle, all from the seeds:
//! - **char**: every substring of `k` characters (Unicode scalar values), white space included, so
//!   shingles that span words differ from those that do not (MMDS 3.2.1);
//! - **word**: every window of `w` consecutive words, words being Unicode words (UAX #29, so
//!   punctuation is not a word) joined by one space (the first seed's w-shingles);
//! - **stopword**: a stop word followed by the next two words (MMDS 3.2.4, the news-article
//!   shingles), which favour running prose over navigation and boilerplate.
//!
//! A shingle's hash is `xxh3_64_with_seed(shingle text as UTF-8, seed)`. A document that is not
//! empty but shorter than one shingle yields exactly one shingle, its whole text, so two short
//! documents still compare correctly; an empty document yields none.

use std::collections::HashSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;
use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::error::{Error, Result};

/// The kind of shingle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ShingleKind {
    /// Character k-shingles.
    Char,
    /// Word w-shingles.
    Word,
    /// A stop word and the two words after it.
    Stopword,
}

impl ShingleKind {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            ShingleKind::Char => "char",
            ShingleKind::Word => "word",
            ShingleKind::Stopword => "stopword",
        }
    }
}

/// How documents are cut into shingles.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShingleOptions {
    /// Which kind of shingle.
    pub kind: ShingleKind,
    /// Characters per char shingle.
    pub k: usize,
    /// Words per word shingle.
    pub w: usize,
    /// Replacement stop-word list for stopword shingles (`None`: the built-in English list).
    pub stopwords: Option<Vec<String>>,
}

impl Default for ShingleOptions {
    fn default() -> Self {
        ShingleOptions {
            kind: ShingleKind::Char,
            k: 9,
            w: 5,
            stopwords: None,
        }
    }
}

impl ShingleOptions {
    /// The size that matters for the chosen kind (k for char, w for word, 3 for stopword).
    pub fn size(&self) -> usize {
        match self.kind {
            ShingleKind::Char => self.k,
            ShingleKind::Word => self.w,
            ShingleKind::Stopword => STOPWORD_SHINGLE_WORDS,
        }
    }
}

/// A stop-word shingle is the stop word and the two words that follow it.
const STOPWORD_SHINGLE_WORDS: usize = 3;

/// A built-in English stop-word list: the most frequent function words of English prose.
pub const ENGLISH_STOPWORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// Parses a stop-word file: one word per line, `#` starts a comment, blank lines ignored.
pub fn parse_stopwords(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Cuts normalized text into shingles. Built once from [`ShingleOptions`] and shared by all
/// threads.
#[derive(Debug, Clone)]
pub struct Shingler {
    kind: ShingleKind,
    size: usize,
    stopwords: Arc<HashSet<String>>,
}

impl Shingler {
    /// Builds a shingler, checking the sizes.
    pub fn new(opts: &ShingleOptions) -> Result<Self> {
        let size = opts.size();
        if size == 0 {
            return Err(Error::InvalidConfig(format!(
                "the {} shingle size must be at least 1",
                opts.kind.name()
            )));
        }
        let stopwords: HashSet<String> = match &opts.stopwords {
            Some(list) => list.iter().map(|w| w.to_lowercase()).collect(),
            None => ENGLISH_STOPWORDS.iter().map(|w| w.to_string()).collect(),
        };
        if opts.kind == ShingleKind::Stopword && stopwords.is_empty() {
            return Err(Error::InvalidConfig("the stop-word list is empty".into()));
        }
        Ok(Shingler {
            kind: opts.kind,
            size,
            stopwords: Arc::new(stopwords),
        })
    }

    /// Appends the 64-bit hash of every shingle of `text` to `out`, in document order. A shingle
    /// that occurs twice is hashed twice: MinHash takes minima, so repeats cost a little time
    /// but never change a signature, and skipping the dedup saves a sort per document.
    pub fn hashes_into(&self, text: &str, seed: u64, out: &mut Vec<u64>) {
        if text.is_empty() {
            return;
        }
        let before = out.len();
        match self.kind {
            ShingleKind::Char => char_hashes(text, self.size, seed, out),
            ShingleKind::Word | ShingleKind::Stopword => {
                let mut joined = String::new();
                self.for_each_word_shingle(text, &mut joined, |s| {
                    out.push(xxh3_64_with_seed(s.as_bytes(), seed))
                });
            }
        }
        if out.len() == before {
            // Shorter than one shingle: the whole text is the document's one shingle.
            out.push(xxh3_64_with_seed(text.as_bytes(), seed));
        }
    }

    /// The document's shingle set as sorted, distinct hashes: what exact Jaccard compares.
    pub fn hash_set(&self, text: &str, seed: u64) -> Vec<u64> {
        let mut v = Vec::new();
        self.hashes_into(text, seed, &mut v);
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The document's shingles as text, distinct, in order of first appearance. Slower than
    /// hashing; meant for explaining results and for tests.
    pub fn shingles(&self, text: &str) -> Vec<String> {
        let mut all = Vec::new();
        if text.is_empty() {
            return all;
        }
        match self.kind {
            ShingleKind::Char => {
                let idx: Vec<usize> = text
                    .char_indices()
                    .map(|(i, _)| i)
                    .chain([text.len()])
                    .collect();
                for win in idx.windows(self.size.saturating_add(1)) {
                    all.push(text[win[0]..win[self.size]].to_string());
                }
            }
            ShingleKind::Word | ShingleKind::Stopword => {
                let mut joined = String::new();
                self.for_each_word_shingle(text, &mut joined, |s| all.push(s.to_string()));
            }
        }
        if all.is_empty() {
            all.push(text.to_string());
        }
        let mut seen = HashSet::new();
        all.retain(|s| seen.insert(s.clone()));
        all
    }

    fn is_stopword(&self, word: &str) -> bool {
        if word.chars().any(char::is_uppercase) {
            self.stopwords.contains(&word.to_lowercase())
        } else {
            self.stopwords.contains(word)
        }
    }

    /// Calls `f` with each word shingle, joined by single spaces in `buf`.
    fn for_each_word_shingle(&self, text: &str, buf: &mut String, mut f: impl FnMut(&str)) {
        let words: Vec<&str> = text.unicode_words().collect();
        let n = self.size;
        let mut emit = |ws: &[&str]| {
            buf.clear();
            for (i, w) in ws.iter().enumerate() {
                if i > 0 {
                    buf.push(' ');
                }
                buf.push_str(w);
            }
            f(buf);
        };
        match self.kind {
            ShingleKind::Word => {
                for win in words.windows(n) {
                    emit(win);
                }
            }
            ShingleKind::Stopword => {
                for i in 0..words.len().saturating_sub(n - 1) {
                    if self.is_stopword(words[i]) {
                        emit(&words[i..i + n]);
                    }
                }
            }
            ShingleKind::Char => unreachable!("char shingles are not word shingles"),
        }
    }
}

/// Hashes every window of `k` characters. ASCII text (the common case) windows bytes directly;
/// other text keeps a ring of the last `k + 1` character boundaries.
fn char_hashes(text: &str, k: usize, seed: u64, out: &mut Vec<u64>) {
    let bytes = text.as_bytes();
    if text.is_ascii() {
        if bytes.len() >= k {
            out.reserve(bytes.len() - k + 1);
            out.extend(bytes.windows(k).map(|w| xxh3_64_with_seed(w, seed)));
        }
        return;
    }
    // Fewer bytes than k means fewer characters than k: no full window. Checking first also
    // bounds the ring by the text's size, so a huge -k cannot allocate (or overflow) its way
    // to an abort.
    if bytes.len() < k {
        return;
    }
    let mut ring = vec![0usize; k + 1];
    for (count, (i, _)) in text.char_indices().chain([(bytes.len(), ' ')]).enumerate() {
        ring[count % (k + 1)] = i;
        if count >= k {
            let start = ring[(count - k) % (k + 1)];
            out.push(xxh3_64_with_seed(&bytes[start..i], seed));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shingler(kind: ShingleKind, size: usize) -> Shingler {
        Shingler::new(&ShingleOptions {
            kind,
            k: size,
            w: size,
            stopwords: None,
        })
        .unwrap()
    }

    #[test]
    fn mmds_example_3_3_two_shingles_of_abcdabd() {
        let s = shingler(ShingleKind::Char, 2);
        assert_eq!(s.shingles("abcdabd"), ["ab", "bc", "cd", "da", "bd"]);
        assert_eq!(s.hash_set("abcdabd", 0).len(), 5);
    }

    #[test]
    fn first_seed_four_word_shingles() {
        let s = shingler(ShingleKind::Word, 4);
        assert_eq!(
            s.shingles("to be or not to be, that is the question"),
            [
                "to be or not",
                "be or not to",
                "or not to be",
                "not to be that",
                "to be that is",
                "be that is the",
                "that is the question"
            ]
        );
    }

    #[test]
    fn a_rose_is_a_rose_has_three_distinct_four_shingles() {
        let s = shingler(ShingleKind::Word, 4);
        assert_eq!(
            s.shingles("a rose is a rose is a rose"),
            ["a rose is a", "rose is a rose", "is a rose is"]
        );
        assert_eq!(s.hash_set("a rose is a rose is a rose", 7).len(), 3);
    }

    #[test]
    fn stopword_shingles_start_at_stop_words() {
        let s = shingler(ShingleKind::Stopword, 3);
        assert_eq!(s.shingles("a rose is a rose"), ["a rose is", "is a rose"]);
        let custom = Shingler::new(&ShingleOptions {
            kind: ShingleKind::Stopword,
            stopwords: Some(vec!["rose".into()]),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(custom.shingles("a rose is a rose"), ["rose is a"]);
    }

    #[test]
    fn char_shingles_count_unicode_scalars_not_bytes() {
        let s = shingler(ShingleKind::Char, 2);
        assert_eq!(s.shingles("héé"), ["hé", "éé"]);
        let mut hashes = Vec::new();
        s.hashes_into("héé", 1, &mut hashes);
        assert_eq!(hashes.len(), 2);
        assert_eq!(hashes[0], xxh3_64_with_seed("hé".as_bytes(), 1));
    }

    #[test]
    fn hashes_and_strings_agree() {
        for (kind, size, text) in [
            (
                ShingleKind::Char,
                9,
                "the quick brown fox jumps over the lazy dog",
            ),
            (ShingleKind::Char, 3, "ünïcödé text here"),
            (ShingleKind::Word, 2, "jack london travelled to oakland"),
            (
                ShingleKind::Stopword,
                3,
                "the cat sat on the mat by the door",
            ),
        ] {
            let s = shingler(kind, size);
            let mut from_strings: Vec<u64> = s
                .shingles(text)
                .iter()
                .map(|x| xxh3_64_with_seed(x.as_bytes(), 42))
                .collect();
            from_strings.sort_unstable();
            assert_eq!(s.hash_set(text, 42), from_strings, "{kind:?} {text}");
        }
    }

    #[test]
    fn short_documents_give_one_shingle_and_empty_ones_none() {
        let s = shingler(ShingleKind::Char, 9);
        assert_eq!(s.shingles("short"), ["short"]);
        assert_eq!(s.hash_set("short", 0).len(), 1);
        assert!(s.hash_set("", 0).is_empty());
        let w = shingler(ShingleKind::Word, 5);
        assert_eq!(w.shingles("two words"), ["two words"]);
        let sw = shingler(ShingleKind::Stopword, 3);
        assert_eq!(sw.shingles("no stopwords here"), ["no stopwords here"]);
    }

    #[test]
    fn huge_k_on_non_ascii_text_is_one_shingle() {
        let s = shingler(ShingleKind::Char, usize::MAX);
        assert_eq!(
            s.hash_set("café", 0),
            [xxh3_64_with_seed("café".as_bytes(), 0)]
        );
        assert_eq!(s.shingles("café"), ["café"]);
        let s = shingler(ShingleKind::Char, 1 << 40);
        assert_eq!(s.hash_set("naïve text", 0).len(), 1);
    }

    #[test]
    fn zero_size_is_rejected() {
        let e = Shingler::new(&ShingleOptions {
            k: 0,
            ..Default::default()
        });
        assert!(e.unwrap_err().to_string().contains("at least 1"));
    }

    #[test]
    fn parse_stopwords_skips_comments_and_blanks() {
        assert_eq!(
            parse_stopwords("# list\nThe\n\n and # conj\n"),
            ["the", "and"]
        );
    }
}
