//! Fuzzing (issue 24): generated JSON lines, configuration files, `.ndupignore` files, damaged
//! indexes and hostile file names, given to the real binary. Whatever the input, every run must:
//!
//! - exit 0, 1 or 2: no panic, no abort, no signal, no hang (each run has a timeout);
//! - stay under 1 GiB of address space (`RLIMIT_AS`), so memory that grows without bound is an
//!   allocation failure, which aborts, which the exit status catches;
//! - say why on exit 2, on a last line of stderr that starts with `ndup: ` (or, for a bad value
//!   in a configuration file, name the file before clap's own message);
//! - keep stderr free of control characters other than the line break (names are escaped);
//! - write well-formed reports on exit 0 or 1: JSON lines that parse line by line, SARIF that
//!   parses, CSV with one field count, GitHub workflow commands, text without control characters.
//!
//! Some properties add what the input allows to check: `dedup` writes only input records, in
//! input order, and the same ones whether the input is gzip'd or not; `.ndupignore` only ever
//! removes pairs; a file name never makes a file disappear from a scan.
//!
//! Each property has a fixed number of cases and a fixed seed, so a CI run is reproducible and
//! short (a few seconds each), and nothing is persisted (no regression files). A failure prints
//! the shrunk input (byte strings as `b"..."`) and the whole run.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fmt;
use std::fs;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use proptest::test_runner::{Config, RngSeed};
use serde_json::Value;

use super::util::{
    Dir, RawRun, TestCommand, gzip, long_options, planted_jsonl, planted_pages, zstd,
};
use crate::corpus::{edited, text};

/// The address space each run of `ndup` may use.
const MEMORY: u64 = 1 << 30;

/// Seconds each run of `ndup` may take (the slowest inputs here take well under one).
const TIMEOUT: u64 = 30;

/// The configuration of every property: `cases` cases from a fixed seed, no regression files,
/// and a bounded shrink, so a failure in CI reports in minutes, not hours. For a deeper search
/// by hand, `NDUP_FUZZ_SCALE=N` runs N times the cases and `NDUP_FUZZ_SEED=S` starts from
/// another seed (a number).
fn config(cases: u32) -> Config {
    let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    let scale = var("NDUP_FUZZ_SCALE").unwrap_or(1).clamp(1, 1000) as u32;
    Config {
        cases: cases * scale,
        rng_seed: RngSeed::Fixed(var("NDUP_FUZZ_SEED").unwrap_or(24)),
        failure_persistence: None,
        max_shrink_time: 120_000,
        ..Config::default()
    }
}

/// Bytes, shown as a byte string literal in failure messages.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Bytes(Vec<u8>);

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "b\"{}\"", self.0.escape_ascii())
    }
}

fn bytes(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

/// `s` as a JSON string (and so as a TOML basic string).
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// What a run's standard output must be when it exits 0 or 1.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Out {
    /// JSON lines, each an object with a `type`; with `report`, `params` first and `summary`
    /// last (`scan`, `query`).
    Jsonl { report: bool },
    /// One SARIF document.
    Sarif,
    /// CSV rows of one length.
    Csv,
    /// GitHub workflow commands.
    Github,
    /// Text without control characters but the line break.
    Text,
    /// Whichever of the above the output looks like (a configuration file chose the format).
    Sniff,
    /// Not checked (the output is not standard output).
    Unchecked,
}

impl Out {
    fn of_format(format: &str) -> Out {
        match format {
            "jsonl" => Out::Jsonl { report: true },
            "sarif" => Out::Sarif,
            "csv" => Out::Csv,
            "github" => Out::Github,
            "text" => Out::Text,
            other => panic!("no format {other}"),
        }
    }
}

/// Runs `cmd` under the memory limit and timeout, with two worker threads whatever the machine
/// (so the address space needed does not grow with the number of cores), and checks what every
/// run must do.
fn fuzz_run(cmd: &mut TestCommand, out: Out) -> Result<RawRun, TestCaseError> {
    let run = cmd
        .env("RAYON_NUM_THREADS", "2")
        .timeout(TIMEOUT)
        .run_limited(MEMORY);
    verdict(&run, out)
        .map_err(|why| TestCaseError::fail(format!("{why}\n{}", run.describe(3000))))?;
    Ok(run)
}

/// A failed check, for `verdict` and the output checks.
fn fail<T>(why: impl Into<String>) -> Result<T, String> {
    Err(why.into())
}

fn verdict(run: &RawRun, out: Out) -> Result<(), String> {
    if run.timed_out {
        return fail(format!("hang: killed after {TIMEOUT} s"));
    }
    let code = match run.status.code() {
        Some(c @ 0..=2) => c,
        _ => return fail(format!("exit status {} (not 0, 1 or 2)", run.status)),
    };
    let Ok(stderr) = std::str::from_utf8(&run.stderr) else {
        return fail("stderr is not UTF-8");
    };
    if stderr.contains("panicked at") || stderr.contains("RUST_BACKTRACE") {
        return fail("panic");
    }
    // A configuration file's value clap refuses: named by ndup, explained by clap.
    let clap = code == 2
        && stderr.starts_with("ndup: with the options of ")
        && stderr.contains("\nerror: ");
    // clap's message quotes a refused value as it is. A configuration found in the scanned tree
    // never gets there with a control character (ndup refuses the value first); one named with
    // --config is trusted as the command line is, so clap's messages are left out here.
    if let Some(c) = stderr
        .chars()
        .find(|&c| !clap && c.is_control() && c != '\n')
    {
        return fail(format!("control character {c:?} on stderr"));
    }
    if code == 2 {
        let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
        let ours = last.is_some_and(|l| l.starts_with("ndup: "));
        if !ours && !clap {
            return fail("exit 2 without an error line `ndup: ...` last on stderr");
        }
        return Ok(());
    }
    check_output(&run.stdout, out)
}

fn utf8(b: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(b).map_err(|e| format!("stdout is not UTF-8 ({e})"))
}

fn no_controls(s: &str) -> Result<(), String> {
    match s.chars().find(|&c| c.is_control() && c != '\n') {
        Some(c) => fail(format!("control character {c:?} in the report")),
        None => Ok(()),
    }
}

/// Checks a report (`stdout`, or a file written with `-o`) against its format.
fn check_output(stdout: &[u8], out: Out) -> Result<(), String> {
    match out {
        Out::Unchecked => Ok(()),
        Out::Jsonl { report } => {
            let types = jsonl_types(utf8(stdout)?)?;
            if report {
                if types.first().is_none_or(|t| t != "params") {
                    return fail("the first record is not params");
                }
                if types.last().unwrap() != "summary" {
                    return fail("the last record is not the summary");
                }
            }
            Ok(())
        }
        Out::Sarif => {
            let v: Value = serde_json::from_str(utf8(stdout)?)
                .map_err(|e| format!("SARIF does not parse: {e}"))?;
            if v["version"] != "2.1.0" {
                return fail("SARIF without version 2.1.0");
            }
            Ok(())
        }
        Out::Csv => {
            utf8(stdout)?;
            let mut r = csv::ReaderBuilder::new()
                .has_headers(false)
                .from_reader(stdout);
            for row in r.byte_records() {
                row.map_err(|e| format!("CSV does not parse: {e}"))?;
            }
            Ok(())
        }
        Out::Github => {
            let s = utf8(stdout)?;
            no_controls(s)?;
            match s
                .lines()
                .find(|l| !(l.starts_with("::warning ") || l.starts_with("::notice ")))
            {
                Some(l) => fail(format!("not a workflow command: {l:?}")),
                None => Ok(()),
            }
        }
        Out::Text => no_controls(utf8(stdout)?),
        Out::Sniff => {
            let s = utf8(stdout)?;
            if s.starts_with('{') {
                // JSON lines, or one SARIF document (pretty-printed).
                if s.lines().next().is_some_and(|l| l.trim() == "{") {
                    check_output(stdout, Out::Sarif)
                } else {
                    jsonl_types(s).map(drop)
                }
            } else if s.starts_with("::") {
                check_output(stdout, Out::Github)
            } else if s.starts_with("a,b,") || s.starts_with("cluster,") {
                check_output(stdout, Out::Csv)
            } else {
                no_controls(s)
            }
        }
    }
}

/// The `type` of each line, each a JSON object.
fn jsonl_types(s: &str) -> Result<Vec<String>, String> {
    s.lines()
        .map(|l| {
            let v: Value =
                serde_json::from_str(l).map_err(|e| format!("a line is not JSON ({e}): {l}"))?;
            match v["type"].as_str() {
                Some(t) => Ok(t.to_string()),
                None => fail(format!("a record without a type: {l}")),
            }
        })
        .collect()
}

/// The summary record of JSON-lines output.
fn summary(stdout: &[u8]) -> Value {
    let s = std::str::from_utf8(stdout).unwrap();
    serde_json::from_str(s.lines().last().unwrap()).unwrap()
}

fn count(summary: &Value, field: &str) -> u64 {
    summary[field]
        .as_u64()
        .unwrap_or_else(|| panic!("no count {field} in {summary}"))
}

// ---------------------------------------------------------------------------------------------
// JSON lines

/// A JSON value for an id: a few strings and numbers that repeat (duplicate ids), and odd ones.
fn json_id() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => select(vec!["\"a\"", "\"b\"", "\"c\"", "1", "2", "\"1\""]).prop_map(String::from),
        1 => any::<i64>().prop_map(|i| i.to_string()),
        1 => any::<f64>().prop_map(|f| serde_json::to_string(&f).unwrap()),
        3 => select(vec![
            "18446744073709551616",
            "-9223372036854775809",
            "123456789012345678901234567890",
            "1e400",
            "-1e-400",
            "1.0",
            "-0",
            "0.1",
            "1E2",
            "null",
            "true",
            "[]",
            "[1,\"a\"]",
            "{}",
            "{\"a\":{\"b\":[1,2,{}]}}",
            "\"\"",
            "\"\\u0000\"",
            "\"\\ud800\"",
            "\"\\udc00\\ud800\"",
            "\"a\\nb\"",
            "\"\\u001b[31mred\"",
            "\"\\u202egnp.exe\"",
            "\"../../etc/passwd\"",
            "\"a,b\"",
            "\"%0A::warning\"",
        ])
        .prop_map(String::from),
        1 => any::<String>().prop_map(|s| quoted(&s)),
        1 => (1usize..3000).prop_map(|d| format!("{}{}", "[".repeat(d), "]".repeat(d))),
    ]
}

/// A JSON value for a text: generated prose and edited copies of it (so there are pairs), and
/// odd values.
fn json_text() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (0u64..3, select(vec![3usize, 40, 150]), 0usize..3).prop_map(|(seed, n, e)| {
            quoted(&if e == 0 { text(seed, n) } else { edited(seed, n, e) })
        }),
        1 => any::<String>().prop_map(|s| quoted(&s)),
        2 => select(vec![
            "\"\"",
            "\"   \"",
            "null",
            "1",
            "true",
            "[\"a\"]",
            "{\"t\":\"x\"}",
            "\"\\u0000\\u0000\"",
            "\"\\ud800 lone surrogate\"",
            "\"ndup:ignore-start\\nhidden text without an end\"",
            "\"ndup:ignore-end\\nend without a start ndup:ignore-start\"",
        ])
        .prop_map(String::from),
        // A long text: 16 KiB to 1 MiB of prose.
        1 => (14u32..=20, 0u64..3).prop_map(|(bits, seed)| {
            let t = text(seed, 150);
            quoted(&t.repeat((1usize << bits) / t.len() + 1))
        }),
    ]
}

/// A record: an object with or without its id and text, a second id, a nested `meta`, in
/// either order.
fn record() -> impl Strategy<Value = Vec<u8>> {
    (
        option::weighted(0.9, json_id()),
        option::weighted(0.9, json_text()),
        option::weighted(0.1, json_id()),
        option::weighted(0.2, (json_id(), json_text())),
        any::<bool>(),
    )
        .prop_map(|(id, text, second_id, meta, reverse)| {
            let mut fields = Vec::new();
            if let Some(i) = id {
                fields.push(format!("\"id\":{i}"));
            }
            if let Some(t) = text {
                fields.push(format!("\"text\":{t}"));
            }
            if let Some(i) = second_id {
                fields.push(format!("\"id\":{i}"));
            }
            if let Some((i, t)) = meta {
                fields.push(format!("\"meta\":{{\"id\":{i},\"text\":{t}}}"));
            }
            if reverse {
                fields.reverse();
            }
            format!("{{{}}}", fields.join(",")).into_bytes()
        })
}

/// One line of a JSON-lines file, mostly records, some of them damaged.
fn jsonl_line() -> impl Strategy<Value = Vec<u8>> {
    let insert = select(vec![
        bytes("\u{feff}"),
        b"\xff".to_vec(),
        b"\xc3\x28".to_vec(),
        b"\xed\xa0\x80".to_vec(),
        b"\xf4\x90\x80\x80".to_vec(),
        b"\0".to_vec(),
        b"\r".to_vec(),
        b"\x1b[2J".to_vec(),
    ]);
    prop_oneof![
        10 => record(),
        // Truncated.
        2 => (record(), any::<Index>()).prop_map(|(r, at)| r[..at.index(r.len() + 1)].to_vec()),
        // Invalid UTF-8, a NUL, a BOM or a carriage return anywhere in a record.
        2 => (record(), any::<Index>(), insert).prop_map(|(mut r, at, b)| {
            let at = at.index(r.len() + 1);
            r.splice(at..at, b);
            r
        }),
        1 => record().prop_map(|r| [bytes("\u{feff}"), r].concat()),
        1 => vec(any::<u8>(), 0..64),
        1 => select(vec![
            "",
            " ",
            "\t",
            "{}",
            "[]",
            "null",
            "\"s\"",
            "1",
            "\u{feff}",
            "{\"id\":1,\"text\":\"x y z\"} trailing",
            "{\"id\":1,\"text\":\"a\"}{\"id\":2,\"text\":\"b\"}",
            "{\"id\":1,\"text\":\"a\",}",
            "{'id':1,'text':'a'}",
        ])
        .prop_map(bytes),
        // A long line that is not a record: 16 KiB to 1 MiB.
        1 => (14u32..=20, select(vec!["x", "[", "{\"a\":", " "]), any::<bool>()).prop_map(
            |(bits, unit, open)| {
                let mut l = if open { bytes("{\"id\":\"long\",\"text\":\"") } else { Vec::new() };
                l.extend(unit.repeat((1usize << bits) / unit.len()).into_bytes());
                l
            }
        ),
    ]
}

/// A JSON-lines file: lines separated by LF, CRLF or a lone CR, maybe a BOM, maybe a final
/// line break.
fn jsonl_file() -> impl Strategy<Value = Bytes> {
    (
        proptest::bool::weighted(0.1),
        vec(
            (jsonl_line(), select(vec!["\n", "\n", "\n", "\r\n", "\r"])),
            0..20,
        ),
        any::<bool>(),
    )
        .prop_map(|(bom, lines, last)| {
            let mut f = if bom { bytes("\u{feff}") } else { Vec::new() };
            let n = lines.len();
            for (i, (line, sep)) in lines.into_iter().enumerate() {
                f.extend(line);
                if i + 1 < n || last {
                    f.extend(sep.as_bytes());
                }
            }
            Bytes(f)
        })
}

/// Scan options to vary the path the records take.
const SCAN_FLAGS: &[&[&str]] = &[
    &[],
    &[],
    &["--exact"],
    &["--clusters"],
    &["--verify", "exact"],
    &["--containment", "-t", "0.5"],
    &["--shingle", "word", "-t", "0.5", "--fail-on-duplicates"],
    &["--sketch", "supershingle", "--verify", "none"],
    &["--sketch", "classic", "--num-perm", "32"],
];

/// `--id-field` and `--text-field`, usually the defaults.
const FIELDS: &[&[&str]] = &[
    &[],
    &[],
    &[],
    &["--id-field", "meta.id", "--text-field", "meta.text"],
    &["--id-field", "text", "--text-field", "id"],
    &["--id-field", "id.0"],
];

const FORMATS: &[&str] = &["jsonl", "text", "csv", "sarif", "github"];

/// The lines of a JSON-lines file as `ndup dedup` writes them back: split at `\n`, each without
/// the `\r`s it ends with (the last line too: `{...}\r` is written `{...}`, as it was read).
fn input_lines(input: &[u8]) -> Vec<&[u8]> {
    input
        .split(|&b| b == b'\n')
        .map(|l| {
            let end = l.iter().rposition(|&b| b != b'\r').map_or(0, |i| i + 1);
            &l[..end]
        })
        .collect()
}

/// Checks that the records `dedup` wrote (`out`) are lines of `input`, in input order.
fn kept_records_are_input_lines(input: &[u8], out: &[u8]) -> Result<(), TestCaseError> {
    let mut lines = input_lines(input).into_iter();
    let Some(body) = out.strip_suffix(b"\n") else {
        prop_assert!(out.is_empty(), "the output does not end with a line break");
        return Ok(());
    };
    for kept in body.split(|&b| b == b'\n') {
        prop_assert!(
            lines.any(|l| l == kept),
            "dedup wrote a record that is not a later input line: {:?}",
            Bytes(kept.to_vec())
        );
    }
    Ok(())
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .read_to_end(&mut out)
        .expect("dedup's gzip output decompresses");
    out
}

proptest! {
    #![proptest_config(config(64))]

    /// JSON-lines corpora with damaged, odd and long records: `scan` of the file, of its gzip'd
    /// and zstd copies (whole and truncated) and of standard input, and `dedup` to plain and
    /// gzip'd output.
    #[test]
    fn fuzz_jsonl_corpora(
        data in jsonl_file(),
        flags in select(SCAN_FLAGS),
        fields in select(FIELDS),
        format in select(FORMATS),
        cut in any::<Index>(),
        keep in select(vec!["first", "longest", "shortest"]),
    ) {
        jsonl_case(data, flags, fields, format, cut, keep)?;
    }
}

fn jsonl_case(
    data: Bytes,
    flags: &[&str],
    fields: &[&str],
    format: &str,
    cut: Index,
    keep: &str,
) -> Result<(), TestCaseError> {
    let data = &data.0;
    let d = Dir::new();
    d.create("f.jsonl", data);
    let gz = gzip(data);
    d.create("f.jsonl.gz", &gz);
    d.create("t.jsonl.gz", &gz[..cut.index(gz.len())]);
    let zst = zstd(data);
    d.create("f.jsonl.zst", &zst);
    d.create("t.jsonl.zst", &zst[..cut.index(zst.len())]);
    let out = Out::of_format(format);
    let scan = |path: &str| {
        let mut c = d.scan();
        c.arg(path)
            .args(flags)
            .args(fields)
            .args(["--format", format]);
        c
    };

    let plain = fuzz_run(&mut scan("f.jsonl"), out)?;
    let gz_scan = fuzz_run(&mut scan("f.jsonl.gz"), out)?;
    let zst_scan = fuzz_run(&mut scan("f.jsonl.zst"), out)?;
    let stdin_scan = fuzz_run(scan("-").stdin(data.clone()), out)?;
    // The same records whatever the packaging.
    for (other, how) in [
        (&gz_scan, "gzip'd"),
        (&zst_scan, "zstd"),
        (&stdin_scan, "standard input"),
    ] {
        prop_assert_eq!(plain.status.code(), other.status.code(), "{}", how);
        if out == (Out::Jsonl { report: true }) && plain.status.code() != Some(2) {
            prop_assert_eq!(summary(&plain.stdout), summary(&other.stdout), "{}", how);
        }
    }
    fuzz_run(&mut scan("t.jsonl.gz"), out)?;
    fuzz_run(&mut scan("t.jsonl.zst"), out)?;

    let run = fuzz_run(
        d.ndup()
            .args(["dedup", "f.jsonl", "-o", "out.jsonl", "--keep", keep])
            .args(fields),
        Out::Unchecked,
    )?;
    if run.status.code() != Some(2) {
        let kept = fs::read(d.path().join("out.jsonl")).expect("dedup wrote its output");
        kept_records_are_input_lines(data, &kept)?;
        let run = fuzz_run(
            d.ndup()
                .args(["dedup", "f.jsonl.gz", "-o", "out.jsonl.gz", "--keep", keep])
                .args(fields),
            Out::Unchecked,
        )?;
        prop_assert_eq!(run.status.code(), Some(0), "dedup of the gzip'd copy");
        let zipped = gunzip(&fs::read(d.path().join("out.jsonl.gz")).unwrap());
        prop_assert_eq!(Bytes(kept), Bytes(zipped), "dedup of the gzip'd copy");
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Configuration files

/// The long options of `ndup scan`, `ndup dedup` and `ndup query`, read from their `--help` (so
/// that a new flag is fuzzed as soon as it exists), without their dashes.
fn options() -> Vec<String> {
    static OPTIONS: OnceLock<Vec<String>> = OnceLock::new();
    OPTIONS
        .get_or_init(|| {
            let d = Dir::new();
            let mut all: Vec<String> = ["scan", "dedup", "query"]
                .iter()
                .flat_map(|cmd| long_options(&d.ndup().args([cmd, "--help"]).ok().stdout))
                .map(|o| o.trim_start_matches('-').to_string())
                .collect();
            all.sort();
            all.dedup();
            all
        })
        .clone()
}

/// String values: the words of `--shingle`, `--sketch`, `--verify`, `--format`, `--keep`.
const TOML_WORDS: &[&str] = &[
    "char",
    "word",
    "stopword",
    "fss",
    "oph",
    "classic",
    "modulo",
    "supershingle",
    "auto",
    "signature",
    "exact",
    "none",
    "jsonl",
    "text",
    "csv",
    "sarif",
    "github",
    "first",
    "longest",
    "shortest",
    "bloom",
];

/// String values: numbers and sizes.
const TOML_SIZES: &[&str] = &[
    "0",
    "1",
    "0.8",
    "1.5",
    "NaN",
    "-0.1",
    "1K",
    "64K",
    "10M",
    "1G",
    "4T",
    "16E",
    "1.5M",
    "-1K",
    "99999999999999999999G",
    "18446744073709551615",
    "18446744073709551616B",
    "1 K",
];

/// String values: globs.
const TOML_GLOBS: &[&str] = &["*.md", "old/**", "**", "[", "{a,b", "!*.md"];

/// String values: paths inside the test directory (a trusted configuration may write where it
/// says, so no value names a file outside it, except `/dev/null`), and fields.
const TOML_PATHS: &[&str] = &[
    "docs",
    "docs/a.md",
    "docs/ndup.toml",
    "ndup.toml",
    "c.toml",
    "out.txt",
    "sub/out.txt",
    "b.json",
    "i.ndup",
    "list.txt",
    "stop.txt",
    "corpus.jsonl",
    "-",
    "/dev/null",
    "missing.txt",
    "",
    ".",
    "..",
    "docs/../docs/a.md",
    "meta.id",
];

fn toml_scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => select(vec!["true", "false"]).prop_map(String::from),
        2 => select(vec![
            "0",
            "1",
            "-1",
            "2",
            "3",
            "7",
            "16",
            "128",
            "1024",
            "1025",
            "4294967296",
            "9223372036854775807",
            "-9223372036854775808",
            "99999999999999999999",
            "0x10",
            "0o7",
            "0b1",
            "1_000",
            "+5",
        ])
        .prop_map(String::from),
        1 => any::<i64>().prop_map(|i| i.to_string()),
        2 => select(vec![
            "0.5",
            "0.8",
            "1.0",
            "0.0",
            "-0.0",
            "1.5",
            "-0.5",
            "1e308",
            "5e-324",
            "nan",
            "+inf",
            "-inf",
            "0.99999999999999999",
            "1e-9",
        ])
        .prop_map(String::from),
        1 => any::<f64>().prop_map(|f| format!("{f:?}")),
        5 => select([TOML_WORDS, TOML_SIZES, TOML_GLOBS, TOML_PATHS].concat()).prop_map(quoted),
        // Anything but a `/`, so that no path leaves the test directory.
        1 => "[^/]{0,24}".prop_map(|s| quoted(&s)),
        1 => select(vec![
            "1979-05-27T07:32:00Z",
            "1979-05-27",
            "07:32:00",
            "'literal'",
            "'''multi\nline'''",
            "\"\"\"\nmulti\nline\"\"\"",
        ])
        .prop_map(String::from),
    ]
}

fn toml_key() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => select(options()).prop_map(String::from),
        2 => select(options()).prop_map(|k| k.replace('-', "_")),
        1 => select(options()).prop_map(|k| quoted(&k)),
        2 => (select(vec!["scan", "dedup", "index"]), select(options()))
            .prop_map(|(t, k)| format!("{t}.{k}")),
        1 => select(vec![
            "colour",
            "THRESHOLD",
            "scan",
            "dedup",
            "\"\"",
            "a.b.c",
            "\"\\u0000\"",
            "\"\\u001b[31m\"",
        ])
        .prop_map(String::from),
    ]
}

fn toml_value() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => toml_scalar(),
        2 => vec(toml_scalar(), 0..4).prop_map(|v| format!("[{}]", v.join(", "))),
        1 => vec(toml_scalar(), 0..3).prop_map(|v| format!("[[{}], []]", v.join(", "))),
        1 => (toml_key(), toml_scalar()).prop_map(|(k, v)| format!("{{ {k} = {v} }}")),
    ]
}

fn toml_line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        12 => (toml_key(), toml_value()).prop_map(|(k, v)| format!("{k} = {v}").into_bytes()),
        3 => select(vec![
            "[scan]",
            "[dedup]",
            "[index]",
            "[query]",
            "[other]",
            "[[scan]]",
            "[scan.sub]",
            "[]",
            "[scan]]",
            "# comment",
            "",
            "=",
            "threshold =",
            "threshold = 0.5 0.6",
            "key",
        ])
        .prop_map(bytes),
        1 => vec(any::<u8>(), 0..40),
        1 => "\\PC{0,40}".prop_map(String::into_bytes),
    ]
}

/// `key = value` for a real option, with a value of roughly the right kind (so that most files
/// get past the parser and the type checks, to the scan itself).
fn typed_option() -> impl Strategy<Value = Vec<u8>> {
    let numbers = vec![
        "0", "1", "2", "3", "7", "9", "16", "128", "1024", "-1", "0.0", "0.5", "0.8", "0.95",
        "1.0", "1e-9", "1e308",
    ];
    let line = prop_oneof![
        3 => (
            select(vec![
                "containment",
                "no-nfkc",
                "no-lowercase",
                "no-collapse-whitespace",
                "no-trim",
                "exact",
                "clusters",
                "fail-on-duplicates",
                "quiet",
                "hidden",
                "no-ignore",
                "jsonl",
                "follow",
                "null",
            ]),
            any::<bool>(),
        )
            .prop_map(|(k, b)| format!("{k} = {b}")),
        4 => (
            select(vec![
                "threshold",
                "k",
                "w",
                "modulo",
                "supershingle-size",
                "num-perm",
                "seed",
                "bands",
                "rows",
                "fp-weight",
                "fn-weight",
                "max-bucket",
                "max-pairs",
                "threads",
                "top",
            ]),
            select(numbers),
        )
            .prop_map(|(k, v)| format!("{k} = {v}")),
        2 => (
            select(vec!["shingle", "sketch", "verify", "format", "keep"]),
            select(TOML_WORDS),
        )
            .prop_map(|(k, v)| format!("{k} = {}", quoted(v))),
        1 => (
            select(vec!["max-memory", "max-filesize"]),
            select(TOML_SIZES),
        )
            .prop_map(|(k, v)| format!("{k} = {}", quoted(v))),
        2 => (
            select(vec![
                "output",
                "write-baseline",
                "index",
                "files-from",
                "baseline",
                "stopwords",
                "id-field",
                "text-field",
            ]),
            select(TOML_PATHS),
        )
            .prop_map(|(k, v)| format!("{k} = {}", quoted(v))),
        1 => (
            select(vec!["glob", "exclude"]),
            vec(select(TOML_GLOBS), 0..3),
        )
            .prop_map(|(k, v)| {
                let v: Vec<String> = v.into_iter().map(quoted).collect();
                format!("{k} = [{}]", v.join(", "))
            }),
    ];
    (select(vec!["", "", "", "[scan]\n", "[dedup]\n"]), line)
        .prop_map(|(table, line)| format!("{table}{line}").into_bytes())
}

/// A configuration file: a few typed options, or anything line by line.
fn toml_file() -> impl Strategy<Value = Bytes> {
    let lines = prop_oneof![
        2 => vec(typed_option(), 0..4),
        1 => vec(toml_line(), 0..8),
    ];
    (
        proptest::bool::weighted(0.05),
        lines,
        select(vec!["\n", "\n", "\r\n"]),
    )
        .prop_map(|(bom, lines, sep)| {
            let mut f = if bom { bytes("\u{feff}") } else { Vec::new() };
            for l in lines {
                f.extend(l);
                f.extend(sep.as_bytes());
            }
            Bytes(f)
        })
}

proptest! {
    #![proptest_config(config(160))]

    /// Configuration files of known keys with odd values, unknown keys and garbage: found in
    /// the scanned root (untrusted), in the current directory for a JSON-lines file, and named
    /// with `--config` (trusted), for `scan` and `dedup`.
    #[test]
    fn fuzz_config_files(file in toml_file()) {
        config_case(file)?;
    }
}

fn config_case(file: Bytes) -> Result<(), TestCaseError> {
    let d = planted_pages();
    d.create("corpus.jsonl", planted_jsonl());
    d.create("list.txt", "docs/a.md\ndocs/b.md\n");
    d.create("stop.txt", "the\nand\nof\n");
    d.create("docs/ndup.toml", &file.0);
    d.create("ndup.toml", &file.0);
    d.create("c.toml", &file.0);
    fuzz_run(d.scan().arg("docs"), Out::Sniff)?;
    fuzz_run(d.scan().arg("corpus.jsonl"), Out::Sniff)?;
    // A trusted file may set `threads` up to 1024, more than the memory limit has room for
    // (1024 stacks of 2 MiB): the command line's `-j 2` wins over it.
    fuzz_run(
        d.ndup()
            .args(["-j", "2", "scan", "docs", "--config", "c.toml"]),
        Out::Sniff,
    )?;
    fuzz_run(
        d.ndup().args([
            "-j", "2", "dedup", "docs", "-o", "d.jsonl", "--config", "c.toml",
        ]),
        Out::Sniff,
    )?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// .ndupignore files

fn glob() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => select(vec![
            "**",
            "*",
            "?",
            "*.md",
            "a.md",
            "b.md",
            "old/**",
            "old/*",
            "{a,b}*",
            "[ab].md",
            "[!a]*",
            "[",
            "]",
            "{",
            "}",
            "{a,{b,c}}",
            "\\",
            "\\*",
            "**/**/**",
            "***",
            "a/**/b",
            "[z-a]",
            "[[:alpha:]]*",
            "!*.md",
            "/a.md",
            "a.md/",
            "./a.md",
            "../**",
            "docs/**",
            "a",
            "a2",
            "b*",
            "a copy.md",
            "a?copy.md",
        ])
        .prop_map(String::from),
        2 => "[a-z0-9*?{}\\[\\]!,./\\\\^-]{1,16}",
        1 => "\\PC{1,12}".prop_map(|s| s.replace(char::is_whitespace, "?")),
        // Long globs: many wildcards, many alternatives, unclosed groups.
        1 => (1usize..3000, select(vec!["*a", "**/", "{a,", "[a", "?", "a*b*", "{a,b}"]))
            .prop_map(|(n, p)| p.repeat(n)),
    ]
}

fn ignore_line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => (glob(), select(vec![" ", "\t", "   ", " \t "]), glob())
            .prop_map(|(a, s, b)| format!("{a}{s}{b}").into_bytes()),
        1 => glob().prop_map(String::into_bytes),
        1 => (glob(), glob(), glob()).prop_map(|(a, b, c)| format!("{a} {b} {c}").into_bytes()),
        1 => (glob(), glob()).prop_map(|(a, b)| format!("  {a}  {b}  ").into_bytes()),
        2 => select(vec![
            "",
            "#",
            "# a.md b.md",
            "  # indented comment",
            " ",
            "\t",
            "\u{feff}a.md b.md",
            "a.md b.md # trailing comment",
            "\u{a0}a.md\u{a0}b.md",
            "a.md\u{3000}b.md",
            "a.md\0 b.md",
        ])
        .prop_map(bytes),
        1 => vec(any::<u8>(), 0..40),
        // A very long line: 4 KiB to 64 KiB.
        // From 87,380 `*` on, globset cannot compile the pattern: the file is refused.
        1 => (12u32..=18).prop_map(|bits| format!("{} **", "*".repeat(1 << bits)).into_bytes()),
    ]
}

/// A line that should parse: two globs that do, a comment or a blank line.
fn clean_ignore_line() -> impl Strategy<Value = Vec<u8>> {
    let glob = select(vec![
        "**",
        "*",
        "?",
        "*.md",
        "a.md",
        "b.md",
        "a",
        "a2",
        "b*",
        "old/**",
        "old/*",
        "{a,b}*",
        "[ab].md",
        "[!a]*",
        "**/**/**",
        "a?copy.md",
        "docs/**",
        "*.{md,txt}",
        "[[:alpha:]]*",
    ]);
    prop_oneof![
        6 => (glob.clone(), select(vec![" ", "\t", "   "]), glob)
            .prop_map(|(a, s, b)| format!("{a}{s}{b}").into_bytes()),
        1 => select(vec!["", "#", "# a.md b.md", "  # indented", " ", "\t"]).prop_map(bytes),
    ]
}

/// A `.ndupignore` file: mostly lines that parse, sometimes anything line by line.
fn ignore_file() -> impl Strategy<Value = Bytes> {
    let lines = prop_oneof![
        2 => vec(clean_ignore_line(), 0..6),
        1 => vec(ignore_line(), 0..8),
    ];
    (
        proptest::bool::weighted(0.05),
        lines,
        select(vec!["\n", "\n", "\r\n"]),
    )
        .prop_map(|(bom, lines, sep)| {
            let mut f = if bom { bytes("\u{feff}") } else { Vec::new() };
            for l in lines {
                f.extend(l);
                f.extend(sep.as_bytes());
            }
            Bytes(f)
        })
}

proptest! {
    #![proptest_config(config(128))]

    /// `.ndupignore` files of odd globs, odd lines and garbage, for a tree and for JSON-lines
    /// records: whatever they say, they only ever accept planted pairs, never invent one.
    #[test]
    fn fuzz_ndupignore_files(file in ignore_file()) {
        ndupignore_case(file)?;
    }
}

fn ndupignore_case(file: Bytes) -> Result<(), TestCaseError> {
    let d = planted_pages();
    d.create("corpus.jsonl", planted_jsonl());
    d.create("docs/.ndupignore", &file.0);
    d.create(".ndupignore", &file.0);
    let accounted = |run: &RawRun, planted: &[(&str, &str)]| -> Result<(), TestCaseError> {
        if run.status.code() == Some(2) {
            return Ok(());
        }
        let s = summary(&run.stdout);
        prop_assert_eq!(
            count(&s, "pairs") + count(&s, "ignored_pairs"),
            planted.len() as u64,
            "pairs and ignored pairs are the planted ones\n{}",
            run.describe(3000)
        );
        for line in std::str::from_utf8(&run.stdout).unwrap().lines() {
            let r: Value = serde_json::from_str(line).unwrap();
            if r["type"] == "pair" {
                let (a, b) = (r["a"].as_str().unwrap(), r["b"].as_str().unwrap());
                prop_assert!(planted.contains(&(a, b)), "unexpected pair {} {}", a, b);
            }
        }
        Ok(())
    };
    let run = fuzz_run(d.scan().arg("docs"), Out::Jsonl { report: true })?;
    accounted(
        &run,
        &[
            ("docs/a copy.md", "docs/a.md"),
            ("docs/b.md", "docs/old/b.md"),
        ],
    )?;
    let run = fuzz_run(d.scan().arg("corpus.jsonl"), Out::Jsonl { report: true })?;
    accounted(&run, &[("a", "a2"), ("b", "b2")])?;
    fuzz_run(
        d.scan().args(["docs", "--clusters", "--format", "csv"]),
        Out::Csv,
    )?;
    fuzz_run(
        d.ndup().args(["dedup", "docs", "-o", "d.jsonl"]),
        Out::Unchecked,
    )?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Index files

/// A moment well in the past for every corpus file, so the index knows them by size and mtime
/// and the index built once fits every case's copy of the corpus.
fn settled(d: &Dir, name: &str, content: &str) {
    let path = d.create(name, content);
    fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000))
        .unwrap();
}

/// The index corpus: `c/` of five documents, `c2/` of two more (one a near copy), and `q.txt`,
/// a near copy of `c/d3.txt`.
fn index_corpus() -> Dir {
    let d = Dir::new();
    for i in 0..5 {
        settled(&d, &format!("c/d{i}.txt"), &text(100 + i, 200));
    }
    settled(&d, "c2/new.txt", &text(200, 200));
    settled(&d, "c2/near.txt", &edited(101, 200, 3));
    settled(&d, "q.txt", &edited(103, 200, 2));
    d
}

/// The bytes of an index of `c/` built with `ndup index build`, once.
fn built_index() -> &'static [u8] {
    static INDEX: OnceLock<Vec<u8>> = OnceLock::new();
    INDEX.get_or_init(|| {
        let d = index_corpus();
        let run = d
            .ndup()
            .args(["index", "build", "c", "--index", "i.ndup", "-q"])
            .run_limited(MEMORY);
        assert_eq!(run.status.code(), Some(0), "{}", run.describe(3000));
        fs::read(d.path().join("i.ndup")).unwrap()
    })
}

/// A change to the index file.
#[derive(Clone, Debug)]
enum Mutation {
    /// XOR a byte with a non-zero value: anywhere, in the 100-byte database header, or in the
    /// first 12 bytes of a page (4096-byte pages: the b-tree page header).
    Flip(Where, u8),
    /// Zero up to 4 KiB.
    Zero(Index, usize),
    /// Cut the file.
    Truncate(Index),
    /// Append garbage.
    Append(Bytes),
    /// Copy one 4 KiB page over another.
    CopyPage(Index, Index),
}

#[derive(Clone, Debug)]
enum Where {
    Anywhere(Index),
    Header(usize),
    PageHeader(Index, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let place = prop_oneof![
        any::<Index>().prop_map(Where::Anywhere),
        (0usize..100).prop_map(Where::Header),
        (any::<Index>(), 0usize..12).prop_map(|(p, o)| Where::PageHeader(p, o)),
    ];
    prop_oneof![
        6 => (place, 1u8..).prop_map(|(w, x)| Mutation::Flip(w, x)),
        1 => (any::<Index>(), 1usize..4096).prop_map(|(i, n)| Mutation::Zero(i, n)),
        2 => any::<Index>().prop_map(Mutation::Truncate),
        1 => vec(any::<u8>(), 1..5000).prop_map(|b| Mutation::Append(Bytes(b))),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::CopyPage(a, b)),
    ]
}

fn mutate(f: &mut Vec<u8>, m: &Mutation) {
    const PAGE: usize = 4096;
    let pages = f.len() / PAGE;
    match m {
        Mutation::Flip(w, x) => {
            let at = match w {
                Where::Anywhere(i) if !f.is_empty() => i.index(f.len()),
                Where::Header(o) => *o,
                Where::PageHeader(p, o) if pages > 0 => p.index(pages) * PAGE + o,
                _ => return,
            };
            if let Some(b) = f.get_mut(at) {
                *b ^= x;
            }
        }
        Mutation::Zero(i, n) if !f.is_empty() => {
            let at = i.index(f.len());
            let end = (at + n).min(f.len());
            f[at..end].fill(0);
        }
        Mutation::Truncate(i) => f.truncate(i.index(f.len() + 1)),
        Mutation::Append(b) => f.extend(&b.0),
        Mutation::CopyPage(a, b) if pages > 1 => {
            let (a, b) = (a.index(pages) * PAGE, b.index(pages) * PAGE);
            let page = f[a..a + PAGE].to_vec();
            f[b..b + PAGE].copy_from_slice(&page);
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(config(96))]

    /// A real index, damaged: bytes flipped, zeroed, pages copied, cut, garbage appended, maybe
    /// a garbage write-ahead log beside it; then `query`, `index add`, `index update`,
    /// `index remove` and `scan --index`, each on a fresh copy of the damaged file.
    #[test]
    fn fuzz_damaged_indexes(
        mutations in vec(mutation(), 1..4),
        wal in option::weighted(0.1, vec(any::<u8>(), 0..5000)),
    ) {
        index_case(mutations, wal)?;
    }
}

fn index_case(mutations: Vec<Mutation>, wal: Option<Vec<u8>>) -> Result<(), TestCaseError> {
    let mut damaged = built_index().to_vec();
    for m in &mutations {
        mutate(&mut damaged, m);
    }
    let d = index_corpus();
    let restore = || {
        for sidecar in ["i.ndup-wal", "i.ndup-shm", "i.ndup-journal"] {
            let _ = fs::remove_file(d.path().join(sidecar));
        }
        d.create("i.ndup", &damaged);
        if let Some(wal) = &wal {
            d.create("i.ndup-wal", wal);
        }
    };
    let commands: &[(&[&str], Out)] = &[
        (
            &["query", "--index", "i.ndup", "q.txt"],
            Out::Jsonl { report: true },
        ),
        (
            &[
                "query", "--index", "i.ndup", "q.txt", "c2", "--verify", "exact", "--top", "1",
            ],
            Out::Jsonl { report: true },
        ),
        (
            &["index", "add", "c2", "--index", "i.ndup"],
            Out::Jsonl { report: false },
        ),
        (
            &["index", "update", "c", "--index", "i.ndup"],
            Out::Jsonl { report: false },
        ),
        (
            &["index", "remove", "c/d0.txt", "--index", "i.ndup"],
            Out::Jsonl { report: false },
        ),
        (
            &["scan", "c", "c2", "--index", "i.ndup"],
            Out::Jsonl { report: true },
        ),
    ];
    for (args, out) in commands {
        restore();
        fuzz_run(d.ndup().args(*args), *out)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// File names

/// Bytes that make names hard to print or parse.
const AWKWARD: &[u8] = b"\n\r\t\x1b\x7f\x08-  \",%:\\'*?[]{}#!.a\xff\xc3\x80\xe2\x80\xae";

/// Names that walking treats specially get a `_`, so that every file created is a document.
const SPECIAL: &[&[u8]] = &[
    b".gitignore",
    b".ignore",
    b".rgignore",
    b".ndupignore",
    b"ndup.toml",
    b".git",
];

/// A file name valid on Linux: 1 to 255 bytes, no `/`, no NUL, not `.` or `..`.
fn file_name() -> impl Strategy<Value = Bytes> {
    prop_oneof![
        3 => vec(1u8.., 1..40),
        3 => vec(select(AWKWARD), 1..24),
        2 => select(vec![
            "-o",
            "--format",
            "-",
            "--",
            "-q",
            "--help",
            "~",
            "*",
            "[a]",
            ".hidden",
            "a b",
            "a\nb",
            "\u{1b}[31mred",
            "\u{202e}txt.exe",
            "...",
            "%0A::warning file=x::y",
            "a,b",
            "\"quoted\"",
            "\\",
            "CON",
            "\u{feff}bom",
            "e\u{301}",
            "\u{e9}",
        ])
        .prop_map(bytes),
        1 => (200usize..=255, vec(1u8.., 1..8))
            .prop_map(|(n, unit)| unit.iter().copied().cycle().take(n).collect()),
        1 => "\\PC{1,60}".prop_map(String::into_bytes),
    ]
    .prop_map(|mut b: Vec<u8>| {
        for x in &mut b {
            if *x == b'/' || *x == 0 {
                *x = b'_';
            }
        }
        b.truncate(255);
        if b.is_empty() || b == b"." || b == b".." {
            b.insert(0, b'x');
        }
        if SPECIAL.contains(&b.as_slice()) {
            b.push(b'_');
        }
        Bytes(b)
    })
}

/// What the files hold: near copies (so names are reported in pairs), other text, an empty file
/// and a binary one.
fn content(i: usize) -> Vec<u8> {
    match i {
        0 | 2 => text(1, 150).into_bytes(),
        1 => edited(1, 150, 1).into_bytes(),
        3 => edited(1, 150, 3).into_bytes(),
        4 | 5 => text(2, 150).into_bytes(),
        6 => Vec::new(),
        _ => b"\x89PNG\0\0\0".to_vec(),
    }
}

/// The content that is binary.
const BINARY: usize = 7;

proptest! {
    #![proptest_config(config(48))]

    /// A tree of files (and maybe a directory) with arbitrary names, scanned in every format,
    /// named on the command line, indexed, queried and deduplicated. Every file created is
    /// accounted for.
    #[test]
    fn fuzz_file_names(
        files in vec((file_name(), 0..=BINARY), 1..7),
        sub in option::weighted(0.3, (file_name(), vec((file_name(), 0..=BINARY), 1..3))),
    ) {
        names_case(files, sub)?;
    }
}

fn names_case(
    files: Vec<(Bytes, usize)>,
    sub: Option<(Bytes, Vec<(Bytes, usize)>)>,
) -> Result<(), TestCaseError> {
    let d = Dir::new();
    d.mkdir("t");
    let root = d.path().join("t");
    let files: BTreeMap<Bytes, usize> = files.into_iter().collect();
    for (name, c) in &files {
        fs::write(root.join(OsStr::from_bytes(&name.0)), content(*c)).unwrap();
    }
    let mut created = files.len() as u64;
    // Without a readable file (all binary) there is no document, which is an error.
    let mut readable = files.values().any(|&c| c != BINARY);
    if let Some((dir, inner)) = &sub
        && !files.contains_key(dir)
    {
        let dir = root.join(OsStr::from_bytes(&dir.0));
        fs::create_dir(&dir).unwrap();
        let inner: BTreeMap<&Bytes, &usize> = inner.iter().map(|(n, c)| (n, c)).collect();
        for (name, c) in &inner {
            fs::write(dir.join(OsStr::from_bytes(&name.0)), content(**c)).unwrap();
        }
        created += inner.len() as u64;
        readable |= inner.values().any(|&&c| c != BINARY);
    }

    for format in FORMATS {
        let run = fuzz_run(
            d.scan().args(["t", "--hidden", "--format", format]),
            Out::of_format(format),
        )?;
        if *format == "jsonl" {
            if !readable {
                continue;
            }
            prop_assert_eq!(run.status.code(), Some(0), "{}", run.describe(3000));
            let s = summary(&run.stdout);
            let seen = count(&s, "documents")
                + ["binary", "unreadable", "malformed", "too_large"]
                    .iter()
                    .map(|k| count(&s, &format!("skipped_{k}")))
                    .sum::<u64>();
            prop_assert_eq!(seen, created, "every file is a document or a skip");
        }
    }
    // The names as arguments, from inside the tree (a leading `-` and all).
    let names: Vec<&OsStr> = files.keys().map(|n| OsStr::from_bytes(&n.0)).collect();
    fuzz_run(
        d.ndup_in("t").args(["scan", "--hidden", "--"]).args(&names),
        Out::Jsonl { report: true },
    )?;
    // Into an index and back: an update right after the build finds every name again.
    let build = fuzz_run(
        d.ndup().args(["index", "build", "t", "--index", "i.ndup"]),
        Out::Jsonl { report: false },
    )?;
    if build.status.code() == Some(0) {
        let update = fuzz_run(
            d.ndup().args(["index", "update", "t", "--index", "i.ndup"]),
            Out::Jsonl { report: false },
        )?;
        prop_assert_eq!(update.status.code(), Some(0), "{}", update.describe(3000));
        let s = summary(&update.stdout);
        for k in ["added", "updated", "removed"] {
            prop_assert_eq!(count(&s, k), 0, "{} by an update right after the build", k);
        }
        fuzz_run(
            d.ndup().args(["query", "--index", "i.ndup", "t"]),
            Out::Jsonl { report: true },
        )?;
    }
    let run = fuzz_run(
        d.ndup().args(["dedup", "t", "--hidden", "-o", "out.jsonl"]),
        Out::Unchecked,
    )?;
    if readable {
        prop_assert_eq!(run.status.code(), Some(0), "{}", run.describe(3000));
        let out = fs::read(d.path().join("out.jsonl")).unwrap();
        check_output(&out, Out::Jsonl { report: false }).map_err(TestCaseError::fail)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Special files

/// What a path in the tree is instead of a regular file.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Special {
    /// A link to `/dev/zero`: endless.
    Zero,
    /// A link to `/dev/null`: empty.
    Null,
    /// A link to nothing.
    Dangling,
    /// A directory.
    Directory,
    /// A named pipe nobody writes to.
    Fifo,
}

const SPECIALS: [Special; 5] = [
    Special::Zero,
    Special::Null,
    Special::Dangling,
    Special::Directory,
    Special::Fifo,
];

fn make_special(d: &Dir, name: &str, kind: Special) {
    match kind {
        Special::Zero => d.link("/dev/zero", name),
        Special::Null => d.link("/dev/null", name),
        Special::Dangling => d.link("nowhere", name),
        Special::Directory => d.mkdir(name),
        Special::Fifo => {
            let status = std::process::Command::new("mkfifo")
                .arg(d.path().join(name))
                .status()
                .expect("run mkfifo");
            assert!(status.success(), "mkfifo {name}");
        }
    }
}

/// The files of a tree `ndup` reads by name (`.ndupignore`, `ndup.toml`, the files a found
/// `ndup.toml` names) and a document, each an endless device, an empty one, a dangling link, a
/// directory or a named pipe: no hang, no unbounded read.
#[test]
fn fuzz_special_files_in_the_tree() {
    let check = |d: &Dir, args: &[&str], what: &str| {
        if let Err(e) = fuzz_run(d.ndup().args(args), Out::Sniff) {
            panic!("{what}: {e}");
        }
    };
    for name in [".ndupignore", "ndup.toml", "x.md"] {
        for kind in SPECIALS {
            let d = planted_pages();
            make_special(&d, &format!("docs/{name}"), kind);
            let what = format!("docs/{name} is {kind:?}");
            check(&d, &["scan", "docs"], &what);
            check(&d, &["scan", "docs", "--follow"], &what);
            check(&d, &["dedup", "docs", "-o", "d.jsonl"], &what);
        }
    }
    for key in ["baseline", "stopwords"] {
        for kind in SPECIALS {
            let d = planted_pages();
            make_special(&d, "docs/special", kind);
            d.create(
                "docs/ndup.toml",
                format!("shingle = \"stopword\"\n{key} = \"docs/special\"\n"),
            );
            check(
                &d,
                &["scan", "docs"],
                &format!("a found ndup.toml's {key} is {kind:?}"),
            );
        }
    }
}
