#!/usr/bin/env python3
"""The child's side of a recorded run: feeds every request a `compactsim run --jobs 1
... --record DIR` sent its adapter child, in the order it sent them, to one fresh
adapter process through its stdin, and prints the CPU that process used. No harness
runs: the figure is what the adapter child costs in that run (its package work plus the
SDK's protocol path), without waiting on the harness. Each reply line is compared with
the recorded one (as JSON); mismatches mean the replay is not faithful (exit 1).

  scripts/child-replay.py DIR target/hermes-venvs/hermes-0.19.0/bin/python adapters/hermes/hermes_batch.py

`--profile FILE` runs the adapter under cProfile (`python -m cProfile -o FILE`, the
adapter's command must start with its interpreter). Only a `--jobs 1` record is one
child's stream; the hello exchange each case file repeats is sent once.
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

# Record lines this replay reads per file (a record holding more is not one compactsim
# writes for a case).
RECORD_LINES_PER_CASE_MAX = 10_000_000


def case_number(path):
    m = re.search(r"case-(\d+)(?:\.run-(\d+))?\.jsonl$", path)
    return (int(m.group(1)), int(m.group(2) or 0)) if m else (1 << 62, 0)


def wire(msg):
    """A message as the harness writes it (compact JSON, UTF-8 as is)."""
    return json.dumps(msg, separators=(",", ":"), ensure_ascii=False)


def streams(files):
    """(the requests' lines, the recorded replies) of all files, the hello once."""
    requests, replies, greeted = [], [], False
    for path in files:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if n > RECORD_LINES_PER_CASE_MAX:
                    sys.exit("%s: more than %d lines" % (path, RECORD_LINES_PER_CASE_MAX))
                rec = json.loads(line)
                msg = rec.get("msg")
                if not isinstance(msg, dict):
                    continue
                hello = msg.get("type") == "hello"
                if hello and greeted and msg.get("id") == 0:
                    continue
                if rec["dir"] == "to_adapter":
                    requests.append(wire(msg))
                elif rec["dir"] == "from_adapter":
                    replies.append(msg)
                    greeted = greeted or hello
    return requests, replies


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("record", help="a --record directory of a --jobs 1 run")
    ap.add_argument("command", nargs="+", help="the adapter command, e.g. PYTHON ADAPTER.py")
    ap.add_argument("--profile", help="write a cProfile of the child here")
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.record, "seed-*-case-*.jsonl")), key=case_number)
    if not files:
        sys.exit("no seed-*-case-*.jsonl in %s" % a.record)
    requests, replies = streams(files)
    command = list(a.command)
    if a.profile:
        command[1:1] = ["-m", "cProfile", "-o", a.profile]
    with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as stdout:
        stdin.write(("\n".join(requests) + "\n").encode("utf-8"))
        stdin.seek(0)
        child = subprocess.Popen(command, stdin=stdin, stdout=stdout, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        got = [json.loads(line) for line in stdout.read().decode("utf-8").splitlines()]
    mismatches = sum(g != w for g, w in zip(got, replies)) + abs(len(got) - len(replies))
    print("files %d, lines to the child %d, replies %d (recorded %d)"
          % (len(files), len(requests), len(got), len(replies)))
    print("child CPU %.2f s (user %.2f + sys %.2f), exit %d"
          % (usage.ru_utime + usage.ru_stime, usage.ru_utime, usage.ru_stime, child.returncode))
    print("mismatches: %d replies" % mismatches)
    sys.exit(1 if mismatches or child.returncode else 0)


if __name__ == "__main__":
    main()
