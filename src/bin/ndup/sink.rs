//! Where a report goes: standard output, or a file written atomically; and whether to colour it.

use std::io::{BufWriter, IsTerminal, Write};
use std::path::Path;

use anyhow::{Context, Result};

/// Calls `write` with standard output (a report), or, with `path`, with a temporary file in the same
/// directory that then replaces `path` in one rename: a reader never sees half a report, and a
/// failed run leaves the previous file in place.
pub fn write_to(
    path: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    match path {
        None => {
            let stdout = std::io::stdout();
            let mut out = BufWriter::new(stdout.lock());
            write(&mut out)
                .and_then(|()| out.flush())
                .context("writing the report")
        }
        Some(path) => {
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            let tmp = tempfile::NamedTempFile::new_in(dir)
                .with_context(|| format!("{}: cannot create a temporary file", dir.display()))?;
            let mut out = BufWriter::new(tmp);
            write(&mut out)
                .and_then(|()| out.flush())
                .with_context(|| format!("{}: cannot write", path.display()))?;
            let tmp = out
                .into_inner()
                .map_err(|e| e.into_error())
                .with_context(|| format!("{}: cannot write", path.display()))?;
            tmp.persist(path)
                .map_err(|e| e.error)
                .with_context(|| format!("{}: cannot write", path.display()))?;
            Ok(())
        }
    }
}

/// Colour only on a terminal, and never when `NO_COLOR` is set to anything but the empty string
/// (<https://no-color.org>).
pub fn color_stdout(to_file: bool) -> bool {
    !to_file
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && std::io::stdout().is_terminal()
}
