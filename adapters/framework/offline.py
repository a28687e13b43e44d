"""Running a framework's real compaction code offline under compactsim: no network (every
socket connection refused in-process), no provider keys, no tracing exporters, no real
sleeping (retry back-offs return at once: the case's time is virtual), and a scratch HOME.
The only LLM is the harness, reached through the framework's own model interface.

Import this module first, before any framework module.
"""

import os
import shutil
import socket
import sys
import tempfile
import atexit
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "reference"))

# The harness gives every child a scratch directory of its own and removes it after the
# child ends (adapters/PROTOCOL.md); run by hand, a temporary one.
_SCRATCH = os.environ.get("COMPACTSIM_SCRATCH_DIR") or tempfile.mkdtemp(
    prefix="compactsim-framework-home-")
atexit.register(shutil.rmtree, _SCRATCH, True)
os.environ["HOME"] = _SCRATCH
for key in list(os.environ):
    if key.endswith("_API_KEY") or key.endswith("_BASE_URL") or key.endswith("_PROXY") \
            or key.startswith("GOOGLE_") or key.startswith("LANGSMITH_") \
            or key.startswith("LANGCHAIN_"):
        del os.environ[key]
os.environ["HTTP_PROXY"] = os.environ["HTTPS_PROXY"] = "http://127.0.0.1:9"
os.environ["NO_PROXY"] = ""
os.environ["OTEL_SDK_DISABLED"] = "true"
os.environ["LANGSMITH_TRACING"] = "false"
os.environ["LANGCHAIN_TRACING_V2"] = "false"


class NetworkBlocked(OSError):
    """Raised by every attempt to open a network connection inside an adapter."""


def _refuse(*_args, **_kwargs):
    raise NetworkBlocked("compactsim adapter: network access is blocked (offline run)")


socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
socket.create_connection = _refuse
socket.getaddrinfo = _refuse

# Retry back-offs (tenacity, asyncio) must not spend wall time: the case's clock is virtual.
time.sleep = lambda _seconds: None
