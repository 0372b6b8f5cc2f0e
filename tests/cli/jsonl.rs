//! JSON-lines input: plain, compressed and on standard input; nested fields, ids and line
//! numbers; malformed lines.

use serde_json::json;

use super::util::{Dir, gzip, owned, planted_jsonl, zstd};
use crate::corpus::{edited, text};

#[test]
fn plain_gzip_zstd_and_stdin_find_the_same_pairs() {
    let d = Dir::new();
    let corpus = planted_jsonl();
    d.create("c.jsonl", &corpus);
    d.create("c.jsonl.gz", gzip(corpus.as_bytes()));
    d.create("c.ndjson.zst", zstd(corpus.as_bytes()));
    // A compressed file is recognised by its magic bytes, whatever its name, with --jsonl.
    d.create("corpus.bin", zstd(corpus.as_bytes()));
    let want = owned(&[("a", "a2"), ("b", "b2")]);
    let mut reports = Vec::new();
    for args in [
        &["c.jsonl"][..],
        &["c.jsonl.gz"],
        &["c.ndjson.zst"],
        &["corpus.bin", "--jsonl"],
    ] {
        let run = d.scan().args(args).ok();
        eqnice!(want, run.pair_ids(), "{args:?}");
        reports.push(run.stdout);
    }
    for input in [corpus.as_bytes().to_vec(), gzip(corpus.as_bytes())] {
        reports.push(d.scan().arg("-").stdin(input).ok().stdout);
    }
    // The reports are byte-identical whatever the form of the input.
    assert!(reports.iter().all(|r| *r == reports[0]));
    let summary = super::util::parse_jsonl(&reports[0]).pop().unwrap();
    assert_eq!(summary["documents"], 5);
}

#[test]
fn exact_verification_reads_records_again_from_every_form() {
    let d = Dir::new();
    let corpus = planted_jsonl();
    d.create("c.jsonl", &corpus);
    d.create("c.jsonl.gz", gzip(corpus.as_bytes()));
    d.create("c.jsonl.zst", zstd(corpus.as_bytes()));
    let jaccards = |run: &super::util::Run| -> Vec<f64> {
        run.pairs()
            .iter()
            .map(|p| p.jaccard.expect("jaccard computed"))
            .collect()
    };
    let plain = d.scan().args(["c.jsonl", "--verify", "exact"]).run();
    let j = jaccards(&plain);
    assert_eq!(j.len(), 2);
    assert!(j.iter().all(|&x| x > 0.8 && x < 1.0), "{j:?}");
    for name in ["c.jsonl.gz", "c.jsonl.zst"] {
        let run = d.scan().args([name, "--verify", "exact"]).ok();
        eqnice!(j, jaccards(&run), "{name}");
    }
    let run = d
        .scan()
        .args(["-", "--verify", "exact"])
        .stdin(zstd(corpus.as_bytes()))
        .ok();
    eqnice!(j, jaccards(&run));
}

#[test]
fn nested_fields_numeric_ids_and_line_numbers() {
    let d = Dir::new();
    let lines = [
        json!({"meta": {"key": 17}, "body": {"text": text(10, 100)}}),
        json!({"meta": {}, "body": {"text": text(11, 100)}}),
        json!({"meta": {"key": "x-1"}, "body": {"text": edited(10, 100, 1)}}),
        json!({"body": {"text": edited(11, 100, 1)}}),
    ];
    let corpus: String = lines.iter().map(|v| format!("{v}\n")).collect();
    d.create("n.ndjson", &corpus);
    let run = d
        .scan()
        .args([
            "n.ndjson",
            "--id-field",
            "meta.key",
            "--text-field",
            "body.text",
        ])
        .ok();
    // Record 2 and 4 have no key: they are named by their line numbers.
    eqnice!(owned(&[("17", "x-1"), ("2", "4")]), run.pair_ids());

    // Two sources: the line-number ids say which file they come from.
    d.create("m.ndjson", &corpus);
    let run = d
        .scan()
        .args(["n.ndjson", "m.ndjson", "--id-field", "nope"])
        .args(["--text-field", "body.text", "--threshold", "0.99"])
        .ok();
    eqnice!(
        owned(&[
            ("m.ndjson:1", "n.ndjson:1"),
            ("m.ndjson:2", "n.ndjson:2"),
            ("m.ndjson:3", "n.ndjson:3"),
            ("m.ndjson:4", "n.ndjson:4"),
        ]),
        run.pair_ids()
    );
}

#[test]
fn malformed_lines_are_reported_with_file_and_line_and_skipped() {
    let d = Dir::new();
    let corpus = format!(
        "{}\n{{\"id\": \"broken\", \"text\": \n{}\n\n{}\n{}\n{}\n",
        json!({"id": "a", "text": text(20, 100)}),
        json!({"id": "n", "text": 5}),
        json!({"id": "a", "text": "the same id again"}),
        json!({"id": "x", "body": "no text field"}),
        json!({"id": "a2", "text": edited(20, 100, 1)}),
    );
    d.create("bad.jsonl", corpus);
    let run = d.scan().arg("bad.jsonl").ok();
    eqnice!(owned(&[("a", "a2")]), run.pair_ids());
    let skips = run.skips();
    assert!(
        skips.iter().all(|(_, kind, _)| kind == "malformed"),
        "{skips:?}"
    );
    let ids: Vec<&str> = skips.iter().map(|(i, _, _)| i.as_str()).collect();
    // Line 4 is blank: not a record. Ids sort as strings.
    eqnice!(
        vec!["bad.jsonl:2", "bad.jsonl:3", "bad.jsonl:5", "bad.jsonl:6"],
        ids
    );
    assert!(
        skips[0].2.starts_with("malformed JSON at column"),
        "{skips:?}"
    );
    assert_eq!(skips[1].2, "field `text` is a number, not a string");
    assert_eq!(skips[2].2, "duplicate id `a` (an earlier record has it)");
    assert_eq!(skips[3].2, "no field `text`");
    let err = &run.stderr;
    assert!(
        err.contains("ndup: bad.jsonl:2: malformed JSON at column"),
        "{err}"
    );
    assert!(err.contains("ndup: bad.jsonl:6: no field `text`"), "{err}");
    assert!(err.contains("4 skipped (4 malformed)"), "{err}");
    let summary = run.summary();
    assert_eq!(
        (&summary["documents"], &summary["skipped_malformed"]),
        (&json!(2), &json!(4))
    );
}

#[test]
fn usage_errors_exit_2() {
    let d = Dir::new();
    d.create("c.jsonl", planted_jsonl());
    d.create("docs/a.txt", "a");
    for (args, msg) in [
        (
            &["c.jsonl", "docs"][..],
            "c.jsonl is read as JSON lines but docs is not",
        ),
        (&["missing.jsonl"], "missing.jsonl: no such file"),
        (&["docs", "--jsonl"], "docs: is a directory"),
        (&["-", "-"], "standard input can be read only once"),
        (&["c.jsonl", "--text-field", "a..b"], "--text-field"),
    ] {
        let run = d.scan().args(args).code(2);
        eqnice!("", run.stdout, "{args:?}");
        assert!(run.stderr.contains(msg), "{args:?}: {}", run.describe());
    }
    // Only malformed lines: nothing to compare.
    d.create("junk.jsonl", "nope\n");
    let run = d.scan().arg("junk.jsonl").code(2);
    assert!(
        run.stderr.contains("junk.jsonl:1: malformed JSON"),
        "{}",
        run.describe()
    );
}

/// A JSON-lines file given twice was read twice: each record paired with itself, or skipped
/// as a duplicate of its own id.
#[test]
fn a_file_given_twice_is_read_once() {
    let d = Dir::new();
    let lines: String = [text(1, 200), text(2, 200)]
        .iter()
        .enumerate()
        .map(|(i, t)| serde_json::json!({"id": format!("r{i}"), "text": t}).to_string() + "\n")
        .collect();
    d.create("x.jsonl", &lines);
    let run = d.scan().args(["x.jsonl", "./x.jsonl"]).ok();
    assert!(run.pairs().is_empty(), "{}", run.describe());
    assert!(run.skips().is_empty(), "{}", run.describe());
    assert_eq!(run.count("documents"), 2);
}
