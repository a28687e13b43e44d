"""The SDK's protocol 2 bookkeeping (python/compactsim/protocol.py) against its contract."""
import json
import random

from compactsim import protocol


def encoder_word(row):
    """A row's digest word with its header always written by the JSON encoder (the
    definition in adapters/PROTOCOL.md, Protocol 2)."""
    content = row.get("content")
    header = json.dumps([row["role"], content is None, row.get("tool_calls") or [],
                         *(row.get(k) for k in protocol._ROW_TAIL_KEYS)],
                        separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    data = content.encode("utf-8") if content else b""
    import zlib
    return (len(data) << 32) | zlib.crc32(data, zlib.crc32(header))


# Field values that take each branch of the hand-written header: plain ones and ones that
# need the encoder (escapes, control and non-printable characters, numbers, lists).
VALUES = [None, True, False, "", "m12", "call_ab-9:x.y", "héllo", "日本", 'a"b', "a\\b",
          "tab\there", "line\nbreak", "\x7f", "\u2028", "\x00", 0, 1, 2.5, ["x"], {"k": 1}]
ROLES = ["user", "assistant", "tool", "system", 'we"ird', "\n", None]


def test_a_row_word_is_the_encoder_header_s_word_for_every_field_shape():
    rng = random.Random(20260731)
    for _ in range(4000):
        row = {"role": rng.choice(ROLES), "content": rng.choice([None, "", "text é", "x" * 40])}
        for key in protocol._ROW_TAIL_KEYS:
            if rng.random() < 0.5:
                row[key] = rng.choice(VALUES)
        if rng.random() < 0.2:
            row["tool_calls"] = [{"id": "c1", "type": "function",
                                  "function": {"name": "f", "arguments": "{}"}}]
        assert protocol.row_word(row) == encoder_word(row), row


def test_a_request_hands_out_copies_and_an_unchanged_result_is_one_copy_edit():
    conv = protocol.Conversation()
    conv.hello({"protocols": [1, 2]})
    rows = [{"role": "user", "content": "a", "_compactsim_id": "m0"},
            {"role": "assistant", "content": None, "_compactsim_id": "m1",
             "tool_calls": [{"id": "c1", "type": "function",
                             "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "content": "out", "tool_call_id": "c1", "_compactsim_id": "m2"}]
    req, handed = conv.request({"type": "micro_pass", "id": 1, "transcript": rows})
    got = req["transcript"]
    assert got == [protocol.canonical_row(r) for r in rows]
    assert all(a is not b for a, b in zip(got, conv.held.rows))
    # A handler that mutates its copies in place leaves the held rows as they were.
    got[1]["tool_calls"][0]["function"]["arguments"] = "{\"changed\": 1}"
    assert conv.held.rows[1]["tool_calls"][0]["function"]["arguments"] == "{}"
    reply = conv.reply(req, {"transcript": [got[0], got[2]]}, handed)
    assert reply["edits"] == [[0, 1], [2, 1]]
    assert reply["digest"] == protocol.digest([encoder_word(r) for r in (rows[0], rows[2])])
