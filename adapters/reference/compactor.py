"""The reference compactor of compactsim in Python (standard library only): per-turn
micro-compaction into one rolling-summary marker and a Hermes-style batch pass, speaking
the stdio protocol. Its micro pass follows the harness's reference model (hermes-domain
§3) with no historical bug switched on, so the default (micro) suite passes through the
protocol. Its batch pass is a simplified Hermes `compress()` (head decay, token tail with
the newest user and reply anchored, role choice or merge into the tail, failure cooldown
answered through the `cooling_down` hook); it does not model everything the batch
oracle checks (e.g. a summary merged into the tail is not taken back out on the next
compaction), so under `--strategy batch` it fails some cases.

Usage: python3 adapters/reference/compactor.py
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from protocol import SummaryError, serve  # noqa: E402

SEP = "\n\n"
TAIL_FLOOR_MAX = 8
TAIL_SOFT_CEILING = 1.5
TAIL_WALK_OVERHEAD = 10
CALL_ENVELOPE_CHARS = 64
MESSAGES_MIN = 4
MICRO_PREFIX = "[MICRO-COMPACTION SUMMARY] Earlier agent turns, summarized:"


def micro_prefix(cfg):
    """The marker's scaffolding, padded to the `scaffold_tokens` the model declares (the
    Rust reference wraps its summary in exactly that many tokens)."""
    return MICRO_PREFIX.ljust(4 * cfg.get("scaffold_tokens", 0), "-")
BATCH_PREFIX = "[CONTEXT COMPACTION] Earlier conversation, summarized:"


def rough(m):
    chars = len(m.get("content") or "")
    calls = sum(CALL_ENVELOPE_CHARS + len(c["function"]["name"]) + len(c["function"]["arguments"])
                for c in m.get("tool_calls") or [])
    return -(-chars // 4) + -(-calls // 4)


def is_summary(m):
    return bool(m.get("_compressed_summary") or m.get("_micro_compact_marker"))


def head_end(msgs, protect_first_n):
    system = 1 if msgs and msgs[0]["role"] == "system" else 0
    end = min(system + protect_first_n, len(msgs))
    while end < len(msgs) and msgs[end]["role"] == "tool":
        end += 1
    return end


def _walk(msgs, head, ceiling, floor):
    n, cut, acc = len(msgs), len(msgs), 0
    for i in range(n - 1, head - 1, -1):
        t = rough(msgs[i]) + TAIL_WALK_OVERHEAD
        if acc + t > ceiling and n - cut >= floor:
            break
        acc += t
        cut = i
    return cut


def tail_start(msgs, head, budget, protect_last_n):
    n = len(msgs)
    if head >= n:
        return n
    avail = n - head
    floor = min(max(3, min(protect_last_n, TAIL_FLOOR_MAX)), max(3, avail - 2), avail)
    cut = _walk(msgs, head, budget * TAIL_SOFT_CEILING, floor)
    if cut == head:
        cut = _walk(msgs, head, budget, floor)
    if cut <= head:
        # Everything fits: the tail is the message floor (fallback_cut in Hermes).
        cut = min(max(n - floor, head + 1), n)
    while head < cut < n and msgs[cut]["role"] == "tool":
        cut -= 1
    return cut


class Micro:
    """Micro-compaction state: volatile, forgotten on restart."""

    def __init__(self):
        self.restart()

    def restart(self):
        self.cursor = 0
        self.rolling = ""
        self.failures = None
        self.invocations = 0

    def pass_(self, req, summarize):
        cfg, msgs = req["config"], req["transcript"]
        self.invocations += 1
        if (self.invocations - 1) % max(1, cfg.get("every_n_turns", 1)) != 0:
            return {"transcript": msgs, "labels": {"outcome": "cadence"}}
        if len(msgs) < MESSAGES_MIN:
            return {"transcript": msgs, "labels": {"outcome": "no_exchange"}}
        head = head_end(msgs, cfg["protect_first_n"])
        tail = tail_start(msgs, head, cfg["tail_budget_tokens"], cfg["protect_last_n"])
        if not self.rolling:
            markers = [m for m in msgs if m.get("_micro_compact_marker")]
            if markers:
                self.rolling = strip_prefix(markers[-1]["content"] or "", micro_prefix(cfg))
        self.cursor = recover_cursor(msgs, self.cursor, head, tail)
        if self.rolling and -(-len(self.rolling) // 4) >= cfg.get("defrag_threshold_tokens", 1 << 62):
            return self.defrag(cfg, msgs, summarize)
        found = find_exchange(msgs, self.cursor, tail)
        if found is None:
            return {"transcript": msgs, "labels": {"outcome": "no_exchange"}}
        start, end = found
        exchange_text = SEP.join(m.get("content") or "" for m in msgs[start:end])
        prompt = SEP.join(p for p in (self.rolling, exchange_text) if p)
        try:
            text, finish = summarize(prompt=prompt)
        except SummaryError:
            text, finish = "", "error"
        if not text or finish != "stop" or len(text) > len(prompt):
            return {"transcript": msgs, "labels": self.fail(msgs, start, end)}
        marker = {"role": "assistant", "content": micro_prefix(cfg) + SEP + text,
                  "_compressed_summary": True, "_micro_compact_marker": True}
        out = msgs[:start] + [marker] + msgs[end:]
        out = supersede_others(out, start)
        self.cursor = max(i for i, m in enumerate(out) if is_summary(m)) + 1
        self.rolling = text
        self.failures = None
        return {"transcript": out, "labels": {"outcome": "absorbed"}}

    def defrag(self, cfg, msgs, summarize):
        """Re-summarizes the rolling summary alone and rewrites the newest marker in place
        (same id and role); nothing changes on a failed or larger answer."""
        try:
            text, finish = summarize(prompt=self.rolling)
        except SummaryError:
            text, finish = "", "error"
        markers = [i for i, m in enumerate(msgs) if m.get("_micro_compact_marker")]
        if not text or finish != "stop" or len(text) > len(self.rolling) or not markers:
            return {"transcript": msgs, "labels": {"outcome": "defrag_failed"}}
        at = markers[-1]
        marker = dict(msgs[at])
        marker["content"] = micro_prefix(cfg) + SEP + text
        marker.pop("_db_persisted", None)
        self.rolling = text
        return {"transcript": msgs[:at] + [marker] + msgs[at + 1:], "labels": {"outcome": "defrag"}}

    def fail(self, msgs, start, end):
        first = msgs[start].get("_compactsim_id")
        count = self.failures[1] + 1 if self.failures and self.failures[0] == first else 1
        if count >= 3:
            self.cursor, self.failures = end, None
            skipped = [m["_compactsim_id"] for m in msgs[start:end] if "_compactsim_id" in m]
            return {"outcome": "exchange_skipped", "skipped": skipped}
        self.failures = (first, count)
        return {"outcome": "summarize_failed"}


def strip_prefix(text, prefix):
    return text[len(prefix) + len(SEP):] if text.startswith(prefix + SEP) else text


def recover_cursor(msgs, cursor, head, tail):
    if head < cursor < tail:
        return cursor
    for i in range(min(tail, len(msgs)) - 1, head - 1, -1):
        if is_summary(msgs[i]):
            return i + 1
    return head


def is_agent_row(m):
    return m["role"] in ("assistant", "tool") and not is_summary(m)


def find_exchange(msgs, cursor, tail):
    tail = min(tail, len(msgs))
    start = next((i for i in range(cursor, tail)
                  if msgs[i]["role"] == "assistant" and not is_summary(msgs[i])), None)
    if start is None:
        return None
    end = start + 1
    while end < tail and is_agent_row(msgs[end]):
        end += 1
    if end == tail and (end >= len(msgs) or is_agent_row(msgs[end])):
        return None
    return start, end


def supersede_others(msgs, newest):
    """Deletes every micro marker but the new one at `newest`."""
    keep = msgs[newest]
    out = [m for m in msgs if m is keep or not m.get("_micro_compact_marker")]
    return merge_user_neighbours(out, msgs)


def merge_user_neighbours(out, before):
    """Merges user rows that became neighbours when a marker between them left."""
    adjacent_before = {(id(a), id(b)) for a, b in zip(before, before[1:])}
    merged = []
    for m in out:
        prev = merged[-1] if merged else None
        if prev is not None and prev["role"] == "user" and m["role"] == "user" \
                and (id(prev), id(m)) not in adjacent_before:
            prev = dict(prev)
            prev["content"] = (prev.get("content") or "") + SEP + (m.get("content") or "")
            prev.pop("_db_persisted", None)
            merged[-1] = prev
            continue
        merged.append(m)
    return merged


# The summary-failure cooldown of the batch pass (volatile: `restart` clears it).
COOLDOWN = {"until_ms": 0}


def summary_role(msgs, head, tail):
    """The summary's role between the head and the tail: the first visible message must
    be `user`; otherwise the role that alternates with the row before it, flipped if it
    would repeat the row after it; `merge` when no role fits (hermes-domain §2.3)."""
    prev_role = msgs[head - 1]["role"] if head > 0 else None
    next_role = msgs[tail]["role"] if tail < len(msgs) else None
    first_visible = prev_role in (None, "system")
    role = "assistant" if prev_role == "user" else "user"
    if role != next_role:
        return role
    flipped = "assistant" if role == "user" else "user"
    if first_visible or flipped == prev_role:
        return "merge"
    return flipped


def batch_pass(req, summarize):
    cfg, msgs = req["config"], req["transcript"]
    # The head decays once a summary exists (#11996): protect_first_n protects the first
    # compaction only; later ones keep just the system prompt.
    protect = 0 if any(is_summary(m) for m in msgs) else cfg["protect_first_n"]
    head = head_end(msgs, protect)
    if len(msgs) <= head + 3 + 1:
        return {"transcript": msgs, "labels": {"outcome": "too_few_messages"}}
    tail = tail_start(msgs, head, cfg["tail_budget_tokens"], cfg["protect_last_n"])
    # The newest real user message stays verbatim in the tail.
    last_user = max((i for i, m in enumerate(msgs) if m["role"] == "user" and not is_summary(m)),
                    default=None)
    last_reply = max((i for i, m in enumerate(msgs) if m["role"] == "assistant"
                      and not is_summary(m) and m.get("content")), default=None)
    for keep in (last_user, last_reply):
        if keep is not None and keep < tail:
            tail = keep
    if tail <= head:
        return {"transcript": msgs, "labels": {"outcome": "nothing_to_compress"}}
    middle = msgs[head:tail]
    prompt = SEP.join(m.get("content") or "" for m in middle)
    now_ms = req.get("now_ms", 0)
    if now_ms < COOLDOWN["until_ms"] and not req.get("force"):
        return {"transcript": msgs, "labels": {"outcome": "aborted", "reason": "cooldown"}}
    try:
        text, finish = summarize(prompt=prompt, max_tokens=cfg.get("summary_tokens_max"))
    except SummaryError as e:
        text, finish = "", e.error
    if not text or finish != "stop":
        # A failed summary pauses automatic compaction (hermes-domain §2.3): 30 s after
        # a dropped connection, 60 s after anything else.
        pause_ms = 30_000 if finish == "network" else 60_000
        COOLDOWN["until_ms"] = now_ms + pause_ms
        return {"transcript": msgs, "labels": {"outcome": "aborted",
                                               "cooldown_until_ms": COOLDOWN["until_ms"]}}
    COOLDOWN["until_ms"] = 0
    has_user = any(m["role"] == "user" and not is_summary(m) for m in middle)
    summary = {"role": summary_role(msgs, head, tail), "content": BATCH_PREFIX + SEP + text,
               "_compressed_summary": True}
    if has_user:
        summary["_compressed_summary_has_user_turn"] = True
    rest = msgs[tail:]
    if summary["role"] == "merge":
        # Neither role fits between its neighbours: the summary goes in front of the
        # first tail row's text, which keeps its role and calls.
        first = dict(rest[0])
        first["content"] = summary["content"] + SEP + (first.get("content") or "")
        first["_compressed_summary"] = True
        if has_user or first["role"] == "user":
            first["_compressed_summary_has_user_turn"] = True
        rest = [first] + rest[1:]
        summary = None
    out = msgs[:head] + ([summary] if summary else []) + rest
    for m in out:
        m.pop("_db_persisted", None)
    return {"transcript": out, "labels": {"outcome": "compacted"}}


def main():
    micro = Micro()

    usage = {"prompt_tokens": 0}

    def restart(req, summarize):
        micro.restart()
        usage["prompt_tokens"] = 0
        COOLDOWN["until_ms"] = 0
        return {}

    def hook(req, summarize):
        # The batch pass's failure cooldown; it writes no fallback summaries; it
        # remembers the last usage reading (and nothing depends on it).
        name = req["hook"]
        if name == "usage":
            usage["prompt_tokens"] = int(req["args"]["prompt_tokens"])
            return {}
        if name == "cooling_down":
            return {"value": req["now_ms"] < COOLDOWN["until_ms"]}
        if name == "fallback_streak":
            return {"value": 0}
        raise ValueError("unknown hook " + name)

    serve("compactsim-reference-py", "1.0.0",
          {"micro_pass": True, "batch_pass": True,
           "hooks": ["cooling_down", "fallback_streak", "usage"]},
          {"micro_pass": micro.pass_, "batch_pass": batch_pass, "restart": restart,
           "hook": hook})


if __name__ == "__main__":
    main()
