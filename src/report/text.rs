//! A readable report: pairs grouped by their first document, each near-duplicate indented under
//! it with its measures; or, with `--clusters`, each cluster with its members indented. Skipped
//! documents are listed last. With `color`, ids are bold, measures yellow and skips dimmed.

use std::io::{self, Write};

use anstyle::{AnsiColor, Style};

use super::{ReportOptions, Reporter, measures, printable};
use crate::find::ScanReport;

/// The text reporter.
pub struct Text;

struct Paint {
    head: Style,
    value: Style,
    dim: Style,
}

impl Paint {
    fn new(color: bool) -> Self {
        if color {
            Paint {
                head: Style::new().bold(),
                value: AnsiColor::Yellow.on_default(),
                dim: Style::new().dimmed(),
            }
        } else {
            Paint {
                head: Style::new(),
                value: Style::new(),
                dim: Style::new(),
            }
        }
    }
}

impl Reporter for Text {
    fn write(&self, r: &ScanReport, opts: &ReportOptions, w: &mut dyn Write) -> io::Result<()> {
        let c = Paint::new(opts.color);
        let (head, value, dim) = (c.head, c.value, c.dim);
        if opts.clusters {
            let groups = r.clusters();
            if groups.is_empty() {
                writeln!(w, "no near-duplicate clusters")?;
            }
            for (i, g) in groups.iter().enumerate() {
                writeln!(w, "{head}cluster {} ({} documents){head:#}", i + 1, g.len())?;
                for &d in g {
                    writeln!(w, "  {}", printable(r.id(d)))?;
                }
            }
        } else if r.pairs.is_empty() {
            writeln!(w, "no near-duplicate pairs")?;
        } else {
            // Pairs are sorted by a, then b: a group is a run of pairs with the same a.
            let mut current = None;
            for p in &r.pairs {
                if current != Some(p.a) {
                    writeln!(w, "{head}{}{head:#}", printable(r.id(p.a)))?;
                    current = Some(p.a);
                }
                writeln!(
                    w,
                    "  ~ {}  {value}({}){value:#}",
                    printable(r.id(p.b)),
                    measures(p)
                )?;
            }
        }
        for s in &r.skipped {
            writeln!(
                w,
                "{dim}skipped {}: {}{dim:#}",
                printable(&s.id),
                printable(&s.reason)
            )?;
        }
        Ok(())
    }
}
