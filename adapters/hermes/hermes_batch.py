"""compactsim adapter: the real batch compressor of hermes-agent==0.19.0,
`agent.context_compressor.ContextCompressor.compress()`, offline (see offline.py).

  target/hermes-venvs/hermes-0.19.0/bin/python adapters/hermes/hermes_batch.py
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import offline  # noqa: E402  (before any agent.* import)

import agent.auxiliary_client as aux  # noqa: E402
import agent.context_compressor as cc  # noqa: E402
from driver import Driver  # noqa: E402

offline.patch(cc, aux)
Driver(cc, micro=False).serve("hermes-agent ContextCompressor.compress", "hermes-agent")
