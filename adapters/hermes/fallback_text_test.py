"""Test of fallback_text.py on stand-in releases (no Hermes needed; run by .ci/run):
the probe path reads a `_build_static_fallback_summary` text, the inline path the
f-string of an old `compress()`, and a release with neither is refused.

  python3 adapters/hermes/fallback_text_test.py
"""

import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fallback_text  # noqa: E402

SUMMARY_PREFIX = "[CONTEXT COMPACTION]"


class Probed:
    """A 0.16.0-style release: the fallback built by a method."""

    _previous_summary = "kept"

    def compress(self, messages):
        return messages

    def _build_static_fallback_summary(self, turns, reason=None):
        ask = turns[-1]["content"]
        note = "\n\nPrevious summary." if self._previous_summary else ""
        return (f"{SUMMARY_PREFIX}\n## Active Task\nUser asked: {ask!r}\n\n## Goal\n"
                f"Recovered locally.{note}\n\n## Completed Actions\nNone.")


class Inline:
    """A 0.13.0-style release: the fallback written inline in compress()."""

    def compress(self, messages, n_dropped=0):
        summary = None
        if not summary:
            summary = (
                f"{SUMMARY_PREFIX}\n"
                f"Summary generation was unavailable. {n_dropped} message(s) were removed."
            )
        return summary


class Neither:
    def compress(self, messages):
        return messages


def release(cls):
    return types.SimpleNamespace(cc=types.SimpleNamespace(ContextCompressor=cls))


def main():
    probe = Probed()
    got = fallback_text.of(release(Probed), probe)
    assert got == "{prefix}\n## Active Task\n{active_task}\n\n## Goal\nRecovered locally.{rest}", got
    assert probe._previous_summary == "kept", "the probe must restore the compressor"
    got = fallback_text.of(release(Inline), None)
    assert got == ("{prefix}\nSummary generation was unavailable. {n_dropped} message(s) "
                   "were removed.{rest}"), got
    try:
        fallback_text.of(release(Neither), None)
    except fallback_text.NoFallbackText as e:
        assert "if not summary" in str(e), e
    else:
        raise AssertionError("a release without a fallback must be refused")
    print("ok: fallback_text reads a probed, an inline and no fallback text")


if __name__ == "__main__":
    main()
