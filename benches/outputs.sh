#!/usr/bin/env bash
# ndup's outputs on a fixed matrix of commands, to check that a refactor leaves them byte-identical.
#
#   benches/outputs.sh BIN OUTDIR                   # run the matrix with BIN, write OUTDIR
#   benches/outputs.sh --compare BIN_OLD BIN_NEW    # run both, print `diff -r` (exit 1 on any
#                                                   # difference) or "N outputs, all identical"
#
# Two OUTDIRs compare with `diff -r OUT1 OUT2`. For every command NAME, OUTDIR holds NAME.out (its
# standard output), NAME.code (its exit status) and NAME.err (its standard error, with timings
# such as "in 0.01 s" replaced by "in <T>"); NAME.file holds the report a command wrote with -o.
# Files starting with _ describe the run: _commands.txt (NAME and command line of every output),
# _corpus.sha256 (the corpora's bytes) and _threads.txt (whether every -j 1 output equals its
# -j 2 twin; they must, and a difference is also reported on stderr).
#
# Corpora, built afresh in a temp dir each run (deterministically; never in the repo):
#   docs/             a copy of examples/docs
#   gen/, gen.jsonl   about 3,000 generated documents with planted near-duplicates, exact copies,
#   gen.jsonl.gz      quotations (containment), short, empty, binary and non-ASCII files, as a
#                     file tree and as JSON lines (see benches/outputs/make_corpus.py)
# Commands run from that dir with relative paths, so no output names the temp dir (any that does
# has it replaced by <WORK>). Index commands use index files there and report on stdout only.
#
# Environment: NDUP_OUTPUTS_KEEP=1 keeps the temp dir (its path is printed). Needs python3.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
ME="$HERE/$(basename "$0")"
export LC_ALL=C
# clap wraps --help to the terminal's width: pin it. Colour is only used on a terminal anyway.
export COLUMNS=100
unset CLICOLOR_FORCE FORCE_COLOR RAYON_NUM_THREADS

die() { echo "outputs.sh: $*" >&2; exit 2; }
usage() { sed -n '2,/^set -euo/p' "$ME" | sed '$d; s/^# \{0,1\}//'; }

abs_bin() {
    local b=$1
    [ -f "$b" ] && [ -x "$b" ] || die "not an executable file: $b"
    echo "$(cd "$(dirname "$b")" && pwd)/$(basename "$b")"
}

# --- compare mode ------------------------------------------------------------------------------
if [ "${1:-}" = "--compare" ]; then
    [ $# -eq 3 ] || die "usage: outputs.sh --compare BIN_OLD BIN_NEW"
    OLD=$(abs_bin "$2")
    NEW=$(abs_bin "$3")
    CMP=$(mktemp -d "${TMPDIR:-/tmp}/ndup-outputs-compare.XXXXXX")
    "$ME" "$OLD" "$CMP/old"
    "$ME" "$NEW" "$CMP/new"
    n=$(find "$CMP/old" -name '*.code' | wc -l)
    if diff -r "$CMP/old" "$CMP/new"; then
        rm -rf "$CMP"
        echo "$n outputs, all identical"
        exit 0
    fi
    names=$({ diff -rq "$CMP/old" "$CMP/new" || true; } | sed -E \
        -e "s#^Files $CMP/old/([^ ]*) and .*#\\1#" -e "s#^Only in $CMP/(old|new): (.*)#\\2 (only \\1)#" \
        | sed -E 's/\.(out|err|code|file)( |$)/\2/' | sort -u)
    m=$(printf '%s\n' "$names" | grep -c . || true)
    echo
    echo "$n outputs, $m differ: $(printf '%s\n' "$names" | tr '\n' ' ')"
    echo "(kept: $CMP/old and $CMP/new)"
    exit 1
fi

case "${1:-}" in -h|--help) usage; exit 0 ;; esac
[ $# -eq 2 ] || { usage >&2; exit 2; }
BIN=$(abs_bin "$1")
OUT=$2
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
[ -z "$(ls -A "$OUT")" ] || die "$OUT is not empty"

START=$(date +%s%N)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ndup-outputs.XXXXXX")
if [ "${NDUP_OUTPUTS_KEEP:-}" = 1 ]; then
    echo "outputs.sh: keeping $WORK" >&2
else
    trap 'rm -rf "$WORK"' EXIT
fi
WORK_RE=$(printf '%s' "$WORK" | sed 's/[][\.*^$|/]/\\&/g')

# --- corpora -----------------------------------------------------------------------------------
cd "$WORK"
cp -R "$ROOT/examples/docs" docs
python3 "$HERE/outputs/make_corpus.py" .
# Fixed times: nothing then depends on when the corpus was written (the index compares them).
find . -exec touch -h -d @1600000000 {} +
find docs gen gen.jsonl gen.jsonl.gz planted.tsv -type f -print0 | sort -z | xargs -0 sha256sum \
    >"$OUT/_corpus.sha256"

# The planted pair of a kind (the first), as "A B".
planted() { awk -F'\t' -v k="$1" '$1 == k { print $2; print $3; exit }' planted.tsv; }

# --- running one command -----------------------------------------------------------------------
declare -A SEEN=()
N=0
# run NAME [< FILE] ARGS...: `BIN ARGS` with stdin FILE (default /dev/null).
run() {
    local name=$1 stdin=/dev/null code=0
    shift
    if [ "${1:-}" = "<" ]; then stdin=$2; shift 2; fi
    [ -z "${SEEN[$name]:-}" ] || die "duplicate output name $name"
    SEEN[$name]=1
    N=$((N + 1))
    { printf '%s\tndup' "$name"; printf ' %q' "$@"
      [ "$stdin" = /dev/null ] || printf ' < %q' "$stdin"; printf '\n'; } >>"$OUT/_commands.txt"
    "$BIN" "$@" <"$stdin" >"$OUT/$name.out" 2>"$OUT/$name.err" || code=$?
    echo "$code" >"$OUT/$name.code"
    sed -i -e "s/$WORK_RE/<WORK>/g" "$OUT/$name.out"
    sed -i -E -e "s/$WORK_RE/<WORK>/g" \
        -e 's/ in [0-9]+([.,][0-9]+)? ?(s|ms|us|µs|ns|secs?|seconds?)\b/ in <T>/g' \
        -e 's/(elapsed[^0-9]*)[0-9]+([.,][0-9]+)? ?(s|ms|us|µs|ns)?/\1<T>/g' "$OUT/$name.err"
}
# run_o NAME FILE ARGS...: run, then keep the report written to FILE as NAME.file.
run_o() {
    local name=$1 file=$2
    shift 2
    run "$name" "$@"
    if [ -f "$file" ]; then
        case "$file" in
            *.gz) gzip -dc "$file" >"$OUT/$name.file" ;;
            *) cp "$file" "$OUT/$name.file" ;;
        esac
        sed -i -e "s/$WORK_RE/<WORK>/g" "$OUT/$name.file"
    else
        echo "(no file written)" >"$OUT/$name.file"
    fi
}

# --- help --------------------------------------------------------------------------------------
run help --help
for c in scan dedup index query compare tune; do run "help-$c" "$c" --help; done
for c in build add remove update; do run "help-index-$c" index "$c" --help; done

# --- scan on the file trees --------------------------------------------------------------------
for C in docs gen; do
    run "scan-$C" scan -q "$C"
    for f in jsonl text csv sarif github; do
        run "scan-$C-format-$f" scan -q --format "$f" "$C"
        run "scan-$C-clusters-$f" scan -q --clusters --format "$f" "$C"
    done
    for v in auto signature exact none; do run "scan-$C-verify-$v" scan -q --verify "$v" "$C"; done
    for s in fss oph classic modulo supershingle; do
        run "scan-$C-sketch-$s" scan -q --sketch "$s" "$C"
    done
    run "scan-$C-sketch-supershingle-m8-s3" scan -q --sketch supershingle --modulo 8 \
        --supershingle-size 3 "$C"
    run "scan-$C-containment" scan -q --containment "$C"
    run "scan-$C-containment-text" scan -q --containment --format text "$C"
    run "scan-$C-containment-clusters" scan -q --containment --clusters "$C"
    run "scan-$C-containment-t0.5" scan -q --containment -t 0.5 "$C"
    run "scan-$C-exact" scan -q --exact "$C"
    run "scan-$C-exact-text" scan -q --exact --format text "$C"
    run "scan-$C-exact-clusters" scan -q --exact --clusters "$C"
    run "scan-$C-exact-t0.5" scan -q --exact -t 0.5 "$C"
    run "scan-$C-exact-containment" scan -q --exact --containment "$C"
    run "scan-$C-exact-containment-t0.5" scan -q --exact --containment -t 0.5 "$C"
    run "scan-$C-shingle-word" scan -q --shingle word "$C"
    run "scan-$C-shingle-word-w3" scan -q --shingle word -w 3 "$C"
    run "scan-$C-shingle-stopword" scan -q --shingle stopword "$C"
    run "scan-$C-k5" scan -q -k 5 "$C"
    run "scan-$C-no-normalize" scan -q --no-nfkc --no-lowercase --no-collapse-whitespace \
        --no-trim "$C"
    run "scan-$C-numperm64-b16-r4" scan -q --num-perm 64 -b 16 -r 4 "$C"
    run "scan-$C-numperm64-b8-r8" scan -q --num-perm 64 -b 8 -r 8 "$C"
    run "scan-$C-b20-r5" scan -q -b 20 -r 5 "$C"
    run "scan-$C-numperm64" scan -q --num-perm 64 "$C"
    run "scan-$C-seed7" scan -q --seed 7 "$C"
    run "scan-$C-t0.5" scan -q -t 0.5 "$C"
    run "scan-$C-t0.9" scan -q -t 0.9 "$C"
    run "scan-$C-t0.9-text" scan -q -t 0.9 --format text "$C"
    run "scan-$C-max-bucket2" scan -q --max-bucket 2 "$C"
    run "scan-$C-fail-on-duplicates" scan -q --fail-on-duplicates "$C"
    run "scan-$C-max-pairs1" scan -q --max-pairs 1 "$C"
    run "scan-$C-glob-md" scan -q --glob '*.md' "$C"
    run "scan-$C-exclude" scan -q --exclude 'archive/**' --exclude 'd1*/**' "$C"
    run "scan-$C-max-filesize" scan -q --max-filesize 1K "$C"
    run_o "scan-$C-output" "report-$C.txt" scan -q --format text -o "report-$C.txt" "$C"
    run_o "scan-$C-write-baseline" "baseline-$C.json" scan -q -t 0.9 \
        --write-baseline "baseline-$C.json" "$C"
    run "scan-$C-baseline" scan -q -t 0.8 --baseline "baseline-$C.json" "$C"
    for j in 1 2; do
        run "scan-$C-j$j" scan -q -j "$j" "$C"
        run "scan-$C-clusters-j$j" scan -q -j "$j" --clusters "$C"
        run "scan-$C-verify-exact-j$j" scan -q -j "$j" --verify exact "$C"
        run "scan-$C-sketch-classic-j$j" scan -q -j "$j" --sketch classic "$C"
        run "scan-$C-containment-j$j" scan -q -j "$j" --containment "$C"
        run "scan-$C-exact-j$j" scan -q -j "$j" --exact "$C"
        run "scan-$C-exact-containment-j$j" scan -q -j "$j" --exact --containment "$C"
        run "scan-$C-global-j$j" -j "$j" scan -q "$C"
    done
done
# Several roots, single files, a list of files.
run scan-files-docs-gen scan -q docs gen/quotes gen/unicode
run scan-single-files scan -q --format text docs/install.md docs/archive/install-v1.md \
    $(planted near)
find gen/quotes gen/d00 -type f | sort >list.txt
run scan-files-from scan -q --files-from list.txt
find gen/quotes gen/d00 -type f -print0 | sort -z >list0.txt
run scan-files-from-stdin-null "<" list0.txt scan -q --files-from - -0
# Options from a configuration file, named or found in the scanned tree.
printf 'threshold = 0.6\nformat = "text"\n[scan]\nclusters = true\n' >ndup-outputs.toml
run scan-docs-config scan -q --config ndup-outputs.toml docs
run scan-docs-config-override scan -q --config ndup-outputs.toml --format csv docs
cp -R docs docs-cfg
printf 'threshold = 0.6\nformat = "csv"\n' >docs-cfg/ndup.toml
printf 'archive/* guide/*\n' >docs-cfg/.ndupignore
run scan-docs-containment-fss scan -q --containment --sketch fss docs
run scan-docs-found-config scan -q docs-cfg
run scan-docs-found-config-override scan -q --format jsonl docs-cfg

# --- scan on JSON lines ------------------------------------------------------------------------
run scan-jsonl scan -q gen.jsonl
for f in text csv sarif github; do run "scan-jsonl-format-$f" scan -q --format "$f" gen.jsonl; done
run scan-jsonl-clusters scan -q --clusters gen.jsonl
run scan-jsonl-clusters-text scan -q --clusters --format text gen.jsonl
run scan-jsonl-gz scan -q gen.jsonl.gz
run scan-jsonl-stdin "<" gen.jsonl scan -q -
run scan-jsonl-stdin-gz "<" gen.jsonl.gz scan -q -
cp gen.jsonl gen-jsonl.txt
run scan-jsonl-flag scan -q --jsonl gen-jsonl.txt
run scan-jsonl-id-field scan -q --id-field meta.id gen.jsonl
run scan-jsonl-id-field-text scan -q --id-field meta.id --format text gen.jsonl
run scan-jsonl-text-field scan -q --text-field meta.source gen.jsonl
run scan-jsonl-exact scan -q --exact gen.jsonl
run scan-jsonl-exact-containment scan -q --exact --containment gen.jsonl
run scan-jsonl-containment scan -q --containment gen.jsonl
run scan-jsonl-verify-exact scan -q --verify exact gen.jsonl
run scan-jsonl-sketch-oph scan -q --sketch oph gen.jsonl
run scan-jsonl-shingle-word scan -q --shingle word gen.jsonl
run scan-jsonl-t0.5 scan -q -t 0.5 gen.jsonl
run scan-jsonl-t0.9 scan -q -t 0.9 gen.jsonl
run scan-jsonl-two-files scan -q gen.jsonl gen.jsonl.gz
for j in 1 2; do
    run "scan-jsonl-j$j" scan -q -j "$j" gen.jsonl
    run "scan-jsonl-exact-j$j" scan -q -j "$j" --exact gen.jsonl
    run "scan-jsonl-clusters-j$j" scan -q -j "$j" --clusters gen.jsonl
done

# --- dedup -------------------------------------------------------------------------------------
for keep in first longest shortest; do
    run "dedup-docs-keep-$keep" dedup -q --keep "$keep" -o - docs
    run "dedup-gen-keep-$keep" dedup -q --keep "$keep" -o - gen
    run "dedup-jsonl-keep-$keep" dedup -q --keep "$keep" -o - gen.jsonl
done
run dedup-jsonl-gz dedup -q -o - gen.jsonl.gz
run dedup-jsonl-stdin "<" gen.jsonl dedup -q -o - -
run dedup-jsonl-id-field dedup -q --id-field meta.id -o - gen.jsonl
run dedup-jsonl-t0.5 dedup -q -t 0.5 -o - gen.jsonl
run dedup-jsonl-shingle-word dedup -q --shingle word -o - gen.jsonl
run dedup-jsonl-verify-exact dedup -q --verify exact -o - gen.jsonl
run dedup-gen-t0.5 dedup -q -t 0.5 -o - gen
run_o dedup-jsonl-output kept.jsonl dedup -q -o kept.jsonl gen.jsonl
run_o dedup-jsonl-output-gz kept.jsonl.gz dedup -q -o kept.jsonl.gz gen.jsonl
run_o dedup-gen-output kept-files.jsonl dedup -q -o kept-files.jsonl gen
for j in 1 2; do
    run "dedup-jsonl-j$j" dedup -q -j "$j" -o - gen.jsonl
    run "dedup-gen-j$j" dedup -q -j "$j" -o - gen
done

# --- index and query ---------------------------------------------------------------------------
# Each corpus is copied (the copy is then changed); the index files live in the work dir.
for C in docs gen; do
    I="ix-$C"
    DB="$C.ndup"
    cp -a "$C" "$I"
    if [ "$C" = docs ]; then
        Q=(docs/install.md docs/guide "$I/faq.md")
        EDIT1="$I/faq.md" NEW1="$I/new-one.md" EDIT2="$I/install.md" DEL2="$I/changelog.txt"
        NEW2="$I/guide/new-two.md" SRC="$I/getting-started.md"
    else
        Q=(gen/quotes gen/unicode gen/d00)
        first() { find "$1" -type f | sort | head -n 1; }
        EDIT1=$(first "$I/d01") NEW1="$I/new/new-one.txt" EDIT2=$(first "$I/d02")
        DEL2=$(first "$I/d03") NEW2="$I/new/new-two.txt" SRC="$I/quotes/quote-00.txt"
    fi
    run "index-$C-build" index build -q --index "$DB" "$I"
    run "index-$C-build-text" index build -q --format text --index "$DB" "$I"
    run "query-$C" query -q --index "$DB" "${Q[@]}"
    run "query-$C-text" query -q --format text --index "$DB" "${Q[@]}"
    run "query-$C-top1" query -q --top 1 --index "$DB" "${Q[@]}"
    run "query-$C-t0.5" query -q -t 0.5 --index "$DB" "${Q[@]}"
    run "query-$C-verify-exact" query -q --verify exact --index "$DB" "${Q[@]}"
    run "query-$C-verify-none-text" query -q --verify none --format text --index "$DB" "${Q[@]}"
    run "query-$C-stdin" "<" "$SRC" query -q --index "$DB" -
    run "query-$C-fail-on-duplicates" query -q --fail-on-duplicates --index "$DB" "${Q[@]}"
    # Change the copy: edit one file and add one, then `index add` them.
    mkdir -p "$(dirname "$NEW1")" "$(dirname "$NEW2")"
    printf '\nOne more paragraph, added after the index was built.\n' >>"$EDIT1"
    { cat "$SRC"; printf '\nA new document, nearly a copy.\n'; } >"$NEW1"
    touch -d @1600001000 "$EDIT1" "$NEW1"
    run "index-$C-add" index add -q --index "$DB" "$EDIT1" "$NEW1"
    run "index-$C-add-again-text" index add -q --format text --index "$DB" "$EDIT1" "$NEW1"
    # Change it again (edit, delete, add), then `index update` the whole copy.
    printf '\nAnd an edit seen by update.\n' >>"$EDIT2"
    rm "$DEL2"
    cp "$SRC" "$NEW2"
    touch -d @1600002000 "$EDIT2" "$NEW2" "$(dirname "$NEW2")"
    run "index-$C-update" index update -q --index "$DB" "$I"
    run "query-$C-after-update" query -q --index "$DB" "${Q[@]}" "$NEW2"
    run "index-$C-remove" index remove -q --index "$DB" "$NEW1"
    run "index-$C-remove-missing" index remove -q --index "$DB" "$EDIT1" "$I/no-such-document"
    run "index-$C-remove-text" index remove -q --format text --index "$DB" "$NEW2"
    run "index-$C-update-text" index update -q --format text --index "$DB" "$I"
    run "query-$C-final-text" query -q --format text --index "$DB" "${Q[@]}"
    for j in 1 2; do
        run "index-$C-build-j$j" index build -q -j "$j" --index "$C-j$j.ndup" "$I"
        run "query-$C-j$j" query -q -j "$j" --index "$C-j$j.ndup" "${Q[@]}"
    done
done
# The threads check compares outputs; the index file names differ.
sed -i 's/\(docs\|gen\)-j[12]\.ndup/\1-jN.ndup/g' "$OUT"/query-*-j[12].out

# --- compare -----------------------------------------------------------------------------------
# shellcheck disable=SC2046 # planted prints two paths without spaces
{
    run compare-docs compare docs/install.md docs/archive/install-v1.md
    run compare-docs-json compare --format json docs/install.md docs/archive/install-v1.md
    for kind in near exact contained partly-contained nfd fullwidth; do
        run "compare-$kind" compare $(planted "$kind")
        run "compare-$kind-json" compare --format json $(planted "$kind")
    done
    run compare-near-word compare --shingle word $(planted near)
    run compare-near-stopword-json compare --format json --shingle stopword $(planted near)
    run compare-near-k5-classic compare -k 5 --sketch classic $(planted near)
    run compare-near-oph-64-json compare --format json --sketch oph --num-perm 64 $(planted near)
    run compare-near-oph-256-json compare --format json --sketch oph --num-perm 256 $(planted near)
    run compare-contained-modulo compare --sketch modulo $(planted contained)
    run compare-contained-supershingle-json compare --format json --sketch supershingle \
        $(planted contained)
    run compare-nfd-no-nfkc compare --no-nfkc $(planted nfd)
    run compare-fullwidth-no-nfkc-json compare --format json --no-nfkc $(planted fullwidth)
    run compare-empty compare gen/short/empty-0.txt gen/short/blank-1.txt
    run compare-empty-json compare --format json gen/short/empty-0.txt docs/install.md
    run compare-short compare gen/short/short-00.txt gen/short/short-01.txt
    run compare-binary compare gen/odd/binary.bin docs/install.md
    run compare-latin1-json compare --format json gen/odd/latin1.txt gen/odd/crlf.txt
    run compare-unicode-names compare "gen/unicode/café résumé.txt" "gen/unicode/日本語.txt"
    run compare-missing compare docs/install.md docs/no-such-file.md
}

# --- tune --------------------------------------------------------------------------------------
for f in text json; do
    run "tune-$f" tune --format "$f"
    for t in 0.5 0.7 0.9 0.95; do run "tune-t$t-$f" tune -t "$t" --format "$f"; done
    run "tune-numperm64-$f" tune --num-perm 64 --format "$f"
    run "tune-numperm256-t0.6-$f" tune --num-perm 256 -t 0.6 --format "$f"
    run "tune-b16-$f" tune -b 16 --format "$f"
    run "tune-r4-$f" tune -r 4 --format "$f"
    run "tune-b10-r10-$f" tune -b 10 -r 10 --format "$f"
    for v in signature exact none; do run "tune-verify-$v-$f" tune --verify "$v" --format "$f"; done
    run "tune-weights-$f" tune --fp-weight 5 --fn-weight 10 --format "$f"
done

# --- checks ------------------------------------------------------------------------------------
bad=0
for a in "$OUT"/*-j1.out; do
    b=${a%-j1.out}-j2.out
    name=$(basename "${a%-j1.out}")
    if cmp -s "$a" "$b" && cmp -s "${a%.out}.code" "${b%.out}.code"; then
        echo "same $name" >>"$OUT/_threads.txt"
    else
        echo "DIFFERENT $name" >>"$OUT/_threads.txt"
        echo "outputs.sh: WARNING: -j 1 and -j 2 outputs differ: $name" >&2
        bad=$((bad + 1))
    fi
done

MS=$((($(date +%s%N) - START) / 1000000))
printf 'outputs.sh: %d outputs in %d.%01d s (%s) -> %s%s\n' "$N" $((MS / 1000)) $((MS % 1000 / 100)) \
    "$(basename "$BIN")" "$OUT" "$([ $bad = 0 ] || echo ", $bad -j 1/-j 2 differences")" >&2
