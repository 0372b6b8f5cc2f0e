//! `ndup tune`: choose bands and rows for a threshold and explain the choice.

use std::io::Write;

use anyhow::{Context, Result};

use ndup::candidates::lsh::LshParams;
use ndup::candidates::tune::{Tuning, Unbanded};

use crate::cli::{ExplainFormat, TuneArgs, resolve_banding};
use crate::exit::Exit;

/// Runs `ndup tune`.
pub fn run(args: TuneArgs) -> Result<Exit> {
    let weights = args.weights.weights();
    let (num_perm, lsh) = resolve_banding(
        args.num_perm,
        args.bands,
        args.rows,
        args.threshold,
        weights,
    )?;
    let tuned = args.bands.is_none() || args.rows.is_none();
    let t = Tuning::explain(
        args.threshold,
        num_perm,
        lsh,
        weights,
        args.verify.mode(),
        tuned,
    )?;
    let mut out = std::io::stdout().lock();
    match args.format {
        ExplainFormat::Json => ndup::report::explain::write_tune(&t, &mut out),
        ExplainFormat::Text => out.write_all(render(&t).as_bytes()),
    }
    .and_then(|()| out.flush())
    .context("writing the report")?;
    Ok(Exit::Success)
}

fn pct(x: f64) -> String {
    if x > 0.0 && x < 0.0001 {
        "<0.01%".into()
    } else {
        format!("{:.2}%", 100.0 * x)
    }
}

fn mb(bytes: u64) -> String {
    if bytes >= 10_000_000_000 {
        format!("{:.1} GB", bytes as f64 / 1e9)
    } else {
        format!("{} MB", (bytes as f64 / 1e6).round())
    }
}

/// The readable report.
fn render(t: &Tuning) -> String {
    let mut s = format!(
        "threshold {}: {} bands x {} rows of {} hash functions\n",
        t.threshold, t.bands, t.rows, t.num_perm
    );
    if t.tuned {
        s += &format!(
            "  chosen to minimize {} x (area under the S-curve below {}) + {} x (area above it above {})\n",
            t.weights.fp, t.threshold, t.weights.fn_, t.threshold
        );
    } else {
        s += "  as given\n";
    }
    s += &format!(
        "  half point {:.4}: pairs this similar become candidates half the time; (1/b)^(1/r) = {:.4},\n  \
         its usual approximation (lsh_threshold in the params record), gives {:.3}\n",
        t.half_point,
        t.lsh_threshold,
        LshParams {
            bands: t.bands,
            rows: t.rows
        }
        .candidate_probability(t.lsh_threshold)
    );
    if let Some(u) = &t.unbanded {
        s += &format!("  note: {}\n", unbanded_note(u));
    }
    s += "\nsimilarity  P(candidate)\n";
    for p in &t.curve {
        s += &format!("{:>10.1}  {:.6}\n", p.s, p.p);
    }
    s += &format!(
        "\nP(candidate) against Jaccard similarity s (| marks the threshold {}):\n",
        t.threshold
    );
    s += &t.plot(51, 11);
    s += &format!(
        "\nexpected false-negative rate for pairs of Jaccard exactly s (model: each slot agrees with\n\
         probability s), split into the candidate stage and --verify {}:\n",
        t.verify.name()
    );
    for l in &t.false_negatives {
        s += &format!(
            "  s = {:.2}: {} never a candidate + {} rejected by verification = {}\n",
            l.s,
            pct(l.candidate),
            pct(l.verification),
            pct(l.total)
        );
    }
    let m = &t.memory_per_million;
    s += &format!(
        "\nmemory per million documents: about {} (signatures {}, band hashes {}, band buckets \
         while pairing {}, document records ~{})\n",
        mb(m.total),
        mb(m.signatures),
        mb(m.band_hashes),
        mb(m.band_buckets),
        mb(m.documents)
    );
    s
}

/// Why some slots are in no band, in the words of the command line.
pub fn unbanded_note(u: &Unbanded) -> String {
    u.explain("--bands and --rows", "`ndup tune`")
}
