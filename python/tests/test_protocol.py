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


class _Unordered(dict):
    """A `handed` map that lists no copies: `encode` then takes its row loop."""

    def __iter__(self):
        return iter(())


def _random_row(rng, k):
    row = {"role": rng.choice(["user", "assistant", "tool"]),
           "content": rng.choice([None, "", "x" * rng.randint(1, 40), "é"]),
           "_compactsim_id": "m%d" % k}
    if rng.random() < 0.3:
        row["tool_calls"] = [{"id": "c%d" % k, "type": "function",
                              "function": {"name": "f", "arguments": "{}"}}]
    return row


def test_the_unchanged_transcript_s_shortcut_writes_what_the_row_loop_writes():
    rng = random.Random(20261207)
    shortcuts = 0
    for _ in range(600):
        rows = [_random_row(rng, k) for k in range(rng.randint(0, 6))]
        conv = protocol.Conversation()
        conv.hello({"protocols": [1, 2]})
        req, handed = conv.request({"type": "micro_pass", "id": 1, "transcript": rows})
        got = req["transcript"]
        shape = rng.choice(["same", "same", "fresh", "reordered", "changed", "shorter"])
        if shape == "fresh":
            got = [dict(r) for r in got]
        elif shape == "reordered":
            got = got[::-1]
        elif shape == "changed" and got:
            got[rng.randrange(len(got))]["content"] = "changed"
        elif shape == "shorter":
            got = got[1:]
        fast_edits, fast = conv.held.encode(got, handed)
        slow_edits, slow = conv.held.encode(got, _Unordered(handed))
        assert fast_edits == slow_edits, (shape, rows)
        assert fast.rows == slow.rows and fast.words == slow.words, (shape, rows)
        shortcuts += fast is conv.held
        reply = conv.reply(req, {"transcript": got}, handed)
        assert reply["edits"] == slow_edits
        assert reply["digest"] == protocol.digest(slow.words)
    assert shortcuts > 100, "the shortcut was never taken"


def _request_with_words(conv, rows, edits, **extra):
    """A pass request of `edits` whose digest is the transcript `rows`' and whose words
    are the harness's for the rows sent whole."""
    words = [protocol.row_word(protocol.canonical_row(e)) for e in edits if not isinstance(e, list)]
    req = {"type": "micro_pass", "id": 2, "edits": edits, "words": words,
           "digest": protocol.digest([encoder_word(protocol.canonical_row(r)) for r in rows])}
    req.update(extra)
    return conv.request(req)


BASE = [{"role": "user", "content": "a", "_compactsim_id": 0},
        {"role": "assistant", "content": "b é", "_compactsim_id": 1}]
NEW = {"role": "user", "content": "c", "_compactsim_id": 2}


def _held_base():
    conv = protocol.Conversation()
    conv.hello({"protocols": [1, 2]})
    conv.request({"type": "micro_pass", "id": 1, "transcript": BASE})
    return conv


def test_the_request_s_words_make_the_transcript_its_edits_make_without_them():
    with_words, without = _held_base(), _held_base()
    req, _ = _request_with_words(with_words, BASE + [NEW], [[0, 2], NEW])
    assert "words" not in req and req["transcript"] == BASE + [NEW]
    without.request({"type": "micro_pass", "id": 2, "edits": [[0, 2], NEW],
                     "digest": protocol.digest([encoder_word(r) for r in BASE + [NEW]])})
    assert with_words.held.rows == without.held.rows
    assert with_words.held.words == without.held.words


def test_words_of_another_count_or_a_wrong_word_are_a_desync():
    for words in ([], [1, 2], "x"):
        conv = _held_base()
        try:
            _request_with_words(conv, BASE + [NEW], [[0, 2], NEW], words=words)
        except protocol.Desync:
            continue
        raise AssertionError("words %r accepted" % (words,))
    conv = _held_base()
    try:
        _request_with_words(conv, BASE + [NEW], [[0, 2], NEW], words=[12345])
    except protocol.Desync as e:
        assert "does not match" in str(e)
    else:
        raise AssertionError("a wrong word accepted")


def test_with_words_a_corrupted_held_row_is_still_a_desync():
    conv = _held_base()
    rows = list(conv.held.rows)
    rows[1] = dict(rows[1], content="corrupted")
    conv.held = protocol.Held(rows)
    try:
        _request_with_words(conv, BASE + [NEW], [[0, 2], NEW])
    except protocol.Desync as e:
        assert "does not match" in str(e)
    else:
        raise AssertionError("a corrupted base accepted")


def test_requests_are_read_from_the_descriptor_of_sys_stdin_whichever_it_is():
    import io
    import os
    import sys
    saved = sys.stdin
    try:
        import threading
        r, w = os.pipe()
        big = "x" * (3 * protocol.STDIN_READ_BYTES // 2)

        def write():
            with os.fdopen(w, "w", encoding="utf-8") as f:
                f.write(json.dumps({"a": big}) + "\n" + json.dumps({"b": "é"}) + "\n")

        writer = threading.Thread(target=write)
        writer.start()
        sys.stdin = os.fdopen(r, "r", encoding="utf-8")
        assert protocol._read() == {"a": big}
        assert protocol._read() == {"b": "é"}
        assert protocol._read() is None
        writer.join()
        sys.stdin.close()
        # A stdin without a descriptor (a test's StringIO) is read as text.
        sys.stdin = io.StringIO('{"c": 1}\n')
        assert protocol._read() == {"c": 1}
        assert protocol._read() is None
    finally:
        sys.stdin = saved
