#!/usr/bin/env python3
"""ndup on Spark: near-duplicate detection and deduplication of corpora too large for one machine.

    spark-submit spark/ndup_spark.py corpus/*.jsonl --ndup target/release/ndup --out result/
    python spark/ndup_spark.py data/train/ --text-field content --out result/ --keep longest

The map stage is ndup itself: each Spark partition of the input is piped, as JSON lines, through
`ndup sign - --out -` (in an empty working directory of its own, so that no `ndup.toml` is read),
and the Arrow stream it writes is handed to Spark.
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

Outputs, under `--out DIR` (any filesystem Spark writes; the four are removed first when a run
into DIR starts, and `metrics.json`, written last, says that the run finished):

- `DIR/pairs` (Parquet): `a`, `b` (ids, `a < b`), `estimate`, `doc_a`, `doc_b`: the pairs of
  `ndup scan --verify signature` (with `--mode dedup`: the pairs among distinct texts that
  `ndup dedup` joins, instead).
- `DIR/clusters` (Parquet), one row per document: `doc`, `id`, `source`, `line`, `cluster` (the
  smallest id of its dedup component), `size`, `keep`, `kept` (the id kept for it), `reason`
  (`exact`/`near`, null when kept) and, with `--mode full`, `scan_id` (the id `ndup scan` gives
  it, null when the scan skips it for a duplicate id) and `scan_cluster`: the smallest id of its
  cluster as `ndup scan --clusters` reports it (null when it is in no pair).
- `DIR/dedup`: the kept input rows, in input order: JSON-lines input gives text part files whose
  concatenation is what `ndup dedup` writes, byte for byte; Parquet input gives Parquet with the
  input's schema (see `--parquet-writer`).
- `DIR/metrics.json`: time, shuffle bytes and counts per stage.

Bad input or arguments end the job with one line on stderr and exit status 2; any other failure
with one line, exit status 1, and the whole trace in a file it names. See docs/scale-out.md for
the design and its costs.
"""

from __future__ import annotations

import argparse
import atexit
import json
import math
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.parse
import urllib.request
import zlib
from concurrent.futures import ThreadPoolExecutor
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

# ndup's limits (src/bin/ndup/cli.rs, src/source/records.rs).
MAX_THREADS = 1024
DEFAULT_MAX_LINE_BYTES = 64 << 20
MAX_ID_BYTES = 4096
BOM = b"\xef\xbb\xbf"
GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
PARQUET_MAGIC = b"PAR1"
# Bytes read from the head of a JSON-lines file: its compression, and a byte-order mark under
# gzip.
HEAD_BYTES = 1 << 16

# What the signing stage returns: one row per document (kind 0), and one per input split
# (kind 1) with the split's counts of lines, documents and blank lines.
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
        T.StructField("n_blank", T.LongType(), True),
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
        ("n_blank", pa.int64()),
    ]
)


class JobError(Exception):
    """A problem with the input or the arguments, reported in one line, without a traceback."""


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
                    help="input format (auto: by the file names, .parquet or .jsonl/.ndjson)")
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
                    "shell-quoted string: --sign-args '-k 5 --no-nfkc'; a --stopwords file is "
                    "read on the driver and shipped to the executors")
    ap.add_argument("--max-bucket", type=int, default=1000, metavar="N",
                    help="buckets with more members are linked as a star around their first "
                    "member (as ndup's --max-bucket; at least 2)")
    ap.add_argument("--keep", choices=["first", "longest", "shortest"], default="first",
                    help="which document of a cluster dedup keeps (as ndup dedup's --keep)")
    ap.add_argument("--mode", choices=["full", "dedup"], default="full",
                    help="full: also the pairs and clusters of `ndup scan` (every document, "
                    "exact copies included, through LSH); dedup: only what `ndup dedup` needs "
                    "(cheaper on corpora with many exact copies)")
    ap.add_argument("--parquet-writer", choices=["auto", "arrow", "spark"], default="auto",
                    help="how DIR/dedup is written for Parquet input: arrow (pyarrow on the "
                    "executors reads the kept rows' files and writes them with the input's exact "
                    "schema; the input and DIR must be local paths to the executors), spark "
                    "(Spark's reader and writer: any filesystem, but Spark's types); auto: arrow "
                    "when every input and DIR are file: paths")
    ap.add_argument("--ndup", default=shutil.which("ndup") or "ndup", metavar="PATH",
                    help="the ndup binary, shipped to the executors with SparkContext.addFile "
                    "(default: ndup on PATH)")
    ap.add_argument("--ndup-on-executors", metavar="PATH",
                    help="use the ndup at PATH on every executor instead of shipping --ndup (a "
                    "relative PATH is taken from the executor's working directory)")
    ap.add_argument("--ndup-threads", type=int, default=1, metavar="N",
                    help="threads of each ndup process (default 1: Spark runs a task per core; "
                    "0: one per core; at most 1024)")
    ap.add_argument("--master", default=None,
                    help="Spark master (default: spark-submit's, or local[*])")
    ap.add_argument("--shuffle-partitions", type=int, metavar="N",
                    help="spark.sql.shuffle.partitions (default: one per 64 MB of input, at "
                         "least two per core, unless the Spark configuration sets it)")
    ap.add_argument("--max-partition-bytes", metavar="SIZE",
                    help="spark.sql.files.maxPartitionBytes: input bytes per signing task")
    ap.add_argument("--no-sort-output", action="store_true",
                    help="write DIR/dedup without restoring input order (saves a sort of the "
                    "kept rows; JSON lines and --parquet-writer spark only)")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="more Spark configuration (repeatable)")
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return ap.parse_args(argv)


def log(args: argparse.Namespace, msg: str) -> None:
    if not args.quiet:
        print(f"ndup-spark: {msg}", file=sys.stderr, flush=True)


def parse_size(s: str) -> int:
    """A size as ndup reads one (`parse_size` in src/bin/ndup/cli.rs): bytes, or K, M, G, T
    (powers of 1024), optionally followed by B or iB; fractions allowed."""
    lower = s.strip().lower()
    body = lower[:-2] if lower.endswith("ib") else lower[:-1] if lower.endswith("b") else lower
    shift = {"k": 10, "m": 20, "g": 30, "t": 40}.get(body[-1:], 0)
    digits = body[:-1] if shift else body
    try:
        v = float(digits.strip())
    except ValueError:
        v = float("nan")
    if not math.isfinite(v) or v < 0 or v * (1 << shift) >= 2.0**64 or "_" in digits:
        raise JobError(f"`{s}` is not a size (try 4096, 64K, 500M or 1.5G)")
    return round(v * (1 << shift))

# Flags of `ndup sign` that the job sets itself (or that make no sense for it): refused in
# --sign-args, with the job's flag to use instead where there is one.
OWNED_FLAGS = {
    "--out": "--out", "--ids": None, "-j": "--ndup-threads", "--threads": "--ndup-threads",
    "-q": "--quiet", "--quiet": "--quiet", "--color": None, "--shard-rows": None,
    "--jsonl": "--format", "--id-field": "--id-field", "--text-field": "--text-field",
    "-t": "--threshold", "--threshold": "--threshold", "--num-perm": "--num-perm",
    "--seed": "--seed", "-b": "--bands", "--bands": "--bands", "-r": "--rows",
    "--rows": "--rows", "--max-bucket": "--max-bucket", "--verify": None,
    "--config": "flags", "--files-from": "INPUT", "--glob": "INPUT", "--exclude": "INPUT",
    "--max-filesize": None, "--partial-input": None, "-h": None, "--help": None, "-V": None,
    "--version": None,
}


@dataclass
class SignArgs:
    """--sign-args, checked: the flags passed on as they are, and the two the job reads."""

    flags: list[str]
    stopwords: str | None = None  # absolute, on the driver; shipped to the executors
    max_line: int | None = None  # --max-line-length in bytes, when given


def parse_sign_args(text: str, cwd: str | None = None) -> SignArgs:
    try:
        tokens = shlex.split(text)
    except ValueError as e:
        raise JobError(f"--sign-args: {e} in {text!r}") from None
    out = SignArgs([])
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        name, eq, value = tok.partition("=") if tok.startswith("--") else (tok, "", "")
        # Short flags take their value attached too (`-j4`).
        short = [f for f in OWNED_FLAGS if len(f) == 2 and tok.startswith(f)]
        owned = name if name in OWNED_FLAGS else None if tok.startswith("--") or not short \
            else short[0]
        if owned is not None:
            instead = OWNED_FLAGS[owned]
            why = (f"give the job's {instead}" if instead and instead.startswith("--")
                   else "pass ndup's parameters as flags" if instead == "flags"
                   else "give the files as INPUT" if instead == "INPUT"
                   else "the job sets it")
            raise JobError(f"--sign-args: {owned} is not for --sign-args ({why})")
        if name in ("--stopwords", "--max-line-length"):
            if not eq:
                if i + 1 >= len(tokens):
                    raise JobError(f"--sign-args: {name} needs a value")
                i += 1
                value = tokens[i]
            if name == "--stopwords":
                # Read by ndup in a directory of its own: a relative path is taken from the
                # driver's working directory, as a Spark user expects, and the file shipped.
                out.stopwords = os.path.join(cwd or os.getcwd(), value)
            else:
                try:
                    out.max_line = parse_size(value)
                except JobError as e:
                    raise JobError(f"--sign-args: --max-line-length: {e}") from None
        else:
            out.flags.append(tok)
        i += 1
    return out


def resolve_ndup(path: str) -> str:
    """The ndup binary on the driver, as an absolute path: a path with a slash is taken from the
    working directory, a bare name is looked for on PATH, as a shell does."""
    if os.sep in path or (os.altsep and os.altsep in path):
        return os.path.abspath(path)
    found = shutil.which(path)
    if found is None:
        raise JobError(f"cannot find ndup ({path}) on PATH: give its path with --ndup")
    return os.path.abspath(found)


def check_args(args: argparse.Namespace) -> SignArgs:
    """Checks of the arguments that need neither Spark nor ndup; the --sign-args, parsed."""
    if args.max_bucket < 2:
        raise JobError("--max-bucket must be at least 2")
    if args.ndup_threads < 0:
        raise JobError(f"--ndup-threads: `{args.ndup_threads}` is not a whole number of threads")
    if args.ndup_threads > MAX_THREADS:
        raise JobError(f"--ndup-threads: at most {MAX_THREADS} threads, not {args.ndup_threads}")
    if args.shuffle_partitions is not None and args.shuffle_partitions < 1:
        raise JobError("--shuffle-partitions must be at least 1")
    if args.max_partition_bytes is not None and not re.fullmatch(
            r"\s*\d+\s*(b|k|kb|m|mb|g|gb|t|tb|p|pb)?\s*", args.max_partition_bytes, re.I):
        raise JobError(f"--max-partition-bytes: `{args.max_partition_bytes}` is not a size "
                       "(134217728, 128m, 1g)")
    for kv in args.conf:
        if "=" not in kv or not kv.partition("=")[0].strip():
            raise JobError(f"--conf {kv}: not KEY=VALUE")
    if args.ndup_on_executors == "":
        raise JobError("--ndup-on-executors: an empty path")
    sign = parse_sign_args(args.sign_args)
    if sign.stopwords and os.path.basename(sign.stopwords) == os.path.basename(args.ndup):
        raise JobError("--sign-args: the --stopwords file and the ndup binary have the same "
                       "name; Spark ships files by name: rename one")
    return sign


# --------------------------------------------------------------------------------------------
# ndup on the driver


def first_line(text: str) -> str:
    """The first line of an error that says something, without `error: `/`ndup: `."""
    for line in text.splitlines():
        line = line.strip()
        if line:
            for prefix in ("error: ", "ndup: "):
                if line.startswith(prefix):
                    line = line[len(prefix):]
            return line
    return "(no message)"


def sign_flags(args: argparse.Namespace, sign: SignArgs) -> list[str]:
    """The flags every `ndup sign` of the job gets, less --stopwords (a path that differs on
    the driver and the executors) and --max-line-length (which differs for Parquet: `job`)."""
    # Every record gets a row, named as read: which id wins, and what a record without one is
    # called, are decided over the whole input by this job (`scan_names`).
    flags = ["--ids", "as-read", "--threshold", repr(args.threshold)]
    for name in ("num_perm", "bands", "rows", "seed"):
        v = getattr(args, name)
        if v is not None:
            flags += [f"--{name.replace('_', '-')}", str(v)]
    return flags + sign.flags


def run_ndup(cmd: list[str], data: bytes) -> subprocess.CompletedProcess:
    """Runs ndup on the driver as the executors run it: in an empty directory of its own (no
    `ndup.toml` of the working directory is read)."""
    with tempfile.TemporaryDirectory(prefix="ndup-probe-") as tmp:
        try:
            return subprocess.run(cmd, input=data, capture_output=True, cwd=tmp)
        except OSError as e:
            raise JobError(f"cannot run ndup ({cmd[0]}): {e.strerror or e}; give its path with "
                           "--ndup") from None


def probe_ndup(exe: str, args: argparse.Namespace, flags: list[str]) -> dict:
    """Runs `ndup sign` on one record on the driver, as the executors run it (the same flags
    and threads): checks the binary and the flags before any Spark work, and returns the
    signing parameters it writes (num_perm, bands, rows...)."""
    cmd = [exe, "sign", "-", "--jsonl", "--out", "-", "-q", "-j", str(args.ndup_threads),
           "--id-field", "id", "--text-field", "text", *flags]
    r = run_ndup(cmd, b'{"id":"probe","text":"probe text"}\n')
    err = r.stderr.decode(errors="replace")
    too_old = (f"ndup ({exe}) is too old for the job ({{}}): build it from this checkout "
               "(cargo build --release)")
    if r.returncode != 0:
        if "unrecognized subcommand" in err and "sign" in err:
            raise JobError(too_old.format("it has no `ndup sign`"))
        for flag in ("--ids", "--out", "--jsonl"):
            if f"unexpected argument '{flag}'" in err or f"invalid value '-' for '{flag}" in err:
                raise JobError(too_old.format(f"its `ndup sign` takes no {flag}"))
        if "invalid value 'as-read'" in err:
            raise JobError(too_old.format("its `ndup sign` has no --ids as-read"))
        raise JobError(f"ndup sign: {first_line(err)}")
    try:
        meta = pa.ipc.open_stream(r.stdout).schema.metadata
        params = json.loads(meta[b"ndup.params"])
        params["format_version"] = meta[b"ndup.format_version"].decode()
    except (pa.ArrowInvalid, KeyError, TypeError, ValueError) as e:
        raise JobError(too_old.format(f"`ndup sign --out -` wrote no Arrow stream: {e}")) from None
    missing = [k for k in ("num_perm", "bands", "rows", "sketch") if k not in params]
    if missing:
        raise JobError(f"ndup sign wrote no {', '.join(missing)}: the job needs a MinHash "
                       "signature sketch (--sketch fss, oph or classic)")
    return params


# --------------------------------------------------------------------------------------------
# Inputs


@dataclass
class InputFile:
    name: str  # as ndup would name it: the path as given, or DIR/relative for a walked directory
    uri: str  # fully qualified, percent-encoded (as Spark's `_metadata.file_path`)
    size: int  # bytes
    path: str = ""  # fully qualified, as Hadoop spells a Path (not encoded)
    local: str | None = None  # the path on this machine, for file: URIs
    bom: bool = False  # JSON lines starting with a byte-order mark (Spark drops it)
    meta: object = None  # Parquet: the footer (pyarrow FileMetaData)


@dataclass
class Inputs:
    fmt: str
    files: list[InputFile]  # the files read, in input order
    # Normalized qualified path -> index in `files`.
    index: dict[str, int] = field(default_factory=dict)
    # Files ndup would skip whole (a Parquet file without the text column...): (name, reason).
    skipped: list[tuple[str, str]] = field(default_factory=list)
    # More than one source, as ndup counts them (skipped files included): ids made of line
    # numbers are then prefixed with the source's name.
    several: bool = False
    # Parquet: the schema of the first file read (the dedup output's), and the paths of the
    # text and id columns in it (`None`: no id column).
    schema: pa.Schema | None = None
    text_path: list[str] | None = None
    id_path: list[str] | None = None


def literal(path: str) -> str:
    """A path for Spark's readers, which take `[`, `{`, `*`, `?` and `\\` in a name for a glob:
    escaped, so that a file is read by its name."""
    return re.sub(r"([\[\]{}*?\\])", r"\\\1", path)


def normalize_uri(uri: str) -> str:
    """One spelling for a file's URI (`file:/a%20b`, `file:///a b` -> `file:///a b`)."""
    u = urllib.parse.urlsplit(uri)
    return f"{u.scheme}://{u.netloc}{urllib.parse.unquote(u.path)}"


def is_parquet_name(name: str) -> bool:
    """As ndup's `is_parquet_path`: the extension `parquet`, in any case."""
    base = name.rsplit("/", 1)[-1]
    return "." in base.lstrip(".") and base.rsplit(".", 1)[1].lower() == "parquet"


def is_jsonl_name(name: str) -> bool:
    """As ndup's `is_jsonl_path`: `.jsonl` or `.ndjson`, optionally followed by `.gz`, `.zst` or
    `.zstd`, in any case."""
    base = name.rsplit("/", 1)[-1].lower()
    for s in (".gz", ".zst", ".zstd"):
        if base.endswith(s):
            base = base[: -len(s)]
            break
    return base.endswith((".jsonl", ".ndjson"))


def walk_skips(name: str) -> bool:
    """A file or directory a directory walk leaves out, as ndup (and Spark) walk a Parquet
    dataset: any name starting with `.` or `_` (`_SUCCESS`, `.part-0.parquet.crc`, the
    `_temporary` directory of a job still writing)."""
    return name.startswith((".", "_"))


class Hadoop:
    """Hadoop's FileSystem API through the JVM gateway, so that any store Spark reads works."""

    def __init__(self, spark: SparkSession):
        self.jvm = spark.sparkContext._jvm
        self.conf = spark.sparkContext._jsc.hadoopConfiguration()
        self.Path = self.jvm.org.apache.hadoop.fs.Path

    def fs(self, path):
        return path.getFileSystem(self.conf)

    def path(self, given: str, what: str):
        """A qualified Path and its FileSystem; a JobError naming `what` when the scheme or the
        name is not one Hadoop takes."""
        try:
            p = self.Path(given)
            fs = self.fs(p)
            return fs.makeQualified(p), fs
        except Exception as e:
            raise JobError(f"{what}: {java_message(e)}") from None

    def read(self, fs, path, offset: int, n: int) -> bytes:
        stream = fs.open(path)
        try:
            if offset:
                stream.seek(offset)
            return bytes(self.jvm.org.apache.commons.io.IOUtils.toByteArray(stream, n))
        finally:
            stream.close()

    def write(self, fs, path, data: bytes) -> None:
        stream = fs.create(path, True)
        try:
            stream.write(bytearray(data))
        finally:
            stream.close()


def java_message(e: BaseException) -> str:
    """A Java exception's class and message, in one line (`FileNotFoundException: ...`)."""
    je = getattr(e, "java_exception", None)
    if je is not None:
        try:
            cause = je
            while cause.getCause() is not None and cause.getCause() != cause:
                cause = cause.getCause()
            msg = cause.getMessage() or ""
            return f"{cause.getClass().getSimpleName()}: {first_line(str(msg))}"
        except Exception:
            pass
    return first_line(str(e))


def check_out(hadoop: Hadoop, out: str, clean: bool = False) -> str:
    """Checks --out before any work (a directory, or one that can be made); returns it
    qualified. With `clean`, removes what an earlier run left in it."""
    q, fs = hadoop.path(out, f"--out {out}")
    try:
        if fs.exists(q):
            if not fs.getFileStatus(q).isDirectory():
                raise JobError(f"--out {out}: exists and is not a directory")
        else:
            parent = q.getParent()
            while parent is not None and not fs.exists(parent):
                parent = parent.getParent()
            if parent is not None and not fs.getFileStatus(parent).isDirectory():
                raise JobError(f"--out {out}: {parent.toString()} is not a directory")
        # The outputs of an earlier run into DIR go first: a run that fails leaves none of them
        # beside new ones (metrics.json, written last, says a run finished).
        for name in ("metrics.json", "pairs", "clusters", "dedup") if clean else ():
            p = hadoop.Path(q, name)
            if fs.exists(p) and not fs.delete(p, True):
                raise JobError(f"--out {out}: cannot remove {name} of an earlier run")
    except JobError:
        raise
    except Exception as e:
        raise JobError(f"--out {out}: {java_message(e)}") from None
    return q.toString()


def file_key(uri: str):
    """What makes two names one file: the device and inode of a local file (through links, as
    ndup's `file_key`), the normalized URI of any other."""
    u = urllib.parse.urlsplit(uri)
    if u.scheme == "file":
        try:
            st = os.stat(urllib.parse.unquote(u.path))
            return ("inode", st.st_dev, st.st_ino)
        except OSError:
            pass
    return ("uri", normalize_uri(uri))


def list_inputs(spark: SparkSession, args: argparse.Namespace) -> Inputs:
    """The input files in ndup's order, each once: as given, directories walked in sorted order
    (name by name at each level, as ndup walks), through Hadoop's FileSystem so that any store
    works; then checked as ndup would read them (`check_jsonl`, `check_parquet`)."""
    hadoop = Hadoop(spark)
    found: list[InputFile] = []
    # Names the walks passed over, to say why a dataset held nothing to read.
    passed: list[str] = []
    for given in args.inputs:
        q, fs = hadoop.path(given, given)
        try:
            if not fs.exists(q):
                raise JobError(f"{given}: no such file or directory")
            status = fs.getFileStatus(q)
            if not status.isDirectory():
                found.append(InputFile(given, q.toUri().toString(), status.getLen(),
                                       q.toString()))
                continue
            local = q.toUri().getScheme() == "file"

            def walk(dir_path, rel: str):
                entries = sorted(fs.listStatus(dir_path), key=lambda s: s.getPath().getName())
                for st in entries:
                    name = st.getPath().getName()
                    child_rel = f"{rel}/{name}" if rel else name
                    # ndup does not follow symbolic links in a walk.
                    if local and os.path.islink(st.getPath().toUri().getPath()):
                        continue
                    if walk_skips(name):
                        passed.append(child_rel)
                        continue
                    if st.isDirectory():
                        yield from walk(st.getPath(), child_rel)
                    else:
                        yield child_rel, st.getPath(), st.getLen()

            base = given.rstrip("/") or "/"
            for rel, path, size in walk(q, ""):
                found.append(InputFile(f"{base}/{rel}", path.toUri().toString(), size,
                                       path.toString()))
        except JobError:
            raise
        except Exception as e:
            raise JobError(f"{given}: {java_message(e)}") from None
    # A file given twice (`a.jsonl ./a.jsonl`, or a shard and its directory) is read once, under
    # the first name given, as ndup reads it.
    files, seen = [], set()
    for f in found:
        key = file_key(f.uri)
        if key not in seen:
            seen.add(key)
            files.append(f)
    for f in files:
        u = urllib.parse.urlsplit(f.uri)
        if u.scheme == "file":
            f.local = urllib.parse.unquote(u.path)
    if not files:
        if passed:
            raise JobError(f"no input files: only hidden or `_` entries ({passed[0]}"
                           f"{f' and {len(passed) - 1} more' if len(passed) > 1 else ''}), "
                           "which a walk skips as Spark does")
        raise JobError("no input files")
    fmt = input_format(files, args.format)
    heads = read_heads(hadoop, files, fmt)
    if fmt == "jsonl":
        inputs = check_jsonl(files, heads)
    else:
        inputs = check_parquet(files, heads, args.text_field, args.id_field)
    inputs.several = len(files) > 1
    inputs.index = {normalize_uri(f.uri): i for i, f in enumerate(inputs.files)}
    return inputs


def input_format(files: list[InputFile], given: str) -> str:
    """JSON lines or Parquet, as ndup decides by the names (in any case): every file `.parquet`,
    or every file `.jsonl`/`.ndjson` (compressed or not)."""
    if given != "auto":
        return given
    parquet = [f for f in files if is_parquet_name(f.name)]
    jsonl = [f for f in files if is_jsonl_name(f.name)]
    other = [f for f in files if f not in parquet and f not in jsonl]
    if other:
        kind = "Parquet" if parquet else "JSON lines"
        if parquet or jsonl:
            raise JobError(f"{(parquet or jsonl)[0].name} is {kind} but {other[0].name} is not: "
                           "read them separately, or give --format jsonl or --format parquet")
        raise JobError(f"{other[0].name}: neither JSON lines (.jsonl, .ndjson) nor Parquet "
                       "(.parquet) by its name: give --format jsonl or --format parquet")
    if parquet and jsonl:
        raise JobError(f"{parquet[0].name} is Parquet but {jsonl[0].name} is JSON lines: the "
                       "job reads one kind per run")
    return "parquet" if parquet else "jsonl"


def read_heads(hadoop: Hadoop, files: list[InputFile], fmt: str) -> list:
    """Per file, what the checks need, read in parallel (a few small reads per file): the first
    bytes of JSON lines; the magic bytes and the footer of Parquet (`(head, footer, tail)`)."""

    def one(f: InputFile):
        try:
            path = hadoop.Path(f.path)
            fs = hadoop.fs(path)
            if fmt == "jsonl":
                return hadoop.read(fs, path, 0, min(f.size, HEAD_BYTES))
            if f.size < 12:
                return (hadoop.read(fs, path, 0, f.size), None, None)
            head = hadoop.read(fs, path, 0, 4)
            tail = hadoop.read(fs, path, f.size - 8, 8)
            n = struct.unpack("<I", tail[:4])[0]
            if head != PARQUET_MAGIC or tail[4:] != PARQUET_MAGIC or n > f.size - 12:
                return (head, None, tail)
            return (head, hadoop.read(fs, path, f.size - 8 - n, n), tail)
        except Exception as e:
            raise JobError(f"{f.name}: {java_message(e)}") from None

    with ThreadPoolExecutor(max_workers=max(1, min(16, len(files)))) as pool:
        return list(pool.map(one, files))


def check_jsonl(files: list[InputFile], heads: list[bytes]) -> Inputs:
    """JSON lines as Spark can read them as ndup does: plain, or gzip named `.gz` (Spark picks
    the codec by the name, ndup by the magic bytes); zstd is refused (no codec in Spark's bundled
    Hadoop), and so is anything Spark would decompress and ndup would not."""
    read = []
    for f, head in zip(files, heads):
        lower = f.name.lower()
        gz_name = f.name.endswith(".gz")
        if head.startswith(PARQUET_MAGIC):
            raise JobError(f"{f.name}: a Parquet file, read as JSON lines: give Parquet inputs in "
                           "a run of their own (--format parquet)")
        if head.startswith(ZSTD_MAGIC) or lower.endswith((".zst", ".zstd")):
            raise JobError(f"{f.name}: zstd-compressed JSON lines, which Spark's bundled Hadoop "
                           "cannot read: decompress it, or compress it with gzip (.gz)")
        if lower.endswith((".bz2", ".deflate", ".lz4", ".snappy", ".br")):
            raise JobError(f"{f.name}: Spark would decompress it by its name, and ndup reads "
                           "only gzip and zstd: decompress it, or compress it with gzip (.gz)")
        if head.startswith(GZIP_MAGIC):
            if not gz_name:
                raise JobError(f"{f.name}: gzip-compressed, but Spark decompresses only files "
                               "named *.gz (lower case): rename it")
            try:
                head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 8)
            except zlib.error:
                head = b""
        elif gz_name and f.size > 0:
            raise JobError(f"{f.name}: named .gz but not gzip-compressed: rename it")
        f.bom = head.startswith(BOM)
        read.append(f)
    return Inputs("jsonl", read)


def parquet_leaves(schema: pa.Schema):
    """The leaf columns of an Arrow schema in Parquet's column order, as `(parts, type)`: struct
    fields are walked into; any other type (lists and maps too) is a leaf here."""

    def walk(parts, t):
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                yield from walk(parts + [t.field(i).name], t.field(i).type)
        else:
            yield parts, t

    for f in schema:
        yield from walk([f.name], f.type)


def find_column(schema: pa.Schema, dotted: str):
    """The column at a dotted path, as ndup finds it (`Columns::resolve`): the first leaf column
    whose path, its names joined by dots, is `dotted` (`meta.url` is a column of that name, or the
    field `url` of a struct `meta`, whichever comes first); else the struct that path names.
    Returns `(parts, type)`, or None."""
    group = None
    for parts, t in parquet_leaves(schema):
        if ".".join(parts) == dotted:
            return parts, t
        if group is None and ".".join(parts).startswith(dotted + "."):
            for k in range(1, len(parts)):
                if ".".join(parts[:k]) == dotted:
                    ft = schema.field(parts[0]).type
                    for p in parts[1:k]:
                        ft = ft.field(p).type
                    group = (parts[:k], ft)
                    break
    return group


def _value_type(t: pa.DataType) -> pa.DataType:
    return t.value_type if pa.types.is_dictionary(t) else t


def is_text_type(t: pa.DataType) -> bool:
    t = _value_type(t)
    return pa.types.is_string(t) or pa.types.is_large_string(t) or (
        hasattr(pa.types, "is_string_view") and pa.types.is_string_view(t))


def is_id_type(t: pa.DataType) -> bool:
    return is_text_type(t) or pa.types.is_integer(_value_type(t))


def check_parquet(files: list[InputFile], heads: list, text_field: str, id_field: str) -> Inputs:
    """Parquet files as ndup reads them: a file it would skip whole (not Parquet, no text column,
    a text or id column of the wrong type) is skipped with the reason; the others must have the
    columns of the first (`ndup dedup` refuses others), checked from their footers."""
    inputs = Inputs("parquet", [])
    for f, (head, footer, tail) in zip(files, heads):
        if f.size == 0:
            inputs.skipped.append((f.name, "empty file"))
            continue
        if head[:4] != PARQUET_MAGIC or tail is None or tail[4:] != PARQUET_MAGIC:
            inputs.skipped.append((f.name, "not a Parquet file (no PAR1 magic)"))
            continue
        if footer is None:
            inputs.skipped.append((f.name, "its footer is longer than the file"))
            continue
        try:
            reader = pq.ParquetFile(pa.BufferReader(PARQUET_MAGIC + footer + tail))
            meta, schema = reader.metadata, reader.schema_arrow
        except Exception as e:
            inputs.skipped.append((f.name, f"its footer cannot be read ({first_line(str(e))})"))
            continue
        found = find_column(schema, text_field)
        if found is None:
            names = ", ".join(".".join(p) for p, _ in parquet_leaves(schema))
            inputs.skipped.append((f.name, f"no column `{text_field}` for the text (the columns: "
                                           f"{names}); choose one with --text-field"))
            continue
        if not is_text_type(found[1]):
            inputs.skipped.append((f.name, f"column `{text_field}` is {found[1]}, not strings"))
            continue
        text_path = found[0]
        ident = find_column(schema, id_field)
        if ident is not None and ident[0] != text_path and not is_id_type(ident[1]):
            inputs.skipped.append(
                (f.name, f"column `{id_field}` is {ident[1]}, not strings or integers"))
            continue
        if not inputs.files:
            inputs.schema, inputs.text_path = schema, text_path
            inputs.id_path = ident[0] if ident else None
            first = f
        elif not same_columns(schema, inputs.schema):
            raise JobError(f"{f.name}: its columns differ from those of {first.name}: deduplicate "
                           f"them separately ({column_difference(inputs.schema, schema)})")
        f.meta = meta
        inputs.files.append(f)
    if not inputs.files:
        raise JobError("no document could be read" + skip_reasons(inputs.skipped, 0))
    return inputs


def same_columns(a: pa.Schema, b: pa.Schema) -> bool:
    """ndup's test (`write_kept`): the same fields, names, types, nullability and field
    metadata; the schema's own metadata (pandas') may differ."""
    return len(a) == len(b) and all(x.equals(y, check_metadata=True) for x, y in zip(a, b))


def column_difference(first: pa.Schema, other: pa.Schema) -> str:
    """What differs, in a few words: `id: string here, int64 there`, `more columns: x`."""
    for x in first:
        if x.name not in other.names:
            return f"no column `{x.name}`"
    for y in other:
        if y.name not in first.names:
            return f"a column `{y.name}` more"
    for x, y in zip(first, other):
        if x.name != y.name:
            return "columns in another order"
        if not x.equals(y, check_metadata=True):
            if x.type != y.type:
                what = f"{y.type} here, {x.type} there"
            elif x.nullable != y.nullable:
                what = "nullable here, not there" if y.nullable else "nullable there, not here"
            else:
                what = "other field metadata"
            return f"`{x.name}`: {what}"
    return "other columns"


def skip_reasons(skipped: list[tuple[str, str]], more: int) -> str:
    """ndup's list of skipped records after "no document could be read": three, then how many
    more."""
    shown = skipped[:3]
    s = "".join(("; " if i else ": ") + f"{n}: {r}" for i, (n, r) in enumerate(shown))
    rest = len(skipped) - len(shown) + more
    return s + (f"; and {rest} more" if rest > 0 else "")


def spark_col(parts: list[str]):
    """A column by its path, each name quoted: names with dots (`meta.url`) or backticks are
    names, not paths."""
    return F.col(".".join("`" + p.replace("`", "``") + "`" for p in parts))


def input_frame(spark: SparkSession, inputs: Inputs, args: argparse.Namespace,
                max_line: int = DEFAULT_MAX_LINE_BYTES, all_columns: bool = False) -> DataFrame:
    """The input as rows with `value` (one JSON line, for ndup) and the split they come from;
    with `all_columns` (Parquet, for the dedup output) every column instead of `value`."""
    uris = [literal(f.path) for f in inputs.files if f.size > 0]
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
    text = spark_col(inputs.text_path)
    fields = [text.alias("text")]
    size = F.octet_length(text)
    if inputs.id_path is not None:
        # As ndup prints an id: a string as is, an integer in decimal (unsigned 64-bit ones are
        # decimals to Spark).
        ident = spark_col(inputs.id_path).cast("string")
        fields.append(ident.alias("id"))
        size = size + F.coalesce(F.octet_length(ident), F.lit(0))
    # A null id or text is left out of the JSON: ndup then names the row by its number, or
    # skips it as malformed, as it does reading the Parquet file itself. A row whose text and id
    # are longer together than --max-line-length is skipped as ndup skips it (it measures those
    # bytes, not a JSON line): `{}`, malformed.
    value = F.when(size > F.lit(max_line), F.lit("{}")).otherwise(F.to_json(F.struct(*fields)))
    return df.select(value.alias("value"), *meta)


# --------------------------------------------------------------------------------------------
# The map stage: ndup sign on each partition


def make_signer(exe: str, shipped: bool, threads: int, flags: list[str],
                stopwords: str | None, index: dict[str, int], bom_files: set,
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

        ndup, more = ndup_command(exe, shipped, stopwords)
        tmp = private_dir()
        try:
            # The rows come back as one Arrow stream on ndup's standard output, which ndup
            # writes once it has read the whole partition: no shard files in between. ndup runs
            # in an empty directory of its own: no ndup.toml is read.
            cmd = [ndup, "sign", "-", "--jsonl", "--out", "-", "-q", "-j", str(threads),
                   *fields, *flags, *more]
            files, blocks, blanks = [], [], []
            err = tempfile.TemporaryFile(dir=tmp)
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=err, cwd=tmp)

            def failed(rc):
                err.seek(0)
                return RuntimeError(f"{' '.join(cmd)} exited with {rc}: "
                                    f"{err.read().decode(errors='replace')[-4000:].strip()}")

            def finish():
                # The rest of the stream is read (ndup writes one even for no rows), or ndup
                # fails on a closed pipe.
                proc.stdout.read()
                proc.stdout.close()
                rc = proc.wait()
                if rc != 0:
                    raise failed(rc)
            try:
                last = None
                for b in batches:
                    if b.num_rows == 0:
                        continue
                    f = file_numbers(b, index)
                    k = b.column("_block").to_numpy(zero_copy_only=False).astype(np.int64)
                    data, blank, at = joined_lines(b.column("value"), fmt == "jsonl")
                    data = restore_boms(data, at, f, k, last, bom_files)
                    files.append(f)
                    blocks.append(k)
                    blanks.append(blank)
                    last = (f[-1], k[-1])
                    proc.stdin.write(data)
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
            blank_of = np.concatenate(blanks)
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
                        pa.nulls(len(rows), pa.int64()),
                    ],
                    schema=_SIGNED_ARROW,
                )
            finish()
            lines_in_run = np.diff(np.append(starts, n))
            blank_in_run = np.add.reduceat(blank_of.astype(np.int64), starts)
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
                    pa.array(blank_in_run.astype(np.int64)),
                ],
                schema=_SIGNED_ARROW,
            )
        finally:
            shutil_rmtree(tmp)

    return sign_partition


def ndup_command(exe: str, shipped: bool, stopwords: str | None) -> tuple[str, list[str]]:
    """On an executor: the ndup binary to run (shipped, or installed there: a relative path is
    taken from the executor's working directory) and the --stopwords flag (the file shipped)."""
    import os

    from pyspark import SparkFiles

    if shipped:
        exe = SparkFiles.get(os.path.basename(exe))
        if not os.access(exe, os.X_OK):
            os.chmod(exe, 0o755)
    elif os.sep in exe:
        exe = os.path.abspath(exe)
    more = ["--stopwords", SparkFiles.get(os.path.basename(stopwords))] if stopwords else []
    return exe, more


def private_dir() -> str:
    """An empty working directory for one ndup process, under Spark's directory for shipped
    files when it can be written (Spark deletes it when the application ends, so that even a
    killed task leaves nothing behind), else the system's temporary directory."""
    import tempfile

    from pyspark import SparkFiles

    try:
        return tempfile.mkdtemp(prefix="ndup-sign-", dir=SparkFiles.getRootDirectory())
    except Exception:
        return tempfile.mkdtemp(prefix="ndup-sign-")


def file_numbers(batch: pa.RecordBatch, index: dict[str, int]):
    """The place in the input list of each row's file (`_path`), as a NumPy array: one lookup
    per distinct path of the batch, not per row."""
    import numpy as np

    paths = batch.column("_path").dictionary_encode()
    to_file = np.array([index[normalize_uri(str(p))] for p in paths.dictionary.to_pylist()],
                       np.int32)
    return to_file[paths.indices.to_numpy(zero_copy_only=False)]


def joined_lines(values: pa.Array, find_blank: bool = False):
    """The strings of an Arrow array as lines, each ended by \\n: straight from the array's
    buffers, without making a Python string per row; which lines are blank (ASCII white space
    only, as ndup judges them); and where each line starts in the bytes."""
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
    blank = np.zeros(n, bool)
    if find_blank:
        ink = np.cumsum(np.concatenate([[0], ~np.isin(body, (9, 10, 12, 13, 32))]))
        rel = offsets - offsets[0]
        blank = ink[rel[1:]] == ink[rel[:-1]]
    starts = offsets[:-1] - offsets[0] + np.arange(n)
    return np.insert(body, offsets[1:] - offsets[0], 10).tobytes(), blank, starts


def restore_boms(data: bytes, starts, files, blocks, last, bom_files: set) -> bytes:
    """`data` (the batch's lines) with the byte-order mark that Spark's reader took from the
    first line of a file put back: ndup reads it (and `ndup dedup` writes it) with the line."""
    import numpy as np

    if not bom_files:
        return data
    # The rows that start a split at the start of its file.
    change = np.ones(len(files), bool)
    change[1:] = (files[1:] != files[:-1]) | (blocks[1:] != blocks[:-1])
    if last is not None and (files[0], blocks[0]) == last:
        change[0] = False
    at = [int(i) for i in np.flatnonzero(change & (blocks == 0)) if int(files[i]) in bom_files]
    if not at:
        return data
    out, done = [], 0
    for i in at:
        cut = int(starts[i])
        out += [data[done:cut], BOM]
        done = cut
    out.append(data[done:])
    return b"".join(out)


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


LOG4J2 = """\
# Spark's own messages, from the start of its JVM: none. The job reports its progress, and a
# failure in one line with the whole trace in a file. (Spark announces the level of its own
# loggers when it differs from the root's: both the same.)
rootLogger.level = off
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.spark.name = org.apache.spark
logger.spark.level = off
"""


def start_spark(args: argparse.Namespace) -> SparkSession:
    """The Spark session, configured for the job (settings given with --conf win)."""
    user = {k.strip(): v for k, _, v in (kv.partition("=") for kv in args.conf)}
    builder = SparkSession.builder.appName("ndup-spark")
    master = args.master or (None if os.environ.get("SPARK_ENV_LOADED") else "local[*]")
    settings = {"spark.ui.showConsoleProgress": "false",
                # Column names as ndup reads them: `Text` is not `text`.
                "spark.sql.caseSensitive": "true",
                # Parquet timestamps in nanoseconds (pandas' datetime64[ns]) read as numbers,
                # rather than refused: the job signs only the text and the id.
                "spark.sql.legacy.parquet.nanosAsLong": "true"}
    if master:
        builder = builder.master(master)
    if (master or "").startswith("local"):
        # One machine: everything on the loopback interface.
        settings.update({"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"})
    if not os.environ.get("SPARK_ENV_LOADED"):
        # The JVM starts here (not under spark-submit): Spark's log configuration, given before
        # it starts, keeps even its start-up notices off stderr.
        conf_dir = tempfile.mkdtemp(prefix="ndup-spark-log-")
        atexit.register(shutil.rmtree, conf_dir, True)
        path = os.path.join(conf_dir, "log4j2.properties")
        with open(path, "w") as f:
            f.write(LOG4J2)
        opts = f"-Dlog4j2.configurationFile=file:{path}"
        key = "spark.driver.extraJavaOptions"
        user[key] = f"{opts} {user[key]}" if key in user else opts
    if args.shuffle_partitions:
        settings["spark.sql.shuffle.partitions"] = str(args.shuffle_partitions)
    if args.max_partition_bytes:
        settings["spark.sql.files.maxPartitionBytes"] = args.max_partition_bytes
    for k, v in {**settings, **user}.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    if os.environ.get("SPARK_ENV_LOADED"):
        # Under spark-submit, Spark's log configuration: errors only, from here on.
        spark.sparkContext.setLogLevel("ERROR")
    return spark


def run(args: argparse.Namespace) -> dict:
    t0 = time.time()
    sign = check_args(args)
    exe = resolve_ndup(args.ndup)
    flags = sign_flags(args, sign)
    probe = flags + (["--max-line-length", str(sign.max_line)] if sign.max_line is not None
                     else []) + (["--stopwords", sign.stopwords] if sign.stopwords else [])
    params = probe_ndup(exe, args, probe)
    spark = start_spark(args)
    try:
        return job(spark, args, sign, exe, flags, params, t0)
    finally:
        spark.stop()


def job(spark: SparkSession, args: argparse.Namespace, sign: SignArgs, exe: str,
        flags: list[str], params: dict, t0: float) -> dict:
    num_perm, bands = params["num_perm"], params["bands"]
    max_bucket = args.max_bucket
    # Verifier::new: the smallest count m with m / k >= threshold, in exact fractions of the
    # threshold's shortest decimal (repr), as ndup reads it.
    at_threshold = max(0, math.ceil(Fraction(repr(args.threshold)) * num_perm))
    sc = spark.sparkContext
    metrics = Metrics(spark)
    hadoop = Hadoop(spark)
    out = check_out(hadoop, args.out).rstrip("/")

    checkpoint_dir = sc.getCheckpointDir()

    def checkpoint(df: DataFrame) -> DataFrame:
        # Cuts the plan of an iteration (large-star/small-star would otherwise grow it without
        # end); reliable when a checkpoint directory is set, local otherwise.
        return df.checkpoint(eager=True) if checkpoint_dir else df.localCheckpoint(eager=True)

    inputs = list_inputs(spark, args)
    for name, reason in inputs.skipped:
        log(args, f"{name}: {reason} (skipped)")
    local = all(f.local for f in inputs.files) and out.startswith("file:")
    writer = args.parquet_writer
    if writer == "auto":
        writer = "arrow" if local else "spark"
    elif writer == "arrow" and not local and inputs.fmt == "parquet":
        raise JobError("--parquet-writer arrow: the inputs and --out must be local paths (file:)")
    if all(f.size == 0 for f in inputs.files):
        raise JobError("no document could be read" + skip_reasons(inputs.skipped, 0))
    # Once the inputs are known to be good: what an earlier run left in DIR goes.
    check_out(hadoop, out, clean=True)
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
        sc.addFile(exe)
    if sign.stopwords:
        sc.addFile(sign.stopwords)
    max_line = DEFAULT_MAX_LINE_BYTES if sign.max_line is None else sign.max_line
    if inputs.fmt == "parquet":
        # The job applies ndup's rule for rows (`input_frame`); the JSON line a row becomes is
        # longer (escapes, names), and must not be refused for it.
        flags = flags + ["--max-line-length", str(6 * max_line + 4 * MAX_ID_BYTES)]
    elif sign.max_line is not None:
        flags = flags + ["--max-line-length", str(sign.max_line)]
    signer = make_signer(args.ndup_on_executors or exe, shipped, args.ndup_threads, flags,
                         sign.stopwords, inputs.index,
                         {i for i, f in enumerate(inputs.files) if f.bom}, inputs.fmt,
                         args.id_field, args.text_field)

    # 1. Sign: ndup on every partition; per split, its counts of lines and documents.
    metrics.start("sign")
    src = input_frame(spark, inputs, args, max_line)
    signed = src.mapInArrow(signer, SIGNED_SCHEMA).persist(StorageLevel.MEMORY_AND_DISK)
    # The split counts are one row per split: sorted here, not by a Spark sort.
    splits = sorted(signed.where("kind = 1").select("file", "block", "n_lines", "n_docs",
                                                    "n_blank")
                    .collect(), key=lambda r: (r.file, r.block))
    # Offsets of each split: lines before it in its file (line numbers), lines before it in the
    # whole input (ord) and documents before it (doc numbers).
    offsets, in_file, total_lines, total_docs, last_file = [], 0, 0, 0, None
    total_blank = sum(s.n_blank for s in splits)
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
        raise JobError(no_documents(spark, inputs, args, exe, sign, splits))
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
                 if inputs.several else line.cast("string"))
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
    # Lines that are neither blank nor a document (malformed, too long: ndup's "skipped"), and
    # files skipped whole.
    metrics.counts["skipped"] = total_lines - total_blank - total_docs
    metrics.counts["skipped_files"] = len(inputs.skipped)

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
        f"{out}/clusters")
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
    pairs.orderBy("a", "b").write.mode("overwrite").parquet(f"{out}/pairs")
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
    write_dedup(spark, inputs, args, clusters.where("keep"),
                {(o[0], o[1]): n for o, n in zip(offsets, split_lines)}, f"{out}/dedup", writer)
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
        "skipped_files": [{"file": n, "reason": r} for n, r in inputs.skipped],
        "parquet_writer": writer if inputs.fmt == "parquet" else None,
    }
    # Through Hadoop's FileSystem, as Spark wrote the rest: DIR may be any store.
    hadoop.write(hadoop.fs(hadoop.Path(out)), hadoop.Path(f"{out}/metrics.json"),
                 json.dumps(result, indent=2).encode())
    c = metrics.counts
    log(args, f"{total_docs} documents ({c['skipped']} lines skipped), {c['candidates']} "
              f"candidates, {c['pairs']} pairs; kept {c['kept']}, dropped {c['dropped_exact']} "
              f"exact and {c['dropped_near']} near duplicates in {result['seconds']:.1f} s")
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


def no_documents(spark: SparkSession, inputs: Inputs, args: argparse.Namespace, exe: str,
                 sign: SignArgs, splits: list) -> str:
    """Why no document could be read, as ndup says it: the first three skipped records (and
    files), then how many more. The reasons of JSON lines are ndup's own, from `ndup scan` on
    the first lines of the first file that has some; those of Parquet rows are ndup's rules."""
    skipped = sum(s.n_lines - s.n_blank for s in splits)
    msg = "no document could be read"
    with_lines = sorted({s.file for s in splits if s.n_lines - s.n_blank > 0})
    if not with_lines:
        return msg + skip_reasons(inputs.skipped, skipped)
    f = inputs.files[with_lines[0]]
    reasons: list[tuple[str, str]] = []
    if inputs.fmt == "jsonl":
        rows = (spark.read.option("lineSep", "\n").text(literal(f.path))
                .where(F.col("_metadata.file_block_start") == 0)
                .select(F.col("value").cast("binary").alias("v")).limit(1000).collect())
        data = b"".join(bytes(r.v) + b"\n" for r in rows)
        if f.bom:
            data = BOM + data
        cmd = [exe, "scan", "-", "--jsonl", "-q", "--id-field", args.id_field,
               "--text-field", args.text_field]
        if sign.max_line is not None:
            cmd += ["--max-line-length", str(sign.max_line)]
        said = first_line(run_ndup(cmd, data).stderr.decode(errors="replace"))
        said = said.partition("no document could be read: ")[2]
        reasons = [(f"{f.name}:{n}", why) for n, why in re.findall(
            r"stdin:(\d+): (.*?)(?=; stdin:\d+: |; and \d+ more$|$)", said)]
    else:
        limit = DEFAULT_MAX_LINE_BYTES if sign.max_line is None else sign.max_line
        df = spark.read.parquet(literal(f.path))
        text = spark_col(inputs.text_path)
        size = F.octet_length(text)
        if inputs.id_path is not None:
            size = size + F.coalesce(F.octet_length(spark_col(inputs.id_path).cast("string")),
                                     F.lit(0))
        rows = (df.select(text.isNull().alias("null"), size.alias("size"),
                          F.col("_metadata.row_index").alias("r"))
                .where(F.col("r") < 1000).orderBy("r").collect())
        # ndup reports rows too long first (its reader does), then the others.
        too_long = [(f"{f.name}:{r.r + 1}", f"a row of {r.size} bytes, longer than the limit of "
                     f"{limit} bytes") for r in rows if not r.null and r.size > limit]
        other = [(f"{f.name}:{r.r + 1}", f"field `{args.text_field}` is null, not a string"
                  if r.null else f"id longer than {MAX_ID_BYTES} bytes")
                 for r in rows if r.null or r.size <= limit]
        reasons = (too_long + other)[:3]
    return msg + skip_reasons(inputs.skipped + reasons, skipped - len(reasons))


def write_dedup(spark: SparkSession, inputs: Inputs, args: argparse.Namespace,
                kept: DataFrame, split_lines: dict, path: str, writer: str) -> None:
    """Reads the input again (the same splits, so the same keys) and writes the rows of the kept
    documents, in input order. What is kept travels as one bitmap per split (a bit per line: 125
    MB for a billion lines), broadcast, so the input itself is never shuffled to be filtered."""
    if inputs.fmt == "parquet" and writer == "arrow":
        write_dedup_arrow(spark, inputs, kept.select("file", "line"), path)
        return
    kept = kept.select("file", "block", "pos")
    index = inputs.index
    jsonl = inputs.fmt == "jsonl"
    bom_files = sorted(i for i, f in enumerate(inputs.files) if f.bom)

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
    # Under names of the job's own: PySpark's mapInArrow takes a name with a dot (`meta.url`, as
    # pandas' json_normalize makes) for a path.
    src = src.select(*[spark_col([f.name]).alias(f"_c{i}") for i, f in enumerate(payload)],
                     "_path", "_block")
    safe = [T.StructField(f"_c{i}", f.dataType, f.nullable) for i, f in enumerate(payload)]
    schema = T.StructType(safe + [T.StructField("_file", T.IntegerType(), False),
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
            cols = [b.column(i).filter(sel) for i in range(len(payload))]
            if jsonl:
                # ndup writes a kept record without the \r (every one) before its \n, and with
                # the byte-order mark its file starts with, which Spark's reader dropped.
                value = pc.replace_substring_regex(cols[0], r"\r+$", "")
                first = ((blocks[mask] == 0) & (pos[mask] == 0)
                         & np.isin(files[mask], bom_files))
                if first.any():
                    value = pc.binary_join_element_wise(
                        pa.array(np.where(first, "\ufeff", "")), value, "")
                cols[0] = value
            yield pa.RecordBatch.from_arrays(
                cols + [pa.array(files[mask]), pa.array(blocks[mask]), pa.array(pos[mask])],
                schema=pa.schema([pa.field(f.name, c.type) for f, c in zip(safe, cols)]
                                 + [("_file", pa.int32()), ("_bk", pa.int64()),
                                    ("_pos", pa.int64())]))

    out = src.mapInArrow(keep_rows, schema)
    if not args.no_sort_output:
        out = out.orderBy("_file", "_bk", "_pos")
    out = out.select(*[F.col(f"_c{i}").alias(f.name) for i, f in enumerate(payload)])
    if jsonl:
        out.write.mode("overwrite").option("lineSep", "\n").text(path)
    else:
        out.write.mode("overwrite").parquet(path)

# Rows per keep bitmap of the Arrow writer (128 KiB each).
CHUNK_ROWS = 1 << 20


def wide_keys(t: pa.DataType) -> pa.DataType:
    """`t` with dictionary keys 32 bits wide at least, as `ndup dedup` writes them
    (`wide_keys` in src/source/parquet.rs)."""
    if pa.types.is_dictionary(t):
        keys = t.index_type
        if keys in (pa.int8(), pa.int16(), pa.uint8(), pa.uint16()):
            keys = pa.int32()
        return pa.dictionary(keys, wide_keys(t.value_type), t.ordered)
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(wide_keys(t.field(i).type))
                          for i in range(t.num_fields)])
    if pa.types.is_large_list(t):
        return pa.large_list(t.value_field.with_type(wide_keys(t.value_type)))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(t.value_field.with_type(wide_keys(t.value_type)), t.list_size)
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(wide_keys(t.value_type)))
    return t


def write_dedup_arrow(spark: SparkSession, inputs: Inputs, kept: DataFrame, path: str) -> None:
    """The kept rows of Parquet input, written as `ndup dedup` writes them: pyarrow on the
    executors reads the row groups that hold kept rows, every column, and writes them with the
    schema (and metadata) of the first input file, in input order: one part file per run of
    row groups, named in that order, so no sort. Files are read and written as local paths."""
    chunk = F.floor((F.col("line") - 1) / CHUNK_ROWS).cast("long")

    def bitmaps(pdf):
        import numpy as np
        import pandas as pd

        f, c = int(pdf["file"].iloc[0]), int(pdf["chunk"].iloc[0])
        bits = np.zeros(CHUNK_ROWS, np.uint8)
        bits[pdf["line"].to_numpy() - 1 - c * CHUNK_ROWS] = 1
        return pd.DataFrame({"file": [f], "chunk": [c],
                             "bits": [np.packbits(bits, bitorder="little").tobytes()]})

    maps = (kept.withColumn("chunk", chunk).groupBy("file", "chunk")
            .applyInPandas(bitmaps, "file int, chunk long, bits binary").collect())
    bc = spark.sparkContext.broadcast({(r.file, r.chunk): bytes(r.bits) for r in maps})
    # Runs of row groups of about 128 MB (as stored) each, a task each.
    target = 128 << 20
    work = []
    for i, f in enumerate(inputs.files):
        md, row, group, size = f.meta, 0, [], 0
        for rg in range(md.num_row_groups):
            n, b = md.row_group(rg).num_rows, md.row_group(rg).total_byte_size
            if group and size + b > target:
                work.append((i, f.local, group))
                group, size = [], 0
            if n:
                group.append((rg, row, n))
            row, size = row + n, size + b
        if group:
            work.append((i, f.local, group))
    local = spark.sparkContext._jvm.org.apache.hadoop.fs.Path(path).toUri().getPath()
    os.makedirs(local, exist_ok=True)
    schema = pa.schema([f.with_type(wide_keys(f.type)) for f in inputs.schema],
                       metadata=inputs.schema.metadata)
    width = max(5, len(str(len(work))))

    def write_part(item):
        import os

        import numpy as np
        import pyarrow as pa
        import pyarrow.parquet as pq
        from pyspark import TaskContext

        part, (f, src, groups) = item
        keep = bc.value
        reader = pq.ParquetFile(src)
        name = os.path.join(local, f"part-{part:0{width}d}.parquet")
        ctx = TaskContext.get()
        tmp = os.path.join(local, f".{os.path.basename(name)}.{ctx.taskAttemptId() if ctx else 0}")
        out = None
        try:
            for rg, start, n in groups:
                rows = np.arange(start, start + n, dtype=np.int64)
                chunks = rows // CHUNK_ROWS
                mask = np.zeros(n, bool)
                for c in np.unique(chunks):
                    bits = keep.get((f, int(c)))
                    if bits is not None:
                        sel = chunks == c
                        arr = np.unpackbits(np.frombuffer(bits, np.uint8), bitorder="little")
                        mask[sel] = arr[rows[sel] - c * CHUNK_ROWS] == 1
                if not mask.any():
                    continue
                table = reader.read_row_group(rg).filter(pa.array(mask)).cast(schema)
                if out is None:
                    out = pq.ParquetWriter(tmp, schema)
                out.write_table(table)
            if out is not None:
                out.close()
                out = None
                os.replace(tmp, name)
        finally:
            if out is not None:
                out.close()
            if os.path.exists(tmp):
                os.remove(tmp)

    if work:
        spark.sparkContext.parallelize(list(enumerate(work)), len(work)).foreach(write_part)
    open(os.path.join(local, "_SUCCESS"), "wb").close()


def failure(e: BaseException) -> str:
    """One line for a failure that is not bad input: the message of the task's error (ndup's,
    for a signing task) or of the Java exception."""
    text = str(e)
    said = re.findall(r"^(?:\w+\.)*\w*(?:Error|Exception): (.+)$", text, re.M)
    if said:
        return said[-1].strip()
    return java_message(e)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        run(args)
    except JobError as e:
        print(f"ndup-spark: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ndup-spark: interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        fd, trace = tempfile.mkstemp(prefix="ndup-spark-error-", suffix=".txt")
        with os.fdopen(fd, "w") as f:
            traceback.print_exc(file=f)
        print(f"ndup-spark: failed: {failure(e)} (the whole trace: {trace})", file=sys.stderr)
        return 1
    return 0

if __name__ == "__main__":
    sys.exit(main())
