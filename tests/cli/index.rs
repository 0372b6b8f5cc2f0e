//! The persistent index: `ndup index build|add|remove|update`, `ndup query`, and
//! `ndup scan --index`.

use std::fs;
use std::io::{BufRead, BufReader};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::util::{Dir, Run, gzip};
use crate::corpus::{Rng, edited, text};

/// Sets a file's mtime `secs` seconds back: out of the index's racy window, so an unchanged
/// file is recognized without being read.
fn age(d: &Dir, name: &str, secs: u64) {
    let f = fs::File::options()
        .write(true)
        .open(d.path().join(name))
        .unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(secs))
        .unwrap();
}

/// Writes a file an hour old.
fn write_old(d: &Dir, name: &str, content: &str) {
    d.create(name, content);
    age(d, name, 3600);
}

/// A near copy of `text(seed, 300)`: two of its words changed.
fn near_copy(seed: u64) -> String {
    edited(seed, 300, 2)
}

/// A corpus in `c/`: ten unrelated documents, `sub/dup.txt` a near copy of `d0.txt`, an empty
/// file and a binary one.
fn corpus() -> Dir {
    let d = Dir::new();
    for i in 0..10 {
        write_old(&d, &format!("c/d{i}.txt"), &text(i, 300));
    }
    write_old(&d, "c/sub/dup.txt", &near_copy(0));
    write_old(&d, "c/empty.txt", "");
    d.create("c/logo.bin", b"\x89PNG\0\0\x01");
    age(&d, "c/logo.bin", 3600);
    d
}

/// The summary record, which must be the only one and the last.
fn summary(run: &Run) -> Value {
    assert_eq!(run.of_type("summary").len(), 1, "{}", run.describe());
    run.summary()
}

/// `(added, updated, unchanged, removed, read, signed, documents)` of an index command.
fn counts(run: &Run) -> [u64; 7] {
    let s = summary(run);
    [
        "added",
        "updated",
        "unchanged",
        "removed",
        "read",
        "signed",
        "documents",
    ]
    .map(|k| s[k].as_u64().unwrap_or_else(|| panic!("{k} in {s}")))
}

/// `(query, indexed)` of each match record.
fn matches(run: &Run) -> Vec<(String, String)> {
    run.of_type("match")
        .iter()
        .map(|m| {
            (
                m["query"].as_str().unwrap().to_string(),
                m["indexed"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn build(d: &Dir) {
    let r = d
        .ndup()
        .args(["index", "build", "c", "--index", "i.db"])
        .ok();
    // 12 documents and the binary file, remembered so it is not read again.
    assert_eq!(counts(&r), [13, 0, 0, 0, 13, 12, 13]);
    assert_eq!(summary(&r)["skipped_binary"], 1);
    assert_eq!(r.of_type("skip")[0]["id"], "c/logo.bin");
}

#[test]
fn build_then_query_finds_the_planted_copy() {
    let d = corpus();
    build(&d);
    write_old(&d, "new.txt", &near_copy(3));

    let r = d
        .ndup()
        .args(["query", "--index", "i.db", "new.txt", "c/d0.txt"])
        .ok();
    let records = r.records();
    assert_eq!(records[0]["type"], "params");
    assert_eq!(records[1]["type"], "index");
    assert_eq!(records[1]["documents"], 13);
    assert_eq!(
        matches(&r),
        [
            ("new.txt".into(), "c/d3.txt".into()),
            // c/d0.txt is in the index itself: only its copy is reported.
            ("c/d0.txt".into(), "c/sub/dup.txt".into()),
        ]
    );
    let m = r.of_type("match");
    assert!(m[0]["estimate"].as_f64().unwrap() > 0.85);
    let s = summary(&r);
    assert_eq!(
        (s["queries"].as_u64(), s["matches"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(s["signed"], 2);
    assert!(
        r.stderr
            .contains("ndup query: 2 documents against 13 indexed"),
        "{}",
        r.describe()
    );

    // --verify exact reports the exact Jaccard, the same as a scan computes for the pair.
    let q = d
        .ndup()
        .args(["query", "--index", "i.db", "--verify", "exact", "c/d0.txt"])
        .ok();
    let s = d.scan().args(["c", "--verify", "exact"]).ok();
    let pair = s.of_type("pair")[0].clone();
    assert_eq!(
        (pair["a"].as_str(), pair["b"].as_str()),
        (Some("c/d0.txt"), Some("c/sub/dup.txt"))
    );
    let m = q.of_type("match")[0].clone();
    assert_eq!(m["jaccard"], pair["jaccard"]);
    assert_eq!(m["estimate"], pair["estimate"]);

    // Text format and the duplicates gate.
    let out = d
        .ndup()
        .args(["query", "--index", "i.db", "--format", "text"])
        .args(["--fail-on-duplicates", "new.txt"])
        .code(1)
        .stdout;
    assert!(out.starts_with("estimate  jaccard  query"), "{out}");
    assert!(out.contains("new.txt  c/d3.txt"), "{out}");
    let r = d
        .ndup()
        .args([
            "query",
            "--index",
            "i.db",
            "--fail-on-duplicates",
            "c/d5.txt",
        ])
        .ok();
    assert!(matches(&r).is_empty());
}

#[test]
fn top_keeps_the_best_of_many_matches_whatever_the_verification() {
    // Forty indexed copies of one text with 1 to 40 words edited, and two queries: the text
    // itself and a copy with three words edited. Each query meets every copy.
    let d = Dir::new();
    let lines: String = (1..=40)
        .map(|i| {
            format!(
                "{}\n",
                serde_json::json!({"id": format!("k{i:02}"), "text": edited(7, 300, i)})
            )
        })
        .collect();
    d.create("c.jsonl", lines);
    d.create("q/a.txt", text(7, 300));
    d.create("q/b.txt", edited(7, 300, 3));
    let built = d
        .ndup()
        .args(["index", "build", "c.jsonl", "--index", "i.db"])
        .ok();
    assert_eq!(summary(&built)["documents"], 40);
    for verify in ["signature", "auto", "exact"] {
        let query = |top: &[&str]| {
            d.ndup()
                .args(["query", "--index", "i.db", "-t", "0.5", "--verify", verify])
                .args(top)
                .arg("q")
                .ok()
                .of_type("match")
        };
        let all = query(&[]);
        let top = query(&["--top", "4"]);
        // The best four of each query, in the same order, with the same measures.
        let best: Vec<&Value> = ["q/a.txt", "q/b.txt"]
            .iter()
            .flat_map(|q| all.iter().filter(|m| m["query"] == *q).take(4))
            .collect();
        assert!(all.len() > 20, "{verify}: {}", all.len());
        assert_eq!(top.iter().collect::<Vec<_>>(), best, "{verify}");
    }
}

#[test]
fn query_reads_stdin_and_keeps_the_top_k() {
    let d = corpus();
    build(&d);
    // Close to both d0 and its copy: two matches, the identical one first.
    let r = d
        .ndup()
        .args(["query", "--index", "i.db", "-"])
        .stdin(text(0, 300))
        .ok();
    assert_eq!(
        matches(&r),
        [
            ("-".into(), "c/d0.txt".into()),
            ("-".into(), "c/sub/dup.txt".into())
        ]
    );
    assert_eq!(r.of_type("match")[0]["estimate"], 1.0);

    let out = d
        .ndup()
        .args(["query", "--index", "i.db", "--top", "1", "-"])
        .stdin(text(0, 300))
        .ok()
        .stdout;
    assert_eq!(out.matches("\"type\":\"match\"").count(), 1);
    assert!(out.contains("\"indexed\":\"c/d0.txt\""));
    let r = d
        .ndup()
        .args(["query", "--index", "i.db", "--top", "0", "c/d1.txt"])
        .code(2);
    assert!(
        r.stderr.contains("--top must be at least 1"),
        "{}",
        r.describe()
    );
    // Standard input is a document as a file is: a binary one is skipped, not searched.
    let r = d
        .ndup()
        .args(["query", "--index", "i.db", "-", "c/d1.txt"])
        .stdin(&b"PK\x03\x04\0\0binary"[..])
        .ok();
    assert_eq!(
        r.skips(),
        [(
            "-".into(),
            "binary".into(),
            "binary file (NUL byte in the first 8 KiB)".into()
        )]
    );
}

#[test]
fn verify_exact_falls_back_to_the_estimate_when_the_source_is_gone() {
    let d = corpus();
    build(&d);
    fs::remove_file(d.path().join("c/sub/dup.txt")).unwrap();
    // d0 changed since it was indexed: its text is no longer the one that was signed.
    write_old(&d, "c/d0.txt", &format!("{} tail", text(0, 300)));
    write_old(&d, "q.txt", &text(0, 300));
    let r = d
        .ndup()
        .args(["query", "--index", "i.db", "--verify", "exact", "q.txt"])
        .ok();
    let skips = r.of_type("skip");
    assert_eq!(skips.len(), 2);
    assert_eq!(skips[0]["id"], "c/d0.txt");
    assert!(
        skips[0]["reason"]
            .as_str()
            .unwrap()
            .contains("changed since it was indexed")
    );
    assert_eq!(skips[1]["id"], "c/sub/dup.txt");
    assert!(
        skips[1]["reason"]
            .as_str()
            .unwrap()
            .starts_with("could not be read again for exact verification")
    );
    // Both still reported on their estimates, without a jaccard.
    let m = r.of_type("match");
    assert_eq!(m.len(), 2);
    assert!(m.iter().all(|m| m.get("jaccard").is_none()));
}

#[test]
fn update_rereads_and_resigns_only_what_changed() {
    let d = corpus();
    build(&d);
    let update = ["index", "update", "c", "--index", "i.db"];

    // Nothing changed: every file is stat'ed, none is read.
    let r = d.ndup().args(update).ok();
    assert_eq!(counts(&r), [0, 0, 13, 0, 0, 0, 13]);

    // Touched (new mtime, same content): read to compare hashes, not signed again.
    age(&d, "c/d4.txt", 60);
    let r = d.ndup().args(update).ok();
    assert_eq!(counts(&r), [0, 0, 13, 0, 1, 0, 13]);

    // One file edited: exactly one re-signed.
    write_old(&d, "c/d5.txt", &text(55, 300));
    let r = d.ndup().args(update).ok();
    assert_eq!(counts(&r), [0, 1, 12, 0, 1, 1, 13]);
    assert!(r.stderr.contains("1 read, 1 signed"), "{}", r.describe());

    // One deleted, one added.
    fs::remove_file(d.path().join("c/d6.txt")).unwrap();
    write_old(&d, "c/sub/new.txt", &text(66, 300));
    let r = d.ndup().args(update).ok();
    assert_eq!(counts(&r), [1, 0, 12, 1, 1, 1, 13]);

    // The index now answers as a fresh build would.
    write_old(&d, "q.txt", &text(66, 300));
    let r = d.ndup().args(["query", "--index", "i.db", "q.txt"]).ok();
    assert_eq!(matches(&r), [("q.txt".into(), "c/sub/new.txt".into())]);
    write_old(&d, "q.txt", &text(6, 300));
    let r = d.ndup().args(["query", "--index", "i.db", "q.txt"]).ok();
    assert!(matches(&r).is_empty());
}

#[test]
fn add_and_remove() {
    let d = corpus();
    // add creates the index and never removes anything.
    let r = d
        .ndup()
        .args(["index", "add", "c/d1.txt", "c/d2.txt", "--index", "i.db"])
        .ok();
    assert_eq!(counts(&r), [2, 0, 0, 0, 2, 2, 2]);
    write_old(&d, "c/d2.txt", &text(22, 300));
    let r = d
        .ndup()
        .args(["index", "add", "c/d2.txt", "c/d3.txt", "--index", "i.db"])
        .ok();
    assert_eq!(counts(&r), [1, 1, 0, 0, 2, 2, 3]);

    // remove is all or nothing: an unknown id changes nothing.
    let r = d
        .ndup()
        .args([
            "index",
            "remove",
            "c/d1.txt",
            "c/nope.txt",
            "--index",
            "i.db",
        ])
        .code(2);
    assert!(
        r.stderr.contains("c/nope.txt: not in the index i.db"),
        "{}",
        r.describe()
    );
    let r = d
        .ndup()
        .args(["index", "remove", "c/d1.txt", "--index", "i.db"])
        .args(["--format", "text"])
        .ok();
    assert!(
        !r.stdout.lines().any(|l| l.starts_with('{')),
        "{}",
        r.describe()
    );
    let r = d
        .ndup()
        .args(["index", "remove", "c/d2.txt", "--index", "i.db"])
        .ok();
    assert_eq!(counts(&r), [0, 0, 0, 1, 0, 0, 1]);

    write_old(&d, "q.txt", &text(3, 300));
    let r = d.ndup().args(["query", "--index", "i.db", "q.txt"]).ok();
    assert_eq!(matches(&r), [("q.txt".into(), "c/d3.txt".into())]);
    write_old(&d, "q.txt", &text(1, 300));
    let r = d.ndup().args(["query", "--index", "i.db", "q.txt"]).ok();
    assert!(matches(&r).is_empty());
}

#[test]
fn scan_with_index_signs_nothing_the_second_time() {
    let d = corpus();
    let plain = d.scan().arg("c").ok().stdout;
    let mut lines: Vec<&str> = plain.lines().collect();
    let plain_summary = lines.pop().unwrap();

    for (signed, cached) in [(12, 0), (0, 12)] {
        let out = d.scan().args(["c", "--index", "i.db"]).ok();
        let mut cached_lines: Vec<&str> = out.stdout.lines().collect();
        let summary: Value = serde_json::from_str(cached_lines.pop().unwrap()).unwrap();
        // Same params, pairs and skips as without the index.
        assert_eq!(cached_lines, lines);
        assert_eq!(
            (summary["signed"].as_u64(), summary["cached"].as_u64()),
            (Some(signed), Some(cached))
        );
        let mut s = summary.clone();
        s.as_object_mut().unwrap().remove("signed");
        s.as_object_mut().unwrap().remove("cached");
        assert_eq!(s, serde_json::from_str::<Value>(plain_summary).unwrap());
        assert!(
            out.stderr
                .contains(&format!("({signed} signed, {cached} from the index)")),
            "{}",
            out.describe()
        );
    }

    // The cache serves queries too.
    let r = d.ndup().args(["query", "--index", "i.db", "c/d0.txt"]).ok();
    assert_eq!(matches(&r), [("c/d0.txt".into(), "c/sub/dup.txt".into())]);
}

#[test]
fn different_parameters_are_refused_with_the_flag_named() {
    let d = corpus();
    build(&d);
    let r = d
        .ndup()
        .args(["query", "--index", "i.db", "--num-perm", "256", "c/d1.txt"])
        .code(2);
    assert!(
        r.stderr
            .contains("i.db: index was built with --num-perm 128, this run uses 256"),
        "{}",
        r.describe()
    );
    let r = d
        .ndup()
        .args([
            "index",
            "update",
            "c",
            "--index",
            "i.db",
            "--shingle",
            "word",
        ])
        .code(2);
    assert!(
        r.stderr
            .contains("index was built with --shingle char, this run uses word"),
        "{}",
        r.describe()
    );
    let r = d
        .scan()
        .args(["c", "--index", "i.db", "--no-lowercase"])
        .code(2);
    assert!(
        r.stderr
            .contains("index was built with case folding, this run uses --no-lowercase"),
        "{}",
        r.describe()
    );
    let r = d
        .ndup()
        .args(["index", "add", "c", "--index", "i.db", "--seed", "7"])
        .code(2);
    assert!(
        r.stderr.contains("--seed 42, this run uses 7"),
        "{}",
        r.describe()
    );

    // build replaces the index, parameters included; then the new flags are the ones that fit.
    let r = d
        .ndup()
        .args([
            "index",
            "build",
            "c",
            "--index",
            "i.db",
            "--num-perm",
            "256",
        ])
        .ok();
    assert_eq!(counts(&r)[3], 13);
    let r = d
        .ndup()
        .args(["query", "--index", "i.db", "--num-perm", "256", "c/d0.txt"])
        .ok();
    assert_eq!(matches(&r), [("c/d0.txt".into(), "c/sub/dup.txt".into())]);
    assert_eq!(r.records()[0]["num_perm"], 256);
}

#[test]
fn corrupt_foreign_and_missing_indexes_are_clear_errors() {
    let d = corpus();
    // Random bytes, a text file, another application's SQLite database, a directory.
    let mut rng = Rng::new(12345);
    let noise: Vec<u8> = (0..8192).map(|_| (rng.next_u64() >> 56) as u8).collect();
    d.create("noise.db", &noise);
    d.create("notes.txt", "remember the milk\n");
    rusqlite::Connection::open(d.path().join("app.db"))
        .unwrap()
        .execute_batch("CREATE TABLE users(name TEXT); INSERT INTO users VALUES ('ann');")
        .unwrap();
    let app_before = fs::read(d.path().join("app.db")).unwrap();
    let cases = [
        (
            "noise.db",
            "noise.db: not an ndup index (not a SQLite database)",
        ),
        (
            "notes.txt",
            "notes.txt: not an ndup index (not a SQLite database)",
        ),
        (
            "app.db",
            "app.db: not an ndup index (a SQLite database of another application)",
        ),
        ("c", "c: not an ndup index (a directory)"),
        // Opening a FIFO nobody writes to waited forever.
        ("fifo", "fifo: not an ndup index (not a regular file)"),
    ];
    let made = std::process::Command::new("mkfifo")
        .arg(d.path().join("fifo"))
        .status()
        .unwrap();
    assert!(made.success());
    for (file, message) in cases {
        for args in [
            vec!["query", "--index", file, "c/d1.txt"],
            vec!["index", "add", "c/d1.txt", "--index", file],
            vec!["index", "build", "c", "--index", file],
            vec!["index", "remove", "c/d1.txt", "--index", file],
            vec!["scan", "c", "--index", file],
        ] {
            let r = d.ndup().args(&args).timeout(60).code(2);
            assert!(r.records().is_empty(), "{args:?}");
            // A file is left alone, with the way out; a directory is most likely a corpus.
            let advice = if file == "c" || file == "fifo" {
                ""
            } else {
                ", so it is left untouched; use another file, or remove this one and rebuild \
                 the index with `ndup index build`"
            };
            eqnice!(format!("ndup: {message}{advice}\n"), r.stderr, "{args:?}");
        }
    }
    assert_eq!(d.read("notes.txt"), "remember the milk\n");
    assert_eq!(fs::read(d.path().join("app.db")).unwrap(), app_before);

    // A real index with damaged pages.
    build(&d);
    let mut bytes = fs::read(d.path().join("i.db")).unwrap();
    for b in &mut bytes[100..6000] {
        *b = 0xAB;
    }
    d.create("i.db", &bytes);
    for args in [
        vec!["query", "--index", "i.db", "c/d1.txt"],
        vec!["index", "update", "c", "--index", "i.db"],
    ] {
        let r = d.ndup().args(&args).code(2);
        assert!(
            r.stderr.starts_with("ndup: i.db: the index is corrupt ("),
            "{}",
            r.describe()
        );
    }

    // No index at all: queries say so; a missing corpus path creates nothing.
    let r = d
        .ndup()
        .args(["query", "--index", "none.db", "c/d1.txt"])
        .code(2);
    assert!(
        r.stderr.contains("none.db: no such index"),
        "{}",
        r.describe()
    );
    let r = d
        .ndup()
        .args(["index", "build", "nowhere", "--index", "new.db"])
        .code(2);
    assert!(
        r.stderr.contains("nowhere: no such file or directory"),
        "{}",
        r.describe()
    );
    assert!(!d.path().join("new.db").exists());
}

/// Starts `ndup args` with the debug pause hook at `after` written documents and returns once
/// it has paused, in the middle of its write transaction.
fn start_paused(d: &Dir, args: &[&str], after: u64) -> std::process::Child {
    let mut child = d
        .ndup()
        .args(args)
        .env("NDUP_DEBUG_PAUSE_AFTER_WRITES", &after.to_string())
        .spawn();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(
        line,
        format!("ndup: debug: paused after writing {after} documents\n")
    );
    child
}

/// The matches of the query documents, as a sorted list, for comparing states of the index.
fn answers(d: &Dir) -> (Vec<(String, String)>, u64) {
    let r = d
        .ndup()
        .args([
            "query",
            "--index",
            "i.db",
            "--verify",
            "signature",
            "c",
            "q",
        ])
        .ok();
    let mut m = matches(&r);
    m.sort();
    (m, r.of_type("index")[0]["documents"].as_u64().unwrap())
}

// The pause hook exists in debug builds only.
#[cfg(debug_assertions)]
#[test]
fn a_killed_writer_leaves_the_previous_state_and_readers_keep_working() {
    let d = corpus();
    build(&d);
    // Query documents: copies of d7 and of a document that is not indexed yet.
    write_old(&d, "q/a.txt", &near_copy(7));
    write_old(&d, "q/b.txt", &near_copy(40));
    let before = answers(&d);
    assert_eq!(before.1, 13);
    assert!(before.0.contains(&("q/a.txt".into(), "c/d7.txt".into())));

    // A rebuild over another corpus, killed after 5 of its 30 documents.
    for i in 30..60 {
        write_old(&d, &format!("other/o{i}.txt"), &text(i, 300));
    }
    let mut writer = start_paused(&d, &["index", "build", "other", "--index", "i.db"], 5);
    // A reader while the writer holds its transaction open: the last committed state.
    assert_eq!(answers(&d), before);
    writer.kill().unwrap();
    writer.wait().unwrap();
    assert_eq!(answers(&d), before);

    // The same for `add`, killed after 3 documents.
    let mut writer = start_paused(&d, &["index", "add", "other", "--index", "i.db"], 3);
    assert_eq!(answers(&d), before);
    writer.kill().unwrap();
    writer.wait().unwrap();
    assert_eq!(answers(&d), before);

    // The index is intact and writable: the same add, run to the end, is seen.
    let r = d
        .ndup()
        .args(["index", "add", "other", "--index", "i.db"])
        .ok();
    assert_eq!(counts(&r), [30, 0, 0, 0, 30, 30, 43]);
    let after = answers(&d);
    assert_eq!(after.1, 43);
    assert!(
        after
            .0
            .contains(&("q/b.txt".into(), "other/o40.txt".into()))
    );
    let check: String = rusqlite::Connection::open(d.path().join("i.db"))
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}

#[test]
fn banding_threshold_follow_quiet_and_threads() {
    let d = corpus();
    // A directory reached only through a symbolic link: indexed with -L only.
    write_old(&d, "real/r.txt", &text(77, 300));
    std::os::unix::fs::symlink(d.path().join("real"), d.path().join("c/link")).unwrap();

    let flags = ["--bands", "32", "--rows", "4"];
    let r = d
        .ndup()
        .args(["index", "build", "c", "--index", "i.db", "-q"])
        .args(flags)
        .ok();
    eqnice!("", r.stderr);
    assert_eq!(counts(&r)[6], 13);
    let r = d
        .ndup()
        .args(["index", "add", "c", "-L", "--index", "i.db"])
        .args(flags)
        .ok();
    assert_eq!(counts(&r)[0], 1);

    write_old(&d, "q.txt", &near_copy(77));
    let r = d.ndup().args(["query", "--index", "i.db", "q.txt"]).code(2);
    assert!(
        r.stderr.contains(
            "index was built with --bands 32, this run uses 18; with --rows 4, this run uses 7"
        ),
        "{}",
        r.describe()
    );
    let mut args = vec!["query", "--index", "i.db", "q.txt", "c/d0.txt"];
    args.extend(flags);
    let r = d.ndup().args(&args).ok();
    assert_eq!(
        matches(&r),
        [
            ("q.txt".into(), "c/link/r.txt".into()),
            ("c/d0.txt".into(), "c/sub/dup.txt".into())
        ]
    );
    let params = &r.records()[0];
    assert_eq!(
        (params["bands"].as_u64(), params["rows"].as_u64()),
        (Some(32), Some(4))
    );

    // A threshold above the copies' similarity reports nothing.
    let r = d
        .ndup()
        .args(&args)
        .args(["--threshold", "0.999", "--verify", "exact"])
        .ok();
    assert!(matches(&r).is_empty());
    assert_eq!(summary(&r)["candidates"], 2);

    // The same bytes whatever the number of threads.
    let outputs: Vec<String> = ["1", "2"]
        .iter()
        .map(|j| {
            d.ndup()
                .args(&args)
                .args(["-j", j, "--verify", "exact"])
                .ok()
                .stdout
        })
        .collect();
    eqnice!(outputs[0], outputs[1]);
}

/// A JSON-lines corpus of records with nested ids and `body` texts, an hour old.
fn write_records(d: &Dir, name: &str, records: &[(&str, String)]) {
    let lines: Vec<String> = records
        .iter()
        .map(|(id, t)| serde_json::json!({"meta": {"id": id}, "body": t}).to_string() + "\n")
        .collect();
    write_old(d, name, &lines.concat());
}

const RECORD_FIELDS: [&str; 4] = ["--id-field", "meta.id", "--text-field", "body"];

#[test]
fn records_are_indexed_one_by_one_updated_and_queried() {
    let d = Dir::new();
    let mut records: Vec<(&str, String)> = vec![
        ("a", text(1, 300)),
        ("b", text(2, 300)),
        ("c", text(3, 300)),
        ("d", text(4, 300)),
    ];
    write_records(&d, "corpus.jsonl", &records);
    let r = d
        .ndup()
        .args(["index", "build", "corpus.jsonl", "--index", "i.db"])
        .args(RECORD_FIELDS)
        .ok();
    assert_eq!(counts(&r), [4, 0, 0, 0, 4, 4, 4]);

    // Records on standard input, with --jsonl: each a query, named by its id, verified exactly
    // against the indexed record read again from its line.
    let queries = [
        serde_json::json!({"meta": {"id": "q1"}, "body": near_copy(1)}).to_string(),
        serde_json::json!({"meta": {"id": "q2"}, "body": text(9, 300)}).to_string(),
        serde_json::json!({"meta": {"id": "q3"}}).to_string(),
    ];
    let r = d
        .ndup()
        .args([
            "query", "--index", "i.db", "--jsonl", "--verify", "exact", "-",
        ])
        .args(RECORD_FIELDS)
        .stdin(queries.join("\n"))
        .ok();
    assert_eq!(matches(&r), [("q1".into(), "a".into())]);
    let m = &r.of_type("match")[0];
    assert!(m["jaccard"].as_f64().unwrap() > 0.9, "{m}");
    let s = summary(&r);
    assert_eq!(
        (s["queries"].as_u64(), s["skipped_malformed"].as_u64()),
        (Some(2), Some(1))
    );
    assert!(
        r.stderr.contains("1 skipped (1 malformed)"),
        "{}",
        r.describe()
    );

    // One record edited, one gone, one new: the file is read again, two texts signed, and the
    // record that went is removed by update.
    records[1].1 = text(20, 300);
    records.remove(2);
    records.push(("e", text(5, 300)));
    write_records(&d, "corpus.jsonl", &records);
    let r = d
        .ndup()
        .args(["index", "update", "corpus.jsonl", "--index", "i.db"])
        .args(RECORD_FIELDS)
        .ok();
    assert_eq!(counts(&r), [1, 1, 2, 1, 4, 2, 4]);
    let r = d
        .ndup()
        .args(["index", "update", "corpus.jsonl", "--index", "i.db"])
        .args(RECORD_FIELDS)
        .ok();
    assert_eq!(counts(&r), [0, 0, 4, 0, 0, 0, 4]);
    // A record is removed by its id.
    let r = d
        .ndup()
        .args(["index", "remove", "e", "--index", "i.db"])
        .ok();
    assert_eq!(summary(&r)["documents"], 3);

    // The index remembers the fields its records were read with.
    let r = d
        .ndup()
        .args(["index", "add", "corpus.jsonl", "--index", "i.db"])
        .code(2);
    assert!(
        r.stderr.contains(
            "records were indexed with --id-field `meta.id`, this run uses --id-field `id`; \
             with --text-field `body`, this run uses --text-field `text`"
        ),
        "{}",
        r.describe()
    );
    // Standard input has no file to read a record again from.
    let r = d
        .ndup()
        .args(["index", "add", "-", "--index", "i.db", "--jsonl"])
        .args(RECORD_FIELDS)
        .stdin("{}")
        .code(2);
    assert!(
        r.stderr.contains("-: standard input cannot be indexed"),
        "{}",
        r.describe()
    );
}

/// Each indexed document's `(id, file name, line)`, by id.
fn record_rows(d: &Dir, index: &str) -> Vec<(String, String, Option<i64>)> {
    let conn = rusqlite::Connection::open(d.path().join(index)).unwrap();
    let mut st = conn
        .prepare("SELECT name, path, record_line FROM doc ORDER BY name")
        .unwrap();
    st.query_map([], |r| {
        let path: String = r.get(1)?;
        let file = std::path::Path::new(&path).file_name().unwrap();
        Ok((r.get(0)?, file.to_string_lossy().into_owned(), r.get(2)?))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// `index update FILES` on `i.db`, which must then hold what a fresh build of FILES holds.
fn update_as_built(d: &Dir, files: &[&str], more: &[&str]) -> Run {
    let r = d
        .ndup()
        .args(["index", "update", "--index", "i.db"])
        .args(files)
        .args(RECORD_FIELDS)
        .args(more)
        .ok();
    let _ = fs::remove_file(d.path().join("fresh.db"));
    d.ndup()
        .args(["index", "build", "--index", "fresh.db"])
        .args(files)
        .args(RECORD_FIELDS)
        .args(more)
        .ok();
    assert_eq!(record_rows(d, "i.db"), record_rows(d, "fresh.db"));
    r
}

fn row(id: &str, file: &str, line: i64) -> (String, String, Option<i64>) {
    (id.into(), file.into(), Some(line))
}

/// An update read only the files that changed, so an id in two files went to whichever was
/// read, and was lost when it left that one though the other still held it.
#[test]
fn an_id_in_two_files_is_indexed_from_the_earlier_whichever_was_read() {
    let d = Dir::new();
    let files = ["a.jsonl", "b.jsonl"];
    write_records(&d, "a.jsonl", &[("x", text(1, 300)), ("a2", text(2, 300))]);
    write_records(&d, "b.jsonl", &[("x", text(3, 300)), ("b2", text(4, 300))]);
    d.ndup()
        .args(["index", "build", "a.jsonl", "b.jsonl", "--index", "i.db"])
        .args(RECORD_FIELDS)
        .ok();
    let mut rows = vec![
        row("a2", "a.jsonl", 2),
        row("b2", "b.jsonl", 2),
        row("x", "a.jsonl", 1),
    ];
    assert_eq!(record_rows(&d, "i.db"), rows);

    // Only b.jsonl changed: its x is skipped, as in a build.
    write_records(&d, "b.jsonl", &[("x", text(3, 300)), ("b2", text(5, 300))]);
    let r = update_as_built(&d, &files, &[]);
    assert_eq!(
        r.skips(),
        [(
            "b.jsonl:1".into(),
            "malformed".into(),
            "duplicate id `x` (an earlier record has it)".into()
        )]
    );
    assert_eq!(record_rows(&d, "i.db"), rows);

    // a.jsonl drops x: b.jsonl, unchanged, is read again for its x.
    write_records(&d, "a.jsonl", &[("a2", text(2, 300))]);
    update_as_built(&d, &files, &[]);
    rows[0] = row("a2", "a.jsonl", 1);
    rows[2] = row("x", "b.jsonl", 1);
    assert_eq!(record_rows(&d, "i.db"), rows);

    // x comes back to a.jsonl, the earlier file: it takes the row over.
    write_records(&d, "a.jsonl", &[("a2", text(2, 300)), ("x", text(6, 300))]);
    update_as_built(&d, &files, &[]);
    rows[2] = row("x", "a.jsonl", 2);
    assert_eq!(record_rows(&d, "i.db"), rows);

    // Then nothing changed: nothing is read, and nothing moves.
    let r = update_as_built(&d, &files, &[]);
    assert_eq!(counts(&r), [0, 0, 3, 0, 0, 0, 3]);
    assert_eq!(record_rows(&d, "i.db"), rows);
}

/// The rows a `--partial-input` update kept were removed by the next update, with nothing
/// changed and nothing said: the file counted as unchanged because some of its rows matched it.
#[test]
fn rows_kept_from_a_partly_read_file_stay_until_the_file_is_read_whole() {
    let d = Dir::new();
    let records: Vec<(String, String)> = (0..400).map(|i| (format!("r{i}"), text(i, 40))).collect();
    let lines: String = records
        .iter()
        .map(|(id, t)| serde_json::json!({"meta": {"id": id}, "body": t}).to_string() + "\n")
        .collect();
    let gz = |lines: &str| gzip(lines.as_bytes());
    d.create("c.jsonl.gz", gz(&lines));
    age(&d, "c.jsonl.gz", 3600);
    let build = d
        .ndup()
        .args(["index", "build", "c.jsonl.gz", "--index", "i.db"])
        .args(RECORD_FIELDS)
        .ok();
    assert_eq!(summary(&build)["documents"], 400);
    let mut damaged = gz(&lines);
    damaged.truncate(damaged.len() / 2);
    d.create("c.jsonl.gz", damaged);
    age(&d, "c.jsonl.gz", 1800);
    for _ in 0..2 {
        let r = d
            .ndup()
            .args(["index", "update", "c.jsonl.gz", "--index", "i.db"])
            .args(RECORD_FIELDS)
            .arg("--partial-input")
            .ok();
        assert_eq!(summary(&r)["documents"], 400, "{}", r.describe());
        assert_eq!(summary(&r)["removed"], 0, "{}", r.describe());
        assert_eq!(r.skips().len(), 1, "{}", r.describe());
    }
    // Read whole again, the file's records are those it has.
    let first: String = lines.lines().take(100).map(|l| format!("{l}\n")).collect();
    d.create("c.jsonl.gz", gz(&first));
    let r = d
        .ndup()
        .args(["index", "update", "c.jsonl.gz", "--index", "i.db"])
        .args(RECORD_FIELDS)
        .ok();
    assert_eq!(counts(&r), [0, 0, 100, 300, 100, 0, 100]);
}

/// A query of an indexed file's records matched each record with itself (the query named it
/// by its line, the index `file:line`), and a query record without an id was taken for an
/// indexed record whose id was its line number.
#[test]
fn query_records_are_named_as_the_index_names_them() {
    let d = Dir::new();
    let lines: String = [text(1, 300), text(2, 300)]
        .iter()
        .map(|t| serde_json::json!({"text": t}).to_string() + "\n")
        .collect();
    write_old(&d, "c.jsonl", &lines);
    d.ndup()
        .args(["index", "build", "c.jsonl", "--index", "i.db"])
        .ok();
    let r = d
        .ndup()
        .args([
            "query",
            "--index",
            "i.db",
            "c.jsonl",
            "--fail-on-duplicates",
        ])
        .ok();
    assert_eq!(matches(&r), []);

    // An indexed record whose id is "1", and a query record without one.
    write_old(
        &d,
        "ids.jsonl",
        &(serde_json::json!({"id": "1", "text": text(3, 300)}).to_string() + "\n"),
    );
    d.ndup()
        .args(["index", "add", "ids.jsonl", "--index", "i.db"])
        .ok();
    d.create(
        "q.jsonl",
        serde_json::json!({"text": near_copy(3)}).to_string() + "\n",
    );
    let r = d.ndup().args(["query", "--index", "i.db", "q.jsonl"]).ok();
    assert_eq!(matches(&r), [("q.jsonl:1".into(), "1".into())]);
}

/// `update` compared the escaped ids of the rows with the real paths given, so the files
/// deleted under a directory whose name is escaped in ids (a backslash, invalid UTF-8) stayed.
#[test]
fn update_removes_deleted_files_under_a_directory_with_an_escaped_name() {
    use std::os::unix::ffi::OsStrExt;
    let d = Dir::new();
    for dir in [&b"back\\slash"[..], &b"latin\xff"[..]] {
        let dir = std::ffi::OsStr::from_bytes(dir);
        let root = d.path().join(dir);
        fs::create_dir_all(&root).unwrap();
        fs::write(root.join("a.txt"), text(1, 300)).unwrap();
        fs::write(root.join("b.txt"), text(2, 300)).unwrap();
        let index = |cmd: &str| {
            let r = d
                .ndup()
                .args(["index", cmd, "--index", "i.db"])
                .arg(dir)
                .ok();
            summary(&r)
        };
        assert_eq!(index("build")["documents"], 2);
        fs::remove_file(root.join("b.txt")).unwrap();
        let s = index("update");
        assert_eq!(
            (s["documents"].as_u64(), s["removed"].as_u64()),
            (Some(1), Some(1)),
            "{s}"
        );
    }
}
