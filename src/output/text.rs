//! A readable table: one pair per line with the estimate, the exact Jaccard when computed, and the
//! two ids; or, with `--clusters`, each cluster with its members indented.

use std::io::{self, Write};

use super::{ReportOptions, Reporter};
use crate::scan::ScanReport;

/// The text reporter.
pub struct Text;

impl Reporter for Text {
    fn write(&self, r: &ScanReport, opts: &ReportOptions, w: &mut dyn Write) -> io::Result<()> {
        if opts.clusters {
            let groups = r.clusters();
            if groups.is_empty() {
                writeln!(w, "no near-duplicate clusters")?;
            }
            for (i, g) in groups.iter().enumerate() {
                writeln!(w, "cluster {} ({} documents)", i + 1, g.len())?;
                for &d in g {
                    writeln!(w, "  {}", r.id(d))?;
                }
            }
        } else if r.pairs.is_empty() {
            writeln!(w, "no near-duplicate pairs")?;
        } else {
            let width = r.pairs.iter().map(|p| r.id(p.a).len()).max().unwrap_or(1);
            writeln!(w, "estimate  jaccard  {:width$}  b", "a")?;
            for p in &r.pairs {
                let j = p
                    .jaccard
                    .map_or("      -".to_string(), |j| format!("{j:7.4}"));
                writeln!(
                    w,
                    "{:8.4}  {j}  {:width$}  {}",
                    p.estimate,
                    r.id(p.a),
                    r.id(p.b)
                )?;
            }
        }
        for s in &r.skipped {
            writeln!(w, "skipped {}: {}", s.id, s.reason)?;
        }
        Ok(())
    }
}
