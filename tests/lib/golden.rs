//! Golden tests: the worked examples of the seeds (MMDS chapter 3, the shingling posts and
//! slides) computed by the library, and the two statistical promises of the method, that a
//! MinHash signature estimates the Jaccard similarity without bias and that banded LSH makes a
//! pair of similarity `s` a candidate with probability `1 - (1 - s^r)^b`.
//!
//! The statistical tests use fixed seeds (so they cannot flake) and tolerances of five standard
//! errors (so a correct implementation passes for any seed, and a biased one does not).

use ndup::candidates::lsh::{LshIndex, LshParams};
use ndup::find::Pipeline;
use ndup::find::config::ScanConfig;
use ndup::sim::jaccard;
use ndup::sketch::minhash::{Signer, SketchKind, SketchParams, standard_error};
use ndup::text::normalize::{NormalizeOptions, normalize};
use ndup::text::shingle::{ShingleKind, ShingleOptions, Shingler};
use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::corpus::{Rng, known_pair};

fn shingler(kind: ShingleKind, size: usize) -> Shingler {
    Shingler::new(&ShingleOptions {
        kind,
        k: size,
        w: size,
        stopwords: None,
    })
    .unwrap()
}

/// The shingles of `text` after the default normalization, as a sorted list.
fn shingle_strings(kind: ShingleKind, size: usize, text: &str) -> Vec<String> {
    let norm = normalize(text, &NormalizeOptions::default());
    let mut s = shingler(kind, size).shingles(&norm);
    s.sort();
    s
}

fn sorted(v: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

/// MMDS example 3.3: the 2-shingles of `abcdabd` are {ab, bc, cd, da, bd}; `ab` appears twice in
/// the document but once in the set.
#[test]
fn mmds_example_3_3_char_2_shingles_of_abcdabd() {
    assert_eq!(
        shingle_strings(ShingleKind::Char, 2, "abcdabd"),
        sorted(&["ab", "bc", "cd", "da", "bd"])
    );
    // The hashed set is those five shingles through xxh3 with the seed, sorted and distinct.
    let seed = 42;
    let mut want: Vec<u64> = ["ab", "bc", "cd", "da", "bd"]
        .iter()
        .map(|s| xxh3_64_with_seed(s.as_bytes(), seed))
        .collect();
    want.sort_unstable();
    assert_eq!(
        shingler(ShingleKind::Char, 2).hash_set("abcdabd", seed),
        want
    );
}

/// The first seed's example: the 4-shingling of "to be or not to be, that is the question" is
/// exactly these seven (the comma is not a word).
#[test]
fn first_seed_word_4_shingles_of_to_be_or_not_to_be() {
    let text = "to be or not to be, that is the question";
    let want = [
        "to be or not",
        "be or not to",
        "or not to be",
        "not to be that",
        "to be that is",
        "be that is the",
        "that is the question",
    ];
    assert_eq!(shingle_strings(ShingleKind::Word, 4, text), sorted(&want));
    assert_eq!(shingler(ShingleKind::Word, 4).hash_set(text, 1).len(), 7);
    // Capitals and extra white space normalize away.
    let loud = "  To be or NOT to be,\n\tthat is the   question ";
    let p = Pipeline::new(ScanConfig {
        shingle: ShingleOptions {
            kind: ShingleKind::Word,
            w: 4,
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    assert_eq!(p.shingle_set(loud), p.shingle_set(text));
}

/// "a rose is a rose is a rose" has three distinct 4-word shingles (five with repeats).
#[test]
fn a_rose_is_a_rose_is_a_rose_has_three_distinct_4_shingles() {
    let text = "a rose is a rose is a rose";
    assert_eq!(
        shingle_strings(ShingleKind::Word, 4, text),
        sorted(&["a rose is a", "rose is a rose", "is a rose is"])
    );
    assert_eq!(shingler(ShingleKind::Word, 4).hash_set(text, 9).len(), 3);
}

/// The Jaccard similarity of two texts under word 2-shingles, through the library's own steps:
/// normalize, hash the shingle set, compare.
fn word2_jaccard(a: &str, b: &str) -> f64 {
    let opts = NormalizeOptions::default();
    let s = shingler(ShingleKind::Word, 2);
    jaccard(
        &s.hash_set(&normalize(a, &opts), 0),
        &s.hash_set(&normalize(b, &opts), 0),
    )
}

/// The third seed's example with word 2-shingles: J(D1, D2) = 3/8 and J(D1, D3) = 0, although
/// D3 has the same words as D1.
#[test]
fn jack_london_word_2_shingles() {
    let d1 = "Jack London travelled to Oakland";
    let d2 = "Jack London travelled to the city of Oakland";
    let d3 = "Jack travelled from Oakland to London";
    assert_eq!(word2_jaccard(d1, d2), 3.0 / 8.0);
    assert_eq!(word2_jaccard(d1, d3), 0.0);
    assert_eq!(
        shingle_strings(ShingleKind::Word, 2, d1),
        sorted(&[
            "jack london",
            "london travelled",
            "travelled to",
            "to oakland"
        ])
    );
    // Single words do not see the order: D1 and D3 share four of their five words.
    let s1 = shingler(ShingleKind::Word, 1);
    let n = |t: &str| normalize(t, &NormalizeOptions::default());
    assert_eq!(
        jaccard(&s1.hash_set(&n(d1), 0), &s1.hash_set(&n(d3), 0)),
        5.0 / 6.0
    );
}

/// MMDS exercise 3.1.1: the Jaccard similarities of {1,2,3,4}, {2,3,5,7} and {2,4,6}.
#[test]
fn mmds_exercise_3_1_1() {
    let s1 = [1, 2, 3, 4];
    let s2 = [2, 3, 5, 7];
    let s3 = [2, 4, 6];
    assert_eq!(jaccard(&s1, &s2), 1.0 / 3.0);
    assert_eq!(jaccard(&s1, &s3), 2.0 / 5.0);
    assert_eq!(jaccard(&s2, &s3), 1.0 / 6.0);
    // Symmetric, and 1 on itself.
    assert_eq!(jaccard(&s2, &s1), 1.0 / 3.0);
    assert_eq!(jaccard(&s3, &s3), 1.0);
}

/// The library's estimate from two signatures made with `params`: their `Signature::jaccard`.
fn estimate(params: SketchParams, a: &[u32], b: &[u32]) -> f64 {
    let sig = |s: &[u32]| ndup::Signature::from_parts(params, s.to_vec()).unwrap();
    sig(a).jaccard(&sig(b)).unwrap()
}

/// For each sketch and several similarities, every estimate lies within five standard errors
/// of the true Jaccard, and so does the mean of the estimates (which catches a bias too small
/// to see in one pair).
#[test]
fn minhash_estimates_the_jaccard_similarity_without_bias() {
    const NUM_PERM: usize = 128;
    const TRIALS: u64 = 40;
    for kind in [SketchKind::Fss, SketchKind::Oph, SketchKind::Classic] {
        let signer = Signer::new(SketchParams {
            kind,
            num_perm: NUM_PERM,
            seed: 42,
        })
        .unwrap();
        for &(n, shared) in &[(300u64, 50u64), (300, 200), (300, 270), (40, 36)] {
            let j = shared as f64 / (2 * n - shared) as f64;
            let se = standard_error(j, NUM_PERM);
            let mut sum = 0.0;
            for t in 0..TRIALS {
                let (a, b) = known_pair(n, shared, t);
                let (sa, sb) = (signer.sign(&a), signer.sign(&b));
                let e = estimate(signer.params(), &sa, &sb);
                assert!(
                    (e - j).abs() < 5.0 * se,
                    "{kind:?} J={j:.3}: estimate {e} on trial {t}"
                );
                sum += e;
            }
            let mean = sum / TRIALS as f64;
            let se_mean = se / (TRIALS as f64).sqrt();
            assert!(
                (mean - j).abs() < 5.0 * se_mean,
                "{kind:?} J={j:.3}: mean estimate {mean} (standard error {se_mean:.4})"
            );
        }
    }
}

/// The same through the whole default pipeline on text: normalized, 9-shingled and signed with
/// the default sketch, edited copies of generated documents are estimated within five standard
/// errors of their exact Jaccard.
#[test]
fn pipeline_signatures_estimate_the_exact_jaccard_of_edited_texts() {
    let p = Pipeline::new(ScanConfig::default()).unwrap();
    let num_perm = p.config().signatures().unwrap().num_perm;
    let mut deviation = 0.0;
    let mut variance = 0.0;
    let mut pairs = 0;
    for doc in 0..30u64 {
        let words = Rng::new(doc).words(200);
        for edits in [2usize, 10, 30, 60] {
            let mut other = words.clone();
            let mut positions = Rng::new(doc << 20 | edits as u64);
            for e in 0..edits {
                other[positions.below(200)] = format!("edit{e}");
            }
            let (a, b) = (words.join(" "), other.join(" "));
            let j = jaccard(&p.shingle_set(&a), &p.shingle_set(&b));
            let (sa, sb) = (p.signature(&a).unwrap(), p.signature(&b).unwrap());
            let e = estimate(p.config().sketch_params(), &sa, &sb);
            let se = standard_error(j, num_perm);
            assert!(
                (e - j).abs() < 5.0 * se.max(0.5 / num_perm as f64),
                "doc {doc}, {edits} edits: estimate {e}, exact {j}"
            );
            deviation += e - j;
            variance += se * se;
            pairs += 1;
        }
    }
    // Unbiased: the summed deviation is within five standard errors of zero.
    assert!(
        deviation.abs() < 5.0 * variance.sqrt(),
        "mean deviation {} over {pairs} pairs",
        deviation / pairs as f64
    );
}

/// MMDS figure 3.7: the S-curve for b = 20, r = 5, to the book's precision.
#[test]
fn s_curve_for_20_bands_of_5_matches_mmds_figure_3_7() {
    let p = LshParams { bands: 20, rows: 5 };
    for (s, want) in [
        (0.2, 0.006),
        (0.3, 0.047),
        (0.4, 0.186),
        (0.5, 0.470),
        (0.6, 0.802),
        (0.7, 0.975),
        (0.8, 0.9996),
    ] {
        let formula = 1.0 - (1.0 - f64::powi(s, 5)).powi(20);
        assert!((p.candidate_probability(s) - formula).abs() < 1e-12);
        let digits = if s == 0.8 { 1e-4 } else { 1e-3 };
        assert!(
            (formula - want).abs() <= digits / 2.0 + 1e-12,
            "s={s}: {formula}"
        );
    }
    // The threshold, where the curve is steepest: (1/20)^(1/5) ~ 0.55.
    assert!((p.threshold() - 0.549).abs() < 1e-3);
}

/// Banding real signatures: among pairs of known similarity `s`, the share that becomes an LSH
/// candidate with b = 20, r = 5 is within five binomial standard errors of 1 - (1 - s^5)^20.
#[test]
fn lsh_candidate_rate_follows_the_s_curve() {
    const TRIALS: u64 = 250;
    const N: u64 = 100;
    let params = LshParams { bands: 20, rows: 5 };
    for kind in [SketchKind::Fss, SketchKind::Classic] {
        let signer = Signer::new(SketchParams {
            kind,
            num_perm: 100,
            seed: 7,
        })
        .unwrap();
        for shared in [40u64, 62, 80, 94] {
            let s = shared as f64 / (2 * N - shared) as f64;
            // Pair t is documents 2t and 2t + 1; different pairs share no shingle.
            let mut sigs = Vec::new();
            for t in 0..TRIALS {
                let (a, b) = known_pair(N, shared, t);
                sigs.extend(signer.sign(&a));
                sigs.extend(signer.sign(&b));
            }
            let index = LshIndex::build(&sigs, 100, params).unwrap();
            let (planted, _) =
                index.candidates(1000, |a, b| (a % 2 == 0 && b == a + 1).then_some(()));
            let rate = planted.len() as f64 / TRIALS as f64;
            let p = 1.0 - (1.0 - s.powi(5)).powi(20);
            let se = (p * (1.0 - p) / TRIALS as f64)
                .sqrt()
                .max(1.0 / TRIALS as f64);
            assert!(
                (rate - p).abs() < 5.0 * se,
                "{kind:?} s={s:.3}: candidate rate {rate}, expected {p:.4}"
            );
        }
    }
}
