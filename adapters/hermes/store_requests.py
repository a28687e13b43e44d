"""The `store` requests (adapters/PROTOCOL.md, "Gateway store") on the real Hermes store:
`gateway.session.SessionStore` and `hermes_state.SessionDB` under HERMES_HOME = the case's
durable directory, the rotation and in-place commit through the real
`agent.conversation_compression.compress_context` (gateway_real.py says what is not real).

Beside state.db the adapter keeps one file of its own in the directory, `compactsim.db`:
which state.db message row carries which `_compactsim_id` (Hermes keeps no such column;
a new row is matched to the request's rows by role and content, in order), the harness's
route key, and the inbound ids whose turns are recorded (Hermes keeps no per-inbound
record in state.db; the harness's idempotency record stands in for the platform's own
offset). Each request's writes finish before its reply, and the harness kills only between
requests, so the side file never disagrees with state.db.
"""

import copy
import json
import os
import sqlite3

import gateway_real as g
import offline

SIDE_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS ids (msg INTEGER PRIMARY KEY, cid INTEGER)",
    "CREATE TABLE IF NOT EXISTS delivered (inbound INTEGER PRIMARY KEY)",
    "CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT)",
)
CHAT_ROW_KEYS = ("role", "content", "tool_calls", "tool_call_id")
TOPIC_THREAD_ID = "7"


class Store:
    def __init__(self, release):
        self.release = release
        self.store = None
        self.side = None
        self.dir = None
        self.key = None
        self.topic = False
        self.src = None
        self._saved_counters = None
        # The inbound message being handled (its `deliver` to its `ack`): its id is the
        # platform message id the release's turn-start flush stamps on the user row.
        self.inbound = None
        self._stamps_platform_id = None

    # ── requests ────────────────────────────────────────────────────────────

    def handle(self, req, summarize):
        offline.CURRENT["now_ms"] = req.get("now_ms", 0)
        offline.CURRENT["summarize"] = summarize
        op = req["op"]
        try:
            if op != "open" and self.store is None:
                raise ValueError(f"store {op} before open")
            value = getattr(self, "op_" + op)(req)
            inbound = req.get("inbound")
            if inbound is not None and op in ("append", "compact", "retract", "reset"):
                self._record_delivered(inbound)
        finally:
            offline.CURRENT["summarize"] = None
            if self.side is not None:
                self._save_counters()
                # One side-file transaction per request: the harness kills only between
                # requests, and a commit per row cost a sync each (most of a case's time).
                self.side.commit()
        return {"value": value}

    def op_open(self, req):
        """The child's store: one directory for the life of the process, as a gateway
        process keeps one HERMES_HOME (the release's modules fix paths when imported:
        0.19.0 hermes_state.py:153 `DEFAULT_DB_PATH = get_hermes_home() / "state.db"`).
        The harness starts a new child for each case's store; an `open` of another
        directory in the same process is refused."""
        if self.dir is not None and req["dir"] != self.dir:
            raise ValueError(f"store open {req['dir']}: this process serves {self.dir} "
                             "(a gateway process keeps one store; start a new child)")
        self._close()
        self.dir = req["dir"]
        home = os.path.join(req["dir"], "hermes-home")
        os.makedirs(home, exist_ok=True)
        os.environ["HERMES_HOME"] = home
        g.patch_store_modules()
        # isolation_level "": the first write of a request opens its transaction, and
        # `handle` commits it once the request's writes are done.
        self.side = sqlite3.connect(os.path.join(req["dir"], "compactsim.db"),
                                    isolation_level="")
        for stmt in SIDE_SCHEMA:
            self.side.execute(stmt)
        self._load_counters()
        self.key, self.topic = req["key"], bool(req.get("topic"))
        self.src = g.source(chat=_chat_id(self.key))
        if self.topic:
            self.src.thread_id = TOPIC_THREAD_ID
        self.store = g.open_store()
        db_path = os.path.realpath(str(self.store._db.db_path))
        if not db_path.startswith(os.path.realpath(home) + os.sep):
            raise ValueError(f"store open: state.db is {db_path}, outside {home}")
        return None

    def _close(self):
        if self.store is not None and self.store._db is not None:
            self.store._db.close()
        if self.side is not None:
            self.side.close()
        self.store = self.side = None

    def op_create(self, req):
        if req.get("route", True):
            # gateway/session.py get_or_create_session: the session row, its peer and
            # the route, as the gateway's first message makes them.
            sid = self.store.get_or_create_session(self.src).session_id
            if self.topic:
                self._bind(sid)
        else:
            sid = self._new_session_id()
            self.db.create_session(session_id=sid, source="telegram")
        self._append(sid, req["rows"])
        return {"session": sid}

    def op_deliver(self, req):
        self.inbound = req.get("inbound")
        return None

    def op_load(self, req):
        sid = req.get("session")
        if sid is None:
            sid = self._resolve()
        return {"session": sid, "rows": self._active_cids(sid) if sid else []}

    def op_append(self, req):
        self._append(req["session"], req["rows"])
        return None

    def op_compact(self, req):
        sid = req["session"]
        return {"session": self._compress(sid, req["rows"], req["mode"] == "in_place")}

    def op_route(self, req):
        self._sync_route(req["session"])
        return None

    def _entry_session(self):
        with self.store._lock:
            self.store._ensure_loaded_locked()
            entry = self.store._entries.get(self._session_key())
        return entry.session_id if entry is not None else None

    def _sync_route(self, sid):
        """gateway/run.py session-split sync: entry.session_id = the agent's id;
        session_store._save(); session_store._record_gateway_session_peer(...)."""
        with self.store._lock:
            self.store._ensure_loaded_locked()
            entry = self.store._entries.get(self._session_key())
        if entry is None:
            entry = self.store.get_or_create_session(self.src)
        entry.session_id = sid
        self.store._save()
        self.store._record_gateway_session_peer(sid, entry.session_key, self.src)

    def op_bind(self, req):
        self._bind(req["session"])
        return None

    def op_retract(self, req):
        # Neither release supersedes a failed or crashed turn's rows: the agent's
        # crash-resilience flush wrote the user row before the first LLM call (0.19.0
        # agent/turn_context.py:860-869, iot agent/turn_context.py:1026), and the
        # gateway's "do not persist" rule for a context-overflow failure only skips its
        # own transcript writes (0.19.0 gateway/run.py:13228-13233 and 13328-13329, iot
        # gateway/run_turn.py:1846-1847). Nothing to write: the store keeps the rows.
        return None

    def op_reset(self, req):
        # The exhausted auto-reset runs after the agent returns, so after the
        # session-split sync: a turn that rotated and then exhausted has its entry on the
        # child first (0.19.0 gateway/run.py:20958-20994 inside `_run_agent_inner`, then
        # the reset at 13255-13266; iot gateway/run_turn.py:2234 `_hmwa_shape_agent_response`,
        # its sync at 1569-1583, then 2252 `_hmwa_compression_exhaustion_reset`, 1775-1777).
        # `reset_session` then ends that child and names it the new session's parent (iot
        # session.py:1134-1157). `/reset` (reason `command`) resets whatever the entry names.
        if req.get("reason") == "exhausted" and self._entry_session() != req["session"]:
            self._sync_route(req["session"])
        # gateway/session.py reset_session: the old session ended, a new one routed.
        entry = self.store.reset_session(self._session_key())
        if entry is None:
            raise ValueError(f"reset_session found no entry for {self._session_key()}")
        self._append(entry.session_id, req["rows"])
        if self.topic:
            self._bind(entry.session_id)
        return {"session": entry.session_id}

    def op_stop(self, req):
        return None

    def op_ack(self, req):
        self.inbound = None
        return None

    def op_read(self, req):
        return self._read()

    # ── the real calls ───────────────────────────────────────────────────────

    @property
    def db(self):
        return self.store._db

    def _session_key(self):
        return self.store._generate_session_key(self.src)

    def _new_session_id(self):
        now = g.VirtualDatetime.now()
        return f"{now.strftime('%Y%m%d_%H%M%S')}_{g.IDS.uuid4().hex[:8]}"

    def _resolve(self):
        """A message's session as the gateway resolves it: get_or_create_session (its
        start-up prune and recovery, the compression-tip heal), then for a topic lane
        the binding walked to its compression tip and switched to (gateway/run.py, the
        topic-binding heal; GATEWAY.md gives its lines)."""
        entry = self.store.get_or_create_session(self.src)
        if not self.topic:
            return entry.session_id
        binding = self.db.get_telegram_topic_binding(chat_id=str(self.src.chat_id),
                                                     thread_id=TOPIC_THREAD_ID)
        if not binding:
            self._bind(entry.session_id)
            return entry.session_id
        bound = str(binding.get("session_id") or "")
        tip = self.db.get_compression_tip(bound) or bound
        if tip and tip != entry.session_id:
            switched = self.store.switch_session(entry.session_key, tip)
            if switched is not None:
                entry = switched
        if tip != bound:
            self._bind(entry.session_id)
        return entry.session_id

    def _bind(self, sid):
        # gateway/run.py _record_telegram_topic_binding → SessionDB.bind_telegram_topic;
        # the gateway swallows its failure (0.19.0 run.py:3995-4000 and 12077-12081: logged
        # at debug, the binding left as it was), and so does the adapter.
        try:
            self._bind_now(sid)
        except Exception:  # noqa: BLE001  (the release's own rule, see above)
            pass

    def _bind_now(self, sid):
        self.db.bind_telegram_topic(chat_id=str(self.src.chat_id), thread_id=TOPIC_THREAD_ID,
                                    user_id=str(self.src.user_id or ""),
                                    session_key=self._session_key(), session_id=sid)

    def _append(self, sid, rows):
        for row in rows:
            m = _chat_row(row)
            if m["role"] == "user" and self.inbound is not None and self.stamps_platform_id():
                # iot: the gateway hands the raw inbound id to the agent
                # (gateway/run_turn_runner.py:1719-1721), whose turn-start row carries it
                # (agent/turn_context.py:703-706, session_persistence.py:422-433) into the
                # `platform_message_id` column; the harness's inbound id is the platform's
                # message id, the same on every delivery of the message.
                m["platform_message_id"] = str(self.inbound)
                self.inbound = None
            self.store.append_to_transcript(sid, m)
        self._map_new_rows(rows)

    def stamps_platform_id(self):
        """Whether the release's turn-start flush stamps the platform message id on the
        user row (iot 0.22.2.post1: `build_turn_context(persist_user_platform_id=)`;
        0.19.0 has no such parameter, agent/turn_context.py:268)."""
        if self._stamps_platform_id is None:
            import inspect
            from agent import turn_context
            self._stamps_platform_id = "persist_user_platform_id" in inspect.signature(
                turn_context.build_turn_context).parameters
        return self._stamps_platform_id

    def _compress(self, sid, rows, in_place):
        """compress_context on the session's active rows, its compressor's result the
        harness's compacted rows (the release's compressor already made them in the
        batch pass)."""
        messages = self._active_messages(sid)
        c = self.release.cc.ContextCompressor(**self.release.constructor_kwargs(dict(
            model="compactsim-fake-model", quiet_mode=True, config_context_length=1_000_000)))
        compacted = [_chat_row(r) for r in rows]
        # The release's compressor tags its verbatim tail (`_compaction_tail`, iot: the
        # carried originals are then superseded, not archived searchable); the rows come back
        # from the harness untagged, so the tail it carried is tagged again: the longest
        # suffix of `rows` that is the suffix of the session's active rows.
        active = self._active_cids(sid)
        k = 0
        while (k < min(len(rows), len(active))
               and rows[-1 - k].get("_compactsim_id") == active[-1 - k] is not None):
            k += 1
        for m in compacted[len(compacted) - k:]:
            m["_compaction_tail"] = True
        c.compress = lambda _messages, **_kw: copy.deepcopy(compacted)
        agent = g.agent(sid, self.db, c, self._session_key())
        agent.compression_in_place = in_place
        g.compress(agent, messages, force=True)
        self._map_new_rows(rows)
        return agent.session_id

    def _active_messages(self, sid):
        """The session's active rows as the agent holds them after a load: chat dicts
        stamped as already stored (the flush skips them)."""
        from agent.context_compressor import _DB_PERSISTED_MARKER
        out = []
        for role, content, tool_calls, tool_call_id in self.db._conn.execute(
                "SELECT role, content, tool_calls, tool_call_id FROM messages "
                "WHERE session_id = ? AND active = 1 ORDER BY id", (sid,)):
            m = {"role": role, "content": content}
            if tool_calls:
                m["tool_calls"] = json.loads(tool_calls)
            if tool_call_id:
                m["tool_call_id"] = tool_call_id
            m[_DB_PERSISTED_MARKER] = True
            out.append(m)
        return out

    # ── the side file ────────────────────────────────────────────────────────

    def _map_new_rows(self, rows):
        """Gives the message rows state.db gained since the last mapping the
        `_compactsim_id` of the request row with the same role and content (in order;
        none: a row the harness never sent)."""
        seen = self.side.execute("SELECT COALESCE(MAX(msg), 0) FROM ids").fetchone()[0]
        new = self.db._conn.execute(
            "SELECT id, role, content FROM messages WHERE id > ? ORDER BY id", (seen,)).fetchall()
        wanted = [(r.get("role"), _text(r.get("content")), r.get("_compactsim_id")) for r in rows]
        j = 0
        for msg, role, content in new:
            cid = None
            for k in range(j, len(wanted)):
                if wanted[k][0] == role and wanted[k][1] == (content or ""):
                    cid, j = wanted[k][2], k + 1
                    break
            self.side.execute("INSERT OR REPLACE INTO ids VALUES (?, ?)", (msg, cid))

    def _cids(self):
        return dict(self.side.execute("SELECT msg, cid FROM ids"))

    def _active_cids(self, sid):
        cids = self._cids()
        return [cids.get(m) for (m,) in self.db._conn.execute(
            "SELECT id FROM messages WHERE session_id = ? AND active = 1 ORDER BY id", (sid,))]

    def _load_counters(self):
        got = dict(self.side.execute("SELECT k, v FROM meta"))
        self._saved_counters = (int(got.get("ids", 0)), int(got.get("ticks", 0)))
        g.set_counters(*self._saved_counters)

    def _save_counters(self):
        ids, ticks = g.counters()
        if (ids, ticks) == self._saved_counters:
            return
        self._saved_counters = (ids, ticks)
        self.side.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                              (("ids", str(ids)), ("ticks", str(ticks))))

    def _record_delivered(self, inbound):
        self.side.execute("INSERT OR IGNORE INTO delivered VALUES (?)", (int(inbound),))

    def _read(self):
        cids = self._cids()
        conn = self.db._conn
        sessions = []
        for sid, parent, end_reason, ended in conn.execute(
                "SELECT id, parent_session_id, end_reason, ended_at IS NOT NULL OR end_reason "
                "IS NOT NULL FROM sessions ORDER BY rowid"):
            rows = [{"id": cids.get(m), "active": bool(a), "compacted": bool(c)}
                    for m, a, c in conn.execute(
                        "SELECT id, active, compacted FROM messages WHERE session_id = ? "
                        "ORDER BY id", (sid,))]
            sessions.append({"session": sid, "parent": parent, "ended": bool(ended),
                             "end_reason": end_reason, "rows": rows})
        routes = []
        mine = self._session_key()
        for skey, entry_json in sorted(self.db.load_gateway_routing_entries(
                scope=self.store._routing_scope()).items()):
            routes.append([self.key if skey == mine else skey,
                           json.loads(entry_json)["session_id"]])
        bindings = []
        if self.topic:
            b = self.db.get_telegram_topic_binding(chat_id=str(self.src.chat_id),
                                                   thread_id=TOPIC_THREAD_ID)
            if b:
                bindings.append([self.key, str(b["session_id"])])
        delivered = [i for (i,) in self.side.execute("SELECT inbound FROM delivered ORDER BY 1")]
        return {"sessions": sessions, "routes": routes, "bindings": bindings,
                "delivered": delivered}


def preload():
    """The modules a child imports at `open`, at its first compaction and on a summary
    call's connection error, imported now (a gateway fork server's image,
    fork_server.py): the store modules patched to the virtual clock, `run_agent`, and
    `openai` (0.19.0 agent/auxiliary_client.py:3153 imports it inside
    `_is_connection_error`, 1-2 s of a child's CPU). Each reads at import only
    HERMES_HOME, which the caller sets to the case's, as `open` does."""
    g.patch_store_modules()
    g._import_run_agent()
    try:
        import openai  # noqa: F401
    except ImportError:
        pass


def _chat_id(key):
    return "".join(ch if ch.isalnum() else "_" for ch in key)


def _text(content):
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def _chat_row(row):
    out = {k: row[k] for k in CHAT_ROW_KEYS if k in row and row[k] is not None}
    out["content"] = _text(row.get("content"))
    return out
