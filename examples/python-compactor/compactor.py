"""An example compactor: plain functions over OpenAI-style message dicts, no compactsim
import. Everything before the newest user message (but the system prompt) is folded into
a summary written in front of that message; what follows it stays as it is.

`compact_with_planted_bug` is the same compactor with a bug planted on purpose: when the
summarizer fails it drops the old rows anyway, so their facts are lost with no summary
(compactsim's `summary-failure-safe` catches it)."""

SUMMARY_PREFIX = "[Summary of the earlier conversation]"
SEP = "\n\n"
# Fewer rows than this before the newest user message: nothing worth folding.
ROWS_FOLDED_MIN = 2


class SummaryFailed(Exception):
    """The summarizer did not answer."""


def is_summary(m):
    return bool(m.get("_compressed_summary") or m.get("_micro_compact_marker"))


def plan(messages):
    """(head, tail): rows [head, tail) are folded, or None when there is nothing to do."""
    head = 1 if messages and messages[0]["role"] == "system" else 0
    users = [i for i, m in enumerate(messages) if m["role"] == "user" and not is_summary(m)]
    if not users or users[-1] - head < ROWS_FOLDED_MIN:
        return None
    return head, users[-1]


def fold(messages, head, tail, text):
    """The summary goes in front of the newest user message's text (two user rows in a
    row are not a valid chat)."""
    newest = dict(messages[tail], _compressed_summary=True, _compressed_summary_has_user_turn=True)
    newest["content"] = SUMMARY_PREFIX + SEP + text + SEP + (newest.get("content") or "")
    return messages[:head] + [newest] + messages[tail + 1:]


def prompt_of(rows):
    return SEP.join(m.get("content") or "" for m in rows if m.get("content"))


def compact(messages, summarize):
    """The new transcript. `summarize(prompt) -> text` raises SummaryFailed (or the
    harness's own error): the transcript is then left as it was."""
    found = plan(messages)
    if found is None:
        return messages
    head, tail = found
    return fold(messages, head, tail, summarize(prompt_of(messages[head:tail])))


def compact_with_planted_bug(messages, summarize):
    found = plan(messages)
    if found is None:
        return messages
    head, tail = found
    try:
        text = summarize(prompt_of(messages[head:tail]))
    except Exception:  # the planted bug: a failed summary still drops the rows
        return messages[:head] + messages[tail:]
    return fold(messages, head, tail, text)
