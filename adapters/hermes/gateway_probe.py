"""The rotation-crash probe on the real path (FINDINGS.md, gateway part): a gateway turn's
compaction rotates the session (`compress_context`: the old session ended "compression",
the child created and filled), then the process dies before `gateway/run.py`'s
session-split sync (`entry.session_id = agent_session_id; session_store._save()`,
`_record_gateway_session_peer`). A new process opens the same HERMES_HOME, as a gateway
start does, and routes the chat's next message (`get_or_create_session`).

  target/hermes-venvs/<venv>/bin/python adapters/hermes/gateway_probe.py
  target/hermes-venvs/<venv>/bin/python adapters/hermes/gateway_probe.py failed

Prints the rows of state.db and sessions.json before the crash and after the restart.
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def summarize(messages, max_tokens):
    return ("The user asked about items 0-7; the assistant answered each.", "stop")


def _start(now_ms):
    """A gateway process start: the release patched offline, the store modules on the
    virtual clock, the real SessionStore opened on this HERMES_HOME."""
    import offline
    import gateway_real as g
    from release import Release

    r = Release()
    offline.patch(*r.modules())
    g.patch_store_modules()
    offline.CURRENT["now_ms"] = now_ms
    return r, g, offline, g.open_store()


def phase_crash():
    r, g, offline, store = _start(1_000)
    src = g.source()
    entry = store.get_or_create_session(src)
    parent = entry.session_id
    for i in range(8):
        offline.CURRENT["now_ms"] += 1_000
        store.append_to_transcript(parent, {"role": "user", "content": f"question {i} " * 300})
        store.append_to_transcript(parent, {"role": "assistant", "content": f"answer {i} " * 300})
    history = store.load_transcript(parent)
    messages = history + [{"role": "user", "content": "question 8"}]
    c = r.cc.ContextCompressor(**r.constructor_kwargs(dict(
        model="compactsim-fake-model", protect_first_n=1, protect_last_n=2, quiet_mode=True,
        config_context_length=16_000)))
    a = g.agent(parent, store._db, c, entry.session_key)
    # The turn's early persist (run_conversation): the user row flushed, the loaded
    # history stamped as already stored.
    a._flush_messages_to_session_db(messages, conversation_history=history)
    offline.CURRENT["summarize"] = summarize
    compressed, _ = g.compress(a, messages, force=True)
    print(json.dumps({"release": r.describe(), "route_key": entry.session_key,
                      "parent": parent, "child": a.session_id,
                      "live_rows_after_compaction": len(compressed),
                      "compression_tip(parent)": store._db.get_compression_tip(parent),
                      "before_restart": g.dump()}, indent=1))
    sys.stdout.flush()
    os._exit(9)  # the crash: before the session-split sync's _save()


def phase_failed():
    """Seed 002 on the real store: a turn that fails on a context overflow. The agent's
    crash-resilience flush stores the user row before the first LLM call; the gateway's
    overflow rule skips only its own writes. Then the next message loads the session."""
    r, g, offline, store = _start(1_000)
    entry = store.get_or_create_session(g.source())
    sid = entry.session_id
    store.append_to_transcript(sid, {"role": "user", "content": "question 0"})
    store.append_to_transcript(sid, {"role": "assistant", "content": "answer 0"})
    history = store.load_transcript(sid)
    c = r.cc.ContextCompressor(**r.constructor_kwargs(dict(
        model="compactsim-fake-model", quiet_mode=True, config_context_length=16_000)))
    a = g.agent(sid, store._db, c, entry.session_key)
    failed = history + [{"role": "user", "content": "the failing question"}]
    a._persist_session(failed, history)  # the turn start's persist (turn_context.py)
    # ... the provider answers 400 context length exceeded; the gateway writes nothing.
    before = g.dump()
    offline.CURRENT["now_ms"] = 60_000
    store2 = g.open_store()
    again = store2.get_or_create_session(g.source())
    loaded = store2.load_transcript(again.session_id)
    print(json.dumps({"release": r.describe(), "session": sid,
                      "after_failed_turn": before,
                      "next_message_loads": {"session": again.session_id,
                                             "rows": [(m["role"], m["content"]) for m in loaded]}},
                     indent=1))


def phase_restart():
    _, g, _, store = _start(60_000)
    entry = store.get_or_create_session(g.source())
    print(json.dumps({"after_restart": {
        "routed_session": entry.session_id,
        "routed_history_rows": len(store.load_transcript(entry.session_id)),
        **g.dump()}}, indent=1))


def main():
    if len(sys.argv) > 1 and sys.argv[1] != "failed":
        {"crash": phase_crash, "restart": phase_restart}[sys.argv[1]]()
        return
    if len(sys.argv) > 1:
        scratch = tempfile.mkdtemp(prefix="compactsim-gateway-probe-")
        env = dict(os.environ, COMPACTSIM_SCRATCH_DIR=scratch)
        sys.exit(subprocess.run([sys.executable, __file__, "failed-run"], env=env).returncode)
    scratch = tempfile.mkdtemp(prefix="compactsim-gateway-probe-")
    env = dict(os.environ, COMPACTSIM_SCRATCH_DIR=scratch)
    crashed = subprocess.run([sys.executable, __file__, "crash"], env=env)
    print(f"(crash phase exit code {crashed.returncode})")
    restarted = subprocess.run([sys.executable, __file__, "restart"], env=env)
    sys.exit(restarted.returncode)


if __name__ == "__main__":
    if sys.argv[1:] == ["failed-run"]:
        phase_failed()
    else:
        main()
