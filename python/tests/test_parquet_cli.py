"""The `ndup` command line on Parquet written by pyarrow: snappy, zstd and gzip shards, a nested
id column, a null text, a row group larger than ndup's read batch, and a dedup that keeps the
schema and every column. (The Rust tests write their Parquet with arrow-rs; these check the
files data engineers actually have.)"""

from __future__ import annotations

import json
import random

import pyarrow as pa
import pyarrow.parquet as pq

WORDS = [f"w{i}" for i in range(3000)]


def _table(n: int, seed: int) -> pa.Table:
    rnd = random.Random(seed)
    ids, texts, langs = [], [], []
    for i in range(n):
        if i % 4 == 3:
            # A near copy of the row before: a few words changed.
            words = texts[-1].split()
            for k in range(3):
                words[rnd.randrange(len(words))] = "edit"
            text = " ".join(words)
        else:
            text = " ".join(rnd.choice(WORDS) for _ in range(120))
        ids.append({"doc_id": seed * 100_000 + i, "shard": seed})
        texts.append(text)
        langs.append("en" if i % 2 else "de")
    texts[n // 3] = None
    return pa.table({"meta": ids, "text": texts, "lang": langs})


def _write(tmp_path):
    """Three shards with three compressions; the second has one row group of 10,000 rows."""
    ds = tmp_path / "ds"
    ds.mkdir()
    tables = [_table(4000, 1), _table(10_000, 2), _table(3000, 3)]
    for k, (t, comp, group) in enumerate(
        zip(tables, ["snappy", "zstd", "gzip"], [1000, 10_000, 700])
    ):
        pq.write_table(t, ds / f"part-{k}.parquet", compression=comp, row_group_size=group)
    (ds / "_SUCCESS").write_text("")
    jsonl = tmp_path / "all.jsonl"
    with jsonl.open("w") as f:
        for t in tables:
            for row in t.to_pylist():
                f.write(json.dumps({"meta": row["meta"], "text": row["text"]}) + "\n")
    return ds, jsonl


def _records(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


def test_pyarrow_shards_scan_as_json_lines_do(tmp_path, cli):
    ds, jsonl = _write(tmp_path)
    fields = ["--id-field", "meta.doc_id", "--clusters"]
    a = _records(cli("scan", ds, *fields).stdout)
    b = _records(cli("scan", jsonl, *fields).stdout)
    clusters = lambda rs: [r["members"] for r in rs if r["type"] == "cluster"]  # noqa: E731
    assert len(clusters(a)) > 3000
    assert clusters(a) == clusters(b)
    skips = [r for r in a if r["type"] == "skip"]
    assert len(skips) == 3 and all(s["reason_kind"] == "malformed" for s in skips)
    summary = [r for r in a if r["type"] == "summary"][0]
    assert summary["documents"] == 17_000 - 3


def test_pyarrow_dedup_keeps_the_schema_and_every_column(tmp_path, cli):
    ds, jsonl = _write(tmp_path)
    out = tmp_path / "kept.parquet"
    cli("dedup", ds, "--id-field", "meta.doc_id", "-o", out, "-q")
    cli("dedup", jsonl, "--id-field", "meta.doc_id", "-o", tmp_path / "kept.jsonl", "-q")
    kept = pq.read_table(out)
    source = pq.read_table(ds)
    assert kept.schema == source.schema
    ids = [m["doc_id"] for m in kept.column("meta").to_pylist()]
    want = [json.loads(line)["meta"]["doc_id"] for line in (tmp_path / "kept.jsonl").open()]
    assert ids == want
    # Every fourth row is a near copy of the one before: those go, and the rest stay with
    # their other columns.
    assert 12_000 < len(ids) < 13_000
    lang_of = dict(zip((m["doc_id"] for m in source.column("meta").to_pylist()), source.column("lang").to_pylist()))
    assert kept.column("lang").to_pylist() == [lang_of[i] for i in ids]


def test_the_module_scans_pyarrow_shards_as_the_command_line_does(tmp_path, cli):
    import ndup

    ds, jsonl = _write(tmp_path)
    fields = ["--id-field", "meta.doc_id", "--clusters"]
    want = [r["members"] for r in _records(cli("scan", ds, *fields).stdout) if r["type"] == "cluster"]
    for inputs in ([ds], [jsonl], sorted(ds.glob("*.parquet"))):
        got = ndup.scan(inputs, id_field="meta.doc_id", clusters=True)
        assert [list(c) for c in got.clusters] == want, inputs
        assert len(got.skipped) == 3


def test_a_page_whose_checksum_fails_fails_the_run(tmp_path, cli):
    """pyarrow writes page checksums on request; a page altered after writing is damage, not
    a document with other text (before, a changed byte in an uncompressed page was read as
    that document's text)."""
    texts = ["the quick brown fox jumps over the lazy dog " * 5] * 2 + ["nothing alike at all " * 5]
    table = pa.table({"id": ["a", "b", "c"], "text": texts})
    good = tmp_path / "good.parquet"
    pq.write_table(table, good, compression="none", use_dictionary=False, write_page_checksum=True)
    bad = tmp_path / "bad.parquet"
    # The text is in the file more than once (statistics): alter the copy the reader reads.
    data = good.read_bytes()
    for where in (i for i in range(len(data)) if data.startswith(b"nothing alike", i)):
        bad.write_bytes(data[:where] + b"x" + data[where + 1 :])
        if "xothing" in pq.read_table(bad, page_checksum_verification=False)["text"][2].as_py():
            break
    else:
        raise AssertionError("no page holds the text")
    run = cli("scan", bad, ok=(2,))
    assert run.stderr.startswith(f"ndup: {bad}: read error after row 0 (")
    assert "Page CRC checksum mismatch" in run.stderr
    assert run.stdout == ""
    # With --partial-input the other files' results stand, and the damaged file is named.
    out = _records(cli("scan", good, bad, "--partial-input", "-q").stdout)
    assert [(r["a"], r["b"]) for r in out if r["type"] == "pair"] == [("a", "b")]
    assert [r["reason"] for r in out if r["type"] == "skip"] == [
        "read error after row 0: in row group 0: Page CRC checksum mismatch"
    ]
