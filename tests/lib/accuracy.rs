//! Accuracy, proven: every sketch's estimator against generated pairs of known Jaccard, the LSH
//! S-curve against observed candidate rates, and whole scans against brute force on generated
//! corpora. Every random choice comes from a fixed seed, and every bound is several standard
//! errors wide, so these tests cannot flake; sizes are the smallest that still prove the point.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rayon::prelude::*;

use ndup::candidates::lsh::{LshIndex, LshParams};
use ndup::candidates::tune::Weights;
use ndup::find::config::{ScanConfig, StrategyConfig};
use ndup::find::{Pipeline, ScanReport};
use ndup::sim::Measure;
use ndup::sketch::minhash::{Signer, SketchKind, SketchParams, standard_error};
use ndup::sketch::sample::{SampleKind, SampleMatch, SampleParams, modulo_sample};
use ndup::verify::VerifyMode;

use crate::corpus::{Rng, draw, edit, known_pair, vocabulary};

// ---------------------------------------------------------------------------------------------
// Estimators
// ---------------------------------------------------------------------------------------------

/// The signature estimate of the hash sets `a` and `b`, signed by `s`: the library's.
fn estimate(s: &Signer, a: &[u64], b: &[u64]) -> f64 {
    let sign = |x: &[u64]| ndup::Signature::from_parts(s.params(), s.sign(x)).unwrap();
    sign(a).jaccard(&sign(b)).unwrap()
}

/// A sketch under test: its estimate for a pair, and the number of samples it rests on.
#[derive(Debug, Clone, Copy)]
enum Sketch {
    Signature(SketchKind, usize),
    Modulo(u64),
}

impl Sketch {
    fn estimate(&self, a: &[u64], b: &[u64], signer: Option<&Signer>) -> f64 {
        match *self {
            Sketch::Signature(..) => estimate(signer.unwrap(), a, b),
            Sketch::Modulo(m) => {
                SampleMatch::of(&modulo_sample(a, m), &modulo_sample(b, m)).jaccard()
            }
        }
    }

    /// Samples behind the estimate for a union of `union` elements.
    fn samples(&self, union: u64) -> f64 {
        match *self {
            Sketch::Signature(_, k) => k as f64,
            Sketch::Modulo(m) => union as f64 / m as f64,
        }
    }

    fn signer(&self) -> Option<Signer> {
        match *self {
            Sketch::Signature(kind, num_perm) => Some(
                Signer::new(SketchParams {
                    kind,
                    num_perm,
                    seed: 7,
                })
                .unwrap(),
            ),
            Sketch::Modulo(_) => None,
        }
    }
}

/// Checks unbiasedness and the error's size for one sketch over `trials` pairs per similarity:
/// the mean estimate is within 5 standard errors of the mean of J, and the mean squared error is
/// between 0.4 and 1.6 times J(1-J)/n (with 250 trials its own relative spread is about 9%, so
/// the upper bound is more than 6 of its standard errors away). FSS, OPH and modulo sampling draw
/// without replacement and may be more precise than independent permutations, hence the lower
/// bound is loose; it still fails for an estimator that ignores most of its samples.
fn check_estimator(sketch: Sketch, n: u64, trials: u64) -> Vec<(f64, f64)> {
    let signer = sketch.signer();
    let mut out = Vec::new();
    for &frac in &[0.3, 0.6, 0.9] {
        let shared = (n as f64 * frac) as u64;
        let union = 2 * n - shared;
        let j = shared as f64 / union as f64;
        let k = sketch.samples(union);
        let (mut sum, mut sq) = (0.0, 0.0);
        for t in 0..trials {
            let (a, b) = known_pair(n, shared, t);
            let e = sketch.estimate(&a, &b, signer.as_ref());
            sum += e;
            sq += (e - j) * (e - j);
        }
        let mean = sum / trials as f64;
        let var = j * (1.0 - j) / k;
        let se_mean = (var / trials as f64).sqrt();
        assert!(
            (mean - j).abs() < 5.0 * se_mean,
            "{sketch:?} J={j:.3}: mean {mean:.4} is biased (se of mean {se_mean:.4})"
        );
        let mse = sq / trials as f64;
        let ratio = mse / var;
        assert!(
            (0.4..1.6).contains(&ratio),
            "{sketch:?} J={j:.3}: mean squared error {mse:.6} is {ratio:.2} x J(1-J)/n = {var:.6}"
        );
        out.push((j, mse.sqrt()));
    }
    out
}

#[test]
fn every_signature_sketch_is_unbiased_with_error_sqrt_j_1_minus_j_over_n() {
    for kind in [SketchKind::Fss, SketchKind::Oph, SketchKind::Classic] {
        // The error must shrink like 1/sqrt(n): 16 times the slots, a quarter of the error.
        let small = check_estimator(Sketch::Signature(kind, 8), 600, 250);
        let large = check_estimator(Sketch::Signature(kind, 128), 600, 250);
        for ((j, e8), (_, e128)) in small.iter().zip(&large) {
            let shrink = e8 / e128;
            // Expected 4 (a little more for FSS/OPH, whose 128 slots sample 660 to 1,000
            // elements without replacement).
            assert!(
                (2.5..5.5).contains(&shrink),
                "{kind:?} J={j:.3}: error 8 slots {e8:.4} / 128 slots {e128:.4} = {shrink:.2}"
            );
        }
    }
}

#[test]
fn modulo_sample_is_unbiased_with_error_sqrt_j_1_minus_j_over_n() {
    // n is the sampled union, |A ∪ B| / M; supershingles use the same estimate for verification.
    let coarse = check_estimator(Sketch::Modulo(64), 1600, 250);
    let fine = check_estimator(Sketch::Modulo(4), 1600, 250);
    for ((j, e64), (_, e4)) in coarse.iter().zip(&fine) {
        let shrink = e64 / e4;
        // 16 times the samples: error about 4 times smaller (more with the finite population).
        assert!(
            (2.5..6.5).contains(&shrink),
            "J={j:.3}: {e64:.4} / {e4:.4} = {shrink:.2}"
        );
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, RngSeed};

    proptest! {
        #![proptest_config(Config {
            cases: 48,
            rng_seed: RngSeed::Fixed(2024),
            failure_persistence: None,
            ..Config::default()
        })]

        /// For any pair of sets, every sketch's single estimate lies within 6 standard errors
        /// of the true Jaccard (a miss has probability below 1e-8 per case), is symmetric, and
        /// is 1 for a set against itself.
        #[test]
        fn every_sketch_estimates_any_pair(
            n in 200u64..1200,
            frac in 0.0f64..1.0,
            trial in 0u64..1_000_000,
        ) {
            let shared = (n as f64 * frac) as u64;
            let (a, b) = known_pair(n, shared, trial);
            let union = 2 * n - shared;
            let j = shared as f64 / union as f64;
            for sketch in [
                Sketch::Signature(SketchKind::Fss, 128),
                Sketch::Signature(SketchKind::Oph, 128),
                Sketch::Signature(SketchKind::Classic, 64),
                Sketch::Modulo(8),
            ] {
                let signer = sketch.signer();
                let e = sketch.estimate(&a, &b, signer.as_ref());
                let se = standard_error(j, 1).max(0.05) / sketch.samples(union).sqrt();
                prop_assert!((e - j).abs() <= 6.0 * se, "{:?}: {} vs {}", sketch, e, j);
                prop_assert_eq!(e, sketch.estimate(&b, &a, signer.as_ref()));
                prop_assert_eq!(sketch.estimate(&a, &a, signer.as_ref()), 1.0);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The S-curve
// ---------------------------------------------------------------------------------------------

/// The observed candidate rate of `trials` pairs at each similarity must be within 5 binomial
/// standard errors (at least 0.005) of 1 - (1 - s^r)^b.
fn check_s_curve(kind: SketchKind, lsh: LshParams, num_perm: usize, trials: u64) {
    let signer = Signer::new(SketchParams {
        kind,
        num_perm,
        seed: 11,
    })
    .unwrap();
    // Sets of 200: s = 0.43, 0.67, 0.82 for 120, 160, 180 shared shingles.
    for &shared in &[120u64, 160, 180] {
        let s = shared as f64 / (400 - shared) as f64;
        let mut sigs = Vec::new();
        for t in 0..trials {
            let (a, b) = known_pair(200, shared, t + 10_000);
            sigs.extend(signer.sign(&a));
            sigs.extend(signer.sign(&b));
        }
        let idx = LshIndex::build(&sigs, num_perm, lsh).unwrap();
        // Only the planted pairs (2t, 2t+1) count: other pairs are unrelated.
        let (found, _) = idx.candidates(1000, |a, b| (b == a + 1 && a % 2 == 0).then_some(()));
        let rate = found.len() as f64 / trials as f64;
        let p = lsh.candidate_probability(s);
        let se = (p * (1.0 - p) / trials as f64).sqrt().max(0.005);
        assert!(
            (rate - p).abs() < 5.0 * se,
            "{kind:?} {lsh:?} s={s:.3}: observed {rate:.4}, S-curve {p:.4}"
        );
    }
}

#[test]
fn candidate_rate_follows_the_s_curve_for_several_bandings() {
    for (b, r) in [(18, 7), (39, 3), (11, 11), (16, 8)] {
        check_s_curve(SketchKind::Fss, LshParams { bands: b, rows: r }, 128, 300);
    }
    for kind in [SketchKind::Oph, SketchKind::Classic] {
        check_s_curve(kind, LshParams { bands: 18, rows: 7 }, 128, 200);
    }
}

// ---------------------------------------------------------------------------------------------
// Whole scans against brute force
// ---------------------------------------------------------------------------------------------

/// A generated corpus on disk with the exact Jaccard of every pair that shares a shingle.
struct Corpus {
    dir: PathBuf,
    /// (id a, id b) with a < b -> exact Jaccard of the shingle sets.
    truth: HashMap<(String, String), f64>,
    /// Number of near-duplicate copies written.
    copies: usize,
}

/// The estimators on real text rather than synthetic hashes: each trial draws a new seed, which
/// changes the shingle hash's keys and the sketch together, and signs the shingle sets the
/// shingler hashes from two texts. Char 9-shingles of ASCII take the folded-multiply window
/// hash, 5-shingles xxh3. The texts are prose with word edits and a table whose rows differ in
/// their last digits only (windows that share all but one byte, the hardest input for a cheap
/// hash). The check is the synthetic pairs' one, against the Jaccard of the shingle strings: the
/// mean estimate within 5 standard errors of J and the mean squared error 0.4 to 1.6 times
/// J(1-J)/128.
#[test]
fn text_shingles_give_unbiased_estimates() {
    use ndup::text::shingle::{ShingleKind, ShingleOptions, Shingler};
    use std::collections::HashSet;
    let mut rng = Rng::new(11);
    let vocab = vocabulary(&mut rng, 400);
    let base = draw(&mut rng, &vocab, 220);
    let table = |first: u32| -> String {
        (first..first + 50)
            .map(|i| format!("row {i:06} cell {:05}\n", i * 7919 % 100_000))
            .collect()
    };
    let texts = [
        (
            base.join(" "),
            edit(&mut rng, &base, &vocab, 0.04).join(" "),
        ),
        (
            base.join(" "),
            edit(&mut rng, &base, &vocab, 0.12).join(" "),
        ),
        (table(0), table(15)),
    ];
    let trials = 250;
    for k in [9, 5] {
        let shingler = Shingler::new(&ShingleOptions {
            kind: ShingleKind::Char,
            k,
            ..ShingleOptions::default()
        })
        .unwrap();
        for (a, b) in &texts {
            let strings = |t: &str| shingler.shingles(t).into_iter().collect::<HashSet<_>>();
            let (sa, sb) = (strings(a), strings(b));
            let j = sa.intersection(&sb).count() as f64 / sa.union(&sb).count() as f64;
            assert!(
                (0.3..0.98).contains(&j),
                "k={k}: J={j:.3} is not a useful test"
            );
            for kind in [SketchKind::Fss, SketchKind::Oph] {
                let (mut sum, mut sq) = (0.0, 0.0);
                for seed in 0..trials {
                    let signer = Signer::new(SketchParams {
                        kind,
                        num_perm: 128,
                        seed,
                    })
                    .unwrap();
                    let (ha, hb) = (shingler.hash_set(a, seed), shingler.hash_set(b, seed));
                    assert_eq!((ha.len(), hb.len()), (sa.len(), sb.len()), "a collision");
                    let e = estimate(&signer, &ha, &hb);
                    sum += e;
                    sq += (e - j) * (e - j);
                }
                let mean = sum / trials as f64;
                let var = j * (1.0 - j) / 128.0;
                let se_mean = (var / trials as f64).sqrt();
                assert!(
                    (mean - j).abs() < 5.0 * se_mean,
                    "{kind:?} k={k} J={j:.3}: mean {mean:.4} is biased (se of mean {se_mean:.4})"
                );
                let ratio = sq / trials as f64 / var;
                assert!(
                    (0.4..1.6).contains(&ratio),
                    "{kind:?} k={k} J={j:.3}: mean squared error is {ratio:.2} x J(1-J)/128"
                );
            }
        }
    }
}

/// Writes `bases` original documents of `len` words, each followed by 0 to `max_copies`
/// near-duplicates whose edit rate is drawn from `rates`, into `CARGO_TARGET_TMPDIR/name`, and
/// computes the exact Jaccard of every pair by brute force.
fn build_corpus(
    name: &str,
    seed: u64,
    bases: usize,
    len: std::ops::Range<usize>,
    max_copies: usize,
    rates: &[f64],
) -> Corpus {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = Rng::new(seed);
    let vocab = vocabulary(&mut rng, 30_000);
    let mut texts: Vec<(String, String)> = Vec::new();
    let mut copies = 0;
    for i in 0..bases {
        let n = rng.range(len.clone());
        let words = draw(&mut rng, &vocab, n);
        texts.push((format!("d{i:05}-0.txt"), words.join(" ")));
        for c in 1..=rng.below(max_copies + 1) {
            let rate = *rng.pick(rates);
            let copy = edit(&mut rng, &words, &vocab, rate);
            texts.push((format!("d{i:05}-{c}.txt"), copy.join(" ")));
            copies += 1;
        }
    }
    for (id, text) in &texts {
        std::fs::write(dir.join(id), text).unwrap();
    }

    // Brute force: the exact shingle sets (the scan's own normalization and hashing), then the
    // intersection size of every pair that shares a shingle, through an inverted index. Pairs
    // that share nothing have Jaccard 0.
    let p = Pipeline::new(ScanConfig::default()).unwrap();
    let sets: Vec<Vec<u64>> = texts.par_iter().map(|(_, t)| p.shingle_set(t)).collect();
    let mut postings: Vec<(u64, u32)> = sets
        .iter()
        .enumerate()
        .flat_map(|(d, s)| s.iter().map(move |&h| (h, d as u32)))
        .collect();
    postings.par_sort_unstable();
    let mut pairs: Vec<(u32, u32)> = postings
        .chunk_by(|x, y| x.0 == y.0)
        .filter(|run| run.len() > 1)
        .flat_map(|run| {
            (0..run.len()).flat_map(move |i| (i + 1..run.len()).map(move |j| (run[i].1, run[j].1)))
        })
        .collect();
    pairs.par_sort_unstable();
    let inter = pairs
        .chunk_by(|x, y| x == y)
        .map(|c| (c[0], c.len() as u32));
    let id = |d: u32| {
        dir.join(&texts[d as usize].0)
            .to_string_lossy()
            .into_owned()
    };
    let truth = inter
        .into_iter()
        .map(|((a, b), n)| {
            let union = sets[a as usize].len() + sets[b as usize].len() - n as usize;
            let (x, y) = (id(a), id(b));
            let key = if x < y { (x, y) } else { (y, x) };
            (key, n as f64 / union as f64)
        })
        .collect();
    Corpus { dir, truth, copies }
}

/// About 2,000 documents of 40 to 110 words; the originals have up to two copies each, with
/// 0% to 22% of their words edited, so the Jaccard of the related pairs (copies of one original
/// are related too) spreads evenly from about 0.3 to 1 (one edited word changes about 14 char
/// 9-shingles, 2 words' worth).
fn spread_corpus() -> &'static Corpus {
    static C: OnceLock<Corpus> = OnceLock::new();
    C.get_or_init(|| {
        build_corpus(
            "recall-spread",
            1,
            1000,
            40..110,
            2,
            &[
                0.0, 0.003, 0.006, 0.01, 0.014, 0.02, 0.025, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1,
                0.12, 0.15, 0.18, 0.22,
            ],
        )
    })
}

/// A documentation-like corpus: longer pages, and most duplicates are near-identical (0 to 2%
/// of the words edited; one copy in seven at 5%).
fn docs_corpus() -> &'static Corpus {
    static C: OnceLock<Corpus> = OnceLock::new();
    C.get_or_init(|| {
        build_corpus(
            "recall-docs",
            2,
            500,
            80..250,
            2,
            &[0.0, 0.002, 0.005, 0.01, 0.01, 0.02, 0.05],
        )
    })
}

struct Figures {
    /// Pairs with exact Jaccard >= T + 0.05, and how many of them were reported.
    high: usize,
    high_found: usize,
    /// Pairs reported, and how many have exact Jaccard >= T - 0.05.
    reported: usize,
    reported_ok: usize,
    /// Reported pairs below T.
    below_t: usize,
}

impl Figures {
    fn recall(&self) -> f64 {
        self.high_found as f64 / self.high as f64
    }
    fn precision(&self) -> f64 {
        self.reported_ok as f64 / self.reported as f64
    }
}

fn run(corpus: &Corpus, config: ScanConfig) -> (ScanReport, Figures) {
    let t = config.threshold;
    let report = Pipeline::new(config)
        .unwrap()
        .scan(std::slice::from_ref(&corpus.dir))
        .unwrap();
    let j = |a: &str, b: &str| {
        corpus
            .truth
            .get(&(a.to_string(), b.to_string()))
            .copied()
            .unwrap_or(0.0)
    };
    let reported: Vec<f64> = report
        .pairs
        .iter()
        .map(|p| j(report.id(p.a), report.id(p.b)))
        .collect();
    let mut found: HashMap<(&str, &str), ()> = HashMap::new();
    for p in &report.pairs {
        found.insert((report.id(p.a), report.id(p.b)), ());
    }
    let high: Vec<_> = corpus
        .truth
        .iter()
        .filter(|(_, j)| **j >= t + 0.05)
        .collect();
    let f = Figures {
        high: high.len(),
        high_found: high
            .iter()
            .filter(|((a, b), _)| found.contains_key(&(a.as_str(), b.as_str())))
            .count(),
        reported: reported.len(),
        reported_ok: reported.iter().filter(|&&x| x >= t - 0.05).count(),
        below_t: reported.iter().filter(|&&x| x < t - 1e-12).count(),
    };
    eprintln!(
        "T={t} {:?} {:?}x{:?} verify={}: recall {}/{} = {:.4}, precision {}/{} = {:.4}, below T {}, \
         candidates {}, exact {}",
        report.params.sketch,
        report.params.bands,
        report.params.rows,
        report.params.verify.map_or("-", |v| v.name()),
        f.high_found,
        f.high,
        f.recall(),
        f.reported_ok,
        f.reported,
        f.precision(),
        f.below_t,
        report.stats.candidates,
        report.stats.exact_checked,
    );
    (report, f)
}

fn defaults(t: f64) -> ScanConfig {
    ScanConfig {
        threshold: t,
        ..Default::default()
    }
    .tuned(Weights::default())
    .unwrap()
}

fn check_defaults_against_brute_force(t: f64) {
    let corpus = spread_corpus();
    assert!(corpus.copies > 1000, "{} copies", corpus.copies);
    let (_, f) = run(corpus, defaults(t));
    // Enough pairs on both sides for 99.5% to mean something.
    assert!(
        f.high >= 300 && f.reported >= 300,
        "T={t}: {} / {}",
        f.high,
        f.reported
    );
    assert!(f.recall() >= 0.995, "T={t}: recall {:.4}", f.recall());
    assert!(
        f.precision() >= 0.995,
        "T={t}: precision {:.4}",
        f.precision()
    );

    let exact = ScanConfig {
        verify: VerifyMode::Exact,
        ..defaults(t)
    };
    let (report, f) = run(corpus, exact);
    assert_eq!(f.below_t, 0, "T={t}: --verify exact reported pairs below T");
    assert!(report.pairs.iter().all(|p| p.jaccard.unwrap() >= t));
    assert!(f.recall() >= 0.995, "T={t}: exact recall {:.4}", f.recall());
}

#[test]
fn defaults_meet_the_targets_against_brute_force_at_0_5() {
    check_defaults_against_brute_force(0.5);
}

#[test]
fn defaults_meet_the_targets_against_brute_force_at_0_8() {
    check_defaults_against_brute_force(0.8);
}

#[test]
fn defaults_meet_the_targets_against_brute_force_at_0_9() {
    check_defaults_against_brute_force(0.9);
}

#[test]
fn defaults_reach_99_9_percent_on_a_documentation_like_corpus() {
    let corpus = docs_corpus();
    let (_, f) = run(corpus, defaults(0.8));
    assert!(f.high > 500, "{}", f.high);
    assert!(f.recall() >= 0.999, "recall {:.4}", f.recall());
    assert!(f.precision() >= 0.999, "precision {:.4}", f.precision());
}

#[test]
fn modulo_and_supershingle_sketches_against_brute_force() {
    // The seed's sketches share the verification, so their precision holds too; modulo sampling
    // finds every pair sharing a sampled shingle, supershingles need runs of them.
    let corpus = spread_corpus();
    let sample = |kind| ScanConfig {
        strategy: StrategyConfig::Sample(SampleParams {
            kind,
            ..Default::default()
        }),
        ..defaults(0.8)
    };
    let (_, m) = run(corpus, sample(SampleKind::Modulo));
    assert!(m.recall() >= 0.995, "modulo recall {:.4}", m.recall());
    assert!(
        m.precision() >= 0.995,
        "modulo precision {:.4}",
        m.precision()
    );
    let (_, s) = run(corpus, sample(SampleKind::Supershingle));
    assert!(
        s.precision() >= 0.995,
        "supershingle precision {:.4}",
        s.precision()
    );
    // Documents here have 30 to 80 sampled hashes: runs of 4 at J >= 0.85 are plentiful.
    assert!(s.recall() >= 0.98, "supershingle recall {:.4}", s.recall());
}

#[test]
fn containment_finds_a_document_inside_a_much_larger_one() {
    // Paragraphs quoted inside long documents: Jaccard about 1/8, containment 1.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("containment");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = Rng::new(5);
    let vocab = vocabulary(&mut rng, 30_000);
    let mut words = |n: usize| draw(&mut rng, &vocab, n);
    for i in 0..40 {
        let quote = words(120);
        let mut long = words(500);
        long.splice(250..250, quote.iter().cloned());
        long.extend(words(300));
        std::fs::write(dir.join(format!("long{i:02}.txt")), long.join(" ")).unwrap();
        std::fs::write(dir.join(format!("quote{i:02}.txt")), quote.join(" ")).unwrap();
    }
    let planted = |r: &ScanReport| {
        r.pairs
            .iter()
            .filter(|p| {
                let (a, b) = (r.id(p.a), r.id(p.b));
                a.ends_with(&b[b.len() - 6..]) && a.contains("long") && b.contains("quote")
            })
            .count()
    };
    let jaccard = Pipeline::new(defaults(0.8))
        .unwrap()
        .scan(std::slice::from_ref(&dir))
        .unwrap();
    assert_eq!(planted(&jaccard), 0, "plain Jaccard cannot see them");
    // Containment compares samples (validate refuses it on signatures).
    let config = ScanConfig {
        measure: Measure::Containment,
        strategy: StrategyConfig::Sample(SampleParams::default()),
        ..defaults(0.8)
    };
    let r = Pipeline::new(config)
        .unwrap()
        .scan(std::slice::from_ref(&dir))
        .unwrap();
    assert_eq!(planted(&r), 40);
    assert_eq!(r.pairs.len(), 40, "nothing else is contained");
    for p in &r.pairs {
        // a = long, b = quote: the quote is entirely inside the long document.
        assert_eq!(p.b_in_a, Some(1.0), "{}", r.id(p.b));
        assert!(p.a_in_b.unwrap() < 0.2);
        assert!(p.jaccard.unwrap_or(p.estimate) < 0.2);
    }
}
