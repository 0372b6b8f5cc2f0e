"""LSH.insert_batch and LSH.query_batch against the per-call path and a brute-force reference."""

from __future__ import annotations

import random

import pytest

import ndup
from conftest import words
from test_lsh import band_reference, signatures


def keys_of(n: int) -> list:
    """Keys of several hashable types, as datasketch allows."""
    return [f"doc-{i}" if i % 3 == 0 else (i if i % 3 == 1 else ("t", i)) for i in range(n)]


def state(lsh: ndup.LSH, probes: list) -> tuple:
    return len(lsh), lsh.keys(), [lsh.query(s) for s in probes]


@pytest.mark.parametrize("bands,rows", [(16, 4), (8, 8), (5, 3)])
def test_a_batch_is_the_per_call_path_and_the_reference(bands, rows):
    rng = random.Random(bands + rows)
    sigs = signatures(150)
    keys = keys_of(len(sigs))
    one = ndup.LSH(num_perm=64, bands=bands, rows=rows)
    for k, s in zip(keys, sigs):
        one.insert(k, s)
    batch = ndup.LSH(num_perm=64, bands=bands, rows=rows)
    # Two batches, from a list and from generators.
    batch.insert_batch(keys[:60], sigs[:60])
    batch.insert_batch((k for k in keys[60:]), iter(sigs[60:]))
    entries = dict(zip(keys, sigs))
    assert len(batch) == len(one) == len(entries)
    assert batch.keys() == one.keys() == keys
    got = batch.query_batch(sigs)
    assert got == [one.query(s) for s in sigs] == [band_reference(entries, s, bands, rows) for s in sigs]
    # Removals, then keys back through a batch: at the end of the insertion order.
    gone = rng.sample(keys, 60)
    for k in gone:
        batch.remove(k)
        del entries[k]
    back = gone[:25]
    batch.insert_batch(back, [sigs[keys.index(k)] for k in back])
    for k in back:
        entries[k] = sigs[keys.index(k)]
    assert batch.keys() == list(entries)
    assert batch.query_batch(sigs) == [band_reference(entries, s, bands, rows) for s in sigs]
    assert [batch.query(s) for s in sigs] == batch.query_batch(sigs)


def test_batches_take_minhashes_and_empty_batches():
    lsh = ndup.LSH(0.5, 64)
    assert lsh.query_batch([]) == []
    lsh.insert_batch([], [])
    assert lsh.is_empty()
    text = words(3, 40)
    m = ndup.MinHash(num_perm=64)
    for w in text.split():
        m.update(w.encode())
    assert lsh.query_batch([m]) == [[]]
    lsh.insert_batch(["m"], [m])
    assert lsh.query_batch([m, m]) == [["m"], ["m"]]
    assert lsh.query(m) == ["m"]


def test_a_refused_batch_changes_nothing():
    sigs = signatures(20)
    lsh = ndup.LSH(num_perm=64, bands=16, rows=4)
    lsh.insert_batch(["a", "b"], sigs[:2])
    before = state(lsh, sigs)
    wide = ndup.MinHasher(num_perm=128).sign(words(1, 50))
    seeded = ndup.MinHasher(num_perm=64, seed=3).sign(words(1, 50))
    for keys, minhashes, error, match in [
        (["c", "a"], sigs[2:4], ValueError, "already in the index"),
        (["c", "d", "c"], sigs[2:5], ValueError, "already in the index"),
        (["c", "d"], sigs[2:5], ValueError, "different lengths"),
        (["c", "d", "e"], sigs[2:4], ValueError, "different lengths"),
        (["c", "d"], [sigs[2], wide], ValueError, "num-perm 64 vs 128"),
        (["c", "d"], [sigs[2], seeded], ValueError, "seed"),
        (["c", ["unhashable"]], sigs[2:4], TypeError, None),
        (["c", "d"], [sigs[2], "text"], TypeError, None),
    ]:
        with pytest.raises(error, match=match):
            lsh.insert_batch(keys, minhashes)
        assert state(lsh, sigs) == before, keys
        assert "c" not in lsh and "d" not in lsh
    with pytest.raises(ValueError, match="num-perm"):
        lsh.query_batch([sigs[0], wide])
    with pytest.raises(TypeError):
        lsh.query_batch(5)
    # A batch whose first signature sets the seed is refused whole.
    fresh = ndup.LSH(num_perm=64, bands=16, rows=4)
    with pytest.raises(ValueError, match="seed"):
        fresh.insert_batch(["x", "y"], [sigs[0], seeded])
    assert fresh.is_empty() and fresh.keys() == [] and fresh.query(sigs[0]) == []
    fresh.insert_batch(["y"], [seeded])
    assert fresh.query(seeded) == ["y"]


def test_queries_from_many_threads_while_a_batch_runs():
    from concurrent.futures import ThreadPoolExecutor

    sigs = signatures(200)
    lsh = ndup.LSH(num_perm=64, bands=16, rows=4)
    lsh.insert_batch(range(len(sigs)), sigs)
    want = [lsh.query(s) for s in sigs]
    with ThreadPoolExecutor(4) as pool:
        batches = list(pool.map(lambda _: lsh.query_batch(sigs), range(4)))
        singles = list(pool.map(lsh.query, sigs))
    assert all(b == want for b in batches) and singles == want


def test_an_index_shared_with_a_thread_that_changes_it():
    import threading

    import numpy as np

    rng = np.random.default_rng(5)
    pool = rng.integers(0, 2**32, size=(500, 64), dtype=np.uint32)
    sigs = [ndup.Signature.from_numpy(pool[i % 500]) for i in range(200_000)]
    extra = [ndup.Signature.from_numpy(row) for row in rng.integers(0, 2**32, size=(200, 64), dtype=np.uint32)]
    probes = [sigs[i] for i in range(0, 500, 7)] + extra[:20]

    def index() -> ndup.LSH:
        lsh = ndup.LSH(num_perm=64, bands=16, rows=4)
        lsh.insert_batch(range(1000), sigs[:1000])
        return lsh

    lsh = index()
    errors: list[BaseException] = []

    def run(work):
        try:
            work()
        except BaseException as e:  # noqa: BLE001  (reported by the main thread)
            errors.append(e)

    # Changes and queries from this thread while another inserts (then queries) in batches,
    # with the GIL released: each waits for the other, none fails.
    mine = []
    writer = threading.Thread(target=run, args=(lambda: lsh.insert_batch(range(1000, len(sigs)), sigs[1000:]),))
    writer.start()
    while writer.is_alive() or len(mine) < 5:
        j = len(mine)
        found = lsh.query(sigs[j % 500])
        # Each row of the pool is twice in the first 1000 signatures and 398 times in the
        # batch, which a query sees whole or not at all.
        assert len(found) in (2, 400)
        lsh.insert(("main", j), extra[j % len(extra)])
        mine.append(("main", j))
        assert ("main", j) in lsh and len(lsh) >= 1000 + len(mine)
        lsh.query_batch(probes[:3])
    writer.join()
    reader = threading.Thread(target=run, args=(lambda: [lsh.query_batch(sigs[:20_000]) for _ in range(3)],))
    reader.start()
    while reader.is_alive() or len(mine) < 10:
        j = len(mine)
        lsh.insert(("main", j), extra[j % len(extra)])
        mine.append(("main", j))
        lsh.remove(("main", j))
        lsh.insert(("main", j), extra[j % len(extra)])
        assert len(lsh) == len(sigs) + len(mine)
    reader.join()
    assert not errors, errors

    # The same as one thread doing it all in turn (the order of the keys aside, which depends
    # on when the batch ran).
    alone = index()
    alone.insert_batch(range(1000, len(sigs)), sigs[1000:])
    for j, key in enumerate(mine):
        alone.insert(key, extra[j % len(extra)])
    assert len(lsh) == len(alone) and sorted(map(repr, lsh.keys())) == sorted(map(repr, alone.keys()))
    for got, want in zip(lsh.query_batch(probes), alone.query_batch(probes)):
        assert sorted(map(repr, got)) == sorted(map(repr, want))
