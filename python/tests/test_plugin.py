"""The pytest plugin on examples/python-compactor: passes on the clean compactor, fails
on the planted bug with compactsim's witness and repro line; the same under xdist."""
import os
import subprocess
import sys

import pytest


def pytest_on_example(repo, sdk_env, planted_bug, *args):
    env = dict(sdk_env)
    env.pop("EXAMPLE_PLANTED_BUG", None)
    if planted_bug:
        env["EXAMPLE_PLANTED_BUG"] = "1"
    example = os.path.join(repo, "examples", "python-compactor")
    # The batch strategy only: one compactsim run per configuration.
    return subprocess.run([sys.executable, "-m", "pytest", example, "-p", "no:cacheprovider",
                           "-k", "batch or nothing_to_fold", *args],
                          env=env, capture_output=True, text=True, timeout=600)


XDIST = [[], ["-n", "2"]]


@pytest.mark.parametrize("xdist", XDIST, ids=["serial", "xdist"])
def test_the_clean_compactor_passes(repo, sdk_env, xdist):
    proc = pytest_on_example(repo, sdk_env, False, *xdist)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout


@pytest.mark.parametrize("args, seed", [([], "20260731"), (["-n", "2", "--compactsim-seed", "7"], "7")],
                         ids=["serial", "xdist-seed-7"])
def test_the_planted_bug_fails_with_witness_and_repro(repo, sdk_env, args, seed):
    proc = pytest_on_example(repo, sdk_env, True, *args)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "1 failed, 1 passed" in out
    assert "compactsim found" in out and "failing case(s)" in out
    # The witness: the invariant, what the pass did, and the repro line to rerun it.
    assert "summary-failure-safe at turn" in out
    assert "rows removed and 0 rewritten with no summary written" in out
    assert "repro: compactsim replay --seed %s --passes 25 --strategy batch" % seed in out
    assert "--planted-bug" in out
