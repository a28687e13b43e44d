"""Protocol rows <-> Google ADK session events and request contents, both ways without loss.

Rows to events, as an ADK `Runner` records a session:
- a user row: an event by `user`, `Content(role="user", parts=[Part(text)])`; it starts a
  new invocation (an ADK invocation is one user message and the agent's work on it);
- an assistant row: an event by the agent, `Content(role="model")` with a text part (when
  it has text) and a `FunctionCall(id, name, args)` part per tool call;
- a tool row: an event by the agent, `Content(role="user", parts=[Part(function_response=
  FunctionResponse(id, name, response={"result": text}))])`, as ADK wraps a tool's
  non-dict result;
- a summary row the adapter did not write in this session (after a restart): a compaction
  event (`EventActions(compaction=EventCompaction(...))`) whose range covers no raw event,
  materialized where the row stands.
What ADK's types have no field for (the harness's row id and flags, the raw argument
strings of tool calls, a `null` content) rides in `Event.custom_metadata["compactsim"]`.

Contents to rows: `Rows` finds the session event of each part of a request ADK's own
prompt assembly (`_get_contents`) built: a function call or response by its call id (the
harness's ids are unique), a text by the identity of its string (the assembly copies
parts shallowly, so a text is the very object of its event). One row per event (a tool
row per function response), with that event's id and flags.
"""

import json

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions, EventCompaction
from google.genai import types

META = "compactsim"
_FLAGS = ("_compressed_summary", "_micro_compact_marker",
          "_compressed_summary_has_user_turn", "_db_persisted", "_compactsim_id")


def row_meta(row):
    """The row's id and flags (what the event keeps in `custom_metadata`)."""
    meta = {k: row[k] for k in _FLAGS if k in row}
    if row.get("content") is None:
        meta["content_null"] = True
    return meta


class Events:
    """Builds a case's session events from rows, numbering timestamps and invocations."""

    def __init__(self, agent_name):
        self.agent = agent_name
        self.clock = 0.0
        self.invocations = 0
        self.invocation = "inv-0"
        self.call_names = {}

    def tick(self):
        self.clock += 1.0
        return self.clock

    def event(self, row, prompt_tokens=None):
        """The session event of protocol row `row`; `prompt_tokens`: the usage the
        provider reported for it (an assistant row)."""
        meta = row_meta(row)
        role, text = row["role"], row.get("content") or ""
        if row.get("_compressed_summary"):
            return self.summary(row, meta)
        if role == "user":
            self.invocations += 1
            self.invocation = "inv-%d" % self.invocations
            parts, author, crole = [types.Part(text=text)], "user", "user"
        elif role == "assistant":
            parts = [types.Part(text=text)] if text else []
            raw = {}
            for c in row.get("tool_calls") or []:
                f = c["function"]
                try:
                    args = json.loads(f["arguments"])
                except ValueError:
                    args = None
                if not isinstance(args, dict):
                    args = {"arguments": f["arguments"]}
                raw[c["id"]] = f["arguments"]
                self.call_names[c["id"]] = f["name"]
                parts.append(types.Part(function_call=types.FunctionCall(
                    id=c["id"], name=f["name"], args=args)))
            meta["arguments"] = raw
            author, crole = self.agent, "model"
        elif role == "tool":
            cid = row.get("tool_call_id")
            parts = [types.Part(function_response=types.FunctionResponse(
                id=cid, name=self.call_names.get(cid, "unknown_tool"),
                response={"result": text}))]
            author, crole = self.agent, "user"
        else:
            raise ValueError("row role %r has no ADK event (system rows are the agent's "
                             "instruction)" % role)
        event = Event(author=author, invocation_id=self.invocation, timestamp=self.tick(),
                      content=types.Content(role=crole, parts=parts),
                      custom_metadata={META: meta})
        if role == "assistant":
            set_usage(event, prompt_tokens)
        return event

    def summary(self, row, meta):
        at = self.tick()
        crole = "user" if row["role"] == "user" else "model"
        content = types.Content(role=crole, parts=[types.Part(text=row.get("content") or "")])
        return Event(author="user", invocation_id="compaction-%d" % int(at), timestamp=at,
                     actions=EventActions(compaction=EventCompaction(
                         start_timestamp=at, end_timestamp=at, compacted_content=content)),
                     custom_metadata={META: meta})


def set_usage(event, prompt_tokens):
    """The usage a model response reported, as ADK keeps it on the response's event."""
    if prompt_tokens is not None and event.usage_metadata is None:
        event.usage_metadata = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=prompt_tokens)


class Rows:
    """Rows of request contents, each part traced to its session event (`_key`)."""

    def __init__(self, events):
        self.owner = {}
        self.add(events)

    def add(self, events):
        """Names the parts of `events` (appended after those already named)."""
        for e in events:
            content = e.content
            if e.actions and e.actions.compaction and e.actions.compaction.compacted_content:
                content = e.actions.compaction.compacted_content
            for p in (content.parts or []) if content else []:
                key = _key(p)
                if key is not None:
                    self.owner.setdefault(key, e)


    def rows(self, contents, events=None):
        """The rows of `contents` (`events`: the event of each content, when known)."""
        return self.rows_owned(contents, events)[0]

    def rows_owned(self, contents, events=None, untraced=()):
        """The rows of `contents` and the session event each row came from (None: a
        content ADK built itself). `untraced`: the events of the contents no part of which
        names its event (`traced`), in order: compaction events (see `untraced_events`)."""
        out, owners, current, row = [], [], None, None
        untraced = iter(untraced)
        for k, c in enumerate(contents):
            whole = None
            if events is None and not traced(c):
                whole = next(untraced, None)
            for p in c.parts or []:
                if events is not None:
                    event = events[k]
                elif whole is not None:
                    event = whole
                else:
                    event = self.owner.get(_key(p) or ())
                if p.function_response is not None:
                    out.append(tool_row(p.function_response, event))
                    owners.append(event)
                    current = None
                    continue
                if event is None or event is not current:
                    row = new_row(c, event)
                    out.append(row)
                    owners.append(event)
                    current = event
                add_part(row, p, event)
            if not c.parts:
                event = events[k] if events is not None else whole
                out.append(new_row(c, event))
                owners.append(event)
                current = None
        return [finish(r) for r in out], owners


def traced(content):
    """Whether a part of `content` names its event (`_key`). A request content that does
    not is a compaction's summary with no text (an empty summary ADK accepted, A2 in
    FINDINGS.md, or an empty summary row materialized after a restart): the prompt
    assembly drops every other event without a visible part (`_contains_empty_content`,
    flows/llm_flows/context/_contents.py lines 256-281, compaction events exempt at 274)."""
    return any(_key(p) is not None for p in content.parts or []) if content else False


def untraced_events(events, processed):
    """The compaction events of `events` whose summary no part traces, in the order
    ADK's `_process_compaction_events` materialized them (`processed`: its result over
    `events`; each materialized event shares the `actions` of its compaction event)."""
    by_actions = {id(e.actions): e for e in events if e.actions and e.actions.compaction}
    return [by_actions[id(p.actions)] for p in processed
            if p.actions and p.actions.compaction and id(p.actions) in by_actions
            and not traced(p.content)]


def _key(part):
    """What names a part's event: a function call or response by its call id (ADK merges
    parallel responses into new parts), a text by the identity of its string (prompt
    assembly copies parts shallowly; "" is one shared object and names no event)."""
    if part.function_call is not None:
        return ("call", part.function_call.id)
    if part.function_response is not None:
        return ("response", part.function_response.id)
    if part.text:
        return ("text", id(part.text))
    return None


def _meta(event):
    return dict(((event.custom_metadata or {}).get(META) or {})) if event is not None else {}


def new_row(content, event):
    meta = _meta(event)
    role = "user" if content.role == "user" else "assistant"
    if event is not None and event.actions and event.actions.compaction and not meta:
        meta = {"_compressed_summary": True}  # ADK's own summary: a new row
    return {"role": role, "content": "", "__meta": meta}


def add_part(row, part, event):
    if part.text is not None and not part.thought:
        row["content"] = (row["content"] + "\n" if row["content"] else "") + part.text
    if part.function_call is not None:
        fc = part.function_call
        raw = _meta(event).get("arguments", {}).get(fc.id)
        args = fc.args or {}
        if raw is None or not _same_args(raw, args):
            raw = json.dumps(args)
        row.setdefault("tool_calls", []).append(
            {"id": fc.id, "type": "function", "function": {"name": fc.name, "arguments": raw}})


def _same_args(raw, args):
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    return parsed == args or args == {"arguments": raw}


def tool_row(fr, event):
    resp = fr.response or {}
    text = resp.get("result") if isinstance(resp, dict) and set(resp) == {"result"} \
        else json.dumps(resp)
    return {"role": "tool", "content": text if isinstance(text, str) else json.dumps(text),
            "tool_call_id": fr.id, "__meta": _meta(event)}


def finish(row):
    meta = row.pop("__meta")
    meta.pop("arguments", None)
    if meta.pop("content_null", False) and row["content"] == "":
        row["content"] = None
    row.update(meta)
    return row


def event_contents(events):
    """Each event's content as the session holds it (a compaction event's summary)."""
    out = []
    for e in events:
        c = e.content
        if e.actions and e.actions.compaction and e.actions.compaction.compacted_content:
            c = e.actions.compaction.compacted_content
        out.append(c)
    return out


def events_to_rows(events):
    """The rows of session events, one by one (no prompt assembly)."""
    return Rows(events).rows(event_contents(events), events)
