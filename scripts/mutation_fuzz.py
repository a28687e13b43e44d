#!/usr/bin/env python3
"""Mutation fuzzer for the scenario loader: mutates the files of scenarios/ and runs
`compactsim scenario` on each mutant, for a fixed time. Reports the exit-code histogram
and every panic (exit 101 or "panicked" on stderr), abort (killed by a signal) and hang
(over --hang-s seconds); the inputs behind them are kept under --work/crashes/.

    cargo build --release -p compactsim
    python3 scripts/mutation_fuzz.py --bin target/release/compactsim --seconds 600

Exit 0 when nothing panicked, aborted or hung and every exit code was 0, 1, 2 or 3.

`--clean-violates api-valid` also keeps (under --work/clean-violates/) every mutant the
loader accepted that switches no bug on and whose run the invariant failed: a file the
clean model cannot hold, which the loader should have refused. With it the corpus leaves
out the files whose [compactor] is `kind = "external"`: their runs need an adapter (a venv,
a Python process per case), and the question is what the loader lets through to the model.
"""
import argparse
import collections
import os
import random
import re
import subprocess
import sys
import time

NUMBERS = ["0", "1", "2", "7", "12", "255", "1000", "1001", "65535", "100000", "100001",
           "1000000", "2000001", "4294967295", "4294967296", "9223372036854775807",
           "18446744073709551615", "-1", "1e9", "0x10", "1_000"]
SNIPPETS = ["turns_max = 100000", "passes = 10000", "[gateway]", 'expect = "clean"',
            'strategy = "batch"', 'strategy = "both"', "[[script.turns]]",
            'rows = [{ role = "assistant", chars = 5, calls = [{ tool = "t" }] }]',
            'rows = [{ role = "tool", chars = 5 }]', "[summarizer]\nexpansion_per_mille = 1000",
            "[faults]\nrestarts = [1, 1]", '"', "x = [", "format = 2", "[shape]",
            "context_length = 2000000", "[micro]\nscaffold_tokens = 1000000",
            'expect = { exit = "liveness" }', "[[script.history]]"]


EXTERNAL = re.compile(rb'^\s*kind\s*=\s*"external"', re.M)


def corpus(root, model_only):
    """The scenario files under root/scenarios; with model_only, those that need no
    external adapter (no `kind = "external"` line)."""
    out = []
    for d, _, files in os.walk(os.path.join(root, "scenarios")):
        for f in sorted(files):
            if f.endswith(".toml"):
                with open(os.path.join(d, f), "rb") as fh:
                    data = fh.read()
                if not (model_only and EXTERNAL.search(data)):
                    out.append((os.path.join(d, f), data))
    return sorted(out)


def numbers(text):
    spans, i = [], 0
    while i < len(text):
        if text[i:i + 1].isdigit() and (i == 0 or not text[i - 1:i].isalnum()):
            j = i
            while j < len(text) and text[j:j + 1].isdigit():
                j += 1
            spans.append((i, j))
            i = j
        else:
            i += 1
    return spans


def mutate(rng, data):
    op = rng.choice(["num", "num", "num", "del", "dup", "swap", "ins", "ins", "byte", "trunc"])
    lines = data.split(b"\n")
    if op == "num":
        spans = numbers(data)
        if spans:
            a, b = rng.choice(spans)
            return data[:a] + rng.choice(NUMBERS).encode() + data[b:]
        return data
    if op == "del" and lines:
        del lines[rng.randrange(len(lines))]
    elif op == "dup" and lines:
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
    elif op == "swap" and lines:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif op == "ins":
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(SNIPPETS).encode())
    elif op == "byte" and data:
        i = rng.randrange(len(data))
        return data[:i] + bytes([rng.randrange(256)]) + data[i + 1:]
    elif op == "trunc":
        return data[:rng.randrange(len(data) + 1)]
    return b"\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/compactsim")
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--seed", type=int, default=20260731)
    ap.add_argument("--hang-s", type=float, default=60)
    ap.add_argument("--work", default="target/mutation-fuzz")
    ap.add_argument("--clean-violates", metavar="INVARIANT",
                    help="keep accepted bug-free mutants whose run violates INVARIANT")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = corpus(root, model_only=bool(a.clean_violates))
    if a.clean_violates:
        print("corpus: %d files (those needing an external adapter skipped)" % len(files))
    rng = random.Random(a.seed)
    os.makedirs(os.path.join(a.work, "crashes"), exist_ok=True)
    os.makedirs(os.path.join(a.work, "clean-violates"), exist_ok=True)
    no_bug = re.compile(rb'^\s*bugs\s*=\s*\[\s*"', re.M)
    kept = 0
    mutant = os.path.join(a.work, "m.toml")
    hist, bad = collections.Counter(), collections.Counter()
    started, n = time.monotonic(), 0
    while time.monotonic() - started < a.seconds:
        name, data = rng.choice(files)
        for _ in range(rng.randint(1, 4)):
            data = mutate(rng, data)
        with open(mutant, "wb") as fh:
            fh.write(data)
        n += 1
        try:
            p = subprocess.run([a.bin, "scenario", mutant, "--quiet", "--jobs", "1",
                                "--out", os.path.join(a.work, "out")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=a.hang_s)
            code, err = p.returncode, p.stderr.decode("utf-8", "replace")
            out = p.stdout.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            code, err, out = "hang", "", ""
        if (a.clean_violates and code in (0, 1) and not no_bug.search(data)
                and ("violated %s " % a.clean_violates) in out):
            kept += 1
            with open(os.path.join(a.work, "clean-violates", "m-%d.toml" % n), "wb") as fh:
                fh.write(data)
            print("clean model violates %s on a mutant of %s" % (a.clean_violates, name),
                  flush=True)
        hist[code] += 1
        kind = None
        if code == "hang":
            kind = "hang"
        elif code < 0:
            kind = "abort"
        elif code == 101 or "panicked" in err:
            kind = "panic"
        elif code not in (0, 1, 2, 3):
            kind = "exit-%d" % code
        if kind:
            bad[kind] += 1
            with open(os.path.join(a.work, "crashes", "%s-%d.toml" % (kind, n)), "wb") as fh:
                fh.write(data)
            print("%s on a mutant of %s: %s" % (kind, name, err.strip()[:300]), flush=True)
    wall = time.monotonic() - started
    print("mutants: %d in %.0f s (%.1f/s), corpus %d files, seed %d"
          % (n, wall, n / wall, len(files), a.seed))
    print("exit codes: " + ", ".join("%s: %d" % (k, hist[k]) for k in sorted(hist, key=str)))
    print("panics: %d, aborts: %d, hangs: %d, other exits: %d"
          % (bad["panic"], bad["abort"], bad["hang"],
             sum(v for k, v in bad.items() if k.startswith("exit-"))))
    if a.clean_violates:
        print("accepted bug-free mutants violating %s: %d" % (a.clean_violates, kept))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
