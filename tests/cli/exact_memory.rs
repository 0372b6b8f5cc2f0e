//! `ndup scan --exact --max-memory` on corpora whose pairs take the memory, not their sets:
//! identical and near-identical documents pair quadratically, and the cap applies to the pairs
//! as soon as they are known (those of identical documents before the join, the others as the
//! join finds them), with the same refusal as a corpus whose sets are too large.

use std::collections::HashSet;

use super::exact::{bytes_of, size_after};
use super::util::{Dir, Run};

/// Documents in each corpus: 44,850 pairs.
const DOCS: usize = 300;
const PAIRS: usize = DOCS * (DOCS - 1) / 2;

/// A cap the sets pass (they take about 1 MiB with everything beside them) and the pairs do
/// not (a match and a record, 84 bytes, for each of them: 3.6 MiB).
const CAP: &str = "3M";

/// About 50 words, 300 characters.
fn text() -> String {
    let words: Vec<String> = (0..50).map(|i| format!("w{}q{}", i, i * i % 37)).collect();
    words.join(" ")
}

/// A JSON-lines corpus of `DOCS` records, `d000` to `d299`, the text of each from `text`.
fn corpus(text: impl Fn(usize) -> String) -> Dir {
    let d = Dir::new();
    let lines: String = (0..DOCS)
        .map(|i| format!("{{\"id\":\"d{i:03}\",\"text\":\"{}\"}}\n", text(i)))
        .collect();
    d.create("docs.jsonl", lines);
    d
}

/// Under a generous cap: every pair, once, with its estimate (which counts them all).
fn every_pair(d: &Dir) -> (Run, f64) {
    let run = d
        .scan()
        .args(["docs.jsonl", "--exact", "--max-memory", "1G"])
        .timeout(120)
        .ok();
    let pairs = run.pair_ids();
    assert_eq!(pairs.len(), PAIRS, "{}", run.describe());
    assert_eq!(pairs.iter().collect::<HashSet<_>>().len(), PAIRS);
    assert_eq!(run.count("pairs"), PAIRS as u64);
    let estimate = bytes_of(size_after(&run, "memory estimate "));
    assert!(estimate >= 84.0 * PAIRS as f64, "{}", run.describe());
    (run, estimate)
}

/// Under [`CAP`], with `flags`: exit 2, nothing reported, one line naming the estimate and the
/// way out. Returns the estimate it names.
fn refused(d: &Dir, flags: &[&str]) -> f64 {
    let run = d
        .scan()
        .args(["docs.jsonl", "--exact", "--max-memory", CAP])
        .args(flags)
        .timeout(60)
        .code(2);
    assert!(
        run.stdout.is_empty(),
        "nothing is reported\n{}",
        run.describe()
    );
    assert_eq!(run.stderr_lines().len(), 1, "{}", run.describe());
    for part in [
        "or more for this corpus, over --max-memory 3.0 MiB",
        "MinHash",
    ] {
        assert!(run.stderr.contains(part), "{part}\n{}", run.describe());
    }
    bytes_of(size_after(&run, "needs an estimated "))
}

#[test]
fn identical_documents_count_their_pairs_against_the_memory_limit() {
    let d = corpus(|_| text());
    let (run, estimate) = every_pair(&d);
    assert!(run.pairs().iter().all(|p| p.jaccard == Some(1.0)));
    // All the pairs are known once the copies are grouped, before the join: the refusal names
    // the whole estimate, the one the generous run printed.
    assert_eq!(refused(&d, &[]), estimate);
    // Clusters are formed from the pairs, so the same cap applies.
    assert_eq!(refused(&d, &["--clusters"]), estimate);
}

#[test]
fn near_identical_documents_are_refused_as_the_join_finds_their_pairs() {
    // Distinct documents, each with a word of its own: every pair passes 0.8, and none is
    // known before the join.
    let d = corpus(|i| format!("{} own{i:03}", text()));
    let (run, estimate) = every_pair(&d);
    assert!(run.pairs().iter().all(|p| p.jaccard < Some(1.0)));
    // Refused once the pairs found pass the cap: the estimate named is what was counted by
    // then, over the cap and short of the whole.
    let needed = refused(&d, &[]);
    assert!(
        needed >= 3.0 * 1024.0 * 1024.0 && needed < estimate,
        "{needed} {estimate}"
    );
}
