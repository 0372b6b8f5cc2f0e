//! The JSON Schemas of the wire format: one document per command family, generated from the
//! record types of [`super::records`] with `schemars`. They are committed as
//! `docs/schema/NAME.schema.json`; a test regenerates them and fails when a committed file
//! differs (`NDUP_UPDATE_SCHEMA=1 cargo test --test tests schema` rewrites them), and another
//! validates the binary's real output against the committed files.
//!
//! Each document is a JSON Schema (draft 2020-12) for one line of output: a `oneOf` over the
//! command's record types, which their `type` tells apart. Every object is closed
//! (`additionalProperties: false`), every field that is always written is required, and a field
//! that is sometimes left out is never `null`.
//!
//! Versioning: a document's `$id` ends in [`FORMAT_VERSION`] (`urn:ndup:schema:scan:v1`), which
//! it also records as `x-ndup-format-version`; the `params` record requires its
//! `format_version` to be that number, and the `index` record of `ndup query` requires the index
//! format (`INDEX_FORMAT_VERSION`, also recorded as `x-ndup-index-format-version`). Adding a
//! record type or an optional field changes a schema without a new version; renaming or
//! removing a field, or changing its meaning, bumps [`FORMAT_VERSION`].

use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value, json};

use super::records::*;
use crate::find::config::FORMAT_VERSION;
use crate::index::INDEX_FORMAT_VERSION;

/// A command whose JSON output has a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `ndup scan --format jsonl`: `params`, `pair` or `cluster`, `skip`, `summary`.
    Scan,
    /// `ndup dedup` on files: `keep` and `drop`.
    Dedup,
    /// `ndup index build|add|update|remove` (JSON lines): `skip`, `summary`.
    Index,
    /// `ndup query` (JSON lines): `params`, `index`, `match`, `skip`, `summary`.
    Query,
    /// `ndup tune --format json`: `tune`.
    Tune,
    /// `ndup compare --format json`: `compare`.
    Compare,
}

impl Family {
    /// Every family, in the order of the documentation.
    pub const ALL: [Family; 6] = [
        Family::Scan,
        Family::Dedup,
        Family::Index,
        Family::Query,
        Family::Tune,
        Family::Compare,
    ];

    /// The command's name, which names its schema.
    pub fn name(self) -> &'static str {
        match self {
            Family::Scan => "scan",
            Family::Dedup => "dedup",
            Family::Index => "index",
            Family::Query => "query",
            Family::Tune => "tune",
            Family::Compare => "compare",
        }
    }

    /// The schema's file name in `docs/schema/`: `scan.schema.json`.
    pub fn file_name(self) -> String {
        format!("{}.schema.json", self.name())
    }

    fn title(self) -> &'static str {
        match self {
            Family::Scan => "ndup scan --format jsonl",
            Family::Dedup => "ndup dedup (files)",
            Family::Index => "ndup index build|add|update|remove",
            Family::Query => "ndup query",
            Family::Tune => "ndup tune --format json",
            Family::Compare => "ndup compare --format json",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Family::Scan => {
                "One line of `ndup scan --format jsonl`. The report is a `params` record, then \
                 one `pair` record per pair (or, with `--clusters`, one `cluster` record per \
                 cluster), one `skip` record per document not compared, and a `summary` record \
                 last."
            }
            Family::Dedup => {
                "One line of `ndup dedup` on files: one `keep` or `drop` record per document, in \
                 input order. (On JSON lines, dedup writes the kept records themselves, as they \
                 were read.)"
            }
            Family::Index => {
                "One line of `ndup index build|add|update|remove` (JSON lines, the default): one \
                 `skip` record per file not indexed, then a `summary` record of what changed."
            }
            Family::Query => {
                "One line of `ndup query` (JSON lines, the default): a `params` record, an \
                 `index` record, one `match` record per match (grouped by query document in the \
                 order given, best first), one `skip` record per document not compared, and a \
                 `summary` record last."
            }
            Family::Tune => "The one line of `ndup tune --format json`.",
            Family::Compare => "The one line of `ndup compare --format json`.",
        }
    }

    /// The record types, in the order they appear in the output.
    fn records(self, g: &mut SchemaGenerator) -> Vec<Schema> {
        fn r<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
            g.subschema_for::<T>()
        }
        match self {
            Family::Scan => vec![
                r::<ParamsRecord>(g),
                r::<PairRecord>(g),
                r::<ClusterRecord>(g),
                r::<SkipRecord>(g),
                r::<ScanSummary>(g),
            ],
            Family::Dedup => vec![r::<KeepRecord>(g), r::<DropRecord>(g)],
            Family::Index => vec![r::<SkipRecord>(g), r::<IndexSummary>(g)],
            Family::Query => vec![
                r::<ParamsRecord>(g),
                r::<IndexRecord>(g),
                r::<MatchRecord>(g),
                r::<SkipRecord>(g),
                r::<QuerySummary>(g),
            ],
            Family::Tune => vec![r::<TuneRecord>(g)],
            Family::Compare => vec![r::<CompareRecord>(g)],
        }
    }
}

/// The schema document of `family`.
pub fn schema(family: Family) -> Value {
    let mut g = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    let records: Vec<Value> = family
        .records(&mut g)
        .into_iter()
        .map(Schema::to_value)
        .collect();
    let defs: Map<String, Value> = g.take_definitions(true);
    let mut doc = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": format!("urn:ndup:schema:{}:v{FORMAT_VERSION}", family.name()),
        "title": family.title(),
        "description": family.description(),
        "x-ndup-format-version": FORMAT_VERSION,
    });
    if matches!(family, Family::Query) {
        doc["x-ndup-index-format-version"] = INDEX_FORMAT_VERSION.into();
    }
    doc["oneOf"] = records.into();
    doc["$defs"] = defs.into();
    tighten(&mut doc);
    doc
}

/// The schema document of `family` as it is committed: pretty-printed, with a final newline.
pub fn render(family: Family) -> String {
    let mut s = serde_json::to_string_pretty(&schema(family)).expect("a schema serializes");
    s.push('\n');
    s
}

/// Closes every object schema (`additionalProperties: false`: ndup writes no field its types do
/// not declare), and takes `null` out of the types of optional properties (a field that may be
/// left out is left out rather than written as `null`).
fn tighten(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if let Some(Value::Object(props)) = o.get("properties") {
                let required: Vec<&str> = o
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let optional: Vec<String> = props
                    .keys()
                    .filter(|k| !required.contains(&k.as_str()))
                    .cloned()
                    .collect();
                if let Some(Value::Object(props)) = o.get_mut("properties") {
                    for k in optional {
                        if let Some(Value::Object(p)) = props.get_mut(&k) {
                            not_null(p);
                        }
                    }
                }
                o.entry("additionalProperties")
                    .or_insert(Value::Bool(false));
            }
            o.values_mut().for_each(tighten);
        }
        Value::Array(a) => a.iter_mut().for_each(tighten),
        _ => {}
    }
}

/// Removes `null` from a property schema's `type` list (`["number", "null"]` becomes
/// `"number"`).
fn not_null(p: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = p.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let t = types.remove(0);
            p.insert("type".into(), t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::find::config::{ScanConfig, StrategyConfig};
    use crate::model::SkipKind;
    use crate::sim::Measure;
    use crate::sketch::sample::{SampleKind, SampleParams};

    #[test]
    fn every_family_is_a_closed_one_of_over_typed_records() {
        for f in Family::ALL {
            let doc = schema(f);
            let defs = doc["$defs"].as_object().unwrap();
            for r in doc["oneOf"].as_array().unwrap() {
                let name = r["$ref"].as_str().unwrap().trim_start_matches("#/$defs/");
                let def = &defs[name];
                assert_eq!(def["additionalProperties"], false, "{f:?} {name}");
                assert!(
                    def["properties"]["type"]["const"].is_string(),
                    "{f:?} {name}"
                );
                assert!(
                    def["required"].as_array().unwrap().contains(&"type".into()),
                    "{f:?} {name}"
                );
            }
        }
        let scan = schema(Family::Scan);
        let params = &scan["$defs"]["ParamsRecord"];
        assert_eq!(
            params["properties"]["format_version"]["const"],
            FORMAT_VERSION
        );
        assert_eq!(params["properties"]["modulo"]["type"], "integer");
        let query = schema(Family::Query);
        assert_eq!(
            query["$defs"]["IndexRecord"]["properties"]["format_version"]["const"],
            INDEX_FORMAT_VERSION
        );
        assert_eq!(
            query["$id"],
            format!("urn:ndup:schema:query:v{FORMAT_VERSION}")
        );
    }

    #[test]
    fn reason_kinds_are_the_skip_kinds_names() {
        for k in [
            SkipKind::Binary,
            SkipKind::Unreadable,
            SkipKind::Malformed,
            SkipKind::TooLarge,
        ] {
            assert_eq!(
                serde_json::to_value(ReasonKind::from(k)).unwrap(),
                k.name(),
                "{k:?}"
            );
        }
    }

    #[test]
    fn sketch_names_are_every_sketchs_name() {
        use crate::sketch::minhash::SketchKind;
        let names: Vec<&str> = [SketchKind::Fss, SketchKind::Oph, SketchKind::Classic]
            .map(SketchKind::name)
            .into_iter()
            .chain([SampleKind::Modulo, SampleKind::Supershingle].map(SampleKind::name))
            .collect();
        assert_eq!(names, SKETCH_NAMES);
    }

    /// The `params` record mirrors [`crate::find::config::Params`] field for field: a field added
    /// there and not here (or the other way round) fails this test.
    #[test]
    fn params_record_mirrors_params() {
        let configs = [
            ScanConfig::default(),
            ScanConfig {
                measure: Measure::Containment,
                ..ScanConfig::with_strategy(StrategyConfig::Exact(Default::default()))
            },
            ScanConfig::with_strategy(StrategyConfig::Sample(SampleParams {
                kind: SampleKind::Supershingle,
                modulo: 4,
                supershingle_size: 3,
            })),
        ];
        for c in configs {
            let p = c.params();
            assert_eq!(
                serde_json::to_string(&ParamsRecord::from(&p)).unwrap(),
                serde_json::to_string(&p).unwrap()
            );
        }
    }

    /// The summaries of `ndup query` and `ndup index` mirror [`crate::index::QueryStats`] and
    /// [`crate::index::SyncReport`] field for field.
    #[test]
    fn index_summaries_mirror_their_counts() {
        // Every count a different number, so that a field copied from the wrong one shows; a
        // field added to the counts and not to the record shows as a missing key.
        let stats = crate::index::QueryStats {
            queries: 1,
            empty: 2,
            skipped_binary: 3,
            skipped_unreadable: 4,
            bytes: 5,
            indexed: 6,
            candidates: 7,
            exact_checked: 8,
            matches: 9,
            signed: 10,
            ..Default::default()
        };
        let mut wire = serde_json::to_value(QuerySummary::from(&stats)).unwrap();
        let o = wire.as_object_mut().unwrap();
        assert_eq!(o.shift_remove("type").unwrap(), "summary");
        assert_eq!(wire, serde_json::to_value(&stats).unwrap());

        let sync = crate::index::SyncReport {
            documents: 1,
            seen: 2,
            added: 3,
            updated: 4,
            unchanged: 5,
            removed: 6,
            read: 7,
            signed: 8,
            skipped_binary: 9,
            skipped_unreadable: 10,
            ..Default::default()
        };
        let mut wire = serde_json::to_value(IndexSummary::new(&sync, "add")).unwrap();
        let o = wire.as_object_mut().unwrap();
        assert_eq!(o.shift_remove("type").unwrap(), "summary");
        assert_eq!(o.shift_remove("command").unwrap(), "add");
        assert_eq!(wire, serde_json::to_value(&sync).unwrap());
    }
}
