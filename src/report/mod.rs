//! Stage 7: reports. Each format is one file implementing [`Reporter`]; all of them write the
//! same [`ScanReport`] and are tested by parsing their output back.
//!
//! This folder owns the JSON wire format: every JSON record ndup writes (scan, query, index,
//! dedup, tune and compare) is a struct of [`records`], written by [`jsonl`](JsonLines),
//! [`index`], [`dedup`] or [`explain`], and described by the JSON Schemas that [`schema`]
//! generates from those structs (committed in `docs/schema/`).
//!
//! Reports are deterministic: they hold no time stamps or timings (those go to the summary on
//! stderr), so the same input and seed give byte-identical output whatever the thread count.

mod csv;
pub mod dedup;
pub mod explain;
mod github;
pub mod html;
pub mod index;
mod jsonl;
pub mod records;
mod sarif;
pub mod schema;
mod text;

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

pub use csv::Csv;
pub use github::Github;
pub use html::{Html, HtmlOptions};
pub use jsonl::JsonLines;
#[cfg(test)]
use sarif::RULE_ID;
pub use sarif::Sarif;
pub use text::Text;

use crate::find::ScanReport;
use crate::model::{Pair, Stats};
use crate::source::Origin;

/// The report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// JSON lines, one typed record per line (default).
    Jsonl,
    /// A readable report, pairs grouped by their first document.
    Text,
    /// Comma-separated values.
    Csv,
    /// SARIF 2.1.0 for code-scanning tools.
    Sarif,
    /// GitHub Actions workflow-command annotations.
    Github,
    /// One self-contained HTML page: the pairs' texts side by side, with their differences.
    Html,
}

/// What a report shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReportOptions {
    /// Groups instead of pairs.
    pub clusters: bool,
    /// Colour the text report with ANSI escapes. The caller decides (a terminal, no `NO_COLOR`);
    /// other formats ignore it.
    pub color: bool,
}

/// A report format.
pub trait Reporter {
    /// Writes the whole report.
    fn write(&self, report: &ScanReport, opts: &ReportOptions, w: &mut dyn Write)
    -> io::Result<()>;
}

/// The reporter for `format`.
pub fn reporter(format: Format) -> Box<dyn Reporter> {
    match format {
        Format::Jsonl => Box::new(JsonLines),
        Format::Text => Box::new(Text),
        Format::Csv => Box::new(Csv),
        Format::Sarif => Box::new(Sarif),
        Format::Github => Box::new(Github),
        // The report reads documents again: a caller with its own normalization or record
        // fields builds it with `Html::new`.
        Format::Html => Box::new(Html::default()),
    }
}

/// `s` with every control character escaped (`\n`, `\t`, `\x1b`, `\u{85}`) and the bidirectional
/// overrides too, so that a file name chosen by someone else can neither break a line of a text
/// report nor send escape sequences to a terminal.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    fn unsafe_char(c: char) -> bool {
        c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }
    if !s.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 && unsafe_char(c) => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if unsafe_char(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Where document `doc` is, for formats that point at files: the bytes of its path (a file) or
/// of its source's path (a JSON-lines record), and the line it starts on; `None` for a text in
/// memory or a record read from standard input, which are in no file.
///
/// The path, not the id: an id escapes a name that is not UTF-8 (`x\xff.md` for the byte 0xFF,
/// `x\\xff.md` for a file literally named `x\xff.md`), so a location made from the id would
/// name another file, or none.
pub(crate) fn file_location(
    report: &ScanReport,
    doc: u32,
) -> Option<(std::borrow::Cow<'_, [u8]>, u64)> {
    match &report.documents[doc as usize].origin {
        Origin::File(path) => Some((path_bytes(path), 1)),
        Origin::Text { .. } => None,
        Origin::Record { source, line, .. } => source.path().map(|p| (path_bytes(p), *line)),
    }
}

/// [`file_location`], or for a document in no file its id (a record of standard input: its
/// source's name), for SARIF, whose results must have a location.
pub(crate) fn location(report: &ScanReport, doc: u32) -> (std::borrow::Cow<'_, [u8]>, u64) {
    use std::borrow::Cow;
    file_location(report, doc).unwrap_or_else(|| {
        let d = &report.documents[doc as usize];
        match &d.origin {
            Origin::Record { source, line, .. } => (Cow::Borrowed(source.name().as_bytes()), *line),
            _ => (Cow::Borrowed(d.id.as_bytes()), 1),
        }
    })
}

/// The bytes of `path` as the operating system names it (on Unix, whatever they are).
fn path_bytes(path: &std::path::Path) -> std::borrow::Cow<'_, [u8]> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        std::borrow::Cow::Borrowed(path.as_os_str().as_bytes())
    }
    #[cfg(not(unix))]
    {
        // Windows names are Unicode; an unpaired surrogate, which no URI can carry, is lost.
        match path.to_string_lossy() {
            std::borrow::Cow::Borrowed(s) => std::borrow::Cow::Borrowed(s.as_bytes()),
            std::borrow::Cow::Owned(s) => std::borrow::Cow::Owned(s.into_bytes()),
        }
    }
}

/// The measures of a pair for a person: `estimate 0.8984, jaccard 0.8932`.
pub fn measures(p: &Pair) -> String {
    let mut s = format!("estimate {:.4}", p.estimate);
    for (name, v) in [
        ("jaccard", p.jaccard),
        ("a in b", p.a_in_b),
        ("b in a", p.b_in_a),
    ] {
        if let Some(v) = v {
            s += &format!(", {name} {v:.4}");
        }
    }
    s
}

/// Number of items a report lists: clusters with `--clusters`, otherwise pairs.
pub fn reported_items(report: &ScanReport, opts: &ReportOptions) -> usize {
    if opts.clusters {
        report.clusters().len()
    } else {
        report.pairs.len()
    }
}

/// `N skipped (a binary, b unreadable, c malformed, d too large)` after `lead`, naming only the
/// reasons that occurred, from the counts in that order; nothing when nothing was skipped.
pub(crate) fn skipped_phrase(lead: &str, counts: [u64; 4]) -> String {
    let skipped: u64 = counts.iter().sum();
    if skipped == 0 {
        return String::new();
    }
    let why: Vec<String> = counts
        .iter()
        .zip(["binary", "unreadable", "malformed", "too large"])
        .filter(|(n, _)| **n > 0)
        .map(|(n, reason)| format!("{n} {reason}"))
        .collect();
    format!("{lead}{skipped} skipped ({})", why.join(", "))
}

/// The one-line human summary written to stderr, e.g.
/// `ndup: 12 documents (1 empty), 2 skipped (1 binary, 1 unreadable), 3 candidates, 2 pairs in 0.01 s`.
///
/// In exact mode it starts with `exact mode,` and ends with the memory estimate.
pub fn summary_line(stats: &Stats, clusters: Option<usize>) -> String {
    let mut s = "ndup: ".to_string();
    if stats.memory_estimate.is_some() {
        s += "exact mode, ";
    }
    s += &format!("{} documents", stats.documents);
    if stats.empty > 0 {
        s += &format!(" ({} empty)", stats.empty);
    }
    s += &skipped_phrase(
        ", ",
        [
            stats.skipped_binary,
            stats.skipped_unreadable,
            stats.skipped_malformed,
            stats.skipped_too_large,
        ],
    );
    s += &format!(", {} candidates", stats.candidates);
    if stats.exact_checked > 0 {
        s += &format!(" ({} verified exactly)", stats.exact_checked);
    }
    s += &format!(", {} pairs", stats.pairs);
    let accepted: Vec<String> = [
        (stats.ignored_pairs, ".ndupignore"),
        (stats.baseline_pairs, "baseline"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, why)| format!("{n} by {why}"))
    .collect();
    if !accepted.is_empty() {
        s += &format!(
            " (and {} accepted: {})",
            stats.ignored_pairs + stats.baseline_pairs,
            accepted.join(", ")
        );
    }
    if let Some(c) = clusters {
        s += &format!(", {c} clusters");
    }
    if let (Some(signed), Some(cached)) = (stats.signed, stats.cached) {
        s += &format!(" ({signed} signed, {cached} from the index)");
    }
    let secs = stats.elapsed.as_secs_f64();
    let mb = stats.bytes as f64 / 1e6;
    s += &format!(" in {secs:.2} s");
    if secs > 0.0 && mb >= 1.0 {
        s += &format!(" ({:.0} MB/s)", mb / secs);
    }
    if let Some(m) = stats.memory_estimate {
        s += &format!(", memory estimate {}", crate::error::format_bytes(m));
    }
    s
}

#[cfg(test)]
pub(crate) mod tests {
    #[test]
    fn printable_escapes_what_a_terminal_would_act_on() {
        assert_eq!(super::printable("docs/a.md"), "docs/a.md");
        assert_eq!(
            super::printable("x\ntouch PWNED\n#.md"),
            "x\\ntouch PWNED\\n#.md"
        );
        assert_eq!(super::printable("\x1b[31mred\t\r"), "\\x1b[31mred\\t\\r");
        assert_eq!(
            super::printable("a\u{85}b\u{202e}c\u{7f}"),
            "a\\u{85}b\\u{202e}c\\x7f"
        );
        assert_eq!(super::printable("café ☕"), "café ☕");
    }

    use super::*;
    use crate::find::config::ScanConfig;
    use crate::source::Document;
    use std::borrow::Cow;

    /// A report with three documents, two pairs (one with an exact Jaccard) and one skip.
    pub(crate) fn sample() -> ScanReport {
        let doc = |id: &str| Document {
            id: id.into(),
            origin: Origin::File(id.into()),
            empty: false,
        };
        let pair = |a, b, estimate, jaccard| Pair {
            a,
            b,
            estimate,
            jaccard,
            a_in_b: None,
            b_in_a: None,
        };
        ScanReport {
            params: ScanConfig::default().params(),
            documents: vec![
                doc("docs/a.md"),
                doc("docs/b, \"quoted\".md"),
                doc("docs/c.md"),
            ],
            pairs: vec![pair(0, 1, 0.875, Some(0.9)), pair(0, 2, 0.8125, None)],
            skipped: vec![crate::model::Skip {
                id: "docs/x".into(),
                kind: crate::model::SkipKind::Unreadable,
                reason: "Permission denied".into(),
            }],
            stats: Stats::default(),
        }
    }

    /// Two files whose names an id escapes: `x<ff>.md` (id `d/x\xff.md`) and one literally
    /// named `x\xff.md` (id `d/x\\xff.md`); each is located at its own bytes.
    #[cfg(unix)]
    #[test]
    fn a_file_is_located_at_its_path_not_at_its_escaped_id() {
        use std::os::unix::ffi::OsStrExt;
        let mut r = sample();
        let named = |bytes: &[u8]| {
            let path = std::path::Path::new(std::ffi::OsStr::from_bytes(bytes));
            Document {
                id: crate::source::files::display_id(path),
                origin: Origin::File(path.to_path_buf()),
                empty: false,
            }
        };
        r.documents = vec![named(b"d/x\xff.md"), named(br"d/x\xff.md")];
        assert_eq!(r.documents[0].id, r"d/x\xff.md");
        assert_eq!(r.documents[1].id, r"d/x\\xff.md");
        assert_eq!(location(&r, 0), (Cow::Borrowed(&b"d/x\xff.md"[..]), 1));
        assert_eq!(location(&r, 1), (Cow::Borrowed(&br"d/x\xff.md"[..]), 1));
    }

    fn render(format: Format, opts: ReportOptions) -> String {
        let mut out = Vec::new();
        reporter(format).write(&sample(), &opts, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn text_groups_pairs_and_colours_only_when_asked() {
        let plain = render(Format::Text, ReportOptions::default());
        assert_eq!(
            plain,
            "docs/a.md\n  ~ docs/b, \"quoted\".md  (estimate 0.8750, jaccard 0.9000)\n  \
             ~ docs/c.md  (estimate 0.8125)\nskipped docs/x: Permission denied\n"
        );
        let color = render(
            Format::Text,
            ReportOptions {
                color: true,
                ..Default::default()
            },
        );
        assert!(color.contains("\u{1b}[1mdocs/a.md\u{1b}[0m"), "{color:?}");
        assert_ne!(color, plain);
    }

    #[test]
    fn csv_quotes_and_leaves_missing_measures_empty() {
        let out = render(Format::Csv, ReportOptions::default());
        let mut r = ::csv::Reader::from_reader(out.as_bytes());
        assert_eq!(
            r.headers().unwrap(),
            vec!["a", "b", "estimate", "jaccard", "a_in_b", "b_in_a"]
        );
        let rows: Vec<Vec<String>> = r
            .records()
            .map(|x| x.unwrap().iter().map(String::from).collect())
            .collect();
        assert_eq!(
            rows[0][..4],
            ["docs/a.md", "docs/b, \"quoted\".md", "0.875", "0.9"]
        );
        assert_eq!(rows[1][..4], ["docs/a.md", "docs/c.md", "0.8125", ""]);
    }

    #[test]
    fn sarif_has_the_shape_code_scanning_reads() {
        let out = render(Format::Sarif, ReportOptions::default());
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["version"], "2.1.0");
        let run = &v["runs"][0];
        assert_eq!(run["tool"]["driver"]["name"], "ndup");
        assert_eq!(run["tool"]["driver"]["rules"][0]["id"], RULE_ID);
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        let uris: Vec<&str> = results[0]["locations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                l["physicalLocation"]["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap()
            })
            .collect();
        assert_eq!(uris, ["docs/a.md", "docs/b%2C%20%22quoted%22.md"]);
        assert_eq!(results[0]["properties"]["jaccard"], 0.9);
        assert_ne!(
            results[0]["partialFingerprints"]["ndupPair/v1"],
            results[1]["partialFingerprints"]["ndupPair/v1"]
        );
    }

    #[test]
    fn clusters_in_every_file_format() {
        let opts = ReportOptions {
            clusters: true,
            ..Default::default()
        };
        let csv = render(Format::Csv, opts);
        assert_eq!(
            csv,
            "cluster,size,member\n1,3,docs/a.md\n1,3,\"docs/b, \"\"quoted\"\".md\"\n1,3,docs/c.md\n"
        );
        let sarif: serde_json::Value = serde_json::from_str(&render(Format::Sarif, opts)).unwrap();
        let results = sarif["runs"][0]["results"].as_array().unwrap();
        assert_eq!(results.len(), 1);
        assert_eq!(results[0]["locations"].as_array().unwrap().len(), 3);
        assert_eq!(results[0]["properties"]["size"], 3);
        let github = render(Format::Github, opts);
        assert!(
            github.starts_with(
                "::warning file=docs/a.md,line=1,title=Near-duplicate cluster::docs/a.md and 2 \
                 other document(s) are near-duplicates: docs/b, \"quoted\".md, docs/c.md\n"
            ),
            "{github}"
        );
    }

    #[test]
    fn github_annotations() {
        let out = render(Format::Github, ReportOptions::default());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines,
            [
                "::warning file=docs/a.md,line=1,title=Near-duplicate::docs/a.md is a near-duplicate \
                 of docs/b, \"quoted\".md (estimate 0.8750, jaccard 0.9000)",
                "::warning file=docs/a.md,line=1,title=Near-duplicate::docs/a.md is a near-duplicate \
                 of docs/c.md (estimate 0.8125)",
                "::notice title=ndup skipped a document::docs/x: Permission denied",
            ]
        );
    }
}
