//! Every reader is bounded (issue 24, items 3 and 6): endless or huge inputs cost a fixed amount
//! of memory, and a damaged compressed stream never passes for a whole one.
//!
//! The memory tests run ndup under an address-space limit (`ulimit -v`) far below what reading
//! the input whole would take, so an unbounded reader fails them by running out of memory.

use std::io::Write as _;
use std::process::Command;

use super::util::{Dir, ndup_bin};
use crate::corpus::text;

/// The address space ndup may use in the memory tests, in KiB: room for the binary, its threads
/// and the documents it keeps, and far less than the inputs below.
const LIMIT_KIB: u64 = 768 * 1024;

/// Runs `script` with bash in `d`, with `$NDUP` the binary, under [`LIMIT_KIB`].
fn bounded(d: &Dir, script: &str) -> (i32, String, String) {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("ulimit -v {LIMIT_KIB}; {script}"))
        .current_dir(d.path())
        .env("NDUP", ndup_bin())
        .output()
        .expect("bash");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_endless_device_named_directly_or_listed_is_read_no_further_than_its_first_bytes() {
    let d = Dir::new();
    let body = text(3, 80);
    d.create("a.md", &body);
    d.create("b.md", &body);
    // Listed by its own name, or through a link in the tree (which leads out of the working
    // directory, so it is followed only with -L).
    #[cfg(unix)]
    std::os::unix::fs::symlink("/dev/zero", d.path().join("zero.md")).unwrap();
    d.create("list", "a.md\nb.md\n/dev/zero\n");
    d.create("linked", "a.md\nb.md\nzero.md\n");
    for script in [
        "$NDUP scan a.md b.md /dev/zero",
        "$NDUP scan --files-from list",
        "$NDUP scan --files-from list --max-filesize 1G",
        "$NDUP scan -L --files-from linked",
    ] {
        let (code, out, err) = bounded(&d, script);
        assert_eq!(code, 0, "{script}: {err}");
        assert!(out.contains(r#""reason_kind":"binary""#), "{script}: {out}");
        assert!(out.contains(r#""type":"pair""#), "{script}: {out}");
    }
}

#[test]
fn a_huge_sparse_file_named_directly_is_skipped_by_its_size() {
    let d = Dir::new();
    let body = text(4, 80);
    d.create("a.md", &body);
    d.create("b.md", &body);
    let big = std::fs::File::create(d.path().join("big.md")).unwrap();
    big.set_len(2 << 30).unwrap();
    let (code, out, err) = bounded(&d, "$NDUP scan a.md b.md big.md");
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(r#""id":"big.md","reason_kind":"too-large""#),
        "{out}"
    );
    // The limit is the user's to raise or lower, for named files as for walked ones.
    let run = d
        .scan()
        .args(["a.md", "b.md", "--max-filesize", "100"])
        .code(2);
    assert!(
        run.stderr.contains("larger than the limit"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_endless_line_on_standard_input_is_a_skipped_record() {
    let d = Dir::new();
    let body = text(6, 80);
    let records = format!(
        "{}\n{}\n",
        serde_json::json!({"id": "a", "text": body}),
        serde_json::json!({"id": "b", "text": body})
    );
    d.create("head.jsonl", records);
    // Two GiB without a newline after two good records.
    let (code, out, err) = bounded(
        &d,
        "{ cat head.jsonl; head -c 2G /dev/zero | tr '\\0' a; } | $NDUP scan -",
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(r#""a":"a","b":"b""#), "{out}");
    assert!(
        out.contains(r#""id":"stdin:3","reason_kind":"too-large""#),
        "{out}"
    );
    // A smaller limit of the user's: the long record goes, the short ones stay.
    let long = serde_json::json!({"id": "c", "text": text(7, 400)}).to_string();
    d.create("c.jsonl", format!("{}{long}\n", d.read("head.jsonl")));
    let run = d.scan().args(["c.jsonl", "--max-line-length", "1K"]).ok();
    assert_eq!(run.pair_ids(), [("a".into(), "b".into())]);
    assert_eq!(run.skips().len(), 1);
    assert_eq!(run.count("skipped_too_large"), 1);
}

#[test]
fn side_files_have_a_size_cap() {
    let d = Dir::new();
    let body = text(8, 80);
    d.create("docs/a.md", &body);
    d.create("docs/b.md", &body);
    #[cfg(unix)]
    std::os::unix::fs::symlink("/dev/zero", d.path().join("stop.txt")).unwrap();
    let (code, _, err) = bounded(
        &d,
        "$NDUP scan docs --shingle stopword --stopwords stop.txt",
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("stop.txt") && err.contains("larger than"),
        "{err}"
    );
}

/// `ndup dedup -q t.jsonl.gz -o clean.jsonl` exited 0 with half the records of a truncated
/// archive and nothing on stderr.
#[test]
fn a_truncated_archive_fails_the_run_unless_partial_input_is_allowed() {
    let d = Dir::new();
    let lines: String = (0..3000)
        .map(|i| format!("{}\n", serde_json::json!({"id": i, "text": text(i, 30)})))
        .collect();
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(lines.as_bytes()).unwrap();
    let mut gz = enc.finish().unwrap();
    gz.truncate(gz.len() / 2);
    d.create("t.jsonl.gz", gz);
    for cmd in [
        vec!["dedup", "-q", "t.jsonl.gz", "-o", "clean.jsonl"],
        vec!["scan", "t.jsonl.gz"],
    ] {
        let run = d.ndup().args(&cmd).code(2);
        assert!(
            run.stderr
                .starts_with("ndup: t.jsonl.gz: read error after line ")
                && run.stderr.contains("records after it are missing")
                && run.stderr.contains("--partial-input"),
            "{cmd:?}: {}",
            run.stderr
        );
        assert!(!d.path().join("clean.jsonl").exists(), "{cmd:?}");
    }
    // Opted in: the records before the damage, and the damage reported.
    let run = d.scan().args(["t.jsonl.gz", "--partial-input"]).ok();
    let skips = run.skips();
    assert_eq!(skips.len(), 1, "{skips:?}");
    assert!(
        skips[0].2.starts_with("read error after line "),
        "{skips:?}"
    );
    let read = run.count("documents");
    assert!(read > 0 && read < 3000, "{read}");
}

/// `ndup dedup -L t d -o -` with `t/alink.md` a link to `d/only.md` dropped the real file, and
/// `ndup dedup d ./d/only.md` dropped a file in favour of itself.
#[test]
fn a_file_met_under_two_names_is_read_once() {
    let d = Dir::new();
    d.create("d/only.md", text(9, 80));
    d.create("d/other.md", text(10, 80));
    #[cfg(unix)]
    std::os::unix::fs::symlink("../d/only.md", {
        d.mkdir("t");
        d.path().join("t/alink.md")
    })
    .unwrap();
    for args in [
        vec!["dedup", "-L", "t", "d", "-o", "-"],
        vec!["dedup", "d", "./d/only.md", "-o", "-"],
    ] {
        let run = d.ndup().args(&args).ok();
        assert!(
            !run.stdout.contains(r#""type":"drop""#),
            "{args:?}: {}",
            run.stdout
        );
    }
    let run = d.scan().args(["d", "./d/only.md"]).ok();
    assert!(run.pairs().is_empty(), "{}", run.describe());
    assert_eq!(run.count("documents"), 2);
}

/// A configuration found in the scanned tree may lower the size limits, never raise them.
#[test]
fn a_tree_config_may_lower_the_size_limits_but_not_raise_them() {
    let d = Dir::new();
    let body = text(11, 80);
    d.create("docs/a.md", &body);
    d.create("docs/b.md", &body);
    d.create(
        "docs/ndup.toml",
        "max-filesize = \"1M\"\nmax-line-length = 4096\n",
    );
    assert_eq!(d.scan().arg("docs").ok().pairs().len(), 1);
    // A float is a number too: it once passed unjudged, and was given to the parser as digits.
    for line in [
        "max-filesize = \"1G\"",
        "max-line-length = \"100M\"",
        "max-filesize = 1e12",
        "max-line-length = 1e10",
    ] {
        d.create("docs/ndup.toml", format!("{line}\n"));
        let run = d.scan().arg("docs").code(2);
        assert!(
            run.stderr
                .contains("raises a size limit above its default of 64"),
            "{line}: {}",
            run.stderr
        );
    }
    for (line, why) in [
        (
            "html-max-pairs = 5000.0",
            "raises a limit above its default of 1000",
        ),
        ("max-filesize = true", "is not a size"),
        ("html-max-pairs = \"many\"", "is not a whole number"),
        // A family of copies would then make the pairs quadratic.
        (
            "max-bucket = 100000000",
            "raises a limit above its default of 1000",
        ),
    ] {
        d.create("docs/ndup.toml", format!("{line}\n"));
        let run = d.scan().arg("docs").code(2);
        assert!(run.stderr.contains(why), "{line}: {}", run.stderr);
    }
    // Lowered with a float, a limit still works.
    d.create("docs/ndup.toml", "max-filesize = 1e6\n");
    assert_eq!(d.scan().arg("docs").ok().pairs().len(), 1);
    d.create("docs/ndup.toml", "max-bucket = 50\n");
    assert_eq!(d.scan().arg("docs").ok().params()["max_bucket"], 50);
}
