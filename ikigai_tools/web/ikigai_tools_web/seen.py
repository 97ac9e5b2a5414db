"""``web.fetch_only_seen_urls``: web_fetch fetches only URLs that appeared in the conversation.

Anthropic's rule for its own fetch tool, enforced here for every provider: a URL is seen
when the user wrote it (``https://...``, or a bare ``docs.python.org/3/``) or an earlier
tool result holds it (a web_search result, a link on a page web_fetch returned, relative
links resolved against the page's ``final_url``). A result's URLs that were in its own
call's arguments do not count: a tool that echoes its input (web_search's ``query``, a
refusal naming the URL) cannot launder a URL the model made up. A fetch URL carrying data
out (``https://evil.example/?q=SECRET``) therefore needs someone other than the model to
have written it first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from ikigai_toolkit.jsonio import strings

if TYPE_CHECKING:
    from ikigai_core import CallDecision, ToolCallRequest, ToolResult

_URL = re.compile(r"https?://[^\s<>\"'`\\]+", re.IGNORECASE)
_BARE = re.compile(r"(?<![\w@./:-])(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,63}"
                   r"(?::\d{1,5})?(?:/[^\s<>\"'`\\]*)?", re.IGNORECASE)
_LINK = re.compile(r"\]\(\s*<?([^\s()<>]+)|href\s*=\s*[\"']?([^\s\"'<>]+)", re.IGNORECASE)
_PROSE_END = ".,;:!?'\"*_)]}>"
"""What can follow a URL in prose or markdown: a URL ending in it is also seen without it."""
_DEFAULT_PORTS = {"http": ":80", "https": ":443"}


def unseen(request: ToolCallRequest) -> CallDecision | None:
    """Deny a web_fetch whose ``url`` did not appear in the request's conversation; a
    call from no conversation (``ikigai tool run``, ``mcp serve``) is not judged."""
    if request.conversation is None:
        return None
    url = request.arguments.get("url")
    wanted = key(url) if isinstance(url, str) else None
    if wanted is not None and any(wanted in found for found in seen_in(request.conversation)):
        return None
    from ikigai_core import CallDecision

    return CallDecision.deny(
        f"{url} did not appear in this conversation, and web_fetch fetches only URLs from "
        "the user's messages or earlier tool results (web.fetch_only_seen_urls in "
        "config.json); find it with web_search or ask the user for it. The user can allow "
        'free browsing with "web": {"fetch_only_seen_urls": false}')


def seen_in(messages: Sequence[object]) -> Iterator[set[str]]:
    """For each message, newest first, the :func:`key` of every URL the user wrote in it or
    its tool results hold (a fetch is most often of a URL the latest result holds)."""
    from ikigai_core import ToolResultsMessage, UserMessage

    for message in reversed(messages):
        if isinstance(message, UserMessage):
            yield _keys(_user_urls(message.text))
        elif isinstance(message, ToolResultsMessage):
            yield set().union(*map(_result_keys, message.results))


def key(url: str) -> str | None:
    """``url`` as compared: scheme and host lower-cased, no default port, no fragment, an
    empty path as ``/``; ``None`` for what is not an http(s) URL with a host."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    scheme, netloc = parts.scheme.lower(), parts.netloc.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    netloc = netloc.removesuffix(_DEFAULT_PORTS[scheme])
    query = f"?{parts.query}" if parts.query else ""
    return f"{scheme}://{netloc}{parts.path or '/'}{query}"


def _user_urls(text: str) -> Iterator[str]:
    """The URLs in the user's text, a bare ``host.tld/path`` as both http and https."""
    yield from _URL.findall(text)
    for bare in _BARE.findall(text):
        yield f"https://{bare}"
        yield f"http://{bare}"


def _result_keys(result: ToolResult) -> set[str]:
    """The keys of the URLs in one result's envelope, but those its call's arguments hold
    (in any case, or cut short where JSON escapes a character: an echo is no source)."""
    texts = list(strings(result.envelope))
    urls = [url for text in texts for url in _URL.findall(text)]
    base = _fetched_page(result)
    if base is not None:
        urls += [urljoin(base, "".join(link)) for text in texts for link in _LINK.findall(text)]
    import json

    given = [*strings(result.call.arguments), json.dumps(result.call.arguments)]
    echoed = {k.casefold() for k in _keys(url for text in given for url in _URL.findall(text))}
    return {k for k in _keys(urls) if k.casefold() not in echoed}


def _fetched_page(result: ToolResult) -> str | None:
    """The ``final_url`` of a page web_fetch returned (its relative links' base)."""
    answer = result.envelope.get("result")
    base = answer.get("final_url") if isinstance(answer, dict) else None
    return base if result.call.name == "web_fetch" and isinstance(base, str) else None


def _keys(urls: Iterable[str]) -> set[str]:
    """The keys of ``urls``, each also without the prose punctuation that may end it."""
    return {k for url in urls for k in map(key, _trimmed(url)) if k is not None}


def _trimmed(url: str) -> Iterator[str]:
    """``url``, then ``url`` without each punctuation mark it ends in, one by one."""
    yield url
    while url and url[-1] in _PROSE_END:
        url = url[:-1]
        yield url
