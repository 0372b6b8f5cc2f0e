//! `ndup sign` and `ndup scan --signatures`: the map stage written as Parquet shards, and phase
//! two run on them, with the same pairs and clusters as a scan of the corpus.

use std::fs::File;

use arrow_array::Array;
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::json;

use super::util::{Dir, Run, wait_ok};
use crate::corpus::{edited, text};

/// A JSON-lines corpus with near-duplicates in families, exact copies and an empty record.
fn corpus(d: &Dir, name: &str) {
    let mut lines = Vec::new();
    for f in 0..40u64 {
        for v in 0..(f % 4 + 1) {
            let t = if v == 0 {
                text(900 + f, 150)
            } else {
                edited(900 + f, 150, v as usize * 2)
            };
            lines.push(json!({"id": format!("f{f}-v{v}"), "text": t}).to_string());
        }
    }
    lines.push(json!({"id": "copy", "text": text(900, 150)}).to_string());
    lines.push(json!({"id": "blank", "text": "  "}).to_string());
    d.create(name, lines.join("\n") + "\n");
}

/// A run's pairs (ids and estimate) and clusters.
type Found = (Vec<(String, String, f64)>, Vec<Vec<String>>);

fn results(run: &Run) -> Found {
    let pairs = run
        .pairs()
        .into_iter()
        .map(|p| (p.a, p.b, p.estimate))
        .collect();
    (pairs, run.clusters())
}

#[test]
fn a_scan_of_the_shards_finds_what_a_scan_of_the_corpus_finds() {
    let d = Dir::new();
    corpus(&d, "c.jsonl");
    let run = d
        .ndup()
        .args(["sign", "c.jsonl", "--out", "shards", "--shard-rows", "30"])
        .ok();
    assert!(
        run.stderr
            .contains("ndup: 102 documents (1 empty), 0 skipped, signed into 4 shards in shards"),
        "{}",
        run.describe()
    );
    for flags in [
        &["--threshold", "0.8"][..],
        &["--threshold", "0.6", "--num-perm", "64"],
    ] {
        if flags.len() > 2 {
            d.ndup()
                .args(["sign", "c.jsonl", "--out", "shards64"])
                .args(flags)
                .ok();
        }
        let dir = if flags.len() > 2 {
            "shards64"
        } else {
            "shards"
        };
        let direct = d
            .scan()
            .args(["c.jsonl", "--verify", "signature"])
            .args(flags)
            .ok();
        let shards = d.scan().args(["--signatures", dir]).args(flags).ok();
        assert!(!direct.pairs().is_empty());
        assert_eq!(results(&shards), results(&direct), "{}", shards.describe());
        let direct = d
            .scan()
            .args(["c.jsonl", "--verify", "signature", "--clusters"])
            .args(flags)
            .ok();
        let shards = d
            .scan()
            .args(["--signatures", dir, "--clusters"])
            .args(flags)
            .ok();
        assert!(direct.clusters().len() >= 10);
        assert_eq!(results(&shards), results(&direct));
        assert_eq!(shards.count("documents"), 102);
        assert_eq!(shards.count("empty"), 1);
    }
}

#[test]
fn files_sign_too_and_shards_are_the_same_whatever_the_threads() {
    let d = Dir::new();
    for i in 0..12u64 {
        d.create(
            &format!("docs/{i:02}.md"),
            edited(40 + i / 3, 120, (i % 3) as usize),
        );
    }
    d.create("docs/logo.png", b"\0PNG");
    d.ndup()
        .args(["-j", "1", "sign", "docs", "--out", "one"])
        .ok();
    d.ndup()
        .args(["-j", "2", "sign", "docs", "--out", "two"])
        .ok();
    let bytes = |dir: &str| std::fs::read(d.path().join(dir).join("part-00000.parquet")).unwrap();
    assert_eq!(bytes("one"), bytes("two"));
    // A shard has the mode of any new file (the umask's), not a temporary file's 0600.
    {
        use std::os::unix::fs::PermissionsExt;
        let mode =
            |p: std::path::PathBuf| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let probe = d.path().join("probe");
        File::create(&probe).unwrap();
        assert_eq!(mode(d.path().join("one/part-00000.parquet")), mode(probe));
    }
    let direct = d.scan().args(["docs", "--verify", "signature"]).ok();
    let shards = d.scan().args(["--signatures", "one"]).ok();
    assert_eq!(results(&shards), results(&direct));
    assert_eq!(shards.count("documents"), 12);
}

/// The columns hold what the module documents: order, ids, origins, lengths, fingerprints,
/// signatures and band keys.
#[test]
fn shard_columns_hold_each_document_in_input_order() {
    const B: &str = "ünï côdé text of its own, long enough to be shingled";
    let d = Dir::new();
    let a = text(5, 80);
    let lines = [
        json!({"id": "a", "text": a}).to_string(),
        json!({"id": "same", "text": format!("  {}", a.to_uppercase())}).to_string(),
        json!({"id": "empty", "text": ""}).to_string(),
        json!({"id": "b", "text": B}).to_string(),
    ];
    d.create("c.jsonl", lines.join("\n") + "\n");
    d.ndup()
        .args([
            "sign", "c.jsonl", "--out", "s", "--bands", "16", "--rows", "8",
        ])
        .ok();
    let file = File::open(d.path().join("s/part-00000.parquet")).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let meta = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .unwrap();
    let params = meta.iter().find(|kv| kv.key == "ndup.params").unwrap();
    let params: serde_json::Value = serde_json::from_str(params.value.as_deref().unwrap()).unwrap();
    assert_eq!(
        (params["num_perm"].as_u64(), params["bands"].as_u64()),
        (Some(128), Some(16))
    );
    let batch = builder.build().unwrap().next().unwrap().unwrap();
    assert_eq!(batch.num_rows(), 4);
    let col = |n: &str| batch.column_by_name(n).unwrap().clone();
    let docs: Vec<i64> = col("doc").as_primitive::<Int64Type>().values().to_vec();
    assert_eq!(docs, [0, 1, 2, 3]);
    let ids = col("id");
    let ids: Vec<&str> = (0..4).map(|i| ids.as_string::<i32>().value(i)).collect();
    assert_eq!(ids, ["a", "same", "empty", "b"]);
    let lines = col("line");
    let lines = lines.as_primitive::<Int64Type>();
    assert_eq!(lines.values().to_vec(), [1, 2, 3, 4]);
    assert_eq!(col("source").as_string::<i32>().value(0), "c.jsonl");
    let chars = col("chars");
    let chars = chars.as_primitive::<Int64Type>();
    assert_eq!(chars.value(3), B.chars().count() as i64);
    assert!(B.len() > B.chars().count());
    // Normalization makes "a" and "same" one text: one fingerprint, one signature.
    let prints = col("fingerprint");
    let prints = prints.as_fixed_size_binary();
    assert_eq!(prints.value(0), prints.value(1));
    assert_ne!(prints.value(0), prints.value(3));
    let sigs = col("signature");
    let sigs = sigs.as_list::<i32>();
    assert!(sigs.is_null(2), "the empty document has no signature");
    let sig = |i: usize| sigs.value(i).as_primitive::<Int32Type>().values().to_vec();
    assert_eq!(sig(0).len(), 128);
    assert_eq!(sig(0), sig(1));
    let bands = col("bands");
    let bands = bands.as_list::<i32>();
    let keys = |i: usize| bands.value(i).as_primitive::<Int64Type>().values().to_vec();
    assert_eq!(keys(0).len(), 16);
    assert_eq!(keys(0), keys(1));
    // A band key depends only on its band's slots.
    let (s0, s3) = (sig(0), sig(3));
    for b in 0..16 {
        let same_slots = s0[b * 8..(b + 1) * 8] == s3[b * 8..(b + 1) * 8];
        assert_eq!(keys(0)[b] == keys(3)[b], same_slots, "band {b}");
    }
}

/// `--ids as-read` writes every record as `ndup dedup` names it and says which ids are line
/// numbers; a scan of such shards still names documents as a scan of the corpus does: a later
/// duplicate id skipped, a line number giving way to a real id.
#[test]
fn shards_signed_with_ids_as_read_keep_every_record_and_scan_as_the_corpus_does() {
    let d = Dir::new();
    let t = |v: usize| edited(77, 120, v);
    let lines = [
        json!({"id": "3", "text": t(0)}), // a real id equal to line 3's number
        json!({"text": t(1)}),            // line 2, made up: "2", which line 6 claims
        json!({"text": t(2)}),            // line 3, made up: "3" is taken
        json!({"id": "dup", "text": t(3)}),
        json!({"id": "dup", "text": t(4)}), // a duplicate id
        json!({"id": "2", "text": t(5)}),
        json!({"id": null, "text": t(6)}), // a null id is made up too
    ];
    let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    d.create("c.jsonl", lines.join("\n") + "\n");
    d.ndup()
        .args(["sign", "c.jsonl", "--out", "read", "--ids", "as-read"])
        .args(["--threshold", "0.5"])
        .ok();
    let file = File::open(d.path().join("read/part-00000.parquet")).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let rule = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .unwrap()
        .iter()
        .find(|kv| kv.key == "ndup.ids")
        .and_then(|kv| kv.value.clone());
    assert_eq!(rule.as_deref(), Some("as-read"));
    let batch = builder.build().unwrap().next().unwrap().unwrap();
    let ids = batch.column_by_name("id").unwrap();
    let ids: Vec<&str> = (0..7).map(|i| ids.as_string::<i32>().value(i)).collect();
    assert_eq!(ids, ["3", "2", "3", "dup", "dup", "2", "7"]);
    let made_up = batch.column_by_name("id_made_up").unwrap().as_boolean();
    let made_up: Vec<bool> = (0..7).map(|i| made_up.value(i)).collect();
    assert_eq!(made_up, [false, true, true, false, false, false, true]);

    // Signed the default way, the shards hold a scan's names, and the duplicate is skipped.
    d.ndup()
        .args(["sign", "c.jsonl", "--out", "unique", "--threshold", "0.5"])
        .ok();
    let args = ["--verify", "signature", "--clusters", "--threshold", "0.5"];
    let direct = d.scan().arg("c.jsonl").args(args).ok();
    let as_read = d.scan().args(["--signatures", "read"]).args(args).ok();
    let unique = d.scan().args(["--signatures", "unique"]).args(args).ok();
    let members = direct.clusters().concat();
    for id in ["3", "c.jsonl:2", "c.jsonl:3", "dup", "2", "7"] {
        assert!(members.iter().any(|m| m == id), "{id} in {members:?}");
    }
    assert_eq!(
        results(&as_read),
        results(&direct),
        "{}",
        as_read.describe()
    );
    assert_eq!(results(&unique), results(&direct));
    assert_eq!(as_read.count("skipped_malformed"), 1);
    assert_eq!(direct.count("skipped_malformed"), 1);
}

#[test]
fn shards_made_or_scanned_with_other_parameters_are_refused() {
    let d = Dir::new();
    corpus(&d, "c.jsonl");
    d.ndup().args(["sign", "c.jsonl", "--out", "a"]).ok();
    d.ndup()
        .args([
            "sign",
            "c.jsonl",
            "--out",
            "b",
            "--num-perm",
            "64",
            "--seed",
            "7",
        ])
        .ok();
    let run = d
        .scan()
        .args(["--signatures", "a", "--num-perm", "64"])
        .code(2);
    eqnice!(
        vec![
            "ndup: a/part-00000.parquet: signed with --num-perm 128, this run uses 64; with \
             --bands 18, this run uses 12; with --rows 7, this run uses 5; sign again, or scan \
             with the flags the shards were signed with"
        ],
        run.stderr_lines()
    );
    let run = d
        .scan()
        .args(["--signatures", "a", "--signatures", "b/part-00000.parquet"])
        .code(2);
    assert!(
        run.stderr.contains(
            "ndup: b/part-00000.parquet: signed with --num-perm 64, part-00000.parquet with 128"
        ),
        "{}",
        run.describe()
    );
    assert!(run.stderr.contains("--seed 7"), "{}", run.describe());
}

#[test]
fn what_sign_and_scan_signatures_refuse() {
    let d = Dir::new();
    corpus(&d, "c.jsonl");
    d.ndup().args(["sign", "c.jsonl", "--out", "s"]).ok();
    let run = d.ndup().args(["sign", "c.jsonl", "--out", "s"]).code(2);
    eqnice!(
        vec![
            "ndup: s: the directory already holds signature shards (part-00000.parquet); \
             remove them or sign into another directory"
        ],
        run.stderr_lines()
    );
    let run = d
        .scan()
        .args(["--signatures", "s", "--verify", "exact"])
        .code(2);
    assert!(
        run.stderr.contains("--verify exact cannot read them"),
        "{}",
        run.describe()
    );
    let run = d.scan().args(["--signatures", "s", "c.jsonl"]).code(2);
    assert!(
        run.stderr.contains("cannot be used with"),
        "{}",
        run.describe()
    );
    d.mkdir("none");
    let run = d.scan().args(["--signatures", "none"]).code(2);
    eqnice!(
        vec!["ndup: none: no signature shards (part-*.parquet) in this directory"],
        run.stderr_lines()
    );
    d.create("fake/part-00000.parquet", "not parquet at all");
    let run = d.scan().args(["--signatures", "fake"]).code(2);
    assert!(
        run.stderr
            .starts_with("ndup: fake/part-00000.parquet: not a Parquet file"),
        "{}",
        run.describe()
    );
    let run = d
        .ndup()
        .args(["sign", "c.jsonl", "--out", "x", "--sketch", "modulo"])
        .code(2);
    assert!(
        run.stderr.contains(
            "invalid value 'modulo' for '--sketch <SKETCH>'\n  [possible values: fss, oph, classic]"
        ),
        "{}",
        run.describe()
    );
    // Verification and the bucket rule belong to the scan of the shards, not to signing.
    for flag in ["--verify", "--max-bucket"] {
        let run = d
            .ndup()
            .args(["sign", "c.jsonl", "--out", "y", flag, "2"])
            .code(2);
        assert!(
            run.stderr
                .contains(&format!("unexpected argument '{flag}'")),
            "{}",
            run.describe()
        );
    }
}

/// A slice of a corpus with no document (every line malformed) left a directory without
/// shards, which `scan --signatures` refuses: the scan of all the slices failed.
#[test]
fn a_slice_with_no_document_gives_an_empty_shard_and_the_slices_scan_together() {
    let d = Dir::new();
    corpus(&d, "c.jsonl");
    d.create("bad.jsonl", "not json\n");
    d.ndup().args(["sign", "c.jsonl", "--out", "s0"]).ok();
    let empty = d.ndup().args(["sign", "bad.jsonl", "--out", "s1"]).ok();
    assert!(empty.stderr.contains("1 skipped"), "{}", empty.describe());
    assert!(d.path().join("s1/part-00000.parquet").exists());
    let both = d
        .scan()
        .args(["--signatures", "s0", "--signatures", "s1"])
        .ok();
    let alone = d.scan().args(["--signatures", "s0"]).ok();
    assert_eq!(results(&both), results(&alone));
    assert_eq!(both.count("documents"), alone.count("documents"));
}

/// `--out -` writes the rows and metadata of the shards as one Arrow IPC stream, for a pipe; a
/// terminal gets a refusal instead of binary.
#[test]
fn sign_out_dash_streams_the_shards_rows_as_arrow() {
    use arrow_ipc::reader::StreamReader;
    let d = Dir::new();
    corpus(&d, "c.jsonl");
    d.ndup()
        .args(["sign", "c.jsonl", "--out", "shards", "--ids", "as-read"])
        .ok();
    let run = d
        .ndup()
        .args(["sign", "c.jsonl", "--out", "-", "--ids", "as-read"])
        .run_limited(8 << 30);
    assert!(run.status.success(), "{}", run.describe(500));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("102 documents (1 empty), 0 skipped, signed into an Arrow stream"),
        "{stderr}"
    );
    let reader = StreamReader::try_new(&run.stdout[..], None).unwrap();
    let meta = reader.schema().metadata().clone();
    assert_eq!(meta["ndup.ids"], "as-read");
    assert_eq!(meta["ndup.format_version"], "1");
    let streamed: Vec<_> = reader.map(|b| b.unwrap()).collect();
    let file = File::open(d.path().join("shards/part-00000.parquet")).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
    let kv = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .unwrap();
    let params = kv.iter().find(|kv| kv.key == "ndup.params").unwrap();
    assert_eq!(Some(&meta["ndup.params"]), params.value.as_ref());
    let stored: Vec<_> = builder.build().unwrap().map(|b| b.unwrap()).collect();
    let concat = |batches: &[arrow_array::RecordBatch]| {
        arrow_select::concat::concat_batches(&batches[0].schema(), batches).unwrap()
    };
    let (streamed, stored) = (concat(&streamed), concat(&stored));
    assert_eq!(streamed.num_rows(), 102);
    assert_eq!(streamed.columns(), stored.columns());

    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("note: no `script` command (util-linux); the terminal is not tested");
        return;
    }
    let out = std::process::Command::new("script")
        .args([
            "-qec",
            &format!("{} sign c.jsonl --out -", super::util::ndup_bin()),
            "/dev/null",
        ])
        .current_dir(d.path())
        .output()
        .unwrap();
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{screen}");
    assert!(
        screen.contains("--out - writes an Arrow IPC stream, not text"),
        "{screen}"
    );
}

/// Shards signed a source at a time held `a.jsonl`'s id-less line 2 as `2`, and a scan of them
/// together named it so, where a scan of `a.jsonl b.jsonl` names it `a.jsonl:2`. Rows of several
/// sources now name a record without an id by its source and line, whichever way it was signed.
#[test]
fn shards_signed_a_source_at_a_time_name_records_as_a_scan_of_all_the_sources() {
    let d = Dir::new();
    let t = |v: usize| edited(78, 120, v);
    let a = [
        json!({"text": t(0)}), // a.jsonl:1 (`1` signed alone, the id b.jsonl has)
        json!({"text": t(1)}), // a.jsonl:2
        json!({"id": "b.jsonl:2", "text": t(2)}), // takes b.jsonl's made-up name first
    ];
    let b = [json!({"id": "1", "text": t(3)}), json!({"text": t(4)})];
    for (name, lines) in [("a.jsonl", &a[..]), ("b.jsonl", &b[..])] {
        let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        d.create(name, lines.join("\n") + "\n");
    }
    let args = ["--verify", "signature", "--threshold", "0.5"];
    // Pairs, then clusters: one run gives either.
    let both = |cmd: &mut super::util::TestCommand| {
        let pairs = cmd.args(args).ok().pair_ids();
        let clusters = cmd.arg("--clusters").ok().clusters();
        (pairs, clusters)
    };
    let direct = both(d.scan().args(["a.jsonl", "b.jsonl"]));
    assert_eq!(direct.0.len(), 10, "{direct:?}");
    let members = direct.1.concat();
    for id in ["a.jsonl:1", "a.jsonl:2", "b.jsonl:2", "1", "b.jsonl:2#2"] {
        assert!(members.iter().any(|m| m == id), "{id} in {members:?}");
    }
    for ids in ["unique", "as-read"] {
        for (input, out) in [("a.jsonl", "sa"), ("b.jsonl", "sb")] {
            let out = format!("{ids}-{out}");
            d.ndup()
                .args(["sign", input, "--out", &out, "--ids", ids])
                .args(["--threshold", "0.5"])
                .ok();
        }
        let shards = both(
            d.scan()
                .args(["--signatures", &format!("{ids}-sa")])
                .args(["--signatures", &format!("{ids}-sb")]),
        );
        assert_eq!(shards, direct, "--ids {ids}");
    }
    // One source alone is named by its lines, as a scan of it alone names it.
    let alone = both(d.scan().args(["--signatures", "unique-sa"]));
    assert_eq!(alone, both(d.scan().arg("a.jsonl")));
    assert!(alone.1.concat().iter().any(|m| m == "2"), "{alone:?}");
}

/// `ndup sign --out - | head -c 10` exited 2 with "Io error: Broken pipe": the Arrow writer's
/// I/O error was turned into text, and the binary no longer saw a closed pipe, which `scan` and
/// `dedup` take for a reader that has seen enough.
#[test]
fn sign_out_dash_into_a_closed_pipe_is_not_an_error() {
    use std::io::Read;
    let d = Dir::new();
    let lines: Vec<String> = (0..20_000)
        .map(|i| {
            json!({"id": i.to_string(), "text": format!("document {i} with words")}).to_string()
        })
        .collect();
    d.create("c.jsonl", lines.join("\n") + "\n");
    let mut child = d.ndup().args(["sign", "c.jsonl", "--out", "-"]).spawn();
    // Read a few bytes, then close the pipe while the stream is far from written.
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 10];
    out.read_exact(&mut first).unwrap();
    drop(out);
    let stderr = wait_ok(&mut child);
    assert!(!stderr.contains("error"), "{stderr}");
}
