//! `ndup completions` and `ndup man`: the shell's view of the flags, generated from the same
//! definitions as `--help`, so they cannot drift from it.

use anyhow::{Result, bail};
use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use crate::exit::Exit;
use crate::sink::Output;

/// Runs `ndup completions SHELL`.
pub fn run_completions(args: CompletionsArgs) -> Result<Exit> {
    let mut cmd = Cli::command();
    Output::open(None)?.write(|w| {
        clap_complete::generate(args.shell, &mut cmd, "ndup", w);
        Ok(())
    })?;
    Ok(Exit::Success)
}

/// Runs `ndup man [COMMAND...]` or `ndup man --dir DIR`.
pub fn run_man(args: ManArgs) -> Result<Exit> {
    let pages = pages();
    if let Some(dir) = &args.dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("{}: {}", dir.display(), ndup::model::io_reason(&e)))?;
        for (name, cmd) in pages {
            let page = render(cmd)?;
            Output::open(Some(&dir.join(format!("{name}.1"))))?.write(|w| w.write_all(&page))?;
        }
        return Ok(Exit::Success);
    }
    let name = std::iter::once("ndup")
        .chain(args.command.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("-");
    let Some((_, cmd)) = pages.into_iter().find(|(n, _)| *n == name) else {
        bail!(
            "no manual page for `ndup {}`: see `ndup --help` for the commands",
            args.command.join(" ")
        );
    };
    let page = render(cmd)?;
    Output::open(None)?.write(|w| w.write_all(&page))?;
    Ok(Exit::Success)
}

/// Every page: ndup itself and each command, nested ones too (`ndup-index-build`), named as
/// their files are, without clap's `help` command.
pub fn pages() -> Vec<(String, clap::Command)> {
    fn walk(cmd: &clap::Command, name: &str, out: &mut Vec<(String, clap::Command)>) {
        out.push((name.to_owned(), cmd.clone()));
        for sub in cmd.get_subcommands() {
            walk(sub, &format!("{name}-{}", sub.get_name()), out);
        }
    }
    // Built first, so that the global flags (`--threads`, `--color`) are in every page.
    let mut root = Cli::command().disable_help_subcommand(true);
    root.build();
    let mut out = Vec::new();
    walk(&root, "ndup", &mut out);
    out
}

fn render(cmd: clap::Command) -> Result<Vec<u8>> {
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut page)?;
    Ok(page)
}
