//! CLI tests for issue 5: JSON-lines inputs, file-tree rules, report formats, CI gates and
//! `ndup dedup`. Each test runs the real binary on a small temporary corpus with planted
//! near-duplicates.

use std::io::Write;
use std::path::Path;

use assert_cmd::Command;
use serde_json::{Value, json};

/// A deterministic paragraph of `n` words, different for each `seed`.
fn prose(seed: u64, n: usize) -> String {
    const WORDS: &[&str] = &[
        "river", "stone", "garden", "window", "engine", "letter", "silver", "morning", "harbor",
        "candle", "forest", "button", "ladder", "meadow", "pocket", "rocket", "saddle", "tunnel",
        "violin", "wagon", "yellow", "zephyr", "anchor", "barrel", "cactus", "dragon", "falcon",
        "glacier", "hammer", "island", "jungle", "kettle",
    ];
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            WORDS[(x % WORDS.len() as u64) as usize]
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` with one word replaced near its end: a near-duplicate (Jaccard about 0.9).
fn edited(text: &str) -> String {
    let mut words: Vec<&str> = text.split(' ').collect();
    let i = words.len() - 3;
    words[i] = "EDITED";
    words.join(" ")
}

fn ndup() -> Command {
    Command::cargo_bin("ndup").unwrap()
}

/// Runs `ndup` in `dir` with `args`; returns (exit code, stdout, stderr).
fn run(dir: &Path, args: &[&str]) -> (i32, String, String) {
    run_stdin(dir, args, Vec::new())
}

fn run_stdin(dir: &Path, args: &[&str], stdin: Vec<u8>) -> (i32, String, String) {
    let out = ndup()
        .current_dir(dir)
        .args(args)
        .env_remove("RAYON_NUM_THREADS")
        .env("NO_COLOR", "1")
        .write_stdin(stdin)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The JSON records of a JSON-lines report.
fn records(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The `(a, b)` of every pair record.
fn pairs(stdout: &str) -> Vec<(String, String)> {
    records(stdout)
        .iter()
        .filter(|r| r["type"] == "pair")
        .map(|r| {
            (
                r["a"].as_str().unwrap().to_string(),
                r["b"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn of(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::encode_all(bytes, 3).unwrap()
}

/// A JSON-lines corpus: `a` and `a2` near-duplicates, `b` and `b2` near-duplicates, `c` alone.
fn jsonl_corpus() -> String {
    let (a, b, c) = (prose(1, 120), prose(2, 120), prose(3, 120));
    [
        json!({"id": "a", "text": a}),
        json!({"id": "b", "text": b}),
        json!({"id": "c", "text": c}),
        json!({"id": "a2", "text": edited(&a)}),
        json!({"id": "b2", "text": edited(&b)}),
    ]
    .iter()
    .map(|v| format!("{v}\n"))
    .collect()
}

mod jsonl {
    use super::*;

    #[test]
    fn plain_gzip_zstd_and_stdin_find_the_same_pairs() {
        let dir = tempfile::tempdir().unwrap();
        let text = jsonl_corpus();
        std::fs::write(dir.path().join("c.jsonl"), &text).unwrap();
        std::fs::write(dir.path().join("c.jsonl.gz"), gzip(text.as_bytes())).unwrap();
        std::fs::write(dir.path().join("c.ndjson.zst"), zstd(text.as_bytes())).unwrap();
        // A compressed file is recognised by its magic bytes, whatever its name, with --jsonl.
        std::fs::write(dir.path().join("corpus.bin"), zstd(text.as_bytes())).unwrap();
        let want = of(&[("a", "a2"), ("b", "b2")]);
        let mut reports = Vec::new();
        for args in [
            &["scan", "c.jsonl"][..],
            &["scan", "c.jsonl.gz"],
            &["scan", "c.ndjson.zst"],
            &["scan", "corpus.bin", "--jsonl"],
        ] {
            let (code, out, err) = run(dir.path(), args);
            assert_eq!(code, 0, "{args:?}: {err}");
            assert_eq!(pairs(&out), want, "{args:?}");
            reports.push(out);
        }
        for (args, input) in [
            (&["scan", "-"][..], text.as_bytes().to_vec()),
            (&["scan", "-"], gzip(text.as_bytes())),
        ] {
            let (code, out, err) = run_stdin(dir.path(), args, input);
            assert_eq!(code, 0, "{err}");
            reports.push(out);
        }
        // The reports are byte-identical whatever the form of the input.
        assert!(reports.iter().all(|r| *r == reports[0]));
        let summary = records(&reports[0]).pop().unwrap();
        assert_eq!(summary["documents"], 5);
    }

    #[test]
    fn exact_verification_reads_records_again_from_every_form() {
        let dir = tempfile::tempdir().unwrap();
        let text = jsonl_corpus();
        std::fs::write(dir.path().join("c.jsonl"), &text).unwrap();
        std::fs::write(dir.path().join("c.jsonl.gz"), gzip(text.as_bytes())).unwrap();
        std::fs::write(dir.path().join("c.jsonl.zst"), zstd(text.as_bytes())).unwrap();
        let jaccards = |out: &str| -> Vec<f64> {
            records(out)
                .iter()
                .filter(|r| r["type"] == "pair")
                .map(|r| r["jaccard"].as_f64().expect("jaccard computed"))
                .collect()
        };
        let (_, plain, _) = run(dir.path(), &["scan", "c.jsonl", "--verify", "exact"]);
        let j = jaccards(&plain);
        assert_eq!(j.len(), 2);
        assert!(j.iter().all(|&x| x > 0.8 && x < 1.0), "{j:?}");
        for name in ["c.jsonl.gz", "c.jsonl.zst"] {
            let (code, out, err) = run(dir.path(), &["scan", name, "--verify", "exact"]);
            assert_eq!(code, 0, "{err}");
            assert_eq!(jaccards(&out), j, "{name}");
        }
        let (code, out, err) = run_stdin(
            dir.path(),
            &["scan", "-", "--verify", "exact"],
            zstd(text.as_bytes()),
        );
        assert_eq!(code, 0, "{err}");
        assert_eq!(jaccards(&out), j);
    }

    #[test]
    fn nested_fields_numeric_ids_and_line_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (prose(10, 100), prose(11, 100));
        let lines = [
            json!({"meta": {"key": 17}, "body": {"text": a}}),
            json!({"meta": {}, "body": {"text": b}}),
            json!({"meta": {"key": "x-1"}, "body": {"text": edited(&a)}}),
            json!({"body": {"text": edited(&b)}}),
        ];
        let text: String = lines.iter().map(|v| format!("{v}\n")).collect();
        std::fs::write(dir.path().join("n.ndjson"), &text).unwrap();
        let (code, out, err) = run(
            dir.path(),
            &[
                "scan",
                "n.ndjson",
                "--id-field",
                "meta.key",
                "--text-field",
                "body.text",
            ],
        );
        assert_eq!(code, 0, "{err}");
        // Record 2 and 4 have no key: they are named by their line numbers.
        assert_eq!(pairs(&out), of(&[("17", "x-1"), ("2", "4")]));

        // Two sources: the line-number ids say which file they come from.
        std::fs::write(dir.path().join("m.ndjson"), &text).unwrap();
        let (code, out, err) = run(
            dir.path(),
            &[
                "scan",
                "n.ndjson",
                "m.ndjson",
                "--id-field",
                "nope",
                "--text-field",
                "body.text",
                "--threshold",
                "0.99",
            ],
        );
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            pairs(&out),
            of(&[
                ("m.ndjson:1", "n.ndjson:1"),
                ("m.ndjson:2", "n.ndjson:2"),
                ("m.ndjson:3", "n.ndjson:3"),
                ("m.ndjson:4", "n.ndjson:4"),
            ])
        );
    }

    #[test]
    fn malformed_lines_are_reported_with_file_and_line_and_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let a = prose(20, 100);
        let text = format!(
            "{}\n{{\"id\": \"broken\", \"text\": \n{}\n\n{}\n{}\n{}\n",
            json!({"id": "a", "text": a}),
            json!({"id": "n", "text": 5}),
            json!({"id": "a", "text": "the same id again"}),
            json!({"id": "x", "body": "no text field"}),
            json!({"id": "a2", "text": edited(&a)}),
        );
        std::fs::write(dir.path().join("bad.jsonl"), text).unwrap();
        let (code, out, err) = run(dir.path(), &["scan", "bad.jsonl"]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(pairs(&out), of(&[("a", "a2")]));
        let skips: Vec<(String, String)> = records(&out)
            .iter()
            .filter(|r| r["type"] == "skip")
            .map(|r| {
                assert_eq!(r["reason_kind"], "malformed");
                (
                    r["id"].as_str().unwrap().to_string(),
                    r["reason"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let ids: Vec<&str> = skips.iter().map(|(i, _)| i.as_str()).collect();
        // Line 4 is blank: not a record. Ids sort as strings.
        assert_eq!(
            ids,
            ["bad.jsonl:2", "bad.jsonl:3", "bad.jsonl:5", "bad.jsonl:6"]
        );
        assert!(
            skips[0].1.starts_with("malformed JSON at column"),
            "{skips:?}"
        );
        assert_eq!(skips[1].1, "field `text` is a number, not a string");
        assert_eq!(skips[2].1, "duplicate id `a` (an earlier record has it)");
        assert_eq!(skips[3].1, "no field `text`");
        assert!(
            err.contains("ndup: bad.jsonl:2: malformed JSON at column"),
            "{err}"
        );
        assert!(err.contains("ndup: bad.jsonl:6: no field `text`"), "{err}");
        assert!(err.contains("4 skipped (4 malformed)"), "{err}");
        let summary = records(&out).pop().unwrap();
        assert_eq!(
            (&summary["documents"], &summary["skipped_malformed"]),
            (&json!(2), &json!(4))
        );
    }

    #[test]
    fn usage_errors_exit_2() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("c.jsonl"), jsonl_corpus()).unwrap();
        std::fs::create_dir(dir.path().join("docs")).unwrap();
        std::fs::write(dir.path().join("docs/a.txt"), "a").unwrap();
        for (args, msg) in [
            (
                &["scan", "c.jsonl", "docs"][..],
                "c.jsonl is read as JSON lines but docs is not",
            ),
            (&["scan", "missing.jsonl"], "missing.jsonl: no such file"),
            (&["scan", "docs", "--jsonl"], "docs: is a directory"),
            (&["scan", "-", "-"], "standard input can be read only once"),
            (&["scan", "c.jsonl", "--text-field", "a..b"], "--text-field"),
        ] {
            let (code, out, err) = run(dir.path(), args);
            assert_eq!(code, 2, "{args:?}");
            assert!(out.is_empty());
            assert!(err.contains(msg), "{args:?}: {err}");
        }
        // Only malformed lines: nothing to compare.
        std::fs::write(dir.path().join("junk.jsonl"), "nope\n").unwrap();
        let (code, _, err) = run(dir.path(), &["scan", "junk.jsonl"]);
        assert_eq!(code, 2);
        assert!(err.contains("junk.jsonl:1: malformed JSON"), "{err}");
    }
}

/// Writes `files` (path, text) under `root`, creating directories.
fn write_tree(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// The members of the clusters of a `--clusters` report.
fn clusters(stdout: &str) -> Vec<Vec<String>> {
    records(stdout)
        .iter()
        .filter(|r| r["type"] == "cluster")
        .map(|r| {
            r["members"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m.as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

mod tree {
    use super::*;

    /// Copies of one text in every kind of place the walker treats differently.
    fn copies(dir: &Path) {
        let a = prose(30, 150);
        write_tree(
            dir,
            &[
                ("docs/.gitignore", "build/\n"),
                ("docs/a.md", &a),
                ("docs/b.txt", &edited(&a)),
                ("docs/build/a.md", &a),
                ("docs/.drafts/a.md", &a),
                ("docs/big.md", &format!("{a}\n{}", prose(31, 400))),
            ],
        );
    }

    fn members(dir: &Path, extra: &[&str]) -> Vec<String> {
        let mut args = vec!["scan", "docs", "--clusters", "--threshold", "0.5"];
        args.extend_from_slice(extra);
        let (code, out, err) = run(dir, &args);
        assert_eq!(code, 0, "{err}");
        clusters(&out).into_iter().flatten().collect()
    }

    #[test]
    fn ignore_rules_hidden_files_globs_and_sizes() {
        let dir = tempfile::tempdir().unwrap();
        copies(dir.path());
        let (a, b, build, drafts) = (
            "docs/a.md",
            "docs/b.txt",
            "docs/build/a.md",
            "docs/.drafts/a.md",
        );
        assert_eq!(members(dir.path(), &[]), [a, b]);
        assert_eq!(members(dir.path(), &["--hidden"]), [drafts, a, b]);
        assert_eq!(members(dir.path(), &["--no-ignore"]), [a, b, build]);
        assert_eq!(
            members(dir.path(), &["--no-ignore", "--hidden", "--glob", "*.md"]),
            [drafts, a, build]
        );
        assert_eq!(
            members(dir.path(), &["--no-ignore", "--exclude", "build/**"]),
            [a, b]
        );
        let (code, out, err) = run(dir.path(), &["scan", "docs", "--max-filesize", "2K"]);
        assert_eq!(code, 0, "{err}");
        let recs = records(&out);
        let skip = recs.iter().find(|r| r["type"] == "skip").unwrap();
        assert_eq!(
            (skip["id"].as_str(), skip["reason_kind"].as_str()),
            (Some("docs/big.md"), Some("too-large"))
        );
        assert_eq!(recs.last().unwrap()["skipped_too_large"], 1);
        let (code, _, err) = run(dir.path(), &["scan", "docs", "--max-filesize", "lots"]);
        assert_eq!(code, 2);
        assert!(err.contains("`lots` is not a size"), "{err}");
    }

    #[test]
    fn files_from_a_list_or_standard_input() {
        let dir = tempfile::tempdir().unwrap();
        copies(dir.path());
        // Listed paths are read as given, hidden or ignored; a missing one is reported.
        std::fs::write(
            dir.path().join("list.txt"),
            "docs/a.md\ndocs/.drafts/a.md\ndocs/build/a.md\ndocs/gone.md\n",
        )
        .unwrap();
        let (code, out, err) = run(
            dir.path(),
            &["scan", "--files-from", "list.txt", "--clusters"],
        );
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            clusters(&out),
            [["docs/.drafts/a.md", "docs/a.md", "docs/build/a.md"]]
        );
        assert!(
            err.contains("ndup: docs/gone.md: No such file or directory"),
            "{err}"
        );

        let (code, out, err) = run_stdin(
            dir.path(),
            &[
                "scan",
                "--files-from",
                "-",
                "-0",
                "--exclude",
                "docs/build/**",
            ],
            b"docs/a.md\0docs/b.txt\0docs/build/a.md\0".to_vec(),
        );
        assert_eq!(code, 0, "{err}");
        assert_eq!(pairs(&out), of(&[("docs/a.md", "docs/b.txt")]));
        assert_eq!(records(&out).last().unwrap()["documents"], 2);
    }
}

/// A tree with two planted near-duplicate pairs and a lone document.
fn planted_tree(dir: &Path) {
    let (a, b) = (prose(40, 150), prose(41, 150));
    write_tree(
        dir,
        &[
            ("docs/a.md", &a),
            ("docs/a copy.md", &edited(&a)),
            ("docs/b.md", &b),
            ("docs/old/b.md", &edited(&b)),
            ("docs/c.md", &prose(42, 150)),
        ],
    );
}

mod formats {
    use super::*;

    fn planted_pairs() -> Vec<(String, String)> {
        of(&[
            ("docs/a copy.md", "docs/a.md"),
            ("docs/b.md", "docs/old/b.md"),
        ])
    }

    #[test]
    fn every_format_parses_back_to_the_same_pairs() {
        let dir = tempfile::tempdir().unwrap();
        planted_tree(dir.path());
        let scan = |format: &str| {
            let (code, out, err) = run(dir.path(), &["scan", "docs", "--format", format]);
            assert_eq!(code, 0, "{format}: {err}");
            out
        };

        let jsonl = scan("jsonl");
        assert_eq!(pairs(&jsonl), planted_pairs());
        let types: Vec<String> = records(&jsonl)
            .iter()
            .map(|r| r["type"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(types, ["params", "pair", "pair", "summary"]);

        let csv = scan("csv");
        let mut reader = csv::Reader::from_reader(csv.as_bytes());
        assert_eq!(
            reader.headers().unwrap(),
            vec!["a", "b", "estimate", "jaccard", "a_in_b", "b_in_a"]
        );
        let rows: Vec<(String, String)> = reader
            .records()
            .map(|r| {
                let r = r.unwrap();
                let estimate: f64 = r[2].parse().unwrap();
                assert!(estimate >= 0.8, "{r:?}");
                (r[0].to_string(), r[1].to_string())
            })
            .collect();
        assert_eq!(rows, planted_pairs());

        let sarif: Value = serde_json::from_str(&scan("sarif")).unwrap();
        assert_eq!(sarif["version"], "2.1.0");
        assert_eq!(sarif["runs"][0]["tool"]["driver"]["name"], "ndup");
        let results = sarif["runs"][0]["results"].as_array().unwrap();
        let located: Vec<(String, String)> = results
            .iter()
            .map(|r| {
                assert_eq!(r["ruleId"], "ndup/near-duplicate");
                assert_eq!(r["level"], "warning");
                let locs = r["locations"].as_array().unwrap();
                assert_eq!(locs.len(), 2);
                let uri = |i: usize| {
                    let l = &locs[i]["physicalLocation"];
                    assert_eq!(l["region"]["startLine"], 1);
                    l["artifactLocation"]["uri"].as_str().unwrap().to_string()
                };
                (uri(0), uri(1))
            })
            .collect();
        assert_eq!(
            located,
            of(&[
                ("docs/a%20copy.md", "docs/a.md"),
                ("docs/b.md", "docs/old/b.md"),
            ])
        );

        let github = scan("github");
        let lines: Vec<&str> = github.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(
            lines[1].starts_with(
                "::warning file=docs/b.md,line=1,title=Near-duplicate::docs/b.md is a near-duplicate of docs/old/b.md (estimate "
            ),
            "{}",
            lines[1]
        );

        let text = scan("text");
        assert!(
            text.starts_with("docs/a copy.md\n  ~ docs/a.md  (estimate "),
            "{text}"
        );
        // Not a terminal: never coloured, with or without NO_COLOR.
        assert!(!text.contains('\u{1b}'));
        let out = ndup()
            .current_dir(dir.path())
            .args(["scan", "docs", "--format", "text"])
            .env_remove("NO_COLOR")
            .output()
            .unwrap();
        assert!(!String::from_utf8(out.stdout).unwrap().contains('\u{1b}'));
    }

    #[test]
    fn records_are_located_at_their_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("c.jsonl"), jsonl_corpus()).unwrap();
        let (code, out, err) = run(dir.path(), &["scan", "c.jsonl", "--format", "sarif"]);
        assert_eq!(code, 0, "{err}");
        let sarif: Value = serde_json::from_str(&out).unwrap();
        let first = &sarif["runs"][0]["results"][0]["locations"];
        let at = |i: usize| {
            let l = &first[i]["physicalLocation"];
            (
                l["artifactLocation"]["uri"].as_str().unwrap().to_string(),
                l["region"]["startLine"].as_u64().unwrap(),
            )
        };
        // Pair (a, a2): lines 1 and 4.
        assert_eq!(
            (at(0), at(1)),
            (("c.jsonl".into(), 1), ("c.jsonl".into(), 4))
        );
        let (_, out, _) = run(dir.path(), &["scan", "c.jsonl", "--format", "github"]);
        assert!(out.starts_with("::warning file=c.jsonl,line=1,"), "{out}");
    }

    #[test]
    fn output_file_is_written_whole_and_replaces_the_old_one() {
        let dir = tempfile::tempdir().unwrap();
        planted_tree(dir.path());
        std::fs::write(dir.path().join("report.sarif"), "old").unwrap();
        let (code, stdout, err) = run(
            dir.path(),
            &[
                "scan",
                "docs",
                "--format",
                "sarif",
                "--output",
                "report.sarif",
            ],
        );
        assert_eq!(code, 0, "{err}");
        assert!(stdout.is_empty());
        let (_, direct, _) = run(dir.path(), &["scan", "docs", "--format", "sarif"]);
        let written = std::fs::read_to_string(dir.path().join("report.sarif")).unwrap();
        assert_eq!(written, direct);
        // No temporary file is left behind.
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");

        let (code, _, err) = run(dir.path(), &["scan", "docs", "-o", "no/such/dir/r.json"]);
        assert_eq!(code, 2);
        assert!(err.contains("no/such/dir"), "{err}");
    }
}

mod gates {
    use super::*;

    fn summary(stdout: &str) -> Value {
        let last = records(stdout).pop().unwrap();
        assert_eq!(last["type"], "summary");
        last
    }

    #[test]
    fn exit_codes_come_after_the_whole_report() {
        let dir = tempfile::tempdir().unwrap();
        planted_tree(dir.path());
        for (args, code) in [
            (&["--fail-on-duplicates"][..], 1),
            (&["--max-pairs", "2"], 0),
            (&["--max-pairs", "1"], 1),
            (&["--max-pairs", "2", "--fail-on-duplicates"], 1),
            (&["--clusters", "--max-pairs", "1"], 1),
            (&[], 0),
        ] {
            let mut all = vec!["scan", "docs"];
            all.extend_from_slice(args);
            let (got, out, err) = run(dir.path(), &all);
            assert_eq!(got, code, "{args:?}: {err}");
            assert_eq!(summary(&out)["pairs"], 2, "{args:?}");
        }
        // A failing gate still writes the report file.
        let (code, _, _) = run(
            dir.path(),
            &["scan", "docs", "--fail-on-duplicates", "-o", "r.jsonl"],
        );
        assert_eq!(code, 1);
        let written = std::fs::read_to_string(dir.path().join("r.jsonl")).unwrap();
        assert_eq!(pairs(&written).len(), 2);
        let (code, _, _) = run(dir.path(), &["scan", "docs", "--max-pairs", "-1"]);
        assert_eq!(code, 2);
    }

    #[test]
    fn a_baseline_hides_accepted_pairs_and_fails_only_on_new_ones() {
        let dir = tempfile::tempdir().unwrap();
        planted_tree(dir.path());
        let (code, out, err) = run(
            dir.path(),
            &["scan", "docs", "--write-baseline", "ndup-baseline.json"],
        );
        assert_eq!(code, 0, "{err}");
        assert_eq!(pairs(&out).len(), 2);
        let file: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("ndup-baseline.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(file["type"], "ndup-baseline");
        assert_eq!(
            file["pairs"],
            json!([
                ["docs/a copy.md", "docs/a.md"],
                ["docs/b.md", "docs/old/b.md"]
            ])
        );

        let gate = [
            "scan",
            "docs",
            "--baseline",
            "ndup-baseline.json",
            "--fail-on-duplicates",
        ];
        let (code, out, err) = run(dir.path(), &gate);
        assert_eq!(code, 0, "{err}");
        assert!(pairs(&out).is_empty());
        assert_eq!(summary(&out)["baseline_pairs"], 2);
        assert!(
            err.contains("0 pairs (and 2 accepted: 2 by baseline)"),
            "{err}"
        );

        // A new near-duplicate: only it is reported, and the gate fails.
        let c = std::fs::read_to_string(dir.path().join("docs/c.md")).unwrap();
        std::fs::write(dir.path().join("docs/c2.md"), edited(&c)).unwrap();
        let (code, out, _) = run(dir.path(), &gate);
        assert_eq!(code, 1);
        assert_eq!(pairs(&out), of(&[("docs/c.md", "docs/c2.md")]));

        std::fs::write(dir.path().join("bad.json"), "{}").unwrap();
        let (code, out, err) = run(dir.path(), &["scan", "docs", "--baseline", "bad.json"]);
        assert_eq!(code, 2);
        assert!(out.is_empty());
        assert!(err.contains("bad.json: not an ndup baseline"), "{err}");
    }

    #[test]
    fn ndupignore_accepts_glob_pairs_in_either_order() {
        let dir = tempfile::tempdir().unwrap();
        planted_tree(dir.path());
        std::fs::write(
            dir.path().join("docs/.ndupignore"),
            "# old copies are kept on purpose\nold/**   *.md\n",
        )
        .unwrap();
        let (code, out, err) = run(dir.path(), &["scan", "docs", "--fail-on-duplicates"]);
        assert_eq!(code, 1, "{err}");
        assert_eq!(pairs(&out), of(&[("docs/a copy.md", "docs/a.md")]));
        assert_eq!(summary(&out)["ignored_pairs"], 1);

        // For JSON lines, the root is the current directory and globs match record ids.
        std::fs::write(dir.path().join("c.jsonl"), jsonl_corpus()).unwrap();
        std::fs::write(dir.path().join(".ndupignore"), "b b?\n").unwrap();
        let (code, out, err) = run(dir.path(), &["scan", "c.jsonl"]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(pairs(&out), of(&[("a", "a2")]));

        std::fs::write(dir.path().join("docs/.ndupignore"), "just-one-glob\n").unwrap();
        let (code, _, err) = run(dir.path(), &["scan", "docs"]);
        assert_eq!(code, 2);
        assert!(
            err.contains("docs/.ndupignore: line 1: expected two globs"),
            "{err}"
        );
    }

    #[test]
    fn ignore_markers_leave_a_region_out() {
        let dir = tempfile::tempdir().unwrap();
        let shared = prose(50, 60);
        let with = |seed: u64, start: &str, end: &str| {
            format!(
                "{shared}\n<!-- {start} -->\n{}\n<!-- {end} -->\n",
                prose(seed, 300)
            )
        };
        write_tree(
            dir.path(),
            &[
                ("m/a.md", &with(51, "ndup:ignore-start", "ndup:ignore-end")),
                ("m/b.md", &with(52, "ndup:ignore-start", "ndup:ignore-end")),
                ("u/a.md", &with(51, "generated", "end")),
                ("u/b.md", &with(52, "generated", "end")),
            ],
        );
        let (_, out, _) = run(dir.path(), &["scan", "m", "--verify", "exact"]);
        let recs = records(&out);
        let pair = recs.iter().find(|r| r["type"] == "pair").unwrap();
        // Only the shared text is compared: an exact copy.
        assert_eq!(
            (&pair["estimate"], &pair["jaccard"]),
            (&json!(1.0), &json!(1.0))
        );
        let (_, out, _) = run(dir.path(), &["scan", "u"]);
        assert!(pairs(&out).is_empty());
    }
}

mod dedup {
    use super::*;

    /// Five records and a malformed line: `a`, `a-loud` (the same text in capitals: an exact copy
    /// once normalized, of the same length), `b`, `a-long` (a near-duplicate of `a`, longer) and
    /// `b-copy`.
    fn corpus() -> (String, Vec<String>) {
        let (a, b) = (prose(60, 150), prose(61, 150));
        let lines = vec![
            json!({"id": "a", "text": a}).to_string(),
            json!({"id": "a-loud", "text": a.to_uppercase()}).to_string(),
            json!({"id": "b", "text": b}).to_string(),
            "{\"id\": \"broken\"".to_string(),
            json!({"id": "a-long", "text": format!("{a} and one more clause at the end")})
                .to_string(),
            json!({"id": "b-copy", "text": b}).to_string(),
        ];
        (lines.iter().map(|l| format!("{l}\n")).collect(), lines)
    }

    #[test]
    fn jsonl_in_jsonl_out_keeps_one_record_per_cluster() {
        let dir = tempfile::tempdir().unwrap();
        let (text, lines) = corpus();
        std::fs::write(dir.path().join("c.jsonl"), &text).unwrap();
        let kept = |keep: &str| -> Vec<String> {
            let (code, _, err) = run(
                dir.path(),
                &["dedup", "c.jsonl", "--output", "out.jsonl", "--keep", keep],
            );
            assert_eq!(code, 0, "{err}");
            assert!(err.contains("ndup: c.jsonl:4: malformed JSON"), "{err}");
            std::fs::read_to_string(dir.path().join("out.jsonl"))
                .unwrap()
                .lines()
                .map(String::from)
                .collect()
        };
        // Records are written byte for byte, in input order.
        assert_eq!(kept("first"), [lines[0].clone(), lines[2].clone()]);
        assert_eq!(kept("longest"), [lines[2].clone(), lines[4].clone()]);
        // a and a-loud have the same length; "a" < "a-loud" breaks the tie. b and b-copy too.
        assert_eq!(kept("shortest"), [lines[0].clone(), lines[2].clone()]);
        let (_, _, err) = run(dir.path(), &["dedup", "c.jsonl", "-o", "out.jsonl"]);
        assert!(
            err.contains("5 documents, kept 2, dropped 3 (2 exact, 1 near duplicates), 1 skipped"),
            "{err}"
        );
    }

    /// dedup shares scan's candidate flags: explicit banding and the tuner's weights shape the
    /// LSH stage (recorded nowhere in the kept records, so the result is what is checked) and
    /// the same near-duplicate is dropped.
    #[test]
    fn banding_and_tuner_weights_apply_to_dedup() {
        let dir = tempfile::tempdir().unwrap();
        let (text, lines) = corpus();
        std::fs::write(dir.path().join("c.jsonl"), &text).unwrap();
        let want = format!("{}\n{}\n", lines[0], lines[2]);
        for flags in [
            &["--bands", "16", "--rows", "8"][..],
            &["--fp-weight", "5", "--fn-weight", "50"][..],
            &["--max-bucket", "2", "--verify", "exact"][..],
        ] {
            let mut args = vec!["dedup", "c.jsonl", "-o", "-", "-q"];
            args.extend(flags);
            let (code, out, err) = run(dir.path(), &args);
            assert_eq!(code, 0, "{flags:?}: {err}");
            assert_eq!(out, want, "{flags:?}");
        }
        let (code, _, err) = run(
            dir.path(),
            &["dedup", "c.jsonl", "-o", "-", "--fp-weight=-1"],
        );
        assert_eq!(code, 2);
        assert!(err.contains("weight"), "{err}");
    }

    #[test]
    fn compressed_input_stdin_and_compressed_output() {
        let dir = tempfile::tempdir().unwrap();
        let (text, lines) = corpus();
        std::fs::write(dir.path().join("c.jsonl.zst"), zstd(text.as_bytes())).unwrap();
        let want = format!("{}\n{}\n", lines[0], lines[2]);
        let (code, out, err) = run(dir.path(), &["dedup", "c.jsonl.zst", "-o", "-"]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(out, want);
        let (code, _, err) = run_stdin(
            dir.path(),
            &["dedup", "-", "-o", "out.jsonl.gz", "-q"],
            gzip(text.as_bytes()),
        );
        assert_eq!(code, 0, "{err}");
        assert!(err.is_empty(), "{err}");
        let gz = std::fs::read(dir.path().join("out.jsonl.gz")).unwrap();
        let mut plain = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gz[..]), &mut plain)
            .unwrap();
        assert_eq!(plain, want);
    }

    #[test]
    fn a_file_tree_gives_the_files_to_keep_and_to_drop() {
        let dir = tempfile::tempdir().unwrap();
        planted_tree(dir.path());
        let a = std::fs::read_to_string(dir.path().join("docs/a.md")).unwrap();
        std::fs::write(dir.path().join("docs/z.md"), a.to_uppercase()).unwrap();
        let (code, out, err) = run(
            dir.path(),
            &["dedup", "docs", "-o", "-", "--keep", "longest"],
        );
        assert_eq!(code, 0, "{err}");
        let list: Vec<Value> = records(&out);
        // The keeper of a cluster: the longest text, ties to the smaller id.
        let keeper_of = |ids: &[&'static str]| -> &'static str {
            let len = |p: &str| {
                std::fs::read_to_string(dir.path().join(p))
                    .unwrap()
                    .chars()
                    .count()
            };
            ids.iter()
                .copied()
                .min_by_key(|id| (std::cmp::Reverse(len(id)), *id))
                .unwrap()
        };
        let a_keeper = keeper_of(&["docs/a copy.md", "docs/a.md", "docs/z.md"]);
        let b_keeper = keeper_of(&["docs/b.md", "docs/old/b.md"]);
        for r in &list {
            let id = r["id"].as_str().unwrap();
            let in_a = ["docs/a copy.md", "docs/a.md", "docs/z.md"].contains(&id);
            let in_b = ["docs/b.md", "docs/old/b.md"].contains(&id);
            let keeper = if in_a {
                a_keeper
            } else if in_b {
                b_keeper
            } else {
                id
            };
            if id == keeper {
                assert_eq!(r, &json!({"type": "keep", "id": id}));
            } else {
                assert_eq!(r["type"], "drop", "{r}");
                assert_eq!(r["kept"], keeper, "{r}");
                // z.md is a.md shouted: exact when a.md is kept, near otherwise.
                let exact = id == "docs/z.md" && keeper == "docs/a.md";
                assert_eq!(r["reason"], if exact { "exact" } else { "near" }, "{r}");
            }
        }
        assert_eq!(list.len(), 6);
    }

    #[test]
    fn refuses_to_overwrite_its_input() {
        let dir = tempfile::tempdir().unwrap();
        let (text, _) = corpus();
        std::fs::write(dir.path().join("c.jsonl"), &text).unwrap();
        let (code, _, err) = run(dir.path(), &["dedup", "c.jsonl", "-o", "./c.jsonl"]);
        assert_eq!(code, 2);
        assert!(err.contains("would overwrite the input"), "{err}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("c.jsonl")).unwrap(),
            text
        );
    }
}

mod config {
    use super::*;

    #[test]
    fn ndup_toml_in_the_root_holds_options_and_flags_override_it() {
        let dir = tempfile::tempdir().unwrap();
        planted_tree(dir.path());
        std::fs::write(
            dir.path().join("docs/ndup.toml"),
            "format = \"csv\"\nexclude = [\"old/**\"]\nfail-on-duplicates = true\n\
             [dedup]\nkeep = \"longest\"\n",
        )
        .unwrap();
        let (code, out, err) = run(dir.path(), &["scan", "docs"]);
        assert_eq!(code, 1, "{err}");
        assert_eq!(
            out.lines().collect::<Vec<_>>()[..2]
                .iter()
                .map(|l| l.split(',').take(2).collect::<Vec<_>>().join(","))
                .collect::<Vec<_>>(),
            ["a,b", "docs/a copy.md,docs/a.md"]
        );
        assert_eq!(out.lines().count(), 2, "old/** is excluded: {out}");
        // Flags win: another format, another exclude list (replacing the file's).
        let (code, out, _) = run(
            dir.path(),
            &["scan", "docs", "--format", "jsonl", "--exclude", "a*"],
        );
        assert_eq!(code, 1);
        assert_eq!(pairs(&out), of(&[("docs/b.md", "docs/old/b.md")]));
        // The [dedup] table is for dedup only; top-level keys it does not know are left alone.
        let (code, _, err) = run(dir.path(), &["dedup", "docs", "-o", "-"]);
        assert_eq!(code, 0, "{err}");
    }

    #[test]
    fn config_flag_and_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        planted_tree(dir.path());
        std::fs::write(dir.path().join("ci.toml"), "max_pairs = 1\nquiet = true\n").unwrap();
        let (code, out, err) = run(dir.path(), &["scan", "docs", "--config", "ci.toml"]);
        assert_eq!(code, 1);
        assert_eq!(pairs(&out).len(), 2);
        assert!(err.is_empty(), "{err}");
        for (text, msg) in [
            ("colour = true\n", "ci.toml: unknown option `colour`"),
            (
                "quiet = \"yes\"\n",
                "ci.toml: `quiet` must be true or false",
            ),
            ("threshold = \"high\"\n", "with the options of ci.toml"),
            ("threshold = [\n", "ci.toml:"),
            (
                "[scan]\nkeep = \"first\"\n",
                "ci.toml: [scan]: unknown option `keep`",
            ),
        ] {
            std::fs::write(dir.path().join("ci.toml"), text).unwrap();
            let (code, out, err) = run(dir.path(), &["scan", "docs", "--config", "ci.toml"]);
            assert_eq!(code, 2, "{text}");
            assert!(out.is_empty());
            assert!(err.contains(msg), "{text}: {err}");
        }
        let (code, _, err) = run(dir.path(), &["scan", "docs", "--config", "none.toml"]);
        assert_eq!(code, 2);
        assert!(
            err.contains("none.toml: cannot read the configuration"),
            "{err}"
        );
    }
}
