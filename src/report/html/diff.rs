//! The side-by-side word diff of two normalized texts, as rows of an HTML table.
//!
//! Both texts are cut into tokens, each a word or a run of white space (a very long word is cut
//! into pieces, so that one changed line of minified text does not become one huge change), and
//! `similar`'s patience diff aligns them: tokens found once in each text anchor the alignment,
//! which is cheaper on long texts with moved passages (the same log lines in another order) and
//! reads better, and Myers aligns what lies between anchors. Myers bounds its own work on inputs
//! that differ everywhere (as git's xdiff does), without a deadline, so the same texts always give
//! the same rows. Equal runs longer than twice [`CONTEXT_WORDS`] are collapsed to a row that says
//! how many words were hidden, so a long document shows only the regions that differ. A pair
//! shows at most [`MAX_SHOWN_WORDS`] words of each text; a row then says what is left.

use std::ops::Range;

use similar::{Algorithm, DiffOp, capture_diff_slices};

use super::{count, push_text};

/// Words of equal text kept on each side of a difference.
pub(crate) const CONTEXT_WORDS: usize = 8;

/// An equal run is collapsed only when it hides at least this many words: hiding three words
/// behind a row that says so would save nothing.
const MIN_HIDDEN_WORDS: usize = 8;

/// The most words of each text a pair shows, so that two long documents that differ everywhere
/// cannot make the report huge.
pub(crate) const MAX_SHOWN_WORDS: usize = 1_000;

/// A word longer than this many characters is cut into tokens of this length.
const MAX_TOKEN_CHARS: usize = 64;

/// A text cut into tokens, with the number of words before each token.
struct Side<'t> {
    tokens: Vec<&'t str>,
    /// `words_before[i]`: words among `tokens[..i]` (one more entry than tokens).
    words_before: Vec<usize>,
}

impl<'t> Side<'t> {
    fn new(text: &'t str) -> Self {
        let tokens = tokenize(text);
        let mut words_before = Vec::with_capacity(tokens.len() + 1);
        let mut n = 0;
        words_before.push(0);
        for t in &tokens {
            n += usize::from(is_word(t));
            words_before.push(n);
        }
        Side {
            tokens,
            words_before,
        }
    }

    fn words(&self, r: &Range<usize>) -> usize {
        self.words_before[r.end] - self.words_before[r.start]
    }

    /// `r` without the white space at its ends, unless it is nothing but white space.
    fn trimmed(&self, r: &Range<usize>) -> Range<usize> {
        if self.words(r) == 0 {
            return r.clone();
        }
        let mut t = r.clone();
        while !is_word(self.tokens[t.start]) {
            t.start += 1;
        }
        while !is_word(self.tokens[t.end - 1]) {
            t.end -= 1;
        }
        t
    }

    /// The end of the first `n` words of `r` (the white space after them left out).
    fn after_words(&self, r: &Range<usize>, n: usize) -> usize {
        let target = self.words_before[r.start] + n;
        let mut i = r.start;
        while i < r.end && self.words_before[i + 1] <= target {
            if self.words_before[i + 1] == target && is_word(self.tokens[i]) {
                return i + 1;
            }
            i += 1;
        }
        i
    }

    /// The start of the last `n` words of `r` (the white space before them left out).
    fn before_words(&self, r: &Range<usize>, n: usize) -> usize {
        let target = self.words_before[r.end] - n;
        let mut i = r.end;
        while i > r.start && self.words_before[i - 1] >= target {
            if self.words_before[i - 1] == target && is_word(self.tokens[i - 1]) {
                return i - 1;
            }
            i -= 1;
        }
        i
    }
}

fn is_word(token: &str) -> bool {
    !token.starts_with(char::is_whitespace)
}

/// Words and runs of white space, in order; words longer than [`MAX_TOKEN_CHARS`] in pieces.
fn tokenize(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = 0;
    let mut space: Option<bool> = None;
    for (i, c) in text.char_indices() {
        let ws = c.is_whitespace();
        if space.is_some_and(|s| s != ws) || (!ws && chars == MAX_TOKEN_CHARS) {
            out.push(&text[start..i]);
            start = i;
            chars = 0;
        }
        space = Some(ws);
        chars += 1;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// A stretch of both texts: equal (`a` and `b` hold the same tokens) or differing.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Same(Range<usize>, Range<usize>),
    Diff(Range<usize>, Range<usize>),
}

/// A row of the table: a hunk of pieces shown side by side, or equal words hidden.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Row {
    Hunk(Vec<Piece>),
    Hidden(usize),
}

/// The diff as pieces, adjacent differences merged.
fn pieces(a: &Side<'_>, b: &Side<'_>) -> Vec<Piece> {
    let ops = capture_diff_slices(Algorithm::Patience, &a.tokens, &b.tokens);
    let mut out: Vec<Piece> = Vec::new();
    for op in ops {
        let (ra, rb) = (op.old_range(), op.new_range());
        if let DiffOp::Equal { .. } = op {
            out.push(Piece::Same(ra, rb));
            continue;
        }
        // Two differences with only white space between them are one: text that differs
        // everywhere reads as one struck-out passage, not as every word struck out apart.
        if let [.., Piece::Diff(..), Piece::Same(sa, _)] = &out[..]
            && a.words(sa) == 0
        {
            out.pop();
        }
        match out.last_mut() {
            Some(Piece::Diff(pa, pb)) => {
                pa.end = ra.end;
                pb.end = rb.end;
            }
            _ => out.push(Piece::Diff(ra, rb)),
        }
    }
    out
}

/// The rows of the diff: equal runs between differences cut to [`CONTEXT_WORDS`] on each side
/// when they would hide at least [`MIN_HIDDEN_WORDS`].
fn rows(a: &Side<'_>, pieces: Vec<Piece>) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut hunk = Vec::new();
    let n = pieces.len();
    for (k, piece) in pieces.into_iter().enumerate() {
        let Piece::Same(ra, rb) = piece else {
            hunk.push(piece);
            continue;
        };
        let head = if k == 0 { 0 } else { CONTEXT_WORDS };
        let tail = if k + 1 == n { 0 } else { CONTEXT_WORDS };
        let words = a.words(&ra);
        if words < head + tail + MIN_HIDDEN_WORDS {
            hunk.push(Piece::Same(ra, rb));
            continue;
        }
        // Equal runs hold the same tokens on both sides, so one offset serves both.
        let shift = |i: usize| rb.start + (i - ra.start);
        let head_end = a.after_words(&ra, head);
        let tail_start = a.before_words(&ra, tail);
        if head > 0 {
            hunk.push(Piece::Same(ra.start..head_end, rb.start..shift(head_end)));
        }
        if !hunk.is_empty() {
            rows.push(Row::Hunk(std::mem::take(&mut hunk)));
        }
        rows.push(Row::Hidden(a.words(&(head_end..tail_start))));
        if tail > 0 {
            hunk.push(Piece::Same(tail_start..ra.end, shift(tail_start)..rb.end));
        }
    }
    if !hunk.is_empty() {
        rows.push(Row::Hunk(hunk));
    }
    rows
}

/// What [`write_rows`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct DiffCounts {
    /// Differing passages (runs of deleted, inserted or replaced words).
    pub passages: usize,
    /// Words only in the first text.
    pub removed: usize,
    /// Words only in the second text.
    pub added: usize,
}

/// Appends the rows of the side-by-side diff of `a` and `b` (two cells each: `a`, then `b`) to
/// `out`, and returns what differs.
pub(crate) fn write_rows(out: &mut String, a: &str, b: &str) -> DiffCounts {
    let (sa, sb) = (Side::new(a), Side::new(b));
    let pieces = pieces(&sa, &sb);
    let mut counts = DiffCounts::default();
    for p in &pieces {
        if let Piece::Diff(ra, rb) = p {
            counts.passages += 1;
            counts.removed += sa.words(ra);
            counts.added += sb.words(rb);
        }
    }
    if counts.passages == 0 {
        let words = sa.words(&(0..sa.tokens.len()));
        out.push_str("<tr class=\"same\"><td colspan=\"2\">The normalized texts are identical (");
        out.push_str(&count(words, "word"));
        out.push_str(").</td></tr>\n");
        return counts;
    }
    let rows = rows(&sa, pieces);
    let mut budget = [MAX_SHOWN_WORDS; 2];
    // Differing passages shown (at least in part) on either side, and whether anything was cut.
    let mut shown_passages = 0;
    let mut cut = false;
    for row in &rows {
        if budget[0] == 0 || budget[1] == 0 {
            cut = true;
            break;
        }
        match row {
            Row::Hidden(words) => {
                out.push_str("<tr class=\"gap\"><td colspan=\"2\">⋯ ");
                out.push_str(&count(*words, "word"));
                out.push_str(" the same on both sides ⋯</td></tr>\n");
            }
            Row::Hunk(pieces) => {
                let mut started = vec![false; pieces.len()];
                out.push_str("<tr class=\"hunk\">");
                for (side, text, tag) in [(0, &sa, "del"), (1, &sb, "ins")] {
                    out.push_str(if side == 0 {
                        "<td class=\"a text\">"
                    } else {
                        "<td class=\"b text\">"
                    });
                    // Words of this cell past the budget, said once at its end.
                    let mut rest = 0;
                    for (k, p) in pieces.iter().enumerate() {
                        let (r, changed) = match (p, side) {
                            (Piece::Same(r, _), 0) | (Piece::Same(_, r), _) => (r, false),
                            (Piece::Diff(r, _), 0) | (Piece::Diff(_, r), _) => (r, true),
                        };
                        if r.is_empty() {
                            continue;
                        }
                        if budget[side] == 0 {
                            rest += text.words(r);
                            continue;
                        }
                        started[k] = true;
                        if !changed {
                            rest += push_tokens(out, text, r.clone(), &mut budget[side]);
                            continue;
                        }
                        // The white space at the edges of a change is outside its mark: a
                        // deleted word is `<del>word</del>`, not `<del>word </del>`.
                        let inner = text.trimmed(r);
                        for t in &text.tokens[r.start..inner.start] {
                            push_text(out, t, true);
                        }
                        out.push('<');
                        out.push_str(tag);
                        out.push('>');
                        rest += push_tokens(out, text, inner.clone(), &mut budget[side]);
                        out.push_str("</");
                        out.push_str(tag);
                        out.push('>');
                        for t in &text.tokens[inner.end..r.end] {
                            push_text(out, t, true);
                        }
                    }
                    if rest > 0 {
                        cut = true;
                        out.push_str("<span class=\"more\"> … ");
                        out.push_str(&count(rest, "more word"));
                        out.push_str("</span>");
                    }
                    out.push_str("</td>");
                }
                out.push_str("</tr>\n");
                shown_passages += pieces
                    .iter()
                    .zip(&started)
                    .filter(|(p, s)| matches!(p, Piece::Diff(..)) && **s)
                    .count();
            }
        }
    }
    if cut {
        let left = counts.passages - shown_passages;
        out.push_str("<tr class=\"cut\"><td colspan=\"2\">");
        out.push_str(&format!(
            "The rest is not shown (a pair shows at most {} words of each text)",
            count_number(MAX_SHOWN_WORDS)
        ));
        if left > 0 {
            out.push_str(&format!(
                ": {} more differing {}",
                count_number(left),
                if left == 1 { "passage" } else { "passages" }
            ));
        }
        out.push_str(".</td></tr>\n");
    }
    counts
}

/// Appends the tokens `r` of `side`, escaped, while `budget` words last, and returns how many
/// words of `r` were left out.
fn push_tokens(out: &mut String, side: &Side<'_>, r: Range<usize>, budget: &mut usize) -> usize {
    let words = side.words(&r);
    let end = if words <= *budget {
        r.end
    } else {
        side.after_words(&r, *budget)
    };
    for t in &side.tokens[r.start..end] {
        push_text(out, t, true);
    }
    let shown = words.min(*budget);
    *budget -= shown;
    words - shown
}

fn count_number(n: usize) -> String {
    super::thousands(n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(a: &str, b: &str) -> (String, DiffCounts) {
        let mut out = String::new();
        let c = write_rows(&mut out, a, b);
        (out, c)
    }

    fn words(prefix: &str, n: usize) -> String {
        (0..n)
            .map(|i| format!("{prefix}{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn tokens_alternate_words_and_spaces_and_long_words_are_cut() {
        assert_eq!(tokenize("a bc  d\n"), ["a", " ", "bc", "  ", "d", "\n"]);
        assert_eq!(tokenize(""), Vec::<&str>::new());
        let long = "x".repeat(130);
        let t = tokenize(&long);
        assert_eq!(t.iter().map(|t| t.len()).collect::<Vec<_>>(), [64, 64, 2]);
        let s = Side::new("one two three four");
        assert_eq!(s.words(&(0..s.tokens.len())), 4);
        assert_eq!(s.after_words(&(0..7), 2), 3);
        assert_eq!(s.before_words(&(0..7), 2), 4);
        assert_eq!(s.after_words(&(0..7), 0), 0);
        assert_eq!(s.before_words(&(0..7), 0), 7);
    }

    #[test]
    fn a_changed_word_is_marked_on_both_sides() {
        let (out, c) = table("the quick brown fox", "the quick red fox");
        assert_eq!(
            c,
            DiffCounts {
                passages: 1,
                removed: 1,
                added: 1
            }
        );
        assert_eq!(
            out,
            "<tr class=\"hunk\"><td class=\"a text\">the quick <del>brown</del> fox</td>\
             <td class=\"b text\">the quick <ins>red</ins> fox</td></tr>\n"
        );
    }

    #[test]
    fn an_inserted_word_is_marked_without_the_space_beside_it() {
        let (out, _) = table("one two three", "one new two three");
        assert!(out.contains("one two three</td>"), "{out}");
        assert!(out.contains("one <ins>new</ins> two three</td>"), "{out}");
    }

    #[test]
    fn identical_texts_say_so() {
        let (out, c) = table("a b c", "a b c");
        assert_eq!(c.passages, 0);
        assert!(out.contains("identical (3 words)"), "{out}");
    }

    #[test]
    fn long_equal_runs_are_collapsed_with_their_word_count() {
        let a = format!("{} changed {}", words("p", 100), words("s", 100));
        let b = format!("{} edited {}", words("p", 100), words("s", 100));
        let (out, c) = table(&a, &b);
        assert_eq!(c.passages, 1);
        // 100 words before: 8 kept as context, 92 hidden; the same after.
        assert_eq!(
            out.matches("92 words the same on both sides").count(),
            2,
            "{out}"
        );
        assert!(out.contains("p99 <del>changed</del> s0"), "{out}");
        assert!(!out.contains("p91 "), "{out}");
        assert!(out.contains("p92 "), "{out}");
        assert!(out.contains(" s7</td>") && !out.contains(" s8"), "{out}");
    }

    #[test]
    fn a_short_equal_run_between_changes_is_kept_whole() {
        let a = format!("x {} y", words("m", 20));
        let b = format!("X {} Y", words("m", 20));
        let (out, c) = table(&a, &b);
        assert_eq!(c.passages, 2);
        assert!(!out.contains("the same on both sides"), "{out}");
        assert_eq!(out.matches("<tr class=\"hunk\">").count(), 1);
    }

    #[test]
    fn texts_that_differ_everywhere_are_cut_at_the_word_budget() {
        let a = words("a", 5_000);
        let b = words("b", 5_000);
        let (out, c) = table(&a, &b);
        assert_eq!((c.removed, c.added), (5_000, 5_000));
        assert!(
            out.contains("4,000 more words"),
            "{}",
            &out[out.len() - 400..]
        );
        assert!(out.contains("The rest is not shown") || out.ends_with("</tr>\n"));
        assert!(out.len() < 60_000, "{}", out.len());
    }

    #[test]
    fn many_small_changes_stop_at_the_budget_and_count_the_rest() {
        // 400 changes, each between 30 equal words: far more than 2,000 words to show.
        let a: Vec<String> = (0..400)
            .map(|i| format!("{} a{i}", words("w", 30)))
            .collect();
        let b: Vec<String> = (0..400)
            .map(|i| format!("{} b{i}", words("w", 30)))
            .collect();
        let (out, c) = table(&a.join(" "), &b.join(" "));
        assert_eq!(c.passages, 400);
        assert!(
            out.contains("more differing passages."),
            "{}",
            &out[out.len() - 300..]
        );
        assert!(out.len() < 80_000, "{}", out.len());
    }

    #[test]
    fn markup_in_the_texts_is_escaped() {
        let (out, _) = table("<b>x</b> & y", "<b>z</b> & y");
        assert!(!out.contains("<b>"), "{out}");
        assert!(out.contains("&lt;b&gt;"), "{out}");
        assert!(out.contains("&amp;"), "{out}");
    }
}
