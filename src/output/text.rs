//! A readable table: one pair per line with the estimate, the exact Jaccard when computed, and the
//! two ids (and both containments with `--containment`); or, with `--clusters`, each cluster with its members indented.

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
            let contained = r.pairs.iter().any(|p| p.a_in_b.is_some());
            let num = |x: Option<f64>| x.map_or("      -".to_string(), |x| format!("{x:7.4}"));
            if contained {
                writeln!(w, "estimate  jaccard   a_in_b   b_in_a  {:width$}  b", "a")?;
            } else {
                writeln!(w, "estimate  jaccard  {:width$}  b", "a")?;
            }
            for p in &r.pairs {
                let extra = if contained {
                    format!("  {}  {}", num(p.a_in_b), num(p.b_in_a))
                } else {
                    String::new()
                };
                writeln!(
                    w,
                    "{:8.4}  {}{extra}  {:width$}  {}",
                    p.estimate,
                    num(p.jaccard),
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
