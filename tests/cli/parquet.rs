//! Parquet corpora: `scan`, `dedup`, `sign` read `.parquet` files and directories of shards,
//! whatever their compression, with nested id columns and null texts; `dedup` writes Parquet
//! with every column and the input's schema.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType, Field, Fields, Schema};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, GzipLevel, ZstdLevel};
use parquet::file::properties::WriterProperties;
use serde_json::json;

use super::util::Dir;
use crate::corpus::{edited, text};

/// One row: a nested id, a text (or none), and a column ndup does not read.
struct Row {
    id: i64,
    text: Option<String>,
    score: f64,
}

/// Rows in families of near-duplicates, and one row without text.
fn rows(n: usize) -> Vec<Row> {
    let mut out: Vec<Row> = (0..n)
        .map(|i| {
            let family = (i / 3) as u64;
            Row {
                id: 5000 + i as i64,
                text: Some(if i % 3 == 0 {
                    text(700 + family, 120)
                } else {
                    edited(700 + family, 120, i % 3)
                }),
                score: i as f64 / 2.0,
            }
        })
        .collect();
    out[n / 2].text = None;
    out
}

fn write(path: &Path, rows: &[Row], compression: Compression, row_group: usize) {
    let ids: Int64Array = rows.iter().map(|r| Some(r.id)).collect();
    let texts: StringArray = rows.iter().map(|r| r.text.as_deref()).collect();
    let scores: Float64Array = rows.iter().map(|r| Some(r.score)).collect();
    let id_field = Field::new("id", DataType::Int64, true);
    let meta = StructArray::from(vec![(
        Arc::new(id_field.clone()),
        Arc::new(ids) as ArrayRef,
    )]);
    let schema = Arc::new(Schema::new(vec![
        Field::new(
            "meta",
            DataType::Struct(Fields::from(vec![id_field])),
            false,
        ),
        Field::new("content", DataType::Utf8, true),
        Field::new("score", DataType::Float64, false),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(meta), Arc::new(texts), Arc::new(scores)],
    )
    .unwrap();
    let props = WriterProperties::builder()
        .set_compression(compression)
        .set_max_row_group_row_count(Some(row_group))
        .build();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut w = ArrowWriter::try_new(File::create(path).unwrap(), schema, Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

/// The same rows as JSON lines.
fn write_jsonl(d: &Dir, name: &str, rows: &[Row]) {
    let lines: Vec<String> = rows
        .iter()
        .map(|r| json!({"meta": {"id": r.id}, "content": r.text}).to_string())
        .collect();
    d.create(name, lines.join("\n") + "\n");
}

/// Four shards with four compressions; the third has a row group larger than a read batch.
fn dataset(d: &Dir) -> Vec<Row> {
    let all = rows(12_000);
    let parts: [(Compression, usize); 4] = [
        (Compression::SNAPPY, 500),
        (Compression::ZSTD(ZstdLevel::default()), 1000),
        (Compression::GZIP(GzipLevel::default()), 20_000),
        (Compression::UNCOMPRESSED, 3000),
    ];
    for (k, chunk) in all.chunks(3000).enumerate() {
        let (c, group) = parts[k];
        write(
            &d.path().join(format!("ds/part-{k}.parquet")),
            chunk,
            c,
            group,
        );
    }
    d.create("ds/_SUCCESS", "");
    all
}

const FIELDS: [&str; 4] = ["--id-field", "meta.id", "--text-field", "content"];

#[test]
fn a_parquet_dataset_scans_as_its_rows_written_as_json_lines_do() {
    let d = Dir::new();
    let all = dataset(&d);
    write_jsonl(&d, "all.jsonl", &all);
    let from_parquet = d.scan().arg("ds").args(FIELDS).arg("--clusters").ok();
    let from_jsonl = d
        .scan()
        .arg("all.jsonl")
        .args(FIELDS)
        .arg("--clusters")
        .ok();
    assert!(from_parquet.clusters().len() > 1000);
    assert_eq!(from_parquet.clusters(), from_jsonl.clusters());
    let pairs = |run: &super::util::Run| {
        run.pairs()
            .into_iter()
            .map(|p| (p.a, p.b, p.estimate, p.jaccard))
            .collect::<Vec<_>>()
    };
    let p = d.scan().arg("ds").args(FIELDS).ok();
    let j = d.scan().arg("all.jsonl").args(FIELDS).ok();
    // Exact verification read the Parquet rows again: exact Jaccards are there too.
    assert!(pairs(&p).iter().any(|x| x.3.is_some()));
    assert_eq!(pairs(&p), pairs(&j));
    // The row without text is reported by its file and row.
    let skips = from_parquet.skips();
    assert_eq!(skips.len(), 1, "{}", from_parquet.describe());
    assert_eq!(skips[0].0, "ds/part-2.parquet:1");
    // A file named alone reads too.
    let one = d.scan().arg("ds/part-1.parquet").args(FIELDS).ok();
    assert_eq!(one.count("documents"), 3000);
}

#[test]
fn dedup_writes_the_kept_rows_with_every_column_and_the_schema() {
    let d = Dir::new();
    let all = dataset(&d);
    write_jsonl(&d, "all.jsonl", &all);
    d.ndup()
        .args(["dedup", "ds", "-o", "kept.parquet", "--keep", "longest"])
        .args(FIELDS)
        .ok();
    d.ndup()
        .args([
            "dedup",
            "all.jsonl",
            "-o",
            "kept.jsonl",
            "--keep",
            "longest",
        ])
        .args(FIELDS)
        .ok();
    let file = File::open(d.path().join("kept.parquet")).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let input = ParquetRecordBatchReaderBuilder::try_new(
        File::open(d.path().join("ds/part-0.parquet")).unwrap(),
    )
    .unwrap();
    assert_eq!(reader.schema(), input.schema());
    let mut ids = Vec::new();
    let mut scores = Vec::new();
    for batch in reader.build().unwrap() {
        let batch = batch.unwrap();
        let meta = batch.column_by_name("meta").unwrap().as_struct();
        let id = meta.column_by_name("id").unwrap();
        ids.extend(id.as_primitive::<Int64Type>().values().iter().copied());
        let score = batch.column_by_name("score").unwrap();
        scores.extend(
            score
                .as_primitive::<arrow_array::types::Float64Type>()
                .values()
                .iter()
                .copied(),
        );
    }
    let jsonl_ids: Vec<i64> = d
        .read("kept.jsonl")
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["meta"]["id"]
                .as_i64()
                .unwrap()
        })
        .collect();
    assert!(ids.len() < 12_000 && ids.len() > 3000, "{}", ids.len());
    assert_eq!(ids, jsonl_ids);
    // The column ndup never read came through with each row.
    let want: Vec<f64> = ids.iter().map(|id| (id - 5000) as f64 / 2.0).collect();
    assert_eq!(scores, want);
}

#[test]
fn sign_reads_parquet_and_bad_files_are_reported_by_name() {
    let d = Dir::new();
    dataset(&d);
    d.ndup()
        .args(["sign", "ds", "--out", "shards"])
        .args(FIELDS)
        .ok();
    let direct = d
        .scan()
        .arg("ds")
        .args(FIELDS)
        .args(["--verify", "signature"])
        .ok();
    let shards = d.scan().args(["--signatures", "shards"]).ok();
    assert_eq!(shards.pairs().len(), direct.pairs().len());
    assert_eq!(shards.pair_ids(), direct.pair_ids());

    // A missing column skips that file, named, and the others are read.
    let mut more = rows(30);
    for r in &mut more {
        r.id += 100_000;
    }
    write(
        &d.path().join("more/a.parquet"),
        &more,
        Compression::SNAPPY,
        10,
    );
    let run = d
        .scan()
        .args([
            "more/a.parquet",
            "ds/part-0.parquet",
            "--text-field",
            "body",
        ])
        .code(2);
    assert!(
        run.stderr.contains(
            "more/a.parquet: no column `body` for the text (the columns: meta.id, content, \
             score); choose one with --text-field"
        ),
        "{}",
        run.describe()
    );
    let run = d
        .scan()
        .args(["more/a.parquet", "ds/part-0.parquet"])
        .args(FIELDS)
        .ok();
    // 29 rows with text, and all of the other file.
    assert_eq!(run.count("documents"), 3029);
    d.create("bad/x.parquet", "PAR1 but not really");
    let run = d
        .scan()
        .args(["bad/x.parquet", "more/a.parquet"])
        .args(FIELDS)
        .ok();
    assert_eq!(run.count("documents"), 29);
    assert!(
        run.stderr
            .contains("bad/x.parquet: not a readable Parquet file"),
        "{}",
        run.describe()
    );
}

/// `-` is standard input even beside a directory named `-` that holds Parquet shards (as an
/// `ndup sign --out -` of an older ndup, or a careless `mkdir -`, leaves one).
#[test]
fn dash_is_standard_input_even_beside_a_parquet_directory_named_dash() {
    let d = Dir::new();
    let all = rows(50);
    write(
        &d.path().join("-/part-0.parquet"),
        &all,
        Compression::SNAPPY,
        100,
    );
    let lines: Vec<String> = all[..10]
        .iter()
        .map(|r| json!({"id": r.id, "text": r.text}).to_string())
        .collect();
    let run = d.scan().arg("-").stdin(lines.join("\n") + "\n").ok();
    assert_eq!(run.count("documents"), 10, "{}", run.describe());
}

#[test]
fn a_parquet_dataset_is_indexed_row_by_row_and_its_rows_read_again() {
    let d = Dir::new();
    dataset(&d);
    let r = d
        .ndup()
        .args(["index", "build", "ds", "--index", "i.db"])
        .args(FIELDS)
        .ok();
    let s = r.summary();
    // Every row but the one without text, which is reported by its file and row.
    assert_eq!(
        (s["documents"].as_u64(), s["skipped_malformed"].as_u64()),
        (Some(11_999), Some(1))
    );
    assert_eq!(r.of_type("skip")[0]["id"], "ds/part-2.parquet:1");

    // A near copy of family 10 (rows 30 to 32): matched with exact Jaccards, read again from
    // the snappy shard's rows.
    let query = json!({"meta": {"id": "q"}, "content": edited(710, 120, 3)}).to_string();
    d.create("q.jsonl", query + "\n");
    let r = d
        .ndup()
        .args([
            "query",
            "--index",
            "i.db",
            "--verify",
            "exact",
            "--threshold",
            "0.5",
            "q.jsonl",
        ])
        .args(FIELDS)
        .ok();
    let found: Vec<(String, bool)> = r
        .of_type("match")
        .iter()
        .map(|m| {
            (
                m["indexed"].as_str().unwrap().to_string(),
                m["jaccard"].is_f64(),
            )
        })
        .collect();
    let mut ids: Vec<&str> = found.iter().map(|(id, _)| id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, ["5030", "5031", "5032"], "{}", r.describe());
    assert!(found.iter().all(|(_, exact)| *exact), "{}", r.describe());

    // A shard gone from the directory: its rows go on update, the others are not read.
    std::fs::remove_file(d.path().join("ds/part-3.parquet")).unwrap();
    let r = d
        .ndup()
        .args(["index", "update", "ds", "--index", "i.db"])
        .args(FIELDS)
        .ok();
    let s = r.summary();
    assert_eq!(
        (s["removed"].as_u64(), s["documents"].as_u64()),
        (Some(3000), Some(8999)),
        "{s}"
    );
}

/// A shard renamed (as Spark rewrites `part-*` files) lost every record on update: the rows of
/// the file gone were removed after its records had moved to the new one.
#[test]
fn records_of_a_renamed_shard_are_kept() {
    let d = Dir::new();
    write(
        &d.path().join("ds/part-0.parquet"),
        &rows(6),
        Compression::SNAPPY,
        100,
    );
    let index = |cmd: &str| {
        d.ndup()
            .args(["index", cmd, "ds", "--index", "i.db"])
            .args(FIELDS)
            .ok()
            .summary()
    };
    assert_eq!(index("build")["documents"], 5);
    std::fs::rename(
        d.path().join("ds/part-0.parquet"),
        d.path().join("ds/part-1.parquet"),
    )
    .unwrap();
    let s = index("update");
    assert_eq!(
        (
            s["documents"].as_u64(),
            s["updated"].as_u64(),
            s["removed"].as_u64()
        ),
        (Some(5), Some(5), Some(0)),
        "{s}"
    );
    let paths: Vec<String> = rusqlite::Connection::open(d.path().join("i.db"))
        .unwrap()
        .prepare("SELECT DISTINCT path FROM doc")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(paths.len(), 1);
    assert!(paths[0].ends_with("part-1.parquet"), "{paths:?}");
}
