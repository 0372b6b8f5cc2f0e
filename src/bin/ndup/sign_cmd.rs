//! `ndup sign`: the map stage alone, written as Parquet signature shards.

use anyhow::Result;

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
    let options = ndup::shards::SignOptions {
        shard_rows: args.shard_rows as usize,
        ids: args.ids.into(),
    };
    let report = ndup::shards::sign(&pipeline, &source, &args.out, &options)?;
    if let Some(bar) = &bar {
        bar.finish();
    }
    if !args.corpus.quiet {
        crate::messages::skips(&report.skipped);
        eprintln!(
            "ndup: {} documents ({} empty), {} skipped, signed into {} shard{} in {}",
            report.documents,
            report.empty,
            report.skipped.len(),
            report.shards.len(),
            if report.shards.len() == 1 { "" } else { "s" },
            args.out.display()
        );
    }
    Ok(Exit::Success)
}
