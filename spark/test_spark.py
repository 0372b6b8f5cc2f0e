"""The Spark job against ndup on one machine: same pairs, same clusters, same kept documents.

A generated corpus of 3,000 documents with planted near-duplicates, exact copies, copies equal
once normalized, empty documents, a boilerplate group larger than --max-bucket (so the star rule
is used), and, in the JSON lines, blank and malformed lines and CRLF line ends; split into four
unequal shards, and Spark's input splits made small so that files are cut into several
partitions (line numbers and document numbers must cross them). The job runs in local[2] once
on JSON lines and once on Parquet shards (snappy and zstd, the id nested in a struct) and must
give exactly:

- the pairs of `ndup scan --verify signature` (ids and estimates),
- the clusters of `ndup scan --clusters --verify signature`,
- the kept documents of `ndup dedup --verify signature` (the JSON lines byte for byte, in order;
  the Parquet rows with their columns),
- the documents, numbers and lines of `ndup sign`.

Run: `bash spark/ci.sh`, or with the venv active `NDUP_BIN=target/debug/ndup pytest spark`.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
from collections import defaultdict

import pyarrow.parquet as pq
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import gen_corpus  # noqa: E402

MAX_BUCKET = "50"  # the boilerplate group (60 copies) is larger: star buckets


def ndup_bin() -> str:
    for cand in (os.environ.get("NDUP_BIN"), os.path.join(ROOT, "target/release/ndup"),
                 os.path.join(ROOT, "target/debug/ndup")):
        if cand and os.path.exists(cand):
            return cand
    pytest.fail("no ndup binary: build it with `cargo build` or set NDUP_BIN")


def ndup(*args: str, cwd: str) -> str:
    r = subprocess.run([ndup_bin(), *args], cwd=cwd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


def spark_job(*args: str, cwd: str, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
    cmd = [sys.executable, os.path.join(HERE, "ndup_spark.py"), *args, "--ndup", ndup_bin(),
           "--master", "local[2]", "--shuffle-partitions", "4"]
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    if check:
        assert r.returncode == 0, r.stderr[-5000:]
    return r


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpus")
    c = gen_corpus.generate(3000, seed=11, boilerplate=60)
    jsonl = gen_corpus.write_jsonl(c, str(d / "j"), 4, damage=True)
    gen_corpus.write_parquet(c, str(d / "p"), 4, nested_id=True, row_group=100)
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
    d = corpus["dir"]
    extra = ["--id-field", "meta.id"]
    spark_job("p", *extra, "--out", "out-p", "--max-bucket", MAX_BUCKET, "--keep", "shortest",
              "--max-partition-bytes", "60000", cwd=d)
    m = check_identical(d, "out-p", ["p"], extra, "shortest")
    assert m["counts"]["splits"] > 4

    ndup("dedup", "p", *extra, "--verify", "signature", "--max-bucket", MAX_BUCKET,
         "--keep", "shortest", "-o", "ndup-dedup.parquet", "-q", cwd=d)
    expected = pq.read_table(os.path.join(d, "ndup-dedup.parquet"))
    got = pq.read_table(os.path.join(d, "out-p", "dedup"))
    assert got.schema.names == expected.schema.names
    assert got.to_pylist() == expected.to_pylist()  # every column of the kept rows, in order


def test_keep_first_in_dedup_mode(corpus):
    """--mode dedup (no scan outputs) with --keep first, on whole files."""
    d = corpus["dir"]
    spark_job(*corpus["jsonl"], "--out", "out-f", "--mode", "dedup", "--max-bucket", MAX_BUCKET,
              cwd=d)
    ndup("dedup", *corpus["jsonl"], "--verify", "signature", "--max-bucket", MAX_BUCKET,
         "-o", "ndup-first.jsonl", "-q", cwd=d)
    expected = open(os.path.join(d, "ndup-first.jsonl"), "rb").read()
    got = b"".join(open(p, "rb").read()
                   for p in sorted(glob.glob(os.path.join(d, "out-f", "dedup", "part-*"))))
    assert got == expected
    rows = pq.read_table(os.path.join(d, "out-f", "clusters")).to_pylist()
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
    them). Against `ndup scan --clusters`, `ndup dedup` and `ndup sign` on the same file."""
    c = gen_corpus.generate(400, seed=3)
    records = [{"id": i, "text": t} for i, t in zip(c.ids, c.texts)]
    records[300] = {"text": records[300]["text"]}  # line 301, no id
    records[250]["id"] = None  # line 251, a null id
    records[10]["id"] = "301"  # a real id equal to line 301's made-up name
    records[20]["id"] = "c.jsonl:301"  # and to its first other name
    records[6]["id"] = records[5]["id"]  # repeated in one partition
    records[350] = {"id": records[100]["id"], "text": records[100]["text"]}  # and in another
    records[351] = {"text": records[100]["text"]}  # a copy without an id
    with open(tmp_path / "c.jsonl", "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    d = str(tmp_path)
    spark_job("c.jsonl", "--out", "out", "--max-bucket", MAX_BUCKET,
              "--max-partition-bytes", "50000", cwd=d)
    m = check_identical(d, "out", ["c.jsonl"], [], "first", min_pairs=100)
    assert m["counts"]["splits"] > 3
    rows = {r["line"]: r for r in pq.read_table(os.path.join(d, "out", "clusters")).to_pylist()}
    assert (rows[301]["id"], rows[301]["scan_id"]) == ("301", "c.jsonl:301#2")
    assert (rows[251]["id"], rows[251]["scan_id"]) == ("251", "251")
    assert rows[351]["scan_id"] is None and rows[351]["id"] == records[100]["id"]

    ndup("dedup", "c.jsonl", "--verify", "signature", "--max-bucket", MAX_BUCKET,
         "-o", "ndup-dedup.jsonl", "-q", cwd=d)
    expected = open(os.path.join(d, "ndup-dedup.jsonl"), "rb").read()
    got = b"".join(open(p, "rb").read()
                   for p in sorted(glob.glob(os.path.join(d, "out", "dedup", "part-*"))))
    assert got == expected
