//! `ndup scan`: run the pipeline, write the report, then decide the exit status.

use std::time::Instant;

use anyhow::Result;

use ndup::input::{Skip, SkipKind};
use ndup::output::{self, Format, ReportOptions};
use ndup::scan::Pipeline;

use crate::cli::ScanArgs;
use crate::exit::Exit;
use crate::sink;

/// Runs `ndup scan`.
pub fn run(args: ScanArgs) -> Result<Exit> {
    let config = args.config()?;
    let pipeline = Pipeline::new(config)?;
    let start = Instant::now();
    let corpus = if args.input.is_jsonl(&args.paths)? {
        let mut sources = args.paths.clone();
        if let Some(list) = &args.input.files_from {
            // With JSON lines, the listed files are more sources.
            sources.extend(ndup::input::read_list(list, args.input.null)?);
        }
        pipeline.sign_records(&sources)?
    } else {
        pipeline.sign_files(&args.paths)?
    };
    if corpus.documents.is_empty() && !args.quiet {
        // Say why nothing could be read before failing.
        print_skips(&corpus.skipped);
    }
    let report = pipeline.find_pairs(corpus, start)?;
    let format = args.format();
    let opts = ReportOptions {
        clusters: args.clusters,
        color: format == Format::Text && sink::color_stdout(args.output.is_some()),
    };

    // The report is written in full before the exit status is decided.
    let reporter = output::reporter(format);
    sink::write_to(args.output.as_deref(), |w| {
        reporter.write(&report, &opts, w)
    })?;

    let found = output::reported_items(&report, &opts);
    if !args.quiet {
        print_skips(&report.skipped);
        let clusters = args.clusters.then_some(found);
        eprintln!("{}", output::summary_line(&report.stats, clusters));
    }
    Ok(Exit::for_report(found, args.fail_on_duplicates))
}

/// One stderr line per skipped document, except binary and too large files (expected, and
/// counted in the summary).
fn print_skips(skipped: &[Skip]) {
    for s in skipped {
        if !matches!(s.kind, SkipKind::Binary | SkipKind::TooLarge) {
            eprintln!("ndup: {}: {}", s.id, s.reason);
        }
    }
}
