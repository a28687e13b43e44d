#!/usr/bin/env bash
# Builds the Python wheel (the compactsim binary + python/compactsim: SDK, runner, pytest
# plugin) into target/wheels/ with maturin, pinned, from a venv of its own
# (target/pkg-tools; needs network once). `scripts/wheel.sh check` then installs the wheel
# into a fresh venv with no Rust toolchain on PATH and runs the Python tests
# (python/tests: the SDK, the docs' adapter, the pytest plugin on examples/python-compactor
# clean and with its planted bug, serial and under pytest-xdist, junit.xml of run, sweep,
# scenario, selftest and matrix against the JUnit schema) and the example itself.
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

[ "${1:-}" = check ] || exit 0
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
