//! The persistent index against the in-memory scan: build throughput (MB/s of text), the cost
//! of a second scan that takes its signatures from the index, and the latency of one query.
//!
//! `cargo bench --bench index`. The corpus is generated: 2,000 documents of about 2 KB of
//! made-up words, every tenth one a near copy of another.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ndup::find::Pipeline;
use ndup::find::config::ScanConfig;
use ndup::index::{Index, QueryDoc, QuerySource, SigningParams};

const DOCS: u64 = 2000;
const WORDS: usize = 300;

fn text(seed: u64, n: usize) -> String {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            format!("w{}", x % 5000)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Writes the corpus and returns its total size in bytes.
fn corpus(dir: &Path) -> u64 {
    let mut bytes = 0;
    for i in 0..DOCS {
        let t = if i % 10 == 9 {
            text(i - 1, WORDS).replacen('w', "v", 3)
        } else {
            text(i, WORDS)
        };
        bytes += t.len() as u64;
        fs::write(dir.join(format!("d{i:05}.txt")), t).unwrap();
    }
    // Out of the racy window, so unchanged files are recognized without being read.
    for e in fs::read_dir(dir).unwrap() {
        let f = fs::File::options()
            .write(true)
            .open(e.unwrap().path())
            .unwrap();
        f.set_modified(std::time::SystemTime::now() - Duration::from_secs(3600))
            .unwrap();
    }
    bytes
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    fs::create_dir(&docs).unwrap();
    let bytes = corpus(&docs);
    let paths = [docs.clone()];
    let source = ndup::Source::Files(paths.to_vec());
    let pipe = Pipeline::new(ScanConfig::default()).unwrap();
    let params = SigningParams::from_config(pipe.config());

    let mut g = c.benchmark_group("index_build");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function("scan_in_memory", |b| {
        b.iter(|| pipe.scan(&paths).unwrap().pairs.len())
    });
    let db: PathBuf = tmp.path().join("build.db");
    g.bench_function("index_build", |b| {
        b.iter(|| {
            let _ = fs::remove_file(&db);
            let mut idx = Index::open_or_create(&db, &params).unwrap();
            idx.build(&pipe, &source).unwrap().signed
        })
    });
    // A second scan of the unchanged tree: every signature comes from the index.
    let cache = tmp.path().join("cache.db");
    let mut idx = Index::open_or_create(&cache, &params).unwrap();
    idx.build(&pipe, &source).unwrap();
    g.bench_function("scan_with_index_unchanged", |b| {
        b.iter(|| {
            let corpus = idx.sign_files(&pipe, &paths).unwrap();
            assert_eq!(corpus.stats().signed, Some(0));
            pipe.find_pairs(corpus, std::time::Instant::now())
                .unwrap()
                .pairs
                .len()
        })
    });
    g.bench_function("index_update_unchanged", |b| {
        b.iter(|| idx.update(&pipe, &source).unwrap().read)
    });
    g.finish();

    let mut g = c.benchmark_group("index_query");
    let ro = Index::open_read_only(&cache).unwrap();
    let one = vec![QueryDoc {
        id: "-".into(),
        source: QuerySource::Text(text(7, WORDS).replacen('w', "v", 2)),
    }];
    g.bench_function("one_document", |b| {
        b.iter(|| {
            let r = ro.query(&pipe, &one, None).unwrap();
            assert_eq!(r.matches.len(), 1);
            r.stats.candidates
        })
    });
    let hundred: Vec<QueryDoc> = (0..100)
        .map(|i| QueryDoc {
            id: format!("q{i}"),
            source: QuerySource::Text(text(10_000 + i, WORDS)),
        })
        .collect();
    g.throughput(Throughput::Elements(100));
    g.bench_function("hundred_documents", |b| {
        b.iter(|| ro.query(&pipe, &hundred, None).unwrap().stats.candidates)
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
