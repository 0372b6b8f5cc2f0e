//! SARIF and GitHub annotations at their edges: file names that are URI or link syntax, and
//! reports over what GitHub shows (10 warnings per Actions step; the 25,000 results per SARIF
//! run are tested beside the code, in `src/report/sarif.rs`).

use serde_json::Value;

use super::util::Dir;
use crate::corpus::text;

/// `%XX` decoded, strictly: a URI reference that decodes back to a file name.
fn percent_decode(uri: &str) -> String {
    String::from_utf8(percent_decode_bytes(uri)).unwrap()
}

/// [`percent_decode`] for a name that may not be UTF-8.
fn percent_decode_bytes(uri: &str) -> Vec<u8> {
    let b = uri.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

fn uris(result: &Value, key: &str) -> Vec<String> {
    result[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            l["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// A Unix file name holding a backslash, brackets, a space, `#` and `%`.
const ODD: &str = "docs/a\\b[1] #%.md";

#[test]
fn a_unix_file_name_round_trips_through_the_uri_and_the_message_link() {
    let d = Dir::new();
    // `docs/0.md` sorts first, so the odd name is the linked second document.
    d.create("docs/0.md", text(50, 150));
    d.create(ODD, text(50, 150));
    let v = d.scan().args(["docs", "--format", "sarif"]).ok().json();
    let results = v["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{v:#}");
    let r = &results[0];

    let located = uris(r, "locations");
    eqnice!(
        vec![
            "docs/0.md".to_string(),
            "docs/a%5Cb%5B1%5D%20%23%25.md".into()
        ],
        located
    );
    assert!(!located[1].contains('\\'));
    eqnice!(ODD, percent_decode(&located[1]));
    eqnice!(vec![located[1].clone()], uris(r, "relatedLocations"));

    // The link text escapes `\`, `[` and `]` (SARIF 2.1.0 §3.11.6); the ids in the properties
    // are the names themselves.
    let text = r["message"]["text"].as_str().unwrap();
    assert!(
        text.starts_with(r"docs/0.md is a near-duplicate of [docs/a\\b\[1\] #%.md](1) ("),
        "{text}"
    );
    eqnice!(ODD, r["properties"]["b"].as_str().unwrap());
    eqnice!(
        ODD,
        r["relatedLocations"][0]["message"]["text"]
            .as_str()
            .unwrap()
    );

    let v = d
        .scan()
        .args(["docs", "--format", "sarif", "--clusters"])
        .ok()
        .json();
    let r = &v["runs"][0]["results"][0];
    eqnice!(
        r"docs/0.md has 1 near-duplicate(s): [docs/a\\b\[1\] #%.md](1)",
        r["message"]["text"].as_str().unwrap()
    );
    eqnice!(ODD, percent_decode(&uris(r, "locations")[1]));
}

/// A file whose name has the byte 0xFF has the id `d/x\xff.md`, and one literally named
/// `x\xff.md` the id `d/x\\xff.md`: the locations were made from the ids, so the first pointed
/// at the second and the second at no file. Each is located at its own bytes; a GitHub annotation
/// names the second as it is and cannot name the first (not UTF-8), so it leaves `file=` out.
#[test]
fn a_name_an_id_escapes_is_located_at_its_own_bytes() {
    use std::os::unix::ffi::OsStrExt;
    let d = Dir::new();
    let body = text(51, 150);
    d.create("d/plain.md", &body);
    let raw: &[u8] = b"d/x\xff.md";
    let literal: &[u8] = br"d/x\xff.md";
    for name in [raw, literal] {
        std::fs::write(d.path().join(std::ffi::OsStr::from_bytes(name)), &body).unwrap();
    }
    let v = d.scan().args(["d", "--format", "sarif"]).ok().json();
    let results = v["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 3, "{v:#}");
    let mut located = std::collections::BTreeMap::new();
    for r in results {
        let (a, b) = (
            r["properties"]["a"].as_str().unwrap(),
            r["properties"]["b"].as_str().unwrap(),
        );
        for (id, uri) in [a, b].into_iter().zip(uris(r, "locations")) {
            let bytes = percent_decode_bytes(&uri);
            assert!(
                d.path().join(std::ffi::OsStr::from_bytes(&bytes)).is_file(),
                "{uri}"
            );
            located.insert(id.to_string(), bytes);
        }
    }
    let expected: std::collections::BTreeMap<String, Vec<u8>> = [
        ("d/plain.md", &b"d/plain.md"[..]),
        (r"d/x\xff.md", raw),
        (r"d/x\\xff.md", literal),
    ]
    .into_iter()
    .map(|(id, bytes)| (id.to_string(), bytes.to_vec()))
    .collect();
    eqnice!(expected, located);

    // `d/plain.md` is the first document of both its pairs, the literal name of the third.
    let out = d.scan().args(["d", "--format", "github"]).ok().stdout;
    let heads: Vec<&str> = out.lines().map(|l| &l[..l.find("::d/").unwrap()]).collect();
    eqnice!(
        vec![
            "::warning file=d/plain.md,line=1,title=Near-duplicate",
            "::warning file=d/plain.md,line=1,title=Near-duplicate",
            r"::warning file=d/x\xff.md,line=1,title=Near-duplicate",
        ],
        heads
    );
    // A pair whose first document is the name with 0xFF.
    let e = Dir::new();
    std::fs::create_dir(e.path().join("e")).unwrap();
    std::fs::write(
        e.path().join(std::ffi::OsStr::from_bytes(b"e/a\xff.md")),
        &body,
    )
    .unwrap();
    e.create("e/b.md", &body);
    let out = e.scan().args(["e", "--format", "github"]).ok().stdout;
    eqnice!(
        "::warning title=Near-duplicate::e/a\\xff.md is a near-duplicate of e/b.md (estimate 1.0000)\n",
        out
    );
}

/// `n` pairs of exact copies, each pair with its own text: `docs/gNN-a.md` and `docs/gNN-b.md`.
fn copied_pairs(n: u64) -> Dir {
    let d = Dir::new();
    for i in 0..n {
        d.create(&format!("docs/g{i:02}-a.md"), text(100 + i, 150));
        d.create(&format!("docs/g{i:02}-b.md"), text(100 + i, 150));
    }
    d
}

fn lines(out: &str) -> Vec<&str> {
    out.lines().collect()
}

#[test]
fn ten_pairs_are_ten_annotations_as_before() {
    let d = copied_pairs(10);
    let out = d.scan().args(["docs", "--format", "github"]).ok().stdout;
    let lines = lines(&out);
    assert_eq!(lines.len(), 10, "{out}");
    for (i, l) in lines.iter().enumerate() {
        let head = format!(
            "::warning file=docs/g{i:02}-a.md,line=1,title=Near-duplicate::docs/g{i:02}-a.md is \
             a near-duplicate of docs/g{i:02}-b.md ("
        );
        assert!(l.starts_with(&head), "{l}");
    }
}

#[test]
fn over_ten_pairs_give_ten_annotations_and_a_notice_of_the_rest() {
    let d = copied_pairs(12);
    let run = d.scan().args(["docs", "--format", "github"]).ok();
    let lines = lines(&run.stdout);
    assert_eq!(lines.len(), 11, "{}", run.describe());
    // Clusters of two: equal sizes keep their order, so the last two are left out.
    for (i, l) in lines[..10].iter().enumerate() {
        let head = format!(
            "::warning file=docs/g{i:02}-a.md,line=1,title=Near-duplicate cluster::docs/g{i:02}-a.md \
             and 1 other document(s) are near-duplicates: docs/g{i:02}-b.md"
        );
        eqnice!(head, l.to_string());
    }
    eqnice!(
        "::notice title=ndup annotation limit::12 near-duplicate pairs in 12 clusters: the 10 \
         largest clusters are annotated, as GitHub Actions shows at most 10 warnings per step. \
         Left out: 2 clusters (4 documents, 2 pairs). Run ndup scan with --format text or \
         --format jsonl to see every pair.",
        lines[10]
    );
    // Everything is still in the other formats, and the summary counts every pair.
    let jsonl = d.scan().arg("docs").ok();
    assert_eq!(jsonl.pairs().len(), 12);
    assert_eq!(jsonl.count("pairs"), 12);
    // SARIF is far under its limit: one result per pair, as before.
    let sarif = d.scan().args(["docs", "--format", "sarif"]).ok().json();
    assert_eq!(sarif["runs"][0]["results"].as_array().unwrap().len(), 12);
    assert!(sarif["runs"][0].get("invocations").is_none());
}

#[test]
fn over_ten_pairs_in_few_clusters_annotate_every_cluster_largest_first() {
    let d = Dir::new();
    // Five copies (10 pairs) whose names sort last, and one more pair: 11 pairs, 2 clusters.
    for i in 0..5 {
        d.create(&format!("docs/z{i}.md"), text(7, 150));
    }
    d.create("docs/a.md", text(8, 150));
    d.create("docs/b.md", text(8, 150));
    let out = d.scan().args(["docs", "--format", "github"]).ok().stdout;
    eqnice!(
        vec![
            "::warning file=docs/z0.md,line=1,title=Near-duplicate cluster::docs/z0.md and 4 \
             other document(s) are near-duplicates: docs/z1.md, docs/z2.md, docs/z3.md, docs/z4.md",
            "::warning file=docs/a.md,line=1,title=Near-duplicate cluster::docs/a.md and 1 other \
             document(s) are near-duplicates: docs/b.md",
            "::notice title=ndup annotation limit::11 near-duplicate pairs are annotated as 2 \
             clusters, largest first, as GitHub Actions shows at most 10 warnings per step. Run \
             ndup scan with --format text or --format jsonl to see every pair.",
        ],
        lines(&out)
    );
}

#[test]
fn over_ten_clusters_give_ten_annotations_and_a_notice_with_clusters() {
    let d = copied_pairs(11);
    let out = d
        .scan()
        .args(["docs", "--format", "github", "--clusters"])
        .ok()
        .stdout;
    let lines = lines(&out);
    assert_eq!(lines.len(), 11, "{out}");
    assert!(lines[..10].iter().all(|l| l.starts_with("::warning ")));
    eqnice!(
        "::notice title=ndup annotation limit::11 near-duplicate clusters: the 10 largest are \
         annotated, as GitHub Actions shows at most 10 warnings per step. Left out: 1 cluster (2 \
         documents, 1 pair). Run ndup scan --clusters with --format text or --format jsonl to see \
         them all.",
        lines[10]
    );
}
