//! Reports of the index commands, in the same two formats as a scan.
//!
//! `ndup query` in JSON lines:
//!
//! - `params` (first): the parameters of the run, as in a scan;
//! - `index`: the index file, its format version, parameter fingerprint and size;
//! - `match`: `{"type":"match","query":..,"indexed":..,"estimate":..,"jaccard":..}`, grouped by
//!   query document in the order given, best first; `jaccard` only when computed;
//! - `skip`: a document that was not compared (or not verified exactly), with the reason;
//! - `summary` (last): the counts, with `signed`, the query documents signed.
//!
//! `ndup index build|add|update|remove`: `skip` records, then a `summary` with what changed:
//! `documents` (in the index afterwards), `added`, `updated`, `unchanged`, `removed`, `read`
//! (files read because they were new or their size or mtime changed) and `signed`.

use std::io::{self, Write};
use std::path::Path;

use super::Format;
use super::jsonl::line;
use super::records::{
    IndexRecord, IndexSummary, IndexTag, MatchRecord, MatchTag, ParamsRecord, QuerySummary,
    SkipRecord,
};
use crate::index::{INDEX_FORMAT_VERSION, QueryReport, SyncReport};
use crate::model::Skip;

fn skip_lines(skipped: &[Skip], format: Format, w: &mut dyn Write) -> io::Result<()> {
    for s in skipped {
        match format {
            Format::Jsonl | Format::Csv | Format::Sarif | Format::Github | Format::Html => {
                line(w, &SkipRecord::from(s))?
            }
            Format::Text => writeln!(
                w,
                "skipped {}: {}",
                super::printable(&s.id),
                super::printable(&s.reason)
            )?,
        }
    }
    Ok(())
}

/// Writes the report of `ndup query` against the index at `index`.
pub fn write_query(
    r: &QueryReport,
    index: &Path,
    format: Format,
    w: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Jsonl | Format::Csv | Format::Sarif | Format::Github | Format::Html => {
            line(w, &ParamsRecord::from(&r.params))?;
            line(
                w,
                &IndexRecord {
                    kind: IndexTag::Tag,
                    path: &index.to_string_lossy(),
                    format_version: INDEX_FORMAT_VERSION,
                    fingerprint: &r.fingerprint,
                    documents: r.stats.indexed,
                },
            )?;
            for m in &r.matches {
                line(
                    w,
                    &MatchRecord {
                        kind: MatchTag::Tag,
                        query: &r.queries[m.query as usize],
                        indexed: &m.indexed,
                        estimate: m.estimate,
                        jaccard: m.jaccard,
                    },
                )?;
            }
            skip_lines(&r.skipped, format, w)?;
            line(w, &QuerySummary::from(&r.stats))
        }
        Format::Text => {
            if r.matches.is_empty() {
                writeln!(w, "no similar indexed documents")?;
            } else {
                let width = r
                    .matches
                    .iter()
                    .map(|m| super::printable(&r.queries[m.query as usize]).len())
                    .max()
                    .unwrap_or(5)
                    .max(5);
                writeln!(w, "estimate  jaccard  {:width$}  indexed", "query")?;
                for m in &r.matches {
                    let j = m
                        .jaccard
                        .map_or("      -".to_string(), |j| format!("{j:7.4}"));
                    writeln!(
                        w,
                        "{:8.4}  {j}  {:width$}  {}",
                        m.estimate,
                        super::printable(&r.queries[m.query as usize]),
                        super::printable(&m.indexed)
                    )?;
                }
            }
            skip_lines(&r.skipped, format, w)
        }
    }
}

/// Writes the report of `ndup index <command>`.
pub fn write_sync(
    r: &SyncReport,
    command: &str,
    format: Format,
    w: &mut dyn Write,
) -> io::Result<()> {
    skip_lines(&r.skipped, format, w)?;
    match format {
        Format::Jsonl | Format::Csv | Format::Sarif | Format::Github | Format::Html => {
            line(w, &IndexSummary::new(r, command))
        }
        Format::Text => writeln!(w, "{}", sync_counts(r)),
    }
}

fn sync_counts(r: &SyncReport) -> String {
    format!(
        "{} documents in the index: {} added, {} updated, {} unchanged, {} removed; {} read, {} signed",
        r.documents, r.added, r.updated, r.unchanged, r.removed, r.read, r.signed
    )
}

/// The one-line human summary of an index command, for stderr.
pub fn sync_summary_line(r: &SyncReport, command: &str) -> String {
    let mut s = format!("ndup index {command}: {}", sync_counts(r));
    s += &super::skipped_phrase(
        "; ",
        [
            r.skipped_binary,
            r.skipped_unreadable,
            r.skipped_malformed,
            r.skipped_too_large,
        ],
    );
    s + &format!(" in {:.2} s", r.elapsed.as_secs_f64())
}

/// The one-line human summary of a query, for stderr.
pub fn query_summary_line(r: &QueryReport) -> String {
    let st = &r.stats;
    let mut s = format!(
        "ndup query: {} documents against {} indexed",
        st.queries, st.indexed
    );
    if st.empty > 0 {
        s += &format!(" ({} empty)", st.empty);
    }
    s += &super::skipped_phrase(
        ", ",
        [
            st.skipped_binary,
            st.skipped_unreadable,
            st.skipped_malformed,
            st.skipped_too_large,
        ],
    );
    s += &format!(", {} candidates", st.candidates);
    if st.exact_checked > 0 {
        s += &format!(" ({} verified exactly)", st.exact_checked);
    }
    s + &format!(
        ", {} matches in {:.3} s",
        st.matches,
        st.elapsed.as_secs_f64()
    )
}
