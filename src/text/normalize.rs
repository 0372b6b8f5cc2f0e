//! Stage 1: text normalization.
//!
//! Near-duplicate detection compares what a reader sees, not how it was typed, so by default the
//! text is put in Unicode NFKC form (full-width letters, ligatures and compatibility characters fold
//! to their plain forms), case-folded, every run of white space becomes one space, and the ends
//! are trimmed. Each step can be switched off on its own.
//!
//! Case folding is Unicode's full case folding (`CaseFolding.txt`, statuses C and F, without the
//! Turkic T mappings), not lowercasing: lowercasing maps each character on its own, so `Σ` always
//! becomes `σ` while a word's last sigma is written `ς`, and `SS` never meets `ß`; folding maps
//! `ς`, `σ` and `Σ` to `σ`, and `ß`, `ẞ`, `ss` and `SS` to `ss`. With NFKC on, the folded text is
//! put in NFKC form again (as Unicode's `NFKC_Casefold` does), because a few foldings give
//! decomposed sequences (`ΐ` folds to `ι` and two combining marks) that must compose to meet the
//! same letter folded from its capital. The Turkish dotted capital `İ` folds to `i` and a combining
//! dot above, as it lowercased before; the dotless `ı` stays itself.
//!
//! Most corpora are mostly ASCII, and for ASCII text NFKC is the identity and case folding is
//! ASCII lowercasing, so an ASCII document is normalized in a single pass over its bytes without
//! touching the Unicode tables.

use std::borrow::Cow;

use caseless::Caseless;
use serde::{Deserialize, Serialize};
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};

/// Which normalization steps run. All are on by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NormalizeOptions {
    /// Apply Unicode NFKC (compatibility composition).
    pub nfkc: bool,
    /// Case-fold the text (Unicode full case folding; see the module documentation). The name
    /// is the option's historical one: the step lowercased before it folded.
    pub lowercase: bool,
    /// Replace every run of white space with one ASCII space.
    pub collapse_whitespace: bool,
    /// Remove white space at both ends.
    pub trim: bool,
}

impl Default for NormalizeOptions {
    fn default() -> Self {
        NormalizeOptions {
            nfkc: true,
            lowercase: true,
            collapse_whitespace: true,
            trim: true,
        }
    }
}

impl NormalizeOptions {
    /// Every step off: the text is used exactly as read.
    pub fn none() -> Self {
        NormalizeOptions {
            nfkc: false,
            lowercase: false,
            collapse_whitespace: false,
            trim: false,
        }
    }

    /// A short, stable description such as `nfkc+casefold+whitespace+trim` (or `none`), used in
    /// the parameters record of every report. The case step is named `casefold` (an ndup that
    /// lowercased named it `lowercase`), so that signatures made with either rule are told apart.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.nfkc {
            parts.push("nfkc");
        }
        if self.lowercase {
            parts.push("casefold");
        }
        if self.collapse_whitespace {
            parts.push("whitespace");
        }
        if self.trim {
            parts.push("trim");
        }
        if parts.is_empty() {
            "none".to_string()
        } else {
            parts.join("+")
        }
    }
}

/// Normalizes `text` into `out` (which is cleared first). Reusing `out` across documents avoids an
/// allocation per document on the hot path.
///
/// The text is cut into ASCII runs and non-ASCII segments. NFKC never changes ASCII and never
/// composes an ASCII character with what comes before it, so splitting just before any ASCII
/// character leaves the NFKC result unchanged; only the non-ASCII segments (each with the ASCII
/// character before it, which a combining mark may attach to) go through the Unicode tables,
/// and a segment that the NFKC quick check finds already normalized skips even that.
pub fn normalize_into(text: &str, opts: &NormalizeOptions, out: &mut String) {
    let mut w = Writer {
        buf: std::mem::take(out).into_bytes(),
        in_space: opts.trim,
        opts: *opts,
        folded: String::new(),
    };
    w.buf.clear();
    w.buf.reserve(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let Some(p) = first_non_ascii(&bytes[i..]).map(|p| i + p) else {
            w.ascii(&bytes[i..]);
            break;
        };
        // The segment starts at the ASCII character before the non-ASCII run, if any, and ends
        // before the next ASCII character.
        let s = if p > i { p - 1 } else { p };
        w.ascii(&bytes[i..s]);
        let q = bytes[p..]
            .iter()
            .position(u8::is_ascii)
            .map_or(bytes.len(), |q| p + q);
        w.segment(&text[s..q]);
        i = q;
    }
    // Only ASCII bytes and whole UTF-8 encodings of chars were written.
    *out = String::from_utf8(w.buf).expect("valid UTF-8 in, valid UTF-8 out");
    if opts.trim {
        // Leading white space was already dropped while collapsing; trimming here covers the
        // remaining cases with one cheap pass over the ends.
        let end = out.trim_end().len();
        out.truncate(end);
        let start = out.len() - out.trim_start().len();
        if start > 0 {
            out.drain(..start);
        }
    }
}

/// Convenience wrapper returning a new string.
pub fn normalize(text: &str, opts: &NormalizeOptions) -> String {
    let mut out = String::with_capacity(text.len());
    normalize_into(text, opts, &mut out);
    out
}

/// `word` with its case and compatibility forms folded as the default normalization folds them
/// (NFKC, case folding, NFKC again; white space is left alone): borrowed when that changes
/// nothing, as for a word of text normalized with the defaults. Why: stop words are matched on
/// this key whatever the normalization options, so a listed `daß` or `τους` meets the text's
/// `dass` and `τουσ` (their folded forms), and a text not case-folded still meets its list.
pub(crate) fn caseless_key(word: &str) -> Cow<'_, str> {
    if word.is_ascii() {
        return if word.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(word.to_ascii_lowercase())
        } else {
            Cow::Borrowed(word)
        };
    }
    let table = fold_table();
    if is_nfkc_quick(word.chars()) == IsNormalized::Yes
        && !word.chars().any(|c| has_folding(table, c))
    {
        return Cow::Borrowed(word);
    }
    Cow::Owned(word.nfkc().default_case_fold().nfkc().collect())
}

/// Appends the case folding of `chars` to `out`; true when it changed any of them.
fn fold_into(chars: impl Iterator<Item = char>, out: &mut String) -> bool {
    let table = fold_table();
    let mut changed = false;
    for c in chars {
        if has_folding(table, c) {
            changed = true;
            out.extend(std::iter::once(c).default_case_fold());
        } else {
            out.push(c);
        }
    }
    changed
}

/// No character at or above this one has a case folding (the last, in Adlam, is U+1E921); a
/// test checks every character above it.
const FOLD_LIMIT: u32 = 0x1F000;

/// One bit per character below [`FOLD_LIMIT`], set when case folding changes it: asked of
/// `caseless` once per process (about a millisecond). Why: its lookup is a binary search over
/// some 1,500 mappings for every character, while nearly every character of a text (every
/// lower-case letter, every script without case) has no mapping; a bit test answers for those,
/// and the text is then normalized as fast as when it was lowercased.
fn fold_table() -> &'static [u64] {
    static TABLE: std::sync::OnceLock<Box<[u64]>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut bits = vec![0u64; FOLD_LIMIT as usize / 64];
        for c in (0..FOLD_LIMIT).filter_map(char::from_u32) {
            if folds(c) {
                bits[c as usize / 64] |= 1 << (c as u32 % 64);
            }
        }
        bits.into_boxed_slice()
    })
}

/// Whether case folding changes `c` (by `caseless`'s tables).
fn folds(c: char) -> bool {
    let mut f = std::iter::once(c).default_case_fold();
    f.next() != Some(c) || f.next().is_some()
}

#[inline(always)]
fn has_folding(table: &[u64], c: char) -> bool {
    let c = c as u32;
    c < FOLD_LIMIT && table[c as usize / 64] >> (c % 64) & 1 == 1
}

/// The index of the first byte >= 0x80: 32 bytes at a time with SSE2 (part of x86-64 itself,
/// so no detection), then eight at a time.
#[inline]
pub(crate) fn first_non_ascii(bytes: &[u8]) -> Option<usize> {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut base = 0;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128};
        while base + 32 <= bytes.len() {
            // SAFETY: SSE2 is always present on x86-64, and the 32 bytes read are in `bytes`.
            let (m0, m1) = unsafe {
                let p = bytes.as_ptr().add(base).cast::<__m128i>();
                let (a, b) = (_mm_loadu_si128(p), _mm_loadu_si128(p.add(1)));
                if _mm_movemask_epi8(_mm_or_si128(a, b)) == 0 {
                    base += 32;
                    continue;
                }
                (_mm_movemask_epi8(a) as u32, _mm_movemask_epi8(b) as u32)
            };
            return Some(base + (m0 | m1 << 16).trailing_zeros() as usize);
        }
    }
    let mut chunks = bytes[base..].chunks_exact(8);
    for c in &mut chunks {
        let word = u64::from_le_bytes(c.try_into().expect("eight bytes"));
        if word & HIGH != 0 {
            return Some(base + (word & HIGH).trailing_zeros() as usize / 8);
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b >= 0x80)
        .map(|p| base + p)
}

const ONES: u64 = 0x0101_0101_0101_0101;

/// For eight ASCII bytes (each < 0x80), the lanes whose byte is in `lo..=hi`, as 0x80 in that
/// lane. Adding `0x80 - lo` sets a lane's high bit exactly when the byte is >= lo, and no lane can
/// carry into the next because every byte is below 0x80.
#[inline(always)]
fn lanes_in(x: u64, lo: u8, hi: u8) -> u64 {
    let ge_lo = x + ONES * (0x80 - lo as u64);
    let gt_hi = x + ONES * (0x80 - hi as u64 - 1);
    ge_lo & !gt_hi & (ONES * 0x80)
}

/// Per ASCII byte: bit 7 set for white space (as Rust's `char::is_whitespace` within ASCII:
/// space, \t, \n, \x0B, \x0C, \r), low seven bits the lowercase byte.
static ASCII_CLASS: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        t[b] = c.to_ascii_lowercase();
        if matches!(c, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r') {
            t[b] |= 0x80;
        }
        b += 1;
    }
    t
};

/// Bytes past the end of a run that [`simd::collapse`] may write (and that are then cut off).
const SIMD_SLACK: usize = 16;

/// The ASCII run with white space collapsed, sixteen bytes at a time with SSSE3.
///
/// Why: normalization runs over every byte of a scan, and real text often holds two white-space
/// characters in a row within a few dozen bytes, so the SWAR loop's "nothing to drop" fast path
/// keeps missing. Here nothing branches on the text: each half of a 16-byte block is left-packed
/// with one `pshufb` whose control comes from a 256-entry table indexed by the mask of bytes to
/// drop (a space after a space), stored whole, and the write position moves on by the number
/// kept. The result is byte for byte that of the portable loop (a test compares them).
#[cfg(target_arch = "x86_64")]
mod simd {
    use std::arch::x86_64::*;
    use std::sync::OnceLock;

    /// True when the CPU can run [`collapse`].
    pub(super) fn available() -> bool {
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| is_x86_feature_detected!("ssse3") && is_x86_feature_detected!("popcnt"))
    }

    /// For each 8-bit mask of bytes to drop, the `pshufb` control that moves the kept bytes of
    /// an 8-byte group to its front, in order.
    static PACK: [[u8; 8]; 256] = {
        let mut t = [[0x80u8; 8]; 256];
        let mut m = 0;
        while m < 256 {
            let mut k = 0;
            let mut i = 0;
            while i < 8 {
                if m & (1 << i) == 0 {
                    t[m][k] = i as u8;
                    k += 1;
                }
                i += 1;
            }
            m += 1;
        }
        t
    };

    /// Collapses, maps white space to ' ' and (with `lowercase`) lowercases the whole 16-byte
    /// blocks of `bytes`, all ASCII, into `out`; `prev` says whether the last byte written was a
    /// space. Returns how many bytes were read and written.
    ///
    /// # Safety
    /// The CPU must support SSSE3 and POPCNT, and `out` must hold `bytes.len() + 16` bytes.
    #[target_feature(enable = "ssse3,popcnt")]
    pub(super) unsafe fn collapse(
        bytes: &[u8],
        out: &mut [u8],
        lowercase: bool,
        prev: &mut bool,
    ) -> (usize, usize) {
        assert!(out.len() >= bytes.len() + super::SIMD_SLACK);
        let blocks = bytes.len() / 16;
        let mut w = 0;
        let mut carry = u32::from(*prev);
        let space = _mm_set1_epi8(b' ' as i8);
        let (tab_lo, tab_hi) = (_mm_set1_epi8(0x08), _mm_set1_epi8(0x0E));
        let (up_lo, up_hi) = (_mm_set1_epi8(b'A' as i8 - 1), _mm_set1_epi8(b'Z' as i8 + 1));
        let case = _mm_set1_epi8(if lowercase { 0x20 } else { 0 });
        for b in 0..blocks {
            // SAFETY: block `b` lies within `bytes`; unaligned loads and stores are allowed.
            unsafe {
                let mut x = _mm_loadu_si128(bytes.as_ptr().add(b * 16).cast());
                // White space: ' ' and \t..\r (the ASCII white space of `char::is_whitespace`).
                // Signed compares are right because every byte is below 0x80.
                let ctl = _mm_and_si128(_mm_cmpgt_epi8(x, tab_lo), _mm_cmplt_epi8(x, tab_hi));
                let ws = _mm_or_si128(_mm_cmpeq_epi8(x, space), ctl);
                x = _mm_or_si128(_mm_andnot_si128(ws, x), _mm_and_si128(ws, space));
                let upper = _mm_and_si128(_mm_cmpgt_epi8(x, up_lo), _mm_cmplt_epi8(x, up_hi));
                x = _mm_or_si128(x, _mm_and_si128(upper, case));
                let sp = _mm_movemask_epi8(ws) as u32;
                let drop = sp & ((sp << 1) | carry);
                carry = sp >> 15;
                let (d0, d1) = (drop & 0xFF, drop >> 8);
                let c0 = _mm_loadl_epi64(PACK[d0 as usize].as_ptr().cast());
                let c1 = _mm_loadl_epi64(PACK[d1 as usize].as_ptr().cast());
                let p0 = _mm_shuffle_epi8(x, c0);
                let p1 = _mm_shuffle_epi8(_mm_srli_si128::<8>(x), c1);
                _mm_storel_epi64(out.as_mut_ptr().add(w).cast(), p0);
                w += 8 - d0.count_ones() as usize;
                _mm_storel_epi64(out.as_mut_ptr().add(w).cast(), p1);
                w += 8 - d1.count_ones() as usize;
            }
        }
        *prev = carry != 0;
        (blocks * 16, w)
    }
}

/// Writes normalized text, carrying the "last output was a space" state across the ASCII runs
/// and the Unicode segments.
struct Writer {
    buf: Vec<u8>,
    in_space: bool,
    opts: NormalizeOptions,
    /// A segment's case-folded text, before its second NFKC pass.
    folded: String,
}

impl Writer {
    /// An ASCII run: no Unicode tables, no branches on the common path.
    fn ascii(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let o = self.opts;
        if !o.collapse_whitespace {
            if o.lowercase {
                self.buf.extend(bytes.iter().map(u8::to_ascii_lowercase));
            } else {
                self.buf.extend_from_slice(bytes);
            }
            return;
        }
        let start = self.buf.len();
        // Room for the whole run plus the slack of the SIMD path's full-width stores.
        self.buf.resize(start + bytes.len() + SIMD_SLACK, 0);
        let out = &mut self.buf[start..];
        let mut w = 0;
        let mut prev = self.in_space;
        #[cfg(target_arch = "x86_64")]
        let bytes = if simd::available() {
            // SAFETY: the CPU has SSSE3 and POPCNT (checked), `out` has `bytes.len()` + 16 bytes.
            let (read, written) = unsafe { simd::collapse(bytes, out, o.lowercase, &mut prev) };
            w = written;
            &bytes[read..]
        } else {
            bytes
        };
        // Eight bytes at a time (SWAR): control white space becomes ' ', capitals get their
        // 0x20 bit; when no two spaces meet, the eight bytes are copied as they are.
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut x = u64::from_le_bytes(c.try_into().expect("eight bytes"));
            let ws = lanes_in(x, 0x09, 0x0D);
            x = (x & !((ws >> 7) * 0xFF)) | ((ws >> 7) * 0x20);
            if o.lowercase {
                x |= lanes_in(x, b'A', b'Z') >> 2;
            }
            let sp = lanes_in(x, b' ', b' ');
            if sp & ((sp << 8) | ((prev as u64) << 7)) == 0 {
                out[w..w + 8].copy_from_slice(&x.to_le_bytes());
                w += 8;
                prev = sp >> 63 != 0;
            } else {
                // Branch-free: every byte is written, a repeated space is then overwritten.
                let tail = &mut out[w..w + 8];
                let mut v = 0;
                for b in x.to_le_bytes() {
                    let space = b == b' ';
                    tail[v] = b;
                    v += (!(space & prev)) as usize;
                    prev = space;
                }
                w += v;
            }
        }
        for &b in chunks.remainder() {
            let c = ASCII_CLASS[(b & 0x7f) as usize];
            let space = c >> 7 == 1;
            if !(space && prev) {
                out[w] = match (space, o.lowercase) {
                    (true, _) => b' ',
                    (false, true) => c,
                    (false, false) => b,
                };
                w += 1;
            }
            prev = space;
        }
        self.in_space = prev;
        self.buf.truncate(start + w);
    }

    /// A segment of the Unicode path: NFKC, case folding and NFKC again (each when on; the
    /// quick check skips an NFKC pass over text already in that form, and the second pass is
    /// skipped when folding changed nothing), then white space.
    fn segment(&mut self, seg: &str) {
        let o = self.opts;
        let nfkc = o.nfkc && is_nfkc_quick(seg.chars()) != IsNormalized::Yes;
        if !o.lowercase {
            if nfkc {
                self.chars(seg.nfkc());
            } else {
                self.chars(seg.chars());
            }
            return;
        }
        let mut folded = std::mem::take(&mut self.folded);
        folded.clear();
        let changed = if nfkc {
            fold_into(seg.nfkc(), &mut folded)
        } else {
            fold_into(seg.chars(), &mut folded)
        };
        if changed && o.nfkc && is_nfkc_quick(folded.chars()) != IsNormalized::Yes {
            self.chars(folded.nfkc());
        } else {
            self.chars(folded.chars());
        }
        self.folded = folded;
    }

    /// Characters from the Unicode path, already case-folded when folding is on.
    fn chars(&mut self, chars: impl Iterator<Item = char>) {
        let collapse = self.opts.collapse_whitespace;
        let mut tmp = [0u8; 4];
        for c in chars {
            if collapse && c.is_whitespace() {
                if !self.in_space {
                    self.buf.push(b' ');
                    self.in_space = true;
                }
                continue;
            }
            self.in_space = false;
            self.buf
                .extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_collapses_lowercases_and_trims() {
        let n = normalize(
            "  Hello,\t\tWORLD \n\n again  ",
            &NormalizeOptions::default(),
        );
        assert_eq!(n, "hello, world again");
    }

    #[test]
    fn nfkc_folds_compatibility_characters() {
        // Full-width letters and the "fi" ligature fold to plain ASCII.
        let n = normalize("ＡＢＣ ﬁle", &NormalizeOptions::default());
        assert_eq!(n, "abc file");
    }

    #[test]
    fn unicode_white_space_collapses_too() {
        let n = normalize("a\u{00A0}\u{2003} b\u{3000}c", &NormalizeOptions::default());
        assert_eq!(n, "a b c");
    }

    #[test]
    fn each_step_can_be_turned_off() {
        let text = "  A  B ";
        let mut o = NormalizeOptions {
            lowercase: false,
            ..Default::default()
        };
        assert_eq!(normalize(text, &o), "A B");
        o.collapse_whitespace = false;
        assert_eq!(normalize(text, &o), "A  B");
        o.trim = false;
        assert_eq!(normalize(text, &o), "  A  B ");
        assert_eq!(normalize("ＡＢ", &NormalizeOptions::none()), "ＡＢ");
    }

    /// The plain definition: NFKC of the whole text, then case folding and NFKC again, then
    /// collapse and trim char by char. The fast paths must give exactly this.
    fn reference(text: &str, opts: &NormalizeOptions) -> String {
        let mut chars: Vec<char> = if opts.nfkc {
            text.nfkc().collect()
        } else {
            text.chars().collect()
        };
        if opts.lowercase {
            chars = chars.into_iter().default_case_fold().collect();
            if opts.nfkc {
                chars = chars.into_iter().nfkc().collect();
            }
        }
        let mut out = String::new();
        let mut in_space = opts.trim;
        for c in chars {
            if opts.collapse_whitespace && c.is_whitespace() {
                if !in_space {
                    out.push(' ');
                    in_space = true;
                }
                continue;
            }
            in_space = false;
            out.push(c);
        }
        if opts.trim {
            out = out.trim().to_string();
        }
        out
    }

    fn all_options() -> Vec<NormalizeOptions> {
        (0..16)
            .map(|m| NormalizeOptions {
                nfkc: m & 1 != 0,
                lowercase: m & 2 != 0,
                collapse_whitespace: m & 4 != 0,
                trim: m & 8 != 0,
            })
            .collect()
    }

    #[test]
    fn fast_paths_match_the_definition_on_tricky_text() {
        // Combining marks after ASCII letters compose with them; Hangul jamo compose with each
        // other; full-width, ligatures and fractions decompose; Unicode spaces sit between
        // ASCII; the Turkish dotted capital I folds to two chars; sharp s folds to two ASCII
        // letters; ΐ folds to three chars that compose again, and its capital to two; the
        // Kelvin sign and the long s fold to ASCII; a final sigma folds to a plain one.
        let cases = [
            "e\u{301}te\u{301} Cafe\u{301}\u{327}",
            "\u{1100}\u{1161}\u{11A8} x \u{1100}\u{1161}",
            "ＡＢＣ ﬁle ½ №5 ｶﾀｶﾅ",
            "a\u{00A0}\u{2003} b\u{3000}c \u{0130}stanbul",
            "  \t\u{2028}Mixed ASCII and ÜNICÖDE\r\n\x0b text  \u{00A0}",
            "plain ascii only  text\n",
            "\u{301}leading combining mark",
            "Die große Straße, DIE GROSSE STRASSE, ẞ",
            "ΐ \u{3aa}\u{301} ΰ ǰ J\u{30c} ŉ ᾳ ᾼ \u{345}",
            "\u{212a}elvin ſ ΣΊΣΥΦΟΣ σίσυφος ς",
            "\u{130}I ı i \u{130}\u{301}",
            "",
        ];
        for text in cases {
            for opts in all_options() {
                assert_eq!(
                    normalize(text, &opts),
                    reference(text, &opts),
                    "{text:?} {opts:?}"
                );
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn fast_paths_match_the_definition(
            text in "[a-zA-Z \\t\\n\\r\\x0b\\x0c.,\u{300}-\u{36f}\u{a0}\u{e9}\u{c9}\u{1100}-\u{1112}\u{1161}-\u{1175}\u{11a8}-\u{11c2}\u{ff21}-\u{ff3a}\u{fb01}\u{2003}\u{3000}\u{130}\u{131}\u{3b1}-\u{3c9}\u{390}\u{3aa}\u{3b0}\u{391}-\u{3a9}\u{345}\u{1fb3}\u{1fbc}\u{df}\u{1e9e}\u{17f}\u{212a}\u{149}\u{1f0}]{0,40}",
            m in 0u8..16,
        ) {
            let opts = all_options()[m as usize];
            proptest::prop_assert_eq!(normalize(&text, &opts), reference(&text, &opts));
        }
    }

    // Long ASCII runs, so that the 16-byte SIMD blocks and their boundaries are exercised.
    proptest::proptest! {
        #[test]
        fn ascii_runs_match_the_definition(
            text in "[a-zA-Z0-9 \\t\\n\\r\\x0b\\x0c.,@`{~]{0,300}",
            m in 0u8..16,
        ) {
            let opts = all_options()[m as usize];
            proptest::prop_assert_eq!(normalize(&text, &opts), reference(&text, &opts));
        }
    }

    #[test]
    fn runs_of_spaces_across_simd_blocks_collapse() {
        // A run of white space that starts at every offset around the 16-byte block edges.
        for at in 0..40 {
            for len in 1..20 {
                let text = format!("{}{}Z", "A".repeat(at), " \t\n".repeat(len));
                let want = format!("{} z", "a".repeat(at));
                let want = want.trim_start();
                assert_eq!(normalize(&text, &Default::default()), want, "{at} {len}");
            }
        }
    }

    #[test]
    fn describe_names_the_steps() {
        assert_eq!(
            NormalizeOptions::default().describe(),
            "nfkc+casefold+whitespace+trim"
        );
        assert_eq!(NormalizeOptions::none().describe(), "none");
    }

    #[test]
    fn case_folding_is_caseless_matching() {
        let n = |t: &str| normalize(t, &NormalizeOptions::default());
        // A word's last sigma is ς in lower case and Σ in capitals: both fold to σ.
        let greek = "Ο Σίσυφος κυλούσε την πέτρα του στην κορυφή του λόφου, ξανά και ξανά.";
        assert_eq!(n(greek), n(&greek.to_uppercase()));
        assert_eq!(n("ΟΔΟΣ"), "οδοσ");
        assert_eq!(n("οδός"), "οδόσ");
        // Sharp s, small and capital, is ss.
        let german = "Die große Straße";
        assert_eq!(n(german), "die grosse strasse");
        assert_eq!(n(&german.to_uppercase()), n(german));
        assert_eq!(n("GROẞE"), "grosse");
        // ΐ folds to ι with two marks; they compose again, as its capital folds.
        assert_eq!(n("ΐ"), "ΐ");
        assert_eq!(n("ΐ".to_uppercase().as_str()), "ΐ");
        // Turkish: the dotted capital keeps its dot as a combining mark (the default, not the
        // Turkic, folding), so it meets the lower case that keeps the dot too, and the dotless
        // small ı stays a letter of its own; ASCII I is i.
        assert_eq!(n("İSTANBUL"), "i\u{307}stanbul");
        assert_eq!(n("İSTANBUL"), n("i\u{307}stanbul"));
        assert_eq!(n("IŞIK ışık"), "işik ışık");
        // With the step off, case stays.
        let off = NormalizeOptions {
            lowercase: false,
            ..Default::default()
        };
        assert_eq!(normalize("Straße ΟΔΟΣ", &off), "Straße ΟΔΟΣ");
    }

    /// The bit table of characters that fold answers as `caseless` does, for every character.
    #[test]
    fn the_fold_table_covers_every_character() {
        let table = fold_table();
        let mut folding = 0;
        for c in (0..=char::MAX as u32).filter_map(char::from_u32) {
            assert_eq!(has_folding(table, c), folds(c), "U+{:04X}", c as u32);
            folding += usize::from(folds(c));
        }
        // CaseFolding.txt has some 1,500 C and F mappings.
        assert!((1400..2000).contains(&folding), "{folding}");
        assert!(has_folding(table, 'Σ') && has_folding(table, 'ς') && !has_folding(table, 'σ'));
    }

    #[test]
    fn caseless_keys_fold_as_the_normalization_does() {
        for w in [
            "the", "The", "daß", "DASS", "τους", "ΤΟΥΣ", "ΐ", "ﬁle", "İ", "ı", "naïve",
        ] {
            assert_eq!(
                caseless_key(w),
                normalize(w, &NormalizeOptions::default()),
                "{w}"
            );
        }
        assert!(matches!(caseless_key("the"), Cow::Borrowed(_)));
        assert!(matches!(caseless_key("naïve"), Cow::Borrowed(_)));
        assert!(matches!(caseless_key("τουσ"), Cow::Borrowed(_)));
        assert!(matches!(caseless_key("τους"), Cow::Owned(_)));
    }
}
