//! The scan flags of the sketches and the tuner: `--containment`, `--sketch modulo` and
//! `supershingle` with their sizes, and the banding chosen for `--threshold` and the weights.

use serde_json::Value;

use super::util::Dir;
use crate::corpus::text;

#[test]
fn scan_containment_finds_a_quote_plain_jaccard_misses() {
    let d = Dir::new();
    let quote = text(1, 80);
    d.create(
        "docs/long.txt",
        format!("{} {} {}", text(2, 300), quote, text(3, 300)),
    );
    d.create("docs/quote.txt", &quote);
    d.create("docs/other.txt", text(4, 200));
    let plain = d.scan().arg("docs").run();
    assert!(plain.records().iter().all(|v| v["type"] != "pair"));
    let recs = d.scan().args(["docs", "--containment"]).ok().records();
    assert_eq!(recs[0]["measure"], "containment");
    assert_eq!(recs[0]["sketch"], "modulo");
    assert_eq!(recs[0]["modulo"], 16);
    let pairs: Vec<&Value> = recs.iter().filter(|v| v["type"] == "pair").collect();
    assert_eq!(pairs.len(), 1);
    assert!(pairs[0]["a"].as_str().unwrap().ends_with("long.txt"));
    assert_eq!(pairs[0]["b_in_a"], 1.0);
    assert!(pairs[0]["a_in_b"].as_f64().unwrap() < 0.3);
    let run = d
        .scan()
        .args(["docs", "--containment", "--format", "text", "-q"])
        .ok();
    assert!(run.stdout.contains("a in b 0.1"), "{}", run.describe());
    assert!(run.stdout.contains("b in a 1.0000"), "{}", run.describe());
    // Exact verification reports exact containment and Jaccard.
    let recs = d
        .scan()
        .args(["docs", "--containment", "--verify", "exact"])
        .run()
        .records();
    let p = recs.iter().find(|v| v["type"] == "pair").unwrap();
    assert_eq!(p["b_in_a"], 1.0);
    assert!(p["jaccard"].as_f64().unwrap() < 0.2);
}

#[test]
fn scan_sketch_flags_and_their_errors() {
    let d = Dir::new();
    let base = text(7, 400);
    d.create("docs/a.txt", &base);
    d.create("docs/b.txt", format!("{base} and one more line"));
    d.create("docs/c.txt", text(8, 400));
    for (sketch, extra) in [
        ("modulo", vec!["--modulo", "8"]),
        ("supershingle", vec!["--supershingle-size", "3"]),
    ] {
        let recs = d
            .scan()
            .args(["docs", "--sketch", sketch])
            .args(&extra)
            .ok()
            .records();
        assert_eq!(recs[0]["sketch"], sketch);
        let pairs: Vec<&Value> = recs.iter().filter(|v| v["type"] == "pair").collect();
        assert_eq!(pairs.len(), 1, "{sketch}");
        assert!(pairs[0]["b"].as_str().unwrap().ends_with("b.txt"));
        assert!(pairs[0]["estimate"].as_f64().unwrap() > 0.9);
    }
    // The sample path is deterministic whatever the thread count.
    for args in [
        ["--sketch", "modulo"],
        ["--sketch", "supershingle"],
        ["--containment", "-q"],
    ] {
        let run = |threads: &str| {
            d.scan()
                .arg("docs")
                .args(args)
                .env("RAYON_NUM_THREADS", threads)
                .run()
                .stdout
        };
        eqnice!(run("1"), run("2"), "{args:?}");
    }
    let recs = d
        .scan()
        .args([
            "docs",
            "--sketch",
            "supershingle",
            "--supershingle-size",
            "3",
        ])
        .run()
        .records();
    assert_eq!(recs[0]["supershingle_size"], 3);
    assert_eq!(recs[0]["modulo"], 16);
    for (args, message) in [
        (
            vec!["--containment", "--sketch", "fss"],
            "--containment compares shingle samples",
        ),
        (
            vec!["--containment", "--sketch", "supershingle"],
            "supershingles miss",
        ),
        (vec!["--modulo", "8"], "--modulo applies only to"),
        (
            vec!["--sketch", "modulo", "--supershingle-size", "3"],
            "--supershingle-size applies only",
        ),
        (
            vec!["--sketch", "modulo", "--modulo", "0"],
            "--modulo must be at least 1",
        ),
        (
            vec!["--sketch", "modulo", "--num-perm", "64"],
            "apply to signature sketches",
        ),
    ] {
        let run = d.scan().arg("docs").args(&args).code(2);
        assert!(run.stderr.contains(message), "{}", run.describe());
    }
}

/// The commands that keep signatures offer only signature sketches: their help listed modulo
/// and supershingle, `--modulo` and a default "modulo with --containment" they have no flag for.
#[test]
fn commands_that_keep_signatures_offer_only_signature_sketches() {
    let d = Dir::new();
    d.create("docs/a.txt", text(9, 50));
    let commands: [&[&str]; 4] = [
        &["dedup", "docs", "-o", "kept.txt"],
        &["sign", "docs", "--out", "shards"],
        &["index", "build", "docs", "--index", "i.db"],
        &["query", "docs", "--index", "i.db"],
    ];
    for command in commands {
        let help = d
            .ndup()
            .args(&command[..command.len() - 2])
            .arg("--help")
            .ok();
        assert!(
            help.stdout.contains("Sketch [default: fss]\n") && !help.stdout.contains("modulo"),
            "{}",
            help.describe()
        );
        let run = d.ndup().args(command).args(["--sketch", "modulo"]).code(2);
        assert!(
            run.stderr.contains("[possible values: fss, oph, classic]"),
            "{}",
            run.describe()
        );
        let run = d.ndup().args(command).args(["--modulo", "8"]).code(2);
        assert!(
            run.stderr
                .contains("error: unexpected argument '--modulo' found"),
            "{}",
            run.describe()
        );
    }
    let help = d.ndup().args(["compare", "--help"]).ok();
    assert!(
        help.stdout.contains("Sketch [default: fss]\n") && help.stdout.contains("modulo"),
        "{}",
        help.describe()
    );
}

#[test]
fn scan_banding_follows_the_threshold_and_says_what_is_unbanded() {
    let d = Dir::new();
    d.create("docs/a.txt", text(9, 50));
    let run = d.scan().args(["docs", "-t", "0.9"]).run();
    let p = run.params();
    assert_eq!(
        (p["bands"].as_u64(), p["rows"].as_u64()),
        (Some(11), Some(11))
    );
    assert_eq!(p["unbanded_slots"], 7);
    // The tuner's own choice is recorded, not repeated on stderr at every run...
    assert!(!run.stderr.contains("note:"), "{}", run.describe());
    // ...but a user who shapes the banding is told what is left out, and why.
    let run = d
        .scan()
        .args(["docs", "-t", "0.9", "--num-perm", "128"])
        .run();
    assert!(
        run.stderr
            .contains("ndup: note: slots 121..127 are in no LSH band"),
        "{}",
        run.describe()
    );
    assert!(run.stderr.contains("still count in the signature estimate"));
    // Explicit banding overrides the tuner; all slots banded, no note; -q silences it.
    let run = d
        .scan()
        .args(["docs", "--bands", "16", "--rows", "8"])
        .run();
    assert_eq!(run.records()[0]["bands"], 16);
    assert!(!run.stderr.contains("note:"), "{}", run.describe());
    let run = d.scan().args(["docs", "-q"]).ok();
    eqnice!("", run.stderr);
    // The weights reach the tuner.
    let p = d
        .scan()
        .args(["docs", "--fp-weight", "1", "--fn-weight", "1"])
        .run()
        .params();
    assert_eq!(
        (p["bands"].as_u64(), p["rows"].as_u64()),
        (Some(9), Some(13))
    );
}
