#!/usr/bin/env bash
# Builds the Python wheel (the compactsim binary + python/compactsim: SDK, runner, pytest
# plugin) into target/wheels/ with maturin, pinned, from a venv of its own
# (target/pkg-tools; needs network once). `scripts/wheel.sh check` then installs the wheel
# into a fresh venv with no Rust toolchain on PATH and runs the Python tests
# (python/tests: the SDK, the docs' adapter, the pytest plugin on examples/python-compactor
# clean and with its planted bug, serial and under pytest-xdist, junit.xml of run, sweep,
# scenario, selftest and matrix against the JUnit schema) and the example itself.
# `scripts/wheel.sh time` measures "pip install to first verdict" as a new user meets it:
# the wheel is built first (not timed), then a fresh venv with no Rust toolchain on PATH
# (target/wheel-time) is timed phase by phase: venv creation, `pip install` of the wheel,
# `compactsim run --cases 48` (the first verdict), pytest and pytest-xdist installed
# (pinned; from pip's cache once fetched), `python -m pytest examples/python-compactor`,
# and the same with `-n 2`. Wall times: run it on an idle machine and say the load.
set -euo pipefail
cd "$(dirname "$0")/.."
MATURIN_PIN="maturin==1.15.0"
# xmlschema: python/tests/test_junit_schema.py validates junit.xml against docs/schemas/junit.xsd.
PYTEST_PINS=(pytest==9.0.3 pytest-xdist==3.8.0 xmlschema==4.3.2)
tools=target/pkg-tools
if ! [ -x "$tools/bin/maturin" ] || ! "$tools/bin/maturin" --version | grep -q "${MATURIN_PIN#maturin==}"; then
  python3 -m venv "$tools"
  "$tools/bin/pip" install -q "$MATURIN_PIN"
fi
rm -f target/wheels/compactsim-*.whl
"$tools/bin/maturin" build --release --quiet -o target/wheels
ls target/wheels/compactsim-*.whl

[ "${1:-}" = check ] || [ "${1:-}" = time ] || exit 0
if [ "${1:-}" = time ]; then exec bash scripts/wheel_time.sh "${PYTEST_PINS[@]:0:2}"; fi
venv=target/wheel-check
rm -rf "$venv"
python3 -m venv "$venv"
# No cargo, no rustc: what the wheel gives must be enough.
PATH="$PWD/$venv/bin:/usr/bin:/bin"
export PATH
unset COMPACTSIM_BIN PYTHONPATH
if command -v cargo >/dev/null; then echo "wheel check: cargo on PATH ($(command -v cargo))"; exit 1; fi
pip install -q target/wheels/compactsim-*.whl "${PYTEST_PINS[@]}"
compactsim --version
python -m pytest -p no:cacheprovider -q -n 2 python/tests examples/python-compactor
