//! Walking a tree: ignore files, hidden files, globs and excludes, the size limit, and lists of
//! files to read instead of a walk.

use super::util::{Dir, owned};
use crate::corpus::{edited, text};

/// Copies of one text in every kind of place the walker treats differently.
fn copies() -> Dir {
    let d = Dir::new();
    let a = text(30, 150);
    d.create("docs/.gitignore", "build/\n");
    d.create("docs/a.md", &a);
    d.create("docs/b.txt", edited(30, 150, 1));
    d.create("docs/build/a.md", &a);
    d.create("docs/.drafts/a.md", &a);
    d.create("docs/big.md", format!("{a}\n{}", text(31, 400)));
    d
}

fn members(d: &Dir, extra: &[&str]) -> Vec<String> {
    let run = d
        .scan()
        .args(["docs", "--clusters", "--threshold", "0.5"])
        .args(extra)
        .ok();
    run.clusters().into_iter().flatten().collect()
}

#[test]
fn ignore_rules_hidden_files_globs_and_sizes() {
    let d = copies();
    let (a, b, build, drafts) = (
        "docs/a.md",
        "docs/b.txt",
        "docs/build/a.md",
        "docs/.drafts/a.md",
    );
    eqnice!(vec![a, b], members(&d, &[]));
    eqnice!(vec![drafts, a, b], members(&d, &["--hidden"]));
    eqnice!(vec![a, b, build], members(&d, &["--no-ignore"]));
    eqnice!(
        vec![drafts, a, build],
        members(&d, &["--no-ignore", "--hidden", "--glob", "*.md"])
    );
    eqnice!(
        vec![a, b],
        members(&d, &["--no-ignore", "--exclude", "build/**"])
    );
    let run = d.scan().args(["docs", "--max-filesize", "2K"]).ok();
    let recs = run.records();
    let skip = recs.iter().find(|r| r["type"] == "skip").unwrap();
    assert_eq!(
        (skip["id"].as_str(), skip["reason_kind"].as_str()),
        (Some("docs/big.md"), Some("too-large"))
    );
    assert_eq!(recs.last().unwrap()["skipped_too_large"], 1);
    let run = d.scan().args(["docs", "--max-filesize", "lots"]).code(2);
    assert!(
        run.stderr.contains("`lots` is not a size"),
        "{}",
        run.describe()
    );
}

#[test]
fn files_from_a_list_or_standard_input() {
    let d = copies();
    // Listed paths are read as given, hidden or ignored; a missing one is reported.
    d.create(
        "list.txt",
        "docs/a.md\ndocs/.drafts/a.md\ndocs/build/a.md\ndocs/gone.md\n",
    );
    let run = d
        .scan()
        .args(["--files-from", "list.txt", "--clusters"])
        .ok();
    eqnice!(
        vec![vec!["docs/.drafts/a.md", "docs/a.md", "docs/build/a.md"]],
        run.clusters()
    );
    assert!(
        run.stderr
            .contains("ndup: docs/gone.md: No such file or directory"),
        "{}",
        run.describe()
    );

    let run = d
        .scan()
        .args(["--files-from", "-", "-0", "--exclude", "docs/build/**"])
        .stdin(&b"docs/a.md\0docs/b.txt\0docs/build/a.md\0"[..])
        .ok();
    eqnice!(owned(&[("docs/a.md", "docs/b.txt")]), run.pair_ids());
    assert_eq!(run.records().last().unwrap()["documents"], 2);
}
