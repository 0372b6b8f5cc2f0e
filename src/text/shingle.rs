//! Stage 2: shingling, and hashing each shingle to 64 bits.
//!
//! Three kinds of shingle, all from the seeds:
//! - **char**: every substring of `k` characters (Unicode scalar values), white space included, so
//!   shingles that span words differ from those that do not (MMDS 3.2.1);
//! - **word**: every window of `w` consecutive words, words being Unicode words (UAX #29, so
//!   punctuation is not a word) joined by one space (the first seed's w-shingles);
//! - **stopword**: a stop word followed by the next two words (MMDS 3.2.4, the news-article
//!   shingles), which favour running prose over navigation and boilerplate. A document in which
//!   no stop word starts a shingle (none has two words after it) has nothing of that prose to
//!   favour: its shingles are then its word 3-shingles, the first seed's w-shingles, so that two
//!   such documents compare by their words as everywhere else, rather than as one shingle each
//!   (alike only when equal). Such shingles never start with a stop word, so they never meet a
//!   stop-word shingle of another document.
//!
//! A shingle's hash is `xxh3_64_with_seed(shingle text as UTF-8, seed)`, except for char shingles
//! of 8 to 16 bytes (the default 9-character shingle of ASCII text among them), which take a
//! cheaper hash of the same quality for this use: see `char_shingle_hash`. A document that is not
//! empty but shorter than one shingle yields exactly one shingle, so two short documents still
//! compare correctly: for char shingles its whole text; for word and stop-word shingles its words,
//! joined as a shingle joins them (punctuation is ignored there as in longer documents), or, when
//! it has no word at all (only punctuation or symbols), its whole text. An empty document yields
//! none: a document has no shingle exactly when its normalized text is empty.

use std::collections::HashSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;
use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::error::Result;
use crate::text::normalize::{caseless_key, first_non_ascii};

/// The kind of shingle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "pipeline", derive(schemars::JsonSchema))]
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

/// A custom stop-word list's name in parameters: a hash of its case-folded words as a set, the
/// way the shingler uses them, so lists that shingle alike are named alike.
pub(crate) fn stopwords_digest(list: &[String]) -> String {
    let mut words: Vec<String> = list.iter().map(|w| caseless_key(w).into_owned()).collect();
    words.sort();
    words.dedup();
    format!(
        "{:016x}",
        xxhash_rust::xxh3::xxh3_64(words.join("\n").as_bytes())
    )
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

/// Parses a stop-word file: one word per line, `#` starts a comment, blank lines ignored. The
/// words are case-folded, as the shingler matches them.
pub fn parse_stopwords(text: &str) -> Vec<String> {
    super::strip_bom(text)
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(|w| caseless_key(w).into_owned())
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
            return Err(crate::invalid![
                format!("the {} ", opts.kind.name()),
                crate::error::Param::ShingleSize,
                " must be at least 1",
            ]);
        }
        let stopwords: HashSet<String> = match &opts.stopwords {
            Some(list) => list.iter().map(|w| caseless_key(w).into_owned()).collect(),
            None => ENGLISH_STOPWORDS.iter().map(|w| w.to_string()).collect(),
        };
        if opts.kind == ShingleKind::Stopword && stopwords.is_empty() {
            return Err(crate::invalid![
                "the ",
                crate::error::Param::Stopwords,
                " is empty"
            ]);
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
        if self.kind == ShingleKind::Char {
            // At most one window per byte (ASCII), fewer around multi-byte characters.
            out.reserve(text.len().saturating_sub(self.size) + 1);
        }
        let start = out.len();
        self.feed(text, seed, &mut Appended { out, start });
    }

    /// Calls `f` with the hash of every shingle of `text`, in document order (as
    /// [`hashes_into`](Self::hashes_into) would store them), and returns how many there were.
    /// Why: a consumer that needs each hash once, such as round 0 of a signature, then takes it
    /// straight from a register, with no buffer written and read back.
    pub fn for_each_hash(&self, text: &str, seed: u64, f: impl FnMut(u64)) -> usize {
        let mut sink = Each { f, produced: 0 };
        self.feed(text, seed, &mut sink);
        sink.produced
    }

    /// Every producer of hashes ends here: the shingles of `text` into `sink`, none for an empty
    /// text, and one for a text shorter than a shingle (see the module documentation).
    fn feed(&self, text: &str, seed: u64, sink: &mut impl Sink) {
        if text.is_empty() {
            return;
        }
        match self.kind {
            ShingleKind::Char => char_hashes(text, self.size, seed, sink),
            ShingleKind::Word | ShingleKind::Stopword => {
                let mut joined = String::new();
                self.for_each_word_shingle(text, &mut joined, |s| {
                    sink.push(xxh3_64_with_seed(s.as_bytes(), seed))
                });
            }
        }
        if sink.produced() == 0 {
            // Shorter than one char shingle, or without a word: the whole text is the
            // document's one shingle.
            sink.push(xxh3_64_with_seed(text.as_bytes(), seed));
        }
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
    pub(crate) fn hash_set_in<'s>(
        &self,
        text: &str,
        seed: u64,
        scratch: &'s mut SetScratch,
    ) -> &'s [u64] {
        let sorted = self.sorted_hashes_in(text, seed, scratch);
        let distinct = dedup_sorted(sorted);
        &sorted[..distinct]
    }

    /// The document's shingle hashes sorted, some repeats possibly left in (see
    /// `RECENT_BITS`): [`dedup_into`] turns them into the set. Why: a caller that copies the
    /// set elsewhere removes the repeats as it copies, one pass over the set instead of two.
    pub(crate) fn sorted_hashes_in<'s>(
        &self,
        text: &str,
        seed: u64,
        scratch: &'s mut SetScratch,
    ) -> &'s mut [u64] {
        let SetScratch {
            hashes,
            tmp,
            counts,
            recent,
        } = scratch;
        // A char shingle starts at each byte at most, so the text's length bounds the count.
        let bound = text.len();
        if self.kind == ShingleKind::Char && bound >= SORT_MIN {
            // The first counting pass's histogram is taken as the hashes are made, saving a
            // pass: on the top bits of the whole sort, or, for a large text, of its split.
            let one_pass = bound <= SORT_ONE_PASS_MAX;
            let bits = if one_pass {
                log2_ceil(bound)
            } else {
                SORT_SPLIT_BITS
            };
            counts.clear();
            counts.resize(1 << bits, 0);
            // Never more slots than a quarter of the counters: the table is refilled per document.
            let recent_bits = RECENT_BITS.min(log2_ceil(bound) - 2);
            recent.clear();
            // Slot `i` starts with a value no hash that maps to it can have (`!i` differs from
            // `i` in the slot bits), so the first of every hash is kept.
            recent.extend((0..1u64 << recent_bits).map(|i| !i));
            let mut sink = Counted {
                out: at_least(hashes, bound),
                len: 0,
                counts,
                recent,
                shift: 64 - bits,
            };
            self.feed(text, seed, &mut sink);
            let kept = sink.len;
            let set = if kept < SORT_MIN {
                let set = &mut hashes[..kept];
                set.sort_unstable();
                set
            } else if one_pass {
                let set = at_least(tmp, kept);
                place(&hashes[..kept], set, 64 - bits, counts);
                insertion_finish(set);
                set
            } else {
                let parts = at_least(tmp, kept);
                place(&hashes[..kept], parts, 64 - bits, counts);
                let set = &mut hashes[..kept];
                sort_parts(parts, set, counts);
                insertion_finish(set);
                set
            };
            return set;
        }
        hashes.clear();
        self.hashes_into(text, seed, hashes);
        sort_hashes(hashes, tmp, counts);
        hashes
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

    /// Whether `word` is a stop word: its case fold is a listed word's, whatever the
    /// normalization left of its case.
    fn is_stopword(&self, word: &str) -> bool {
        self.stopwords.contains(caseless_key(word).as_ref())
    }

    /// Calls `f` with each word shingle, joined by single spaces in `buf`: the word w-shingles,
    /// or the stop-word shingles (the word 3-shingles when no stop word starts one); and for a
    /// text with words but too few for one shingle, its words as one shingle. A text without a
    /// word gives none here.
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
        let mut emitted = false;
        if self.kind == ShingleKind::Stopword {
            for i in 0..words.len().saturating_sub(n - 1) {
                if self.is_stopword(words[i]) {
                    emit(&words[i..i + n]);
                    emitted = true;
                }
            }
        }
        if !emitted {
            for win in words.windows(n) {
                emit(win);
                emitted = true;
            }
        }
        if !emitted && !words.is_empty() {
            emit(&words);
        }
    }
}

/// Working buffers for [`Shingler::hash_set_with`], reused from one document to the next.
#[derive(Debug, Default)]
pub struct SetScratch {
    hashes: Vec<u64>,
    /// The sort's working space.
    tmp: Vec<u64>,
    /// The counting pass's counters.
    counts: Vec<u32>,
    /// The recent hashes, by their low bits (see `Counted`).
    recent: Vec<u64>,
}

impl SetScratch {
    /// Frees the buffers when a large document grew them past `max_bytes` each, so that a
    /// thread does not keep its largest document's shingles to the end of the run.
    pub(crate) fn release_large(&mut self, max_bytes: usize) {
        release_large(&mut self.hashes, max_bytes);
        release_large(&mut self.tmp, max_bytes);
        release_large(&mut self.counts, max_bytes);
        release_large(&mut self.recent, max_bytes);
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
/// branch is nearly always "already in order", finishes the job. Why not bucketing sixteen to
/// a bucket and sorting each bucket with comparisons: their branches mispredict in every
/// bucket. Nor two counting passes: one pass more over every hash. Any input is
/// sorted correctly: when the insertion pass finds far more disorder than uniform hashes
/// leave, the rest is sorted with `sort_unstable`.
///
/// Above [`SORT_ONE_PASS_MAX`] hashes a first pass splits them on their top
/// [`SORT_SPLIT_BITS`] bits, and each part gets its own counting pass. Why: one pass over a
/// large document scatters its hashes across megabytes, and every write misses the cache;
/// a thousand parts are written sequentially, and each part's counting pass stays within L2.
/// Below that size one pass still fits the cache and is as fast or faster (the stage bench
/// `verify/exact-shingle-set-2m`, in BENCHMARKS.md, covers the large case).
fn sort_hashes(v: &mut Vec<u64>, tmp: &mut Vec<u64>, counts: &mut Vec<u32>) {
    let n = v.len();
    if n < SORT_MIN {
        v.sort_unstable();
        return;
    }
    size_to(tmp, n);
    if n <= SORT_ONE_PASS_MAX {
        let bits = log2_ceil(n);
        counting_pass(v, tmp, 64 - bits, bits, counts);
        std::mem::swap(v, tmp);
    } else {
        counting_pass(v, tmp, 64 - SORT_SPLIT_BITS, SORT_SPLIT_BITS, counts);
        sort_parts(tmp, v, counts);
    }
    insertion_finish(v);
}

/// The second pass of a split sort: `parts` holds the hashes split on their top
/// [`SORT_SPLIT_BITS`] bits, and `counts` where each part ends (as a counting pass leaves
/// them). Each part gets a counting pass of its own into the same place in `dst`.
fn sort_parts(parts: &[u64], dst: &mut [u64], counts: &mut Vec<u32>) {
    let ends = counts.clone();
    let mut start = 0;
    for end in ends {
        let end = end as usize;
        let bits = log2_ceil(end - start);
        let shift = 64 - SORT_SPLIT_BITS - bits;
        counting_pass(
            &parts[start..end],
            &mut dst[start..end],
            shift,
            bits,
            counts,
        );
        start = end;
    }
}

/// Slots in the table of recent hashes that a set's hashes pass through on their way to the
/// counting pass: 2^10 (8 KiB, in L1). Why: many of a document's char shingles repeat one seen
/// shortly before, and a repeat dropped here skips the counter, the scatter and the insertion
/// pass. It only drops exact repeats, so the set is the same; which repeats get through only
/// changes how many duplicates `dedup_sorted` removes. A smaller table catches too few repeats,
/// and a larger one crowds L1 (measured in docs/design-notes.md).
const RECENT_BITS: u32 = 10;

/// Below this many hashes [`sort_hashes`] leaves the work to `sort_unstable`.
const SORT_MIN: usize = 64;

/// The insertion pass that finishes a counting pass: each hash is a step or two from its place.
/// Any input ends sorted: far more disorder than uniform hashes leave is handed to
/// `sort_unstable`.
///
/// Why it looks the way it does: a bucket holds two hashes often enough that "is this hash
/// smaller than the one before?" is a coin toss for the branch predictor a third of the time.
/// So each hash is swapped with the one before it without a branch (a min and a max), and only
/// a hash that is smaller than the two before it, rare for uniform hashes, takes the loop.
fn insertion_finish(v: &mut [u64]) {
    let n = v.len();
    if n < 2 {
        return;
    }
    // Uniform hashes need far fewer long moves than this.
    let mut budget = 4 * n;
    // The largest of `v[..i]`, kept in a register: it is what the next hash is compared with.
    let mut last = v[0];
    for i in 1..n {
        let x = v[i];
        let lo = x.min(last);
        last = x.max(last);
        v[i - 1] = lo;
        v[i] = last;
        // `lo` is below its new neighbour only when it is `x` and belongs further left.
        if i >= 2 && lo < v[i - 2] {
            let mut j = i - 1;
            while j > 0 && v[j - 1] > lo {
                v[j] = v[j - 1];
                j -= 1;
            }
            v[j] = lo;
            budget = budget.saturating_sub(i - j);
            if budget == 0 {
                v.sort_unstable();
                return;
            }
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
    counts.clear();
    counts.resize(1 << bits, 0);
    for &h in src {
        counts[((h >> shift) & mask) as usize] += 1;
    }
    place(src, dst, shift, counts);
}

/// The second half of a counting pass whose histogram of `(h >> shift) & (counts.len() - 1)`
/// is in `counts`: turns the counts into bucket starts and moves each hash of `src` to its
/// bucket in `dst` (on return, each counter holds where its bucket ends).
fn place(src: &[u64], dst: &mut [u64], shift: u32, counts: &mut [u32]) {
    let mask = counts.len() - 1;
    let mut sum = 0;
    for c in counts.iter_mut() {
        (*c, sum) = (sum, sum + *c);
    }
    for &h in src {
        // The mask is a no-op for the bits asked for, and spares a bounds check.
        let slot = &mut counts[(h >> shift) as usize & mask];
        dst[*slot as usize] = h;
        *slot += 1;
    }
}

/// Makes `tmp` hold `n` elements for a counting pass to overwrite every one of, so its old
/// contents are kept rather than zeroed.
fn size_to(tmp: &mut Vec<u64>, n: usize) {
    at_least(tmp, n);
    tmp.truncate(n);
}

/// The first `n` slots of `v`, grown to hold them if it is shorter. Old contents are kept, not
/// zeroed: the buffers are reused document after document, and only ever grow here.
fn at_least(v: &mut Vec<u64>, n: usize) -> &mut [u64] {
    if v.len() < n {
        v.resize(n, 0);
    }
    &mut v[..n]
}

/// Writes the distinct values of the sorted `sorted` to the front of `out`, which has room for
/// all of them, and returns how many there are. Branch-free, as `dedup_sorted`.
pub(crate) fn dedup_into(sorted: &[u64], out: &mut [u64]) -> usize {
    let Some(&first) = sorted.first() else {
        return 0;
    };
    let out = &mut out[..sorted.len()];
    out[0] = first;
    let (mut len, mut last) = (1, first);
    for &x in &sorted[1..] {
        // `len` never passes the position of `x`, so the slot is in bounds.
        out[len.min(sorted.len() - 1)] = x;
        len += usize::from(x != last);
        last = x;
    }
    len
}

/// Moves the distinct values of the sorted `v` to its front and returns how many there are.
/// Branch-free: many of a document's shingles are repeats, in no predictable pattern.
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

/// Where [`char_hashes`] and the word shingles put the hashes, in document order.
trait Sink {
    fn push(&mut self, h: u64);
    fn extend(&mut self, hashes: impl Iterator<Item = u64>);
    /// Hashes received so far.
    fn produced(&self) -> usize;
}

/// A sink that appends the hashes to a vector (what it held before is kept, not counted).
struct Appended<'a> {
    out: &'a mut Vec<u64>,
    start: usize,
}

impl Sink for Appended<'_> {
    #[inline(always)]
    fn push(&mut self, h: u64) {
        self.out.push(h);
    }

    #[inline(always)]
    fn extend(&mut self, hashes: impl Iterator<Item = u64>) {
        self.out.extend(hashes);
    }

    fn produced(&self) -> usize {
        self.out.len() - self.start
    }
}

/// A sink that keeps the hashes not seen recently (see [`RECENT_BITS`]) and counts them by
/// their top bits: the first half of a counting pass, done while the hashes are made.
struct Counted<'a> {
    /// Room for every hash the text can give.
    out: &'a mut [u64],
    /// Hashes kept so far, at the front of `out`.
    len: usize,
    counts: &'a mut [u32],
    /// The last hash seen in each slot (a power of two of them), by its low bits.
    recent: &'a mut [u64],
    shift: u32,
}

impl Sink for Counted<'_> {
    #[inline(always)]
    fn push(&mut self, h: u64) {
        let last = &mut self.recent[h as usize & (self.recent.len() - 1)];
        let new = *last != h;
        *last = h;
        // Written either way, kept only when new: no branch on a coin toss.
        self.out[self.len] = h;
        self.len += usize::from(new);
        let mask = self.counts.len() - 1;
        self.counts[(h >> self.shift) as usize & mask] += u32::from(new);
    }

    #[inline(always)]
    fn extend(&mut self, hashes: impl Iterator<Item = u64>) {
        for h in hashes {
            self.push(h);
        }
    }

    /// Hashes kept: fewer than received, but never 0 once one was.
    fn produced(&self) -> usize {
        self.len
    }
}

/// A sink that hands each hash to `f` as it is made, counting them.
struct Each<F: FnMut(u64)> {
    f: F,
    produced: usize,
}

impl<F: FnMut(u64)> Sink for Each<F> {
    #[inline(always)]
    fn push(&mut self, h: u64) {
        (self.f)(h);
        self.produced += 1;
    }

    #[inline(always)]
    fn extend(&mut self, hashes: impl Iterator<Item = u64>) {
        for h in hashes {
            (self.f)(h);
            self.produced += 1;
        }
    }

    fn produced(&self) -> usize {
        self.produced
    }
}

/// Hashes every window of `k` characters. Windows that lie inside a run of ASCII are `k` bytes
/// and are hashed straight from the text; around a non-ASCII character two byte offsets, the
/// window's start and end, move one character at a time (a UTF-8 character's length is read from
/// its first byte). Mostly-ASCII text with a few accents thus costs about as much as ASCII.
fn char_hashes(text: &str, k: usize, seed: u64, out: &mut impl Sink) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    if n < k {
        return; // fewer bytes, so fewer characters, than one shingle
    }
    let key = WindowKey::new(seed);
    let mut start = 0;
    loop {
        let ascii_end = first_non_ascii(&bytes[start..]).map_or(n, |p| start + p);
        // Windows starting in start..=ascii_end - k are all ASCII.
        if ascii_end - start >= k {
            let run = &bytes[start..ascii_end];
            if (WINDOW_MIN..=WINDOW_MAX).contains(&k) {
                // The length is the same for every window of the run: mixed into the key once.
                let b = key.b ^ k as u64;
                out.extend(run.windows(k).map(|w| fold_mul(key.a, b, w)));
            } else {
                out.extend(run.windows(k).map(|w| xxh3_64_with_seed(w, seed)));
            }
            start = ascii_end + 1 - k;
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
            out.push(key.hash(&bytes[start..end]));
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

/// The 64-bit hash of one char shingle, as [`Shingler`] computes it for every window: for 8 to
/// 16 bytes of UTF-8, the folded multiply of its first and last eight bytes, each xored with a
/// key drawn from `seed` (the length is mixed into the second key); for other lengths, xxh3.
///
/// Why not xxh3 everywhere: hashing each window is most of a scan's work, and this is about a
/// third of xxh3's instructions for the same lengths (one multiply against two, no avalanche
/// step). The folded multiply is the core of wyhash and rapidhash; with the keys random, the
/// 128-bit product's two halves xored together spread every input bit over the result, which is
/// what MinHash needs of it: the estimator tests run on real text shingles through this hash
/// (`tests/lib/accuracy.rs`, `text_shingles_give_unbiased_estimates`) find no bias and the
/// variance J(1-J)/k, and the tests below find no collisions among hundreds of thousands of
/// structured windows and uniform slots and values.
#[cfg(test)]
pub(crate) fn char_shingle_hash(shingle: &str, seed: u64) -> u64 {
    WindowKey::new(seed).hash(shingle.as_bytes())
}

/// The window lengths, in bytes, hashed by [`fold_mul`]; others go to xxh3.
const WINDOW_MIN: usize = 8;
const WINDOW_MAX: usize = 16;

/// The keys of the window hash, drawn from the seed.
struct WindowKey {
    seed: u64,
    a: u64,
    b: u64,
}

impl WindowKey {
    fn new(seed: u64) -> Self {
        let a = xxh3_64_with_seed(b"ndup window key a", seed);
        let b = xxh3_64_with_seed(b"ndup window key b", seed);
        WindowKey { seed, a, b }
    }

    #[inline(always)]
    fn hash(&self, w: &[u8]) -> u64 {
        if (WINDOW_MIN..=WINDOW_MAX).contains(&w.len()) {
            fold_mul(self.a, self.b ^ w.len() as u64, w)
        } else {
            xxh3_64_with_seed(w, self.seed)
        }
    }
}

/// The window hash of `w`, 8 to 16 bytes, with the keys `a` and `b` (its length mixed in).
#[inline(always)]
fn fold_mul(a: u64, b: u64, w: &[u8]) -> u64 {
    let n = w.len();
    let lo = u64::from_le_bytes(w[..8].try_into().unwrap());
    let hi = u64::from_le_bytes(w[n - 8..].try_into().unwrap());
    let p = u128::from(lo ^ a) * u128::from(hi ^ b);
    (p as u64) ^ ((p >> 64) as u64)
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
            let hash = |x: &str| match kind {
                ShingleKind::Char => char_shingle_hash(x, 42),
                _ => xxh3_64_with_seed(x.as_bytes(), 42),
            };
            let mut from_strings: Vec<u64> = s.shingles(text).iter().map(|x| hash(x)).collect();
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
                .map(|w| char_shingle_hash(&w.iter().collect::<String>(), 3))
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
        /// `for_each_hash` hands over exactly the hashes of `hashes_into`, in order, for
        /// windows of any byte length (the fast hash's 8 to 16 and xxh3's others).
        #[test]
        fn each_hash_is_the_stored_hash(
            text in "[a-c é€\n]{0,40}",
            size in 1usize..12,
            kind in 0usize..3,
        ) {
            let kind = [ShingleKind::Char, ShingleKind::Word, ShingleKind::Stopword][kind];
            let s = shingler(kind, size);
            let mut all = vec![7];
            s.hashes_into(&text, 5, &mut all);
            let mut got = vec![7];
            let n = s.for_each_hash(&text, 5, |h| got.push(h));
            proptest::prop_assert_eq!(n, all.len() - 1);
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

    /// A word or stop-word document too short for a shingle is one shingle of its words, so
    /// punctuation is ignored there as in longer documents; one without a word is its whole text.
    #[test]
    fn short_word_documents_are_their_words_and_wordless_ones_their_text() {
        for kind in [ShingleKind::Word, ShingleKind::Stopword] {
            let s = shingler(kind, 5);
            assert_eq!(s.shingles("hello, world!"), ["hello world"], "{kind:?}");
            assert_eq!(
                s.hash_set("hello, world!", 3),
                s.hash_set("hello world", 3),
                "{kind:?}"
            );
            assert_eq!(
                s.hash_set("hello world", 3),
                [xxh3_64_with_seed(b"hello world", 3)]
            );
            // No word at all: the whole text, so the document is not empty and differs from
            // another without words.
            assert_eq!(s.shingles("-- !!! --"), ["-- !!! --"], "{kind:?}");
            assert_eq!(s.hash_set("-- !!! --", 3).len(), 1);
            assert_ne!(s.hash_set("-- !!! --", 3), s.hash_set("?", 3));
            assert!(s.hash_set("", 3).is_empty());
        }
        // Longer documents that differ only in punctuation were alike already.
        let w = shingler(ShingleKind::Word, 2);
        assert_eq!(
            w.hash_set("one, two; three!", 0),
            w.hash_set("one two three", 0)
        );
    }

    /// In stop-word mode, a document in which no stop word starts a shingle is shingled by its
    /// word 3-shingles, which never meet a stop-word shingle.
    #[test]
    fn documents_without_stop_word_shingles_take_word_three_shingles() {
        let s = shingler(ShingleKind::Stopword, 3);
        let text = "alpha beta gamma delta epsilon";
        assert_eq!(
            s.shingles(text),
            [
                "alpha beta gamma",
                "beta gamma delta",
                "gamma delta epsilon"
            ]
        );
        assert_eq!(
            s.hash_set(text, 1),
            shingler(ShingleKind::Word, 3).hash_set(text, 1)
        );
        // A near copy shares most of them.
        let near = "alpha beta gamma delta zeta";
        let (a, b) = (s.hash_set(text, 1), s.hash_set(near, 1));
        assert_eq!(crate::sim::jaccard(&a, &b), 0.5);
        // A stop word with two words after it starts the only shingles; one too near the end
        // starts none.
        assert_eq!(s.shingles("alpha the beta gamma"), ["the beta gamma"]);
        assert_eq!(s.shingles("alpha beta the"), ["alpha beta the"]);
        assert_eq!(s.shingles("alpha the"), ["alpha the"]);
    }

    /// Stop words match by case folding, whatever the case left in the text, and a custom
    /// list's name follows its folded words.
    #[test]
    fn stop_words_match_case_folded() {
        let s = Shingler::new(&ShingleOptions {
            kind: ShingleKind::Stopword,
            stopwords: Some(vec!["daß".into(), "ΤΟΥΣ".into(), "The".into()]),
            ..Default::default()
        })
        .unwrap();
        // Normalized (folded) text, and text left in its case.
        assert_eq!(s.shingles("x dass a b"), ["dass a b"]);
        assert_eq!(s.shingles("x DAß a b"), ["DAß a b"]);
        assert_eq!(s.shingles("x τουσ a b"), ["τουσ a b"]);
        assert_eq!(s.shingles("x τους a b"), ["τους a b"]);
        assert_eq!(s.shingles("x THE a b"), ["THE a b"]);
        assert_eq!(
            stopwords_digest(&["daß".into(), "τους".into()]),
            stopwords_digest(&["DASS".into(), "ΤΟΥΣ".into()])
        );
        assert_eq!(parse_stopwords("Daß\nΤΟΥΣ\n"), ["dass", "τουσ"]);
    }

    /// Windows that differ in one or two bytes, and windows of different lengths, never
    /// collide under the folded-multiply hash, and its bits are uniform where MinHash reads them
    /// (the top bits pick a slot, the low 48 are the value): structured input is where a cheap
    /// hash would show a weakness.
    #[test]
    fn window_hash_is_collision_free_and_uniform_on_structured_windows() {
        let mut windows: Vec<String> = Vec::new();
        // Every 9-byte string over four letters: 262,144 windows, most differing in one byte.
        for i in 0..1u32 << 18 {
            windows.push(
                (0..9)
                    .map(|p| b"acgt"[(i >> (2 * p) & 3) as usize] as char)
                    .collect(),
            );
        }
        // Zero-padded numbers (the last bytes vary, the first stay), at two lengths.
        windows.extend((0..200_000).map(|i| format!("{i:09}")));
        windows.extend((0..200_000).map(|i| format!("n{i:013}")));
        // The same byte repeated at every length from 8 to 16, and with a trailing accent.
        windows.extend((8..=16).map(|n| "a".repeat(n)));
        windows.extend((6..=14).map(|n| format!("{}é", "a".repeat(n))));
        windows.sort_unstable();
        windows.dedup();
        for seed in [0, 42] {
            let hashes: Vec<u64> = windows.iter().map(|w| char_shingle_hash(w, seed)).collect();
            let distinct: HashSet<u64> = hashes.iter().copied().collect();
            assert_eq!(distinct.len(), windows.len(), "seed {seed}: collisions");
            // Chi-square over 128 slots from the top 7 bits, and over 256 buckets of each of
            // value bits 0-7 and 40-47: the degrees of freedom plus 8 standard deviations.
            for (shift, buckets) in [(57, 128usize), (0, 256), (40, 256)] {
                let mut counts = vec![0f64; buckets];
                for h in &hashes {
                    counts[(h >> shift) as usize % buckets] += 1.0;
                }
                let expect = hashes.len() as f64 / buckets as f64;
                let chi2: f64 = counts.iter().map(|c| (c - expect).powi(2) / expect).sum();
                let df = (buckets - 1) as f64;
                assert!(
                    chi2 < df + 8.0 * (2.0 * df).sqrt(),
                    "seed {seed}: bits from {shift}: chi-square {chi2:.0} on {df} df"
                );
            }
            // Every output bit is set in half the hashes (within 1%).
            for bit in 0..64 {
                let ones = hashes.iter().filter(|&&h| h >> bit & 1 == 1).count();
                let share = ones as f64 / hashes.len() as f64;
                assert!(
                    (share - 0.5).abs() < 0.01,
                    "seed {seed}: bit {bit} set in {share:.4}"
                );
            }
        }
    }

    /// The set built with the histogram taken while hashing (char shingles of texts from 64
    /// bytes up) is the sorted, distinct list of the document's hashes, for ASCII, accented and
    /// highly repetitive text, at sizes on both sides of the one-pass limit.
    #[test]
    fn shingle_sets_are_the_sorted_distinct_hashes() {
        let base = "the quick brown fox, naïve café owner, jumps over 12 lazy dogs. ";
        let mut scratch = SetScratch::default();
        for (k, reps) in [(9, 1), (9, 40), (5, 300), (9, 5000), (3, 3), (12, 2)] {
            for text in [
                base.repeat(reps),
                base.replace(['ï', 'é'], "e").repeat(reps),
            ] {
                let s = shingler(ShingleKind::Char, k);
                let mut expect = Vec::new();
                s.hashes_into(&text, 9, &mut expect);
                expect.sort_unstable();
                expect.dedup();
                assert_eq!(
                    s.hash_set_in(&text, 9, &mut scratch),
                    expect,
                    "k={k} x{reps}"
                );
            }
        }
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
                sort_hashes(&mut v, &mut tmp, &mut Vec::new());
                assert_eq!(v, expect);
                let mut distinct = expect.clone();
                distinct.dedup();
                let len = dedup_sorted(&mut v);
                assert_eq!(v[..len], distinct[..]);
            }
        }
    }

    #[test]
    fn sorted_hashes_deduplicated_into_a_buffer_are_the_set() {
        let base = "the quick brown fox, naïve café owner, jumps over 12 lazy dogs. ";
        let s = shingler(ShingleKind::Char, 9);
        let mut scratch = SetScratch::default();
        for reps in [1, 40, 5000] {
            let text = base.repeat(reps);
            let sorted = s.sorted_hashes_in(&text, 3, &mut scratch).to_vec();
            assert!(sorted.is_sorted());
            let mut out = vec![0; sorted.len()];
            let n = dedup_into(&sorted, &mut out);
            assert_eq!(out[..n], s.hash_set(&text, 3)[..], "x{reps}");
        }
        assert_eq!(dedup_into(&[], &mut []), 0);
        let mut out = [0; 6];
        assert_eq!(dedup_into(&[1, 1, 2, 3, 3, 3], &mut out), 3);
        assert_eq!(out[..3], [1, 2, 3]);
    }

    #[test]
    fn insertion_finish_sorts_any_input() {
        let mut inputs: Vec<Vec<u64>> = Vec::new();
        for n in [0u64, 1, 2, 3, 7, 64, 1000, 20_000] {
            inputs.push((0..n).collect());
            inputs.push((0..n).rev().collect());
            inputs.push((0..n).map(|i| i % 3).collect());
            // Nearly sorted, as a counting pass leaves them: pairs and triples out of order.
            inputs.push((0..n).map(|i| (i / 3) * 10 + (2 - i % 3)).collect());
            inputs.push(
                (0..n)
                    .map(|i| xxh3_64_with_seed(&i.to_le_bytes(), 5))
                    .collect(),
            );
        }
        for mut v in inputs {
            let mut expect = v.clone();
            expect.sort_unstable();
            insertion_finish(&mut v);
            assert_eq!(v, expect);
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
