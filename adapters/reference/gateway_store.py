"""The reference gateway store of compactsim in Python (standard library only): the
reference compactor (`compactor.py`) plus the gateway's session store, kept durably in
the directory the harness names in `store` `open` (adapters/PROTOCOL.md, "Gateway
store"). The store is one JSON file, `store.json`, rewritten whole by an atomic rename
at every write, so a kill at any moment leaves the last complete write; `read` reads the
file back (what is on disk, not what this process remembers).

Usage: python3 adapters/reference/gateway_store.py
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from compactor import main  # noqa: E402

STORE_FILE = "store.json"
# A parent walk longer than this is a cycle (the harness's LINEAGE_DEPTH_MAX).
LINEAGE_DEPTH_MAX = 4096


def empty():
    return {"sessions": [], "routes": {}, "bindings": {}, "delivered": []}


class Store:
    """The durable store of one case, and the process's in-memory route entries."""

    def __init__(self):
        self.dir = None
        self.key = None
        self.topic = False
        self.entries = {}

    # --- disk ---------------------------------------------------------------------------

    def path(self):
        return os.path.join(self.dir, STORE_FILE)

    def load_disk(self):
        try:
            with open(self.path(), encoding="utf-8") as f:
                return json.load(f)
        except FileNotFoundError:
            return empty()

    def save(self, state):
        tmp = self.path() + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(state, f, separators=(",", ":"))
        os.replace(tmp, self.path())

    # --- the store's own rules ----------------------------------------------------------

    @staticmethod
    def session(state, sid):
        for s in state["sessions"]:
            if s["session"] == sid:
                return s
        raise ValueError("no session %r" % sid)

    @staticmethod
    def create(state, parent, rows):
        sid = "s%06d" % len(state["sessions"])
        state["sessions"].append({"session": sid, "parent": parent, "ended": False,
                                  "rows": [active(r) for r in rows]})
        return sid

    @staticmethod
    def tip(state, sid):
        """The newest session of `sid`'s lineage (the compression tip)."""
        for _ in range(LINEAGE_DEPTH_MAX):
            children = [s["session"] for s in state["sessions"] if s["parent"] == sid]
            if not children:
                return sid
            sid = children[-1]
        raise ValueError("lineage of %r too deep" % sid)

    def resolve(self, state):
        """The session a started gateway serves the key from: the topic binding walked to
        its tip (re-synced when stale), else the in-memory entry, else the saved route."""
        bound = state["bindings"].get(self.key) if self.topic else None
        if bound is not None:
            tip = self.tip(state, bound)
            if tip != bound:
                state["bindings"][self.key] = tip
                self.save(state)
            return tip
        return self.entries.get(self.key) or state["routes"].get(self.key)

    # --- requests -----------------------------------------------------------------------

    def handle(self, req):
        op = req["op"]
        if op == "open":
            self.dir, self.key, self.topic = req["dir"], req["key"], bool(req["topic"])
            self.entries = {}
            found = "found" if os.path.exists(self.path()) else "empty"
            sys.stderr.write("store open %s (%s)\n" % (self.dir, found))
            sys.stderr.flush()
            return None
        if op == "read":
            return snapshot(self.load_disk())
        if op in ("deliver", "stop", "ack"):
            return None
        state = self.load_disk()
        value = getattr(self, "op_" + op)(state, req)
        return value

    def op_load(self, state, req):
        sid = req.get("session") or self.resolve(state)
        if sid is None:
            return {"session": None, "rows": []}
        self.entries[self.key] = sid
        rows = self.session(state, sid)["rows"]
        return {"session": sid, "rows": [r["id"] for r in rows if r["active"]]}

    def op_create(self, state, req):
        sid = self.create(state, None, req["rows"])
        if req["route"]:
            self.set_route(state, req["key"], sid)
            if self.topic:
                state["bindings"][req["key"]] = sid
        self.save(state)
        return {"session": sid}

    def op_append(self, state, req):
        s = self.session(state, req["session"])
        s["rows"].extend(active(r) for r in req["rows"])
        record(state, req.get("inbound"))
        self.save(state)
        return None

    def op_compact(self, state, req):
        sid = req["session"]
        if req["mode"] == "rotate":
            self.session(state, sid)["ended"] = True
            sid = self.create(state, sid, req["rows"])
        else:
            carried = {r.get("_compactsim_id") for r in req["rows"]}
            s = self.session(state, sid)
            for r in s["rows"]:
                if r["active"]:
                    r["active"] = False
                    r["compacted"] = r["id"] not in carried
            s["rows"].extend(active(r) for r in req["rows"])
        record(state, req.get("inbound"))
        self.save(state)
        return {"session": sid}

    def op_route(self, state, req):
        self.set_route(state, req["key"], req["session"])
        self.save(state)
        return None

    def set_route(self, state, key, sid):
        """The route saved with the in-memory entry (the gateway's `_save`)."""
        self.entries[key] = sid
        state["routes"][key] = sid

    def op_bind(self, state, req):
        state["bindings"][req["key"]] = req["session"]
        self.save(state)
        return None

    def op_retract(self, state, req):
        rows = self.session(state, req["session"])["rows"]
        at = max((i for i, r in enumerate(rows) if r["active"] and r["id"] == req["from"]),
                 default=None)
        if at is not None:
            for r in rows[at:]:
                if r["active"]:
                    r["active"] = False
                    r["compacted"] = False
        record(state, req.get("inbound"))
        self.save(state)
        return None

    def op_reset(self, state, req):
        self.session(state, req["session"])["ended"] = True
        sid = self.create(state, None, req["rows"])
        self.set_route(state, req["key"], sid)
        if self.topic:
            state["bindings"][req["key"]] = sid
        record(state, req.get("inbound"))
        self.save(state)
        return {"session": sid}


def active(row):
    return {"id": row.get("_compactsim_id"), "active": True, "compacted": False}


def record(state, inbound):
    if inbound is not None and inbound not in state["delivered"]:
        state["delivered"].append(inbound)


def snapshot(state):
    return {"sessions": state["sessions"],
            "routes": sorted([k, v] for k, v in state["routes"].items()),
            "bindings": sorted([k, v] for k, v in state["bindings"].items()),
            "delivered": state["delivered"]}


def serve_store(store, name="compactsim-reference-gateway-store"):
    def handler(req, summarize):
        return {"value": store.handle(req)}
    main(name=name, store=handler)


if __name__ == "__main__":
    serve_store(Store())
