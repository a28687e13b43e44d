#!/usr/bin/env python3
"""The child's side of a recorded run: feeds every request a `compactsim run --jobs 1
... --record DIR` sent its adapter child, in the order it sent them, to one fresh
adapter process through its stdin, and prints the CPU that process used. No harness
runs: the figure is what the adapter child costs in that run (its package work plus the
SDK's protocol path), without waiting on the harness. Each reply line is compared with
the recorded one (as JSON); mismatches mean the replay is not faithful (exit 1).

  scripts/child-replay.py DIR target/hermes-venvs/hermes-0.19.0/bin/python adapters/hermes/hermes_batch.py

`--profile FILE` runs the adapter under cProfile (`python -m cProfile -o FILE`, the
adapter's command must start with its interpreter). `--sdk-split` times the SDK's
protocol path in the child (`time.process_time` around `_read`, `Conversation.request`,
`Conversation.reply` and `_send`, the summarize calls' I/O included) and prints it beside
the child's CPU; the rest is the start-up and the handlers (the package). Only a `--jobs 1` record is one
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


# Run as `PYTHON -c SPLIT_BOOT OUT SDK_DIR ADAPTER.py ARGS...`: imports the SDK from
# SDK_DIR (this checkout's python/, the module the adapters' `protocol` shim loads),
# wraps its protocol path with CPU timers, runs the adapter as __main__, writes the
# seconds to OUT at exit.
SPLIT_BOOT = r"""
import atexit, json, runpy, sys, time
out, sdk, adapter = sys.argv[1], sys.argv[2], sys.argv[3]
sys.argv = sys.argv[3:]
sys.path.insert(0, sdk)
from compactsim import protocol
spent = {"read": 0.0, "request": 0.0, "reply": 0.0, "send": 0.0}
def timed(key, f):
    def g(*a, **k):
        t = time.process_time()
        try:
            return f(*a, **k)
        finally:
            spent[key] += time.process_time() - t
    return g
protocol._read = timed("read", protocol._read)
protocol._send = timed("send", protocol._send)
protocol.Conversation.request = timed("request", protocol.Conversation.request)
protocol.Conversation.reply = timed("reply", protocol.Conversation.reply)
atexit.register(lambda: json.dump(spent, open(out, "w")))
runpy.run_path(adapter, run_name="__main__")
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("record", help="a --record directory of a --jobs 1 run")
    ap.add_argument("command", nargs="+", help="the adapter command, e.g. PYTHON ADAPTER.py")
    ap.add_argument("--profile", help="write a cProfile of the child here")
    ap.add_argument("--sdk-split", action="store_true",
                    help="time the SDK's protocol path in the child (PYTHON ADAPTER.py only)")
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.record, "seed-*-case-*.jsonl")), key=case_number)
    if not files:
        sys.exit("no seed-*-case-*.jsonl in %s" % a.record)
    requests, replies = streams(files)
    command = list(a.command)
    split = None
    if a.profile:
        command[1:1] = ["-m", "cProfile", "-o", a.profile]
    elif a.sdk_split:
        if len(command) < 2 or not command[1].endswith(".py"):
            sys.exit("--sdk-split needs the command PYTHON ADAPTER.py [ARGS...]")
        split = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
        sdk = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python")
        command[1:1] = ["-c", SPLIT_BOOT, split, sdk]
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
    if split:
        try:
            with open(split) as f:
                spent = json.load(f)
            print("SDK path CPU %.2f s: read %.2f, request %.2f, reply %.2f, send %.2f"
                  % (sum(spent.values()), spent["read"], spent["request"], spent["reply"],
                     spent["send"]))
        except (OSError, ValueError, KeyError) as e:
            print("SDK path: no split written (%s)" % e)
        finally:
            os.unlink(split)
    print("mismatches: %d replies" % mismatches)
    sys.exit(1 if mismatches or child.returncode else 0)


if __name__ == "__main__":
    main()
