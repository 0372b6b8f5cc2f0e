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

use super::{ReportOptions, Reporter};
use crate::find::ScanReport;

/// The JSON-lines reporter.
pub struct JsonLines;

#[derive(Serialize)]
struct PairRecord<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    a: &'a str,
    b: &'a str,
    estimate: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    jaccard: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    a_in_b: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    b_in_a: Option<f64>,
}

#[derive(Serialize)]
struct ClusterRecord<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    size: usize,
    members: Vec<&'a str>,
}

#[derive(Serialize)]
struct SkipRecord<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    id: &'a str,
    reason_kind: &'static str,
    reason: &'a str,
}

#[derive(Serialize)]
struct SummaryRecord {
    #[serde(rename = "type")]
    kind: &'static str,
    documents: u64,
    empty: u64,
    skipped_binary: u64,
    skipped_unreadable: u64,
    skipped_malformed: u64,
    skipped_too_large: u64,
    bytes: u64,
    candidates: u64,
    exact_checked: u64,
    oversized_buckets: u64,
    pairs: u64,
    ignored_pairs: u64,
    baseline_pairs: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    clusters: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    signed: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cached: Option<u64>,
}

fn line(w: &mut dyn Write, value: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *w, value)?;
    w.write_all(b"\n")
}

impl Reporter for JsonLines {
    fn write(&self, r: &ScanReport, opts: &ReportOptions, w: &mut dyn Write) -> io::Result<()> {
        line(w, &r.params)?;
        let mut clusters = None;
        if opts.clusters {
            let groups = r.clusters();
            for g in &groups {
                line(
                    w,
                    &ClusterRecord {
                        kind: "cluster",
                        size: g.len(),
                        members: g.iter().map(|&d| r.id(d)).collect(),
                    },
                )?;
            }
            clusters = Some(groups.len());
        } else {
            for p in &r.pairs {
                line(
                    w,
                    &PairRecord {
                        kind: "pair",
                        a: r.id(p.a),
                        b: r.id(p.b),
                        estimate: p.estimate,
                        jaccard: p.jaccard,
                        a_in_b: p.a_in_b,
                        b_in_a: p.b_in_a,
                    },
                )?;
            }
        }
        for s in &r.skipped {
            line(
                w,
                &SkipRecord {
                    kind: "skip",
                    id: &s.id,
                    reason_kind: s.kind.name(),
                    reason: &s.reason,
                },
            )?;
        }
        let st = &r.stats;
        line(
            w,
            &SummaryRecord {
                kind: "summary",
                documents: st.documents,
                empty: st.empty,
                skipped_binary: st.skipped_binary,
                skipped_unreadable: st.skipped_unreadable,
                skipped_malformed: st.skipped_malformed,
                skipped_too_large: st.skipped_too_large,
                bytes: st.bytes,
                candidates: st.candidates,
                exact_checked: st.exact_checked,
                oversized_buckets: st.oversized_buckets,
                pairs: st.pairs,
                ignored_pairs: st.ignored_pairs,
                baseline_pairs: st.baseline_pairs,
                clusters,
                signed: st.signed,
                cached: st.cached,
            },
        )
    }
}
