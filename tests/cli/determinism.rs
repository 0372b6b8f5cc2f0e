//! Same input and seed, byte-identical stdout, whatever the number of threads.

use super::util::Dir;
use crate::corpus::{edited, text};

/// A corpus of 300 documents in 12 directories: 60 families of an original, a light edit (about
/// 0.85 similar, verified exactly by auto), a heavy edit (rejected or verified) and an exact
/// copy, plus 60 unrelated documents. Enough pairs, candidates and exact checks for a race in
/// any phase to show as a different order or a different answer.
fn corpus() -> Dir {
    let d = Dir::new();
    for f in 0..60u64 {
        let dir = format!("corpus/d{:02}", f % 12);
        let seed = 1000 + f;
        d.create(&format!("{dir}/f{f:02}-original.txt"), text(seed, 80));
        d.create(&format!("{dir}/f{f:02}-light.txt"), edited(seed, 80, 2));
        d.create(&format!("{dir}/f{f:02}-heavy.txt"), edited(seed, 80, 6));
        d.create(&format!("corpus/copies/f{f:02}-copy.txt"), text(seed, 80));
        d.create(&format!("{dir}/u{f:02}.txt"), text(5000 + f, 80));
    }
    d
}

#[test]
fn output_is_identical_with_one_or_two_rayon_threads() {
    let d = corpus();
    let one = d.scan().arg("corpus").env("RAYON_NUM_THREADS", "1").ok();
    let two = d.scan().arg("corpus").env("RAYON_NUM_THREADS", "2").ok();
    // The corpus is not trivial: every family is found, some pairs verified exactly.
    assert_eq!(one.count("documents"), 300);
    assert!(one.pairs().len() >= 180, "{}", one.pairs().len());
    assert!(one.count("exact_checked") > 0);
    assert!(one.pairs().iter().any(|p| p.jaccard.is_some()));
    eqnice!(one.stdout, two.stdout);

    let c1 = d
        .scan()
        .args(["corpus", "--clusters"])
        .env("RAYON_NUM_THREADS", "1")
        .ok();
    let c2 = d
        .scan()
        .args(["corpus", "--clusters"])
        .env("RAYON_NUM_THREADS", "2")
        .ok();
    assert_eq!(c1.clusters().len(), 60);
    eqnice!(c1.stdout, c2.stdout);
}

#[test]
fn output_is_identical_with_threads_1_and_2() {
    let d = corpus();
    let args = ["corpus", "--verify", "exact", "--sketch", "oph"];
    let one = d.scan().args(args).args(["--threads", "1"]).ok();
    let two = d.scan().args(args).args(["-j", "2"]).ok();
    assert!(one.pairs().len() >= 180);
    eqnice!(one.stdout, two.stdout);
    // --threads is global: it may come before the command, and wins over the environment.
    let before = d
        .ndup()
        .args(["-j", "2", "scan"])
        .args(args)
        .env("RAYON_NUM_THREADS", "1")
        .ok();
    eqnice!(one.stdout, before.stdout);
    let text1 = d
        .scan()
        .args(["corpus", "--format", "text", "-j", "1"])
        .ok();
    let text2 = d
        .scan()
        .args(["corpus", "--format", "text", "-j", "2"])
        .ok();
    eqnice!(text1.stdout, text2.stdout);
}
