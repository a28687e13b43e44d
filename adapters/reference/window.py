"""The compressible window shared by the micro and batch passes of the reference adapter
(hermes-domain §2.3 step 4, §3.3): a protected head, a token-budget tail walked backwards
with a 1.5x soft ceiling and a message floor, tool groups never split. Standard library
only; rows are OpenAI chat dicts with the compactsim metadata keys."""

SEP = "\n\n"
TAIL_FLOOR_MAX = 8
TAIL_SOFT_CEILING = 1.5
TAIL_WALK_OVERHEAD = 10
CALL_ENVELOPE_CHARS = 64


def rough(m):
    """Rough tokens of a row: text and tool calls, each ceil(chars / 4)."""
    chars = len(m.get("content") or "")
    calls = sum(CALL_ENVELOPE_CHARS + len(c["function"]["name"]) + len(c["function"]["arguments"])
                for c in m.get("tool_calls") or [])
    return -(-chars // 4) + -(-calls // 4)


def is_summary(m):
    return bool(m.get("_compressed_summary") or m.get("_micro_compact_marker"))


def first_non_system(msgs):
    return 1 if msgs and msgs[0]["role"] == "system" else 0


def head_end(msgs, protect_first_n):
    """The system row plus `protect_first_n` rows, pushed past tool rows."""
    end = min(first_non_system(msgs) + protect_first_n, len(msgs))
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


def align_backward(msgs, cut, floor):
    """Moves `cut` back so it does not start inside a tool group; never below `floor`."""
    while floor < cut < len(msgs) and msgs[cut]["role"] == "tool":
        cut -= 1
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
        cut = min(head + 1, n)
    return align_backward(msgs, cut, head)
