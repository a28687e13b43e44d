#!/usr/bin/env bash
# The crate graph of the workspace and its check: prints each crate's workspace
# dependencies (normal ones, from `cargo tree`), then runs the architecture tests
# (front/tests/integration/architecture.rs), which fail if a crate depends on one of
# its own layer or above, if what is judged (fakes, hermes) depends on what judges
# (invariants, reports), if the oracle depends on anything but the model, or if the
# top-level modules of a crate import each other in a loop (test code left out).
set -euo pipefail
cd "$(dirname "$0")/.."
for crate in compactsim-model compactsim-invariants compactsim-reports compactsim-fakes \
  compactsim-hermes compactsim-harness compactsim; do
  deps=$(cargo tree -p "$crate" -e normal --depth 1 --prefix none --offline 2>/dev/null |
    tail -n +2 | awk '/^compactsim/ {print $1}' | sort -u | tr '\n' ' ')
  printf '%-22s -> %s\n' "$crate" "${deps:-(none)}"
done
cargo test -p compactsim --test integration architecture:: -- --quiet
