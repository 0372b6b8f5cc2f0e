#!/usr/bin/env python3
"""ndup's Python module against rensa and datasketch, in one Python process, on the same texts.

    python -m venv /tmp/bench && . /tmp/bench/bin/activate
    pip install -r benches/python-requirements.txt ./python
    python benches/python_compare.py [--docs 20000] [--words 400] [--datasketch-docs 1000]

Every library gets the same job through its own API, with tokenization counted for everyone:

- Signing: from a text to a signature of 128 slots: normalized as ndup normalizes (NFKC when
  the text is not ASCII, lowercase, white space collapsed), cut into distinct character
  9-shingles, signed with seed 42. rensa and datasketch are given the shingles made in Python
  (as their users make them); ndup takes the text and does all of it in Rust.
- LSH: 16 bands x 8 rows over those signatures; insert every document, then query every one
  (the signatures are made beforehand and not timed), one call a document (`insert`, `query`)
  and through each library's bulk API: rensa's `insert_pairs` and `query_all`, ndup's
  `insert_batch` and `query_batch` (on every core, the GIL released); datasketch has only its
  `insertion_session`, and runs once (it is an order of magnitude slower).
- End to end: both at once, from the texts to each document's candidates (tokenize, sign,
  insert every document, query every one), as a deduplication job does it: one call a document,
  and through the bulk APIs.

The texts are made up: `--docs` documents of `--words` words drawn from a Zipf-like vocabulary,
a third of them edited copies of an earlier one. datasketch signs only the first
`--datasketch-docs` of them (it is two orders of magnitude slower); throughput is per second
either way. Each row is the best of `--repeat` runs (for LSH, the run of least total time).
The machine, the versions and the command are printed with the table.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import threading
import time
import unicodedata
from importlib.metadata import version

K = 9
NUM_PERM = 128
SEED = 42
BANDS, ROWS = 16, 8


def make_texts(docs: int, words: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    vocab = [f"{rng.choice('bcdfghjklmnpqrstvwz')}{rng.choice('aeiou')}{i:x}" for i in range(20000)]
    weights = [1 / (r + 1) for r in range(len(vocab))]
    texts: list[str] = []
    for d in range(docs):
        if texts and rng.random() < 1 / 3:
            w = rng.choice(texts).split()
            for _ in range(max(1, len(w) // 50)):
                w[rng.randrange(len(w))] = rng.choice(vocab)
            texts.append(" ".join(w))
        else:
            texts.append(" ".join(rng.choices(vocab, weights, k=words)))
    return texts


def normalized(text: str) -> str:
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return " ".join(text.lower().split())


def shingles(text: str) -> list[str]:
    t = normalized(text)
    if len(t) < K:
        return [t] if t else []
    return list({t[i : i + K] for i in range(len(t) - K + 1)})


def best(repeat: int, run) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def in_threads(n: int, work, items: list) -> None:
    parts = [items[i::n] for i in range(n)]
    threads = [threading.Thread(target=work, args=(p,)) for p in parts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=20000)
    ap.add_argument("--words", type=int, default=400)
    ap.add_argument("--datasketch-docs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lsh-only", action="store_true", help="skip the signing rows")
    a = ap.parse_args()

    import datasketch
    import rensa

    import ndup

    texts = make_texts(a.docs, a.words, a.seed)
    mb = sum(len(t.encode()) for t in texts) / 1e6
    few = texts[: a.datasketch_docs]
    few_mb = sum(len(t.encode()) for t in few) / 1e6
    hasher = ndup.MinHasher(num_perm=NUM_PERM, k=K, seed=SEED)

    rows: list[tuple[str, str, int, float, float]] = []  # task, how, docs, MB, seconds

    def sign_row(how: str, items: list[str], run, repeat: int = a.repeat) -> None:
        size = mb if items is texts else few_mb
        rows.append(("sign", how, len(items), size, best(repeat, run)))

    # datasketch: one MinHash per document, the shingles as bytes.
    def datasketch_sign() -> None:
        for t in few:
            m = datasketch.MinHash(num_perm=NUM_PERM, seed=SEED)
            m.update_batch([s.encode("utf8") for s in shingles(t)])

    if not a.lsh_only:
        sign_row("datasketch MinHash.update_batch", few, datasketch_sign, repeat=1)

        def rensa_sign() -> None:
            for t in texts:
                m = rensa.RMinHash(num_perm=NUM_PERM, seed=SEED)
                m.update(shingles(t))

        sign_row("rensa RMinHash.update", texts, rensa_sign)

        def rensa_bulk() -> None:
            rensa.RMinHash.digest_matrix_from_token_sets([shingles(t) for t in texts], NUM_PERM, SEED)

        sign_row("rensa digest_matrix_from_token_sets", texts, rensa_bulk)

        def ndup_sign(items: list[str]) -> None:
            for t in items:
                hasher.sign(t)

        def ndup_one_core(items: list[str]) -> None:
            hasher.sign_batch(items, threads=1)

        sign_row("ndup MinHasher.sign, a loop", texts, lambda: ndup_sign(texts))
        # The GIL is released while a batch is signed: two Python threads, each signing half the
        # texts on its own thread, run at once.
        sign_row("ndup sign_batch(threads=1), 1 Python thread", texts, lambda: ndup_one_core(texts))
        sign_row(
            "ndup sign_batch(threads=1), 2 Python threads",
            texts,
            lambda: in_threads(2, ndup_one_core, texts),
        )
        sign_row("ndup MinHasher.sign_batch (every core)", texts, lambda: hasher.sign_batch(texts))

    # LSH: the same banding for everyone; signatures made beforehand.
    n = len(texts)
    sigs = hasher.sign_batch(texts)
    r_sigs = rensa.RMinHash.from_token_sets([shingles(t) for t in texts], NUM_PERM, SEED)
    d_sigs = []
    for t in texts:
        m = datasketch.MinHash(num_perm=NUM_PERM, seed=SEED)
        m.update_batch([s.encode("utf8") for s in shingles(t)])
        d_sigs.append(m)

    # Each returns (insert seconds, query seconds). Per call: one Python call a document and a
    # query; batch: the libraries' bulk APIs, which take every document in one call.
    def timed(build, insert, query) -> tuple[float, float]:
        lsh = build()
        start = time.perf_counter()
        insert(lsh)
        mid = time.perf_counter()
        query(lsh)
        return mid - start, time.perf_counter() - mid

    def per_call(build, items: list) -> tuple[float, float]:
        """One `insert(key, sig)` call a document, then one `query(sig)` call a document."""

        def insert(lsh) -> None:
            for i, m in enumerate(items):
                lsh.insert(i, m)

        def query(lsh) -> None:
            for m in items:
                lsh.query(m)

        return timed(build, insert, query)

    def datasketch_lsh() -> tuple[float, float]:
        return per_call(lambda: datasketch.MinHashLSH(num_perm=NUM_PERM, params=(BANDS, ROWS)), d_sigs)

    def datasketch_session() -> tuple[float, float]:
        def insert(lsh) -> None:
            with lsh.insertion_session() as session:
                for i, m in enumerate(d_sigs):
                    session.insert(i, m)

        def query(lsh) -> None:
            for m in d_sigs:
                lsh.query(m)

        return timed(lambda: datasketch.MinHashLSH(num_perm=NUM_PERM, params=(BANDS, ROWS)), insert, query)

    def rensa_new():
        return rensa.RMinHashLSH(threshold=0.8, num_perm=NUM_PERM, num_bands=BANDS)

    def rensa_lsh() -> tuple[float, float]:
        return per_call(rensa_new, r_sigs)

    def rensa_bulk() -> tuple[float, float]:
        return timed(rensa_new, lambda lsh: lsh.insert_pairs(list(enumerate(r_sigs))), lambda lsh: lsh.query_all(r_sigs))

    def ndup_new():
        return ndup.LSH(num_perm=NUM_PERM, params=(BANDS, ROWS))

    def ndup_lsh() -> tuple[float, float]:
        return per_call(ndup_new, sigs)

    def ndup_batch() -> tuple[float, float]:
        return timed(ndup_new, lambda lsh: lsh.insert_batch(range(n), sigs), lambda lsh: lsh.query_batch(sigs))

    # Every library must find the same candidates (datasketch's and rensa's band hashes differ
    # from ndup's, so only through the same signatures: ndup's against itself).
    check = ndup_new()
    check.insert_batch(range(n), sigs)
    assert check.query_batch(sigs) == [check.query(s) for s in sigs]

    lsh_rows: list[tuple[str, float, float]] = []  # how, insert seconds, query seconds
    for how, run, repeat in [
        ("datasketch MinHashLSH insert, query", datasketch_lsh, 1),
        ("datasketch insertion_session, query", datasketch_session, 1),
        ("rensa RMinHashLSH insert, query", rensa_lsh, a.repeat),
        ("rensa insert_pairs, query_all", rensa_bulk, a.repeat),
        ("ndup LSH insert, query", ndup_lsh, a.repeat),
        ("ndup LSH insert_batch, query_batch", ndup_batch, a.repeat),
    ]:
        lsh_rows.append((how, *min((run() for _ in range(repeat)), key=sum)))

    # End to end: from texts to each document's candidates (tokenize, sign, insert every
    # document, query every one), as a deduplication job does it.
    def e2e_datasketch() -> None:
        lsh = datasketch.MinHashLSH(num_perm=NUM_PERM, params=(BANDS, ROWS))
        made = []
        for i, t in enumerate(few):
            m = datasketch.MinHash(num_perm=NUM_PERM, seed=SEED)
            m.update_batch([s.encode("utf8") for s in shingles(t)])
            lsh.insert(i, m)
            made.append(m)
        for m in made:
            lsh.query(m)

    def e2e_rensa() -> None:
        lsh = rensa_new()
        made = []
        for i, t in enumerate(texts):
            m = rensa.RMinHash(num_perm=NUM_PERM, seed=SEED)
            m.update(shingles(t))
            lsh.insert(i, m)
            made.append(m)
        for m in made:
            lsh.query(m)

    def e2e_rensa_bulk() -> None:
        lsh = rensa_new()
        made = rensa.RMinHash.from_token_sets([shingles(t) for t in texts], NUM_PERM, SEED)
        lsh.insert_pairs(list(enumerate(made)))
        lsh.query_all(made)

    def e2e_ndup() -> None:
        lsh = ndup_new()
        made = []
        for i, t in enumerate(texts):
            s = hasher.sign(t)
            lsh.insert(i, s)
            made.append(s)
        for s in made:
            lsh.query(s)

    def e2e_ndup_batch() -> None:
        lsh = ndup_new()
        made = hasher.sign_batch(texts)
        lsh.insert_batch(range(n), made)
        lsh.query_batch(made)

    e2e_rows = []
    if not a.lsh_only:
        for how, items, run, repeat in [
            ("datasketch, one call a document", few, e2e_datasketch, 1),
            ("rensa, one call a document", texts, e2e_rensa, a.repeat),
            ("rensa from_token_sets, insert_pairs, query_all", texts, e2e_rensa_bulk, a.repeat),
            ("ndup sign, insert, query", texts, e2e_ndup, a.repeat),
            ("ndup sign_batch, insert_batch, query_batch", texts, e2e_ndup_batch, a.repeat),
        ]:
            e2e_rows.append((how, len(items), best(repeat, run)))

    print(
        f"{a.docs} documents of {a.words} words ({mb:.1f} MB), char {K}-shingles, {NUM_PERM} slots, "
        f"LSH {BANDS} x {ROWS}; {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"ndup {version('ndup')}, rensa {version('rensa')}, datasketch {version('datasketch')}"
    )
    print(f"command: {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
    print()
    table = [r for r in rows if r[0] == "sign"]
    if table:
        base = next(r for r in table if r[1].startswith("rensa"))
        base_rate = base[2] / base[4]
        print(f"{'signing (text to signature)':<50} {'docs':>7} {'seconds':>9} {'docs/s':>10} {'MB/s':>8} {'vs rensa':>9}")
        for _, how, docs, size, secs in table:
            rate = docs / secs
            print(f"{how:<50} {docs:>7} {secs:>9.3f} {rate:>10.0f} {size / secs:>8.1f} {rate / base_rate:>8.2f}x")
        print()
    # LSH: microseconds per document for each phase, and throughput of both against rensa's
    # per-call API and against its bulk API.
    rensa_call = sum(next(r for r in lsh_rows if r[0].startswith("rensa RMinHashLSH"))[1:])
    bulk = sum(next(r for r in lsh_rows if r[0].startswith("rensa insert_pairs"))[1:])
    title = f"LSH {BANDS} x {ROWS}: insert all {n} documents, then query all"
    print(
        f"{title:<50} {'insert us':>9} {'query us':>9} {'seconds':>9} {'docs/s':>10} "
        f"{'vs rensa':>9} {'vs bulk':>8}"
    )
    for how, ins, qry in lsh_rows:
        secs = ins + qry
        print(
            f"{how:<50} {ins / n * 1e6:>9.3f} {qry / n * 1e6:>9.3f} {secs:>9.3f} {n / secs:>10.0f} "
            f"{rensa_call / secs:>8.2f}x {bulk / secs:>7.2f}x"
        )
    print()
    if e2e_rows:
        base = next(r for r in e2e_rows if r[0].startswith("rensa, one call"))
        base_rate = base[1] / base[2]
        title = "end to end: texts to candidates (sign, insert, query)"
        print(f"{title:<50} {'docs':>7} {'seconds':>9} {'docs/s':>10} {'vs rensa':>9}")
        for how, docs, secs in e2e_rows:
            rate = docs / secs
            print(f"{how:<50} {docs:>7} {secs:>9.3f} {rate:>10.0f} {rate / base_rate:>8.2f}x")
        print()


if __name__ == "__main__":
    main()
