//! Stage 1: text normalization.
//!
//! Near-duplicate detection compares what a reader sees, not how it was typed, so by default the
//! text is put in Unicode NFKC form (full-width letters, ligatures and compatibility characters fold
//! to their plain forms), lowercased, every run of white space becomes one space, and the ends are
//! trimmed. Each step can be switched off on its own.
//!
//! Most corpora are mostly ASCII, and for ASCII text NFKC is the identity, so an ASCII document is
//! normalized in a single pass over its bytes without touching the Unicode tables.

use serde::{Deserialize, Serialize};
use unicode_normalization::UnicodeNormalization;

/// Which normalization steps run. All are on by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NormalizeOptions {
    /// Apply Unicode NFKC (compatibility composition).
    pub nfkc: bool,
    /// Lowercase every character.
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

    /// A short, stable description such as `nfkc+lowercase+whitespace+trim` (or `none`), used in
    /// the parameters record of every report.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.nfkc {
            parts.push("nfkc");
        }
        if self.lowercase {
            parts.push("lowercase");
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
pub fn normalize_into(text: &str, opts: &NormalizeOptions, out: &mut String) {
    out.clear();
    if text.is_ascii() {
        normalize_ascii(text.as_bytes(), opts, out);
    } else if opts.nfkc {
        push_chars(text.nfkc(), opts, out);
    } else {
        push_chars(text.chars(), opts, out);
    }
    if opts.trim {
        // Leading white space was already dropped while pushing when collapsing; trimming here
        // covers the remaining cases with one cheap pass over the ends.
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

fn normalize_ascii(bytes: &[u8], opts: &NormalizeOptions, out: &mut String) {
    let mut buf = std::mem::take(out).into_bytes();
    buf.reserve(bytes.len());
    if !opts.collapse_whitespace {
        if opts.lowercase {
            buf.extend(bytes.iter().map(u8::to_ascii_lowercase));
        } else {
            buf.extend_from_slice(bytes);
        }
    } else {
        // Start "in white space" when trimming so leading blanks never reach the buffer.
        let mut in_space = opts.trim;
        for &b in bytes {
            if is_ascii_space(b) {
                if !in_space {
                    buf.push(b' ');
                    in_space = true;
                }
            } else {
                buf.push(if opts.lowercase {
                    b.to_ascii_lowercase()
                } else {
                    b
                });
                in_space = false;
            }
        }
    }
    // The input was ASCII and only ASCII bytes were written.
    *out = String::from_utf8(buf).expect("ASCII in, ASCII out");
}

/// The white space Rust's `char::is_whitespace` recognises within ASCII (space, \t, \n, \x0B,
/// \x0C, \r), so the ASCII path and the Unicode path agree.
#[inline]
fn is_ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}

fn push_chars(chars: impl Iterator<Item = char>, opts: &NormalizeOptions, out: &mut String) {
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
        if opts.lowercase {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
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

    #[test]
    fn ascii_and_unicode_paths_agree() {
        let opts = NormalizeOptions::default();
        let ascii = "  The Quick\r\n\x0bBrown\x0c fox ";
        let mut s = String::new();
        normalize_ascii(ascii.as_bytes(), &opts, &mut s);
        let mut u = String::new();
        push_chars(ascii.chars(), &opts, &mut u);
        assert_eq!(s.trim_end(), u.trim_end());
    }

    #[test]
    fn describe_names_the_steps() {
        assert_eq!(
            NormalizeOptions::default().describe(),
            "nfkc+lowercase+whitespace+trim"
        );
        assert_eq!(NormalizeOptions::none().describe(), "none");
    }
}
