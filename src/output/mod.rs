//! Stage 7: reports. Each format is one file implementing [`Reporter`]; all of them write the
//! same [`ScanReport`] and are tested by parsing their output back.
//!
//! Reports are deterministic: they hold no time stamps or timings (those go to the summary on
//! stderr), so the same input and seed give byte-identical output whatever the thread count.

mod jsonl;
mod text;

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

pub use jsonl::JsonLines;
pub use text::Text;

use crate::scan::{ScanReport, Stats};

/// The report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// JSON lines, one typed record per line (default).
    Jsonl,
    /// A readable table.
    Text,
}

/// What a report shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReportOptions {
    /// Groups instead of pairs.
    pub clusters: bool,
}

/// A report format.
pub trait Reporter {
    /// Writes the whole report.
    fn write(&self, report: &ScanReport, opts: &ReportOptions, w: &mut dyn Write)
    -> io::Result<()>;
}

/// The reporter for `format`.
pub fn reporter(format: Format) -> Box<dyn Reporter> {
    match format {
        Format::Jsonl => Box::new(JsonLines),
        Format::Text => Box::new(Text),
    }
}

/// Number of items a report lists: clusters with `--clusters`, otherwise pairs.
pub fn reported_items(report: &ScanReport, opts: &ReportOptions) -> usize {
    if opts.clusters {
        report.clusters().len()
    } else {
        report.pairs.len()
    }
}

/// The one-line human summary written to stderr, e.g.
/// `ndup: 12 documents (1 empty), 2 skipped (1 binary, 1 unreadable), 3 candidates, 2 pairs in 0.01 s`.
///
/// In exact mode it starts with `exact mode,` and ends with the memory estimate.
pub fn summary_line(stats: &Stats, clusters: Option<usize>) -> String {
    let mut s = "ndup: ".to_string();
    if stats.memory_estimate.is_some() {
        s += "exact mode, ";
    }
    s += &format!("{} documents", stats.documents);
    if stats.empty > 0 {
        s += &format!(" ({} empty)", stats.empty);
    }
    let skipped = stats.skipped_binary + stats.skipped_unreadable;
    if skipped > 0 {
        let mut why = Vec::new();
        if stats.skipped_binary > 0 {
            why.push(format!("{} binary", stats.skipped_binary));
        }
        if stats.skipped_unreadable > 0 {
            why.push(format!("{} unreadable", stats.skipped_unreadable));
        }
        s += &format!(", {skipped} skipped ({})", why.join(", "));
    }
    s += &format!(", {} candidates", stats.candidates);
    if stats.exact_checked > 0 {
        s += &format!(" ({} verified exactly)", stats.exact_checked);
    }
    s += &format!(", {} pairs", stats.pairs);
    if let Some(c) = clusters {
        s += &format!(", {c} clusters");
    }
    let secs = stats.elapsed.as_secs_f64();
    let mb = stats.bytes as f64 / 1e6;
    s += &format!(" in {secs:.2} s");
    if secs > 0.0 && mb >= 1.0 {
        s += &format!(" ({:.0} MB/s)", mb / secs);
    }
    if let Some(m) = stats.memory_estimate {
        s += &format!(", memory estimate {}", crate::error::format_bytes(m));
    }
    s
}
