"""Where an adapter child's CPU goes (a measuring aid, off unless COMPACTSIM_PROFILE_DIR
is set): the child runs under cProfile and, after its replies, writes `DIR/<pid>.prof`
(pstats) and `DIR/<pid>.cpu` (JSON: the process's CPU seconds at its hello reply, at its
store `open` reply and now, less the writing of these files, and the requests it
answered by kind). A child killed at a crash point leaves the files of its last reply. A
gateway fork server's worker (fork_server.py) counts from its fork (`forked`). The
profiler's own overhead stays in: read the CPU seconds of an unprofiled run for totals,
the profile for shares. Sum them with `profile_report.py DIR`.

  COMPACTSIM_PROFILE_DIR=/tmp/prof target/release/compactsim run --strategy gateway \\
    --compactor external --adapter '… adapters/hermes/hermes_gateway.py' --cases 2 --jobs 1
"""

import cProfile
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "reference"))
import protocol  # noqa: E402

# The profile is written after the first reply and every this many replies (the CPU
# file after every reply): the profile of a killed child lacks at most its last replies.
PROF_EVERY_REPLIES = 20

_ME = {}


def _fresh(out_dir):
    _ME.update(base=os.path.join(out_dir, str(os.getpid())), prof=cProfile.Profile(),
               state={"hello_cpu_s": None, "open_cpu_s": None, "requests": {},
                      "last": None, "dump_cpu_s": 0.0, "replies": 0,
                      "cpu_at_start_s": time.process_time()})


def start(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    _fresh(out_dir)
    read, send = protocol._read, protocol._send

    def read_noting():
        req = read()
        if req is not None and req.get("type") != "summary":
            kind = req.get("type")
            if kind == "store":
                kind = "store " + str(req.get("op"))
            _ME["state"]["last"] = kind
        return req

    def send_and_dump(obj):
        send(obj)
        if obj.get("type") not in ("hello", "result", "error"):
            return
        state, prof = _ME["state"], _ME["prof"]
        prof.disable()
        begun = time.process_time()
        now = begun - state["dump_cpu_s"]
        kind = state["last"] or "hello"
        if kind == "hello" and state["hello_cpu_s"] is None:
            state["hello_cpu_s"] = now
        if kind == "store open" and state["open_cpu_s"] is None:
            state["open_cpu_s"] = now
        state["requests"][kind] = state["requests"].get(kind, 0) + 1
        state["replies"] += 1
        # Written whole then renamed: a kill mid-write leaves the previous files.
        base = _ME["base"]
        if state["replies"] % PROF_EVERY_REPLIES == 1:
            prof.dump_stats(base + ".prof.tmp")
            os.replace(base + ".prof.tmp", base + ".prof")
        with open(base + ".cpu.tmp", "w") as f:
            json.dump(dict(state, cpu_s=now), f)
        os.replace(base + ".cpu.tmp", base + ".cpu")
        state["dump_cpu_s"] += time.process_time() - begun
        prof.enable()

    protocol._read, protocol._send = read_noting, send_and_dump
    _ME["prof"].enable()


def forked():
    """In a fork server's worker: a profile and CPU count of its own."""
    if _ME:
        _ME["prof"].disable()
        _fresh(os.path.dirname(_ME["base"]))
        _ME["prof"].enable()
