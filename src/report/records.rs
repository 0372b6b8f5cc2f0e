//! The JSON wire format: every record ndup writes as JSON, one typed struct each, and nothing
//! else. The writers of this folder build these structs and serialize them; [`super::schema`]
//! derives the JSON Schemas of `docs/schema/` from them (the doc comments below become the
//! schemas' descriptions), and a test validates the binary's real output against those files.
//!
//! Every record is a JSON object whose `type` comes first (last in `tune` and `compare`, which
//! have always put it there) and names the record. A field that is sometimes absent is
//! `#[serde(skip_serializing_if = "Option::is_none")]`, so it is never `null`; a field that is
//! always written may be `null` only where its Rust type says so.
//!
//! The structs borrow from what the library computes ([`Params`], [`Pair`], [`Stats`],
//! [`QueryStats`], [`SyncReport`], [`Tuning`], [`Comparison`], ...): those keep the data, these
//! decide its JSON. A change here is a change of the wire format: regenerate the schemas (see
//! [`super::schema`]) and, when a field changes meaning or disappears, bump
//! [`crate::find::config::FORMAT_VERSION`].

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Serialize;

use crate::candidates::tune::Tuning;
use crate::compare::Comparison;
use crate::find::config::{FORMAT_VERSION, Mode, Params};
use crate::index::{INDEX_FORMAT_VERSION, QueryStats, SyncReport};
use crate::model::{Pair, Skip, SkipKind, Stats};
use crate::sim::Measure;
use crate::text::shingle::ShingleKind;
use crate::verify::VerifyMode;

/// Declares the type of a record's `type` field: a unit enum with one variant, which serializes
/// as `$value` and whose schema admits nothing else (`{"type": "string", "const": $value}`).
macro_rules! tag {
    ($name:ident = $value:literal) => {
        #[doc = concat!("The `type` of a `", $value, "` record: always `\"", $value, "\"`.")]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
        pub enum $name {
            #[doc = concat!("`\"", $value, "\"`.")]
            #[default]
            #[serde(rename = $value)]
            Tag,
        }

        impl JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }

            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!({ "type": "string", "const": $value })
            }
        }
    };
}

tag!(ParamsTag = "params");
tag!(PairTag = "pair");
tag!(ClusterTag = "cluster");
tag!(SkipTag = "skip");
tag!(SummaryTag = "summary");
tag!(IndexTag = "index");
tag!(MatchTag = "match");
tag!(KeepTag = "keep");
tag!(DropTag = "drop");
tag!(TuneTag = "tune");
tag!(CompareTag = "compare");

/// The names a `sketch` field takes: the signature sketches, then the sample sketches.
pub const SKETCH_NAMES: [&str; 5] = ["fss", "oph", "classic", "modulo", "supershingle"];

/// The commands whose summary is an [`IndexSummary`].
pub const INDEX_COMMANDS: [&str; 4] = ["build", "add", "update", "remove"];

/// `params`: the parameters a report was made with, so that any result can be reproduced. The
/// first record of `ndup scan` and `ndup query` reports (and the run properties of a SARIF
/// report).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ParamsRecord<'a> {
    /// Always `"params"`.
    #[serde(rename = "type")]
    pub kind: ParamsTag,
    /// The version of the JSON report format, bumped when a field changes meaning or
    /// disappears.
    #[schemars(extend("const" = FORMAT_VERSION))]
    pub format_version: u32,
    /// The version of ndup that made the report.
    pub ndup_version: &'a str,
    /// Which method found the pairs: `minhash` (signatures or samples, LSH or an inverted index,
    /// then verification) or `exact` (a set-similarity join of whole shingle sets). Only the
    /// parameters of the strategy used are recorded: `sketch` and the banding fields for
    /// signatures, `sketch` and `modulo` for samples, none of them in exact mode.
    pub mode: Mode,
    /// The shingle kind.
    pub shingle: ShingleKind,
    /// The shingle size: k (char), w (word) or 3 (stopword).
    pub shingle_size: usize,
    /// Whether a custom stop-word list replaced the built-in one.
    pub custom_stopwords: bool,
    /// The normalization steps, e.g. `nfkc+casefold+whitespace+trim`.
    pub normalize: &'a str,
    /// The sketch: `fss`, `oph`, `classic` (signatures), `modulo` or `supershingle` (samples);
    /// absent in exact mode.
    #[schemars(extend("enum" = SKETCH_NAMES))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sketch: Option<&'a str>,
    /// With a sample sketch: shingle hashes that are 0 modulo this are kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub modulo: Option<u64>,
    /// With `supershingle`: sampled hashes per supershingle.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub supershingle_size: Option<usize>,
    /// Slots per signature (signature sketches only, as are the four banding fields below).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_perm: Option<usize>,
    /// LSH bands.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bands: Option<usize>,
    /// Slots per band.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<usize>,
    /// `(1/bands)^(1/rows)`, where the S-curve crosses one half.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lsh_threshold: Option<f64>,
    /// Slots not covered by any band: they still count in the signature estimate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unbanded_slots: Option<usize>,
    /// The seed of every hash function.
    pub seed: u64,
    /// The similarity threshold.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub threshold: f64,
    /// What the threshold measures.
    pub measure: Measure,
    /// How candidate pairs are verified; absent in exact mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifyMode>,
    /// Buckets with more members than this are linked as stars; absent in exact mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 2))]
    pub max_bucket: Option<usize>,
}

impl<'a> From<&'a Params> for ParamsRecord<'a> {
    fn from(p: &'a Params) -> Self {
        ParamsRecord {
            kind: ParamsTag::Tag,
            format_version: p.format_version,
            ndup_version: p.ndup_version,
            mode: p.mode,
            shingle: p.shingle,
            shingle_size: p.shingle_size,
            custom_stopwords: p.custom_stopwords,
            normalize: &p.normalize,
            sketch: p.sketch,
            modulo: p.modulo,
            supershingle_size: p.supershingle_size,
            num_perm: p.num_perm,
            bands: p.bands,
            rows: p.rows,
            lsh_threshold: p.lsh_threshold,
            unbanded_slots: p.unbanded_slots,
            seed: p.seed,
            threshold: p.threshold,
            measure: p.measure,
            verify: p.verify,
            max_bucket: p.max_bucket,
        }
    }
}

/// `pair`: two near-duplicate documents, `a`'s id sorting before `b`'s.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PairRecord<'a> {
    /// Always `"pair"`.
    #[serde(rename = "type")]
    pub kind: PairTag,
    /// The first document's id: its path, or a JSON-lines record's id.
    pub a: &'a str,
    /// The second document's id.
    pub b: &'a str,
    /// The sketch's estimate of the measure (in exact mode, its exact value).
    #[schemars(range(min = 0.0, max = 1.0))]
    pub estimate: f64,
    /// The exact Jaccard similarity of their shingle sets, when it was computed (always with
    /// `--verify exact` and in exact mode; with `auto`, for pairs near the threshold).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub jaccard: Option<f64>,
    /// With `--containment`: the share of `a`'s shingles found in `b`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub a_in_b: Option<f64>,
    /// With `--containment`: the share of `b`'s shingles found in `a`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub b_in_a: Option<f64>,
}

impl<'a> PairRecord<'a> {
    /// The record of `p`, whose documents are `a` and `b`.
    pub fn new(p: &Pair, a: &'a str, b: &'a str) -> Self {
        PairRecord {
            kind: PairTag::Tag,
            a,
            b,
            estimate: p.estimate,
            jaccard: p.jaccard,
            a_in_b: p.a_in_b,
            b_in_a: p.b_in_a,
        }
    }
}

/// `cluster` (with `--clusters`, instead of pairs): a group of documents joined by pairs.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ClusterRecord<'a> {
    /// Always `"cluster"`.
    #[serde(rename = "type")]
    pub kind: ClusterTag,
    /// The number of members.
    #[schemars(range(min = 2))]
    pub size: usize,
    /// The members' ids, sorted.
    #[schemars(length(min = 2))]
    pub members: Vec<&'a str>,
}

/// Why a document was skipped, as the `reason_kind` of a `skip` record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ReasonKind {
    /// A NUL byte in the first 8 KiB.
    Binary,
    /// The file or directory could not be read.
    Unreadable,
    /// A JSON-lines record that is not a usable document (bad JSON, no text, a duplicate id).
    Malformed,
    /// A file larger than `--max-filesize`.
    TooLarge,
}

impl From<SkipKind> for ReasonKind {
    fn from(k: SkipKind) -> Self {
        match k {
            SkipKind::Binary => ReasonKind::Binary,
            SkipKind::Unreadable => ReasonKind::Unreadable,
            SkipKind::Malformed => ReasonKind::Malformed,
            SkipKind::TooLarge => ReasonKind::TooLarge,
        }
    }
}

/// `skip`: a document (or directory) that was not compared, and why.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SkipRecord<'a> {
    /// Always `"skip"`.
    #[serde(rename = "type")]
    pub kind: SkipTag,
    /// The path or id.
    pub id: &'a str,
    /// The kind of problem.
    pub reason_kind: ReasonKind,
    /// A one-line reason for a person.
    pub reason: &'a str,
}

impl<'a> From<&'a Skip> for SkipRecord<'a> {
    fn from(s: &'a Skip) -> Self {
        SkipRecord {
            kind: SkipTag::Tag,
            id: &s.id,
            reason_kind: s.kind.into(),
            reason: &s.reason,
        }
    }
}

/// `summary`: the counts of a scan, its last record.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ScanSummary {
    /// Always `"summary"`.
    #[serde(rename = "type")]
    pub kind: SummaryTag,
    /// Documents read (including empty ones).
    pub documents: u64,
    /// Documents with no text after normalization.
    pub empty: u64,
    /// Binary files skipped.
    pub skipped_binary: u64,
    /// Files or directories that could not be read.
    pub skipped_unreadable: u64,
    /// JSON-lines records that were not usable documents.
    pub skipped_malformed: u64,
    /// Files larger than the size limit.
    pub skipped_too_large: u64,
    /// Bytes of text read.
    pub bytes: u64,
    /// Distinct candidate pairs considered.
    pub candidates: u64,
    /// Candidate pairs whose exact Jaccard was computed.
    pub exact_checked: u64,
    /// Buckets linked as stars because they exceeded `max_bucket`.
    pub oversized_buckets: u64,
    /// Pairs found (reported as pairs, or joined into clusters with `--clusters`).
    pub pairs: u64,
    /// Pairs accepted by `.ndupignore` rules, not reported.
    pub ignored_pairs: u64,
    /// Pairs accepted by the baseline, not reported.
    pub baseline_pairs: u64,
    /// With `--clusters`: the clusters reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clusters: Option<usize>,
    /// With an index as cache (`scan --index`): documents signed in this run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signed: Option<u64>,
    /// With an index as cache: documents whose signature came from the index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached: Option<u64>,
}

impl ScanSummary {
    /// The summary of `st`, with the number of clusters when they were reported.
    pub fn new(st: &Stats, clusters: Option<usize>) -> Self {
        ScanSummary {
            kind: SummaryTag::Tag,
            documents: st.documents,
            empty: st.empty,
            skipped_binary: st.skipped_binary,
            skipped_unreadable: st.skipped_unreadable,
            skipped_malformed: st.skipped_malformed,
            skipped_too_large: st.skipped_too_large,
            bytes: st.bytes,
            candidates: st.candidates,
            exact_checked: st.exact_checked,
            oversized_buckets: st.oversized_buckets,
            pairs: st.pairs,
            ignored_pairs: st.ignored_pairs,
            baseline_pairs: st.baseline_pairs,
            clusters,
            signed: st.signed,
            cached: st.cached,
        }
    }
}

/// `index` (second record of `ndup query`): the index queried.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct IndexRecord<'a> {
    /// Always `"index"`.
    #[serde(rename = "type")]
    pub kind: IndexTag,
    /// The index file, as given.
    pub path: &'a str,
    /// The index format version (the SQLite file's `user_version`).
    #[schemars(extend("const" = INDEX_FORMAT_VERSION))]
    pub format_version: i64,
    /// A hash of the parameters the index was built with.
    pub fingerprint: &'a str,
    /// Documents in the index.
    pub documents: u64,
}

/// `match` (`ndup query`): an indexed document similar to a query document. Matches are
/// grouped by query document in the order given, best first.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct MatchRecord<'a> {
    /// Always `"match"`.
    #[serde(rename = "type")]
    pub kind: MatchTag,
    /// The query document's id.
    pub query: &'a str,
    /// The indexed document's id.
    pub indexed: &'a str,
    /// The signature estimate of their Jaccard similarity.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub estimate: f64,
    /// The exact Jaccard similarity, when it was computed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub jaccard: Option<f64>,
}

/// `summary` of `ndup query`: its counts, the last record.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct QuerySummary {
    /// Always `"summary"`.
    #[serde(rename = "type")]
    pub kind: SummaryTag,
    /// Query documents read (including empty ones).
    pub queries: u64,
    /// Query documents with no text after normalization.
    pub empty: u64,
    /// Binary query files skipped.
    pub skipped_binary: u64,
    /// Query files that could not be read.
    pub skipped_unreadable: u64,
    /// Query records skipped as malformed (not JSON, no text, a duplicate id).
    pub skipped_malformed: u64,
    /// Query records longer than the line limit.
    pub skipped_too_large: u64,
    /// Bytes of query text.
    pub bytes: u64,
    /// Documents in the index.
    pub indexed: u64,
    /// Distinct (query, indexed document) candidates found by the band lookups.
    pub candidates: u64,
    /// Candidates whose exact Jaccard was computed.
    pub exact_checked: u64,
    /// Matches reported.
    pub matches: u64,
    /// Query documents signed.
    pub signed: u64,
}

impl From<&QueryStats> for QuerySummary {
    fn from(st: &QueryStats) -> Self {
        QuerySummary {
            kind: SummaryTag::Tag,
            queries: st.queries,
            empty: st.empty,
            skipped_binary: st.skipped_binary,
            skipped_unreadable: st.skipped_unreadable,
            skipped_malformed: st.skipped_malformed,
            skipped_too_large: st.skipped_too_large,
            bytes: st.bytes,
            indexed: st.indexed,
            candidates: st.candidates,
            exact_checked: st.exact_checked,
            matches: st.matches,
            signed: st.signed,
        }
    }
}

/// `summary` of `ndup index build|add|update|remove`: what changed, the last record.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct IndexSummary<'a> {
    /// Always `"summary"`.
    #[serde(rename = "type")]
    pub kind: SummaryTag,
    /// The command: `build`, `add`, `update` or `remove`.
    #[schemars(extend("enum" = INDEX_COMMANDS))]
    pub command: &'a str,
    /// Documents in the index afterwards (binary files included: they are remembered so they
    /// are not read again).
    pub documents: u64,
    /// Documents found in the given paths.
    pub seen: u64,
    /// Documents new to the index.
    pub added: u64,
    /// Documents whose content changed.
    pub updated: u64,
    /// Documents found unchanged (by size and mtime, or by content hash after a read).
    pub unchanged: u64,
    /// Documents removed from the index.
    pub removed: u64,
    /// Documents read (and hashed) because they were new or their file's size or mtime
    /// changed: files, and every record of such a JSON-lines or Parquet file.
    pub read: u64,
    /// Documents normalized, shingled and signed (a record whose text is indexed already takes
    /// that row's signature).
    pub signed: u64,
    /// Binary files met among the files read.
    pub skipped_binary: u64,
    /// Files that could not be read (they keep their previous row, if any).
    pub skipped_unreadable: u64,
    /// Records skipped as malformed (not JSON, no text, a duplicate id).
    pub skipped_malformed: u64,
    /// Records longer than the line limit.
    pub skipped_too_large: u64,
}

impl<'a> IndexSummary<'a> {
    /// The summary of `command`, which did `r`.
    pub fn new(r: &SyncReport, command: &'a str) -> Self {
        IndexSummary {
            kind: SummaryTag::Tag,
            command,
            documents: r.documents,
            seen: r.seen,
            added: r.added,
            updated: r.updated,
            unchanged: r.unchanged,
            removed: r.removed,
            read: r.read,
            signed: r.signed,
            skipped_binary: r.skipped_binary,
            skipped_unreadable: r.skipped_unreadable,
            skipped_malformed: r.skipped_malformed,
            skipped_too_large: r.skipped_too_large,
        }
    }
}

/// `keep` (`ndup dedup` on files): a document kept, alone or for its cluster.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct KeepRecord<'a> {
    /// Always `"keep"`.
    #[serde(rename = "type")]
    pub kind: KeepTag,
    /// The document's path.
    pub id: &'a str,
}

/// Why `ndup dedup` dropped a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DropReason {
    /// Its normalized text equals the kept document's.
    Exact,
    /// A near-duplicate of the kept document (directly or through other members of its
    /// cluster).
    Near,
}

/// `drop` (`ndup dedup` on files): a document dropped in favour of another.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct DropRecord<'a> {
    /// Always `"drop"`.
    #[serde(rename = "type")]
    pub kind: DropTag,
    /// The document's path.
    pub id: &'a str,
    /// The document kept instead.
    pub kept: &'a str,
    /// Why it was dropped.
    pub reason: DropReason,
}

/// `tune` (`ndup tune --format json`): a banding and what it implies. The record's one line; its
/// `type` comes last.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TuneRecord<'a> {
    /// The banding, its S-curve, its expected losses and its memory.
    #[serde(flatten)]
    pub tuning: &'a Tuning,
    /// Always `"tune"`.
    #[serde(rename = "type")]
    pub kind: TuneTag,
}

/// `compare` (`ndup compare --format json`): every similarity of two files. The record's one
/// line; its `type` and the two paths come last.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CompareRecord<'a> {
    /// The parameters, the shingle counts and the similarities.
    #[serde(flatten)]
    pub comparison: &'a Comparison,
    /// Always `"compare"`.
    #[serde(rename = "type")]
    pub kind: CompareTag,
    /// The first file, as given.
    pub a: &'a str,
    /// The second file, as given.
    pub b: &'a str,
}
