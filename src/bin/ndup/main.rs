//! The `ndup` command: parse flags, build the work, run it, report, exit.

mod cli;
mod exit;
mod index_cmd;
mod scan_cmd;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::exit::Exit;

fn main() {
    let cli = Cli::parse();
    let code = match run(cli) {
        Ok(code) => code,
        Err(err) => {
            let code = Exit::for_error(&err);
            if code == Exit::Error {
                eprintln!("ndup: {err:#}");
            }
            code
        }
    };
    std::process::exit(code as i32);
}

fn run(cli: Cli) -> anyhow::Result<Exit> {
    if let Some(n) = cli.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
            .map_err(|e| anyhow::anyhow!("cannot start {n} threads: {e}"))?;
    }
    match cli.command {
        Command::Scan(args) => scan_cmd::run(*args),
        Command::Index(cmd) => index_cmd::run_index(cmd),
        Command::Query(args) => index_cmd::run_query(*args),
    }
}
