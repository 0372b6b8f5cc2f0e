//! SARIF 2.1.0, the format GitHub code scanning (and most static-analysis viewers) read.
//!
//! One run; the driver is `ndup` with its version and one rule, `ndup/near-duplicate`. Each pair
//! is one result at level `warning` with two locations, the first document then the second (GitHub
//! shows the first, and links the second from the message through `relatedLocations`); with
//! `--clusters`, one result per cluster with every member as a location. A file document is
//! located at its path (a relative URI, `./` removed, so that GitHub finds it in the repository),
//! line 1; a JSON-lines record at its file and line. `partialFingerprints` identify a pair by its
//! two ids, so an alert keeps its identity from one run to the next. The run's `properties` hold
//! the scan parameters.

use std::io::{self, Write};

use serde_json::{Value, json};
use xxhash_rust::xxh3::xxh3_128;

use super::{ReportOptions, Reporter, location, measures};
use crate::find::ScanReport;

/// The SARIF reporter.
pub struct Sarif;

/// The id of the one rule.
pub(crate) const RULE_ID: &str = "ndup/near-duplicate";

/// A path as a relative URI reference (or a `file://` URI when absolute): forward slashes, and
/// percent-encoding for every byte that is not unreserved or a path separator.
pub(crate) fn path_uri(path: &str) -> String {
    let p = path.replace('\\', "/");
    let p = p.trim_start_matches("./");
    let mut out = String::with_capacity(p.len());
    if p.starts_with('/') {
        out.push_str("file://");
    }
    for &b in p.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn physical(r: &ScanReport, doc: u32) -> Value {
    let (file, line) = location(r, doc);
    json!({
        "physicalLocation": {
            "artifactLocation": { "uri": path_uri(&file) },
            "region": { "startLine": line }
        }
    })
}

fn fingerprint(ids: &[&str]) -> String {
    format!("{:032x}", xxh3_128(ids.join("\0").as_bytes()))
}

impl Reporter for Sarif {
    fn write(&self, r: &ScanReport, opts: &ReportOptions, w: &mut dyn Write) -> io::Result<()> {
        let mut results = Vec::new();
        if opts.clusters {
            for g in r.clusters() {
                let ids: Vec<&str> = g.iter().map(|&d| r.id(d)).collect();
                let related: Vec<Value> = g[1..]
                    .iter()
                    .enumerate()
                    .map(|(i, &d)| {
                        let mut l = physical(r, d);
                        l["id"] = json!(i + 1);
                        l["message"] = json!({ "text": r.id(d) });
                        l
                    })
                    .collect();
                let links: Vec<String> = g[1..]
                    .iter()
                    .enumerate()
                    .map(|(i, &d)| format!("[{}]({})", r.id(d), i + 1))
                    .collect();
                results.push(json!({
                    "ruleId": RULE_ID,
                    "ruleIndex": 0,
                    "level": "warning",
                    "message": { "text": format!(
                        "{} has {} near-duplicate(s): {}", ids[0], links.len(), links.join(", ")
                    ) },
                    "locations": g.iter().map(|&d| physical(r, d)).collect::<Vec<_>>(),
                    "relatedLocations": related,
                    "partialFingerprints": { "ndupCluster/v1": fingerprint(&ids) },
                    "properties": { "size": g.len(), "members": ids },
                }));
            }
        } else {
            for p in &r.pairs {
                let (a, b) = (r.id(p.a), r.id(p.b));
                let mut related = physical(r, p.b);
                related["id"] = json!(1);
                related["message"] = json!({ "text": b });
                let mut props = json!({ "a": a, "b": b, "estimate": p.estimate });
                for (k, v) in [
                    ("jaccard", p.jaccard),
                    ("a_in_b", p.a_in_b),
                    ("b_in_a", p.b_in_a),
                ] {
                    if let Some(v) = v {
                        props[k] = json!(v);
                    }
                }
                results.push(json!({
                    "ruleId": RULE_ID,
                    "ruleIndex": 0,
                    "level": "warning",
                    "message": { "text": format!(
                        "{a} is a near-duplicate of [{b}](1) ({})", measures(p)
                    ) },
                    "locations": [physical(r, p.a), physical(r, p.b)],
                    "relatedLocations": [related],
                    "partialFingerprints": { "ndupPair/v1": fingerprint(&[a, b]) },
                    "properties": props,
                }));
            }
        }
        let log = json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [{
                "tool": { "driver": {
                    "name": "ndup",
                    "version": env!("CARGO_PKG_VERSION"),
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "rules": [{
                        "id": RULE_ID,
                        "name": "NearDuplicateDocument",
                        "shortDescription": { "text": "Near-duplicate documents" },
                        "fullDescription": { "text": "Two documents whose shingle sets are at least as similar as the threshold (Jaccard similarity, estimated with MinHash and LSH, verified near the threshold)." },
                        "help": { "text": "Merge the documents, delete the stale copy, or accept the pair in .ndupignore or a baseline (ndup scan --write-baseline)." },
                        "defaultConfiguration": { "level": "warning" },
                        "properties": { "tags": ["duplication", "maintainability"] }
                    }]
                } },
                "columnKind": "unicodeCodePoints",
                "results": results,
                "properties": { "params": super::records::ParamsRecord::from(&r.params) },
            }]
        });
        serde_json::to_writer_pretty(&mut *w, &log)?;
        w.write_all(b"\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris() {
        assert_eq!(path_uri("./docs/a b#1.md"), "docs/a%20b%231.md");
        assert_eq!(path_uri("/abs/x.md"), "file:///abs/x.md");
        assert_eq!(path_uri("dir\\x.md"), "dir/x.md");
        assert_eq!(path_uri("café.md"), "caf%C3%A9.md");
    }
}
