//! One test per bug fixed, named for what went wrong.

use super::util::Dir;
use crate::corpus::text;

/// `ndup scan broken-link` said only "no document could be read": the reason the one file
/// could not be read, which a scan with other documents prints, was lost.
#[test]
fn no_readable_document_error_says_why() {
    let d = Dir::new();
    d.link("nowhere.txt", "broken.txt");
    let run = d.scan().arg("broken.txt").code(2);
    eqnice!("", run.stdout);
    eqnice!(
        vec!["ndup: no document could be read: broken.txt: No such file or directory"],
        run.stderr_lines()
    );

    d.create("bin/logo.png", b"\0PNG");
    let run = d.scan().arg("bin").code(2);
    eqnice!(
        vec![
            "ndup: no document could be read: bin/logo.png: binary file (NUL byte in the first 8 KiB)"
        ],
        run.stderr_lines()
    );
    // Quiet or not, a fatal error says why.
    let run = d.scan().args(["-q", "broken.txt", "bin"]).code(2);
    assert_eq!(run.stderr_lines().len(), 1, "{}", run.describe());
    assert!(
        run.stderr.contains("broken.txt: No such file or directory"),
        "{}",
        run.describe()
    );
}

/// Two files whose names differ only in invalid UTF-8 have the same (lossy) id; the second was
/// silently dropped as if it were the first file seen again: not read, not counted, not paired.
#[test]
fn files_whose_names_differ_only_in_invalid_utf8_are_both_read() {
    use std::os::unix::ffi::OsStrExt;
    let d = Dir::new();
    d.mkdir("names");
    let body = text(40, 100);
    for name in [&b"names/x\xff.txt"[..], b"names/x\xfe.txt"] {
        std::fs::write(d.path().join(std::ffi::OsStr::from_bytes(name)), &body).unwrap();
    }
    let run = d.scan().arg("names").ok();
    assert_eq!(run.count("documents"), 2, "{}", run.describe());
    assert_eq!(run.pairs().len(), 1);
    assert_eq!(run.pairs()[0].estimate, 1.0);
}

/// A FIFO inside a scanned tree was opened like a file, and opening a FIFO blocks until
/// someone writes to it: the scan hung forever. Walking now reads regular files only.
#[test]
fn a_fifo_in_a_tree_does_not_hang_the_scan() {
    let d = Dir::new();
    let body = text(41, 100);
    d.create("tree/a.txt", &body);
    d.create("tree/b.txt", &body);
    let made = std::process::Command::new("mkfifo")
        .arg(d.path().join("tree/pipe"))
        .status()
        .expect("run mkfifo");
    assert!(made.success());
    let run = d.scan().arg("tree").timeout(60).ok();
    assert_eq!(run.count("documents"), 2);
    assert_eq!(
        run.pair_ids(),
        vec![("tree/a.txt".into(), "tree/b.txt".into())]
    );
}

/// `--bands` or `--rows` large enough that bands x rows overflows panicked (exit 101) in debug
/// builds and, in release, wrapped to a small product that could pass the consistency check.
#[test]
fn huge_bands_or_rows_are_a_usage_error() {
    let d = Dir::new();
    d.create("a.txt", "some text");
    let huge = (usize::MAX / 4 + 1).to_string();
    for args in [
        vec!["--bands", huge.as_str()],
        vec!["--rows", huge.as_str()],
        vec!["--bands", "4", "--rows", huge.as_str()],
        vec!["--num-perm", "128", "--bands", huge.as_str(), "--rows", "8"],
    ] {
        let run = d.scan().arg("a.txt").args(&args).code(2);
        assert_eq!(run.stderr_lines().len(), 1, "{}", run.describe());
        assert!(run.stderr.contains("is too large"), "{}", run.describe());
    }
}

/// A huge `-k` on a document with non-ASCII text allocated a ring of k + 1 positions: k = 4e9
/// aborted on a failed 32 GB allocation, k = 2^64 - 1 overflowed. A document shorter than one
/// shingle is one shingle, its whole text, whatever k is.
#[test]
fn huge_k_on_non_ascii_text_does_not_abort() {
    let d = Dir::new();
    d.create("a.txt", "café au lait");
    d.create("b.txt", "Café  au lait\n");
    for k in ["4000000000", &usize::MAX.to_string()] {
        let run = d.scan().args(["a.txt", "b.txt", "-k", k]).ok();
        assert_eq!(run.pairs().len(), 1, "{}", run.describe());
        assert_eq!(run.pairs()[0].estimate, 1.0);
    }
}

/// Every mode read JSON lines through its own copy of the reader, and the copies drifted: the
/// sample sketches (and so `--containment`) refused JSON lines, and exact mode signed every
/// record, threw the signatures away and read them all again. One loop now reads every document
/// for every mode, so a corpus gives the same pairs as files and as records.
#[test]
fn every_mode_reads_json_lines_as_it_reads_files() {
    let d = Dir::new();
    let (a, b) = (text(61, 200), text(62, 200));
    let docs = [
        ("a", a.clone()),
        ("a-copy", format!("{a} and one more line")),
        ("b", b.clone()),
        ("b-inside", format!("{b} {}", text(63, 40))),
        ("c", text(64, 150)),
    ];
    let mut jsonl = String::new();
    for (id, body) in &docs {
        d.create(&format!("tree/{id}"), body);
        jsonl +=
            &(serde_json::json!({ "id": format!("tree/{id}"), "text": body }).to_string() + "\n");
    }
    d.create("corpus.jsonl", jsonl);
    for mode in [
        &["--containment", "-t", "0.9"][..],
        &["--sketch", "modulo"],
        &["--sketch", "supershingle", "-t", "0.5"],
        &["--exact"],
        &["--exact", "--containment", "-t", "0.9"],
        &["--verify", "exact"],
    ] {
        let files = d.scan().arg("tree").args(mode).ok();
        let records = d.scan().arg("corpus.jsonl").args(mode).ok();
        assert!(!files.pairs().is_empty(), "{mode:?}: {}", files.describe());
        eqnice!(files.pairs(), records.pairs(), "{mode:?}");
        eqnice!(files.params(), records.params(), "{mode:?}");
    }
}

/// A missing baseline said its reason twice: `missing.json: No such file or directory (os error
/// 2): No such file or directory (os error 2)`.
#[test]
fn an_error_states_its_reason_once() {
    let d = Dir::new();
    d.create("docs/a.md", text(71, 50));
    let run = d
        .scan()
        .args(["docs", "--baseline", "missing.json"])
        .code(2);
    let line = run.stderr_lines().join("\n");
    assert!(line.starts_with("ndup: missing.json: "), "{line}");
    assert_eq!(
        line.matches("No such file or directory").count(),
        1,
        "{line}"
    );
}

/// `ndup scan d --fail-on-duplicates | head -1` exited 0 with thousands of pairs found: the
/// closed pipe was taken for success before the gate was asked.
#[test]
fn a_gate_decides_the_exit_status_when_the_pipe_closes() {
    use std::io::Read;
    let d = Dir::new();
    let body = text(81, 60);
    for i in 0..400 {
        d.create(&format!("docs/{i:03}.md"), &body);
    }
    // Every format: CSV's writer wrapped the closed pipe in an error of another kind (exit 2).
    for format in ["text", "csv", "jsonl", "github"] {
        for (gate, expected) in [
            (&["--fail-on-duplicates"][..], 1),
            (&["--max-pairs", "10"], 1),
            (&[], 0),
        ] {
            let mut child = d
                .scan()
                .args(["docs", "--format", format, "-q"])
                .args(gate)
                .spawn();
            // Read one line, then close the pipe while ndup still has pairs to write.
            let mut out = child.stdout.take().unwrap();
            let mut first = [0u8; 16];
            out.read_exact(&mut first).unwrap();
            drop(out);
            let status = child.wait().unwrap();
            assert_eq!(status.code(), Some(expected), "{format} {gate:?}");
        }
    }
}

/// `--num-perm 18446744073709551615` panicked on a capacity overflow and `4294967296` aborted
/// on a 34 GB allocation; `-j 5000` spun for minutes starting threads; `--threshold -1` got
/// clap's "unexpected argument". Every number is checked before any work, with its bounds.
#[test]
fn numbers_are_checked_before_any_work() {
    let d = Dir::new();
    d.create("docs/a.md", text(91, 50));
    for (args, says) in [
        (
            &["--num-perm", "18446744073709551615"][..],
            "--num-perm must be between 1 and 16384, not 18446744073709551615",
        ),
        (
            &["--num-perm", "4294967296"],
            "--num-perm must be between 1 and 16384, not 4294967296",
        ),
        (
            &["--threshold", "-1"],
            "--threshold must be between 0 and 1, not -1",
        ),
        (&["-j", "5000"], "at most 1024 threads, not 5000"),
    ] {
        let run = d.scan().arg("docs").args(args).timeout(20).code(2);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.describe());
        assert!(!run.stderr.contains("panicked"), "{}", run.describe());
    }
    // rayon reads RAYON_NUM_THREADS itself: it started 5,000 threads past the bound of -j.
    let run = d
        .scan()
        .arg("docs")
        .env("RAYON_NUM_THREADS", "5000")
        .timeout(20)
        .code(2);
    assert!(
        run.stderr
            .contains("RAYON_NUM_THREADS: at most 1024 threads, not 5000"),
        "{}",
        run.describe()
    );
}

/// `ndup compare` normalized the texts itself and kept the `ndup:ignore` regions a scan leaves
/// out, so it disagreed with the scan about the same two files; and `--num-perm` below 126 was
/// refused for the default banding of a scan, which compare does not use.
#[test]
fn compare_sees_documents_as_a_scan_does() {
    let d = Dir::new();
    let body = text(95, 80);
    d.create(
        "a.md",
        format!(
            "{body}\n<!-- ndup:ignore-start -->\n{}\n<!-- ndup:ignore-end -->\n",
            text(96, 80)
        ),
    );
    d.create("b.md", format!("{body}\n"));
    let v = d
        .ndup()
        .args(["compare", "a.md", "b.md", "--format", "json"])
        .ok()
        .json();
    assert_eq!(v["jaccard"], 1.0, "{v}");
    let scanned = d.scan().args(["a.md", "b.md"]).ok();
    assert_eq!(scanned.pairs()[0].estimate, 1.0);
    let v = d
        .ndup()
        .args([
            "compare",
            "a.md",
            "b.md",
            "--num-perm",
            "64",
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(v["params"]["num_perm"], 64);
}

/// A UTF-8 byte-order mark at the start of a file dropped the first JSON-lines record (malformed
/// JSON at column 1) and silently disabled the first `.ndupignore` rule.
#[test]
fn a_byte_order_mark_is_not_text() {
    let d = Dir::new();
    let body = text(97, 60);
    let line = |id: u32| serde_json::json!({ "id": id, "text": body }).to_string() + "\n";
    d.create(
        "bom.jsonl",
        [&b"\xef\xbb\xbf"[..], line(1).as_bytes(), line(2).as_bytes()].concat(),
    );
    let run = d.scan().arg("bom.jsonl").ok();
    assert_eq!(run.count("skipped_malformed"), 0, "{}", run.describe());
    assert_eq!(run.pairs().len(), 1);
    // Exact verification reads the first record again, at its offset (with the mark).
    let run = d.scan().args(["bom.jsonl", "--verify", "exact"]).ok();
    assert_eq!(run.pairs()[0].jaccard, Some(1.0));

    d.create("docs/a.md", &body);
    d.create("docs/b.md", &body);
    d.create("docs/.ndupignore", "\u{feff}a.md b.md\n");
    let run = d.scan().arg("docs").ok();
    assert_eq!(run.pairs().len(), 0, "{}", run.describe());
    assert_eq!(run.count("ignored_pairs"), 1);
}

/// `ndup index build corpus.jsonl` indexed the whole file as one document; then it was refused.
/// Now its records are indexed one by one, as a scan reads them.
#[test]
fn an_index_holds_json_lines_records_one_by_one_not_the_corpus_as_one_document() {
    let d = Dir::new();
    d.create(
        "c.jsonl",
        [
            serde_json::json!({"id": 1, "text": text(98, 40)}).to_string(),
            serde_json::json!({"id": 2, "text": text(99, 40)}).to_string(),
        ]
        .join("\n"),
    );
    for cmd in ["build", "add", "update"] {
        let run = d
            .ndup()
            .args(["index", cmd, "c.jsonl", "--index", "i.db"])
            .ok();
        let s = run.summary();
        assert_eq!(s["documents"], 2, "{cmd}: {}", run.describe());
        assert_eq!(s["seen"], 2, "{cmd}: {}", run.describe());
    }
}

/// The params record of `--exact` wrote the signature sketch and a banding that the join never
/// used (`"sketch":"oph","num_perm":64` for `--exact --sketch oph --num-perm 64`), and that of a
/// sample sketch wrote a banding too: each now records only its strategy's parameters.
#[test]
fn the_params_record_holds_only_the_parameters_of_the_strategy_used() {
    let d = Dir::new();
    let body = text(5, 120);
    d.create("docs/a.md", &body);
    d.create("docs/b.md", format!("{body} and one more"));
    let banding = [
        "num_perm",
        "bands",
        "rows",
        "lsh_threshold",
        "unbanded_slots",
    ];
    let exact = d
        .scan()
        .args(["docs", "--exact", "--sketch", "oph", "--num-perm", "64"])
        .ok();
    let p = exact.params();
    assert_eq!(p["mode"], "exact");
    for absent in banding.iter().chain(&["sketch", "modulo"]) {
        assert!(p.get(absent).is_none(), "{absent}: {p}");
    }
    assert_eq!(exact.pairs().len(), 1);
    let sample = d.scan().args(["docs", "--containment"]).ok();
    let p = sample.params();
    assert_eq!((&p["sketch"], &p["modulo"]), (&"modulo".into(), &16.into()));
    for absent in banding {
        assert!(p.get(absent).is_none(), "{absent}: {p}");
    }
    let signatures = d.scan().arg("docs").ok();
    let p = signatures.params();
    assert_eq!((&p["sketch"], &p["num_perm"]), (&"fss".into(), &128.into()));
    // The library's note on unbanded slots names no flag; the terminal's does.
    let json = d
        .ndup()
        .args(["tune", "--threshold", "0.5", "--format", "json"])
        .ok();
    let note = json.json()["unbanded_note"].as_str().unwrap().to_string();
    assert!(note.contains("(see the tuner's cost)"), "{note}");
    let text = d.ndup().args(["tune", "--threshold", "0.5"]).ok();
    assert!(text.stdout.contains("(see `ndup tune`)"), "{}", text.stdout);
}

/// `x\xff.md` and `x\xef\xbf\xbd.md` (the UTF-8 of U+FFFD) both had the id `x\u{FFFD}.md`: dedup
/// listed one id twice and `index build` failed on its UNIQUE constraint. A name that is not
/// UTF-8 now has an escaped id that names it alone, and the index reads the file back by it.
#[test]
fn names_that_are_not_utf8_have_ids_of_their_own() {
    use std::os::unix::ffi::OsStrExt;
    let d = Dir::new();
    d.mkdir("n");
    let body = text(41, 100);
    let names: [&[u8]; 3] = [b"n/x\xff.md", b"n/x\xef\xbf\xbd.md", b"n/x\\xff.md"];
    for name in names {
        std::fs::write(d.path().join(std::ffi::OsStr::from_bytes(name)), &body).unwrap();
    }
    let run = d.scan().args(["n", "--clusters"]).ok();
    let mut ids = run.clusters().concat();
    ids.sort();
    assert_eq!(ids, [r"n/x\\xff.md", r"n/x\xff.md", "n/x\u{FFFD}.md"]);
    let dedup = d.ndup().args(["dedup", "n", "-o", "-"]).ok();
    let mut listed: Vec<&str> = dedup.stdout.lines().collect();
    listed.sort();
    listed.dedup();
    assert_eq!(listed.len(), 3, "{}", dedup.stdout);
    // The index stores the escaped id, and reads the file again by it for exact verification.
    d.ndup()
        .args(["index", "build", "n", "--index", "i.db"])
        .ok();
    d.create("q.md", &body);
    let q = d
        .ndup()
        .args(["query", "--index", "i.db", "q.md", "--verify", "exact"])
        .ok();
    let matches = q.of_type("match");
    assert_eq!(matches.len(), 3, "{}", q.stdout);
    assert!(matches.iter().all(|m| m["jaccard"] == 1.0), "{}", q.stdout);
}

/// Integer ids above 2^64 went through a float: 12345678901234567890123 and ...124 became one id
/// (and, under dedup, a "duplicate id"). Numbers are now kept as written.
#[test]
fn large_integer_ids_keep_every_digit() {
    let d = Dir::new();
    let body = text(42, 60);
    let lines: String = [
        "12345678901234567890123",
        "12345678901234567890124",
        "2.5",
        "2.50",
    ]
    .iter()
    .map(|id| format!("{{\"id\": {id}, \"text\": {}}}\n", serde_json::json!(body)))
    .collect();
    d.create("c.jsonl", lines);
    let run = d.scan().args(["c.jsonl", "--clusters"]).ok();
    let mut ids = run.clusters().concat();
    ids.sort();
    assert_eq!(
        ids,
        [
            "12345678901234567890123",
            "12345678901234567890124",
            "2.5",
            "2.50"
        ]
    );
    let dedup = d.ndup().args(["dedup", "c.jsonl", "-o", "-"]).ok();
    assert!(!dedup.stderr.contains("duplicate id"), "{}", dedup.stderr);
}

/// A path named inside a directory the user may not search was "no such file or directory"; it
/// is the system's reason now, once ("Permission denied"). Run as nobody, since root may search
/// anything.
#[test]
fn a_path_behind_a_locked_directory_says_permission_denied() {
    use std::os::unix::fs::PermissionsExt;
    let setpriv = std::path::Path::new("/usr/bin/setpriv");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc_geteuid() } != 0 || !setpriv.exists() {
        eprintln!("skipped: needs root and setpriv to run as another user");
        return;
    }
    let d = Dir::new();
    d.create("d/a.md", text(43, 50));
    d.create("d/locked/c.md", text(43, 50));
    let mode = |p: &std::path::Path, m| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
    };
    // The temporary directory is private; what is above it (/tmp) is open to everyone.
    mode(d.path(), 0o755);
    mode(&d.path().join("d"), 0o755);
    mode(&d.path().join("d/locked"), 0o000);
    let out = std::process::Command::new(setpriv)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(super::util::ndup_bin())
        .args(["scan", "d/a.md", "d/locked/c.md"])
        .current_dir(d.path())
        .output()
        .unwrap();
    mode(&d.path().join("d/locked"), 0o755);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "ndup: d/locked/c.md: Permission denied\n"
    );
}

unsafe extern "C" {
    #[link_name = "geteuid"]
    fn libc_geteuid() -> u32;
}

/// Found by the fuzz suite: a `.ndupignore` line of 87,380 `*` panicked in globset; a FIFO named
/// `.ndupignore`, or named by a found `ndup.toml` as its baseline, blocked the scan forever; a
/// control character in a found `ndup.toml`'s value reached the terminal through clap's message.
#[test]
fn hostile_side_files_are_refused_not_obeyed() {
    let d = Dir::new();
    let body = text(44, 60);
    d.create("docs/a.md", &body);
    d.create("docs/b.md", &body);
    d.create("docs/.ndupignore", format!("{} **\n", "*".repeat(1 << 17)));
    let run = d.scan().arg("docs").timeout(60).code(2);
    assert!(
        run.stderr.starts_with("ndup: docs/.ndupignore: line 1:"),
        "{}",
        run.stderr
    );
    std::fs::remove_file(d.path().join("docs/.ndupignore")).unwrap();
    let fifo = |name: &str| {
        let ok = std::process::Command::new("mkfifo")
            .arg(d.path().join(name))
            .status()
            .unwrap();
        assert!(ok.success());
    };
    fifo("docs/.ndupignore");
    let run = d.scan().arg("docs").timeout(20).code(2);
    assert!(run.stderr.contains("not a regular file"), "{}", run.stderr);
    std::fs::remove_file(d.path().join("docs/.ndupignore")).unwrap();
    fifo("docs/base");
    d.create("docs/ndup.toml", "baseline = \"docs/base\"\n");
    let run = d.scan().arg("docs").timeout(20).code(2);
    assert!(run.stderr.contains("not a regular file"), "{}", run.stderr);
    d.create("docs/ndup.toml", "shingle = \"\\u001b]0;pwned\\u0007\"\n");
    let run = d.scan().arg("docs").code(2);
    assert!(
        run.stderr.contains("holds a control character"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains('\u{1b}'), "{:?}", run.stderr);
}

/// A record without an id is named by its line number; a record whose real id was that number
/// was then skipped as a "duplicate id", and the corpus lost a document. The record without an
/// id now gives way, whichever of the two comes first.
#[test]
fn a_real_id_equal_to_a_line_number_loses_no_record() {
    let d = Dir::new();
    let (a, b, c) = (text(60, 120), text(61, 120), text(62, 120));
    let rec = |id: Option<&str>, t: &str| match id {
        Some(id) => serde_json::json!({"id": id, "text": t}).to_string(),
        None => serde_json::json!({"text": t}).to_string(),
    };
    // Line 1 has no id and a later line claims "1"; line 4 has no id and an earlier line has
    // "4". Line 5's "5" is free.
    let lines = [
        rec(None, &a),
        rec(Some("4"), &b),
        rec(Some("1"), &a),
        rec(None, &b),
        rec(None, &c),
    ];
    d.create("c.jsonl", lines.join("\n") + "\n");
    let run = d.scan().args(["c.jsonl", "--format", "jsonl"]).ok();
    assert_eq!(run.count("documents"), 5, "{}", run.describe());
    assert!(run.skips().is_empty(), "{}", run.describe());
    let mut pairs = run.pair_ids();
    pairs.sort();
    assert_eq!(
        pairs,
        super::util::owned(&[("1", "c.jsonl:1"), ("4", "c.jsonl:4")]),
        "{}",
        run.describe()
    );
}
