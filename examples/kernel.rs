//! The signing kernel alone, for a side-by-side comparison with other MinHash libraries on the
//! same token arrays (see `benches/compare.sh`).
//!
//! ```sh
//! # the char 9-shingle hashes of a corpus, as ndup makes them, to PREFIX.tokens / PREFIX.offsets
//! # (with --max-tokens, every n-th document so that about N tokens are written)
//! cargo run --release --example kernel -- dump PREFIX PATH... [--max-tokens N]
//! # sign every document, one thread, 128 slots; prints tokens per second as JSON
//! cargo run --release --example kernel -- sign PREFIX [--sketch fss|oph|classic] [--repeat R]
//! ```
//!
//! Both files are flat little-endian `u64` arrays: all documents' hashes one after another, and
//! `documents + 1` offsets into them (the layout of rensa's
//! `RMinHash.digest_matrix_from_flat_token_hashes`), so a Python script can time another
//! library on exactly the same input with `numpy.fromfile`.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use ndup::sketch::minhash::{Signer, SketchKind, SketchParams};
use ndup::source::files as input;
use ndup::source::files::InputOptions;
use ndup::text::normalize::{NormalizeOptions, normalize_into};
use ndup::text::shingle::{ShingleOptions, Shingler};

const NUM_PERM: usize = 128;
const SEED: u64 = 42;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("dump") if args.len() >= 3 => dump(&args[1], &args[2..]),
        Some("sign") if args.len() >= 2 => sign(&args[1], &args[2..]),
        _ => bail!(
            "usage: kernel dump PREFIX PATH... [--max-tokens N] | kernel sign PREFIX [--sketch S] [--repeat R]"
        ),
    }
}

/// The value after `--name` in `args`, if any.
fn option(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn dump(prefix: &str, args: &[String]) -> Result<()> {
    let max_tokens: usize = option(args, "--max-tokens")
        .map(|v| v.parse())
        .transpose()?
        .unwrap_or(usize::MAX);
    let paths: Vec<PathBuf> = args
        .iter()
        .take_while(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .collect();
    let (entries, _) = input::collect(&paths, &InputOptions::default())?;
    // Every `stride`-th document, so that a capped sample still spans the whole corpus (file
    // sizes stand in for shingle counts).
    let bytes: u64 = entries
        .iter()
        .filter_map(|e| fs::metadata(&e.path).ok())
        .map(|m| m.len())
        .sum();
    let stride = (bytes as usize).div_ceil(max_tokens).max(1);
    let shingler = Shingler::new(&ShingleOptions::default())?;
    let opts = NormalizeOptions::default();
    let mut tokens = BufWriter::new(fs::File::create(format!("{prefix}.tokens"))?);
    let mut offsets = vec![0u64];
    let (mut buf, mut norm, mut hashes) = (Vec::new(), String::new(), Vec::new());
    let mut total = 0usize;
    for e in entries.iter().step_by(stride) {
        let Ok(Some(text)) = input::read_document_into(&e.path, &mut buf, None) else {
            continue;
        };
        normalize_into(&text, &opts, &mut norm);
        hashes.clear();
        shingler.hashes_into(&norm, SEED, &mut hashes);
        if hashes.is_empty() {
            continue;
        }
        for h in &hashes {
            tokens.write_all(&h.to_le_bytes())?;
        }
        total += hashes.len();
        offsets.push(total as u64);
        if total >= max_tokens {
            break;
        }
    }
    tokens.flush()?;
    let bytes: Vec<u8> = offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
    fs::write(format!("{prefix}.offsets"), bytes)?;
    eprintln!(
        "kernel: {} documents, {total} tokens written to {prefix}.tokens",
        offsets.len() - 1
    );
    Ok(())
}

fn read_u64s(path: &str) -> Result<Vec<u64>> {
    let bytes = fs::read(path).with_context(|| format!("{path}: cannot read"))?;
    Ok(bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("eight bytes")))
        .collect())
}

fn sign(prefix: &str, args: &[String]) -> Result<()> {
    let kind = match option(args, "--sketch").as_deref().unwrap_or("fss") {
        "fss" => SketchKind::Fss,
        "oph" => SketchKind::Oph,
        "classic" => SketchKind::Classic,
        other => bail!("unknown sketch {other}"),
    };
    let repeat: usize = option(args, "--repeat")
        .map(|v| v.parse())
        .transpose()?
        .unwrap_or(5);
    let tokens = read_u64s(&format!("{prefix}.tokens"))?;
    let offsets = read_u64s(&format!("{prefix}.offsets"))?;
    let docs = offsets.len() - 1;
    let signer = Signer::new(SketchParams {
        kind,
        num_perm: NUM_PERM,
        seed: SEED,
    })?;
    // One thread, like the other library's single-threaded run: the signatures go to one flat
    // matrix, as its batch API returns them.
    let mut matrix = vec![0u32; docs * NUM_PERM];
    let mut scratch = Vec::new();
    let mut times = Vec::new();
    for _ in 0..repeat.max(1) {
        let t = Instant::now();
        for (d, out) in matrix.chunks_exact_mut(NUM_PERM).enumerate() {
            let doc = &tokens[offsets[d] as usize..offsets[d + 1] as usize];
            signer.sign_into(doc, out, &mut scratch);
        }
        times.push(t.elapsed().as_secs_f64());
        std::hint::black_box(&matrix);
    }
    times.sort_by(f64::total_cmp);
    let (best, median) = (times[0], times[times.len() / 2]);
    println!(
        "{{\"tool\":\"ndup-{}\",\"documents\":{docs},\"tokens\":{},\"best_s\":{best:.6},\"median_s\":{median:.6},\"tokens_per_s\":{:.0}}}",
        kind.name(),
        tokens.len(),
        tokens.len() as f64 / best
    );
    Ok(())
}
