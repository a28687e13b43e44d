"""A Google ADK model whose every call is answered by the compactsim harness.

`HarnessLlm` is a `BaseLlm` subclass, so ADK's `LlmEventSummarizer` runs its own prompt
building (`_format_events_for_prompt`, its template, the `LlmRequest`) and its own
response handling around it. The harness's answer is shaped as the Gemini API's
`GenerateContentResponse` (a candidate with the text, `finish_reason` STOP or MAX_TOKENS;
an empty answer has no parts, as the API omits them) and turned into an `LlmResponse` by
ADK's own `LlmResponse.create`. A failed call raises what the google-genai client raises
(`ClientError` 4xx, `ServerError` 5xx, a connection error).
"""

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.genai import errors, types
from protocol import SummaryError

# The summarize function of the request in flight (set by the adapter per request).
CURRENT = {"summarize": None}

_STATUS = {"timeout": 408, "rate_limited": 429, "server_error": 500, "auth": 401}


def _error(e):
    if e.error == "network":
        return ConnectionError("peer closed connection without sending complete message body")
    code = _STATUS.get(e.error, 500)
    body = {"error": {"code": code, "message": str(e), "status": e.error.upper()}}
    return (errors.ServerError if code >= 500 else errors.ClientError)(code, body)


class HarnessLlm(BaseLlm):
    """The harness as an ADK model."""

    async def generate_content_async(self, llm_request, stream=False):
        summarize = CURRENT["summarize"]
        if summarize is None:
            raise ConnectionError("compactsim: no request in flight")
        wire = [{"role": "assistant" if c.role == "model" else "user",
                 "content": "".join(p.text or "" for p in c.parts or [])}
                for c in llm_request.contents]
        cfg = llm_request.config
        try:
            text, finish = summarize(messages=wire,
                                     max_tokens=cfg.max_output_tokens if cfg else None)
        except SummaryError as e:
            raise _error(e) from None
        parts = [types.Part(text=text)] if text else None
        reason = types.FinishReason.MAX_TOKENS if finish == "length" else types.FinishReason.STOP
        response = types.GenerateContentResponse(candidates=[types.Candidate(
            content=types.Content(role="model", parts=parts), finish_reason=reason)])
        yield LlmResponse.create(response)
