#!/usr/bin/env bash
# ndup against the Python near-duplicate libraries, side by side, on one machine, in one run.
#
#   benches/compare.sh                 # corpus, peers, kernel: one table (about ten minutes)
#   benches/compare.sh --scale         # also ndup alone on 1x, 2x, 4x, 8x the corpus
#   benches/compare.sh --small 1000000 # also ndup alone on a million small files
#   benches/compare.sh --runs 3        # best of three runs for every tool
#   benches/compare.sh --no-peers      # ndup and the kernel only
#   benches/compare.sh --mb 300        # a bigger base corpus (default 200 MB)
#   benches/compare.sh --exact-pairs 21 # pairs of runs that measure --verify exact (default 11)
#
# Everything generated goes to $NDUP_BENCH_DIR (default: ~/.cache/ndup-bench): the corpus, built
# once from the text already on a Debian machine (/usr/share/doc with its .gz files decompressed,
# /usr/share/common-licenses, the man pages' source) plus planted near-duplicates; a Python venv
# with rensa, gaoya and datasketch from pip; and results/, with every tool's output and timings.
# Delete the directory to start afresh. Needs: cargo, python3 with venv, /usr/bin/time (installed
# with apt-get when missing).
#
# Every tool gets the same job: read every file, NFKC + lowercase + collapse white space, char
# 9-shingles, 128 hash functions, LSH with 16 bands x 8 rows, candidate pairs verified by signature
# estimate >= 0.8, both cores. ndup runs as
#   ndup scan corpus-1x --num-perm 128 --bands 16 --rows 8 --verify signature -k 9
# and once more with --verify exact, to show what exact verification costs. That cost is also
# measured pair by pair: --exact-pairs times, one signature run and then one exact run, and the
# median of the pairs' ratios is reported with its quartiles. Why: this machine's speed drifts by
# a third within minutes, and a ratio of two best-of-three figures moved from 1.93 to 2.18 across
# three runs of the script in one morning. The median of many adjacent pairs moves far less.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${NDUP_BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ndup-bench}
MB=200
RUNS=1
SCALE=0
SMALL=0
PEERS=1
EXACT_PAIRS=11
while [ $# -gt 0 ]; do
    case "$1" in
        --mb) MB=$2; shift 2 ;;
        --runs) RUNS=$2; shift 2 ;;
        --scale) SCALE=1; shift ;;
        --small) SMALL=$2; shift 2 ;;
        --no-peers) PEERS=0; shift ;;
        --exact-pairs) EXACT_PAIRS=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "compare.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done

say() { printf '\n== %s\n' "$*" >&2; }
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

# --- tools -------------------------------------------------------------------------------------
if [ ! -x /usr/bin/time ]; then
    say "installing GNU time (apt-get install time)"
    apt-get update -qq && apt-get install -y -qq time >/dev/null
fi
TIME=/usr/bin/time
PY=python3

say "building ndup (release)"
(cd "$ROOT" && cargo build --release --quiet --bin ndup --example kernel)
NDUP="$ROOT/target/release/ndup"
KERNEL="$ROOT/target/release/examples/kernel"

mkdir -p "$DIR"
cd "$DIR"

# --- corpus ------------------------------------------------------------------------------------
if [ ! -f "corpus-1x.done" ] || [ "$(cat corpus-1x.done)" != "$MB" ]; then
    say "building the ${MB} MB corpus in $DIR/corpus-1x"
    rm -rf corpus-1x corpus-1x.done
    $PY "$ROOT/benches/compare/make_corpus.py" base corpus-1x --mb "$MB"
    echo "$MB" > corpus-1x.done
fi
BYTES=$(find corpus-1x -type f -printf '%s\n' | awk '{s += $1} END {print s}')
if [ "$BYTES" -lt 150000000 ]; then
    echo "compare.sh: only $BYTES bytes of text found; the comparison needs at least 150 MB" >&2
    exit 1
fi

# --- peers' venv -------------------------------------------------------------------------------
declare -A PEER_OK
if [ "$PEERS" = 1 ]; then
    if [ ! -x venv/bin/python ]; then
        say "creating the Python venv"
        $PY -m venv venv
        venv/bin/pip install -q --upgrade pip >/dev/null 2>&1 || true
    fi
    venv/bin/pip install -q numpy >/dev/null 2>&1 || true
    for p in rensa gaoya datasketch; do
        if venv/bin/python -c "import $p" 2>/dev/null || venv/bin/pip install -q "$p" >"pip-$p.log" 2>&1; then
            PEER_OK[$p]=ok
        else
            PEER_OK[$p]="did not install on $($PY -V 2>&1) (see $DIR/pip-$p.log)"
        fi
    done
fi

rm -rf results
mkdir -p results
R=results

# Before every timed run, not once: this VM's page cache is reclaimed within seconds to minutes
# (measured: buff/cache 838 -> 722 MB in 20 s, and reading the corpus again took 1.04 s instead of
# 0.46), so a tool that ran minutes after one warm-up would pay for reading from disk as well.
warm() { find "$@" -type f -print0 | xargs -0 cat > /dev/null; }

# --- runs --------------------------------------------------------------------------------------
ndup_args=(--num-perm 128 --bands 16 --rows 8 -k 9)
for i in $(seq "$RUNS"); do
    say "ndup run $i"
    warm corpus-1x
    $TIME -v -o "$R/ndup.$i.time" "$NDUP" scan corpus-1x "${ndup_args[@]}" --verify signature \
        > "$R/ndup.jsonl" 2> "$R/ndup.err"
    cat "$R/ndup.err" >&2
    say "ndup --verify exact run $i"
    warm corpus-1x
    $TIME -v -o "$R/ndup-exact.$i.time" "$NDUP" scan corpus-1x "${ndup_args[@]}" --verify exact \
        > "$R/ndup-exact.jsonl" 2> "$R/ndup-exact.err"
    cat "$R/ndup-exact.err" >&2
done
echo ok > "$R/ndup.status"
echo ok > "$R/ndup-exact.status"

# Exact mode's cost, pair by pair (kept out of the best-of runs above, so that ndup's row is the
# best of as many runs as every peer's).
if [ "$EXACT_PAIRS" -gt 0 ]; then
    mkdir -p "$R/pairs"
    for i in $(seq "$EXACT_PAIRS"); do
        say "exact mode's cost: pair $i of $EXACT_PAIRS"
        for mode in signature exact; do
            warm corpus-1x
            $TIME -v -o "$R/pairs/$mode.$i.time" "$NDUP" scan corpus-1x "${ndup_args[@]}" \
                --verify "$mode" > /dev/null 2> "$R/pairs/$mode.err"
        done
    done
fi

if [ "$PEERS" = 1 ]; then
    for p in rensa gaoya datasketch; do
        if [ "${PEER_OK[$p]:-}" != ok ]; then
            echo "${PEER_OK[$p]}" > "$R/$p.status"
            continue
        fi
        for i in $(seq "$RUNS"); do
            say "$p run $i"
            warm corpus-1x
            if $TIME -v -o "$R/$p.$i.time" venv/bin/python "$ROOT/benches/compare/peers.py" "$p" \
                "$R/$p.pairs.tsv" corpus-1x --workers "$(nproc)" > "$R/$p.json" 2> "$R/$p.err"; then
                echo ok > "$R/$p.status"
            else
                echo "failed (see $DIR/$R/$p.err)" > "$R/$p.status"
                tail -3 "$R/$p.err" >&2
                break
            fi
        done
    done
fi

# --- kernel ------------------------------------------------------------------------------------
say "kernel: the same token arrays signed by ndup and by rensa, one thread"
"$KERNEL" dump tokens corpus-1x --max-tokens 50000000
# Best of 15 runs each: the runs are short, and the best is the least disturbed by other work.
"$KERNEL" sign tokens --sketch fss --repeat 15 > "$R/kernel-1-ndup-fss.json"
"$KERNEL" sign tokens --sketch oph --repeat 15 > "$R/kernel-2-ndup-oph.json"
if [ "$PEERS" = 1 ] && [ "${PEER_OK[rensa]:-}" = ok ]; then
    RAYON_NUM_THREADS=1 venv/bin/python "$ROOT/benches/compare/kernel_rensa.py" tokens \
        --repeat 15 > "$R/kernel-3-rensa.json"
fi
# The seeds' k-permutation MinHash, O(tokens x slots): fewer runs, each is longer.
"$KERNEL" sign tokens --sketch classic --repeat 5 > "$R/kernel-4-ndup-classic.json"
rm -f tokens.tokens tokens.offsets

# --- scaling -----------------------------------------------------------------------------------
scale_run() { # NAME PATH...
    local name=$1; shift
    say "scaling: $name"
    warm "$@"
    $TIME -v -o "$R/scale-$name.time" "$NDUP" scan "$@" "${ndup_args[@]}" --verify signature \
        > "$R/scale-$name.jsonl" 2> "$R/scale-$name.err"
    cat "$R/scale-$name.err" >&2
    tail -1 "$R/scale-$name.jsonl" > "$R/scale-$name.json"
    rm -f "$R/scale-$name.jsonl"
}
if [ "$SCALE" = 1 ]; then
    for s in 1 2 3 4 5 6 7; do
        if [ ! -d "corpus-rot$s" ]; then
            say "making corpus-rot$s (letters rotated by $s)"
            $PY "$ROOT/benches/compare/make_corpus.py" rot corpus-1x "corpus-rot$s" --shift "$s"
        fi
    done
    scale_run 1x corpus-1x
    scale_run 2x corpus-1x corpus-rot1
    scale_run 4x corpus-1x corpus-rot1 corpus-rot2 corpus-rot3
    scale_run 8x corpus-1x corpus-rot{1,2,3,4,5,6,7}
fi
if [ "$SMALL" -gt 0 ]; then
    if [ ! -f "small-$SMALL.done" ]; then
        for s in 1 2 3; do # the text of the rotated copies too, for a million distinct files
            if [ ! -d "corpus-rot$s" ]; then
                $PY "$ROOT/benches/compare/make_corpus.py" rot corpus-1x "corpus-rot$s" --shift "$s"
            fi
        done
        say "making $SMALL small files"
        rm -rf "small-$SMALL"
        $PY "$ROOT/benches/compare/make_corpus.py" small corpus-1x corpus-rot1 corpus-rot2 \
            corpus-rot3 "small-$SMALL" --docs "$SMALL"
        touch "small-$SMALL.done"
    fi
    # An eighth, a quarter, a half and all of the small files (1,000 per directory).
    mapfile -t all_dirs < <(find "small-$SMALL" -mindepth 1 -maxdepth 1 -type d | sort)
    for part in 8 4 2 1; do
        n=$((SMALL / part))
        scale_run "small-$n" "${all_dirs[@]:0:$(((n + 999) / 1000))}"
    done
fi

# --- table -------------------------------------------------------------------------------------
say "results ($DIR/$R)"
{
    echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(free -g | awk '/Mem:/ {print $2}') GiB RAM"
    echo "Peers: $(venv/bin/pip list 2>/dev/null | grep -Ei '^(rensa|gaoya|datasketch) ' | awk '{printf "%s %s, ", $1, $2}' | sed 's/, $//'); $($PY -V 2>&1)"
    echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC'); load average (1, 5, 15 min) before: $LOAD_BEFORE, after: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo
    $PY "$ROOT/benches/compare/table.py" "$R" planted.tsv "$BYTES"
} | tee "$R/table.md"
