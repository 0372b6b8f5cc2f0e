//! `.ndupignore`: pairs of documents accepted as near-duplicates, by glob.
//!
//! The file sits in the scanned root. Each line holds two globs separated by white space; a pair
//! of documents is accepted when one matches the first glob and the other the second, in either
//! order. Blank lines and lines starting with `#` are ignored.
//!
//! ```text
//! # translations are meant to be alike
//! en/**   fr/**
//! # the archive keeps old versions on purpose
//! archive/**   **
//! ```
//!
//! Globs are matched against a document's id relative to the root (`docs/a.md` is `a.md` when
//! the root is `docs`); a JSON-lines record's id is matched as is. `*` and `?` do not cross a
//! `/`, `**` does, `{a,b}` and `[ab]` work as in git. A glob cannot contain white space (use `?`).

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::{Error, Result};
use crate::source::files::PatternBudget;

/// The file name looked for in the scanned root.
pub const FILE_NAME: &str = ".ndupignore";

/// Accepted pairs of globs.
#[derive(Debug, Clone)]
pub struct NdupIgnore {
    root: String,
    rules: Vec<(GlobSet, GlobSet)>,
}

/// One glob, compiled. Through a set of one: a glob's own `compile_matcher` panics on a pattern
/// too large to compile (thousands of `*` in a hostile file), a set's `build` says so.
fn glob(path: &Path, line: usize, g: &str) -> Result<GlobSet> {
    let bad = |e: globset::Error| Error::BadInput {
        path: path.to_path_buf(),
        reason: format!("line {line}: {e}"),
    };
    let glob = GlobBuilder::new(g)
        .literal_separator(true)
        .build()
        .map_err(bad)?;
    GlobSetBuilder::new().add(glob).build().map_err(bad)
}

impl NdupIgnore {
    /// Reads `root/.ndupignore`; `None` when there is none.
    pub fn load(root: &Path) -> Result<Option<Self>> {
        let path: PathBuf = root.join(FILE_NAME);
        // It comes with the tree: a FIFO there would block the scan forever, a device never end.
        match std::fs::metadata(&path) {
            Ok(m) if !m.is_file() => {
                return Err(Error::BadInput {
                    path,
                    reason: "not a regular file".into(),
                });
            }
            _ => {}
        }
        let text = match crate::source::files::read_side_text(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(path, e)),
        };
        Self::parse(root, &path, &text).map(Some)
    }

    /// Parses the text of an ignore file found at `path` for the root `root`. A file of more
    /// globs than a [`PatternBudget`] allows is refused before any is compiled: each costs
    /// memory, and the file comes with the tree.
    pub fn parse(root: &Path, path: &Path, text: &str) -> Result<Self> {
        let (mut lines, mut budget) = (Vec::new(), PatternBudget::default());
        for (i, line) in crate::text::strip_bom(text).lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let parts: Vec<&str> = line.split_whitespace().collect();
            let [a, b] = parts[..] else {
                return Err(Error::BadInput {
                    path: path.to_path_buf(),
                    reason: format!(
                        "line {}: expected two globs separated by white space, found {}",
                        i + 1,
                        parts.len()
                    ),
                });
            };
            if let Err(why) = budget.add(a).and_then(|_| budget.add(b)) {
                return Err(Error::BadInput {
                    path: path.to_path_buf(),
                    reason: why.into(),
                });
            }
            lines.push((i + 1, a, b));
        }
        let mut rules = Vec::with_capacity(lines.len());
        for (n, a, b) in lines {
            rules.push((glob(path, n, a)?, glob(path, n, b)?));
        }
        Ok(NdupIgnore {
            root: crate::source::files::display_id(root),
            rules,
        })
    }

    /// Number of rules.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// True when the file holds no rule.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// `id` relative to the root.
    fn relative<'a>(&self, id: &'a str) -> &'a str {
        let root = self.root.trim_end_matches('/');
        let rel = if root.is_empty() || root == "." {
            id
        } else {
            id.strip_prefix(root)
                .and_then(|r| r.strip_prefix('/'))
                .unwrap_or(id)
        };
        rel.trim_start_matches("./")
    }

    /// True when the pair `(a, b)` is accepted by some rule, in either order.
    pub fn accepts(&self, a: &str, b: &str) -> bool {
        let (a, b) = (self.relative(a), self.relative(b));
        self.rules
            .iter()
            .any(|(x, y)| (x.is_match(a) && y.is_match(b)) || (x.is_match(b) && y.is_match(a)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(root: &str, text: &str) -> NdupIgnore {
        NdupIgnore::parse(Path::new(root), Path::new(".ndupignore"), text).unwrap()
    }

    #[test]
    fn glob_pairs_match_in_either_order_relative_to_the_root() {
        let r = rules("docs/", "# comment\n\nen/**  fr/**\narchive/*\t**\n");
        assert_eq!(r.len(), 2);
        assert!(r.accepts("docs/en/a.md", "docs/fr/a.md"));
        assert!(r.accepts("docs/fr/x/a.md", "docs/en/b.md"));
        assert!(!r.accepts("docs/en/a.md", "docs/de/a.md"));
        assert!(r.accepts("docs/install.md", "docs/archive/install.md"));
        // `*` does not cross a directory.
        assert!(!r.accepts("docs/install.md", "docs/archive/old/install.md"));
        let r = rules(".", "a.md b.md\n");
        assert!(r.accepts("./b.md", "./a.md"));
        let r = rules(".", "1? 2*\n");
        assert!(r.accepts("17", "2"));
    }

    #[test]
    fn bad_lines_are_errors_with_the_line_number() {
        let e = NdupIgnore::parse(
            Path::new("."),
            Path::new("x/.ndupignore"),
            "a b\nonly-one\n",
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            e,
            "x/.ndupignore: line 2: expected two globs separated by white space, found 1"
        );
        let e = NdupIgnore::parse(Path::new("."), Path::new(".ndupignore"), "a[ b\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(".ndupignore: line 1:"), "{e}");
    }

    #[test]
    fn a_file_of_too_many_or_too_long_globs_is_refused_before_compiling_them() {
        let parse =
            |text: &str| NdupIgnore::parse(Path::new("."), Path::new("t/.ndupignore"), text);
        let lines = |n: usize, glob: &str| format!("{glob} {glob}\n").repeat(n);
        assert_eq!(parse(&lines(5_000, "a*")).unwrap().len(), 5_000);
        let e = parse(&lines(5_001, "a*")).unwrap_err().to_string();
        assert_eq!(e, "t/.ndupignore: more than 10,000 patterns");
        // Checked before any glob is compiled: a bad glob after the limit is not reached.
        let e = parse(&(lines(5_001, "a*") + "a[ b\n")).unwrap_err();
        assert_eq!(e.to_string(), "t/.ndupignore: more than 10,000 patterns");
        let long = "*a".repeat(64 << 10);
        let e = parse(&format!("{long} x\n{long} y\n")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t/.ndupignore: more than 256 KiB of patterns"
        );
    }

    #[test]
    fn a_missing_file_is_no_rules() {
        let dir = tempfile::tempdir().unwrap();
        assert!(NdupIgnore::load(dir.path()).unwrap().is_none());
        std::fs::write(dir.path().join(FILE_NAME), "a b\n").unwrap();
        assert_eq!(NdupIgnore::load(dir.path()).unwrap().unwrap().len(), 1);
    }
}
