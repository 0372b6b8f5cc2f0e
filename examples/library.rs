//! The library without the command line: sign three documents, index two, and ask which of them
//! the third nearly duplicates.
//!
//! Run with `cargo run --example library`. The output is the same on every run: signatures
//! depend only on the text, the options and the seed.

use ndup::{MinHashLsh, MinHasher};

fn main() -> ndup::Result<()> {
    // The scan's defaults: normalization, 9-character shingles, FSS with 128 slots, seed 42.
    let hasher = MinHasher::new(128)?;
    let docs = [
        (
            "install.md",
            "To install ndup, download the release archive for your platform, unpack it, \
             and put the ndup binary somewhere on your PATH. Then run ndup --version.",
        ),
        (
            "faq.md",
            "Why are two files with the same licence header reported as near-duplicates? \
             Because the header is most of their text: mark it as ignored.",
        ),
    ];
    let query = (
        "install-v1.md",
        "To install ndup, download the release archive for your platform, unpack it, \
         and copy the ndup binary somewhere on your PATH. Then run `ndup --version`.",
    );

    // The banding `ndup scan --threshold 0.7` would use for 128 slots.
    let mut lsh = MinHashLsh::new(0.7, 128)?;
    let mut signatures = Vec::new();
    for (name, text) in docs {
        let sig = hasher
            .sign(text)
            .expect("a non-empty document has a signature");
        lsh.insert(name, &sig)?;
        signatures.push((name, sig));
    }
    let bands = lsh.bands();
    println!(
        "indexed {} documents, {} bands of {} rows",
        lsh.len(),
        bands.bands,
        bands.rows
    );

    let q = hasher
        .sign(query.1)
        .expect("a non-empty document has a signature");
    let candidates = lsh.query(&q)?;
    println!("candidates for {}: {:?}", query.0, candidates);
    for (name, sig) in &signatures {
        let mark = if candidates.contains(name) {
            "candidate"
        } else {
            "not a candidate"
        };
        println!(
            "  {name}: estimated Jaccard {:.3} ({mark})",
            q.jaccard(sig)?
        );
    }
    Ok(())
}
