"""HTML to markdown, no LLM: trafilatura's main content, or the whole page by markdownify
when trafilatura drops code blocks or headings (documentation pages) or finds nothing.

A page over :data:`LARGE` is converted by markdownify a slice at a time, cut before a
heading or a block: parsers build trees of about 50 MiB per MiB of dense HTML, and a slice
keeps that bounded whatever the page's size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

NEAR_EMPTY = 200
"""Characters below which an extraction of a bigger page is called near-empty."""
LARGE = 256 * 1024
"""Characters of HTML past which a page is converted in slices."""
SLICE = 16 * 1024
"""Characters of HTML in one slice (at most, but for a block longer than that)."""

_PRE = re.compile(r"<pre[\s>]", re.IGNORECASE)
_HEADING = re.compile(r"<h[1-6][\s>]", re.IGNORECASE)
_FENCE = re.compile(r"^```", re.MULTILINE)
_BACKTICKS = re.compile(r"`{3,}")
_MD_HEADING = re.compile(r"^#{1,6} ", re.MULTILINE)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_HEADING_BLOCK = re.compile(r"(<h[1-6][^>]*>)(.*?)(</h[1-6]>)", re.IGNORECASE | re.DOTALL)
_SELF_LINK = re.compile(r"<a\s[^>]*href=[\"']#[^>]*>(.*?)</a>", re.IGNORECASE | re.DOTALL)
_PERMALINK = re.compile(r"^\s*(¶|#|§|\uf0c1|🔗)?\s*$")
_HEADING_START = re.compile(r"<h[1-6][\s>]", re.IGNORECASE)
_BLOCK_START = re.compile(r"<(p|div|section|article|pre|table|ul|ol|dl|blockquote)[\s>]",
                          re.IGNORECASE)
_MAIN_START = re.compile(r"<(main|article)[\s>]|<[^>]+role=[\"']main[\"']", re.IGNORECASE)
_BOILERPLATE = ("script", "style", "noscript", "nav", "footer", "header", "aside", "form",
                "svg", "iframe", "button")


@dataclass(frozen=True)
class Extracted:
    """The markdown of a page, its title, whether it came out near-empty, and whether it
    was converted in slices (a large page: no main-content detection)."""

    title: str
    markdown: str
    near_empty: bool
    sliced: bool = False


def html_to_markdown(html: str, url: str) -> Extracted:
    """The main content of ``html`` as markdown (headings, links, lists, tables, code)."""
    if len(html) > LARGE:
        return _large(html)
    html = _HEADING_BLOCK.sub(_plain_heading, html)
    import trafilatura

    main = trafilatura.extract(html, url=url, output_format="markdown", include_links=True,
                               include_tables=True, include_formatting=True,
                               include_images=False, favor_recall=True) or ""
    if _lost_structure(html, main):
        main = _whole_page(html) or main
    title = _title(html)
    near_empty = len(main.strip()) < NEAR_EMPTY and len(html) > 4 * NEAR_EMPTY
    return Extracted(title, main.strip() + "\n" if main.strip() else "", near_empty)


def _large(html: str) -> Extracted:
    """A large page, from its main element on, by markdownify a slice at a time."""
    found = _MAIN_START.search(html)
    start = found.start() if found else 0
    parts = [_whole_page(_HEADING_BLOCK.sub(_plain_heading, html[a:b]))
             for a, b in _slices(html, start)]
    markdown = "\n\n".join(part for part in parts if part)
    return Extracted(_title(html), markdown + "\n" if markdown else "", not markdown, True)


def _slices(html: str, start: int) -> list[tuple[int, int]]:
    """``(start, end)`` of slices of at most :data:`SLICE` characters, each ending before
    a heading if one is in reach, else before a block, else where the size runs out."""
    bounds = []
    while start < len(html):
        limit = start + SLICE
        if limit >= len(html):
            bounds.append((start, len(html)))
            break
        end = _last_start(_HEADING_START, html, start, limit) or _last_start(
            _BLOCK_START, html, start, limit) or limit
        bounds.append((start, end))
        start = end
    return bounds


def _last_start(pattern: re.Pattern[str], html: str, start: int, limit: int) -> int | None:
    """Where the last match of ``pattern`` in the second half of ``html[start:limit]`` begins."""
    last = None
    for match in pattern.finditer(html, start + (limit - start) // 2, limit):
        last = match.start()
    return last


def _plain_heading(match: re.Match[str]) -> str:
    """A heading without its links to the page itself: Sphinx's ``¶`` permalinks go, and a
    back-link to the table of contents keeps only its text."""
    inner = _SELF_LINK.sub(lambda a: "" if _PERMALINK.match(a.group(1)) else a.group(1),
                           match.group(2))
    return match.group(1) + inner + match.group(3)


def _lost_structure(html: str, markdown: str) -> bool:
    """Whether the extraction kept fewer code blocks or under 90 % of the headings."""
    fences = len(_FENCE.findall(markdown)) // 2
    return (fences < len(_PRE.findall(html))
            or len(_MD_HEADING.findall(markdown)) < 0.9 * len(_HEADING.findall(html))
            or not markdown.strip())


def _whole_page(html: str) -> str:
    """The page's ``main`` (or ``article``, or ``body``) by markdownify, without the
    navigation, header, footer, scripts and forms."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(_BOILERPLATE):
        tag.decompose()
    for tag in soup.select('[role="navigation"], .sphinxsidebar, .related, .headerlink, '
                           '.md-sidebar, .md-header, .md-footer'):
        tag.decompose()
    root = soup.find("main") or soup.find("article") or soup.find(None, {"role": "main"}) \
        or soup.body or soup
    converter = _converter_class()(heading_style="ATX", code_language_callback=_language,
                           strip=["img"])
    text = converter.convert_soup(root)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _converter_class() -> type:
    from markdownify import MarkdownConverter

    class Converter(MarkdownConverter):
        """markdownify with a fence longer than any run of backticks in the code, so a
        block showing markdown (```) stays one block."""

        def convert_pre(self, el: Any, text: str, parent_tags: Any) -> str:
            # markdownify 1.2 defines convert_pre; its own stub (__init__.pyi) leaves it out
            block = str(super().convert_pre(el, text, parent_tags))  # type: ignore[misc]
            longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
            if longest < 3:
                return block
            fence = "`" * (longest + 1)
            head, _, rest = block.strip("\n").partition("\n")
            body = rest.rsplit("\n", 1)[0]
            return f"\n\n{fence}{head[3:]}\n{body}\n{fence}\n\n"

    return Converter


def _language(element: object) -> str | None:
    """The language of a ``<pre>`` block, from a ``language-X``/``highlight-X`` class."""
    for node in (element, getattr(element, "parent", None)):
        classes = node.get("class") or [] if hasattr(node, "get") else []
        for name in classes:
            for prefix in ("language-", "highlight-"):
                if name.startswith(prefix) and name != "highlight-default":
                    return str(name[len(prefix):])
    return None


def _title(html: str) -> str:
    match = _TITLE.search(html[:65536])
    if not match:
        return ""
    import html as html_module

    return " ".join(html_module.unescape(match.group(1)).split())
