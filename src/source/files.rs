//! Stage 0: finding and reading documents.
//!
//! Each path given is walked recursively (a file given directly is one document) in a sorted,
//! deterministic order. A document's id is its path as the user would write it: walking `docs/`
//! yields `docs/a.md`. Symbolic links are followed only when asked. A file with a NUL byte in its
//! first 8 KiB is binary and skipped; invalid UTF-8 is decoded lossily; a file that cannot be read
//! is skipped with the operating system's reason; a FIFO, socket or device met while walking is
//! skipped as not a regular file. None of these stops the scan.
//!
//! Walking follows ripgrep's rules (with its `ignore` crate): `.gitignore`, `.ignore`, git's
//! `info/exclude` and global excludes are respected (also outside a git repository), and hidden
//! files and directories are skipped, unless turned off; `globs` and `excludes` filter further,
//! and files larger than `max_filesize` are skipped and counted. A path given by name is always
//! read, whatever these rules say. Paths listed in a `files_from` list are read as given too,
//! except that the globs and the size limit still apply to them.
//!
//! **Links out of the tree.** A tree may hold symbolic links, and the paths named on the command
//! line (a shell's `*.md`) or listed (`git ls-files`) are its names. Without `follow_links`, a
//! named or listed path is skipped when it resolves outside the current directory through a
//! symbolic link that lies inside it (a link of the tree, or one on the way to the path): the
//! current directory stands for the tree, as when a CI job runs from a checkout's root. Links
//! outside the current directory are the system's and are followed (`/tmp` on macOS, the
//! `/dev/fd/N` of a process substitution), and so is any path that goes through no link of the
//! current directory (`ndup scan /data/corpus`).
//!
//! **Opening.** Documents are opened without waiting in `open` (`O_NONBLOCK` on Unix, cleared
//! when a read would wait): a FIFO nobody writes to reads as empty instead of blocking the scan
//! forever, and `ndup scan <(cmd)` reads its pipe as before.
//!
//! **Streams.** A path named or listed that is not a regular file (a pipe, a FIFO, a device) can
//! be read only once, and verification or a report may need its text again: `collect` reads it
//! then, within the size limit, and its [`Entry`] keeps the text in memory.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ignore::overrides::{Override, OverrideBuilder};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};
use rayon::slice::ParallelSliceMut;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::model::{Skip, SkipKind, io_reason};
use crate::source::records::RecordOptions;
use crate::source::texts::SharedTexts;
use crate::source::{Document, Origin};

/// How far into a file to look for a NUL byte (the same heuristic as git and ripgrep).
pub(crate) const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// The largest document read by default: a larger file (or a device or pipe that goes on) is
/// skipped as too large, so that one endless input cannot take all memory.
pub const DEFAULT_MAX_FILESIZE: u64 = 64 << 20;

/// Options for finding documents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputOptions {
    /// Follow symbolic links while walking directories, and those that take a path named or
    /// listed out of the current directory (see the module's documentation).
    pub follow_links: bool,
    /// Walk hidden files and directories too.
    pub hidden: bool,
    /// Do not respect `.gitignore`, `.ignore` and git's exclude files.
    pub no_ignore: bool,
    /// Only files matching one of these globs (gitignore syntax, relative to the walked root; a
    /// leading `!` excludes instead).
    pub globs: Vec<String>,
    /// Never files matching these globs.
    pub excludes: Vec<String>,
    /// Skip files larger than this many bytes (default [`DEFAULT_MAX_FILESIZE`]; `None`: no
    /// limit). It applies to every document, named ones included.
    pub max_filesize: Option<u64>,
    /// A file listing more paths to read, one per line (`-`: standard input).
    pub files_from: Option<PathBuf>,
    /// The list is NUL-separated instead of newline-separated.
    pub files_from_nul: bool,
    /// The id and text fields of JSON-lines records.
    pub records: RecordOptions,
}

impl Default for InputOptions {
    fn default() -> Self {
        InputOptions {
            follow_links: false,
            hidden: false,
            no_ignore: false,
            globs: Vec::new(),
            excludes: Vec::new(),
            max_filesize: Some(DEFAULT_MAX_FILESIZE),
            files_from: None,
            files_from_nul: false,
            records: RecordOptions::default(),
        }
    }
}

/// A document to read: its id and where its text is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The id shown in reports.
    pub id: String,
    /// The file to read.
    pub path: PathBuf,
    /// The text of a stream (see the module's documentation), read once by [`collect`].
    pub(crate) kept: Option<(SharedTexts, usize)>,
}

impl Entry {
    /// The file `path`, named `id`.
    pub(crate) fn new(id: String, path: PathBuf) -> Entry {
        Entry {
            id,
            path,
            kept: None,
        }
    }

    /// The text already read, for a stream.
    pub(crate) fn kept_text(&self) -> Option<&str> {
        self.kept.as_ref().and_then(|(texts, i)| texts.text(*i))
    }

    /// The document read from this entry: its text is found again in the file, or for a
    /// stream in memory.
    pub(crate) fn into_document(self, empty: bool) -> Document {
        Document {
            id: self.id,
            origin: match self.kept {
                Some((texts, index)) => Origin::Text { texts, index },
                None => Origin::File(self.path),
            },
            empty,
        }
    }
}

/// The text of the document `e` (see [`read_document_into`]): the one kept for a stream, or
/// the file's.
pub(crate) fn read_entry_into<'a>(
    e: &'a Entry,
    buf: &'a mut Vec<u8>,
    limit: Option<u64>,
) -> std::io::Result<Option<Cow<'a, str>>> {
    match e.kept_text() {
        Some(text) => Ok(Some(Cow::Borrowed(text))),
        None => read_document_into(&e.path, buf, limit),
    }
}

/// Finds the documents under `paths` (and in the `files_from` list). A path that does not exist
/// is an error before any work; problems met while walking become [`Skip`]s.
pub fn collect(paths: &[PathBuf], opts: &InputOptions) -> Result<(Vec<Entry>, Vec<Skip>)> {
    for p in paths {
        check_exists(p)?;
    }
    let listed = match &opts.files_from {
        Some(list) => read_list(list, opts.files_from_nul)?,
        None => Vec::new(),
    };
    let mut found = Found::default();
    // One root walked without following links meets every file once (a hard link is a name of
    // its own, safe to delete); several roots, a list or followed links can meet one file under
    // two names, which must be one document (`dedup` would name the only copy for deletion).
    if paths.len() > 1 || opts.files_from.is_some() || opts.follow_links {
        found.files = Some(HashSet::new());
    }
    // Named and listed paths may be a tree's links (see the module's documentation).
    let mut confinement = (!opts.follow_links).then(Confinement::new);
    let mut refusal = |path: &Path| confinement.as_mut().and_then(|c| c.refusal(path));
    for root in paths {
        if let Some(reason) = refusal(root) {
            found.skip(root, reason);
            continue;
        }
        walk(root, opts, &mut found)?;
    }
    if !listed.is_empty() {
        // Globs in a list are matched against the paths as written in it.
        let filter = overrides(Path::new("."), opts)?;
        for path in listed {
            match fs::metadata(&path) {
                Err(e) if fs::symlink_metadata(&path).is_err() => found.skip(&path, io_reason(&e)),
                Ok(m) if m.is_dir() => match refusal(&path) {
                    Some(reason) => found.skip(&path, reason),
                    None => walk(&path, opts, &mut found)?,
                },
                meta => {
                    if filter.matched(&path, false).is_ignore() {
                        continue;
                    }
                    if let Some(reason) = refusal(&path) {
                        found.skip(&path, reason);
                        continue;
                    }
                    if let Ok(m) = &meta
                        && too_large(m.len(), opts)
                    {
                        found.too_large(&path, m.len(), opts);
                        continue;
                    }
                    match meta {
                        Ok(m) if !m.is_file() => found.push_stream(path),
                        _ => found.push(path),
                    }
                }
            }
        }
    }
    found.read_streams(opts);
    Ok((found.entries, found.skips))
}

/// Fails when a path given by the user is not there: [`Error::MissingPath`] when it does not
/// exist, the system's reason otherwise (a directory on the way that cannot be searched is not
/// "no such file"). A dangling link given by name is still there, and is reported when read,
/// like any unreadable file.
pub fn check_exists(p: &Path) -> Result<()> {
    match fs::symlink_metadata(p) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::MissingPath {
            path: p.to_path_buf(),
        }),
        Err(e) => Err(Error::io(p, e)),
    }
}

/// Documents found so far, without repeats.
#[derive(Default)]
struct Found {
    entries: Vec<Entry>,
    skips: Vec<Skip>,
    // A file reached twice (`ndup scan docs docs/a.md`) is one document. Keyed by path, not by
    // id: two names that differ only in invalid UTF-8 share a lossy id but are two files.
    seen: HashSet<PathBuf>,
    // When a file may be met under two spellings or through a link (see `collect`): the
    // device and inode of every file, the first name met keeping it.
    files: Option<HashSet<(u64, u64)>>,
    // The entries that are streams, read by `read_streams`.
    streams: Vec<usize>,
}

impl Found {
    fn push(&mut self, path: PathBuf) {
        if let Some(files) = &mut self.files
            && let Some(key) = file_key(&path)
            && !files.insert(key)
        {
            return;
        }
        if self.seen.insert(path.clone()) {
            self.entries.push(Entry::new(display_id(&path), path));
        }
    }

    fn push_stream(&mut self, path: PathBuf) {
        let before = self.entries.len();
        self.push(path);
        if self.entries.len() > before {
            self.streams.push(before);
        }
    }

    /// Reads the streams found, in order, each once: its text is kept in its entry, or it
    /// becomes a skip (binary, too large, unreadable) as a file read later would.
    fn read_streams(&mut self, opts: &InputOptions) {
        if self.streams.is_empty() {
            return;
        }
        let (mut texts, mut kept, mut gone) = (Vec::new(), Vec::new(), HashSet::new());
        let mut buf = Vec::new();
        for &i in &self.streams {
            let e = &self.entries[i];
            match read_document_into(&e.path, &mut buf, opts.max_filesize) {
                Ok(Some(text)) => {
                    kept.push((i, texts.len()));
                    texts.push((e.id.clone(), text.into_owned()));
                }
                Ok(None) => {
                    self.skips.push(Skip::binary(e.id.clone()));
                    gone.insert(i);
                }
                Err(err) => {
                    self.skips.push(Skip::unreadable(e.id.clone(), &err));
                    gone.insert(i);
                }
            }
        }
        let texts = SharedTexts::new(texts);
        for (i, t) in kept {
            self.entries[i].kept = Some((texts.clone(), t));
        }
        if !gone.is_empty() {
            let mut i = 0;
            self.entries.retain(|_| {
                i += 1;
                !gone.contains(&(i - 1))
            });
        }
    }

    fn skip(&mut self, path: &Path, reason: String) {
        self.skips.push(Skip {
            id: display_id(path),
            kind: SkipKind::Unreadable,
            reason,
        });
    }

    fn too_large(&mut self, path: &Path, len: u64, opts: &InputOptions) {
        self.skips.push(Skip {
            id: display_id(path),
            kind: SkipKind::TooLarge,
            reason: format!(
                "{len} bytes, larger than the limit of {} bytes",
                opts.max_filesize.unwrap_or(0)
            ),
        });
    }
}

/// The device and inode of the file `path` leads to (through links), where the system says.
#[cfg(unix)]
pub(crate) fn file_key(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
pub(crate) fn file_key(_path: &Path) -> Option<(u64, u64)> {
    None
}

fn too_large(len: u64, opts: &InputOptions) -> bool {
    opts.max_filesize.is_some_and(|max| len > max)
}

/// The most globs a file of the tree (`.ndupignore`) or a configuration file may hold: each
/// costs memory to compile, and a file of the tree is anyone's to write. A million lines of
/// `*[!q]123* **/*123*` took more than 13 GB; ten thousand such globs take about 85 MB, and are
/// more than a project writes by hand.
pub const MAX_PATTERNS: usize = 10_000;

/// The most bytes of globs, all together, such a file may hold: a long glob costs memory in
/// proportion (a single glob of 1 MiB of `*a` took 660 MB to refuse, ten thousand globs of 1 KiB
/// took 1.1 GB), so this keeps the worst file near 100 MB, while ten thousand globs of 26 bytes
/// fit.
pub const MAX_PATTERN_BYTES: usize = 256 << 10;

/// Counts the globs of one file against [`MAX_PATTERNS`] and [`MAX_PATTERN_BYTES`].
#[derive(Debug, Default)]
pub struct PatternBudget {
    count: usize,
    bytes: usize,
}

impl PatternBudget {
    /// Counts `glob`; the reason the file is refused (to follow its path) once it holds too
    /// many, or too long, globs.
    pub fn add(&mut self, glob: &str) -> std::result::Result<(), &'static str> {
        self.count += 1;
        self.bytes += glob.len();
        if self.count > MAX_PATTERNS {
            Err("more than 10,000 patterns")
        } else if self.bytes > MAX_PATTERN_BYTES {
            Err("more than 256 KiB of patterns")
        } else {
            Ok(())
        }
    }
}

/// Checks that `globs` and `excludes` compile as [`InputOptions`]'s do, so that a configuration
/// file's can be blamed on the file before the scan builds them.
pub fn check_globs(globs: &[String], excludes: &[String]) -> Result<()> {
    let opts = InputOptions {
        globs: globs.to_vec(),
        excludes: excludes.to_vec(),
        ..Default::default()
    };
    overrides(Path::new("."), &opts).map(drop)
}

/// The `globs` and `excludes` as ripgrep-style overrides rooted at `root`.
fn overrides(root: &Path, opts: &InputOptions) -> Result<Override> {
    let mut b = OverrideBuilder::new(root);
    let bad = |flag: crate::error::Param, glob: &str, e: ignore::Error| {
        crate::invalid![flag, format!(" `{glob}`: {e}")]
    };
    for g in &opts.globs {
        b.add(g).map_err(|e| bad(crate::error::Param::Glob, g, e))?;
    }
    for g in &opts.excludes {
        // An exclude is an override glob with its sense inverted, as `!glob` in ripgrep.
        let inverted = match g.strip_prefix('!') {
            Some(rest) => rest.to_string(),
            None => format!("!{g}"),
        };
        b.add(&inverted)
            .map_err(|e| bad(crate::error::Param::Exclude, g, e))?;
    }
    b.build()
        .map_err(|e| crate::invalid![format!("invalid glob: {e}")])
}

/// Walks one root with the ignore rules, on as many threads as the scan has, and hands what it
/// found to `found` in sorted order.
///
/// Why in parallel: the walk is one system call and a few rule checks per entry, a noticeable
/// share of a scan of many small files when done alone before any signing. The walker's own
/// order is then lost, so entries are sorted afterwards by their path with separators as the
/// lowest byte, which is exactly the depth-first order of a walk with sorted file names (a
/// directory's files come right after its name, before a sibling that extends that name).
fn walk(root: &Path, opts: &InputOptions, found: &mut Found) -> Result<()> {
    let respect = !opts.no_ignore;
    let mut b = WalkBuilder::new(root);
    b.follow_links(opts.follow_links)
        .hidden(!opts.hidden)
        .ignore(respect)
        .git_ignore(respect)
        .git_exclude(respect)
        .git_global(respect)
        .parents(respect)
        // A .gitignore speaks for its tree even outside a git repository (unlike ripgrep).
        .require_git(false)
        .threads(walk_threads())
        .overrides(overrides(root, opts)?);
    let shared = Mutex::new(Vec::new());
    b.build_parallel().visit(&mut Visitors {
        root,
        opts,
        shared: &shared,
    });
    let mut walked = shared.into_inner().unwrap_or_else(|e| e.into_inner());
    walked.par_sort_unstable_by(|x, y| x.0.cmp(&y.0));
    for (_, item) in walked {
        match item {
            Walked::File(path) => found.push(path),
            Walked::Stream(path) => found.push_stream(path),
            Walked::TooLarge(path, len) => found.too_large(&path, len, opts),
            Walked::Failed(path, reason) => found.skip(&path, reason),
        }
    }
    Ok(())
}

/// The walker's threads: the scan's, but no more than the machine's cores. Each idle walker
/// thread tries to steal from every other, so threads far beyond the cores (`-j 1024` on two)
/// spend the walk stealing from each other.
fn walk_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    rayon::current_num_threads().min(cores)
}

/// What the walker met, before sorting.
enum Walked {
    File(PathBuf),
    /// A path named that is not a regular file (see the module's documentation).
    Stream(PathBuf),
    TooLarge(PathBuf, u64),
    Failed(PathBuf, String),
}

/// The sort key of a walked path: its bytes with the separators made the lowest byte.
fn walk_order_key(path: &Path) -> Vec<u8> {
    path.as_os_str()
        .as_encoded_bytes()
        .iter()
        .map(|&c| {
            if std::path::is_separator(c as char) {
                0
            } else {
                c
            }
        })
        .collect()
}

/// Makes one [`Visitor`] per walker thread.
struct Visitors<'a> {
    root: &'a Path,
    opts: &'a InputOptions,
    shared: &'a Mutex<Vec<(Vec<u8>, Walked)>>,
}

impl<'s> ParallelVisitorBuilder<'s> for Visitors<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            root: self.root,
            opts: self.opts,
            shared: self.shared,
            local: Vec::new(),
        })
    }
}

/// Classifies entries on one walker thread, into a list of its own that joins the shared one
/// when the thread is done (one lock per thread, not per entry).
struct Visitor<'a> {
    root: &'a Path,
    opts: &'a InputOptions,
    shared: &'a Mutex<Vec<(Vec<u8>, Walked)>>,
    local: Vec<(Vec<u8>, Walked)>,
}

impl Drop for Visitor<'_> {
    fn drop(&mut self) {
        let mut all = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        all.append(&mut self.local);
    }
}

impl ParallelVisitor for Visitor<'_> {
    fn visit(&mut self, item: std::result::Result<DirEntry, ignore::Error>) -> WalkState {
        let opts = self.opts;
        let walked = match item {
            Ok(e) => {
                if e.file_type().is_some_and(|t| t.is_dir()) {
                    return WalkState::Continue;
                }
                // Unfollowed links are not documents, unless named directly.
                if e.path_is_symlink() && !opts.follow_links && e.depth() > 0 {
                    return WalkState::Continue;
                }
                // Only regular files are documents when walking: a FIFO met in a tree may never
                // be written to, a device might never end. Such a file is skipped with the
                // reason, as any other; anything named directly is read, as the user asked
                // (`ndup scan <(cmd)`).
                if e.depth() > 0 && !e.file_type().is_some_and(|t| t.is_file()) {
                    match e.file_type().and_then(special_kind) {
                        Some(kind) => {
                            let reason = format!("{kind}, not a regular file");
                            Walked::Failed(e.into_path(), reason)
                        }
                        None => return WalkState::Continue,
                    }
                } else if e.depth() == 0
                    && fs::metadata(e.path()).is_ok_and(|m| !m.is_file() && !m.is_dir())
                {
                    Walked::Stream(e.into_path())
                } else if opts
                    .max_filesize
                    .is_some_and(|max| max != DEFAULT_MAX_FILESIZE)
                    && let Ok(m) = e.metadata()
                    && too_large(m.len(), opts)
                {
                    // A limit of the user's is checked here, by size, for named files too. The
                    // default one is left to the reader, which asks the size only of files past
                    // their first bytes: a stat of every small file costs more than it saves.
                    Walked::TooLarge(e.into_path(), m.len())
                } else {
                    Walked::File(e.into_path())
                }
            }
            Err(err) => {
                let path = error_path(&err).unwrap_or(self.root).to_path_buf();
                let reason = match err.io_error() {
                    Some(io) => io_reason(io),
                    None => err.to_string(),
                };
                // Errors met while following links come through walkdir, whose message repeats
                // the path: "IO error for operation on docs/x: reason". The id already says it.
                let prefix = format!("IO error for operation on {}: ", path.display());
                let reason = reason
                    .strip_prefix(&prefix)
                    .map_or(reason.clone(), str::to_string);
                Walked::Failed(path, reason)
            }
        };
        let path = match &walked {
            Walked::File(p) | Walked::Stream(p) | Walked::TooLarge(p, _) | Walked::Failed(p, _) => {
                p
            }
        };
        self.local.push((walk_order_key(path), walked));
        WalkState::Continue
    }
}

/// What a file that is neither a regular file, a directory nor a link is, for a skip's reason.
#[cfg(unix)]
fn special_kind(t: std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        Some("a named pipe (FIFO)")
    } else if t.is_socket() {
        Some("a socket")
    } else if t.is_char_device() || t.is_block_device() {
        Some("a device")
    } else {
        None
    }
}

#[cfg(not(unix))]
fn special_kind(t: std::fs::FileType) -> Option<&'static str> {
    (!t.is_file() && !t.is_dir() && !t.is_symlink()).then_some("a special file")
}

/// Where paths named on the command line or listed lead, to refuse those a tree's symbolic
/// link takes out of the current directory.
///
/// **The rule.** A path is refused when it resolves outside the current directory through a
/// symbolic link that lies inside it: the path itself is such a link (`notes.md ->
/// /home/me/.ssh/id_rsa`), or one is on its way (`docs/a.md` with `docs -> /etc`). The current
/// directory stands for the tree (a CI job runs from the checkout's root; `git ls-files` and a
/// shell's `*.md` name the tree's files relative to it), and links inside it are the tree's to
/// plant. Links outside it are not the tree's, so they are followed: the system's (`/tmp` on
/// macOS, `/dev/fd/N -> /proc/self/fd/N -> pipe:[..]` of `ndup scan <(cmd)`), or a path the
/// user typed elsewhere (`ndup scan /data/corpus`, even when `/data` is a link). A path that
/// resolves inside the current directory is never refused, whatever links it takes: what it
/// reads is the tree's own.
///
/// **How.** Each path is resolved one component at a time as the system resolves it: a
/// component that is a link is replaced by its target (relative to the link's directory), `..`
/// goes to the parent of the place reached, and a component that does not exist is taken as
/// written (opening the path then fails with its own reason). Where each directory on the way
/// leads is remembered, so a list of a million paths costs about one `readlink` per path, plus
/// one per distinct directory.
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) struct Confinement {
    /// The current directory, links resolved; `None` when it cannot be known (nothing is
    /// refused then: no relative path can be opened either).
    cwd: Option<PathBuf>,
    /// Where each directory (or link) met so far leads, and whether a link inside the current
    /// directory was followed to get there. Keyed by its path with links resolved up to it.
    memo: std::collections::HashMap<PathBuf, (PathBuf, bool)>,
}

/// At most this many links are followed resolving one path (the limit of Linux and the BSDs):
/// past it, the system refuses to open the path too.
const MAX_LINKS: u32 = 40;

impl Confinement {
    /// A confinement to the current directory.
    pub(crate) fn new() -> Self {
        let cwd = std::env::current_dir()
            .ok()
            .map(|c| fs::canonicalize(&c).unwrap_or(c));
        Confinement {
            cwd,
            memo: Default::default(),
        }
    }

    /// A confinement to `cwd`, for tests.
    #[cfg(test)]
    fn at(cwd: &Path) -> Self {
        Confinement {
            cwd: Some(fs::canonicalize(cwd).unwrap()),
            memo: Default::default(),
        }
    }

    #[cfg_attr(not(unix), allow(dead_code))]
    fn inside(&self, p: &Path) -> bool {
        self.cwd.as_deref().is_some_and(|c| p.starts_with(c))
    }

    /// Why `path` is refused, if it is: it resolves outside the current directory through a
    /// link lying inside it (see [`Confinement`]).
    #[cfg(unix)]
    pub(crate) fn refusal(&mut self, path: &Path) -> Option<String> {
        let absolute = self.cwd.as_ref()?.join(path);
        let (real, through_tree) = self.resolve(&absolute)?;
        if !through_tree || self.inside(&real) {
            return None;
        }
        let what = match fs::metadata(path) {
            Ok(m) if m.is_dir() => "a directory",
            _ => "a file",
        };
        Some(match fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => {
                format!("symlink to {what} outside the working directory; -L follows it")
            }
            _ => format!("{what} outside the working directory, through a symlink; -L follows it"),
        })
    }

    /// Links are resolved on Unix only.
    #[cfg(not(unix))]
    pub(crate) fn refusal(&mut self, _path: &Path) -> Option<String> {
        None
    }

    /// Where the absolute `path` leads, and whether a link inside the current directory was
    /// followed on the way; `None` past [`MAX_LINKS`] links.
    #[cfg(unix)]
    fn resolve(&mut self, path: &Path) -> Option<(PathBuf, bool)> {
        use std::ffi::OsString;
        use std::path::Component;
        /// What is left to do, last first.
        enum Step {
            /// Go to the root.
            Root,
            /// Go to the parent.
            Up,
            /// Go into this name.
            Name(OsString),
            /// The target of this link is resolved: remember where it led, and carry on with
            /// whether a link of the tree was followed before it.
            Resolved(PathBuf, bool),
        }
        fn push(todo: &mut Vec<Step>, path: &Path) {
            for c in path.components().rev() {
                match c {
                    Component::RootDir | Component::Prefix(_) => todo.push(Step::Root),
                    Component::ParentDir => todo.push(Step::Up),
                    Component::CurDir => {}
                    Component::Normal(name) => todo.push(Step::Name(name.to_os_string())),
                }
            }
        }
        let mut todo = Vec::new();
        push(&mut todo, path);
        let mut here = PathBuf::from("/");
        let mut through_tree = false;
        let mut links = 0;
        while let Some(step) = todo.pop() {
            match step {
                Step::Root => here = PathBuf::from("/"),
                Step::Up => {
                    here.pop();
                }
                Step::Resolved(link, before) => {
                    self.memo.insert(link, (here.clone(), through_tree));
                    through_tree |= before;
                }
                Step::Name(name) => {
                    let next = here.join(&name);
                    if let Some((real, via)) = self.memo.get(&next) {
                        here = real.clone();
                        through_tree |= via;
                        continue;
                    }
                    match fs::read_link(&next) {
                        Ok(target) => {
                            links += 1;
                            if links > MAX_LINKS {
                                return None;
                            }
                            // The link lies in `here`, which has no link left in it.
                            let before = std::mem::replace(&mut through_tree, self.inside(&here));
                            todo.push(Step::Resolved(next, before));
                            push(&mut todo, &target);
                        }
                        Err(_) => {
                            // Not a link, or nothing there: the name is taken as it is. A
                            // directory on the way is remembered (the last name of a path is
                            // met once).
                            let last = !todo
                                .iter()
                                .any(|s| matches!(s, Step::Name(_) | Step::Up | Step::Root));
                            if !last {
                                self.memo.insert(next.clone(), (next.clone(), false));
                            }
                            here = next;
                        }
                    }
                }
            }
        }
        Some((here, through_tree))
    }
}

/// The path an error from the walker is about, if it says.
fn error_path(err: &ignore::Error) -> Option<&Path> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Partial(errs) => errs.iter().find_map(error_path),
        ignore::Error::Loop { child, .. } => Some(child),
        _ => None,
    }
}

/// Reads a list of paths, one per line (or NUL-separated); `-` reads it from standard input.
/// Empty entries are ignored; a carriage return before a newline is dropped.
pub fn read_list(list: &Path, nul: bool) -> Result<Vec<PathBuf>> {
    // A list names at most millions of paths; an endless one (a link to /dev/zero) is refused.
    const MAX_LIST_BYTES: u64 = 1 << 30;
    let bytes = if list.as_os_str() == "-" {
        read_capped(std::io::stdin(), MAX_LIST_BYTES).map_err(|e| Error::io("standard input", e))?
    } else {
        fs::File::open(list)
            .and_then(|f| read_capped(f, MAX_LIST_BYTES))
            .map_err(|e| Error::io(list, e))?
    };
    let sep = if nul { b'\0' } else { b'\n' };
    Ok(bytes
        .split(|&b| b == sep)
        .map(|p| {
            if !nul {
                p.strip_suffix(b"\r").unwrap_or(p)
            } else {
                p
            }
        })
        .filter(|p| !p.is_empty())
        .map(path_from_bytes)
        .collect())
}

#[cfg(unix)]
fn path_from_bytes(b: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(b))
}

#[cfg(not(unix))]
fn path_from_bytes(b: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(b).into_owned())
}

/// The id of a path: as given when it is valid UTF-8 (the usual case), else an escaped form that
/// names it without ambiguity and turns back into it ([`path_of_id`]).
///
/// The escaped form writes each byte that is not UTF-8 as `\xhh` and each backslash as `\\`. It
/// is used for a name that is not UTF-8, and for one that already contains `\\` or `\x` and two
/// hex digits, so that no escaped id is also a plain name: `x<ff>.md` is `x\xff.md`, and a file
/// literally named `x\xff.md` is `x\\xff.md`. (A lossy conversion gave both `x<ff>.md` and
/// `x<ef bf bd>.md` the id `x\u{FFFD}.md`.)
pub fn display_id(path: &Path) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let bytes = path.as_os_str().as_bytes();
        match std::str::from_utf8(bytes) {
            Ok(s) if !looks_escaped(s) => s.to_string(),
            _ => escape_id(bytes),
        }
    }
    #[cfg(not(unix))]
    {
        path.to_string_lossy().into_owned()
    }
}

/// True when `s` holds an escape of [`display_id`]'s escaped form (`\\`, or `\x` and two hex
/// digits).
fn looks_escaped(s: &str) -> bool {
    let b = s.as_bytes();
    b.windows(2).any(|w| w == br"\\")
        || b.windows(4).any(|w| {
            w[0] == b'\\' && w[1] == b'x' && w[2].is_ascii_hexdigit() && w[3].is_ascii_hexdigit()
        })
}

#[cfg(unix)]
fn escape_id(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c == '\\' {
                out.push_str(r"\\");
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!(r"\x{b:02x}"));
        }
    }
    out
}

/// The path an id of a file names: the inverse of [`display_id`].
pub fn path_of_id(id: &str) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        if !looks_escaped(id) {
            return PathBuf::from(id);
        }
        let b = id.as_bytes();
        let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            match (b[i], b.get(i + 1).copied()) {
                (b'\\', Some(b'\\')) => {
                    out.push(b'\\');
                    i += 2;
                }
                (b'\\', Some(b'x'))
                    if i + 3 < b.len() && hex(b[i + 2]).is_some() && hex(b[i + 3]).is_some() =>
                {
                    out.push(hex(b[i + 2]).unwrap_or(0) * 16 + hex(b[i + 3]).unwrap_or(0));
                    i += 4;
                }
                (c, _) => {
                    out.push(c);
                    i += 1;
                }
            }
        }
        PathBuf::from(std::ffi::OsStr::from_bytes(&out))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(id)
    }
}

/// What reading a document gave.
#[derive(Debug)]
pub enum Read {
    /// The text (lossily decoded when not valid UTF-8).
    Text(String),
    /// The file looks binary.
    Binary,
}

/// True when `bytes` has a NUL byte within its first 8 KiB.
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    memchr::memchr(0, &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)]).is_some()
}

/// Reads a file as a document, at most `limit` bytes of it (see [`read_document_into`]).
pub fn read_document(path: &Path, limit: Option<u64>) -> std::io::Result<Read> {
    let mut buf = Vec::new();
    if !read_text_bytes(path, &mut buf, limit)? {
        return Ok(Read::Binary);
    }
    Ok(Read::Text(match String::from_utf8(buf) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }))
}

/// Reads a stream (standard input) as a document, as [`read_document`] reads a file: at most
/// `limit` bytes (a longer one is an error of kind [`std::io::ErrorKind::FileTooLarge`]), and
/// [`Read::Binary`] when it looks binary.
pub fn read_document_from(r: impl std::io::Read, limit: Option<u64>) -> std::io::Result<Read> {
    let buf = read_capped(r, limit.unwrap_or(u64::MAX))?;
    if looks_binary(&buf) {
        return Ok(Read::Binary);
    }
    Ok(Read::Text(match String::from_utf8(buf) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }))
}

/// Reads a file as a document into `buf`, reusing its allocation: what [`read_document`] does
/// without a fresh allocation (and fresh pages to fault in) per document. The text borrows
/// `buf` when it is valid UTF-8; `None` means the file looks binary.
///
/// At most `limit` bytes are read, whatever the file is (a device or a FIFO has no size to
/// check first): a longer one is an error of kind [`std::io::ErrorKind::FileTooLarge`] (see
/// [`is_too_large`]), and a binary one is known from its first bytes, so `/dev/zero` costs
/// nothing.
pub fn read_document_into<'a>(
    path: &Path,
    buf: &'a mut Vec<u8>,
    limit: Option<u64>,
) -> std::io::Result<Option<Cow<'a, str>>> {
    if !read_text_bytes(path, buf, limit)? {
        return Ok(None);
    }
    Ok(Some(match std::str::from_utf8(buf) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(buf),
    }))
}

/// Reads a document's bytes into `buf` (see [`read_document_into`]); false when it looks binary.
fn read_text_bytes(path: &Path, buf: &mut Vec<u8>, limit: Option<u64>) -> std::io::Result<bool> {
    read_bounded(path, buf, limit)?;
    if looks_binary(buf) {
        return Ok(false);
    }
    match limit.filter(|&max| buf.len() as u64 > max) {
        Some(max) => Err(too_large_error(max)),
        None => Ok(true),
    }
}

/// Reads the first bytes of `path` into `buf`, then, unless they look binary, the rest up to one
/// byte past `limit` (so that a caller sees it was exceeded).
fn read_bounded(path: &Path, buf: &mut Vec<u8>, limit: Option<u64>) -> std::io::Result<()> {
    buf.clear();
    // Through `Take`, which reads straight into the buffer's spare room: `File`'s own
    // `read_to_end` first asks the size with two more system calls per file (statx and lseek),
    // which count when the files are small and many, and the reused buffer rarely needs to grow.
    let file = open_unblocked(path)?;
    let cap = limit.map_or(u64::MAX, |max| max.saturating_add(1));
    let head = cap.min(BINARY_SNIFF_BYTES as u64);
    read_waiting(&file, head, buf)?;
    if buf.len() as u64 == head && head < cap {
        // Only a file past its first bytes is asked its size (most documents are smaller, and
        // the walk does not ask either): a regular file over the limit is not read at all.
        if let Some(max) = limit
            && let Ok(m) = file.metadata()
            && m.is_file()
            && m.len() > max
        {
            return Err(std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                format!("{} bytes, larger than the limit of {max} bytes", m.len()),
            ));
        }
        if !looks_binary(buf) {
            read_waiting(&file, cap - head, buf)?;
        }
    }
    Ok(())
}

/// Opens `path` for reading without waiting in `open`: on Unix with `O_NONBLOCK`, so that a FIFO
/// nobody has opened for writing opens at once (and then reads as empty) instead of blocking
/// the scan forever. Read it with [`read_waiting`] or through [`Waiting`], which clear the flag
/// when a read would wait (a pipe or a device with nothing to read yet), so that reading waits
/// as it always did: `ndup scan <(cmd)` reads all that `cmd` writes. A regular file is read
/// the same either way, and costs no system call more.
pub(crate) fn open_unblocked(path: &Path) -> std::io::Result<fs::File> {
    #[cfg(unix)]
    if let Some(flag) = unblock::O_NONBLOCK {
        use std::os::unix::fs::OpenOptionsExt;
        match fs::OpenOptions::new()
            .read(true)
            .custom_flags(flag)
            .open(path)
        {
            // A lease another process holds on the file: a plain open waits for its break.
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            opened => return opened,
        }
    }
    fs::File::open(path)
}

/// Reads at most `limit` more bytes of `file` (from [`open_unblocked`]) onto the end of `buf`,
/// through `Take`, which reads straight into the buffer's spare room.
fn read_waiting(file: &fs::File, limit: u64, buf: &mut Vec<u8>) -> std::io::Result<()> {
    let mut r = file.take(limit);
    loop {
        match r.read_to_end(buf) {
            // What was read stays in `buf`, and `r` knows how much more it may read.
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => unblock::wait_on(file, e)?,
            done => return done.map(drop),
        }
    }
}

/// A file from [`open_unblocked`], read as if opened plainly: the first read that would wait
/// clears `O_NONBLOCK`, and waits.
pub(crate) struct Waiting(pub(crate) fs::File);

impl std::io::Read for Waiting {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            match self.0.read(buf) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    unblock::wait_on(&self.0, e)?
                }
                done => return done,
            }
        }
    }
}

/// `O_NONBLOCK`, and clearing it.
#[cfg(unix)]
mod unblock {
    use std::os::fd::AsRawFd;

    /// The flag files are opened with (an `Option` so that the callers read the same on every
    /// system).
    pub(super) const O_NONBLOCK: Option<libc::c_int> = Some(libc::O_NONBLOCK);

    /// Clears `O_NONBLOCK` on `file`, whose read would have waited, so that the next read waits.
    pub(super) fn wait_on(file: &std::fs::File, _e: std::io::Error) -> std::io::Result<()> {
        let fd = file.as_raw_fd();
        // SAFETY: F_GETFL and F_SETFL read and set the status flags of a descriptor `file`
        // owns, and touch no memory.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Without Unix, files are opened plainly and a read never says it would block.
#[cfg(not(unix))]
mod unblock {
    pub(super) fn wait_on(_file: &std::fs::File, e: std::io::Error) -> std::io::Result<()> {
        Err(e)
    }
}

fn too_large_error(max: u64) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::FileTooLarge,
        format!("larger than the limit of {max} bytes"),
    )
}

/// True when reading failed because the document is larger than the limit (a
/// [`SkipKind::TooLarge`], not an unreadable file).
pub fn is_too_large(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::FileTooLarge
}

/// The largest side file (a baseline, a stop-word list, an ignore file, a configuration) read.
pub const MAX_SIDE_FILE_BYTES: u64 = 64 << 20;

/// `Err` with the reason when `path`, a file that comes with the tree at `root` (its
/// `ndup.toml`, its `.ndupignore`), resolves outside that tree through a symbolic link: a tree
/// from a stranger could otherwise make ndup read any file the user can, and print pieces of it
/// in its parse errors. Both are resolved, so a root reached through a link is no matter.
pub fn check_inside_tree(path: &Path, root: &Path) -> std::result::Result<(), String> {
    let (Ok(real), Ok(root)) = (path.canonicalize(), root.canonicalize()) else {
        // Missing, or not resolvable: reading it reports that.
        return Ok(());
    };
    if real.starts_with(&root) {
        Ok(())
    } else {
        Err(format!(
            "a link to {}, outside the scanned tree",
            display_id(&real)
        ))
    }
}

/// Reads a side file whole, refusing one larger than [`MAX_SIDE_FILE_BYTES`] (a link to
/// `/dev/zero` must not take all memory).
pub fn read_side_file(path: &Path) -> std::io::Result<Vec<u8>> {
    read_capped(fs::File::open(path)?, MAX_SIDE_FILE_BYTES)
}

/// [`read_side_file`] as text: what `std::fs::read_to_string` does, with the size cap.
pub fn read_side_text(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read_side_file(path)?).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

/// Reads `r` whole, failing with [`std::io::ErrorKind::FileTooLarge`] past `max` bytes.
pub fn read_capped(r: impl std::io::Read, max: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    r.take(max.saturating_add(1)).read_to_end(&mut buf)?;
    if buf.len() as u64 > max {
        return Err(too_large_error(max));
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_walk_gives_the_sorted_depth_first_order() {
        // Names that sort differently as whole strings and as paths: "a/x" must come before
        // "a-b" and "a.c" (the directory's files come right after its name).
        let dir = tempfile::tempdir().unwrap();
        for d in ["a", "a/sub", "a-b", "b", "b/a b"] {
            fs::create_dir(dir.path().join(d)).unwrap();
        }
        for f in [
            "a/x", "a/sub/y", "a/z", "a-b/q", "a.c", "a0", "A", "_", "b/a b/c", "b/a", "b/ab",
        ] {
            fs::write(dir.path().join(f), f).unwrap();
        }
        let (entries, _) = collect(&[dir.path().to_path_buf()], &Default::default()).unwrap();
        let got: Vec<PathBuf> = entries.into_iter().map(|e| e.path).collect();
        // The reference: ignore's sequential walker with sorted file names.
        let want: Vec<PathBuf> = WalkBuilder::new(dir.path())
            .sort_by_file_name(|a, b| a.cmp(b))
            .build()
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().unwrap().is_file())
            .map(|e| e.into_path())
            .collect();
        assert_eq!(got.len(), 11);
        assert_eq!(got, want);
    }

    #[test]
    fn walks_sorted_and_ids_keep_the_given_prefix() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("sub")).unwrap();
        fs::write(dir.path().join("b.txt"), "b").unwrap();
        fs::write(dir.path().join("a.txt"), "a").unwrap();
        fs::write(dir.path().join("sub/c.txt"), "c").unwrap();
        let (entries, skips) = collect(&[dir.path().to_path_buf()], &Default::default()).unwrap();
        let ids: Vec<_> = entries
            .iter()
            .map(|e| {
                e.path
                    .strip_prefix(dir.path())
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        assert_eq!(ids, ["a.txt", "b.txt", "sub/c.txt"]);
        assert!(skips.is_empty());
        assert!(
            entries[0]
                .id
                .starts_with(&dir.path().to_string_lossy().into_owned())
        );
    }

    /// Ids of the documents found under `dir`, relative to it.
    fn found(dir: &Path, opts: &InputOptions) -> (Vec<String>, Vec<Skip>) {
        let (entries, skips) = collect(&[dir.to_path_buf()], opts).unwrap();
        let ids = entries
            .iter()
            .map(|e| {
                e.path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        (ids, skips)
    }

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        for d in ["ignored", ".hidden", "sub"] {
            fs::create_dir(p.join(d)).unwrap();
        }
        fs::write(p.join(".gitignore"), "ignored/\n*.log\n").unwrap();
        fs::write(p.join(".ignore"), "sub/secret.md\n").unwrap();
        for f in [
            "a.md",
            "b.txt",
            "x.log",
            "ignored/c.md",
            ".hidden/d.md",
            "sub/e.md",
            "sub/secret.md",
        ] {
            fs::write(p.join(f), f).unwrap();
        }
        fs::write(p.join("big.md"), "x".repeat(5000)).unwrap();
        dir
    }

    #[test]
    fn ignore_files_and_hidden_files_are_respected_unless_asked() {
        let dir = tree();
        let (ids, _) = found(dir.path(), &Default::default());
        assert_eq!(ids, ["a.md", "b.txt", "big.md", "sub/e.md"]);
        let opts = InputOptions {
            hidden: true,
            ..Default::default()
        };
        let (ids, _) = found(dir.path(), &opts);
        assert_eq!(
            ids,
            [
                ".gitignore",
                ".hidden/d.md",
                ".ignore",
                "a.md",
                "b.txt",
                "big.md",
                "sub/e.md"
            ]
        );
        let opts = InputOptions {
            no_ignore: true,
            ..Default::default()
        };
        let (ids, _) = found(dir.path(), &opts);
        assert_eq!(
            ids,
            [
                "a.md",
                "b.txt",
                "big.md",
                "ignored/c.md",
                "sub/e.md",
                "sub/secret.md",
                "x.log"
            ]
        );
    }

    #[test]
    fn globs_excludes_and_size_limit() {
        let dir = tree();
        let opts = InputOptions {
            globs: vec!["*.md".into()],
            excludes: vec!["sub/**".into()],
            ..Default::default()
        };
        assert_eq!(found(dir.path(), &opts).0, ["a.md", "big.md"]);
        let opts = InputOptions {
            globs: vec!["!a.md".into()],
            ..Default::default()
        };
        assert_eq!(found(dir.path(), &opts).0, ["b.txt", "big.md", "sub/e.md"]);
        let opts = InputOptions {
            max_filesize: Some(4096),
            ..Default::default()
        };
        let (ids, skips) = found(dir.path(), &opts);
        assert_eq!(ids, ["a.md", "b.txt", "sub/e.md"]);
        assert_eq!(skips.len(), 1);
        assert_eq!(skips[0].kind, SkipKind::TooLarge);
        assert!(skips[0].id.ends_with("big.md"));
        assert_eq!(
            skips[0].reason,
            "5000 bytes, larger than the limit of 4096 bytes"
        );
        let bad = InputOptions {
            globs: vec!["a[".into()],
            ..Default::default()
        };
        let e = collect(&[dir.path().to_path_buf()], &bad).unwrap_err();
        assert!(e.to_string().contains("glob `a[`"), "{e}");
    }

    #[test]
    fn a_path_named_directly_is_read_whatever_the_ignore_rules_say() {
        let dir = tree();
        let hidden = dir.path().join(".hidden/d.md");
        let ignored = dir.path().join("ignored");
        let (entries, _) =
            collect(&[hidden.clone(), ignored.clone()], &Default::default()).unwrap();
        // The ignored directory named directly is walked too.
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].path, hidden);
        // But the size limit applies to every document, named ones included.
        let opts = InputOptions {
            max_filesize: Some(1),
            ..Default::default()
        };
        let (entries, skips) = collect(&[hidden, ignored], &opts).unwrap();
        assert!(entries.is_empty(), "{entries:?}");
        assert_eq!(skips.len(), 2);
        assert!(skips.iter().all(|s| s.kind == SkipKind::TooLarge));
    }

    #[test]
    fn lists_of_paths() {
        let dir = tree();
        let p = dir.path();
        let list = p.join("list");
        let a = p.join("a.md");
        let hidden = p.join(".hidden/d.md");
        let missing = p.join("missing.md");
        let text = format!(
            "{}\r\n\n{}\n{}\n",
            a.display(),
            hidden.display(),
            missing.display()
        );
        fs::write(&list, text).unwrap();
        let opts = InputOptions {
            files_from: Some(list.clone()),
            ..Default::default()
        };
        let (entries, skips) = collect(&[], &opts).unwrap();
        let paths: Vec<_> = entries.iter().map(|e| e.path.clone()).collect();
        assert_eq!(paths, [a.clone(), hidden.clone()]);
        assert_eq!(skips.len(), 1);
        assert_eq!(skips[0].id, display_id(&missing));
        assert_eq!(skips[0].reason, "No such file or directory");

        fs::write(&list, format!("{}\0{}\0", a.display(), hidden.display())).unwrap();
        let opts = InputOptions {
            files_from: Some(list.clone()),
            files_from_nul: true,
            excludes: vec!["*.md".into()],
            ..Default::default()
        };
        let (entries, _) = collect(&[], &opts).unwrap();
        assert!(entries.is_empty(), "{entries:?}");
        let opts = InputOptions {
            files_from: Some(p.join("no-list")),
            ..Default::default()
        };
        assert!(matches!(collect(&[], &opts), Err(Error::Io { .. })));
    }

    #[cfg(unix)]
    #[test]
    fn symbolic_links_are_followed_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        fs::create_dir(p.join("real")).unwrap();
        fs::write(p.join("real/a.md"), "a").unwrap();
        fs::create_dir(p.join("root")).unwrap();
        std::os::unix::fs::symlink(p.join("real/a.md"), p.join("root/link.md")).unwrap();
        std::os::unix::fs::symlink(p.join("real"), p.join("root/dir")).unwrap();
        assert!(found(&p.join("root"), &Default::default()).0.is_empty());
        let opts = InputOptions {
            follow_links: true,
            ..Default::default()
        };
        // Both names lead to real/a.md: one document, under the first name met.
        assert_eq!(found(&p.join("root"), &opts).0, ["dir/a.md"]);
        // A link named directly is followed.
        let (entries, _) = collect(&[p.join("root/link.md")], &Default::default()).unwrap();
        assert_eq!(entries.len(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn links_of_the_current_directory_that_lead_out_of_it_are_refused() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let (tree, out) = (dir.path().join("tree"), dir.path().join("out"));
        for d in [&tree, &out, &out.join("sub")] {
            fs::create_dir(d).unwrap();
        }
        fs::write(tree.join("a.md"), "a").unwrap();
        fs::write(out.join("secret.md"), "s").unwrap();
        fs::write(out.join("sub/x.md"), "x").unwrap();
        let link = |target: &str, name: &Path| symlink(target, name).unwrap();
        link("a.md", &tree.join("in.md"));
        link("../out/secret.md", &tree.join("out.md"));
        link("../out/sub", &tree.join("outdir"));
        link("../out/back.md", &tree.join("hop.md"));
        link("../tree/a.md", &out.join("back.md"));
        link("../out/fwd.md", &tree.join("esc.md"));
        link("secret.md", &out.join("fwd.md"));
        link("../tree", &out.join("alias"));
        link("secret.md", &out.join("sys.md"));
        link("../out", &tree.join("up"));
        link("l2", &tree.join("l1"));
        link("l1", &tree.join("l2"));
        link("nothing.md", &tree.join("gone.md"));
        link("/nonexistent/ndup/x.md", &tree.join("far.md"));
        let file = "symlink to a file outside the working directory; -L follows it";
        let through = "a file outside the working directory, through a symlink; -L follows it";
        let cases: [(&str, Option<&str>); 15] = [
            ("tree/a.md", None),
            ("tree/in.md", None),
            ("tree/out.md", Some(file)),
            (
                "tree/outdir",
                Some("symlink to a directory outside the working directory; -L follows it"),
            ),
            ("tree/outdir/x.md", Some(through)),
            // Out and back in: what is read is the tree's.
            ("tree/hop.md", None),
            ("tree/esc.md", Some(file)),
            // A link outside leads in, then one of the tree out.
            ("out/alias/out.md", Some(file)),
            // Links outside the current directory are not the tree's.
            ("out/sys.md", None),
            ("out/secret.md", None),
            // `..` after a link goes up from where the link led, as the system does.
            ("tree/up/../tree/a.md", None),
            ("tree/up/secret.md", Some(through)),
            // A loop fails to open on its own; a dangling link says so when opened.
            ("tree/l1", None),
            ("tree/gone.md", None),
            ("tree/far.md", Some(file)),
        ];
        let mut c = Confinement::at(&tree);
        for _ in 0..2 {
            // Twice: the second time from what was remembered.
            for (path, want) in cases {
                let got = c.refusal(&dir.path().join(path));
                assert_eq!(got.as_deref(), want, "{path}");
            }
        }
        // With a current directory that holds both, only the link to elsewhere leaves it.
        let mut c = Confinement::at(dir.path());
        for (path, _) in cases {
            let want = (path == "tree/far.md").then_some(file);
            assert_eq!(c.refusal(&dir.path().join(path)).as_deref(), want, "{path}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_nobody_writes_to_reads_as_empty() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("f");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            return;
        }
        match read_document(&fifo, None).unwrap() {
            Read::Text(t) => assert_eq!(t, ""),
            Read::Binary => panic!("binary"),
        }
        // A writer that is slow to write: the read waits for it, as a plain one would. (Opened
        // for reading too, so that opening it does not wait for this reader.)
        let w = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&fifo)
            .unwrap();
        let writer = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            std::io::Write::write_all(&mut &w, b"late words").unwrap();
        });
        match read_document(&fifo, None).unwrap() {
            Read::Text(t) => assert_eq!(t, "late words"),
            Read::Binary => panic!("binary"),
        }
        writer.join().unwrap();
    }

    #[test]
    fn missing_path_is_an_error() {
        let e = collect(&[PathBuf::from("/no/such/ndup/path")], &Default::default());
        assert!(matches!(e, Err(Error::MissingPath { .. })));
    }

    #[test]
    fn binary_and_lossy_reading() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("x.bin");
        fs::write(&bin, b"abc\0def").unwrap();
        assert!(matches!(read_document(&bin, None).unwrap(), Read::Binary));
        let bad = dir.path().join("bad.txt");
        fs::write(&bad, b"caf\xe9 ok").unwrap();
        match read_document(&bad, None).unwrap() {
            Read::Text(t) => assert_eq!(t, "caf\u{FFFD} ok"),
            _ => panic!("text"),
        }
    }

    #[test]
    fn reading_stops_at_the_limit_whatever_the_file_is() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.txt");
        fs::write(&big, "word ".repeat(4000)).unwrap();
        let mut buf = Vec::new();
        let e = read_document_into(&big, &mut buf, Some(10_000)).unwrap_err();
        assert!(is_too_large(&e), "{e}");
        assert!(buf.len() <= 10_001, "{}", buf.len());
        assert!(
            read_document_into(&big, &mut buf, Some(20_000))
                .unwrap()
                .is_some()
        );
        // Below the sniffed head too.
        assert!(is_too_large(&read_document(&big, Some(100)).unwrap_err()));
        // A device that never ends: binary from its first bytes, read no further.
        let zero = Path::new("/dev/zero");
        if zero.exists() {
            assert!(read_document_into(zero, &mut buf, None).unwrap().is_none());
            assert_eq!(buf.len(), BINARY_SNIFF_BYTES);
        }
        // Side files and lists have their own cap.
        let e = read_capped(std::io::repeat(b'a'), 1000).unwrap_err();
        assert!(is_too_large(&e));
        assert_eq!(read_capped(&b"abc"[..], 3).unwrap(), b"abc");
    }

    #[test]
    fn a_file_met_under_two_names_is_one_document() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("d");
        fs::create_dir(&d).unwrap();
        fs::write(d.join("only.md"), "the only copy").unwrap();
        let t = dir.path().join("t");
        fs::create_dir(&t).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(d.join("only.md"), t.join("alink.md")).unwrap();
        let follow = InputOptions {
            follow_links: true,
            ..Default::default()
        };
        let (entries, _) = collect(&[t.clone(), d.clone()], &follow).unwrap();
        assert_eq!(entries.len(), 1, "{entries:?}");
        assert!(entries[0].path.ends_with("t/alink.md"));
        // Another spelling of a file already met.
        let again = d.join(".").join("only.md");
        let (entries, _) = collect(&[d.clone(), again], &Default::default()).unwrap();
        assert_eq!(entries.len(), 1, "{entries:?}");
    }

    #[cfg(unix)]
    #[test]
    fn ids_of_names_that_are_not_utf8_are_escaped_and_turn_back_into_them() {
        use std::os::unix::ffi::OsStrExt;
        let cases: [(&[u8], &str); 7] = [
            (b"docs/a b.md", "docs/a b.md"),
            (br"a\b[1].md", r"a\b[1].md"),
            (b"x\xff.md", r"x\xff.md"),
            (b"x\xef\xbf\xbd.md", "x\u{FFFD}.md"),
            (br"x\xff.md", r"x\\xff.md"),
            (br"a\\b", r"a\\\\b"),
            (b"\xfe\\x", r"\xfe\\x"),
        ];
        let mut ids = std::collections::HashSet::new();
        for (name, id) in cases {
            let p = PathBuf::from(std::ffi::OsStr::from_bytes(name));
            assert_eq!(display_id(&p), id);
            assert_eq!(path_of_id(id), p, "{id}");
            assert!(ids.insert(id));
        }
    }

    #[test]
    fn io_reason_drops_the_os_error_number() {
        let e = std::io::Error::from_raw_os_error(13);
        assert_eq!(io_reason(&e), "Permission denied");
    }
}
