"""The transport against a real local HTTP server: retries, timeouts, streams, errors, redaction.

A minimal provider speaking a toy format keeps these tests about the transport;
each real provider has its own wire tests under ikigai_providers/.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from typing import Any

import httpx
import pytest

from ikigai_core import transport
from ikigai_core.conversation import AssistantMessage, Conversation, TextDelta, UserMessage
from ikigai_core.errors import ProviderError, UsageError
from ikigai_core.providers import Provider
from ikigai_core.sse import ServerSentEvent
from ikigai_core.transport import (
    MAX_RETRY_WAIT,
    api_key,
    http_timeout,
    redact,
    retry_delay,
    send_turn,
)
from ikigai_core.wire import stream_incomplete
from tests.support.fakeserver import (
    drop_reply,
    json_reply,
    sse_reply,
    stall_reply,
    unused_url,
)

KEY = "sk-test-SECRET-1234567890"


class ToyProvider(Provider):
    """Speaks ``{"text": ...}`` bodies and streams of text events ended by ``END``."""

    name = "toy"
    default_model = "toy-1"
    api_key_env = ("TOY_API_KEY", "TOY_OTHER_KEY")
    base_url_env = "TOY_BASE_URL"
    default_base_url = "https://toy.invalid"
    path = "/turn"

    def tool_schema(self, tool):
        return {"name": tool.name}

    def request_body(self, conversation, tools, *, model, stream):
        return {"model": model, "stream": stream,
                "messages": [m.text for m in conversation.messages]}

    def parse_response(self, body: Mapping[str, Any]) -> AssistantMessage:
        return AssistantMessage(text=body["text"], stop_reason="done")

    def parse_stream(self, events: Iterable[ServerSentEvent]) -> Iterator[Any]:
        parts = []
        for event in events:
            if event.data == "END":
                yield AssistantMessage(text="".join(parts))
                return
            if event.event == "error":
                raise ProviderError(f"Provider 'toy' reported an error mid-stream: {event.data}")
            parts.append(event.data)
            yield TextDelta(event.data)
        raise stream_incomplete(self.name, "END")


class SilentProvider(ToyProvider):
    """A broken parser: streams text but never the whole turn."""

    def parse_stream(self, events):
        for event in events:
            yield TextDelta(event.data)


def turn(server_url: str, *, provider: Any = None, stream: bool = False,
         extra_env: Mapping[str, str] | None = None, **kwargs: Any) -> AssistantMessage:
    environ = {"TOY_API_KEY": KEY, "TOY_BASE_URL": server_url, **(extra_env or {})}
    conversation = Conversation([UserMessage("hi")])
    return send_turn(provider or ToyProvider(), conversation, [], model="toy-1", stream=stream,
                     environ=environ, **kwargs)


def error_of(server_url: str, **kwargs: Any) -> str:
    with pytest.raises(ProviderError) as info:
        turn(server_url, **kwargs)
    message = str(info.value)
    assert "\n" not in message and KEY not in message
    return message


# -- API key ------------------------------------------------------------------


def test_api_key_takes_the_first_set_variable():
    assert api_key(ToyProvider(), {"TOY_OTHER_KEY": "b", "TOY_API_KEY": "a"}) == "a"
    assert api_key(ToyProvider(), {"TOY_API_KEY": "", "TOY_OTHER_KEY": "b"}) == "b"


def test_rejected_key_names_the_variable_it_was_read_from(fake_server):
    fake_server.push(json_reply({"error": {"message": "bad key"}}, status=401))
    environ = {"TOY_OTHER_KEY": KEY, "TOY_BASE_URL": fake_server.url}
    with pytest.raises(ProviderError) as info:
        send_turn(ToyProvider(), Conversation(), [], model="m", stream=False, environ=environ)
    assert str(info.value) == "Provider 'toy' rejected the API key (HTTP 401): set a valid TOY_OTHER_KEY"


def test_missing_api_key_names_the_variables():
    with pytest.raises(ProviderError, match="^No API key for provider 'toy': set TOY_API_KEY or TOY_OTHER_KEY, or store "
                       "one with `ikigai keys set toy`$"):
        api_key(ToyProvider(), {})


def test_missing_key_fails_before_any_request():
    with pytest.raises(ProviderError, match="No API key"):
        send_turn(ToyProvider(), Conversation(), [], model="m", stream=False, environ={})


def test_a_base_url_alone_sends_no_key(fake_server):
    """A local OpenAI-compatible server (llama.cpp, vLLM, Ollama) needs no dummy key."""
    fake_server.push(json_reply({"text": "hi"}), json_reply({"error": "who are you"}, status=401))
    environ = {"TOY_BASE_URL": fake_server.url}
    assert send_turn(ToyProvider(), Conversation(), [], model="m", stream=False,
                     environ=environ).text == "hi"
    assert "authorization" not in fake_server.requests[0].headers
    with pytest.raises(ProviderError) as info:
        send_turn(ToyProvider(), Conversation(), [], model="m", stream=False, environ=environ)
    assert str(info.value) == (
        "Provider 'toy' wants an API key (HTTP 401): set TOY_API_KEY or TOY_OTHER_KEY")


# -- Success ------------------------------------------------------------------


def test_json_turn_posts_the_body_with_the_key_header(fake_server):
    fake_server.push(json_reply({"text": "hello"}))
    message = turn(fake_server.url)
    assert message == AssistantMessage(text="hello", stop_reason="done")
    [request] = fake_server.requests
    assert (request.method, request.path) == ("POST", "/turn")
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.json == {"model": "toy-1", "stream": False, "messages": ["hi"]}


def test_streamed_turn_hands_text_to_on_text_as_it_arrives(fake_server):
    fake_server.push(sse_reply(["data: Hel\n\n", "data: lo\n\n", ": keep-alive\n\n", "data: END\n\n"]))
    seen: list[str] = []
    message = turn(fake_server.url, stream=True, on_text=seen.append)
    assert seen == ["Hel", "lo"]
    assert message.text == "Hello"
    assert fake_server.requests[0].json["stream"] is True


def test_text_is_handed_over_as_it_arrives_not_at_the_end(fake_server):
    fake_server.push(sse_reply(["data: one\n\n", "data: two\n\n", "data: END\n\n"], delay=0.2))
    arrivals: list[float] = []
    turn(fake_server.url, stream=True, on_text=lambda _: arrivals.append(time.monotonic()))
    assert arrivals[1] - arrivals[0] >= 0.15  # "two" was shown while the server still paused


def test_streamed_turn_without_on_text(fake_server):
    fake_server.push(sse_reply(["data: a\n\n", "data: END\n\n"]))
    assert turn(fake_server.url, stream=True).text == "a"


def test_errors_of_on_text_are_not_blamed_on_the_provider(fake_server):
    """A terminal that cannot encode the text raises UnicodeEncodeError (a ValueError)."""
    fake_server.push(sse_reply(["data: \u2603\n\n", "data: END\n\n"]))

    def ascii_terminal(text: str) -> None:
        text.encode("ascii")

    with pytest.raises(UnicodeEncodeError):
        turn(fake_server.url, stream=True, on_text=ascii_terminal)


# -- Retries ------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 529, 500, 503])
def test_retryable_status_then_success(fake_server, status):
    fake_server.push(
        json_reply({"error": {"message": "busy"}}, status=status, headers={"retry-after": "0"}),
        json_reply({"text": "ok"}),
    )
    assert turn(fake_server.url).text == "ok"
    assert len(fake_server.requests) == 2


def test_retries_are_bounded_and_the_last_error_is_reported(fake_server):
    busy = json_reply({"error": {"message": "upstream down"}}, status=502,
                      headers={"retry-after": "0"})
    fake_server.push(busy, busy, busy, busy)
    message = error_of(fake_server.url, max_retries=2)
    assert message == "Provider 'toy' failed (HTTP 502): upstream down"
    assert len(fake_server.requests) == 3
    assert fake_server.pending == 1


def test_client_errors_are_not_retried(fake_server):
    fake_server.push(json_reply({"error": {"message": "bad field"}}, status=400))
    assert error_of(fake_server.url) == "Provider 'toy' rejected the request (HTTP 400): bad field"
    assert len(fake_server.requests) == 1


def test_connection_closed_before_a_response_is_retried(fake_server):
    fake_server.push(drop_reply(), json_reply({"text": "second try"}))
    assert turn(fake_server.url, max_retries=1).text == "second try"
    assert len(fake_server.requests) == 2


def test_connection_closed_every_time(fake_server):
    fake_server.push(drop_reply())
    message = error_of(fake_server.url, max_retries=0)
    assert message.startswith(
        f"Provider 'toy' at {fake_server.url} closed the connection without a response: "
    )
    assert message.endswith("; try again")


# -- Unreachable, timeouts ----------------------------------------------------


def test_unreachable_base_url_names_the_variable():
    url = unused_url()
    message = error_of(url, max_retries=1)
    assert message.startswith(f"Cannot reach provider 'toy' at {url}: ")
    assert "refused" in message.lower()
    assert message.endswith("; check TOY_BASE_URL")


def test_base_url_without_scheme_is_reported_not_raised():
    message = error_of("127.0.0.1:9")
    assert message.startswith("Cannot reach provider 'toy' at 127.0.0.1:9/turn: ")
    assert message.endswith("; check TOY_BASE_URL")


def test_server_stalled_before_responding_hits_the_read_timeout(fake_server):
    fake_server.push(stall_reply(30))
    started = time.monotonic()
    message = error_of(fake_server.url, extra_env={"IKIGAI_HTTP_TIMEOUT": "0.3"})
    assert time.monotonic() - started < 10
    assert message == (
        f"Provider 'toy' at {fake_server.url} sent no response within 0.3 s (read timeout); "
        "try again, or raise IKIGAI_HTTP_TIMEOUT"
    )
    assert len(fake_server.requests) == 1


def test_stream_stalled_midway_hits_the_read_timeout(fake_server):
    fake_server.push(sse_reply(["data: partial\n\n"], stall=30))
    seen: list[str] = []
    started = time.monotonic()
    message = error_of(fake_server.url, stream=True, on_text=seen.append, timeout=0.3)
    assert time.monotonic() - started < 10
    assert seen == ["partial"]
    assert message == (
        "Provider 'toy' stalled mid-response: nothing for 0.3 s (read timeout); "
        "try again, or raise IKIGAI_HTTP_TIMEOUT"
    )


def test_connect_timeout_is_reported_as_unreachable():
    """A listener whose accept queue is full never completes new connections."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        fillers = []
        try:
            for _ in range(8):  # fill the accept queue; further SYNs are dropped
                filler = socket.socket()
                filler.setblocking(False)
                filler.connect_ex(listener.getsockname())
                fillers.append(filler)
            message = error_of(url, timeout=httpx.Timeout(5, connect=0.3), max_retries=0)
        finally:
            for filler in fillers:
                filler.close()
    assert message == (
        f"Cannot reach provider 'toy' at {url}: no connection within 0.3 s; check TOY_BASE_URL"
    )


# -- Broken responses ---------------------------------------------------------


def test_stream_dropped_midway(fake_server):
    fake_server.push(sse_reply(["data: par\n\n"], drop=True))
    message = error_of(fake_server.url, stream=True)
    assert message.startswith("Provider 'toy' broke off the response: ")


def test_stream_ending_without_its_terminal_event(fake_server):
    fake_server.push(sse_reply(["data: par\n\n"]))
    assert error_of(fake_server.url, stream=True) == (
        "Provider 'toy' ended the stream before END: the response is incomplete; try again"
    )


def test_parser_that_never_yields_the_turn(fake_server):
    fake_server.push(sse_reply(["data: x\n\n"]))
    assert error_of(fake_server.url, stream=True, provider=SilentProvider()) == (
        "Provider 'toy' ended the stream without a complete response"
    )


@pytest.mark.parametrize("body, expected", [
    (b"<html>gateway</html>",
     "Provider 'toy' sent a broken response (Expecting value): <html>gateway</html>"),
    (b"\xff\xfe{", "Provider 'toy' sent a broken response ("),
    (b"[1, 2]", "Provider 'toy' sent a response that is not a JSON object: [1, 2]"),
    (b'{"unexpected": 1}', "Provider 'toy' sent a response ikigai cannot read (KeyError: 'text')"),
])
def test_unreadable_json_bodies(fake_server, body, expected):
    fake_server.push(json_reply(body))
    assert error_of(fake_server.url).startswith(expected)


# -- The key never leaks ------------------------------------------------------


def test_key_echoed_in_an_error_body_is_redacted(fake_server):
    fake_server.push(json_reply({"error": {"message": f"bad key {KEY} for org"}}, status=400))
    message = error_of(fake_server.url)
    assert message == "Provider 'toy' rejected the request (HTTP 400): bad key [redacted] for org"


def test_key_echoed_in_a_stream_error_is_redacted(fake_server):
    fake_server.push(sse_reply([("error", f"quota for {KEY}")]))
    message = error_of(fake_server.url, stream=True)
    assert message == "Provider 'toy' reported an error mid-stream: quota for [redacted]"


def test_redact_replaces_plain_and_url_quoted_forms():
    assert redact("a k+y/1abcd b k%2By%2F1abcd", "k+y/1abcd") == "a [redacted] b [redacted]"
    assert redact("nothing", "") == "nothing"


@pytest.mark.parametrize("text, secret", [
    ("Expecting value: line 1 column 1", "x"),  # OPENAI_API_KEY=x garbled every message
    ("bad key 1234567", "1234567"),  # too short to be a secret
    ("ask sk-live-12345678xyz", "sk-live-12345678"),  # inside a longer word
    ("token Xsk-live-12345678", "sk-live-12345678"),
])
def test_redact_leaves_short_values_and_parts_of_words_alone(text, secret):
    assert redact(text, secret) == text


def test_redact_replaces_a_secret_between_punctuation():
    assert redact('key="sk-live-12345678".', "sk-live-12345678") == 'key="[redacted]".'


def test_a_short_key_does_not_garble_the_error(fake_server):
    fake_server.push(json_reply({"error": {"message": "Expecting value x"}}, status=400))
    message = error_of(fake_server.url, extra_env={"TOY_API_KEY": "x"})
    assert message.endswith("Expecting value x")


# -- Settings -----------------------------------------------------------------


def test_default_timeouts():
    limits = http_timeout({})
    assert (limits.connect, limits.read) == (10.0, 120.0)


def test_timeout_from_the_environment():
    limits = http_timeout({"IKIGAI_HTTP_TIMEOUT": " 2.5 "})
    assert (limits.connect, limits.read) == (2.5, 2.5)


@pytest.mark.parametrize("raw", ["abc", "0", "-1", "inf", "nan"])
def test_bad_timeout_setting_is_a_usage_error(raw):
    with pytest.raises(UsageError, match="^IKIGAI_HTTP_TIMEOUT must be a positive number of seconds"):
        http_timeout({"IKIGAI_HTTP_TIMEOUT": raw})


NOW = datetime(2025, 1, 1, 12, 0, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize("headers, expected", [
    ({"retry-after": "0"}, 0.0),
    ({"retry-after": "2.5"}, 2.5),
    ({"retry-after": "-3"}, 0.0),
    ({"retry-after": "3600"}, MAX_RETRY_WAIT),
    ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
    ({"retry-after": format_datetime(NOW + timedelta(seconds=7), usegmt=True)}, 7.0),
    ({"retry-after": format_datetime(NOW - timedelta(seconds=7), usegmt=True)}, 0.0),
    ({"retry-after": "Wed, 01 Jan 2025 12:00:04"}, 4.0),
])
def test_retry_after_seconds_and_dates(headers, expected):
    assert retry_delay(headers, 0, now=NOW) == pytest.approx(expected)


@pytest.mark.parametrize("headers", [{}, {"retry-after": "soon"}, {"retry-after-ms": "x"},
                                     {"retry-after": "nan"}])
def test_backoff_with_jitter_when_the_server_gives_no_usable_wait(headers):
    first = [retry_delay(headers, 0) for _ in range(20)]
    third = [retry_delay(headers, 2) for _ in range(20)]
    assert all(0.25 <= d <= 0.5 for d in first)
    assert all(1.0 <= d <= 2.0 for d in third)
    assert retry_delay(headers, 20) == MAX_RETRY_WAIT


def test_retry_delay_uses_the_clock_by_default():
    later = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=30), usegmt=True)
    assert 25 <= retry_delay({"retry-after": later}, 0) <= 30



# -- One client per provider --------------------------------------------------


@pytest.fixture
def clients_made(monkeypatch):
    """The keyword arguments of each ``httpx.Client`` made from now on, none cached before."""
    made = []
    real = httpx.Client

    def counting(*args, **kwargs):
        made.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(transport, "_CLIENTS", {})
    monkeypatch.setattr(httpx, "Client", counting)
    return made


def test_turns_share_one_client_per_provider(fake_server, clients_made):
    made = clients_made
    fake_server.push(json_reply({"text": "one"}), json_reply({"text": "two"}))
    assert turn(fake_server.url).text == "one"
    assert turn(fake_server.url).text == "two"
    assert len(made) == 1


def test_warm_makes_the_client_the_first_turn_uses(fake_server, clients_made):
    made = clients_made
    environ = {"TOY_API_KEY": KEY, "TOY_BASE_URL": fake_server.url}
    warming = [threading.Thread(target=transport.warm, args=(ToyProvider(), environ))
               for _ in range(3)]
    for thread in warming:  # at once
        thread.start()
    for thread in warming:
        thread.join(10)
    assert len(made) == 1 and list(transport._CLIENTS) == [("toy", True)]
    fake_server.push(json_reply({"text": "hello"}))
    assert turn(fake_server.url).text == "hello"
    assert len(made) == 1  # the first turn used the warm client


def test_a_plain_http_endpoint_loads_no_certificates(fake_server, monkeypatch):
    import ssl

    loaded = []
    monkeypatch.setattr(transport, "_CLIENTS", {})
    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations",
                        lambda self, *args, **kwargs: loaded.append(args))
    fake_server.push(json_reply({"text": "hello"}))
    assert turn(fake_server.url).text == "hello"
    assert loaded == []


# -- Cancel -------------------------------------------------------------------


@pytest.mark.parametrize("reply", [
    stall_reply(60),  # nothing sent: before the headers
    sse_reply(["data: a\n\n"], stall=60),  # mid-stream
], ids=["before-headers", "mid-stream"])
def test_a_cancel_hangs_up_on_a_held_request_at_once(fake_server, reply):
    from ikigai_core.cancel import Cancel, Cancelled

    fake_server.push(reply)
    cancel = Cancel()
    timer = threading.Timer(0.3, cancel.set)
    started = time.monotonic()
    timer.start()
    with pytest.raises(Cancelled, match="^the prompt was cancelled$"):
        turn(fake_server.url, stream=True, cancel=cancel)
    assert time.monotonic() - started < 3  # the server holds it for 60
    assert len(fake_server.requests) == 1  # not retried
    deadline = time.monotonic() + 3
    while not fake_server.hung_up:
        assert time.monotonic() < deadline, "the server never saw the connection close"
        time.sleep(0.01)


def test_a_cancel_ends_the_wait_before_a_retry(fake_server):
    from ikigai_core.cancel import Cancel, Cancelled

    fake_server.push(json_reply({"error": {"message": "busy"}}, status=503,
                                headers={"retry-after": "60"}))
    cancel = Cancel()
    timer = threading.Timer(0.3, cancel.set)
    started = time.monotonic()
    timer.start()
    with pytest.raises(Cancelled):
        turn(fake_server.url, cancel=cancel)
    assert time.monotonic() - started < 3
    assert len(fake_server.requests) == 1


def test_a_request_sent_after_its_cancel_is_refused_at_once(fake_server):
    from ikigai_core.cancel import Cancel, Cancelled

    fake_server.push(json_reply({"text": "never read"}))
    cancel = Cancel()
    cancel.set()
    started = time.monotonic()
    with pytest.raises(Cancelled):
        turn(fake_server.url, cancel=cancel)
    assert time.monotonic() - started < 3


def test_a_cancel_hangs_up_through_the_environments_proxy(monkeypatch):
    """An https provider goes through ``HTTPS_PROXY`` as httpx's default client does, and a
    cancel cuts it there too: the proxy here takes the ``CONNECT`` and holds it."""
    from ikigai_core.cancel import Cancel, Cancelled

    with socket.socket() as proxy:
        proxy.bind(("127.0.0.1", 0))
        proxy.listen()
        for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "https_proxy"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{proxy.getsockname()[1]}")
        monkeypatch.setattr(transport, "_CLIENTS", {})
        seen: list[bytes] = []

        def hold() -> None:
            connection, _ = proxy.accept()
            with connection:
                seen.append(connection.recv(1024))
                seen.append(connection.recv(1024))  # b"": the client hung up

        holder = threading.Thread(target=hold)
        holder.start()
        cancel = Cancel()
        threading.Timer(0.3, cancel.set).start()
        started = time.monotonic()
        with pytest.raises(Cancelled):
            turn("https://provider.invalid", cancel=cancel)
        holder.join(5)
    assert time.monotonic() - started < 3
    assert seen[0].startswith(b"CONNECT provider.invalid:443 ") and seen[1:] == [b""]


def test_a_cancel_cuts_a_tls_handshake_the_server_never_answers():
    """A server that takes the connection and says nothing holds the TLS handshake up to
    the connect timeout (10 s); a cancel ends it at once."""
    from ikigai_core.cancel import Cancel, Cancelled

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        cancel = Cancel()
        threading.Timer(0.3, cancel.set).start()
        started = time.monotonic()
        with pytest.raises(Cancelled):
            turn(f"https://127.0.0.1:{silent.getsockname()[1]}", cancel=cancel)
        assert time.monotonic() - started < 3
        connection, _ = silent.accept()
        with connection:
            assert connection.recv(4096)[:1] == b"\x16"  # its ClientHello, then nothing
            connection.settimeout(3)
            while connection.recv(4096):
                pass  # until the client hung up
