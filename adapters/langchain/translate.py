"""Protocol rows <-> LangChain messages, both ways without loss.

A row becomes the message type LangChain agents keep in `state["messages"]`:
user -> HumanMessage, assistant -> AIMessage (tool calls as `tool_calls`, parsed args, as
a provider integration builds them), tool -> ToolMessage, system -> SystemMessage. What
LangChain's types have no field for rides in `additional_kwargs`, which no middleware
reads into a prompt or a token count: the harness's row id and flags under `compactsim`,
and the raw OpenAI tool calls under `tool_calls` (as langchain-openai keeps them), so the
argument strings come back byte for byte. The message `id` is `compactsim-<row id>`.

A message LangChain wrote itself (the summary, `additional_kwargs.lc_source ==
"summarization"`) comes back as a new row flagged `_compressed_summary`.
"""

import json

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

META = "compactsim"
ID_PREFIX = "compactsim-"
_FLAGS = ("_compressed_summary", "_micro_compact_marker",
          "_compressed_summary_has_user_turn", "_db_persisted", "_compactsim_id")
_TYPES = {"user": HumanMessage, "assistant": AIMessage, "system": SystemMessage}


# The provider name a response's `response_metadata.model_provider` carries, matching the
# summary model's `ls_provider` (harness_model.py), as a provider integration writes it.
PROVIDER = "compactsim"


def to_message(row, index, prompt_tokens=None):
    """The LangChain message of protocol row `row` (the `index`-th of its transcript);
    `prompt_tokens`: the usage the provider reported for it (an assistant row)."""
    meta = {k: row[k] for k in _FLAGS if k in row}
    content = row.get("content")
    if content is None:
        meta["content_null"] = True
    kwargs = {META: meta}
    rid = row.get("_compactsim_id")
    msg_id = "%s%s" % (ID_PREFIX, rid) if rid is not None else "%snew-%d" % (ID_PREFIX, index)
    text = content or ""
    role = row["role"]
    if role == "tool":
        return ToolMessage(content=text, tool_call_id=row.get("tool_call_id") or "",
                           id=msg_id, additional_kwargs=kwargs)
    if role == "assistant" and row.get("tool_calls"):
        raw = row["tool_calls"]
        kwargs["tool_calls"] = [dict(c, function=dict(c["function"])) for c in raw]
        calls, invalid = [], []
        for c in raw:
            f = c["function"]
            try:
                args = json.loads(f["arguments"])
            except ValueError:
                args = None
            if isinstance(args, dict):
                calls.append({"name": f["name"], "args": args, "id": c["id"],
                              "type": "tool_call"})
            else:
                invalid.append({"name": f["name"], "args": f["arguments"], "id": c["id"],
                                "error": "arguments are not a JSON object",
                                "type": "invalid_tool_call"})
        return AIMessage(content=text, tool_calls=calls, invalid_tool_calls=invalid,
                         id=msg_id, additional_kwargs=kwargs, **_usage(prompt_tokens))
    if role == "assistant":
        return AIMessage(content=text, id=msg_id, additional_kwargs=kwargs,
                         **_usage(prompt_tokens))
    cls = _TYPES.get(role)
    if cls is None:
        raise ValueError("row %d: unknown role %r" % (index, role))
    return cls(content=text, id=msg_id, additional_kwargs=kwargs)


def _usage(prompt_tokens):
    """The usage fields a provider integration sets on a response it reported."""
    if prompt_tokens is None:
        return {}
    return {"usage_metadata": {"input_tokens": prompt_tokens, "output_tokens": 0,
                               "total_tokens": prompt_tokens},
            "response_metadata": {"model_provider": PROVIDER}}


def _text(msg):
    if isinstance(msg.content, str):
        return msg.content
    return msg.text


def _calls(msg):
    """The message's tool calls as protocol rows carry them: the raw strings it came in
    with when its calls are still those, else serialized from LangChain's own."""
    raw = msg.additional_kwargs.get("tool_calls") or []
    raw_by_id = {c["id"]: c for c in raw}
    out = []
    for tc in list(msg.tool_calls) + list(getattr(msg, "invalid_tool_calls", []) or []):
        r = raw_by_id.get(tc.get("id"))
        if r is not None and r["function"]["name"] == tc.get("name"):
            out.append(dict(r, function=dict(r["function"])))
            continue
        args = tc.get("args")
        out.append({"id": tc.get("id"), "type": "function",
                    "function": {"name": tc.get("name"),
                                 "arguments": args if isinstance(args, str)
                                 else json.dumps(args)}})
    order = {c["id"]: k for k, c in enumerate(raw)}
    out.sort(key=lambda c: order.get(c["id"], len(order)))
    return out


def to_row(msg):
    """The protocol row of LangChain message `msg`."""
    meta = dict(msg.additional_kwargs.get(META) or {})
    null = meta.pop("content_null", False)
    text = _text(msg)
    if isinstance(msg, ToolMessage):
        row = {"role": "tool", "content": text, "tool_call_id": msg.tool_call_id}
    elif isinstance(msg, AIMessage):
        row = {"role": "assistant", "content": text}
        calls = _calls(msg)
        if calls:
            row["tool_calls"] = calls
    elif isinstance(msg, HumanMessage):
        row = {"role": "user", "content": text}
    elif isinstance(msg, SystemMessage):
        row = {"role": "system", "content": text}
    else:
        raise ValueError("message of type %s has no protocol role" % type(msg).__name__)
    if null and text == "":
        row["content"] = None
    if msg.additional_kwargs.get("lc_source") == "summarization":
        # LangChain's own summary message: a new row the harness has not seen.
        meta = {"_compressed_summary": True}
    row.update(meta)
    return row


def to_messages(rows, usage=None):
    """`usage`: a function giving the reported prompt tokens of a row, or None."""
    return [to_message(r, k, usage(r) if usage else None) for k, r in enumerate(rows)]


def to_rows(messages):
    return [to_row(m) for m in messages]
