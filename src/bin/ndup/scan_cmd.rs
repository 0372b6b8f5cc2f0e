//! `ndup scan`: run the pipeline, write the report, then decide the exit status.

use std::io::{BufWriter, Write};

use anyhow::{Context, Result};

use ndup::output::{self, ReportOptions};
use ndup::scan::Pipeline;

use crate::cli::ScanArgs;
use crate::exit::Exit;

/// Runs `ndup scan`.
pub fn run(args: ScanArgs) -> Result<Exit> {
    let config = args.config()?;
    let pipeline = Pipeline::new(config)?;
    let report = match &args.index {
        Some(index) => crate::index_cmd::scan_with_index(&pipeline, &args.paths, index)?,
        None => pipeline.scan(&args.paths)?,
    };
    let opts = ReportOptions {
        clusters: args.clusters,
    };

    // The report is written in full before the exit status is decided.
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    output::reporter(args.format())
        .write(&report, &opts, &mut out)
        .and_then(|()| out.flush())
        .context("writing the report")?;

    let found = output::reported_items(&report, &opts);
    if !args.quiet {
        for s in &report.skipped {
            if s.kind != ndup::input::SkipKind::Binary {
                eprintln!("ndup: {}: {}", s.id, s.reason);
            }
        }
        let clusters = args.clusters.then_some(found);
        eprintln!("{}", output::summary_line(&report.stats, clusters));
    }
    Ok(Exit::for_report(found, args.fail_on_duplicates))
}
