"""A warm agent turn's network part: the model asks for one tool, then answers (issue 14).

Run: ``python benchmarks/bench_turn.py`` (or ``python benchmarks/run.py turn``);
``IKIGAI_BENCH_ROUNDS`` (default 30) sets the rounds. Both model requests go to the local
fake server the tests use, through the OpenAI provider, streamed as ``ikigai chat`` does;
the tool itself is not run. The baseline is the same exchange with a new default
``httpx.Client`` per request, as every turn made before (SSL context included).
Target: the kept client takes at most 60% of the baseline's time.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from _timing import interleaved, ms

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support

import httpx  # noqa: E402
from ikigai_provider_openai.serializer import OpenAISerializer  # noqa: E402

from ikigai_core import transport  # noqa: E402
from ikigai_core.conversation import Conversation, UserMessage  # noqa: E402
from tests.support.fakeserver import FakeServer  # noqa: E402
from tests.support.replies import REPLIES  # noqa: E402

ROUNDS = int(os.environ.get("IKIGAI_BENCH_ROUNDS", "30"))
TARGET = 0.6


def chat_turn(server: FakeServer, provider: object) -> None:
    """One user turn: a tool call comes back, then the answer."""
    replies = REPLIES["openai"]
    server.push(replies.reply(calls=[("call_1", "bash", {"command": "true"})], stream=True),
                replies.reply("Done.", stream=True))
    environ = {"OPENAI_API_KEY": "sk-bench-0123456789", "OPENAI_BASE_URL": server.url}
    conversation = Conversation([UserMessage("run true")])
    for _ in range(2):
        transport.send_turn(provider, conversation, [], model="gpt-4o", stream=True,  # type: ignore[arg-type]
                            environ=environ)


def fresh_client(provider: str, url: str) -> httpx.Client:
    """The old way: a new default client (and SSL context) for every request."""
    return httpx.Client()


def main() -> None:
    """Interleave the kept client with the old way and print both medians and the ratio."""
    provider = OpenAISerializer()
    kept = transport._client
    with FakeServer() as server:
        def old() -> None:
            transport._client = fresh_client
            try:
                chat_turn(server, provider)
            finally:
                transport._client = kept

        cases = {"one client kept": lambda: chat_turn(server, provider),
                 "a client per request": old}
        interleaved(cases, 3)
        medians = interleaved(cases, ROUNDS)
    ours, theirs = medians.values()
    ratio = ours / theirs
    print(f"warm chat turn (tool call + answer, tool excluded): kept client {ms(ours)}"
          f" vs a client per request {ms(theirs)} -> {ratio:.2f}"
          f" (target <= {TARGET}, {'ok' if ratio <= TARGET else 'OVER TARGET'})", flush=True)


if __name__ == "__main__":
    main()
