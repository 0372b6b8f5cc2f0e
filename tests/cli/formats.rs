//! The report formats beyond JSON lines and text (CSV, SARIF, GitHub annotations) and the
//! report file, `--output`.

use serde_json::{Value, json};

use super::util::{Dir, PLANTED_PAGE_PAIRS, owned, planted_jsonl, planted_pages};
use crate::corpus::{edited, text};

#[test]
fn every_format_parses_back_to_the_same_pairs() {
    let d = planted_pages();
    let scan = |format: &str| d.scan().args(["docs", "--format", format]).ok().stdout;

    let jsonl = d.scan().args(["docs", "--format", "jsonl"]).ok();
    eqnice!(owned(&PLANTED_PAGE_PAIRS), jsonl.pair_ids());
    let types: Vec<String> = jsonl
        .records()
        .iter()
        .map(|r| r["type"].as_str().unwrap().to_string())
        .collect();
    eqnice!(vec!["params", "pair", "pair", "summary"], types);

    let csv = scan("csv");
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    assert_eq!(
        reader.headers().unwrap(),
        vec!["a", "b", "estimate", "jaccard", "a_in_b", "b_in_a"]
    );
    let rows: Vec<(String, String)> = reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            let estimate: f64 = r[2].parse().unwrap();
            assert!(estimate >= 0.8, "{r:?}");
            (r[0].to_string(), r[1].to_string())
        })
        .collect();
    eqnice!(owned(&PLANTED_PAGE_PAIRS), rows);

    let sarif: Value = serde_json::from_str(&scan("sarif")).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(sarif["runs"][0]["tool"]["driver"]["name"], "ndup");
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let located: Vec<(String, String)> = results
        .iter()
        .map(|r| {
            assert_eq!(r["ruleId"], "ndup/near-duplicate");
            assert_eq!(r["level"], "warning");
            let locs = r["locations"].as_array().unwrap();
            assert_eq!(locs.len(), 2);
            let uri = |i: usize| {
                let l = &locs[i]["physicalLocation"];
                assert_eq!(l["region"]["startLine"], 1);
                l["artifactLocation"]["uri"].as_str().unwrap().to_string()
            };
            (uri(0), uri(1))
        })
        .collect();
    eqnice!(
        owned(&[
            ("docs/a%20copy.md", "docs/a.md"),
            ("docs/b.md", "docs/old/b.md"),
        ]),
        located
    );

    let github = scan("github");
    let lines: Vec<&str> = github.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[1].starts_with(
            "::warning file=docs/b.md,line=1,title=Near-duplicate::docs/b.md is a near-duplicate of docs/old/b.md (estimate "
        ),
        "{}",
        lines[1]
    );

    // Not a terminal: never coloured, with or without NO_COLOR.
    let text = d
        .scan()
        .args(["docs", "--format", "text"])
        .env("NO_COLOR", "1")
        .ok()
        .stdout;
    assert!(
        text.starts_with("docs/a copy.md\n  ~ docs/a.md  (estimate "),
        "{text}"
    );
    assert!(!text.contains('\u{1b}'));
    let run = d
        .scan()
        .args(["docs", "--format", "text"])
        .env_remove("NO_COLOR")
        .run();
    assert!(!run.stdout.contains('\u{1b}'));
}

/// Ids are names from the files scanned: one a spreadsheet would take for a formula is written
/// after a `'` (CSV only; the other formats carry ids as they are).
#[test]
fn csv_ids_cannot_be_spreadsheet_formulas() {
    let d = Dir::new();
    let records: String = [
        json!({"id": "=HYPERLINK(\"http://x\")", "text": text(1, 120)}),
        json!({"id": "@SUM(1)", "text": edited(1, 120, 1)}),
        json!({"id": "+1", "text": text(2, 120)}),
        json!({"id": "-2", "text": edited(2, 120, 1)}),
        json!({"id": "plain=name", "text": text(3, 120)}),
        json!({"id": "\tTab", "text": edited(3, 120, 1)}),
    ]
    .iter()
    .map(|v| format!("{v}\n"))
    .collect();
    d.create("c.jsonl", records);
    let csv = d.scan().args(["c.jsonl", "--format", "csv"]).ok().stdout;
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let mut rows: Vec<(String, String)> = reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[0].to_string(), r[1].to_string())
        })
        .collect();
    rows.sort();
    eqnice!(
        owned(&[
            ("'\tTab", "plain=name"),
            ("'+1", "'-2"),
            ("'=HYPERLINK(\"http://x\")", "'@SUM(1)"),
        ]),
        rows
    );
    let clusters = d
        .scan()
        .args(["c.jsonl", "--format", "csv", "--clusters"])
        .ok()
        .stdout;
    assert!(clusters.contains(",'@SUM(1)\n"), "{clusters}");
    // JSON lines keep the ids as they are.
    let jsonl = d.scan().arg("c.jsonl").ok();
    assert!(
        jsonl.pair_ids().contains(&("+1".into(), "-2".into())),
        "{:?}",
        jsonl.pair_ids()
    );
}

/// A GitHub message shows an id's line break as the text report does (`\\n`), never as `%0A`,
/// which the runner turns back into a break of the log's line; a record read from standard
/// input is in no file of the repository, so its annotation has no `file=`.
#[test]
fn github_messages_escape_line_breaks_and_stdin_has_no_file() {
    let d = Dir::new();
    let records = format!(
        "{}\n{}\n",
        json!({"id": "new\nline", "text": text(1, 120)}),
        json!({"id": "other\rone", "text": edited(1, 120, 1)}),
    );
    d.create("c.jsonl", &records);
    let out = d.scan().args(["c.jsonl", "--format", "github"]).ok().stdout;
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with("::warning file=c.jsonl,line=1,"), "{out}");
    assert!(
        out.contains(r"::new\nline is a near-duplicate of other\rone ("),
        "{out}"
    );
    assert!(!out.contains("%0A") && !out.contains("%0D"), "{out}");
    let out = d
        .scan()
        .args(["-", "--jsonl", "--format", "github"])
        .stdin(records)
        .ok()
        .stdout;
    assert!(
        out.starts_with("::warning title=Near-duplicate::new\\nline is"),
        "{out}"
    );
}

#[test]
fn records_are_located_at_their_file_and_line() {
    let d = Dir::new();
    d.create("c.jsonl", planted_jsonl());
    let sarif = d.scan().args(["c.jsonl", "--format", "sarif"]).ok().json();
    let first = &sarif["runs"][0]["results"][0]["locations"];
    let at = |i: usize| {
        let l = &first[i]["physicalLocation"];
        (
            l["artifactLocation"]["uri"].as_str().unwrap().to_string(),
            l["region"]["startLine"].as_u64().unwrap(),
        )
    };
    // Pair (a, a2): lines 1 and 4.
    assert_eq!(
        (at(0), at(1)),
        (("c.jsonl".into(), 1), ("c.jsonl".into(), 4))
    );
    let out = d
        .scan()
        .args(["c.jsonl", "--format", "github"])
        .run()
        .stdout;
    assert!(out.starts_with("::warning file=c.jsonl,line=1,"), "{out}");
}

#[test]
fn output_file_is_written_whole_and_replaces_the_old_one() {
    let d = planted_pages();
    d.create("report.sarif", "old");
    let run = d
        .scan()
        .args(["docs", "--format", "sarif", "--output", "report.sarif"])
        .ok();
    eqnice!("", run.stdout);
    let direct = d.scan().args(["docs", "--format", "sarif"]).run().stdout;
    eqnice!(direct, d.read("report.sarif"));
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");

    let run = d.scan().args(["docs", "-o", "no/such/dir/r.json"]).code(2);
    assert!(run.stderr.contains("no/such/dir"), "{}", run.describe());
}
