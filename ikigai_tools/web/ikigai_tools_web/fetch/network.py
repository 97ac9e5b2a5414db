"""A page from the network: the guarded fetch (conditional when a stale cache entry exists),
robots.txt checked before every hop's request, then the page as the cache keeps it."""

from __future__ import annotations

import datetime
import re
import time
from typing import Any

from ikigai_tools_web.fetch import robots
from ikigai_tools_web.fetch.cache import Cache, Entry
from ikigai_tools_web.fetch.client import Fetched, FetchError, Limits, Refused, fetch
from ikigai_tools_web.fetch.extract import html_to_markdown
from ikigai_tools_web.fetch.guard import Target, refused
from ikigai_tools_web.protocol import ToolError

HTML_TYPES = ("text/html", "application/xhtml+xml")
TEXT_TYPES = ("text/", "application/json", "application/xml", "application/javascript",
              "application/x-ndjson", "+json", "+xml", "application/pdf")
"""Media types read at all (``+json`` and ``+xml`` are suffixes); others are refused
from their headers, unread."""

_META_CHARSET = re.compile(rb"""<meta[^>]+charset=["']?([\w-]+)""", re.IGNORECASE)


def fetch_page(url: str, settings: dict[str, Any], cache: Cache,
               entry: Entry | None) -> dict[str, Any]:
    """Fetch ``url`` (revalidating ``entry``) and cache the page; errors as :class:`ToolError`."""
    limits = Limits(settings["connect_timeout"], settings["timeout"], settings["max_bytes"])
    allowed = settings["allow_private"]
    try:
        fetched = fetch(url, allowed=allowed, limits=limits, headers=_conditional(entry),
                        wanted=TEXT_TYPES,
                        before_hop=lambda hop: _check_robots(hop, settings, cache, limits))
    except Refused as exc:
        raise ToolError(str(exc), "url_refused") from exc
    except FetchError as exc:
        raise ToolError(str(exc), exc.code) from exc
    now = time.time()
    if fetched.status == 304 and entry is not None:
        cache.touch(url, now)
        return {**entry.page, "retrieved_at": _iso(now), "cached": True}
    page = build_page(fetched, now)
    if fetched.status == 200 and "no-store" not in fetched.headers.get("cache-control", ""):
        cache.put(url, Entry(page, now, str(fetched.address), fetched.host,
                             refused(fetched.address), fetched.headers.get("etag"),
                             fetched.headers.get("last-modified")))
    return page


def _check_robots(target: Target, settings: dict[str, Any], cache: Cache,
                  limits: Limits) -> None:
    """Raise ``robots_denied`` unless ``target``'s site lets ikigai fetch it: each redirect
    hop is a request of its own, so each is checked against its own site's rules."""
    if robots.ignored(target.host, settings["robots_ignore"]):
        return
    origin = robots.origin_of(target.url)
    known = cache.robots(origin)
    if known is None:
        try:
            got = fetch(origin + "/robots.txt", allowed=settings["allow_private"],
                        limits=Limits(limits.connect, limits.total, robots.MAX_ROBOTS_BYTES))
            known = got.status, got.body.decode("utf-8", "replace")
        except FetchError:
            known = 0, ""
        if 0 < known[0] < 500:  # a failure or a server error is asked again next time
            cache.put_robots(origin, *known)
    if not robots.allowed(target.url, *known):
        why = {0: "could not be fetched", 401: "answers 401", 403: "answers 403"}.get(
            known[0], "answers a server error" if known[0] >= 500 else "disallows this URL")
        raise ToolError(
            f"{origin}/robots.txt {why} for {robots.ROBOTS_AGENT}; to fetch from "
            f"{target.host} anyway, add it to web.robots_ignore in config.json",
            "robots_denied")


def _conditional(entry: Entry | None) -> dict[str, str]:
    if entry is None:
        return {}
    headers = {}
    if entry.etag:
        headers["If-None-Match"] = entry.etag
    if entry.last_modified:
        headers["If-Modified-Since"] = entry.last_modified
    return headers


def build_page(fetched: Fetched, now: float) -> dict[str, Any]:
    """The cacheable page of a response: its text as served and as markdown (the body is
    consumed: ``fetched.body`` is emptied once decoded)."""
    kind = fetched.content_type
    if fetched.refused_type:
        size = f"{fetched.length} bytes" if fetched.length is not None else "unknown size"
        raise ToolError(f"{fetched.final_url} is {kind} ({size}), not text; web_fetch reads "
                        "HTML, text, JSON, XML and (with the pdf extra) PDF",
                        "unsupported_content_type")
    notes = []
    if fetched.capped:
        notes.append(f"the body was cut at web.max_bytes ({len(fetched.body)} bytes)")
    raw = _pdf_text(fetched) if kind == "application/pdf" else _decode(fetched)
    fetched.body = b""  # consumed: the peak memory of a large page's conversion is what counts
    page: dict[str, Any] = {
        "final_url": fetched.final_url, "status": fetched.status,
        "content_type": kind or "unknown", "retrieved_at": _iso(now), "title": "", "raw": raw}
    if kind in HTML_TYPES or (not kind and raw.lstrip()[:1] == "<"):
        extracted = html_to_markdown(raw, fetched.final_url)
        page.update(title=extracted.title, markdown=extracted.markdown)
        if extracted.near_empty:
            page["near_empty"] = True
        if extracted.sliced:
            notes.append(f"a large page ({len(raw)} characters of HTML): converted a slice at "
                         "a time from its main element, without main-content detection")
    if notes:
        page["notes"] = notes
    return page


def _decode(fetched: Fetched) -> str:
    """The body as text: the header's charset, else a ``<meta>`` one, else UTF-8."""
    match = re.search(r"charset=([\w-]+)", fetched.headers.get("content-type", ""), re.I)
    charset = match.group(1) if match else None
    if charset is None:
        meta = _META_CHARSET.search(fetched.body[:4096])
        charset = meta.group(1).decode() if meta else "utf-8"
    try:
        return fetched.body.decode(charset, "replace")
    except LookupError:
        return fetched.body.decode("utf-8", "replace")


def _pdf_text(fetched: Fetched) -> str:
    try:
        from pypdf import PdfReader
    except ImportError as exc:
        raise ToolError(f"{fetched.final_url} is a PDF; install ikigai-tools-web[pdf] "
                        "(pypdf) to read it", "unsupported_content_type") from exc
    import io

    try:
        reader = PdfReader(io.BytesIO(fetched.body))
        return "\n\n".join(page.extract_text() or "" for page in reader.pages)
    except Exception as exc:  # pypdf's own errors, and ValueError/KeyError/... on bad objects
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise ToolError(f"{fetched.final_url} is a PDF pypdf cannot read ({reason}); it may be "
                        "damaged, cut short (web.max_bytes) or encrypted",
                        "unreadable_pdf") from exc


def _iso(when: float) -> str:
    return datetime.datetime.fromtimestamp(when, datetime.timezone.utc).isoformat(
        timespec="seconds")
