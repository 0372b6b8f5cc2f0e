//! The library's error type. Every message is written for a person and names the file or the
//! parameter at fault; the binary maps these to exit codes in one place.

use std::path::PathBuf;

/// Everything that can go wrong inside the library. New variants may come in any release, so a
/// `match` on it needs a `_` arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A path given by the user does not exist (checked before any work starts).
    #[error("{path}: no such file or directory")]
    MissingPath {
        /// The path as the user wrote it.
        path: PathBuf,
    },
    /// A file or stream could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file that failed.
        path: PathBuf,
        /// The operating system's reason.
        #[source]
        source: std::io::Error,
    },
    /// An input that exists but cannot be used as given.
    #[error("{path}: {reason}")]
    BadInput {
        /// The path as the user wrote it.
        path: PathBuf,
        /// Why it cannot be used.
        reason: String,
    },
    /// The parameters contradict each other or are out of range. The [`Problem`] names the
    /// parameters it is about, so a caller can name them its own way (the `ndup` binary names
    /// its flags).
    #[error("invalid parameters: {0}")]
    InvalidConfig(Problem),
    /// Two sketches made with different parameters were compared.
    #[error("mismatched sketches: {0}")]
    Mismatch(String),
    /// Nothing could be read, so there is nothing to compare. Carries what was skipped, so the
    /// message can say why (otherwise `ndup scan broken-link` would never name the problem).
    #[error("no document could be read{}", skip_reasons(skipped))]
    NoDocuments {
        /// The files and directories that were skipped, with their reasons.
        skipped: Vec<crate::model::Skip>,
    },
    /// A JSON-lines source ended in a read error (a truncated or corrupt compressed stream, an
    /// I/O error): the records after it are missing, so no result is given unless partial input
    /// was allowed (`RecordOptions::partial`).
    #[error("{path}: read error after {unit} {line} ({reason}); the records after it are missing")]
    IncompleteInput {
        /// The source's name.
        path: String,
        /// What a record is in this source: `line` (JSON lines) or `row` (Parquet).
        unit: &'static str,
        /// The last line (or row) read whole.
        line: u64,
        /// What went wrong.
        reason: String,
    },
    /// The index file given does not exist (queries and removals need one).
    #[error("{path}: no such index")]
    NoIndex {
        /// The index path as given.
        path: PathBuf,
    },
    /// The file given as an index is not one: not a SQLite database, or another application's.
    /// ndup never writes to such a file, so the advice is to remove it (if it is a destroyed
    /// index) rather than to build over it, which is refused too.
    #[error(
        "{path}: not an ndup index ({reason}), so it is left untouched; use another file, or \
         remove this one and rebuild the index"
    )]
    NotAnIndex {
        /// The index path as given.
        path: PathBuf,
        /// What the file is instead.
        reason: String,
    },
    /// An ndup index whose content is damaged. No command repairs or overwrites it in place:
    /// it has to be removed and built again.
    #[error("{path}: the index is corrupt ({reason}); remove it and rebuild it")]
    IndexCorrupt {
        /// The index path as given.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// An index written in a format this version of ndup cannot read.
    #[error(
        "{path}: index format version {found} is not supported (this ndup reads version {supported}); remove it and rebuild it"
    )]
    IndexVersion {
        /// The index path as given.
        path: PathBuf,
        /// The version found in the file.
        found: i64,
        /// The version this ndup writes and reads.
        supported: i64,
    },
    /// The index was made with other parameters than this run's.
    #[error("{path}: {differences}; use the same parameters, or build the index again")]
    IndexParams {
        /// The index path as given.
        path: PathBuf,
        /// Which parameters differ, e.g. `index was built with num_perm 128, this run uses 256`.
        differences: Problem,
    },
    /// Signature shards were made with other parameters than the other shards, or than this
    /// run's.
    #[error("{path}: {differences}; use the parameters the shards were signed with")]
    ShardParams {
        /// The shard at fault.
        path: PathBuf,
        /// Which parameters differ, e.g. `part-00001.parquet was signed with num_perm 64,
        /// part-00000.parquet with 128`.
        differences: Problem,
    },
    /// The caller stopped the run (`Pipeline::with_stop`) before it finished.
    #[error("interrupted")]
    Interrupted,
    /// Another process holds the index's write lock for too long.
    #[error("{path}: the index is busy: another ndup process is writing it")]
    IndexBusy {
        /// The index path as given.
        path: PathBuf,
    },
    /// Any other failure of the index's database (disk full, permissions, ...).
    #[error("{path}: {reason}")]
    IndexDb {
        /// The index path as given.
        path: PathBuf,
        /// SQLite's message.
        reason: String,
    },
    /// A document id that the index does not hold.
    #[error("{id}: not in the index {}", path.display())]
    NotIndexed {
        /// The id as given.
        id: String,
        /// The index path as given.
        path: PathBuf,
    },
    /// A key given to an in-memory LSH index that holds it already.
    #[error("{key}: already in the index (remove it first)")]
    DuplicateKey {
        /// The key, as `Debug` shows it.
        key: String,
    },
    /// Exact mode would need more memory than allowed.
    #[error(
        "exact mode needs at least {} for this corpus, more than the memory limit {}; \
         use MinHash mode (not exact mode) or raise the limit",
        format_bytes(*needed),
        format_bytes(*limit)
    )]
    TooLargeForExact {
        /// The estimate, in bytes.
        needed: u64,
        /// The limit, in bytes.
        limit: u64,
    },
    /// Exact mode numbers shingles with 32 bits.
    #[error(
        "exact mode handles at most {max} shingles in all, and this corpus has {shingles}; \
         use MinHash mode (not exact mode)"
    )]
    TooManyShingles {
        /// Shingles in the corpus.
        shingles: u64,
        /// The most exact mode handles.
        max: u64,
    },
}

/// `": a: reason; b: reason"`, the first few skips of a failed scan, for its one-line error.
/// A parameter of the library, as its errors name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Param {
    /// The similarity threshold.
    Threshold,
    /// Slots per signature.
    NumPerm,
    /// LSH bands.
    Bands,
    /// Slots per LSH band.
    Rows,
    /// The modulo of modulo sampling.
    Modulo,
    /// Sampled hashes per supershingle.
    SupershingleSize,
    /// The largest bucket whose pairs are all enumerated.
    MaxBucket,
    /// The tuner's weight of a false positive.
    FpWeight,
    /// The tuner's weight of a false negative.
    FnWeight,
    /// The dotted path of a record's id.
    IdField,
    /// The dotted path of a record's text.
    TextField,
    /// A glob that selects files.
    Glob,
    /// A glob that leaves files out.
    Exclude,
    /// The shingle size (characters or words).
    ShingleSize,
    /// The stop-word list.
    Stopwords,
    /// The shingle kind.
    Shingle,
    /// Characters per char shingle.
    CharSize,
    /// Words per word shingle.
    WordSize,
    /// The signature sketch.
    Sketch,
    /// The seed of every hash.
    Seed,
    /// A stop-word list given as a file.
    StopwordsFile,
    /// NFKC normalization turned off.
    NoNfkc,
    /// Lowercasing turned off.
    NoLowercase,
    /// White-space collapsing turned off.
    NoCollapseWhitespace,
    /// Trimming turned off.
    NoTrim,
}

impl Param {
    /// The library's name of the parameter (the field of the configuration that holds it).
    pub fn name(self) -> &'static str {
        match self {
            Param::Threshold => "threshold",
            Param::NumPerm => "num_perm",
            Param::Bands => "bands",
            Param::Rows => "rows",
            Param::Modulo => "modulo",
            Param::SupershingleSize => "supershingle_size",
            Param::MaxBucket => "max_bucket",
            Param::FpWeight => "fp_weight",
            Param::FnWeight => "fn_weight",
            Param::IdField => "id_field",
            Param::TextField => "text_field",
            Param::Glob => "glob",
            Param::Exclude => "exclude",
            Param::ShingleSize => "shingle size",
            Param::Stopwords => "stop-word list",
            Param::Shingle => "shingle",
            Param::CharSize => "k",
            Param::WordSize => "w",
            Param::Sketch => "sketch",
            Param::Seed => "seed",
            Param::StopwordsFile => "stopwords",
            Param::NoNfkc => "no NFKC normalization",
            Param::NoLowercase => "no case folding",
            Param::NoCollapseWhitespace => "no white-space collapsing",
            Param::NoTrim => "no trimming",
        }
    }
}

/// One piece of a [`Problem`].
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// Words.
    Text(String),
    /// A parameter, named by whoever shows the message.
    Param(Param),
}

impl From<Param> for Piece {
    fn from(p: Param) -> Self {
        Piece::Param(p)
    }
}

impl From<String> for Piece {
    fn from(s: String) -> Self {
        Piece::Text(s)
    }
}

impl From<&str> for Piece {
    fn from(s: &str) -> Self {
        Piece::Text(s.to_string())
    }
}

/// What is wrong with some parameters: a sentence made of words and the parameters it names.
/// Shown as it is, it names them as the library does ([`Param::name`]); [`Problem::render`] lets
/// a caller name them otherwise.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem(Vec<Piece>);

impl Problem {
    /// A problem from its pieces (see the [`problem!`](crate::problem) macro).
    pub fn new(pieces: Vec<Piece>) -> Self {
        Problem(pieces)
    }

    /// The sentence, each parameter named by `name`.
    pub fn render(&self, name: impl Fn(Param) -> String) -> String {
        self.0
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.clone(),
                Piece::Param(p) => name(*p),
            })
            .collect()
    }

    /// Its pieces, to build a longer problem from it.
    pub fn into_pieces(self) -> Vec<Piece> {
        self.0
    }

    /// The parameters it names, in order.
    pub fn params(&self) -> impl Iterator<Item = Param> + '_ {
        self.0.iter().filter_map(|p| match p {
            Piece::Param(p) => Some(*p),
            Piece::Text(_) => None,
        })
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render(|p| p.name().to_string()))
    }
}

/// A [`Problem`] from words and [`Param`]s: `problem![Param::Threshold, " must be at most 1"]`.
#[macro_export]
macro_rules! problem {
    ($($piece:expr),* $(,)?) => {
        $crate::error::Problem::new(vec![$($crate::error::Piece::from($piece)),*])
    };
}

/// [`Error::InvalidConfig`] with a [`problem!`].
#[macro_export]
macro_rules! invalid {
    ($($piece:expr),* $(,)?) => {
        $crate::error::Error::InvalidConfig($crate::problem![$($piece),*])
    };
}

fn skip_reasons(skipped: &[crate::model::Skip]) -> String {
    const SHOWN: usize = 3;
    let mut s = String::new();
    for (i, skip) in skipped.iter().take(SHOWN).enumerate() {
        s += if i == 0 { ": " } else { "; " };
        s += &format!("{}: {}", skip.id, skip.reason);
    }
    if skipped.len() > SHOWN {
        s += &format!("; and {} more", skipped.len() - SHOWN);
    }
    s
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Builds an [`Error::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// A byte count for people, in binary units as `--max-memory` reads them: `512 B`, `1.5 KiB`,
/// `3.0 GiB`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Skip, SkipKind};

    #[test]
    fn no_documents_names_the_first_skips() {
        let skip = |id: &str| Skip {
            id: id.into(),
            kind: SkipKind::Unreadable,
            reason: "No such file or directory".into(),
        };
        let none = Error::NoDocuments { skipped: vec![] };
        assert_eq!(none.to_string(), "no document could be read");
        let one = Error::NoDocuments {
            skipped: vec![skip("a")],
        };
        assert_eq!(
            one.to_string(),
            "no document could be read: a: No such file or directory"
        );
        let five = Error::NoDocuments {
            skipped: ["a", "b", "c", "d", "e"].map(skip).to_vec(),
        };
        assert!(
            five.to_string()
                .ends_with("c: No such file or directory; and 2 more")
        );
    }

    #[test]
    fn bytes_for_people() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(1536), "1.5 KiB");
        assert_eq!(format_bytes(3 << 30), "3.0 GiB");
    }
}
