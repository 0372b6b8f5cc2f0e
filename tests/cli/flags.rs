//! One behavioural test (at least) for every flag of `ndup scan`: each shows the flag changing
//! what is reported, and, where a number is involved, that the number is the library's.
//!
//! Tests that compare similarities use `--verify exact` so the report carries the exact
//! Jaccard, which is then checked against the library under the same options.

use ndup::candidates::lsh::LshParams;
use ndup::find::config::{ScanConfig, SignatureConfig, StrategyConfig};
use ndup::sketch::minhash::SketchKind;
use ndup::text::normalize::NormalizeOptions;
use ndup::text::shingle::{ShingleKind, ShingleOptions};

use super::util::{
    Dir, PLANTED_PAIRS, library_estimate, library_jaccard, long_options, owned, planted,
};
use crate::corpus::{Rng, edited, prose, text};

/// Every long flag `ndup scan --help` lists, each covered by a test in this module (or, for
/// `--format`, `--clusters`, `--fail-on-duplicates`, `--quiet` and `--threads`, in `output`,
/// `errors` and `determinism`).
// Flags tested in other modules: in `sketch`, --containment, --fn-weight, --fp-weight,
// --modulo, --supershingle-size; in `jsonl`, --jsonl, --id-field, --text-field; in `tree`,
// --files-from, --null (-0), --glob, --exclude, --hidden, --no-ignore, --max-filesize; in
// `formats`, --output; in `gates`, --max-pairs, --baseline, --write-baseline; in `config`,
// --config; in `index`, --index; in `exact`, --exact, --max-memory; in `bounds`,
// --max-line-length, --partial-input; in `shell`, --color; in `html`, --html-max-pairs; in
// `sign`, --signatures.
const TESTED_FLAGS: &[&str] = &[
    "--bands",
    "--baseline",
    "--clusters",
    "--color",
    "--config",
    "--containment",
    "--exact",
    "--exclude",
    "--fail-on-duplicates",
    "--files-from",
    "--fn-weight",
    "--follow",
    "--format",
    "--fp-weight",
    "--glob",
    "--help",
    "--hidden",
    "--html-max-pairs",
    "--id-field",
    "--index",
    "--jsonl",
    "--k",
    "--max-bucket",
    "--max-filesize",
    "--max-line-length",
    "--max-memory",
    "--max-pairs",
    "--modulo",
    "--no-collapse-whitespace",
    "--no-ignore",
    "--no-lowercase",
    "--no-nfkc",
    "--no-trim",
    "--null",
    "--num-perm",
    "--output",
    "--partial-input",
    "--quiet",
    "--rows",
    "--seed",
    "--shingle",
    "--signatures",
    "--sketch",
    "--stopwords",
    "--supershingle-size",
    "--text-field",
    "--threads",
    "--threshold",
    "--verify",
    "--version",
    "--w",
    "--write-baseline",
];

#[test]
fn every_flag_in_help_is_in_the_tested_list() {
    let d = Dir::new();
    let listed = long_options(&d.scan().arg("--help").ok().stdout);
    eqnice!(
        TESTED_FLAGS
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>(),
        listed,
        "a flag was added or removed: add its behavioural test and list it here"
    );
}

/// Two documents and the pair they form, `a.txt` and `b.txt`, in a fresh directory.
fn two(a: &str, b: &str) -> Dir {
    let d = Dir::new();
    d.create("a.txt", a);
    d.create("b.txt", b);
    d
}

const AB: (&str, &str) = ("a.txt", "b.txt");

// ---------------------------------------------------------------------------------------------
// Threshold

#[test]
fn threshold_decides_which_pairs_are_reported() {
    let d = two(&text(10, 150), &edited(10, 150, 4));
    let j = library_jaccard(&ScanConfig::default(), &d.read("a.txt"), &d.read("b.txt"));
    assert!((0.82..0.92).contains(&j), "{j}");
    let exact = ["a.txt", "b.txt", "--verify", "exact"];

    let run = d.scan().args(exact).args(["--threshold", "0.8"]).ok();
    assert_eq!(run.expect_pair(AB.0, AB.1).jaccard, Some(j));
    let run = d.scan().args(exact).args(["-t", "0.95"]).ok();
    run.expect_no_pair(AB.0, AB.1);
    // ">= T": a threshold just below the exact similarity keeps the pair; one typed as the
    // printed similarity decides as --exact does (the printed decimal may be a hair above the
    // true fraction, see docs/reference.md, "Exact mode").
    let below = format!("{:.12}", j - 5e-13);
    let run = d.scan().args(exact).args(["-t", &below]).ok();
    assert_eq!(run.expect_pair(AB.0, AB.1).jaccard, Some(j));
    let at = j.to_string();
    let run = d.scan().args(exact).args(["-t", &at]).ok();
    assert_eq!(run.params()["threshold"], j);
    let joined = d.scan().args(["a.txt", "b.txt", "--exact", "-t", &at]).ok();
    assert_eq!(run.pair_ids(), joined.pair_ids());
    // A low threshold finds the far edit too (with banding wide enough to propose it).
    let far = two(&text(10, 150), &edited(10, 150, 20));
    let jf = library_jaccard(
        &ScanConfig::default(),
        &far.read("a.txt"),
        &far.read("b.txt"),
    );
    assert!(jf < 0.6, "{jf}");
    far.scan().args(exact).ok().expect_no_pair(AB.0, AB.1);
    let run = far
        .scan()
        .args(exact)
        .args(["-t", "0.3", "--bands", "64", "--rows", "2"])
        .ok();
    assert_eq!(run.expect_pair(AB.0, AB.1).jaccard, Some(jf));
}

#[test]
fn threshold_minus_zero_is_zero_from_a_flag_or_a_scanned_tree() {
    let d = two(&text(10, 150), &edited(10, 150, 4));
    let zero = d.scan().args(["a.txt", "b.txt", "-t", "0"]).ok();
    for t in ["-0", "-0.0"] {
        let run = d.scan().args(["a.txt", "b.txt", "-t", t]).ok();
        assert_eq!(run.params()["threshold"], 0.0);
        assert_eq!(run.stdout, zero.stdout, "-t {t}");
    }
    let tune = d.ndup().args(["tune", "-t", "-0"]).ok();
    assert!(tune.stdout.starts_with("threshold 0:"), "{}", tune.stdout);
    // A tree's ndup.toml may shape its scan; it must not crash it.
    d.create("ndup.toml", "threshold = -0.0\n");
    let run = d.scan().arg(".").ok();
    assert_eq!(run.params()["threshold"], 0.0);
}

// ---------------------------------------------------------------------------------------------
// Shingling

fn with_shingle(kind: ShingleKind, k: usize, w: usize) -> ScanConfig {
    ScanConfig {
        shingle: ShingleOptions {
            kind,
            k,
            w,
            stopwords: None,
        },
        ..Default::default()
    }
}

#[test]
fn word_shingles_and_w_see_word_order() {
    // The same words in reverse order: the same set of single words, no shared word pair and
    // no shared 9-character window.
    let words = Rng::new(11).words(120);
    let reversed: Vec<String> = words.iter().rev().cloned().collect();
    let d = two(&prose(&words), &prose(&reversed));
    let (a, b) = (d.read("a.txt"), d.read("b.txt"));
    assert_eq!(
        library_jaccard(&with_shingle(ShingleKind::Word, 9, 1), &a, &b),
        1.0
    );
    assert_eq!(
        library_jaccard(&with_shingle(ShingleKind::Word, 9, 2), &a, &b),
        0.0
    );
    assert!(library_jaccard(&ScanConfig::default(), &a, &b) < 0.1);

    let run = d
        .scan()
        .args([
            "a.txt",
            "b.txt",
            "--verify",
            "exact",
            "--shingle",
            "word",
            "-w",
            "1",
        ])
        .ok();
    assert_eq!(run.expect_pair(AB.0, AB.1).jaccard, Some(1.0));
    let p = run.params();
    assert_eq!(
        (p["shingle"].as_str(), p["shingle_size"].as_u64()),
        (Some("word"), Some(1))
    );

    let run = d
        .scan()
        .args([
            "a.txt",
            "b.txt",
            "--verify",
            "none",
            "--shingle",
            "word",
            "--w",
            "2",
        ])
        .ok();
    run.expect_no_pair(AB.0, AB.1);
    let run = d
        .scan()
        .args(["a.txt", "b.txt", "--verify", "none", "--shingle", "char"])
        .ok();
    run.expect_no_pair(AB.0, AB.1);
}

#[test]
fn k_sets_the_character_shingle_length() {
    // One letter changed in every third word: short shingles mostly survive, long ones do not.
    let words = Rng::new(12).words(150);
    let typos: Vec<String> = words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if i % 3 == 0 {
                let mut c: Vec<char> = w.chars().collect();
                c[1] = if c[1] == 'y' { 'w' } else { 'y' };
                c.into_iter().collect()
            } else {
                w.clone()
            }
        })
        .collect();
    let d = two(&prose(&words), &prose(&typos));
    let (a, b) = (d.read("a.txt"), d.read("b.txt"));
    let j2 = library_jaccard(&with_shingle(ShingleKind::Char, 2, 5), &a, &b);
    let j9 = library_jaccard(&with_shingle(ShingleKind::Char, 9, 5), &a, &b);
    assert!(j2 >= 0.8 && j9 < 0.5, "k=2: {j2}, k=9: {j9}");

    let run = d
        .scan()
        .args(["a.txt", "b.txt", "--verify", "exact", "-k", "2"])
        .ok();
    assert_eq!(run.expect_pair(AB.0, AB.1).jaccard, Some(j2));
    assert_eq!(run.params()["shingle_size"], 2);
    let run = d
        .scan()
        .args(["a.txt", "b.txt", "--verify", "exact", "--k", "9"])
        .ok();
    run.expect_no_pair(AB.0, AB.1);
    // -k means nothing to word shingles: the size reported is w's.
    let run = d
        .scan()
        .args(["a.txt", "--shingle", "word", "-k", "2", "-w", "4"])
        .ok();
    assert_eq!(run.params()["shingle_size"], 4);
}

/// An article of made-up words with a stop word every third word.
fn article(seed: u64) -> String {
    const STOP: [&str; 8] = ["the", "of", "and", "to", "in", "is", "that", "with"];
    let mut rng = Rng::new(seed);
    let words: Vec<String> = (0..90)
        .map(|i| {
            if i % 3 == 0 {
                STOP[rng.below(STOP.len())].to_string()
            } else {
                rng.word()
            }
        })
        .collect();
    prose(&words)
}

/// Navigation boilerplate: made-up words, no stop word, `marker` every tenth word.
fn boilerplate(seed: u64, marker: &str) -> String {
    let mut rng = Rng::new(seed);
    let words: Vec<String> = (0..300)
        .map(|i| {
            if i % 10 == 0 {
                marker.to_string()
            } else {
                rng.word()
            }
        })
        .collect();
    words.join(" | ")
}

#[test]
fn stopword_shingles_see_the_article_through_the_boilerplate() {
    // The MMDS news-article case: the same story under different page furniture.
    let story = article(13);
    let d = two(
        &format!("{}\n\n{story}", boilerplate(14, "zork")),
        &format!("{}\n\n{story}", boilerplate(15, "zork")),
    );
    let (a, b) = (d.read("a.txt"), d.read("b.txt"));
    assert!(library_jaccard(&ScanConfig::default(), &a, &b) < 0.3);
    assert_eq!(
        library_jaccard(&with_shingle(ShingleKind::Stopword, 9, 5), &a, &b),
        1.0
    );

    d.scan()
        .args(["a.txt", "b.txt", "--verify", "exact"])
        .ok()
        .expect_no_pair(AB.0, AB.1);
    let run = d
        .scan()
        .args([
            "a.txt",
            "b.txt",
            "--verify",
            "exact",
            "--shingle",
            "stopword",
        ])
        .ok();
    assert_eq!(run.expect_pair(AB.0, AB.1).jaccard, Some(1.0));
    let p = run.params();
    assert_eq!(p["shingle"], "stopword");
    assert_eq!(p["shingle_size"], 3);
    assert_eq!(p["custom_stopwords"], false);

    // A custom list whose only stop word is the boilerplate's marker: now only the boilerplate
    // makes shingles, and it differs.
    d.create("stop.txt", "# one word only\nZORK\n\n");
    let custom = ScanConfig {
        shingle: ShingleOptions {
            kind: ShingleKind::Stopword,
            stopwords: Some(vec!["zork".into()]),
            ..Default::default()
        },
        ..Default::default()
    };
    let jc = library_jaccard(&custom, &a, &b);
    assert_eq!(jc, 0.0);
    let run = d
        .scan()
        .args(["a.txt", "b.txt", "--verify", "none", "-b", "64", "-r", "2"])
        .args(["--shingle", "stopword", "--stopwords", "stop.txt"])
        .ok();
    run.expect_no_pair(AB.0, AB.1);
    assert_eq!(run.params()["custom_stopwords"], true);
}

#[test]
fn an_empty_or_unreadable_stopword_file_is_an_error() {
    let d = two(&article(16), &article(16));
    d.create("empty.txt", "");
    d.create("comments.txt", "# nothing but a comment\n\n");
    for file in ["empty.txt", "comments.txt"] {
        let run = d
            .scan()
            .args(["a.txt", "--shingle", "stopword", "--stopwords", file])
            .code(2);
        eqnice!(
            vec![format!("ndup: {file}: the stop-word list is empty")],
            run.stderr_lines()
        );
        eqnice!("", run.stdout);
    }
    let run = d
        .scan()
        .args([
            "a.txt",
            "--shingle",
            "stopword",
            "--stopwords",
            "nowhere.txt",
        ])
        .code(2);
    assert_eq!(run.stderr_lines().len(), 1, "{}", run.describe());
    assert!(
        run.stderr.starts_with(
            "ndup: nowhere.txt: cannot read stop-word list: No such file or directory"
        ),
        "{}",
        run.describe()
    );
    // A directory is not a list either.
    d.mkdir("adir");
    let run = d
        .scan()
        .args(["a.txt", "--shingle", "stopword", "--stopwords", "adir"])
        .code(2);
    assert!(
        run.stderr
            .starts_with("ndup: adir: cannot read stop-word list"),
        "{}",
        run.describe()
    );
}

// ---------------------------------------------------------------------------------------------
// Normalization: each flag turns off one step, shown by a pair that step alone makes equal.

/// Scans a.txt and b.txt with and without `flag`: with the step on they are identical after
/// normalization (one shared shingle set), with it off they share almost nothing.
fn normalization_step(a: &str, b: &str, flag: &str, off: NormalizeOptions, describe: &str) {
    let d = two(a, b);
    let on = ScanConfig::default();
    let off_config = ScanConfig {
        normalize: off,
        ..Default::default()
    };
    assert_eq!(library_jaccard(&on, a, b), 1.0);
    let j_off = library_jaccard(&off_config, a, b);
    assert!(j_off < 0.5, "{flag}: {j_off}");

    let run = d.scan().args(["a.txt", "b.txt", "--verify", "exact"]).ok();
    assert_eq!(run.expect_pair(AB.0, AB.1).jaccard, Some(1.0), "{flag}");
    let run = d
        .scan()
        .args(["a.txt", "b.txt", "--verify", "exact", flag])
        .ok();
    run.expect_no_pair(AB.0, AB.1);
    assert_eq!(run.params()["normalize"], describe, "{flag}");
    // The signatures of the report are the library's under the same options.
    let run = d
        .scan()
        .args([
            "a.txt", "b.txt", "--verify", "none", "-t", "0", "-b", "128", "-r", "1", flag,
        ])
        .ok();
    let e = library_estimate(&off_config, a, b);
    if e > 0.0 {
        assert_eq!(run.expect_pair(AB.0, AB.1).estimate, e, "{flag}");
    } else {
        // No slot agrees, so no band of one row can make them candidates.
        run.expect_no_pair(AB.0, AB.1);
    }
}

#[test]
fn no_nfkc_keeps_full_width_letters_apart() {
    let plain = text(17, 100);
    let wide: String = plain
        .chars()
        .map(|c| match c {
            'a'..='z' => char::from_u32(c as u32 - 'a' as u32 + 0xFF41).unwrap(),
            'A'..='Z' => char::from_u32(c as u32 - 'A' as u32 + 0xFF21).unwrap(),
            c => c,
        })
        .collect();
    normalization_step(
        &plain,
        &wide,
        "--no-nfkc",
        NormalizeOptions {
            nfkc: false,
            ..Default::default()
        },
        "casefold+whitespace+trim",
    );
}

#[test]
fn no_lowercase_keeps_case() {
    let plain = text(18, 100);
    normalization_step(
        &plain,
        &plain.to_uppercase(),
        "--no-lowercase",
        NormalizeOptions {
            lowercase: false,
            ..Default::default()
        },
        "nfkc+whitespace+trim",
    );
}

#[test]
fn no_collapse_whitespace_keeps_runs_of_white_space() {
    let plain = text(19, 100);
    let spaced = plain.replace(' ', " \t ").replace('\n', "\n\n");
    normalization_step(
        &plain,
        &spaced,
        "--no-collapse-whitespace",
        NormalizeOptions {
            collapse_whitespace: false,
            ..Default::default()
        },
        "nfkc+casefold+trim",
    );
}

#[test]
fn no_trim_keeps_white_space_at_the_ends() {
    // Documents shorter than one 9-shingle are one shingle, their whole text: the ends matter.
    normalization_step(
        "tiny doc",
        "\n   tiny doc  \n",
        "--no-trim",
        NormalizeOptions {
            trim: false,
            ..Default::default()
        },
        "nfkc+casefold+whitespace",
    );
}

// ---------------------------------------------------------------------------------------------
// Signatures and banding

#[test]
fn sketch_chooses_the_signature() {
    let d = planted();
    let (original, edited) = (d.read("docs/original.txt"), d.read("docs/edited.txt"));
    let j = library_jaccard(&ScanConfig::default(), &original, &edited);
    let mut estimates = Vec::new();
    for (name, kind) in [
        ("fss", SketchKind::Fss),
        ("oph", SketchKind::Oph),
        ("classic", SketchKind::Classic),
    ] {
        let run = d
            .scan()
            .args([
                "docs",
                "--verify",
                "signature",
                "-t",
                "0.5",
                "--sketch",
                name,
            ])
            .ok();
        assert_eq!(run.params()["sketch"], name);
        let config = ScanConfig::with_strategy(StrategyConfig::Signatures(SignatureConfig {
            sketch: kind,
            ..Default::default()
        }));
        let p = run.expect_pair("docs/edited.txt", "docs/original.txt");
        // The library's estimate under that sketch, within five standard errors of the truth.
        assert_eq!(
            p.estimate,
            library_estimate(&config, &original, &edited),
            "{name}"
        );
        let se = (j * (1.0 - j) / 128.0).sqrt();
        assert!(
            (p.estimate - j).abs() < 5.0 * se,
            "{name}: {} vs {j}",
            p.estimate
        );
        assert_eq!(
            run.expect_pair("docs/original.txt", "docs/sub/copy.txt")
                .estimate,
            1.0
        );
        estimates.push(p.estimate);
    }
    // Three different sketches, three different samples.
    assert!(
        estimates[0] != estimates[1] || estimates[1] != estimates[2],
        "{estimates:?}"
    );
}

#[test]
fn num_perm_sets_the_signature_width() {
    let d = planted();
    let run = d
        .scan()
        .args([
            "docs",
            "--verify",
            "signature",
            "--num-perm",
            "64",
            "--bands",
            "16",
            "--rows",
            "4",
            // Well below the edited pair's similarity, so that 64 slots surely report it.
            "-t",
            "0.6",
        ])
        .ok();
    let p = run.params();
    assert_eq!(
        (
            p["num_perm"].as_u64(),
            p["bands"].as_u64(),
            p["rows"].as_u64()
        ),
        (Some(64), Some(16), Some(4))
    );
    let config = ScanConfig::with_strategy(StrategyConfig::Signatures(SignatureConfig {
        sketch: SketchKind::Fss,
        num_perm: 64,
        lsh: LshParams { bands: 16, rows: 4 },
    }));
    let e = library_estimate(
        &config,
        &d.read("docs/original.txt"),
        &d.read("docs/edited.txt"),
    );
    let pair = run.expect_pair("docs/edited.txt", "docs/original.txt");
    assert_eq!(pair.estimate, e);
    assert_eq!((pair.estimate * 64.0).fract(), 0.0);
    // Any width works: the tuner bands it for the threshold within the 100 slots.
    let run = d.scan().args(["docs", "--num-perm", "100"]).ok();
    let p = run.params();
    assert_eq!(p["num_perm"], 100);
    let used = p["bands"].as_u64().unwrap() * p["rows"].as_u64().unwrap();
    assert_eq!(used + p["unbanded_slots"].as_u64().unwrap(), 100);
    eqnice!(owned(&PLANTED_PAIRS), run.pair_ids());
}

#[test]
fn bands_and_rows_set_the_s_curve() {
    // A pair at Jaccard ~0.35: almost never a candidate with 16 bands of 8 (threshold 0.71),
    // almost always with 64 bands of 2 (threshold 0.125).
    let d = two(&text(20, 150), &edited(20, 150, 45));
    let j = library_jaccard(&ScanConfig::default(), &d.read("a.txt"), &d.read("b.txt"));
    assert!((0.2..0.5).contains(&j), "{j}");
    let none = ["a.txt", "b.txt", "--verify", "none"];

    let run = d.scan().args(none).ok();
    assert_eq!(run.count("candidates"), 0);
    let run = d
        .scan()
        .args(none)
        .args(["--bands", "64", "--rows", "2"])
        .ok();
    assert_eq!(run.count("candidates"), 1);
    run.expect_pair(AB.0, AB.1);
    let p = run.params();
    assert_eq!(
        (
            p["num_perm"].as_u64(),
            p["bands"].as_u64(),
            p["rows"].as_u64()
        ),
        (Some(128), Some(64), Some(2))
    );
    assert_eq!(p["lsh_threshold"], 0.125);
    // Short forms, and num-perm derived from bands x rows.
    let run = d.scan().args(none).args(["-b", "32", "-r", "2"]).ok();
    assert_eq!(run.params()["num_perm"], 64);
}

#[test]
fn seed_gives_reproducible_output_and_is_recorded() {
    let d = planted();
    let args = ["docs", "--verify", "signature", "-t", "0.5"];
    let first = d.scan().args(args).args(["--seed", "7"]).ok();
    let second = d.scan().args(args).args(["--seed", "7"]).ok();
    eqnice!(first.stdout, second.stdout);
    assert_eq!(first.params()["seed"], 7);

    let default = d.scan().args(args).ok();
    assert_eq!(default.params()["seed"], 42);
    let e7 = first
        .expect_pair("docs/edited.txt", "docs/original.txt")
        .estimate;
    default.expect_pair("docs/edited.txt", "docs/original.txt");
    let config = ScanConfig {
        seed: 7,
        ..Default::default()
    };
    // Another seed, another sample: the signatures differ (two estimates out of 128 may not).
    let signature = |seed| {
        let config = ScanConfig {
            seed,
            ..Default::default()
        };
        ndup::find::Pipeline::new(config)
            .unwrap()
            .signature(&d.read("docs/original.txt"))
            .unwrap()
    };
    assert_ne!(signature(7), signature(42));
    assert_eq!(
        e7,
        library_estimate(
            &config,
            &d.read("docs/original.txt"),
            &d.read("docs/edited.txt")
        )
    );
}

#[test]
fn max_bucket_links_big_buckets_as_stars() {
    let d = Dir::new();
    let body = text(21, 50);
    for i in 0..30 {
        d.create(&format!("copies/c{i:02}.txt"), &body);
    }
    let all = d.scan().arg("copies").ok();
    assert_eq!(all.pairs().len(), 30 * 29 / 2);
    assert_eq!(all.count("oversized_buckets"), 0);

    let star = d.scan().args(["copies", "--max-bucket", "5"]).ok();
    let pairs = star.pair_ids();
    assert_eq!(pairs.len(), 29);
    assert!(
        pairs.iter().all(|(a, _)| a == "copies/c00.txt"),
        "{pairs:?}"
    );
    // Every band holds the 30 copies in one bucket.
    assert_eq!(
        Some(star.count("oversized_buckets")),
        star.params()["bands"].as_u64()
    );
    assert_eq!(star.count("candidates"), 29);
    assert_eq!(star.params()["max_bucket"], 5);
    // The star keeps the cluster whole.
    let clusters = d
        .scan()
        .args(["copies", "--max-bucket", "5", "--clusters"])
        .ok();
    assert_eq!(clusters.clusters().len(), 1);
    assert_eq!(clusters.clusters()[0].len(), 30);
    assert!(star.stderr.contains("29 pairs"), "{}", star.describe());
    // The pairs left out are said where a person reads, not only in the JSON summary.
    assert!(
        star.stderr.starts_with(
            "ndup: note: 18 buckets held more than --max-bucket 5 documents and were linked as \
             stars around their first member: pairs of their other members were not compared"
        ),
        "{}",
        star.describe()
    );
    assert!(!all.stderr.contains("note:"), "{}", all.describe());
}

// ---------------------------------------------------------------------------------------------
// Verification

#[test]
fn verify_exact_adds_the_exact_jaccard_to_every_pair() {
    let d = planted();
    let run = d.scan().args(["docs", "--verify", "exact"]).ok();
    eqnice!(owned(&PLANTED_PAIRS), run.pair_ids());
    let j = library_jaccard(
        &ScanConfig::default(),
        &d.read("docs/original.txt"),
        &d.read("docs/edited.txt"),
    );
    for p in run.pairs() {
        let want = if p.a == "docs/original.txt" { 1.0 } else { j };
        assert_eq!(p.jaccard, Some(want), "{p:?}");
    }
    assert_eq!(run.count("exact_checked"), 3);
    assert_eq!(run.params()["verify"], "exact");
}

#[test]
fn verify_signature_never_computes_the_exact_jaccard() {
    let d = planted();
    let run = d.scan().args(["docs", "--verify", "signature"]).ok();
    assert_eq!(run.count("exact_checked"), 0);
    for p in run.pairs() {
        assert_eq!(p.jaccard, None, "{p:?}");
        assert!(p.estimate >= 0.8);
    }
    assert_eq!(run.params()["verify"], "signature");
    // Auto, by contrast, verified the edited pairs exactly.
    let auto = d.scan().args(["docs", "--verify", "auto"]).ok();
    assert_eq!(auto.count("exact_checked"), 2);
    assert!(
        auto.pair("docs/edited.txt", "docs/original.txt")
            .unwrap()
            .jaccard
            .is_some()
    );
}

#[test]
fn verify_none_reports_every_candidate() {
    let d = planted();
    // At 0.99 only the exact copy passes a real verification...
    let signature = d
        .scan()
        .args([
            "docs",
            "-t",
            "0.99",
            "-b",
            "16",
            "-r",
            "8",
            "--verify",
            "signature",
        ])
        .ok();
    eqnice!(owned(&[PLANTED_PAIRS[2]]), signature.pair_ids());
    let exact = d
        .scan()
        .args([
            "docs", "-t", "0.99", "-b", "16", "-r", "8", "--verify", "exact",
        ])
        .ok();
    eqnice!(owned(&[PLANTED_PAIRS[2]]), exact.pair_ids());
    // ...but every candidate is reported without one.
    let none = d
        .scan()
        .args([
            "docs", "-t", "0.99", "-b", "16", "-r", "8", "--verify", "none",
        ])
        .ok();
    eqnice!(owned(&PLANTED_PAIRS), none.pair_ids());
    assert_eq!(none.count("pairs"), none.count("candidates"));
    assert!(none.pairs().iter().all(|p| p.jaccard.is_none()));
}

// ---------------------------------------------------------------------------------------------
// Input

#[test]
fn follow_reads_symlinked_files_only_with_the_flag() {
    let d = Dir::new();
    let body = text(22, 100);
    d.create("outside/original.txt", &body);
    d.create("docs/copy.txt", &body);
    d.link("../outside/original.txt", "docs/link.txt");

    let plain = d.scan().arg("docs").ok();
    assert_eq!(plain.count("documents"), 1);
    assert!(plain.pairs().is_empty());

    for flag in ["--follow", "-L"] {
        let run = d.scan().args(["docs", flag]).ok();
        assert_eq!(run.count("documents"), 2);
        eqnice!(owned(&[("docs/copy.txt", "docs/link.txt")]), run.pair_ids());
    }
    // A link named on the command line is always read.
    let named = d.scan().args(["docs", "docs/link.txt"]).ok();
    eqnice!(
        owned(&[("docs/copy.txt", "docs/link.txt")]),
        named.pair_ids()
    );
}

#[test]
fn follow_walks_symlinked_directories() {
    let d = Dir::new();
    let body = text(23, 100);
    d.create("docs/a.txt", &body);
    d.create("elsewhere/b.txt", &body);
    d.link("../elsewhere", "docs/more");
    assert!(d.scan().arg("docs").ok().pairs().is_empty());
    let run = d.scan().args(["-L", "docs"]).ok();
    eqnice!(owned(&[("docs/a.txt", "docs/more/b.txt")]), run.pair_ids());
}

#[test]
fn version_and_help() {
    let d = Dir::new();
    let v = d.ndup().arg("--version").ok();
    eqnice!(format!("ndup {}\n", env!("CARGO_PKG_VERSION")), v.stdout);
    let h = d.scan().arg("--help").ok();
    assert!(
        h.stdout.contains("Usage: ndup scan [OPTIONS] [PATH]..."),
        "{}",
        h.stdout
    );
}

#[test]
fn short_flags_match_long_ones() {
    let d = planted();
    let long = d
        .scan()
        .args([
            "docs",
            "--threshold",
            "0.7",
            "--quiet",
            "--follow",
            "--bands",
            "32",
            "--rows",
            "4",
        ])
        .ok();
    let short = d
        .scan()
        .args(["docs", "-t", "0.7", "-q", "-L", "-b", "32", "-r", "4"])
        .ok();
    eqnice!(long.stdout, short.stdout);
    let w = d
        .scan()
        .args(["docs", "--shingle", "word", "-w", "3", "-k", "4"])
        .ok();
    let wl = d
        .scan()
        .args(["docs", "--shingle", "word", "--w", "3", "--k", "4"])
        .ok();
    eqnice!(w.stdout, wl.stdout);
}
