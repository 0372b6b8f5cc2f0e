"""ndup.dedup_arrow against `ndup dedup` on the same records."""

from __future__ import annotations

import json
import warnings

import pyarrow as pa
import pytest

import ndup
from conftest import corpus, words, write_jsonl


def records() -> list[dict]:
    """Records with exact and near duplicates, ties in length, an empty text, a missing one."""
    rows = [{"id": i, "text": t} for i, t in corpus()]
    base = words(42, 150)
    # Near copies of equal length: `longest` and `shortest` break the tie by id.
    rows += [
        {"id": "tie-b", "text": base.replace("w", "v", 1)},
        {"id": "tie-a", "text": base.replace("w", "u", 1)},
        {"id": "tie-c", "text": base},
        {"id": "missing", "text": None},
        {"id": "empty-again", "text": ""},
    ]
    return rows


def cli_kept(cli, tmp_path, rows: list[dict], *flags: str) -> list:
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    cli("dedup", src, "-o", out, *flags)
    return [json.loads(line).get("id") for line in out.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("keep", ["first", "longest", "shortest"])
@pytest.mark.parametrize("threshold", [0.8, 0.5])
def test_kept_rows_are_the_command_lines(cli, tmp_path, keep, threshold):
    rows = records()
    want = cli_kept(cli, tmp_path, rows, "--keep", keep, "--threshold", str(threshold))
    table = pa.Table.from_pylist(rows)
    with pytest.warns(UserWarning, match="1 row"):
        kept, summary = ndup.dedup_arrow(table, threshold=threshold, keep=keep, with_summary=True)
    assert kept.column("id").to_pylist() == want
    assert kept.schema == table.schema
    assert summary.kept == len(want) and summary.documents == len(rows) - 1
    assert summary.exact_dropped >= 2 and summary.near_dropped >= 5
    assert [s.id for s in summary.skipped] == ["missing"]


@pytest.mark.parametrize("keep", ["longest", "shortest"])
def test_integer_ids_break_ties_as_the_command_lines_strings_do(cli, tmp_path, keep):
    base = words(5, 100)
    texts = [base.replace("w", c, 1) for c in "abcdefghijkl"]  # near copies of equal length
    rows = [{"id": i, "text": t} for i, t in zip([9, 10, 11, 2, 30, 4, 5, 6, 7, 8, 12, 13], texts)]
    want = cli_kept(cli, tmp_path, rows, "--keep", keep, "--threshold", "0.5")
    assert want == [10]  # "10" < "9" as strings
    kept = ndup.dedup_arrow(pa.Table.from_pylist(rows), threshold=0.5, keep=keep)
    assert kept.column("id").to_pylist() == want


def test_rows_without_ids_are_numbered_as_lines(cli, tmp_path):
    rows = [{"text": t} for _, t in corpus()]
    want_lines = cli_kept(cli, tmp_path, rows, "--keep", "longest")
    table = pa.Table.from_pylist(rows).append_column("n", pa.array(range(len(rows))))
    for id_column in ["id", None]:
        kept = ndup.dedup_arrow(table, id_column=id_column, keep="longest")
        assert len(kept) == len(want_lines)
    # The command line wrote the kept records; compare their texts.
    out = [json.loads(line)["text"] for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert kept.column("text").to_pylist() == out


def test_the_text_column_is_read_and_returned_in_place():
    rows = records()
    table = pa.Table.from_pylist(rows)
    chunked = pa.Table.from_batches(table.to_batches(max_chunksize=7))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = ndup.dedup_arrow(table)
        kept = ndup.dedup_arrow(chunked)
    assert kept.column("id").to_pylist() == whole.column("id").to_pylist()
    # Every chunk of the result is a slice of an input batch: its text bytes are the input's.
    inputs = [c.buffers()[2] for c in chunked.column("text").chunks]
    for chunk in kept.column("text").chunks:
        data = chunk.buffers()[2]
        assert any(
            src.address <= data.address and data.address + data.size <= src.address + src.size
            for src in inputs
        )


@pytest.mark.parametrize("type_", [pa.large_string(), pa.string_view(), pa.dictionary(pa.int32(), pa.string())])
def test_other_string_types(type_):
    rows = [r for r in records() if r["text"] is not None]
    table = pa.Table.from_pylist(rows)
    want = ndup.dedup_arrow(table).column("id").to_pylist()
    other = table.set_column(1, "text", table.column("text").cast(type_))
    assert ndup.dedup_arrow(other).column("id").to_pylist() == want
    reader = pa.RecordBatchReader.from_batches(other.schema, other.to_batches(max_chunksize=5))
    assert ndup.dedup_arrow(reader).column("id").to_pylist() == want


def test_dataframes():
    rows = [r for r in records() if r["text"] is not None]
    want = ndup.dedup_arrow(pa.Table.from_pylist(rows)).column("id").to_pylist()
    pl = pytest.importorskip("polars")
    assert ndup.dedup_arrow(pl.DataFrame(rows)).column("id").to_pylist() == want


def test_pandas():
    pd = pytest.importorskip("pandas")
    rows = [r for r in records() if r["text"] is not None]
    want = ndup.dedup_arrow(pa.Table.from_pylist(rows)).column("id").to_pylist()
    frame = pd.DataFrame({"id": [str(r["id"]) for r in rows], "text": [r["text"] for r in rows]})
    assert ndup.dedup_arrow(frame).column("id").to_pylist() == [str(i) for i in want]


def test_an_empty_table_stays_empty():
    table = pa.table({"id": pa.array([], pa.string()), "text": pa.array([], pa.string())})
    kept, summary = ndup.dedup_arrow(table, with_summary=True)
    assert len(kept) == 0 and kept.schema == table.schema and summary.kept == 0


def test_errors_are_exceptions():
    table = pa.table({"id": [1, 2], "text": ["some text here", "other text here"], "n": [1, 2]})
    with pytest.raises(KeyError, match="no column 'body'"):
        ndup.dedup_arrow(table, text_column="body")
    with pytest.raises(TypeError, match="not strings"):
        ndup.dedup_arrow(table, text_column="n")
    with pytest.raises(ValueError, match="keep"):
        ndup.dedup_arrow(table, keep="best")
    with pytest.raises(ValueError, match="threshold"):
        ndup.dedup_arrow(table, threshold=-1)
    with pytest.raises(ValueError, match="signature sketch"):
        ndup.dedup_arrow(table, sketch="modulo")
    with pytest.raises(TypeError, match="__arrow_c_stream__"):
        ndup.dedup_arrow([{"text": "a"}])
    nulls = pa.table({"text": pa.array([None, None], pa.string())})
    with pytest.raises(ValueError, match="no row has a text"):
        ndup.dedup_arrow(nulls)


def dictionary(values: list, key_type: pa.DataType, value_type: pa.DataType) -> pa.DictionaryArray:
    """`values` dictionary-encoded: each distinct value once, a null key for None, and one
    extra dictionary entry that is itself null (pointed to by every other None)."""
    distinct = sorted({v for v in values if v is not None})
    position = {v: i for i, v in enumerate(distinct)}
    null_value = len(distinct)
    keys, nones = [], 0
    for v in values:
        if v is None:
            nones += 1
            keys.append(None if nones % 2 else null_value)
        else:
            keys.append(position[v])
    return pa.DictionaryArray.from_arrays(
        pa.array(keys, key_type), pa.array(distinct + [None], value_type)
    )


@pytest.mark.parametrize(
    "key_type,value_type",
    [
        (pa.int8(), pa.string()),
        (pa.int32(), pa.string()),
        (pa.int32(), pa.large_string()),
        (pa.uint16(), pa.string_view()),
    ],
)
@pytest.mark.filterwarnings("ignore:ndup.dedup_arrow")
def test_dictionary_columns_are_read_through_their_keys(key_type, value_type):
    rows = records()
    # Repeated texts, as in a categorical column, and rows whose text is null either way.
    rows = rows + rows[:10] + [{"id": f"null-{i}", "text": None} for i in range(4)]
    ids = [str(r["id"]) for r in rows]
    texts = [r["text"] for r in rows]
    plain = pa.table({"id": ids, "text": pa.array(texts, pa.string())})
    want, want_summary = ndup.dedup_arrow(plain, with_summary=True)
    encoded = pa.table(
        {"id": dictionary(ids, pa.int32(), pa.string()), "text": dictionary(texts, key_type, value_type)}
    )
    assert pa.types.is_dictionary(encoded.schema.field("text").type)
    got, summary = ndup.dedup_arrow(encoded, with_summary=True)
    assert got.column("id").to_pylist() == want.column("id").to_pylist()
    assert summary == want_summary
    # Returned as it came: dictionary-encoded, the kept rows only.
    assert got.schema == encoded.schema
    # In batches (each a slice of the keys, sharing the dictionary), and through a reader.
    reader = pa.RecordBatchReader.from_batches(encoded.schema, encoded.to_batches(max_chunksize=7))
    assert ndup.dedup_arrow(reader).column("id").to_pylist() == want.column("id").to_pylist()
    # Integer ids in a dictionary are read as strings, as plain integer ids are.
    numbered = pa.table({"id": dictionary(list(range(len(rows))), pa.int16(), pa.int64()), "text": encoded["text"]})
    plain_numbered = pa.table({"id": list(range(len(rows))), "text": plain["text"]})
    assert ndup.dedup_arrow(numbered).column("id").to_pylist() == ndup.dedup_arrow(plain_numbered).column("id").to_pylist()


@pytest.mark.filterwarnings("ignore:ndup.dedup_arrow")
def test_dictionary_columns_without_values():
    empty = pa.DictionaryArray.from_arrays(pa.array([None, None], pa.int8()), pa.array([], pa.string()))
    with pytest.raises(ValueError, match="no row has a text"):
        ndup.dedup_arrow(pa.table({"text": empty}))
    # One batch without dictionary values, another with.
    some = pa.DictionaryArray.from_arrays(pa.array([0, 0, 1], pa.int8()), pa.array([words(1, 50), words(2, 50)]))
    table = pa.Table.from_batches(
        [pa.record_batch({"text": empty}), pa.record_batch({"text": some})]
    )
    kept, summary = ndup.dedup_arrow(table, id_column=None, with_summary=True)
    assert kept.num_rows == 2 and summary.exact_dropped == 1 and len(summary.skipped) == 2
    with pytest.raises(TypeError, match="not strings"):
        ndup.dedup_arrow(pa.table({"text": pa.array([1, 2, 1]).dictionary_encode()}))
