"""ndup: near-duplicate text detection (shingles, MinHash signatures, LSH), in Rust.

The objects a datasketch or rensa user knows, with the command line's signatures:

- ``MinHasher`` signs texts exactly as ``ndup scan`` does (``sign``, ``sign_batch`` on every
  core with the GIL released); a ``Signature`` carries the parameters that made it, and
  ``Signature.jaccard`` refuses one made with other parameters.
- ``MinHash`` is datasketch's incremental ``MinHash`` (``update``, ``jaccard``, ``digest``).
- ``LSH`` (also ``MinHashLSH``) is the in-memory index: ``insert``, ``query``, ``remove``.
- ``tune`` returns what ``ndup tune`` prints.

And whole corpora: ``scan`` over texts or paths returns the pairs (and clusters) the command
line reports, and ``dedup_arrow`` deduplicates an Arrow table (pyarrow, Polars, pandas...) as
``ndup dedup`` deduplicates the same records, returning the kept rows without copying them.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Optional, Sequence, Union

from . import _ndup
from ._ndup import LSH, MinHash, MinHasher, Signature, __version__, tune

__all__ = [
    "LSH",
    "MinHash",
    "MinHashLSH",
    "MinHasher",
    "Pair",
    "ScanResult",
    "Signature",
    "Skipped",
    "DedupSummary",
    "dedup_arrow",
    "scan",
    "tune",
    "__version__",
]

#: datasketch's name for the index: the same class as ``LSH``, whose default threshold is 0.8
#: (datasketch's ``MinHashLSH`` defaults to 0.9: pass ``threshold=`` to band alike).
MinHashLSH = LSH

#: The largest file ``scan`` reads by default, in bytes (larger ones are skipped).
DEFAULT_MAX_FILESIZE: int = _ndup.DEFAULT_MAX_FILESIZE

Key = Hashable


@dataclass(frozen=True)
class Pair:
    """Two near-duplicate documents, as a line of ``ndup scan --format jsonl`` reports them.

    ``a`` and ``b`` name the documents: a position in the list of texts, the key of a dict or of
    an ``(id, text)`` pair, or the id (path) of a file or JSON-lines record.
    """

    a: Any
    b: Any
    #: The share of equal signature slots (with ``exact=True``, the exact Jaccard).
    estimate: float
    #: The exact Jaccard of the shingle sets, when it was computed (near the threshold, or with
    #: ``verify="exact"``).
    jaccard: Optional[float] = None
    #: With ``containment=True``: the share of ``a``'s shingles found in ``b``, and the reverse.
    a_in_b: Optional[float] = None
    b_in_a: Optional[float] = None


@dataclass(frozen=True)
class Skipped:
    """A document left out, and why (``kind`` is ``binary``, ``unreadable``, ``malformed`` or
    ``too-large``)."""

    id: str
    kind: str
    reason: str


@dataclass
class ScanResult:
    """What ``scan`` found: the pairs, sorted; the clusters when asked for (connected
    components of the pairs, as ``--clusters`` gives them); the documents left out; the counts
    of the summary record; and the parameters record of the JSON report."""

    pairs: list[Pair]
    clusters: Optional[list[list[Any]]]
    skipped: list[Skipped]
    stats: dict[str, Union[int, float]]
    params: dict[str, Any] = field(repr=False)


@dataclass(frozen=True)
class DedupSummary:
    """What ``dedup_arrow`` decided: rows read, kept, dropped as exact or near duplicates, and
    the rows left out (no text: neither kept nor dropped, as ``ndup dedup`` skips them)."""

    documents: int
    kept: int
    exact_dropped: int
    near_dropped: int
    skipped: list[Skipped]


def _options(**kw: Any) -> dict[str, Any]:
    for name in ("glob", "exclude", "stopwords"):
        value = kw[name]
        if value is None:
            continue
        # A str is an iterable of str, but one pattern split into characters is never meant:
        # refused, as MinHasher(stopwords="the") refuses it.
        if isinstance(value, (str, bytes)):
            raise TypeError(
                f"{name} takes a list of str, not a single {type(value).__name__} "
                f"(write {name}=[{value!r}])"
            )
        kw[name] = list(value)
    # Sizes in bytes: a negative one is refused here by name, not as a field Rust cannot take.
    for name in ("max_memory", "max_filesize"):
        value = kw[name]
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"{name} takes an int (bytes), not {type(value).__name__}")
        if not 0 <= value < 1 << 64:
            raise ValueError(f"{name} must be a number of bytes from 0 to 2**64 - 1, not {value}")
    return kw


def _classify(inputs: Any) -> tuple[str, list[Any], list[Any], bool]:
    """``("paths", paths, [], False)`` or ``("texts", keys, texts, positional)``."""
    if isinstance(inputs, (str, bytes, os.PathLike)):
        raise TypeError(
            "scan takes a list of texts or of paths (pathlib.Path), a list of (id, text) pairs "
            "or a dict; wrap a single one in a list"
        )
    if isinstance(inputs, Mapping):
        return "texts", list(inputs.keys()), list(inputs.values()), False
    items = list(inputs)
    if items and all(isinstance(x, os.PathLike) for x in items):
        return "paths", [os.fspath(x) for x in items], [], False
    if all(isinstance(x, tuple) and len(x) == 2 for x in items) and items:
        return "texts", [x[0] for x in items], [x[1] for x in items], False
    if all(x is None or isinstance(x, str) for x in items):
        return "texts", list(range(len(items))), items, True
    raise TypeError(
        "scan takes texts (str), paths (pathlib.Path, os.PathLike), (id, text) pairs or a "
        "dict of id -> text, one kind at a time"
    )


def scan(
    inputs: Union[Sequence[Optional[str]], Sequence["os.PathLike[str]"], Sequence[tuple[Key, Optional[str]]], Mapping[Key, Optional[str]]],
    threshold: float = 0.8,
    *,
    clusters: bool = False,
    verify: Literal["auto", "signature", "exact", "none"] = "auto",
    exact: bool = False,
    containment: bool = False,
    num_perm: Optional[int] = None,
    bands: Optional[int] = None,
    rows: Optional[int] = None,
    seed: int = 42,
    sketch: Optional[Literal["fss", "oph", "classic", "modulo", "supershingle"]] = None,
    modulo: Optional[int] = None,
    supershingle_size: Optional[int] = None,
    shingle: Literal["char", "word", "stopword"] = "char",
    k: int = 9,
    w: int = 5,
    stopwords: Optional[Iterable[str]] = None,
    nfkc: bool = True,
    lowercase: bool = True,
    collapse_whitespace: bool = True,
    trim: bool = True,
    max_bucket: int = 1000,
    fp_weight: float = 1.0,
    fn_weight: float = 100.0,
    max_memory: Optional[int] = None,
    glob: Iterable[str] = (),
    exclude: Iterable[str] = (),
    hidden: bool = False,
    no_ignore: bool = False,
    follow_links: bool = False,
    max_filesize: Optional[int] = DEFAULT_MAX_FILESIZE,
    id_field: str = "id",
    text_field: str = "text",
) -> ScanResult:
    """Finds the near-duplicate pairs of a corpus, as ``ndup scan`` does, on every core.

    ``inputs`` is one of:

    - a list of texts (``str``; ``None`` is skipped): documents are named by their position;
    - a dict ``{id: text}`` or a list of ``(id, text)`` pairs: named by their ids (any
      hashable; ids are compared as ``str(id)``, and a repeated one is skipped as the command
      line skips a repeated record id);
    - a list of ``pathlib.Path`` (any ``os.PathLike``): files and directories, walked as the
      command line walks them (``glob``, ``exclude``, ``hidden``, ``no_ignore``...), or
      records: JSON lines files (``.jsonl``, ``.ndjson``, optionally ``.gz``/``.zst``), Parquet
      files and directories of Parquet shards (``id_field`` and ``text_field`` are dotted paths
      into each record or row). Plain strings are always texts.

    Every other argument is the command line's flag of the same name (``--threshold``,
    ``--verify``, ``--exact``, ``--containment``, ``--num-perm``...), with its default; the
    repeatable ones take lists (``glob=["*.md"]``, ``exclude=["*.log"]``,
    ``stopwords=["the", "of"]``), and a lone ``str`` there is a ``TypeError``. Pairs
    are sorted (documents in a list of texts: by position), and each holds the estimate and,
    when it was computed, the exact Jaccard. ``clusters=True`` also returns the connected
    components of the pairs. The GIL is released while the scan runs.

    Raises ``ValueError`` for invalid parameters or when no document could be read, and
    ``OSError`` (``FileNotFoundError``) for paths that cannot be read.
    """
    kind, keys, texts, positional = _classify(inputs)
    opts = _options(
        threshold=threshold,
        verify=verify,
        exact=exact,
        containment=containment,
        num_perm=num_perm,
        bands=bands,
        rows=rows,
        seed=seed,
        sketch=sketch,
        modulo=modulo,
        supershingle_size=supershingle_size,
        shingle=shingle,
        k=k,
        w=w,
        stopwords=stopwords,
        nfkc=nfkc,
        lowercase=lowercase,
        collapse_whitespace=collapse_whitespace,
        trim=trim,
        max_bucket=max_bucket,
        fp_weight=fp_weight,
        fn_weight=fn_weight,
        max_memory=max_memory,
        glob=glob,
        exclude=exclude,
        hidden=hidden,
        no_ignore=no_ignore,
        follow_links=follow_links,
        max_filesize=max_filesize,
        id_field=id_field,
        text_field=text_field,
    )
    if kind == "paths":
        raw = _ndup._scan_paths(keys, clusters, opts)
        name = lambda r: r  # noqa: E731  (ids as the library gives them)
    else:
        for i, t in enumerate(texts):
            if t is not None and not isinstance(t, str):
                raise TypeError(f"text {keys[i]!r} is {type(t).__name__}, not str")
        raw = _ndup._scan_texts([str(k) for k in keys], texts, clusters, opts)
        name = keys.__getitem__
    pairs = [Pair(name(a), name(b), e, j, ab, ba) for a, b, e, j, ab, ba in raw["pairs"]]
    groups = raw["clusters"]
    if groups is not None:
        groups = [[name(m) for m in g] for g in groups]
    if positional:
        # Positions sort as numbers, not as the strings the library compares.
        pairs = sorted(
            (
                p if p.a < p.b else Pair(p.b, p.a, p.estimate, p.jaccard, p.b_in_a, p.a_in_b)
                for p in pairs
            ),
            key=lambda p: (p.a, p.b),
        )
        if groups is not None:
            groups = sorted((sorted(g) for g in groups), key=lambda g: g[0])
    return ScanResult(
        pairs=pairs,
        clusters=groups,
        skipped=[Skipped(*s) for s in raw["skipped"]],
        stats=raw["stats"],
        params=raw["params"],
    )


def _arrow_source(table: Any) -> Any:
    """Something with ``__arrow_c_stream__``: the table itself, or a pyarrow Table made from a
    pandas DataFrame or a Hugging Face dataset that lacks it."""
    if hasattr(table, "__arrow_c_stream__"):
        return table
    data = getattr(getattr(table, "data", None), "table", None)  # datasets.Dataset
    if data is not None and hasattr(data, "__arrow_c_stream__"):
        return data
    if type(table).__module__.startswith("pandas"):
        import pyarrow

        return pyarrow.Table.from_pandas(table, preserve_index=False)
    raise TypeError(
        f"dedup_arrow takes an Arrow table or anything with __arrow_c_stream__ "
        f"(pyarrow, Polars, pandas, Hugging Face datasets), not {type(table).__name__}"
    )


def dedup_arrow(
    table: Any,
    text_column: str = "text",
    id_column: Optional[str] = "id",
    threshold: float = 0.8,
    keep: Literal["first", "longest", "shortest"] = "first",
    *,
    with_summary: bool = False,
    verify: Literal["auto", "signature", "exact", "none"] = "auto",
    num_perm: Optional[int] = None,
    bands: Optional[int] = None,
    rows: Optional[int] = None,
    seed: int = 42,
    sketch: Literal["fss", "oph", "classic"] = "fss",
    shingle: Literal["char", "word", "stopword"] = "char",
    k: int = 9,
    w: int = 5,
    stopwords: Optional[Iterable[str]] = None,
    nfkc: bool = True,
    lowercase: bool = True,
    collapse_whitespace: bool = True,
    trim: bool = True,
    max_bucket: int = 1000,
    fp_weight: float = 1.0,
    fn_weight: float = 100.0,
) -> Any:
    """The rows of ``table`` minus their near duplicates, keeping one row per cluster, as
    ``ndup dedup`` keeps the same records (JSON lines with the same ids and texts).

    ``table`` is a pyarrow Table or RecordBatchReader, or anything with the Arrow C stream
    interface (``__arrow_c_stream__``: Polars DataFrames, pandas DataFrames, Hugging Face
    datasets...). It is read in place: the text column (string, large_string or string_view,
    or a dictionary of them: pandas and Polars categoricals) is not copied. The result is a
    ``pyarrow.Table`` with the input's schema whose chunks are slices of the input, so the kept
    rows are not copied either (``combine_chunks()`` compacts it when many short runs were
    dropped).

    Exact duplicates (the same normalized text) go first, then near duplicates through MinHash,
    LSH and verification with the same parameters as ``scan``; clusters are joined
    transitively and ``keep`` chooses the row kept: the ``first`` in table order, or the
    ``longest``/``shortest`` text (ties: the smaller id, compared as strings, then the earlier
    row). ``id_column`` names the rows for those ties; a table without that column (or
    ``id_column=None``) numbers its rows from 1, as the command line numbers records without an
    id. A row whose text is null is left out (it is neither kept nor dropped; a warning says
    so). ``stopwords`` is a list of str (a lone ``str`` is a ``TypeError``). With
    ``with_summary=True``, returns ``(table, DedupSummary)``.

    The GIL is released while deduplicating.
    """
    source = _arrow_source(table)
    opts = _options(
        threshold=threshold,
        verify=verify,
        exact=False,
        containment=False,
        num_perm=num_perm,
        bands=bands,
        rows=rows,
        seed=seed,
        sketch=sketch,
        modulo=None,
        supershingle_size=None,
        shingle=shingle,
        k=k,
        w=w,
        stopwords=stopwords,
        nfkc=nfkc,
        lowercase=lowercase,
        collapse_whitespace=collapse_whitespace,
        trim=trim,
        max_bucket=max_bucket,
        fp_weight=fp_weight,
        fn_weight=fn_weight,
        max_memory=None,
        glob=(),
        exclude=(),
        hidden=False,
        no_ignore=False,
        follow_links=False,
        max_filesize=None,
        id_field="id",
        text_field="text",
    )
    kept, raw = _ndup._dedup_arrow(source, text_column, id_column, keep, opts)
    summary = DedupSummary(
        documents=raw["documents"],
        kept=raw["kept"],
        exact_dropped=raw["exact_dropped"],
        near_dropped=raw["near_dropped"],
        skipped=[Skipped(*s) for s in raw["skipped"]],
    )
    if summary.skipped:
        first = summary.skipped[0]
        warnings.warn(
            f"ndup.dedup_arrow: {len(summary.skipped)} row(s) left out, neither kept nor "
            f"dropped (first: {first.id}: {first.reason})",
            stacklevel=2,
        )
    return (kept, summary) if with_summary else kept
