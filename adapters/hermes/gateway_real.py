"""The real Hermes gateway store, offline: `gateway.session.SessionStore` over
`hermes_state.SessionDB` (state.db and the sessions/sessions.json mirror under
HERMES_HOME), and the real compression path `agent.conversation_compression.compress_context`
with the release's own `ContextCompressor` inside (the harness the only LLM, offline.py).

Deterministic: the stores' `datetime.now`, `uuid.uuid4` and `time.time` are replaced in the
loaded modules (never in the package files) by the case's virtual clock and a counter, so a
seed reproduces the same ids and timestamps.

What is not real (the rest is the release's code, called, never copied):
- the agent object `compress_context` receives (`GatewayAgent`): a real `run_agent.AIAgent`
  subclass whose `__init__` is skipped (the real one probes providers and pip-installs lazy
  tool dependencies); its attributes are set here, an attribute nothing set reads as None.
  Its real methods run (`_flush_messages_to_session_db`, `_ensure_db_session`,
  `_repair_message_sequence`, ...) except `_build_system_prompt` (a fixed prompt),
  `commit_memory_session` (no memory provider), `_emit_status`/`_emit_warning` (silent);
- iot: the tool-schema refresh at the compaction boundary is skipped (the agent keeps its
  seeded prompt, `_retain_seeded_system_prompt`, as gateway hygiene's agent does);
- `check_compression_model_feasibility` is skipped (`_compression_feasibility_checked`):
  it probes the auxiliary provider;
- the gateway's inline rules of `gateway/run.py` (the session-split sync, the failed-turn
  and context-overflow persistence, the `compression_exhausted` auto-reset) sit inside the
  20k-line `_handle_message_with_agent`/`_run_agent`: their store calls are made here in
  the same order, each one a real `SessionStore`/`SessionDB` method (GATEWAY.md lists
  them with their lines).

Import `offline` before this module.
"""

import copy
import json
import os
import sqlite3
import types
import uuid as _uuid
from datetime import datetime as _datetime
from importlib import import_module

import offline

# The virtual time the ids and timestamps come from (offline.CURRENT["now_ms"]).
EPOCH_S = 1_700_000_000


class _Ids:
    """uuid4 replacement: a counter, so every id is a function of the case. The count
    leads the hex (ids use its first 6 or 8 digits); an adapter that restarts on the same
    store carries the count over (`counters`/`set_counters`)."""

    def __init__(self):
        self.n = 0

    def uuid4(self):
        self.n += 1
        return _uuid.UUID(int=(self.n % (1 << 24)) << 104)

    def __getattr__(self, name):
        return getattr(_uuid, name)


IDS = _Ids()


class VirtualDatetime(_datetime):
    """datetime whose now() is the case's virtual time (one second per call after it, so
    two ids minted in one request stay distinct)."""

    @classmethod
    def now(cls, tz=None):
        seconds = EPOCH_S + offline.CURRENT["now_ms"] / 1000.0 + _TICK.next()
        return _datetime.fromtimestamp(seconds, tz) if tz else cls.fromtimestamp(seconds)


class _Tick:
    """A sub-second tick added to every virtual reading, so later writes sort later
    (state.db orders rows by started_at) whatever the case's clock says."""

    def __init__(self):
        self.n = 0

    def next(self):
        self.n += 1
        return self.n / 1000.0


_TICK = _Tick()


def counters():
    """The id count and the clock tick, to keep across a restart on the same store."""
    return IDS.n, _TICK.n


def set_counters(ids, ticks):
    IDS.n, _TICK.n = ids, ticks


class _VirtualTime:
    """The `time` module inside the store modules: time() is the virtual clock."""

    def __init__(self, real):
        self._real = real

    def time(self):
        return EPOCH_S + offline.CURRENT["now_ms"] / 1000.0 + _TICK.next()

    def __getattr__(self, name):
        return getattr(self._real, name)


# The modules whose clock and ids are replaced, per release (the ones that exist).
STORE_MODULES = (
    "gateway.session", "gateway.session_lifecycle", "gateway.session_persistence",
    "gateway.session_identity", "gateway.session_recovery", "gateway.session_transcript",
    "gateway.session_state", "gateway.session_db_recovery",
    "agent.conversation_compression", "hermes_state", "hermes_state_sessions",
    "hermes_state_gateway", "hermes_state_compression", "hermes_state_messages",
    "hermes_state_common", "hermes_state_ids",
)


def patch_store_modules():
    """Replaces datetime/uuid/time in each store module of this release; returns the
    names of the modules patched."""
    patched = []
    for name in STORE_MODULES:
        try:
            m = import_module(name)
        except ImportError:
            continue
        if getattr(m, "datetime", None) is _datetime:
            m.datetime = VirtualDatetime
        if getattr(m, "uuid", None) is _uuid:
            m.uuid = IDS
        if hasattr(m, "uuid4") and m.uuid4 is _uuid.uuid4:
            m.uuid4 = IDS.uuid4
        t = getattr(m, "time", None)
        if t is not None and getattr(t, "__name__", "") == "time" and hasattr(t, "monotonic"):
            m.time = _VirtualTime(t)
        patched.append(name)
    return patched


def home():
    return os.environ["HERMES_HOME"]


def open_store():
    """The real SessionStore over this HERMES_HOME (a fresh process: what a gateway
    start opens)."""
    from gateway.config import GatewayConfig
    from gateway.session import SessionStore
    return SessionStore(sessions_dir=_sessions_dir(), config=GatewayConfig())


def _sessions_dir():
    from pathlib import Path
    return Path(home()) / "sessions"


def source(chat="c1", user="u1"):
    """The one chat of a case, a Telegram DM."""
    from gateway.config import Platform
    from gateway.session import SessionSource
    return SessionSource(platform=Platform.TELEGRAM, chat_id=chat, user_id=user,
                         chat_type="dm")


def _agent_class():
    run_agent = _import_run_agent()

    class GatewayAgent(run_agent.AIAgent):
        """The agent `compress_context` works on (see the module doc: not real)."""

        def __init__(self, session_id, session_db, compressor, session_key):
            d = self.__dict__
            d.update(session_id=session_id, _session_db=session_db, platform="telegram",
                     model="compactsim-fake-model", context_compressor=compressor,
                     _session_db_created=True, _compression_feasibility_checked=True,
                     _cached_system_prompt="You are a helpful assistant.",
                     _session_init_model_config=None, _memory_manager=None,
                     _last_flushed_db_idx=0, _flushed_db_message_ids=set(),
                     _gateway_session_key=session_key, log_prefix="", quiet_mode=True,
                     compression_in_place=False, tools=[], status_callback=None,
                     event_callback=None, _parent_session_id=None,
                     # iot: keep the seeded prompt at the commit boundary, as gateway hygiene
                     # and /compress do (conversation_compression.py:3118), which skips the
                     # tool-schema refresh (12 s of tool probing; it writes only tool_names).
                     _retain_seeded_system_prompt=True)
            from tools.todo_tool import TodoStore
            d["_todo_store"] = TodoStore()

        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return None

        def _build_system_prompt(self, system_message=None):
            return self._cached_system_prompt

        def commit_memory_session(self, messages=None):
            return None

        def _emit_status(self, message):
            return None

        def _emit_warning(self, message):
            return None

        def _emit_diagnostic_status(self, *args, **kwargs):
            return None

        def _invalidate_system_prompt(self):
            return None

    return GatewayAgent


def _import_run_agent():
    """`run_agent`, imported without `model_tools`' start-up scan of the built-in tools
    (`tools.registry.discover_builtin_tools`: it parses and imports every tool module,
    3-4 s of a child's start, and every crash point starts a child). The agent here has
    no tools (`tools=[]`) and `compress_context` calls none; the scan is restored after
    the import."""
    import sys
    if "run_agent" in sys.modules:
        return sys.modules["run_agent"]
    import tools.registry as registry
    scan = registry.discover_builtin_tools
    registry.discover_builtin_tools = lambda tools_dir=None: []
    try:
        import run_agent
    finally:
        registry.discover_builtin_tools = scan
    return run_agent


_AGENT = None


def agent(session_id, db, compressor, session_key):
    global _AGENT
    if _AGENT is None:
        _AGENT = _agent_class()
    return _AGENT(session_id, db, compressor, session_key)


def stamp_uids(rows):
    """Gives each row the `message_uid` the real agent's live dict carries (iot: minted at
    the row's first store write and stamped on the caller's dict, hermes_state_messages.py:409,
    435, 771 via agent/message_metadata.py:83-93; restored on load, hermes_state_identity.py:81-82),
    one per harness row (`_compactsim_id`), stable across passes. The compressor dedupes by it:
    the in-flight request it restates after the summary replaces the head original of the same
    uid (`_reappend_inflight_user_task`, agent/context_compressor.py:4984-4996); without it both
    stay. A release without `agent.message_metadata` (0.19.0) keeps no such id: no-op. The
    reply drops the key (`driver.clean` keeps chat keys and `_` metadata only)."""
    try:
        from agent.message_metadata import MESSAGE_UID
    except ImportError:
        return
    # Copies, in place in the list the pass works on: a dict the request decoder or a store
    # request may share keeps no uid (the store mints its own, as the release does).
    for i, m in enumerate(rows):
        if isinstance(m, dict) and "_compactsim_id" in m and not m.get(MESSAGE_UID):
            rows[i] = dict(m, **{MESSAGE_UID: f"compactsim-{m['_compactsim_id']}"})


class CommitGuard:
    """What `compress_context` keeps of a batch pass's result before its commit, applied to
    the gateway's batch passes (they are the compressor inside that path): the real agent's
    live list is what `compress_context` returns, not `compress()`'s bare result. In the
    release's order, each a real function:
    - an aborted pass keeps the input (the pruned list an aborted `compress()` returns is
      dropped: 0.19.0 1085-1098, iot `_candidate_rejected` 3506-3525);
    - the user-turn anchor: a result without a real user message gets the newest one back
      (`_ensure_compressed_has_user_turn`; 0.19.0 agent/conversation_compression.py:676-697,
      called at 1171; iot 2415-2446, called at 4297);
    - iot only, the anti-growth guard at the commit site: a candidate that grows the
      transcript (rough estimate) is salvaged once or refused, and the input comes back
      unchanged (`_salvage_or_refuse_grown_transcript`, 3174-3231, called by
      `_commit_compaction` before any store write, 3697-3708; 0.19.0 has none).
    Not applied (GATEWAY.md): the todo-snapshot fold (the agent's todo store is empty) and
    iot's reinsertion of a just-delivered reply the compressor folded away
    (`_ensure_compressed_keeps_last_assistant_reply`, 4285-4295; the built-in compressor
    keeps it in its tail). `begin(compressor, rows)` before the pass, `end(after)` on its
    result: the list the agent keeps. The module is imported at the first pass, after the
    store's `open` set HERMES_HOME (hermes_state reads it at import)."""

    def __init__(self):
        self.cc = self.before = self.compressor = self.attempt = None

    def begin(self, compressor, rows):
        from agent import conversation_compression as cc
        stamp_uids(rows)
        self.cc, self.compressor, self.before = cc, compressor, copy.deepcopy(rows)
        # The attempt's snapshot, as `_begin_compression_attempt` takes it before
        # `compress()` (iot's refusal restores the prune runway from it).
        snapshot = getattr(cc, "_snapshot_compressor_attempt_state", None)
        self.attempt = types.SimpleNamespace(
            snapshot=snapshot(compressor) if snapshot else {}, started_at=0.0, seed={},
            generation=0)

    def end(self, after):
        if getattr(self.compressor, "_last_compress_aborted", False):
            # An aborted `compress()` may return its pruned list (FINDINGS B6);
            # compress_context returns the caller's list (0.19.0 1085-1098; iot
            # `_candidate_rejected`, 3506-3525, its caller 4252-4256).
            return self.before
        if after == self.before:
            return after  # no progress (iot `_candidate_rejected` too)
        kept = copy.deepcopy(after)
        self.cc._ensure_compressed_has_user_turn(copy.deepcopy(self.before), kept)
        guard = getattr(self.cc, "_salvage_or_refuse_grown_transcript", None)
        if guard is None:
            return kept
        # `_commit_compaction` pops the tail tags before the size estimate (3699-3700).
        for m in kept:
            m.pop("_compaction_tail", None)
        salvaged, _prompt = guard(agent(None, None, self.compressor, None),
                                  copy.deepcopy(self.before), kept, system_message="",
                                  attempt=self.attempt)
        return self.before if salvaged is None else salvaged


def compress(agent_, messages, force):
    """The real compression path: `compress_context` (rotation: flush, end the old
    session "compression", create the child, replace its messages)."""
    from agent.conversation_compression import compress_context
    return compress_context(agent_, messages, agent_._cached_system_prompt, force=force)


def dump():
    """The durable state as rows: state.db sessions (id, parent, session_key, end
    reason, active message count), gateway_routing, sessions.json."""
    db_path = os.path.join(home(), "state.db")
    out = {"sessions": [], "gateway_routing": [], "sessions_json": None}
    if os.path.exists(db_path):
        con = sqlite3.connect(db_path)
        try:
            cols = {r[1] for r in con.execute("PRAGMA table_info(messages)")}
            active = " AND COALESCE(m.active, 1) = 1" if "active" in cols else ""
            for row in con.execute(
                "SELECT s.id, s.parent_session_id, s.session_key, s.source, s.end_reason, "
                f"(SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id{active}) "
                "FROM sessions s ORDER BY s.started_at, s.id"):
                out["sessions"].append(dict(zip(
                    ("id", "parent", "session_key", "source", "end_reason", "active_rows"),
                    row)))
            for key, entry in con.execute(
                    "SELECT session_key, entry_json FROM gateway_routing ORDER BY session_key"):
                out["gateway_routing"].append({"key": key,
                                               "session_id": json.loads(entry)["session_id"]})
        finally:
            con.close()
    path = os.path.join(home(), "sessions", "sessions.json")
    if os.path.exists(path):
        with open(path) as f:
            out["sessions_json"] = {k: v["session_id"] for k, v in json.load(f).items()
                                    if not k.startswith("_")}
    return out
