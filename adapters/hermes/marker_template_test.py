"""Test of marker_template.py on stand-in releases (no Hermes needed; run by .ci/run):
a release with `_render_micro_marker_content` declares the text before and after the
summary, one without it (or whose render drops the summary) declares nothing.

  python3 adapters/hermes/marker_template_test.py
"""

import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import marker_template  # noqa: E402


def release(cls):
    return types.SimpleNamespace(cc=types.SimpleNamespace(ContextCompressor=cls))


class Wrapped:
    @staticmethod
    def _render_micro_marker_content(summary_text):
        return f"[PREFIX]\n\n## Heading\n{summary_text.strip()}\n\n--- END ---"


class PrefixOnly:
    @staticmethod
    def _render_micro_marker_content(summary_text):
        return "[PREFIX] " + summary_text


class Inline:
    """A release that builds its marker inside `_micro_compact` (before iot 0.21.3)."""


class Dropping:
    @staticmethod
    def _render_micro_marker_content(summary_text):
        return "[PREFIX] (summary withheld)"


def main():
    assert marker_template.of(release(Wrapped)) == {
        "prefix": "[PREFIX]\n\n## Heading\n", "suffix": "\n\n--- END ---"}
    assert marker_template.of(release(PrefixOnly)) == {"prefix": "[PREFIX] "}
    assert marker_template.of(release(Inline)) is None
    assert marker_template.of(release(Dropping)) is None
    print("marker_template_test: ok")


if __name__ == "__main__":
    main()
