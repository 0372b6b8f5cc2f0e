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
//!
//! The file comes with the tree and may hold 10,000 globs, so a pair is not tested rule by rule.
//! The distinct globs are compiled together, in a few sets; an id is matched once against them
//! all, and what it matches is kept as the rules whose first glob it matches and the rules whose
//! second glob it does. A pair `(a, b)` is then accepted when a rule is in `a`'s first and `b`'s
//! second, or in `b`'s first and `a`'s second: the cost is one match per distinct id and a set
//! intersection per pair, not two matches per rule and pair. [`NdupIgnore::prepare`] matches the
//! ids of all the pairs first, one set at a time, so that only one set's caches are held at once.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use globset::{Candidate, Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::source::files::PatternBudget;

/// The file name looked for in the scanned root.
pub const FILE_NAME: &str = ".ndupignore";

/// At most this many globs are compiled into one set. globset's regex set has a size limit (a
/// set over it is split in halves until its parts fit: 10,000 short globs do not fit in one), and
/// the states of its lazy DFA grow with its globs: smaller sets cost more matches an id, larger
/// ones slow each match on globs of many `*` (see docs/design-notes.md for the sizes tried).
const SET_SIZE: usize = 128;

/// At most this many bytes of regex times globs in a set. When its lazy DFA gives up, a set is
/// matched by a PikeVM that takes two slots of 8 bytes per glob per NFA state, twice (a state
/// per byte of regex, or fewer): its memory grows with globs times regex bytes, which this
/// bounds to a few tens of megabytes a set.
const SET_COST: usize = 1 << 20;

/// [`NdupIgnore::prepare`] matches this many ids at a time against each set: the matches of a
/// batch are held until all its sets are done, and the caches of a set are rebuilt per batch.
const BATCH: usize = 1024;

/// Accepted pairs of globs.
pub struct NdupIgnore {
    root: String,
    /// The number of rules (lines).
    rules: usize,
    /// The distinct globs, compiled in sets of consecutive ones, each set with the index of its
    /// first glob.
    sets: Vec<(usize, GlobSet)>,
    /// Per distinct glob, the rules it is the first glob of, and those it is the second one of.
    of_glob: Vec<[Vec<u32>; 2]>,
    /// What the ids met so far match.
    seen: Mutex<Seen>,
}

impl Clone for NdupIgnore {
    fn clone(&self) -> Self {
        NdupIgnore {
            root: self.root.clone(),
            rules: self.rules,
            sets: self.sets.clone(),
            of_glob: self.of_glob.clone(),
            seen: Mutex::new(Seen::new()),
        }
    }
}

impl fmt::Debug for NdupIgnore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NdupIgnore")
            .field("root", &self.root)
            .field("rules", &self.rules)
            .field("globs", &self.of_glob.len())
            .field("sets", &self.sets.len())
            .finish_non_exhaustive()
    }
}

/// Compiles one glob of the file.
fn compile(g: &str) -> std::result::Result<Glob, globset::Error> {
    GlobBuilder::new(g).literal_separator(true).build()
}

/// One glob in a set of its own: a glob's own `compile_matcher` panics on a pattern too large to
/// compile (thousands of `*` in a hostile file), a set's `build` says so.
fn alone(glob: &Glob) -> std::result::Result<GlobSet, globset::Error> {
    GlobSetBuilder::new().add(glob.clone()).build()
}

fn bad(path: &Path, line: usize, e: globset::Error) -> Error {
    Error::BadInput {
        path: path.to_path_buf(),
        reason: format!("line {line}: {e}"),
    }
}

/// `g` rewritten to match the same paths in globset's regex set, when globset would otherwise
/// match it with a regex of its own: a glob that ends in a literal extension but is not simpler
/// (`en/*.md`, `**/a*.txt`) is tried one regex at a time against every path of that extension,
/// so that 10,000 of them cost 10,000 regexes per id. Its last character written as a class of
/// one (`en/*.m[d]`) matches exactly the same paths, among the other globs of its set. Only a
/// matter of speed: `None` keeps the glob as it is.
fn steer(g: &str) -> Option<String> {
    // An ASCII letter or digit, unescaped: a literal character, and `[c]` is that character.
    if !g.as_bytes().last()?.is_ascii_alphanumeric() {
        return None;
    }
    let (head, last) = g.split_at(g.len() - 1);
    if head.ends_with('\\') {
        return None;
    }
    const META: [char; 4] = ['*', '?', '[', '{'];
    let name = &g[g.rfind('/').map_or(0, |i| i + 1)..];
    let ext = &name[name.rfind('.')? + 1..];
    if ext.contains(META) || ext.contains([']', '}', ',', '\\']) {
        return None;
    }
    let body = g.strip_prefix("**/").unwrap_or(g);
    // Literals (`a.md`, `**/a.md`, `**/a/b.md`) and extensions (`**/*.md`) are looked up.
    let extension = |e: &str| !e.contains(META) && !e.contains(['.', '/', '\\', ']', '}', ',']);
    if !body.contains(META)
        || (body.len() < g.len() && body.strip_prefix("*.").is_some_and(extension))
    {
        return None;
    }
    Some(format!("{head}[{last}]"))
}

/// `id` relative to `root`, a root as [`crate::source::files::display_id`] writes it.
fn relative<'a>(root: &str, id: &'a str) -> &'a str {
    let root = root.trim_end_matches('/');
    let rel = if root.is_empty() || root == "." {
        id
    } else {
        id.strip_prefix(root)
            .and_then(|r| r.strip_prefix('/'))
            .unwrap_or(id)
    };
    rel.trim_start_matches("./")
}

/// Puts `range` in sets built by `build`: in one set, or where that fails in halves, recursively,
/// the first half first; the error is the first glob that fails on its own.
fn in_sets<S, E>(
    range: Range<usize>,
    build: &mut impl FnMut(Range<usize>) -> std::result::Result<S, E>,
    sets: &mut Vec<(usize, S)>,
) -> std::result::Result<(), E> {
    match build(range.clone()) {
        Ok(set) => {
            sets.push((range.start, set));
            Ok(())
        }
        Err(e) if range.len() == 1 => Err(e),
        Err(_) => {
            let mid = range.start + range.len() / 2;
            in_sets(range.start..mid, build, sets)?;
            in_sets(mid..range.end, build, sets)
        }
    }
}

/// The distinct globs of a file, in the order they first appear in.
#[derive(Default)]
struct Globs<'t> {
    index: HashMap<&'t str, u32>,
    globs: Vec<Distinct>,
}

/// A glob, with the line it first appears on, compiled as written and, where that is faster to
/// match, steered.
struct Distinct {
    line: usize,
    glob: Glob,
    steered: Option<Glob>,
}

impl Distinct {
    /// The glob put in a set.
    fn matched(&self) -> &Glob {
        self.steered.as_ref().unwrap_or(&self.glob)
    }
}

impl<'t> Globs<'t> {
    /// The index of `g`, found on `line`.
    fn add(&mut self, path: &Path, line: usize, g: &'t str) -> Result<u32> {
        if let Some(&i) = self.index.get(g) {
            return Ok(i);
        }
        let glob = match compile(g) {
            Ok(glob) => glob,
            // The globs were compiled line by line, each on its own: one before this line that
            // is too large to compile is the error.
            Err(e) => {
                let earlier = self
                    .globs
                    .iter()
                    .find_map(|d| alone(&d.glob).err().map(|e| bad(path, d.line, e)));
                return Err(earlier.unwrap_or_else(|| bad(path, line, e)));
            }
        };
        let steered = steer(g).and_then(|s| compile(&s).ok());
        let i = self.globs.len() as u32;
        self.index.insert(g, i);
        self.globs.push(Distinct {
            line,
            glob,
            steered,
        });
        Ok(i)
    }

    /// The globs compiled in sets of at most `size` and [`SET_COST`], in order.
    fn compile(&self, path: &Path, size: usize) -> Result<Vec<(usize, GlobSet)>> {
        let mut build = |range: Range<usize>| {
            let mut set = GlobSetBuilder::new();
            for d in &self.globs[range.clone()] {
                set.add(d.matched().clone());
            }
            match set.build() {
                Ok(set) => Ok(set),
                // A glob failing on its own fails as it is written, or is kept so.
                Err(_) if range.len() == 1 => {
                    let d = &self.globs[range.start];
                    alone(&d.glob).map_err(|e| bad(path, d.line, e))
                }
                Err(e) => Err(bad(path, self.globs[range.start].line, e)),
            }
        };
        let (mut sets, mut start) = (Vec::new(), 0);
        while start < self.globs.len() {
            let (mut end, mut bytes) = (start + 1, self.globs[start].matched().regex().len());
            while end < self.globs.len() && end - start < size {
                let len = self.globs[end].matched().regex().len();
                if (bytes + len) * (end - start + 1) > SET_COST {
                    break;
                }
                (end, bytes) = (end + 1, bytes + len);
            }
            in_sets(start..end, &mut build, &mut sets)?;
            start = end;
        }
        Ok(sets)
    }
}

/// A set of rules, by index: sorted when few, a bitset when more than it would take.
#[derive(Debug, PartialEq, Eq, Hash)]
enum RuleSet {
    Few(Box<[u32]>),
    Many(Box<[u64]>),
}

impl RuleSet {
    /// The set of `rules`, among `n`; its form depends on the set only.
    fn new(mut rules: Vec<u32>, n: usize) -> Self {
        rules.sort_unstable();
        rules.dedup();
        let words = n.div_ceil(64);
        if rules.len() <= 2 * words {
            return RuleSet::Few(rules.into());
        }
        let mut bits = vec![0u64; words];
        for r in rules {
            bits[r as usize / 64] |= 1 << (r % 64);
        }
        RuleSet::Many(bits.into())
    }

    /// True when the sets share a rule.
    fn meets(&self, other: &RuleSet) -> bool {
        use std::cmp::Ordering::*;
        match (self, other) {
            (RuleSet::Few(a), RuleSet::Few(b)) => {
                let (mut i, mut j) = (0, 0);
                while i < a.len() && j < b.len() {
                    match a[i].cmp(&b[j]) {
                        Less => i += 1,
                        Greater => j += 1,
                        Equal => return true,
                    }
                }
                false
            }
            (RuleSet::Few(few), RuleSet::Many(bits)) | (RuleSet::Many(bits), RuleSet::Few(few)) => {
                few.iter()
                    .any(|&r| bits[r as usize / 64] >> (r % 64) & 1 == 1)
            }
            (RuleSet::Many(a), RuleSet::Many(b)) => a.iter().zip(b.iter()).any(|(x, y)| x & y != 0),
        }
    }
}

/// The ids met so far, each with the rules whose first glob it matches and those whose second
/// glob it does. The sets are interned (ids share them): `0` is the empty set.
struct Seen {
    ids: HashMap<Box<str>, [u32; 2]>,
    sets: Vec<Arc<RuleSet>>,
    index: HashMap<Arc<RuleSet>, u32>,
}

impl Seen {
    fn new() -> Self {
        let empty = Arc::new(RuleSet::Few(Box::new([])));
        Seen {
            ids: HashMap::new(),
            index: HashMap::from([(empty.clone(), 0)]),
            sets: vec![empty],
        }
    }

    /// The number of the set of `rules`, among `n`.
    fn intern(&mut self, rules: Vec<u32>, n: usize) -> u32 {
        let set = RuleSet::new(rules, n);
        if let Some(&i) = self.index.get(&set) {
            return i;
        }
        let i = self.sets.len() as u32;
        let set = Arc::new(set);
        self.sets.push(set.clone());
        self.index.insert(set, i);
        i
    }

    /// True when the sets numbered `x` and `y` share a rule.
    fn meets(&self, x: u32, y: u32) -> bool {
        x != 0 && y != 0 && self.sets[x as usize].meets(&self.sets[y as usize])
    }
}

impl NdupIgnore {
    /// Reads `root/.ndupignore`; `None` when there is none.
    pub fn load(root: &Path) -> Result<Option<Self>> {
        let path: PathBuf = root.join(FILE_NAME);
        if let Err(reason) = crate::source::files::check_inside_tree(&path, root) {
            return Err(Error::BadInput { path, reason });
        }
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
        Self::parse_in_sets(root, path, text, SET_SIZE)
    }

    /// The rules of `text`, each as its line number and two globs, or the first bad line.
    fn lines<'t>(path: &Path, text: &'t str) -> Result<Vec<(usize, &'t str, &'t str)>> {
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
        Ok(lines)
    }

    /// [`NdupIgnore::parse`], with at most `set_size` globs to a set.
    fn parse_in_sets(root: &Path, path: &Path, text: &str, set_size: usize) -> Result<Self> {
        let lines = Self::lines(path, text)?;
        let mut globs = Globs::default();
        let mut rules = Vec::with_capacity(lines.len());
        for (n, a, b) in lines {
            rules.push([globs.add(path, n, a)?, globs.add(path, n, b)?]);
        }
        let sets = globs.compile(path, set_size)?;
        let mut of_glob = vec![[Vec::new(), Vec::new()]; globs.globs.len()];
        for (r, rule) in rules.iter().enumerate() {
            for (side, &g) in rule.iter().enumerate() {
                of_glob[g as usize][side].push(r as u32);
            }
        }
        Ok(NdupIgnore {
            root: crate::source::files::display_id(root),
            rules: rules.len(),
            sets,
            of_glob,
            seen: Mutex::new(Seen::new()),
        })
    }

    /// Number of rules.
    pub fn len(&self) -> usize {
        self.rules
    }

    /// True when the file holds no rule.
    pub fn is_empty(&self) -> bool {
        self.rules == 0
    }

    /// `id` relative to the root.
    fn relative<'a>(&self, id: &'a str) -> &'a str {
        relative(&self.root, id)
    }

    /// Records that the relative `id` matches the distinct globs `hits`: the rules whose first
    /// glob it matches and those whose second glob it does, as sets of `seen`.
    fn record(&self, id: &str, hits: &[u32], seen: &mut Seen) -> [u32; 2] {
        let mut rules = [Vec::new(), Vec::new()];
        for &g in hits {
            for (side, of_glob) in rules.iter_mut().zip(&self.of_glob[g as usize]) {
                side.extend_from_slice(of_glob);
            }
        }
        let n = self.rules;
        let [first, second] = rules;
        let sides = [seen.intern(first, n), seen.intern(second, n)];
        seen.ids.insert(id.into(), sides);
        sides
    }

    /// The sets of `seen` of the relative `id`, matched now if it was not prepared.
    fn sides(&self, id: &str, seen: &mut Seen) -> [u32; 2] {
        if let Some(&sides) = seen.ids.get(id) {
            return sides;
        }
        let candidate = Candidate::new(id);
        let (mut found, mut hits) = (Vec::new(), Vec::new());
        for (start, set) in &self.sets {
            set.matches_candidate_into(&candidate, &mut found);
            hits.extend(found.iter().map(|&f| (start + f) as u32));
        }
        self.record(id, &hits, seen)
    }

    /// Matches `ids` against the globs, for [`NdupIgnore::accepts`] to find them matched. It
    /// would match an id it meets on its own, against every set, and each set's regexes keep
    /// caches, megabytes a set on hostile globs, and a file of 10,000 globs makes dozens of sets.
    /// This goes set by set through batches of ids, so that one set's caches are held at a
    /// time.
    pub fn prepare<'a>(&self, ids: impl IntoIterator<Item = &'a str>) {
        if self.rules == 0 {
            return;
        }
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let mut new = HashSet::new();
        let new: Vec<&str> = (ids.into_iter())
            .map(|id| self.relative(id))
            .filter(|id| !seen.ids.contains_key(*id) && new.insert(*id))
            .collect();
        for batch in new.chunks(BATCH) {
            let candidates: Vec<Candidate<'_>> = batch.iter().map(Candidate::new).collect();
            let mut hits = vec![Vec::new(); batch.len()];
            for (start, set) in &self.sets {
                // A copy shares the compiled set but not its caches (one per thread), dropped
                // with it.
                let set = set.clone();
                candidates.par_iter().zip(&mut hits).for_each_init(
                    Vec::new,
                    |found, (candidate, hits)| {
                        set.matches_candidate_into(candidate, found);
                        hits.extend(found.iter().map(|&f| (start + f) as u32));
                    },
                );
            }
            for (id, hits) in batch.iter().zip(&hits) {
                self.record(id, hits, &mut seen);
            }
        }
    }

    /// True when the pair `(a, b)` is accepted by some rule, in either order. What an id
    /// matches is kept: each distinct id is matched against the globs once (see
    /// [`NdupIgnore::prepare`] to match many first).
    pub fn accepts(&self, a: &str, b: &str) -> bool {
        if self.rules == 0 {
            return false;
        }
        let (a, b) = (self.relative(a), self.relative(b));
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let [a_first, a_second] = self.sides(a, &mut seen);
        let [b_first, b_second] = self.sides(b, &mut seen);
        seen.meets(a_first, b_second) || seen.meets(b_first, a_second)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

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
    fn a_pair_needs_one_rule_for_both_ids() {
        // `a` matches the first glob of one rule, `b` the second glob of another: not accepted.
        let r = rules(".", "a/* x/*\ny/* b/*\n");
        assert!(!r.accepts("a/1", "b/1"));
        assert!(r.accepts("a/1", "x/1") && r.accepts("x/1", "a/1"));
        assert!(r.accepts("b/1", "y/1") && r.accepts("y/1", "b/1"));
        // Both globs of a rule may be the same, and a glob may serve in several rules.
        let r = rules(".", "*.md *.md\n*.md a/*\n");
        assert!(r.accepts("x.md", "y.md") && r.accepts("a/x", "x.md"));
        assert!(!r.accepts("a/x", "a/y"));
        // Asked again, or through a clone, the answers are the same.
        let c = r.clone();
        for _ in 0..2 {
            for r in [&r, &c] {
                assert!(r.accepts("x.md", "a/y") && !r.accepts("a/y", "b/y"));
            }
        }
        assert!(!rules(".", "# nothing\n").accepts("a", "a"));
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

    #[test]
    fn globs_ending_in_an_extension_are_steered_to_the_regex_set() {
        for (g, steered) in [
            ("en/*.md", Some("en/*.m[d]")),
            ("**/a*.txt", Some("**/a*.tx[t]")),
            ("*.md", Some("*.m[d]")),
            ("**/*.tar.gz", Some("**/*.tar.g[z]")),
            ("{a,b}.md", Some("{a,b}.m[d]")),
            ("a\\*.md", Some("a\\*.m[d]")),
            ("ü*.md", Some("ü*.m[d]")),
            // Looked up as they are: literals, a literal under `**/`, an extension.
            ("a.md", None),
            ("**/a.md", None),
            ("**/a/b.md", None),
            ("**/*.md", None),
            // Not a literal extension at the end.
            ("*.m?", None),
            ("*.[md]", None),
            ("*.{md,txt}", None),
            ("*.md/**", None),
            ("en/*", None),
            ("*\\t", None),
            ("*.mü", None),
            ("*.m\\d", None),
            ("", None),
        ] {
            assert_eq!(steer(g).as_deref(), steered, "{g}");
        }
    }

    #[test]
    fn sets_that_do_not_compile_are_split_down_to_the_glob_that_does_not() {
        // A "set" of more than three globs does not compile, nor one holding glob 6.
        let mut build = |r: Range<usize>| {
            if r.len() > 3 || r.contains(&6) {
                Err(r.start)
            } else {
                Ok(r.len())
            }
        };
        let mut sets = Vec::new();
        assert_eq!(in_sets(0..6, &mut build, &mut sets), Ok(()));
        assert_eq!(sets, [(0, 3), (3, 3)]);
        assert_eq!(in_sets(6..8, &mut build, &mut sets), Err(6));
        sets.clear();
        assert_eq!(in_sets(0..10, &mut build, &mut sets), Err(6));
        assert_eq!(sets, [(0, 2), (2, 3), (5, 1)]);
        assert_eq!(in_sets(7..8, &mut build, &mut sets), Ok(()));
        assert_eq!(sets.last(), Some(&(7, 1)));
    }

    /// The matcher before sets: each rule a pair of globs, each in a set of its own, tried on
    /// every pair. Kept to check the new one against, errors included.
    mod reference {
        use super::super::*;

        pub struct Rules {
            pub root: String,
            pub rules: Vec<(GlobSet, GlobSet)>,
        }

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

        pub fn parse(root: &Path, path: &Path, text: &str) -> Result<Rules> {
            let lines = NdupIgnore::lines(path, text)?;
            let mut rules = Vec::with_capacity(lines.len());
            for (n, a, b) in lines {
                rules.push((glob(path, n, a)?, glob(path, n, b)?));
            }
            Ok(Rules {
                root: crate::source::files::display_id(root),
                rules,
            })
        }

        impl Rules {
            pub fn accepts(&self, a: &str, b: &str) -> bool {
                let (a, b) = (relative(&self.root, a), relative(&self.root, b));
                self.rules.iter().any(|(x, y)| {
                    (x.is_match(a) && y.is_match(b)) || (x.is_match(b) && y.is_match(a))
                })
            }
        }
    }

    fn pick<'a>(rng: &mut ChaCha8Rng, from: &[&'a str]) -> &'a str {
        from[rng.random_range(0..from.len())]
    }

    fn random_glob(rng: &mut ChaCha8Rng) -> String {
        const WHOLE: &[&str] = &[
            "**",
            "*",
            "?",
            "*.md",
            "a.md",
            "**/a.md",
            "**/*.md",
            "old/**",
            "old/*",
            "{a,b}*",
            "[ab].md",
            "[!a]*",
            "**/**/**",
            "a/**/b",
            "[[:alpha:]]*",
            "*.{md,txt}",
            "docs/**",
            "a?copy.md",
            "[",
            "{",
            "\\",
            "[z-a]",
            "a**",
            "**a",
            "*\\*",
            "x/*.txt",
            "*/*.txt",
        ];
        const PARTS: &[&str] = &[
            "a", "b", "x", "old", ".", "/", "*", "**", "**/", "?", "[ab]", "[!a]", "[a-c]",
            "{a,b}", "{a,b/c}", "\\*", "\\a", ".md", ".txt", "t", "copy", "ü", "*.", "[",
        ];
        if rng.random_range(0..4) == 0 {
            return pick(rng, WHOLE).to_string();
        }
        let mut g: String = (0..rng.random_range(1..6))
            .map(|_| pick(rng, PARTS))
            .collect();
        if rng.random_range(0..2) == 0 {
            g.push_str(pick(rng, &[".md", ".txt", ".t", "a.md", "*.md", "/x.txt"]));
        }
        g
    }

    fn random_id(rng: &mut ChaCha8Rng, root: &str) -> String {
        const DIRS: &[&str] = &["a", "b", "old", "x", "ab", ".h", "a copy", "{a,b}", "ü"];
        const NAMES: &[&str] = &[
            "a.md",
            "b.md",
            "a.txt",
            "x.txt",
            "ab.c",
            "a",
            "b.tx",
            "a copy.md",
            "[a].md",
            "a*b.md",
            "t",
            ".md",
            "x.t",
            "cx.txt",
            "ü.md",
            "a.md.txt",
        ];
        let mut id = String::from(root);
        for _ in 0..rng.random_range(0..3) {
            id.push_str(pick(rng, DIRS));
            id.push('/');
        }
        id.push_str(pick(rng, NAMES));
        id
    }

    #[test]
    fn the_matcher_accepts_what_matching_rule_by_rule_does() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let path = Path::new("d/.ndupignore");
        let (mut parsed, mut refused) = (0, 0);
        for case in 0..400 {
            let (root, prefix) = *[("docs", "docs/"), (".", "./"), (".", ""), ("docs/", "")]
                .get(rng.random_range(0..4))
                .unwrap();
            let text: String = (0..rng.random_range(0..9))
                .map(|_| match rng.random_range(0..12) {
                    0 => "# comment\n".to_string(),
                    1 => random_glob(&mut rng) + "\n",
                    _ => format!("{} {}\n", random_glob(&mut rng), random_glob(&mut rng)),
                })
                .collect();
            let set_size = *[1, 2, 3, SET_SIZE].get(rng.random_range(0..4)).unwrap();
            let new = NdupIgnore::parse_in_sets(Path::new(root), path, &text, set_size);
            let old = reference::parse(Path::new(root), path, &text);
            let (new, old) = match (new, old) {
                (Ok(new), Ok(old)) => (new, old),
                (new, old) => {
                    let (new, old) = (new.map(|_| ()), old.map(|_| ()));
                    assert_eq!(
                        new.map_err(|e| e.to_string()),
                        old.map_err(|e| e.to_string()),
                        "case {case}: {text}"
                    );
                    refused += 1;
                    continue;
                }
            };
            parsed += 1;
            assert_eq!(new.len(), old.rules.len());
            let ids: Vec<String> = (0..12).map(|_| random_id(&mut rng, prefix)).collect();
            for a in &ids {
                for b in &ids {
                    assert_eq!(
                        new.accepts(a, b),
                        old.accepts(a, b),
                        "case {case}: {a} {b} in {root} by\n{text}"
                    );
                }
            }
        }
        assert!(
            parsed > 100 && refused > 20,
            "{parsed} parsed, {refused} refused"
        );
    }

    #[test]
    fn steered_globs_match_what_they_were_written_for() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut steered = 0;
        for _ in 0..3000 {
            let g = random_glob(&mut rng);
            let (Some(s), Ok(glob)) = (steer(&g), compile(&g)) else {
                continue;
            };
            steered += 1;
            let (glob, s) = (alone(&glob).unwrap(), alone(&compile(&s).unwrap()).unwrap());
            for _ in 0..20 {
                let id = random_id(&mut rng, "");
                assert_eq!(glob.is_match(&id), s.is_match(&id), "{g} on {id}");
            }
        }
        assert!(steered > 200, "{steered}");
    }

    #[test]
    fn errors_are_those_of_compiling_line_by_line() {
        // Too large to compile: reported at its line, before a later line's syntax error, after
        // an earlier one's; a large glob that compiles on its own compiles among others.
        let big = "*".repeat(100_000);
        let path = Path::new("t/.ndupignore");
        for text in [
            format!("a b\n{big} c\nd [\n"),
            format!("a [\n{big} c\n"),
            format!("x.md y.md\nc {big}\n"),
            format!("c*.md {}.md\n", "*a".repeat(5_000)),
        ] {
            let new = NdupIgnore::parse_in_sets(Path::new("."), path, &text, 2);
            let old = reference::parse(Path::new("."), path, &text);
            assert_eq!(
                new.map(|n| n.len()).map_err(|e| e.to_string()),
                old.map(|o| o.rules.len()).map_err(|e| e.to_string())
            );
        }
    }
}
