"""The reference compactor of compactsim in Python (standard library only): per-turn
micro-compaction into one rolling-summary marker and a Hermes-style batch pass
(`batch.py`), served by the SDK (`compactsim.sdk`, python/compactsim/). Both follow the harness's reference model
(hermes-domain §2.3, §3) with no historical bug switched on, so the default suites of
`--strategy micro` and `--strategy batch` pass through the protocol.

Usage: python3 adapters/reference/compactor.py
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import protocol  # noqa: E402,F401 (puts the SDK's python/ on sys.path)
from batch import Batch, labelled  # noqa: E402
from compactsim import sdk  # noqa: E402
from compactsim.sdk import REFERENCE_POLICIES, SummaryError  # noqa: E402
from window import SEP, head_end, is_summary, rough, tail_start  # noqa: E402

MESSAGES_MIN = 4
MICRO_PREFIX = "[MICRO-COMPACTION SUMMARY] Earlier agent turns, summarized:"


def micro_prefix(cfg):
    """The marker's scaffolding, padded to the `scaffold_tokens` the model declares (the
    Rust reference wraps its summary in exactly that many tokens)."""
    return MICRO_PREFIX.ljust(4 * cfg.get("scaffold_tokens", 0), "-")


class Micro:
    """Micro-compaction state: volatile, forgotten on restart."""

    def __init__(self):
        self.restart()

    def restart(self):
        self.cursor = 0
        self.rolling = ""
        self.failures = None
        self.invocations = 0

    def compact(self, msgs, ctx):
        """A micro pass (compactsim.sdk): the new transcript; its labels in `ctx.labels`."""
        cfg = ctx.config
        self.invocations += 1
        if (self.invocations - 1) % max(1, cfg.get("every_n_turns", 1)) != 0:
            return labelled(ctx, msgs, outcome="cadence")
        if len(msgs) < MESSAGES_MIN:
            return labelled(ctx, msgs, outcome="no_exchange")
        head = head_end(msgs, cfg["protect_first_n"])
        tail = tail_start(msgs, head, cfg["tail_budget_tokens"], cfg["protect_last_n"])
        if not self.rolling:
            markers = [m for m in msgs if m.get("_micro_compact_marker")]
            if markers:
                self.rolling = strip_prefix(markers[-1]["content"] or "", micro_prefix(cfg))
        self.cursor = recover_cursor(msgs, self.cursor, head, tail)
        if self.rolling and -(-len(self.rolling) // 4) >= cfg.get("defrag_threshold_tokens", 1 << 62):
            return self.defrag(cfg, msgs, ctx)
        found = find_exchange(msgs, self.cursor, tail)
        if found is None:
            return labelled(ctx, msgs, outcome="no_exchange")
        if cfg.get("reclaim_gate_tokens", 0) > 0:
            return self.gated(cfg, msgs, ctx, found, tail)
        start, end = found
        exchange_text = SEP.join(m.get("content") or "" for m in msgs[start:end])
        prompt = SEP.join(p for p in (self.rolling, exchange_text) if p)
        text = summary(ctx, prompt)
        if not text or len(text) > len(prompt):
            return labelled(ctx, msgs, **self.fail(msgs, start, end))
        marker = {"role": "assistant", "content": micro_prefix(cfg) + SEP + text,
                  "_compressed_summary": True, "_micro_compact_marker": True}
        out = msgs[:start] + [marker] + msgs[end:]
        out = supersede_others(out, start)
        self.cursor = max(i for i, m in enumerate(out) if is_summary(m)) + 1
        self.rolling = text
        self.failures = None
        return labelled(ctx, out, outcome="absorbed")

    def gated(self, cfg, msgs, ctx, first, tail):
        """The reclaim-size gate (`reclaim_gate_tokens`, the study strategy micro-gated;
        the Rust reference's `work_gated`): every complete exchange from `first` on
        before the tail is buffered, and below the gate nothing happens; at or above it
        all of them are absorbed in one summary call into one marker, which takes the
        place of the last; user rows between them stay verbatim."""
        ranges = [first]
        while (nxt := find_exchange(msgs, ranges[-1][1], tail)) is not None:
            ranges.append(nxt)
        rows = [m for s, e in ranges for m in msgs[s:e]]
        if sum(rough(m) for m in rows) < cfg["reclaim_gate_tokens"]:
            return labelled(ctx, msgs, outcome="no_exchange")
        exchange_text = SEP.join(m.get("content") or "" for m in rows)
        prompt = SEP.join(p for p in (self.rolling, exchange_text) if p)
        text = summary(ctx, prompt)
        if not text or len(text) > len(prompt):
            return labelled(ctx, msgs, **self.fail(msgs, first[0], ranges[-1][1], rows))
        marker = {"role": "assistant", "content": micro_prefix(cfg) + SEP + text,
                  "_compressed_summary": True, "_micro_compact_marker": True}
        absorbed = {id(m) for m in rows}
        last_start = ranges[-1][0]
        out = [marker if i == last_start else m for i, m in enumerate(msgs)
               if i == last_start or id(m) not in absorbed]
        out = merge_user_neighbours(out, msgs)
        out = supersede_others(out, next(i for i, m in enumerate(out) if m is marker))
        self.cursor = max(i for i, m in enumerate(out) if is_summary(m)) + 1
        self.rolling = text
        self.failures = None
        return labelled(ctx, out, outcome="absorbed")

    def defrag(self, cfg, msgs, ctx):
        """Re-summarizes the rolling summary alone and rewrites the newest marker in place
        (same id and role); nothing changes on a failed or larger answer. The call asks
        for a condense (`purpose`), as the Rust reference's `condense_within`."""
        text = summary(ctx, self.rolling, purpose="condense")
        markers = [i for i, m in enumerate(msgs) if m.get("_micro_compact_marker")]
        if not text or len(text) > len(self.rolling) or not markers:
            return labelled(ctx, msgs, outcome="defrag_failed")
        at = markers[-1]
        marker = dict(msgs[at])
        marker["content"] = micro_prefix(cfg) + SEP + text
        marker.pop("_db_persisted", None)
        self.rolling = text
        return labelled(ctx, msgs[:at] + [marker] + msgs[at + 1:], outcome="defrag")

    def fail(self, msgs, start, end, rows=None):
        """A failed summary of the exchange `msgs[start:end]` (its `rows`, when gated);
        the third failure at one exchange skips it."""
        first = msgs[start].get("_compactsim_id")
        count = self.failures[1] + 1 if self.failures and self.failures[0] == first else 1
        if count >= 3:
            self.cursor, self.failures = end, None
            rows = msgs[start:end] if rows is None else rows
            skipped = [m["_compactsim_id"] for m in rows if "_compactsim_id" in m]
            return {"outcome": "exchange_skipped", "skipped": skipped}
        self.failures = (first, count)
        return {"outcome": "summarize_failed"}


def summary(ctx, prompt, purpose=None):
    """The summary of `prompt`, or "" when the call failed."""
    try:
        return ctx.summarize(prompt=prompt, purpose=purpose)
    except SummaryError:
        return ""


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


class Reference:
    """The reference compactor as an SDK object: micro and batch passes, the three hooks.
    `config`: a function rewriting each pass's `config` (a fixture's changed behaviour)."""

    def __init__(self, config=None):
        self.micro = Micro()
        self.batch = Batch()
        self.config = config
        # The last usage reading (nothing depends on it).
        self.prompt_tokens = 0

    def configured(self, ctx):
        if self.config is not None:
            ctx.config = self.config(dict(ctx.config))
        return ctx

    def restart(self):
        self.micro.restart()
        self.batch.restart()
        self.prompt_tokens = 0

    def micro_pass(self, msgs, ctx):
        return self.micro.compact(msgs, self.configured(ctx))

    def batch_pass(self, msgs, ctx):
        # A batch pass rewrites the list: micro's cursor into the old list is stale (the
        # Rust reference's `rewritten`), so the next micro pass recovers it.
        out = self.batch.compact(msgs, self.configured(ctx))
        self.micro.cursor = 0
        return out

    # The batch pass's failure cooldown; it writes no fallback summaries.
    def cooling_down(self, ctx):
        return self.batch.cooling_down(ctx.now_ms)

    def fallback_streak(self, ctx):
        return 0

    def usage(self, prompt_tokens, ctx):
        self.prompt_tokens = prompt_tokens


def main(name="compactsim-reference-py", policies=None, config=None, store=None):
    """Serves until stdin closes. `policies`: the hello's `capabilities.policies`
    (default: what this adapter does, REFERENCE_POLICIES); `config`: a function rewriting
    each pass's `config` (a fixture's changed behaviour; default: as sent); `store`: a
    handler of the gateway store's requests (`gateway_store.py`), declared as
    `capabilities.store`."""
    sdk.run(Reference(config), name=name, version="1.0.0",
            policies=REFERENCE_POLICIES if policies is None else policies,
            # Hermes's trigger (threshold x window, floored) is at or below the window;
            # batch passes keep it, a micro pass folds one exchange and promises no size.
            trigger={"window_percent": 100}, trigger_passes=["batch_pass"], store=store)


if __name__ == "__main__":
    main()
