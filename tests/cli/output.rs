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
            "normalize": "nfkc+casefold+whitespace+trim",
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

/// `-o` refused to replace an input only when it was named on the command line: a file found by
/// walking a directory was replaced by the report (`ndup scan docs -o docs/install.md`).
#[test]
fn a_walked_input_is_never_replaced_by_the_report() {
    let d = planted();
    for (args, file, what) in [
        (vec!["scan", "docs", "-o"], "docs/original.txt", "report"),
        (
            vec!["scan", "docs", "--write-baseline"],
            "docs/edited.txt",
            "baseline",
        ),
        (
            vec!["scan", "docs", "--format", "html", "-o"],
            "docs/sub/copy.txt",
            "report",
        ),
        // A binary file is skipped, but it was read (and is still the user's).
        (vec!["scan", "docs", "-o"], "docs/logo.png", "report"),
        (vec!["dedup", "docs", "-o"], "docs/sub/copy.txt", "output"),
        (
            vec!["dedup", "docs", "-o", "kept.jsonl", "--html-report"],
            "docs/edited.txt",
            "HTML report",
        ),
    ] {
        let before = std::fs::read(d.path().join(file)).unwrap();
        let run = d.ndup().args(&args).arg(file).code(2);
        eqnice!(
            vec![format!(
                "ndup: {file}: the {what} would overwrite the input {file}; write elsewhere"
            )],
            run.stderr_lines(),
            "{}",
            run.describe()
        );
        eqnice!("", run.stdout);
        assert_eq!(
            before,
            std::fs::read(d.path().join(file)).unwrap(),
            "{file}"
        );
    }
    // Nor the files of options: a named configuration, a stop-word list.
    d.create("c.toml", "threshold = 0.9\n");
    d.create("stop.txt", "the\nof\n");
    for (args, file, what) in [
        (
            vec!["scan", "docs", "--config", "c.toml", "-o"],
            "c.toml",
            "report",
        ),
        (
            vec!["scan", "docs", "--config", "c.toml", "--write-baseline"],
            "c.toml",
            "baseline",
        ),
        (
            vec!["dedup", "docs", "--config", "c.toml", "-o"],
            "c.toml",
            "output",
        ),
        (
            vec![
                "dedup",
                "docs",
                "--shingle",
                "stopword",
                "--stopwords",
                "stop.txt",
                "-o",
            ],
            "stop.txt",
            "output",
        ),
    ] {
        let before = std::fs::read(d.path().join(file)).unwrap();
        let run = d.ndup().args(&args).arg(file).code(2);
        eqnice!(
            vec![format!(
                "ndup: {file}: the {what} would overwrite the input {file}; write elsewhere"
            )],
            run.stderr_lines(),
            "{}",
            run.describe()
        );
        assert_eq!(before, std::fs::read(d.path().join(file)).unwrap());
    }
    // Nothing was written: not the other output, no temporary file beside them.
    assert!(!d.path().join("kept.jsonl").exists());
    let names: Vec<String> = std::fs::read_dir(d.path().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".ndup-"))
        .collect();
    eqnice!(Vec::<String>::new(), names);
}

/// Another name of a walked file (a hard link outside the tree), and a record file named only in
/// a `--files-from` list, are the same inputs.
#[test]
fn an_input_found_under_another_name_or_in_a_list_is_not_replaced() {
    let d = planted();
    std::fs::hard_link(
        d.path().join("docs/original.txt"),
        d.path().join("alias.txt"),
    )
    .unwrap();
    let before = d.read("alias.txt");
    let run = d.scan().args(["docs", "-o", "alias.txt"]).code(2);
    eqnice!(
        vec![
            "ndup: alias.txt: the report would overwrite the input docs/original.txt; write \
             elsewhere"
        ],
        run.stderr_lines()
    );
    eqnice!(before, d.read("alias.txt"));

    let lines: String = (0..3)
        .map(|i| json!({"id": i, "text": text(7, 50)}).to_string() + "\n")
        .collect();
    d.create("jd/c.jsonl", &lines);
    d.create("list", "jd/c.jsonl\n");
    let run = d
        .ndup()
        .args([
            "dedup",
            "--jsonl",
            "--files-from",
            "list",
            "-o",
            "jd/c.jsonl",
        ])
        .code(2);
    eqnice!(
        vec!["ndup: jd/c.jsonl: the output would overwrite the input jd/c.jsonl; write elsewhere"],
        run.stderr_lines()
    );
    eqnice!(lines, d.read("jd/c.jsonl"));
}

/// A file the run did not read, only found beside the inputs, is the user's to overwrite.
#[test]
fn a_file_the_run_did_not_read_may_be_replaced() {
    let d = planted();
    d.create("docs/old.json", "old\n");
    let run = d
        .scan()
        .args(["docs", "--glob", "*.txt", "-o", "docs/old.json"])
        .ok();
    eqnice!("", run.stdout);
    let report = d.read("docs/old.json");
    assert!(report.starts_with("{\"type\":\"params\""), "{report}");
    assert_eq!(
        super::util::parse_jsonl(&report)
            .iter()
            .filter(|r| r["type"] == "pair")
            .count(),
        3
    );

    d.create("docs/kept.jsonl", "old\n");
    d.ndup()
        .args([
            "dedup",
            "docs",
            "--exclude",
            "*.jsonl",
            "-o",
            "docs/kept.jsonl",
        ])
        .ok();
    let kept = d.read("docs/kept.jsonl");
    assert!(kept.contains("\"id\":\"docs/original.txt\""), "{kept}");
}

/// `-o /dev/stdout` followed the link to `/proc/self/fd/1 -> pipe:[...]`, which is no path:
/// "cannot write: No such file or directory". A descriptor is written where it stands.
#[test]
fn dev_stdout_into_a_pipe_is_the_report() {
    let d = planted();
    let plain = d.scan().args(["docs", "-q"]).ok();
    d.link("/dev/stdout", "out");
    for name in [
        "/dev/stdout",
        "/dev/./fd/../stdout",
        "/proc/self/fd/1",
        "out",
    ] {
        let run = d.scan().args(["docs", "-q", "-o", name]).ok();
        eqnice!(plain.stdout, run.stdout, "-o {name}");
    }
    let run = d
        .ndup()
        .args(["dedup", "docs", "-q", "-o", "/dev/stdout"])
        .ok();
    assert!(
        run.stdout.contains("\"id\":\"docs/original.txt\""),
        "{}",
        run.describe()
    );
    // A descriptor that is not open is an error before any work.
    let run = d.scan().args(["docs", "-o", "/dev/fd/9"]).code(2);
    eqnice!(
        vec!["ndup: /dev/fd/9: cannot write: Bad file descriptor"],
        run.stderr_lines()
    );
}

/// `ndup scan -o /dev/stdout >> app.txt` replaced app.txt (a temporary file renamed over the
/// file the link led to), losing what it held: a descriptor opened to append is appended to.
#[test]
fn dev_stdout_appended_to_a_file_keeps_what_it_held() {
    let d = planted();
    let plain = d.scan().args(["docs", "-q"]).ok();
    d.create("app.txt", "earlier line\n");
    let app = std::fs::OpenOptions::new()
        .append(true)
        .open(d.path().join("app.txt"))
        .unwrap();
    let status = std::process::Command::new(super::util::ndup_bin())
        .current_dir(d.path())
        .args(["scan", "docs", "-q", "-o", "/dev/stdout"])
        .stdin(std::process::Stdio::null())
        .stdout(app)
        .status()
        .unwrap();
    assert!(status.success(), "{status:?}");
    eqnice!(format!("earlier line\n{}", plain.stdout), d.read("app.txt"));
}

/// `-o /dev/fd/3` (and bash's `-o >(cmd)`, `/dev/fd/63`): a descriptor the shell gave, here a pipe
/// while standard output goes to /dev/null.
#[test]
fn dev_fd_n_is_an_inherited_descriptor() {
    let d = planted();
    let plain = d.scan().args(["docs", "-q"]).ok();
    let out = std::process::Command::new("sh")
        .current_dir(d.path())
        .args([
            "-c",
            r#"exec "$0" scan docs -q -o /dev/fd/3 3>&1 >/dev/null"#,
            super::util::ndup_bin(),
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    eqnice!(plain.stdout, String::from_utf8(out.stdout).unwrap());
    eqnice!("", String::from_utf8(out.stderr).unwrap());
}

/// The index `scan --index` made and the shards `--signatures` read are inputs too: the report
/// replaced an index the same run had just built.
#[test]
fn the_index_and_signature_shards_are_not_replaced() {
    let d = planted();
    let run = d
        .scan()
        .args(["docs", "--index", "idx.db", "-o", "idx.db"])
        .code(2);
    eqnice!(
        vec!["ndup: idx.db: the report would overwrite the input idx.db; write elsewhere"],
        run.stderr_lines()
    );
    // Still an index: a second scan uses it.
    d.scan().args(["docs", "-q", "--index", "idx.db"]).ok();

    d.ndup().args(["sign", "docs", "-q", "--out", "sh"]).ok();
    let shard = "sh/part-00000.parquet";
    let before = std::fs::read(d.path().join(shard)).unwrap();
    let run = d
        .scan()
        .args(["--signatures", "sh", "--verify", "signature", "-o", shard])
        .code(2);
    eqnice!(
        vec![format!(
            "ndup: {shard}: the report would overwrite the input {shard}; write elsewhere"
        )],
        run.stderr_lines()
    );
    assert_eq!(before, std::fs::read(d.path().join(shard)).unwrap());
}
