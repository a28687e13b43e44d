"""A LangChain chat model whose every call is answered by the compactsim harness.

`HarnessChatModel` is a `BaseChatModel` subclass, so LangChain runs its own prompt
building (the middleware's summary prompt, the message serialization), its own retry
(`with_retry`) and its own response parsing (`response.text`) around it; `_generate`
only carries the prompt to the harness's `summarize` and the answer back. A failed call
raises the `langchain_core.exceptions.ModelError` subclass a provider integration raises
for that condition (rate limit, 5xx, timeout, connection, authentication), so the
middleware's retry policy sees what it would see in production.
"""

from langchain_core.exceptions import (ModelAPIError, ModelAuthenticationError,
                                       ModelConnectionError, ModelRateLimitError,
                                       ModelTimeoutError)
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from protocol import SummaryError

# The summarize function of the request in flight (set by the adapter per request).
CURRENT = {"summarize": None}

_ERRORS = {
    "timeout": ModelTimeoutError,
    "rate_limited": ModelRateLimitError,
    "server_error": ModelAPIError,
    "auth": ModelAuthenticationError,
    "network": ModelConnectionError,
}

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


class HarnessChatModel(BaseChatModel):
    """The harness as a chat model (`profile.max_input_tokens` is the case's window)."""

    @property
    def _llm_type(self) -> str:
        return "compactsim-harness"

    def _get_ls_params(self, stop=None, **kwargs):
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"] = "compactsim"
        return params

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        summarize = CURRENT["summarize"]
        if summarize is None:
            raise ModelConnectionError("compactsim: no request in flight")
        wire = [{"role": _ROLES.get(m.type, "user"), "content": m.text} for m in messages]
        try:
            text, finish = summarize(messages=wire, max_tokens=kwargs.get("max_tokens"))
        except SummaryError as e:
            raise _ERRORS.get(e.error, ModelAPIError)(str(e)) from None
        msg = AIMessage(content=text, response_metadata={"finish_reason": finish})
        return ChatResult(generations=[ChatGeneration(message=msg)])
