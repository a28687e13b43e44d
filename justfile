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
    cargo bench -p compactsim

lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings
