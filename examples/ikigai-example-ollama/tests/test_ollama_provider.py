"""The example provider passes the same contract as the built-in ones, over NDJSON,
and works through the installed ``ikigai`` with its base URL alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ikigai_example_ollama.provider import OllamaProvider

from tests.support.fakeserver import RecordedRequest, Reply, ndjson_reply
from tests.support.provider_contract import LS, ProviderContract
from tests.support.replies import Call, ProviderReplies, pieces

IKIGAI = Path(sys.executable).parent / "ikigai"
PROVIDER_SOURCE = Path(__file__).parents[1] / "ikigai_example_ollama" / "provider.py"


class OllamaReplies(ProviderReplies):
    """``/api/chat``: one object, or one object per line ending with ``done: true``."""

    broken_event = "{not json\n"

    def _line(self, message: dict[str, Any], done: bool) -> dict[str, Any]:
        line = {"model": "llama3.2", "created_at": "2026-01-01T00:00:00Z",
                "message": {"role": "assistant", "content": "", **message}, "done": done}
        done_line = {"done_reason": "stop", "prompt_eval_count": 10, "eval_count": 5}
        return {**line, **done_line} if done else line

    def _calls(self, calls: Sequence[Call]) -> list[dict[str, Any]]:
        return [{"id": call_id, "function": {"name": name, "arguments": arguments}}
                for call_id, name, arguments in calls]

    def body(self, text: str = "", calls: Sequence[Call] = ()) -> dict[str, Any]:
        return self._line({"content": text, "tool_calls": self._calls(calls)}, True)

    def events(self, text: str = "", calls: Sequence[Call] = ()) -> list[Any]:
        lines = [self._line({"content": piece}, False) for piece in pieces(text)]
        if calls:
            lines.append(self._line({"tool_calls": self._calls(calls)}, False))
        return [*lines, self._line({}, True)]

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"error": message}

    def error_event(self, message: str) -> Any:
        return {"error": message}

    def stream(self, items: Sequence[Any], *, drop: bool = False) -> Reply:
        return ndjson_reply(items, drop=drop)


class TestOllamaContract(ProviderContract):
    provider = OllamaProvider()
    replies = OllamaReplies()

    def expected_target(self, stream):
        return "/api/chat", {}

    def sent_key(self, request: RecordedRequest):
        return request.headers["authorization"].removeprefix("Bearer ")

    def test_a_local_server_needs_no_key(self, fake_server):
        fake_server.push(self.replies.reply("Hello there.", calls=[LS], stream=True))
        message = self.send(fake_server.url, stream=True, extra_env={"OLLAMA_API_KEY": ""})
        assert (message.text, message.tool_calls[0].name) == ("Hello there.", "bash")
        [request] = fake_server.requests
        assert "authorization" not in request.headers
        assert request.json["stream"] is True and request.json["messages"][0]["role"] == "system"


def test_a_provider_on_the_base_class_takes_about_a_hundred_lines():
    """Blank lines aside (ruff's import sorting puts each imported name on its own line)."""
    assert len([line for line in PROVIDER_SOURCE.read_text().splitlines() if line.strip()]) <= 100


def test_ikigai_ask_streams_from_it_with_the_host_alone(fake_server, tmp_path):
    replies = OllamaReplies()
    fake_server.push(replies.reply(calls=[("c1", "bash", {"command": "echo hi"})], stream=True),
                     replies.reply("It said hi.", stream=True))
    env = {**os.environ, "OLLAMA_HOST": fake_server.url, "IKIGAI_HOME": str(tmp_path),
           "IKIGAI_PROVIDER": "ollama"}
    for var in ("OLLAMA_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY"):
        env.pop(var, None)
    proc = subprocess.run([str(IKIGAI), "ask", "--yes", "say hi"], capture_output=True, text=True,
                          timeout=60, env=env, cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "It said hi.\n"), proc.stderr
    [tool_message] = [m for m in fake_server.requests[1].json["messages"] if m["role"] == "tool"]
    assert json.loads(tool_message["content"])["tool_success"] is True
