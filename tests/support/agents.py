"""A scripted model for sub-agent tests: each conversation, known by its first user
message, plays its own script, so children running at once each get their own turns."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from pytest_ikigai.fakeserver import RecordedRequest, Reply
from pytest_ikigai.replies import REPLIES
from tests.support.fakeserver import FakeServer

Turn = str | Sequence[tuple[str, Mapping[str, Any]]] | Callable[[RecordedRequest], Reply]
"""A model turn: its answer, the tool calls it makes ``(name, arguments)``, or a function
building the reply from the request."""


class AgentModel:
    """Plays ``scripts[first user message]`` to an OpenAI client, one turn per request:
    the Nth request of a conversation (N-1 model turns in its messages) gets turn N.

    :param scripts: each conversation's turns by its first prompt.
    """

    def __init__(self, scripts: Mapping[str, Sequence[Turn]]) -> None:
        self.scripts = {prompt: list(turns) for prompt, turns in scripts.items()}
        self.seen: dict[str, float] = {}
        """When each conversation's first request arrived (``time.monotonic``)."""
        self._lock = threading.Lock()
        self._calls = 0
        self.server = FakeServer()
        refusal = self.server.check  # what the real API would refuse still is
        self.server.check = lambda request: (refusal and refusal(request)) or self._answer(request)

    @property
    def environ(self) -> dict[str, str]:
        """The variables pointing the openai provider at this model."""
        return {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": self.server.url,
                "IKIGAI_PROVIDER": "openai"}

    def first_prompts(self) -> list[str]:
        """The first user message of every request, in arrival order."""
        return [first_prompt(r.json) for r in self.server.requests]

    def close(self) -> None:
        """Stop the server."""
        self.server.close()

    def _answer(self, request: RecordedRequest) -> Reply:
        import time

        body = request.json if isinstance(request.json, dict) else {}
        prompt = first_prompt(body)
        turn_index = sum(1 for m in body.get("messages", ()) if m.get("role") == "assistant")
        script = self.scripts.get(prompt, [])
        with self._lock:
            self.seen.setdefault(prompt, time.monotonic())
        if turn_index >= len(script):
            return REPLIES["openai"].error(500, f"no scripted turn {turn_index} for {prompt!r}")
        turn = script[turn_index]
        if callable(turn):
            return turn(request)
        stream = body.get("stream") is True
        if isinstance(turn, str):
            return REPLIES["openai"].reply(turn, stream=stream)
        with self._lock:
            calls = []
            for name, arguments in turn:
                self._calls += 1
                calls.append((f"call_{self._calls}", name, arguments))
        return REPLIES["openai"].reply("", calls, stream=stream)


def first_prompt(body: Any) -> str:
    """The text of a Chat Completions request's first user message ("" when none)."""
    for message in body.get("messages", ()) if isinstance(body, dict) else ():
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                content = "".join(part.get("text", "") for part in content)
            return str(content)
    return ""


@contextmanager
def scripted_models() -> Iterator[Callable[[Mapping[str, Any]], AgentModel]]:
    """A maker of :class:`AgentModel` s (one per call, from its scripts), all closed at the end."""
    built: list[AgentModel] = []

    def make(scripts: Mapping[str, Any]) -> AgentModel:
        built.append(AgentModel(scripts))
        return built[-1]

    try:
        yield make
    finally:
        for each in built:
            each.close()
