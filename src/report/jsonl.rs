//! JSON lines: one record per line, each with a `type`:
//!
//! - `params` (first): the parameters the report was made with;
//! - `pair`: `{"type":"pair","a":..,"b":..,"estimate":..,"jaccard":..}`, `a` < `b`, `jaccard` only
//!   when computed; `a_in_b` and `b_in_a` (containment) with `--containment`;
//! - `cluster` (with `--clusters`, instead of pairs): `{"type":"cluster","size":..,"members":[..]}`;
//! - `skip`: a document that was not compared, with the reason;
//! - `summary` (last): the counts.

use std::io::{self, Write};

use serde::Serialize;

use super::records::{
    ClusterRecord, ClusterTag, PairRecord, ParamsRecord, ScanSummary, SkipRecord,
};
use super::{ReportOptions, Reporter};
use crate::find::ScanReport;

/// The JSON-lines reporter. Its records are those of [`super::records`].
pub struct JsonLines;

/// Writes `value` as one line of JSON.
pub(crate) fn line(w: &mut dyn Write, value: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *w, value)?;
    w.write_all(b"\n")
}

impl Reporter for JsonLines {
    fn write(&self, r: &ScanReport, opts: &ReportOptions, w: &mut dyn Write) -> io::Result<()> {
        line(w, &ParamsRecord::from(&r.params))?;
        let mut clusters = None;
        if opts.clusters {
            let groups = r.clusters();
            for g in &groups {
                line(
                    w,
                    &ClusterRecord {
                        kind: ClusterTag::Tag,
                        size: g.len(),
                        members: g.iter().map(|&d| r.id(d)).collect(),
                    },
                )?;
            }
            clusters = Some(groups.len());
        } else {
            for p in &r.pairs {
                line(w, &PairRecord::new(p, r.id(p.a), r.id(p.b)))?;
            }
        }
        for s in &r.skipped {
            line(w, &SkipRecord::from(s))?;
        }
        line(w, &ScanSummary::new(&r.stats, clusters))
    }
}
