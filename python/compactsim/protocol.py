"""The adapter side of the compactsim stdio protocol, versions 1 and 2 (adapters/PROTOCOL.md).

Standard library only. An adapter calls `serve(name, version, capabilities, handlers)`;
each handler gets the request dict and a `summarize(prompt=..., messages=..., max_tokens=...)`
function that asks the harness and returns `(text, finish_reason)` or raises
`SummaryError`.

Protocol 2 is spoken when the harness's hello offers it: pass requests and results then
carry only edits of the transcript the adapter holds (see `Held`). `serve` keeps that
transcript, so handlers see whole transcripts (fresh copies) under both versions and
return whole transcripts.
"""

import gc
import json
import sys
import zlib
from itertools import compress, repeat
from operator import contains

PROTOCOL_VERSION = 1
# Transcript deltas: pass requests and results carry `edits` and a `digest`.
PROTOCOL_DELTAS = 2
PASSES = ("micro_pass", "batch_pass")
ERROR_CODE_DESYNC = "desync"

# What Hermes does, as `capabilities.policies` (PROTOCOL.md, "Policies"): the protected
# head of the configured `protect_first_n` rows, the newest reply kept verbatim, 60 s of
# summary-failure cooldown (30 s after a dropped connection), micro passes absorbing one
# exchange at a time, the static fallback summary after a failed call, the prune of old
# tool outputs. An adapter that follows none of these declares nothing and is judged by
# the universal invariants only.
HERMES_POLICIES = {
    "protect_first_n": {},
    "newest_reply_verbatim": {},
    "failure_cooldown": {"ms": 60000, "connection_dropped_ms": 30000},
    "absorb_exchanges": {},
    "static_fallback": {},
    "tool_output_prune": {},
}
# What the reference adapter does: Hermes' policies but the two it leaves out (a failed
# call aborts its pass; it prunes no tool output).
REFERENCE_POLICIES = {k: v for k, v in HERMES_POLICIES.items()
                      if k not in ("static_fallback", "tool_output_prune")}

_FNV_OFFSET_BASIS = 0xCBF29CE484222325
_FNV_PRIME = 0x00000100000001B3
_MASK64 = (1 << 64) - 1
# The optional keys of a row as the harness writes them, in its order.
_ROW_TAIL_KEYS = ("tool_call_id", "_compressed_summary", "_micro_compact_marker",
                  "_compressed_summary_has_user_turn", "_db_persisted", "_compactsim_id")
# `json.dumps(x, separators=...)` builds an encoder on every call; these are built once
# (the same output: compact, and a header keeps its UTF-8 as is).
_encode_wire = json.JSONEncoder(separators=(",", ":")).encode
_encode_header = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


class SummaryError(Exception):
    """The harness answered a summarize call with an error (a failed LLM call)."""

    def __init__(self, error, message):
        super().__init__(message)
        self.error = error


class Desync(Exception):
    """A delta against a transcript this side does not hold."""


def canonical_row(row):
    """The row as the harness reads it and writes it back: its keys only, in its order,
    `content` always present, a tool call's `type` defaulting to `function`."""
    out = {"role": row["role"], "content": row.get("content")}
    calls = row.get("tool_calls")
    if calls:
        out["tool_calls"] = [{"id": c["id"], "type": c.get("type", "function"),
                              "function": {"name": c["function"]["name"],
                                           "arguments": c["function"]["arguments"]}}
                             for c in calls]
    for key in _ROW_TAIL_KEYS:
        value = row.get(key)
        if value is not None:
            out[key] = value
    return out


def row_word(row):
    """A canonical row's digest word: len << 32 | crc, `len` the UTF-8 bytes of its
    content, `crc` the CRC-32 of its header (a compact JSON array of its other fields)
    continued over the content (PROTOCOL.md, Protocol 2)."""
    content = row.get("content")
    calls = row.get("tool_calls")
    header = None if calls else _plain_header(row, content is None)
    if header is None:
        header = _encode_header([row["role"], content is None, calls or [],
                                 *(row.get(k) for k in _ROW_TAIL_KEYS)])
    data = content.encode("utf-8") if content else b""
    return (len(data) << 32) | zlib.crc32(data, zlib.crc32(header.encode("utf-8")))


def _plain_json(v):
    """`v` as `_encode_header` writes it when that is plain (null, a bool, a string with
    nothing to escape); None otherwise."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if type(v) is str and v.isprintable() and '"' not in v and "\\" not in v:
        return '"' + v + '"'
    return None


def _plain_header(row, no_content):
    """The digest header of a row without tool calls, written by hand when every field is
    plain (the same text `_encode_header` writes, at half its cost); None otherwise."""
    role = _plain_json(row["role"])
    tail = [_plain_json(row.get(k)) for k in _ROW_TAIL_KEYS]
    if role is None or None in tail:
        return None
    return "[%s,%s,[],%s]" % (role, "true" if no_content else "false", ",".join(tail))


def digest(words):
    """FNV-1a 64 folded over the rows' words, as 16 lowercase hex digits."""
    h = _FNV_OFFSET_BASIS
    for w in words:
        h = ((h ^ w) * _FNV_PRIME) & _MASK64
    return "%016x" % h


def _copy_row(row):
    out = dict(row)
    if "tool_calls" in out:
        out["tool_calls"] = [dict(c, function=dict(c["function"])) for c in out["tool_calls"]]
    return out


class Held:
    """The transcript the adapter holds under protocol 2 (canonical rows and their
    digest words); `None` rows: unknown (a delta against it is refused)."""

    def __init__(self, rows=(), words=None, digest=None):
        self.rows = list(rows)
        self.words = words if words is not None else [row_word(r) for r in self.rows]
        # The digest of `words` when it is known (the one a request was checked against).
        self.digest = digest

    def copies(self):
        """Fresh copies of the rows, for a handler that may change them in place: each
        row's dict, and a tool call's dicts, new (the texts are shared: str is
        immutable). The plain rows are copied in C; only rows with tool calls in Python."""
        rows = self.rows
        out = list(map(dict.copy, rows))
        for k in compress(range(len(rows)), map(contains, rows, repeat("tool_calls"))):
            out[k] = _copy_row(rows[k])
        return out

    def apply(self, edits, want, sent=None):
        """The transcript `edits` make from this one, checked against digest `want`.
        `sent`: the words of the rows sent whole, in order, as the harness gives them (a
        request's `words`); computed here when absent. The digest still checks every row
        copied from this transcript, the rows a desynchronised side gets wrong."""
        rows, words = [], []
        if sent is not None:
            whole = sum(1 for e in edits if not isinstance(e, list))
            if not isinstance(sent, list) or len(sent) != whole:
                raise Desync("%s words for %d rows sent whole"
                             % (len(sent) if isinstance(sent, list) else "no list of", whole))
            sent = iter(sent)
        for k, e in enumerate(edits):
            if isinstance(e, list):
                start, count = e
                if start < 0 or count < 0 or start + count > len(self.rows):
                    raise Desync("edit %d copies rows %d..%d+%d of a base of %d rows"
                                 % (k, start, start, count, len(self.rows)))
                rows.extend(self.rows[start:start + count])
                words.extend(self.words[start:start + count])
            else:
                e = canonical_row(e)
                rows.append(e)
                words.append(row_word(e) if sent is None else next(sent))
        got = digest(words)
        if got != want:
            raise Desync("digest %r does not match the transcript its edits make "
                         "(%d rows, digest %r)" % (want, len(rows), got))
        return Held(rows, words, got)

    def encode(self, returned, handed):
        """(edits, the new Held) for the rows a handler returned; `handed` maps id() of
        each copy the handler was given to its index here (an unchanged copy is cheap)."""
        held_rows, held_words, handed_at = self.rows, self.words, handed.get
        n = len(held_rows)
        # Every row the copy handed out at its place, unchanged: the edits the loop below
        # writes then, found in C (`handed` lists the copies in their order).
        if (n and len(returned) == n and list(map(id, returned)) == list(handed)
                and returned == held_rows):
            return [[0, n]], self
        by_id = None  # held row index by id, built when a row is not a handed copy
        edits, rows, words, after = [], [], [], None
        for r in returned:
            j = handed_at(id(r))
            if j is None or r != held_rows[j]:
                # A row equal to a held one as a dict is that row (held rows are canonical).
                if "_compactsim_id" in r:
                    if by_id is None:
                        by_id = {}
                        for k, h in enumerate(held_rows):
                            by_id.setdefault(h.get("_compactsim_id"), k)
                    j = by_id.get(r["_compactsim_id"], after)
                else:
                    j = after
                if j is None or j >= n or r != held_rows[j]:
                    r = canonical_row(r)
                    if j is not None and (j >= n or r != held_rows[j]):
                        j = None
            if j is None:
                rows.append(r)
                words.append(row_word(r))
                edits.append(r)
                after = None
                continue
            rows.append(held_rows[j])
            words.append(held_words[j])
            last = edits[-1] if edits else None
            if isinstance(last, list) and last[0] + last[1] == j:
                last[1] += 1
            else:
                edits.append([j, 1])
            after = j + 1
        return edits, Held(rows, words)


def _send(obj):
    sys.stdout.write(_encode_wire(obj) + "\n")
    sys.stdout.flush()


# What one read of stdin asks the kernel for: a request line is often hundreds of KB
# (the rows appended since the previous pass), which the text layer's 8 KiB reads took
# in dozens of system calls and as many wake-ups of the harness.
STDIN_READ_BYTES = 1 << 20
_stdin = {"of": None, "reader": None}


def _stdin_reader():
    """A binary reader of `sys.stdin`'s descriptor with a large buffer, made again when
    `sys.stdin` is replaced (a fork server's worker); None when it has no descriptor."""
    if _stdin["of"] is not sys.stdin:
        try:
            fd = sys.stdin.fileno()
        except (AttributeError, OSError, ValueError):
            fd = None
        _stdin["of"] = sys.stdin
        _stdin["reader"] = (None if fd is None
                            else open(fd, "rb", buffering=STDIN_READ_BYTES, closefd=False))
    return _stdin["reader"]


def _read():
    reader = _stdin_reader()
    line = reader.readline() if reader is not None else sys.stdin.readline()
    if not line:
        return None
    return json.loads(line)


class Conversation:
    """One child's side of the conversation: the protocol version and, under protocol 2,
    the transcript the adapter holds."""

    def __init__(self):
        self.protocol = PROTOCOL_VERSION
        self.held = Held()

    def hello(self, req):
        """The version to answer: 2 when the harness offers it."""
        offered = req.get("protocols") or [PROTOCOL_VERSION]
        self.protocol = PROTOCOL_DELTAS if PROTOCOL_DELTAS in offered else PROTOCOL_VERSION
        self.held = Held()
        return self.protocol

    def request(self, req):
        """The request as handlers see it (a whole transcript) and the map of the rows
        handed out; raises Desync."""
        kind = req["type"]
        if self.protocol < PROTOCOL_DELTAS:
            return req, {}
        if kind == "restart":
            self.held = Held()
            return req, {}
        if kind not in PASSES:
            return req, {}
        if "edits" in req:
            if self.held is None:
                raise Desync("a delta after a result this adapter could not keep")
            self.held = self.held.apply(req.pop("edits"), req.pop("digest", None),
                                        req.pop("words", None))
        else:
            self.held = Held(canonical_row(r) for r in req["transcript"])
        copies = self.held.copies()
        req["transcript"] = copies
        return req, dict(zip(map(id, copies), range(len(copies))))

    def reply(self, req, reply, handed):
        """The reply to send: under protocol 2 a pass's transcript as edits."""
        if self.protocol < PROTOCOL_DELTAS or req["type"] not in PASSES \
                or "transcript" not in reply:
            return reply
        try:
            edits, held = self.held.encode(reply["transcript"], handed)
        except (KeyError, TypeError, AttributeError, ValueError):
            # Not rows the harness can read: sent whole, it refuses them as in protocol 1.
            self.held = None
            return reply
        self.held = held
        reply = dict(reply)
        del reply["transcript"]
        reply["edits"] = edits
        if held.digest is None:
            held.digest = digest(held.words)
        reply["digest"] = held.digest
        return reply


def serve(name, version, capabilities, handlers, conversation=None):
    """Answers requests until stdin closes. `handlers` maps a request type to a function
    (request, summarize) -> reply fields (a dict merged into the `result`)."""
    conv = conversation or Conversation()
    # What the adapter built before its first request (its imports, the package under
    # test, its set-up) lives until the child exits: kept out of the collector's scans,
    # each full collection walks only what the requests make.
    gc.freeze()
    while True:
        req = _read()
        if req is None:
            return
        kind, rid = req["type"], req["id"]
        if kind == "hello":
            _send({"type": "hello", "id": rid, "protocol": conv.hello(req), "name": name,
                   "version": version, "capabilities": capabilities})
            continue
        try:
            req, handed = conv.request(req)
        except Desync as e:
            _send({"type": "error", "id": rid, "code": ERROR_CODE_DESYNC,
                   "message": "%s %d: %s" % (kind, rid, e)})
            continue
        handler = handlers.get(kind)
        if handler is None:
            _send({"type": "error", "id": rid, "message": "unsupported request " + kind})
            continue
        calls = [0]

        def summarize(prompt=None, messages=None, max_tokens=None, purpose=None, _rid=rid,
                      _calls=calls):
            msg = {"type": "summarize", "id": _rid, "call": _calls[0]}
            if prompt is not None:
                msg["prompt"] = prompt
            if messages is not None:
                msg["messages"] = messages
            if max_tokens is not None:
                msg["max_tokens"] = max_tokens
            if purpose is not None:
                msg["purpose"] = purpose
            _send(msg)
            _calls[0] += 1
            ans = _read()
            if ans is None:
                sys.exit(0)
            if "error" in ans:
                raise SummaryError(ans["error"], ans["message"])
            return ans["text"], ans["finish_reason"]

        reply = {"type": "result", "id": rid}
        reply.update(handler(req, summarize))
        _send(conv.reply(req, reply, handed))
