//! The `ndup` command: parse flags, build the work, run it, report, exit.

mod cli;
mod compare_cmd;
mod config_file;
mod dedup_cmd;
mod exit;
mod index_cmd;
mod messages;
mod progress;
mod scan_cmd;
mod shell_cmd;
mod sign_cmd;
mod sink;
mod tune_cmd;

use clap::{CommandFactory, FromArgMatches};

use crate::cli::{Cli, ColorWhen, Command};
use crate::exit::Exit;

fn main() {
    let (argv, config) = match config_file::expand(std::env::args_os().collect()) {
        Ok(x) => x,
        Err(err) => {
            messages::error(&messages::describe(&err));
            std::process::exit(Exit::Error as i32);
        }
    };
    // Clap's help and errors follow `--color` too, so it is read before clap parses.
    let color = ColorWhen::from_argv(&argv);
    let parsed = Cli::command()
        .color(color.for_clap())
        .try_get_matches_from(argv)
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(err) => {
            if let Some(found) = config.filter(|_| err.use_stderr()) {
                messages::error(&format!("with the options of {}:", found.path.display()));
            }
            err.exit()
        }
    };
    let code = match run(cli) {
        Ok(code) => code,
        Err(err) => {
            let code = Exit::for_error(&err);
            if code == Exit::Error {
                messages::error(&messages::describe(&err));
            }
            code
        }
    };
    std::process::exit(code as i32);
}

fn run(cli: Cli) -> anyhow::Result<Exit> {
    sink::set_color(cli.color);
    // rayon reads RAYON_NUM_THREADS itself when no count is given: the same bound applies.
    let from_env = || -> anyhow::Result<Option<usize>> {
        match std::env::var("RAYON_NUM_THREADS") {
            Ok(v) if v.trim().parse::<usize>().is_ok() => cli::parse_threads(v.trim())
                .map(Some)
                .map_err(|e| anyhow::anyhow!("RAYON_NUM_THREADS: {e}")),
            _ => Ok(None),
        }
    };
    if let Some(n) = cli.threads.map_or_else(from_env, |n| Ok(Some(n)))? {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
            .map_err(|e| anyhow::anyhow!("cannot start {n} threads: {e}"))?;
    }
    match cli.command {
        Command::Scan(args) => scan_cmd::run(*args),
        Command::Tune(args) => tune_cmd::run(args),
        Command::Compare(args) => compare_cmd::run(*args),
        Command::Dedup(args) => dedup_cmd::run(*args),
        Command::Sign(args) => sign_cmd::run(*args),
        Command::Index(cmd) => index_cmd::run_index(cmd),
        Command::Query(args) => index_cmd::run_query(*args),
        Command::Completions(args) => shell_cmd::run_completions(args),
        Command::Man(args) => shell_cmd::run_man(args),
    }
}
