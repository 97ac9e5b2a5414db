"""The CLI's printing, for people and for programs: no raw control characters, strict JSON."""

from __future__ import annotations

import re
from typing import Any

import click

_ASCII_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f]")  # all but tab and newline
_HIDDEN = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 and C1 controls but tab and newline
    # every other format character (Unicode 16's category Cf: bidi overrides and isolates,
    # zero-width spaces, tags...) and the line and paragraph separators
    "\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b\u200e\u200f"
    "\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f")
_JOINERS = "\u200c\u200d"  # zero-width non-joiner and joiner: Persian and Indic words, emoji
_ESCAPED = f"[{_HIDDEN}{_JOINERS}]"  # compiled by re's cache at the first text that is not
_ESCAPED_IN_PROSE = f"[{_HIDDEN}]"  # ASCII, not at import, which every start-up pays


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: str, *, keep_newlines: bool = True, prose: bool = False) -> str:
    """``text`` with control and format characters escaped (``\\x1b``, ``\\u202e``), so
    neither a tool nor a model can drive the terminal or make what it shows differ from what
    runs, and undecodable bytes (surrogates, e.g. from a file name) spelled ``\\udcff``, so
    it prints. ``prose`` (the model's text) keeps the two joiners, which words and emoji
    need and which reorder and hide nothing."""
    if text.isascii():
        escaped = _ASCII_CONTROLS.sub(_escaped, text)
    else:
        escaped = re.sub(_ESCAPED_IN_PROSE if prose else _ESCAPED, _escaped, text)
    escaped = escaped.encode("utf-8", "backslashreplace").decode("utf-8")
    return escaped if keep_newlines else escaped.replace("\n", "\\n")


def dumps(value: Any, *, indent: int | None = None) -> str:
    """Strict JSON (no NaN), non-ASCII kept as is unless a string holds an undecodable
    byte (a surrogate, e.g. from a file name): then all of it is ASCII-escaped, so it prints."""
    import json  # lazy, with strictjson: `ikigai --help` prints no JSON

    from ikigai_core.strictjson import SURROGATE

    text = json.dumps(value, indent=indent, ensure_ascii=False, allow_nan=False)
    if SURROGATE.search(text):
        text = json.dumps(value, indent=indent, allow_nan=False)
    return text


def echo_json(value: Any) -> None:
    """Print ``value`` as indented strict JSON on stdout."""
    click.echo(dumps(value, indent=2))


QUIET = "ikigai.quiet"
"""Set in the root context's ``meta`` by ``ask -q``: :func:`warn` prints nothing."""


def be_quiet() -> None:
    """From now on in this invocation, :func:`warn` prints nothing: only the answer on
    stdout and errors (which do not go through it) on stderr."""
    click.get_current_context().find_root().meta[QUIET] = True


def warn(message: str) -> None:
    """One line on stderr, prefixed ``ikigai:`` (nothing after :func:`be_quiet`)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None or not ctx.find_root().meta.get(QUIET):
        click.echo(f"ikigai: {printable(message, keep_newlines=False)}", err=True)
