//! Scale behaviour that must hold without timing anything (speed is shown by the benchmarks):
//! a bucket with tens of thousands of identical documents must be linked as a star, in linear
//! work, and still give one cluster holding every copy.

use std::fs;

use super::util::Dir;

#[test]
fn fifty_thousand_identical_documents_form_one_star_cluster() {
    let d = Dir::new();
    // Short documents keep the test fast in a debug build; 50 directories of 1,000 files.
    // The copies are hard links to one file: one system call each instead of three, which
    // keeps the setup fast on a busy disk; ndup still reads each path as its own document.
    let original = d.create(
        "original.txt",
        "Copyright (c) the authors. Permission is granted to copy and distribute.\n",
    );
    for dir in 0..50 {
        let sub = format!("docs/d{dir:02}");
        d.mkdir(&sub);
        for f in 0..1000 {
            fs::hard_link(&original, d.path().join(format!("{sub}/f{f:03}.txt"))).unwrap();
        }
    }
    let run = d
        .scan()
        .args(["--clusters", "--verify", "signature", "-q", "docs"])
        .ok();
    let clusters = run.of_type("cluster");
    assert_eq!(clusters.len(), 1);
    assert_eq!(clusters[0]["size"], 50_000);
    let members = clusters[0]["members"].as_array().unwrap();
    assert!(members[0].as_str().unwrap().ends_with("d00/f000.txt"));
    assert!(members[49_999].as_str().unwrap().ends_with("d49/f999.txt"));
    let summary = run.summary();
    assert_eq!(summary["documents"], 50_000);
    // Every band holds one bucket of 50,000: each is a star around its first member, so the
    // pairs are the 49,999 star edges, each considered once, instead of 1.25 billion pairs.
    let params = run.params();
    assert_eq!(summary["oversized_buckets"], params["bands"]);
    assert_eq!(summary["candidates"], 49_999);
    assert_eq!(summary["pairs"], 49_999);
}
