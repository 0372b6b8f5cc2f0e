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
use crate::normalize::first_non_ascii;

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
        self.hash_blocks(text, seed, out, usize::MAX, |_| {});
    }

    /// Like [`hashes_into`](Self::hashes_into), but hands the hashes over in blocks: whenever
    /// `buf` holds `block` hashes or more, `f(buf)` is called and `buf` cleared; the last partial
    /// block is left in `buf` for the caller. With a block that fits in the L1 cache (about a
    /// thousand hashes), a consumer such as [`Signer::absorb`](crate::minhash::Signer::absorb)
    /// reads hashes that were just written, instead of a document-sized array from memory.
    /// Returns how many hashes were produced in all.
    pub fn hash_blocks(
        &self,
        text: &str,
        seed: u64,
        buf: &mut Vec<u64>,
        block: usize,
        mut f: impl FnMut(&[u64]),
    ) -> usize {
        if text.is_empty() {
            return 0;
        }
        let mut sink = Blocks {
            buf,
            block: block.max(1),
            flushed: 0,
            start: 0,
            f: &mut f,
        };
        sink.start = sink.buf.len();
        match self.kind {
            ShingleKind::Char => char_hashes(text, self.size, seed, &mut sink),
            ShingleKind::Word | ShingleKind::Stopword => {
                let mut joined = String::new();
                self.for_each_word_shingle(text, &mut joined, |s| {
                    sink.push(xxh3_64_with_seed(s.as_bytes(), seed))
                });
            }
        }
        if sink.produced() == 0 {
            // Shorter than one shingle: the whole text is the document's one shingle.
            sink.push(xxh3_64_with_seed(text.as_bytes(), seed));
        }
        sink.produced()
    }

    /// The document's shingle set as sorted, distinct hashes: what exact Jaccard compares.
    pub fn hash_set(&self, text: &str, seed: u64) -> Vec<u64> {
        self.hash_set_with(text, seed, &mut SetScratch::default())
    }

    /// [`hash_set`](Self::hash_set) with working buffers kept between documents. Why: exact
    /// verification builds thousands of sets, and growing, sorting and shrinking fresh vectors
    /// for each faulted in several times more memory than the sets themselves. Here the only
    /// new allocation is the returned set, at its exact size.
    pub fn hash_set_with(&self, text: &str, seed: u64, scratch: &mut SetScratch) -> Vec<u64> {
        self.hash_set_in(text, seed, scratch).to_vec()
    }

    /// [`hash_set`](Self::hash_set), left in `scratch`'s buffers, for a caller that stores it
    /// somewhere of its own.
    pub fn hash_set_in<'s>(&self, text: &str, seed: u64, scratch: &'s mut SetScratch) -> &'s [u64] {
        let SetScratch { hashes, tmp } = scratch;
        hashes.clear();
        self.hashes_into(text, seed, hashes);
        sort_hashes(hashes, tmp);
        let distinct = dedup_sorted(hashes);
        &hashes[..distinct]
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

/// Working buffers for [`Shingler::hash_set_with`], reused from one document to the next.
#[derive(Debug, Default)]
pub struct SetScratch {
    hashes: Vec<u64>,
    /// The sort's working space.
    tmp: Vec<u64>,
}

impl SetScratch {
    /// Frees the buffers when a large document grew them past `max_bytes` each, so that a
    /// thread does not keep its largest document's shingles to the end of the run.
    pub fn release_large(&mut self, max_bytes: usize) {
        release_large(&mut self.hashes, max_bytes);
        release_large(&mut self.tmp, max_bytes);
    }
}

/// Replaces `v` with an empty vector when its buffer is over `max_bytes`.
pub(crate) fn release_large<T>(v: &mut Vec<T>, max_bytes: usize) {
    if v.capacity() * std::mem::size_of::<T>() > max_bytes {
        *v = Vec::new();
    }
}

/// Sorts hashes, with `tmp` as working space (the two may trade buffers). They are uniform
/// 64-bit values, so one stable counting pass on their top `log2 n` bits puts each within a
/// step or two of its place (a bucket holds one hash on average), and one insertion pass, whose
/// branch is nearly always "already in order", finishes the job. This is about half the time
/// of bucketing sixteen to a bucket and sorting each bucket with comparisons, whose branches
/// mispredict in every bucket, and a little faster than two counting passes. Any input is
/// sorted correctly: when the insertion pass finds far more disorder than uniform hashes
/// leave, the rest is sorted with `sort_unstable`.
///
/// Above [`SORT_ONE_PASS_MAX`] hashes a first pass splits them on their top
/// [`SORT_SPLIT_BITS`] bits, and each part gets its own counting pass. Why: one pass over a
/// large document scatters its hashes across megabytes, and every write misses the cache;
/// a thousand parts are written sequentially, and each part's counting pass stays within L2.
/// The stage bench `verify/exact-shingle-set-2m` (hash, sort and dedup a 2 MiB document):
/// 25.6 -> 45.9 MiB/s; below 2^18 hashes the one pass is as fast or faster.
fn sort_hashes(v: &mut Vec<u64>, tmp: &mut Vec<u64>) {
    let n = v.len();
    if n < 64 {
        v.sort_unstable();
        return;
    }
    // Every element of `tmp` is written below: no need to zero it first.
    if tmp.len() < n {
        tmp.resize(n, 0);
    }
    tmp.truncate(n);
    let mut counts = Vec::new();
    if n <= SORT_ONE_PASS_MAX {
        let bits = log2_ceil(n);
        counting_pass(v, tmp, 64 - bits, bits, &mut counts);
        std::mem::swap(v, tmp);
    } else {
        counting_pass(v, tmp, 64 - SORT_SPLIT_BITS, SORT_SPLIT_BITS, &mut counts);
        // After the pass each counter holds where its part ends.
        let ends = counts.clone();
        let mut start = 0;
        for end in ends {
            let end = end as usize;
            let bits = log2_ceil(end - start);
            let shift = 64 - SORT_SPLIT_BITS - bits;
            counting_pass(
                &tmp[start..end],
                &mut v[start..end],
                shift,
                bits,
                &mut counts,
            );
            start = end;
        }
    }
    // Uniform hashes need about n / 4 moves here in all.
    let mut budget = 4 * n;
    for i in 1..n {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1] > x {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
        budget = budget.saturating_sub(i - j);
        if budget == 0 {
            v.sort_unstable();
            return;
        }
    }
}

/// The most hashes [`sort_hashes`] sorts with one counting pass.
const SORT_ONE_PASS_MAX: usize = 1 << 18;
/// The bits of the first pass for larger inputs: 1,024 parts.
const SORT_SPLIT_BITS: u32 = 10;

/// The bits of a counting pass over `n` hashes: about one hash a bucket, at least 16 buckets
/// and at most 2^20 (4 MiB of counters).
fn log2_ceil(n: usize) -> u32 {
    (usize::BITS - n.leading_zeros()).clamp(4, 20)
}

/// One stable counting pass of `src` into `dst` on the `bits` bits of each hash from `shift`
/// up, with `counts` as the counters (on return, each holds where its bucket ends).
fn counting_pass(src: &[u64], dst: &mut [u64], shift: u32, bits: u32, counts: &mut Vec<u32>) {
    let mask = (1u64 << bits) - 1;
    let key = |h: u64| ((h >> shift) & mask) as usize;
    counts.clear();
    counts.resize(1 << bits, 0);
    for &h in src {
        counts[key(h)] += 1;
    }
    let mut sum = 0;
    for c in counts.iter_mut() {
        (*c, sum) = (sum, sum + *c);
    }
    for &h in src {
        let slot = &mut counts[key(h)];
        dst[*slot as usize] = h;
        *slot += 1;
    }
}

/// Moves the distinct values of the sorted `v` to its front and returns how many there are.
/// Branch-free: a third of a document's shingles are repeats, in no predictable pattern.
fn dedup_sorted(v: &mut [u64]) -> usize {
    let Some(&first) = v.first() else {
        return 0;
    };
    let (mut len, mut last) = (1, first);
    for i in 1..v.len() {
        let x = v[i];
        v[len] = x;
        len += usize::from(x != last);
        last = x;
    }
    len
}

/// Where shingle hashes go: a buffer handed to a consumer each time it holds a block.
struct Blocks<'a, F: FnMut(&[u64])> {
    buf: &'a mut Vec<u64>,
    block: usize,
    /// Hashes already handed over.
    flushed: usize,
    /// What `buf` held before this document (kept, not counted).
    start: usize,
    f: &'a mut F,
}

impl<F: FnMut(&[u64])> Blocks<'_, F> {
    #[inline(always)]
    fn push(&mut self, h: u64) {
        self.buf.push(h);
        self.check();
    }

    /// Room left in the current block (at least one).
    #[inline(always)]
    fn room(&self) -> usize {
        self.block.saturating_sub(self.buf.len()).max(1)
    }

    #[inline(always)]
    fn check(&mut self) {
        if self.buf.len() >= self.block {
            (self.f)(self.buf);
            self.flushed += self.buf.len() - self.start;
            self.buf.clear();
            self.start = 0;
        }
    }

    fn produced(&self) -> usize {
        self.flushed + self.buf.len() - self.start
    }
}

/// Hashes every window of `k` characters. Windows that lie inside a run of ASCII are `k` bytes
/// and are hashed straight from the text; around a non-ASCII character two byte offsets, the
/// window's start and end, move one character at a time (a UTF-8 character's length is read from
/// its first byte). Mostly-ASCII text with a few accents thus costs about as much as ASCII.
fn char_hashes<F: FnMut(&[u64])>(text: &str, k: usize, seed: u64, out: &mut Blocks<'_, F>) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    if n < k {
        return; // fewer bytes, so fewer characters, than one shingle
    }
    if out.block == usize::MAX {
        out.buf.reserve(n - k + 1);
    }
    let mut start = 0;
    loop {
        let ascii_end = first_non_ascii(&bytes[start..]).map_or(n, |p| start + p);
        // Windows starting in start..=ascii_end - k are all ASCII.
        while ascii_end - start >= k {
            let m = (ascii_end + 1 - k - start).min(out.room());
            out.buf.extend(
                bytes[start..start + m + k - 1]
                    .windows(k)
                    .map(|w| xxh3_64_with_seed(w, seed)),
            );
            out.check();
            start += m;
        }
        if ascii_end == n {
            return;
        }
        // The windows that hold the character at `ascii_end`.
        let mut end = start;
        for _ in 0..k {
            if end == n {
                return;
            }
            end += utf8_len(bytes[end]);
        }
        loop {
            out.push(xxh3_64_with_seed(&bytes[start..end], seed));
            if end == n {
                return;
            }
            start += utf8_len(bytes[start]);
            end += utf8_len(bytes[end]);
            if start > ascii_end {
                break;
            }
        }
    }
}

/// The length of the UTF-8 character that starts with `lead`.
#[inline(always)]
fn utf8_len(lead: u8) -> usize {
    // Indexed by the top four bits: 0xxx ASCII, 10xx never a lead byte in a str, 110x two
    // bytes, 1110 three, 1111 four.
    const LEN: [u8; 16] = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4];
    LEN[(lead >> 4) as usize] as usize
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

    proptest::proptest! {
        /// The byte-offset windows give exactly the hashes of the k-character substrings, in
        /// order, for ASCII, mixed and multi-byte text.
        #[test]
        fn char_windows_match_the_definition(
            text in "[a-c é€😀\\u{301}]{0,30}|[a-c ]{0,12}é[a-c ]{0,12}|[ab]{0,9}€[ab]{0,3}😀[ab]{0,20}",
            k in 1usize..6,
        ) {
            let chars: Vec<char> = text.chars().collect();
            let mut expect: Vec<u64> = chars
                .windows(k)
                .map(|w| xxh3_64_with_seed(w.iter().collect::<String>().as_bytes(), 3))
                .collect();
            if expect.is_empty() && !text.is_empty() {
                expect.push(xxh3_64_with_seed(text.as_bytes(), 3));
            }
            let mut got = Vec::new();
            shingler(ShingleKind::Char, k).hashes_into(&text, 3, &mut got);
            proptest::prop_assert_eq!(got, expect);
        }
    }

    proptest::proptest! {
        /// Blocks of any size, concatenated, are exactly the hashes of `hashes_into`.
        #[test]
        fn blocks_concatenate_to_the_hashes(
            text in "[a-c é€\n]{0,40}",
            block in 1usize..12,
            kind in 0usize..3,
        ) {
            let kind = [ShingleKind::Char, ShingleKind::Word, ShingleKind::Stopword][kind];
            let s = shingler(kind, 3);
            let mut all = Vec::new();
            s.hashes_into(&text, 5, &mut all);
            let mut got = Vec::new();
            let mut buf = Vec::new();
            let n = s.hash_blocks(&text, 5, &mut buf, block, |b| {
                assert!(b.len() >= block);
                got.extend_from_slice(b)
            });
            got.extend_from_slice(&buf);
            proptest::prop_assert_eq!(n, all.len());
            proptest::prop_assert_eq!(got, all);
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
    fn sort_hashes_sorts_uniform_and_skewed_input() {
        for n in [0usize, 5, 300, 5000, 100_000, SORT_ONE_PASS_MAX + 5000] {
            let uniform: Vec<u64> = (0..n as u64)
                .map(|i| xxh3_64_with_seed(&i.to_le_bytes(), 1))
                .collect();
            let skewed: Vec<u64> = (0..n as u64).map(|i| (i * 7919) % 1000).collect();
            let mut tmp = vec![7; 3];
            for mut v in [uniform, skewed] {
                let mut expect = v.clone();
                expect.sort_unstable();
                sort_hashes(&mut v, &mut tmp);
                assert_eq!(v, expect);
                let mut distinct = expect.clone();
                distinct.dedup();
                let len = dedup_sorted(&mut v);
                assert_eq!(v[..len], distinct[..]);
            }
        }
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
