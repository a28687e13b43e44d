"""Round-trip test of the ADK adapter's translation (run by
front/tests/integration/framework_roundtrip.rs when the venv exists):

  target/framework-venvs/adk-2.13.0/bin/python adapters/adk/roundtrip_test.py

Every transcript of roundtrip_cases.py (system rows aside: they are the agent's
instruction) goes to ADK session events, through ADK's own serialization
(`Event.model_dump_json` / `model_validate_json`, what a database session service
stores), and back to rows: identical, row by row. Then through an ADK session and ADK's
prompt assembly (`_get_contents`): identical but for what ADK itself leaves out of a
request (an event with no visible part: the empty rows, listed). And the summary event
ADK's summarizer writes comes back as a new assistant row flagged `_compressed_summary`.
Exit 0 and `ok: ...` on success; exit 1 naming every differing row.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "framework"))
sys.path.insert(0, HERE)
import offline  # noqa: E402,F401

from google.adk.events.event import Event  # noqa: E402
from google.adk.events.event_actions import EventActions, EventCompaction  # noqa: E402
from google.adk.flows.llm_flows.context import _contents  # noqa: E402
from google.genai import types  # noqa: E402
from protocol import canonical_row  # noqa: E402

import adk_compaction  # noqa: E402
import roundtrip_cases  # noqa: E402
import translate  # noqa: E402
from usage import Usage  # noqa: E402


def visible(row):
    """Whether ADK puts the row's event in a request (an event with content to send)."""
    return bool(row.get("content") or row.get("tool_calls") or row["role"] == "tool")


def partless(failures):
    """A summary with no text reaches the request as a content with no part to trace:
    ADK's own empty summary (an empty answer it accepted, FINDINGS.md A2) comes back as
    an empty summary row, and an empty summary row the harness sent (after a restart)
    comes back as itself, id and flags included, wherever it stands."""
    rows = [{"role": "user", "content": "first FACT-000001", "_compactsim_id": 1},
            {"role": "assistant", "content": "ok", "_compactsim_id": 2},
            {"role": "assistant", "content": "", "_compressed_summary": True,
             "_compactsim_id": 3},
            {"role": "user", "content": "second", "_compactsim_id": 4},
            {"role": "assistant", "content": "done", "_compactsim_id": 5}]
    case = adk_compaction.Case("sliding", 128_000, Usage())
    case.append(rows)
    got = [canonical_row(r) for r in case.view()]
    roundtrip_cases.check("empty summary row (prompt)", [canonical_row(r) for r in rows],
                          got, failures)
    at = case.builder.tick()
    empty = Event(author="user", invocation_id="x", timestamp=at, actions=EventActions(
        compaction=EventCompaction(start_timestamp=1.0, end_timestamp=at,
                                   compacted_content=types.Content(role="model", parts=None))))
    LOOP = adk_compaction.LOOP
    LOOP.run_until_complete(case.service.append_event(case.session, empty))
    got = [canonical_row(r) for r in case.view()]
    want = [canonical_row({"role": "assistant", "content": "", "_compressed_summary": True})]
    roundtrip_cases.check("ADK's empty summary (prompt)", want, got, failures)
    # The harness names the row; the next view keeps the name on the same event.
    named = dict(got[0], _compactsim_id=6)
    if not case.extends([named]):
        failures.append("ADK's empty summary: the named row does not extend the view")
    got = [canonical_row(r) for r in case.view()]
    roundtrip_cases.check("ADK's empty summary, named (prompt)", [canonical_row(named)], got,
                          failures)


def main():
    failures = []
    shapes = roundtrip_cases.shapes()
    for name, rows in shapes.items():
        rows = [r for r in rows if r["role"] != "system"]
        want = [canonical_row(r) for r in rows]
        builder = translate.Events(adk_compaction.AGENT)
        events = [builder.event(r) for r in rows]
        got = [canonical_row(r) for r in translate.events_to_rows(events)]
        roundtrip_cases.check(name, want, got, failures)
        stored = [Event.model_validate_json(e.model_dump_json()) for e in events]
        got = [canonical_row(r) for r in translate.events_to_rows(stored)]
        roundtrip_cases.check(name + " (stored)", want, got, failures)
        case = adk_compaction.Case("token", 128_000, Usage())
        case.append(rows)
        got = [canonical_row(r) for r in case.view()]
        roundtrip_cases.check(name + " (prompt)", [r for r in want if visible(r)], got,
                              failures)
    summary = Event(author="user", invocation_id="x", actions=EventActions(
        compaction=EventCompaction(start_timestamp=1.0, end_timestamp=2.0,
                                   compacted_content=types.Content(
                                       role="model", parts=[types.Part(text="FACT-000009")]))))
    rows = translate.events_to_rows([summary])
    if rows != [{"role": "assistant", "content": "FACT-000009", "_compressed_summary": True}]:
        failures.append("summary event: %r" % rows)
    partless(failures)
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print("ok: %d transcripts (%d rows) through ADK events, their JSON and ADK's prompt "
          "assembly and back, identical" % (len(shapes), sum(len(r) for r in shapes.values())))


if __name__ == "__main__":
    main()
