"""Send one model turn to a provider over HTTP: retries, timeouts, streaming, one-line errors.

Shared by every provider: a provider only builds bodies and reads replies
(:class:`~ikigai_core.providers.Provider`); this module owns the network.
The API key is redacted from every error that leaves :func:`send_turn`. httpx is
imported only when a request is made, so importing this module costs nothing; and without
its command line (see :data:`HTTPX_CLI`).
"""

from __future__ import annotations

import math
import os
import random
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit

from ikigai_core.cancel import CURRENT, Cancel, Cancelled, cancellable
from ikigai_core.conversation import AssistantMessage, TextDelta, ThinkingDelta
from ikigai_core.errors import ContextTooLong, KeyRejected, ProviderError, UsageError
from ikigai_core.sse import iter_lines, iter_ndjson, iter_sse
from ikigai_core.wire import base_url, load_object

if TYPE_CHECKING:
    import httpx

    from ikigai_core.conversation import Conversation
    from ikigai_core.providers import Provider, ProviderRequest
    from ikigai_core.tools import Tool

HTTPX_CLI = "httpx._main"
"""httpx's command line, which ``httpx/__init__`` imports whenever rich, click and pygments
are installed (the start-up ledger; may go with encode/httpx#3547). ikigai
never runs it: a ``None`` in ``sys.modules`` makes that import fail, and httpx falls back to
its own stub ``main``. Set only while `_import_httpx` imports httpx; an httpx already
imported keeps its."""

CONNECT_TIMEOUT = 10.0
"""Seconds to wait for a connection."""
READ_TIMEOUT = 120.0
"""Seconds to wait for the next byte of a response (a stalled server ends here)."""
TIMEOUT_ENV = "IKIGAI_HTTP_TIMEOUT"
"""Environment variable setting both timeouts, in seconds."""
MAX_RETRY_WAIT = 60.0
"""Longest wait between two attempts, whatever ``retry-after`` asks for."""
BACKOFF_BASE = 0.5
"""First wait when the server says nothing; doubles with each attempt (with jitter)."""
REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 8
"""Shorter values are not secrets worth hiding: redacting ``x`` would garble every message."""
TOOL_INDEX = re.compile(r"(function_declarations|functionDeclarations|tools)(?:\[(\d+)\]|\.(\d+))")
"""A tool named by its index in a provider's error: ``tools[3]``, ``tools.3.custom``,
``tools[0].function_declarations[3]`` (Gemini: the index in the declarations)."""


def api_key(provider: Provider, environ: Mapping[str, str]) -> str | None:
    """The provider's API key: the first of its ``api_key_env`` variables that is set
    (``None``: the request goes without one; see :func:`key_variable`)."""
    var = key_variable(provider, environ)
    return None if var is None else environ[var]


def key_variable(provider: Provider, environ: Mapping[str, str]) -> str | None:
    """The first of the provider's ``api_key_env`` variables that is set (the one used).

    With none set, the request goes without a key when the provider needs none
    (``key_required`` false) or its base URL is set (a local server); otherwise this is
    a :class:`ProviderError` naming the variables.
    """
    for var in provider.api_key_env:
        if environ.get(var):
            return var
    if provider.api_key_env and provider.key_required and not environ.get(provider.base_url_env):
        raise ProviderError(
            f"No API key for provider '{provider.name}': set {' or '.join(provider.api_key_env)}"
            f", or store one with `ikigai keys set {provider.name}`"
        )
    return None


def redact(text: str, secret: str) -> str:
    """``text`` with ``secret`` (as is and URL-quoted) replaced by ``[redacted]`` wherever it
    stands as a word of its own; a value shorter than :data:`MIN_SECRET_LENGTH` is left alone."""
    if len(secret) < MIN_SECRET_LENGTH:
        return text
    forms = "|".join(re.escape(form) for form in {secret, quote(secret, safe="")})
    return re.sub(rf"(?<![A-Za-z0-9])(?:{forms})(?![A-Za-z0-9])", REDACTED, text)


_IMPORTING = threading.Lock()
"""Held while :func:`_import_httpx` imports (a :func:`warm` thread may do it meanwhile)."""


def _import_httpx() -> None:
    """Import httpx without its command line (:data:`HTTPX_CLI`); the ``None`` is gone from
    ``sys.modules`` afterwards, so nothing else in the process sees it."""
    if "httpx" in sys.modules:
        return
    with _IMPORTING:
        if "httpx" not in sys.modules and HTTPX_CLI not in sys.modules:
            sys.modules[HTTPX_CLI] = None  # type: ignore[assignment]  # None: "not importable"
            try:
                import httpx  # noqa: F401
            finally:
                del sys.modules[HTTPX_CLI]


def warm(provider: Provider, environ: Mapping[str, str]) -> None:
    """Import httpx and make ``provider``'s HTTP client now (call it on a thread of its
    own): the first request (the chat's, or its first sub-agent's) then goes out without
    paying for them (~100 ms; more on a loaded machine). ``environ`` names the base URL,
    as for a request."""
    _import_httpx()
    _client(provider.name, base_url(environ, provider.base_url_env, provider.default_base_url))


def http_timeout(environ: Mapping[str, str]) -> httpx.Timeout:
    """Connect 10 s and read 120 s, or both ``$IKIGAI_HTTP_TIMEOUT`` seconds when set."""
    _import_httpx()
    import httpx

    raw = environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return httpx.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT)
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not (seconds > 0 and math.isfinite(seconds)):
        raise UsageError(f"{TIMEOUT_ENV} must be a positive number of seconds, got {raw!r}")
    return httpx.Timeout(seconds)


def retry_delay(headers: Mapping[str, str], attempt: int, *, now: datetime | None = None) -> float:
    """Seconds to wait before retry number ``attempt + 1``.

    ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date) when the server sent
    one, else exponential backoff with jitter; never more than :data:`MAX_RETRY_WAIT`.
    """
    delay = None
    if "retry-after-ms" in headers:
        delay = _number(headers["retry-after-ms"])
        delay = None if delay is None else delay / 1000
    if delay is None and "retry-after" in headers:
        value = headers["retry-after"]
        delay = _number(value)
        if delay is None:
            delay = _seconds_until(value, now or datetime.now(timezone.utc))
    if delay is None:
        delay = BACKOFF_BASE * 2**attempt * random.uniform(0.5, 1.0)
    return min(max(delay, 0.0), MAX_RETRY_WAIT)


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _seconds_until(http_date: str, now: datetime) -> float | None:
    try:
        when = parsedate_to_datetime(http_date)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return (when - now).total_seconds()


def is_retryable(status: int) -> bool:
    """429 (rate limit), 529 (Anthropic overloaded) and every other 5xx."""
    return status == 429 or status >= 500


def wire_request(
    provider: Provider,
    conversation: Conversation,
    tools: Sequence[Tool],
    *,
    model: str,
    stream: bool,
    reasoning: str | None,
    api_key: str | None,
    environ: Mapping[str, str],
) -> ProviderRequest:
    """The HTTP request :func:`send_turn` sends for ``conversation`` and ``tools``: the
    provider's body, asking for ``reasoning`` when given, with its prompt-cache marks
    (``ikigai request`` prints its body; with ``api_key`` ``None`` no key is in it)."""
    body = provider.request_body(conversation, tools, model=model, stream=stream)
    if reasoning is not None:
        body = provider.with_reasoning(body, reasoning, model=model)
    return provider.http_request(body, model=model, stream=stream, api_key=api_key,
                                 environ=environ)


def send_turn(
    provider: Provider,
    conversation: Conversation,
    tools: Sequence[Tool],
    *,
    model: str,
    stream: bool,
    environ: Mapping[str, str] = os.environ,
    on_text: Callable[[str], None] | None = None,
    max_retries: int = 3,
    timeout: httpx.Timeout | float | None = None,
    reasoning: str | None = None,
    on_thinking: Callable[[str], None] | None = None,
    cancel: Cancel | None = None,
) -> AssistantMessage:
    """Ask the model for its next turn and return it.

    With ``stream``, ``on_text`` receives the text as it arrives, ``on_thinking`` the
    model's thinking (whole, once the turn is read, without ``stream``). ``reasoning``
    (``low``, ``medium``, ``high``) asks for that much thinking
    (:meth:`~ikigai_core.providers.Provider.with_reasoning`). 429, 529, 5xx and
    connections that fail before any response are retried up to ``max_retries`` times.
    ``timeout`` defaults to :func:`http_timeout`. Every failure is a :class:`ProviderError`
    whose one-line message never holds the API key. Once ``cancel`` is set (from any
    thread), the request ends at once, its connection closed, raising :class:`Cancelled`.
    """
    _import_httpx()
    import httpx

    key_env = key_variable(provider, environ)
    key = "" if key_env is None else environ[key_env]
    limits = http_timeout(environ) if timeout is None else httpx.Timeout(timeout)
    try:
        request = wire_request(provider, conversation, tools, model=model, stream=stream,
                               reasoning=reasoning, api_key=key or None, environ=environ)
        exchange = _Exchange(provider, request, model, limits, key_env, tools)
        with _sent_with(cancel):
            return exchange.run(stream, on_text, max_retries, on_thinking)
    except ProviderError as exc:
        if cancel is not None and cancel.is_set():  # it broke off because it was hung up on
            raise Cancelled("the prompt was cancelled") from None
        message = redact(str(exc), key)
        if message != str(exc):
            raise (ContextTooLong if isinstance(exc, ContextTooLong) else ProviderError)(
                message) from None
        raise


@contextmanager
def _sent_with(cancel: Cancel | None) -> Iterator[None]:
    """The requests this thread sends meanwhile are cut when ``cancel`` is set."""
    token = CURRENT.set(cancel)
    try:
        yield
    finally:
        CURRENT.reset(token)


class _Exchange:
    """One request to one provider, with its attempts."""

    def __init__(
        self, provider: Provider, request: ProviderRequest, model: str,
        limits: httpx.Timeout, key_env: str | None, tools: Sequence[Tool] = (),
    ) -> None:
        self.provider = provider
        self.key_env = key_env
        self.tools = tools
        self.request = request
        self.model = model
        self.limits = limits
        parts = urlsplit(request.url)
        self.origin = f"{parts.scheme}://{parts.netloc}" if parts.netloc else request.url

    def run(
        self, stream: bool, on_text: Callable[[str], None] | None, max_retries: int,
        on_thinking: Callable[[str], None] | None = None,
    ) -> AssistantMessage:
        """POST until a success, a final error or the last retry."""
        import httpx

        client = _client(self.provider.name, self.request.url)
        attempt = 0
        while True:
            try:
                with client.stream(
                    "POST", self.request.url, headers=dict(self.request.headers),
                    json=self.request.body, timeout=self.limits,
                ) as response:
                    if response.is_success:
                        return self._read(response, stream, on_text, on_thinking)
                    content = response.read()
                    if attempt >= max_retries or not is_retryable(response.status_code):
                        status = response.status_code
                        message = self.provider.error_message(
                            status, content, model=self.model,
                            key_env=self.key_env,
                        )
                        message = name_tools(message, self.provider, self.tools)
                        if self.key_env and self.provider.rejects_key(status, content):
                            raise KeyRejected(message, status=status)
                        if status == 400 and any(
                                marker in content for marker in self.provider.context_too_long):
                            raise ContextTooLong(message)
                        raise ProviderError(message)
                    wait = retry_delay(response.headers, attempt)
            except (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError,
                    httpx.WriteError) as exc:
                if attempt >= max_retries:
                    raise self._no_response(exc) from exc
                wait = retry_delay({}, attempt)
            except httpx.TimeoutException as exc:
                raise self._timed_out(exc) from exc
            except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
                raise self._unreachable(str(exc)) from exc
            attempt += 1
            cancel = CURRENT.get()
            if cancel is None:
                time.sleep(wait)
            elif cancel.wait(wait):
                raise Cancelled("the prompt was cancelled")

    def _read(
        self, response: httpx.Response, stream: bool, on_text: Callable[[str], None] | None,
        on_thinking: Callable[[str], None] | None,
    ) -> AssistantMessage:
        """Parse the body; ``on_text`` runs outside the error mapping (its errors are its own)."""
        name = self.provider.name
        if not stream or _is_json(response):  # some proxies answer a stream with one body
            with self._reading():
                message = self.provider.parse_response(
                    load_object(name, response.read(), "response"))
            if on_thinking is not None and message.thinking:
                on_thinking(message.thinking)
            if stream and on_text is not None and message.text:
                on_text(message.text)
            return message
        framing = iter_ndjson if self.provider.stream_framing == "ndjson" else iter_sse
        with self._reading():  # a provider's parse_stream may read its first event at once
            items = self.provider.parse_stream(framing(iter_lines(response.iter_bytes())))
        while True:
            with self._reading():
                item = next(items, None)
            if item is None:
                raise ProviderError(
                    f"Provider '{name}' ended the stream without a complete response"
                )
            if isinstance(item, ThinkingDelta):
                if on_thinking is not None:
                    on_thinking(item.text)
            elif not isinstance(item, TextDelta):
                return item
            elif on_text is not None:
                on_text(item.text)

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """Turn what can go wrong while reading a response into one-line errors."""
        import httpx

        name = self.provider.name
        try:
            yield
        except httpx.TimeoutException as exc:
            raise ProviderError(
                f"Provider '{name}' stalled mid-response: nothing for {self.limits.read:g} s "
                f"(read timeout); try again, or raise {TIMEOUT_ENV}"
            ) from exc
        except httpx.HTTPError as exc:
            raise ProviderError(
                f"Provider '{name}' broke off the response: {_reason(exc)}; try again"
            ) from exc
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise ProviderError(
                f"Provider '{name}' sent a response ikigai cannot read "
                f"({type(exc).__name__}: {exc})"
            ) from exc

    def _unreachable(self, reason: str) -> ProviderError:
        return ProviderError(
            f"Cannot reach provider '{self.provider.name}' at {self.origin}: {reason}; "
            f"check {self.provider.base_url_env}"
        )

    def _no_response(self, exc: httpx.TransportError) -> ProviderError:
        import httpx

        if isinstance(exc, httpx.ConnectError):
            return self._unreachable(_reason(exc))
        return ProviderError(
            f"Provider '{self.provider.name}' at {self.origin} closed the connection without "
            f"a response: {_reason(exc)}; try again"
        )

    def _timed_out(self, exc: httpx.TimeoutException) -> ProviderError:
        import httpx

        if isinstance(exc, httpx.ConnectTimeout):
            return self._unreachable(f"no connection within {self.limits.connect:g} s")
        return ProviderError(
            f"Provider '{self.provider.name}' at {self.origin} sent no response within "
            f"{self.limits.read:g} s (read timeout); try again, or raise {TIMEOUT_ENV}"
        )


def name_tools(message: str, provider: Provider, tools: Sequence[Tool]) -> str:
    """``message`` with the tools it names by index (``tools[3]``) named by name too, and
    where to look: the index counts the tools the request carried, in order."""
    found = TOOL_INDEX.findall(message)
    declared = [m for m in found if m[0] != "tools"] or found
    indexes = list(dict.fromkeys(int(m[1] or m[2]) for m in declared))
    if not indexes:
        return message
    sent = [fit.tool for fit in provider.fit_tools(tools) if fit.declaration is not None]
    named = [(i, sent[i]) for i in indexes[:3] if i < len(sent)]
    if not named:
        return message
    which = "; ".join(f"tool {i} is '{name}'" for i, name in named)
    return f"{message} ({which}; see `ikigai tool check {named[0][1]}`)"


_CLIENTS: dict[tuple[str, bool], httpx.Client] = {}
_MAKING = threading.Lock()


def _client(provider: str, url: str) -> httpx.Client:
    """The process's HTTP client for ``provider``, made on its first turn and kept.

    Later turns reuse it and its open connections; a :class:`Cancel` can cut its requests,
    through the environment's proxy too (:func:`~ikigai_core.cancel.cancellable`). A
    ``http://`` endpoint (a local server) gets a client whose TLS context trusts nothing:
    it never speaks TLS, so loading every CA certificate into the default context would be
    work for nothing on every turn.
    """
    import httpx

    plain = url.startswith("http://")
    client = _CLIENTS.get((provider, plain))
    if client is not None:
        return client
    with _MAKING:  # one client, also when a warm() thread makes it meanwhile
        client = _CLIENTS.get((provider, plain))
        if client is None:
            transport = None
            if plain:
                import ssl

                transport = httpx.HTTPTransport(verify=ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))
            client = _CLIENTS[(provider, plain)] = httpx.Client(transport=transport)
            for each in (client._transport, *client._mounts.values()):  # a proxy's too
                cancellable(getattr(each, "_pool", None))
        return client


def _is_json(response: httpx.Response) -> bool:
    """Whether the response says it is one JSON document (not ``text/event-stream``)."""
    kind = str(response.headers.get("content-type", "")).split(";")[0].strip().lower()
    return kind == "application/json"


def _reason(exc: Exception) -> str:
    return str(exc) or type(exc).__name__
