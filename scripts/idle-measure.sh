#!/usr/bin/env bash
# The real-code speed figures of docs/performance.md and adapters/hermes/FLOOR.md in one
# sitting, on an IDLE 2-core machine (~20-25 min at the defaults). Run from (or with
# REPO=) a checkout with the release binary built:
#
#   cargo build --release -p compactsim && bash scripts/idle-measure.sh
#
# Prints, with the commands that made them:
#   1. the floor (scripts/floor-replay.py), the child alone (scripts/child-replay.py on the
#      same record, and its start-up on an empty stdin) and the harness CPU (scripts/cpu-split.sh) of
#      0.19.0 batch (--era b) and iot micro, CASES x PASSES, one release after the other on
#      core CORE (the other core idle), REPS times interleaved, --jobs 1 --shrink-time 0
#      --verdicts first: run/floor ratio (goal <= 1.3) and the Rust share of the run's CPU
#      (goal < 10 %), each repetition and their median; every run's report.json is cmp'd
#      with the recorded one's, the replays' mismatches printed;
#   2. --jobs 1 against --jobs 2 wall time of the same run, both releases (goal >= 1.8x),
#      the two report.json cmp'd (determinism);
#   1b. the same two runs with compactsim on core 0 and its adapter child on core 1, one
#      release after the other (no core shared between the two processes), against the
#      floor of phase 1;
#   3. under load: BUILDERS (2) looping `cargo build --release` of a scratch copy of the
#      workspace (git archive HEAD, its own target dir) while `compactsim scenario
#      scenarios/hermes` and a LOAD_CASES (96) run of each release (--jobs 2, default
#      timeouts) run beside them: exit codes, cases_internal (cases lost to the adapter,
#      timeouts included: goal 0), any "timeout" in their output, and each loaded
#      report.json cmp'd with the idle run of the same flags.
#
# Knobs (environment): REPO, BIN, OUT (default: a new /tmp/idle-measure-XXXX), CASES (480),
# PASSES (25), REPS (3), CORE (1), JOBS_CASES (CASES), LOAD_CASES (96), BUILDERS (2),
# BUILD_ARGS (--release --workspace), SKIP="1 1b 2 3" (phases to skip). A small trial:
#   CASES=8 LOAD_CASES=4 BUILD_ARGS="--release -p compactsim-model" bash scripts/idle-measure.sh
# Every command it runs is printed (lines starting with '#') next to its figures.
set -uo pipefail

REPO=${REPO:-$PWD}
cd "$REPO" || exit 2
BIN=${BIN:-target/release/compactsim}
OUT=${OUT:-$(mktemp -d /tmp/idle-measure-XXXX)}
CASES=${CASES:-480}
PASSES=${PASSES:-25}
JOBS_CASES=${JOBS_CASES:-$CASES}
LOAD_CASES=${LOAD_CASES:-96}
BUILDERS=${BUILDERS:-2}
BUILD_ARGS=${BUILD_ARGS:---release --workspace}
SKIP=${SKIP:-}
REPS=${REPS:-3}
CORE=${CORE:-1}
V19=target/hermes-venvs/hermes-0.19.0/bin/python
IOT=target/hermes-venvs/hermes-iot-0.22.2.post1/bin/python
mkdir -p "$OUT"

for f in "$BIN" "$V19" "$IOT" scripts/cpu-split.sh scripts/floor-replay.py; do
    [ -e "$f" ] || { echo "idle-measure: missing $REPO/$f" >&2; exit 2; }
done
command -v taskset >/dev/null || { echo "idle-measure: needs taskset (util-linux)" >&2; exit 2; }

say() { printf '%s\n' "$*" | tee -a "$OUT/summary.txt"; }
skipped() { case " $SKIP " in *" $1 "*) return 0 ;; esac; return 1; }
field() { grep -m1 "^$2 " "$1" | awk '{print $2}'; }
internal() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["totals"]["cases_internal"])' "$1" 2>/dev/null || echo "?"; }
same() { cmp -s "$1" "$2" && echo "identical" || echo "DIFFER"; }
q() { printf '%q ' "$@"; }  # a command as a shell would re-read it

# The two runs: name, adapter, flags.
B_ARGS=(run --strategy batch --era b --compactor external --adapter "$V19 adapters/hermes/hermes_batch.py" --seed 20260731 --passes "$PASSES" --shrink-time 0 --verdicts first --quiet)
M_ARGS=(run --compactor external --adapter "$IOT adapters/hermes/hermes_micro.py" --seed 20260731 --passes "$PASSES" --shrink-time 0 --verdicts first --quiet)

say "# idle-measure $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null) bin $BIN"
say "# nproc $(nproc), load before: $(cut -d' ' -f1-3 /proc/loadavg), out $OUT"
awk '$1 > 0.5 { print "# WARNING: load " $1 " — the machine is not idle; CPU figures move under load" }' /proc/loadavg | tee -a "$OUT/summary.txt"

# --- 1. floor and harness CPU, one release at a time on one core ----------------------
# The releases run one after the other on core CORE (1), the other core idle: side by side
# they share the last-level cache and the memory bus, and one release's phase moved the
# other's figures. The run, the floor and the child alone are taken REPS (3) times,
# interleaved (run, floor, child; run, floor, child; ...) so that a drift of the machine
# reaches all three alike; the summary is the median of each column.
# $1 name, $2 adapter file, $3 python, rest: run args.
floor_and_cpu() {
    local name=$1 file=$2 py=$3 k
    shift 3
    local d="$OUT/p1-$name"
    mkdir -p "$d"
    taskset -c "$CORE" "$BIN" "$@" --cases "$CASES" --jobs 1 --out "$d/rec-out" --record "$d/rec" >"$d/rec.log" 2>&1
    echo $? >"$d/rec.rc"
    # The child's start-up alone (interpreter, import, the adapter's set-up, an empty stdin).
    taskset -c "$CORE" python3 -c 'import os, subprocess, sys
subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
u = os.times()
print("start-up CPU %.2f s" % (u.children_user + u.children_system))' "$py" "$file" >"$d/startup.txt" 2>&1
    for k in $(seq 1 "$REPS"); do
        taskset -c "$CORE" scripts/cpu-split.sh "$BIN" "$@" --cases "$CASES" --jobs 1 --out "$d/plain-$k" >"$d/split-$k.txt" 2>"$d/plain-$k.log"
        echo $? >"$d/split-$k.rc"
        taskset -c "$CORE" "$py" scripts/floor-replay.py "$file" "$d/rec" >"$d/floor-$k.txt" 2>&1
        echo $? >"$d/floor-$k.rc"
        # The child alone on the recorded requests (no harness beside it on the core).
        taskset -c "$CORE" python3 scripts/child-replay.py "$d/rec" "$py" "$file" >"$d/child-$k.txt" 2>&1
        echo $? >"$d/child-$k.rc"
    done
}

# A floor-replay.py output's floor CPU seconds.
floor_of() { grep -m1 '^floor CPU' "$1" 2>/dev/null | awk '{print $3}'; }
child_of() { grep -m1 '^child CPU' "$1" 2>/dev/null | awk '{print $3}'; }

# The cells "compactsim + children = total | run / floor | Rust share" of a cpu-split.sh
# output ($1) against floor seconds ($2); "?" cells when a figure is missing.
ratio_cells() {
    python3 - "$(field "$1" rust_cpu_s)" "$(field "$1" children_cpu_s)" "$2" <<'PY'
import sys
try:
    r, k, f = (float(x) for x in sys.argv[1:4])
    print(f"{r:.2f} + {k:.2f} = {r + k:.2f} s | {(r + k) / f:.2f}x | {100 * r / (r + k):.1f} %")
except ValueError:
    print("rust %r children %r floor %r (see the files) | ? | ?" % tuple(sys.argv[1:4]))
PY
}

# The median row of a release's REPS rows: floor, child alone, compactsim, children,
# total, run / floor and Rust share, each the median over the repetitions.
median_cells() {
    local d=$1 k args=()
    for k in $(seq 1 "$REPS"); do
        args+=("$(floor_of "$d/floor-$k.txt")" "$(child_of "$d/child-$k.txt")" "$(field "$d/split-$k.txt" rust_cpu_s)" "$(field "$d/split-$k.txt" children_cpu_s)")
    done
    python3 - "${args[@]}" <<'PY'
import statistics, sys
try:
    v = [float(x) for x in sys.argv[1:]]
    reps = [v[i:i + 4] for i in range(0, len(v), 4)]
    m = lambda xs: statistics.median(xs)
    f, c, r, k = (m([x[j] for x in reps]) for j in range(4))
    ratio = m([(x[2] + x[3]) / x[0] for x in reps])
    share = m([100 * x[2] / (x[2] + x[3]) for x in reps])
    print(f"{f:.2f} s | {c:.2f} s | {r:.2f} + {k:.2f} = {m([x[2] + x[3] for x in reps]):.2f} s | {ratio:.2f}x | {share:.1f} %")
except ValueError:
    print("a figure is missing (see the files) | | | ? | ?")
PY
}

p1_lines() {
    local name=$1 d="$OUT/p1-$1" k floor start
    start=$(grep -m1 '^start-up CPU' "$d/startup.txt" | awk '{print $3}')
    for k in $(seq 1 "$REPS"); do
        floor=$(floor_of "$d/floor-$k.txt")
        say "| $name, rep $k | $floor s | $(child_of "$d/child-$k.txt") s | $(ratio_cells "$d/split-$k.txt" "$floor") | rc $(cat "$d/split-$k.rc"); floor $(grep -m1 '^mismatches' "$d/floor-$k.txt"); child $(grep -m1 '^mismatches' "$d/child-$k.txt"); report vs recorded $(same "$d/plain-$k/report.json" "$d/rec-out/report.json") |"
    done
    say "| **$name, median** (start-up $start s) | $(median_cells "$d") | |"
}

if ! skipped 1; then
    say ""
    say "## 1. floor vs harness CPU: $CASES x $PASSES, --jobs 1, one release at a time on core $CORE, $REPS repetitions interleaved (goal: run <= 1.3x floor, Rust < 10 %)"
    say "# taskset -c $CORE $(q "$BIN" "${B_ARGS[@]}")--cases $CASES --jobs 1 --record REC --out DIR, once; then REPS x: taskset -c $CORE scripts/cpu-split.sh (the same without --record); $V19 scripts/floor-replay.py adapters/hermes/hermes_batch.py REC; python3 scripts/child-replay.py REC $V19 adapters/hermes/hermes_batch.py"
    say "# the same for iot micro: $(q "$BIN" "${M_ARGS[@]}")with $IOT and adapters/hermes/hermes_micro.py"
    say "# start-up: the adapter with an empty stdin (children CPU, os.times)"
    start=$(date +%s)
    floor_and_cpu batch adapters/hermes/hermes_batch.py "$V19" "${B_ARGS[@]}"
    floor_and_cpu micro adapters/hermes/hermes_micro.py "$IOT" "${M_ARGS[@]}"
    say "| release | floor CPU | child alone CPU | run CPU: compactsim + children = total | run / floor | Rust share | checks |"
    say "|---|--:|--:|--:|--:|--:|---|"
    p1_lines batch
    p1_lines micro
    say "# phase 1 wall $(( $(date +%s) - start )) s"
fi

# --- 1b. the same runs, compactsim and its child on a core each ------------------------
# Phase 1 shares one core between compactsim and its adapter child, so every request
# and summary answer switches the core (and its caches) between the two. Here the
# releases run one after the other on the idle machine, compactsim on core 0 and the
# child on core 1 (`taskset -c 1` at the front of --adapter: the child execs python, so
# the CPU counted is still the child's), against the floor of phase 1.
split_cores() {
    local name=$1 file=$2 py=$3
    shift 3
    local d="$OUT/p1b-$name" args=("$@") i
    mkdir -p "$d"
    for i in "${!args[@]}"; do
        [ "${args[$i]}" = "--adapter" ] && args[i + 1]="taskset -c 1 $py $file"
    done
    taskset -c 0 scripts/cpu-split.sh "$BIN" "${args[@]}" --cases "$CASES" --jobs 1 --out "$d/plain" >"$d/split.txt" 2>"$d/plain.log"
    echo $? >"$d/split.rc"
}

# Whether a phase-1b report is phase 1's byte for byte once the `taskset -c 1 ` its
# adapter command (header, repro lines) carries is taken out.
same_but_taskset() {
    python3 - "$1" "$2" <<'PY'
import sys
a, b = (open(p, encoding="utf-8").read() for p in sys.argv[1:3])
print("identical" if a.replace("taskset -c 1 ", "") == b else "DIFFER")
PY
}

p1b_line() {
    local name=$1 d="$OUT/p1b-$1" floor
    floor=$(floor_of "$OUT/p1-$name/floor-1.txt")
    say "| $name | $floor s | $(ratio_cells "$d/split.txt" "$floor") | rc $(cat "$d/split.rc"); report vs phase 1 (but the taskset prefix): $(same_but_taskset "$d/plain/report.json" "$OUT/p1-$name/plain-1/report.json" 2>/dev/null) |"
}

if ! skipped 1b; then
    say ""
    say "## 1b. the same runs with compactsim on core 0 and its child on core 1, one release at a time (floor: phase 1's first)"
    say "# taskset -c 0 scripts/cpu-split.sh $(q "$BIN")run ... --adapter 'taskset -c 1 PYTHON ADAPTER' ... --cases $CASES --jobs 1 --out DIR (flags as in phase 1)"
    start=$(date +%s)
    split_cores batch adapters/hermes/hermes_batch.py "$V19" "${B_ARGS[@]}"
    split_cores micro adapters/hermes/hermes_micro.py "$IOT" "${M_ARGS[@]}"
    say "| release | floor CPU (phase 1) | run CPU: compactsim + child = total | run / floor | Rust share | checks |"
    say "|---|--:|--:|--:|--:|---|"
    p1b_line batch
    p1b_line micro
    say "# phase 1b wall $(( $(date +%s) - start )) s"
fi

# --- 2. --jobs 1 vs --jobs 2 ------------------------------------------------------------
wall_of() { # $1 out dir, rest: command; prints wall seconds
    local d=$1
    shift
    /usr/bin/time -f '%e' -o "$d.time" "$@" --out "$d" >"$d.log" 2>&1
    echo $? >"$d.rc"
    tail -1 "$d.time"
}

if ! skipped 2; then
    say ""
    say "## 2. --jobs 1 vs --jobs 2 wall, $JOBS_CASES x $PASSES (goal >= 1.8x); LOAD_CASES=$LOAD_CASES idle references for phase 3"
    for name in batch micro; do
        if [ $name = batch ]; then args=("${B_ARGS[@]}"); else args=("${M_ARGS[@]}"); fi
        j1=$(wall_of "$OUT/p2-$name-j1" "$BIN" "${args[@]}" --cases "$JOBS_CASES" --jobs 1)
        j2=$(wall_of "$OUT/p2-$name-j2" "$BIN" "${args[@]}" --cases "$JOBS_CASES" --jobs 2)
        ratio=$(python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$j1" "$j2" 2>/dev/null || echo "?")
        say "| $name | jobs 1 ${j1} s (rc $(cat "$OUT/p2-$name-j1.rc")) | jobs 2 ${j2} s (rc $(cat "$OUT/p2-$name-j2.rc")) | speed-up ${ratio}x | reports $(same "$OUT/p2-$name-j1/report.json" "$OUT/p2-$name-j2/report.json") |"
        say "#   /usr/bin/time -f %e $(q "$BIN" "${args[@]}")--cases $JOBS_CASES --jobs 1|2 --out DIR"
        ref=$(wall_of "$OUT/p2-$name-ref" "$BIN" "${args[@]}" --cases "$LOAD_CASES" --jobs 2)
        say "#   idle reference $LOAD_CASES cases --jobs 2: ${ref} s, rc $(cat "$OUT/p2-$name-ref.rc")"
    done
fi

# --- 3. under load ----------------------------------------------------------------------
BUILDER_PIDS=()
stop_builders() {
    touch "$OUT/p3-stop"
    for p in "${BUILDER_PIDS[@]}"; do
        kill -- -"$p" 2>/dev/null
    done
    for p in "${BUILDER_PIDS[@]}"; do
        wait "$p" 2>/dev/null
    done
    BUILDER_PIDS=()
}
trap stop_builders EXIT

if ! skipped 3; then
    say ""
    say "## 3. under load: $BUILDERS looping \`cargo build $BUILD_ARGS\` of a scratch copy beside the Hermes scenarios and $LOAD_CASES-case runs (goal: 0 cases lost)"
    ws="$OUT/p3-workspace"
    mkdir -p "$ws"
    git archive HEAD | tar -x -C "$ws"
    rm -f "$OUT/p3-stop"
    say "# load: git archive HEAD | tar -x -C $ws; $BUILDERS x (cd $ws; loop: cargo build $BUILD_ARGS --offline --target-dir $OUT/p3-target-K)"
    for k in $(seq 1 "$BUILDERS"); do
        # Its own session (process group), killed whole at the end.
        setsid bash -c 'cd "$1" && while [ ! -e "$2" ]; do rm -rf "$3"; cargo build $4 --offline --target-dir "$3" >>"$5" 2>&1; echo "build exit $?" >>"$5"; done' \
            _ "$ws" "$OUT/p3-stop" "$OUT/p3-target-$k" "$BUILD_ARGS" "$OUT/p3-build-$k.log" &
        BUILDER_PIDS+=($!)
    done
    sleep 20
    ( while [ ! -e "$OUT/p3-stop" ]; do cut -d' ' -f1 /proc/loadavg; sleep 5; done ) >"$OUT/p3-load.txt" &
    loadmon=$!
    start=$(date +%s)
    /usr/bin/time -f '%e' -o "$OUT/p3-scenario.time" "$BIN" scenario scenarios/hermes >"$OUT/p3-scenario.log" 2>&1
    src=$?
    say "# $(q "$BIN" scenario scenarios/hermes); then $(q "$BIN" "${B_ARGS[@]}")--cases $LOAD_CASES --jobs 2 --out DIR, and the same for micro"
    say "| compactsim scenario scenarios/hermes | rc $src (0: all hold) | $(tail -1 "$OUT/p3-scenario.time") s | timeouts in output: $(grep -ci timeout "$OUT/p3-scenario.log") |"
    for name in batch micro; do
        if [ $name = batch ]; then args=("${B_ARGS[@]}"); else args=("${M_ARGS[@]}"); fi
        w=$(wall_of "$OUT/p3-$name" "$BIN" "${args[@]}" --cases "$LOAD_CASES" --jobs 2)
        say "| $name $LOAD_CASES cases --jobs 2 | rc $(cat "$OUT/p3-$name.rc") | $w s | cases_internal $(internal "$OUT/p3-$name/report.json"); timeouts in output: $(grep -ci timeout "$OUT/p3-$name.log"); report vs idle: $(same "$OUT/p3-$name/report.json" "$OUT/p2-$name-ref/report.json") |"
    done
    builds=$(cat "$OUT"/p3-build-*.log 2>/dev/null | grep -c '^build exit')
    stop_builders
    kill "$loadmon" 2>/dev/null
    wait "$loadmon" 2>/dev/null
    say "# phase 3 wall $(( $(date +%s) - start )) s; load 1-min samples min/max: $(sort -g "$OUT/p3-load.txt" | head -1) / $(sort -g "$OUT/p3-load.txt" | tail -1); cargo builds completed meanwhile: $builds (each loops: rebuilt from scratch when done)"
    say "#   (a builder still compiling when the runs ended is the load that was beside them; see $OUT/p3-build-*.log)"
    rm -rf "$ws" "$OUT"/p3-target-*
fi
say ""
say "# done $(date -u +%FT%TZ); everything under $OUT (summary.txt)"
