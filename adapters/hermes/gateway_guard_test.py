"""Test of the gateway adapter's batch pass against `compress_context`'s anti-growth guard
(gateway_real.CommitGuard; FINDINGS.md, the gateway triage, iot case 27): on iot
0.22.2.post1 a `compress()` result that grows the transcript is refused and the batch pass
answers the input unchanged (the harness then sees a no-op, as the real agent keeps its
list), a shrinking result is kept as it is; 0.19.0 has no guard and keeps either.

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


def summary(text):
    return {"role": "user", "content": "[CONTEXT COMPACTION] " + text,
            "_compressed_summary": True}


def batch_pass(d, transcript, result):
    """`Driver.batch_pass` on `transcript` with the compressor's `compress()` answering
    `result` (the summary call is the harness's; here the result stands in for it)."""
    d.release.compress = lambda c, r, force: copy.deepcopy(result)
    return d.batch_pass({"transcript": copy.deepcopy(transcript),
                         "context_window_tokens": 64_000, "config": {}}, None)["transcript"]


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
    print(f"ok: {release.dist} {release.version}, guard "
          f"{'refuses a grown result' if has_guard else 'absent'}")


if __name__ == "__main__":
    main()
