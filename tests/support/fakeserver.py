"""The fake provider server, now shipped in pytest-ikigai (``pytest_ikigai/fakeserver.py``);
this path stays for the tests that import it. Here a :class:`FakeServer` answers a request
whose tools the real API would refuse with that API's 400 (``tests/support/api_rules.py``),
so a test passes only when what ikigai sends would be accepted."""

from __future__ import annotations

from pytest_ikigai.fakeserver import (
    FakeServer as PluginServer,
)
from pytest_ikigai.fakeserver import (
    RecordedRequest,
    Reply,
    SSEItem,
    drop_reply,
    json_reply,
    ndjson_reply,
    sse_event,
    sse_reply,
    stall_reply,
    unused_url,
)

__all__ = ["FakeServer", "RecordedRequest", "Reply", "SSEItem", "drop_reply", "json_reply",
           "ndjson_reply", "sse_event", "sse_reply", "stall_reply", "unused_url"]


class FakeServer(PluginServer):
    """The plugin's server, checking requests against the APIs' rules."""

    def __init__(self) -> None:
        from tests.support.api_rules import refusal  # it builds the APIs' error replies

        super().__init__(check=refusal)
