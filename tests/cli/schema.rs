//! The JSON wire format against its schemas: the committed `docs/schema/*.schema.json` are
//! exactly what `ndup::report::schema` generates from the record types, and every line the
//! binary writes, for every command that writes JSON, validates against the committed file.
//! Each test also checks that its runs showed every record type of the command and every field
//! of each, so that no part of a schema goes untested against real output.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use ndup::report::schema::{Family, render};
use serde_json::{Value, json};

use super::util::{Dir, Run, planted, planted_jsonl};

/// The environment variable that makes the first test rewrite the committed schemas.
const UPDATE: &str = "NDUP_UPDATE_SCHEMA";

fn schema_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/schema")
}

#[test]
fn committed_schemas_are_generated_from_the_record_types() {
    let dir = schema_dir();
    let update = std::env::var(UPDATE).is_ok_and(|v| v == "1");
    if update {
        std::fs::create_dir_all(&dir).unwrap();
    }
    let mut stale = Vec::new();
    for f in Family::ALL {
        let path = dir.join(f.file_name());
        let generated = render(f);
        if update {
            std::fs::write(&path, &generated).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(generated.as_str()) {
            stale.push(path.display().to_string());
        }
    }
    let known: BTreeSet<String> = Family::ALL.iter().map(|f| f.file_name()).collect();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".schema.json") && !known.contains(&name) {
            stale.push(format!(
                "{} (no command has this schema)",
                dir.join(name).display()
            ));
        }
    }
    assert!(
        stale.is_empty(),
        "these schemas differ from what the record types of src/report/records.rs generate:\n  \
         {}\nif the change of the wire format is meant, regenerate them with\n  \
         {UPDATE}=1 cargo test --test tests schema\n(and bump FORMAT_VERSION when a field \
         changed meaning or disappeared)",
        stale.join("\n  ")
    );
}

/// A command's committed schema, and what its runs showed: the fields seen per record type.
struct Checker {
    family: Family,
    doc: Value,
    validator: jsonschema::Validator,
    seen: BTreeMap<String, BTreeSet<String>>,
}

impl Checker {
    fn new(family: Family) -> Checker {
        let path = schema_dir().join(family.file_name());
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (see the first test)", path.display()));
        let doc: Value = serde_json::from_str(&text).unwrap();
        let validator = jsonschema::validator_for(&doc)
            .unwrap_or_else(|e| panic!("{} is not a valid schema: {e}", path.display()));
        Checker {
            family,
            doc,
            validator,
            seen: BTreeMap::new(),
        }
    }

    /// The record types of the schema and their definitions, as `(type, definition)`.
    fn records(&self) -> Vec<(String, String)> {
        self.doc["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let def = r["$ref"].as_str().unwrap().trim_start_matches("#/$defs/");
                let tag = self.doc["$defs"][def]["properties"]["type"]["const"]
                    .as_str()
                    .unwrap();
                (tag.to_string(), def.to_string())
            })
            .collect()
    }

    /// Validates one record, explaining a failure by the definition its `type` names.
    fn check(&mut self, record: &Value, context: &str) {
        if !self.validator.is_valid(record) {
            let def = self
                .records()
                .into_iter()
                .find(|(tag, _)| record["type"] == tag.as_str())
                .map(|(_, def)| def);
            let errors: Vec<String> = match &def {
                Some(def) => {
                    let one = json!({
                        "$schema": self.doc["$schema"],
                        "$ref": format!("#/$defs/{def}"),
                        "$defs": self.doc["$defs"],
                    });
                    jsonschema::validator_for(&one)
                        .unwrap()
                        .iter_errors(record)
                        .map(|e| format!("{} at {}", e, e.instance_path()))
                        .collect()
                }
                None => vec![format!("no record type {}", record["type"])],
            };
            panic!(
                "a record does not match docs/schema/{}:\n{record}\n{}\n{context}",
                self.family.file_name(),
                errors.join("\n")
            );
        }
        let fields = self.seen.entry(record["type"].to_string()).or_default();
        fields.extend(record.as_object().unwrap().keys().cloned());
    }

    /// Validates every line of a run's stdout.
    fn lines(&mut self, run: &Run) {
        assert!(!run.stdout.is_empty(), "no output\n{}", run.describe());
        for r in run.records() {
            self.check(&r, &run.describe());
        }
    }

    /// Asserts the runs showed every record type, with every field it declares but those of
    /// `never` (`type.field`: fields this command cannot write).
    fn covered(&self, never: &[&str]) {
        for (tag, def) in self.records() {
            let declared: BTreeSet<String> = self.doc["$defs"][&def]["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            let seen = self
                .seen
                .get(&Value::from(tag.as_str()).to_string())
                .cloned()
                .unwrap_or_default();
            let missing: Vec<&String> = declared
                .difference(&seen)
                .filter(|field| !never.contains(&format!("{tag}.{field}").as_str()))
                .collect();
            assert!(
                missing.is_empty(),
                "{}: no `{tag}` record with {missing:?} was checked: add a run that writes them",
                self.family.file_name()
            );
        }
    }
}

/// The planted tree (near-duplicates, an exact copy, a binary file, empty files) and JSON lines
/// with a malformed record.
fn tree() -> Dir {
    let d = planted();
    d.create("jsonl/c.jsonl", planted_jsonl() + "{\"id\": \"broken\"\n");
    d
}

#[test]
fn scan_output_matches_its_schema() {
    let d = tree();
    let mut c = Checker::new(Family::Scan);
    for args in [
        &["docs"][..],
        &["docs", "--verify", "exact"],
        &["docs", "--clusters"],
        &["docs", "--containment"],
        &["docs", "--exact", "--containment", "--clusters"],
        &["docs", "--sketch", "supershingle"],
        &["docs", "--shingle", "word", "--sketch", "oph", "-t", "0.5"],
        &["docs", "--max-filesize", "100"],
        &["jsonl/c.jsonl", "--format", "jsonl"],
    ] {
        c.lines(&d.scan().args(args).arg("-q").ok());
    }
    // An index as a cache: a summary with `signed` and `cached`.
    for _ in 0..2 {
        c.lines(&d.scan().args(["docs", "-q", "--index", "i.db"]).ok());
    }
    // --fail-on-duplicates changes the exit status, not the report.
    c.lines(
        &d.scan()
            .args(["docs", "-q", "--fail-on-duplicates"])
            .code(1),
    );
    c.covered(&[]);
}

#[test]
fn index_and_query_output_match_their_schemas() {
    let d = tree();
    let mut index = Checker::new(Family::Index);
    for args in [
        &["build", "docs"][..],
        &["add", "docs", "jsonl"],
        &["update", "docs"],
        &["remove", "docs/unrelated-2.txt"],
    ] {
        let run = d
            .ndup()
            .arg("index")
            .args(args)
            .args(["-q", "--index", "i.db"])
            .ok();
        index.lines(&run);
    }
    index.covered(&[]);

    let mut query = Checker::new(Family::Query);
    d.create("q/near.txt", d.read("docs/edited.txt"));
    d.create("q/logo.png", b"\0binary");
    for verify in ["auto", "exact", "none", "signature"] {
        let run = d
            .ndup()
            .args(["query", "-q", "--index", "i.db", "q", "docs/original.txt"])
            .args(["--verify", verify])
            .ok();
        query.lines(&run);
    }
    query.lines(
        &d.ndup()
            .args(["query", "-q", "--index", "i.db", "-"])
            .stdin(d.read("docs/original.txt"))
            .ok(),
    );
    // An index holds signatures: a query never uses a sample sketch (`scan` covers those).
    query.covered(&["params.modulo", "params.supershingle_size"]);
}

#[test]
fn dedup_output_matches_its_schema() {
    let d = tree();
    let mut c = Checker::new(Family::Dedup);
    for keep in ["first", "longest", "shortest"] {
        c.lines(
            &d.ndup()
                .args(["dedup", "-q", "-o", "-", "docs", "--keep", keep])
                .ok(),
        );
    }
    c.covered(&[]);
}

#[test]
fn tune_and_compare_output_match_their_schemas() {
    let d = tree();
    let mut tune = Checker::new(Family::Tune);
    for args in [
        &[][..],
        &["-t", "0.5", "--verify", "exact"],
        &["-b", "10", "-r", "10"],
        &["--num-perm", "64", "--verify", "none"],
    ] {
        let run = d.ndup().args(["tune", "--format", "json"]).args(args).ok();
        tune.lines(&run);
    }
    tune.covered(&[]);

    let mut compare = Checker::new(Family::Compare);
    for args in [
        &["docs/original.txt", "docs/edited.txt"][..],
        &["docs/original.txt", "docs/empty.txt"],
        &["docs/original.txt", "docs/edited.txt", "--sketch", "modulo"],
        &[
            "docs/original.txt",
            "docs/edited.txt",
            "--shingle",
            "stopword",
        ],
    ] {
        let run = d
            .ndup()
            .args(["compare", "--format", "json"])
            .args(args)
            .ok();
        compare.lines(&run);
    }
    compare.covered(&[]);
}

#[test]
fn schemas_reject_drift() {
    let d = tree();
    let c = Checker::new(Family::Scan);
    let run = d.scan().args(["docs", "-q", "--verify", "exact"]).ok();
    let records = run.records();
    let pair = records
        .iter()
        .find(|r| r["type"] == "pair" && r.get("jaccard").is_some())
        .expect("a verified pair");
    assert!(c.validator.is_valid(pair));
    type Change = fn(&mut serde_json::Map<String, Value>);
    let changes: [(&str, Change); 5] = [
        ("an unknown field", |r| {
            r.insert("score".into(), json!(1.0));
        }),
        ("a missing field", |r| {
            r.shift_remove("estimate");
        }),
        ("an optional field as null", |r| {
            r.insert("jaccard".into(), Value::Null);
        }),
        ("a similarity above 1", |r| {
            r.insert("estimate".into(), json!(1.5));
        }),
        ("an unknown type", |r| {
            r.insert("type".into(), json!("pairs"));
        }),
    ];
    for (what, change) in changes {
        let mut r = pair.clone();
        change(r.as_object_mut().unwrap());
        assert!(!c.validator.is_valid(&r), "{what} passed: {r}");
    }
    let mut params = run.params();
    params["format_version"] = json!(ndup::find::config::FORMAT_VERSION + 1);
    assert!(
        !c.validator.is_valid(&params),
        "another format version passed"
    );
}
