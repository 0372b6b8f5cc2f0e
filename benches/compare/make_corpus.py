#!/usr/bin/env python3
"""Builds the benchmark corpora of benches/compare.sh from text already on a Debian machine.

    make_corpus.py base   OUT --mb 200        real text + planted near-duplicates (+ planted.tsv)
    make_corpus.py rot    BASE OUT --shift N   a copy of BASE with ASCII letters rotated by N
    make_corpus.py small  SRC... OUT --docs N  N distinct small files cut from the text of SRC...

`base` takes the text files of /usr/share/doc (gzip files decompressed), /usr/share/common-licenses
and the man pages (decompressed roff source, every language), in a fixed pseudo-random order until
`--mb` megabytes, then plants near-duplicates: copies of chosen documents with about 1% of their
words edited, listed with their exact Jaccard similarity (char 9-shingles of the normalized text)
in OUT/../planted.tsv. Everything is deterministic: the same machine gives the same corpus.

`rot` makes the scaling copies: rotating the letters changes every shingle but keeps the sizes,
the statistics and the near-duplicate structure, so corpus 4x = BASE + 3 rotated copies has four
times the documents, the bytes and the pairs.
"""

import argparse
import gzip
import hashlib
import os
import random
import re
import sys
import unicodedata

SOURCES = ["/usr/share/doc", "/usr/share/common-licenses", "/usr/share/man"]
# Formats that are text in name only.
SKIP_EXT = (".ps", ".pdf", ".png", ".jpg", ".jpeg", ".gif", ".svgz", ".ico", ".woff", ".woff2",
            ".ttf", ".otf", ".bz2", ".xz", ".zst", ".zip", ".jar", ".mo", ".gmo", ".db")
PLANT_SEED = 20240601


def read_text(path):
    """The file's bytes (decompressed when gzip), or None when it is not a text file."""
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as f:
                data = f.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except (OSError, EOFError, gzip.BadGzipFile):
        return None
    if not data or b"\0" in data[:8192]:
        return None
    return data


def candidates():
    for root in SOURCES:
        for d, dirs, files in os.walk(root):
            dirs.sort()
            for name in sorted(files):
                p = os.path.join(d, name)
                if os.path.islink(p) or not os.path.isfile(p):
                    continue
                base = name[:-3] if name.endswith(".gz") else name
                if base.lower().endswith(SKIP_EXT):
                    continue
                yield p


def out_name(path):
    rel = path.lstrip("/").replace("usr/share/", "", 1)
    return rel[:-3] if rel.endswith(".gz") else rel


def normalize(text):
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return " ".join(text.lower().split())


def shingles(text, k=9):
    t = normalize(text)
    if not t:
        return set()
    if len(t) < k:
        return {t}
    return {t[i:i + k] for i in range(len(t) - k + 1)}


def edit(text, rng, rate=0.01):
    """About `rate` of the words replaced, deleted or doubled."""
    parts = re.split(r"(\s+)", text)
    words = [i for i, p in enumerate(parts) if p and not p.isspace()]
    n = max(1, int(len(words) * rate))
    for i in rng.sample(words, min(n, len(words))):
        op = rng.randrange(3)
        if op == 0:
            parts[i] = parts[rng.choice(words)]
        elif op == 1:
            parts[i] = ""
        else:
            parts[i] = parts[i] + " " + parts[i]
    return "".join(parts)


def base(out, mb, plants):
    order = sorted(candidates(), key=lambda p: hashlib.sha1(p.encode()).digest())
    budget = mb * 1_000_000
    total = 0
    chosen = []
    for p in order:
        if total >= budget:
            break
        data = read_text(p)
        if data is None:
            continue
        dest = os.path.join(out, out_name(p))
        if os.path.exists(dest):
            dest += ".1"
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as f:
            f.write(data)
        total += len(data)
        chosen.append((dest, len(data)))
    # Planted near-duplicates of mid-sized documents.
    rng = random.Random(PLANT_SEED)
    pool = sorted(d for d, n in chosen if 2_000 <= n <= 200_000)
    rows = []
    for i, src in enumerate(rng.sample(pool, min(plants, len(pool)))):
        with open(src, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        copy = edit(text, rng, rng.uniform(0.005, 0.06))
        dest = os.path.join(out, "planted", f"{i:05d}-{os.path.basename(src)}")
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "w", encoding="utf-8") as f:
            f.write(copy)
        total += len(copy.encode())
        a, b = shingles(text), shingles(copy)
        j = len(a & b) / len(a | b) if a | b else 0.0
        rows.append((src, dest, j))
    with open(os.path.join(os.path.dirname(out.rstrip("/")), "planted.tsv"), "w") as f:
        for a, b, j in rows:
            f.write(f"{a}\t{b}\t{j:.4f}\n")
    print(f"{out}: {len(chosen) + len(rows)} files, {total / 1e6:.1f} MB, "
          f"{len(rows)} planted near-duplicates", file=sys.stderr)


def rot(src, out, shift):
    lower = bytes(range(ord("a"), ord("z") + 1))
    upper = lower.upper()
    table = bytes.maketrans(lower + upper,
                            lower[shift:] + lower[:shift] + upper[shift:] + upper[:shift])
    for d, dirs, files in os.walk(src):
        dirs.sort()
        rel = os.path.relpath(d, src)
        os.makedirs(os.path.join(out, rel), exist_ok=True)
        for name in files:
            with open(os.path.join(d, name), "rb") as f:
                data = f.read()
            with open(os.path.join(out, rel, name), "wb") as f:
                f.write(data.translate(table))


def small(srcs, out, docs):
    """`docs` files of 50 to 600 bytes, cut at line ends from the text of `srcs` in turn, 1000
    per directory. Repeated chunks (boilerplate lines shared by many pages) are left out, so the
    number of near-duplicate pairs grows with the number of documents instead of exploding."""
    rng = random.Random(PLANT_SEED)
    seen = set()
    written = 0
    for src in srcs:
        for d, dirs, files in os.walk(src):
            dirs.sort()
            for name in sorted(files):
                with open(os.path.join(d, name), "rb") as f:
                    data = f.read()
                pos = 0
                while pos < len(data) and written < docs:
                    end = data.find(b"\n", pos + rng.randrange(50, 600))
                    end = len(data) if end < 0 else end + 1
                    chunk = data[pos:end]
                    pos = end
                    key = hashlib.sha1(chunk).digest()[:8]
                    if key in seen:
                        continue
                    seen.add(key)
                    if written % 1000 == 0:
                        os.makedirs(os.path.join(out, f"{written // 1000:04d}"), exist_ok=True)
                    path = os.path.join(out, f"{written // 1000:04d}", f"{written % 1000:03d}.txt")
                    with open(path, "wb") as f:
                        f.write(chunk)
                    written += 1
                if written >= docs:
                    print(f"{out}: {written} small files", file=sys.stderr)
                    return
    print(f"{out}: only {written} small files (not enough text)", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("base")
    b.add_argument("out")
    b.add_argument("--mb", type=int, default=200)
    b.add_argument("--plants", type=int, default=1000)
    r = sub.add_parser("rot")
    r.add_argument("src")
    r.add_argument("out")
    r.add_argument("--shift", type=int, required=True)
    s = sub.add_parser("small")
    s.add_argument("src", nargs="+")
    s.add_argument("--docs", type=int, default=1_000_000)
    a = ap.parse_args()
    if a.cmd == "base":
        base(a.out, a.mb, a.plants)
    elif a.cmd == "rot":
        rot(a.src, a.out, a.shift % 26)
    else:
        small(a.src[:-1], a.src[-1], a.docs)


if __name__ == "__main__":
    main()
