//! `ndup compare`: every measure of two documents.

use super::util::Dir;

#[test]
fn compare_prints_every_measure() {
    let d = Dir::new();
    d.create("a.txt", "Jack London travelled to Oakland");
    d.create("b.txt", "Jack London travelled to the city of Oakland");
    let v = d
        .ndup()
        .args(["compare", "a.txt", "b.txt", "--shingle", "word", "-w", "2"])
        .args(["--format", "json"])
        .ok()
        .json();
    assert_eq!(v["type"], "compare");
    assert_eq!(
        (v["shingles_a"].as_u64(), v["shingles_b"].as_u64()),
        (Some(4), Some(7))
    );
    assert_eq!(v["jaccard"], 0.375);
    assert_eq!(v["a_in_b"], 0.75);
    assert_eq!(v["params"]["shingle"], "word");
    assert_eq!(v["params"]["sketch"], "fss");
    assert_eq!(v["params"]["num_perm"], 128);
    let run = d
        .ndup()
        .args(["compare", "a.txt", "b.txt", "--shingle", "word", "-w", "2"])
        .ok();
    for line in [
        "exact Jaccard                        0.3750",
        "containment of A in B                0.7500",
        "containment of B in A                0.4286",
        "estimate (fss, 128 slots)",
    ] {
        assert!(
            run.stdout.contains(line),
            "expected {line:?}\n{}",
            run.describe()
        );
    }
}

#[test]
fn compare_bags_reproduce_mmds_example_3_2() {
    // Word 1-shingles turn the texts into the bags {a,a,a,b} and {a,a,b,b,c}.
    let d = Dir::new();
    d.create("a.txt", "a a a b");
    d.create("b.txt", "a a b b c");
    let words = ["compare", "a.txt", "b.txt", "--shingle", "word", "-w", "1"];
    let v = d.ndup().args(words).args(["--format", "json"]).run().json();
    assert_eq!(v["bag_jaccard_sum"], 1.0 / 3.0);
    assert_eq!(v["bag_jaccard_max"], 0.5);
    assert_eq!(v["jaccard"], 2.0 / 3.0);
    assert_eq!(
        (v["bag_size_a"].as_u64(), v["bag_size_b"].as_u64()),
        (Some(4), Some(5))
    );
    // With every shingle sampled, the modulo estimate is the exact Jaccard.
    let v = d
        .ndup()
        .args(words)
        .args(["--sketch", "modulo", "--modulo", "1", "--format", "json"])
        .run()
        .json();
    assert_eq!(v["estimate"], 2.0 / 3.0);
    assert_eq!(v["params"]["sketch"], "modulo");
    assert_eq!(v["params"]["modulo"], 1);
}

#[test]
fn compare_errors_name_the_file() {
    let d = Dir::new();
    d.create("a.txt", "some text");
    d.create("x.bin", b"ab\0cd");
    let run = d.ndup().args(["compare", "a.txt", "x.bin"]).code(2);
    assert!(
        run.stderr.contains("x.bin: binary file"),
        "{}",
        run.describe()
    );
    let run = d
        .ndup()
        .args(["compare", "a.txt", "/no/such/ndup-file"])
        .code(2);
    assert!(
        run.stderr.contains("/no/such/ndup-file"),
        "{}",
        run.describe()
    );
}
