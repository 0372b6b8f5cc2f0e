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
fn shards_under_temporary_or_hidden_directories_are_left_out() {
    // What a Spark job leaves while it writes (or after it failed): shards under `_temporary`,
    // which the job would move into place on commit. Read beside the finished shards, they would
    // be read twice; alone, they are no dataset yet.
    let d = Dir::new();
    let all = rows(300);
    write(
        &d.path().join("ds/part-0.parquet"),
        &all[..200],
        Compression::SNAPPY,
        100,
    );
    for sub in ["_temporary/0/part-1.parquet", ".hidden/part-2.parquet"] {
        write(
            &d.path().join("ds").join(sub),
            &all[200..],
            Compression::SNAPPY,
            100,
        );
    }
    let run = d.scan().arg("ds").args(FIELDS).ok();
    // The 200 rows of `part-0` (one of them without text), none of the others.
    assert_eq!(run.count("documents"), 199, "{}", run.describe());
    assert_eq!(run.count("skipped_malformed"), 1);
    // Only such shards: refused by name, for every command, not read as a tree of documents.
    write(
        &d.path().join("tmp/_temporary/0/part-0.parquet"),
        &all,
        Compression::SNAPPY,
        100,
    );
    d.create("tmp/_SUCCESS", "");
    for args in [
        &["scan", "tmp"][..],
        &["scan", "--jsonl", "tmp"],
        &["dedup", "tmp", "-o", "-"],
    ] {
        let run = d.ndup().args(args).args(FIELDS).code(2);
        assert_eq!(
            run.stderr.trim_end(),
            "ndup: tmp: a Parquet dataset with no shard outside the directories named `_*` or \
             `.*`, which are left out (a `_temporary` holds a job's unfinished output)",
            "{}",
            run.describe()
        );
    }
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
    // A file that starts as Parquet but has no footer is damaged: the run fails, unless
    // partial input is allowed.
    d.create("bad/x.parquet", "PAR1 but not really");
    let run = d
        .scan()
        .args(["bad/x.parquet", "more/a.parquet"])
        .args(FIELDS)
        .code(2);
    eqnice!(
        vec![
            "ndup: bad/x.parquet: read error after row 0 (no Parquet footer at its end: the \
             file is truncated or damaged); the records after it are missing; pass \
             --partial-input to use the records before it"
        ],
        run.stderr_lines()
    );
    let run = d
        .scan()
        .args(["bad/x.parquet", "more/a.parquet", "--partial-input"])
        .args(FIELDS)
        .ok();
    assert_eq!(run.count("documents"), 29);
}

/// A damaged shard was dropped with one line on stderr, and a `dedup` output silently lacked
/// its rows; a corrupt page lost the good row groups before it too. Damaged Parquet is now
/// damaged gzip: the run fails (exit 2) naming the file and the rows read, and
/// `--partial-input` keeps the rows before the damage, reporting the rest as skipped.
#[test]
fn a_damaged_shard_fails_the_run_unless_partial_input_keeps_the_rows_before_the_damage() {
    let d = Dir::new();
    // Other texts than a's, in families of three as well.
    let mut b_rows = rows(30);
    for (i, r) in b_rows.iter_mut().enumerate() {
        r.id += 100;
        let family = 900 + (i / 3) as u64;
        if r.text.is_some() {
            r.text = Some(match i % 3 {
                0 => text(family, 120),
                k => edited(family, 120, k),
            });
        }
    }
    write(
        &d.path().join("good/b.parquet"),
        &b_rows,
        Compression::SNAPPY,
        10,
    );
    let b = std::fs::read(d.path().join("good/b.parquet")).unwrap();
    let build = |name: &str, b: &[u8]| {
        write(
            &d.path().join(format!("{name}/a.parquet")),
            &rows(30),
            Compression::SNAPPY,
            10,
        );
        d.create(&format!("{name}/b.parquet"), b);
    };
    // Its last 100 bytes cut, and its third row group's text overwritten.
    build("cut", &b[..b.len() - 100]);
    let meta = ParquetRecordBatchReaderBuilder::try_new(
        File::open(d.path().join("good/b.parquet")).unwrap(),
    )
    .unwrap()
    .metadata()
    .clone();
    let start = meta.row_group(2).column(1).byte_range().0 as usize;
    let mut corrupt = b.clone();
    corrupt[start..start + 8].fill(0xff);
    build("corrupt", &corrupt);

    let commands: [&[&str]; 4] = [
        &["scan", "DIR"],
        &["dedup", "DIR", "-o", "kept.parquet"],
        &["sign", "DIR", "--out", "shards"],
        &["index", "build", "DIR", "--index", "i.db"],
    ];
    for (dir, rows_before, damage) in [
        (
            "cut",
            0,
            "no Parquet footer at its end: the file is truncated or damaged",
        ),
        ("corrupt", 20, "in row group 2: "),
    ] {
        for cmd in commands {
            let _ = std::fs::remove_dir_all(d.path().join("shards"));
            let _ = std::fs::remove_file(d.path().join("i.db"));
            let _ = std::fs::remove_file(d.path().join("kept.parquet"));
            let run = d
                .ndup()
                .args(cmd.iter().map(|a| if *a == "DIR" { dir } else { a }))
                .args(FIELDS)
                .code(2);
            let said = format!("ndup: {dir}/b.parquet: read error after row {rows_before} (");
            assert!(
                run.stderr.starts_with(&said)
                    && run.stderr.contains(damage)
                    && run.stderr.ends_with(
                        "the records after it are missing; pass --partial-input to use the \
                         records before it\n"
                    ),
                "{}",
                run.describe()
            );
            assert!(!d.path().join("kept.parquet").exists());
            let run = d
                .ndup()
                .args(cmd.iter().map(|a| if *a == "DIR" { dir } else { a }))
                .args(FIELDS)
                .arg("--partial-input")
                .ok();
            let said = format!("ndup: {dir}/b.parquet: read error after row {rows_before}: ");
            assert!(
                run.stderr.contains(&said) && run.stderr.contains(damage),
                "{}",
                run.describe()
            );
        }
        // The rows of a, and those of b before the damage (the 16th has no text).
        let run = d.scan().arg(dir).args(FIELDS).arg("--partial-input").ok();
        let b_docs: u64 = if rows_before == 0 { 0 } else { rows_before - 1 };
        assert_eq!(run.count("documents"), 29 + b_docs, "{}", run.describe());
        d.ndup()
            .args(["dedup", dir, "-o", "kept.parquet", "--partial-input"])
            .args(FIELDS)
            .ok();
        let kept = ParquetRecordBatchReaderBuilder::try_new(
            File::open(d.path().join("kept.parquet")).unwrap(),
        )
        .unwrap();
        // One row of each family of three: 10 of a, and 7 of b's first 20 rows.
        let want = if rows_before == 0 { 10 } else { 10 + 7 };
        assert_eq!(kept.metadata().file_metadata().num_rows(), want);
    }
}

/// A file named `.parquet` that is not Parquet was read as JSON lines (or as an empty file):
/// it is named, and skipped, as not Parquet. A Parquet file is read as Parquet whatever its
/// name when it is read as records.
#[test]
fn a_file_named_parquet_that_is_not_parquet_is_named_so() {
    let d = Dir::new();
    write(
        &d.path().join("ds/a.parquet"),
        &rows(30),
        Compression::SNAPPY,
        10,
    );
    let good = std::fs::read(d.path().join("ds/a.parquet")).unwrap();
    d.create(
        "json.parquet",
        "{\"id\": 1, \"text\": \"a line of JSON\"}\n",
    );
    d.create("empty.parquet", "");
    d.create("headless.parquet", &good[4..]);
    for (name, why) in [
        ("json.parquet", "not a Parquet file (no PAR1 magic)"),
        ("empty.parquet", "empty file"),
        ("headless.parquet", "not a Parquet file (no PAR1 magic)"),
    ] {
        let run = d.scan().arg(name).code(2);
        eqnice!(
            vec![format!("ndup: no document could be read: {name}: {why}")],
            run.stderr_lines()
        );
        std::fs::copy(d.path().join(name), d.path().join("ds").join(name)).unwrap();
    }
    let run = d.scan().arg("ds").args(FIELDS).ok();
    assert_eq!(run.count("documents"), 29);
    assert_eq!(run.count("skipped_unreadable"), 3, "{}", run.describe());
    d.create("sneaky.jsonl", &good);
    let run = d.scan().arg("sneaky.jsonl").args(FIELDS).ok();
    assert_eq!(run.count("documents"), 29);
}

/// Parquet values ignored the record limit: a 17 KB zstd file with one 512 MiB text was
/// signed, and written by `dedup`. A row whose text (and id) is longer than
/// `--max-line-length` is a skipped record, `too-large`, as such a JSON line is.
#[test]
fn a_row_longer_than_the_limit_is_skipped_as_too_large() {
    let d = Dir::new();
    let mut all = rows(30);
    all[4].text = Some("a long text ".repeat(1000));
    write(
        &d.path().join("t.parquet"),
        &all,
        Compression::ZSTD(ZstdLevel::default()),
        10,
    );
    let run = d
        .scan()
        .arg("t.parquet")
        .args(FIELDS)
        .args(["--max-line-length", "4K"])
        .ok();
    assert_eq!(run.count("documents"), 28);
    assert_eq!(run.count("skipped_too_large"), 1);
    assert!(
        run.skips().contains(&(
            "t.parquet:5".into(),
            "too-large".into(),
            "a row of 12004 bytes, longer than the limit of 4096 bytes".into()
        )),
        "{}",
        run.describe()
    );
    d.ndup()
        .args([
            "dedup",
            "t.parquet",
            "-o",
            "kept.parquet",
            "--max-line-length",
            "4K",
        ])
        .args(FIELDS)
        .ok();
    let kept = ParquetRecordBatchReaderBuilder::try_new(
        File::open(d.path().join("kept.parquet")).unwrap(),
    )
    .unwrap();
    for batch in kept.build().unwrap() {
        let batch = batch.unwrap();
        let texts = batch.column_by_name("content").unwrap().as_string::<i32>();
        assert!(texts.iter().flatten().all(|t| t.len() < 4096));
    }
}

/// Thrift compact encoding, to write a Parquet footer by hand.
fn varint(mut n: u64, out: &mut Vec<u8>) {
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// A Parquet file of no rows whose schema is `levels` groups nested one in the other around a
/// string column: a few kilobytes that overflowed the stack of the Parquet crate's schema
/// conversion, which recurses once a level.
fn deep_schema(levels: usize) -> Vec<u8> {
    const I32: u8 = 5;
    let element = |out: &mut Vec<u8>, name: &str, group: bool| {
        if group {
            out.push(0x30 | I32); // 3: repetition_type
        } else {
            out.extend([0x10 | I32, 12, 0x20 | I32]); // 1: type BYTE_ARRAY, 3: repetition
        }
        out.push(2); // REQUIRED (zigzag 1)
        out.push(0x18); // 4: name
        varint(name.len() as u64, out);
        out.extend_from_slice(name.as_bytes());
        // 5: num_children 1 for a group, 6: converted_type UTF8 for the column.
        out.extend([
            if group { 0x10 | I32 } else { 0x20 | I32 },
            if group { 2 } else { 0 },
        ]);
        out.push(0);
    };
    let mut meta = vec![0x10 | I32, 2, 0x19]; // 1: version 1, 2: schema, a list of structs
    meta.push(0xfc);
    varint(levels as u64 + 2, &mut meta);
    element(&mut meta, "schema", true);
    for _ in 0..levels {
        element(&mut meta, "a", true);
    }
    element(&mut meta, "text", false);
    meta.extend([0x16, 0, 0x19, 0x0c, 0]); // 3: num_rows 0, 4: no row groups, end
    let mut file = b"PAR1".to_vec();
    file.extend_from_slice(&meta);
    file.extend_from_slice(&(meta.len() as u32).to_le_bytes());
    file.extend_from_slice(b"PAR1");
    file
}

/// A schema nested 1,500 levels deep aborted the process (stack overflow) in every command that
/// reads Parquet, losing the good shards beside it: the file is skipped, named, and the others
/// are read.
#[test]
fn a_schema_nested_too_deep_skips_its_file_and_the_others_are_read() {
    let d = Dir::new();
    write(
        &d.path().join("ds/b.parquet"),
        &rows(30),
        Compression::SNAPPY,
        10,
    );
    d.create("ds/a.parquet", deep_schema(1500));
    let said = |run: &super::util::Run| {
        assert!(
            run.stderr
                .contains("ds/a.parquet: schema nested deeper than 64 levels"),
            "{}",
            run.describe()
        );
    };
    let run = d.scan().arg("ds").args(FIELDS).ok();
    said(&run);
    assert_eq!(run.count("documents"), 29);
    assert!(
        run.skips().contains(&(
            "ds/a.parquet".into(),
            "unreadable".into(),
            "schema nested deeper than 64 levels".into()
        )),
        "{}",
        run.describe()
    );
    let run = d
        .ndup()
        .args(["dedup", "ds", "-o", "kept.parquet"])
        .args(FIELDS)
        .ok();
    said(&run);
    let kept = ParquetRecordBatchReaderBuilder::try_new(
        File::open(d.path().join("kept.parquet")).unwrap(),
    )
    .unwrap();
    // Families of three near duplicates: one row of each is kept.
    assert_eq!(kept.metadata().file_metadata().num_rows(), 10);
    let run = d
        .ndup()
        .args(["sign", "ds", "--out", "shards"])
        .args(FIELDS)
        .ok();
    said(&run);
    let run = d
        .ndup()
        .args(["index", "build", "ds", "--index", "i.db"])
        .args(FIELDS)
        .ok();
    said(&run);
    assert_eq!(run.summary()["documents"], 29);
    d.create("deep/part-00000.parquet", deep_schema(5000));
    let run = d.scan().args(["--signatures", "deep"]).code(2);
    eqnice!(
        vec!["ndup: deep/part-00000.parquet: schema nested deeper than 64 levels"],
        run.stderr_lines()
    );
    // 64 levels are read.
    d.create("ok/a.parquet", deep_schema(63));
    let text = vec!["a"; 63].join(".") + ".text";
    let run = d.scan().args(["ok", "--text-field", &text]).code(2);
    assert!(
        run.stderr.ends_with("ndup: no document could be read\n"),
        "{}",
        run.describe()
    );
}

/// pandas writes categoricals as dictionaries, with keys as narrow as each batch allows: they
/// were refused as text or id columns (and a row group holding more values than 8-bit keys
/// number made the Parquet crate panic); they are read through their values. An id column of
/// another type is named with its type rather than ignored or blamed on the file.
#[test]
fn dictionary_columns_are_read_and_other_id_types_named() {
    use arrow_array::DictionaryArray;
    use arrow_array::types::Int8Type;
    let d = Dir::new();
    let all = rows(200);
    let schema = Arc::new(Schema::new(vec![
        Field::new(
            "id",
            DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8)),
            false,
        ),
        Field::new(
            "text",
            DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8)),
            true,
        ),
    ]));
    let mut w = ArrowWriter::try_new(
        File::create(d.path().join("cat.parquet")).unwrap(),
        schema.clone(),
        None,
    )
    .unwrap();
    // Two batches of 100 rows: one row group whose dictionaries hold 200 values.
    for part in all.chunks(100) {
        let ids: DictionaryArray<Int8Type> = part
            .iter()
            .map(|r| format!("c{}", r.id))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str)
            .collect();
        let texts: DictionaryArray<Int8Type> = part.iter().map(|r| r.text.as_deref()).collect();
        let batch =
            RecordBatch::try_new(schema.clone(), vec![Arc::new(ids), Arc::new(texts)]).unwrap();
        w.write(&batch).unwrap();
    }
    w.close().unwrap();
    write_jsonl(&d, "all.jsonl", &all);
    let from_parquet = d.scan().arg("cat.parquet").ok();
    assert_eq!(from_parquet.count("documents"), 199);
    assert_eq!(
        from_parquet.skips()[0].0,
        "cat.parquet:101",
        "{}",
        from_parquet.describe()
    );
    let pairs = from_parquet.pair_ids();
    assert!(pairs.len() > 50, "{}", from_parquet.describe());
    assert!(
        pairs
            .iter()
            .all(|(a, b)| a.starts_with('c') && b.starts_with('c'))
    );
    let from_jsonl = d
        .scan()
        .arg("all.jsonl")
        .args(["--id-field", "meta.id", "--text-field", "content"])
        .ok();
    assert_eq!(from_jsonl.pairs().len(), pairs.len());
    // dedup writes them, with 32-bit keys.
    d.ndup()
        .args(["dedup", "cat.parquet", "-o", "kept.parquet"])
        .ok();
    let kept = ParquetRecordBatchReaderBuilder::try_new(
        File::open(d.path().join("kept.parquet")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        kept.schema().field(1).data_type(),
        &DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
    );
    let n = kept.metadata().file_metadata().num_rows();
    assert!(n > 50 && n < 199, "{n}");

    // Ids of a type that names nothing: the file is skipped with the column and its type.
    let texts: StringArray = all[..10].iter().map(|r| r.text.as_deref()).collect();
    let scores: Float64Array = all[..10].iter().map(|r| Some(r.score)).collect();
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(scores) as ArrayRef),
        ("text", Arc::new(texts) as ArrayRef),
    ])
    .unwrap();
    let mut w = ArrowWriter::try_new(
        File::create(d.path().join("float.parquet")).unwrap(),
        batch.schema(),
        None,
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let run = d.scan().args(["float.parquet", "cat.parquet"]).ok();
    assert_eq!(run.count("documents"), 199);
    assert!(
        run.stderr
            .contains("ndup: float.parquet: column `id` is Float64, not strings or integers\n"),
        "{}",
        run.describe()
    );
    let run = d.scan().arg("float.parquet").code(2);
    eqnice!(
        vec![
            "ndup: no document could be read: float.parquet: column `id` is Float64, not strings \
             or integers"
        ],
        run.stderr_lines()
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
