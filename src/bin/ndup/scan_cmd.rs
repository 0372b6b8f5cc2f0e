//! `ndup scan`: run the pipeline, write the report, then decide the exit status.

use std::borrow::Cow;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Result, bail};

use ndup::accept::baseline::Baseline;
use ndup::accept::ndupignore::NdupIgnore;
use ndup::find::Pipeline;
use ndup::find::config::StrategyConfig;
use ndup::report as output;
use ndup::report::{Format, ReportOptions};
use ndup::source::Source;

use crate::cli::ScanArgs;
use crate::exit::Exit;
use crate::progress;
use crate::sink::{self, Output};

/// Runs `ndup scan`.
pub fn run(args: ScanArgs) -> Result<Exit> {
    let config = args.config()?;
    // Unbanded slots are always in the params record. The note is for a user who shaped the
    // banding: with the tuner's defaults it would repeat the same sentence on every run.
    let shaped = args.candidates.banding.shaped(&args.sketching);
    let note = match config.signatures().filter(|_| shaped) {
        Some(sig) => {
            let tuned =
                args.candidates.banding.bands.is_none() || args.candidates.banding.rows.is_none();
            ndup::candidates::tune::Unbanded::of(sig.num_perm, sig.lsh, tuned)?
                .map(|u| crate::tune_cmd::unbanded_note(&u))
        }
        None => None,
    };
    let (output, baseline_out) = outputs(&args)?;
    let bar = progress::Bar::for_stderr(args.quiet);
    let mut pipeline = Pipeline::new(config)?;
    if let Some(bar) = &bar {
        pipeline = pipeline.with_progress(bar.clone());
    }
    // Accepted pairs are read first: a bad file is a usage error before any work.
    let root = scanned_root(&args.paths);
    let ignore = NdupIgnore::load(&root)?;
    let baseline = args.baseline.as_deref().map(Baseline::load).transpose()?;
    let jsonl = args.input.is_jsonl(&args.paths)?;
    // Where the documents came from, to name the files read (none for signature shards).
    let mut source = None;
    let mut report = match &args.index {
        // The index caches the signatures of files: only the signature strategy has any.
        Some(index) => {
            let why = match pipeline.config().strategy {
                StrategyConfig::Signatures(_) if !jsonl => None,
                StrategyConfig::Signatures(_) => {
                    Some("--index caches the signatures of files, not of JSON lines records".into())
                }
                StrategyConfig::Exact(_) => Some(
                    "--exact joins shingle sets: --index caches signatures and does not apply"
                        .to_string(),
                ),
                StrategyConfig::Sample(sample) => Some(format!(
                    "--index holds signatures: it does not apply to --sketch {}",
                    sample.kind.name()
                )),
            };
            if let Some(why) = why {
                bail!(why);
            }
            let start = Instant::now();
            let corpus = crate::index_cmd::sign_with_index(&pipeline, &args.paths, index)?;
            source = Some(Source::Files(args.paths.clone()));
            pipeline.find_pairs(corpus, start)?
        }
        None if !args.signatures.is_empty() => {
            ndup::shards::scan_signatures(&pipeline, &args.signatures)?
        }
        None => {
            let files = args.input.source(&args.paths)?;
            let report = pipeline.scan_source(&files)?;
            source = Some(files);
            report
        }
    };
    if let Some(bar) = &bar {
        bar.finish();
    }
    if let Some(ignore) = &ignore {
        // Matched together first: each set of globs once over all the ids, not per pair.
        let ids = report.pairs.iter().flat_map(|p| [p.a, p.b]);
        ignore.prepare(ids.map(|i| report.id(i)));
        report.stats.ignored_pairs = report.remove_pairs(|a, b| ignore.accepts(a, b));
    }
    // The baseline written is today's pairs, before the old baseline hides any.
    let new_baseline = args
        .write_baseline
        .as_ref()
        .map(|_| Baseline::from_report(&report));
    if let Some(baseline) = &baseline {
        report.stats.baseline_pairs = report.remove_pairs(|a, b| baseline.contains(a, b));
    }
    let format = args.format();
    let opts = ReportOptions {
        clusters: args.clusters,
        color: format == Format::Text && sink::color_stdout(output.is_stdout()),
    };

    // The report is written in full before the exit status is decided.
    // The HTML report reads documents again, normalized as this scan normalized them.
    let reporter: Box<dyn output::Reporter> = match format {
        Format::Html => Box::new(output::Html::new(
            pipeline.config(),
            output::HtmlOptions {
                max_pairs: args.html_max_pairs,
                ..Default::default()
            },
        )),
        _ => output::reporter(format),
    };
    // Neither output may replace a file the scan read (the named ones were refused before the
    // work): checked for both before either is written.
    // Besides the documents: the shards, the index (made by this run when it was missing) and
    // the accepted pairs.
    let mut side = shard_files(&args.signatures);
    side.extend(args.index.iter().cloned());
    if ignore.is_some() {
        side.push(root.join(ndup::accept::ndupignore::FILE_NAME));
    }
    let read = || {
        let side = side.iter().map(|p| Cow::Borrowed(p.as_path()));
        source
            .iter()
            .flat_map(|source| sink::files_read(&report, source))
            .chain(side)
    };
    output.refuse_read(read(), "report")?;
    if let Some(out) = &baseline_out {
        // Rewriting the baseline that was read updates it, even when the scan read it as a
        // document too.
        if !args.baseline.as_deref().is_some_and(|b| out.replaces(b)) {
            out.refuse_read(read(), "baseline")?;
        }
    }

    // A reader that stops early (`| head`) closes the pipe: not a failure, but the gates below
    // still decide the exit status, or a CI job piping the report would always pass.
    // The reader is gone, so the run ends quietly (as ripgrep does), with the gates' verdict.
    let closed = match output.write(|w| reporter.write(&report, &opts, w)) {
        Err(e) if crate::exit::is_broken_pipe(&e) => true,
        Err(e) => return Err(e),
        Ok(()) => false,
    };

    if let (Some(out), Some(b)) = (baseline_out, &new_baseline) {
        out.write(|w| b.write(w))?;
    }

    let found = output::reported_items(&report, &opts);
    if !args.quiet && !closed {
        crate::messages::skips(&report.skipped);
        if let Some(note) = note {
            eprintln!("ndup: note: {note}");
        }
        if report.stats.oversized_buckets > 0 {
            // The JSON summary counts them, but a pairs report silently short of most of a
            // large family's pairs needs saying where a person reads.
            eprintln!(
                "ndup: note: {} buckets held more than --max-bucket {} documents and were linked \
                 as stars around their first member: pairs of their other members were not \
                 compared (clusters still join them all); a larger --max-bucket compares them",
                report.stats.oversized_buckets, args.candidates.verification.max_bucket
            );
        }
        let clusters = args.clusters.then_some(found);
        eprintln!("{}", output::summary_line(&report.stats, clusters));
    }
    Ok(Exit::for_gates(
        found,
        report.pairs.len(),
        args.fail_on_duplicates,
        args.max_pairs,
    ))
}

/// The report's and the new baseline's destinations, checked before any work: neither may replace
/// a file the scan reads, nor may both go to one place.
fn outputs(args: &ScanArgs) -> Result<(Output, Option<Output>)> {
    let output = Output::open(args.output.as_deref())?;
    let baseline = args
        .write_baseline
        .as_deref()
        .map(|p| Output::open(Some(p)))
        .transpose()?;
    let mut inputs: Vec<PathBuf> = args.paths.clone();
    inputs.extend(args.input.files_from.iter().cloned());
    inputs.extend(args.sketching.stopwords.iter().cloned());
    inputs.extend(args.signatures.iter().cloned());
    inputs.extend(args.index.iter().cloned());
    inputs.extend(args.config_file.iter().cloned());
    if let Some(b) = &baseline {
        if b.same_as(&output) || (b.is_stdout() && output.is_stdout()) {
            bail!(
                "--output and --write-baseline name the same place ({}): give each its own file",
                b.name().display()
            );
        }
        // Rewriting the baseline that was read (--baseline F --write-baseline F) is how a
        // baseline is brought up to date; any other input is refused.
        b.refuse_inputs(&inputs, "baseline")?;
    }
    inputs.extend(args.baseline.iter().cloned());
    output.refuse_inputs(&inputs, "report")?;
    Ok((output, baseline))
}

/// The signature shards `--signatures` read: each file named, and the `part-*.parquet` files of
/// each directory named (as `ndup::shards::read_shards` finds them).
fn shard_files(named: &[PathBuf]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for p in named {
        match std::fs::read_dir(p) {
            Ok(entries) => files.extend(entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(
                |f| {
                    f.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("part-") && n.ends_with(".parquet"))
                },
            )),
            Err(_) => files.push(p.clone()),
        }
    }
    files
}

/// The scanned root, where `.ndupignore` (and `ndup.toml`) are looked for: the first PATH when it
/// is a directory, otherwise the current directory.
pub fn scanned_root(paths: &[PathBuf]) -> PathBuf {
    match paths.first() {
        Some(p) if p.is_dir() => p.clone(),
        _ => PathBuf::from("."),
    }
}
