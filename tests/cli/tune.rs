//! `ndup tune`: the banding chosen for a threshold, explained, in text and JSON.

use super::util::Dir;

#[test]
fn tune_explains_the_default_choice_for_0_8() {
    let run = Dir::new().ndup().args(["tune", "--threshold", "0.8"]).ok();
    for line in [
        "threshold 0.8: 18 bands x 7 rows of 128 hash functions",
        "1 x (area under the S-curve below 0.8) + 100 x",
        "(1/b)^(1/r) = 0.6617",
        "note: slots 126..127 are in no LSH band",
        "       0.8  0.985542",
        "1.0 +",
        "s = 0.85: 0.10% never a candidate + <0.01% rejected by verification = 0.10%",
        "memory per million documents: about 1084 MB",
    ] {
        assert!(
            run.stdout.contains(line),
            "expected {line:?}\n{}",
            run.describe()
        );
    }
}

#[test]
fn tune_json_and_fixed_banding() {
    let d = Dir::new();
    let v = d
        .ndup()
        .args(["tune", "-t", "0.5", "--format", "json"])
        .ok()
        .json();
    assert_eq!(v["type"], "tune");
    assert_eq!(
        (v["bands"].as_u64(), v["rows"].as_u64()),
        (Some(39), Some(3))
    );
    assert_eq!(v["tuned"], true);
    assert_eq!(v["unbanded_slots"], 11);
    assert_eq!(v["curve"].as_array().unwrap().len(), 10);
    let fns = v["false_negatives"].as_array().unwrap();
    assert_eq!(fns[1]["s"], 0.55);
    // T + 0.05 is printed as a reader would write it, not as its binary sum (0.8500000000000001).
    for (t, s) in [("0.8", 0.85), ("0.9", 0.95), ("0.7", 0.75)] {
        let v = d
            .ndup()
            .args(["tune", "-t", t, "--format", "json"])
            .ok()
            .json();
        assert_eq!(v["false_negatives"][1]["s"], s, "-t {t}");
    }
    assert!(fns[1]["total"].as_f64().unwrap() < 0.005);
    assert_eq!(v["memory_per_million"]["signatures"], 512_000_000u64);

    // Explicit bands and rows are kept; no slot is left out, so there is no note.
    let run = d.ndup().args(["tune", "--bands", "16", "--rows", "8"]).ok();
    assert!(
        run.stdout.contains("16 bands x 8 rows of 128"),
        "{}",
        run.describe()
    );
    assert!(run.stdout.contains("as given"), "{}", run.describe());
    assert!(!run.stdout.contains("note:"), "{}", run.describe());
    // Equal weights put the curve at the threshold: a different, riskier choice.
    let v = d
        .ndup()
        .args([
            "tune",
            "--fp-weight",
            "1",
            "--fn-weight",
            "1",
            "--format",
            "json",
        ])
        .run()
        .json();
    assert_eq!(
        (v["bands"].as_u64(), v["rows"].as_u64()),
        (Some(9), Some(13))
    );
    // Signature-only verification loses about half of the pairs at T itself.
    let v = d
        .ndup()
        .args(["tune", "--verify", "signature", "--format", "json"])
        .args(["--num-perm", "64"])
        .run()
        .json();
    assert_eq!(v["num_perm"], 64);
    assert!(v["false_negatives"][0]["verification"].as_f64().unwrap() > 0.3);
}

#[test]
fn tune_usage_errors_exit_2() {
    let d = Dir::new();
    for (args, message) in [
        (
            &["--num-perm", "100", "--bands", "20", "--rows", "8"][..],
            "--bands 20 x --rows 8 = 160 but --num-perm is 100",
        ),
        (
            &["--threshold", "1.5"],
            "--threshold must be between 0 and 1",
        ),
        (&["--fn-weight=-1"], "--fn-weight must be a number >= 0"),
    ] {
        let run = d.ndup().arg("tune").args(args).code(2);
        assert!(run.stderr.contains(message), "{}", run.describe());
    }
}
