#!/usr/bin/env python3
"""ndup on Spark: near-duplicate detection and deduplication of corpora too large for one machine.

    spark-submit spark/ndup_spark.py corpus/*.jsonl --ndup target/release/ndup --out result/
    python spark/ndup_spark.py data/train/ --text-field content --out result/ --keep longest

The map stage is ndup itself: each Spark partition of the input is piped, as JSON lines, through
`ndup sign - --out <executor temp dir>`, and the signature shard it writes is read back as Arrow.
Everything after it is Spark DataFrames, reproducing ndup's own rules exactly:

1. **Order and ids.** Every input row gets a key `(file, block, pos)`: the file's place in the
   input list, the byte offset of the Spark split that holds it, and its place in that split. The
   executors report how many lines (rows) and documents each split holds; the driver turns those
   counts into offsets, so each document gets `ord` (its line's position in the whole input),
   `line` (its line in its file, from 1) and `doc` (its position among the documents, from 0, as
   `ndup sign` numbers them), whatever the order in which Spark ran the partitions.
2. **Candidates.** The band keys are exploded into `(band, key, ord, fingerprint)` rows and
   grouped by `(band, key)`, one shuffle. A bucket of at most `--max-bucket` members links every
   pair of them; a larger one links each member to its center, the member with the smallest
   `ord` (`LshIndex::candidates`). Pairs are the union over the bands.
3. **Verification** by signature agreement: `m` equal slots of `num_perm`, accepted when
   `m / num_perm >= threshold` in exact fractions, the threshold read as the shortest decimal
   of its float (`Verifier::decide`, `--verify signature`).
4. **Clusters**: connected components of the accepted pairs, by the large-star/small-star
   algorithm (Kiveris et al. 2014) in DataFrames (see `connected_components`).
5. **Dedup** as `ndup dedup` (`src/dedup.rs`): exact duplicates first (same 128-bit fingerprint
   of the normalized text: a duplicate of the first in input order, which alone is a candidate
   for LSH), near-duplicate pairs among those first documents, components of exact links and
   verified pairs, one document kept per component by `--keep first|longest|shortest`.

Outputs, under `--out DIR`:

- `DIR/pairs` (Parquet): `a`, `b` (ids, `a < b`), `estimate`, `doc_a`, `doc_b`: the pairs of
  `ndup scan --verify signature` (with `--mode dedup`: the pairs among distinct texts that
  `ndup dedup` joins, instead).
- `DIR/clusters` (Parquet), one row per document: `doc`, `id`, `source`, `line`, `cluster` (the
  smallest id of its dedup component), `size`, `keep`, `kept` (the id kept for it), `reason`
  (`exact`/`near`, null when kept) and, with `--mode full`, `scan_id` (the id `ndup scan` gives
  it, null when the scan skips it for a duplicate id) and `scan_cluster`: the smallest id of its
  cluster as `ndup scan --clusters` reports it (null when it is in no pair).
- `DIR/dedup`: the kept input rows, in input order: JSON-lines input gives text part files whose
  lines are the kept records byte for byte; Parquet input gives Parquet with the input's
  columns.
- `DIR/metrics.json`: time, shuffle bytes and counts per stage.

See docs/scale-out.md for the design and its costs.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from fractions import Fraction

# Executors run this interpreter unless told otherwise (local mode, or a cluster whose nodes
# have the same environment): pyarrow must be importable there.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from pyspark import StorageLevel  # noqa: E402
from pyspark.sql import DataFrame, SparkSession, Window  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402
from pyspark.sql import types as T  # noqa: E402

JSONL_SUFFIXES = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz", ".jsonl.zst", ".ndjson.zst")

# What the signing stage returns: one row per document (kind 0), and one per input split
# (kind 1) with the split's counts of lines and documents.
SIGNED_SCHEMA = T.StructType(
    [
        T.StructField("kind", T.IntegerType(), False),
        T.StructField("file", T.IntegerType(), False),
        T.StructField("block", T.LongType(), False),
        T.StructField("pos", T.LongType(), True),
        T.StructField("bdoc", T.LongType(), True),
        T.StructField("made_up", T.BooleanType(), True),
        T.StructField("id", T.StringType(), True),
        T.StructField("chars", T.LongType(), True),
        T.StructField("fp_hi", T.LongType(), True),
        T.StructField("fp_lo", T.LongType(), True),
        T.StructField("signature", T.ArrayType(T.IntegerType()), True),
        T.StructField("bands", T.ArrayType(T.LongType()), True),
        T.StructField("n_lines", T.LongType(), True),
        T.StructField("n_docs", T.LongType(), True),
    ]
)
_SIGNED_ARROW = pa.schema(
    [
        ("kind", pa.int32()),
        ("file", pa.int32()),
        ("block", pa.int64()),
        ("pos", pa.int64()),
        ("bdoc", pa.int64()),
        ("made_up", pa.bool_()),
        ("id", pa.string()),
        ("chars", pa.int64()),
        ("fp_hi", pa.int64()),
        ("fp_lo", pa.int64()),
        ("signature", pa.list_(pa.int32())),
        ("bands", pa.list_(pa.int64())),
        ("n_lines", pa.int64()),
        ("n_docs", pa.int64()),
    ]
)


class JobError(Exception):
    """A problem with the input or the arguments, reported without a traceback."""


# --------------------------------------------------------------------------------------------
# Arguments


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="ndup_spark.py",
        description="Near-duplicate detection and deduplication on Spark, with ndup as the map "
        "stage. Results are those of `ndup scan --verify signature [--clusters]` and "
        "`ndup dedup` on the same corpus.",
    )
    ap.add_argument("inputs", nargs="+", metavar="INPUT",
                    help="JSON-lines files, or Parquet files and directories of them, read in the "
                    "order given (directories walked in sorted order); any filesystem Spark "
                    "reads (file:, hdfs:, s3a:...)")
    ap.add_argument("--out", required=True, metavar="DIR",
                    help="output directory: DIR/pairs, DIR/clusters, DIR/dedup, DIR/metrics.json")
    ap.add_argument("--format", choices=["auto", "jsonl", "parquet"], default="auto",
                    help="input format (auto: by the file names, .parquet or JSON lines)")
    ap.add_argument("--text-field", default="text", metavar="FIELD",
                    help="dotted path of the text (a column of Parquet)")
    ap.add_argument("--id-field", default="id", metavar="FIELD",
                    help="dotted path of the id (a record without one is named by its line)")
    ap.add_argument("--threshold", type=float, default=0.8, metavar="T")
    ap.add_argument("--num-perm", type=int, metavar="N")
    ap.add_argument("--bands", type=int, metavar="B")
    ap.add_argument("--rows", type=int, metavar="R")
    ap.add_argument("--seed", type=int, metavar="S")
    ap.add_argument("--sign-args", default="", metavar="ARGS",
                    help="more flags for `ndup sign` (shingling, normalization, sketch), as one "
                    "shell-quoted string: --sign-args '-k 5 --no-nfkc'")
    ap.add_argument("--max-bucket", type=int, default=1000, metavar="N",
                    help="buckets with more members are linked as a star around their first "
                    "member (as ndup's --max-bucket)")
    ap.add_argument("--keep", choices=["first", "longest", "shortest"], default="first",
                    help="which document of a cluster dedup keeps (as ndup dedup's --keep)")
    ap.add_argument("--mode", choices=["full", "dedup"], default="full",
                    help="full: also the pairs and clusters of `ndup scan` (every document, "
                    "exact copies included, through LSH); dedup: only what `ndup dedup` needs "
                    "(cheaper on corpora with many exact copies)")
    ap.add_argument("--ndup", default=shutil.which("ndup") or "ndup", metavar="PATH",
                    help="the ndup binary, shipped to the executors with SparkContext.addFile "
                    "(default: ndup on PATH)")
    ap.add_argument("--ndup-on-executors", metavar="PATH",
                    help="use the ndup at PATH on every executor instead of shipping --ndup")
    ap.add_argument("--ndup-threads", type=int, default=1, metavar="N",
                    help="threads of each ndup process (default 1: Spark runs a task per core)")
    ap.add_argument("--master", default=None,
                    help="Spark master (default: spark-submit's, or local[*])")
    ap.add_argument("--shuffle-partitions", type=int, metavar="N",
                    help="spark.sql.shuffle.partitions (default: one per 64 MB of input, at "
                         "least two per core, unless the Spark configuration sets it)")
    ap.add_argument("--max-partition-bytes", metavar="SIZE",
                    help="spark.sql.files.maxPartitionBytes: input bytes per signing task")
    ap.add_argument("--no-sort-output", action="store_true",
                    help="write DIR/dedup without restoring input order (saves a sort of the "
                    "kept rows)")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="more Spark configuration (repeatable)")
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return ap.parse_args(argv)


def log(args: argparse.Namespace, msg: str) -> None:
    if not args.quiet:
        print(f"ndup-spark: {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Inputs


@dataclass
class InputFile:
    name: str  # as ndup would name it: the path as given, or DIR/relative for a walked directory
    uri: str  # fully qualified, for Spark
    size: int  # bytes


@dataclass
class Inputs:
    fmt: str
    files: list[InputFile]
    # Normalized qualified path -> index in `files`.
    index: dict[str, int] = field(default_factory=dict)


def normalize_uri(uri: str) -> str:
    """One spelling for a file's URI (`file:/a%20b`, `file:///a b` -> `file:///a b`)."""
    u = urllib.parse.urlsplit(uri)
    return f"{u.scheme}://{u.netloc}{urllib.parse.unquote(u.path)}"


def list_inputs(spark: SparkSession, args: argparse.Namespace) -> Inputs:
    """The input files in ndup's order: as given, directories walked in sorted order (name by
    name at each level, as ndup walks), through Hadoop's FileSystem so that any store works."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    Path = jvm.org.apache.hadoop.fs.Path

    def skip(name: str) -> bool:
        return name.startswith((".", "_")) or name.endswith(".crc")

    files: list[InputFile] = []
    for given in args.inputs:
        p = Path(given)
        fs = p.getFileSystem(conf)
        if not fs.exists(p):
            raise JobError(f"{given}: no such file or directory")
        qualified = fs.makeQualified(p)
        status = fs.getFileStatus(qualified)
        if not status.isDirectory():
            files.append(InputFile(given, qualified.toUri().toString(), status.getLen()))
            continue

        def walk(dir_path, rel: str):
            entries = sorted(fs.listStatus(dir_path), key=lambda s: s.getPath().getName())
            for st in entries:
                name = st.getPath().getName()
                if skip(name):
                    continue
                child_rel = f"{rel}/{name}" if rel else name
                if st.isDirectory():
                    yield from walk(st.getPath(), child_rel)
                else:
                    yield child_rel, st.getPath().toUri().toString(), st.getLen()

        base = given.rstrip("/")
        for rel, uri, size in walk(qualified, ""):
            files.append(InputFile(f"{base}/{rel}", uri, size))
    if not files:
        raise JobError("no input files")

    fmt = args.format
    if fmt == "auto":
        parquet = [f.uri.endswith(".parquet") for f in files]
        if all(parquet):
            fmt = "parquet"
        elif any(parquet):
            raise JobError("mixing Parquet and JSON-lines inputs; give one kind (or --format)")
        else:
            fmt = "jsonl"
    if fmt == "parquet":
        files = [f for f in files if f.uri.endswith(".parquet")]
    index: dict[str, int] = {}
    for i, f in enumerate(files):
        key = normalize_uri(f.uri)
        if key in index:
            raise JobError(f"{f.name}: given twice (ndup reads a file once)")
        index[key] = i
    return Inputs(fmt, files, index)


def input_frame(spark: SparkSession, inputs: Inputs, args: argparse.Namespace,
                all_columns: bool = False) -> DataFrame:
    """The input as rows with `value` (one JSON line, for ndup) and the split they come from;
    with `all_columns` (Parquet, for the dedup output) every column instead of `value`."""
    uris = [f.uri for f in inputs.files]
    meta = [F.col("_metadata.file_path").alias("_path"),
            F.col("_metadata.file_block_start").alias("_block")]
    if inputs.fmt == "jsonl":
        # Lines end at \n only, as ndup reads them (a \r before it stays in the line, and is
        # JSON white space); blank lines are rows, so line numbers stay right.
        df = spark.read.option("lineSep", "\n").text(uris)
        return df.select(F.col("value"), *meta)
    df = spark.read.parquet(*uris)
    if all_columns:
        return df.select("*", *meta)
    try:
        text = df.select(F.col(args.text_field)).schema[0].dataType
    except Exception as e:  # AnalysisException: no such column
        raise JobError(f"the Parquet input has no column `{args.text_field}` (--text-field)") from e
    if not isinstance(text, T.StringType):
        raise JobError(f"column `{args.text_field}` is {text.simpleString()}, not strings")
    fields = [F.col(args.text_field).alias("text")]
    try:
        id_type = df.select(F.col(args.id_field)).schema[0].dataType
    except Exception:
        id_type = None  # no id column: every row is named by its row number, as ndup does
    if id_type is not None:
        if not isinstance(id_type, (T.StringType, T.IntegralType)):
            raise JobError(f"column `{args.id_field}` is {id_type.simpleString()}: ids must be "
                           "strings or integers")
        fields.append(F.col(args.id_field).alias("id"))
    # A null id or text is left out of the JSON: ndup then names the row by its number, or
    # reports it as malformed, as it does reading the Parquet file itself.
    return df.select(F.to_json(F.struct(*fields)).alias("value"), *meta)


# --------------------------------------------------------------------------------------------
# The map stage: ndup sign on each partition


def ndup_sign_flags(args: argparse.Namespace) -> list[str]:
    # Every record gets a row, named as read: which id wins, and what a record without one is
    # called, are decided over the whole input by this job (`scan_names`).
    flags = ["--ids", "as-read", "--threshold", repr(args.threshold)]
    for name in ("num_perm", "bands", "rows", "seed"):
        v = getattr(args, name)
        if v is not None:
            flags += [f"--{name.replace('_', '-')}", str(v)]
    return flags + shlex.split(args.sign_args)


def probe_ndup(args: argparse.Namespace, flags: list[str]) -> dict:
    """Runs `ndup sign` on one record on the driver, as the executors run it: checks the binary
    and the flags before any Spark work, and returns the signing parameters it writes
    (num_perm, bands, rows...)."""
    with tempfile.TemporaryDirectory(prefix="ndup-probe-") as tmp:
        cmd = [args.ndup, "sign", "-", "--jsonl", "--out", "-", "-q", "-j", "1", *flags]
        try:
            # In a directory of its own: an ndup too old for `--out -` makes a directory `-`.
            r = subprocess.run(cmd, input=b'{"id":"probe","text":"probe text"}\n',
                               capture_output=True, cwd=tmp)
        except OSError as e:
            raise JobError(f"cannot run ndup ({args.ndup}): {e}; give its path with --ndup") from e
        if r.returncode != 0:
            raise JobError(f"`{shlex.join(cmd)}` failed: {r.stderr.decode(errors='replace')}")
        try:
            meta = pa.ipc.open_stream(r.stdout).schema.metadata
        except pa.ArrowInvalid as e:
            raise JobError(f"`{shlex.join(cmd)}` wrote no Arrow stream ({e}): this ndup is too "
                           "old for the job; build it from this checkout") from e
        params = json.loads(meta[b"ndup.params"])
        params["format_version"] = meta[b"ndup.format_version"].decode()
        return params


def make_signer(ndup: str, shipped: bool, threads: int, flags: list[str], index: dict[str, int],
                fmt: str, id_field: str, text_field: str):
    """The function each signing task runs on its partition (for DataFrame.mapInArrow)."""
    # Parquet rows are piped as {"id": ..., "text": ...}; JSON lines as they are.
    fields = (["--id-field", "id", "--text-field", "text"] if fmt == "parquet"
              else ["--id-field", id_field, "--text-field", text_field])

    def sign_partition(batches):
        import os
        import subprocess
        import tempfile

        import numpy as np
        import pyarrow as pa

        exe = ndup
        if shipped:
            from pyspark import SparkFiles

            exe = SparkFiles.get(os.path.basename(ndup))
            if not os.access(exe, os.X_OK):
                os.chmod(exe, 0o755)
        tmp = tempfile.mkdtemp(prefix="ndup-sign-")
        try:
            errpath = os.path.join(tmp, "stderr")
            # The rows come back as one Arrow stream on ndup's standard output, which ndup
            # writes once it has read the whole partition: no shard files in between.
            cmd = [exe, "sign", "-", "--jsonl", "--out", "-", "-q", "-j", str(threads),
                   *fields, *flags]
            files, blocks = [], []
            err = open(errpath, "wb")
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=err)

            def failed(rc):
                err.close()
                with open(errpath, "rb") as e:
                    return RuntimeError(f"{' '.join(cmd)} exited with {rc}: "
                                        f"{e.read().decode(errors='replace')[-4000:]}")

            def finish():
                # The rest of the stream is read (ndup writes one even for no rows), or ndup
                # fails on a closed pipe.
                proc.stdout.read()
                proc.stdout.close()
                rc = proc.wait()
                if rc != 0:
                    raise failed(rc)
                err.close()
            try:
                for b in batches:
                    if b.num_rows == 0:
                        continue
                    files.append(file_numbers(b, index))
                    blocks.append(b.column("_block").to_numpy(zero_copy_only=False))
                    proc.stdin.write(joined_lines(b.column("value")))
                proc.stdin.close()
            except BrokenPipeError:
                pass
            if not files:
                finish()
                return
            try:
                stream = pa.ipc.open_stream(proc.stdout)
            except (pa.ArrowInvalid, OSError):
                raise failed(proc.wait())
            file_of = np.concatenate(files)
            block_of = np.concatenate(blocks).astype(np.int64)
            n = len(file_of)
            # Runs of one split: a split's rows are contiguous, in order, in one partition.
            change = np.ones(n, bool)
            change[1:] = (file_of[1:] != file_of[:-1]) | (block_of[1:] != block_of[:-1])
            starts = np.flatnonzero(change)
            run_of = np.cumsum(change) - 1
            pos_of = np.arange(n) - starts[run_of]
            if len(set(zip(file_of[starts].tolist(), block_of[starts].tolist()))) != len(starts):
                raise RuntimeError("a split's rows are not contiguous in its partition")
            docs_in_run = np.zeros(len(starts), np.int64)
            for t in stream:
                rows = t.column("line").to_numpy(zero_copy_only=False).astype(np.int64) - 1
                runs = run_of[rows]
                # Rank of each document within its split: documents come in input order,
                # so `runs` does not decrease.
                uniq, first, counts = np.unique(runs, return_index=True, return_counts=True)
                bdoc = (np.arange(len(rows)) - np.repeat(first, counts)
                        + np.repeat(docs_in_run[uniq], counts))
                docs_in_run[uniq] += counts
                fp = t.column("fingerprint")
                raw = np.frombuffer(fp.buffers()[1], dtype=">u8", count=2 * (fp.offset + len(fp)))
                raw = raw[2 * fp.offset:].reshape(-1, 2).astype(np.uint64).view(np.int64)
                yield pa.RecordBatch.from_arrays(
                    [
                        pa.array(np.zeros(len(rows), np.int32)),
                        pa.array(file_of[rows]),
                        pa.array(block_of[rows]),
                        pa.array(pos_of[rows]),
                        pa.array(bdoc),
                        t.column("id_made_up"),
                        t.column("id"),
                        t.column("chars"),
                        pa.array(raw[:, 0].copy()),
                        pa.array(raw[:, 1].copy()),
                        t.column("signature"),
                        t.column("bands"),
                        pa.nulls(len(rows), pa.int64()),
                        pa.nulls(len(rows), pa.int64()),
                    ],
                    schema=_SIGNED_ARROW,
                )
            finish()
            lines_in_run = np.diff(np.append(starts, n))
            k = len(starts)
            yield pa.RecordBatch.from_arrays(
                [
                    pa.array(np.ones(k, np.int32)),
                    pa.array(file_of[starts]),
                    pa.array(block_of[starts]),
                    *[pa.nulls(k, t) for t in (pa.int64(), pa.int64(), pa.bool_(), pa.string(),
                                               pa.int64(), pa.int64(), pa.int64(),
                                               pa.list_(pa.int32()), pa.list_(pa.int64()))],
                    pa.array(lines_in_run.astype(np.int64)),
                    pa.array(docs_in_run),
                ],
                schema=_SIGNED_ARROW,
            )
        finally:
            shutil_rmtree(tmp)

    return sign_partition


def file_numbers(batch: pa.RecordBatch, index: dict[str, int]):
    """The place in the input list of each row's file (`_path`), as a NumPy array: one lookup
    per distinct path of the batch, not per row."""
    import numpy as np

    paths = batch.column("_path").dictionary_encode()
    to_file = np.array([index[normalize_uri(str(p))] for p in paths.dictionary.to_pylist()],
                       np.int32)
    return to_file[paths.indices.to_numpy(zero_copy_only=False)]


def joined_lines(values: pa.Array) -> bytes:
    """The strings of an Arrow array as lines, each ended by \\n: straight from the array's
    buffers, without making a Python string per row."""
    import numpy as np

    if values.null_count:
        values = values.fill_null("")
    if isinstance(values, pa.LargeStringArray):
        values = values.cast(pa.string())
    n = len(values)
    offsets = np.frombuffer(values.buffers()[1], np.int32, count=n + 1, offset=4 * values.offset)
    data = values.buffers()[2]
    body = (np.frombuffer(data, np.uint8)[offsets[0]:offsets[-1]] if data is not None
            else np.zeros(0, np.uint8))
    return np.insert(body, offsets[1:] - offsets[0], 10).tobytes()


def shutil_rmtree(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# Connected components


def connected_components(edges: DataFrame, checkpoint) -> tuple[DataFrame, int]:
    """Connected components of an undirected graph given as `(a, b)` rows of long node ids, by
    the alternating large-star / small-star algorithm of Kiveris, Lattanzi, Mirrokni, Rastogi
    and Vassilvitskii, "Connected Components in MapReduce and Beyond" (SoCC 2014).

    The graph is kept as edges `(src, dst)` with `src > dst`. Two operations rewrite it without
    changing its components, and each pulls nodes closer to their component's smallest node:

    - large-star: for each node u, with m(u) the smallest of u and its neighbours, every
      neighbour v larger than u is linked to m(u) instead of to u;
    - small-star: for each node u, with m the smallest of its neighbours smaller than it (and u),
      those neighbours and u itself are linked to m.

    Alternating the two until neither changes anything leaves each component as a star whose
    center is its smallest node: every other node has exactly one edge, to that center (the
    paper proves O(log^2 n) rounds; on real graphs a handful). Each round is a few shuffles
    of the edge list only, never of the nodes' data.

    Returns `(node, root)` for every node of an edge, `root` the smallest node of its component
    (the root itself included, with `root == node`), and the number of rounds.
    """
    e = (edges.select(F.greatest("a", "b").alias("src"), F.least("a", "b").alias("dst"))
         .where(F.col("src") != F.col("dst"))
         .distinct())
    e = checkpoint(e)
    rounds = 0
    # No edges (a corpus without duplicates): no rounds, no components.
    if e.limit(1).count() == 0:
        return e.select(F.col("src").alias("node"), F.col("dst").alias("root")), rounds
    while True:
        rounds += 1
        # Large-star: m(u) over all of u's neighbours, both directions.
        both = e.select(F.col("src").alias("u"), F.col("dst").alias("v")).unionByName(
            e.select(F.col("dst").alias("u"), F.col("src").alias("v")))
        m = both.groupBy("u").agg(F.min("v").alias("m"))
        large = (e.join(m, e.dst == m.u)
                 .select(F.col("src"), F.least(F.col("m"), F.col("dst")).alias("dst"))
                 .distinct())
        # Small-star: for each u, the smallest of its smaller neighbours takes them all, and u.
        m2 = large.groupBy("src").agg(F.min("dst").alias("m"))
        joined = large.join(m2, "src")
        small = (joined.where(F.col("dst") != F.col("m"))
                 .select(F.col("dst").alias("src"), F.col("m").alias("dst"))
                 .unionByName(joined.select(F.col("src"), F.col("m").alias("dst")))
                 .distinct())
        small = checkpoint(small)
        # Done when the round changed nothing: one job comparing the two edge sets.
        changed = (small.withColumn("new", F.lit(True))
                   .join(e.withColumn("old", F.lit(True)), ["src", "dst"], "full_outer")
                   .where(F.col("new").isNull() | F.col("old").isNull())
                   .limit(1).count())
        e = small
        if changed == 0:
            break
    roots = e.select(F.col("dst").alias("node")).distinct().select("node", F.col("node").alias("root"))
    return e.select(F.col("src").alias("node"), F.col("dst").alias("root")).unionByName(roots), rounds


# --------------------------------------------------------------------------------------------
# Metrics


class Metrics:
    """Wall time per stage (on the driver) and shuffle bytes per stage (from Spark's REST API,
    by job group)."""

    def __init__(self, spark: SparkSession):
        self.spark = spark
        self.sc = spark.sparkContext
        self.stages: list[dict] = []
        self.counts: dict[str, int] = {}
        self._t = None
        self._name = None

    def start(self, name: str) -> None:
        self.stop()
        self._name, self._t = name, time.time()
        self.sc.setJobGroup(name, name)

    def stop(self) -> None:
        if self._name is not None:
            self.stages.append({"stage": self._name, "seconds": round(time.time() - self._t, 3)})
            self._name = None

    def _get(self, path: str):
        url = self.sc.uiWebUrl
        if not url:
            return None
        with urllib.request.urlopen(f"{url}/api/v1/applications/{self.sc.applicationId}{path}",
                                    timeout=30) as r:
            return json.load(r)

    def shuffle(self) -> None:
        """Adds each stage's shuffle bytes (written, read) and executor CPU time."""
        try:
            jobs = self._get("/jobs")
            stages = self._get("/stages?status=complete")
        except Exception as e:  # the UI is off, or unreachable: times only
            print(f"ndup-spark: no shuffle metrics ({e})", file=sys.stderr)
            return
        if jobs is None or stages is None:
            return
        stage_of = {}
        for j in jobs:
            for s in j.get("stageIds", []):
                stage_of[s] = j.get("jobGroup")
        acc: dict[str, dict] = {}
        for s in stages:
            g = stage_of.get(s["stageId"])
            a = acc.setdefault(g, {"shuffle_write_bytes": 0, "shuffle_read_bytes": 0,
                                   "executor_cpu_seconds": 0.0, "input_bytes": 0})
            a["shuffle_write_bytes"] += s.get("shuffleWriteBytes", 0)
            a["shuffle_read_bytes"] += s.get("shuffleReadBytes", 0)
            a["input_bytes"] += s.get("inputBytes", 0)
            a["executor_cpu_seconds"] += s.get("executorCpuTime", 0) / 1e9
        for st in self.stages:
            st.update(acc.get(st["stage"], {}))


# --------------------------------------------------------------------------------------------
# The job


def run(args: argparse.Namespace) -> dict:
    t0 = time.time()
    flags = ndup_sign_flags(args)
    params = probe_ndup(args, flags)
    num_perm, bands = params["num_perm"], params["bands"]
    max_bucket = max(args.max_bucket, 2)
    # Verifier::new: the smallest count m with m / k >= threshold, in exact fractions of the
    # threshold's shortest decimal (repr), as ndup reads it.
    at_threshold = max(0, math.ceil(Fraction(repr(args.threshold)) * num_perm))

    builder = SparkSession.builder.appName("ndup-spark")
    master = args.master or (None if os.environ.get("SPARK_ENV_LOADED") else "local[*]")
    if master:
        builder = builder.master(master)
    if (master or "").startswith("local"):
        # One machine: everything on the loopback interface.
        builder = (builder.config("spark.driver.host", "127.0.0.1")
                   .config("spark.driver.bindAddress", "127.0.0.1"))
    builder = builder.config("spark.ui.showConsoleProgress", "false")
    if args.shuffle_partitions:
        builder = builder.config("spark.sql.shuffle.partitions", str(args.shuffle_partitions))
    if args.max_partition_bytes:
        builder = builder.config("spark.sql.files.maxPartitionBytes", args.max_partition_bytes)
    for kv in args.conf:
        k, _, v = kv.partition("=")
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    sc = spark.sparkContext
    sc.setLogLevel("ERROR")
    metrics = Metrics(spark)

    checkpoint_dir = sc.getCheckpointDir()

    def checkpoint(df: DataFrame) -> DataFrame:
        # Cuts the plan of an iteration (large-star/small-star would otherwise grow it without
        # end); reliable when a checkpoint directory is set, local otherwise.
        return df.checkpoint(eager=True) if checkpoint_dir else df.localCheckpoint(eager=True)

    inputs = list_inputs(spark, args)
    if not args.shuffle_partitions and not sc.getConf().contains("spark.sql.shuffle.partitions"):
        # Spark's default of 200 suits no input size: a small corpus then spends most of its
        # time scheduling empty tasks. About 64 MB of input per partition (the shuffles carry
        # two to three times the input), and at least two per core.
        total = sum(f.size for f in inputs.files)
        spark.conf.set("spark.sql.shuffle.partitions",
                       str(max(2 * sc.defaultParallelism, math.ceil(total / (64 << 20)))))
    log(args, f"{len(inputs.files)} {inputs.fmt} file(s); ndup {params['sketch']} "
              f"num_perm={num_perm} bands={bands} rows={params['rows']}; "
              f"threshold {args.threshold} (>= {at_threshold} equal slots)")
    shipped = args.ndup_on_executors is None
    if shipped:
        sc.addFile(os.path.abspath(args.ndup))
    signer = make_signer(args.ndup_on_executors or os.path.abspath(args.ndup), shipped,
                         args.ndup_threads, flags, inputs.index, inputs.fmt, args.id_field,
                         args.text_field)

    # 1. Sign: ndup on every partition; per split, its counts of lines and documents.
    metrics.start("sign")
    src = input_frame(spark, inputs, args)
    signed = src.mapInArrow(signer, SIGNED_SCHEMA).persist(StorageLevel.MEMORY_AND_DISK)
    # The split counts are one row per split: sorted here, not by a Spark sort.
    splits = sorted(signed.where("kind = 1").select("file", "block", "n_lines", "n_docs")
                    .collect(), key=lambda r: (r.file, r.block))
    # Offsets of each split: lines before it in its file (line numbers), lines before it in the
    # whole input (ord) and documents before it (doc numbers).
    offsets, in_file, total_lines, total_docs, last_file = [], 0, 0, 0, None
    split_lines = []
    for s in splits:
        if s.file != last_file:
            in_file, last_file = 0, s.file
        offsets.append((s.file, s.block, in_file, total_lines, total_docs))
        split_lines.append(s.n_lines)
        in_file += s.n_lines
        total_lines += s.n_lines
        total_docs += s.n_docs
    if total_docs == 0:
        raise JobError("no documents in the input")
    off = spark.createDataFrame(offsets, "file int, block long, line_off long, ord_off long, "
                                         "doc_off long")
    names = spark.createDataFrame([(i, f.name) for i, f in enumerate(inputs.files)],
                                  "file int, source string")
    # Not persisted: a view of the cached signing output through two broadcast joins. The
    # cache is columnar, so each use reads only the columns it needs (the signatures once).
    # `id` is the name `ndup dedup` gives: as read, or, for a record without one, its global
    # line (`LINE`, or `SOURCE:LINE` with several inputs) where ndup sign saw a local one.
    line = F.col("line_off") + F.col("pos") + 1
    line_name = (F.concat(F.col("source"), F.lit(":"), line.cast("string"))
                 if len(inputs.files) > 1 else line.cast("string"))
    docs = (signed.where("kind = 0").join(F.broadcast(off), ["file", "block"])
            .join(F.broadcast(names), "file")
            .select((F.col("ord_off") + F.col("pos")).alias("ord"),
                    (F.col("doc_off") + F.col("bdoc")).alias("doc"),
                    F.when(F.col("made_up"), line_name).otherwise(F.col("id")).alias("id"),
                    "made_up", "source", line.alias("line"),
                    "chars", "fp_hi", "fp_lo", "signature", "bands",
                    "file", "block", "pos"))
    metrics.counts["documents"] = total_docs
    metrics.counts["lines"] = total_lines
    metrics.counts["splits"] = len(splits)

    # Ids as `ndup scan` names them (only what differs from the names above).
    metrics.start("ids")
    full = args.mode == "full"
    renamed = scan_names(docs, metrics, checkpoint) if full else None

    # 2. Buckets, and exact duplicates with them. One shuffle of (band, key, ord, fingerprint)
    # rows, then window functions on it (sorts, no per-bucket arrays): copies of a text share
    # every band key, so within any bucket of a document all its copies are present, and the
    # smallest `ord` of its fingerprint there is the first copy in input order (`rep`, the one
    # ndup dedup signs). The bucket's center (its smallest `ord`) is always such a first copy.
    metrics.start("lsh")
    by_text = Window.partitionBy("key", "band", "fp_hi", "fp_lo")
    by_bucket = Window.partitionBy("key", "band")
    has_bands = F.col("bands").isNotNull() & (F.size("bands") > 0)
    lsh_docs = docs.where(has_bands)
    if full:
        # A record that ndup scan skips (its id taken by an earlier record) is in no scan pair.
        lsh_docs = lsh_docs.join(renamed.where("skipped").select("ord", "skipped"), "ord", "left")
        in_scan = F.col("skipped").isNull()
    else:
        in_scan = F.lit(False)
    rows = (lsh_docs
            .select("ord", "fp_hi", "fp_lo", in_scan.alias("scan"),
                    F.posexplode("bands").alias("band", "key"))
            # Both windows then run on this partitioning: no second shuffle. The key comes
            # first in every sort, as its 64 bits make a good sort prefix (the band does not).
            .repartition("key", "band")
            .withColumn("rep", F.min("ord").over(by_text))
            .select("key", "band", "ord", "rep", "scan",
                    (F.col("ord") == F.col("rep")).alias("first"),
                    F.count(F.lit(1)).over(by_bucket).alias("n"),
                    F.sum((F.col("ord") == F.col("rep")).cast("int")).over(by_bucket)
                    .alias("n_firsts"),
                    F.min("ord").over(by_bucket).alias("center"),
                    # Scan's bucket: the same less the records it skips.
                    F.sum(F.col("scan").cast("int")).over(by_bucket).alias("n_scan"),
                    F.min(F.when(F.col("scan"), F.col("ord"))).over(by_bucket)
                    .alias("center_scan"))
            .withColumn("center_scan_rep",
                        F.min(F.when(F.col("ord") == F.col("center_scan"), F.col("rep")))
                        .over(by_bucket))
            # Most buckets have one member: only the others make pairs.
            .where(F.col("n") >= 2)
            # Cached rather than checkpointed: the cache keeps the partitioning by bucket, on
            # which the self-join below needs no shuffle.
            .persist(StorageLevel.MEMORY_AND_DISK))
    # Materialized here, once, and cut from its lineage (as are the other tables that later
    # steps read several times): else each use computes it again, and plans nest every step
    # before them, which costs the driver more than the work on data this size.
    bucket_stats = rows.agg(
        F.count(F.lit(1)).alias("rows"),
        F.sum(F.when((F.col("ord") == F.col("center"))
                     & ((F.col("n_scan") if full else F.col("n_firsts")) > max_bucket), 1)
              .otherwise(0)).alias("oversized")).collect()[0]
    metrics.counts["bucket_rows"] = bucket_stats.rows
    metrics.counts["oversized_buckets"] = bucket_stats.oversized or 0

    # Exact links: each copy to the first copy of its text (band 0 holds every document that
    # has bands); documents without bands (empty texts) are grouped by fingerprint apart.
    no_bands = docs.where(~has_bands).select("ord", "fp_hi", "fp_lo")
    firsts_nb = no_bands.groupBy("fp_hi", "fp_lo").agg(F.min("ord").alias("rep"))
    exact_links = (rows.where((F.col("band") == 0) & ~F.col("first"))
                   .select(F.col("ord").alias("a"), F.col("rep").alias("b"))
                   .unionByName(no_bands.join(firsts_nb, ["fp_hi", "fp_lo"])
                                .where(F.col("ord") != F.col("rep"))
                                .select(F.col("ord").alias("a"), F.col("rep").alias("b"))))

    # Candidate pairs, as LshIndex::candidates makes them per bucket: every pair when the
    # bucket has at most --max-bucket members, else each member with the center. ndup scan
    # (flag 1) buckets every document; ndup dedup (flag 2) only the first copies of texts.
    mb = max_bucket
    scan_all = F.col("scan") & (F.col("n_scan") <= mb)
    dedup_all = F.col("first") & (F.col("n_firsts") <= mb)
    side = rows.where((scan_all if full else F.lit(False)) | dedup_all)
    left = side.select("key", "band", F.col("ord").alias("a"), F.col("rep").alias("ra"),
                       F.col("first").alias("fa"), F.col("scan").alias("sa"), "n_scan",
                       "n_firsts")
    right = side.select("key", "band", F.col("ord").alias("b"), F.col("rep").alias("rb"),
                        F.col("first").alias("fb"), F.col("scan").alias("sb"))
    flags = F.when(F.col("fa") & F.col("fb") & (F.col("n_firsts") <= mb), 2).otherwise(0)
    if full:
        flags = flags.bitwiseOR(
            F.when(F.col("sa") & F.col("sb") & (F.col("n_scan") <= mb), 1).otherwise(0))
    every = (left.join(right, ["key", "band"]).where(F.col("a") < F.col("b"))
             .select("a", "b", "ra", "rb", flags.alias("flags")).where(F.col("flags") != 0))
    star = (rows.where(F.col("first") & (F.col("n_firsts") > mb)
                       & (F.col("ord") != F.col("center")))
            .select(F.col("center").alias("a"), F.col("ord").alias("b"),
                    F.col("center").alias("ra"), F.col("rep").alias("rb"), F.lit(2).alias("flags")))
    if full:
        # Scan's star may have another center (when the first record is one scan skips).
        star = star.unionByName(
            rows.where(F.col("scan") & (F.col("n_scan") > mb)
                       & (F.col("ord") != F.col("center_scan")))
            .select(F.col("center_scan").alias("a"), F.col("ord").alias("b"),
                    F.col("center_scan_rep").alias("ra"), F.col("rep").alias("rb"),
                    F.lit(1).alias("flags")))
    cand = (every.unionByName(star).groupBy("a", "b")
            .agg(F.bit_or("flags").alias("flags"), F.min("ra").alias("ra"), F.min("rb").alias("rb")))
    cand = checkpoint(cand)
    metrics.counts["candidates"] = cand.count()

    # 3. Verification by signature agreement, once per pair of texts: copies have equal
    # signatures, so a pair's agreement is that of the first copies of its two texts, and
    # num_perm for two copies of one text. Only the signatures of first copies in some pair
    # travel.
    metrics.start("verify")
    text_pairs = (cand.where(F.col("ra") != F.col("rb"))
                  .select(F.least("ra", "rb").alias("x"), F.greatest("ra", "rb").alias("y"))
                  .distinct())
    need = (text_pairs.select(F.col("x").alias("ord"))
            .unionByName(text_pairs.select(F.col("y").alias("ord"))).distinct())
    # The documents to verify are few next to the corpus: broadcast, so that the signatures are
    # filtered where they are cached, not shuffled all to be filtered.
    sigs = docs.select("ord", "signature").join(F.broadcast(need), "ord", "left_semi")
    sx = sigs.select(F.col("ord").alias("x"), F.col("signature").alias("sx"))
    sy = sigs.select(F.col("ord").alias("y"), F.col("signature").alias("sy"))
    agree = F.expr("aggregate(zip_with(sx, sy, (p, q) -> IF(p = q, 1, 0)), 0, (s, v) -> s + v)")
    agreement = text_pairs.join(sx, "x").join(sy, "y").select("x", "y", agree.alias("m"))
    verified = (cand.withColumn("x", F.least("ra", "rb")).withColumn("y", F.greatest("ra", "rb"))
                .join(agreement, ["x", "y"], "left")
                .select("a", "b", "flags",
                        F.when(F.col("ra") == F.col("rb"), F.lit(num_perm))
                        .otherwise(F.col("m")).alias("m"))
                .where(F.col("m") >= at_threshold))
    verified = checkpoint(verified)
    metrics.counts["verified"] = verified.count()

    # 4. Components of both graphs in one run: dedup's (exact links and verified pairs among
    # first copies) on even node numbers, scan's on odd ones, so that they share every round's
    # Spark jobs. The smallest node of a component is still its smallest `ord`.
    metrics.start("components")
    edges = exact_links.select((F.col("a") * 2).alias("a"), (F.col("b") * 2).alias("b"))
    edges = edges.unionByName(verified.where((F.col("flags").bitwiseAND(2)) != 0)
                              .select((F.col("a") * 2).alias("a"), (F.col("b") * 2).alias("b")))
    if full:
        edges = edges.unionByName(verified.where((F.col("flags").bitwiseAND(1)) != 0)
                                  .select((F.col("a") * 2 + 1).alias("a"),
                                          (F.col("b") * 2 + 1).alias("b")))
    comp, rounds = connected_components(edges, checkpoint)
    metrics.counts["cc_rounds"] = rounds
    comp = comp.select(F.shiftright("node", 1).alias("ord"),
                       F.col("node").bitwiseAND(1).alias("graph"),
                       F.shiftright("root", 1).alias("root"))

    # 5. Keep one per component; write clusters and pairs. Only the documents of some
    # component are aggregated; the others are their own cluster.
    metrics.start("keep")
    named = docs.select("ord", "doc", "id", "chars", "fp_hi", "fp_lo")
    if full:
        named = named.join(renamed, "ord", "left").withColumn(
            "scan_id", F.when(F.col("skipped"), F.lit(None).cast("string"))
            .otherwise(F.coalesce("scan_name", "id")))
    # A component is labelled by its smallest id: scan's ids in scan's graph.
    members = named.join(comp, "ord").withColumn(
        "name", F.when(F.col("graph") == 1, F.col("scan_id")).otherwise(F.col("id"))
        if full else F.col("id"))
    if args.keep == "first":
        best = F.min(F.struct(F.col("ord").alias("k1"), F.col("ord"), F.col("id"),
                              F.col("fp_hi"), F.col("fp_lo")))
    else:
        sign = -1 if args.keep == "longest" else 1
        best = F.min(F.struct((F.col("chars") * sign).alias("k1"), F.col("id").alias("k2"),
                              F.col("ord"), F.col("id"), F.col("fp_hi"), F.col("fp_lo")))
    chosen = members.groupBy("graph", "root").agg(
        best.alias("best"), F.min("name").alias("cluster"), F.count(F.lit(1)).alias("size"))
    labelled = checkpoint(members.join(chosen, ["graph", "root"]))
    in_comp = (labelled.where(F.col("graph") == 0)
               .select("ord", "cluster", "size",
                       (F.col("ord") == F.col("best.ord")).alias("keep"),
                       F.col("best.id").alias("kept"),
                       F.when(F.col("ord") == F.col("best.ord"), F.lit(None).cast("string"))
                       .when((F.col("fp_hi") == F.col("best.fp_hi"))
                             & (F.col("fp_lo") == F.col("best.fp_lo")), F.lit("exact"))
                       .otherwise(F.lit("near")).alias("reason")))
    if full:
        in_comp = in_comp.join(labelled.where(F.col("graph") == 1)
                               .select("ord", F.col("cluster").alias("scan_cluster")),
                               "ord", "full_outer")
    base = docs.select("ord", "file", "block", "pos", "doc", "id", "source", "line")
    if full:
        base = base.join(renamed, "ord", "left").withColumn(
            "scan_id", F.when(F.col("skipped"), F.lit(None).cast("string"))
            .otherwise(F.coalesce("scan_name", "id")))
    clusters = (base.join(in_comp, "ord", "left")
                .select("ord", "file", "block", "pos", "doc", "id", "source", "line",
                        *(["scan_id"] if full else []),
                        F.coalesce("cluster", "id").alias("cluster"),
                        F.coalesce("size", F.lit(1)).alias("size"),
                        F.coalesce("keep", F.lit(True)).alias("keep"),
                        F.coalesce("kept", "id").alias("kept"), "reason",
                        *(["scan_cluster"] if full else [])))
    clusters = checkpoint(clusters)
    clusters.drop("ord", "file", "block", "pos").orderBy("doc").write.mode("overwrite").parquet(
        os.path.join(args.out, "clusters"))
    # Every document of a pair is in a component of the pair's graph: its id and number are
    # there, without going back to the whole documents table.
    pair_graph = 1 if full else 0
    pair_flag = 1 if full else 2
    ids = labelled.where(F.col("graph") == pair_graph)
    ida = ids.select(F.col("ord").alias("a"), F.col("name").alias("ia"), F.col("doc").alias("da"))
    idb = ids.select(F.col("ord").alias("b"), F.col("name").alias("ib"), F.col("doc").alias("db"))
    in_order = F.col("ia") <= F.col("ib")
    pairs = (verified.where((F.col("flags").bitwiseAND(pair_flag)) != 0)
             .join(ida, "a").join(idb, "b")
             .select(F.when(in_order, F.col("ia")).otherwise(F.col("ib")).alias("a"),
                     F.when(in_order, F.col("ib")).otherwise(F.col("ia")).alias("b"),
                     (F.col("m") / F.lit(float(num_perm))).alias("estimate"),
                     F.when(in_order, F.col("da")).otherwise(F.col("db")).alias("doc_a"),
                     F.when(in_order, F.col("db")).otherwise(F.col("da")).alias("doc_b")))
    pairs.orderBy("a", "b").write.mode("overwrite").parquet(os.path.join(args.out, "pairs"))
    # The counts, in one job each over small cached tables.
    summary = clusters.agg(F.sum(F.col("keep").cast("long")).alias("kept"),
                           F.sum(F.when(F.col("reason") == "exact", 1).otherwise(0)).alias("exact"),
                           F.sum(F.when(F.col("reason") == "near", 1).otherwise(0)).alias("near")
                           ).collect()[0]
    pairs_count = verified.where((F.col("flags").bitwiseAND(pair_flag)) != 0).count()
    metrics.counts.update({"kept": summary.kept, "dropped_exact": summary.exact,
                           "dropped_near": summary.near, "pairs": pairs_count})

    # 7. The deduplicated dataset: the input again, less the dropped rows, in input order.
    metrics.start("write")
    write_dedup(spark, inputs, args, clusters.where("keep").select("file", "block", "pos"),
                {(o[0], o[1]): n for o, n in zip(offsets, split_lines)})
    metrics.stop()
    rows.unpersist()
    metrics.shuffle()
    result = {
        "documents": total_docs,
        "params": {**params, "threshold": args.threshold, "max_bucket": args.max_bucket,
                   "keep": args.keep, "mode": args.mode, "at_threshold": at_threshold},
        "counts": metrics.counts,
        "stages": metrics.stages,
        "seconds": round(time.time() - t0, 3),
        "spark": {"master": sc.master, "default_parallelism": sc.defaultParallelism},
    }
    spark.stop()
    with open(os.path.join(args.out, "metrics.json"), "w") as f:
        json.dump(result, f, indent=2)
    c = metrics.counts
    log(args, f"{total_docs} documents, {c['candidates']} candidates, {c['pairs']} pairs; "
              f"kept {c['kept']}, dropped {c['dropped_exact']} exact and {c['dropped_near']} "
              f"near duplicates in {result['seconds']:.1f} s")
    return result


def scan_names(docs: DataFrame, metrics: "Metrics", checkpoint) -> DataFrame:
    """Where `ndup scan` names records otherwise than `ndup dedup` (`docs.id`), as `Ids::assign`
    leaves them after reading the whole input: `(ord, scan_name, skipped)` rows, persisted,
    usually few.

    - A record whose real id an earlier record (in input order) has is skipped: no document of
      the scan (`skipped`).
    - A made-up name (`LINE` / `SOURCE:LINE`) that some real id has, anywhere in the input,
      gives way to it: the record is named by the first of `SOURCE:LINE`, `SOURCE:LINE#2`...
      that no real id has (`scan_name`).
    """
    real = docs.where(~F.col("made_up")).select("id", "ord")
    ids = checkpoint(real.groupBy("id").agg(F.min("ord").alias("first"),
                                            F.count(F.lit(1)).alias("n")))
    skipped = (real.join(ids.where("n > 1"), "id").where(F.col("ord") != F.col("first"))
               .select("ord", F.lit(None).cast("string").alias("scan_name"),
                       F.lit(True).alias("skipped")))
    taken = ids.select(F.col("id").alias("name"))
    pending = (docs.where("made_up").join(taken.withColumnRenamed("name", "id"), "id", "left_semi")
               .select("ord", F.concat(F.col("source"), F.lit(":"), F.col("line").cast("string"))
                       .alias("base")))
    found = []
    k = 1
    # Each round tries the next name for the records whose last try was taken: one round in
    # practice, none when no made-up name clashes.
    while pending.limit(1).count():
        tried = pending.withColumn(
            "name", F.col("base") if k == 1 else F.concat(F.col("base"), F.lit(f"#{k}")))
        found.append(tried.join(taken, "name", "left_anti")
                     .select("ord", F.col("name").alias("scan_name"),
                             F.lit(False).alias("skipped")))
        pending = checkpoint(tried.join(taken, "name", "left_semi").select("ord", "base"))
        k += 1
    out = skipped
    for f in found:
        out = out.unionByName(f)
    out = checkpoint(out)
    n = out.count()
    metrics.counts["scan_renamed_or_skipped"] = n
    # Joined to every document several times: broadcast when it is small (the usual case).
    return F.broadcast(out) if n < 2_000_000 else out


def write_dedup(spark: SparkSession, inputs: Inputs, args: argparse.Namespace,
                kept: DataFrame, split_lines: dict) -> None:
    """Reads the input again (the same splits, so the same keys) and writes the rows of the kept
    documents, in input order. What is kept travels as one bitmap per split (a bit per line: 125
    MB for a billion lines), broadcast, so the input itself is never shuffled to be filtered."""
    index = inputs.index
    jsonl = inputs.fmt == "jsonl"

    def bitmaps(pdf):
        import numpy as np
        import pandas as pd

        f, b = int(pdf["file"].iloc[0]), int(pdf["block"].iloc[0])
        bits = np.zeros(split_lines[(f, b)], np.uint8)
        bits[pdf["pos"].to_numpy()] = 1
        return pd.DataFrame({"file": [f], "block": [b],
                             "bits": [np.packbits(bits, bitorder="little").tobytes()]})

    maps = (kept.groupBy("file", "block")
            .applyInPandas(bitmaps, "file int, block long, bits binary").collect())
    bc = spark.sparkContext.broadcast({(r.file, r.block): bytes(r.bits) for r in maps})

    src = input_frame(spark, inputs, args, all_columns=True)
    payload = [f for f in src.schema.fields if f.name not in ("_path", "_block")]
    schema = T.StructType(payload + [T.StructField("_file", T.IntegerType(), False),
                                     T.StructField("_bk", T.LongType(), False),
                                     T.StructField("_pos", T.LongType(), False)])

    def keep_rows(batches):
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        keep = bc.value
        run_key, run_pos = None, 0
        for b in batches:
            if b.num_rows == 0:
                continue
            files = file_numbers(b, index)
            blocks = b.column("_block").to_numpy(zero_copy_only=False).astype(np.int64)
            n = b.num_rows
            change = np.ones(n, bool)
            change[1:] = (files[1:] != files[:-1]) | (blocks[1:] != blocks[:-1])
            starts = np.flatnonzero(change)
            seg = np.cumsum(change) - 1
            # Position of each row in its split (a split may go on from the previous batch).
            pos = np.arange(n, dtype=np.int64) - starts[seg]
            if run_key == (files[0], blocks[0]):
                pos[seg == 0] += run_pos
            mask = np.zeros(n, bool)
            for s_, e_ in zip(starts, np.append(starts[1:], n)):
                bits = keep.get((int(files[s_]), int(blocks[s_])))
                if bits is None:
                    continue
                arr = np.unpackbits(np.frombuffer(bits, np.uint8), bitorder="little")
                mask[s_:e_] = arr[pos[s_:e_]] == 1
            run_key = (files[-1], blocks[-1])
            run_pos = int(pos[-1]) + 1
            sel = pa.array(mask)
            cols = [b.column(f.name).filter(sel) for f in payload]
            if jsonl:
                # ndup writes a kept record with its line end as \n.
                cols[0] = pc.replace_substring_regex(cols[0], r"\r$", "")
            yield pa.RecordBatch.from_arrays(
                cols + [pa.array(files[mask]), pa.array(blocks[mask]), pa.array(pos[mask])],
                names=[f.name for f in payload] + ["_file", "_bk", "_pos"])

    out = src.mapInArrow(keep_rows, schema)
    if not args.no_sort_output:
        out = out.orderBy("_file", "_bk", "_pos")
    out = out.drop("_file", "_bk", "_pos")
    path = os.path.join(args.out, "dedup")
    if jsonl:
        out.write.mode("overwrite").option("lineSep", "\n").text(path)
    else:
        out.write.mode("overwrite").parquet(path)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        run(args)
    except JobError as e:
        print(f"ndup-spark: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
