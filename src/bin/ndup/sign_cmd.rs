//! `ndup sign`: the map stage alone, written as Parquet signature shards.

use std::io::{IsTerminal, Write};

use anyhow::{Result, bail};

use ndup::find::Pipeline;

use crate::cli::SignArgs;
use crate::exit::Exit;
use crate::progress;

/// Runs `ndup sign`.
pub fn run(args: SignArgs) -> Result<Exit> {
    let config = args.config()?;
    let bar = progress::Bar::for_stderr(args.corpus.quiet);
    let mut pipeline = Pipeline::new(config)?;
    if let Some(bar) = &bar {
        pipeline = pipeline.with_progress(bar.clone());
    }
    let source = args.corpus.input.source(&args.inputs)?;
    let to_stdout = args.out.as_os_str() == "-";
    let report = if to_stdout {
        let stdout = std::io::stdout();
        if stdout.is_terminal() {
            bail!(
                "--out - writes an Arrow IPC stream, not text: pipe it into a program that reads \
                 one, or give a directory"
            );
        }
        let mut out = std::io::BufWriter::new(stdout.lock());
        let report =
            ndup::shards::sign_stream(&pipeline, &source, &mut out, &args.out, args.ids.into())?;
        out.flush()?;
        report
    } else {
        let options = ndup::shards::SignOptions {
            shard_rows: args.shard_rows as usize,
            ids: args.ids.into(),
        };
        ndup::shards::sign(&pipeline, &source, &args.out, &options)?
    };
    if let Some(bar) = &bar {
        bar.finish();
    }
    if !args.corpus.quiet {
        crate::messages::skips(&report.skipped);
        let into = if to_stdout {
            "an Arrow stream on standard output".to_owned()
        } else {
            format!(
                "{} shard{} in {}",
                report.shards.len(),
                if report.shards.len() == 1 { "" } else { "s" },
                args.out.display()
            )
        };
        eprintln!(
            "ndup: {} documents ({} empty), {} skipped, signed into {into}",
            report.documents,
            report.empty,
            report.skipped.len(),
        );
    }
    Ok(Exit::Success)
}
