"""The example compactor's gate: compactsim's default shapes through its adapter (the
`compactsim` fixture of the pytest plugin), plus one plain unit test.

    python -m pytest examples/python-compactor            # passes
    python -m pytest examples/python-compactor -n 2       # the same under pytest-xdist
    EXAMPLE_PLANTED_BUG=1 python -m pytest examples/python-compactor   # fails: witness + repro
"""
import os
import sys

import pytest

import compactor

PLANTED_BUG = ["--planted-bug"] if os.environ.get("EXAMPLE_PLANTED_BUG") else []
ADAPTER = [sys.executable, "adapter.py"] + PLANTED_BUG


@pytest.mark.compactsim(cases=48)
@pytest.mark.parametrize("strategy", ["batch", "gateway"])
def test_compactsim_finds_nothing(compactsim, strategy):
    compactsim.check(ADAPTER, strategy=strategy)


def test_nothing_to_fold_leaves_the_transcript():
    rows = [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]
    assert compactor.compact(rows, summarize=lambda prompt: "never called") is rows
