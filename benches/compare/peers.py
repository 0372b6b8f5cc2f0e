#!/usr/bin/env python3
"""Runs one peer library end to end on a corpus, the way its users do, with ndup's parameters.

    peers.py rensa|gaoya|datasketch PAIRS_OUT PATH... [--workers 2]

Every peer: walk PATH in sorted order, read each file (binary files, with a NUL byte in the first
8 KiB, are skipped as ndup does; invalid UTF-8 is replaced), normalize as ndup does (NFKC,
lowercase, white space collapsed, trimmed), cut character 9-shingles (a non-empty text shorter
than 9 characters is one shingle), sign with 128 hash functions, band the signatures into an
LSH index of 16 bands x 8 rows, query every document, and keep the candidate pairs whose
signature estimate is at least 0.8. The pairs (two paths, tab-separated, sorted) go to PAIRS_OUT
and one JSON line with the counts to stdout.

Both cores: reading, normalizing, shingling and signing run in a multiprocessing pool of
`--workers` processes (the peers' Python APIs hold the GIL), except gaoya, whose own bulk insert
and bulk query are multithreaded in Rust and take the normalized texts directly. The index is
built and queried in the main process, as the libraries' LSH classes require.
"""

import argparse
import json
import multiprocessing as mp
import os
import sys
import unicodedata

K = 9
NUM_PERM = 128
BANDS, ROWS = 16, 8
THRESHOLD = 0.8
SEED = 42
CHUNK = 64


def files(paths):
    out = []
    for root in paths:
        if os.path.isfile(root):
            out.append(root)
            continue
        for d, dirs, names in os.walk(root):
            dirs.sort()
            for n in sorted(names):
                p = os.path.join(d, n)
                if not os.path.islink(p):
                    out.append(p)
    return out


def read_normalized(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    text = data.decode("utf-8", "replace")
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return " ".join(text.lower().split())


def shingles(text):
    if len(text) < K:
        return [text] if text else []
    return list({text[i:i + K] for i in range(len(text) - K + 1)})


# --- rensa -------------------------------------------------------------------------------------

def rensa_sign(path):
    import rensa
    text = read_normalized(path)
    if not text:
        return None
    m = rensa.RMinHash(num_perm=NUM_PERM, seed=SEED)
    m.update(shingles(text))
    return m


def run_rensa(paths, pool):
    import rensa
    lsh = rensa.RMinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM, num_bands=BANDS)
    sigs = {}
    for i, m in enumerate(pool.imap(rensa_sign, paths, chunksize=CHUNK)):
        if m is not None:
            sigs[i] = m
            lsh.insert(i, m)
    pairs = set()
    candidates = 0
    for i, m in sigs.items():
        for j in lsh.query(m):
            if j > i:
                candidates += 1
                if m.jaccard(sigs[j]) >= THRESHOLD:
                    pairs.add((i, j))
    return len(sigs), candidates, pairs


# --- datasketch --------------------------------------------------------------------------------

def datasketch_sign(path):
    from datasketch import LeanMinHash, MinHash
    text = read_normalized(path)
    if not text:
        return None
    m = MinHash(num_perm=NUM_PERM, seed=SEED)
    m.update_batch([s.encode("utf-8") for s in shingles(text)])
    return LeanMinHash(m)


def run_datasketch(paths, pool):
    from datasketch import MinHashLSH
    lsh = MinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM, params=(BANDS, ROWS))
    sigs = {}
    for i, m in enumerate(pool.imap(datasketch_sign, paths, chunksize=CHUNK)):
        if m is not None:
            sigs[i] = m
            lsh.insert(i, m)
    pairs = set()
    candidates = 0
    for i, m in sigs.items():
        for j in lsh.query(m):
            if j > i:
                candidates += 1
                if m.jaccard(sigs[j]) >= THRESHOLD:
                    pairs.add((i, j))
    return len(sigs), candidates, pairs


# --- gaoya -------------------------------------------------------------------------------------

def run_gaoya(paths, pool):
    from gaoya.minhash import MinHashStringIndex
    index = MinHashStringIndex(hash_size=32, jaccard_threshold=THRESHOLD, num_bands=BANDS,
                               band_size=ROWS, num_hashes=NUM_PERM, analyzer="char",
                               lowercase=False, ngram_range=(K, K), id_container="vec")
    ids, docs = [], []
    for i, text in enumerate(pool.imap(read_normalized, paths, chunksize=CHUNK)):
        if text:
            ids.append(i)
            docs.append(text)
    index.par_bulk_insert_docs(ids, docs)
    pairs = set()
    candidates = 0
    for i, found in zip(ids, index.par_bulk_query(docs, return_similarity=True)):
        for j, sim in found:
            if j > i:
                candidates += 1
                if sim >= THRESHOLD:
                    pairs.add((i, j))
    return len(ids), candidates, pairs


RUNNERS = {"rensa": run_rensa, "gaoya": run_gaoya, "datasketch": run_datasketch}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("peer", choices=sorted(RUNNERS))
    ap.add_argument("pairs_out")
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    paths = files(a.paths)
    nbytes = sum(os.path.getsize(p) for p in paths)
    with mp.Pool(a.workers) as pool:
        signed, candidates, pairs = RUNNERS[a.peer](paths, pool)
    lines = sorted("\t".join(sorted((paths[i], paths[j]))) for i, j in pairs)
    with open(a.pairs_out, "w") as f:
        f.writelines(line + "\n" for line in lines)
    print(json.dumps({"tool": a.peer, "documents": len(paths), "signed": signed,
                      "bytes": nbytes, "candidates": candidates, "pairs": len(lines)}))


if __name__ == "__main__":
    sys.exit(main())
