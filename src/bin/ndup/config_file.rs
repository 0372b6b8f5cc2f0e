//! `ndup.toml`: every option of a command in a file, so that a CI job is one short command.
//!
//! The file is looked for in the scanned root (the first PATH when it is a directory, otherwise
//! the current directory), or given with `--config FILE`. Its keys are the long flag names
//! (`threshold = 0.9`, `fail-on-duplicates = true`, `exclude = ["vendor/**"]`; `snake_case` works
//! too). Top-level keys apply to `scan` and `dedup` alike (a key only one of them knows is left
//! to that one); a `[scan]` or `[dedup]` table applies to one command only. Flags on the command
//! line override the file: the file's options are turned into flags and inserted after the
//! command name, except those the command line already gives.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, Command, CommandFactory};

use crate::cli::Cli;

/// The file looked for in the scanned root.
pub const FILE_NAME: &str = "ndup.toml";

/// Commands that read a configuration file.
const COMMANDS: &[&str] = &["scan", "dedup"];

/// `argv` with the options of the configuration file, if there is one, inserted after the command
/// name, and the file's path. Arguments clap cannot parse are returned unchanged, for clap to
/// report.
pub fn expand(argv: Vec<OsString>) -> Result<(Vec<OsString>, Option<PathBuf>)> {
    let cmd = Cli::command();
    let Ok(matches) = cmd.clone().try_get_matches_from(&argv) else {
        return Ok((argv, None));
    };
    let Some((name, sub)) = matches.subcommand() else {
        return Ok((argv, None));
    };
    if !COMMANDS.contains(&name) {
        return Ok((argv, None));
    }
    let path = match sub.get_one::<PathBuf>("config_file") {
        Some(p) => p.clone(),
        None => {
            // `scan PATH...` or `dedup INPUT...`.
            let first = ["paths", "inputs"]
                .iter()
                .find_map(|id| sub.try_get_many::<PathBuf>(id).ok().flatten())
                .and_then(|mut v| v.next().cloned());
            let root = match first {
                Some(p) if p.is_dir() => p,
                _ => PathBuf::from("."),
            };
            let path = root.join(FILE_NAME);
            if !path.is_file() {
                return Ok((argv, None));
            }
            path
        }
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        anyhow::anyhow!(
            "{}: cannot read the configuration: {}",
            path.display(),
            ndup::input::io_reason(&e)
        )
    })?;
    let table: toml::Table = toml::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), e.message()))?;
    let flags = flags(&path, &table, &cmd, name, &matches, sub)?;
    let at = command_position(&argv, name);
    let mut out = argv;
    out.splice(at + 1..at + 1, flags);
    Ok((out, Some(path)))
}

/// Index of the command name in `argv` (after any global `-j N`).
fn command_position(argv: &[OsString], name: &str) -> usize {
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].to_string_lossy();
        if a == "-j" || a == "--threads" {
            i += 2;
        } else if a == name {
            return i;
        } else {
            i += 1;
        }
    }
    argv.len() - 1
}

/// The flags the table asks for, for command `name`.
fn flags(
    path: &Path,
    table: &toml::Table,
    cmd: &Command,
    name: &str,
    top: &ArgMatches,
    sub: &ArgMatches,
) -> Result<Vec<OsString>> {
    let this = cmd.find_subcommand(name).expect("a known command");
    let mut out = Vec::new();
    for (key, value) in table {
        if COMMANDS.contains(&key.as_str()) {
            let toml::Value::Table(t) = value else {
                bail!("{}: `{key}` must be a table ([{key}])", path.display());
            };
            if key == name {
                for (k, v) in t {
                    if !flag(path, k, v, cmd, this, top, sub, &mut out)? {
                        bail!("{}: [{key}]: unknown option `{k}`", path.display());
                    }
                }
            }
            continue;
        }
        if !flag(path, key, value, cmd, this, top, sub, &mut out)? {
            // Known to another command: that command's business.
            let elsewhere = COMMANDS
                .iter()
                .filter(|c| **c != name)
                .filter_map(|c| cmd.find_subcommand(c))
                .any(|c| find(c, key).is_some());
            if !elsewhere {
                bail!("{}: unknown option `{key}`", path.display());
            }
        }
    }
    Ok(out)
}

fn find<'a>(cmd: &'a Command, key: &str) -> Option<&'a clap::Arg> {
    let long = key.replace('_', "-");
    cmd.get_arguments()
        .find(|a| a.get_long() == Some(long.as_str()))
}

/// Appends the flag for `key = value`; false when `this` command has no such option.
#[allow(clippy::too_many_arguments)]
fn flag(
    path: &Path,
    key: &str,
    value: &toml::Value,
    cmd: &Command,
    this: &Command,
    top: &ArgMatches,
    sub: &ArgMatches,
    out: &mut Vec<OsString>,
) -> Result<bool> {
    let (arg, given) = match (find(this, key), find(cmd, key)) {
        (Some(a), _) => (a, sub),
        (None, Some(a)) if a.is_global_set() => (a, top),
        _ => return Ok(false),
    };
    let long = arg.get_long().expect("found by its long name");
    if matches!(long, "config" | "help" | "version") {
        bail!(
            "{}: `{key}` cannot be set in a configuration file",
            path.display()
        );
    }
    if given.value_source(arg.get_id().as_str()) == Some(ValueSource::CommandLine) {
        return Ok(true); // the command line wins
    }
    let bad = |what: &str| anyhow::anyhow!("{}: `{key}` must be {what}", path.display());
    let scalar = |v: &toml::Value| -> Result<String> {
        match v {
            toml::Value::String(s) => Ok(s.clone()),
            toml::Value::Integer(i) => Ok(i.to_string()),
            toml::Value::Float(f) => Ok(f.to_string()),
            _ => Err(bad("a string or a number")),
        }
    };
    match arg.get_action() {
        ArgAction::SetTrue => match value {
            toml::Value::Boolean(true) => out.push(format!("--{long}").into()),
            toml::Value::Boolean(false) => {}
            _ => return Err(bad("true or false")),
        },
        ArgAction::Append => {
            let items = match value {
                toml::Value::Array(items) => items.iter().map(scalar).collect::<Result<_>>()?,
                v => vec![scalar(v)?],
            };
            for v in items {
                out.push(format!("--{long}={v}").into());
            }
        }
        _ => out.push(format!("--{long}={}", scalar(value)?).into()),
    }
    Ok(true)
}
