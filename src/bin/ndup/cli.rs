//! Every flag of `ndup`, defined once; clap turns them into `--help`. Each command's arguments
//! become a library config here, so the library never sees clap.

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};

use ndup::candidates::lsh::LshParams;
use ndup::candidates::tune::{DEFAULT_FN_WEIGHT, DEFAULT_FP_WEIGHT, Weights};
use ndup::dedup::Keep;
use ndup::find::config::{
    DEFAULT_MAX_BUCKET, DEFAULT_SEED, ExactConfig, ScanConfig, SignatureConfig, StrategyConfig,
};
use ndup::report::Format;
use ndup::sim::Measure;
use ndup::sketch::minhash::SketchKind;
use ndup::sketch::sample::{DEFAULT_MODULO, DEFAULT_SUPERSHINGLE_SIZE, SampleKind, SampleParams};
use ndup::source::Source;
use ndup::source::files::InputOptions;
use ndup::source::records::{RecordOptions, is_stdin, looks_like_records};
use ndup::text::normalize::NormalizeOptions;
use ndup::text::shingle::{ShingleKind, ShingleOptions, parse_stopwords};
use ndup::verify::VerifyMode;

/// Find near-duplicate documents: shingles, MinHash signatures and LSH.
#[derive(Debug, Parser)]
#[command(name = "ndup", version, about, propagate_version = true)]
pub struct Cli {
    /// Worker threads (default: one per core, or RAYON_NUM_THREADS), at most 1024.
    #[arg(long, short = 'j', global = true, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,

    /// When to colour the output and the help: auto (on a terminal, unless NO_COLOR is set),
    /// always or never.
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto")]
    pub color: ColorWhen,

    #[command(subcommand)]
    pub command: Command,
}

/// The values of `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// Colour on a terminal, unless NO_COLOR is set.
    Auto,
    /// Colour even into a pipe or a file, and despite NO_COLOR.
    Always,
    /// Never colour.
    Never,
}

impl ColorWhen {
    /// The last `--color WHEN` (or `--color=WHEN`) of `argv`, read before clap parses it, so
    /// that clap's own help and errors follow it too; `auto` when absent or not a value.
    pub fn from_argv(argv: &[std::ffi::OsString]) -> ColorWhen {
        let mut when = ColorWhen::Auto;
        let mut args = argv.iter().skip(1).map(|a| a.to_string_lossy());
        while let Some(a) = args.next() {
            if a == "--" {
                break;
            }
            let value = match a.strip_prefix("--color") {
                Some("") => args.next().map(|v| v.into_owned()),
                Some(rest) => rest.strip_prefix('=').map(str::to_owned),
                None => None,
            };
            if let Some(w) = value.and_then(|v| ColorWhen::from_str(&v, false).ok()) {
                when = w;
            }
        }
        when
    }

    /// The same choice for clap.
    pub fn for_clap(self) -> clap::ColorChoice {
        match self {
            ColorWhen::Auto => clap::ColorChoice::Auto,
            ColorWhen::Always => clap::ColorChoice::Always,
            ColorWhen::Never => clap::ColorChoice::Never,
        }
    }
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Find near-duplicate documents among files and directories.
    Scan(Box<ScanArgs>),
    /// Choose LSH bands and rows for a threshold and explain the choice.
    Tune(TuneArgs),
    /// Compare two files: shingle counts, exact and estimated similarities, containment.
    Compare(Box<CompareArgs>),
    /// Write a corpus without its near-duplicates: JSON lines in, JSON lines out (one record per
    /// cluster kept); for a file tree, the list of files to keep and to drop.
    Dedup(Box<DedupArgs>),
    /// Sign a corpus into Parquet shards (one row per document: id, signature, band keys,
    /// text fingerprint), for `ndup scan --signatures` or a cluster job.
    Sign(Box<SignArgs>),
    /// Keep a persistent index of signed documents (a SQLite file).
    #[command(subcommand)]
    Index(IndexCommand),
    /// Print the indexed documents similar to each query document.
    Query(Box<QueryArgs>),
    /// Print a shell completion script: `source <(ndup completions bash)`.
    Completions(CompletionsArgs),
    /// Print a manual page (roff), `ndup man scan | man -l -` for one command, or write them all
    /// with --dir.
    Man(ManArgs),
}

/// Arguments of `ndup completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// Arguments of `ndup man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print (`scan`, `index build`...); none for ndup(1).
    #[arg(value_name = "COMMAND", conflicts_with = "dir")]
    pub command: Vec<String>,

    /// Write every page (ndup.1, ndup-scan.1, ndup-index-build.1...) into this directory.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
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
    /// LSH bands [default: chosen for a threshold of 0.8, see `ndup tune`].
    #[arg(long, short = 'b', value_name = "B", help_heading = "LSH")]
    pub bands: Option<usize>,
    /// Slots per LSH band [default: chosen for a threshold of 0.8, see `ndup tune`].
    #[arg(long, short = 'r', value_name = "R", help_heading = "LSH")]
    pub rows: Option<usize>,
}

/// Arguments of `ndup index build`, `add` and `update`.
#[derive(Debug, Args)]
pub struct IndexSyncArgs {
    /// Files and directories to index (directories recursively), or JSON-lines and Parquet
    /// files (and directories of Parquet shards), one document per record.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    #[command(flatten)]
    pub records: RecordArgs,

    /// The index file (created when missing).
    #[arg(long, value_name = "FILE")]
    pub index: PathBuf,

    #[command(flatten)]
    pub sketching: SketchingArgs,

    #[command(flatten)]
    pub sketch: SignatureSketchArgs,

    #[command(flatten)]
    pub lsh: LshArgs,

    /// Report format.
    #[arg(long, value_enum, default_value = "jsonl", help_heading = "Output")]
    pub format: IndexFormatArg,
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
    pub format: IndexFormatArg,
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

    /// Documents to check: files, directories (recursively), or - for standard input; or
    /// JSON-lines and Parquet files, one document per record (- is then JSON lines on standard
    /// input, with --jsonl).
    #[arg(required = true, value_name = "DOC")]
    pub docs: Vec<PathBuf>,

    #[command(flatten)]
    pub records: RecordArgs,

    /// Report indexed documents with Jaccard similarity at least T.
    #[arg(
        long,
        short = 't',
        default_value_t = 0.8,
        value_name = "T",
        allow_negative_numbers = true,
        value_parser = parse_threshold
    )]
    pub threshold: f64,

    /// Report only the K most similar indexed documents of each query document.
    #[arg(long, value_name = "K")]
    pub top: Option<usize>,

    #[command(flatten)]
    pub sketching: SketchingArgs,

    #[command(flatten)]
    pub sketch: SignatureSketchArgs,

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
    pub format: IndexFormatArg,
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

/// Report formats of the index commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IndexFormatArg {
    /// JSON lines, one typed record per line.
    Jsonl,
    /// A readable report.
    Text,
}

impl IndexFormatArg {
    /// The library's report format.
    pub fn format(self) -> Format {
        match self {
            IndexFormatArg::Jsonl => Format::Jsonl,
            IndexFormatArg::Text => Format::Text,
        }
    }
}

/// What `ndup dedup` writes to its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DedupFormatArg {
    /// The kept records (JSON lines in, JSON lines out; Parquet in, Parquet out), or for files a
    /// JSON line per file.
    Jsonl,
    /// An HTML report of what was dropped, beside what was kept (as --html-report writes).
    Html,
}

/// Which document of a cluster `ndup dedup` keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KeepArg {
    /// The earliest in input order.
    First,
    /// The longest text (ties: the smaller id).
    Longest,
    /// The shortest text (ties: the smaller id).
    Shortest,
}

/// Arguments of `ndup dedup`.
#[derive(Debug, Args)]
pub struct DedupArgs {
    /// JSON-lines files (- is standard input), or files and directories.
    #[arg(required_unless_present = "files_from", value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,

    /// Where to write the result (- for standard output): the kept records for JSON lines
    /// (gzip or zstd compressed when FILE ends in .gz or .zst), the kept rows for Parquet, or a
    /// JSON line per file, {"type":"keep"|"drop",...}, for files; with --format html, the HTML
    /// report of what was dropped instead. Written atomically.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: PathBuf,

    /// What --output holds: the deduplicated corpus (or the keep/drop list of files), or an
    /// HTML report of what was dropped, each beside the document kept instead.
    #[arg(long, value_enum, default_value = "jsonl")]
    pub format: DedupFormatArg,

    /// Also write an HTML report of what was dropped to FILE (- for standard output): each
    /// dropped document beside the one kept instead, their differences marked. Written
    /// atomically.
    #[arg(long, value_name = "FILE")]
    pub html_report: Option<PathBuf>,

    /// With --html-report or --format html: show at most N dropped documents with their texts,
    /// the most similar first; the report says how many were left out.
    #[arg(long, value_name = "N", default_value_t = ndup::report::html::DEFAULT_MAX_PAIRS)]
    pub html_max_pairs: usize,

    /// Which document of each cluster of near-duplicates to keep.
    #[arg(long, value_enum, default_value = "first")]
    pub keep: KeepArg,

    #[command(flatten)]
    pub corpus: CorpusArgs,

    #[command(flatten)]
    pub verification: VerificationArgs,
}

/// The flags of a command that signs a whole corpus (`dedup`, `sign`): the threshold, the
/// signature flags and the input.
#[derive(Debug, Args)]
pub struct CorpusArgs {
    /// Near-duplicates are documents with Jaccard similarity at least T.
    #[arg(
        long,
        short = 't',
        default_value_t = 0.8,
        value_name = "T",
        allow_negative_numbers = true,
        value_parser = parse_threshold
    )]
    pub threshold: f64,

    #[command(flatten)]
    pub sketching: SketchingArgs,

    #[command(flatten)]
    pub sketch: SignatureSketchArgs,

    #[command(flatten)]
    pub banding: BandingArgs,

    /// Print nothing on stderr but errors.
    #[arg(long, short = 'q')]
    pub quiet: bool,

    /// Follow symbolic links while walking directories.
    #[arg(long, short = 'L', help_heading = "Input")]
    pub follow: bool,

    #[command(flatten)]
    pub input: InputArgs,

    /// Read options from FILE [default: ndup.toml in the scanned root, when there is one].
    /// Flags on the command line override it.
    #[arg(long = "config", value_name = "FILE")]
    pub config_file: Option<PathBuf>,
}

impl DedupArgs {
    /// The library configuration these flags describe (the same knobs as `ndup scan`).
    pub fn config(&self) -> Result<ScanConfig> {
        self.corpus.config(Some(&self.verification))
    }

    /// The keep rule.
    pub fn keep(&self) -> Keep {
        match self.keep {
            KeepArg::First => Keep::First,
            KeepArg::Longest => Keep::Longest,
            KeepArg::Shortest => Keep::Shortest,
        }
    }
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
    /// Shingle hashes that are 0 modulo --modulo; candidates share a sampled hash.
    Modulo,
    /// Candidates share a supershingle (a run of sorted sampled hashes); weak on short documents.
    Supershingle,
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
    /// Pairs grouped by their first document, coloured on a terminal.
    Text,
    /// Comma-separated values: a,b,estimate,jaccard,... (cluster,size,member with --clusters).
    Csv,
    /// SARIF 2.1.0, for GitHub code scanning.
    Sarif,
    /// GitHub Actions annotations (::warning workflow commands).
    Github,
    /// One self-contained HTML page for review: clusters, and each pair's texts side by side
    /// with their differences marked (see --html-max-pairs).
    Html,
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
    /// Do not fold case (Unicode case folding: lowercase, and ß as ss, final ς as σ).
    #[arg(long, help_heading = "Normalization")]
    pub no_lowercase: bool,
    /// Do not collapse runs of white space into one space.
    #[arg(long, help_heading = "Normalization")]
    pub no_collapse_whitespace: bool,
    /// Do not trim white space at both ends.
    #[arg(long, help_heading = "Normalization")]
    pub no_trim: bool,
    /// Hash functions (slots) per signature [default: 128, or bands x rows].
    #[arg(long, value_name = "N", help_heading = "Signatures")]
    pub num_perm: Option<usize>,
    /// Seed for every hash function; the same seed gives the same output.
    #[arg(long, default_value_t = DEFAULT_SEED, value_name = "S", help_heading = "Signatures")]
    pub seed: u64,
}

/// The sketch of the commands that keep signatures (dedup, sign, the index): no sample sketches.
#[derive(Debug, Clone, Args)]
pub struct SignatureSketchArgs {
    /// Sketch [default: fss].
    #[arg(long, value_enum, value_name = "SKETCH", help_heading = "Signatures")]
    pub sketch: Option<SignatureSketchArg>,
}

/// Signature sketches on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SignatureSketchArg {
    /// Fast similarity sketching: unbiased, O(shingles + k log k).
    Fss,
    /// One permutation hashing with optimal densification.
    Oph,
    /// k-permutation MinHash (the seeds' method; slowest).
    Classic,
}

impl SignatureSketchArgs {
    /// The sketch chosen.
    pub fn kind(&self) -> SketchKind {
        match self.sketch {
            None | Some(SignatureSketchArg::Fss) => SketchKind::Fss,
            Some(SignatureSketchArg::Oph) => SketchKind::Oph,
            Some(SignatureSketchArg::Classic) => SketchKind::Classic,
        }
    }
}

/// The sketch of `scan` and `compare`: a signature sketch, or a sample of the shingles.
#[derive(Debug, Clone, Args)]
pub struct SketchChoiceArgs {
    /// Sketch [default: fss; modulo with --containment].
    #[arg(long, value_enum, value_name = "SKETCH", help_heading = "Signatures")]
    pub sketch: Option<SketchArg>,
    /// With --sketch modulo or supershingle: keep the shingle hashes that are 0 modulo M
    /// [default: 16].
    #[arg(long, value_name = "M", help_heading = "Signatures")]
    pub modulo: Option<u64>,
    /// With --sketch supershingle: sampled hashes per supershingle [default: 4].
    #[arg(long, value_name = "S", help_heading = "Signatures")]
    pub supershingle_size: Option<usize>,
}

/// Arguments of `ndup scan`.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// Files and directories to scan (directories recursively), or JSON-lines files (- reads
    /// JSON lines from standard input).
    #[arg(required_unless_present_any = ["files_from", "signatures"], value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Scan the signature shards in DIR (written by `ndup sign` with the same flags) instead of
    /// PATHs: LSH, verification by signature agreement (the shards hold no text), clusters.
    /// Repeatable.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with_all = ["paths", "files_from", "index", "exact"],
        help_heading = "Input"
    )]
    pub signatures: Vec<PathBuf>,

    /// Report pairs with Jaccard similarity at least T.
    #[arg(
        long,
        short = 't',
        default_value_t = 0.8,
        value_name = "T",
        allow_negative_numbers = true,
        value_parser = parse_threshold
    )]
    pub threshold: f64,

    /// Threshold on containment instead of Jaccard: report a pair when
    /// max(|A∩B|/|A|, |A∩B|/|B|) >= T
    #[arg(long)]
    pub containment: bool,

    #[command(flatten)]
    pub sketching: SketchingArgs,

    #[command(flatten)]
    pub sketch: SketchChoiceArgs,

    #[command(flatten)]
    pub candidates: CandidateArgs,

    /// Report exactly the pairs at or above the threshold, each with its exact similarity: a
    /// set-similarity join of the shingle sets instead of MinHash and LSH. The signature and LSH
    /// options do not apply.
    #[arg(long, help_heading = "Exact mode")]
    pub exact: bool,
    /// Memory exact mode may use, e.g. 500M or 4G (binary units; B, K, M, G, T). A corpus that
    /// needs more is refused before the join [default: 3/4 of physical memory]
    #[arg(long, value_name = "SIZE", value_parser = parse_size, help_heading = "Exact mode")]
    pub max_memory: Option<u64>,

    /// Report format.
    #[arg(long, value_enum, default_value = "jsonl", help_heading = "Output")]
    pub format: FormatArg,
    /// Write the report to FILE (atomically: a temporary file renamed into place) instead of
    /// standard output.
    #[arg(long, short = 'o', value_name = "FILE", help_heading = "Output")]
    pub output: Option<PathBuf>,
    /// With --format html: show at most N pairs with their texts, the most similar first; the
    /// report says how many were left out.
    #[arg(
        long,
        value_name = "N",
        default_value_t = ndup::report::html::DEFAULT_MAX_PAIRS,
        help_heading = "Output"
    )]
    pub html_max_pairs: usize,
    /// Report clusters (connected components of the pairs) instead of pairs.
    #[arg(long, help_heading = "Output")]
    pub clusters: bool,
    /// Exit with status 1 when any pair (or cluster) is reported.
    #[arg(long, help_heading = "Output")]
    pub fail_on_duplicates: bool,
    /// Exit with status 1 when more than N pairs are reported (after .ndupignore and --baseline).
    #[arg(long, value_name = "N", help_heading = "CI")]
    pub max_pairs: Option<usize>,
    /// Report, and fail on, only the pairs not recorded in this baseline file.
    #[arg(long, value_name = "FILE", help_heading = "CI")]
    pub baseline: Option<PathBuf>,
    /// Record every pair reported today in a baseline file (pairs accepted by .ndupignore are
    /// left out).
    #[arg(long, value_name = "FILE", help_heading = "CI")]
    pub write_baseline: Option<PathBuf>,
    /// Print nothing on stderr but errors.
    #[arg(long, short = 'q', help_heading = "Output")]
    pub quiet: bool,

    /// Follow symbolic links while walking directories.
    #[arg(long, short = 'L', help_heading = "Input")]
    pub follow: bool,

    /// Use (and fill) this index as a cache of signatures: unchanged files are not signed again.
    #[arg(long, value_name = "FILE", help_heading = "Index")]
    pub index: Option<PathBuf>,

    #[command(flatten)]
    pub input: InputArgs,

    /// Read options from FILE [default: ndup.toml in the scanned root, when there is one].
    /// Flags on the command line override it.
    #[arg(long = "config", value_name = "FILE")]
    pub config_file: Option<PathBuf>,
}

/// How JSON-lines and Parquet records are read: shared by every command that reads documents,
/// the index commands included.
#[derive(Debug, Clone, Args)]
pub struct RecordArgs {
    /// Read every PATH as JSON lines, one document per line. Implied when every PATH ends in
    /// .jsonl or .ndjson (optionally followed by .gz or .zst) or is - (standard input). Gzip and
    /// zstd streams are decompressed whatever their name.
    #[arg(long, help_heading = "JSON lines")]
    pub jsonl: bool,
    /// Dotted path of the record's id (`meta.id`); a record without one is named by its line
    /// number.
    #[arg(
        long,
        default_value = "id",
        value_name = "FIELD",
        help_heading = "JSON lines"
    )]
    pub id_field: String,
    /// Dotted path of the record's text.
    #[arg(
        long,
        default_value = "text",
        value_name = "FIELD",
        help_heading = "JSON lines"
    )]
    pub text_field: String,
    /// A JSON line longer than SIZE is a skipped record (K, M or G suffix).
    #[arg(
        long,
        value_name = "SIZE",
        value_parser = parse_size,
        default_value = "64M",
        help_heading = "JSON lines"
    )]
    pub max_line_length: u64,
    /// Keep the records read before a truncated or corrupt stream (or a read error) instead of
    /// failing: the source is then reported as skipped from that line on.
    #[arg(long, help_heading = "JSON lines")]
    pub partial_input: bool,
}

/// Where documents come from, beyond the paths: records, ignore rules, filters. Shared by every
/// command that reads documents.
#[derive(Debug, Clone, Args)]
pub struct InputArgs {
    #[command(flatten)]
    pub records: RecordArgs,

    /// Walk hidden files and directories too (skipped by default).
    #[arg(long, help_heading = "Input")]
    pub hidden: bool,
    /// Do not respect .gitignore, .ignore and git's exclude files.
    #[arg(long, help_heading = "Input")]
    pub no_ignore: bool,
    /// Only read files matching GLOB (gitignore syntax, relative to each PATH; !GLOB excludes).
    /// Repeatable.
    #[arg(long, value_name = "GLOB", help_heading = "Input")]
    pub glob: Vec<String>,
    /// Never read files matching GLOB. Repeatable.
    #[arg(long, value_name = "GLOB", help_heading = "Input")]
    pub exclude: Vec<String>,
    /// Skip documents larger than SIZE, named ones included: bytes, or with a K, M or G suffix
    /// (1K = 1024 bytes).
    #[arg(
        long,
        value_name = "SIZE",
        value_parser = parse_size,
        default_value = "64M",
        help_heading = "Input"
    )]
    pub max_filesize: u64,
    /// Also read the paths listed in FILE, one per line (- reads the list from standard input).
    #[arg(long, value_name = "FILE", help_heading = "Input")]
    pub files_from: Option<PathBuf>,
    /// The --files-from list is NUL-separated (find -print0, git ls-files -z).
    #[arg(
        short = '0',
        long = "null",
        requires = "files_from",
        help_heading = "Input"
    )]
    pub null: bool,
}

impl RecordArgs {
    /// The record options.
    pub fn options(&self) -> RecordOptions {
        RecordOptions {
            id_field: self.id_field.clone(),
            text_field: self.text_field.clone(),
            max_line_bytes: self.max_line_length,
            partial: self.partial_input,
        }
    }

    /// True when `paths` are JSON-lines or Parquet sources: with `--jsonl`, or when every path
    /// looks like one (`stdin`: `-` counts as one). Mixing them with other files or directories
    /// is a usage error.
    pub fn are_records(&self, paths: &[PathBuf], stdin: bool) -> Result<bool> {
        if self.jsonl {
            return Ok(true);
        }
        let looks = |p: &PathBuf| (stdin && is_stdin(p)) || looks_like_records(p);
        let (records, other): (Vec<&PathBuf>, Vec<&PathBuf>) = paths
            .iter()
            .filter(|p| stdin || !is_stdin(p))
            .partition(|p| looks(p));
        match (records.first(), other.first()) {
            (Some(r), Some(o)) => bail!(
                "{} is read as JSON lines but {} is not: read them separately, or pass --jsonl to read every PATH as JSON lines",
                r.display(),
                o.display()
            ),
            (Some(_), None) => Ok(true),
            _ => Ok(false),
        }
    }

    /// The documents of `paths`: records, or files and directories.
    pub fn source(&self, paths: &[PathBuf]) -> Result<Source> {
        Ok(if self.are_records(paths, true)? {
            Source::Records(paths.to_vec())
        } else {
            Source::Files(paths.to_vec())
        })
    }
}

impl InputArgs {
    /// The record options.
    pub fn records(&self) -> RecordOptions {
        self.records.options()
    }

    /// The input options (`follow`: follow symbolic links).
    pub fn options(&self, follow: bool) -> InputOptions {
        InputOptions {
            follow_links: follow,
            hidden: self.hidden,
            no_ignore: self.no_ignore,
            globs: self.glob.clone(),
            excludes: self.exclude.clone(),
            max_filesize: Some(self.max_filesize),
            files_from: self.files_from.clone(),
            files_from_nul: self.null,
            records: self.records(),
        }
    }

    /// Where the documents of `paths` come from: records (with `--files-from`, the listed files
    /// are more record sources) or files (walked, with the list read by the walk).
    pub fn source(&self, paths: &[PathBuf]) -> Result<Source> {
        let Source::Records(mut sources) = self.records.source(paths)? else {
            return Ok(Source::Files(paths.to_vec()));
        };
        if let Some(list) = &self.files_from {
            sources.extend(ndup::source::files::read_list(list, self.null)?);
        }
        Ok(Source::Records(sources))
    }

    /// True when `paths` are JSON-lines or Parquet sources (see [`RecordArgs::are_records`]).
    pub fn is_jsonl(&self, paths: &[PathBuf]) -> Result<bool> {
        self.records.are_records(paths, true)
    }
}

/// How candidate pairs are found and verified: the LSH and verification flags of `ndup scan`.
#[derive(Debug, Clone, Args)]
pub struct CandidateArgs {
    #[command(flatten)]
    pub banding: BandingArgs,

    #[command(flatten)]
    pub verification: VerificationArgs,
}

impl CandidateArgs {
    /// The configuration these flags and `sketching` describe at `threshold`, for the signature
    /// sketch `sketch`; the caller sets what only its command knows.
    pub fn config(
        &self,
        sketching: &SketchingArgs,
        sketch: SketchKind,
        threshold: f64,
        input: InputOptions,
    ) -> Result<ScanConfig> {
        let mut config = self.banding.config(sketching, sketch, threshold, input)?;
        self.verification.apply(&mut config);
        Ok(config)
    }
}

/// The LSH banding: what `ndup sign` needs of the candidate flags, for the band keys it writes.
#[derive(Debug, Clone, Args)]
pub struct BandingArgs {
    /// LSH bands [default: chosen for the threshold, see `ndup tune`].
    #[arg(long, short = 'b', value_name = "B", help_heading = "LSH")]
    pub bands: Option<usize>,
    /// Slots per LSH band [default: chosen for the threshold, see `ndup tune`].
    #[arg(long, short = 'r', value_name = "R", help_heading = "LSH")]
    pub rows: Option<usize>,
    #[command(flatten)]
    pub weights: WeightArgs,
}

impl BandingArgs {
    /// The configuration of signatures banded as these flags say, with the default
    /// verification.
    pub fn config(
        &self,
        sketching: &SketchingArgs,
        sketch: SketchKind,
        threshold: f64,
        input: InputOptions,
    ) -> Result<ScanConfig> {
        let (num_perm, lsh) = resolve_banding(
            sketching.num_perm,
            self.bands,
            self.rows,
            threshold,
            self.weights.weights(),
        )?;
        Ok(ScanConfig {
            input,
            normalize: sketching.normalize(),
            shingle: sketching.shingle()?,
            strategy: StrategyConfig::Signatures(SignatureConfig {
                sketch,
                num_perm,
                lsh,
            }),
            seed: sketching.seed,
            threshold,
            ..ScanConfig::default()
        })
    }

    /// True when the user shaped the banding (so the tuner's choice was overridden in part).
    pub fn shaped(&self, sketching: &SketchingArgs) -> bool {
        self.bands.is_some() || self.rows.is_some() || sketching.num_perm.is_some()
    }
}

/// How candidate pairs are verified, and the bucket rule: `ndup scan` and `ndup dedup`.
#[derive(Debug, Clone, Args)]
pub struct VerificationArgs {
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
}

impl VerificationArgs {
    /// Sets the verification and bucket rule of `config`.
    pub fn apply(&self, config: &mut ScanConfig) {
        config.verify = self.verify.mode();
        config.max_bucket = self.max_bucket;
    }
}

/// The weights of the banding tuner.
#[derive(Debug, Clone, Copy, Args)]
pub struct WeightArgs {
    /// Tuner weight of false positives (area under the S-curve below the threshold).
    #[arg(long, default_value_t = DEFAULT_FP_WEIGHT, value_name = "W", help_heading = "LSH")]
    pub fp_weight: f64,
    /// Tuner weight of false negatives (area above the S-curve above the threshold).
    #[arg(long, default_value_t = DEFAULT_FN_WEIGHT, value_name = "W", help_heading = "LSH")]
    pub fn_weight: f64,
}

impl WeightArgs {
    /// The library's weights.
    pub fn weights(&self) -> Weights {
        Weights {
            fp: self.fp_weight,
            fn_: self.fn_weight,
        }
    }
}

/// Output formats of `ndup tune` and `ndup compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExplainFormat {
    /// Readable text.
    Text,
    /// One JSON object.
    Json,
}

/// Arguments of `ndup tune`.
#[derive(Debug, Args)]
pub struct TuneArgs {
    /// The similarity threshold to tune for.
    #[arg(
        long,
        short = 't',
        default_value_t = 0.8,
        value_name = "T",
        allow_negative_numbers = true,
        value_parser = parse_threshold
    )]
    pub threshold: f64,
    /// Hash functions (slots) per signature [default: 128, or bands x rows].
    #[arg(long, value_name = "N")]
    pub num_perm: Option<usize>,
    /// Fix the number of bands (the tuner picks the rest).
    #[arg(long, short = 'b', value_name = "B")]
    pub bands: Option<usize>,
    /// Fix the rows per band (the tuner picks the rest).
    #[arg(long, short = 'r', value_name = "R")]
    pub rows: Option<usize>,
    #[command(flatten)]
    pub weights: WeightArgs,
    /// The verification the false-negative figures assume.
    #[arg(long, value_enum, default_value = "auto")]
    pub verify: VerifyArg,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ExplainFormat,
}

/// Arguments of `ndup compare`.
#[derive(Debug, Args)]
#[command(mut_arg("sketch", |a| a.help("Sketch [default: fss]")))]
pub struct CompareArgs {
    /// The first file.
    #[arg(value_name = "A")]
    pub a: PathBuf,
    /// The second file.
    #[arg(value_name = "B")]
    pub b: PathBuf,
    #[command(flatten)]
    pub sketching: SketchingArgs,
    #[command(flatten)]
    pub sketch: SketchChoiceArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ExplainFormat,
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
                let text = ndup::source::files::read_side_text(path)
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
}

impl SketchChoiceArgs {
    /// The signature sketch, and the sample sketch when one is asked for (with `containment`,
    /// modulo sampling is the default and the only sketch that finds contained documents).
    pub fn sketches(&self, containment: bool) -> Result<(SketchKind, Option<SampleParams>)> {
        let sample = |kind| SampleParams {
            kind,
            modulo: self.modulo.unwrap_or(DEFAULT_MODULO),
            supershingle_size: self.supershingle_size.unwrap_or(DEFAULT_SUPERSHINGLE_SIZE),
        };
        let chosen = match (self.sketch, containment) {
            (None, true) | (Some(SketchArg::Modulo), _) => Some(sample(SampleKind::Modulo)),
            (Some(SketchArg::Supershingle), false) => Some(sample(SampleKind::Supershingle)),
            (Some(SketchArg::Supershingle), true) => bail!(
                "--containment needs --sketch modulo: supershingles miss a document inside a \
                 much larger one"
            ),
            (Some(_), true) => bail!(
                "--containment compares shingle samples, not signatures: use --sketch modulo \
                 (the default with --containment)"
            ),
            (_, false) => None,
        };
        if chosen.is_none() && self.modulo.is_some() {
            bail!("--modulo applies only to --sketch modulo or supershingle");
        }
        if chosen.map(|s| s.kind) != Some(SampleKind::Supershingle)
            && self.supershingle_size.is_some()
        {
            bail!("--supershingle-size applies only to --sketch supershingle");
        }
        let kind = match self.sketch {
            Some(SketchArg::Oph) => SketchKind::Oph,
            Some(SketchArg::Classic) => SketchKind::Classic,
            _ => SketchKind::Fss,
        };
        if let Some(s) = chosen {
            s.validate()?;
        }
        Ok((kind, chosen))
    }
}

/// Resolves `--num-perm`, `--bands` and `--rows` (any may be missing) for `threshold`.
/// `num_perm` defaults to 128, or to bands x rows when both are given; whatever of bands and rows
/// is not given, the tuner chooses (see [`ndup::candidates::tune`]). Bands x rows above num-perm is a usage
/// error; below it (all three given, too), the remaining slots are unbanded and only count in
/// verification.
pub fn resolve_banding(
    num_perm: Option<usize>,
    bands: Option<usize>,
    rows: Option<usize>,
    threshold: f64,
    weights: Weights,
) -> Result<(usize, LshParams)> {
    for (name, v) in [
        ("--num-perm", num_perm),
        ("--bands", bands),
        ("--rows", rows),
    ] {
        if v == Some(0) {
            bail!("{name} must be at least 1");
        }
    }
    // Checked: huge values must be a usage error, not an overflow panic (or, in release, a
    // wrapped product that passes the consistency check).
    let product = |b: usize, r: usize| -> Result<usize> {
        b.checked_mul(r)
            .ok_or_else(|| anyhow!("--bands {b} x --rows {r} is too large"))
    };
    let n = match (num_perm, bands, rows) {
        (Some(n), _, _) => n,
        (None, Some(b), Some(r)) => product(b, r)?,
        _ => 128,
    };
    for (name, v) in [("--bands", bands), ("--rows", rows)] {
        if let Some(v) = v.filter(|&v| v > n) {
            bail!("{name} {v} is too large for --num-perm {n}");
        }
    }
    if let (Some(b), Some(r)) = (bands, rows) {
        let used = product(b, r)?;
        if num_perm.is_some() && used > n {
            // All three given, and more slots banded than there are: a contradiction. Fewer is
            // what the tuner itself chooses (18 x 7 of 128), so that a run's `params` record
            // can be given back as flags.
            bail!("--bands {b} x --rows {r} = {used} but --num-perm is {n}");
        }
    }
    let lsh = ndup::candidates::tune::tune(threshold, n, weights, bands, rows)?;
    Ok((n, lsh))
}

/// The most worker threads: more than any machine ndup runs on has cores, and few enough that
/// starting them is instant (each thread reserves its stack).
pub const MAX_THREADS: usize = 1024;

/// Parses `--threads`: 0 (one per core) to [`MAX_THREADS`].
pub fn parse_threads(s: &str) -> std::result::Result<usize, String> {
    let n: usize = s
        .parse()
        .map_err(|_| format!("`{s}` is not a whole number of threads"))?;
    if n > MAX_THREADS {
        return Err(format!("at most {MAX_THREADS} threads, not {n}"));
    }
    Ok(n)
}

/// Parses a threshold as clap parses an `f64`, with `-0` read as `0` (the library takes the
/// threshold as the decimal it prints, and reports would print `-0`).
pub fn parse_threshold(s: &str) -> std::result::Result<f64, String> {
    s.parse::<f64>().map(|t| t + 0.0).map_err(|e| e.to_string())
}

/// Parses a size such as `4G`, `500M`, `1.5G`, `64K` or `1000000` (bytes). Units are binary
/// (`1K` = 1024) and may be followed by `B` or `iB`, in any case.
pub fn parse_size(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let body = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let (digits, shift) = match body.chars().last() {
        Some('k') => (&body[..body.len() - 1], 10),
        Some('m') => (&body[..body.len() - 1], 20),
        Some('g') => (&body[..body.len() - 1], 30),
        Some('t') => (&body[..body.len() - 1], 40),
        _ => (body, 0),
    };
    let bad = || format!("`{s}` is not a size (try 4096, 64K, 500M or 1.5G)");
    let v: f64 = digits.trim().parse().map_err(|_| bad())?;
    if !v.is_finite() || v < 0.0 {
        return Err(bad());
    }
    let bytes = v * (1u64 << shift) as f64;
    if bytes >= u64::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes.round() as u64)
}

/// Three quarters of the physical memory, where the system says how much there is (Linux's
/// `/proc/meminfo`), so that an exact scan too large for the machine stops with a message
/// instead of swapping or being killed.
fn default_max_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024 / 4 * 3)
}

impl ScanArgs {
    /// The library configuration these flags describe.
    pub fn config(&self) -> Result<ScanConfig> {
        let s = &self.sketching;
        let (sketch, sample) = self.sketch.sketches(self.containment)?;
        if let Some(sample) = sample
            && self.candidates.banding.shaped(s)
        {
            bail!(
                "--num-perm, --bands and --rows apply to signature sketches, not to --sketch {}",
                sample.kind.name()
            );
        }
        let base =
            self.candidates
                .config(s, sketch, self.threshold, self.input.options(self.follow))?;
        // The mode is chosen here once: the signature and sample flags do not apply to --exact.
        let strategy = if self.exact {
            StrategyConfig::Exact(ExactConfig {
                max_memory: self.max_memory.or_else(default_max_memory),
            })
        } else if let Some(sample) = sample {
            StrategyConfig::Sample(sample)
        } else {
            base.strategy
        };
        let mut config = ScanConfig {
            strategy,
            measure: if self.containment {
                Measure::Containment
            } else {
                Measure::Jaccard
            },
            ..base
        };
        if !self.signatures.is_empty() {
            // Shards hold no text: `auto` can only mean by signature.
            match config.verify {
                VerifyMode::Auto => config.verify = VerifyMode::Signature,
                VerifyMode::Exact => bail!(
                    "--signatures: the shards hold signatures, not texts, so --verify exact \
                     cannot read them; use --verify signature"
                ),
                VerifyMode::Signature | VerifyMode::None => {}
            }
            if self.sketch.sketches(self.containment)?.1.is_some() || self.containment {
                bail!("--signatures holds MinHash signatures: it scans with a signature sketch");
            }
        }
        config.validate()?;
        Ok(config)
    }

    /// The report format.
    pub fn format(&self) -> Format {
        match self.format {
            FormatArg::Jsonl => Format::Jsonl,
            FormatArg::Text => Format::Text,
            FormatArg::Csv => Format::Csv,
            FormatArg::Sarif => Format::Sarif,
            FormatArg::Github => Format::Github,
            FormatArg::Html => Format::Html,
        }
    }
}

/// The banding of an index is tuned for this threshold unless --bands/--rows are given: an index
/// is built once and queried at many thresholds, and its banding must not change with them.
pub const INDEX_TUNING_THRESHOLD: f64 = 0.8;

/// The configuration of an index command: the sketching and banding flags, the rest as in a
/// default scan unless the command sets it.
pub fn index_config(
    sketching: &SketchingArgs,
    sketch: &SignatureSketchArgs,
    lsh: &LshArgs,
    records: &RecordArgs,
    follow: bool,
) -> Result<ScanConfig> {
    let sketch = sketch.kind();
    let (num_perm, lsh) = resolve_banding(
        sketching.num_perm,
        lsh.bands,
        lsh.rows,
        INDEX_TUNING_THRESHOLD,
        Weights::default(),
    )?;
    let config = ScanConfig {
        input: InputOptions {
            follow_links: follow,
            records: records.options(),
            ..Default::default()
        },
        normalize: sketching.normalize(),
        shingle: sketching.shingle()?,
        strategy: StrategyConfig::Signatures(SignatureConfig {
            sketch,
            num_perm,
            lsh,
        }),
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
            ..index_config(
                &self.sketching,
                &self.sketch,
                &self.lsh,
                &self.records,
                self.follow,
            )?
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
        let w = Weights::default();
        let r = |n, b, rr, t| resolve_banding(n, b, rr, t, w).map(|(n, l)| (n, l.bands, l.rows));
        // No bands or rows: the tuner's choice for the threshold.
        assert_eq!(r(None, None, None, 0.8).unwrap(), (128, 18, 7));
        assert_eq!(r(None, None, None, 0.5).unwrap(), (128, 39, 3));
        let tuned = ndup::candidates::tune::tune(0.8, 256, w, None, None).unwrap();
        assert_eq!(
            r(Some(256), None, None, 0.8).unwrap(),
            (256, tuned.bands, tuned.rows)
        );
        // Both given: kept, and num-perm follows.
        assert_eq!(r(None, Some(20), Some(5), 0.8).unwrap(), (100, 20, 5));
        // All three given: more banded slots than slots is a contradiction (a usage error);
        // fewer leaves the rest unbanded, as the tuner's own 18 x 7 of 128 does.
        assert!(r(Some(128), Some(16), Some(16), 0.8).is_err());
        assert_eq!(r(Some(128), Some(18), Some(7), 0.8).unwrap(), (128, 18, 7));
        assert_eq!(r(Some(128), Some(16), Some(4), 0.8).unwrap(), (128, 16, 4));
        let huge = usize::MAX / 4 + 1;
        assert!(r(None, Some(huge), Some(8), 0.8).is_err());
        assert!(r(Some(128), Some(huge), Some(8), 0.8).is_err());
        // One given: the tuner picks the other.
        let (n, b, rows) = r(Some(100), Some(20), None, 0.8).unwrap();
        assert_eq!((n, b), (100, 20));
        assert!(rows * 20 <= 100);
        assert_eq!(r(Some(100), None, Some(4), 0.8).unwrap().2, 4);
        assert!(r(Some(100), Some(20), Some(6), 0.8).is_err());
        assert!(r(Some(10), Some(11), None, 0.8).is_err());
        assert!(r(Some(0), None, None, 0.8).is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64K"), Ok(64 << 10));
        assert_eq!(parse_size("10m"), Ok(10 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("2MB"), Ok(2 << 20));
        assert!(parse_size("ten").unwrap_err().contains("not a size"));
        assert!(parse_size("").is_err());
        assert!(parse_size("99999999999T").is_err());
    }

    #[test]
    fn sizes_in_binary_units() {
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("500M"), Ok(500 << 20));
        assert_eq!(parse_size("500mb"), Ok(500 << 20));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("64k"), Ok(64 << 10));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("-1G").is_err());
        assert!(parse_size("").is_err());
    }

    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}

impl CorpusArgs {
    /// The configuration of `dedup` (which verifies) or `sign` (which does not).
    pub fn config(&self, verification: Option<&VerificationArgs>) -> Result<ScanConfig> {
        let mut config = self.banding.config(
            &self.sketching,
            self.sketch.kind(),
            self.threshold,
            self.input.options(self.follow),
        )?;
        if let Some(v) = verification {
            v.apply(&mut config);
        }
        config.validate()?;
        Ok(config)
    }
}

/// Arguments of `ndup sign`.
#[derive(Debug, Args)]
pub struct SignArgs {
    /// JSON-lines files (- is standard input), or files and directories.
    #[arg(required_unless_present = "files_from", value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,

    /// The directory to write the shards into (part-00000.parquet, ...), made if missing; one
    /// that already holds shards is refused. - writes one Arrow IPC stream to standard output
    /// instead (same columns and metadata; --shard-rows does not apply).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,

    /// Rows per shard file.
    #[arg(
        long,
        value_name = "N",
        default_value_t = ndup::shards::DEFAULT_SHARD_ROWS as u64,
        value_parser = clap::value_parser!(u64).range(1..=u32::MAX as u64)
    )]
    pub shard_rows: u64,

    /// How records are named: `unique` as a scan names them (a later record with an id already
    /// seen is skipped; a line-number id gives way to a real one); `as-read` every record, as
    /// `ndup dedup` names them, for a job that signs a corpus in slices and decides uniqueness
    /// itself (the `id_made_up` column tells it which ids are line numbers).
    #[arg(long, value_name = "RULE", default_value = "unique")]
    pub ids: IdsArg,

    #[command(flatten)]
    pub corpus: CorpusArgs,
}

/// The values of `ndup sign --ids`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IdsArg {
    /// Skip a record whose id an earlier one has; line numbers give way to real ids.
    Unique,
    /// Keep every record, named as read or by its line number.
    AsRead,
}

impl From<IdsArg> for ndup::shards::IdRule {
    fn from(a: IdsArg) -> Self {
        match a {
            IdsArg::Unique => ndup::shards::IdRule::Unique,
            IdsArg::AsRead => ndup::shards::IdRule::AsRead,
        }
    }
}

impl SignArgs {
    /// The library configuration: signing needs no verification nor bucket rule.
    pub fn config(&self) -> Result<ScanConfig> {
        self.corpus.config(None)
    }
}
