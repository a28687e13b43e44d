"""Running real Hermes code offline under compactsim: a temporary HERMES_HOME, no
provider keys, every LLM call routed to the harness's `summarize`, and the compressor's
clock replaced by the case's virtual time (hermes-domain §6).

Import this module before any `agent.*` module.
"""

import os
import shutil
import sys
import tempfile
import atexit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "reference"))

from protocol import SummaryError  # noqa: E402

# The harness gives every child a scratch directory of its own and removes it after the
# child ends, however it ends (adapters/PROTOCOL.md); run by hand, a temporary one. An
# adapter that outlives its harness (interrupted) removes it itself on exit.
_SCRATCH = None


def set_env():
    """The process's scratch directory, HERMES_HOME inside it, no provider keys, no
    network; run at import, and again by a forked gateway child (fork_server.py) once it
    has taken its own process's environment."""
    global _SCRATCH
    if _SCRATCH is not None:
        atexit.unregister(_remove_scratch)
    _SCRATCH = os.environ.get("COMPACTSIM_SCRATCH_DIR") or tempfile.mkdtemp(
        prefix="compactsim-hermes-home-"
    )
    atexit.register(_remove_scratch)
    home = os.path.join(_SCRATCH, "hermes-home")
    os.makedirs(home, exist_ok=True)
    os.environ["HERMES_HOME"] = home
    for key in list(os.environ):
        if key.endswith("_API_KEY") or key.endswith("_BASE_URL") or key in ("HTTP_PROXY", "HTTPS_PROXY"):
            del os.environ[key]
    # Anything that still tries the network fails fast instead of hanging.
    os.environ["HTTP_PROXY"] = os.environ["HTTPS_PROXY"] = "http://127.0.0.1:9"
    os.environ["NO_PROXY"] = ""


def _remove_scratch():
    shutil.rmtree(_SCRATCH, True)


set_env()

# The summarize function of the request in flight, set by the adapter per request.
CURRENT = {"summarize": None, "now_ms": 0}


class VirtualClock:
    """Stands in for the `time` module inside the compressor: the case's virtual time."""

    def __init__(self, real):
        self._real = real

    def time(self):
        return 1_700_000_000.0 + CURRENT["now_ms"] / 1000.0

    def monotonic(self):
        return CURRENT["now_ms"] / 1000.0

    def __getattr__(self, name):
        return getattr(self._real, name)


class _Message:
    def __init__(self, content):
        self.content = content
        self.role = "assistant"
        self.tool_calls = None


class _Choice:
    def __init__(self, content, finish_reason):
        self.message = _Message(content)
        self.finish_reason = finish_reason
        self.index = 0


class _Response:
    def __init__(self, content, finish_reason):
        self.choices = [_Choice(content, finish_reason)]
        self.usage = None
        self.model = "compactsim-fake-summarizer"


class SummaryCallError(Exception):
    """A failed summary call, shaped like a provider error (status code and message)."""

    def __init__(self, message, status_code):
        super().__init__(message)
        self.status_code = status_code


_ERRORS = {
    "timeout": ("Request timed out", 408),
    "rate_limited": ("Error code: 429 - rate limit exceeded, retry later", 429),
    "server_error": ("Error code: 500 - internal server error", 500),
    "auth": ("Error code: 401 - invalid api key", 401),
}


# What a dropped connection raises (httpx's message).
NETWORK_ERROR = "peer closed connection without sending complete message body"


def fake_call_llm(*_args, **kwargs):
    """`agent.auxiliary_client.call_llm` routed to the harness."""
    summarize = CURRENT["summarize"]
    if summarize is None:
        raise RuntimeError("No LLM provider configured (compactsim: no request in flight)")
    messages = [{"role": m.get("role", "user"), "content": m.get("content") or ""}
                for m in kwargs.get("messages") or []]
    log = os.environ.get("COMPACTSIM_PROMPT_LOG")
    if log:  # debugging aid: every prompt the real code sends, appended to a file
        with open(log, "a") as f:
            f.write(repr(messages) + "\n")
    try:
        text, finish = summarize(messages=messages, max_tokens=kwargs.get("max_tokens"))
    except SummaryError as e:
        if e.error == "network":
            raise ConnectionError(NETWORK_ERROR)
        message, status = _ERRORS.get(e.error, (str(e), 500))
        raise SummaryCallError(message, status)
    if log:
        with open(log, "a") as f:
            f.write("ANSWER " + repr(text) + "\n")
    return _Response(text, finish)


def patch(*modules):
    """Replaces `call_llm` and the clock in each given module."""
    for m in modules:
        if hasattr(m, "call_llm"):
            m.call_llm = fake_call_llm
        if hasattr(m, "time"):
            m.time = VirtualClock(m.time)
