#!/usr/bin/env python3
"""Prints the comparison table of benches/compare.sh from the files in its results directory.

    table.py RESULTS_DIR PLANTED_TSV CORPUS_BYTES

For each tool, RESULTS_DIR holds `TOOL.N.time` (GNU time -v output of run N), `TOOL.pairs.tsv`
(the pairs found, two paths per line) or `ndup.jsonl`, `TOOL.status` (`ok` or why it did not
run), and optionally `kernel-*.json`, `scale-*.time` and `pairs/{signature,exact}.N.time` (pair N
of the runs that measure exact mode's cost). The best (lowest wall time) of the runs is reported.
Planted recall counts the planted near-duplicates of exact Jaccard >= 0.85 found.
"""

import glob
import json
import os
import re
import statistics
import sys

TOOLS = ["ndup", "ndup-exact", "rensa", "gaoya", "datasketch"]


def parse_time(path):
    t = open(path).read()

    def grab(label):
        m = re.search(re.escape(label) + r":\s*(.+)", t)
        return m.group(1).strip() if m else None

    wall = grab("Elapsed (wall clock) time (h:mm:ss or m:ss)")
    secs = 0.0
    for part in wall.split(":"):
        secs = secs * 60 + float(part)
    return {
        "wall": secs,
        "cpu": float(grab("User time (seconds)")) + float(grab("System time (seconds)")),
        "rss_mb": int(grab("Maximum resident set size (kbytes)")) / 1024,
        "exit": int(grab("Exit status") or 0),
    }


def best_run(results, tool):
    runs = [parse_time(p) for p in sorted(glob.glob(os.path.join(results, f"{tool}.*.time")))]
    runs = [r for r in runs if r["exit"] == 0]
    return min(runs, key=lambda r: r["wall"]) if runs else None


def exact_cost(results):
    """The ratios exact / signature of each pair of runs in `results/pairs`, wall and CPU."""
    ratios = {"wall": [], "cpu": []}
    for sig_path in glob.glob(os.path.join(results, "pairs", "signature.*.time")):
        exact_path = os.path.join(os.path.dirname(sig_path),
                                  "exact." + os.path.basename(sig_path)[len("signature."):])
        if not os.path.exists(exact_path):
            continue
        sig, exact = parse_time(sig_path), parse_time(exact_path)
        if sig["exit"] != 0 or exact["exit"] != 0:
            continue
        for key in ratios:
            if sig[key] > 0:
                ratios[key].append(exact[key] / sig[key])
    return ratios


def summary(values):
    """Median, quartiles and range of `values`, as printed."""
    v = sorted(values)
    if len(v) < 2:
        return f"{v[0]:.2f}"
    q1, med, q3 = statistics.quantiles(v, n=4, method="inclusive")
    return f"median **{med:.2f}** (quartiles {q1:.2f}-{q3:.2f}, range {v[0]:.2f}-{v[-1]:.2f})"


def pairs_of(results, tool):
    if tool.startswith("ndup"):
        path = os.path.join(results, f"{tool}.jsonl")
        if not os.path.exists(path):
            return None
        out = set()
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                if r.get("type") == "pair":
                    out.add(tuple(sorted((r["a"], r["b"]))))
        return out
    path = os.path.join(results, f"{tool}.pairs.tsv")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return {tuple(sorted(line.rstrip("\n").split("\t"))) for line in f if line.strip()}


def main():
    results, planted_tsv, corpus_bytes = sys.argv[1], sys.argv[2], int(sys.argv[3])
    planted = []
    with open(planted_tsv) as f:
        for line in f:
            a, b, j = line.rstrip("\n").split("\t")
            if float(j) >= 0.85:
                planted.append(tuple(sorted((a, b))))
    rows = {}
    for tool in TOOLS:
        status_path = os.path.join(results, f"{tool}.status")
        if not os.path.exists(status_path):
            continue
        status = open(status_path).read().strip()
        run = best_run(results, tool) if status == "ok" else None
        if run is None:
            rows[tool] = {"status": status if status != "ok" else "failed (see its .err file)"}
            continue
        pairs = pairs_of(results, tool) or set()
        # Paths in the corpus are relative to the same directory for every tool.
        found = sum(1 for p in planted if p in pairs)
        rows[tool] = dict(run, pairs=len(pairs), recall=found / len(planted) if planted else 0.0,
                          status="ok")
    base = rows.get("ndup")
    mb = corpus_bytes / 1e6
    print(f"Corpus: {mb:.1f} MB; ratios are peer / ndup (higher = ndup better), "
          f"planted recall over {len(planted)} planted near-duplicates with Jaccard >= 0.85.\n")
    print("| tool | wall x | CPU x | peak RSS x | wall s | CPU s | peak RSS MB | MB/s | pairs | planted recall |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for tool, r in rows.items():
        if r["status"] != "ok":
            print(f"| {tool} | - | - | - | - | - | - | - | - | {r['status']} |")
            continue
        # Two decimals below 10, so that a ratio near a target (exact mode's 2x) is not rounded onto it.
        def ratio(key):
            if not base or base[key] <= 0:
                return "-"
            x = r[key] / base[key]
            return f"{x:.2f}" if x < 10 else f"{x:.1f}"
        print(f"| {tool} | {ratio('wall')} | {ratio('cpu')} | {ratio('rss_mb')} | "
              f"{r['wall']:.2f} | {r['cpu']:.2f} | {r['rss_mb']:.0f} | {mb / r['wall']:.0f} | "
              f"{r['pairs']} | {r['recall']:.3f} |")
    cost = exact_cost(results)
    if cost["wall"]:
        print(f"\n`--verify exact` / `--verify signature` over {len(cost['wall'])} pairs of runs, "
              f"each pair run back to back: wall {summary(cost['wall'])}; "
              f"CPU {summary(cost['cpu'])}.")
    kernels = []
    for p in sorted(glob.glob(os.path.join(results, "kernel-*.json"))):
        with open(p) as f:
            for line in f:
                if line.strip().startswith("{"):
                    kernels.append(json.loads(line))
    if kernels:
        ref = next((k for k in kernels if k["tool"] == "ndup-fss"), None)
        print(f"\nKernel, one thread, 128 slots, the same {kernels[0]['tokens']:,} 64-bit token "
              f"hashes of {kernels[0]['documents']:,} documents (best of the runs):\n")
        print("| kernel | tokens/s (millions) | ndup-fss speed / this |")
        print("| --- | ---: | ---: |")
        for k in kernels:
            x = f"{ref['tokens_per_s'] / k['tokens_per_s']:.2f}" if ref else "-"
            print(f"| {k['tool']} | {k['tokens_per_s'] / 1e6:.0f} | {x} |")
    def scale_key(path):
        name = os.path.basename(path)[len("scale-"):-len(".time")]
        number = int(re.sub(r"\D", "", name) or 0)
        return (name.startswith("small"), number)

    scale = sorted(glob.glob(os.path.join(results, "scale-*.time")), key=scale_key)
    if scale:
        print("\nScaling (ndup only, same parameters):\n")
        print("| corpus | documents | MB | wall s | CPU s | MB/s | CPU µs/document | peak RSS MB | pairs |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for p in scale:
            name = os.path.basename(p)[len("scale-"):-len(".time")]
            r = parse_time(p)
            meta = json.load(open(p[:-len(".time")] + ".json"))
            print(f"| {name} | {meta['documents']:,} | {meta['bytes'] / 1e6:.0f} | {r['wall']:.2f} | "
                  f"{r['cpu']:.2f} | {meta['bytes'] / 1e6 / r['wall']:.0f} | "
                  f"{r['cpu'] * 1e6 / meta['documents']:.1f} | {r['rss_mb']:.0f} | "
                  f"{meta['pairs']:,} |")


if __name__ == "__main__":
    main()
