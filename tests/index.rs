//! CLI tests of the persistent index: `ndup index build|add|remove|update`, `ndup query`, and
//! `ndup scan --index`. Each test runs the real binary in its own temporary directory, so the
//! document ids are short relative paths.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, SystemTime};

use assert_cmd::Command;
use serde_json::Value;

/// Deterministic text of `n` made-up words (distinct seeds give unrelated texts).
fn text(seed: u64, n: usize) -> String {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            format!("w{}", x % 5000)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Sets a file's mtime `secs` seconds back: out of the index's racy window, so an unchanged
/// file is recognized without being read.
fn age(path: &Path, secs: u64) {
    let f = fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(secs))
        .unwrap();
}

fn write_old(path: &Path, content: &str) {
    fs::write(path, content).unwrap();
    age(path, 3600);
}

/// A corpus in `dir/c`: ten unrelated documents, `dup.txt` a near copy of `d0.txt` (a few words
/// changed), an empty file and a binary one.
fn corpus(dir: &Path) {
    let c = dir.join("c");
    fs::create_dir_all(c.join("sub")).unwrap();
    for i in 0..10 {
        write_old(&c.join(format!("d{i}.txt")), &text(i, 300));
    }
    write_old(&c.join("sub/dup.txt"), &near_copy(&text(0, 300)));
    write_old(&c.join("empty.txt"), "");
    fs::write(c.join("logo.bin"), b"\x89PNG\0\0\x01").unwrap();
    age(&c.join("logo.bin"), 3600);
}

/// `t` with two of its words changed.
fn near_copy(t: &str) -> String {
    t.replacen("w", "v", 2)
}

fn ndup(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ndup"));
    c.current_dir(dir);
    c
}

/// Runs ndup in `dir`, expects `code`, returns the JSON records of stdout and stderr.
fn run(dir: &Path, args: &[&str], code: i32) -> (Vec<Value>, String) {
    let out = ndup(dir)
        .args(args)
        .assert()
        .code(code)
        .get_output()
        .clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    let records = stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (records, stderr)
}

fn of_type<'a>(records: &'a [Value], t: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["type"] == t).collect()
}

fn summary(records: &[Value]) -> &Value {
    let s = of_type(records, "summary");
    assert_eq!(s.len(), 1);
    assert_eq!(records.last().unwrap()["type"], "summary");
    s[0]
}

/// `(added, updated, unchanged, removed, read, signed, documents)` of an index command.
fn counts(records: &[Value]) -> [u64; 7] {
    let s = summary(records);
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
fn matches(records: &[Value]) -> Vec<(String, String)> {
    of_type(records, "match")
        .iter()
        .map(|m| {
            (
                m["query"].as_str().unwrap().to_string(),
                m["indexed"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn build(dir: &Path) {
    let (r, _) = run(dir, &["index", "build", "c", "--index", "i.db"], 0);
    // 12 documents and the binary file, remembered so it is not read again.
    assert_eq!(counts(&r), [13, 0, 0, 0, 13, 12, 13]);
    assert_eq!(summary(&r)["skipped_binary"], 1);
    assert_eq!(of_type(&r, "skip")[0]["id"], "c/logo.bin");
}

#[test]
fn build_then_query_finds_the_planted_copy() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    corpus(d);
    build(d);
    write_old(&d.join("new.txt"), &near_copy(&text(3, 300)));

    let (r, stderr) = run(d, &["query", "--index", "i.db", "new.txt", "c/d0.txt"], 0);
    assert_eq!(r[0]["type"], "params");
    assert_eq!(r[1]["type"], "index");
    assert_eq!(r[1]["documents"], 13);
    assert_eq!(
        matches(&r),
        [
            ("new.txt".into(), "c/d3.txt".into()),
            // c/d0.txt is in the index itself: only its copy is reported.
            ("c/d0.txt".into(), "c/sub/dup.txt".into()),
        ]
    );
    let m = of_type(&r, "match");
    assert!(m[0]["estimate"].as_f64().unwrap() > 0.85);
    let s = summary(&r);
    assert_eq!(
        (s["queries"].as_u64(), s["matches"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(s["signed"], 2);
    assert!(
        stderr.contains("ndup query: 2 documents against 13 indexed"),
        "{stderr}"
    );

    // --verify exact reports the exact Jaccard, the same as a scan computes for the pair.
    let (q, _) = run(
        d,
        &["query", "--index", "i.db", "--verify", "exact", "c/d0.txt"],
        0,
    );
    let (s, _) = run(d, &["scan", "c", "--verify", "exact"], 0);
    let pair = of_type(&s, "pair")[0];
    assert_eq!(
        (pair["a"].as_str(), pair["b"].as_str()),
        (Some("c/d0.txt"), Some("c/sub/dup.txt"))
    );
    let m = of_type(&q, "match")[0];
    assert_eq!(m["jaccard"], pair["jaccard"]);
    assert_eq!(m["estimate"], pair["estimate"]);

    // Text format and the duplicates gate.
    let out = ndup(d)
        .args([
            "query",
            "--index",
            "i.db",
            "--format",
            "text",
            "--fail-on-duplicates",
            "new.txt",
        ])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    assert!(out.starts_with("estimate  jaccard  query"), "{out}");
    assert!(out.contains("new.txt  c/d3.txt"), "{out}");
    let (r, _) = run(
        d,
        &[
            "query",
            "--index",
            "i.db",
            "--fail-on-duplicates",
            "c/d5.txt",
        ],
        0,
    );
    assert!(matches(&r).is_empty());
}

#[test]
fn query_reads_stdin_and_keeps_the_top_k() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    corpus(d);
    build(d);
    // Close to both d0 and its copy: two matches, the identical one first.
    let out = ndup(d)
        .args(["query", "--index", "i.db", "-"])
        .write_stdin(text(0, 300))
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let r: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        matches(&r),
        [
            ("-".into(), "c/d0.txt".into()),
            ("-".into(), "c/sub/dup.txt".into())
        ]
    );
    assert_eq!(of_type(&r, "match")[0]["estimate"], 1.0);

    let out = ndup(d)
        .args(["query", "--index", "i.db", "--top", "1", "-"])
        .write_stdin(text(0, 300))
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    assert_eq!(out.matches("\"type\":\"match\"").count(), 1);
    assert!(out.contains("\"indexed\":\"c/d0.txt\""));
    let (_, stderr) = run(
        d,
        &["query", "--index", "i.db", "--top", "0", "c/d1.txt"],
        2,
    );
    assert!(stderr.contains("--top must be at least 1"), "{stderr}");
}

#[test]
fn verify_exact_falls_back_to_the_estimate_when_the_source_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    corpus(d);
    build(d);
    fs::remove_file(d.join("c/sub/dup.txt")).unwrap();
    // d0 changed since it was indexed: its text is no longer the one that was signed.
    write_old(&d.join("c/d0.txt"), &format!("{} tail", text(0, 300)));
    write_old(&d.join("q.txt"), &text(0, 300));
    let (r, _) = run(
        d,
        &["query", "--index", "i.db", "--verify", "exact", "q.txt"],
        0,
    );
    let skips = of_type(&r, "skip");
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
    let m = of_type(&r, "match");
    assert_eq!(m.len(), 2);
    assert!(m.iter().all(|m| m.get("jaccard").is_none()));
}

#[test]
fn update_rereads_and_resigns_only_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    corpus(d);
    build(d);
    let update = ["index", "update", "c", "--index", "i.db"];

    // Nothing changed: every file is stat'ed, none is read.
    let (r, _) = run(d, &update, 0);
    assert_eq!(counts(&r), [0, 0, 13, 0, 0, 0, 13]);

    // Touched (new mtime, same content): read to compare hashes, not signed again.
    age(&d.join("c/d4.txt"), 60);
    let (r, _) = run(d, &update, 0);
    assert_eq!(counts(&r), [0, 0, 13, 0, 1, 0, 13]);

    // One file edited: exactly one re-signed.
    write_old(&d.join("c/d5.txt"), &text(55, 300));
    let (r, stderr) = run(d, &update, 0);
    assert_eq!(counts(&r), [0, 1, 12, 0, 1, 1, 13]);
    assert!(stderr.contains("1 read, 1 signed"), "{stderr}");

    // One deleted, one added.
    fs::remove_file(d.join("c/d6.txt")).unwrap();
    write_old(&d.join("c/sub/new.txt"), &text(66, 300));
    let (r, _) = run(d, &update, 0);
    assert_eq!(counts(&r), [1, 0, 12, 1, 1, 1, 13]);

    // The index now answers as a fresh build would.
    write_old(&d.join("q.txt"), &text(66, 300));
    let (r, _) = run(d, &["query", "--index", "i.db", "q.txt"], 0);
    assert_eq!(matches(&r), [("q.txt".into(), "c/sub/new.txt".into())]);
    write_old(&d.join("q.txt"), &text(6, 300));
    let (r, _) = run(d, &["query", "--index", "i.db", "q.txt"], 0);
    assert!(matches(&r).is_empty());
}

#[test]
fn add_and_remove() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    corpus(d);
    // add creates the index and never removes anything.
    let (r, _) = run(
        d,
        &["index", "add", "c/d1.txt", "c/d2.txt", "--index", "i.db"],
        0,
    );
    assert_eq!(counts(&r), [2, 0, 0, 0, 2, 2, 2]);
    write_old(&d.join("c/d2.txt"), &text(22, 300));
    let (r, _) = run(
        d,
        &["index", "add", "c/d2.txt", "c/d3.txt", "--index", "i.db"],
        0,
    );
    assert_eq!(counts(&r), [1, 1, 0, 0, 2, 2, 3]);

    // remove is all or nothing: an unknown id changes nothing.
    let (_, stderr) = run(
        d,
        &[
            "index",
            "remove",
            "c/d1.txt",
            "c/nope.txt",
            "--index",
            "i.db",
        ],
        2,
    );
    assert!(stderr.contains("c/nope.txt: not in the index"), "{stderr}");
    let (r, _) = run(
        d,
        &[
            "index", "remove", "c/d1.txt", "--index", "i.db", "--format", "text",
        ],
        0,
    );
    assert!(r.is_empty());
    let (r, _) = run(d, &["index", "remove", "c/d2.txt", "--index", "i.db"], 0);
    assert_eq!(counts(&r), [0, 0, 0, 1, 0, 0, 1]);

    write_old(&d.join("q.txt"), &text(3, 300));
    let (r, _) = run(d, &["query", "--index", "i.db", "q.txt"], 0);
    assert_eq!(matches(&r), [("q.txt".into(), "c/d3.txt".into())]);
    write_old(&d.join("q.txt"), &text(1, 300));
    let (r, _) = run(d, &["query", "--index", "i.db", "q.txt"], 0);
    assert!(matches(&r).is_empty());
}

#[test]
fn scan_with_index_signs_nothing_the_second_time() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    corpus(d);
    let plain = ndup(d)
        .args(["scan", "c"])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let plain = String::from_utf8(plain).unwrap();
    let mut lines: Vec<&str> = plain.lines().collect();
    let plain_summary = lines.pop().unwrap();

    for (signed, cached) in [(12, 0), (0, 12)] {
        let out = ndup(d)
            .args(["scan", "c", "--index", "i.db"])
            .assert()
            .code(0)
            .get_output()
            .clone();
        let stdout = String::from_utf8(out.stdout).unwrap();
        let mut cached_lines: Vec<&str> = stdout.lines().collect();
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
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            stderr.contains(&format!("({signed} signed, {cached} from the index)")),
            "{stderr}"
        );
    }

    // The cache serves queries too.
    let (r, _) = run(d, &["query", "--index", "i.db", "c/d0.txt"], 0);
    assert_eq!(matches(&r), [("c/d0.txt".into(), "c/sub/dup.txt".into())]);
}

#[test]
fn different_parameters_are_refused_with_the_flag_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    corpus(d);
    build(d);
    let (_, stderr) = run(
        d,
        &["query", "--index", "i.db", "--num-perm", "256", "c/d1.txt"],
        2,
    );
    assert!(
        stderr.contains("i.db: index was built with --num-perm 128, this run uses 256"),
        "{stderr}"
    );
    let (_, stderr) = run(
        d,
        &[
            "index",
            "update",
            "c",
            "--index",
            "i.db",
            "--shingle",
            "word",
        ],
        2,
    );
    assert!(
        stderr.contains("index was built with --shingle char, this run uses word"),
        "{stderr}"
    );
    let (_, stderr) = run(d, &["scan", "c", "--index", "i.db", "--no-lowercase"], 2);
    assert!(
        stderr.contains("index was built with lowercasing, this run uses --no-lowercase"),
        "{stderr}"
    );
    let (_, stderr) = run(
        d,
        &["index", "add", "c", "--index", "i.db", "--seed", "7"],
        2,
    );
    assert!(stderr.contains("--seed 42, this run uses 7"), "{stderr}");

    // build replaces the index, parameters included; then the new flags are the ones that fit.
    let (r, _) = run(
        d,
        &[
            "index",
            "build",
            "c",
            "--index",
            "i.db",
            "--num-perm",
            "256",
        ],
        0,
    );
    assert_eq!(counts(&r)[3], 13);
    let (r, _) = run(
        d,
        &["query", "--index", "i.db", "--num-perm", "256", "c/d0.txt"],
        0,
    );
    assert_eq!(matches(&r), [("c/d0.txt".into(), "c/sub/dup.txt".into())]);
    assert_eq!(r[0]["num_perm"], 256);
}

#[test]
fn corrupt_foreign_and_missing_indexes_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    corpus(d);
    // Random bytes, a text file, another application's SQLite database, a directory.
    let mut x = 12345u64;
    let noise: Vec<u8> = (0..8192)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 56) as u8
        })
        .collect();
    fs::write(d.join("noise.db"), &noise).unwrap();
    fs::write(d.join("notes.txt"), "remember the milk\n").unwrap();
    rusqlite::Connection::open(d.join("app.db"))
        .unwrap()
        .execute_batch("CREATE TABLE users(name TEXT); INSERT INTO users VALUES ('ann');")
        .unwrap();
    let app_before = fs::read(d.join("app.db")).unwrap();
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
    ];
    for (file, message) in cases {
        for args in [
            vec!["query", "--index", file, "c/d1.txt"],
            vec!["index", "add", "c/d1.txt", "--index", file],
            vec!["index", "build", "c", "--index", file],
            vec!["index", "remove", "c/d1.txt", "--index", file],
            vec!["scan", "c", "--index", file],
        ] {
            let (out, stderr) = run(d, &args, 2);
            assert!(out.is_empty(), "{args:?}");
            assert_eq!(stderr, format!("ndup: {message}\n"), "{args:?}");
        }
    }
    assert_eq!(
        fs::read(d.join("notes.txt")).unwrap(),
        b"remember the milk\n"
    );
    assert_eq!(fs::read(d.join("app.db")).unwrap(), app_before);

    // A real index with damaged pages.
    build(d);
    let mut bytes = fs::read(d.join("i.db")).unwrap();
    for b in &mut bytes[100..6000] {
        *b = 0xAB;
    }
    fs::write(d.join("i.db"), &bytes).unwrap();
    for args in [
        vec!["query", "--index", "i.db", "c/d1.txt"],
        vec!["index", "update", "c", "--index", "i.db"],
    ] {
        let (_, stderr) = run(d, &args, 2);
        assert!(
            stderr.starts_with("ndup: i.db: the index is corrupt ("),
            "{stderr}"
        );
    }

    // No index at all: queries say so; a missing corpus path creates nothing.
    let (_, stderr) = run(d, &["query", "--index", "none.db", "c/d1.txt"], 2);
    assert!(stderr.contains("none.db: no such index"), "{stderr}");
    let (_, stderr) = run(d, &["index", "build", "nowhere", "--index", "new.db"], 2);
    assert!(
        stderr.contains("nowhere: no such file or directory"),
        "{stderr}"
    );
    assert!(!d.join("new.db").exists());
}

/// Starts `ndup args` with the debug pause hook at `after` written documents and returns once
/// it has paused, in the middle of its write transaction.
fn start_paused(dir: &Path, args: &[&str], after: u64) -> std::process::Child {
    let mut child = StdCommand::new(env!("CARGO_BIN_EXE_ndup"))
        .current_dir(dir)
        .args(args)
        .env("NDUP_DEBUG_PAUSE_AFTER_WRITES", after.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
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
fn answers(dir: &Path) -> (Vec<(String, String)>, u64) {
    let (r, _) = run(
        dir,
        &[
            "query",
            "--index",
            "i.db",
            "--verify",
            "signature",
            "c",
            "q",
        ],
        0,
    );
    let mut m = matches(&r);
    m.sort();
    (m, of_type(&r, "index")[0]["documents"].as_u64().unwrap())
}

// The pause hook exists in debug builds only.
#[cfg(debug_assertions)]
#[test]
fn a_killed_writer_leaves_the_previous_state_and_readers_keep_working() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    corpus(d);
    build(d);
    // Query documents: copies of d7 and of a document that is not indexed yet.
    fs::create_dir(d.join("q")).unwrap();
    write_old(&d.join("q/a.txt"), &near_copy(&text(7, 300)));
    write_old(&d.join("q/b.txt"), &near_copy(&text(40, 300)));
    let before = answers(d);
    assert_eq!(before.1, 13);
    assert!(before.0.contains(&("q/a.txt".into(), "c/d7.txt".into())));

    // A rebuild over another corpus, killed after 5 of its 30 documents.
    let other = d.join("other");
    fs::create_dir(&other).unwrap();
    for i in 30..60 {
        write_old(&other.join(format!("o{i}.txt")), &text(i, 300));
    }
    let mut writer = start_paused(d, &["index", "build", "other", "--index", "i.db"], 5);
    // A reader while the writer holds its transaction open: the last committed state.
    assert_eq!(answers(d), before);
    writer.kill().unwrap();
    writer.wait().unwrap();
    assert_eq!(answers(d), before);

    // The same for `add`, killed after 3 documents.
    let mut writer = start_paused(d, &["index", "add", "other", "--index", "i.db"], 3);
    assert_eq!(answers(d), before);
    writer.kill().unwrap();
    writer.wait().unwrap();
    assert_eq!(answers(d), before);

    // The index is intact and writable: the same add, run to the end, is seen.
    let (r, _) = run(d, &["index", "add", "other", "--index", "i.db"], 0);
    assert_eq!(counts(&r), [30, 0, 0, 0, 30, 30, 43]);
    let after = answers(d);
    assert_eq!(after.1, 43);
    assert!(
        after
            .0
            .contains(&("q/b.txt".into(), "other/o40.txt".into()))
    );
    let check: String = rusqlite::Connection::open(d.join("i.db"))
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}

#[test]
fn banding_threshold_follow_quiet_and_threads() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    corpus(d);
    // A directory reached only through a symbolic link: indexed with -L only.
    fs::create_dir(d.join("real")).unwrap();
    write_old(&d.join("real/r.txt"), &text(77, 300));
    std::os::unix::fs::symlink(d.join("real"), d.join("c/link")).unwrap();

    let flags = ["--bands", "32", "--rows", "4"];
    let mut args = vec!["index", "build", "c", "--index", "i.db", "-q"];
    args.extend(flags);
    let out = ndup(d).args(&args).assert().code(0).get_output().clone();
    assert!(out.stderr.is_empty());
    let r: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(counts(&r)[6], 13);
    let mut args = vec!["index", "add", "c", "-L", "--index", "i.db"];
    args.extend(flags);
    let (r, _) = run(d, &args, 0);
    assert_eq!(counts(&r)[0], 1);

    write_old(&d.join("q.txt"), &near_copy(&text(77, 300)));
    let (_, stderr) = run(d, &["query", "--index", "i.db", "q.txt"], 2);
    assert!(
        stderr.contains(
            "index was built with --bands 32, this run uses 18; with --rows 4, this run uses 7"
        ),
        "{stderr}"
    );
    let mut args = vec!["query", "--index", "i.db", "q.txt", "c/d0.txt"];
    args.extend(flags);
    let (r, _) = run(d, &args, 0);
    assert_eq!(
        matches(&r),
        [
            ("q.txt".into(), "c/link/r.txt".into()),
            ("c/d0.txt".into(), "c/sub/dup.txt".into())
        ]
    );
    assert_eq!(
        (r[0]["bands"].as_u64(), r[0]["rows"].as_u64()),
        (Some(32), Some(4))
    );

    // A threshold above the copies' similarity reports nothing.
    let mut strict = args.clone();
    strict.extend(["--threshold", "0.999", "--verify", "exact"]);
    let (r, _) = run(d, &strict, 0);
    assert!(matches(&r).is_empty());
    assert_eq!(summary(&r)["candidates"], 2);

    // The same bytes whatever the number of threads.
    let outputs: Vec<Vec<u8>> = ["1", "2"]
        .iter()
        .map(|j| {
            let mut a = args.clone();
            a.extend(["-j", j, "--verify", "exact"]);
            ndup(d)
                .args(&a)
                .assert()
                .code(0)
                .get_output()
                .stdout
                .clone()
        })
        .collect();
    assert_eq!(outputs[0], outputs[1]);
}
