#!/usr/bin/env python3
"""A generated corpus with planted near-duplicates, for the Spark job's test and benchmark.

Deterministic for a seed. Documents are runs of words drawn from a fixed vocabulary (Zipf-like),
60 to 200 words. Beside the originals it plants, each a copy of an earlier document (so chains
form, and clusters are transitive):

- exact copies (byte for byte), and copies equal once normalized (upper case, doubled spaces);
- near copies with 1 to 12 words replaced, around and above the 0.8 threshold;
- boilerplate: groups of many exact copies of one text, larger than a small --max-bucket, so the
  star rule for oversized buckets is exercised;
- empty documents (no text, or only white space).

Ids are unique strings that do not follow input order (`d` and a shuffled number), so "the smaller
id" and "the first in input order" differ, as they do in real corpora.

Writes N shards as JSON lines (`shard-K.jsonl`, with a few blank and malformed lines when asked)
and/or Parquet (`shard-K.parquet`, the id in a struct column `meta.id`, or unsigned, when asked,
and more columns as pandas writes them with `--extra`).

    python spark/gen_corpus.py --docs 3000 --shards 4 --jsonl DIR --parquet DIR
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass

import numpy as np


@dataclass
class Corpus:
    ids: list[str]
    texts: list[str]


def _vocabulary(rng: np.random.Generator, size: int) -> np.ndarray:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lengths = rng.integers(2, 10, size=size)
    words = {"".join(rng.choice(letters, n)) for n in lengths}
    return np.array(sorted(words))


def generate(docs: int, seed: int = 7, boilerplate: int = 0) -> Corpus:
    """`docs` documents; `boilerplate` > 0 adds a group of that many exact copies (and one of
    half as many near copies of another text)."""
    rng = np.random.default_rng(seed)
    vocab = _vocabulary(rng, 20000)
    # Zipf-like word frequencies: common words repeat, as in prose.
    weights = 1.0 / np.arange(1, len(vocab) + 1) ** 0.9
    weights /= weights.sum()
    cumulative = np.cumsum(weights)

    def words(n: int) -> list[str]:
        picks = np.searchsorted(cumulative, rng.random(n), side="right")
        return list(vocab[np.minimum(picks, len(vocab) - 1)])

    texts: list[str] = []
    # What each planted document is: 0 original, else a copy kind.
    kinds = rng.choice(
        [0, 1, 2, 3, 4],
        size=docs,
        p=[0.72, 0.06, 0.03, 0.185, 0.005],
    )
    boiler_slots = set()
    if boilerplate:
        slots = rng.choice(np.arange(docs // 10, docs), size=boilerplate + boilerplate // 2,
                           replace=False)
        boiler_slots = {int(s): 0 for s in slots[:boilerplate]}
        boiler_slots.update({int(s): 1 for s in slots[boilerplate:]})
        boiler_texts = [" ".join(words(120)), " ".join(words(150))]
    else:
        boiler_slots = {}
    for i in range(docs):
        kind = int(kinds[i]) if i > 0 else 0
        if i in boiler_slots:
            b = boiler_slots[i]
            t = boiler_texts[b]
            if b == 1:  # near copies of the second text: one or two words changed
                w = t.split(" ")
                for _ in range(1 + int(rng.integers(0, 2))):
                    w[int(rng.integers(0, len(w)))] = str(words(1)[0])
                t = " ".join(w)
            texts.append(t)
            continue
        if kind == 0:
            texts.append(" ".join(words(int(rng.integers(60, 200)))))
            continue
        # A copy of an earlier document, more often a recent one (chains).
        if rng.random() < 0.5:
            src = int(rng.integers(max(0, i - 50), i))
        else:
            src = int(rng.integers(0, i))
        base = texts[src]
        if kind == 1:
            texts.append(base)
        elif kind == 2:
            # Equal once normalized: case and white space.
            t = base.upper() if rng.random() < 0.5 else base.replace(" ", "  ", 3)
            texts.append("  " + t + "\n")
        elif kind == 3:
            w = base.split(" ")
            if len(w) < 5:
                texts.append(" ".join(words(int(rng.integers(60, 200)))))
                continue
            edits = int(rng.integers(1, 13))
            for _ in range(edits):
                op = rng.random()
                j = int(rng.integers(0, len(w)))
                if op < 0.6:
                    w[j] = str(words(1)[0])
                elif op < 0.8:
                    w.insert(j, str(words(1)[0]))
                elif len(w) > 5:
                    del w[j]
            texts.append(" ".join(w))
        else:
            texts.append("" if rng.random() < 0.5 else "   \n ")
    numbers = rng.permutation(docs * 3)[:docs]
    ids = [f"d{n:08d}" for n in numbers]
    return Corpus(ids, texts)


def shard_bounds(n: int, shards: int) -> list[tuple[int, int]]:
    # Unequal shards, as real ones are.
    cuts = [0]
    for k in range(1, shards):
        cuts.append(int(n * (k / shards) ** 1.15))
    cuts.append(n)
    return list(zip(cuts, cuts[1:]))


def write_jsonl(corpus: Corpus, out: str, shards: int, damage: bool = False) -> list[str]:
    """Writes the shards; `damage` adds blank lines, a malformed line and a record whose text
    is not a string to each shard (skipped by ndup, and so by the job)."""
    os.makedirs(out, exist_ok=True)
    paths = []
    for k, (a, b) in enumerate(shard_bounds(len(corpus.ids), shards)):
        path = os.path.join(out, f"shard-{k}.jsonl")
        with open(path, "w", encoding="utf-8", newline="") as f:
            for i in range(a, b):
                rec = {"id": corpus.ids[i], "meta": {"n": i}, "text": corpus.texts[i]}
                f.write(json.dumps(rec, ensure_ascii=(i % 2 == 0)))
                f.write("\r\n" if i % 97 == 5 else "\n")
                if damage and (i - a) in (3, (b - a) // 2):
                    f.write("\n")
                    f.write('{"id": "broken-%d", "text": \n' % i)
                    f.write('{"id": "notext-%d", "text": 17}\n' % i)
        paths.append(path)
    return paths


def write_parquet(corpus: Corpus, out: str, shards: int, nested_id: bool = False,
                  row_group: int = 200, extra: bool = False, uint_ids: bool = False,
                  names: list[str] | None = None) -> list[str]:
    """Writes the shards (`names`: their paths under `out`, default `shard-K.parquet`).

    - `nested_id`: the id in a struct column, `meta.id`; `uint_ids`: ids as unsigned 64-bit
      numbers, some above the largest signed one;
    - `extra`: columns as pandas writes them beside the text and the id, and its schema
      metadata: a `datetime64[ns]` column (Parquet `TIMESTAMP(NANOS)`), an unsigned one, a
      categorical (dictionary), a column whose name has a dot (`meta.url`, as
      `pd.json_normalize` names them), `Text` and `ID` columns that differ from `text` and
      `id` only in case; and a null text every 97 rows."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(out, exist_ok=True)
    paths = []
    for k, (a, b) in enumerate(shard_bounds(len(corpus.ids), shards)):
        ids = corpus.ids[a:b]
        texts = corpus.texts[a:b]
        if extra:
            texts = [None if i % 97 == 40 else t for i, t in zip(range(a, b), texts)]
        cols = {
            "text": pa.array(texts, pa.string()),
            "n": pa.array(range(a, b), pa.int64()),
        }
        if nested_id:
            cols["meta"] = pa.StructArray.from_arrays(
                [pa.array(ids, pa.string()), pa.array([len(t) for t in corpus.texts[a:b]])],
                names=["id", "len"],
            )
        elif uint_ids:
            cols["id"] = pa.array([(1 << 63) + int(i[1:]) if int(i[1:]) % 2 else int(i[1:])
                                   for i in ids], pa.uint64())
        else:
            cols["id"] = pa.array(ids, pa.string())
        table = pa.table(cols)
        if extra:
            frame = pd.DataFrame({
                "Text": [f"another text {i}" for i in range(a, b)],
                "ID": [f"another-id-{i}" for i in range(a, b)],
                "meta.url": [f"https://example.org/{i}" for i in range(a, b)],
                "seen": pd.to_datetime([1_600_000_000_000_000_000 + 1_000_003 * i
                                        for i in range(a, b)], unit="ns"),
                "words": np.array([len(t.split()) for t in corpus.texts[a:b]], np.uint32),
                "lang": pd.Categorical([("en", "de", "fr")[i % 3] for i in range(a, b)]),
            })
            more = pa.Table.from_pandas(frame, preserve_index=False)
            for name in more.column_names:
                table = table.append_column(more.schema.field(name), more.column(name))
            table = table.replace_schema_metadata(more.schema.metadata)
        path = os.path.join(out, names[k] if names else f"shard-{k}.parquet")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        pq.write_table(table, path, row_group_size=row_group,
                       compression="zstd" if k % 2 else "snappy")
        paths.append(path)
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=3000)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--boilerplate", type=int, default=0)
    ap.add_argument("--jsonl", metavar="DIR")
    ap.add_argument("--parquet", metavar="DIR")
    ap.add_argument("--damage", action="store_true")
    ap.add_argument("--nested-id", action="store_true")
    ap.add_argument("--row-group", type=int, default=200)
    ap.add_argument("--extra", action="store_true",
                    help="pandas-written columns beside the text and the id (see write_parquet)")
    ap.add_argument("--uint-ids", action="store_true")
    args = ap.parse_args()
    corpus = generate(args.docs, args.seed, args.boilerplate)
    if args.jsonl:
        for p in write_jsonl(corpus, args.jsonl, args.shards, args.damage):
            print(p)
    if args.parquet:
        for p in write_parquet(corpus, args.parquet, args.shards, args.nested_id,
                               args.row_group, args.extra, args.uint_ids):
            print(p)


if __name__ == "__main__":
    main()
