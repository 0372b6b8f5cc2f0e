//! `ndup index build|add|remove|update`, `ndup query`, and the index as a cache for `ndup scan`.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use ndup::Error;
use ndup::find::{Pipeline, SignedCorpus};
use ndup::index::{Index, QueryDoc, QuerySource, SigningParams};
use ndup::model::{Skip, SkipKind};
use ndup::report as output;
use ndup::report::Format;
use ndup::source::Source;
use ndup::source::records::is_stdin;

use crate::cli::{IndexCommand, IndexSyncArgs, QueryArgs, index_config};
use crate::exit::Exit;
use crate::progress;

/// Runs one of the `ndup index` commands.
pub fn run_index(cmd: IndexCommand) -> Result<Exit> {
    let (name, report, format, quiet) = match cmd {
        IndexCommand::Build(args) => {
            let (pipeline, mut index, source) = open_for_sync(&args)?;
            let r = index.build(&pipeline, &source)?;
            ("build", r, args.format.format(), args.quiet)
        }
        IndexCommand::Add(args) => {
            let (pipeline, mut index, source) = open_for_sync(&args)?;
            let r = index.add(&pipeline, &source)?;
            ("add", r, args.format.format(), args.quiet)
        }
        IndexCommand::Update(args) => {
            let (pipeline, mut index, source) = open_for_sync(&args)?;
            let r = index.update(&pipeline, &source)?;
            ("update", r, args.format.format(), args.quiet)
        }
        IndexCommand::Remove(args) => {
            let mut index = Index::open(&args.index)?;
            let r = index.remove(&args.ids)?;
            ("remove", r, args.format.format(), args.quiet)
        }
    };
    write_out(|w| output::index::write_sync(&report, name, format, w))?;
    if !quiet {
        warn_unreadable(&report.skipped);
        eprintln!("{}", output::index::sync_summary_line(&report, name));
    }
    Ok(Exit::Success)
}

/// Checks the paths, then opens the index (creating it when missing).
fn open_for_sync(args: &IndexSyncArgs) -> Result<(Pipeline, Index, Source)> {
    let config = index_config(
        &args.sketching,
        &args.sketch,
        &args.lsh,
        &args.records,
        args.follow,
    )?;
    let source = args.records.source(&args.paths)?;
    // A missing path is an error before the index file is created or touched.
    ndup::index::check_source(&source)?;
    let mut pipeline = Pipeline::new(config)?;
    if let Some(bar) = progress::Bar::for_stderr(args.quiet) {
        pipeline = pipeline.with_progress(bar);
    }
    let index = Index::open_or_create(&args.index, &SigningParams::from_config(pipeline.config()))?;
    Ok((pipeline, index, source))
}

fn check_paths(paths: &[PathBuf]) -> Result<()> {
    for p in paths {
        ndup::source::files::check_exists(p)?;
    }
    Ok(())
}

/// Phase one of `ndup scan --index FILE`: signatures from the index where the files did not
/// change, signing (and storing) the rest; then the usual phase two.
pub fn sign_with_index(
    pipeline: &Pipeline,
    paths: &[PathBuf],
    index: &Path,
) -> Result<SignedCorpus> {
    check_paths(paths)?;
    let params = SigningParams::from_config(pipeline.config());
    let mut index = Index::open_or_create(index, &params)?;
    Ok(index.sign_files(pipeline, paths)?)
}

/// Runs `ndup query`.
pub fn run_query(args: QueryArgs) -> Result<Exit> {
    let config = args.config()?;
    // `-` is one text unless --jsonl says it is records.
    let records = args.records.are_records(&args.docs, args.records.jsonl)?;
    if !records {
        let files: Vec<PathBuf> = args.docs.iter().filter(|p| !is_stdin(p)).cloned().collect();
        check_paths(&files)?;
    }
    let index = Index::open_read_only(&args.index)?;
    let pipeline = Pipeline::new(config)?;
    index.require(&SigningParams::from_config(pipeline.config()))?;
    let (docs, skipped) = if records {
        QueryDoc::from_records(&pipeline, &args.docs)?
    } else {
        files_and_stdin(&args.docs, &pipeline)?
    };
    let mut report = index.query(&pipeline, &docs, args.top)?;
    report.add_skipped(skipped);
    let format: Format = args.format.format();
    write_out(|w| output::index::write_query(&report, &args.index, format, w))?;
    if !args.quiet {
        warn_unreadable(&report.skipped);
        eprintln!("{}", output::index::query_summary_line(&report));
    }
    if report.stats.queries == 0 {
        bail!(Error::NoDocuments {
            skipped: report.skipped.clone()
        });
    }
    Ok(Exit::for_report(
        report.matches.len(),
        args.fail_on_duplicates,
    ))
}

/// The query documents of files and directories in the order given, and standard input once,
/// as `-`; with what was skipped.
fn files_and_stdin(paths: &[PathBuf], pipeline: &Pipeline) -> Result<(Vec<QueryDoc>, Vec<Skip>)> {
    let mut docs: Vec<QueryDoc> = Vec::new();
    let mut skipped: Vec<Skip> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for p in paths {
        if is_stdin(p) {
            if seen.insert("-".to_string()) {
                // Bounded and sniffed as a file is: `yes | ndup query` must not take all memory.
                let limit = pipeline.config().input.max_filesize;
                match ndup::source::files::read_document_from(std::io::stdin().lock(), limit) {
                    Ok(ndup::source::files::Read::Text(text)) => docs.push(QueryDoc {
                        id: "-".into(),
                        source: QuerySource::Text(text),
                    }),
                    Ok(ndup::source::files::Read::Binary) => skipped.push(Skip::binary("-")),
                    Err(e) if e.kind() == std::io::ErrorKind::FileTooLarge => {
                        skipped.push(Skip::unreadable("-", &e));
                    }
                    Err(e) => return Err(e).context("reading standard input"),
                }
            }
            continue;
        }
        let (found, skips) = QueryDoc::from_paths(std::slice::from_ref(p), pipeline.config())?;
        docs.extend(found.into_iter().filter(|d| seen.insert(d.id.clone())));
        skipped.extend(skips);
    }
    Ok((docs, skipped))
}

/// Writes a whole report to stdout.
fn write_out(f: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    f(&mut out)
        .and_then(|()| out.flush())
        .context("writing the report")
}

fn warn_unreadable(skipped: &[Skip]) {
    for s in skipped {
        if s.kind != SkipKind::Binary {
            crate::messages::error(&format!("{}: {}", s.id, s.reason));
        }
    }
}
