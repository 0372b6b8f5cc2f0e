//! Baselines: the pairs a project has accepted, so that a CI gate fails only on new ones.
//!
//! `ndup scan docs --write-baseline ndup-baseline.json` records every pair the scan reports;
//! `--baseline ndup-baseline.json` then removes those pairs from later reports (and from the
//! gates). A pair is identified by its two ids, in either order; its similarity may change
//! without making it new. The file is JSON, one pair per line so that its diffs read well:
//!
//! ```json
//! {
//!   "type": "ndup-baseline",
//!   "format_version": 1,
//!   "ndup_version": "0.1.0",
//!   "pairs": [
//!     ["docs/a.md", "docs/b.md"]
//!   ]
//! }
//! ```

use std::collections::HashSet;
use std::io::{self, Write};
use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::find::ScanReport;

/// The version of the baseline file format.
pub(crate) const BASELINE_FORMAT_VERSION: u32 = 1;

/// A set of accepted pairs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Baseline {
    pairs: HashSet<(String, String)>,
}

#[derive(Deserialize)]
struct File {
    #[serde(rename = "type")]
    kind: String,
    format_version: u32,
    pairs: Vec<(String, String)>,
}

fn ordered(a: &str, b: &str) -> (String, String) {
    if a <= b {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    }
}

impl Baseline {
    /// Every pair of `report`.
    pub fn from_report(report: &ScanReport) -> Self {
        Baseline {
            pairs: report
                .pairs
                .iter()
                .map(|p| ordered(report.id(p.a), report.id(p.b)))
                .collect(),
        }
    }

    /// Number of pairs.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// True when no pair is accepted.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// True when the pair `(a, b)`, in either order, is accepted.
    pub fn contains(&self, a: &str, b: &str) -> bool {
        self.pairs.contains(&ordered(a, b))
    }

    /// Reads a baseline file.
    pub fn load(path: &Path) -> Result<Self> {
        let text = crate::source::files::read_side_text(path).map_err(|e| Error::io(path, e))?;
        let bad = |reason: String| Error::BadInput {
            path: path.to_path_buf(),
            reason,
        };
        let f: File = serde_json::from_str(crate::text::strip_bom(&text))
            .map_err(|e| bad(format!("not an ndup baseline: {e}")))?;
        if f.kind != "ndup-baseline" {
            return Err(bad(format!("type is `{}`, not `ndup-baseline`", f.kind)));
        }
        if f.format_version != BASELINE_FORMAT_VERSION {
            return Err(bad(format!(
                "baseline format {} is not supported (this ndup writes {BASELINE_FORMAT_VERSION})",
                f.format_version
            )));
        }
        Ok(Baseline {
            pairs: f.pairs.iter().map(|(a, b)| ordered(a, b)).collect(),
        })
    }

    /// Writes the baseline, pairs sorted, one per line.
    pub fn write(&self, w: &mut dyn Write) -> io::Result<()> {
        let mut pairs: Vec<&(String, String)> = self.pairs.iter().collect();
        pairs.sort();
        let s = |x: &str| serde_json::to_string(x).expect("a string serializes");
        writeln!(w, "{{")?;
        writeln!(w, "  \"type\": \"ndup-baseline\",")?;
        writeln!(w, "  \"format_version\": {BASELINE_FORMAT_VERSION},")?;
        writeln!(w, "  \"ndup_version\": {},", s(env!("CARGO_PKG_VERSION")))?;
        write!(w, "  \"pairs\": [")?;
        for (i, (a, b)) in pairs.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            write!(w, "{sep}\n    [{}, {}]", s(a), s(b))?;
        }
        if !pairs.is_empty() {
            write!(w, "\n  ")?;
        }
        writeln!(w, "]")?;
        writeln!(w, "}}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_in_either_order() {
        let b = Baseline {
            pairs: [ordered("z \"q\".md", "a.md"), ordered("b", "c")]
                .into_iter()
                .collect(),
        };
        let mut out = Vec::new();
        b.write(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("\n    [\"a.md\", \"z \\\"q\\\".md\"]"),
            "{text}"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.json");
        std::fs::write(&path, &text).unwrap();
        let back = Baseline::load(&path).unwrap();
        assert_eq!(back, b);
        assert!(back.contains("z \"q\".md", "a.md") && back.contains("c", "b"));
        assert!(!back.contains("a.md", "b"));

        let mut out = Vec::new();
        Baseline::default().write(&mut out).unwrap();
        std::fs::write(&path, &out).unwrap();
        assert!(Baseline::load(&path).unwrap().is_empty());
    }

    #[test]
    fn other_files_are_refused_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.json");
        std::fs::write(&path, r#"{"type":"params","format_version":1,"pairs":[]}"#).unwrap();
        let e = Baseline::load(&path).unwrap_err().to_string();
        assert!(e.contains("not `ndup-baseline`"), "{e}");
        std::fs::write(&path, "[]").unwrap();
        let e = Baseline::load(&path).unwrap_err().to_string();
        assert!(e.contains("not an ndup baseline"), "{e}");
    }
}
