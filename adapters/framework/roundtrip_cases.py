"""Transcripts for the framework adapters' round-trip tests (adapters/langchain/
roundtrip_test.py, adapters/adk/roundtrip_test.py): every row shape the protocol carries
(PROTOCOL.md, "Transcript rows"), so a translation that drops or rewrites anything shows."""


def _call(n, name, arguments):
    return {"id": "call_%d" % n, "type": "function",
            "function": {"name": name, "arguments": arguments}}


def shapes():
    """Named transcripts, each a list of protocol rows."""
    plain = [
        {"role": "system", "content": "You are a test agent.", "_compactsim_id": 0},
        {"role": "user", "content": "Look at FACT-000001 & <tags>\nline two", "_compactsim_id": 1},
        {"role": "assistant", "content": "Sure.", "_compactsim_id": 2, "_db_persisted": True},
    ]
    tools = [
        {"role": "user", "content": "run it", "_compactsim_id": 10},
        {"role": "assistant", "content": None, "_compactsim_id": 11,
         "tool_calls": [_call(1, "terminal", '{"cmd":"ls -la",  "n": 1.50}'),
                        _call(2, "web_search", '{"q": "caf\\u00e9 \u00e9"}')]},
        {"role": "tool", "content": "file_a\nFACT-000002", "tool_call_id": "call_1",
         "_compactsim_id": 12},
        {"role": "tool", "content": "", "tool_call_id": "call_2", "_compactsim_id": 13},
        {"role": "assistant", "content": "done \u2014 ok", "_compactsim_id": 14,
         "tool_calls": [_call(3, "send_message", "{}")]},
        {"role": "tool", "content": "sent", "tool_call_id": "call_3", "_compactsim_id": 15},
        {"role": "assistant", "content": "", "_compactsim_id": 16},
    ]
    flagged = [
        {"role": "user", "content": "[summary] FACT-000003", "_compressed_summary": True,
         "_compressed_summary_has_user_turn": True},
        {"role": "assistant", "content": "marker", "_compressed_summary": True,
         "_micro_compact_marker": True, "_db_persisted": False, "_compactsim_id": 20},
        {"role": "user", "content": "next", "_compactsim_id": 21},
        {"role": "assistant", "content": "odd args", "_compactsim_id": 22,
         "tool_calls": [_call(4, "terminal", '["not", "an", "object"]'),
                        _call(5, "terminal", "{broken json")]},
        {"role": "tool", "content": "x", "tool_call_id": "call_4", "_compactsim_id": 23},
        {"role": "tool", "content": "y", "tool_call_id": "call_5", "_compactsim_id": 24},
        {"role": "user", "content": None, "_compactsim_id": 25},
    ]
    return {"plain": plain, "tools": tools, "flagged": flagged,
            "all": plain + tools + flagged}


def check(name, want, got, failures):
    """Appends to `failures` a line per row where `got` differs from `want`."""
    if len(want) != len(got):
        failures.append("%s: %d rows in, %d rows out" % (name, len(want), len(got)))
    for k, (w, g) in enumerate(zip(want, got)):
        if w != g:
            failures.append("%s: row %d\n  in:  %r\n  out: %r" % (name, k, w, g))
