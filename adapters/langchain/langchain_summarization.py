"""compactsim adapter: the real `SummarizationMiddleware` of langchain==1.5.0
(`langchain/agents/middleware/summarization.py`), offline.

  target/framework-venvs/langchain-1.5.0/bin/python adapters/langchain/langchain_summarization.py [CONFIG]

CONFIG (argv[1], else the environment variable COMPACTSIM_LANGCHAIN_CONFIG, else
`production`) chooses the middleware's configuration (FINDINGS.md says why these two):
- `production`: `trigger=("fraction", 0.8)` of the model's `max_input_tokens` (the case's
  window), `keep=("messages", 20)` (the default), `trim_tokens_to_summarize` its default.
- `keep-tokens`: the same trigger, `keep=("tokens", 3000)`.

Every batch pass is one `before_model` call, as an agent built with
`create_agent(..., middleware=[SummarizationMiddleware(...)])` makes before a model call.
The adapter declares batch passes only: the middleware replaces a whole prefix, user
turns included, by one summary, which is batch compaction in the protocol's terms (a
micro pass keeps every user turn). The transcript's system rows are the agent's
`system_prompt` (not in `state["messages"]`), the other rows become the state's messages
(translate.py), the newest assistant message carrying the prompt tokens the provider
reported for it (the `usage` hook, ../framework/usage.py), the middleware decides by its
own trigger whether to summarize, and its state update
(`RemoveMessage(REMOVE_ALL_MESSAGES)`, the summary, the kept messages) is what the
`add_messages` reducer leaves: the new transcript. The summary model is
`HarnessChatModel` (harness_model.py). When the summary call still fails after the
middleware's retries, `before_model` raises, and the agent's step fails with it: the
pass returns the transcript unchanged (labelled `aborted`).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "framework"))
sys.path.insert(0, HERE)
import offline  # noqa: E402,F401  (before any framework import)

from importlib.metadata import version  # noqa: E402

from langchain.agents.middleware.summarization import SummarizationMiddleware  # noqa: E402
from protocol import serve  # noqa: E402

import harness_model  # noqa: E402
import translate  # noqa: E402
from usage import Usage  # noqa: E402

CONFIGS = ("production", "keep-tokens")
TRIGGER_FRACTION = 0.8
KEEP_TOKENS = 3000


def middleware(config, window):
    """The middleware of configuration `config` for a model of `window` input tokens."""
    model = harness_model.HarnessChatModel(profile={"max_input_tokens": window})
    keep = ("tokens", KEEP_TOKENS) if config == "keep-tokens" else ("messages", 20)
    return SummarizationMiddleware(model, trigger=("fraction", TRIGGER_FRACTION), keep=keep)


class Adapter:
    def __init__(self, config):
        self.config = config
        self.cache = {}
        self.usage = Usage()

    def get(self, window):
        if window not in self.cache:
            self.cache[window] = middleware(self.config, window)
        return self.cache[window]

    def batch_pass(self, req, summarize):
        rows = req["transcript"]
        head = 0
        while head < len(rows) and rows[head]["role"] == "system":
            head += 1
        mw = self.get(req["context_window_tokens"] or 128_000)
        self.usage.attach(rows)
        messages = translate.to_messages(rows[head:], self.usage.of)
        harness_model.CURRENT["summarize"] = summarize
        try:
            update = mw.before_model({"messages": messages}, None)
        except Exception as e:  # noqa: BLE001  (the agent step fails with it)
            print("before_model raised %s: %s" % (type(e).__name__, e), file=sys.stderr)
            return {"transcript": rows, "labels": {"outcome": "aborted"}}
        finally:
            harness_model.CURRENT["summarize"] = None
        if update is None:
            return {"transcript": rows}
        kept = update["messages"][1:]  # after RemoveMessage(id=REMOVE_ALL_MESSAGES)
        return {"transcript": rows[:head] + translate.to_rows(kept)}

    def restart(self, req, summarize):
        self.usage.restart()
        return {}

    def hook(self, req, summarize):
        if req["hook"] == "usage":
            return self.usage.hook(req)
        raise ValueError("unknown hook " + req["hook"])


def main():
    config = (sys.argv[1] if len(sys.argv) > 1
              else os.environ.get("COMPACTSIM_LANGCHAIN_CONFIG", "production"))
    if config not in CONFIGS:
        sys.exit("langchain_summarization.py: unknown configuration %r (one of %s)"
                 % (config, ", ".join(CONFIGS)))
    a = Adapter(config)
    serve("langchain SummarizationMiddleware (%s)" % config, version("langchain"),
          {"micro_pass": False, "batch_pass": True, "hooks": ["usage"],
           # It follows none of the declarable policies: it summarizes from the first
           # message, keeps no head, retries a failed call and then fails the step.
           "policies": {},
           "trigger": {"window_percent": int(TRIGGER_FRACTION * 100)}},
          {"batch_pass": a.batch_pass, "restart": a.restart, "hook": a.hook})


if __name__ == "__main__":
    main()
