//! `ndup.toml`: every option of a command in a file, so that a CI job is one short command.
//!
//! The file is looked for in the scanned root (the first PATH when it is a directory, otherwise
//! the current directory), or given with `--config FILE`. Its keys are the long flag names
//! (`threshold = 0.9`, `fail-on-duplicates = true`, `exclude = ["vendor/**"]`; `snake_case` works
//! too). Top-level keys apply to `scan`, `dedup` and `sign` alike (a key, or a value, only some
//! of them know is left to those); a `[scan]`, `[dedup]` or `[sign]` table applies to one command
//! only. Flags on the command
//! line override the file: the file's options are turned into flags and inserted after the
//! command name, except those the command line already gives.
//!
//! A file named with `--config` is trusted as the command line is. A file found in the scanned
//! tree is not: whoever wrote the tree wrote it (a pull request from a stranger, a downloaded
//! corpus). It may only shape the scan of that tree, as git takes only some settings from a
//! repository it does not trust: options that write files, read outside the tree or set the
//! machine's resources are refused, and the files it names for reading (`baseline`, `stopwords`)
//! must lie inside the tree.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, Command, CommandFactory};

use crate::cli::Cli;

/// The file looked for in the scanned root.
pub const FILE_NAME: &str = "ndup.toml";

/// Commands that read a configuration file.
const COMMANDS: &[&str] = &["scan", "dedup", "sign"];

/// Options a configuration found in the scanned tree may set: they shape the scan of that tree
/// and nothing else. Every other option is refused there (a new flag is untrusted until it is
/// listed here; a test checks that every flag is classified).
const TREE_OPTIONS: &[&str] = &[
    "threshold",
    "containment",
    "shingle",
    "k",
    "w",
    "no-nfkc",
    "no-lowercase",
    "no-collapse-whitespace",
    "no-trim",
    "sketch",
    "modulo",
    "supershingle-size",
    "num-perm",
    "seed",
    "bands",
    "rows",
    "fp-weight",
    "fn-weight",
    "shard-rows",
    "ids",
    "verify",
    "exact",
    "format",
    "clusters",
    "fail-on-duplicates",
    "max-pairs",
    "quiet",
    "jsonl",
    "id-field",
    "text-field",
    "hidden",
    "no-ignore",
    "glob",
    "exclude",
    "keep",
];

/// Options naming a file to read: a configuration found in the tree may set them to a file inside
/// the tree.
const TREE_FILES: &[&str] = &["baseline", "stopwords"];

/// Size limits a configuration found in the tree may lower but not raise above their defaults:
/// they are what keeps a hostile file from taking all memory.
const TREE_LIMITS: &[(&str, u64)] = &[
    ("max-filesize", ndup::source::files::DEFAULT_MAX_FILESIZE),
    (
        "max-line-length",
        ndup::source::records::DEFAULT_MAX_LINE_BYTES,
    ),
];

/// Counts a configuration found in the tree may lower but not raise above their defaults: they
/// bound what a report holds and the work of a scan, so a hostile file cannot make them huge.
const TREE_COUNTS: &[(&str, u64)] = &[
    (
        "html-max-pairs",
        ndup::report::html::DEFAULT_MAX_PAIRS as u64,
    ),
    // Buckets above it are linked as stars: a larger one lets a family of copies make the
    // pairs quadratic.
    ("max-bucket", ndup::find::config::DEFAULT_MAX_BUCKET as u64),
];

/// Options a configuration found in the tree may not set, and why.
const UNTRUSTED: &[(&str, &str)] = &[
    ("output", "writes a file"),
    ("write-baseline", "writes a file"),
    ("index", "writes a file"),
    ("html-report", "writes a file"),
    ("files-from", "reads outside the scanned tree"),
    ("null", "reads outside the scanned tree"),
    ("follow", "reads outside the scanned tree"),
    ("threads", "sets the machine's resources"),
    ("max-memory", "sets the machine's resources"),
    ("partial-input", "accepts a corpus that lacks records"),
    ("color", "is the user's choice for the terminal"),
    ("out", "writes files"),
    ("signatures", "reads outside the scanned tree"),
];

/// The configuration file in use.
pub struct Found {
    /// Its path.
    pub path: PathBuf,
}

/// How far a configuration file is trusted.
enum Trust {
    /// Named with `--config`: as the command line.
    Named,
    /// Found in the scanned tree, whose root (with links resolved) is given.
    Tree(PathBuf),
}

/// `argv` with the options of the configuration file, if there is one, inserted after the command
/// name, and the file's path. Arguments clap cannot parse are returned unchanged, for clap to
/// report.
pub fn expand(argv: Vec<OsString>) -> Result<(Vec<OsString>, Option<Found>)> {
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
    let (path, trust) = match sub.get_one::<PathBuf>("config_file") {
        Some(p) => (p.clone(), Trust::Named),
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
            if std::fs::symlink_metadata(&path).is_err() {
                return Ok((argv, None));
            }
            ndup::source::files::check_inside_tree(&path, &root).map_err(|why| {
                anyhow::anyhow!(
                    "{}: {why}: a configuration from outside the tree is named with --config",
                    path.display()
                )
            })?;
            match std::fs::metadata(&path) {
                // A dangling link: no configuration, as when there is no file.
                Err(_) => return Ok((argv, None)),
                // It comes with the tree: a FIFO would block the run, a device never end.
                Ok(m) if !m.is_file() => {
                    anyhow::bail!("{}: not a regular file", path.display())
                }
                Ok(_) => {}
            }
            let root = root.canonicalize().map_err(|e| {
                anyhow::anyhow!("{}: {}", root.display(), ndup::model::io_reason(&e))
            })?;
            (path, Trust::Tree(root))
        }
    };
    let text = ndup::source::files::read_side_text(&path).map_err(|e| {
        anyhow::anyhow!(
            "{}: cannot read the configuration: {}",
            path.display(),
            ndup::model::io_reason(&e)
        )
    })?;
    let table: toml::Table = toml::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), e.message()))?;
    let flags = flags(&path, &trust, &table, &cmd, name, &matches, sub)?;
    check_patterns(&path, &flags)?;
    let at = command_position(&argv, name);
    let mut out = argv;
    out.splice(at + 1..at + 1, flags);
    Ok((out, Some(Found { path })))
}

/// Refuses a file whose `glob` and `exclude` hold more globs than a
/// [`PatternBudget`](ndup::source::files::PatternBudget) allows, and compiles those it gives
/// (`flags`), so that one that does not compile is blamed on the file: the scan builds them
/// with the command line's, and its error could name neither.
fn check_patterns(path: &Path, flags: &[OsString]) -> Result<()> {
    let (mut globs, mut excludes) = (Vec::new(), Vec::new());
    let mut budget = ndup::source::files::PatternBudget::default();
    for flag in flags {
        let flag = flag.to_string_lossy();
        let (list, glob) = if let Some(g) = flag.strip_prefix("--glob=") {
            (&mut globs, g)
        } else if let Some(g) = flag.strip_prefix("--exclude=") {
            (&mut excludes, g)
        } else {
            continue;
        };
        if let Err(why) = budget.add(glob) {
            bail!("{}: {why}", path.display());
        }
        list.push(glob.to_string());
    }
    ndup::source::files::check_globs(&globs, &excludes)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// Index of the command name in `argv` (after any global `-j N`).
fn command_position(argv: &[OsString], name: &str) -> usize {
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].to_string_lossy();
        if a == "-j" || a == "--threads" || a == "--color" {
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
#[allow(clippy::too_many_arguments)]
fn flags(
    path: &Path,
    trust: &Trust,
    table: &toml::Table,
    cmd: &Command,
    name: &str,
    top: &ArgMatches,
    sub: &ArgMatches,
) -> Result<Vec<OsString>> {
    let this = cmd.find_subcommand(name).expect("a known command");
    let long = |key: &str| key.replace('_', "-");
    // The command's own table wins over a top-level key: it is the more specific of the two.
    let own: Vec<String> = match table.get(name) {
        Some(toml::Value::Table(t)) => t.keys().map(|k| long(k)).collect(),
        _ => Vec::new(),
    };
    let mut out = Vec::new();
    for (key, value) in table {
        if COMMANDS.contains(&key.as_str()) {
            let toml::Value::Table(t) = value else {
                bail!("{}: `{key}` must be a table ([{key}])", path.display());
            };
            if key == name {
                for (k, v) in t {
                    if !flag(path, trust, k, v, cmd, this, top, sub, &mut out)? {
                        bail!("{}: [{key}]: unknown option `{k}`", path.display());
                    }
                }
            }
            continue;
        }
        if own.contains(&long(key)) {
            continue;
        }
        // A top-level option is for every command that can take its value: `format = "csv"`
        // is scan's business, not that of dedup, whose formats are others.
        if !fits(this, key, value)
            && COMMANDS
                .iter()
                .filter_map(|c| cmd.find_subcommand(c))
                .any(|c| fits(c, key, value) && find(c, key).is_some())
        {
            continue;
        }
        if !flag(path, trust, key, value, cmd, this, top, sub, &mut out)? {
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

/// False when `cmd` has the option `key` with a fixed list of values and `value` is not one of
/// them.
fn fits(cmd: &Command, key: &str, value: &toml::Value) -> bool {
    let (Some(arg), toml::Value::String(v)) = (find(cmd, key), value) else {
        return true;
    };
    let values = arg.get_possible_values();
    values.is_empty() || values.iter().any(|p| p.matches(v, false))
}

/// True when a string in `v` holds a control character.
fn has_control(v: &toml::Value) -> bool {
    match v {
        toml::Value::String(s) => s.chars().any(char::is_control),
        toml::Value::Array(a) => a.iter().any(has_control),
        toml::Value::Table(t) => t.values().any(has_control),
        _ => false,
    }
}

/// Refuses `long = value` in a configuration found in the tree at `root`, unless it only shapes
/// the scan of that tree.
fn trusted_in_tree(path: &Path, root: &Path, long: &str, value: &toml::Value) -> Result<()> {
    let refuse = |why: &str| {
        anyhow::anyhow!(
            "{}: `{long}` {why}: a configuration found in the scanned tree may only shape the scan; \
             give it on the command line, or name this file with --config",
            path.display()
        )
    };
    // A value goes to the argument parser, whose own messages print it raw: a control character
    // from the tree could drive the terminal.
    if has_control(value) {
        return Err(refuse("holds a control character"));
    }
    if TREE_OPTIONS.contains(&long) {
        return Ok(());
    }
    if TREE_FILES.contains(&long) {
        let toml::Value::String(file) = value else {
            return Ok(()); // the type error is reported with the value
        };
        return match Path::new(file).canonicalize() {
            // A FIFO would block the scan forever: the tree's files are regular ones.
            Ok(real) if real.starts_with(root) && !real.is_file() => Err(refuse(&format!(
                "names {file}, which is not a regular file"
            ))),
            Ok(real) if real.starts_with(root) => Ok(()),
            Ok(_) => Err(refuse(&format!(
                "names {file}, which is not a file inside the scanned tree"
            ))),
            Err(e) => Err(anyhow::anyhow!(
                "{}: `{long}` names {file}: {}",
                path.display(),
                ndup::model::io_reason(&e)
            )),
        };
    }
    // A limit is judged by the very text the argument parser will get (a float, say, becomes
    // digits), and one that cannot be read is refused here: it must not get past unjudged.
    if let Some(&(_, default)) = TREE_LIMITS.iter().find(|(name, _)| *name == long) {
        let size = scalar(value).and_then(|text| crate::cli::parse_size(&text).ok());
        return match size {
            Some(size) if size <= default => Ok(()),
            Some(_) => Err(refuse(&format!(
                "raises a size limit above its default of {}",
                ndup::error::format_bytes(default)
            ))),
            None => Err(refuse("is not a size (like 1048576 or \"1M\")")),
        };
    }
    if let Some(&(_, default)) = TREE_COUNTS.iter().find(|(name, _)| *name == long) {
        let n = scalar(value).and_then(|text| text.parse::<u64>().ok());
        return match n {
            Some(n) if n <= default => Ok(()),
            Some(_) => Err(refuse(&format!(
                "raises a limit above its default of {default}"
            ))),
            None => Err(refuse("is not a whole number")),
        };
    }
    let why = UNTRUSTED
        .iter()
        .find(|(name, _)| *name == long)
        .map_or("is not an option of the scanned tree", |(_, why)| *why);
    Err(refuse(why))
}

/// The text of a string or a number, as the argument parser gets it.
fn scalar(value: &toml::Value) -> Option<String> {
    match value {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        _ => None,
    }
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
    trust: &Trust,
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
    // Judged before the command line overrides it: a tree whose file asks to write or to read
    // outside is refused whatever the command line gives, as the manual says.
    if let Trust::Tree(root) = trust {
        trusted_in_tree(path, root, long, value)?;
    }
    if given.value_source(arg.get_id().as_str()) == Some(ValueSource::CommandLine) {
        return Ok(true); // the command line wins
    }
    let bad = |what: &str| anyhow::anyhow!("{}: `{key}` must be {what}", path.display());
    let scalar = |v: &toml::Value| scalar(v).ok_or_else(|| bad("a string or a number"));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every option of the commands that read a configuration is deliberately trusted or not in
    /// a file found in the scanned tree.
    #[test]
    fn every_option_is_classified() {
        let cmd = Cli::command();
        let mut longs: Vec<String> = cmd
            .get_arguments()
            .filter_map(|a| a.get_long().map(str::to_string))
            .collect();
        for name in COMMANDS {
            let sub = cmd.find_subcommand(name).unwrap();
            longs.extend(
                sub.get_arguments()
                    .filter_map(|a| a.get_long().map(str::to_string)),
            );
        }
        for long in longs {
            let known = TREE_OPTIONS.contains(&long.as_str())
                || TREE_FILES.contains(&long.as_str())
                || TREE_LIMITS.iter().any(|(n, _)| *n == long)
                || TREE_COUNTS.iter().any(|(n, _)| *n == long)
                || UNTRUSTED.iter().any(|(n, _)| *n == long)
                || matches!(long.as_str(), "config" | "help" | "version");
            assert!(
                known,
                "--{long}: may an ndup.toml found in the scanned tree set it?"
            );
        }
    }
}
