//! Finding and reading documents: planted near-duplicates, binary, unreadable and empty files,
//! missing paths, document ids.

use std::fs;

use ndup::find::config::ScanConfig;
use ndup::model::io_reason;

use super::util::{Dir, PLANTED_PAIRS, library_estimate, library_jaccard, owned, planted};
use crate::corpus::{edited, text};

#[test]
fn planted_pairs_are_found_with_their_estimates_and_unrelated_documents_are_not() {
    let d = planted();
    let run = d.scan().arg("docs").ok();
    eqnice!(owned(&PLANTED_PAIRS), run.pair_ids());

    let config = ScanConfig::default();
    let original = d.read("docs/original.txt");
    let edited = d.read("docs/edited.txt");

    // The exact copy: every slot agrees, decisive enough that auto does not re-read it.
    let copy = run.expect_pair("docs/original.txt", "docs/sub/copy.txt");
    assert_eq!(copy.estimate, 1.0);
    assert_eq!(copy.jaccard, None);

    // The edited copy: the estimate is the library's, bit for bit, and it is near enough to the
    // threshold that auto computed the exact Jaccard, which is the library's too.
    let j = library_jaccard(&config, &original, &edited);
    assert!((0.82..0.92).contains(&j), "planted similarity {j}");
    let est = library_estimate(&config, &original, &edited);
    for (a, b) in [PLANTED_PAIRS[0], PLANTED_PAIRS[1]] {
        let p = run.expect_pair(a, b);
        assert_eq!(p.estimate, est, "{a} {b}");
        assert_eq!(p.jaccard, Some(j), "{a} {b}");
    }

    for p in run.pairs() {
        assert!(
            !p.a.contains("unrelated") && !p.b.contains("unrelated"),
            "{p:?}"
        );
    }
    assert_eq!(run.count("pairs"), 3);
}

#[test]
fn a_binary_file_is_skipped_and_counted() {
    let d = planted();
    let run = d.scan().arg("docs").ok();
    eqnice!(
        vec![(
            "docs/logo.png".to_string(),
            "binary".to_string(),
            "binary file (NUL byte in the first 8 KiB)".to_string()
        )],
        run.skips()
    );
    assert_eq!(run.count("skipped_binary"), 1);
    assert_eq!(run.count("skipped_unreadable"), 0);
    // Binary files are expected in a tree: counted in the summary, not complained about.
    assert!(
        !run.stderr.contains("logo.png"),
        "binary skips are not warnings\n{}",
        run.describe()
    );
    assert!(
        run.stderr.contains("1 skipped (1 binary)"),
        "{}",
        run.describe()
    );
    assert!(
        run.pairs()
            .iter()
            .all(|p| p.a != "docs/logo.png" && p.b != "docs/logo.png")
    );
}

#[test]
fn a_nul_byte_after_the_first_8_kib_does_not_make_a_file_binary() {
    let d = Dir::new();
    let body = text(4, 1500);
    assert!(body.len() > 8 * 1024);
    let mut late = body.clone().into_bytes();
    late.push(0);
    d.create("late-nul.txt", &late);
    d.create("plain.txt", &body);
    let mut early = body.into_bytes();
    early[8 * 1024 - 1] = 0;
    d.create("early-nul.txt", &early);

    let run = d.scan().arg(".").ok();
    assert_eq!(run.count("documents"), 2);
    assert_eq!(run.count("skipped_binary"), 1);
    eqnice!(
        vec![(
            "./early-nul.txt".to_string(),
            "binary".to_string(),
            "binary file (NUL byte in the first 8 KiB)".to_string()
        )],
        run.skips()
    );
    run.expect_pair("./late-nul.txt", "./plain.txt");
}

#[test]
fn an_unreadable_file_is_reported_with_its_reason_and_the_scan_goes_on() {
    // The tests may run as root, which reads any file whatever its mode: a dangling symbolic
    // link named on the command line is unreadable for everyone.
    let d = planted();
    d.link("no-such-target.txt", "dangling.txt");
    let reason = io_reason(&fs::read(d.path().join("dangling.txt")).unwrap_err());
    assert_eq!(reason, "No such file or directory");

    let run = d.scan().args(["docs", "dangling.txt"]).ok();
    assert!(
        run.stderr_lines()
            .contains(&"ndup: dangling.txt: No such file or directory"),
        "{}",
        run.describe()
    );
    assert!(
        run.skips()
            .contains(&("dangling.txt".to_string(), "unreadable".to_string(), reason))
    );
    assert_eq!(run.count("skipped_unreadable"), 1);
    // The rest of the scan happened.
    eqnice!(owned(&PLANTED_PAIRS), run.pair_ids());
    assert!(run.stderr.contains("1 unreadable"), "{}", run.describe());
}

#[test]
fn a_symlink_loop_met_while_following_links_is_reported_and_the_scan_goes_on() {
    let d = planted();
    d.link("loop-b", "docs/loop-a");
    d.link("loop-a", "docs/loop-b");
    let reason = io_reason(&fs::metadata(d.path().join("docs/loop-a")).unwrap_err());

    let run = d.scan().args(["--follow", "docs"]).ok();
    for name in ["docs/loop-a", "docs/loop-b"] {
        let line = format!("ndup: {name}: {reason}");
        assert!(
            run.stderr_lines().contains(&line.as_str()),
            "missing {line:?}\n{}",
            run.describe()
        );
    }
    assert_eq!(run.count("skipped_unreadable"), 2);
    eqnice!(owned(&PLANTED_PAIRS), run.pair_ids());
}

#[test]
fn a_file_without_read_permission_is_reported_when_not_privileged() {
    use std::os::unix::fs::PermissionsExt;
    let d = planted();
    let secret = d.create("docs/secret.txt", text(1, 150));
    fs::set_permissions(&secret, fs::Permissions::from_mode(0o000)).unwrap();
    let Err(err) = fs::read(&secret) else {
        // Running as root: permissions do not stop reading; the dangling link test covers this.
        return;
    };
    let reason = io_reason(&err);
    let run = d.scan().arg("docs").ok();
    let line = format!("ndup: docs/secret.txt: {reason}");
    assert!(
        run.stderr_lines().contains(&line.as_str()),
        "{}",
        run.describe()
    );
    eqnice!(owned(&PLANTED_PAIRS), run.pair_ids());
}

#[test]
fn empty_documents_are_counted_and_never_paired() {
    let d = planted();
    d.create("docs/empty-too.txt", "");
    let run = d.scan().arg("docs").ok();
    // original, edited, copy, two unrelated, and the three empty ones.
    assert_eq!(run.count("documents"), 8);
    assert_eq!(run.count("empty"), 3);
    for p in run.pairs() {
        for id in [&p.a, &p.b] {
            assert!(!id.contains("empty") && !id.contains("blank"), "{p:?}");
        }
    }
    assert!(
        run.stderr.contains("8 documents (3 empty)"),
        "{}",
        run.describe()
    );
}

#[test]
fn only_empty_documents_is_not_an_error() {
    let d = Dir::new();
    d.create("a.txt", "");
    d.create("b.txt", "\n\n");
    let run = d.scan().arg(".").ok();
    assert_eq!(run.count("documents"), 2);
    assert_eq!(run.count("empty"), 2);
    assert!(run.pairs().is_empty());
}

#[test]
fn a_missing_path_exits_2_before_any_work_with_a_one_line_error() {
    let d = planted();
    let run = d.scan().args(["docs", "no/such/dir"]).code(2);
    eqnice!("", run.stdout);
    eqnice!(
        vec!["ndup: no/such/dir: no such file or directory"],
        run.stderr_lines()
    );
}

#[test]
fn a_missing_path_is_found_before_reading_anything() {
    // A FIFO named on the command line would block the scan on opening it: the missing path
    // after it must be reported without ever getting there.
    let d = Dir::new();
    let made = std::process::Command::new("mkfifo")
        .arg(d.path().join("fifo"))
        .status()
        .expect("run mkfifo");
    assert!(made.success());
    let run = d.scan().args(["fifo", "missing.txt"]).timeout(60).code(2);
    eqnice!(
        vec!["ndup: missing.txt: no such file or directory"],
        run.stderr_lines()
    );
}

#[test]
fn no_readable_document_exits_2() {
    let d = Dir::new();
    d.create("only/logo.png", b"\0\x01\x02");
    d.mkdir("nothing");
    for path in ["only", "nothing"] {
        let run = d.scan().arg(path).code(2);
        eqnice!("", run.stdout);
        assert!(
            run.stderr.contains("no document could be read"),
            "{}",
            run.describe()
        );
    }
}

#[test]
fn invalid_utf8_is_decoded_lossily_not_skipped() {
    let d = Dir::new();
    let body = text(5, 150);
    d.create("clean.txt", &body);
    let mut dirty = body.into_bytes();
    dirty.splice(100..100, [0xff, 0xfe, b'x', 0xc3]);
    d.create("dirty.txt", &dirty);
    let run = d.scan().arg(".").ok();
    assert!(run.skips().is_empty(), "{}", run.describe());
    let p = run.expect_pair("./clean.txt", "./dirty.txt");
    assert!(p.estimate > 0.9 && p.estimate < 1.0, "{p:?}");
}

#[test]
fn ids_are_paths_as_written() {
    let d = planted();
    // A file named directly is one document; ids keep the prefix the user wrote.
    let run = d
        .scan()
        .args(["./docs/original.txt", "docs/edited.txt"])
        .ok();
    eqnice!(
        owned(&[("./docs/original.txt", "docs/edited.txt")]),
        run.pair_ids()
    );
    assert_eq!(run.count("documents"), 2);

    let abs = d.path().join("docs");
    let run = d.scan().arg(&abs).ok();
    let prefix = format!("{}/", abs.display());
    for p in run.pairs() {
        assert!(
            p.a.starts_with(&prefix) && p.b.starts_with(&prefix),
            "{p:?}"
        );
    }
    assert_eq!(run.pairs().len(), 3);
}

#[test]
fn directories_are_walked_recursively_in_sorted_order() {
    let d = Dir::new();
    // One family of exact copies spread over nested directories: the pair order depends only on
    // the ids.
    for name in ["z/a.txt", "a/z.txt", "a/b/c.txt", "m.txt"] {
        d.create(name, text(6, 60));
    }
    let run = d.scan().arg(".").ok();
    eqnice!(
        owned(&[
            ("./a/b/c.txt", "./a/z.txt"),
            ("./a/b/c.txt", "./m.txt"),
            ("./a/b/c.txt", "./z/a.txt"),
            ("./a/z.txt", "./m.txt"),
            ("./a/z.txt", "./z/a.txt"),
            ("./m.txt", "./z/a.txt"),
        ]),
        run.pair_ids()
    );
}

#[test]
fn edited_copies_far_below_the_threshold_are_not_reported() {
    let d = Dir::new();
    d.create("a.txt", text(7, 150));
    d.create("b.txt", edited(7, 150, 30));
    let j = library_jaccard(&ScanConfig::default(), &d.read("a.txt"), &d.read("b.txt"));
    assert!(j < 0.5, "{j}");
    let run = d.scan().arg(".").ok();
    assert!(run.pairs().is_empty(), "{}", run.describe());
}

/// Makes a FIFO `name` in `d`.
fn mkfifo(d: &Dir, name: &str) {
    let made = std::process::Command::new("mkfifo")
        .arg(d.path().join(name))
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo {name}");
}

/// `printf 'a.md\0b.md\0' | ndup scan --files-from - -0` with `b.md` a link to a FIFO nobody
/// writes to blocked forever in `open`.
#[test]
fn a_fifo_nobody_writes_to_reads_as_empty_named_or_listed() {
    let d = Dir::new();
    let body = text(35, 80);
    d.create("a.md", &body);
    d.create("c.md", &body);
    mkfifo(&d, "f");
    d.link("f", "b.md");
    let runs = [
        d.scan()
            .args(["--files-from", "-", "-0"])
            .stdin("a.md\0b.md\0c.md\0")
            .timeout(60)
            .ok(),
        d.scan().args(["a.md", "b.md", "c.md"]).timeout(60).ok(),
        d.scan().args(["a.md", "f", "c.md"]).timeout(60).ok(),
    ];
    for run in runs {
        eqnice!(owned(&[("a.md", "c.md")]), run.pair_ids());
        assert_eq!(run.count("documents"), 3, "{}", run.describe());
        assert_eq!(run.count("empty"), 1, "{}", run.describe());
        assert!(run.skips().is_empty(), "{}", run.describe());
    }
    // As JSON lines: an empty source.
    let run = d.scan().args(["--jsonl", "f"]).timeout(60).code(2);
    eqnice!(vec!["ndup: no document could be read"], run.stderr_lines());
}

/// `ndup scan -L .` left a FIFO out without a word; a walk never opens one (it may never be
/// written to), but says why it left it out, as for any skipped file.
#[test]
fn a_fifo_met_while_walking_is_skipped_with_its_reason() {
    let d = Dir::new();
    let body = text(36, 80);
    d.create("docs/a.md", &body);
    d.create("docs/c.md", &body);
    mkfifo(&d, "docs/f");
    d.link("f", "docs/b.md");
    let skip = |id: &str| {
        (
            id.to_string(),
            "unreadable".to_string(),
            "a named pipe (FIFO), not a regular file".to_string(),
        )
    };
    let run = d.scan().args(["-L", "docs"]).timeout(60).ok();
    eqnice!(vec![skip("docs/b.md"), skip("docs/f")], run.skips());
    eqnice!(owned(&[("docs/a.md", "docs/c.md")]), run.pair_ids());
    assert!(
        run.stderr_lines()
            .contains(&"ndup: docs/f: a named pipe (FIFO), not a regular file"),
        "{}",
        run.describe()
    );
    // Without -L the link is no document, as any link met while walking.
    let run = d.scan().arg("docs").timeout(60).ok();
    eqnice!(vec![skip("docs/f")], run.skips());
}

/// 100 records with 50 MB ids (a 165 KB zstd file) took 5.4 GB: every id is kept.
#[test]
fn a_record_id_longer_than_4_kib_makes_the_record_malformed() {
    let d = Dir::new();
    let body = text(37, 80);
    let record = |id: serde_json::Value| serde_json::json!({"id": id, "text": body}).to_string();
    let at_limit = "x".repeat(4096);
    let lines = [
        record("y".repeat(4097).into()),
        record(at_limit.clone().into()),
        record("b".into()),
        // A number keeps every digit: as long as it is written.
        record("N".into()).replace(r#""N""#, &"9".repeat(5000)),
    ];
    d.create(
        "c.jsonl.zst",
        super::util::zstd(lines.join("\n").as_bytes()),
    );
    let run = d.scan().arg("c.jsonl.zst").ok();
    let why = "id longer than 4096 bytes";
    eqnice!(
        vec![
            (
                "c.jsonl.zst:1".to_string(),
                "malformed".to_string(),
                why.to_string()
            ),
            (
                "c.jsonl.zst:4".to_string(),
                "malformed".to_string(),
                why.to_string()
            ),
        ],
        run.skips()
    );
    eqnice!(owned(&[("b", at_limit.as_str())]), run.pair_ids());
    assert!(
        run.stderr_lines()
            .contains(&"ndup: c.jsonl.zst:1: id longer than 4096 bytes"),
        "{}",
        run.describe()
    );

    // A Parquet row's id is judged as a record's.
    use arrow_array::{ArrayRef, RecordBatch, StringArray};
    let ids = StringArray::from(vec!["y".repeat(4097), at_limit.clone(), "b".into()]);
    let texts = StringArray::from(vec![body.clone(), body.clone(), body.clone()]);
    let batch = RecordBatch::try_from_iter([
        ("id", std::sync::Arc::new(ids) as ArrayRef),
        ("text", std::sync::Arc::new(texts) as ArrayRef),
    ])
    .unwrap();
    let file = fs::File::create(d.path().join("p.parquet")).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let run = d.scan().arg("p.parquet").ok();
    eqnice!(
        vec![(
            "p.parquet:1".to_string(),
            "malformed".to_string(),
            why.to_string()
        )],
        run.skips()
    );
    eqnice!(owned(&[("b", at_limit.as_str())]), run.pair_ids());
}

/// Runs `script` with bash in `d`, `ndup` being this build; its stdout.
fn bash(d: &Dir, script: &str) -> String {
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ndup() {{ '{}' \"$@\"; }}\n{script}",
            super::util::ndup_bin()
        ))
        .current_dir(d.path())
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `ndup scan <(cmd)`: a pipe can be read only once, and exact verification read it again (as
/// empty: near-duplicates were lost), so was a JSON-lines pipe (`Illegal seek`), and `dedup`
/// of one failed at the end.
#[test]
fn pipes_named_as_files_are_read_once_and_found_as_the_files_are() {
    let d = Dir::new();
    d.create("a.txt", text(41, 300));
    d.create("b.txt", edited(41, 300, 12));
    d.create("c.txt", edited(41, 300, 30));
    let found = |out: &str| -> Vec<String> {
        let mut v: Vec<String> = out
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|r| r["type"] == "pair")
            .map(|r| format!("{} {}", r["estimate"], r["jaccard"]))
            .collect();
        v.sort();
        v
    };
    for verify in ["exact", "auto"] {
        let files = bash(
            &d,
            &format!("ndup scan a.txt b.txt c.txt -t 0.5 --verify {verify}"),
        );
        let pipes = bash(
            &d,
            &format!("ndup scan <(cat a.txt) <(cat b.txt) <(cat c.txt) -t 0.5 --verify {verify}"),
        );
        assert_eq!(found(&files).len(), 3, "{files}");
        eqnice!(found(&files), found(&pipes), "--verify {verify}");
    }

    let lines: String = (0..30)
        .map(|i| {
            let body = edited(43, 200, i % 7 * 3);
            format!("{}\n", serde_json::json!({"id": i, "text": body}))
        })
        .collect();
    d.create("c.jsonl", lines);
    for cmd in [
        "scan {} -t 0.8 --verify exact",
        "dedup {} -t 0.8 -o -",
        "scan {} -t 0.8 --format html",
    ] {
        let files = bash(&d, &format!("ndup {}", cmd.replace("{}", "c.jsonl")));
        let pipe = bash(
            &d,
            &format!("ndup {}", cmd.replace("{}", "--jsonl <(cat c.jsonl)")),
        );
        assert!(files.len() > 100, "{cmd}: {files}");
        // The HTML report names the source of each record.
        let pipe = pipe.replace("/dev/fd/63", "c.jsonl");
        assert!(files == pipe, "{cmd}:\n{files}\n---\n{pipe}");
    }
}
