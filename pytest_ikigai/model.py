"""A fake model: a script of turns played on a provider's own wire by the fake server, which
first refuses what the real API would (:mod:`pytest_ikigai.api_rules`)."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_ikigai.api_rules import refusal
from pytest_ikigai.fakeserver import FakeServer, RecordedRequest, Reply
from pytest_ikigai.replies import REPLIES, Call, ProviderReplies
from pytest_ikigai.responses import RESPONSES

Turn = str | Sequence[tuple[str, Mapping[str, Any]]]
"""One model turn: its answer (a string), or the tool calls it makes, ``(name, arguments)``."""

WIRE: dict[str, tuple[str, str]] = {
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    "google": ("GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"),
}
"""Each provider whose wire is spoken: its key variable and its base-URL variable."""
WIRES = ("chat", "responses")
"""The OpenAI provider's two wires (``OPENAI_WIRE``): Chat Completions and Responses."""


class FakeModel:
    """Plays ``script`` to ``provider``'s client, one turn per request, streamed when the
    request asks for a stream; a request past the end of the script gets HTTP 500.

    A request the real API would refuse (a tool schema it rejects, a Responses call output
    without its call, thinking without room for it) gets that API's 400 instead, and the
    script does not move on.

    :param script: the model's turns, in order.
    :param provider: ``openai``, ``anthropic`` or ``google``.
    :param wire: for ``openai``, ``chat`` (Chat Completions, the default for a base URL of
        one's own) or ``responses``; the other providers have one wire.
    """

    def __init__(self, script: Sequence[Turn], provider: str = "openai",
                 wire: str | None = None) -> None:
        if provider not in WIRE:
            raise ValueError(f"unknown provider {provider!r}; use one of {', '.join(WIRE)}")
        if wire is not None and (provider != "openai" or wire not in WIRES):
            raise ValueError(f"wire {wire!r} is not one of {provider}'s; "
                             f"openai has {', '.join(WIRES)}, the others one each")
        self.provider = provider
        self.wire = wire
        self._turns: deque[Turn] = deque(script)
        self._count = 0
        self.server = FakeServer(check=self._answer)

    @property
    def url(self) -> str:
        """The server's base URL."""
        return self.server.url

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request the client sent, in order."""
        return self.server.requests

    @property
    def environ(self) -> dict[str, str]:
        """The variables that point ikigai at this model (a dummy key, the base URL, the
        provider)."""
        key, base = WIRE[self.provider]
        wire = {"OPENAI_WIRE": self.wire} if self.wire else {}
        return {key: "fake-key", base: self.url, "IKIGAI_PROVIDER": self.provider, **wire}

    def close(self) -> None:
        """Stop the server."""
        self.server.close()

    def _answer(self, request: RecordedRequest) -> Reply | None:
        refused = refusal(request)
        if refused is not None:
            return refused
        if not self._turns:
            return None  # the server answers 500: no scripted reply left
        turn = self._turns.popleft()
        stream = "stream" in request.path or (isinstance(request.json, dict)
                                              and request.json.get("stream") is True)
        replies: ProviderReplies = (RESPONSES if request.path.endswith("/responses")
                                    else REPLIES[self.provider])
        if isinstance(turn, str):
            return replies.reply(turn, stream=stream)
        calls: list[Call] = []
        for name, arguments in turn:
            self._count += 1
            calls.append((f"call_{self._count}", name, arguments))
        return replies.reply("", calls, stream=stream)


__all__ = ["WIRE", "WIRES", "FakeModel", "Turn"]
