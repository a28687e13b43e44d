"""Test of the gateway store's exhausted auto-reset after a turn that rotated (FINDINGS.md,
the gateway triage, iot cases 419 and 463): the turn's compaction rotates the session
(`compact` mode rotate: the route stays on the parent until the session-split sync), then
the turn ends compression-exhausted and the harness sends `reset` naming the child. Both
releases' gateways run the session-split sync before the auto-reset (0.19.0
gateway/run.py:20958-20994 in `_run_agent_inner`, the reset at 13255-13266; iot
gateway/run_turn.py:2234 then 2252), so `reset_session` ends the child, not the parent,
and iot's reset session names the child, ended `session_reset`, as its parent. A `/reset`
(reason `command`) resets whatever the route names.

  target/hermes-venvs/hermes-iot-0.22.2.post1/bin/python adapters/hermes/gateway_reset_test.py
  target/hermes-venvs/hermes-0.19.0/bin/python adapters/hermes/gateway_reset_test.py
"""

import os
import shutil
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import offline  # noqa: E402,F401  (before any agent.* import)
import driver  # noqa: E402
import store_requests  # noqa: E402

KEY = "agent:main:telegram:dm:728"
WORDS = "the parser reads a config line and the build asks for review "


def row(i):
    return {"_compactsim_id": i, "role": "user" if i % 2 == 0 else "assistant",
            "content": f"row {i} " + WORDS * 5}


def sessions(d):
    con = sqlite3.connect(os.path.join(d, "hermes-home", "state.db"))
    got = con.execute("SELECT id, parent_session_id, end_reason FROM sessions "
                      "ORDER BY rowid").fetchall()
    con.close()
    return got


def run(release, d, key, reason):
    """On directory `d` (one per process: 0.19.0 fixes its state.db path at import), for
    chat `key`: create (4 rows) → rotate to a child (2 rows) → reset naming the child,
    `reason`. The three sessions, the route after the reset, and state.db's sessions
    (id → parent, end_reason)."""
    s = store_requests.Store(release)
    call = lambda op, **kw: s.handle(dict(kw, op=op, now_ms=1000), None)["value"]  # noqa: E731
    call("open", dir=d, key=key)
    parent = call("create", rows=[row(i) for i in range(4)])["session"]
    child = call("compact", session=parent, mode="rotate", reason="turn",
                 rows=[row(4), row(3)])["session"]
    assert child != parent, "a rotation makes a child"
    new = call("reset", key=key, session=child, rows=[], reason=reason)["session"]
    route = dict(map(tuple, call("read")["routes"]))[key]
    s._close()
    return parent, child, new, route, {sid: (p, r) for sid, p, r in sessions(d)}


def main():
    release = driver.load()
    d = tempfile.mkdtemp(prefix="compactsim-reset-")
    try:
        check(release, d)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def check(release, d):
    parent, child, new, route, got = run(release, d, KEY, "exhausted")
    assert route == new, (route, new)
    assert got[parent][1] == "compression", got
    assert got[child][1] == "session_reset", f"the exhausted child is the session reset: {got}"
    assert got[new][0] in (None, child), f"the reset session's lineage (iot) is the child: {got}"
    reset_parent = got[new][0]

    _, child2, new2, route2, cmd = run(release, d, KEY + "1", "command")
    assert route2 == new2, (route2, new2)
    assert cmd[child2][1] is None, f"`/reset` resets the session the route names: {cmd}"
    print(f"ok: {release.dist} {release.version}: exhausted reset ends the child "
          f"(end_reason {got[child][1]!r}); the reset session's parent: "
          f"{'the child' if reset_parent else None}")


if __name__ == "__main__":
    main()
