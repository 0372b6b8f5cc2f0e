//! Throughput of each stage of the pipeline, on deterministic generated inputs that look like the
//! real thing: English-like prose with punctuation, capitals and irregular white space, and a
//! Unicode variant (accents, Cyrillic, Greek, CJK, full-width letters, ligatures, combining marks)
//! that exercises NFKC.
//!
//! ```sh
//! cargo bench --bench stages               # all stages (about two minutes)
//! cargo bench --bench stages -- sign/      # one group
//! ```
//!
//! Text stages report MB/s of input; signing reports shingle hashes (tokens) per second; LSH
//! reports documents per second; verification reports pairs (signature) or set elements (exact
//! Jaccard) per second. `cargo test --all-targets` runs each benchmark once, in debug mode, as a
//! smoke test: it gets inputs sixteen times smaller so that it takes a second or two.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use ndup::candidates::lsh::{LshIndex, LshParams};
use ndup::find::Pipeline;
use ndup::find::config::{ScanConfig, SignatureConfig, StrategyConfig};
use ndup::sim::EXACT_SCREEN_Z;
use ndup::sim::{
    Core, OverlapTable, SKETCH_BINS, Split, bin_sketch, jaccard, jaccard_at_least,
    jaccard_screened, jaccard_screened_split, sketch_rejects,
};
use ndup::sketch::minhash::{Signer, SketchKind, SketchParams, agreement, fmix64};
use ndup::text::normalize::{NormalizeOptions, normalize_into};
use ndup::text::shingle::{ShingleOptions, Shingler};
use ndup::{MinHashLsh, Signature};

/// Divides the input sizes: 1 under `cargo bench`, 16 when `cargo test` runs the benchmarks once
/// as a smoke test (cargo passes `--bench` only to real benchmark runs).
fn shrink() -> usize {
    if std::env::args().any(|a| a == "--bench") {
        1
    } else {
        16
    }
}

/// Bytes of generated text per input: a megabyte.
fn text_bytes() -> usize {
    (1 << 20) / shrink()
}

const COMMON: &[&str] = &[
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "with",
    "be",
    "on",
    "not",
    "this",
    "by",
    "are",
    "or",
    "from",
    "at",
    "which",
    "an",
    "file",
    "option",
    "value",
    "default",
    "return",
    "system",
    "user",
    "set",
    "when",
    "if",
    "use",
    "see",
    "can",
    "will",
    "directory",
    "command",
    "output",
    "input",
    "error",
    "string",
    "function",
    "program",
    "line",
    "version",
    "license",
    "software",
    "copyright",
    "without",
    "warranty",
    "provided",
    "may",
];

const UNICODE: &[&str] = &[
    "café",
    "naïve",
    "über",
    "façade",
    "señor",
    "Ærø",
    "привет",
    "документ",
    "Ελληνικά",
    "日本語の文書",
    "中文文档",
    "ＡＢＣ",
    "ﬁle",
    "ﬂow",
    "e\u{301}te\u{301}",
    "Ångström",
    "№5",
    "½",
    "ｶﾀｶﾅ",
    "한국어",
];

/// Prose of about `bytes` bytes: Zipf-like word choice, sentences, paragraphs, odd spacing.
fn prose(bytes: usize, seed: u64, unicode: bool) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // A vocabulary of common words and generated ones, sampled with a skew towards the front.
    let mut vocab: Vec<String> = COMMON.iter().map(|w| w.to_string()).collect();
    for _ in 0..20_000 / shrink() {
        let len = rng.random_range(2..11);
        vocab.push(
            (0..len)
                .map(|_| rng.random_range(b'a'..=b'z') as char)
                .collect(),
        );
    }
    let mut s = String::with_capacity(bytes + 64);
    let mut start = true;
    while s.len() < bytes {
        let u: f64 = rng.random_range(0.0..1.0);
        let i = ((vocab.len() as f64).powf(u) as usize - 1).min(vocab.len() - 1);
        let word = if unicode && rng.random_bool(0.1) {
            UNICODE[rng.random_range(0..UNICODE.len())]
        } else {
            &vocab[i]
        };
        if start {
            let mut c = word.chars();
            if let Some(f) = c.next() {
                s.extend(f.to_uppercase());
                s.push_str(c.as_str());
            }
            start = false;
        } else {
            s.push_str(word);
        }
        match rng.random_range(0..100) {
            0..=5 => {
                s.push_str(".  ");
                start = true;
            }
            6..=8 => s.push_str(", "),
            9 => s.push_str("\n\n    "),
            10 => s.push('\n'),
            11 => s.push_str(" \t "),
            _ => s.push(' '),
        }
    }
    s
}

fn bench_normalize(c: &mut Criterion) {
    let mut g = c.benchmark_group("normalize");
    let opts = NormalizeOptions::default();
    for (name, unicode) in [("ascii", false), ("unicode", true)] {
        let text = prose(text_bytes(), 1, unicode);
        let mut out = String::new();
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(name, |b| {
            b.iter(|| normalize_into(black_box(&text), &opts, &mut out))
        });
    }
    g.finish();
}

fn bench_shingle(c: &mut Criterion) {
    let mut g = c.benchmark_group("shingle");
    let shingler = Shingler::new(&ShingleOptions::default()).unwrap();
    for (name, unicode) in [("char9-ascii", false), ("char9-unicode", true)] {
        let text =
            ndup::text::normalize::normalize(&prose(text_bytes(), 2, unicode), &Default::default());
        let mut out = Vec::new();
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(name, |b| {
            b.iter(|| {
                out.clear();
                shingler.hashes_into(black_box(&text), 42, &mut out);
            })
        });
    }
    g.finish();
}

/// Documents' shingle hashes: 256 documents of 1 to 8 KiB of prose each, as the pipeline makes
/// them.
fn documents(seed: u64) -> Vec<Vec<u64>> {
    let shingler = Shingler::new(&ShingleOptions::default()).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let text =
        ndup::text::normalize::normalize(&prose(text_bytes(), seed, false), &Default::default());
    let mut docs = Vec::new();
    let mut pos = 0;
    while pos + 8192 <= text.len() {
        let len = rng.random_range(1024..8192);
        let mut h = Vec::new();
        shingler.hashes_into(&text[pos..pos + len], 42, &mut h);
        docs.push(h);
        pos += len;
    }
    docs
}

const SKETCHES: [SketchKind; 3] = [SketchKind::Fss, SketchKind::Oph, SketchKind::Classic];

fn bench_sign(c: &mut Criterion) {
    let docs = documents(3);
    let tokens: usize = docs.iter().map(Vec::len).sum();
    let mut g = c.benchmark_group("sign");
    g.throughput(Throughput::Elements(tokens as u64));
    for kind in SKETCHES {
        let signer = Signer::new(SketchParams {
            kind,
            num_perm: 128,
            seed: 42,
        })
        .unwrap();
        let mut out = vec![0u32; 128];
        let mut scratch = Vec::new();
        g.bench_function(BenchmarkId::new("tokens", kind.name()), |b| {
            b.iter(|| {
                for d in &docs {
                    signer.sign_into(black_box(d), &mut out, &mut scratch);
                }
            })
        });
    }
    g.finish();

    // The same, end to end per document (normalize, shingle, sign), in MB/s of raw text.
    let mut g = c.benchmark_group("document");
    let text = prose(text_bytes(), 4, false);
    let pieces: Vec<&str> = text
        .as_bytes()
        .chunks(4096)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    g.throughput(Throughput::Bytes(text.len() as u64));
    for kind in SKETCHES {
        let p = Pipeline::new(ScanConfig::with_strategy(StrategyConfig::Signatures(
            SignatureConfig {
                sketch: kind,
                ..Default::default()
            },
        )))
        .unwrap();
        g.bench_function(BenchmarkId::new("sign-4k", kind.name()), |b| {
            b.iter(|| {
                for d in &pieces {
                    black_box(p.signature(d));
                }
            })
        });
    }
    g.finish();
}

/// `n` signatures, a tenth of them near-duplicates (about 0.9 Jaccard) of another document.
fn signatures(n: usize) -> Vec<u32> {
    let signer = Signer::new(SketchParams {
        kind: SketchKind::Fss,
        num_perm: 128,
        seed: 42,
    })
    .unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut sets: Vec<Vec<u64>> = Vec::with_capacity(n);
    for i in 0..n {
        let set = if i % 10 == 9 {
            let mut s = sets[rng.random_range(0..i)].clone();
            for x in s.iter_mut().take(10) {
                *x = fmix64(*x ^ 0xabc);
            }
            s
        } else {
            (0..200).map(|_| rng.random_range(0..u64::MAX)).collect()
        };
        sets.push(set);
    }
    sets.iter().flat_map(|s| signer.sign(s)).collect()
}

fn bench_lsh(c: &mut Criterion) {
    let n = 20_000 / shrink();
    let sigs = signatures(n);
    let params = LshParams { bands: 16, rows: 8 };
    let mut g = c.benchmark_group("lsh");
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("build+candidates-16x8", |b| {
        b.iter(|| {
            let index = LshIndex::build(black_box(&sigs), 128, params).unwrap();
            let (found, _) = index.candidates(1000, |a, b| {
                let s = |i: u32| &sigs[i as usize * 128..(i as usize + 1) * 128];
                (agreement(s(a), s(b)) >= 103).then_some((a, b))
            });
            assert!(found.len() >= n / 20, "the planted pairs are found");
            found
        })
    });
    // The in-memory index behind Python's `LSH`: a batch insertion into a new index, and a batch
    // of queries of every indexed signature (python_compare.py's LSH rows, less Python).
    let params = SketchParams {
        kind: SketchKind::Fss,
        num_perm: 128,
        seed: 42,
    };
    let owned: Vec<Signature> = sigs
        .chunks(128)
        .map(|s| Signature::from_parts(params, s.to_vec()).unwrap())
        .collect();
    let fill = || {
        let mut index = MinHashLsh::with_bands(16, 8).unwrap();
        index.insert_batch((0..n as u64).zip(&owned)).unwrap();
        index
    };
    g.bench_function("minhash-lsh-insert-batch-16x8", |b| b.iter(fill));
    let index = fill();
    g.bench_function("minhash-lsh-query-batch-16x8", |b| {
        b.iter(|| {
            let found = index.query_batch(black_box(&owned)).unwrap();
            assert_eq!(found.get(0).first(), Some(&0), "a signature finds itself");
            found
        })
    });
    g.finish();
}

fn bench_verify(c: &mut Criterion) {
    let n = 2_000 / shrink();
    let sigs = signatures(n);
    let mut g = c.benchmark_group("verify");
    let pairs: Vec<(usize, usize)> = (0..n).map(|i| (i, (i * 7 + 1) % n)).collect();
    g.throughput(Throughput::Elements(pairs.len() as u64));
    g.bench_function("signature-agreement-128", |b| {
        b.iter(|| {
            let s = |i: usize| &sigs[i * 128..(i + 1) * 128];
            pairs
                .iter()
                .map(|&(a, b)| agreement(s(a), s(b)))
                .sum::<usize>()
        })
    });
    let shingler = Shingler::new(&ShingleOptions::default()).unwrap();
    let text = ndup::text::normalize::normalize(
        &prose((1 << 17) / shrink(), 6, false),
        &Default::default(),
    );
    let a = shingler.hash_set(&text, 42);
    // A near-duplicate as exact verification sees them: every 200 bytes, 6 replaced (the
    // shingles over each edit change), Jaccard about 0.8. A merge of two nearly equal sets is
    // easier than that: their blocks move on in lockstep, which the branch predictor learns.
    let other = prose(text.len(), 7, false);
    let edited: String = (0..text.len())
        .step_by(200)
        .map(|i| {
            let end = (i + 200).min(text.len());
            format!(
                "{}{}",
                &other[i..(i + 6).min(end)],
                &text[(i + 6).min(end)..end]
            )
        })
        .collect();
    let b = shingler.hash_set(&edited, 42);
    let j = jaccard(&a, &b);
    assert!((0.6..0.9).contains(&j), "the edited copy has Jaccard {j}");
    g.throughput(Throughput::Elements((a.len() + b.len()) as u64));
    g.bench_function("exact-jaccard", |bench| {
        bench.iter(|| jaccard(black_box(&a), black_box(&b)))
    });
    // A pair that fails: the exact bound stops its merge once the shingles left cannot lift it
    // to the threshold; the screen stops it when the shingles merged so far are hopeless.
    let t = j + 0.1;
    g.bench_function("exact-reject-bound", |bench| {
        bench.iter(|| jaccard_at_least(black_box(&a), black_box(&b), t))
    });
    g.bench_function("exact-reject-screened", |bench| {
        bench.iter(|| jaccard_screened(black_box(&a), black_box(&b), t, EXACT_SCREEN_Z))
    });
    // The same pair rejected by the sets' sketches, made once per set in a batch and compared
    // once per pair: the comparison alone, and making one sketch.
    let sketch = |set: &[u64]| {
        let mut out = vec![0; SKETCH_BINS];
        bin_sketch(set, &mut out);
        out
    };
    let (sa, sb) = (sketch(&a), sketch(&b));
    assert!(sketch_rejects(&sa, &sb, t, EXACT_SCREEN_Z));
    g.bench_function("exact-reject-sketch", |bench| {
        bench.iter(|| sketch_rejects(black_box(&sa), black_box(&sb), t, EXACT_SCREEN_Z))
    });
    // The same pair split by a core of about 4,096 of the first set's elements (boilerplate
    // shared by a batch, about the size of a large batch's core): the core's part is
    // counted with bits, the rest merged.
    let mut sample: Vec<u64> = a.iter().step_by((a.len() / 4096).max(1)).copied().collect();
    let core = Core::from_sample(&mut sample, 1);
    let split = |set: &[u64]| {
        let (mut bits, mut rest) = (vec![0; core.words()], vec![0; set.len()]);
        let len = core.split_into(set, &mut rest, &mut bits);
        rest.truncate(len);
        (bits, rest)
    };
    let ((ab, ar), (bb, br)) = (split(&a), split(&b));
    g.bench_function("exact-jaccard-split", |bench| {
        bench.iter(|| {
            jaccard_screened_split(
                black_box(Split {
                    bits: &ab,
                    rest: &ar,
                }),
                black_box(Split {
                    bits: &bb,
                    rest: &br,
                }),
                0.0,
                EXACT_SCREEN_Z,
            )
        })
    });
    g.bench_function("exact-split-by-core", |bench| {
        let (mut bits, mut rest) = (vec![0; core.words()], vec![0; a.len()]);
        bench.iter(|| core.split_into(black_box(&a), &mut rest, &mut bits))
    });
    g.bench_function("exact-make-sketch", |bench| {
        let mut out = vec![0; SKETCH_BINS];
        bench.iter(|| bin_sketch(black_box(&a), &mut out))
    });
    g.throughput(Throughput::Bytes(text.len() as u64));
    // With buffers reused between documents, as exact verification builds its sets.
    let mut scratch = ndup::text::shingle::SetScratch::default();
    g.bench_function("exact-shingle-set", |bench| {
        bench.iter(|| shingler.hash_set_with(black_box(&text), 42, &mut scratch))
    });
    // A pair whose documents are in no other pair, from its two texts to its exact Jaccard:
    // two sorted sets and their merge, against counting the overlap in a table as the hashes
    // are made (what exact verification does for such a pair).
    g.throughput(Throughput::Bytes((text.len() + edited.len()) as u64));
    g.bench_function("exact-lone-pair-sorted", |bench| {
        bench.iter(|| {
            let x = shingler.hash_set_with(black_box(&text), 42, &mut scratch);
            let y = shingler.hash_set_with(black_box(&edited), 42, &mut scratch);
            jaccard(&x, &y)
        })
    });
    let mut table = OverlapTable::new();
    g.bench_function("exact-lone-pair-table", |bench| {
        bench.iter(|| {
            table.start(2 * text.len() + 2);
            table.add_set(1, |f| {
                shingler.for_each_hash(black_box(&text), 42, |h| f.add(h));
            });
            table.add_set(2, |f| {
                shingler.for_each_hash(black_box(&edited), 42, |h| f.add(h));
            });
            table.overlap(0, 1).jaccard()
        })
    });
    // A large document (2 MiB, a changelog or a manual): its hashes no longer fit in L2.
    let large = ndup::text::normalize::normalize(
        &prose((1 << 21) / shrink(), 8, false),
        &Default::default(),
    );
    g.throughput(Throughput::Bytes(large.len() as u64));
    g.bench_function("exact-shingle-set-2m", |bench| {
        bench.iter(|| shingler.hash_set_with(black_box(&large), 42, &mut scratch))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = bench_normalize, bench_shingle, bench_sign, bench_lsh, bench_verify
}
criterion_main!(benches);
