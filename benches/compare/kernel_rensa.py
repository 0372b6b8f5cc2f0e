#!/usr/bin/env python3
"""Times rensa's fastest batch API on the token arrays written by `examples/kernel.rs dump`.

    RAYON_NUM_THREADS=1 kernel_rensa.py PREFIX [--repeat R]

Prints one JSON line like the Rust side: tokens per second of the best of R runs of
RMinHash.digest_matrix_from_flat_token_hashes(tokens, offsets, 128, 42), which takes the
already-hashed 64-bit tokens of every document in one flat buffer plus row offsets.
"""

import argparse
import json
import time

import numpy as np
import rensa


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("prefix")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    tokens = np.fromfile(a.prefix + ".tokens", dtype="<u8")
    offsets = np.fromfile(a.prefix + ".offsets", dtype="<u8")
    times = []
    for _ in range(max(1, a.repeat)):
        t = time.perf_counter()
        m = rensa.RMinHash.digest_matrix_from_flat_token_hashes(tokens, offsets, 128, 42)
        times.append(time.perf_counter() - t)
        assert m.len() == len(offsets) - 1
    times.sort()
    print(json.dumps({
        "tool": "rensa-digest_matrix_from_flat_token_hashes",
        "documents": int(len(offsets) - 1),
        "tokens": int(len(tokens)),
        "best_s": round(times[0], 6),
        "median_s": round(times[len(times) // 2], 6),
        "tokens_per_s": round(len(tokens) / times[0]),
    }))


if __name__ == "__main__":
    main()
