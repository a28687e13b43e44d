"""The batch pass of the reference adapter: one Hermes `compress()` (hermes-domain §2.3,
era B) without the tool-output prune and without the fallback summary. Without the
prune it summarizes other rows than the Rust reference on a window over the input cap
(tool outputs there stay whole, so fewer rows fit): a study's batch figures differ.

- Head: the system row plus `protect_first_n` rows, decayed to the system row alone
  once this process compacted or a summary sits in the restart-probe window (#11996).
- Window: the token-budget tail, then the anchors: the newest user row that holds a
  person's words stays verbatim (if it starts the window, the window starts after its
  pair, #22523), so does the newest visible reply (#29824), and the tail never starts on
  that user row (the summary is never merged into it).
- Summary: one call whose prompt holds the bodies of the summaries it supersedes (every
  summary row up to the window end and the batch summaries in the tail) and the own text
  of the window rows under Hermes's 160,000-character input cap, so it is cumulative.
  A failed call aborts the pass and pauses automatic compaction (30 s after a dropped
  connection, 60 s after anything else), answered through the `cooling_down` hook.
- Assembly: head + summary + tail, with every superseded summary gone (a summary merged
  into a row leaves that row's own text; user rows a dropped summary separated are
  merged; a micro marker in the tail is not superseded and stays). The role follows the neighbour rule; the first visible row, and the summary
  when no user row survives, is `user`; when the role collides with the first tail row
  and may not flip, the summary is merged in front of that row's text.

State (compactions done, the cooldown) is volatile: `restart` clears it.
"""

from protocol import SummaryError
from compactsim.sdk import handler  # the SDK beside protocol (python/)
from window import SEP, align_backward, first_non_system, head_end, is_summary, tail_start

PREFIX = "[CONTEXT COMPACTION] Earlier conversation, summarized:"
END_MARKER = ("--- END OF CONTEXT SUMMARY \u2014 respond to the message below, "
              "not the summary above ---")
# compress() needs more than head + this many middle rows + one tail row.
MIDDLE_MESSAGES_MIN = 3
# Rows past protect_first_n that the restart probe looks at for a summary.
RESTART_PROBE_EXTRA_ROWS = 4
# Hermes's serialization caps (the Rust reference's `summary::input`): a row counts at
# most this many characters (text and tool-call arguments, these capped themselves) plus
# its label; a block over the whole cap keeps the rows that start in its first 45 % or
# in its last 55 %, and the rows between reach no summarizer (their facts are lost).
MESSAGE_INPUT_MAX_CHARS = 6_000
ARGUMENTS_INPUT_MAX_CHARS = 1_500
ROW_LABEL_CHARS = 20
INPUT_MAX_CHARS = 160_000
INPUT_HEAD_SHARE_PER_MILLE = 450
# Pause of automatic compaction after a failed summary, by failure.
COOLDOWN_AFTER_DROPPED_CONNECTION_MS = 30_000
COOLDOWN_AFTER_FAILURE_MS = 60_000


def split_summary(m):
    """(body, own text) of a row. A row this adapter wrote holds PREFIX, the body, the end
    marker and then any text of the row it was merged into; another summary row (a micro
    marker) is body throughout; any other row is own text throughout."""
    text = m.get("content") or ""
    if not is_summary(m):
        return "", text
    if text.startswith(PREFIX + SEP):
        text = text[len(PREFIX + SEP):]
    cut = SEP + END_MARKER
    if cut in text:
        body, rest = text.split(cut, 1)
        return body, rest[len(SEP):] if rest.startswith(SEP) else rest
    return text, ""


def holds_user_words(m):
    return m["role"] == "user" and bool(split_summary(m)[1])


def is_visible_reply(m):
    return m["role"] == "assistant" and not is_summary(m) and bool(m.get("content"))


def last_index(msgs, pred):
    return max((i for i, m in enumerate(msgs) if pred(m)), default=None)


def pair_end(msgs, u):
    """End of the user row at `u` and the assistant row answering it (with its results)."""
    i = u + 1
    if i < len(msgs) and msgs[i]["role"] == "assistant":
        i += 1
        while i < len(msgs) and msgs[i]["role"] == "tool":
            i += 1
    return i


def window(msgs, head, cfg):
    """[start, end): the rows to summarize (maybe empty)."""
    start, end = head, tail_start(msgs, head, cfg["tail_budget_tokens"], cfg["protect_last_n"])
    u = last_index(msgs, holds_user_words)
    if u is not None and start <= u < end:
        if u == start:
            start = pair_end(msgs, u)
        else:
            end = u
    v = last_index(msgs, is_visible_reply)
    if v is not None and start <= v < end:
        end = v
    if u == end and end > start + 1:
        candidate = align_backward(msgs, end - 1, start)
        if candidate > start and msgs[candidate]["role"] != "user":
            end = candidate
    return start, align_backward(msgs, end, start)


def own_row(m):
    """The row without its summary: None for a row that is summary only."""
    if not is_summary(m):
        return m
    own = split_summary(m)[1]
    if not own and not m.get("tool_calls"):
        return None
    row = {k: v for k, v in m.items() if not k.startswith("_compressed_summary")
           and k != "_micro_compact_marker"}
    row["content"] = own
    return row


def is_batch_summary(m):
    return bool(m.get("_compressed_summary")) and not m.get("_micro_compact_marker")


def without_summaries(rows, drops=is_summary):
    """`rows` with every summary `drops` picks gone; user rows a dropped summary
    separated merge."""
    out, dropped = [], False
    for m in rows:
        row = own_row(m) if drops(m) else m
        if row is None:
            dropped = True
            continue
        if dropped and row["role"] == "user" and out and out[-1]["role"] == "user":
            prev = dict(out[-1])
            prev["content"] = (prev.get("content") or "") + SEP + (row.get("content") or "")
            out[-1] = prev
        else:
            out.append(row)
        dropped = False
    return out


def placement(head, tail):
    """The summary's role, or "merge" (in front of the first tail row's text)."""
    head_last = head[-1]["role"] if head else None
    first_visible = head_last in (None, "system")
    forced = first_visible or not any(m["role"] == "user" for m in head + tail)
    role = "user" if forced or head_last in ("assistant", "tool") else "assistant"
    tail_first = tail[0]["role"] if tail else None
    if tail_first != role:
        return role
    flipped = "assistant" if role == "user" else "user"
    if not forced and head_last != flipped:
        return flipped
    return "merge"


class Batch:
    def __init__(self):
        self.restart()

    def restart(self):
        self.compactions = 0
        self.cooldown_until_ms = 0

    def cooling_down(self, now_ms):
        return now_ms < self.cooldown_until_ms

    def head(self, msgs, protect_first_n):
        first = first_non_system(msgs)
        probe = msgs[first:first + protect_first_n + RESTART_PROBE_EXTRA_ROWS]
        decayed = self.compactions > 0 or any(is_summary(m) for m in probe)
        return head_end(msgs, 0 if decayed else protect_first_n)

    def pass_(self, req, summarize):
        """The pass as a `protocol.serve` handler."""
        return handler(self.compact)(req, summarize)

    def compact(self, msgs, ctx):
        """A batch pass (compactsim.sdk): the new transcript; its labels in `ctx.labels`."""
        cfg, now_ms = ctx.config, ctx.now_ms
        if ctx.force:
            self.cooldown_until_ms = 0
        head = self.head(msgs, cfg["protect_first_n"])
        if len(msgs) <= head + MIDDLE_MESSAGES_MIN + 1:
            return labelled(ctx, msgs, outcome="too_few_messages")
        start, end = window(msgs, head, cfg)
        if start >= end:
            return labelled(ctx, msgs, outcome="nothing_to_compress")
        previous = [split_summary(m)[0] for m in msgs[first_non_system(msgs):end] if is_summary(m)]
        previous += [split_summary(m)[0] for m in msgs[end:] if is_batch_summary(m)]
        own = input_texts(msgs[start:end])
        if not any(own) and not any(m.get("tool_calls") for m in msgs[start:end]):
            return labelled(ctx, msgs, outcome="nothing_new")
        if self.cooling_down(now_ms):
            return labelled(ctx, msgs, outcome="aborted", reason="cooldown")
        prompt = SEP.join(p for p in previous + own if p)
        text, finish = self.call(ctx.summarize, prompt)
        if not text or finish != "stop":
            pause = (COOLDOWN_AFTER_DROPPED_CONNECTION_MS if finish == "network"
                     else COOLDOWN_AFTER_FAILURE_MS)
            self.cooldown_until_ms = now_ms + pause
            return labelled(ctx, msgs, outcome="aborted", cooldown_until_ms=self.cooldown_until_ms)
        self.cooldown_until_ms = 0
        self.compactions += 1
        out = assemble(msgs, start, end, text)
        for m in out:
            m.pop("_db_persisted", None)
        return labelled(ctx, out, outcome="compacted")

    @staticmethod
    def call(summarize, prompt):
        """(text, "stop") or ("", the failure: error class, `length` or `empty`). No
        `max_tokens`: the output cap must never truncate a summary (0.19.0 sends none
        either)."""
        try:
            return summarize(prompt=prompt), "stop"
        except SummaryError as e:
            return "", e.error


def input_texts(rows):
    """The own texts of the window `rows` that reach the summarizer under the block cap
    (`INPUT_MAX_CHARS`, as the Rust reference's `summary::input`); a summary row with no
    own text and no tool call is no input row."""
    texts, sizes = [], []
    for m in rows:
        own = split_summary(m)[1]
        calls = m.get("tool_calls") or []
        if is_summary(m) and not own and not calls:
            continue
        call_chars = sum(len(c["function"]["name"])
                         + min(len(c["function"]["arguments"]), ARGUMENTS_INPUT_MAX_CHARS)
                         for c in calls)
        texts.append(own)
        sizes.append(min(len(own) + call_chars, MESSAGE_INPUT_MAX_CHARS) + ROW_LABEL_CHARS)
    total = sum(sizes)
    if total <= INPUT_MAX_CHARS:
        return texts
    head_chars = INPUT_MAX_CHARS * INPUT_HEAD_SHARE_PER_MILLE // 1000
    tail_from = total - (INPUT_MAX_CHARS - head_chars)
    kept, offset = [], 0
    for text, size in zip(texts, sizes):
        if offset < head_chars or offset >= tail_from:
            kept.append(text)
        offset += size
    return kept


def labelled(ctx, msgs, **labels):
    """`msgs`, the pass's labels set."""
    ctx.labels.update(labels)
    return msgs


def assemble(msgs, start, end, text):
    """Head + summary + tail, every superseded summary gone."""
    system = first_non_system(msgs)
    head = msgs[:system] + without_summaries(msgs[system:start])
    # Only batch summaries leave the tail (their bodies are in the prompt); a micro
    # marker there is no input of this summary and stays (the Rust reference's
    # without_stale_summaries), else its facts would be in no summary.
    tail = without_summaries(msgs[end:], drops=is_batch_summary)
    body = PREFIX + SEP + text + SEP + END_MARKER
    role = placement(head, tail)
    if role != "merge":
        return head + [{"role": role, "content": body, "_compressed_summary": True}] + tail
    first = dict(tail[0])
    first["content"] = body + SEP + (first.get("content") or "")
    first["_compressed_summary"] = True
    if first["role"] == "user" or first.get("_compressed_summary_has_user_turn"):
        first["_compressed_summary_has_user_turn"] = True
    return head + [first] + tail[1:]
