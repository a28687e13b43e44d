"""The provider's reported prompt tokens, as a framework keeps them on its messages.

Both frameworks read the usage a provider reports on the model's responses (LangChain:
`AIMessage.usage_metadata` in `_should_summarize_based_on_reported_tokens` and the
scaling of `count_tokens_approximately`; ADK: `Event.usage_metadata.prompt_token_count`
in `_latest_prompt_token_count`). The harness reports it through the `usage` hook after
each provider response (adapters/PROTOCOL.md, Hooks), before the response's rows reach
the adapter; `Usage` gives the reading to the newest assistant row of the next pass and
remembers it by row id for the rest of the case, as the framework's session keeps it.
"""


class Usage:
    def __init__(self):
        self.pending = None
        self.by_id = {}
        # The row id the last `attach` gave a reading to (None: none).
        self.attached = None

    def restart(self):
        self.__init__()

    def hook(self, req):
        """The `usage` hook: the prompt tokens of the provider's latest response."""
        self.pending = int(req["args"]["prompt_tokens"])
        return {"value": None}

    def attach(self, rows):
        """Gives the pending reading to the newest assistant row of `rows` (a pass's
        transcript) that has none yet."""
        self.attached = None
        if self.pending is None:
            return
        for row in reversed(rows):
            if row["role"] == "assistant" and not row.get("_compressed_summary"):
                rid = row.get("_compactsim_id")
                if rid is not None and rid not in self.by_id:
                    self.by_id[rid] = self.pending
                    self.attached = rid
                break
        self.pending = None

    def of(self, row):
        """The prompt tokens reported for `row`'s response, or None."""
        rid = row.get("_compactsim_id")
        return self.by_id.get(rid) if rid is not None else None
