"""LSH against a brute-force reference, datasketch's behaviour, and tune against `ndup tune`."""

from __future__ import annotations

import gc
import json
import pickle
import random
import weakref

import pytest

import ndup
from conftest import words


def band_reference(entries: dict, sig: ndup.Signature, bands: int, rows: int) -> list:
    """The keys sharing a whole band with `sig`, in insertion order (dicts keep it)."""
    q = sig.to_numpy()
    found = []
    for key, s in entries.items():
        v = s.to_numpy()
        if any((v[b * rows : (b + 1) * rows] == q[b * rows : (b + 1) * rows]).all() for b in range(bands)):
            found.append(key)
    return found


def signatures(n: int, num_perm: int = 64) -> list[ndup.Signature]:
    """`n` texts in groups of near copies at several similarities, and their signatures."""
    h = ndup.MinHasher(num_perm=num_perm, shingle="word", w=2)
    texts = []
    for d in range(n):
        group = d // 5
        shared = words(group, 60 + 5 * (d % 5))
        texts.append(f"{shared} {words(10_000 + d, 3 * (d % 5))}")
    return h.sign_batch(texts)


@pytest.mark.parametrize("bands,rows", [(16, 4), (8, 8), (32, 2), (5, 3)])
def test_queries_match_a_brute_force_reference_through_inserts_and_removes(bands, rows):
    rng = random.Random(bands * 100 + rows)
    sigs = signatures(120)
    lsh = ndup.LSH(num_perm=64, bands=bands, rows=rows)
    entries: dict = {}
    # Keys of several hashable types, as datasketch allows.
    keys = [f"doc-{i}" if i % 3 == 0 else (i if i % 3 == 1 else ("t", i)) for i in range(len(sigs))]
    for key, s in zip(keys, sigs):
        lsh.insert(key, s)
        entries[key] = s
    assert len(lsh) == len(entries)

    def check() -> None:
        for s in rng.sample(sigs, 30):
            assert lsh.query(s) == band_reference(entries, s, bands, rows)
        assert lsh.keys() == list(entries)
        assert lsh.query_batch(sigs[:10]) == [lsh.query(s) for s in sigs[:10]]

    check()
    for key in rng.sample(keys, 50):
        lsh.remove(key)
        del entries[key]
        assert key not in lsh
    check()
    # A removed key comes back at the end of the insertion order.
    for key in rng.sample([k for k in keys if k not in entries], 20):
        s = sigs[keys.index(key)]
        lsh.insert(key, s)
        entries[key] = s
    check()
    assert len(lsh) == len(entries) and not lsh.is_empty()


def test_the_default_banding_is_the_scans():
    for threshold in (0.5, 0.8, 0.9):
        lsh = ndup.LSH(threshold=threshold, num_perm=128)
        t = ndup.tune(threshold)
        assert (lsh.bands, lsh.rows) == (t["bands"], t["rows"])
        assert lsh.params == (t["bands"], t["rows"])
    assert ndup.LSH(0.8, 128).params == (18, 7)
    # datasketch's params=(b, r) and weights=(fp, fn).
    assert ndup.LSH(0.5, 64, params=(8, 8)).params == (8, 8)
    even = ndup.tune(0.8, fp_weight=1.0, fn_weight=1.0)
    assert ndup.LSH(0.8, 128, weights=(1.0, 1.0)).params == (even["bands"], even["rows"])
    # Unlike the command line, bands x rows may leave slots unbanded.
    assert ndup.LSH(num_perm=128, bands=16, rows=4).params == (16, 4)


def test_datasketch_usage_carries_over():
    # The datasketch README's example, with `from ndup import MinHash, MinHashLSH`.
    from ndup import MinHash, MinHashLSH

    set1 = set("minhash is a probabilistic data structure for estimating the similarity between datasets".split())
    set2 = set("minhash is a probability data structure for estimating the similarity between documents".split())
    set3 = set("minhash is probability data structure for estimating the similarity between documents".split())
    m1, m2, m3 = MinHash(num_perm=128), MinHash(num_perm=128), MinHash(num_perm=128)
    for d in set1:
        m1.update(d.encode("utf8"))
    for d in set2:
        m2.update(d.encode("utf8"))
    for d in set3:
        m3.update(d.encode("utf8"))
    lsh = MinHashLSH(threshold=0.5, num_perm=128)
    lsh.insert("m2", m2)
    lsh.insert("m3", m3)
    result = lsh.query(m1)
    assert set(result) <= {"m2", "m3"} and "m2" in result
    with lsh.insertion_session() as session:
        session.insert("m1", m1)
    assert "m1" in lsh and len(lsh) == 3
    with lsh.insertion_session(buffer_size=100) as session:
        session.insert("m1-again", m1)
    assert lsh.insertion_session(10) is lsh and "m1-again" in lsh
    lsh.remove("m1-again")
    # The same class as LSH, with LSH's default threshold (datasketch's is 0.9).
    assert MinHashLSH is ndup.LSH and MinHashLSH().threshold == 0.8
    lsh.remove("m1")
    assert "m1" not in lsh


def test_errors_are_exceptions():
    sigs = signatures(3)
    lsh = ndup.LSH(0.7, 64)
    lsh.insert("a", sigs[0])
    with pytest.raises(ValueError, match="already in the index"):
        lsh.insert("a", sigs[1])
    with pytest.raises(ValueError, match="not in the index"):
        lsh.remove("zzz")
    with pytest.raises(TypeError):
        lsh.insert(["unhashable"], sigs[1])
    assert len(lsh) == 1
    wide = ndup.MinHasher(num_perm=128).sign(words(1, 50))
    with pytest.raises(ValueError, match="num-perm 64 vs 128"):
        lsh.query(wide)
    with pytest.raises(ValueError, match="num-perm"):
        lsh.insert("b", wide)
    seeded = ndup.MinHasher(num_perm=64, seed=3, shingle="word", w=2).sign(words(1, 50))
    with pytest.raises(ValueError, match="seed 42 vs 3"):
        lsh.insert("b", seeded)
    with pytest.raises(TypeError):
        lsh.query("text")
    assert len(lsh) == 1 and lsh.keys() == ["a"]
    for bad in [
        dict(threshold=1.5),
        dict(num_perm=0),
        dict(bands=200),
        dict(num_perm=64, bands=9, rows=8),
        dict(params=(4, 4), bands=4),
        dict(weights=(-1.0, 1.0)),
    ]:
        with pytest.raises(ValueError):
            ndup.LSH(**bad)


@pytest.mark.parametrize(
    "kwargs,flags",
    [
        ({}, []),
        ({"threshold": 0.5}, ["--threshold", "0.5"]),
        ({"threshold": 0.9, "num_perm": 256}, ["--threshold", "0.9", "--num-perm", "256"]),
        ({"bands": 16, "rows": 8}, ["--bands", "16", "--rows", "8"]),
        ({"threshold": 0.7, "rows": 4, "verify": "signature"}, ["-t", "0.7", "--rows", "4", "--verify", "signature"]),
        ({"fp_weight": 2.0, "fn_weight": 5.0}, ["--fp-weight", "2", "--fn-weight", "5"]),
        # Fewer banded slots than slots: the rest unbanded, as the tuner's own 18 x 7 of 128.
        ({"num_perm": 64, "bands": 7, "rows": 8}, ["--num-perm", "64", "--bands", "7", "--rows", "8"]),
    ],
)
def test_tune_is_the_command_lines(cli, kwargs, flags):
    want = json.loads(cli("tune", "--format", "json", *flags).stdout)
    assert ndup.tune(**kwargs) == want


def test_tune_refuses_what_the_command_line_refuses(cli):
    for kwargs, flags in [
        ({"threshold": 2.0}, ["--threshold", "2"]),
        ({"bands": 0}, ["--bands", "0"]),
        ({"num_perm": 64, "bands": 9, "rows": 8}, ["--num-perm", "64", "--bands", "9", "--rows", "8"]),
        ({"verify": "maybe"}, None),
    ]:
        with pytest.raises(ValueError):
            ndup.tune(**kwargs)
        if flags is not None:
            assert cli("tune", *flags, ok=(2,)).returncode == 2


def test_signatures_of_text_shingled_otherwise_are_refused():
    text = words(5, 80)
    nine, five = ndup.MinHasher(k=9).sign(text), ndup.MinHasher(k=5).sign(text)
    lsh = ndup.LSH(threshold=0.5)
    lsh.insert("nine", nine)
    for call in (lambda: lsh.insert("five", five), lambda: lsh.query(five)):
        with pytest.raises(ValueError, match="shingling `char 9-shingles, .*` vs `char 5-shingles"):
            call()
    with pytest.raises(ValueError, match="shingling"):
        lsh.insert_batch(["a", "b"], [nine, five])
    assert len(lsh) == 1 and lsh.query(nine) == ["nine"]


def test_an_index_pickles_and_answers_alike():
    hasher = ndup.MinHasher(num_perm=64)
    sigs = [hasher.sign(words(i % 10, 60) + f" tail {i}") for i in range(200)]
    lsh = ndup.LSH(threshold=0.5, num_perm=64)
    for i, s in enumerate(sigs):
        lsh.insert(("doc", i), s)
    for i in range(0, 200, 4):
        lsh.remove(("doc", i))
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        again = pickle.loads(pickle.dumps(lsh, protocol=protocol))
        assert (len(again), again.keys()) == (len(lsh), lsh.keys())
        assert (again.params, again.threshold, again.num_perm) == (lsh.params, 0.5, 64)
        assert all(again.query(s) == lsh.query(s) for s in sigs)
    # It refuses what the original refuses, and takes what it takes.
    with pytest.raises(ValueError, match="shingling"):
        again.insert("k5", ndup.MinHasher(num_perm=64, k=5).sign(words(1, 60)))
    with pytest.raises(ValueError, match="already in the index"):
        again.insert(("doc", 1), sigs[1])
    again.insert(("doc", 0), sigs[0])
    assert again.query(sigs[0]) == lsh.query(sigs[0]) + [("doc", 0)]
    empty = pickle.loads(pickle.dumps(ndup.LSH(threshold=0.7, num_perm=64)))
    assert len(empty) == 0 and empty.query(sigs[0]) == []


def test_a_refused_insert_fixes_no_parameter():
    tokens = ndup.MinHash(num_perm=16)
    tokens.update_batch(["a", "b"])
    text = words(3, 40)
    seed1 = ndup.MinHasher(num_perm=16, seed=1).sign(text)
    k5 = ndup.MinHasher(num_perm=16, k=5).sign(text)
    k9 = ndup.MinHasher(num_perm=16).sign(text)
    # An unhashable key, on an empty index: the signature's seed is not the index's.
    lsh = ndup.LSH(num_perm=16, threshold=0.5)
    with pytest.raises(TypeError, match="unhashable"):
        lsh.insert(["unhashable"], seed1)
    assert lsh.is_empty() and len(lsh) == 0
    lsh.insert("a", k9)
    assert lsh.query(k9) == ["a"]
    # A duplicate key: the refused signature's shingling is not the index's.
    lsh = ndup.LSH(num_perm=16, threshold=0.5)
    lsh.insert("m", tokens)
    with pytest.raises(ValueError, match="already in the index"):
        lsh.insert("m", k5)
    lsh.insert("t9", k9)
    assert lsh.keys() == ["m", "t9"] and lsh.query(k9) == ["t9"]
    with pytest.raises(ValueError, match="shingling"):
        lsh.insert("t5", k5)
    # The same through insert_batch.
    lsh = ndup.LSH(num_perm=16, threshold=0.5)
    with pytest.raises(TypeError, match="unhashable"):
        lsh.insert_batch(["x", ["unhashable"]], [seed1, seed1])
    with pytest.raises(ValueError, match="already in the index"):
        lsh.insert_batch(["x", "x"], [k5, k5])
    assert lsh.is_empty() and "x" not in lsh
    lsh.insert_batch(["a", "b"], [k9, k9])
    lsh.insert("c", k9)
    assert lsh.query(k9) == ["a", "b", "c"]


def test_a_key_that_uses_its_index_while_indexed_raises():
    lsh = ndup.LSH(num_perm=16, threshold=0.5)
    sig = ndup.MinHasher(num_perm=16).sign(words(3, 40))

    class Meddler:
        def __hash__(self):
            lsh.query(sig)
            return 1

    # Instead of waiting forever for its own lock.
    with pytest.raises(RuntimeError, match="already in use by this thread"):
        lsh.insert(Meddler(), sig)
    with pytest.raises(RuntimeError, match="already in use by this thread"):
        lsh.insert_batch([Meddler()], [sig])
    assert lsh.is_empty() and lsh.keys() == []
    lsh.insert("a", sig)
    assert lsh.query(sig) == ["a"]


def test_cycles_through_an_index_are_collected():
    sig = ndup.MinHasher(num_perm=16).sign(words(3, 40))

    class Doc:
        def __init__(self, lsh):
            self.lsh = lsh

    lsh = ndup.LSH(num_perm=16, threshold=0.5)
    doc = Doc(lsh)
    lsh.insert(doc, sig)
    lsh.insert_batch([Doc(lsh)], [sig])
    gone = weakref.ref(doc)
    del doc, lsh
    gc.collect()
    assert gone() is None
    # A live index keeps its keys whole through a collection.
    lsh = ndup.LSH(num_perm=16, threshold=0.5)
    docs = [Doc(lsh) for _ in range(3)]
    lsh.insert_batch(docs, [sig] * 3)
    refs = [weakref.ref(d) for d in docs]
    del docs
    gc.collect()
    assert all(r() is not None for r in refs)
    assert lsh.query(sig) == [r() for r in refs] and all(d.lsh is lsh for d in lsh.keys())
    lsh.remove(refs[0]())
    gc.collect()
    assert refs[0]() is None and len(lsh) == 2
