"""ndup.scan against `ndup scan --format jsonl` on the same documents."""

from __future__ import annotations

from pathlib import Path

import pytest

import ndup
from conftest import ROOT, corpus, jsonl, words, write_jsonl

CASES = [
    ({}, []),
    ({"threshold": 0.5, "verify": "exact"}, ["--threshold", "0.5", "--verify", "exact"]),
    ({"threshold": 0.6, "verify": "signature"}, ["--threshold", "0.6", "--verify", "signature"]),
    ({"threshold": 0.7, "exact": True}, ["--threshold", "0.7", "--exact"]),
    ({"threshold": 0.7, "containment": True}, ["--threshold", "0.7", "--containment"]),
    (
        {"threshold": 0.6, "sketch": "oph", "num_perm": 64, "seed": 3, "shingle": "word", "w": 3},
        ["-t", "0.6", "--sketch", "oph", "--num-perm", "64", "--seed", "3", "--shingle", "word", "-w", "3"],
    ),
    ({"threshold": 0.5, "bands": 10, "rows": 4}, ["-t", "0.5", "--bands", "10", "--rows", "4"]),
]


def cli_pairs(records: list[dict]) -> list[tuple]:
    return [
        (r["a"], r["b"], r["estimate"], r.get("jaccard"), r.get("a_in_b"), r.get("b_in_a"))
        for r in records
        if r["type"] == "pair"
    ]


def our_pairs(result: ndup.ScanResult) -> list[tuple]:
    return [(p.a, p.b, p.estimate, p.jaccard, p.a_in_b, p.b_in_a) for p in result.pairs]


@pytest.mark.parametrize("kwargs,flags", CASES)
def test_texts_scan_as_the_command_line_scans_the_same_records(cli, tmp_path, kwargs, flags):
    texts = corpus()
    path = write_jsonl(tmp_path / "c.jsonl", [{"id": i, "text": t} for i, t in texts])
    records = jsonl(cli("scan", path, "--format", "jsonl", *flags).stdout)
    want = cli_pairs(records)
    assert len(want) >= 5, flags
    got = ndup.scan(dict(texts), **kwargs)
    assert our_pairs(got) == want
    assert got.params == records[0]
    summary = records[-1]
    for key in ("documents", "empty", "candidates", "exact_checked", "pairs"):
        assert got.stats[key] == summary[key], key
    # The same as (id, text) pairs; and as a plain list, named by position.
    assert our_pairs(ndup.scan(texts, **kwargs)) == want
    by_position = ndup.scan([t for _, t in texts], **kwargs)
    ids = [i for i, _ in texts]
    named = sorted(
        tuple(sorted([(ids[p.a], p.a_in_b), (ids[p.b], p.b_in_a)])) + (p.estimate, p.jaccard) for p in by_position.pairs
    )
    assert named == sorted(tuple(sorted([(a, ab), (b, ba)])) + (e, j) for a, b, e, j, ab, ba in want)
    assert all(p.a < p.b for p in by_position.pairs)
    assert [(p.a, p.b) for p in by_position.pairs] == sorted((p.a, p.b) for p in by_position.pairs)


def test_clusters_are_the_command_lines(cli, tmp_path):
    texts = corpus()
    path = write_jsonl(tmp_path / "c.jsonl", [{"id": i, "text": t} for i, t in texts])
    records = jsonl(cli("scan", path, "--format", "jsonl", "--clusters", "-t", "0.6").stdout)
    want = [r["members"] for r in records if r["type"] == "cluster"]
    got = ndup.scan(dict(texts), threshold=0.6, clusters=True)
    assert got.clusters == want and len(want) >= 5
    positions = ndup.scan([t for _, t in texts], threshold=0.6, clusters=True).clusters
    ids = [i for i, _ in texts]
    assert sorted(sorted(ids[m] for m in g) for g in positions) == sorted(sorted(g) for g in want)
    assert ndup.scan(dict(texts)).clusters is None


def test_paths_scan_as_the_command_line(cli):
    docs = ROOT / "examples" / "docs"
    records = jsonl(cli("scan", docs, "--format", "jsonl").stdout)
    got = ndup.scan([docs])
    assert our_pairs(got) == cli_pairs(records)
    assert len(got.pairs) >= 3
    skipped = [r for r in records if r["type"] == "skip"]
    assert [(s.id, s.kind, s.reason) for s in got.skipped] == [
        (r["id"], r["reason_kind"], r["reason"]) for r in skipped
    ]
    assert got.skipped
    assert got.params == records[0]


def test_json_lines_paths_are_records(cli, tmp_path):
    texts = corpus()
    path = write_jsonl(tmp_path / "c.jsonl", [{"meta": {"url": i}, "body": t} for i, t in texts])
    flags = ["--id-field", "meta.url", "--text-field", "body"]
    records = jsonl(cli("scan", path, "--format", "jsonl", *flags).stdout)
    got = ndup.scan([path], id_field="meta.url", text_field="body")
    assert our_pairs(got) == cli_pairs(records) and got.pairs


def test_missing_texts_and_repeated_ids_are_skipped():
    base = words(1, 200)
    got = ndup.scan([("a", base), ("b", None), ("a", base + " x"), ("c", base + " y")])
    assert [(s.id, s.kind) for s in got.skipped] == [("a", "malformed"), ("b", "malformed")]
    assert [(p.a, p.b) for p in got.pairs] == [("a", "c")]
    got = ndup.scan([base, None, base + " y"])
    assert [(p.a, p.b) for p in got.pairs] == [(0, 2)]
    assert got.skipped[0].reason == "no text (null)"


def test_errors_are_exceptions(tmp_path):
    with pytest.raises(TypeError, match="wrap a single one"):
        ndup.scan("just one text")
    with pytest.raises(TypeError):
        ndup.scan(["text", Path("a/path")])
    with pytest.raises(TypeError, match="not str"):
        ndup.scan({"a": 3})
    with pytest.raises(ValueError, match="threshold"):
        ndup.scan(["a text"], threshold=1.5)
    with pytest.raises(ValueError, match="no document"):
        ndup.scan([])
    with pytest.raises(FileNotFoundError):
        ndup.scan([tmp_path / "missing"])
    with pytest.raises(ValueError, match="supershingle"):
        ndup.scan(["a text"], containment=True, sketch="supershingle")
    with pytest.raises(ValueError, match="verify"):
        ndup.scan(["a text"], verify="sometimes")
    with pytest.raises(ValueError, match="num_perm"):
        ndup.scan(["a text"], sketch="modulo", num_perm=64)
    with pytest.raises(ValueError, match="k must be"):
        ndup.scan(["a text"], k=0)
    with pytest.raises(ValueError):
        ndup.scan([tmp_path / "a.jsonl", tmp_path])


def test_list_arguments_refuse_a_lone_string(tmp_path):
    base = words(1, 200)
    for name, text in [("a.md", base), ("b.md", base + " x"), ("c.txt", base + " y"), ("d.log", base + " z")]:
        (tmp_path / name).write_text(text, encoding="utf-8")

    def found(result: ndup.ScanResult) -> list:
        return sorted({Path(x).name for p in result.pairs for x in (p.a, p.b)})

    assert found(ndup.scan([tmp_path], glob=["*.md"])) == ["a.md", "b.md"]
    assert found(ndup.scan([tmp_path], exclude=["*.log"])) == ["a.md", "b.md", "c.txt"]
    assert found(ndup.scan([tmp_path], glob=("*.md", "*.log"))) == ["a.md", "b.md", "d.log"]
    # A lone str would be split into one-character patterns: refused, as MinHasher refuses it.
    for kwargs in [{"glob": "*.md"}, {"exclude": "*.log"}, {"stopwords": "the"}, {"glob": b"*.md"}]:
        name = next(iter(kwargs))
        with pytest.raises(TypeError, match=f"{name} takes a list of str"):
            ndup.scan([tmp_path], **kwargs)
    with pytest.raises(TypeError):
        ndup.MinHasher(shingle="stopword", stopwords="the")
    stop = "the cat and the dog sat on the mat of the house by the sea"
    got = ndup.scan([stop, stop], shingle="stopword", stopwords=["the"])
    assert got.params["custom_stopwords"] is True and [(p.a, p.b) for p in got.pairs] == [(0, 1)]
    with pytest.raises(TypeError, match="stopwords takes a list of str"):
        ndup.dedup_arrow(pytest.importorskip("pyarrow").table({"text": [stop]}), stopwords="the")
