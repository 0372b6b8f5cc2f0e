//! Exit statuses: usage errors, `--fail-on-duplicates`, and a closed stdout.

use std::io::{BufRead, BufReader};

use super::util::{Dir, PLANTED_PAIRS, planted, wait_ok};
use crate::corpus::text;

/// Runs a scan that must be refused as a usage error: exit 2, nothing on stdout, and one
/// stderr line mentioning `needle`.
fn usage_error(args: &[&str], needle: &str) {
    let d = planted();
    let run = d.scan().args(args).code(2);
    eqnice!("", run.stdout, "{args:?}");
    assert!(
        run.stderr.contains(needle),
        "expected {needle:?} on stderr\n{}",
        run.describe()
    );
}

#[test]
fn a_threshold_outside_0_1_is_a_usage_error() {
    usage_error(&["docs", "--threshold", "1.5"], "--threshold");
    usage_error(&["docs", "-t", "1.5"], "1.5");
    usage_error(&["docs", "--threshold", "NaN"], "--threshold");
    usage_error(&["docs", "--threshold", "high"], "high");
}

#[test]
fn contradictory_banding_is_a_usage_error() {
    let d = planted();
    let run = d
        .scan()
        .args(["docs", "--bands", "16", "--rows", "16", "--num-perm", "128"])
        .code(2);
    eqnice!("", run.stdout);
    eqnice!(
        vec!["ndup: --bands 16 x --rows 16 = 256 but --num-perm is 128"],
        run.stderr_lines()
    );
    // Fewer banded slots than slots is no contradiction: the tuner's own choice at 0.8 is
    // 18 x 7 of 128, and a run's `params` record given back as flags reproduces the run.
    let tuned = d.scan().arg("docs").ok();
    let replayed = d
        .scan()
        .args(["docs", "--bands", "18", "--rows", "7", "--num-perm", "128"])
        .ok();
    eqnice!(tuned.stdout, replayed.stdout);
    usage_error(
        &["docs", "--num-perm", "64", "--bands", "100"],
        "--bands 100",
    );
    usage_error(&["docs", "--num-perm", "0"], "--num-perm");
    usage_error(&["docs", "--rows", "0"], "--rows");
}

#[test]
fn unknown_flags_and_missing_paths_are_usage_errors() {
    usage_error(&["docs", "--bogus"], "--bogus");
    usage_error(&[], "PATH");
    usage_error(&["docs", "--sketch", "bloom"], "bloom");
    usage_error(&["docs", "--verify", "maybe"], "maybe");
    usage_error(&["docs", "--format", "xml"], "xml");
    usage_error(&["docs", "--shingle", "line"], "line");
}

#[test]
fn out_of_range_sizes_are_usage_errors() {
    usage_error(&["docs", "-k", "0"], "at least 1");
    usage_error(&["docs", "--shingle", "word", "-w", "0"], "at least 1");
    usage_error(&["docs", "--max-bucket", "1"], "--max-bucket");
}

#[test]
fn fail_on_duplicates_exits_1_after_writing_the_full_report() {
    let d = planted();
    let run = d.scan().args(["docs", "--fail-on-duplicates"]).code(1);
    // The whole report: params first, the pairs, the skip, the summary last.
    run.params();
    assert_eq!(run.pairs().len(), PLANTED_PAIRS.len());
    assert_eq!(run.skips().len(), 1);
    assert_eq!(run.count("pairs"), 3);
    assert!(run.stderr.contains("3 pairs"), "{}", run.describe());

    // The same with clusters: one cluster is something reported.
    let run = d
        .scan()
        .args(["docs", "--fail-on-duplicates", "--clusters"])
        .code(1);
    assert_eq!(run.clusters().len(), 1);

    // And in text.
    let run = d
        .scan()
        .args(["docs", "--fail-on-duplicates", "--format", "text"])
        .code(1);
    assert!(
        run.stdout.contains("docs/sub/copy.txt"),
        "{}",
        run.describe()
    );
}

#[test]
fn fail_on_duplicates_exits_0_when_nothing_is_found() {
    let d = planted();
    let run = d
        .scan()
        .args([
            "docs/original.txt",
            "docs/unrelated-1.txt",
            "--fail-on-duplicates",
        ])
        .ok();
    assert!(run.pairs().is_empty());
    run.params();
    assert_eq!(run.count("documents"), 2);
    // Without the flag, duplicates are a success.
    d.scan().arg("docs").ok();
}

#[test]
fn a_closed_stdout_is_not_an_error() {
    // 120 copies: 7,140 pair lines, far more than a pipe buffer holds, so ndup is still writing
    // when the reader goes away.
    let d = Dir::new();
    let body = text(8, 40);
    for i in 0..120 {
        d.create(&format!("copies/copy-with-a-long-name-{i:03}.txt"), &body);
    }
    let mut child = d.scan().arg("copies").spawn();
    let stdout = child.stdout.take().unwrap();
    let mut first = String::new();
    BufReader::new(stdout).read_line(&mut first).unwrap();
    // The reader (and with it the pipe) is dropped here.
    assert!(first.contains("\"type\":\"params\""), "{first}");
    eqnice!("", wait_ok(&mut child));
}
