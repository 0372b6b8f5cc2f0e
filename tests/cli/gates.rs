//! CI gates and accepted pairs: exit codes after the whole report, `--max-pairs`, baselines,
//! `.ndupignore` and ignore markers.

use serde_json::{Value, json};

use super::util::{Dir, owned, parse_jsonl, planted_jsonl, planted_pages};
use crate::corpus::{edited, text};

#[test]
fn exit_codes_come_after_the_whole_report() {
    let d = planted_pages();
    for (args, code) in [
        (&["--fail-on-duplicates"][..], 1),
        (&["--max-pairs", "2"], 0),
        (&["--max-pairs", "1"], 1),
        (&["--max-pairs", "2", "--fail-on-duplicates"], 1),
        (&["--clusters", "--max-pairs", "1"], 1),
        (&[], 0),
    ] {
        let run = d.scan().arg("docs").args(args).code(code);
        assert_eq!(run.summary()["pairs"], 2, "{args:?}");
    }
    // A failing gate still writes the report file.
    d.scan()
        .args(["docs", "--fail-on-duplicates", "-o", "r.jsonl"])
        .code(1);
    let written = parse_jsonl(&d.read("r.jsonl"));
    assert_eq!(written.iter().filter(|r| r["type"] == "pair").count(), 2);
    d.scan().args(["docs", "--max-pairs", "-1"]).code(2);
}

#[test]
fn a_baseline_hides_accepted_pairs_and_fails_only_on_new_ones() {
    let d = planted_pages();
    let run = d
        .scan()
        .args(["docs", "--write-baseline", "ndup-baseline.json"])
        .ok();
    assert_eq!(run.pairs().len(), 2);
    let file: Value = serde_json::from_str(&d.read("ndup-baseline.json")).unwrap();
    assert_eq!(file["type"], "ndup-baseline");
    assert_eq!(
        file["pairs"],
        json!([
            ["docs/a copy.md", "docs/a.md"],
            ["docs/b.md", "docs/old/b.md"]
        ])
    );

    let gate = [
        "docs",
        "--baseline",
        "ndup-baseline.json",
        "--fail-on-duplicates",
    ];
    let run = d.scan().args(gate).ok();
    assert!(run.pairs().is_empty());
    assert_eq!(run.summary()["baseline_pairs"], 2);
    assert!(
        run.stderr
            .contains("0 pairs (and 2 accepted: 2 by baseline)"),
        "{}",
        run.describe()
    );

    // A new near-duplicate: only it is reported, and the gate fails.
    d.create("docs/c2.md", edited(42, 150, 1));
    let run = d.scan().args(gate).code(1);
    eqnice!(owned(&[("docs/c.md", "docs/c2.md")]), run.pair_ids());

    d.create("bad.json", "{}");
    let run = d.scan().args(["docs", "--baseline", "bad.json"]).code(2);
    eqnice!("", run.stdout);
    assert!(
        run.stderr.contains("bad.json: not an ndup baseline"),
        "{}",
        run.describe()
    );
}

#[test]
fn ndupignore_accepts_glob_pairs_in_either_order() {
    let d = planted_pages();
    d.create(
        "docs/.ndupignore",
        "# old copies are kept on purpose\nold/**   *.md\n",
    );
    let run = d.scan().args(["docs", "--fail-on-duplicates"]).code(1);
    eqnice!(owned(&[("docs/a copy.md", "docs/a.md")]), run.pair_ids());
    assert_eq!(run.summary()["ignored_pairs"], 1);

    // For JSON lines, the root is the current directory and globs match record ids.
    d.create("c.jsonl", planted_jsonl());
    d.create(".ndupignore", "b b?\n");
    let run = d.scan().arg("c.jsonl").ok();
    eqnice!(owned(&[("a", "a2")]), run.pair_ids());

    d.create("docs/.ndupignore", "just-one-glob\n");
    let run = d.scan().arg("docs").code(2);
    assert!(
        run.stderr
            .contains("docs/.ndupignore: line 1: expected two globs"),
        "{}",
        run.describe()
    );
}

#[test]
fn ignore_markers_leave_a_region_out() {
    let d = Dir::new();
    let shared = text(50, 60);
    let with = |seed: u64, start: &str, end: &str| {
        format!(
            "{shared}\n<!-- {start} -->\n{}\n<!-- {end} -->\n",
            text(seed, 300)
        )
    };
    d.create("m/a.md", with(51, "ndup:ignore-start", "ndup:ignore-end"));
    d.create("m/b.md", with(52, "ndup:ignore-start", "ndup:ignore-end"));
    d.create("u/a.md", with(51, "generated", "end"));
    d.create("u/b.md", with(52, "generated", "end"));
    let run = d.scan().args(["m", "--verify", "exact"]).run();
    let recs = run.records();
    let pair = recs.iter().find(|r| r["type"] == "pair").unwrap();
    // Only the shared text is compared: an exact copy.
    assert_eq!(
        (&pair["estimate"], &pair["jaccard"]),
        (&json!(1.0), &json!(1.0))
    );
    let run = d.scan().arg("u").run();
    assert!(run.pairs().is_empty());
}
