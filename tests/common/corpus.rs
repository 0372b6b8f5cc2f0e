//! Generated text and sets, shared by both test binaries (`tests.rs` for the CLI, `lib.rs` for
//! the library), which include this file with `#[path = "common/corpus.rs"] mod corpus;`.
//!
//! Everything comes from one small deterministic generator, so a corpus is the same on every
//! run and every machine without depending on a crate's stream staying stable:
//!
//! - [`Rng::word`]: a made-up word; [`prose`] joins words into sentences;
//! - [`text`] and [`edited`]: a document of `n` words from a seed, and an edited copy of it;
//! - [`vocabulary`] and [`edit`]: corpora at scale, documents drawn from a fixed vocabulary
//!   and copies edited at a random rate (replaced, deleted and inserted words);
//! - [`known_pair`]: two sets of hashes with a known Jaccard similarity, for the sketches.

// Each binary uses a part of this file.
#![allow(dead_code)]

/// A small deterministic generator (splitmix64).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5851_F42D_4C95_7F2D)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform in `range`.
    pub fn range(&mut self, range: std::ops::Range<usize>) -> usize {
        range.start + self.below(range.end - range.start)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }

    /// One of `items`, uniformly.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// A made-up word of two to four syllables, never an English stop word, so that generated
    /// prose only holds the stop words a test puts in on purpose.
    pub fn word(&mut self) -> String {
        const C: &[u8] = b"bcdfgklmnprstvz";
        const V: &[u8] = b"aeiou";
        loop {
            let syllables = 2 + self.below(3);
            let mut w = String::new();
            for _ in 0..syllables {
                w.push(C[self.below(C.len())] as char);
                w.push(V[self.below(V.len())] as char);
            }
            if !ndup::text::shingle::ENGLISH_STOPWORDS.contains(&w.as_str()) {
                return w;
            }
        }
    }

    /// `n` made-up words.
    pub fn words(&mut self, n: usize) -> Vec<String> {
        (0..n).map(|_| self.word()).collect()
    }
}

/// Joins words into prose: sentences of about a dozen words, capitalised, with full stops and a
/// line break now and then, so normalization has something to do.
pub fn prose(words: &[String]) -> String {
    let mut s = String::new();
    for (i, w) in words.iter().enumerate() {
        let start = i % 12 == 0;
        if start && i > 0 {
            s.push_str(if i % 48 == 0 { ".\n" } else { ". " });
        } else if i > 0 {
            s.push(' ');
        }
        if start {
            let mut c = w.chars();
            let first = c.next().unwrap().to_ascii_uppercase();
            s.push(first);
            s.push_str(c.as_str());
        } else {
            s.push_str(w);
        }
    }
    s.push_str(".\n");
    s
}

/// A document of `n` made-up words (distinct seeds give unrelated documents).
pub fn text(seed: u64, n: usize) -> String {
    prose(&Rng::new(seed).words(n))
}

/// The words of `text(seed, n)` with `edits` of them replaced by fresh words at distinct,
/// evenly spread positions: an edited copy.
pub fn edited(seed: u64, n: usize, edits: usize) -> String {
    let mut words = Rng::new(seed).words(n);
    let mut fresh = Rng::new(seed ^ 0xED17);
    for e in 0..edits {
        let at = (e * n) / edits.max(1) + n / (2 * edits.max(1));
        words[at.min(n - 1)] = format!("{}x", fresh.word());
    }
    prose(&words)
}

/// `size` made-up words to draw documents from: unrelated documents share words but rarely a
/// 9-character run.
pub fn vocabulary(rng: &mut Rng, size: usize) -> Vec<String> {
    rng.words(size)
}

/// `n` words drawn from `vocab`.
pub fn draw(rng: &mut Rng, vocab: &[String], n: usize) -> Vec<String> {
    (0..n).map(|_| rng.pick(vocab).clone()).collect()
}

/// A copy of `words` with about `rate` of its words edited (replaced, deleted, or with a word
/// inserted after them).
pub fn edit(rng: &mut Rng, words: &[String], vocab: &[String], rate: f64) -> Vec<String> {
    let mut out = Vec::with_capacity(words.len() + 8);
    for w in words {
        if !rng.chance(rate) {
            out.push(w.clone());
            continue;
        }
        match rng.below(3) {
            0 => out.push(rng.pick(vocab).clone()),
            1 => {}
            _ => {
                out.push(w.clone());
                out.push(rng.pick(vocab).clone());
            }
        }
    }
    out
}

/// Two sorted sets of `n` distinct uniform 64-bit hashes sharing exactly `shared`, so
/// J = shared / (2n - shared); each `trial` gives other hashes.
pub fn known_pair(n: u64, shared: u64, trial: u64) -> (Vec<u64>, Vec<u64>) {
    let h = |i: u64| ndup::sketch::minhash::fmix64(i ^ (trial << 36) ^ 0x5eed);
    let mut a: Vec<u64> = (0..n).map(h).collect();
    let mut b: Vec<u64> = (0..shared).chain(n..2 * n - shared).map(h).collect();
    a.sort_unstable();
    b.sort_unstable();
    (a, b)
}
