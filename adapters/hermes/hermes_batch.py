"""compactsim adapter: the real batch compressor of hermes-agent==0.19.0,
`agent.context_compressor.ContextCompressor.compress()`, offline.

Run with the venv of adapters/hermes/setup-venv.sh:
  target/hermes-venvs/hermes-0.19.0/bin/python adapters/hermes/hermes_batch.py
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import offline  # noqa: E402  (before any agent.* import)
from protocol import serve  # noqa: E402

import agent.auxiliary_client as aux  # noqa: E402
import agent.context_compressor as cc  # noqa: E402
from importlib.metadata import version  # noqa: E402

offline.patch(cc, aux)

STATE = {"compressor": None, "window": None}


def compressor(req):
    """One compressor per case (a restart drops it), sized to the case's window."""
    cfg = req["config"]
    window = req["context_window_tokens"] or 128_000
    if STATE["compressor"] is None or STATE["window"] != window:
        STATE["compressor"] = cc.ContextCompressor(
            model="compactsim-fake-model",
            protect_first_n=cfg.get("protect_first_n", 3),
            protect_last_n=cfg.get("protect_last_n", 20),
            quiet_mode=True,
            config_context_length=window,
            abort_on_summary_failure=bool(cfg.get("abort_on_summary_failure", False)),
        )
        STATE["window"] = window
    return STATE["compressor"]


def batch_pass(req, summarize):
    offline.CURRENT["summarize"] = summarize
    offline.CURRENT["now_ms"] = req.get("now_ms", 0)
    try:
        c = compressor(req)
        before = [dict(m) for m in req["transcript"]]
        after = c.compress(before, force=bool(req.get("force")))
    finally:
        offline.CURRENT["summarize"] = None
    labels = {
        "aborted": bool(getattr(c, "_last_compress_aborted", False)),
        "fallback": bool(getattr(c, "_last_summary_fallback_used", False)),
        "compression_count": getattr(c, "compression_count", None),
    }
    if labels["aborted"]:
        labels["outcome"] = "aborted"
    return {"transcript": [clean(m) for m in after], "labels": labels}


def clean(m):
    """The row as the protocol wants it: JSON values only."""
    out = {}
    for k, v in m.items():
        if k in ("role", "content", "tool_calls", "tool_call_id") or k.startswith("_"):
            out[k] = v
    if isinstance(out.get("content"), list):
        out["content"] = "".join(p.get("text", "") for p in out["content"] if isinstance(p, dict))
    return out


def restart(req, summarize):
    STATE["compressor"] = None
    return {}


serve("hermes-agent ContextCompressor.compress", version("hermes-agent"),
      {"micro_pass": False, "batch_pass": True, "hooks": []},
      {"batch_pass": batch_pass, "restart": restart})
