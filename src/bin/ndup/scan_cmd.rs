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
    // Unbanded slots are always in the params record. The note is for a user who shaped the
    // banding: with the tuner's defaults it would repeat the same sentence on every run.
    let shaped = args.bands.is_some() || args.rows.is_some() || args.sketching.num_perm.is_some();
    let note = (shaped && config.effective_sample().is_none())
        .then(|| {
            let tuned = args.bands.is_none() || args.rows.is_none();
            ndup::tune::unbanded_note(config.num_perm, config.lsh, tuned)
        })
        .flatten();
    let report = Pipeline::new(config)?.scan(&args.paths)?;
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
        if let Some(note) = note {
            eprintln!("ndup: note: {note}");
        }
        let clusters = args.clusters.then_some(found);
        eprintln!("{}", output::summary_line(&report.stats, clusters));
    }
    Ok(Exit::for_report(found, args.fail_on_duplicates))
}
