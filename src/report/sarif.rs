//! SARIF 2.1.0, the format GitHub code scanning (and most static-analysis viewers) read.
//!
//! One run; the driver is `ndup` with its version and one rule, `ndup/near-duplicate`. Each pair
//! is one result at level `warning` with two locations, the first document then the second (GitHub
//! shows the first, and links the second from the message through `relatedLocations`); with
//! `--clusters`, one result per cluster with every member as a location. A file document is
//! located at its path (a relative URI reference, `./` removed, so that GitHub finds it in the
//! repository), line 1; a JSON-lines record at its file and line. `partialFingerprints` identify a
//! pair by its two ids, so an alert keeps its identity from one run to the next. The run's
//! `properties` hold the scan parameters.
//!
//! GitHub code scanning rejects a whole run that holds more than [`MAX_RESULTS`] results, or a
//! result with more than [`MAX_LOCATIONS`] locations (or related locations). Over the first
//! limit the report falls back to one result per cluster, largest first, as many as fit beside
//! one `note` result of the rule `ndup/report-truncated` that says what was grouped or left out
//! (a result is what GitHub shows; the same text is in the run's
//! `invocations[0].toolExecutionNotifications` for other viewers). A cluster larger than the
//! second limit is located at its first [`MAX_LOCATIONS`] members and names the rest in its
//! `properties`. Under both limits the output is what it always was.

use std::io::{self, Write};

use serde_json::{Value, json};
use xxhash_rust::xxh3::xxh3_128;

use super::{ReportOptions, Reporter, location, measures};
use crate::find::ScanReport;

/// The SARIF reporter.
pub struct Sarif;

/// The id of the one rule.
pub(crate) const RULE_ID: &str = "ndup/near-duplicate";

/// The id of the rule of the result that says a report over [`MAX_RESULTS`] was grouped or cut.
pub(crate) const TRUNCATED_RULE_ID: &str = "ndup/report-truncated";

/// The most results GitHub code scanning accepts in one run: it rejects the whole file above it.
pub(crate) const MAX_RESULTS: usize = 25_000;

/// The most locations, and the most related locations, GitHub code scanning accepts in one
/// result: it rejects the whole file above it.
pub(crate) const MAX_LOCATIONS: usize = 1_000;

/// The limits a report is kept within: [`MAX_RESULTS`] and [`MAX_LOCATIONS`], smaller in tests.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Results per run, the truncation note included (at least 2).
    pub results: usize,
    /// Locations, and related locations, per result (at least 1).
    pub locations: usize,
}

impl Limits {
    /// GitHub code scanning's limits.
    pub(crate) const GITHUB: Limits = Limits {
        results: MAX_RESULTS,
        locations: MAX_LOCATIONS,
    };
}

/// A path, given by its bytes, as a URI reference: a relative reference for a relative path
/// (`./` removed), a `file://` URI for an absolute one.
pub(crate) fn path_uri(path: &[u8]) -> String {
    uri_reference(path, cfg!(windows))
}

/// [`path_uri`] for a path of Windows (`windows`) or of Unix. Every byte that is not unreserved
/// (RFC 3986: letters, digits, `-._~`) or a `/` separator is percent-encoded, the UTF-8 bytes of
/// non-ASCII characters one by one, and so are bytes that are not UTF-8 (a Unix name may hold
/// any), so that any name decodes back to itself: `%`, `#`, `?`,
/// `[`, `]`, `:` and spaces cannot be read as URI syntax. On Unix a backslash is an ordinary
/// character of a file name, so it is encoded (`%5C`); only a Windows path has `\` separators,
/// which become `/`, and a drive letter (`C:\x` gives `file:///C:/x`) or a UNC share
/// (`\\server\share\x` gives `file://server/share/x`) gives an absolute URI.
fn uri_reference(path: &[u8], windows: bool) -> String {
    let converted: Vec<u8>;
    let mut p = path;
    if windows {
        converted = path
            .iter()
            .map(|&b| if b == b'\\' { b'/' } else { b })
            .collect();
        p = &converted;
    }
    // `./a` and `.//a` are `a`; `/./a` is left alone (it is absolute).
    while let Some(rest) = p.strip_prefix(b"./") {
        let slashes = rest.iter().take_while(|&&b| b == b'/').count();
        p = &rest[slashes..];
    }
    let mut out = String::with_capacity(p.len() + 8);
    if windows && p.len() >= 2 && p[0].is_ascii_alphabetic() && p[1] == b':' {
        // The drive's colon stays: `file:///C%3A/x` names no drive.
        out.push_str("file:///");
        out.push(p[0] as char);
        out.push(':');
        p = &p[2..];
    } else if windows && p.starts_with(b"//") {
        // A UNC path's server is the URI's authority.
        out.push_str("file:");
    } else if p.starts_with(b"/") {
        out.push_str("file://");
    }
    for &b in p {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `s` as the link text of an embedded link in a plain-text SARIF message (`[text](id)`): SARIF
/// 2.1.0 §3.11.6 requires `\`, `[` and `]` to be escaped with a backslash there, or a name
/// holding them would end the link early or be read as another link.
fn link_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '[' | ']') {
            out.push('\\');
        }
        out.push(c);
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

fn pair_result(r: &ScanReport, p: &crate::model::Pair) -> Value {
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
    json!({
        "ruleId": RULE_ID,
        "ruleIndex": 0,
        "level": "warning",
        "message": { "text": format!(
            "{a} is a near-duplicate of [{}](1) ({})", link_text(b), measures(p)
        ) },
        "locations": [physical(r, p.a), physical(r, p.b)],
        "relatedLocations": [related],
        "partialFingerprints": { "ndupPair/v1": fingerprint(&[a, b]) },
        "properties": props,
    })
}

/// One result for cluster `g`: its members are its locations, all but the first also related
/// locations linked from the message, up to `max_locations`; `properties.members` names them all.
fn cluster_result(r: &ScanReport, g: &[u32], max_locations: usize) -> Value {
    let ids: Vec<&str> = g.iter().map(|&d| r.id(d)).collect();
    let located = &g[..g.len().min(max_locations.max(1))];
    let related: Vec<Value> = located[1..]
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            let mut l = physical(r, d);
            l["id"] = json!(i + 1);
            l["message"] = json!({ "text": r.id(d) });
            l
        })
        .collect();
    let links: Vec<String> = located[1..]
        .iter()
        .enumerate()
        .map(|(i, &d)| format!("[{}]({})", link_text(r.id(d)), i + 1))
        .collect();
    let mut text = format!(
        "{} has {} near-duplicate(s): {}",
        ids[0],
        g.len() - 1,
        links.join(", ")
    );
    if located.len() < g.len() {
        text += &format!(
            ", and {} more listed in the result's properties",
            g.len() - located.len()
        );
    }
    json!({
        "ruleId": RULE_ID,
        "ruleIndex": 0,
        "level": "warning",
        "message": { "text": text },
        "locations": located.iter().map(|&d| physical(r, d)).collect::<Vec<_>>(),
        "relatedLocations": related,
        "partialFingerprints": { "ndupCluster/v1": fingerprint(&ids) },
        "properties": { "size": g.len(), "members": ids },
    })
}

/// A cluster and the number of reported pairs inside it.
pub(crate) struct Group {
    /// The members, sorted by id.
    pub members: Vec<u32>,
    /// Reported pairs between members.
    pub pairs: usize,
}

/// The clusters of `clusters` (as [`ScanReport::clusters`] gives them), largest first, ties in
/// their given order (by first member), with their pair counts. Reports over a limit list them
/// in this order, so that what is cut is the smallest groups, and the documents copied most are
/// always shown.
pub(crate) fn largest_first(r: &ScanReport, clusters: Vec<Vec<u32>>) -> Vec<Group> {
    let mut of_doc = vec![usize::MAX; r.documents.len()];
    for (i, g) in clusters.iter().enumerate() {
        for &d in g {
            of_doc[d as usize] = i;
        }
    }
    let mut pairs = vec![0usize; clusters.len()];
    for p in &r.pairs {
        pairs[of_doc[p.a as usize]] += 1;
    }
    let mut groups: Vec<Group> = clusters
        .into_iter()
        .zip(pairs)
        .map(|(members, pairs)| Group { members, pairs })
        .collect();
    // Stable: equal sizes keep the order by first member.
    groups.sort_by_key(|g| std::cmp::Reverse(g.members.len()));
    groups
}

/// `n` and `word`, plural unless `n` is 1: `1 cluster`, `3 clusters`.
pub(crate) fn counted(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// What the groups left out of a report hold: their number, and `3 clusters (6 documents, 3
/// pairs)`.
pub(crate) fn left_out(groups: &[Group]) -> (usize, String) {
    let documents = groups.iter().map(|g| g.members.len()).sum();
    let pairs = groups.iter().map(|g| g.pairs).sum();
    let what = format!(
        "{} ({}, {})",
        counted(groups.len(), "cluster"),
        counted(documents, "document"),
        counted(pairs, "pair")
    );
    (groups.len(), what)
}

fn rule() -> Value {
    json!({
        "id": RULE_ID,
        "name": "NearDuplicateDocument",
        "shortDescription": { "text": "Near-duplicate documents" },
        "fullDescription": { "text": "Two documents whose shingle sets are at least as similar as the threshold (Jaccard similarity, estimated with MinHash and LSH, verified near the threshold)." },
        "help": { "text": "Merge the documents, delete the stale copy, or accept the pair in .ndupignore or a baseline (ndup scan --write-baseline)." },
        "defaultConfiguration": { "level": "warning" },
        "properties": { "tags": ["duplication", "maintainability"] }
    })
}

fn truncated_rule() -> Value {
    json!({
        "id": TRUNCATED_RULE_ID,
        "name": "ReportTruncated",
        "shortDescription": { "text": "Near-duplicates grouped or left out of this report" },
        "fullDescription": { "text": format!(
            "GitHub code scanning accepts at most {MAX_RESULTS} results in one run, so a report with more near-duplicate pairs has one result per cluster instead, the largest clusters first, and leaves out the clusters beyond the limit."
        ) },
        "help": { "text": "Run ndup scan with --format jsonl or --format text to see every pair, or accept the pairs a project means to keep in .ndupignore or a baseline so that fewer are reported." },
        "defaultConfiguration": { "level": "note" },
        "properties": { "tags": ["duplication"] }
    })
}

impl Reporter for Sarif {
    fn write(&self, r: &ScanReport, opts: &ReportOptions, w: &mut dyn Write) -> io::Result<()> {
        write_limited(r, opts, w, Limits::GITHUB)
    }
}

/// The SARIF report of `r`, kept within `limits`.
pub(crate) fn write_limited(
    r: &ScanReport,
    opts: &ReportOptions,
    w: &mut dyn Write,
    limits: Limits,
) -> io::Result<()> {
    let mut results = Vec::new();
    // The result and the notification that say what was grouped or left out, if anything was.
    let mut truncation: Option<(Value, String)> = None;
    if !opts.clusters && r.pairs.len() <= limits.results {
        results.extend(r.pairs.iter().map(|p| pair_result(r, p)));
    } else {
        let clusters = r.clusters();
        if opts.clusters && clusters.len() <= limits.results {
            results.extend(
                clusters
                    .iter()
                    .map(|g| cluster_result(r, g, limits.locations)),
            );
        } else {
            let groups = largest_first(r, clusters);
            // One result is kept for the note.
            let keep = groups.len().min(limits.results.saturating_sub(1).max(1));
            results.extend(
                groups[..keep]
                    .iter()
                    .map(|g| cluster_result(r, &g.members, limits.locations)),
            );
            truncation = Some(truncation_note(r, opts, &groups, keep, limits));
        }
    }
    let mut rules = vec![rule()];
    let mut notifications = Vec::new();
    if let Some((note, text)) = truncation {
        rules.push(truncated_rule());
        results.push(note);
        notifications.push(json!({ "level": "warning", "message": { "text": text } }));
    }
    let mut run = json!({
        "tool": { "driver": {
            "name": "ndup",
            "version": env!("CARGO_PKG_VERSION"),
            "semanticVersion": env!("CARGO_PKG_VERSION"),
            "rules": rules
        } },
        "columnKind": "unicodeCodePoints",
        "results": results,
        "properties": { "params": super::records::ParamsRecord::from(&r.params) },
    });
    if !notifications.is_empty() {
        run["invocations"] = json!([{
            "executionSuccessful": true,
            "toolExecutionNotifications": notifications
        }]);
    }
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [run]
    });
    serde_json::to_writer_pretty(&mut *w, &log)?;
    w.write_all(b"\n")
}

/// The `note` result (and its text) for a report over `limits.results`: `groups` largest first,
/// the first `keep` of them reported. GitHub shows a result only with a location, so it is
/// located at the first document left out, or, when nothing was, at the first one reported.
fn truncation_note(
    r: &ScanReport,
    opts: &ReportOptions,
    groups: &[Group],
    keep: usize,
    limits: Limits,
) -> (Value, String) {
    let omitted = &groups[keep..];
    let (n_omitted, what) = left_out(omitted);
    let max = limits.results;
    let clusters = counted(groups.len(), "cluster");
    let text = match (opts.clusters, n_omitted) {
        (false, 0) => format!(
            "{} near-duplicate pairs are more results than GitHub code scanning accepts in one \
             run ({max}), so they are reported as {clusters}, one result per cluster, largest \
             first. Run ndup scan with --format jsonl or --format text to see every pair and its \
             measures.",
            r.pairs.len(),
        ),
        (false, _) => format!(
            "{} near-duplicate pairs in {clusters} are more results than GitHub code scanning \
             accepts in one run ({max}), so the {keep} largest clusters are reported, one result \
             each. Left out: {what}. Run ndup scan with --format jsonl or --format text to see \
             every pair.",
            r.pairs.len(),
        ),
        (true, _) => format!(
            "{} are more results than GitHub code scanning accepts in one run ({max}), so the \
             {keep} largest are reported. Left out: {what}. Run ndup scan --clusters with \
             --format jsonl or --format text to see them all.",
            counted(groups.len(), "near-duplicate cluster"),
        ),
    };
    let at = groups.get(keep).unwrap_or(&groups[0]).members[0];
    let note = json!({
        "ruleId": TRUNCATED_RULE_ID,
        "ruleIndex": 1,
        "level": "note",
        "message": { "text": text },
        "locations": [physical(r, at)],
        // One alert from one run to the next, wherever it is located.
        "partialFingerprints": { "ndupTruncated/v1": fingerprint(&[TRUNCATED_RULE_ID]) },
        "properties": {
            "pairs": r.pairs.len(),
            "clusters": groups.len(),
            "reported_clusters": keep,
            "omitted_clusters": n_omitted,
            "omitted_documents": omitted.iter().map(|g| g.members.len()).sum::<usize>(),
            "omitted_pairs": omitted.iter().map(|g| g.pairs).sum::<usize>(),
        },
    });
    (note, text)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::find::config::ScanConfig;
    use crate::model::{Pair, Stats};
    use crate::source::{Document, Origin};

    /// `%XX` decoded, for checking that a URI gives the bytes of its path back.
    fn decode(uri: &str) -> Vec<u8> {
        let b = uri.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'%' {
                out.push(u8::from_str_radix(&uri[i + 1..i + 3], 16).unwrap());
                i += 3;
            } else {
                out.push(b[i]);
                i += 1;
            }
        }
        out
    }

    #[test]
    fn uris() {
        assert_eq!(path_uri("./docs/a b#1.md".as_bytes()), "docs/a%20b%231.md");
        assert_eq!(path_uri(".//docs/a.md".as_bytes()), "docs/a.md");
        assert_eq!(path_uri("/abs/x.md".as_bytes()), "file:///abs/x.md");
        assert_eq!(path_uri("café.md".as_bytes()), "caf%C3%A9.md");
        assert_eq!(path_uri("a:b.md".as_bytes()), "a%3Ab.md");
    }

    #[test]
    fn a_name_that_is_not_utf8_is_encoded_byte_by_byte() {
        // `x<ff>.md`, and a file literally named `x\xff.md` (what the first one's id reads).
        assert_eq!(uri_reference(b"d/x\xff.md", false), "d/x%FF.md");
        assert_eq!(uri_reference(b"d/x\\xff.md", false), "d/x%5Cxff.md");
        assert_eq!(decode("d/x%FF.md"), b"d/x\xff.md");
    }

    #[test]
    fn a_unix_backslash_is_part_of_the_name() {
        let name = "dir\\a\\b[1] #%?\t\u{1b}é.md";
        let uri = uri_reference(name.as_bytes(), false);
        assert_eq!(uri, "dir%5Ca%5Cb%5B1%5D%20%23%25%3F%09%1B%C3%A9.md");
        assert_eq!(decode(&uri), name.as_bytes());
        assert_eq!(
            uri_reference("/x/a\\b".as_bytes(), false),
            "file:///x/a%5Cb"
        );
    }

    #[test]
    fn a_windows_backslash_is_a_separator() {
        assert_eq!(uri_reference("dir\\x.md".as_bytes(), true), "dir/x.md");
        assert_eq!(
            uri_reference(".\\dir\\x y.md".as_bytes(), true),
            "dir/x%20y.md"
        );
        assert_eq!(
            uri_reference("C:\\src\\a.md".as_bytes(), true),
            "file:///C:/src/a.md"
        );
        assert_eq!(
            uri_reference("\\\\server\\share\\a.md".as_bytes(), true),
            "file://server/share/a.md"
        );
    }

    #[test]
    fn link_text_escapes_brackets_and_backslashes() {
        assert_eq!(link_text("docs/a.md"), "docs/a.md");
        assert_eq!(link_text("a\\b[1]].md"), "a\\\\b\\[1\\]\\].md");
    }

    /// A report of `sizes.len()` clusters of exact copies, `sizes[i]` documents each, every pair
    /// of a cluster reported; ids `c{i}-{j}.md`.
    pub(crate) fn clustered(sizes: &[usize]) -> ScanReport {
        let mut documents = Vec::new();
        let mut pairs = Vec::new();
        for (i, &n) in sizes.iter().enumerate() {
            let first = documents.len() as u32;
            for j in 0..n {
                let id = format!("c{i}-{j}.md");
                documents.push(Document {
                    id: id.clone(),
                    origin: Origin::File(id.into()),
                    empty: false,
                });
            }
            for a in first..first + n as u32 {
                for b in a + 1..first + n as u32 {
                    pairs.push(Pair {
                        a,
                        b,
                        estimate: 1.0,
                        jaccard: None,
                        a_in_b: None,
                        b_in_a: None,
                    });
                }
            }
        }
        ScanReport {
            params: ScanConfig::default().params(),
            documents,
            pairs,
            skipped: Vec::new(),
            stats: Stats::default(),
        }
    }

    fn run(r: &ScanReport, clusters: bool, limits: Limits) -> Value {
        let mut out = Vec::new();
        let opts = ReportOptions {
            clusters,
            ..Default::default()
        };
        write_limited(r, &opts, &mut out, limits).unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    fn rendered(r: &ScanReport, clusters: bool, limits: Limits) -> Vec<u8> {
        let mut out = Vec::new();
        let opts = ReportOptions {
            clusters,
            ..Default::default()
        };
        write_limited(r, &opts, &mut out, limits).unwrap();
        out
    }

    const SMALL: Limits = Limits {
        results: 4,
        locations: 1000,
    };

    #[test]
    fn under_the_limit_the_report_is_unchanged() {
        // 1 + 3 = 4 pairs: exactly the limit.
        let r = clustered(&[2, 3]);
        let limited = rendered(&r, false, SMALL);
        assert_eq!(limited, rendered(&r, false, Limits::GITHUB));
        let v: Value = serde_json::from_slice(&limited).unwrap();
        let run = &v["runs"][0];
        assert_eq!(run["results"].as_array().unwrap().len(), 4);
        assert!(run.get("invocations").is_none());
        assert_eq!(run["tool"]["driver"]["rules"].as_array().unwrap().len(), 1);
        // Two clusters under a limit of 4: unchanged too.
        assert_eq!(
            rendered(&r, true, SMALL),
            rendered(&r, true, Limits::GITHUB)
        );
    }

    #[test]
    fn over_the_limit_pairs_become_clusters_largest_first() {
        // 1 + 3 + 6 = 10 pairs in 3 clusters: over 4 results, and 3 clusters + the note fit.
        let r = clustered(&[2, 3, 4]);
        let v = run(&r, false, SMALL);
        let run = &v["runs"][0];
        let results = run["results"].as_array().unwrap();
        assert_eq!(results.len(), 4);
        let sizes: Vec<u64> = results[..3]
            .iter()
            .map(|x| {
                assert_eq!(x["ruleId"], RULE_ID);
                assert!(x["partialFingerprints"]["ndupCluster/v1"].is_string());
                x["properties"]["size"].as_u64().unwrap()
            })
            .collect();
        assert_eq!(sizes, [4, 3, 2]);
        let note = &results[3];
        assert_eq!(note["ruleId"], TRUNCATED_RULE_ID);
        assert_eq!(note["ruleIndex"], 1);
        assert_eq!(note["level"], "note");
        assert_eq!(note["properties"]["pairs"], 10);
        assert_eq!(note["properties"]["omitted_clusters"], 0);
        let text = note["message"]["text"].as_str().unwrap();
        assert!(
            text.starts_with("10 near-duplicate pairs are more results than GitHub code scanning accepts in one run (4), so they are reported as 3 clusters"),
            "{text}"
        );
        // Located at the first document reported, since none was left out.
        assert_eq!(
            note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "c2-0.md"
        );
        assert_eq!(run["tool"]["driver"]["rules"][1]["id"], TRUNCATED_RULE_ID);
        let n = &run["invocations"][0]["toolExecutionNotifications"][0];
        assert_eq!(n["message"]["text"], text);
        assert_eq!(run["invocations"][0]["executionSuccessful"], true);
    }

    #[test]
    fn over_the_limit_the_smallest_clusters_are_left_out_and_counted() {
        // 6 clusters, 1 + 3 + 1 + 6 + 1 + 1 = 13 pairs: 3 clusters and the note fit.
        let r = clustered(&[2, 3, 2, 4, 2, 2]);
        let v = run(&r, false, SMALL);
        let results = v["runs"][0]["results"].as_array().unwrap();
        assert_eq!(results.len(), 4, "the limit counts the note");
        let firsts: Vec<&str> = results[..3]
            .iter()
            .map(|x| x["properties"]["members"][0].as_str().unwrap())
            .collect();
        // Largest first; the clusters of two keep their order, by first member.
        assert_eq!(firsts, ["c3-0.md", "c1-0.md", "c0-0.md"]);
        let note = &results[3];
        let p = &note["properties"];
        assert_eq!(
            (
                &p["pairs"],
                &p["clusters"],
                &p["reported_clusters"],
                &p["omitted_clusters"],
                &p["omitted_documents"],
                &p["omitted_pairs"]
            ),
            (
                &json!(13),
                &json!(6),
                &json!(3),
                &json!(3),
                &json!(6),
                &json!(3)
            )
        );
        assert_eq!(
            note["message"]["text"],
            "13 near-duplicate pairs in 6 clusters are more results than GitHub code scanning \
             accepts in one run (4), so the 3 largest clusters are reported, one result each. \
             Left out: 3 clusters (6 documents, 3 pairs). Run ndup scan with --format jsonl or \
             --format text to see every pair."
        );
        // Located at the first document left out.
        assert_eq!(
            note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "c2-0.md"
        );
    }

    #[test]
    fn too_many_clusters_are_cut_with_clusters_too() {
        let r = clustered(&[2, 2, 2, 2, 3]);
        let v = run(&r, true, SMALL);
        let results = v["runs"][0]["results"].as_array().unwrap();
        assert_eq!(results.len(), 4);
        assert_eq!(results[0]["properties"]["size"], 3);
        assert_eq!(
            results[3]["message"]["text"],
            "5 near-duplicate clusters are more results than GitHub code scanning accepts in one \
             run (4), so the 3 largest are reported. Left out: 2 clusters (4 documents, 2 \
             pairs). Run ndup scan --clusters with --format jsonl or --format text to see them \
             all."
        );
    }

    #[test]
    fn the_real_limit_is_github_s() {
        assert_eq!(Limits::GITHUB.results, 25_000);
        assert_eq!(Limits::GITHUB.locations, 1_000);
        // One cluster of 225 copies has 25,200 pairs, over the limit, and is quick to build.
        let r = clustered(&[225]);
        assert!(r.pairs.len() > MAX_RESULTS);
        let v = run(&r, false, Limits::GITHUB);
        let results = v["runs"][0]["results"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        assert_eq!(results[0]["properties"]["size"], 225);
        assert_eq!(results[1]["ruleId"], TRUNCATED_RULE_ID);
    }

    #[test]
    fn a_cluster_over_the_location_limit_names_the_rest_in_its_properties() {
        let r = clustered(&[5]);
        let limits = Limits {
            results: MAX_RESULTS,
            locations: 3,
        };
        let v = run(&r, true, limits);
        let x = &v["runs"][0]["results"][0];
        assert_eq!(x["locations"].as_array().unwrap().len(), 3);
        assert_eq!(x["relatedLocations"].as_array().unwrap().len(), 2);
        assert_eq!(x["properties"]["members"].as_array().unwrap().len(), 5);
        assert_eq!(
            x["message"]["text"],
            "c0-0.md has 4 near-duplicate(s): [c0-1.md](1), [c0-2.md](2), and 2 more listed in \
             the result's properties"
        );
        // At the limit, nothing changes.
        let at = Limits {
            results: MAX_RESULTS,
            locations: 5,
        };
        assert_eq!(rendered(&r, true, at), rendered(&r, true, Limits::GITHUB));
    }
}
