//! `ndup dedup`: keep one document per cluster of near-duplicates and write the result.

use std::io::Write;

use anyhow::Result;

use ndup::dedup::{self, DedupReport};
use ndup::find::Pipeline;
use ndup::source::Source;

use crate::cli::{DedupArgs, DedupFormatArg};
use crate::exit::Exit;
use crate::progress;
use crate::sink::{self, Output};

/// Runs `ndup dedup`.
pub fn run(args: DedupArgs) -> Result<Exit> {
    let config = args.config()?;
    let output = Output::open(Some(&args.output))?;
    let html_out = args
        .html_report
        .as_deref()
        .map(|p| Output::open(Some(p)))
        .transpose()?;
    // Writing over an input would destroy it before it is read again.
    let mut inputs = args.inputs.clone();
    inputs.extend(args.corpus.input.files_from.iter().cloned());
    inputs.extend(args.corpus.sketching.stopwords.iter().cloned());
    inputs.extend(args.corpus.config_file.iter().cloned());
    output.refuse_inputs(&inputs, "output")?;
    let html_output = args.format == DedupFormatArg::Html;
    if html_output && html_out.is_some() {
        anyhow::bail!(
            "--format html already writes the HTML report to --output: drop --html-report"
        );
    }
    if let Some(h) = &html_out {
        if h.same_as(&output) || (h.is_stdout() && output.is_stdout()) {
            anyhow::bail!(
                "--output and --html-report name the same place ({}): give each its own file",
                h.name().display()
            );
        }
        h.refuse_inputs(&inputs, "HTML report")?;
    }
    let bar = progress::Bar::for_stderr(args.corpus.quiet);
    let mut pipeline = Pipeline::new(config)?;
    if let Some(bar) = &bar {
        pipeline = pipeline.with_progress(bar.clone());
    }
    let source = args.corpus.input.source(&args.inputs)?;
    let report = dedup::dedup_source(&pipeline, &source, args.keep())?;
    if let Some(bar) = &bar {
        bar.finish();
    }

    // Nor may they replace a file of the corpus found by walking a directory or in a list: known
    // only now. Both are checked before either is written.
    output.refuse_read(sink::files_read(&report.scan, &source), "output")?;
    if let Some(h) = &html_out {
        h.refuse_read(sink::files_read(&report.scan, &source), "HTML report")?;
    }

    let name = output.name().to_string_lossy().to_ascii_lowercase();
    // It reads the documents again, normalized as this run normalized them.
    let html = ndup::report::Html::new(
        pipeline.config(),
        ndup::report::HtmlOptions {
            max_pairs: args.html_max_pairs,
            ..Default::default()
        },
    );
    output.write(|w| {
        if html_output {
            html.write_dedup(&report, w)
        } else if matches!(source, Source::Records(_)) && report.is_parquet() {
            // Parquet in, Parquet out: every column of the kept rows, and the schema.
            report
                .write_kept_parquet(w)
                .map_err(|e| std::io::Error::other(e.to_string()))
        } else if matches!(source, Source::Records(_)) {
            write_compressed(&name, w, |w| report.write_kept_records(w))
        } else {
            ndup::report::dedup::write_list(&report, w)
        }
    })?;
    if let Some(h) = html_out {
        h.write(|w| html.write_dedup(&report, w))?;
    }

    if !args.corpus.quiet {
        crate::messages::skips(&report.scan.skipped);
        eprintln!("{}", summary(&report));
    }
    Ok(Exit::Success)
}

/// Compresses what `write` writes when `name` ends in `.gz` or `.zst`.
fn write_compressed(
    name: &str,
    w: &mut dyn Write,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    if name.ends_with(".gz") {
        let mut enc = flate2::write::GzEncoder::new(w, flate2::Compression::default());
        write(&mut enc)?;
        enc.finish()?.flush()
    } else if name.ends_with(".zst") || name.ends_with(".zstd") {
        let mut enc = zstd::stream::write::Encoder::new(w, 3)?;
        write(&mut enc)?;
        enc.finish()?.flush()
    } else {
        write(w)
    }
}

/// `ndup dedup: 10 documents, kept 7, dropped 3 (2 exact, 1 near duplicates), 1 skipped in 0.01 s`
fn summary(r: &DedupReport) -> String {
    let st = &r.scan.stats;
    let skipped = r.scan.skipped.len();
    let mut s = format!(
        "ndup dedup: {} documents, kept {}, dropped {} ({} exact, {} near duplicates)",
        st.documents,
        r.kept(),
        r.exact_dropped + r.near_dropped,
        r.exact_dropped,
        r.near_dropped
    );
    if skipped > 0 {
        s += &format!(", {skipped} skipped");
    }
    s += &format!(" in {:.2} s", st.elapsed.as_secs_f64());
    s
}
