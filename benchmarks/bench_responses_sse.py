"""Reading a streamed OpenAI Responses turn: ikigai's SSE parser vs the official SDK's (issue 26).

Run: ``python benchmarks/bench_responses_sse.py`` (or ``python benchmarks/run.py
responses_sse``) where the ``openai`` package is installed (``tox -e bench`` installs it;
the providers never depend on it); ``IKIGAI_BENCH_ROUNDS`` (default 30) sets the rounds.
The stream is the recorded-traffic kit's (tests/support/responses_replies.py): a reasoning
item, 2,000 text deltas and two parallel calls, 4 KiB chunks from memory (no network).
Ours: bytes to events (``ikigai_core.sse``) to the whole assistant turn
(``OpenAISerializer.parse_stream``). Baseline: the SDK's ``Stream`` over the same bytes,
yielding its typed ``ResponseStreamEvent`` objects (the events only, nothing gathered).
Target: ours at least 10x faster (ratio <= 0.1).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from _timing import interleaved, ms

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support

from ikigai_provider_openai.serializer import OpenAISerializer  # noqa: E402

from ikigai_core.sse import iter_lines, iter_sse  # noqa: E402
from tests.support.fakeserver import sse_event  # noqa: E402
from tests.support.responses_replies import RESPONSES  # noqa: E402

ROUNDS = int(os.environ.get("IKIGAI_BENCH_ROUNDS", "30"))
TARGET = 0.1
CHUNK = 4096


def recorded_stream() -> list[bytes]:
    """A long Responses stream as the server sends it, cut in 4 KiB chunks."""
    calls = [("call_a", "file_read", {"file_path": "a.txt"}),
             ("call_b", "grep", {"pattern": "TODO", "path": "src"})]
    events = RESPONSES.events("word " * 2000, calls, reasoning="Look at both files first.")
    data = b"".join(sse_event(payload, name) for name, payload in events)  # type: ignore[misc]
    return [data[i:i + CHUNK] for i in range(0, len(data), CHUNK)]


def ours(chunks: list[bytes], provider: OpenAISerializer) -> None:
    """The whole turn, as ``ikigai ask`` reads it."""
    *_, message = provider.parse_stream(iter_sse(iter_lines(chunks)))
    assert len(message.tool_calls) == 2  # type: ignore[union-attr]


def sdk(chunks: list[bytes]) -> None:
    """The SDK's typed events over the same bytes."""
    import httpx2
    from openai import OpenAI
    from openai._streaming import Stream
    from openai.types.responses import ResponseStreamEvent

    client = OpenAI(api_key="sk-bench")
    response = httpx2.Response(200, headers={"content-type": "text/event-stream"},
                               content=iter(chunks),
                               request=httpx2.Request("POST", "https://api.openai.com/v1/responses"))
    events = list(Stream(cast_to=ResponseStreamEvent, response=response, client=client))
    assert events[-1].type == "response.completed"


def main() -> None:
    """Interleave both readers and print the medians and their ratio."""
    try:
        import openai
    except ImportError:
        raise SystemExit("benchmark skipped: the openai package is not installed "
                         "(tox -e bench installs it)") from None
    chunks = recorded_stream()
    provider = OpenAISerializer()
    cases = {"ikigai": lambda: ours(chunks, provider), "openai SDK": lambda: sdk(chunks)}
    interleaved(cases, 3)
    medians = interleaved(cases, ROUNDS)
    mine, theirs = medians.values()
    ratio = mine / theirs
    events = b"".join(chunks).count(b"\n\n")
    print(f"Responses stream ({events} events, {sum(map(len, chunks)) // 1024} KiB): ikigai "
          f"{ms(mine)} vs openai {openai.__version__} SDK {ms(theirs)} -> {ratio:.3f} "
          f"(target <= {TARGET}, {'ok' if ratio <= TARGET else 'OVER TARGET'})", flush=True)


if __name__ == "__main__":
    main()
