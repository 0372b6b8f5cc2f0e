//! `ndup scan --exact` run as a user would: the binary on a temporary tree.

use std::fs;
use std::path::Path;

use assert_cmd::Command;
use ndup::find::Pipeline;
use ndup::find::config::ScanConfig;
use ndup::join::{Threshold, brute_force};
use ndup::sim::Measure;
use serde_json::Value;
use tempfile::TempDir;

fn ndup() -> Command {
    Command::cargo_bin("ndup").unwrap()
}

/// Runs `ndup scan ARGS` in `dir` and returns (exit code, JSON records, stderr).
fn scan(dir: &Path, args: &[&str]) -> (i32, Vec<Value>, String) {
    let out = ndup()
        .current_dir(dir)
        .arg("scan")
        .args(args)
        .output()
        .unwrap();
    let records = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (
        out.status.code().unwrap(),
        records,
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn pairs(records: &[Value]) -> Vec<(String, String, f64)> {
    records
        .iter()
        .filter(|r| r["type"] == "pair")
        .map(|r| {
            (
                r["a"].as_str().unwrap().to_string(),
                r["b"].as_str().unwrap().to_string(),
                r["jaccard"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// A tree of near-duplicates at several distances from one another, with an identical copy, a
/// one-shingle file, an empty file and a binary file.
fn corpus() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("docs");
    fs::create_dir(&d).unwrap();
    let base: Vec<String> = (0..60).map(|i| format!("word{i}")).collect();
    for (name, drop) in [("a", 0), ("b", 3), ("c", 8), ("d", 15), ("e", 25)] {
        let text: Vec<&str> = base[drop..].iter().map(String::as_str).collect();
        fs::write(d.join(format!("{name}.txt")), text.join(" ")).unwrap();
    }
    fs::write(d.join("a-copy.txt"), base.join(" ")).unwrap();
    fs::write(d.join("short.txt"), "tiny").unwrap();
    fs::write(d.join("short-again.txt"), "TINY").unwrap();
    fs::write(d.join("empty.txt"), "").unwrap();
    fs::write(d.join("logo.bin"), b"\x89PNG\0\0binary").unwrap();
    dir
}

/// The exact pairs by brute force through the library, as (a, b, jaccard) with a < b.
fn expected(dir: &Path, t: f64, args_config: &ScanConfig) -> Vec<(String, String, f64)> {
    let p = Pipeline::new(args_config.clone()).unwrap();
    let mut names: Vec<String> = fs::read_dir(dir.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".txt"))
        .collect();
    names.sort();
    let sets: Vec<Vec<u64>> = names
        .iter()
        .map(|n| p.shingle_set(&fs::read_to_string(dir.join("docs").join(n)).unwrap()))
        .collect();
    let th = Threshold::from_f64(t).unwrap();
    let mut out: Vec<(String, String, f64)> = brute_force(&sets, th, Measure::Jaccard)
        .into_iter()
        .map(|m| {
            (
                format!("docs/{}", names[m.a as usize]),
                format!("docs/{}", names[m.b as usize]),
                m.jaccard(),
            )
        })
        .collect();
    out.sort_by(|x, y| (&x.0, &x.1).cmp(&(&y.0, &y.1)));
    out
}

#[test]
fn exact_mode_reports_exactly_the_brute_force_pairs() {
    let dir = corpus();
    for t in ["0.3", "0.5", "0.8", "0.95", "1.0"] {
        let (code, records, stderr) = scan(dir.path(), &["docs", "--exact", "-t", t]);
        assert_eq!(code, 0, "{stderr}");
        let expect = expected(dir.path(), t.parse().unwrap(), &ScanConfig::default());
        assert_eq!(pairs(&records), expect, "threshold {t}");
        // In exact mode the estimate is the exact value.
        for r in records.iter().filter(|r| r["type"] == "pair") {
            assert_eq!(r["estimate"], r["jaccard"]);
        }
        assert_eq!(records[0]["mode"], "exact");
        assert!(stderr.contains("exact mode"), "{stderr}");
        assert!(stderr.contains("memory estimate"), "{stderr}");
    }
    // Identical files and the one-shingle files pair at 1.0; the empty file never pairs.
    let (_, records, _) = scan(dir.path(), &["docs", "--exact", "-t", "1"]);
    let found = pairs(&records);
    assert!(found.contains(&("docs/a-copy.txt".into(), "docs/a.txt".into(), 1.0)));
    assert!(found.contains(&("docs/short-again.txt".into(), "docs/short.txt".into(), 1.0)));
    assert!(
        !found
            .iter()
            .any(|p| p.0.contains("empty") || p.1.contains("empty"))
    );
    let summary = records.last().unwrap();
    assert_eq!(summary["empty"], 1);
    assert_eq!(summary["skipped_binary"], 1);
}

#[test]
fn a_pair_exactly_at_the_threshold_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    // One-word shingles: 8 common words, 10 in the union, Jaccard exactly 0.8.
    fs::write(dir.path().join("x.txt"), "a b c d e f g h i").unwrap();
    fs::write(dir.path().join("y.txt"), "a b c d e f g h j").unwrap();
    let args = ["x.txt", "y.txt", "--exact", "--shingle", "word", "-w", "1"];
    let (code, records, _) = scan(dir.path(), &[&args[..], &["-t", "0.8"]].concat());
    assert_eq!(code, 0);
    assert_eq!(pairs(&records), [("x.txt".into(), "y.txt".into(), 0.8)]);
    let (_, records, _) = scan(dir.path(), &[&args[..], &["-t", "0.81"]].concat());
    assert!(pairs(&records).is_empty());
}

#[test]
fn threshold_zero_pairs_every_non_empty_document() {
    let dir = corpus();
    let (code, records, _) = scan(dir.path(), &["docs", "--exact", "-t", "0"]);
    assert_eq!(code, 0);
    // 8 non-empty text files: 28 pairs, related or not.
    assert_eq!(pairs(&records).len(), 28);
}

#[test]
fn exact_containment_finds_a_document_inside_a_larger_one() {
    let dir = tempfile::tempdir().unwrap();
    let para = "the quick brown fox jumps over the lazy dog near the river bank today";
    let filler = |from: usize| {
        (from..from + 100)
            .map(|i| format!("filler{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let long = format!("{} {para} {}", filler(0), filler(100));
    fs::write(dir.path().join("big.txt"), long).unwrap();
    fs::write(dir.path().join("quote.txt"), para).unwrap();
    let (code, records, _) = scan(dir.path(), &["big.txt", "quote.txt", "--exact"]);
    assert_eq!(code, 0);
    assert!(pairs(&records).is_empty(), "Jaccard is low");
    let (code, records, _) = scan(
        dir.path(),
        &[
            "big.txt",
            "quote.txt",
            "--exact",
            "--containment",
            "-t",
            "0.9",
        ],
    );
    assert_eq!(code, 0);
    let p: Vec<&Value> = records.iter().filter(|r| r["type"] == "pair").collect();
    assert_eq!(p.len(), 1);
    assert_eq!(p[0]["a"], "big.txt");
    assert_eq!(p[0]["b_in_a"], 1.0);
    assert!(p[0]["a_in_b"].as_f64().unwrap() < 0.2);
    assert!(p[0]["jaccard"].as_f64().unwrap() < 0.2);
    assert_eq!(records[0]["measure"], "containment");
}

#[test]
fn containment_runs_sampled_without_exact_and_joined_with_it() {
    let dir = corpus();
    // Without --exact, containment is estimated from the modulo sample (issue 3's path)...
    let (code, records, _) = scan(dir.path(), &["docs", "--containment"]);
    assert_eq!(code, 0);
    assert_eq!(records[0]["measure"], "containment");
    assert_eq!(records[0]["mode"], "minhash");
    assert_eq!(records[0]["sketch"], "modulo");
    // ...with it, the join computes exact containment.
    let (code, records, _) = scan(dir.path(), &["docs", "--containment", "--exact"]);
    assert_eq!(code, 0);
    assert_eq!(records[0]["mode"], "exact");
    for p in records.iter().filter(|r| r["type"] == "pair") {
        let (x, y) = (p["a_in_b"].as_f64().unwrap(), p["b_in_a"].as_f64().unwrap());
        assert!(x.max(y) >= 0.8, "{p}");
    }
}

#[test]
fn a_corpus_over_the_memory_limit_is_refused_before_the_join() {
    let dir = corpus();
    let (code, records, stderr) = scan(dir.path(), &["docs", "--exact", "--max-memory", "2K"]);
    assert_eq!(code, 2);
    assert!(records.is_empty(), "nothing is reported");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--max-memory 2.0 KiB"), "{stderr}");
    assert!(stderr.contains("MinHash"), "{stderr}");
    let (code, _, _) = scan(dir.path(), &["docs", "--exact", "--max-memory", "1G"]);
    assert_eq!(code, 0);
    let (code, _, stderr) = scan(dir.path(), &["docs", "--exact", "--max-memory", "lots"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("is not a size"), "{stderr}");
}

#[test]
fn exact_output_is_the_same_with_one_or_two_threads_and_gates_ci() {
    let dir = corpus();
    let run = |threads: &str| {
        ndup()
            .current_dir(dir.path())
            .env("RAYON_NUM_THREADS", threads)
            .args([
                "scan",
                "docs",
                "--exact",
                "-t",
                "0.5",
                "--fail-on-duplicates",
            ])
            .output()
            .unwrap()
    };
    let (one, two) = (run("1"), run("2"));
    assert_eq!(one.status.code(), Some(1));
    assert_eq!(one.stdout, two.stdout);
    let text = ndup()
        .current_dir(dir.path())
        .args(["scan", "docs", "--exact", "--format", "text", "--clusters"])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("docs/a-copy.txt"), "{text}");
}

/// `--exact` takes JSON lines like every other mode: the records of a JSONL file (plain, gzip, or
/// on stdin) give exactly the pairs their texts give as files.
#[test]
fn exact_mode_reads_json_lines_like_files() {
    let dir = corpus();
    let d = dir.path().join("docs");
    let mut jsonl = String::new();
    let mut names: Vec<String> = fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".txt"))
        .collect();
    names.sort();
    for n in &names {
        let text = fs::read_to_string(d.join(n)).unwrap();
        jsonl += &format!(
            "{}\n",
            serde_json::json!({"id": format!("docs/{n}"), "text": text})
        );
    }
    fs::write(dir.path().join("c.jsonl"), &jsonl).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, jsonl.as_bytes()).unwrap();
    fs::write(dir.path().join("c.jsonl.gz"), gz.finish().unwrap()).unwrap();

    let (code, files, _) = scan(dir.path(), &["docs", "--exact", "-t", "0.5"]);
    assert_eq!(code, 0);
    let want = pairs(&files);
    assert!(want.len() >= 5, "{want:?}");
    for input in ["c.jsonl", "c.jsonl.gz"] {
        let (code, records, stderr) = scan(dir.path(), &[input, "--exact", "-t", "0.5"]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(records[0]["mode"], "exact");
        assert_eq!(pairs(&records), want, "{input}");
    }
    let out = ndup()
        .current_dir(dir.path())
        .args(["scan", "-", "--exact", "-t", "0.5"])
        .write_stdin(jsonl)
        .output()
        .unwrap();
    assert!(out.status.success());
    let records: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(pairs(&records), want);
}
