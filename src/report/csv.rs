//! CSV for spreadsheets and data frames, written with the `csv` crate (RFC 4180 quoting).
//!
//! Pairs: a header `a,b,estimate,jaccard,a_in_b,b_in_a`, then one row per pair (a measure that was
//! not computed is an empty cell). With `--clusters`: `cluster,size,member`, one row per member,
//! clusters numbered from 1. Skipped documents and the summary are not rows: they go to stderr.
//!
//! Ids come from the files scanned, which may be anyone's: an id that a spreadsheet would read as
//! a formula (its first character one of `= + - @`, tab or carriage return) is written after a
//! `'`, as OWASP advises, so that opening the report cannot run what a file name says.

use std::borrow::Cow;
use std::io::{self, Write};

use super::{ReportOptions, Reporter};
use crate::find::ScanReport;

/// The CSV reporter.
pub struct Csv;

fn cell(x: Option<f64>) -> String {
    x.map_or_else(String::new, |v| v.to_string())
}

/// `id`, defused for spreadsheets (see the module's documentation).
fn id(id: &str) -> Cow<'_, str> {
    match id.as_bytes().first() {
        Some(b'=' | b'+' | b'-' | b'@' | b'\t' | b'\r') => Cow::Owned(format!("'{id}")),
        _ => Cow::Borrowed(id),
    }
}

/// The I/O error inside a CSV error, so that a closed pipe is still one (`ndup scan | head`).
fn io_error(e: csv::Error) -> io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        kind => io::Error::other(format!("{kind:?}")),
    }
}

impl Reporter for Csv {
    fn write(&self, r: &ScanReport, opts: &ReportOptions, w: &mut dyn Write) -> io::Result<()> {
        write(r, opts, w).map_err(io_error)
    }
}

fn write(r: &ScanReport, opts: &ReportOptions, w: &mut dyn Write) -> csv::Result<()> {
    {
        let mut out = csv::Writer::from_writer(w);
        if opts.clusters {
            out.write_record(["cluster", "size", "member"])?;
            for (i, g) in r.clusters().iter().enumerate() {
                let (n, size) = ((i + 1).to_string(), g.len().to_string());
                for &d in g {
                    out.write_record([n.as_str(), size.as_str(), &*id(r.id(d))])?;
                }
            }
        } else {
            out.write_record(["a", "b", "estimate", "jaccard", "a_in_b", "b_in_a"])?;
            for p in &r.pairs {
                out.write_record([
                    &*id(r.id(p.a)),
                    &*id(r.id(p.b)),
                    &p.estimate.to_string(),
                    &cell(p.jaccard),
                    &cell(p.a_in_b),
                    &cell(p.b_in_a),
                ])?;
            }
        }
        out.flush()?;
    }
    Ok(())
}
