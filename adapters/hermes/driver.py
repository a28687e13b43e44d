"""The request handlers shared by the Hermes adapters: one real `ContextCompressor` per
case (a `restart` drops it; the next request builds a fresh one for the case's window),
batch passes through `compress()`, micro passes through `_micro_compact()` where the
package has it, and the compressor's own state reported as labels.

One driver for every release of the version matrix: what differs between releases
(constructor arguments, `compress(force=)`, the summary flag, where micro-compaction
lives, failure recording) is read from the package by `release.Release`; the behaviour
is the release's own, never patched.
"""

import math
import os

import fallback_text
import marker_template
import mutants
import offline
from protocol import HERMES_POLICIES, serve
from release import Release


# The model name every compressor of the driver is built with (the release quotes it in
# a failure reason, hence in its fallback summary: a declared fallback word).
MODEL = "compactsim-fake-model"


def load():
    """The installed release, with its modules patched offline and its static fallback
    text read (call before any pass and before any mutant)."""
    r = Release()
    offline.patch(*r.modules())
    probe = r.cc.ContextCompressor(**r.constructor_kwargs(dict(
        model=MODEL, quiet_mode=True, config_context_length=128_000)))
    r.fallback_text = fallback_text.of(r, probe)
    r.fallback_words = fallback_text.words(r, MODEL)
    r.marker_template = marker_template.of(r)
    r.warm()
    return r


def policies(release, micro=False):
    """Every Hermes policy; `static_fallback` with the release's own fallback text
    (fallback_text.py; for 0.19.0 and iot 0.22.2.post1: the summary prefix and any tail
    text merged before it, the task heading, the latest ask and the "## Goal" sentence,
    agent/context_compressor.py 0.19.0 lines 2064-2068, iot 0.22.2.post1 lines
    3629-3633, then a hole for the rest), and the words its builder writes besides the
    rows' (fallback_text.words); `connection_dropped_aborts` where the release aborts
    after a dropped connection (release.py); `failure_cooldown`'s `empty_output_ms` at the
    short 30 s where the release gives empty content a closed stream's cooldown
    (release.py); for the micro adapter (`micro`),
    `marker_template` with the words the release writes around a micro marker's summary
    where it has them as a method of its own (marker_template.py)."""
    fallback = {"text": release.fallback_text, "words": release.fallback_words}
    if release.connection_dropped_aborts:
        fallback["connection_dropped_aborts"] = True
    out = dict(HERMES_POLICIES, static_fallback=fallback)
    if release.empty_output_short_cooldown:
        cooldown = HERMES_POLICIES["failure_cooldown"]
        out["failure_cooldown"] = dict(cooldown, empty_output_ms=cooldown["connection_dropped_ms"])
    if micro and release.marker_template:
        out["marker_template"] = release.marker_template
    return out


class Driver:
    def __init__(self, release, micro, commit_guard=None):
        # Mutation testing (MUTANTS.md): the fault COMPACTSIM_MUTANT names, if any.
        mutants.apply(release.cc, "micro" if micro else "batch", os.environ)
        self.release = release
        # The gateway's: what `compress_context` keeps of a batch pass before its commit
        # (gateway_real.CommitGuard); None: the pass's result as `compress()` returns it.
        self.commit_guard = commit_guard
        self.cc = release.cc
        self.micro = micro
        self.compressor = None
        self.window = None

    def get(self, req):
        cfg = req["config"]
        window = req["context_window_tokens"] or 128_000
        if self.compressor is None or self.window != window:
            c = self.cc.ContextCompressor(**self.release.constructor_kwargs(dict(
                model=MODEL,
                protect_first_n=cfg.get("protect_first_n", 3),
                protect_last_n=cfg.get("protect_last_n", 20),
                quiet_mode=True,
                config_context_length=window,
                abort_on_summary_failure=bool(cfg.get("abort_on_summary_failure", False)),
            )))
            if self.micro:
                c._micro_compact_enabled = True
                c._micro_compact_every_n_turns = max(1, int(cfg.get("every_n_turns", 1)))
                c._micro_compact_defrag_threshold_tokens = int(
                    cfg.get("defrag_threshold_tokens", 2000))
            self.compressor, self.window = c, window
        return self.compressor

    def run(self, req, summarize, body):
        offline.CURRENT["summarize"] = summarize
        offline.CURRENT["now_ms"] = req.get("now_ms", 0)
        try:
            c = self.get(req)
            # Fresh rows already (decoded from the request, or the SDK's copies of the
            # transcript it holds): the package works on them as they are.
            rows = req["transcript"]
            return c, body(c, rows)
        finally:
            offline.CURRENT["summarize"] = None

    def batch_pass(self, req, summarize):
        def body(c, rows):
            guard = self.commit_guard
            if guard is not None:
                guard.begin(c, rows)
            after = self.release.compress(c, rows, bool(req.get("force")))
            if guard is not None:
                after = guard.end(after)
            return self.release.flag_summaries(after)

        c, after = self.run(req, summarize, body)
        labels = {
            "fallback": bool(getattr(c, "_last_summary_fallback_used", False)),
            "compression_count": getattr(c, "compression_count", None),
            **gate_labels(c),
        }
        if getattr(c, "_last_compress_aborted", False):
            labels["outcome"] = "aborted"
        return {"transcript": [clean(m) for m in after], "labels": labels}

    def micro_pass(self, req, summarize):
        seen = {}

        def body(c, rows):
            # Read the pass's own account: its telemetry outcome and the exchange it
            # skipped after repeated failures (labels; the oracle does not trust them).
            cls = type(c)

            def record_failure(start, end):
                out = cls._record_micro_failure(c, start, end)
                if out == "exchange_skipped":
                    seen["skipped"] = [r["_compactsim_id"] for r in rows[start:end]
                                       if "_compactsim_id" in r]
                return out

            def telemetry(**kw):
                seen["outcome"] = kw.get("outcome")
                return cls._emit_micro_compaction_telemetry(c, **kw)

            def find_exchange(*args, **kw):
                found = cls._find_one_exchange(c, *args, **kw)
                seen["exchange"] = found
                return found

            def inline_telemetry(**kw):
                # A release without `_record_micro_failure` skips inside `_micro_compact`:
                # the skipped rows are the exchange it found in this pass.
                if kw.get("outcome") == "exchange_skipped" and seen.get("exchange"):
                    start, end = seen["exchange"]
                    seen["skipped"] = [r["_compactsim_id"] for r in rows[start:end]
                                       if "_compactsim_id" in r]
                return telemetry(**kw)

            if self.release.records_micro_failure:
                c._record_micro_failure = record_failure
                c._emit_micro_compaction_telemetry = telemetry
            else:
                c._find_one_exchange = find_exchange
                c._emit_micro_compaction_telemetry = inline_telemetry
            return self.release.flag_summaries(c._micro_compact(rows))

        c, after = self.run(req, summarize, body)
        labels = {"cursor": getattr(c, "_micro_compact_cursor", None), **gate_labels(c)}
        if seen.get("outcome") in ("absorbed", "defrag", "defrag_failed", "summarize_failed",
                                   "exchange_skipped"):
            labels["outcome"] = seen["outcome"]
        if "skipped" in seen:
            labels["skipped"] = seen["skipped"]
        return {"transcript": [clean(m) for m in after], "labels": labels}

    def restart(self, req, summarize):
        self.compressor = None
        return {}

    def serve(self, what, store=None):
        """Serves the protocol; the hello names the release (`<dist> <what>`, its version).
        `store`: a handler of the gateway store requests (capability `store: "gateway"`)."""
        handlers = {"batch_pass": self.batch_pass, "restart": self.restart}
        if store is not None:
            handlers["store"] = store
        if self.micro:
            handlers["micro_pass"] = self.micro_pass
        serve(f"{self.release.dist} {what}", self.release.version,
              {"micro_pass": self.micro, "batch_pass": True,
               # No hooks: the harness answers `cooling_down` and `fallback_streak` from
               # the pass labels (gate_labels), the same answers (FLOOR.md, "The hooks
               # answered from labels").
               "hooks": [],
               "policies": policies(self.release, self.micro),
               # compactsim's efficacy invariant: Hermes compacts at or below the window,
               # by its batch passes (micro-compaction folds one exchange per turn).
               "trigger": {"window_percent": 100}, "trigger_passes": ["batch_pass"],
               **({"store": "gateway"} if store is not None else {})},
              handlers)


def gate_labels(c):
    """The compressor's state the agent loop gates on, as pass labels: its summary-failure
    cooldown (`cooldown_until_ms`: the least whole millisecond not before the end of
    `_summary_failure_cooldown_until`, the compressor's clock being the case's virtual
    time, offline.py; 0 when none) and its `_fallback_compression_streak`. The driver runs
    the release's code only inside a request, and only a pass runs it on this compressor
    (`restart` drops it, a gateway `store` request builds its own): the state a hook would
    read at any time until the next pass is the one the newest pass labelled. The
    harness's `cooling_down` is `now_ms < cooldown_until_ms`, which for a whole `now_ms`
    is `now_ms < until_s * 1000`."""
    until_s = getattr(c, "_summary_failure_cooldown_until", 0) or 0
    return {"cooldown_until_ms": math.ceil(until_s * 1000) if until_s > 0 else 0,
            "fallback_streak": int(getattr(c, "_fallback_compression_streak", 0) or 0)}


# The keys of a row the protocol reads (chat keys and the harness's metadata).
_ROW_KEYS = frozenset(("role", "content", "tool_calls", "tool_call_id", "_compressed_summary",
                       "_micro_compact_marker", "_compressed_summary_has_user_turn",
                       "_db_persisted", "_compactsim_id"))


def clean(m):
    """The row as the protocol wants it: chat keys and the underscore metadata keys. A row
    that is that already is returned as it is (the SDK then knows a row it handed out)."""
    if m.keys() <= _ROW_KEYS and not isinstance(m.get("content"), list):
        return m
    out = {k: v for k, v in m.items()
           if k in ("role", "content", "tool_calls", "tool_call_id") or k.startswith("_")}
    if isinstance(out.get("content"), list):
        out["content"] = "".join(p.get("text", "") for p in out["content"] if isinstance(p, dict))
    return out
