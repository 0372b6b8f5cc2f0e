//! Stage 0: finding and reading documents.
//!
//! Each path given is walked recursively (a file given directly is one document) in a sorted,
//! deterministic order. A document's id is its path as the user would write it: walking `docs/`
//! yields `docs/a.md`. Symbolic links are followed only when asked. A file with a NUL byte in its
//! first 8 KiB is binary and skipped; invalid UTF-8 is decoded lossily; a file that cannot be read
//! is skipped with the operating system's reason. None of these stops the scan.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde::Serialize;
use walkdir::WalkDir;

use crate::error::{Error, Result};

/// How far into a file to look for a NUL byte (the same heuristic as git and ripgrep).
pub const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// Options for finding documents.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct InputOptions {
    /// Follow symbolic links while walking directories.
    pub follow_links: bool,
}

/// A document to read: its id and where its text is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The id shown in reports.
    pub id: String,
    /// The file to read.
    pub path: PathBuf,
}

/// Why a document was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SkipKind {
    /// A NUL byte in the first 8 KiB.
    Binary,
    /// The file or directory could not be read.
    Unreadable,
}

impl SkipKind {
    /// A short name for summaries.
    pub fn name(self) -> &'static str {
        match self {
            SkipKind::Binary => "binary",
            SkipKind::Unreadable => "unreadable",
        }
    }
}

/// A document (or directory) that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skip {
    /// The path or id.
    pub id: String,
    /// The kind of problem.
    pub kind: SkipKind,
    /// A one-line reason for a person.
    pub reason: String,
}

/// Finds the documents under `paths`. A path that does not exist is an error before any work;
/// problems met while walking become [`Skip`]s.
pub fn collect(paths: &[PathBuf], opts: &InputOptions) -> Result<(Vec<Entry>, Vec<Skip>)> {
    for p in paths {
        // symlink_metadata: a dangling link given by name is still "there" and is reported when
        // read, like any unreadable file.
        if fs::symlink_metadata(p).is_err() {
            return Err(Error::MissingPath { path: p.clone() });
        }
    }
    let mut entries = Vec::new();
    let mut skips = Vec::new();
    let mut seen = HashSet::new();
    for root in paths {
        let walker = WalkDir::new(root)
            .follow_links(opts.follow_links)
            // A path given by name is always followed, as in ripgrep and fd.
            .follow_root_links(true)
            .sort_by_file_name();
        for item in walker {
            match item {
                Ok(e) => {
                    if e.file_type().is_dir() {
                        continue;
                    }
                    // Unfollowed links are not documents, unless named directly.
                    if e.path_is_symlink() && !opts.follow_links && e.depth() > 0 {
                        continue;
                    }
                    let id = display_id(e.path());
                    // One root never yields a path twice; only overlapping roots need checking.
                    if paths.len() == 1 || seen.insert(id.clone()) {
                        entries.push(Entry {
                            id,
                            path: e.into_path(),
                        });
                    }
                }
                Err(err) => {
                    let id = err
                        .path()
                        .map(display_id)
                        .unwrap_or_else(|| display_id(root));
                    let reason = match err.io_error() {
                        Some(io) => io_reason(io),
                        None => err.to_string(),
                    };
                    skips.push(Skip {
                        id,
                        kind: SkipKind::Unreadable,
                        reason,
                    });
                }
            }
        }
    }
    Ok((entries, skips))
}

/// The id of a path: as given, lossily converted to UTF-8.
pub fn display_id(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// The operating system's reason without Rust's "(os error N)" suffix.
pub fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
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
pub fn looks_binary(bytes: &[u8]) -> bool {
    memchr::memchr(0, &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)]).is_some()
}

/// Reads a file as a document.
pub fn read_document(path: &Path) -> std::io::Result<Read> {
    let bytes = fs::read(path)?;
    if looks_binary(&bytes) {
        return Ok(Read::Binary);
    }
    Ok(Read::Text(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }))
}

/// Reads a file as a document into `buf`, reusing its allocation: what [`read_document`] does
/// without a fresh allocation (and fresh pages to fault in) per document. The text borrows
/// `buf` when it is valid UTF-8; `None` means the file looks binary.
pub fn read_document_into<'a>(
    path: &Path,
    buf: &'a mut Vec<u8>,
) -> std::io::Result<Option<Cow<'a, str>>> {
    buf.clear();
    // Through `Take`, which reads straight into the buffer's spare room: `File`'s own
    // `read_to_end` first asks the size with two more system calls per file (statx and lseek),
    // which count when the files are small and many, and the reused buffer rarely needs to grow.
    fs::File::open(path)?.take(u64::MAX).read_to_end(buf)?;
    if looks_binary(buf) {
        return Ok(None);
    }
    Ok(Some(match std::str::from_utf8(buf) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(buf),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(matches!(read_document(&bin).unwrap(), Read::Binary));
        let bad = dir.path().join("bad.txt");
        fs::write(&bad, b"caf\xe9 ok").unwrap();
        let mut buf = Vec::new();
        assert!(read_document_into(&bin, &mut buf).unwrap().is_none());
        assert_eq!(
            read_document_into(&bad, &mut buf).unwrap().unwrap(),
            "caf\u{FFFD} ok"
        );
        match read_document(&bad).unwrap() {
            Read::Text(t) => assert_eq!(t, "caf\u{FFFD} ok"),
            Read::Binary => panic!("not binary"),
        }
    }

    #[test]
    fn io_reason_drops_the_os_error_number() {
        let e = std::io::Error::from_raw_os_error(13);
        assert_eq!(io_reason(&e), "Permission denied");
    }
}
