"""Test of the gateway adapter's batch pass: what `compress_context` keeps of `compress()`'s
result (gateway_real.CommitGuard; FINDINGS.md, the gateway triage, iot cases 3 and 27).
On iot 0.22.2.post1 a result that grows the transcript is refused and the batch pass
answers the input unchanged (the harness then sees a no-op, as the real agent keeps its
list); 0.19.0 has no such guard and keeps it. On both, a result without a real user
message gets the newest one back (the user-turn anchor), an aborted pass answers the
input, and a shrinking result with a user message is kept as it is.

  target/hermes-venvs/hermes-iot-0.22.2.post1/bin/python adapters/hermes/gateway_guard_test.py
  target/hermes-venvs/hermes-0.19.0/bin/python adapters/hermes/gateway_guard_test.py
"""

import copy
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import offline  # noqa: E402,F401  (before any agent.* import)
import driver  # noqa: E402
import gateway_real  # noqa: E402

WORDS = "the parser reads a config line and the build asks for review "


def rows():
    out = [{"role": "user", "content": "question " + WORDS * 20, "_compactsim_id": 0}]
    for i in range(1, 5):
        role = "assistant" if i % 2 else "user"
        out.append({"role": role, "content": f"row {i} " + WORDS * 20, "_compactsim_id": i})
    return out


def summary(text, role="user"):
    return {"role": role, "content": "[CONTEXT SUMMARY]: " + text, "_compressed_summary": True}


def batch_pass(d, transcript, result):
    """`Driver.batch_pass` on `transcript` with the compressor's `compress()` answering
    `result` (the summary call is the harness's; here the result stands in for it)."""
    def compress(c, r, force):
        c._last_compress_aborted = result == "aborted"
        if result == "aborted":  # 0.19.0's abort returns its pruned list (FINDINGS B6)
            return [dict(m, content="[pruned]") if m["role"] == "assistant" else m for m in r]
        return copy.deepcopy(result)

    d.release.compress = compress
    return d.batch_pass({"transcript": copy.deepcopy(transcript),
                         "context_window_tokens": 64_000, "config": {}}, None)["transcript"]


def check_uids(d, before):
    """iot: the rows `compress()` works on carry one `message_uid` per harness row, as the
    real agent's live dicts do (its in-flight restatement dedupes the head original by it,
    FINDINGS.md, the gateway triage, iot case 183); the reply carries none. 0.19.0: none."""
    seen = []

    def compress(c, r, force):
        c._last_compress_aborted = False
        seen.extend(copy.deepcopy(r))
        return [summary("short")] + copy.deepcopy(r[-1:])

    d.release.compress = compress
    after = d.batch_pass({"transcript": copy.deepcopy(before), "context_window_tokens": 64_000,
                          "config": {}}, None)["transcript"]
    uids = [m.get("message_uid") for m in seen]
    try:
        import agent.message_metadata  # noqa: F401
        want = [f"compactsim-{m['_compactsim_id']}" for m in before]
    except ImportError:
        want = [None] * len(before)
    assert uids == want, f"message_uid per row: {uids} != {want}"
    assert all("message_uid" not in m for m in after), f"the reply carries no uid: {after}"


def main():
    release = driver.load()
    d = driver.Driver(release, micro=False, commit_guard=gateway_real.CommitGuard())
    before = rows()
    grown = [summary(WORDS * 200)] + before[-1:]
    shrunk = [summary("short")] + before[-1:]
    from agent import conversation_compression as cc
    has_guard = hasattr(cc, "_salvage_or_refuse_grown_transcript")

    after = batch_pass(d, before, grown)
    if has_guard:
        assert after == before, f"a grown result must be refused: {after}"
        assert d.compressor._last_compress_refused_would_grow
        assert d.compressor._ineffective_compression_count == 1
    else:
        assert after == grown, "0.19.0 has no anti-growth guard: the result stays"
    assert batch_pass(d, before, shrunk) == shrunk, "a shrinking result is kept"
    no_user = [summary("short", role="assistant"), before[-2]]
    anchored = batch_pass(d, before, no_user)
    assert [m.get("_compactsim_id") for m in anchored] == [4, None, 3], (
        "the newest user row (m4) is anchored before the first assistant row not preceded "
        f"by a user row, here the summary: {[(m['role'], m.get('_compactsim_id')) for m in anchored]}")
    assert batch_pass(d, before, "aborted") == before, "an aborted pass keeps the input"
    check_uids(d, before)
    print(f"ok: {release.dist} {release.version}, guard "
          f"{'refuses a grown result' if has_guard else 'absent'}")


if __name__ == "__main__":
    main()
