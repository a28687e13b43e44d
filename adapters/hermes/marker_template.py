"""The words the installed Hermes release writes around the rolling summary in each micro
marker, as the `marker_template` policy's `prefix` and `suffix` (adapters/PROTOCOL.md,
"Policies"), read from the release itself, never assumed: the release's own
`ContextCompressor._render_micro_marker_content` (iot 0.21.3 on;
agent/micro_compaction.py:485-488 of iot 0.22.2.post1: the summary prefix, a blank line,
the historical-task heading, the summary, a blank line, the end marker) is called on a
probe summary, and the text before and after the probe is the template. A release
without the method (no micro-compaction, or the marker built inline in `_micro_compact`
before iot 0.21.3) declares no template.

Call before any mutant: a fault that patches the method must not change the declaration.
"""

PROBE_SUMMARY = "compactsim-marker-probe-summary"


def of(release):
    """`{"prefix": P, "suffix": S}` of `release` (a `release.Release`), or None."""
    render = getattr(release.cc.ContextCompressor, "_render_micro_marker_content", None)
    if render is None:
        return None
    out = render(PROBE_SUMMARY)
    at = out.find(PROBE_SUMMARY) if isinstance(out, str) else -1
    if at < 0:
        return None
    prefix, suffix = out[:at], out[at + len(PROBE_SUMMARY):]
    if not prefix and not suffix:
        return None
    return {k: v for k, v in (("prefix", prefix), ("suffix", suffix)) if v}
