"""A fake model with a small context window: it refuses a request longer than its window
with the provider's real error, counts every request's tokens (its JSON body's bytes / 4)
and reports them as the usage, answers a compaction's summarising request with a summary,
and otherwise plays its script (a tool call per turn, then an answer)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ikigai_core.compaction import SUMMARY_SYSTEM
from ikigai_core.conversation import Usage
from pytest_ikigai.fakeserver import FakeServer, RecordedRequest, Reply, json_reply
from pytest_ikigai.replies import REPLIES, Call
from pytest_ikigai.responses import RESPONSES

TOO_LONG = {
    "openai": lambda used, window: {"error": {
        "message": f"This model's maximum context length is {window} tokens. However, your "
                   f"messages resulted in {used} tokens. Please reduce the length of the "
                   "messages.",
        "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}},
    "anthropic": lambda used, window: {"type": "error", "error": {
        "type": "invalid_request_error",
        "message": f"prompt is too long: {used} tokens > {window} maximum"}},
    "google": lambda used, window: {"error": {
        "code": 400, "message": f"The input token count ({used}) exceeds the maximum number "
                                f"of tokens allowed ({window}).", "status": "INVALID_ARGUMENT"}},
}
"""Each API's 400 for a prompt longer than the window, as the API documents and sends it
(OpenAI's error code ``context_length_exceeded``; Anthropic's "prompt is too long"; Gemini's
INVALID_ARGUMENT naming the input token count)."""

SUMMARY = "SUMMARY: the user asked for a long job; the tool ran many times, all fine."


def usage_of(provider: str, usage: Usage, wire: str | None = None) -> dict[str, Any]:
    """The body fields reporting ``usage`` in ``provider``'s reply (on OpenAI's ``wire``),
    the prompt cache's reads and writes as the API reports them (Anthropic counts them
    apart from its ``input_tokens``; OpenAI and Gemini count cache reads among the
    prompt's tokens)."""
    read, written = usage.cache_read_tokens, usage.cache_write_tokens
    if wire == "responses":
        return {"usage": {"input_tokens": usage.input_tokens,
                          "input_tokens_details": {"cached_tokens": read},
                          "output_tokens": usage.output_tokens,
                          "total_tokens": usage.input_tokens + usage.output_tokens}}
    if provider == "openai":
        return {"usage": {"prompt_tokens": usage.input_tokens,
                          "completion_tokens": usage.output_tokens,
                          "prompt_tokens_details": {"cached_tokens": read}}}
    if provider == "anthropic":
        return {"usage": {"input_tokens": usage.input_tokens - read - written,
                          "output_tokens": usage.output_tokens,
                          "cache_read_input_tokens": read,
                          "cache_creation_input_tokens": written}}
    return {"usageMetadata": {"promptTokenCount": usage.input_tokens,
                              "candidatesTokenCount": usage.output_tokens,
                              "cachedContentTokenCount": read}}


class WindowModel:
    """Plays ``script`` (each turn: an answer, or the calls ``[(name, arguments)]``) on
    ``provider``'s wire, refusing requests over ``window`` tokens.

    :param refuse_first: also refuse the first ``N`` requests of the script whatever
        their size (a provider whose count differs from ours).
    :param summary: what a summarising request is answered.
    :param charge: the usage of each request answered, from its JSON body (a provider's
        prompt cache: ``benchmarks/bench_cost.py``); default: its tokens as input, none
        cached, 5 of output.
    :param wire: for ``openai``, ``responses`` answers on the Responses wire (the client
        sets ``OPENAI_WIRE=responses``); default: Chat Completions.
    """

    def __init__(self, provider: str, window: int,
                 script: Sequence[str | Sequence[tuple[str, dict[str, Any]]]],
                 refuse_first: int = 0, summary: str = SUMMARY,
                 charge: Callable[[Any], Usage] | None = None, wire: str | None = None) -> None:
        self.provider, self.window, self.summary = provider, window, summary
        self.charge, self.wire = charge, wire
        self.replies = RESPONSES if wire == "responses" else REPLIES[provider]
        self.script = list(script)
        self.refuse_first = refuse_first
        self.sizes: list[int] = []
        """The tokens of every request answered (not refused), in order."""
        self.summaries: list[RecordedRequest] = []
        self.refused: list[int] = []
        self.played = 0
        self.server = FakeServer(check=self._answer)

    @property
    def url(self) -> str:
        """The server's base URL."""
        return self.server.url

    def close(self) -> None:
        """Stop the server."""
        self.server.close()

    def _answer(self, request: RecordedRequest) -> Reply:
        tokens = len(request.body) // 4
        replies = self.replies
        if tokens > self.window or (self.refuse_first and not self._summarising(request)):
            if tokens <= self.window:
                self.refuse_first -= 1
            self.refused.append(tokens)
            return json_reply(TOO_LONG[self.provider](tokens, self.window), status=400)
        self.sizes.append(tokens)
        usage = usage_of(self.provider, Usage(tokens, 5) if self.charge is None
                         else self.charge(request.json), self.wire)
        if self._summarising(request):
            self.summaries.append(request)
            return json_reply({**replies.body(self.summary), **usage})
        turn = self.script[min(self.played, len(self.script) - 1)]
        self.played += 1
        if isinstance(turn, str):
            body = replies.body(turn)
        else:
            calls: list[Call] = [(f"call_{self.played}_{i}", name, arguments)
                                 for i, (name, arguments) in enumerate(turn)]
            body = replies.body("", calls)
        return json_reply({**body, **usage})

    @staticmethod
    def _summarising(request: RecordedRequest) -> bool:
        return SUMMARY_SYSTEM[:40] in json.dumps(request.json)
