"""pytest plugin (entry point `pytest11`): gate a compactor on compactsim's verdict.

    import sys
    import pytest

    ADAPTER = [sys.executable, "adapter.py"]

    @pytest.mark.compactsim(cases=48, strategies=["micro", "batch"])
    def test_compactor(compactsim):
        compactsim.check(ADAPTER)

`compactsim.check(adapter, ...)` runs `compactsim run --compactor external` on the
adapter (a command string or a list of words) for each seed and strategy asked, in the
test file's directory, and fails the test with the witness and the repro line of every
failing case. Options: keyword arguments of `check`, else of the test's
`@pytest.mark.compactsim(...)`, else compactsim's defaults: `cases`, `passes`,
`strategies` (or `strategy`), `seeds` (or `seed`), `era`, `jobs`, `shrink_time_s`,
`extra_args`. `--compactsim-seed N` is the seed of every check that names none.
Works under pytest-xdist: each test runs its own compactsim into its own `tmp_path`.
"""

import os

import pytest

from . import runner

MARKER = "compactsim"
OPTIONS = ("cases", "passes", "strategies", "strategy", "seeds", "seed", "era", "jobs",
           "shrink_time_s", "extra_args", "cwd")
# Failing cases quoted in a test's failure message (every one is in repro.txt).
FAILURES_QUOTED_MAX = 10


def pytest_addoption(parser):
    group = parser.getgroup("compactsim")
    group.addoption("--compactsim-seed", type=int, default=None, metavar="SEED",
                    help="root seed of every compactsim check that names none "
                         "(default: compactsim's own)")
    group.addoption("--compactsim-bin", default=None, metavar="PATH",
                    help="the compactsim binary (default: $COMPACTSIM_BIN, the wheel's, PATH)")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "compactsim(**options): options of the `compactsim` fixture's checks "
                   "(cases, passes, strategies, seeds, era, jobs, shrink_time_s, extra_args)")
    path = config.getoption("--compactsim-bin", None)
    if path:
        os.environ["COMPACTSIM_BIN"] = os.path.abspath(path)


def pytest_report_header(config):
    seed = config.getoption("--compactsim-seed")
    try:
        where = runner.binary()
    except runner.CompactsimError:
        where = "not found"
    return "compactsim: %s, seed %s" % (where, "default" if seed is None else seed)


def _listed(value):
    return list(value) if isinstance(value, (list, tuple)) else [value]


class Checker:
    """The `compactsim` fixture: `check(adapter, **options)` and `run(adapter, **options)`."""

    def __init__(self, defaults, seed, tmp_path, cwd):
        self.defaults = defaults
        self.seed = seed
        self.tmp_path = tmp_path
        self.cwd = cwd
        self.results = []

    def _options(self, options):
        unknown = sorted((set(self.defaults) | set(options)) - set(OPTIONS))
        if unknown:
            raise TypeError("unknown compactsim options %s (known: %s)"
                            % (", ".join(unknown), ", ".join(OPTIONS)))
        merged = dict(self.defaults, **options)
        seeds = merged.pop("seeds", None)
        seed = merged.pop("seed", None)
        seeds = _listed(seeds) if seeds is not None else [seed if seed is not None else self.seed]
        strategies = merged.pop("strategies", None)
        strategy = merged.pop("strategy", None)
        strategies = _listed(strategies) if strategies is not None else [strategy]
        if merged.get("jobs") is None and os.environ.get("PYTEST_XDIST_WORKER"):
            merged["jobs"] = 1  # xdist already runs a test per core
        return seeds, strategies, merged

    def run(self, adapter, **options):
        """Every (seed, strategy) run of `adapter`: a list of `runner.Result`."""
        seeds, strategies, rest = self._options(options)
        cwd = rest.pop("cwd", None) or self.cwd
        results = []
        for seed in seeds:
            for strategy in strategies:
                out = self.tmp_path / ("compactsim-%d" % len(self.results))
                result = runner.run(adapter, out, cwd=cwd, seed=seed, strategy=strategy, **rest)
                self.results.append(result)
                results.append(result)
        return results

    def check(self, adapter, **options):
        """Fails the test unless every run of `adapter` is clean (exit 0)."""
        try:
            results = self.run(adapter, **options)
        except runner.CompactsimError as e:
            pytest.fail(str(e), pytrace=False)
        failed = [r for r in results if not r.clean]
        if failed:
            pytest.fail(failure_message(failed), pytrace=False)
        return results


def failure_message(failed):
    """Each failed run: its command, the witness and repro of its first failing cases."""
    parts = []
    for r in failed:
        parts.append("compactsim found %d failing case(s): %s\n  (in %s)"
                     % (r.cases_failed, r.command, r.cwd))
        for f in r.failures[:FAILURES_QUOTED_MAX]:
            parts.append(f.witness)
            parts.append("  repro: %s" % f.repro)
        parts.append("  every repro line: %s" % os.path.join(r.out_dir, "repro.txt"))
    return "\n".join(parts)


@pytest.fixture
def compactsim(request, tmp_path):
    """Runs compactsim on a compactor's adapter: `compactsim.check(adapter, **options)`."""
    marker = request.node.get_closest_marker(MARKER)
    defaults = dict(marker.kwargs) if marker else {}
    seed = request.config.getoption("--compactsim-seed")
    return Checker(defaults, seed, tmp_path, str(request.path.parent))
