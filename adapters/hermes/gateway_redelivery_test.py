"""Test of the platform message id on the gateway store's user rows (FINDINGS.md, G5): the
adapter's store takes a message's `deliver`, its user row (the turn-start flush), a kill,
a new process on the same directory, the platform's redelivery of the same message and
its user row again. On iot 0.22.2.post1 both rows carry the inbound id as
`platform_message_id` (the real gateway hands it to the agent's turn-start flush), and
`has_platform_message_id` already answers yes before the second row is written: the
release has what it needs to dedupe and still stores the text twice, because its only
check (gateway/run_turn.py:1863) is on the failed-turn path. On 0.19.0 neither row has an
id (its turn-start flush stamps none).

  target/hermes-venvs/hermes-iot-0.22.2.post1/bin/python adapters/hermes/gateway_redelivery_test.py
  target/hermes-venvs/hermes-0.19.0/bin/python adapters/hermes/gateway_redelivery_test.py
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

KEY = "agent:main:telegram:dm:727"
ROW = {"_compactsim_id": 0, "role": "user", "content": "FACT-000001 please review the parser"}


def process(release, d, first):
    """One gateway process on directory `d`: open, the message delivered, its session
    resolved (created at the first delivery), the user row flushed; its answer to
    `has_platform_message_id` before the flush."""
    s = store_requests.Store(release)
    call = lambda op, **kw: s.handle(dict(kw, op=op, now_ms=1000), None)["value"]  # noqa: E731
    call("open", dir=d, key=KEY)
    call("deliver", key=KEY, inbound=1, delivery=0 if first else 1)
    if first:
        sid = call("create", rows=[])["session"]
    else:
        sid = call("load")["session"]
    seen = s.store.has_platform_message_id(sid, "1")
    call("append", session=sid, rows=[ROW])
    s._close()
    return sid, seen


def main():
    release = driver.load()
    d = tempfile.mkdtemp(prefix="compactsim-redelivery-")
    try:
        sid, seen_first = process(release, d, True)
        sid2, seen_second = process(release, d, False)  # the restart: a new store, same directory
        assert sid2 == sid, (sid, sid2)
        con = sqlite3.connect(os.path.join(d, "hermes-home", "state.db"))
        rows = con.execute("SELECT id, role, platform_message_id FROM messages "
                           "WHERE session_id = ? ORDER BY id", (sid,)).fetchall()
        con.close()
        stamps = store_requests.Store(release).stamps_platform_id()
        want_id = "1" if stamps else None
        assert [(r, p) for _, r, p in rows] == [("user", want_id), ("user", want_id)], rows
        assert not seen_first
        assert seen_second == stamps, "iot knows the redelivered id before the second flush"
        print(f"ok: {release.dist} {release.version}: state.db rows {rows}; "
              f"has_platform_message_id before the redelivery's flush: {seen_second}")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
