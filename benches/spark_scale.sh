#!/usr/bin/env bash
# One million generated documents on this machine: ndup on one machine against `ndup sign` +
# the Spark job (spark/ndup_spark.py) in local mode. Prints a Markdown table (time per stage,
# shuffle bytes per document) and leaves everything under target/spark-bench/.
#
#   bash benches/spark_scale.sh              # 1,000,000 documents, local[2]
#   DOCS=200000 CORES=2 bash benches/spark_scale.sh
#
# Needs the venv of spark/ci.sh (target/spark-venv) and a release build of ndup (built here
# when missing). Takes about 15 minutes on 2 cores for a million documents, and 4 GB of disk.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
docs="${DOCS:-1000000}"
shards="${SHARDS:-8}"
cores="${CORES:-2}"
work="$root/target/spark-bench"
py="$root/target/spark-venv/bin/python"
ndup="$root/target/release/ndup"
[ -x "$py" ] || { echo "run bash spark/ci.sh first (it makes target/spark-venv)" >&2; exit 2; }
[ -x "$ndup" ] || cargo build --release --quiet --bin ndup --manifest-path "$root/Cargo.toml"
export SPARK_LOCAL_IP=127.0.0.1 PYSPARK_PYTHON="$py"

mkdir -p "$work"
cd "$work"
corpus="corpus-$docs"
if [ ! -f "$corpus/.done" ]; then
    rm -rf "$corpus"
    "$py" "$root/spark/gen_corpus.py" --docs "$docs" --shards "$shards" --seed 1 \
        --boilerplate 500 --jsonl "$corpus" >/dev/null
    touch "$corpus/.done"
fi
inputs=("$corpus"/shard-*.jsonl)
bytes=$(cat "${inputs[@]}" | wc -c)

# time_it NAME CMD...: wall seconds and peak memory of CMD, into times.tsv.
: > times.tsv
time_it() {
    local name="$1"; shift
    /usr/bin/time -f "%e %M" -o time.out "$@"
    read -r secs kb < time.out
    printf '%s\t%s\t%s\n' "$name" "$secs" "$kb" >> times.tsv
    echo "$name: ${secs} s, peak RSS $((kb / 1024)) MB" >&2
}

common=(--verify signature -q -j "$cores")
time_it "ndup scan --clusters" "$ndup" scan "${inputs[@]}" "${common[@]}" --clusters -o scan.jsonl
time_it "ndup dedup" "$ndup" dedup "${inputs[@]}" "${common[@]}" -o dedup.jsonl
rm -rf sign
time_it "ndup sign" "$ndup" sign "${inputs[@]}" -q -j "$cores" --out sign
time_it "ndup scan --signatures" "$ndup" scan --signatures sign "${common[@]}" --clusters \
    -o scan-signatures.jsonl

for mode in full dedup; do
    rm -rf "spark-$mode"
    time_it "spark --mode $mode" "$py" "$root/spark/ndup_spark.py" "${inputs[@]}" \
        --ndup "$ndup" --out "spark-$mode" --mode "$mode" --master "local[$cores]" \
        --shuffle-partitions 16 --conf spark.driver.memory=8g --quiet
done

"$py" - "$docs" "$bytes" "$cores" <<'EOF'
import json, sys
docs, size, cores = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
times = {}
for line in open("times.tsv"):
    name, secs, kb = line.rstrip("\n").split("\t")
    times[name] = (float(secs), int(kb))
print(f"\n{docs:,} documents, {size / 1e6:,.0f} MB of JSON lines, {cores} cores\n")
print("| run | seconds | docs/s | docs/s/core | peak RSS MB |")
print("| --- | ---: | ---: | ---: | ---: |")
for name, (secs, kb) in times.items():
    print(f"| {name} | {secs:.1f} | {docs / secs:,.0f} | {docs / secs / cores:,.0f} | {kb / 1024:,.0f} |")
for mode in ("full", "dedup"):
    m = json.load(open(f"spark-{mode}/metrics.json"))
    print(f"\nSpark --mode {mode}: {m['seconds']:.1f} s in the job "
          f"(JVM start and the ndup probe excluded), counts {json.dumps(m['counts'])}\n")
    print("| stage | seconds | executor CPU s | shuffle written | bytes/doc |")
    print("| --- | ---: | ---: | ---: | ---: |")
    tot = 0
    for st in m["stages"]:
        w = st.get("shuffle_write_bytes", 0)
        tot += w
        print(f"| {st['stage']} | {st['seconds']:.1f} | {st.get('executor_cpu_seconds', 0):.1f} "
              f"| {w / 1e6:,.1f} MB | {w / docs:,.0f} |")
    print(f"| total | {sum(s['seconds'] for s in m['stages']):.1f} | "
          f"{sum(s.get('executor_cpu_seconds', 0) for s in m['stages']):.1f} | "
          f"{tot / 1e6:,.1f} MB | {tot / docs:,.0f} |")

# The same answers: pair and cluster counts of ndup scan, kept count of ndup dedup.
summary = [json.loads(l) for l in open("scan.jsonl") if '"type":"summary"' in l][-1]
full = json.load(open("spark-full/metrics.json"))["counts"]
kept = sum(1 for _ in open("dedup.jsonl"))
print(f"\nndup scan: {summary['pairs']} pairs, {summary['clusters']} clusters; "
      f"ndup dedup kept {kept}; Spark: {full['pairs']} pairs, kept {full['kept']}")
assert summary["pairs"] == full["pairs"] and kept == full["kept"], "results differ"
EOF
