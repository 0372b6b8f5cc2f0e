//! GitHub Actions workflow commands: each pair (or cluster) becomes a `::warning` annotation on
//! its first document, shown on the pull request's files and in the job summary; documents that
//! could not be read (not binary or too large ones) become `::notice` annotations.
//!
//! `::warning file=docs/a.md,line=1,title=Near-duplicate::docs/a.md is a near-duplicate of docs/b.md (estimate 0.88)`
//!
//! Property values and messages are escaped as the runner requires (`%`, CR, LF; and `:` and `,`
//! in properties), and other control characters as in every text ndup prints (`\x1b`), so any
//! file name is safe.
//!
//! `file=` names the document's real path. The runner reads a workflow command as UTF-8 text and
//! undoes only its own escapes, so a path that is not UTF-8, or that holds a control character
//! other than CR and LF (which the job log would otherwise receive raw), cannot be written
//! there: such an annotation has no `file=` (GitHub shows it on the run, not on a file) rather
//! than one naming another file. Its message still names the document by its id.
//!
//! Actions shows at most [`MAX_ANNOTATIONS`] warnings, and as many notices, per step, and drops
//! the rest without a word. Over the limit the warnings are one per cluster, largest first, as
//! many as fit, and a first `::notice` says how many pairs were grouped and how many clusters,
//! documents and pairs were left out; when the skipped documents' notices would not fit either,
//! the last one that does counts the rest. Under the limits the output is what it always was.

use std::io::{self, Write};

use super::sarif::{Group, counted, largest_first, left_out};
use super::{ReportOptions, Reporter, file_location, measures};
use crate::find::ScanReport;
use crate::model::SkipKind;

/// The GitHub Actions reporter.
pub struct Github;

/// The most annotations of one level (warning, notice) Actions shows for a step.
pub(crate) const MAX_ANNOTATIONS: usize = 10;

/// The title of the notice that says what was grouped or left out.
const LIMIT_TITLE: &str = "ndup annotation limit";

/// The runner's own escapes, which it undoes: `%`, CR and LF.
fn escape_runner(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A message: control characters shown as in every text ndup prints (`\n`, `\x1b`), so that an
/// id cannot break the message's line in the log, then the runner's escapes.
fn escape_data(s: &str) -> String {
    escape_runner(&super::printable(s))
}

/// A property's value, exactly (a path must name its file): the runner's escapes, `:` and `,`.
fn escape_property(s: &str) -> String {
    escape_runner(s).replace(':', "%3A").replace(',', "%2C")
}

/// `path` as the value of `file=`, when the runner can be given exactly it: UTF-8, with no
/// character the escaping would turn into another (a control character other than CR and LF,
/// which `%0D` and `%0A` carry; a bidirectional override).
fn file_property(path: &[u8]) -> Option<String> {
    let s = std::str::from_utf8(path).ok()?;
    let others = s.replace(['\r', '\n'], "");
    match super::printable(&others) {
        std::borrow::Cow::Borrowed(_) => Some(escape_property(s)),
        std::borrow::Cow::Owned(_) => None,
    }
}

/// An annotation at `at` (a file's path and a line), or on the run when the document is in no
/// file (standard input, a text in memory) or its path cannot be written.
fn annotation(
    w: &mut dyn Write,
    level: &str,
    at: Option<(std::borrow::Cow<'_, [u8]>, u64)>,
    title: &str,
    message: &str,
) -> io::Result<()> {
    match at.and_then(|(file, line)| Some((file_property(&file)?, line))) {
        Some((file, line)) => write!(w, "::{level} file={file},line={line},")?,
        None => write!(w, "::{level} ")?,
    }
    writeln!(
        w,
        "title={}::{}",
        escape_property(title),
        escape_data(message)
    )
}

fn cluster_annotation(w: &mut dyn Write, r: &ScanReport, g: &[u32]) -> io::Result<()> {
    let others: Vec<&str> = g[1..].iter().map(|&d| r.id(d)).collect();
    let msg = format!(
        "{} and {} other document(s) are near-duplicates: {}",
        r.id(g[0]),
        others.len(),
        others.join(", ")
    );
    let at = file_location(r, g[0]);
    annotation(w, "warning", at, "Near-duplicate cluster", &msg)
}

fn notice(w: &mut dyn Write, title: &str, message: &str) -> io::Result<()> {
    writeln!(
        w,
        "::notice title={}::{}",
        escape_property(title),
        escape_data(message)
    )
}

impl Reporter for Github {
    fn write(&self, r: &ScanReport, opts: &ReportOptions, w: &mut dyn Write) -> io::Result<()> {
        write_limited(r, opts, w, MAX_ANNOTATIONS)
    }
}

/// The annotations of `r`, at most `max` warnings and `max` notices (at least 2).
pub(crate) fn write_limited(
    r: &ScanReport,
    opts: &ReportOptions,
    w: &mut dyn Write,
    max: usize,
) -> io::Result<()> {
    let max = max.max(2);
    let mut notices = 0;
    if !opts.clusters && r.pairs.len() <= max {
        for p in &r.pairs {
            let msg = format!(
                "{} is a near-duplicate of {} ({})",
                r.id(p.a),
                r.id(p.b),
                measures(p)
            );
            annotation(w, "warning", file_location(r, p.a), "Near-duplicate", &msg)?;
        }
    } else {
        let clusters = r.clusters();
        if opts.clusters && clusters.len() <= max {
            for g in &clusters {
                cluster_annotation(w, r, g)?;
            }
        } else {
            let groups = largest_first(r, clusters);
            let keep = groups.len().min(max);
            for g in &groups[..keep] {
                cluster_annotation(w, r, &g.members)?;
            }
            notice(w, LIMIT_TITLE, &limit_message(r, opts, &groups, keep, max))?;
            notices += 1;
        }
    }
    let skipped: Vec<_> = r
        .skipped
        .iter()
        .filter(|s| matches!(s.kind, SkipKind::Unreadable | SkipKind::Malformed))
        .collect();
    // When they do not all fit, the last notice that does counts the rest.
    let room = max - notices;
    let shown = if skipped.len() <= room {
        skipped.len()
    } else {
        room - 1
    };
    for s in &skipped[..shown] {
        notice(
            w,
            "ndup skipped a document",
            &format!("{}: {}", s.id, s.reason),
        )?;
    }
    if shown < skipped.len() {
        notice(
            w,
            LIMIT_TITLE,
            &format!(
                "{} more documents could not be read or parsed and are not annotated, as GitHub \
                 Actions shows at most {max} notices per step. Run ndup scan with --format text \
                 or --format jsonl to see them all.",
                skipped.len() - shown
            ),
        )?;
    }
    Ok(())
}

/// The notice for a report over `max` warnings: `groups` largest first, the first `keep`
/// annotated.
fn limit_message(
    r: &ScanReport,
    opts: &ReportOptions,
    groups: &[Group],
    keep: usize,
    max: usize,
) -> String {
    let (omitted, what) = left_out(&groups[keep..]);
    let clusters = counted(groups.len(), "cluster");
    match (opts.clusters, omitted) {
        (false, 0) => format!(
            "{} near-duplicate pairs are annotated as {clusters}, largest first, as GitHub \
             Actions shows at most {max} warnings per step. Run ndup scan with --format text or \
             --format jsonl to see every pair.",
            r.pairs.len(),
        ),
        (false, _) => format!(
            "{} near-duplicate pairs in {clusters}: the {keep} largest clusters are annotated, as \
             GitHub Actions shows at most {max} warnings per step. Left out: {what}. Run ndup \
             scan with --format text or --format jsonl to see every pair.",
            r.pairs.len(),
        ),
        (true, _) => format!(
            "{}: the {keep} largest are annotated, as GitHub Actions shows at most {max} warnings \
             per step. Left out: {what}. Run ndup scan --clusters with --format text or --format \
             jsonl to see them all.",
            counted(groups.len(), "near-duplicate cluster"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(escape_property("a,b:c%d\ne"), "a%2Cb%3Ac%25d%0Ae");
        // In a message, CR and LF are shown as in the text report, never given to the log.
        assert_eq!(escape_data("50%: a,b\r\n"), r"50%25: a,b\r\n");
        assert_eq!(escape_data("\x1b[2Jx"), "\\x1b[2Jx");
    }

    #[test]
    fn a_path_the_runner_cannot_be_given_exactly_is_left_out() {
        assert_eq!(
            file_property(b"d/a,b:%\n.md").as_deref(),
            Some("d/a%2Cb%3A%25%0A.md")
        );
        // A literal backslash is a character like any other.
        assert_eq!(
            file_property(br"d/x\xff.md").as_deref(),
            Some(r"d/x\xff.md")
        );
        for path in [
            &b"d/x\xff.md"[..],
            b"d/a\tb.md",
            b"d/\x1b[2J.md",
            "d/\u{202e}dm.a".as_bytes(),
        ] {
            assert_eq!(file_property(path), None, "{path:?}");
        }
        let mut out = Vec::new();
        annotation(
            &mut out,
            "warning",
            Some((std::borrow::Cow::Borrowed(&b"d/x\xff.md"[..]), 1)),
            "Near-duplicate",
            "d/x\\xff.md ...",
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "::warning title=Near-duplicate::d/x\\xff.md ...\n"
        );
    }

    use crate::model::{Skip, SkipKind};
    use crate::report::sarif::tests::clustered;

    fn render(r: &ScanReport, clusters: bool, max: usize) -> String {
        let mut out = Vec::new();
        let opts = ReportOptions {
            clusters,
            ..Default::default()
        };
        write_limited(r, &opts, &mut out, max).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn levels(out: &str) -> Vec<&str> {
        out.lines().map(|l| &l[..l.find(' ').unwrap()]).collect()
    }

    #[test]
    fn at_the_limit_every_pair_is_annotated() {
        // 1 + 3 = 4 pairs.
        let r = clustered(&[2, 3]);
        let out = render(&r, false, 4);
        assert_eq!(out, render(&r, false, MAX_ANNOTATIONS));
        assert_eq!(levels(&out), ["::warning"; 4]);
        assert!(out.contains("title=Near-duplicate::c0-0.md is a near-duplicate of c0-1.md"));
    }

    #[test]
    fn over_the_limit_clusters_largest_first_then_a_notice() {
        // 1 + 3 + 6 = 10 pairs in 3 clusters, over 4.
        let r = clustered(&[2, 3, 4]);
        let out = render(&r, false, 4);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4, "{out}");
        assert!(lines[0].starts_with(
            "::warning file=c2-0.md,line=1,title=Near-duplicate cluster::c2-0.md and 3 other"
        ));
        assert!(lines[1].starts_with("::warning file=c1-0.md,"));
        assert!(lines[2].starts_with("::warning file=c0-0.md,"));
        assert_eq!(
            lines[3],
            "::notice title=ndup annotation limit::10 near-duplicate pairs are annotated as 3 \
             clusters, largest first, as GitHub Actions shows at most 4 warnings per step. Run \
             ndup scan with --format text or --format jsonl to see every pair."
        );
    }

    #[test]
    fn over_the_limit_the_smallest_clusters_are_left_out_and_counted() {
        let r = clustered(&[2, 3, 2, 4, 2, 2]);
        let out = render(&r, false, 4);
        assert_eq!(
            levels(&out),
            [
                "::warning",
                "::warning",
                "::warning",
                "::warning",
                "::notice"
            ]
        );
        assert!(out.ends_with(
            "::notice title=ndup annotation limit::13 near-duplicate pairs in 6 clusters: the 4 \
             largest clusters are annotated, as GitHub Actions shows at most 4 warnings per step. \
             Left out: 2 clusters (4 documents, 2 pairs). Run ndup scan with --format text or \
             --format jsonl to see every pair.\n"
        ), "{out}");
        let clustered_out = render(&r, true, 4);
        assert!(
            clustered_out.ends_with(
                "::notice title=ndup annotation limit::6 near-duplicate clusters: the 4 largest are \
             annotated, as GitHub Actions shows at most 4 warnings per step. Left out: 2 clusters \
             (4 documents, 2 pairs). Run ndup scan --clusters with --format text or --format \
             jsonl to see them all.\n"
        ),
            "{clustered_out}"
        );
    }

    #[test]
    fn skipped_documents_beyond_the_limit_are_counted_in_the_last_notice() {
        let mut r = clustered(&[2, 3, 4]);
        r.skipped = (0..5)
            .map(|i| Skip {
                id: format!("bad-{i}.jsonl:1"),
                kind: SkipKind::Malformed,
                reason: "expected value".into(),
            })
            .collect();
        let out = render(&r, false, 4);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 7, "{out}");
        assert!(lines[3].starts_with("::notice title=ndup annotation limit::10 near-duplicate"));
        assert_eq!(
            lines[4..6],
            [
                "::notice title=ndup skipped a document::bad-0.jsonl:1: expected value",
                "::notice title=ndup skipped a document::bad-1.jsonl:1: expected value",
            ]
        );
        assert_eq!(
            lines[6],
            "::notice title=ndup annotation limit::3 more documents could not be read or parsed \
             and are not annotated, as GitHub Actions shows at most 4 notices per step. Run ndup \
             scan with --format text or --format jsonl to see them all."
        );
        // Under the limit of notices, every skip has one.
        r.skipped.truncate(3);
        assert_eq!(render(&r, false, 4).lines().count(), 3 + 1 + 3);
    }
}
