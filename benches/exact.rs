//! Exact mode against the brute force and against MinHash mode.
//!
//! Data: generated records of 50 to 400 words (half from 200 common words, half from 20,000),
//! one in ten a copy of an earlier record with up to four words replaced, so that many pairs lie
//! near the threshold. Char 9-shingles, threshold 0.8.
//!
//! - `exact/join` vs `exact/brute_force`: the join and the all-pairs loop on the same shingle
//!   sets (in memory), for 250 and 1,000 records;
//! - `exact/scan_*`: `ndup scan` end to end (read, normalize, shingle, find pairs) on 2,000
//!   records written as files, in exact and in MinHash mode.
//!
//! `NDUP_BENCH_SCALE=1000000 cargo bench --bench exact` instead measures once, at the library
//! level, the join of that many generated JSON-lines-like records of about 240 bytes (shingling
//! included), and prints the time and the peak memory (Linux).

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use ndup::find::Pipeline;
use ndup::find::config::{ScanConfig, StrategyConfig};
use ndup::join::{JoinOptions, Threshold, brute_force, join};
use ndup::sim::Measure;

fn records(n: usize, seed: u64) -> Vec<String> {
    generate(n, seed, 50, 350)
}

/// `n` records of `min` to `min + spread - 1` words.
fn generate(n: usize, seed: u64, min: u64, spread: u64) -> Vec<String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut below = move |k: u64| rng.next_u64() % k;
    let vocab: Vec<String> = (0..20_000)
        .map(|_| {
            (0..3 + below(8))
                .map(|_| (b'a' + below(26) as u8) as char)
                .collect()
        })
        .collect();
    let mut out: Vec<String> = Vec::with_capacity(n);
    for i in 0..n {
        if i > 10 && below(10) == 0 {
            let src = out[below(i as u64) as usize].clone();
            let mut words: Vec<&str> = src.split(' ').collect();
            for _ in 0..below(5) {
                let k = below(words.len() as u64) as usize;
                words[k] = &vocab[below(20_000) as usize];
            }
            out.push(words.join(" "));
        } else {
            let words: Vec<&str> = (0..min + below(spread))
                .map(|_| {
                    if below(2) == 0 {
                        vocab[below(200) as usize].as_str()
                    } else {
                        vocab[below(20_000) as usize].as_str()
                    }
                })
                .collect();
            out.push(words.join(" "));
        }
    }
    out
}

/// `cargo bench` passes `--bench`; `cargo test --all-targets` runs each benchmark once, in
/// debug, as a test: then the sizes are cut down so CI stays fast.
fn size(n: usize) -> usize {
    if std::env::args().any(|a| a == "--bench") {
        n
    } else {
        n / 20
    }
}

fn sets(texts: &[String]) -> Vec<Vec<u64>> {
    let p = Pipeline::new(ScanConfig::default()).unwrap();
    texts.par_iter().map(|t| p.shingle_set(t)).collect()
}

fn opts() -> JoinOptions {
    JoinOptions {
        threshold: Threshold::from_f64(0.8).unwrap(),
        measure: Measure::Jaccard,
        max_memory: None,
    }
}

fn join_vs_brute_force(c: &mut Criterion) {
    let mut g = c.benchmark_group("exact");
    g.sample_size(10);
    for n in [size(250), size(1_000)] {
        let s = sets(&records(n, 7));
        let expect = brute_force(&s, opts().threshold, Measure::Jaccard);
        assert_eq!(join(s.clone(), &opts()).unwrap().matches, expect);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("join", n), &s, |b, s| {
            b.iter(|| join(black_box(s.clone()), &opts()).unwrap())
        });
        g.bench_with_input(BenchmarkId::new("brute_force", n), &s, |b, s| {
            b.iter(|| brute_force(black_box(s), opts().threshold, Measure::Jaccard))
        });
    }
    g.finish();
}

fn scan_modes(c: &mut Criterion) {
    let texts = records(size(2_000), 8);
    let dir = tempfile::tempdir().unwrap();
    for (i, t) in texts.iter().enumerate() {
        std::fs::write(dir.path().join(format!("{i:05}.txt")), t).unwrap();
    }
    let bytes: usize = texts.iter().map(String::len).sum();
    let paths = vec![PathBuf::from(dir.path())];
    let mut g = c.benchmark_group("exact");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes as u64));
    for (name, strategy) in [
        ("scan_exact", StrategyConfig::Exact(Default::default())),
        ("scan_minhash", StrategyConfig::default()),
    ] {
        let p = Pipeline::new(ScanConfig::with_strategy(strategy)).unwrap();
        g.bench_function(name, |b| b.iter(|| p.scan(black_box(&paths)).unwrap()));
    }
    g.finish();
}

/// The one-shot scale measurement (see the file's documentation): JSON-lines-like records of
/// 15 to 44 words (about 240 bytes) with an id each, at most 8 GiB for the join.
fn scale(n: usize) {
    let t = Instant::now();
    let texts: Vec<String> = generate(n, 9, 15, 30)
        .into_iter()
        .enumerate()
        .map(|(i, t)| format!("{{\"id\": {i}, \"text\": \"{t}\"}}"))
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    eprintln!(
        "{n} records, {} MB, generated in {:.1} s",
        bytes / 1_000_000,
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let mut s = sets(&texts);
    drop(texts);
    s.par_iter_mut().for_each(|v| v.shrink_to_fit());
    let shingles: usize = s.iter().map(Vec::len).sum();
    eprintln!(
        "shingled: {shingles} shingles in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let limit = JoinOptions {
        max_memory: Some(8 << 30),
        ..opts()
    };
    let out = join(s, &limit).unwrap();
    eprintln!(
        "joined: {} pairs in {:.1} s; {:?}",
        out.matches.len(),
        t.elapsed().as_secs_f64(),
        out.stats
    );
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        for l in status.lines().filter(|l| l.starts_with("VmHWM")) {
            eprintln!("peak memory: {l}");
        }
    }
}

criterion_group!(benches, join_vs_brute_force, scan_modes);

fn main() {
    match std::env::var("NDUP_BENCH_SCALE") {
        Ok(n) => scale(n.parse().expect("NDUP_BENCH_SCALE is a record count")),
        Err(_) => {
            benches();
            Criterion::default().configure_from_args().final_summary();
        }
    }
}
