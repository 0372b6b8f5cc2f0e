//! `ndup compare A B`: every similarity of two files.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};

use ndup::compare::Comparison;
use ndup::find::config::{ScanConfig, SignatureConfig, StrategyConfig};
use ndup::source::files::{DEFAULT_MAX_FILESIZE, Read, read_document};

use crate::cli::{CompareArgs, ExplainFormat};
use crate::exit::Exit;

fn read(path: &Path) -> Result<String> {
    match read_document(path, Some(DEFAULT_MAX_FILESIZE))
        .with_context(|| path.display().to_string())?
    {
        Read::Text(t) => Ok(t),
        Read::Binary => bail!("{}: {}", path.display(), ndup::model::BINARY_REASON),
    }
}

/// Runs `ndup compare`.
pub fn run(args: CompareArgs) -> Result<Exit> {
    let s = &args.sketching;
    let (sketch, sample) = args.sketch.sketches(false)?;
    let strategy = match sample {
        Some(sample) => StrategyConfig::Sample(sample),
        None => StrategyConfig::Signatures(SignatureConfig {
            sketch,
            num_perm: s.num_perm.unwrap_or(SignatureConfig::default().num_perm),
            ..SignatureConfig::default()
        }),
    };
    let config = ScanConfig {
        normalize: s.normalize(),
        shingle: s.shingle()?,
        strategy,
        seed: s.seed,
        ..ScanConfig::default()
    };
    let c = Comparison::of(&read(&args.a)?, &read(&args.b)?, &config)?;
    let (a, b) = (args.a.display().to_string(), args.b.display().to_string());
    let mut out = std::io::stdout().lock();
    match args.format {
        ExplainFormat::Json => ndup::report::explain::write_compare(&c, &a, &b, &mut out),
        ExplainFormat::Text => out.write_all(render(&c, &a, &b).as_bytes()),
    }
    .and_then(|()| out.flush())
    .context("writing the report")?;
    Ok(Exit::Success)
}

fn render(c: &Comparison, a: &str, b: &str) -> String {
    let p = &c.params;
    let mut s = format!("A: {a}\nB: {b}\n");
    s += &format!(
        "shingles ({} {}, {}): A {} distinct of {}, B {} distinct of {}, {} shared\n",
        p.shingle.name(),
        p.shingle_size,
        p.normalize,
        c.shingles_a,
        c.bag_size_a,
        c.shingles_b,
        c.bag_size_b,
        c.shared
    );
    let row = |label: &str, x: f64| format!("{label:<36} {x:.4}\n");
    s += &row("exact Jaccard", c.jaccard);
    let basis = match p.num_perm {
        Some(n) => format!("{n} slots"),
        None => format!("{} sampled hashes", c.estimate_samples),
    };
    let label = format!("estimate ({}, {basis})", p.sketch);
    match (c.estimate, c.estimate_se) {
        (Some(e), Some(se)) => {
            s += &format!("{label:<36} {e:.4}  (standard error {se:.4})\n");
        }
        _ => s += &format!("{label:<36} -  (a text is empty or has no sampled shingle)\n"),
    }
    s += &row("containment of A in B", c.a_in_b);
    s += &row("containment of B in A", c.b_in_a);
    s += &row("bag similarity, min / sum (max 1/2)", c.bag_jaccard_sum);
    s += &row("bag similarity, min / max-union", c.bag_jaccard_max);
    s
}
