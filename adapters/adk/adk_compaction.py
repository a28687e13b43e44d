"""compactsim adapter: the real event compaction of google-adk==2.13.0
(`google/adk/apps/compaction.py`, `google/adk/apps/llm_event_summarizer.py`), offline.

  target/framework-venvs/adk-2.13.0/bin/python adapters/adk/adk_compaction.py [CONFIG]

CONFIG (argv[1], else the environment variable COMPACTSIM_ADK_CONFIG, else `token`)
chooses the `EventsCompactionConfig` (FINDINGS.md says why these two):
- `token` (the docs' primary strategy): `token_threshold` 80 % of the case's window,
  `event_retention_size=5`; run as ADK's `CompactionRequestProcessor` runs it before a
  model call (`_run_compaction_for_token_threshold_config`).
- `sliding`: `compaction_interval=3`, `overlap_size=1` (the docs' sample), run as the
  `Runner` runs it after an invocation (`_run_compaction_for_sliding_window`, its event
  appended to the session).

ADK never deletes an event: a compaction appends an event whose summary stands for a
timestamp range of the session, and the model sees what ADK's prompt assembly
(`_get_contents`) makes of the whole session. So the adapter keeps one ADK session per
case (an `InMemorySessionService`): each pass appends the rows the harness added since
the transcript it returned last (translate.py), runs the compaction, and returns the
request contents ADK assembles, as rows. A transcript that does not extend the one it
returned (a restart, a session the harness rebuilt) starts a fresh session from its rows.
The system rows are the agent's instruction, which ADK keeps outside the session.
The newest model event carries the prompt tokens the provider reported for it (the
`usage` hook, ../framework/usage.py), which ADK's trigger reads before its own estimate.
The adapter declares batch passes only: a compaction replaces whole invocations, user
turns included, by one summary (batch compaction in the protocol's terms).
The summarizer is ADK's `LlmEventSummarizer` over `HarnessLlm` (harness_llm.py).
"""

import asyncio
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "framework"))
sys.path.insert(0, HERE)
import offline  # noqa: E402,F401  (before any framework import)

from importlib.metadata import version  # noqa: E402

# ADK marks compaction experimental on every config it builds; the warning is not news.
warnings.filterwarnings("ignore", message=r"\[EXPERIMENTAL\]")

from google.adk.agents.llm_agent import LlmAgent  # noqa: E402
from google.adk.apps import compaction  # noqa: E402
from google.adk.apps.app import App, EventsCompactionConfig  # noqa: E402
from google.adk.flows.llm_flows.context import _compaction as _compaction_context  # noqa: E402
from google.adk.flows.llm_flows.context import _contents  # noqa: E402
from google.adk.sessions.in_memory_session_service import InMemorySessionService  # noqa: E402
from protocol import canonical_row, serve  # noqa: E402

import harness_llm  # noqa: E402
import translate  # noqa: E402
from usage import Usage  # noqa: E402

CONFIGS = ("token", "sliding")
AGENT = "compactsim_agent"
APP = "compactsim_app"
TOKEN_THRESHOLD_FRACTION = 0.8
EVENT_RETENTION_SIZE = 5
COMPACTION_INTERVAL = 3
OVERLAP_SIZE = 1
# One event loop for the child's life (a loop per call costs more than a small pass).
LOOP = asyncio.new_event_loop()
# A compaction event gets the next tick of the case's clock (ADK stamps wall time).
_WALL_CLOCK_MIN_S = 1_000_000.0


def compaction_config(config, window):
    if config == "sliding":
        return EventsCompactionConfig(compaction_interval=COMPACTION_INTERVAL,
                                      overlap_size=OVERLAP_SIZE)
    return EventsCompactionConfig(token_threshold=max(1, int(window * TOKEN_THRESHOLD_FRACTION)),
                                  event_retention_size=EVENT_RETENTION_SIZE)


def _same_row(a, b):
    """The same chat message (ids and flags aside: the harness names new rows)."""
    keys = ("role", "content", "tool_calls", "tool_call_id")
    return all(a.get(k) == b.get(k) for k in keys)


class Case:
    """One case's ADK session and the transcript the adapter returned last."""

    def __init__(self, config, window, usage):
        self.config = config
        self.agent = LlmAgent(name=AGENT, model=harness_llm.HarnessLlm(model="compactsim-harness"))
        self.app = App(name=APP, root_agent=self.agent,
                       events_compaction_config=compaction_config(config, window))
        self.service = InMemorySessionService()
        self.session = LOOP.run_until_complete(self.service.create_session(
            app_name=APP, user_id="compactsim", session_id="case"))
        self.builder = translate.Events(AGENT)
        self.returned, self.owners = [], []
        self.usage = usage
        # The model event of each harness row id (a later usage reading lands on it) and
        # the owner of each part, both kept as events are appended (a session only grows).
        self.model_events = {}
        self.rows = translate.Rows([])
        self.indexed = 0

    def extends(self, rows):
        """Whether `rows` are the returned transcript plus new rows; adopts the ids and
        flags the harness gave the returned rows."""
        if len(rows) < len(self.returned):
            return False
        if not all(_same_row(a, b) for a, b in zip(self.returned, rows)):
            return False
        for row, event in zip(rows, self.owners):
            if event is not None:
                meta = dict((event.custom_metadata or {}).get(translate.META) or {})
                kept = {k: meta[k] for k in ("arguments",) if k in meta}
                event.custom_metadata = {translate.META: dict(translate.row_meta(row), **kept)}
        return True

    def append(self, rows):
        async def go():
            for row in rows:
                event = self.builder.event(row, self.usage.of(row))
                await self.service.append_event(self.session, event)
                if event.author == AGENT and "_compactsim_id" in row:
                    self.model_events[row["_compactsim_id"]] = event
        LOOP.run_until_complete(go())
        # A reading for a row appended by an earlier pass.
        if self.usage.attached is not None:
            event = self.model_events.get(self.usage.attached)
            if event is not None:
                translate.set_usage(event, self.usage.by_id[self.usage.attached])

    async def compact(self):
        if self.config == "sliding":
            async for event in compaction._run_compaction_for_sliding_window(
                    self.app, self.session, self.service):
                await self.service.append_event(self.session, event)
        else:
            await compaction._run_compaction_for_token_threshold_config(
                config=self.app.events_compaction_config, session=self.session,
                session_service=self.service, agent=self.agent, agent_name=AGENT,
                current_branch=None)
        for event in self.session.events:
            if event.timestamp > _WALL_CLOCK_MIN_S:
                event.timestamp = self.builder.tick()

    def view(self):
        contents = _contents._get_contents(None, self.session.events, AGENT)
        self.rows.add(self.session.events[self.indexed:])
        self.indexed = len(self.session.events)
        untraced = ()
        if not all(translate.traced(c) for c in contents):
            untraced = translate.untraced_events(self.session.events, _compaction_context
                                                 ._process_compaction_events(
                                                     self.session.events, AGENT))
        rows, owners = self.rows.rows_owned(contents, untraced=untraced)
        self.returned, self.owners = [canonical_row(r) for r in rows], owners
        return rows


def invocations(rows):
    """`rows` cut before each user row (an ADK invocation starts with a user message);
    the first piece may continue the previous invocation. Never empty."""
    chunks = [[]]
    for row in rows:
        if row["role"] == "user" and not row.get("_compressed_summary") and chunks[-1]:
            chunks.append([])
        chunks[-1].append(row)
    return chunks


class Adapter:
    def __init__(self, config):
        self.config = config
        self.case = None
        self.usage = Usage()

    def run_pass(self, req, summarize):
        rows = req["transcript"]
        head = 0
        while head < len(rows) and rows[head]["role"] == "system":
            head += 1
        body = rows[head:]
        window = req["context_window_tokens"] or 128_000
        self.usage.attach(body)
        if self.case is not None and self.case.extends(body):
            new = body[len(self.case.returned):]
        else:
            self.case, new = Case(self.config, window, self.usage), body
        harness_llm.CURRENT["summarize"] = summarize
        try:
            if self.config == "sliding":
                # The Runner compacts after each invocation ends (a user message starts
                # the next): after each one the new rows complete, never the one in
                # progress (from the newest user row on).
                chunks = invocations(new)
                for chunk in chunks[:-1]:
                    self.case.append(chunk)
                    LOOP.run_until_complete(self.case.compact())
                self.case.append(chunks[-1])
            else:
                # The request processor compacts before the model call, in-flight
                # invocation included.
                self.case.append(new)
                LOOP.run_until_complete(self.case.compact())
        finally:
            harness_llm.CURRENT["summarize"] = None
        return {"transcript": rows[:head] + self.case.view()}

    def restart(self, req, summarize):
        self.case = None
        self.usage.restart()
        return {}

    def hook(self, req, summarize):
        if req["hook"] == "usage":
            return self.usage.hook(req)
        raise ValueError("unknown hook " + req["hook"])


def policies(config):
    """What ADK follows of the declarable policies (adapters/PROTOCOL.md, Policies): no
    protected head, and a failed summary leaves the history as it is (no cooldown, no
    fallback summary). The sliding window keeps a chain of summaries: each compaction
    appends one for a window that overlaps the previous by `overlap_size` invocations,
    and the prompt assembly keeps every summary no other contains ("Partially overlapping
    summaries must both survive", `_process_compaction_events`,
    flows/llm_flows/context/_compaction.py lines 68-130, line 95), each materialized at
    its window's end timestamp, so oldest first."""
    return {"summary_chain": {}} if config == "sliding" else {}


def main():
    config = (sys.argv[1] if len(sys.argv) > 1
              else os.environ.get("COMPACTSIM_ADK_CONFIG", "token"))
    if config not in CONFIGS:
        sys.exit("adk_compaction.py: unknown configuration %r (one of %s)"
                 % (config, ", ".join(CONFIGS)))
    a = Adapter(config)
    serve("google-adk event compaction (%s)" % config, version("google-adk"),
          {"micro_pass": False, "batch_pass": True, "hooks": ["usage"],
           "policies": policies(config)},
          {"batch_pass": a.run_pass, "restart": a.restart, "hook": a.hook})


if __name__ == "__main__":
    main()
