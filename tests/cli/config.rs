//! Configuration files: `ndup.toml` found in the scanned root, `--config`, and their errors.
//! (What a found file may not do is in `security`.)

use super::util::{owned, planted_pages};

#[test]
fn ndup_toml_in_the_root_holds_options_and_flags_override_it() {
    let d = planted_pages();
    d.create(
        "docs/ndup.toml",
        "format = \"csv\"\nexclude = [\"old/**\"]\nfail-on-duplicates = true\n\
         [dedup]\nkeep = \"longest\"\n",
    );
    let run = d.scan().arg("docs").code(1);
    let out = &run.stdout;
    assert_eq!(
        out.lines().collect::<Vec<_>>()[..2]
            .iter()
            .map(|l| l.split(',').take(2).collect::<Vec<_>>().join(","))
            .collect::<Vec<_>>(),
        ["a,b", "docs/a copy.md,docs/a.md"]
    );
    assert_eq!(out.lines().count(), 2, "old/** is excluded: {out}");
    // Flags win: another format, another exclude list (replacing the file's).
    let run = d
        .scan()
        .args(["docs", "--format", "jsonl", "--exclude", "a*"])
        .code(1);
    eqnice!(owned(&[("docs/b.md", "docs/old/b.md")]), run.pair_ids());
    // The [dedup] table is for dedup only; top-level keys it does not know are left alone.
    d.ndup().args(["dedup", "docs", "-o", "-"]).ok();
}

/// A key both at the top level and in the command's table was given twice to the argument
/// parser, which refused it ("cannot be used multiple times").
#[test]
fn a_commands_table_overrides_the_top_level() {
    let d = planted_pages();
    d.create(
        "docs/ndup.toml",
        "threshold = 0.99\nexclude = [\"old/**\"]\n[scan]\nthreshold = 0.5\nexclude = []\n",
    );
    let run = d.scan().arg("docs").ok();
    assert_eq!(run.params()["threshold"], 0.5, "{}", run.describe());
    // The table's empty list replaces the top level's: old/ is scanned.
    assert!(
        run.pair_ids()
            .iter()
            .any(|(a, b)| a.contains("old/") || b.contains("old/")),
        "{}",
        run.describe()
    );
}

#[test]
fn config_flag_and_errors_name_the_file() {
    let d = planted_pages();
    d.create("ci.toml", "max_pairs = 1\nquiet = true\n");
    let run = d.scan().args(["docs", "--config", "ci.toml"]).code(1);
    assert_eq!(run.pairs().len(), 2);
    eqnice!("", run.stderr);
    for (text, msg) in [
        ("colour = true\n", "ci.toml: unknown option `colour`"),
        (
            "quiet = \"yes\"\n",
            "ci.toml: `quiet` must be true or false",
        ),
        ("threshold = \"high\"\n", "with the options of ci.toml"),
        ("threshold = [\n", "ci.toml:"),
        (
            "[scan]\nkeep = \"first\"\n",
            "ci.toml: [scan]: unknown option `keep`",
        ),
    ] {
        d.create("ci.toml", text);
        let run = d.scan().args(["docs", "--config", "ci.toml"]).code(2);
        eqnice!("", run.stdout, "{text}");
        assert!(run.stderr.contains(msg), "{text}: {}", run.describe());
    }
    let run = d.scan().args(["docs", "--config", "none.toml"]).code(2);
    assert!(
        run.stderr
            .contains("none.toml: cannot read the configuration"),
        "{}",
        run.describe()
    );
}
