"""Write a compactsim adapter as one function (or a small class) over plain message dicts.

Standard library only. The SDK speaks the stdio protocol (`compactsim.protocol`: hello,
capabilities, protocol 2 deltas, summarizer calls); the user writes the compaction:

    from compactsim.sdk import run

    def compact(messages, ctx):
        old, recent = messages[1:-4], messages[-4:]
        if not old:
            return messages
        text = ctx.summarize(prompt="\\n".join(m["content"] or "" for m in old))
        return messages[:1] + [{"role": "user", "content": text,
                                "_compressed_summary": True}] + recent

    run(compact)

`compact(messages, ctx)` gets a fresh copy of the transcript (a list of chat message
dicts, harness keys such as `_compactsim_id` included) and returns the new transcript;
rows it keeps may be returned as they were given. A class instance works too: its
`micro_pass(messages, ctx)` and/or `batch_pass(messages, ctx)` are the passes,
`restart()` drops its state before each case, and the hooks it defines
(`cooling_down(ctx)`, `fallback_streak(ctx)`, `usage(prompt_tokens, ctx)`) are declared
in the hello (adapters/PROTOCOL.md, "Hooks").

Errors: `ctx.summarize` raises `SummaryError` when the harness's summarizer fails (its
`error` is the fault class, `length` for a truncated answer, `empty` for an empty one);
a pass that lets it escape leaves the transcript unchanged, labelled `aborted` (batch) or
`summarize_failed` (micro). `CompactionError` raised by the compactor becomes the
protocol's `error` with its message; any other exception is a crash in user code,
reported as an `error` carrying the traceback (also written to stderr, which the harness
quotes). Either fails the case as an adapter failure (exit 4).
"""

import sys
import traceback

from . import protocol
from .protocol import HERMES_POLICIES, REFERENCE_POLICIES, SummaryError  # noqa: F401

PASSES = protocol.PASSES
HOOKS = ("cooling_down", "fallback_streak", "usage")
# Lines of a user crash's traceback quoted in the protocol error (the whole one goes to
# stderr).
TRACEBACK_LINES_MAX = 40


class CompactionError(Exception):
    """Raised by a compactor that cannot handle a pass: the protocol's `error`."""


class Context:
    """What a pass knows besides the transcript: the request's fields, the summarizer,
    and the labels the pass returns (printed in reports, never trusted)."""

    def __init__(self, request, summarize):
        self.request = request
        self.kind = request["type"]
        self.turn = request.get("turn", 0)
        self.now_ms = request.get("now_ms", 0)
        self.config = request.get("config") or {}
        self.context_window_tokens = request.get("context_window_tokens", 0)
        self.trigger = request.get("trigger")
        self.force = bool(request.get("force"))
        self.labels = {}
        self._summarize = summarize

    def summarize(self, prompt=None, messages=None, max_tokens=None, purpose=None):
        """The summary text the harness's summarizer answers for `prompt` (a string)
        and/or `messages` (chat messages); raises `SummaryError` on a failed call, a
        `length` finish or an empty answer. `purpose="condense"`: the prompt is a
        previous summary to re-summarize alone, shorter (adapters/PROTOCOL.md)."""
        extra = {} if purpose is None else {"purpose": purpose}
        text, finish = self._summarize(prompt=prompt, messages=messages, max_tokens=max_tokens,
                                       **extra)
        if finish != "stop":
            raise SummaryError(finish, "the summary ended with finish_reason %r" % finish)
        if not text:
            raise SummaryError("empty", "the summarizer answered an empty text")
        return text


def capabilities_of(compactor, passes, hooks, policies, trigger, trigger_passes):
    """The hello's `capabilities` (adapters/PROTOCOL.md, "Adapter → harness")."""
    caps = {kind: kind in passes for kind in PASSES}
    caps["hooks"] = list(hooks)
    if policies:
        caps["policies"] = policies
    if trigger is not None:
        caps["trigger"] = trigger
    if trigger_passes is not None:
        caps["trigger_passes"] = list(trigger_passes)
    return caps


def _where(req):
    return "%s %d (turn %s)" % (req["type"], req["id"], req.get("turn", "?"))


def _crash_message(req, exc):
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    text = "".join(lines)
    sys.stderr.write("compactsim.sdk: crash in user code during %s\n%s" % (_where(req), text))
    sys.stderr.flush()
    quoted = "".join(text.splitlines(True)[-TRACEBACK_LINES_MAX:])
    return "crash in user code during %s: %s: %s\n%s" % (
        _where(req), type(exc).__name__, exc, quoted)


class _Failed(Exception):
    """A request answered with the protocol's `error` (its message)."""


def handler(fn):
    """`fn(messages, ctx) -> messages` as a `protocol.serve` handler `(request, summarize)
    -> reply fields` (what `run` serves; for adapters written on `serve` directly)."""
    def handle(req, summarize):
        ctx = Context(req, summarize)
        messages = req["transcript"]
        try:
            out = fn(messages, ctx)
        except SummaryError as e:
            outcome = "aborted" if req["type"] == "batch_pass" else "summarize_failed"
            return {"transcript": messages,
                    "labels": dict(ctx.labels, outcome=outcome, summary_error=e.error)}
        except CompactionError as e:
            raise _Failed("%s: %s" % (_where(req), e))
        except Exception as e:  # noqa: BLE001 (a crash in user code is reported, not fatal)
            raise _Failed(_crash_message(req, e))
        if not isinstance(out, list) or not all(isinstance(m, dict) for m in out):
            raise _Failed("%s: the compactor returned %s, not a list of message dicts"
                          % (_where(req), type(out).__name__))
        reply = {"transcript": out}
        if ctx.labels:
            reply["labels"] = ctx.labels
        return reply
    return handle


def _hook_handler(compactor):
    def handle(req, summarize):
        name = req["hook"]
        ctx = Context(req, summarize)
        try:
            if name == "usage":
                compactor.usage(int(req["args"]["prompt_tokens"]), ctx)
                return {}
            return {"value": getattr(compactor, name)(ctx)}
        except CompactionError as e:
            raise _Failed("hook %s %d: %s" % (name, req["id"], e))
        except Exception as e:  # noqa: BLE001
            raise _Failed(_crash_message(req, e))
    return handle


def _restart_handler(compactor):
    def handle(req, summarize):
        reset = getattr(compactor, "restart", None)
        if reset is not None:
            try:
                reset()
            except Exception as e:  # noqa: BLE001
                raise _Failed(_crash_message(req, e))
        return {}
    return handle


def _answering_errors(fn):
    """`fn`, a `_Failed` turned into the protocol's error reply (`serve` sends a
    reply without a transcript as it is, under both protocol versions)."""
    def handle(req, summarize):
        try:
            return fn(req, summarize)
        except _Failed as e:
            return {"type": "error", "message": str(e)}
    return handle


def run(compactor, name="compactsim-sdk-adapter", version="0.0.0", passes=None,
        policies=None, trigger=None, trigger_passes=None, store=None):
    """Serves `compactor` on stdin/stdout until the harness closes stdin.

    `compactor`: a function `(messages, ctx) -> messages` (serves `passes`, default
    batch passes only) or an object with `micro_pass` and/or `batch_pass` methods (its
    passes; `passes` ignored), optional `restart()` and hook methods. `policies`: the
    hello's `capabilities.policies` (PROTOCOL.md, "Policies"; default none: judged by the
    universal invariants only). `trigger`, `trigger_passes`: the efficacy promise
    (PROTOCOL.md, "Efficacy"; default the context window). `store`: a handler
    `(request, summarize) -> {"value": ...}` of the gateway store's requests (PROTOCOL.md,
    "Gateway store"), declared as `capabilities.store`."""
    if callable(compactor) and not any(hasattr(compactor, k) for k in PASSES):
        served = tuple(passes or ("batch_pass",))
        unknown = [k for k in served if k not in PASSES]
        if unknown:
            raise ValueError("unknown passes %r (known: %r)" % (unknown, PASSES))
        handlers = {k: handler(compactor) for k in served}
        hooks = ()
    else:
        served = tuple(k for k in PASSES if callable(getattr(compactor, k, None)))
        if not served:
            raise ValueError("%r has neither micro_pass nor batch_pass" % (compactor,))
        handlers = {k: handler(getattr(compactor, k)) for k in served}
        hooks = tuple(h for h in HOOKS if callable(getattr(compactor, h, None)))
        if hooks:
            handlers["hook"] = _hook_handler(compactor)
    handlers["restart"] = _restart_handler(compactor)
    caps = capabilities_of(compactor, served, hooks, policies, trigger, trigger_passes)
    if store is not None:
        caps["store"] = "gateway"
        handlers["store"] = store
    # Looked up at call time: a fixture may wrap `protocol.serve` (max_tokens.py).
    protocol.serve(name, version, caps, {k: _answering_errors(h) for k, h in handlers.items()})
