"""The adapter side of the compactsim stdio protocol, version 1 (adapters/PROTOCOL.md).

Standard library only. An adapter calls `serve(name, version, capabilities, handlers)`;
each handler gets the request dict and a `summarize(prompt=..., messages=..., max_tokens=...)`
function that asks the harness and returns `(text, finish_reason)` or raises
`SummaryError`.
"""

import json
import sys

PROTOCOL_VERSION = 1

# What Hermes does, as `capabilities.policies` (PROTOCOL.md, "Policies"): the protected
# head of the configured `protect_first_n` rows, the newest reply kept verbatim, 60 s of
# summary-failure cooldown (30 s after a dropped connection), micro passes absorbing one
# exchange at a time, the static fallback summary after a failed call, the prune of old
# tool outputs. An adapter that follows none of these declares nothing and is judged by
# the universal invariants only.
HERMES_POLICIES = {
    "protect_first_n": {},
    "newest_reply_verbatim": {},
    "failure_cooldown": {"ms": 60000, "connection_dropped_ms": 30000},
    "absorb_exchanges": {},
    "static_fallback": {},
    "tool_output_prune": {},
}
# What the reference adapter does: Hermes' policies but the two it leaves out (a failed
# call aborts its pass; it prunes no tool output).
REFERENCE_POLICIES = {k: v for k, v in HERMES_POLICIES.items()
                      if k not in ("static_fallback", "tool_output_prune")}


class SummaryError(Exception):
    """The harness answered a summarize call with an error (a failed LLM call)."""

    def __init__(self, error, message):
        super().__init__(message)
        self.error = error


def _send(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def _read():
    line = sys.stdin.readline()
    if not line:
        return None
    return json.loads(line)


def serve(name, version, capabilities, handlers):
    """Answers requests until stdin closes. `handlers` maps a request type to a function
    (request, summarize) -> reply fields (a dict merged into the `result`)."""
    while True:
        req = _read()
        if req is None:
            return
        kind, rid = req["type"], req["id"]
        if kind == "hello":
            _send({"type": "hello", "id": rid, "protocol": PROTOCOL_VERSION, "name": name,
                   "version": version, "capabilities": capabilities})
            continue
        handler = handlers.get(kind)
        if handler is None:
            _send({"type": "error", "id": rid, "message": "unsupported request " + kind})
            continue
        calls = [0]

        def summarize(prompt=None, messages=None, max_tokens=None, _rid=rid, _calls=calls):
            msg = {"type": "summarize", "id": _rid, "call": _calls[0]}
            if prompt is not None:
                msg["prompt"] = prompt
            if messages is not None:
                msg["messages"] = messages
            if max_tokens is not None:
                msg["max_tokens"] = max_tokens
            _send(msg)
            _calls[0] += 1
            ans = _read()
            if ans is None:
                sys.exit(0)
            if "error" in ans:
                raise SummaryError(ans["error"], ans["message"])
            return ans["text"], ans["finish_reason"]

        reply = {"type": "result", "id": rid}
        reply.update(handler(req, summarize))
        _send(reply)
