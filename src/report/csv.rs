//! CSV for spreadsheets and data frames, written with the `csv` crate (RFC 4180 quoting).
//!
//! Pairs: a header `a,b,estimate,jaccard,a_in_b,b_in_a`, then one row per pair (a measure that was
//! not computed is an empty cell). With `--clusters`: `cluster,size,member`, one row per member,
//! clusters numbered from 1. Skipped documents and the summary are not rows: they go to stderr.

use std::io::{self, Write};

use super::{ReportOptions, Reporter};
use crate::find::ScanReport;

/// The CSV reporter.
pub struct Csv;

fn cell(x: Option<f64>) -> String {
    x.map_or_else(String::new, |v| v.to_string())
}

impl Reporter for Csv {
    fn write(&self, r: &ScanReport, opts: &ReportOptions, w: &mut dyn Write) -> io::Result<()> {
        let mut out = csv::Writer::from_writer(w);
        if opts.clusters {
            out.write_record(["cluster", "size", "member"])?;
            for (i, g) in r.clusters().iter().enumerate() {
                let (n, size) = ((i + 1).to_string(), g.len().to_string());
                for &d in g {
                    out.write_record([n.as_str(), size.as_str(), r.id(d)])?;
                }
            }
        } else {
            out.write_record(["a", "b", "estimate", "jaccard", "a_in_b", "b_in_a"])?;
            for p in &r.pairs {
                out.write_record([
                    r.id(p.a),
                    r.id(p.b),
                    &p.estimate.to_string(),
                    &cell(p.jaccard),
                    &cell(p.a_in_b),
                    &cell(p.b_in_a),
                ])?;
            }
        }
        out.flush()
    }
}
