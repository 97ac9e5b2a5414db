"""A fake model: a script of turns played on a provider's own wire by the fake server."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_ikigai.fakeserver import FakeServer, RecordedRequest, Reply
from pytest_ikigai.replies import REPLIES, Call

Turn = str | Sequence[tuple[str, Mapping[str, Any]]]
"""One model turn: its answer (a string), or the tool calls it makes, ``(name, arguments)``."""

WIRE: dict[str, tuple[str, str]] = {
    "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    "google": ("GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"),
}
"""Each provider whose wire is spoken: its key variable and its base-URL variable. OpenAI's
Responses API is not here: the OpenAI provider speaks Chat Completions only."""


class FakeModel:
    """Plays ``script`` to ``provider``'s client, one turn per request, streamed when the
    request asks for a stream; a request past the end of the script gets HTTP 500.

    :param script: the model's turns, in order.
    :param provider: ``openai``, ``anthropic`` or ``google``.
    """

    def __init__(self, script: Sequence[Turn], provider: str = "openai") -> None:
        if provider not in WIRE:
            raise ValueError(f"unknown provider {provider!r}; use one of {', '.join(WIRE)}")
        self.provider = provider
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
        return {key: "fake-key", base: self.url, "IKIGAI_PROVIDER": self.provider}

    def close(self) -> None:
        """Stop the server."""
        self.server.close()

    def _answer(self, request: RecordedRequest) -> Reply | None:
        if not self._turns:
            return None  # the server answers 500: no scripted reply left
        turn = self._turns.popleft()
        stream = "stream" in request.path or (isinstance(request.json, dict)
                                              and request.json.get("stream") is True)
        if isinstance(turn, str):
            return REPLIES[self.provider].reply(turn, stream=stream)
        calls: list[Call] = []
        for name, arguments in turn:
            self._count += 1
            calls.append((f"call_{self._count}", name, arguments))
        return REPLIES[self.provider].reply("", calls, stream=stream)


__all__ = ["WIRE", "FakeModel", "Turn"]
