//! The report: JSON lines parsed back, the text table, clusters, the summary on stderr, --quiet.

use serde_json::json;

use super::util::{Dir, PLANTED_PAIRS, owned, planted};
use crate::corpus::text;

#[test]
fn jsonl_is_params_then_pairs_then_skips_then_the_summary() {
    let d = planted();
    let run = d.scan().arg("docs").ok();
    let records = run.records();
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    eqnice!(
        vec!["params", "pair", "pair", "pair", "skip", "summary"],
        kinds
    );

    eqnice!(
        json!({
            "type": "params",
            "format_version": 2,
            "ndup_version": env!("CARGO_PKG_VERSION"),
            "mode": "minhash",
            "shingle": "char",
            "shingle_size": 9,
            "custom_stopwords": false,
            "normalize": "nfkc+lowercase+whitespace+trim",
            "sketch": "fss",
            "num_perm": 128,
            "bands": 18,
            "rows": 7,
            "lsh_threshold": (1.0f64 / 18.0).powf(1.0 / 7.0),
            "unbanded_slots": 2,
            "seed": 42,
            "threshold": 0.8,
            "measure": "jaccard",
            "verify": "auto",
            "max_bucket": 1000
        }),
        records[0]
    );

    // Each pair: a < b, the estimate a fraction of 128 slots, jaccard in [0, 1] when present.
    for p in run.pairs() {
        assert!(p.a < p.b, "{p:?}");
        assert_eq!((p.estimate * 128.0).fract(), 0.0, "{p:?}");
        assert!(p.estimate >= 0.8 && p.estimate <= 1.0, "{p:?}");
        if let Some(j) = p.jaccard {
            assert!((0.8..=1.0).contains(&j), "{p:?}");
        }
    }

    // The summary's counts agree with the tree and with the records.
    let bytes: u64 = [
        "original.txt",
        "edited.txt",
        "sub/copy.txt",
        "unrelated-1.txt",
        "unrelated-2.txt",
        "empty.txt",
        "blank.txt",
    ]
    .iter()
    .map(|f| {
        std::fs::metadata(d.path().join("docs").join(f))
            .unwrap()
            .len()
    })
    .sum();
    let s = run.summary();
    assert_eq!(s["documents"], 7);
    assert_eq!(s["empty"], 2);
    assert_eq!(s["skipped_binary"], 1);
    assert_eq!(s["skipped_unreadable"], 0);
    assert_eq!(s["bytes"], bytes);
    assert_eq!(s["pairs"], 3);
    assert_eq!(s["oversized_buckets"], 0);
    // Three pairs, each considered once; the two edited ones are verified exactly.
    assert_eq!(s["candidates"], 3);
    assert_eq!(s["exact_checked"], 2);
    assert!(s.get("clusters").is_none());
    // Timings go to stderr only: the report is reproducible.
    assert!(s.get("elapsed").is_none());
}

#[test]
fn text_format_groups_pairs_with_the_same_content() {
    let d = planted();
    let jsonl = d.scan().arg("docs").ok();
    let run = d.scan().args(["docs", "--format", "text"]).ok();

    // Rebuild the grouped report from the JSON records: both formats must say the same thing.
    let mut expected = String::new();
    let mut current: Option<String> = None;
    for p in &jsonl.pairs() {
        if current.as_deref() != Some(p.a.as_str()) {
            expected += &format!("{}\n", p.a);
            current = Some(p.a.clone());
        }
        let j = p
            .jaccard
            .map_or(String::new(), |j| format!(", jaccard {j:.4}"));
        expected += &format!("  ~ {}  (estimate {:.4}{j})\n", p.b, p.estimate);
    }
    expected += "skipped docs/logo.png: binary file (NUL byte in the first 8 KiB)\n";
    eqnice!(expected, run.stdout);
    // The exact copy: estimate 1, no exact Jaccard computed.
    assert!(
        run.stdout
            .contains("docs/original.txt\n  ~ docs/sub/copy.txt  (estimate 1.0000)\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn text_format_says_when_nothing_is_found() {
    let d = planted();
    let run = d
        .scan()
        .args(["docs/original.txt", "docs/unrelated-1.txt"])
        .args(["--format", "text"])
        .ok();
    eqnice!("no near-duplicate pairs\n", run.stdout);
    let run = d
        .scan()
        .args(["docs/original.txt", "docs/unrelated-1.txt"])
        .args(["--format", "text", "--clusters"])
        .ok();
    eqnice!("no near-duplicate clusters\n", run.stdout);
}

/// The planted tree plus a second family, `docs/b1.txt` and `docs/b2.txt`.
fn two_families() -> Dir {
    let d = planted();
    d.create("docs/b2.txt", text(9, 120));
    d.create("docs/b1.txt", text(9, 120));
    d
}

#[test]
fn clusters_are_components_with_sorted_members_in_sorted_order() {
    let d = two_families();
    let run = d.scan().args(["docs", "--clusters"]).ok();
    eqnice!(
        vec![
            vec!["docs/b1.txt".to_string(), "docs/b2.txt".to_string()],
            vec![
                "docs/edited.txt".to_string(),
                "docs/original.txt".to_string(),
                "docs/sub/copy.txt".to_string()
            ],
        ],
        run.clusters()
    );
    // Clusters replace pairs; the summary counts both.
    assert!(run.pairs().is_empty());
    assert_eq!(run.count("clusters"), 2);
    assert_eq!(run.count("pairs"), 4);
    assert!(
        run.stderr.contains("4 pairs, 2 clusters"),
        "{}",
        run.describe()
    );
    let kinds: Vec<String> = run
        .records()
        .iter()
        .map(|r| r["type"].as_str().unwrap().to_string())
        .collect();
    eqnice!(
        vec!["params", "cluster", "cluster", "skip", "summary"],
        kinds
    );
    // Deterministic: the same bytes again, and with one thread.
    let again = d.scan().args(["docs", "--clusters", "-j", "1"]).ok();
    eqnice!(run.stdout, again.stdout);
}

#[test]
fn clusters_in_text() {
    let d = two_families();
    let run = d
        .scan()
        .args(["docs", "--clusters", "--format", "text"])
        .ok();
    eqnice!(
        "cluster 1 (2 documents)\n  docs/b1.txt\n  docs/b2.txt\n\
         cluster 2 (3 documents)\n  docs/edited.txt\n  docs/original.txt\n  docs/sub/copy.txt\n\
         skipped docs/logo.png: binary file (NUL byte in the first 8 KiB)\n",
        run.stdout
    );
}

#[test]
fn the_summary_goes_to_stderr_never_stdout() {
    let d = planted();
    d.link("gone.txt", "docs/dangling.txt");
    let run = d.scan().args(["docs", "docs/dangling.txt"]).ok();
    // stdout is nothing but JSON records.
    run.records();
    assert!(!run.stdout.contains("ndup:"), "{}", run.describe());
    let s = run.summary();
    let lines = run.stderr_lines();
    // The unreadable file, then the summary line, built from the same counts.
    assert_eq!(
        lines[0],
        "ndup: docs/dangling.txt: No such file or directory",
        "{}",
        run.describe()
    );
    let expected = format!(
        "ndup: 7 documents (2 empty), 2 skipped (1 binary, 1 unreadable), {} candidates ({} verified exactly), 3 pairs in ",
        s["candidates"], s["exact_checked"]
    );
    assert_eq!(lines.len(), 2, "{}", run.describe());
    assert!(
        lines[1].starts_with(&expected) && lines[1].ends_with(" s"),
        "expected {expected:?}...\n{}",
        run.describe()
    );

    // The text format too keeps the summary on stderr.
    let text = d
        .scan()
        .args(["docs", "--format", "text", "docs/dangling.txt"])
        .ok();
    assert!(!text.stdout.contains("documents"), "{}", text.describe());
    assert!(text.stderr.contains("7 documents"), "{}", text.describe());
}

#[test]
fn quiet_prints_nothing_on_stderr_and_the_same_report() {
    let d = planted();
    let loud = d.scan().arg("docs").ok();
    let quiet = d.scan().args(["docs", "--quiet"]).ok();
    eqnice!("", quiet.stderr);
    eqnice!(loud.stdout, quiet.stdout);
    let q = d
        .scan()
        .args(["-q", "docs", "--fail-on-duplicates"])
        .code(1);
    eqnice!("", q.stderr);
    eqnice!(owned(&PLANTED_PAIRS), q.pair_ids());
}

#[test]
fn quiet_still_prints_fatal_errors() {
    let d = planted();
    let run = d.scan().args(["--quiet", "docs", "missing"]).code(2);
    eqnice!(
        vec!["ndup: missing: no such file or directory"],
        run.stderr_lines()
    );
    let run = d.scan().args(["-q", "docs", "-t", "2"]).code(2);
    assert!(run.stderr.contains("--threshold"), "{}", run.describe());
}

/// A full disk while dedup wrote its records was reported as an error of the input being read
/// again (`/dev/full: cannot write: c.jsonl: No space left on device`).
#[test]
fn a_failed_write_of_kept_records_names_the_output_alone() {
    if !std::path::Path::new("/dev/full").exists() {
        eprintln!("skipped: no /dev/full");
        return;
    }
    let d = Dir::new();
    let lines: String = (0..3)
        .map(|i| serde_json::json!({"id": i, "text": text(i, 50)}).to_string() + "\n")
        .collect();
    d.create("c.jsonl", lines);
    let run = d
        .ndup()
        .args(["dedup", "-q", "c.jsonl", "-o", "/dev/full"])
        .code(2);
    assert_eq!(
        run.stderr.trim_end(),
        "ndup: /dev/full: cannot write: No space left on device",
        "{}",
        run.describe()
    );
}
