"""The Spark job against ndup on one machine: same pairs, same clusters, same kept documents.

A generated corpus of 3,000 documents with planted near-duplicates, exact copies, copies equal
once normalized, empty documents, a boilerplate group larger than --max-bucket (so the star rule
is used), and, in the JSON lines, blank and malformed lines and CRLF line ends; split into four
unequal shards, and Spark's input splits made small so that files are cut into several
partitions (line numbers and document numbers must cross them). The job runs in local[2] on
JSON lines, on Parquet shards (snappy and zstd, the id nested in a struct, and columns as pandas
writes them: nanosecond timestamps, unsigned integers, a categorical, a dotted name, names that
differ only in case) and on a Parquet dataset with unsigned ids through Spark's writer, and must
give exactly:

- the pairs of `ndup scan --verify signature` (ids and estimates),
- the clusters of `ndup scan --clusters --verify signature`,
- the kept documents of `ndup dedup --verify signature` (the JSON lines byte for byte, in order;
  the Parquet rows with their columns, and the schema with the Arrow writer),
- the documents, numbers and lines of `ndup sign`.

Bad arguments and inputs are refused before any work, in one line: checked without Spark where
they can be, else in one Spark session of this process, not by more runs of the job.

Run: `bash spark/ci.sh`, or with the venv active `NDUP_BIN=target/debug/ndup pytest spark`.
"""

from __future__ import annotations

import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile
import types
from collections import defaultdict

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import gen_corpus  # noqa: E402
import ndup_spark  # noqa: E402

MAX_BUCKET = "50"  # the boilerplate group (60 copies) is larger: star buckets


def ndup_bin() -> str:
    for cand in (os.environ.get("NDUP_BIN"), os.path.join(ROOT, "target/release/ndup"),
                 os.path.join(ROOT, "target/debug/ndup")):
        if cand and os.path.exists(cand):
            return cand
    pytest.fail("no ndup binary: build it with `cargo build` or set NDUP_BIN")


def ndup(*args: str, cwd: str, check: bool = True) -> str:
    r = subprocess.run([ndup_bin(), *args], cwd=cwd, capture_output=True, text=True)
    if not check:
        return r.stderr
    assert r.returncode == 0, r.stderr
    return r.stdout


def spark_job(*args: str, cwd: str, check: bool = True, ndup_path: str | None = None,
              spark: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
    cmd = [sys.executable, os.path.join(HERE, "ndup_spark.py"), *args, "--ndup",
           ndup_path or ndup_bin()]
    if spark:
        cmd += ["--master", "local[2]", "--shuffle-partitions", "4"]
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    if check:
        assert r.returncode == 0, r.stderr[-5000:]
    return r


def refused(capsys, *args: str, ndup_path: str | None = None) -> str:
    """The job's one-line refusal (exit status 2, no traceback) of `args`, before Spark starts:
    `main` in this process, as the command runs it."""
    capsys.readouterr()
    assert ndup_spark.main([*args, "--ndup", ndup_path or ndup_bin()]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ndup-spark: "), err
    return err[len("ndup-spark: "):].strip()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpus")
    c = gen_corpus.generate(3000, seed=11, boilerplate=60)
    jsonl = gen_corpus.write_jsonl(c, str(d / "j"), 4, damage=True)
    gen_corpus.write_parquet(c, str(d / "p"), 4, nested_id=True, row_group=100, extra=True)
    # A dataset as Spark and Hadoop leave them, with shards in a hidden and in a `_temporary`
    # directory (neither read: names starting with `.` or `_` are left out, as Spark does).
    gen_corpus.write_parquet(c, str(d / "p2"), 4, row_group=150, extra=True, uint_ids=True,
                             names=["shard-0.parquet", "shard-1.parquet",
                                    "_temporary/0/shard-2.parquet", ".hidden/shard-3.parquet"])
    open(d / "p2" / "_SUCCESS", "w").close()
    open(d / "p2" / ".shard-0.parquet.crc", "w").close()
    return {"dir": str(d), "jsonl": [os.path.relpath(p, d) for p in jsonl], "corpus": c}


def scan_pairs(out: str) -> set:
    return {(r["a"], r["b"], r["estimate"]) for r in map(json.loads, out.splitlines())
            if r["type"] == "pair"}


def scan_clusters(out: str) -> set:
    return {frozenset(r["members"]) for r in map(json.loads, out.splitlines())
            if r["type"] == "cluster"}


def check_identical(d: str, out: str, inputs: list[str], extra: list[str], keep: str,
                    min_pairs: int = 1000) -> dict:
    """Compares the job's output in `out` with ndup's on `inputs`; returns the job's metrics."""
    common = [*inputs, *extra, "--verify", "signature", "--max-bucket", MAX_BUCKET, "-q"]
    pairs = scan_pairs(ndup("scan", *common, "--format", "jsonl", cwd=d))
    clusters = scan_clusters(ndup("scan", *common, "--clusters", "--format", "jsonl", cwd=d))

    job_pairs = pq.read_table(os.path.join(d, out, "pairs")).to_pylist()
    assert len(pairs) > min_pairs
    assert {(r["a"], r["b"], r["estimate"]) for r in job_pairs} == pairs
    assert all(r["a"] < r["b"] for r in job_pairs)

    rows = pq.read_table(os.path.join(d, out, "clusters")).to_pylist()
    by_label = defaultdict(set)
    for r in rows:
        if r["scan_cluster"] is not None:
            by_label[r["scan_cluster"]].add(r["scan_id"])
    assert {frozenset(m) for m in by_label.values()} == clusters
    assert all(label == min(m) for label, m in by_label.items())

    # Every record, numbered and named as `ndup sign --ids as-read` (and `ndup dedup`) does;
    # named as `ndup sign` (and `ndup scan`) does, less the records a scan skips.
    ndup("sign", *inputs, *extra, "--ids", "as-read", "--out", os.path.join(out, "sign-as-read"),
         "-q", cwd=d)
    signed = pq.read_table(os.path.join(d, out, "sign-as-read"),
                           columns=["doc", "id", "source", "line"]).to_pylist()
    assert [(r["doc"], r["id"], r["source"], r["line"]) for r in rows] == [
        (r["doc"], r["id"], r["source"], r["line"]) for r in signed]
    ndup("sign", *inputs, *extra, "--out", os.path.join(out, "sign"), "-q", cwd=d)
    signed = pq.read_table(os.path.join(d, out, "sign"), columns=["id", "source", "line"])
    assert [(r["source"], r["line"], r["scan_id"]) for r in rows if r["scan_id"] is not None] == [
        (r["source"], r["line"], r["id"]) for r in signed.to_pylist()]

    # Dedup clusters: one kept per cluster, labelled by its smallest id (ids as read: a label
    # names one cluster only when no two records share an id).
    per_cluster = defaultdict(list)
    for r in rows:
        per_cluster[r["cluster"]].append(r)
    if len({r["id"] for r in rows}) < len(rows):
        return json.load(open(os.path.join(d, out, "metrics.json")))
    for label, members in per_cluster.items():
        assert label == min(m["id"] for m in members)
        assert sum(m["keep"] for m in members) == 1
        kept = next(m["id"] for m in members if m["keep"])
        assert all(m["kept"] == kept for m in members)
        assert all((m["reason"] is None) == m["keep"] for m in members)
    return json.load(open(os.path.join(d, out, "metrics.json")))


def test_jsonl_shards_give_ndup_results(corpus):
    d = corpus["dir"]
    # Splits of about 150 KB: each shard file is cut into several partitions.
    spark_job(*corpus["jsonl"], "--out", "out-j", "--max-bucket", MAX_BUCKET,
              "--keep", "longest", "--max-partition-bytes", "150000", cwd=d)
    m = check_identical(d, "out-j", corpus["jsonl"], [], "longest")
    assert m["counts"]["splits"] > len(corpus["jsonl"]), "files were not split"
    assert m["counts"]["oversized_buckets"] > 0, "the star rule was not used"

    ndup("dedup", *corpus["jsonl"], "--verify", "signature", "--max-bucket", MAX_BUCKET,
         "--keep", "longest", "-o", "ndup-dedup.jsonl", "-q", cwd=d)
    expected = open(os.path.join(d, "ndup-dedup.jsonl"), "rb").read()
    got = b"".join(open(p, "rb").read()
                   for p in sorted(glob.glob(os.path.join(d, "out-j", "dedup", "part-*"))))
    assert got == expected  # the kept records, byte for byte, in input order
    kept = {json.loads(line)["id"] for line in expected.decode().splitlines()}
    rows = pq.read_table(os.path.join(d, "out-j", "clusters")).to_pylist()
    assert {r["id"] for r in rows if r["keep"]} == kept
    assert len(kept) < 2600 and m["counts"]["dropped_exact"] > 100


def test_parquet_shards_give_ndup_results(corpus):
    """Parquet as pandas writes it: the columns beside the text and the id (a nanosecond
    timestamp, an unsigned integer, a categorical, `meta.url`, and `Text`/`ID`, which Spark would
    take for `text`/`id` were it not case-sensitive) come out with the input's exact schema;
    rows whose text and id are longer together than --max-line-length are skipped by ndup's
    rule (text and id bytes, not the JSON line the job pipes)."""
    d = corpus["dir"]
    limit = 1400
    # The rule matters here: some rows are short enough, but not as JSON lines.
    c = corpus["corpus"]
    rows = [(len(t.encode()) + len(i.encode()), len(json.dumps({"text": t, "id": i}).encode()))
            for i, t in zip(c.ids, c.texts)]
    assert any(b <= limit < j for b, j in rows) and any(b > limit for b, _ in rows)
    extra = ["--id-field", "meta.id"]
    r = spark_job("p", *extra, "--out", "out-p", "--max-bucket", MAX_BUCKET, "--keep", "shortest",
                  "--max-partition-bytes", "60000", "--sign-args", f"--max-line-length {limit}",
                  "--quiet", cwd=d)
    assert r.stderr == ""  # --quiet: not even Spark's start-up notices
    m = check_identical(d, "out-p", ["p"], [*extra, "--max-line-length", str(limit)], "shortest")
    assert m["counts"]["splits"] > 4
    assert m["parquet_writer"] == "arrow"

    ndup("dedup", "p", *extra, "--max-line-length", str(limit), "--verify", "signature",
         "--max-bucket", MAX_BUCKET, "--keep", "shortest", "-o", "ndup-dedup.parquet", "-q", cwd=d)
    expected = pq.read_table(os.path.join(d, "ndup-dedup.parquet"))
    got = pq.read_table(os.path.join(d, "out-p", "dedup"))
    assert got.schema.equals(expected.schema, check_metadata=True), (got.schema, expected.schema)
    assert str(got.schema.field("seen").type) == "timestamp[ns]"
    assert got.to_pylist() == expected.to_pylist()  # every column of the kept rows, in order


def test_parquet_dataset_through_spark_in_dedup_mode(corpus):
    """--mode dedup, --keep first, --parquet-writer spark, on a dataset given with one of its
    shards again (read once, as ndup reads it), with shards in hidden and `_temporary`
    directories (left out, by both), and unsigned 64-bit ids (some above the largest signed one)."""
    d = corpus["dir"]
    spark_job("p2", "p2/shard-0.parquet", "--out", "out-f", "--mode", "dedup",
              "--parquet-writer", "spark", "--max-bucket", MAX_BUCKET, cwd=d)
    ndup("dedup", "p2", "p2/shard-0.parquet", "--verify", "signature", "--max-bucket",
         MAX_BUCKET, "-o", "ndup-first.parquet", "-q", cwd=d)

    def values(t: pa.Table) -> list:
        # Spark's writer: unsigned 64-bit numbers become decimals, nanosecond timestamps
        # numbers, categoricals their values (see docs/scale-out.md).
        seen = t.schema.get_field_index("seen")
        t = t.set_column(seen, "seen", t.column("seen").cast(pa.int64()))
        return [{k: int(v) if k in ("id", "words") else v for k, v in r.items()}
                for r in t.to_pylist()]

    expected = pq.read_table(os.path.join(d, "ndup-first.parquet"))
    got = pq.read_table(os.path.join(d, "out-f", "dedup"))
    assert got.schema.names == expected.schema.names
    assert values(got) == values(expected)
    assert max(expected.column("id").to_pylist()) >= 1 << 63
    rows = pq.read_table(os.path.join(d, "out-f", "clusters")).to_pylist()
    assert rows[0]["source"] == "p2/shard-0.parquet"
    assert rows[-1]["source"] == "p2/shard-1.parquet"
    assert {r["source"] for r in rows} == {"p2/shard-0.parquet", "p2/shard-1.parquet"}
    # First: the kept document of a cluster is its earliest.
    first = {}
    for r in rows:
        first.setdefault(r["cluster"], r["doc"])
        first[r["cluster"]] = min(first[r["cluster"]], r["doc"])
    assert all(r["keep"] == (r["doc"] == first[r["cluster"]]) for r in rows)


def test_ids_named_over_the_whole_input(tmp_path):
    """Ids decided over all partitions, as ndup decides them in one run: records without an id
    and with a null one (named by their global line), a real id equal to another record's line
    number (the made-up name gives way: `c.jsonl:301`, taken too, so `c.jsonl:301#2`), an id
    repeated in the same partition and in a later one (scan skips the later records, dedup keeps
    them). Against `ndup scan --clusters`, `ndup dedup` and `ndup sign` on the same file.

    And how the job is run: the file given twice (read once), a byte-order mark and `\\r\\r\\n`
    line ends (written back as ndup writes them), an `ndup.toml` in the working directory (which
    ndup on the executors must not read: the reference runs name an empty one), `--ndup` and a
    --stopwords file as relative paths, and --out as a `file://` URI."""
    c = gen_corpus.generate(400, seed=3)
    records = [{"id": i, "text": t} for i, t in zip(c.ids, c.texts)]
    records[300] = {"text": records[300]["text"]}  # line 301, no id
    records[250]["id"] = None  # line 251, a null id
    records[10]["id"] = "301"  # a real id equal to line 301's made-up name
    records[20]["id"] = "c.jsonl:301"  # and to its first other name
    records[6]["id"] = records[5]["id"]  # repeated in one partition
    records[350] = {"id": records[100]["id"], "text": records[100]["text"]}  # and in another
    records[351] = {"text": records[100]["text"]}  # a copy without an id
    ends = {3: b"\r\r\n", 4: b"\r\n", 399: b"\r"}
    with open(tmp_path / "c.jsonl", "wb") as f:
        f.write(b"\xef\xbb\xbf")
        for k, r in enumerate(records):
            f.write(json.dumps(r).encode() + ends.get(k, b"\n"))
    d = str(tmp_path)
    with open(tmp_path / "ndup.toml", "w") as f:
        f.write("num-perm = 64\nseed = 3\n")
    open(tmp_path / "empty.toml", "w").close()
    open(tmp_path / "sw.txt", "w").write("the\nof\n")
    os.symlink(ndup_bin(), tmp_path / "ndup")
    before = set(glob.glob(os.path.join(tempfile.gettempdir(), "ndup-sign-*")))
    spark_job("c.jsonl", "./c.jsonl", "--out", f"file://{d}/out", "--max-bucket", MAX_BUCKET,
              "--max-partition-bytes", "50000", "--sign-args", "--stopwords sw.txt",
              cwd=d, ndup_path="./ndup")
    assert set(glob.glob(os.path.join(tempfile.gettempdir(), "ndup-sign-*"))) == before
    m = check_identical(d, "out", ["c.jsonl"], ["--config", "empty.toml"], "first", min_pairs=100)
    assert m["counts"]["splits"] > 3 and m["params"]["num_perm"] == 128
    rows = {r["line"]: r for r in pq.read_table(os.path.join(d, "out", "clusters")).to_pylist()}
    assert (rows[301]["id"], rows[301]["scan_id"]) == ("301", "c.jsonl:301#2")
    assert (rows[251]["id"], rows[251]["scan_id"]) == ("251", "251")
    assert rows[351]["scan_id"] is None and rows[351]["id"] == records[100]["id"]

    ndup("dedup", "c.jsonl", "--config", "empty.toml", "--verify", "signature", "--max-bucket",
         MAX_BUCKET, "-o", "ndup-dedup.jsonl", "-q", cwd=d)
    expected = open(os.path.join(d, "ndup-dedup.jsonl"), "rb").read()
    assert expected.startswith(b"\xef\xbb\xbf{")
    got = b"".join(open(p, "rb").read()
                   for p in sorted(glob.glob(os.path.join(d, "out", "dedup", "part-*"))))
    assert got == expected


def test_arguments_checked_before_spark(tmp_path, capsys, monkeypatch):
    """What needs neither Spark nor the corpus: refused in one line (exit 2) before Spark
    starts, as ndup refuses it."""
    d = str(tmp_path)
    monkeypatch.chdir(tmp_path)
    open(tmp_path / "a.jsonl", "w").write('{"text": "a"}\n')
    job = ["a.jsonl", "--out", "o"]
    # The command itself: one line on stderr, exit status 2.
    r = spark_job(*job, "--max-bucket", "1", cwd=d, check=False, spark=False)
    assert (r.returncode, r.stderr) == (2, "ndup-spark: --max-bucket must be at least 2\n")
    assert refused(capsys, *job, "--sign-args", "--bogus 'x") == (
        "--sign-args: No closing quotation in \"--bogus 'x\"")
    assert refused(capsys, *job, "--ndup-threads", "5000") == (
        "--ndup-threads: at most 1024 threads, not 5000")
    for n in ("0", "-5"):
        assert refused(capsys, *job, "--max-bucket", n) == "--max-bucket must be at least 2"
    # ndup's own refusal, in one line.
    assert refused(capsys, *job, "--sign-args=--shingle bogus") == (
        "ndup sign: invalid value 'bogus' for '--shingle <SHINGLE>'")
    assert refused(capsys, *job, "--sign-args", "-j 4").startswith("--sign-args: -j is not for")
    assert refused(capsys, *job, "--sign-args", "--config x.toml").startswith(
        "--sign-args: --config is not for")
    # Relative paths are taken from the working directory (ndup runs in one of its own).
    assert refused(capsys, *job, "--sign-args", "--stopwords none.txt") == (
        f"ndup sign: {d}/none.txt: cannot read stop-word list: No such file or directory")
    assert refused(capsys, *job, ndup_path="./nd") == (
        f"cannot run ndup ({d}/nd): No such file or directory; give its path with --ndup")
    # An ndup from before `sign --ids`.
    old = tmp_path / "old-ndup"
    old.write_text("#!/bin/sh\necho \"error: unexpected argument '--ids' found\" >&2\n"
                   "echo >&2\necho 'Usage: ndup sign' >&2\nexit 2\n")
    old.chmod(0o755)
    assert "is too old for the job" in refused(capsys, *job, ndup_path=str(old))

    J = ndup_spark
    s = J.parse_sign_args("-k 5 --stopwords=sw.txt --max-line-length 1.5K --no-nfkc", cwd="/w")
    assert (s.flags, s.stopwords, s.max_line) == (["-k", "5", "--no-nfkc"], "/w/sw.txt", 1536)
    assert J.parse_size("64M") == 64 << 20 and J.parse_size("4096") == 4096
    for name, parquet, jsonl in [("DATA.PARQUET", True, False), ("a.JSONL.GZ", False, True),
                                 ("x.ndjson.zstd", False, True), ("a.json", False, False)]:
        assert (J.is_parquet_name(name), J.is_jsonl_name(name)) == (parquet, jsonl)

    # A dotted --id-field names a column of that name, as ndup reads it: ndup's ids are the
    # column's values, and the job finds the same column.
    t = pa.table({"text": ["a b c d e", "x y z w v"], "meta.url": ["u1", "u2"],
                  "meta": pa.array([{"id": "m1"}, {"id": "m2"}])})
    pq.write_table(t, tmp_path / "f.parquet")
    ndup("sign", "f.parquet", "--id-field", "meta.url", "--ids", "as-read", "--out", "s", "-q",
         cwd=d)
    assert pq.read_table(tmp_path / "s", columns=["id"]).column("id").to_pylist() == ["u1", "u2"]
    assert J.find_column(t.schema, "meta.url")[0] == ["meta.url"]
    assert J.find_column(t.schema, "meta.id")[0] == ["meta", "id"]
    assert J.find_column(t.schema, "meta")[0] == ["meta"]  # a struct: not an id
    assert not J.is_id_type(J.find_column(t.schema, "meta")[1])


@pytest.fixture(scope="module")
def session():
    spark = ndup_spark.start_spark(ndup_spark.parse_args(["x", "--out", "o", "--master",
                                                          "local[1]"]))
    yield spark
    spark.stop()


def test_inputs_and_out_checked_before_the_work(tmp_path, session, monkeypatch):
    """Inputs and --out as the job sees them before its first Spark job, through Hadoop's
    FileSystem (one Spark session, in this process): refusals in one line naming the file and
    the reason; files ndup skips whole, skipped with the reason; ndup's reasons when no
    document can be read."""
    J = ndup_spark
    hadoop = J.Hadoop(session)
    # Relative names, as the job's: Hadoop takes them from its working directory (the JVM's).
    monkeypatch.chdir(tmp_path)
    hadoop.fs(hadoop.Path("file:///")).setWorkingDirectory(hadoop.Path(f"file://{tmp_path}"))

    def inputs(*argv: str):
        try:
            return J.list_inputs(session, J.parse_args([*argv, "--out", "o"]))
        except J.JobError as e:
            return str(e)

    open("a.jsonl", "w").write('{"text": "a"}\n')
    open("b.jsonl.zst", "wb").write(b"\x28\xb5\x2f\xfd" + b"\0" * 8)
    open("c.jsonl", "wb").write(gzip.compress(b'{"text": "a"}\n'))
    open("e.jsonl.gz", "wb").write(gzip.compress(b'\xef\xbb\xbf{"text": "a"}\n'))
    open("f.txt", "w").write("x")
    pq.write_table(pa.table({"text": ["x"]}), "DATA.PARQUET")
    for d, b in (("p3", {"extra": [1]}), ("p4", {"id": [1]})):
        os.makedirs(d)
        pq.write_table(pa.table({"text": ["x"], "id": ["1"]}), f"{d}/a.parquet")
        pq.write_table(pa.table({"text": ["x"], "id": ["1"], **b}), f"{d}/b.parquet")
    pq.write_table(pa.table({"body": ["x"]}), "nt.parquet")
    pq.write_table(pa.table({"text": ["x"], "id": [1.5]}), "fl.parquet")

    assert inputs("--format", "parquet", "a.jsonl") == (
        "no document could be read: a.jsonl: not a Parquet file (no PAR1 magic)")
    assert inputs("b.jsonl.zst").startswith("b.jsonl.zst: zstd-compressed JSON lines, which Spark")
    assert inputs("c.jsonl").startswith("c.jsonl: gzip-compressed, but Spark decompresses only")
    assert inputs("f.txt").startswith("f.txt: neither JSON lines (.jsonl, .ndjson) nor Parquet")
    assert inputs("--format", "jsonl", "DATA.PARQUET").startswith("DATA.PARQUET: a Parquet file")
    assert inputs("p3") == ("p3/b.parquet: its columns differ from those of p3/a.parquet: "
                            "deduplicate them separately (a column `extra` more)")
    assert inputs("p4") == ("p4/b.parquet: its columns differ from those of p4/a.parquet: "
                            "deduplicate them separately (`id`: int64 here, string there)")
    assert inputs("nosuch") == "nosuch: no such file or directory"
    os.makedirs("job/_temporary/0")
    open("job/_temporary/0/part-0.parquet", "w").close()
    open("job/_SUCCESS", "w").close()
    assert inputs("job") == ("no input files: only hidden or `_` entries (_SUCCESS and 1 more), "
                             "which a walk skips as Spark does")
    assert inputs("s3://bucket/x.jsonl").startswith("s3://bucket/x.jsonl: ")
    i = inputs("DATA.PARQUET")
    assert (i.fmt, [f.name for f in i.files]) == ("parquet", ["DATA.PARQUET"])
    i = inputs("e.jsonl.gz", "a.jsonl", "./a.jsonl")
    assert [(f.name, f.bom) for f in i.files] == [("e.jsonl.gz", True), ("a.jsonl", False)]
    i = inputs("nt.parquet", "DATA.PARQUET", "fl.parquet")
    assert [f.name for f in i.files] == ["DATA.PARQUET"] and i.several
    assert i.skipped == [
        ("nt.parquet", "no column `text` for the text (the columns: body); choose one with "
                       "--text-field"),
        ("fl.parquet", "column `id` is double, not strings or integers")]

    open("file", "w").close()
    for out, why in (("file", "--out file: exists and is not a directory"),
                     ("file/sub", f"--out file/sub: file:{tmp_path}/file is not a directory")):
        with pytest.raises(J.JobError) as e:
            J.check_out(hadoop, out)
        assert str(e.value) == why
    # What an earlier run left goes first, nothing else.
    os.makedirs("old/dedup")
    for name in ("old/metrics.json", "old/dedup/part-0", "old/notes.txt"):
        open(name, "w").close()
    assert J.check_out(hadoop, f"file://{tmp_path}/old") == f"file:{tmp_path}/old"
    assert len(os.listdir("old")) == 3  # checked only
    J.check_out(hadoop, f"file://{tmp_path}/old", clean=True)
    assert os.listdir("old") == ["notes.txt"]
    hadoop.write(hadoop.fs(hadoop.Path("file:///")), hadoop.Path(f"file://{tmp_path}/old/m.json"),
                 b'{"a": 1}')
    assert open("old/m.json").read() == '{"a": 1}'

    # No document: the first reasons, as ndup gives them, and how many more.
    open("w.jsonl", "w").write("".join('{"id": %d, "body": "x"}\n' % k for k in range(5)) + "[]\n")
    args = J.parse_args(["w.jsonl", "--out", "o", "--text-field", "body2"])
    splits = [types.SimpleNamespace(file=0, block=0, n_lines=6, n_blank=0)]
    said = J.no_documents(session, J.list_inputs(session, args), args, ndup_bin(),
                          J.SignArgs([]), splits)
    assert said == ndup("scan", "w.jsonl", "--text-field", "body2", cwd=str(tmp_path),
                        check=False).strip().removeprefix("ndup: ")
    pq.write_table(pa.table({"text": pa.array([None, "x" * 10, None, None], pa.string())}),
                   "n.parquet")
    args = J.parse_args(["n.parquet", "--out", "o"])
    splits = [types.SimpleNamespace(file=0, block=0, n_lines=4, n_blank=0)]
    said = J.no_documents(session, J.list_inputs(session, args), args, ndup_bin(),
                          J.SignArgs([], max_line=5), splits)
    assert said == ndup("scan", "n.parquet", "--max-line-length", "5", cwd=str(tmp_path),
                        check=False).strip().removeprefix("ndup: ")
