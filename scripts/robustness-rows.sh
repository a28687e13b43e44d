#!/usr/bin/env bash
# Runs every guarantee of docs/robustness.md on the release binary, one report per row
# (ROW.txt: each command, its exit code, the temporary directory before and after, the
# processes left) under DIR (default target/robustness). Each row has an empty TMPDIR of
# its own. Needs python3, mkfifo, /dev/full, pgrep and /usr/bin/time; about 4 minutes.
#   cargo build --release -p compactsim && bash scripts/robustness-rows.sh [DIR]
set -u
REPO=$(cd "$(dirname "$0")/.." && pwd)
BIN=$REPO/target/release/compactsim
R=$(mkdir -p "${1:-$REPO/target/robustness}" && cd "${1:-$REPO/target/robustness}" && pwd)
FX="python3 $REPO/adapters/reference/fixtures"
cd "$R"
alive() { # pids in dir $1 still running (not zombies)
  local out=""
  for p in $(ls "$1" 2>/dev/null); do
    st=$(ps -o stat= -p "$p" 2>/dev/null | tr -d ' ')
    [ -n "$st" ] && [ "${st#Z}" = "$st" ] && out="$out $p"
  done
  echo "${out:-none}"
}
start() { # row number: fresh work dir W and TMPDIR T
  N=$1; W=$R/w$N; T=$R/t$N; P=$R/p$N
  rm -rf "$W" "$T" "$P"; mkdir -p "$W" "$T" "$P"; cd "$W"
  exec 3>"$R/row$N.txt"
  echo "TMPDIR before: [$(ls -A "$T" | tr '\n' ' ')]" >&3
}
cmd() { # runs the command, logs it and its exit code
  echo "\$ $*" >&3
  TMPDIR=$T FIXTURE_PIDS_DIR=$P "$@" >"$W/out.txt" 2>"$W/err.txt"; rc=$?
  echo "exit $rc" >&3; tail -c 600 "$W/err.txt" | sed 's/^/  stderr: /' >&3
}
finish() {
  echo "TMPDIR after: [$(ls -A "$T" | tr '\n' ' ')]" >&3
  echo "fixture processes still running: $(alive "$P")" >&3
  echo "descendants of compactsim left (ps): $(ps -eo pid,args | grep -F "$W" | grep -v grep | wc -l)" >&3
  exec 3>&-
}

# 1: merge --out into one of its shards
start 01
cmd $BIN run --cases 4 --shard 0/2 --out s0 --quiet
cmd $BIN run --cases 4 --shard 1/2 --out s1 --quiet
ls s0 > before.txt
cmd $BIN merge --out s0 s0 s1
ls s0 | diff before.txt - > /dev/null && echo "s0 unchanged: yes" >&3 || echo "s0 unchanged: NO" >&3
finish

# 2: SIGINT/SIGTERM with an external adapter: the reference adapter, fork_hang (reads no
# stdin, forks a grandchild), crash (fails at once: new adapters start all the time)
for sig in INT TERM; do
 for a in "python3 $REPO/adapters/reference/compactor.py" "$FX/fork_hang.py" "$FX/crash.py"; do
  start 02-$sig-$(basename ${a##* } .py)
  echo "\$ $BIN run --cases 400 --jobs 2 --compactor external --adapter '$a' --adapter-timeout-ms 600000 --out out --quiet --shrink-time 0 &   then kill -$sig once both workers run an adapter" >&3
  TMPDIR=$T FIXTURE_PIDS_DIR=$P $BIN run --cases 400 --jobs 2 --compactor external --adapter "$a" --adapter-timeout-ms 600000 --out out --quiet --shrink-time 0 >out.txt 2>err.txt &
  pid=$!
  for i in $(seq 1 3000); do
    [ "$(pgrep -P $pid | wc -l)" -ge 2 ] && break; sleep 0.02; done
  sleep 1
  kids=$(pgrep -P $pid | tr '\n' ' '); for k in $kids; do touch "$P/$k"; done
  echo "adapter children before the signal: $kids; TMPDIR then: [$(ls -A "$T" | tr '\n' ' ')]" >&3
  kill -$sig $pid; wait $pid; echo "exit $?" >&3
  tail -c 400 err.txt | sed 's/^/  stderr: /' >&3
  sleep 1
  finish
 done
done

# 3: an adapter that forks a child holding stdout, exits 3
start 03
cmd $BIN run --cases 4 --jobs 1 --compactor external --adapter "$FX/fork_exit.py" --out out --quiet --shrink-time 0
grep -o "exited[^;]*exit status: 3" out.txt err.txt | head -2 | sed 's/^/  /' >&3
grep -c "timeout" out.txt err.txt | sed 's/^/  timeouts named: /' >&3
finish

# 4: sweep to a closed pipe, to a full disk
start 04
echo "\$ $BIN sweep --seeds 1..400 --cases 4 | head -1" >&3
TMPDIR=$T $BIN sweep --seeds 1..400 --cases 4 2>err.txt | head -1 >/dev/null; echo "exit ${PIPESTATUS[0]}" >&3
tail -c 300 err.txt | sed 's/^/  stderr: /' >&3
echo "\$ $BIN sweep --seeds 1..2 --cases 2 > /dev/full" >&3
TMPDIR=$T $BIN sweep --seeds 1..2 --cases 2 >/dev/full 2>err.txt; echo "exit $?" >&3
tail -c 300 err.txt | sed 's/^/  stderr: /' >&3
finish

# 5: study given /dev/zero or a FIFO
start 05
cmd $BIN study /dev/zero
mkfifo f.toml
cmd timeout 60 $BIN study f.toml
finish

# 6: --shard K/16 over 8 cases
start 06
codes=""
for k in $(seq 0 15); do TMPDIR=$T $BIN run --cases 8 --shard $k/16 --out s$k --quiet >/dev/null 2>&1; codes="$codes $?"; done
echo "\$ for K in 0..15: $BIN run --cases 8 --shard K/16 --out sK" >&3; echo "exit codes:$codes" >&3
cmd $BIN merge --out merged $(for k in $(seq 0 15); do echo s$k; done)
cmd $BIN run --cases 8 --out whole --quiet
sed 's/"params":{"shards":"16"}/"params":{}/' merged/report.json | cmp - whole/report.json >&3 2>&1 && echo "merged report.json = whole run's (but the shards param): yes" >&3
finish

# 8: a clean batch run with --passes 2000
start 08
cmd $BIN run --strategy batch --passes 2000 --cases 8 --out out --quiet --shrink-time 0
grep -i "work budget\|failed\|clean" out.txt | head -4 | sed 's/^/  stdout: /' >&3
finish

# 9: shrink then a default run
start 09
cmd $BIN shrink --case 1 --bug H-75345-B --shrink-time 5 --out o
ls o/failures > before.txt; echo "after shrink: $(cat before.txt | tr '\n' ' ')" >&3
cmd $BIN run --cases 3 --out o --quiet
echo "after run: $(ls o/failures | tr '\n' ' ')" >&3
finish

# 10: the loader refuses what the model cannot hold (micro script: unanswered call; user first)
start 10
printf 'format = 1\nstrategy = "micro"\nexpect = "clean"\n\n[[script.turns]]\nrows = [{ role = "user", chars = 5 }, { role = "assistant", chars = 5, calls = [{ tool = "t" }] }]\n' > a.toml
printf 'format = 1\nstrategy = "micro"\nexpect = "clean"\n\n[[script.turns]]\nrows = [{ role = "assistant", chars = 5 }, { role = "user", chars = 5 }]\n' > b.toml
cmd $BIN scenario a.toml --out o
cmd $BIN scenario b.toml --out o
finish

# 11: replay FILE with control characters in its name
start 11
printf 'format = 1\nname = "x\\u001b[2J\\rFAKE\\nexpectation clean: holds"\nexpect = "clean"\n' > s.toml
cmd $BIN replay s.toml
if grep -q $'\x1b\|\r' out.txt; then echo "raw control characters on stdout: YES" >&3; else echo "raw control characters on stdout: none" >&3; fi
grep -m1 "SCENARIO" out.txt | sed 's/^/  stdout: /' >&3
finish

# 12: an adapter line over the protocol limit (long_line.py writes > 64 MiB)
start 12
cmd /usr/bin/time -f "maxrss_kb=%M" $BIN run --cases 1 --jobs 1 --compactor external --adapter "$FX/long_line.py" --out out --quiet --shrink-time 0
grep -o "PROTOCOL_LINE_BYTES_MAX[^;]*" out.txt err.txt | head -1 | cut -c1-200 | sed 's/^/  /' >&3
finish

# 13: --help / --version to a full disk
start 13
for a in --help --version "run --help"; do echo "\$ $BIN $a > /dev/full" >&3; $BIN $a >/dev/full 2>err.txt; echo "exit $?: $(head -c 200 err.txt)" >&3; done
finish

# 14: contradictory settings
start 14
printf 'format = 1\nexpect = "clean"\n[summarizer]\nmin_tokens = 500\nmax_tokens = 400\n' > s.toml
cmd $BIN scenario s.toml --out o
finish

# 14b: the same strategy twice in a study
start 14b
sed 's/strategies = \["batch",/strategies = ["batch", "batch",/' $REPO/scenarios/studies/code-review-3h.toml > s.toml
cmd $BIN study s.toml
finish

# 15: a fresh clone (no venvs): compactsim scenario scenarios/
start 15
git clone -q $REPO fresh && cd fresh && echo "fresh clone of $(git log --oneline -1 | cut -c1-7), venvs: $(ls target 2>&1 | head -1)" >&3
cmd $BIN scenario scenarios/ --jobs 1
grep -E "^SKIPPED|scenarios, " $W/out.txt | sed 's/^/  stdout: /' >&3
echo "widest stdout line: $(awk '{ print length }' $W/out.txt | sort -n | tail -1) characters" >&3
cd $W; finish

# 7: the gateway's cost per pass at 200, 1000, 2000 passes
start 07
for p in 200 1000 2000; do
  echo "\$ /usr/bin/time -f %U $BIN run --strategy gateway --cases 20 --passes $p --jobs 1 --shrink-time 0 --quiet --out o$p" >&3
  /usr/bin/time -f "%U" $BIN run --strategy gateway --cases 20 --passes $p --jobs 1 --shrink-time 0 --quiet --out o$p > out$p.txt 2> err$p.txt; rc=$?
  u=$(tail -1 err$p.txt); n=$(grep -o '[0-9]* passes,' out$p.txt | head -1 | cut -d' ' -f1)
  echo "exit $rc: user ${u} s, $n passes, $(python3 -c "print('%.3f' % ($u*1000/$n))") ms per pass" >&3
done
finish

echo ALL-ROWS-DONE > $R/done
