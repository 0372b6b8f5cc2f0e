//! `ndup scan --exact`: the exact set-similarity join, checked against brute force through the
//! library; containment; the memory limit; JSON lines.

use std::fs;

use ndup::find::Pipeline;
use ndup::find::config::ScanConfig;
use ndup::join::{Threshold, brute_force};
use ndup::sim::Measure;
use serde_json::Value;

use super::util::{Dir, Run, gzip};

/// The pairs of a report as (a, b, jaccard): exact mode always computes the Jaccard.
fn pairs(run: &Run) -> Vec<(String, String, f64)> {
    run.pairs()
        .into_iter()
        .map(|p| (p.a, p.b, p.jaccard.expect("jaccard is a number")))
        .collect()
}

/// A tree of near-duplicates at several distances from one another, with an identical copy, a
/// one-shingle file, an empty file and a binary file.
fn corpus() -> Dir {
    let d = Dir::new();
    let base: Vec<String> = (0..60).map(|i| format!("word{i}")).collect();
    for (name, drop) in [("a", 0), ("b", 3), ("c", 8), ("d", 15), ("e", 25)] {
        let text: Vec<&str> = base[drop..].iter().map(String::as_str).collect();
        d.create(&format!("docs/{name}.txt"), text.join(" "));
    }
    d.create("docs/a-copy.txt", base.join(" "));
    d.create("docs/short.txt", "tiny");
    d.create("docs/short-again.txt", "TINY");
    d.create("docs/empty.txt", "");
    d.create("docs/logo.bin", b"\x89PNG\0\0binary");
    d
}

/// The `.txt` files of `docs/`, sorted.
fn txt_names(d: &Dir) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(d.path().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".txt"))
        .collect();
    names.sort();
    names
}

/// The exact pairs by brute force through the library, as (a, b, jaccard) with a < b.
fn expected(d: &Dir, t: f64, args_config: &ScanConfig) -> Vec<(String, String, f64)> {
    let p = Pipeline::new(args_config.clone()).unwrap();
    let names = txt_names(d);
    let sets: Vec<Vec<u64>> = names
        .iter()
        .map(|n| p.shingle_set(&d.read(&format!("docs/{n}"))))
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
    let d = corpus();
    for t in ["0.3", "0.5", "0.8", "0.95", "1.0"] {
        let run = d.scan().args(["docs", "--exact", "-t", t]).ok();
        let records = run.records();
        let expect = expected(&d, t.parse().unwrap(), &ScanConfig::default());
        eqnice!(expect, pairs(&run), "threshold {t}");
        // In exact mode the estimate is the exact value.
        for r in records.iter().filter(|r| r["type"] == "pair") {
            assert_eq!(r["estimate"], r["jaccard"]);
        }
        assert_eq!(records[0]["mode"], "exact");
        // Only the join's parameters: no sketch, banding, verification or buckets.
        for field in ["sketch", "num_perm", "bands", "verify", "max_bucket"] {
            assert!(records[0].get(field).is_none(), "{field}: {}", records[0]);
        }
        assert!(run.stderr.contains("exact mode"), "{}", run.describe());
        assert!(run.stderr.contains("memory estimate"), "{}", run.describe());
    }
    // Identical files and the one-shingle files pair at 1.0; the empty file never pairs.
    let run = d.scan().args(["docs", "--exact", "-t", "1"]).run();
    let found = pairs(&run);
    assert!(found.contains(&("docs/a-copy.txt".into(), "docs/a.txt".into(), 1.0)));
    assert!(found.contains(&("docs/short-again.txt".into(), "docs/short.txt".into(), 1.0)));
    assert!(
        !found
            .iter()
            .any(|p| p.0.contains("empty") || p.1.contains("empty"))
    );
    let summary = run.records().pop().unwrap();
    assert_eq!(summary["empty"], 1);
    assert_eq!(summary["skipped_binary"], 1);
}

#[test]
fn a_pair_exactly_at_the_threshold_is_reported() {
    let d = Dir::new();
    // One-word shingles: 8 common words, 10 in the union, Jaccard exactly 0.8.
    d.create("x.txt", "a b c d e f g h i");
    d.create("y.txt", "a b c d e f g h j");
    let args = ["x.txt", "y.txt", "--exact", "--shingle", "word", "-w", "1"];
    let run = d.scan().args(args).args(["-t", "0.8"]).ok();
    eqnice!(
        vec![("x.txt".to_string(), "y.txt".to_string(), 0.8)],
        pairs(&run)
    );
    let run = d.scan().args(args).args(["-t", "0.81"]).run();
    assert!(pairs(&run).is_empty());
}

#[test]
fn threshold_zero_pairs_every_non_empty_document() {
    let d = corpus();
    let run = d.scan().args(["docs", "--exact", "-t", "0"]).ok();
    // 8 non-empty text files: 28 pairs, related or not.
    assert_eq!(pairs(&run).len(), 28);
}

#[test]
fn exact_containment_finds_a_document_inside_a_larger_one() {
    let d = Dir::new();
    let para = "the quick brown fox jumps over the lazy dog near the river bank today";
    let filler = |from: usize| {
        (from..from + 100)
            .map(|i| format!("filler{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    d.create("big.txt", format!("{} {para} {}", filler(0), filler(100)));
    d.create("quote.txt", para);
    let run = d.scan().args(["big.txt", "quote.txt", "--exact"]).ok();
    assert!(pairs(&run).is_empty(), "Jaccard is low");
    let run = d
        .scan()
        .args(["big.txt", "quote.txt", "--exact", "--containment"])
        .args(["-t", "0.9"])
        .ok();
    let records = run.records();
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
    let d = corpus();
    // Without --exact, containment is estimated from the modulo sample (issue 3's path)...
    let records = d.scan().args(["docs", "--containment"]).ok().records();
    assert_eq!(records[0]["measure"], "containment");
    assert_eq!(records[0]["mode"], "minhash");
    assert_eq!(records[0]["sketch"], "modulo");
    // ...with it, the join computes exact containment.
    let records = d
        .scan()
        .args(["docs", "--containment", "--exact"])
        .ok()
        .records();
    assert_eq!(records[0]["mode"], "exact");
    for p in records.iter().filter(|r| r["type"] == "pair") {
        let (x, y) = (p["a_in_b"].as_f64().unwrap(), p["b_in_a"].as_f64().unwrap());
        assert!(x.max(y) >= 0.8, "{p}");
    }
}

#[test]
fn a_corpus_over_the_memory_limit_is_refused_before_the_join() {
    let d = corpus();
    let run = d
        .scan()
        .args(["docs", "--exact", "--max-memory", "2K"])
        .code(2);
    assert!(run.records().is_empty(), "nothing is reported");
    assert_eq!(run.stderr_lines().len(), 1, "{}", run.describe());
    assert!(
        run.stderr.contains("--max-memory 2.0 KiB"),
        "{}",
        run.describe()
    );
    assert!(run.stderr.contains("MinHash"), "{}", run.describe());
    d.scan()
        .args(["docs", "--exact", "--max-memory", "1G"])
        .ok();
    let run = d
        .scan()
        .args(["docs", "--exact", "--max-memory", "lots"])
        .code(2);
    assert!(run.stderr.contains("is not a size"), "{}", run.describe());
}

#[test]
fn exact_output_is_the_same_with_one_or_two_threads_and_gates_ci() {
    let d = corpus();
    let run = |threads: &str| {
        d.scan()
            .args(["docs", "--exact", "-t", "0.5", "--fail-on-duplicates"])
            .env("RAYON_NUM_THREADS", threads)
            .code(1)
    };
    let (one, two) = (run("1"), run("2"));
    eqnice!(one.stdout, two.stdout);
    let text = d
        .scan()
        .args(["docs", "--exact", "--format", "text", "--clusters"])
        .run();
    assert!(
        text.stdout.contains("docs/a-copy.txt"),
        "{}",
        text.describe()
    );
}

/// `--exact` takes JSON lines like every other mode: the records of a JSONL file (plain, gzip, or
/// on stdin) give exactly the pairs their texts give as files.
#[test]
fn exact_mode_reads_json_lines_like_files() {
    let d = corpus();
    let mut jsonl = String::new();
    for n in &txt_names(&d) {
        let text = d.read(&format!("docs/{n}"));
        jsonl += &format!(
            "{}\n",
            serde_json::json!({"id": format!("docs/{n}"), "text": text})
        );
    }
    d.create("c.jsonl", &jsonl);
    d.create("c.jsonl.gz", gzip(jsonl.as_bytes()));

    let files = d.scan().args(["docs", "--exact", "-t", "0.5"]).ok();
    let want = pairs(&files);
    assert!(want.len() >= 5, "{want:?}");
    for input in ["c.jsonl", "c.jsonl.gz"] {
        let run = d.scan().args([input, "--exact", "-t", "0.5"]).ok();
        assert_eq!(run.records()[0]["mode"], "exact");
        eqnice!(want, pairs(&run), "{input}");
    }
    let run = d
        .scan()
        .args(["-", "--exact", "-t", "0.5"])
        .stdin(jsonl)
        .ok();
    eqnice!(want, pairs(&run));
}

/// A size as `format_bytes` prints it (`2.4 MiB`), in bytes, to within its one decimal.
pub(super) fn bytes_of(size: &str) -> f64 {
    let (number, unit) = size.split_once(' ').expect("a number and a unit");
    let scale = match unit {
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => panic!("unit {unit}"),
    };
    number.parse::<f64>().expect("a number") * scale
}

/// The size printed after `before` on the run's stderr, up to its unit.
pub(super) fn size_after<'a>(run: &'a Run, before: &str) -> &'a str {
    let at = run
        .stderr
        .find(before)
        .unwrap_or_else(|| panic!("{}", run.describe()));
    let rest = &run.stderr[at + before.len()..];
    let number = rest.find(' ').expect("a unit");
    let unit = rest[number + 1..]
        .find(|c: char| !c.is_ascii_alphabetic())
        .map_or(rest.len(), |u| number + 1 + u);
    &rest[..unit]
}

/// Forty documents of about 3 KB that share no word: no pair, and every set distinct.
fn unrelated() -> Dir {
    let d = Dir::new();
    for doc in 0..40 {
        let text: Vec<String> = (0..400).map(|i| format!("w{doc}x{i}")).collect();
        d.create(&format!("docs/{doc:02}.txt"), text.join(" "));
    }
    d
}

/// Issue 24, item 5: the estimate comes before the join's allocations. A limit the shingle
/// sets fit in, but the join does not, is refused with the join's whole estimate (the one a run
/// without a limit reports), before the join builds anything.
#[test]
fn a_corpus_whose_sets_fit_but_whose_join_does_not_is_refused_before_the_join() {
    let d = unrelated();
    let scan = |limit: Option<&str>| {
        let mut cmd = d.scan();
        cmd.args(["docs", "--exact"]).env("RAYON_NUM_THREADS", "2");
        if let Some(limit) = limit {
            cmd.args(["--max-memory", limit]);
        }
        cmd
    };
    let run = scan(None).ok();
    let estimate = size_after(&run, "memory estimate ").to_string();
    // The sets take 8 bytes a shingle, the join 20 or more: 60% of the estimate holds the
    // sets and what phase one needs beside them, not the join.
    let limit = format!("{}K", (bytes_of(&estimate) * 0.6 / 1024.0) as u64);
    let run = scan(Some(&limit)).code(2);
    assert!(run.records().is_empty(), "nothing is reported");
    assert_eq!(run.stderr_lines().len(), 1, "{}", run.describe());
    eqnice!(estimate, size_after(&run, "needs an estimated "));
    assert!(
        run.stderr
            .contains("or more for this corpus, over --max-memory"),
        "{}",
        run.describe()
    );
    assert!(run.stderr.contains("MinHash"), "{}", run.describe());
    // At the estimate itself (rounded up), the scan runs.
    let enough = format!("{}K", (bytes_of(&estimate) / 1024.0) as u64 + 110);
    scan(Some(&enough)).ok();
}

/// The estimate reported is honest for a small corpus: at least what the join surely holds at
/// its peak (the sets, 8 bytes a shingle, and each shingle copied with its position, 12 more),
/// and at most half again as much.
#[test]
fn the_memory_estimate_follows_the_shingle_sets() {
    let d = unrelated();
    let p = Pipeline::new(ScanConfig::default()).unwrap();
    let shingles: usize = (0..40)
        .map(|doc| p.shingle_set(&d.read(&format!("docs/{doc:02}.txt"))).len())
        .sum();
    let bound = 20.0 * shingles as f64;
    for threads in ["1", "2"] {
        let run = d
            .scan()
            .args(["docs", "--exact"])
            .env("RAYON_NUM_THREADS", threads)
            .ok();
        let estimate = bytes_of(size_after(&run, "memory estimate "));
        assert!(
            estimate >= bound * 0.99 && estimate <= bound * 1.5,
            "estimate {estimate}, bound {bound}\n{}",
            run.describe()
        );
    }
}

/// A document whose shingling alone would pass the limit is refused before its hashes are
/// made: the estimate named counts its hash buffers (16 bytes a character here), not only the
/// sets kept so far.
#[test]
fn a_document_too_large_for_the_limit_is_refused_before_it_is_shingled() {
    let d = Dir::new();
    let text: Vec<String> = (0..25_000).map(|i| format!("w{i}")).collect();
    let text = text.join(" ");
    d.create("large.txt", &text);
    let run = d
        .scan()
        .args(["large.txt", "--exact", "--max-memory", "1M"])
        .code(2);
    let needed = bytes_of(size_after(&run, "needs an estimated "));
    assert!(needed >= 16.0 * text.len() as f64, "{}", run.describe());
    assert!(
        run.stderr.contains("--max-memory 1.0 MiB"),
        "{}",
        run.describe()
    );
}

/// The audit's case: `--exact` and `--verify exact` read a threshold the same way and keep the
/// same pairs at the boundary, typed with more digits than an f64 holds or not.
#[test]
fn both_exact_modes_keep_the_same_pairs_at_the_threshold() {
    let d = Dir::new();
    // One-word shingles: J(a, b) = 5/7, J(a, c) = 5/6, J(a, d) = 2/3, J(b, e) = 7/8,
    // J(c, e) = 3/4; the other pairs are at 5/8 or below.
    d.create(
        "t.jsonl",
        [
            r#"{"id":"a","text":"w1 w2 w3 w4 w5"}"#,
            r#"{"id":"b","text":"w1 w2 w3 w4 w5 w6 w7"}"#,
            r#"{"id":"c","text":"w1 w2 w3 w4 w5 w8"}"#,
            r#"{"id":"d","text":"w1 w2 w3 w4 w9"}"#,
            r#"{"id":"e","text":"w1 w2 w3 w4 w5 w6 w7 w8"}"#,
        ]
        .join("\n"),
    );
    let found = |t: &str, mode: &[&str]| -> Vec<String> {
        let run = d
            .scan()
            .args(["t.jsonl", "--shingle", "word", "-w", "1", "-t", t])
            .args(mode)
            .ok();
        let mut p: Vec<String> = run
            .pairs()
            .into_iter()
            .map(|p| {
                let (a, b) = if p.a < p.b { (p.a, p.b) } else { (p.b, p.a) };
                format!("{a}-{b}")
            })
            .collect();
        p.sort();
        p
    };
    for (t, expect) in [
        // 18 digits just below 5/7, read as the shortest decimal of their f64,
        // 0.7142857142857143, just above it: a-b fails in both modes.
        ("0.714285714285714285", vec!["a-c", "b-e", "c-e"]),
        ("0.7142857142857143", vec!["a-c", "b-e", "c-e"]),
        ("0.7142857142857142", vec!["a-b", "a-c", "b-e", "c-e"]),
        // The f64 just above 2/3's: no slack lets 2/3 through.
        ("0.6666666666666667", vec!["a-b", "a-c", "b-e", "c-e"]),
        (
            "0.6666666666666666",
            vec!["a-b", "a-c", "a-d", "b-e", "c-e"],
        ),
        // Exactly at the threshold: c-e.
        ("0.75", vec!["a-c", "b-e", "c-e"]),
    ] {
        eqnice!(expect, found(t, &["--exact"]), "--exact -t {t}");
        eqnice!(
            expect,
            found(t, &["--verify", "exact"]),
            "--verify exact -t {t}"
        );
    }
    // Containment goes through the same comparison: 50 of 70 shingles, 5/7 again.
    let words = |prefix: &str, n: usize| (0..n).map(|i| format!("{prefix}{i}")).collect::<Vec<_>>();
    let x = words("w", 70).join(" ");
    let y = [words("w", 50), words("v", 20)].concat().join(" ");
    d.create(
        "c.jsonl",
        format!("{{\"id\":\"x\",\"text\":\"{x}\"}}\n{{\"id\":\"y\",\"text\":\"{y}\"}}\n"),
    );
    for (t, expect) in [("0.714285714285714285", 0), ("0.7142857142857142", 1)] {
        for mode in [["--exact"].as_slice(), &["--verify", "exact"]] {
            let run = d
                .scan()
                .args(["c.jsonl", "--containment", "--shingle", "word", "-w", "1"])
                .args(["-t", t])
                .args(mode)
                .ok();
            assert_eq!(run.pairs().len(), expect, "{mode:?} -t {t}");
        }
    }
}
