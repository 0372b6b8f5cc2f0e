//! Every flag of `ndup`, defined once; clap turns them into `--help`. Each command's arguments
//! become a library config here, so the library never sees clap.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};

use ndup::config::{DEFAULT_MAX_BUCKET, DEFAULT_SEED, Measure, ScanConfig};
use ndup::input::InputOptions;
use ndup::lsh::LshParams;
use ndup::minhash::SketchKind;
use ndup::normalize::NormalizeOptions;
use ndup::output::Format;
use ndup::shingle::{ShingleKind, ShingleOptions, parse_stopwords};
use ndup::verify::VerifyMode;

/// Find near-duplicate documents: shingles, MinHash signatures and LSH.
#[derive(Debug, Parser)]
#[command(name = "ndup", version, about, propagate_version = true)]
pub struct Cli {
    /// Worker threads (default: one per core, or RAYON_NUM_THREADS).
    #[arg(long, short = 'j', global = true, value_name = "N")]
    pub threads: Option<usize>,

    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Find near-duplicate documents among files and directories.
    Scan(Box<ScanArgs>),
    /// Keep a persistent index of signed documents (a SQLite file).
    #[command(subcommand)]
    Index(IndexCommand),
    /// Print the indexed documents similar to each query document.
    Query(Box<QueryArgs>),
}

/// The `ndup index` commands.
#[derive(Debug, Subcommand)]
pub enum IndexCommand {
    /// Index a corpus, replacing whatever the index held (and its parameters).
    Build(Box<IndexSyncArgs>),
    /// Add documents, or update them when they changed (nothing is removed).
    Add(Box<IndexSyncArgs>),
    /// Remove documents from the index by id.
    Remove(IndexRemoveArgs),
    /// Bring the index in line with a corpus: add new documents, re-sign changed ones, remove
    /// the ones that disappeared.
    Update(Box<IndexSyncArgs>),
}

/// LSH banding flags of the index commands (as in `ndup scan`).
#[derive(Debug, Clone, Args)]
pub struct LshArgs {
    /// LSH bands [default: 16, or num-perm / rows].
    #[arg(long, short = 'b', value_name = "B", help_heading = "LSH")]
    pub bands: Option<usize>,
    /// Slots per LSH band [default: 8, or num-perm / bands].
    #[arg(long, short = 'r', value_name = "R", help_heading = "LSH")]
    pub rows: Option<usize>,
}

/// Arguments of `ndup index build`, `add` and `update`.
#[derive(Debug, Args)]
pub struct IndexSyncArgs {
    /// Files and directories to index (directories recursively).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// The index file (created when missing).
    #[arg(long, value_name = "FILE")]
    pub index: PathBuf,

    #[command(flatten)]
    pub sketching: SketchingArgs,

    #[command(flatten)]
    pub lsh: LshArgs,

    /// Report format.
    #[arg(long, value_enum, default_value = "jsonl", help_heading = "Output")]
    pub format: FormatArg,
    /// Print nothing on stderr but errors.
    #[arg(long, short = 'q', help_heading = "Output")]
    pub quiet: bool,

    /// Follow symbolic links while walking directories.
    #[arg(long, short = 'L', help_heading = "Input")]
    pub follow: bool,
}

/// Arguments of `ndup index remove`.
#[derive(Debug, Args)]
pub struct IndexRemoveArgs {
    /// Ids of the documents to remove, as the index shows them.
    #[arg(required = true, value_name = "ID")]
    pub ids: Vec<String>,

    /// The index file.
    #[arg(long, value_name = "FILE")]
    pub index: PathBuf,

    /// Report format.
    #[arg(long, value_enum, default_value = "jsonl", help_heading = "Output")]
    pub format: FormatArg,
    /// Print nothing on stderr but errors.
    #[arg(long, short = 'q', help_heading = "Output")]
    pub quiet: bool,
}

/// Arguments of `ndup query`.
#[derive(Debug, Args)]
pub struct QueryArgs {
    /// The index file.
    #[arg(long, value_name = "FILE")]
    pub index: PathBuf,

    /// Documents to check: files, directories (recursively), or - for standard input.
    #[arg(required = true, value_name = "DOC")]
    pub docs: Vec<PathBuf>,

    /// Report indexed documents with Jaccard similarity at least T.
    #[arg(long, short = 't', default_value_t = 0.8, value_name = "T")]
    pub threshold: f64,

    /// Report only the K most similar indexed documents of each query document.
    #[arg(long, value_name = "K")]
    pub top: Option<usize>,

    #[command(flatten)]
    pub sketching: SketchingArgs,

    #[command(flatten)]
    pub lsh: LshArgs,

    /// How candidates are verified (exact reads the indexed files again, when they are still
    /// there and unchanged).
    #[arg(
        long,
        value_enum,
        default_value = "auto",
        help_heading = "Verification"
    )]
    pub verify: VerifyArg,

    /// Report format.
    #[arg(long, value_enum, default_value = "jsonl", help_heading = "Output")]
    pub format: FormatArg,
    /// Exit with status 1 when any match is reported.
    #[arg(long, help_heading = "Output")]
    pub fail_on_duplicates: bool,
    /// Print nothing on stderr but errors.
    #[arg(long, short = 'q', help_heading = "Output")]
    pub quiet: bool,

    /// Follow symbolic links while walking directories.
    #[arg(long, short = 'L', help_heading = "Input")]
    pub follow: bool,
}

/// Shingle kinds on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShingleArg {
    /// Character k-shingles.
    Char,
    /// Word w-shingles.
    Word,
    /// A stop word and the two words after it.
    Stopword,
}

/// Sketches on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SketchArg {
    /// Fast similarity sketching: unbiased, O(shingles + k log k).
    Fss,
    /// One permutation hashing with optimal densification.
    Oph,
    /// k-permutation MinHash (the seeds' method; slowest).
    Classic,
}

/// Verification modes on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VerifyArg {
    /// Signature when decisive, exact Jaccard near the threshold.
    Auto,
    /// Signature agreement >= threshold.
    Signature,
    /// Exact Jaccard of the shingle sets >= threshold.
    Exact,
    /// Report every LSH candidate.
    None,
}

/// Report formats on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// JSON lines, one typed record per line.
    Jsonl,
    /// A readable table.
    Text,
}

/// How documents become comparable: normalization, shingling and signatures. Shared by every
/// command that reads documents.
#[derive(Debug, Clone, Args)]
pub struct SketchingArgs {
    /// Shingle kind.
    #[arg(long, value_enum, default_value = "char", help_heading = "Shingling")]
    pub shingle: ShingleArg,
    /// Characters per char shingle.
    #[arg(
        long,
        short = 'k',
        default_value_t = 9,
        value_name = "K",
        help_heading = "Shingling"
    )]
    pub k: usize,
    /// Words per word shingle.
    #[arg(
        long,
        short = 'w',
        default_value_t = 5,
        value_name = "W",
        help_heading = "Shingling"
    )]
    pub w: usize,
    /// Stop-word list for --shingle stopword, one word per line (replaces the built-in list).
    #[arg(long, value_name = "FILE", help_heading = "Shingling")]
    pub stopwords: Option<PathBuf>,
    /// Do not apply Unicode NFKC normalization.
    #[arg(long, help_heading = "Normalization")]
    pub no_nfkc: bool,
    /// Do not lowercase.
    #[arg(long, help_heading = "Normalization")]
    pub no_lowercase: bool,
    /// Do not collapse runs of white space into one space.
    #[arg(long, help_heading = "Normalization")]
    pub no_collapse_whitespace: bool,
    /// Do not trim white space at both ends.
    #[arg(long, help_heading = "Normalization")]
    pub no_trim: bool,
    /// Signature sketch.
    #[arg(long, value_enum, default_value = "fss", help_heading = "Signatures")]
    pub sketch: SketchArg,
    /// Hash functions (slots) per signature [default: 128, or bands x rows].
    #[arg(long, value_name = "N", help_heading = "Signatures")]
    pub num_perm: Option<usize>,
    /// Seed for every hash function; the same seed gives the same output.
    #[arg(long, default_value_t = DEFAULT_SEED, value_name = "S", help_heading = "Signatures")]
    pub seed: u64,
}

/// Arguments of `ndup scan`.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// Files and directories to scan (directories recursively).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Report pairs with Jaccard similarity at least T.
    #[arg(long, short = 't', default_value_t = 0.8, value_name = "T")]
    pub threshold: f64,

    #[command(flatten)]
    pub sketching: SketchingArgs,

    /// LSH bands [default: 16, or num-perm / rows].
    #[arg(long, short = 'b', value_name = "B", help_heading = "LSH")]
    pub bands: Option<usize>,
    /// Slots per LSH band [default: 8, or num-perm / bands].
    #[arg(long, short = 'r', value_name = "R", help_heading = "LSH")]
    pub rows: Option<usize>,
    /// Buckets with more members are linked as a star around their first member instead of
    /// all pairs, so thousands of copies cannot make the scan quadratic.
    #[arg(long, default_value_t = DEFAULT_MAX_BUCKET, value_name = "N", help_heading = "LSH")]
    pub max_bucket: usize,

    /// How candidate pairs are verified.
    #[arg(
        long,
        value_enum,
        default_value = "auto",
        help_heading = "Verification"
    )]
    pub verify: VerifyArg,

    /// Report format.
    #[arg(long, value_enum, default_value = "jsonl", help_heading = "Output")]
    pub format: FormatArg,
    /// Report clusters (connected components of the pairs) instead of pairs.
    #[arg(long, help_heading = "Output")]
    pub clusters: bool,
    /// Exit with status 1 when any pair (or cluster) is reported.
    #[arg(long, help_heading = "Output")]
    pub fail_on_duplicates: bool,
    /// Print nothing on stderr but errors.
    #[arg(long, short = 'q', help_heading = "Output")]
    pub quiet: bool,

    /// Follow symbolic links while walking directories.
    #[arg(long, short = 'L', help_heading = "Input")]
    pub follow: bool,

    /// Use (and fill) this index as a cache of signatures: unchanged files are not signed again.
    #[arg(long, value_name = "FILE", help_heading = "Index")]
    pub index: Option<PathBuf>,
}

impl SketchingArgs {
    /// The normalization options.
    pub fn normalize(&self) -> NormalizeOptions {
        NormalizeOptions {
            nfkc: !self.no_nfkc,
            lowercase: !self.no_lowercase,
            collapse_whitespace: !self.no_collapse_whitespace,
            trim: !self.no_trim,
        }
    }

    /// The shingle options, reading the stop-word file if one is given.
    pub fn shingle(&self) -> Result<ShingleOptions> {
        let stopwords = match &self.stopwords {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("{}: cannot read stop-word list", path.display()))?;
                let list = parse_stopwords(&text);
                if list.is_empty() {
                    bail!("{}: the stop-word list is empty", path.display());
                }
                Some(list)
            }
            None => None,
        };
        Ok(ShingleOptions {
            kind: match self.shingle {
                ShingleArg::Char => ShingleKind::Char,
                ShingleArg::Word => ShingleKind::Word,
                ShingleArg::Stopword => ShingleKind::Stopword,
            },
            k: self.k,
            w: self.w,
            stopwords,
        })
    }

    /// The sketch kind.
    pub fn sketch(&self) -> SketchKind {
        match self.sketch {
            SketchArg::Fss => SketchKind::Fss,
            SketchArg::Oph => SketchKind::Oph,
            SketchArg::Classic => SketchKind::Classic,
        }
    }
}

/// Resolves `--num-perm`, `--bands` and `--rows` (any may be missing) into a consistent triple.
/// Defaults: 128 slots in 16 bands of 8 rows. All three given and inconsistent is a usage error.
pub fn resolve_banding(
    num_perm: Option<usize>,
    bands: Option<usize>,
    rows: Option<usize>,
) -> Result<(usize, LshParams)> {
    let nonzero = |name: &str, v: Option<usize>| -> Result<()> {
        if v == Some(0) {
            bail!("{name} must be at least 1");
        }
        Ok(())
    };
    nonzero("--num-perm", num_perm)?;
    nonzero("--bands", bands)?;
    nonzero("--rows", rows)?;
    let divide = |n: usize, d: usize, what: &str| -> Result<usize> {
        if n % d != 0 {
            bail!("--num-perm {n} is not a multiple of {what} {d}");
        }
        Ok(n / d)
    };
    let (n, b, r) = match (num_perm, bands, rows) {
        (None, None, None) => (128, 16, 8),
        (Some(n), None, None) => {
            // Keep 8 rows per band when possible, as in the default.
            let r = if n % 8 == 0 { 8 } else { 1 };
            (n, n / r, r)
        }
        (None, Some(b), None) => (b * 8, b, 8),
        (None, None, Some(r)) => (16 * r, 16, r),
        (None, Some(b), Some(r)) => (b * r, b, r),
        (Some(n), Some(b), None) => (n, b, divide(n, b, "--bands")?),
        (Some(n), None, Some(r)) => (n, divide(n, r, "--rows")?, r),
        (Some(n), Some(b), Some(r)) => {
            if b * r != n {
                bail!("--bands {b} x --rows {r} = {} but --num-perm is {n}", b * r);
            }
            (n, b, r)
        }
    };
    Ok((n, LshParams { bands: b, rows: r }))
}

impl ScanArgs {
    /// The library configuration these flags describe.
    pub fn config(&self) -> Result<ScanConfig> {
        let s = &self.sketching;
        let (num_perm, lsh) = resolve_banding(s.num_perm, self.bands, self.rows)?;
        let config = ScanConfig {
            input: InputOptions {
                follow_links: self.follow,
            },
            normalize: s.normalize(),
            shingle: s.shingle()?,
            sketch: s.sketch(),
            num_perm,
            lsh,
            seed: s.seed,
            threshold: self.threshold,
            measure: Measure::Jaccard,
            verify: match self.verify {
                VerifyArg::Auto => VerifyMode::Auto,
                VerifyArg::Signature => VerifyMode::Signature,
                VerifyArg::Exact => VerifyMode::Exact,
                VerifyArg::None => VerifyMode::None,
            },
            max_bucket: self.max_bucket,
        };
        config.validate()?;
        Ok(config)
    }

    /// The report format.
    pub fn format(&self) -> Format {
        match self.format {
            FormatArg::Jsonl => Format::Jsonl,
            FormatArg::Text => Format::Text,
        }
    }
}

impl VerifyArg {
    /// The library's verification mode.
    pub fn mode(self) -> VerifyMode {
        match self {
            VerifyArg::Auto => VerifyMode::Auto,
            VerifyArg::Signature => VerifyMode::Signature,
            VerifyArg::Exact => VerifyMode::Exact,
            VerifyArg::None => VerifyMode::None,
        }
    }
}

impl FormatArg {
    /// The library's report format.
    pub fn format(self) -> Format {
        match self {
            FormatArg::Jsonl => Format::Jsonl,
            FormatArg::Text => Format::Text,
        }
    }
}

/// The configuration of an index command: the sketching and banding flags, the rest as in a
/// default scan unless the command sets it.
pub fn index_config(sketching: &SketchingArgs, lsh: &LshArgs, follow: bool) -> Result<ScanConfig> {
    let (num_perm, lsh) = resolve_banding(sketching.num_perm, lsh.bands, lsh.rows)?;
    let config = ScanConfig {
        input: InputOptions {
            follow_links: follow,
        },
        normalize: sketching.normalize(),
        shingle: sketching.shingle()?,
        sketch: sketching.sketch(),
        num_perm,
        lsh,
        seed: sketching.seed,
        ..ScanConfig::default()
    };
    config.validate()?;
    Ok(config)
}

impl QueryArgs {
    /// The library configuration these flags describe.
    pub fn config(&self) -> Result<ScanConfig> {
        let config = ScanConfig {
            threshold: self.threshold,
            verify: self.verify.mode(),
            ..index_config(&self.sketching, &self.lsh, self.follow)?
        };
        config.validate()?;
        if self.top == Some(0) {
            bail!("--top must be at least 1");
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banding_defaults_and_derivations() {
        let r = |n, b, rr| resolve_banding(n, b, rr).map(|(n, l)| (n, l.bands, l.rows));
        assert_eq!(r(None, None, None).unwrap(), (128, 16, 8));
        assert_eq!(r(Some(256), None, None).unwrap(), (256, 32, 8));
        assert_eq!(r(None, Some(20), Some(5)).unwrap(), (100, 20, 5));
        assert_eq!(r(Some(100), Some(20), None).unwrap(), (100, 20, 5));
        assert_eq!(r(Some(100), None, Some(4)).unwrap(), (100, 25, 4));
        assert!(r(Some(128), Some(16), Some(4)).is_err());
        assert!(r(Some(100), Some(3), None).is_err());
        assert!(r(Some(0), None, None).is_err());
    }

    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
