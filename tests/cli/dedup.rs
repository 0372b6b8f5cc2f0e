//! `ndup dedup`: one record or file kept per cluster.

use serde_json::{Value, json};

use super::util::{Dir, gzip, planted_pages, zstd};
use crate::corpus::text;

/// Five records and a malformed line: `a`, `a-loud` (the same text in capitals: an exact copy
/// once normalized, of the same length), `b`, `a-long` (a near-duplicate of `a`, longer) and
/// `b-copy`.
fn corpus() -> (String, Vec<String>) {
    let (a, b) = (text(60, 150), text(61, 150));
    let lines = vec![
        json!({"id": "a", "text": a}).to_string(),
        json!({"id": "a-loud", "text": a.to_uppercase()}).to_string(),
        json!({"id": "b", "text": b}).to_string(),
        "{\"id\": \"broken\"".to_string(),
        json!({"id": "a-long", "text": format!("{a} and one more clause at the end")}).to_string(),
        json!({"id": "b-copy", "text": b}).to_string(),
    ];
    (lines.iter().map(|l| format!("{l}\n")).collect(), lines)
}

#[test]
fn jsonl_in_jsonl_out_keeps_one_record_per_cluster() {
    let d = Dir::new();
    let (text, lines) = corpus();
    d.create("c.jsonl", &text);
    let kept = |keep: &str| -> Vec<String> {
        let run = d
            .ndup()
            .args(["dedup", "c.jsonl", "--output", "out.jsonl", "--keep", keep])
            .ok();
        assert!(
            run.stderr.contains("ndup: c.jsonl:4: malformed JSON"),
            "{}",
            run.describe()
        );
        d.read("out.jsonl").lines().map(String::from).collect()
    };
    // Records are written byte for byte, in input order.
    eqnice!(vec![lines[0].clone(), lines[2].clone()], kept("first"));
    eqnice!(vec![lines[2].clone(), lines[4].clone()], kept("longest"));
    // a and a-loud have the same length; "a" < "a-loud" breaks the tie. b and b-copy too.
    eqnice!(vec![lines[0].clone(), lines[2].clone()], kept("shortest"));
    let run = d.ndup().args(["dedup", "c.jsonl", "-o", "out.jsonl"]).run();
    assert!(
        run.stderr
            .contains("5 documents, kept 2, dropped 3 (2 exact, 1 near duplicates), 1 skipped"),
        "{}",
        run.describe()
    );
}

/// dedup shares scan's candidate flags: explicit banding and the tuner's weights shape the
/// LSH stage (recorded nowhere in the kept records, so the result is what is checked) and
/// the same near-duplicate is dropped.
#[test]
fn banding_and_tuner_weights_apply_to_dedup() {
    let d = Dir::new();
    let (text, lines) = corpus();
    d.create("c.jsonl", &text);
    let want = format!("{}\n{}\n", lines[0], lines[2]);
    for flags in [
        &["--bands", "16", "--rows", "8"][..],
        &["--fp-weight", "5", "--fn-weight", "50"][..],
        &["--max-bucket", "2", "--verify", "exact"][..],
    ] {
        let run = d
            .ndup()
            .args(["dedup", "c.jsonl", "-o", "-", "-q"])
            .args(flags)
            .ok();
        eqnice!(want, run.stdout, "{flags:?}");
    }
    let run = d
        .ndup()
        .args(["dedup", "c.jsonl", "-o", "-", "--fp-weight=-1"])
        .code(2);
    assert!(run.stderr.contains("weight"), "{}", run.describe());
}

#[test]
fn compressed_input_stdin_and_compressed_output() {
    let d = Dir::new();
    let (text, lines) = corpus();
    d.create("c.jsonl.zst", zstd(text.as_bytes()));
    let want = format!("{}\n{}\n", lines[0], lines[2]);
    let run = d.ndup().args(["dedup", "c.jsonl.zst", "-o", "-"]).ok();
    eqnice!(want, run.stdout);
    let run = d
        .ndup()
        .args(["dedup", "-", "-o", "out.jsonl.gz", "-q"])
        .stdin(gzip(text.as_bytes()))
        .ok();
    eqnice!("", run.stderr);
    let gz = std::fs::read(d.path().join("out.jsonl.gz")).unwrap();
    let mut plain = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gz[..]), &mut plain).unwrap();
    eqnice!(want, plain);
}

#[test]
fn a_file_tree_gives_the_files_to_keep_and_to_drop() {
    let d = planted_pages();
    d.create("docs/z.md", d.read("docs/a.md").to_uppercase());
    let run = d
        .ndup()
        .args(["dedup", "docs", "-o", "-", "--keep", "longest"])
        .ok();
    let list: Vec<Value> = run.records();
    // The keeper of a cluster: the longest text, ties to the smaller id.
    let keeper_of = |ids: &[&'static str]| -> &'static str {
        let len = |p: &str| d.read(p).chars().count();
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
    let d = Dir::new();
    let (text, _) = corpus();
    d.create("c.jsonl", &text);
    let run = d
        .ndup()
        .args(["dedup", "c.jsonl", "-o", "./c.jsonl"])
        .code(2);
    assert!(
        run.stderr.contains("would overwrite the input"),
        "{}",
        run.describe()
    );
    eqnice!(text, d.read("c.jsonl"));
}
