#!/usr/bin/env bash
# `scripts/wheel.sh time` (after the wheel is built): times "pip install to first verdict"
# in a fresh venv with no Rust toolchain on PATH, phase by phase, and prints each phase
# and the running total from `pip install` on. Arguments: the pytest pins to install.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/wheel-time
repo="$PWD"
work="$repo/target/wheel-time-work"
log="$repo/target/wheel-time.log"
wheel=$(ls "$repo"/target/wheels/compactsim-*.whl)
rm -rf "$venv" "$work"
mkdir -p "$work"
PATH="$repo/$venv/bin:/usr/bin:/bin"
export PATH
unset COMPACTSIM_BIN PYTHONPATH
if command -v cargo >/dev/null || command -v rustc >/dev/null; then
  echo "wheel time: a Rust toolchain is on PATH ($(command -v cargo rustc))"
  exit 1
fi
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) on $(nproc) cores"

now_ms() { date +%s%3N; }
since_install_ms=0
# phase NAME COUNTED COMMAND...: runs COMMAND, prints its wall time; COUNTED=1 adds it
# to the total from `pip install` on. A phase that fails ends the script with its log.
phase() {
  local name=$1 counted=$2
  shift 2
  local t0 t1 rc=0
  t0=$(now_ms)
  "$@" >"$log" 2>&1 || rc=$?
  t1=$(now_ms)
  if [ "$counted" = 1 ]; then since_install_ms=$((since_install_ms + t1 - t0)); fi
  printf '%-48s %7.1f s   exit %d   since pip install %7.1f s\n' "$name" \
    "$(echo "($t1 - $t0) / 1000" | bc -l)" "$rc" "$(echo "$since_install_ms / 1000" | bc -l)"
  if [ "$rc" -ne 0 ]; then cat "$log"; exit "$rc"; fi
}

phase "python3 -m venv" 0 python3 -m venv "$venv"
phase "pip install compactsim-*.whl" 1 pip install -q "$wheel"
cd "$work"
phase "compactsim run --cases 48 (first verdict)" 1 compactsim run --cases 48 --out run-48
sed -n '1p;/^wall/p' "$log"
echo "pip install to first verdict: $(echo "$since_install_ms / 1000" | bc -l | xargs printf '%.1f') s"
cd "$repo"
phase "pip install $*" 1 pip install -q "$@"
phase "python -m pytest examples/python-compactor" 1 \
  python -m pytest -p no:cacheprovider -q examples/python-compactor
phase "python -m pytest examples/python-compactor -n 2" 1 \
  python -m pytest -p no:cacheprovider -q -n 2 examples/python-compactor
tail -n 1 "$log"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
