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
    /// Threshold on containment instead of Jaccard: report a pair when
    /// max(|A∩B|/|A|, |A∩B|/|B|) >= T.
    #[arg(long, help_heading = "Verification")]
    pub containment: bool,

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
    let bad = || format!("invalid size '{s}': expected a number with an optional unit (500M, 4G)");
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
            measure: if self.containment {
                Measure::Containment
            } else {
                Measure::Jaccard
            },
            verify: match self.verify {
                VerifyArg::Auto => VerifyMode::Auto,
                VerifyArg::Signature => VerifyMode::Signature,
                VerifyArg::Exact => VerifyMode::Exact,
                VerifyArg::None => VerifyMode::None,
            },
            max_bucket: self.max_bucket,
            exact: self.exact,
            max_memory: self.max_memory.or_else(default_max_memory),
        };
        // Approximate containment is not implemented on this branch: refuse it rather than
        // silently measuring Jaccard.
        if self.containment && !self.exact {
            bail!("--containment needs --exact for now");
        }
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
