//! GitHub Actions workflow commands: each pair (or cluster) becomes a `::warning` annotation on
//! its first document, shown on the pull request's files and in the job summary; documents that
//! could not be read (not binary or too large ones) become `::notice` annotations.
//!
//! `::warning file=docs/a.md,line=1,title=Near-duplicate::docs/a.md is a near-duplicate of docs/b.md (estimate 0.88)`
//!
//! Property values and messages are escaped as the runner requires (`%`, CR, LF; and `:` and `,`
//! in properties), and other control characters as in every text ndup prints (`\x1b`), so any
//! file name is safe.

use std::io::{self, Write};

use super::{ReportOptions, Reporter, location, measures};
use crate::find::ScanReport;
use crate::model::SkipKind;

/// The GitHub Actions reporter.
pub struct Github;

fn escape_data(s: &str) -> String {
    let s = s
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    // Other control characters would reach the job log raw.
    super::printable(&s).into_owned()
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

fn annotation(
    w: &mut dyn Write,
    level: &str,
    file: &str,
    line: u64,
    title: &str,
    message: &str,
) -> io::Result<()> {
    writeln!(
        w,
        "::{level} file={},line={line},title={}::{}",
        escape_property(file),
        escape_property(title),
        escape_data(message)
    )
}

impl Reporter for Github {
    fn write(&self, r: &ScanReport, opts: &ReportOptions, w: &mut dyn Write) -> io::Result<()> {
        if opts.clusters {
            for g in r.clusters() {
                let (file, line) = location(r, g[0]);
                let others: Vec<&str> = g[1..].iter().map(|&d| r.id(d)).collect();
                let msg = format!(
                    "{} and {} other document(s) are near-duplicates: {}",
                    r.id(g[0]),
                    others.len(),
                    others.join(", ")
                );
                annotation(w, "warning", &file, line, "Near-duplicate cluster", &msg)?;
            }
        } else {
            for p in &r.pairs {
                let (file, line) = location(r, p.a);
                let msg = format!(
                    "{} is a near-duplicate of {} ({})",
                    r.id(p.a),
                    r.id(p.b),
                    measures(p)
                );
                annotation(w, "warning", &file, line, "Near-duplicate", &msg)?;
            }
        }
        for s in &r.skipped {
            if matches!(s.kind, SkipKind::Unreadable | SkipKind::Malformed) {
                writeln!(
                    w,
                    "::notice title={}::{}",
                    escape_property("ndup skipped a document"),
                    escape_data(&format!("{}: {}", s.id, s.reason))
                )?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(escape_property("a,b:c%d\ne"), "a%2Cb%3Ac%25d%0Ae");
        assert_eq!(escape_data("50%: a,b\r\n"), "50%25: a,b%0D%0A");
        assert_eq!(escape_data("\x1b[2Jx"), "\\x1b[2Jx");
    }
}
