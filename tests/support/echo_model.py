"""A fake OpenAI model for many conversations at once: each answer follows from its request
alone, so tasks may reach it in any order, from any process (``ikigai batch``'s tests).

The last user prompt decides: ``bash: CMD`` asks for one ``bash`` call running CMD (the
turn after the tool's result answers ``ran: OUTPUT``); ``sleep: S REST`` waits S seconds,
then answers as for REST; ``fail`` gets an HTTP 400; anything else is echoed: ``echo: PROMPT``.
"""

from __future__ import annotations

import itertools
import json
import threading
from typing import Any

from pytest_ikigai.fakeserver import FakeServer, RecordedRequest, Reply
from pytest_ikigai.replies import REPLIES

OPENAI = REPLIES["openai"]


class EchoModel:
    """The server (``url``, ``environ``, ``close()``) and how often each prompt was asked."""

    def __init__(self) -> None:
        self.asked: dict[str, int] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.server = FakeServer(check=self._answer)
        self.url = self.server.url

    @property
    def environ(self) -> dict[str, str]:
        """What points ikigai at it."""
        return {"OPENAI_API_KEY": "sk-fake", "OPENAI_BASE_URL": self.url,
                "IKIGAI_PROVIDER": "openai", "OPENAI_WIRE": "chat"}

    def close(self) -> None:
        """Stop the server."""
        self.server.close()

    def _answer(self, request: RecordedRequest) -> Reply:
        messages: list[dict[str, Any]] = (request.json or {}).get("messages", [])
        prompt = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        if isinstance(prompt, list):  # content parts
            prompt = "".join(part.get("text", "") for part in prompt)
        last = messages[-1] if messages else {}
        if last.get("role") == "tool":
            output = json.loads(last["content"]).get("result", {}).get("output", "")
            return OPENAI.reply(f"ran: {output.strip()}")
        with self._lock:
            self.asked[prompt] = self.asked.get(prompt, 0) + 1
        wait = 0.0
        if prompt.startswith("sleep: "):
            seconds, _, prompt = prompt.removeprefix("sleep: ").partition(" ")
            wait = float(seconds)
        if prompt == "fail":
            reply = OPENAI.error(400, "the fake model refuses 'fail'")
        elif prompt.startswith("bash: "):
            call = (f"call_{next(self._ids)}", "bash", {"command": prompt.removeprefix("bash: ")})
            reply = OPENAI.reply("", [call])
        else:
            reply = OPENAI.reply(f"echo: {prompt}")
        return Reply(reply.status, reply.headers, reply.body, wait=wait)
