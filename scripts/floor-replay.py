#!/usr/bin/env python3
"""The floor: replays the requests of a recorded run (`compactsim run ... --record DIR`)
straight into an adapter's handlers, in this one Python process, with no harness and no
pipe. What it costs is the package's own work on those requests; `compactsim run` on
the same cases costs that plus the harness and the protocol.

  PY=target/hermes-venvs/hermes-iot-0.22.2.post1/bin/python
  $PY scripts/floor-replay.py adapters/hermes/hermes_micro.py DIR

Run it with the adapter's own interpreter (its venv). The adapter module is imported as
it runs (its `serve(...)` call is intercepted to take the handlers), each case's record
is decoded up front (protocol 1 or 2 records; the decoding is not timed), then every
`to_adapter` request but `hello` and `summary` is handed to its handler; a `summarize`
the handler makes is answered with the recorded `summary` (an error one raises
`SummaryError`). Only that loop is timed, with `time.process_time()` (CPU of this
process); the decoded records are frozen out of the garbage collector's scans first
(`gc.freeze()`: a child holds one transcript, not every request of the run).
Afterwards each reply is compared with the recorded `result` (transcript as the harness
reads it, value, labels) and each summarize call with the recorded one: mismatches mean
the replay is not faithful and are counted (exit 1 if any).
"""

import argparse
import gc
import glob
import json
import os
import re
import runpy
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "adapters", "reference"))
import protocol  # noqa: E402  (the module the adapters import: one object)

# Requests per case and summarize calls per request this replay accepts (a record
# holding more is not one compactsim writes).
REQUESTS_PER_CASE_MAX = 100_000
SUMMARIZE_CALLS_MAX = 64


class _Served(Exception):
    pass


def load_handlers(adapter_path):
    """Runs the adapter module up to its serve(...) call and returns its handlers."""
    got = {}

    def capture(name, version, capabilities, handlers, conversation=None):
        got["handlers"] = handlers
        raise _Served()

    protocol.serve = capture
    sys.argv = [adapter_path]
    try:
        runpy.run_path(adapter_path, run_name="__main__")
    except _Served:
        return got["handlers"]
    sys.exit("%s never called serve(...)" % adapter_path)


class Step:
    """One request with the summary answers it got and the recorded reply."""

    __slots__ = ("req", "answers", "asked", "reply")

    def __init__(self, req):
        self.req, self.answers, self.asked, self.reply = req, [], [], None


def decode(path):
    """The steps of one record file, transcripts whole (protocol 2 edits applied)."""
    conv = protocol.Conversation()
    steps, current = [], None
    with open(path) as f:
        for n, line in enumerate(f, 1):
            rec = json.loads(line)
            msg = rec.get("msg")
            if rec["dir"] == "to_adapter":
                kind = msg["type"]
                if kind == "hello":
                    conv.hello(msg)
                elif kind == "summary":
                    current.answers.append(msg)
                else:
                    req, _ = conv.request(msg)
                    current = Step(req)
                    steps.append(current)
                    if len(steps) > REQUESTS_PER_CASE_MAX:
                        sys.exit("%s:%d: more than %d requests" % (path, n, REQUESTS_PER_CASE_MAX))
            elif rec["dir"] == "from_adapter" and msg is not None and current is not None:
                if msg["type"] == "summarize":
                    current.asked.append(msg)
                elif msg["type"] in ("result", "error"):
                    current.reply = resolve_reply(conv, current.req, msg)
    # The held transcripts were for decoding; each request is handed out once.
    return steps


def resolve_reply(conv, req, msg):
    """The recorded reply with its transcript whole (protocol 2 edits applied)."""
    msg = dict(msg)
    if "edits" in msg:
        held = conv.held.apply(msg.pop("edits"), msg.pop("digest"))
        conv.held = held
        msg["transcript"] = held.rows
    elif "transcript" in msg and conv.protocol >= protocol.PROTOCOL_DELTAS \
            and req["type"] in protocol.PASSES:
        conv.held = protocol.Held(protocol.canonical_row(r) for r in msg["transcript"])
    return msg


def replay(handlers, cases):
    """Hands every request to its handler; returns the replies (the timed part)."""
    out = []
    for steps in cases:
        replies = []
        for step in steps:
            answers, asked = iter(step.answers), []

            def summarize(prompt=None, messages=None, max_tokens=None,
                          _answers=answers, _asked=asked):
                _asked.append((prompt, messages, max_tokens))
                ans = next(_answers)
                if "error" in ans:
                    raise protocol.SummaryError(ans["error"], ans["message"])
                return ans["text"], ans["finish_reason"]

            handler = handlers.get(step.req["type"])
            try:
                replies.append((handler(step.req, summarize), asked))
            except Exception as e:  # a handler that fails: the replay of the case ends
                replies.append((e, asked))
                break
        out.append(replies)
    return out


def same_reply(step, got):
    """Whether `got` (a handler's reply fields) is the recorded reply."""
    want = step.reply
    if isinstance(got, Exception) or want is None or want["type"] != "result":
        return False
    got = json.loads(json.dumps(got))
    if "transcript" in got:
        got["transcript"] = [protocol.canonical_row(r) for r in got["transcript"]]
    if "transcript" in want:
        want = dict(want, transcript=[protocol.canonical_row(r) for r in want["transcript"]])
    keys = ("transcript", "value", "labels")
    return all(got.get(k, {} if k == "labels" else None)
               == want.get(k, {} if k == "labels" else None) for k in keys)


def same_asks(step, asked):
    want = [(m.get("prompt"), m.get("messages"), m.get("max_tokens")) for m in step.asked]
    return json.loads(json.dumps(asked)) == json.loads(json.dumps(want))


def case_number(path):
    m = re.search(r"case-(\d+)(?:\.run-(\d+))?\.jsonl$", path)
    return (int(m.group(1)), int(m.group(2) or 0)) if m else (1 << 62, 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("adapter", help="the adapter's Python file, e.g. adapters/hermes/hermes_micro.py")
    ap.add_argument("record", help="a --record directory")
    ap.add_argument("--no-replay", action="store_true",
                    help="decode the record and load the handlers, replay nothing: the rest of "
                         "this process, whose instructions (valgrind) a whole-process count of "
                         "the floor less this one leaves to the replay loop")
    ap.add_argument("--no-check", action="store_true",
                    help="replay without comparing the replies with the record afterwards (for "
                         "that whole-process instruction count: the loop and nothing after it)")
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.record, "seed-*-case-*.jsonl")), key=case_number)
    if not files:
        sys.exit("no seed-*-case-*.jsonl in %s" % a.record)
    cases = [decode(f) for f in files]
    handlers = load_handlers(os.path.abspath(a.adapter))
    # The decoded records (every request of every case, held at once) are the replay's
    # own data, which no child holds: frozen out of the garbage collector's scans, so
    # that its full collections do not bill the package for them.
    gc.collect()
    gc.freeze()
    if a.no_replay:
        print("cases %d, requests %d: decoded, not replayed" % (len(cases), sum(map(len, cases))))
        return
    start = time.process_time()
    replies = replay(handlers, cases)
    cpu_s = time.process_time() - start
    if a.no_check:
        print("floor CPU %.2f s (replay loop, time.process_time); replies not compared" % cpu_s)
        return
    requests = sum(len(c) for c in cases)
    summaries = sum(len(s.answers) for c in cases for s in c)
    replayed = sum(len(r) for r in replies)
    reply_mismatches = ask_mismatches = 0
    for steps, got in zip(cases, replies):
        for step, (reply, asked) in zip(steps, got):
            reply_mismatches += not same_reply(step, reply)
            ask_mismatches += not same_asks(step, asked)
    not_replayed = requests - replayed
    print("cases %d, requests %d (replayed %d), summaries %d" % (len(cases), requests, replayed,
                                                                 summaries))
    print("floor CPU %.2f s (replay loop, time.process_time)" % cpu_s)
    print("mismatches: %d replies, %d summarize calls, %d requests not replayed"
          % (reply_mismatches, ask_mismatches, not_replayed))
    sys.exit(1 if reply_mismatches or ask_mismatches or not_replayed else 0)


if __name__ == "__main__":
    main()
