"""Runs the `compactsim` binary from Python and reads what it found (standard library
only). The pytest plugin (`compactsim.pytest_plugin`) is built on it.

    from compactsim.runner import run
    result = run([sys.executable, "adapter.py"], cases=48, strategy="batch")
    for f in result.failures:
        print(f.witness, f.repro)
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sysconfig

# Exit codes of `compactsim run` (README, "Exit codes"): 0 every case clean, 1 a case
# failed; anything else (2 bad input, 4 an adapter failure, ...) is not a verdict.
EXIT_CLEAN = 0
EXIT_FAILED = 1
# Lines of compactsim's own output quoted when it gave no verdict.
OUTPUT_TAIL_LINES = 40
_FAIL_LINE = re.compile(r"^FAIL case (\d+) ")


class CompactsimError(Exception):
    """compactsim gave no verdict (bad input, adapter failure, missing binary)."""


class Failure:
    """One failing case as `run` printed it: its witness lines and repro command."""

    def __init__(self, case, lines):
        self.case = case
        self.lines = lines

    @property
    def witness(self):
        return "\n".join(ln for ln in self.lines if not ln.strip().startswith("repro: "))

    @property
    def repro(self):
        found = [ln.strip()[len("repro: "):] for ln in self.lines
                 if ln.strip().startswith("repro: ")]
        return found[0] if found else None

    def __repr__(self):
        return "Failure(case=%d, repro=%r)" % (self.case, self.repro)


class Result:
    """A finished `compactsim run`: exit code, output, report and failures."""

    def __init__(self, args, cwd, out_dir, proc):
        self.args = args
        self.cwd = cwd
        self.out_dir = out_dir
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.failures = parse_failures(proc.stdout)
        path = os.path.join(out_dir, "report.json")
        self.report = None
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                self.report = json.load(f)

    @property
    def command(self):
        return shlex.join(self.args)

    @property
    def cases_failed(self):
        if self.report is None:
            return len(self.failures)
        return self.report["summary"]["totals"]["cases_failed"]

    @property
    def clean(self):
        return self.returncode == EXIT_CLEAN


def parse_failures(stdout):
    """The `FAIL case N ...` blocks of `run`'s output (each with its indented lines)."""
    failures, current = [], None
    for line in stdout.splitlines():
        m = _FAIL_LINE.match(line)
        if m:
            current = Failure(int(m.group(1)), [line])
            failures.append(current)
        elif current is not None and line.startswith("  "):
            current.lines.append(line)
        else:
            current = None
    return failures


def binary():
    """The compactsim binary: $COMPACTSIM_BIN, else the one this package was installed
    with (the wheel's scripts directory), else `compactsim` on PATH."""
    env = os.environ.get("COMPACTSIM_BIN")
    if env:
        return env
    beside = os.path.join(sysconfig.get_path("scripts"), "compactsim")
    if os.path.exists(beside):
        return beside
    found = shutil.which("compactsim")
    if found:
        return found
    raise CompactsimError("no compactsim binary: install the wheel (pip install compactsim-*.whl) "
                          "or set COMPACTSIM_BIN")


def adapter_command(adapter):
    """`adapter` as the one string `--adapter` takes: a string as it is, a list of words
    quoted as a shell would."""
    return adapter if isinstance(adapter, str) else shlex.join(str(a) for a in adapter)


def run_args(adapter, out_dir, cases=None, passes=None, strategy=None, seed=None, era=None,
             jobs=None, shrink_time_s=0, extra_args=()):
    """The argument list of one `compactsim run` of `adapter` (None: compactsim's default)."""
    args = [binary(), "run", "--compactor", "external", "--adapter", adapter_command(adapter),
            "--out", str(out_dir), "--shrink-time", str(shrink_time_s)]
    for flag, value in (("--cases", cases), ("--passes", passes), ("--strategy", strategy),
                        ("--seed", seed), ("--era", era), ("--jobs", jobs)):
        if value is not None:
            args += [flag, str(value)]
    return args + [str(a) for a in extra_args]


def run(adapter, out_dir, cwd=None, **options):
    """Runs compactsim on `adapter` (see `run_args`) in `cwd`; the `Result`. Raises
    `CompactsimError` when compactsim gave no verdict (exit code neither 0 nor 1)."""
    args = run_args(adapter, out_dir, **options)
    proc = subprocess.run(args, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, encoding="utf-8", errors="replace")
    result = Result(args, cwd or os.getcwd(), str(out_dir), proc)
    if result.returncode not in (EXIT_CLEAN, EXIT_FAILED):
        tail = (proc.stdout + proc.stderr).splitlines()[-OUTPUT_TAIL_LINES:]
        raise CompactsimError("compactsim exited %d (no verdict) for\n  %s\n(in %s)\n%s"
                              % (result.returncode, result.command, result.cwd, "\n".join(tail)))
    return result

