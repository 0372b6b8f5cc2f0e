//! Where a report goes: standard output, or a file; and whether to colour it.
//!
//! A path is checked when the command starts, before any work, and written when the work is done.
//! A regular file is replaced atomically (a temporary file in the same directory renamed into
//! place), so a reader never sees half a report and a failed run leaves the previous file; it
//! keeps the mode of the file it replaces, and a new file gets the umask's. Anything else (a
//! device such as `/dev/null`, a FIFO) is written in place: replacing it would destroy it. A
//! symbolic link is followed to its target. A descriptor this process already has open, named as
//! `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` or `/proc/self/fd/N` (or reached by links through
//! one), is written where it stands, duplicated rather than opened again: a pipe is written
//! into, a file opened to append (`>> log`) is appended to.
//!
//! A regular file is never replaced when it is one of the inputs: those named on the command line
//! are checked when the command starts ([`Output::refuse_inputs`]), every file the run read
//! (walked in a directory, listed, a record file) when the report is ready
//! ([`Output::refuse_read`]).

use std::borrow::Cow;
use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{BufWriter, IsTerminal, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use ndup::find::ScanReport;
use ndup::source::{Origin, Source};

use crate::cli::ColorWhen;

/// How many links are followed before the path is called a loop (as the kernel's `ELOOP`).
const MAX_LINKS: usize = 40;

/// A report's destination, checked but not yet written.
#[derive(Debug)]
pub struct Output {
    target: Target,
}

#[derive(Debug)]
enum Target {
    Stdout,
    /// A regular file, or a path to create. `path` is what the user named (for messages),
    /// `real` where links lead.
    Replace {
        path: PathBuf,
        real: PathBuf,
        mode: Option<Permissions>,
    },
    /// A device or FIFO, written where it is. A device is opened at once (so that an unwritable
    /// one is an error before the work); a FIFO when the report is ready, since opening one
    /// waits for a reader.
    InPlace {
        path: PathBuf,
        file: Option<File>,
    },
    /// A descriptor this process has open (`/dev/stdout`, `/dev/fd/3`), named by its number
    /// `fd` and duplicated as `file`: written at its own offset (appending when it was opened to
    /// append), never reopened by path, which would truncate it or write at its start, and could
    /// not reopen a pipe at all.
    #[cfg(unix)]
    Descriptor {
        path: PathBuf,
        fd: i32,
        file: File,
    },
}

/// Where a path leads once its links are followed.
enum Lead {
    /// A path (which may not exist yet).
    Path(PathBuf),
    /// A descriptor of this process, by number.
    #[cfg(unix)]
    Descriptor(i32),
}

impl Output {
    /// Standard output for `None` or `-`; otherwise the file, checked for writing now.
    pub fn open(path: Option<&Path>) -> Result<Output> {
        let Some(path) = path.filter(|p| p.as_os_str() != "-") else {
            return Ok(Output {
                target: Target::Stdout,
            });
        };
        let real = match follow_links(path)? {
            Lead::Path(real) => real,
            #[cfg(unix)]
            Lead::Descriptor(fd) => {
                let file =
                    duplicate(fd).with_context(|| format!("{}: cannot write", path.display()))?;
                if file.metadata().is_ok_and(|m| m.is_dir()) {
                    bail!("{}: is a directory", path.display());
                }
                return Ok(Output {
                    target: Target::Descriptor {
                        path: path.to_path_buf(),
                        fd,
                        file,
                    },
                });
            }
        };
        let target = match fs::metadata(&real) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                probe_dir(path, &real)?;
                Target::Replace {
                    path: path.to_path_buf(),
                    real,
                    mode: None,
                }
            }
            Err(e) => return Err(e).with_context(|| format!("{}: cannot write", path.display())),
            Ok(m) if m.is_dir() => bail!("{}: is a directory", path.display()),
            Ok(m) if m.is_file() => {
                probe_dir(path, &real)?;
                Target::Replace {
                    path: path.to_path_buf(),
                    real,
                    mode: Some(m.permissions()),
                }
            }
            Ok(m) => {
                use std::os::unix::fs::FileTypeExt;
                let file = if m.file_type().is_fifo() {
                    None
                } else {
                    Some(
                        OpenOptions::new()
                            .write(true)
                            .open(&real)
                            .with_context(|| format!("{}: cannot write", path.display()))?,
                    )
                };
                Target::InPlace {
                    path: path.to_path_buf(),
                    file,
                }
            }
        };
        Ok(Output { target })
    }

    /// True when the report goes to standard output.
    pub fn is_stdout(&self) -> bool {
        matches!(self.target, Target::Stdout)
    }

    /// The name the user gave, for messages (`-` for standard output).
    pub fn name(&self) -> &Path {
        match &self.target {
            Target::Stdout => Path::new("-"),
            Target::Replace { path, .. } | Target::InPlace { path, .. } => path,
            #[cfg(unix)]
            Target::Descriptor { path, .. } => path,
        }
    }

    /// True when this output and `other` are the same file (by device and inode when it exists,
    /// else by the path links lead to), or the same descriptor (`-` and `/dev/stdout`).
    pub fn same_as(&self, other: &Output) -> bool {
        match (&self.target, &other.target) {
            (Target::Replace { real: a, .. }, Target::Replace { real: b, .. }) => {
                same_inode(a, b) || absolute(a) == absolute(b)
            }
            #[cfg(unix)]
            (Target::Descriptor { fd: a, .. }, Target::Descriptor { fd: b, .. }) => a == b,
            #[cfg(unix)]
            (Target::Stdout, Target::Descriptor { fd: 1, .. })
            | (Target::Descriptor { fd: 1, .. }, Target::Stdout) => true,
            _ => false,
        }
    }

    /// True when the file this output would replace is `file` (by device and inode).
    pub fn replaces(&self, file: &Path) -> bool {
        matches!(&self.target, Target::Replace { real, .. } if same_inode(real, file))
    }

    /// Refuses to replace one of `inputs`: the report would destroy the corpus it was made from.
    /// Files are compared by device and inode, so another spelling, a link or a hard link of an
    /// input is caught too.
    pub fn refuse_inputs(&self, inputs: &[PathBuf], what: &str) -> Result<()> {
        if let Target::Replace { path, real, .. } = &self.target
            && let Some(input) = inputs.iter().find(|i| same_inode(i, real))
        {
            bail!(
                "{}: the {what} would overwrite the input {}; write elsewhere",
                path.display(),
                input.display()
            );
        }
        Ok(())
    }

    /// Refuses to replace a file the run read: `read` is every file of the corpus (walked in a
    /// directory, listed by `--files-from`, a record file), known only once the documents were
    /// read, so this is checked when the report is ready, before anything is written. The file
    /// is compared by device and inode with each: a spelling or a hard link is caught too.
    pub fn refuse_read<P: AsRef<Path>>(
        &self,
        read: impl IntoIterator<Item = P>,
        what: &str,
    ) -> Result<()> {
        let Target::Replace { path, real, .. } = &self.target else {
            return Ok(());
        };
        // A file that is not there (yet) is none of the inputs.
        let Some(key) = file_key(real) else {
            return Ok(());
        };
        for input in read {
            let input = input.as_ref();
            if file_key(input) == Some(key) {
                bail!(
                    "{}: the {what} would overwrite the input {}; write elsewhere",
                    path.display(),
                    input.display()
                );
            }
        }
        Ok(())
    }

    /// Calls `write` with the destination and finishes it (renames a replaced file into place).
    pub fn write(
        self,
        write: impl FnOnce(&mut (dyn Write + Send)) -> std::io::Result<()>,
    ) -> Result<()> {
        match self.target {
            Target::Stdout => {
                // Not locked: a Parquet writer needs a destination it could send to a thread.
                let mut out = BufWriter::new(std::io::stdout());
                write(&mut out)
                    .and_then(|()| out.flush())
                    .context("writing the report")
            }
            Target::InPlace { path, file } => {
                let file = match file {
                    Some(f) => f,
                    None => OpenOptions::new()
                        .write(true)
                        .open(&path)
                        .with_context(|| format!("{}: cannot write", path.display()))?,
                };
                let mut out = BufWriter::new(file);
                write(&mut out)
                    .and_then(|()| out.flush())
                    .with_context(|| format!("{}: cannot write", path.display()))
            }
            Target::Replace { path, real, mode } => {
                let cannot = || format!("{}: cannot write", path.display());
                let tmp = temp_beside(&real).with_context(cannot)?;
                if let Some(mode) = mode {
                    // Set on the open file: not subject to the umask, so the mode is kept exactly.
                    tmp.as_file().set_permissions(mode).with_context(cannot)?;
                }
                let mut out = BufWriter::new(tmp);
                write(&mut out)
                    .and_then(|()| out.flush())
                    .with_context(cannot)?;
                let tmp = out
                    .into_inner()
                    .map_err(|e| e.into_error())
                    .with_context(cannot)?;
                tmp.persist(&real)
                    .map_err(|e| e.error)
                    .with_context(cannot)?;
                Ok(())
            }
            #[cfg(unix)]
            Target::Descriptor { path, file, .. } => {
                let mut out = BufWriter::new(file);
                write(&mut out)
                    .and_then(|()| out.flush())
                    .with_context(|| format!("{}: cannot write", path.display()))
            }
        }
    }
}

/// The files a run read to make `report` from `source`: each file document and each file
/// skipped (a binary one was opened, and every one is an input the user gave, by a directory or
/// a list), or for records each record file (listed ones and a Parquet dataset's files too).
/// Files filtered out by the walk (`--glob`, `.gitignore`, hidden) are not among them. Lazy:
/// nothing is gathered unless [`Output::refuse_read`] has a file to compare them with.
pub fn files_read<'a>(
    report: &'a ScanReport,
    source: &Source,
) -> impl Iterator<Item = Cow<'a, Path>> + use<'a> {
    let (documents, skipped, records) = match source {
        Source::Files(_) => (&report.documents[..], &report.skipped[..], Vec::new()),
        Source::Records(paths) => (&[][..], &[][..], paths.clone()),
        Source::Texts(_) => (&[][..], &[][..], Vec::new()),
    };
    let documents = documents.iter().filter_map(|d| match &d.origin {
        Origin::File(p) => Some(Cow::Borrowed(p.as_path())),
        Origin::Record { .. } | Origin::Text { .. } => None,
    });
    let skipped = skipped
        .iter()
        .map(|s| Cow::Owned(ndup::source::files::path_of_id(&s.id)));
    // A directory of records is a Parquet dataset: its files are the sources.
    let records = std::iter::once(records)
        .flat_map(|paths| ndup::source::records::expand_datasets(&paths))
        .filter(|p| !ndup::source::records::is_stdin(p))
        .map(Cow::Owned);
    documents.chain(skipped).chain(records)
}

/// A temporary file in the directory of `path`, created with mode 0666 less the umask (what
/// `open(2)` gives any new file), not tempfile's private 0600.
fn temp_beside(path: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    tempfile::Builder::new()
        .prefix(".ndup-")
        .permissions(Permissions::from_mode(0o666))
        .tempfile_in(parent(path))
        .map_err(|e| {
            // tempfile names its random file in the message; the user named another.
            let text = e.to_string();
            match text.find(" at path ") {
                Some(i) => std::io::Error::new(e.kind(), text[..i].to_string()),
                None => e,
            }
        })
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Checks now that a file can be created beside `real`, so that a bad path fails before the
/// work rather than after it. The probe is removed at once: a temporary file left in a scanned
/// tree during the scan would be read as a document.
fn probe_dir(path: &Path, real: &Path) -> Result<()> {
    temp_beside(real)
        .map(drop)
        .with_context(|| format!("{}: cannot write", path.display()))
}

/// Where `path` leads when each symbolic link is followed (the last one may point at nothing
/// yet: writing creates it); a descriptor of this process when it, or a link on the way, names
/// one (`/dev/stdout` leads to `/proc/self/fd/1`, itself a link to `pipe:[1234]`, no path).
fn follow_links(path: &Path) -> Result<Lead> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        #[cfg(unix)]
        if let Some(fd) = descriptor_named(&p) {
            return Ok(Lead::Descriptor(fd));
        }
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = fs::read_link(&p)
                    .with_context(|| format!("{}: cannot read the link", p.display()))?;
                p = parent(&p).join(target);
            }
            _ => return Ok(Lead::Path(p)),
        }
    }
    bail!(
        "{}: cannot write: too many levels of symbolic links",
        path.display()
    )
}

/// The descriptor `path` names, once normalized lexically (`.`, `..`, repeated slashes; a
/// relative path taken from the current directory): `/dev/stdin`, `/dev/stdout`, `/dev/stderr`,
/// `/dev/fd/N`, or `/proc/self/fd/N` (also `thread-self` or this process's id for `self`).
#[cfg(unix)]
fn descriptor_named(path: &Path) -> Option<i32> {
    use std::path::Component;
    let absolute;
    let path = if path.is_absolute() {
        path
    } else {
        absolute = std::env::current_dir().ok()?.join(path);
        &absolute
    };
    let mut parts: Vec<&str> = Vec::new();
    for c in path.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => parts.clear(),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop();
            }
            Component::Normal(name) => parts.push(name.to_str()?),
        }
    }
    // As the kernel spells a descriptor: digits, no leading zero.
    let number = |n: &str| {
        let digits = !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
        if digits && (n == "0" || !n.starts_with('0')) {
            n.parse().ok()
        } else {
            None
        }
    };
    match parts.as_slice() {
        ["dev", "stdin"] => Some(0),
        ["dev", "stdout"] => Some(1),
        ["dev", "stderr"] => Some(2),
        ["dev", "fd", n] => number(n),
        ["proc", "self" | "thread-self", "fd", n] => number(n),
        ["proc", pid, "fd", n] if *pid == std::process::id().to_string() => number(n),
        _ => None,
    }
}

/// A duplicate of this process's descriptor `fd`, sharing its offset and flags (`O_APPEND`).
#[cfg(unix)]
fn duplicate(fd: i32) -> std::io::Result<File> {
    use std::os::fd::{AsFd, BorrowedFd};
    let owned = match fd {
        0 => std::io::stdin().as_fd().try_clone_to_owned()?,
        1 => std::io::stdout().as_fd().try_clone_to_owned()?,
        2 => std::io::stderr().as_fd().try_clone_to_owned()?,
        // SAFETY: the descriptor is only duplicated (`fcntl(F_DUPFD_CLOEXEC)`), never closed or
        // read through the borrow, which ends at once; one that is not open fails with EBADF.
        // It is one the user named and the shell gave this process (`3> log`, `>(cmd)`).
        n => unsafe { BorrowedFd::borrow_raw(n) }.try_clone_to_owned()?,
    };
    Ok(File::from(owned))
}

/// `path` with its directory resolved (the file itself may not exist yet).
fn absolute(path: &Path) -> PathBuf {
    match (parent(path).canonicalize(), path.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => path.to_path_buf(),
    }
}

fn same_inode(a: &Path, b: &Path) -> bool {
    file_key(a).is_some_and(|k| file_key(b) == Some(k))
}

/// The device and inode of the file `path` leads to.
fn file_key(path: &Path) -> Option<(u64, u64)> {
    fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// The `--color` of this run, set once by `main`.
static COLOR: std::sync::OnceLock<ColorWhen> = std::sync::OnceLock::new();

/// Records `--color` for [`color_stdout`].
pub fn set_color(when: ColorWhen) {
    let _ = COLOR.set(when);
}

/// Whether a report written to stdout (`to_stdout`) or a file is coloured: as `--color` says;
/// with `auto`, only on a terminal and never when `NO_COLOR` is set to anything but the empty
/// string (<https://no-color.org>). `always` colours a file too, as `grep --color=always` does.
pub fn color_stdout(to_stdout: bool) -> bool {
    match COLOR.get().copied().unwrap_or(ColorWhen::Auto) {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => {
            to_stdout
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(out: Output, text: &str) -> Result<()> {
        out.write(|w| w.write_all(text.as_bytes()))
    }

    #[test]
    fn a_new_file_gets_the_umask_mode_and_an_old_one_keeps_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("new.json");
        write(Output::open(Some(&new)).unwrap(), "x").unwrap();
        // The test process's umask decides; whatever it is, a new file is not made private.
        let umask_mode = {
            let probe = dir.path().join("probe");
            File::create(&probe).unwrap();
            fs::metadata(&probe).unwrap().permissions().mode() & 0o777
        };
        assert_eq!(
            fs::metadata(&new).unwrap().permissions().mode() & 0o777,
            umask_mode
        );

        let old = dir.path().join("old.json");
        fs::write(&old, "before").unwrap();
        fs::set_permissions(&old, Permissions::from_mode(0o640)).unwrap();
        write(Output::open(Some(&old)).unwrap(), "after").unwrap();
        assert_eq!(fs::read_to_string(&old).unwrap(), "after");
        assert_eq!(
            fs::metadata(&old).unwrap().permissions().mode() & 0o777,
            0o640
        );
    }

    #[test]
    fn a_link_is_followed_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.json");
        fs::write(&target, "old").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("target.json", &link).unwrap();
        write(Output::open(Some(&link)).unwrap(), "new").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");

        // A dangling link creates its target.
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink("made.json", &dangling).unwrap();
        write(Output::open(Some(&dangling)).unwrap(), "made").unwrap();
        assert_eq!(
            fs::read_to_string(dir.path().join("made.json")).unwrap(),
            "made"
        );
    }

    #[test]
    fn a_device_is_written_in_place_not_replaced() {
        // A device node of our own, never the system's.
        let dir = tempfile::tempdir().unwrap();
        let null = dir.path().join("null");
        let made = std::process::Command::new("mknod")
            .arg(&null)
            .args(["c", "1", "3"])
            .status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("mknod unavailable (not root?): skipping");
            return;
        }
        write(Output::open(Some(&null)).unwrap(), "discarded").unwrap();
        let m = fs::symlink_metadata(&null).unwrap();
        use std::os::unix::fs::FileTypeExt;
        assert!(m.file_type().is_char_device(), "the node was replaced");
    }

    #[test]
    fn a_fifo_is_written_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || fs::read_to_string(fifo).unwrap())
        };
        write(Output::open(Some(&fifo)).unwrap(), "through").unwrap();
        assert_eq!(reader.join().unwrap(), "through");
        use std::os::unix::fs::FileTypeExt;
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    }

    #[test]
    fn bad_paths_fail_before_any_work() {
        let dir = tempfile::tempdir().unwrap();
        let err = Output::open(Some(&dir.path().join("no/such/dir/out.json"))).unwrap_err();
        assert!(format!("{err:#}").contains("cannot write"), "{err:#}");
        let err = Output::open(Some(dir.path())).unwrap_err();
        assert!(format!("{err:#}").contains("is a directory"), "{err:#}");
        // The check leaves nothing behind.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn inputs_are_recognised_under_any_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let corpus = dir.path().join("c.jsonl");
        fs::write(&corpus, "{}\n").unwrap();
        let link = dir.path().join("alias.jsonl");
        std::os::unix::fs::symlink(&corpus, &link).unwrap();
        let out = Output::open(Some(&link)).unwrap();
        let spelled = dir.path().join(".").join("c.jsonl");
        assert!(out.refuse_inputs(&[spelled], "report").is_err());
        let other = dir.path().join("other.jsonl");
        fs::write(&other, "{}\n").unwrap();
        assert!(out.refuse_inputs(&[other], "report").is_ok());
        assert!(out.same_as(&Output::open(Some(&corpus)).unwrap()));
        assert!(Output::open(Some(Path::new("-"))).unwrap().is_stdout());
    }

    #[test]
    fn files_read_are_refused_when_the_report_is_ready() {
        let dir = tempfile::tempdir().unwrap();
        let read = dir.path().join("docs").join("a.md");
        fs::create_dir(dir.path().join("docs")).unwrap();
        fs::write(&read, "text").unwrap();
        let hard = dir.path().join("hard.md");
        fs::hard_link(&read, &hard).unwrap();
        let other = dir.path().join("other.md");
        fs::write(&other, "other").unwrap();
        for name in [&read, &hard] {
            let out = Output::open(Some(name)).unwrap();
            let err = out.refuse_read([&other, &read], "report").unwrap_err();
            assert_eq!(
                err.to_string(),
                format!(
                    "{}: the report would overwrite the input {}; write elsewhere",
                    name.display(),
                    read.display()
                )
            );
        }
        let out = Output::open(Some(&other)).unwrap();
        assert!(out.refuse_read([&read], "report").is_ok());
        // A file that is not there is no input; standard output is none either.
        let out = Output::open(Some(&dir.path().join("new.json"))).unwrap();
        assert!(out.refuse_read([&read], "report").is_ok());
        let out = Output::open(None).unwrap();
        assert!(out.refuse_read([&read], "report").is_ok());
        assert_eq!(fs::read_to_string(&read).unwrap(), "text");
    }

    #[test]
    fn descriptors_are_named_under_any_spelling() {
        for (name, fd) in [
            ("/dev/stdout", Some(1)),
            ("/dev/stderr", Some(2)),
            ("/dev/stdin", Some(0)),
            ("/dev//./stdout", Some(1)),
            ("/dev/../dev/fd/63", Some(63)),
            ("/proc/self/fd/3", Some(3)),
            ("/proc/thread-self/fd/0", Some(0)),
            ("/dev/fd/03", None),
            ("/dev/fd/", None),
            ("/dev/fd/x", None),
            ("/dev/null", None),
            ("/proc/self/fdinfo/1", None),
            ("/tmp/dev/stdout", None),
        ] {
            assert_eq!(descriptor_named(Path::new(name)), fd, "{name}");
        }
        let me = format!("/proc/{}/fd/5", std::process::id());
        assert_eq!(descriptor_named(Path::new(&me)), Some(5));
    }

    #[test]
    fn a_descriptor_is_written_where_it_stands() {
        use std::os::fd::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        fs::write(&log, "earlier\n").unwrap();
        let appending = OpenOptions::new().append(true).open(&log).unwrap();
        let name = PathBuf::from(format!("/dev/fd/{}", appending.as_raw_fd()));
        let out = Output::open(Some(&name)).unwrap();
        assert!(!out.is_stdout());
        assert_eq!(out.name(), name);
        write(out, "report\n").unwrap();
        // Appended, into the same file (not a new one renamed over it).
        assert_eq!(fs::read_to_string(&log).unwrap(), "earlier\nreport\n");
        drop(appending);

        // A link to it is the descriptor too.
        let appending = OpenOptions::new().append(true).open(&log).unwrap();
        let link = dir.path().join("link");
        let fd = format!("/proc/self/fd/{}", appending.as_raw_fd());
        std::os::unix::fs::symlink(&fd, &link).unwrap();
        write(Output::open(Some(&link)).unwrap(), "again\n").unwrap();
        assert_eq!(
            fs::read_to_string(&log).unwrap(),
            "earlier\nreport\nagain\n"
        );
        assert!(
            Output::open(Some(Path::new("/dev/stdout")))
                .unwrap()
                .same_as(&Output::open(None).unwrap())
        );
    }
}
