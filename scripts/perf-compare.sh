#!/usr/bin/env bash
# Compares the speed of two compactsim binaries on a default suite (micro unless
# STRATEGY says another: STRATEGY=batch scripts/perf-compare.sh ...):
#   scripts/perf-compare.sh BASE_BIN NEW_BIN [REPEATS]
# For each binary: instructions per pass under callgrind (`--jobs 1`; the primary figure
# on a shared machine, as it does not depend on load), then REPEATS (default 5) runs of
# `run --strategy "$STRATEGY" --jobs 2` under /usr/bin/time: the median wall time, CPU time
# (user + sys), passes/s (passes / wall), passes per CPU-second and peak RSS.
# Needs valgrind (set NO_CALLGRIND=1 to skip it). Scratch files go to $TMPDIR/perf-cmp-*.
set -euo pipefail

if [ $# -lt 2 ]; then
    echo "usage: $0 BASE_BIN NEW_BIN [REPEATS]" >&2
    exit 2
fi
REPEATS="${3:-5}"
STRATEGY="${STRATEGY:-micro}"
SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/perf-cmp-XXXXXX")"
trap 'rm -rf "$SCRATCH"' EXIT

# The passes a run printed ("wall 2.35 s, 9616 passes, 4094 passes/s").
passes_of() {
    grep -o '[0-9]* passes,' "$1" | tail -1 | grep -o '[0-9]*'
}

median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Prints "instructions/pass" for one binary (or "-" when skipped).
instructions_per_pass() {
    local bin="$1" tag="$2"
    if [ -n "${NO_CALLGRIND:-}" ]; then
        echo "-"
        return
    fi
    valgrind --tool=callgrind --callgrind-out-file="$SCRATCH/$tag.cg" \
        "$bin" run --strategy "$STRATEGY" --jobs 1 --shrink-time 0 --out "$SCRATCH/$tag-cg" \
        >"$SCRATCH/$tag-cg.out" 2>"$SCRATCH/$tag-cg.err"
    local ir passes
    ir=$(grep -o 'Collected : [0-9]*' "$SCRATCH/$tag-cg.err" | grep -o '[0-9]*$')
    passes=$(passes_of "$SCRATCH/$tag-cg.out")
    awk -v ir="$ir" -v p="$passes" 'BEGIN { printf "%.1f K", ir / p / 1000 }'
}

# Prints "passes wall_s cpu_s rss_kb" medians over REPEATS runs.
timed_runs() {
    local bin="$1" tag="$2" i
    for i in $(seq 1 "$REPEATS"); do
        /usr/bin/time -f '%e %U %S %M' -o "$SCRATCH/$tag-$i.time" \
            "$bin" run --strategy "$STRATEGY" --jobs 2 --shrink-time 0 --out "$SCRATCH/$tag-run" \
            >"$SCRATCH/$tag-$i.out" 2>&1
    done
    local passes wall cpu rss
    passes=$(passes_of "$SCRATCH/$tag-1.out")
    wall=$(cat "$SCRATCH/$tag"-*.time | awk '{ print $1 }' | median)
    cpu=$(cat "$SCRATCH/$tag"-*.time | awk '{ print $2 + $3 }' | median)
    rss=$(cat "$SCRATCH/$tag"-*.time | awk '{ print $4 }' | median)
    echo "$passes $wall $cpu $rss"
}

row() {
    local name="$1" bin="$2" tag="$3" ipp
    ipp=$(instructions_per_pass "$bin" "$tag")
    read -r passes wall cpu rss < <(timed_runs "$bin" "$tag")
    awk -v n="$name" -v ipp="$ipp" -v p="$passes" -v w="$wall" -v c="$cpu" -v r="$rss" 'BEGIN {
        printf "| %s | %s | %d | %.2f | %.0f | %.2f | %.0f | %.1f | %.1f |\n",
            n, ipp, p, w, p / w, c, p / c, c / p * 1e6, r / 1024 }'
}

echo "$STRATEGY default suite (480 cases x 25 passes), --jobs 2, median of $REPEATS runs; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| binary | instructions/pass (callgrind, --jobs 1) | passes | wall s | passes/s | CPU s | passes/CPU-s | CPU us/pass | peak RSS MB |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
row "base $(basename "$1")" "$1" base
row "new $(basename "$2")" "$2" new
